"""Checks shared by the small-batch tests of both backends (test_cpu_small_batches.py,
test_gpu_small_batches.py, the deferred-batch tests): two graphs or two changes compared on
the host, graphs that defer inserts and their end checks."""
from __future__ import annotations

import numpy as np

import hornet
from hornet.testing import to_host


def snapshot(g):
    """(src, dst, properties, degrees) of every edge, on the host."""
    s, d, p = g.edges(properties=True)
    return to_host(s), to_host(d), {k: to_host(v) for k, v in p.items()}, to_host(g.degree())


def same_change(a, b):
    assert a.kind == b.kind
    assert np.array_equal(to_host(a.src), to_host(b.src))
    assert np.array_equal(to_host(a.dst), to_host(b.dst))
    assert sorted(a.properties) == sorted(b.properties)
    for k in a.properties:
        assert np.array_equal(to_host(a.properties[k]), to_host(b.properties[k])), k
    assert a.self_loops_skipped == b.self_loops_skipped


def same_graph(a, b, size_classes: bool = False):
    """Same edges, properties, degrees and counts; with ``size_classes`` also the same block
    size class per vertex (lists grew and shrank by the same rules)."""
    sa, sb = snapshot(a), snapshot(b)
    assert np.array_equal(sa[0], sb[0]) and np.array_equal(sa[1], sb[1])
    for k in sa[2]:
        assert np.array_equal(sa[2][k], sb[2][k]), k
    assert np.array_equal(sa[3], sb[3])
    assert a.num_vertices == b.num_vertices and a.num_edges == b.num_edges
    if size_classes:
        n = a.num_vertices
        assert np.array_equal(to_host(a._size_class[:n]), to_host(b._size_class[:n]))


PROPS = {"w": np.float32, "t": np.int64, "flag": np.int8}   # edge properties of the tests


def deferring_graph(device: str, tiny: bool = False, **kw):
    """A graph of ``device`` that defers inserts (``Graph.defer_inserts``); ``tiny``: rings
    of two blocks per class in its block cache, so that deferred batches stall often."""
    g = hornet.Graph(device=device, **kw)
    g.defer_inserts()
    if tiny:
        target = g._mm.block_cache().target
        target[:] = np.minimum(target, 2)
    return g


def deferred_consistent(g, tiny: bool = False) -> None:
    """A graph's invariants and its block cache's counters (host against device) after its
    deferred batches; ``tiny`` (a :func:`deferring_graph` of tiny rings): some batch
    stalled and ran again."""
    g.check()
    g._mm.block_cache().check()
    if tiny:
        assert g._stalls > 0


def without_small_path(device: str, **kw):
    """A graph whose batches all take the general pipeline (GPU) or the fused one (CPU). Its
    fused CPU inserts always search the lists that may outgrow their block (see
    ``Graph._defer_full_present``): a moving list then gets the smallest class that holds
    it, as on the small path (deferring, it gets the class of its whole segment)."""
    g = hornet.Graph(device=device, **kw)
    g._small_batches = False
    g._defer_full_present = -1.0
    return g


def step_batch(rng, step: int, max_pairs: int):
    """The pairs of batch ``step`` of a small-batch test: (src, dst) int64 (m,), m random in
    [1, max_pairs], ids below a bound that grows with the step; every sixth batch gives half
    its pairs to one hub (its list outgrows many blocks), every fourth repeats its first
    half and starts with self-loops."""
    n = 50 + 40 * step
    m = int(rng.integers(1, max_pairs + 1))
    s, d = rng.integers(0, n, m), rng.integers(0, n, m)
    if step % 6 == 5:
        s[: m // 2] = 3
    if step % 4 == 1:
        s[m // 2:], d[m // 2:] = s[: m - m // 2], d[: m - m // 2]
        d[:10] = s[:10]
    return s, d


def step_properties(rng, m: int) -> dict:
    """Random values of the tests' edge properties (:data:`PROPS`) for ``m`` pairs."""
    return dict(w=rng.random(m).astype(np.float32), t=rng.integers(-10**12, 10**12, m),
                flag=rng.integers(-128, 128, m).astype(np.int8))


def insert_delete_cycles(small, other, rng, ids: int, pairs: int, cycles: int, calls: dict,
                         warm: int = 10):
    """Insert a fresh batch of ``pairs`` random pairs (ids below ``ids``) into both graphs,
    delete what it inserted, ``cycles`` times; the changes must be the same. ``calls["n"]``
    (reset before each batch) is what the caller's counting of the memory manager's
    allocator and release adds. Returns (vertices of ``small`` whose list moved, batches
    that called the allocator or the release, batches), counted after ``warm`` cycles (the
    rings are filled by then)."""
    moved, with_allocator, batches = 0, 0, 0
    for cycle in range(cycles):
        bs, bd = rng.integers(0, ids, pairs), rng.integers(0, ids, pairs)
        before = to_host(small._edge_ptr).copy()
        for op in ("insert", "delete"):
            calls["n"] = 0
            if op == "insert":
                a, b = small.insert_edges(bs, bd), other.insert_edges(bs, bd)
            else:
                a, b = small.delete_edges(a.src, a.dst), other.delete_edges(b.src, b.dst)
            same_change(a, b)
            if cycle >= warm:
                batches += 1
                with_allocator += calls["n"] > 0
        if cycle >= warm:
            moved += int((to_host(small._edge_ptr)[:before.size] != before).sum())
    return moved, with_allocator, batches


class EdgeTable:
    """The edges of a directed graph as a NumPy table sorted by (src, dst), with their
    property columns: the independent oracle of the long-list tests (inserts of new pairs,
    deletes of present ones)."""

    def __init__(self, props):
        self.key = np.zeros(0, dtype=np.int64)
        self.cols = {k: np.zeros(0, dtype=dt) for k, dt in props.items()}

    def insert(self, s, d, values):
        key = np.r_[self.key, (s.astype(np.int64) << 32) | d]
        order = np.argsort(key, kind="stable")
        self.key = key[order]
        self.cols = {k: np.r_[v, values[k]][order] for k, v in self.cols.items()}

    def delete(self, s, d):
        """The change: (src, dst, properties) of the present pairs among (s, d), sorted."""
        gone = np.unique((s.astype(np.int64) << 32) | d)
        at = np.searchsorted(self.key, gone)
        at = at[(at < self.key.size) & (self.key[np.minimum(at, self.key.size - 1)] == gone)]
        change = (self.key[at] >> 32, self.key[at] & 0xFFFFFFFF,
                  {k: v[at] for k, v in self.cols.items()})
        keep = np.ones(self.key.size, dtype=bool)
        keep[at] = False
        self.key = self.key[keep]
        self.cols = {k: v[keep] for k, v in self.cols.items()}
        return change

    def neighbors(self, u):
        lo, hi = np.searchsorted(self.key, [u << 32, (u + 1) << 32])
        return self.key[lo:hi] & 0xFFFFFFFF

    def same(self, g):
        s, d, cols = g.edges(properties=True)
        assert np.array_equal((to_host(s).astype(np.int64) << 32) | to_host(d), self.key)
        for k, v in self.cols.items():
            assert np.array_equal(to_host(cols[k]), v), k
