"""DynamicTruss (CPU) on a graph with a large dense truss level: the k-order scan of an
insertion (hornet.algos.ktruss.order_rows) reads its triangles from adjacency rows filtered
by truss level (hornet.algos.ktruss.level_rows), its candidates and queued edges as bits by
slot, and peels triangle lists that mark the edges above the level.

The level rows against brute force (every triangle whose other two edges are at the level
or above is listed, with the truss numbers and ranks of its edges), level after level with
numbers that rise between levels; and delete / re-insert batches on a Kronecker graph (a
dense core over hub vertices of mostly low-level edges, the shape these paths are for)
against the static decomposition, the k-order invariant and the kept level counts (brute
force, truss_checks), with the level-rows scan forced on (the graphs are too small for the
gate) and, as the same run's control, with the plain scan. The state machine with the
level-rows scan forced on: test_dynamic_truss_machine.py.
"""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.algos.edge_table import EdgeTable
from hornet.algos.ktruss import level_rows as L
from hornet.algos.ktruss import dynamic, region
from hornet.algos.ktruss.dynamic import DynamicTruss
from hornet.generators import kronecker_edges

from truss_checks import MODES, assert_static, k_order_ties, k_order_violations
from truss_checks import level_count_violations


def _graph(rng, n, m):
    s = rng.integers(0, n, m)
    d = rng.integers(0, n, m)
    g = hornet.Graph(directed=False, device="cpu")
    g.insert_edges(s, d)
    return g


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_level_triangles_list_every_triangle_at_the_level(seed):
    """For levels k = 2, 3, ...: every edge's listed triangles are triangles of the graph,
    they include each one whose other two edges have truss >= k, and the values beside
    them are those edges' truss numbers and (for the edges at level k) ranks. Between
    levels some edges at the level just scanned rise by one and the ranks of the next
    level change (what the scan does), so rows are built from the whole list or from the
    previous level's row, and triangles come from two rows, a row against a whole list,
    or two whole lists."""
    rng = np.random.default_rng(seed)
    g = _graph(rng, 60, 700)
    src, dst = (np.asarray(a) for a in g.edges(dense=True))
    keep = src < dst
    src, dst = src[keep], dst[keep]
    t = EdgeTable("cpu", {"truss": np.int32, "rank": np.int64}, capacity=4 * src.shape[0])
    truss0 = rng.integers(2, 7, src.shape[0]).astype(np.int32)
    t.insert(src, dst, truss=truss0, rank=rng.permutation(src.shape[0]).astype(np.int64))
    truss, rank = t.columns["truss"], t.columns["rank"]
    view = g.adjacency(properties=False)
    deg, ptr = np.asarray(view.degree), np.asarray(view.edge_ptr)
    n = deg.shape[0]
    adj = {}
    for u, v in zip(src.tolist(), dst.tolist()):
        adj.setdefault(u, set()).add(v)
        adj.setdefault(v, set()).add(u)
    slot = {(u, v): int(s) for u, v, s in zip(src.tolist(), dst.tolist(),
                                                 t.lookup(src, dst).tolist())}

    def sl(a, b):
        return slot[(min(a, b), max(a, b))]

    state = L.new_level_rows(n)
    rows = region._new_rows()
    row_at = np.zeros(n, np.int64)
    row_used = np.zeros(n, np.int64)
    mark = np.zeros(n + 1, np.int64)
    pa = pb = tp = tq = np.empty(4, np.int64)
    tv = np.empty((4, 4), np.int64)
    built = 0
    for k in range(2, 8):
        state = L.next_level(state, 100 + k)
        edges = rng.permutation(src.shape[0])
        # every edge twice, half of them three times: a vertex's row is built once its
        # edges have listed enough triangles at the level (BUILD_SHIFT), so rows, a row
        # against a whole list, and two whole lists all occur
        for i in np.concatenate([edges, edges, edges[: src.shape[0] // 2]]).tolist():
            u, v = int(src[i]), int(dst[i])
            y = sl(u, v)
            state, rows, pa, pb, tp, tq, tv, c = L.level_triangles(
                y, k, state, t.keys, t.shift, deg, ptr, truss, rank, rows, row_at, row_used,
                7, pa, pb, tp, tq, tv, mark)
            got = set()
            for j in range(c):
                p, q = int(tp[j]), int(tq[j])
                assert (int(tv[0, j]), int(tv[1, j])) == (truss[p], truss[q])
                for side, e in ((0, p), (1, q)):     # ranks: read at the level only
                    assert truss[e] != k or int(tv[2 + side, j]) == rank[e]
                got.add((p, q))
            every = {(sl(u, w), sl(v, w)) for w in adj[u] & adj[v]}
            want = {(p, q) for p, q in every if truss[p] >= k and truss[q] >= k}
            assert want <= got <= every
        built += int(state[0][2])
        # the scan of level k ends: some of its edges rise, the next level's ranks change
        at_k = np.flatnonzero((truss == k) & (t.keys >= 0))
        up = at_k[rng.random(at_k.shape[0]) < 0.3]
        truss[up] = k + 1
        nxt = np.flatnonzero((truss == k + 1) & (t.keys >= 0))
        rank[nxt] = rng.permutation(nxt.shape[0]) - nxt.shape[0]
    assert built > 0                                   # rows were built and used


def _kronecker(scale, seed):
    s, d = kronecker_edges(scale, edge_factor=16, seed=seed)
    g = hornet.Graph(directed=False, device="cpu")
    g.insert_edges(np.asarray(s), np.asarray(d))
    return g


def _check(kt, g) -> None:
    assert_static(kt, g)
    assert k_order_violations(kt) == 0
    assert k_order_ties(kt) == 0
    assert level_count_violations(kt) == 0


def force_level_rows(monkeypatch, on: bool = True, min_degree=None, top_peel=False,
                     core=None, peel=None) -> list:
    """Every insertion scan and deletion descent of a DynamicTruss takes the level rows
    (``on``) or the plain kernels whatever the graph; ``min_degree``: the least degree of a
    vertex that gets a deletion level row (default: the module's); ``top_peel``: the scan
    peels the top level whole as soon as it visits an edge there (hornet.algos.ktruss.
    top_level); ``core``: every deletion descent lists the high levels from bit rows
    (hornet.algos.ktruss.core_rows) over at most this many vertices, from level 3;
    ``peel``: every batch decomposes a core of at most this many vertices, from level 3,
    on bit rows (hornet.algos.ktruss.core_peel: the insertion scan stops at its level, the
    deletion descent starts below it). Returns a list that gets an entry per level-rows
    call (scan or descent)."""
    calls = []
    for name in ("raise_in_order_rows", "lower_after_deletion_rows"):
        kernel = getattr(dynamic, name)

        def counted(*args, kernel=kernel):
            calls.append(1)
            return kernel(*args)

        monkeypatch.setattr(dynamic, name, counted)
    monkeypatch.setattr(dynamic, "LEVEL_ROWS_MIN_LEVEL", 0)
    monkeypatch.setattr(dynamic, "LEVEL_ROWS_MIN_EDGES", 0 if on else np.iinfo(np.int64).max)
    if min_degree is not None:
        monkeypatch.setattr(dynamic, "ROW_MIN_DEGREE", min_degree)
    if top_peel:
        monkeypatch.setattr(dynamic, "TOP_PEEL_MIN_VISITS", 0)
        monkeypatch.setattr(dynamic, "TOP_PEEL_SHARE", 1 << 62)
    if core is not None:
        monkeypatch.setattr(dynamic, "CORE_MIN_BATCH", 1)
        monkeypatch.setattr(dynamic, "CORE_MIN_LEVEL", 3)
        monkeypatch.setattr(dynamic, "CORE_MAX_VERTICES", core)
    if peel is not None:
        monkeypatch.setattr(dynamic, "CORE_MIN_INSERT", 1)
        monkeypatch.setattr(dynamic, "CORE_MIN_DELETE", 1)
        monkeypatch.setattr(dynamic, "CORE_MIN_LEVEL", 3)
        monkeypatch.setattr(dynamic, "CORE_PEEL_MAX_VERTICES", peel)
    return calls


@pytest.mark.parametrize("rows", ["plain", "rows", "rows-all", "top-peel", "core",
                                  "core-all", "peel", "peel-all"])
@pytest.mark.parametrize("seed", [0, 1])
def test_kronecker_delete_and_reinsert(seed, rows, monkeypatch):
    """Random edges of a Kronecker graph deleted and put back, then uniform new pairs and
    edges between hubs inserted, through the region algorithms every time; after each batch
    the numbers are the static ones, the k-order holds with no ties and the level counts are
    lower bounds. The re-insertions raise many edges of the core through several levels,
    the deletions lower them (several levels for some: their kept triangle lists, taken at
    one level below, are taken again). "rows": the level-rows kernels (deletion rows at the
    hubs), "rows-all": deletion rows at every vertex, "top-peel": the level-rows kernels
    with the top level peeled whole at its first visit, "core": the level-rows kernels with
    the deletions' high levels on bit rows over 100 vertices (hornet.algos.ktruss.core_rows),
    "core-all": over every vertex, "peel": the levels of a core of 100 vertices decomposed
    on bit rows by every batch (hornet.algos.ktruss.core_peel), "peel-all": the core of
    every vertex with an edge at level 3 or above, "plain": the plain kernels."""
    calls = force_level_rows(monkeypatch, rows != "plain", 1 if rows == "rows-all" else None,
                             rows == "top-peel",
                             {"core": 100, "core-all": 1 << 20}.get(rows),
                             {"peel": 100, "peel-all": 1 << 20}.get(rows))
    rng = np.random.default_rng(seed)
    g = _kronecker(9, seed)
    kt = DynamicTruss(g, **MODES["dynamic"])
    raised = peeled = 0
    for step in range(3):
        gs, gd = (np.asarray(a) for a in g.edges(dense=True))
        pick = rng.choice(gs.shape[0], int(rng.integers(5, 60)), replace=False)
        s, d = gs[pick], gd[pick]
        kt.update(g.delete_edges(s, d))
        assert kt.stats["path"] == "dynamic"
        peeled += "core" in kt.stats
        _check(kt, g)
        kt.update(g.insert_edges(s, d))
        assert kt.stats["path"] == "dynamic"
        raised += kt.stats["raises"]
        peeled += "core" in kt.stats
        _check(kt, g)
    deg = np.asarray(g.adjacency(properties=False).degree)
    hubs = np.argsort(deg)[-40:]
    kt.update(g.insert_edges(rng.choice(hubs, 60), rng.choice(hubs, 60)))
    _check(kt, g)
    kt.update(g.delete_edges(rng.choice(hubs, 200), rng.choice(hubs, 200)))
    _check(kt, g)
    n = deg.shape[0]
    kt.update(g.insert_edges(rng.integers(0, n, 80), rng.integers(0, n, 80)))
    _check(kt, g)
    assert raised > 0
    assert (len(calls) >= 9) == (rows != "plain") and (len(calls) == 0) == (rows == "plain")
    assert (peeled >= 3) == rows.startswith("peel"), peeled


def test_gate_needs_a_large_dense_level():
    """The level-rows scan is taken only on a graph with a truss level of
    LEVEL_ROWS_MIN_LEVEL or above holding LEVEL_ROWS_MIN_EDGES edges: not on a small
    Kronecker graph, nor with one edge fewer at that level, nor with them a level lower."""
    kt = DynamicTruss(_kronecker(9, 0))
    assert not kt._dense_level()
    low, many = dynamic.LEVEL_ROWS_MIN_LEVEL, dynamic.LEVEL_ROWS_MIN_EDGES
    kt._levels = np.zeros(low + 1, np.int64)
    kt._levels[low] = many
    assert kt._dense_level()
    kt._levels[low] -= 1
    assert not kt._dense_level()
    kt._levels[low - 1] = many
    assert not kt._dense_level()


@pytest.mark.parametrize("share", [5, 3])
def test_top_peel_survivors_rise_level_after_level(share, monkeypatch):
    """A K12 missing every share-th pair, completed in one batch: with the top level peeled
    whole at its first visit, each top level's peel leaves survivors (the next level's
    seeds, peeled again there) until k_max reaches 12; numbers, k-order and level counts
    checked, then the clique's edges deleted and re-inserted in halves."""
    calls = force_level_rows(monkeypatch, True, 1, True)
    pairs_ = [(a, b) for a in range(12) for b in range(a + 1, 12)]
    missing = pairs_[::share]
    keep = [p for p in pairs_ if p not in missing]
    g = hornet.Graph(directed=False, device="cpu")
    g.insert_edges([a for a, _ in keep], [b for _, b in keep])
    kt = DynamicTruss(g, **MODES["dynamic"])
    before = kt.k_max
    kt.update(g.insert_edges([a for a, _ in missing], [b for _, b in missing]))
    assert kt.stats["path"] == "dynamic" and before < 12 == kt.k_max
    _check(kt, g)
    half = pairs_[1::2]
    for op in (g.delete_edges, g.insert_edges):
        kt.update(op([a for a, _ in half], [b for _, b in half]))
        assert kt.stats["path"] == "dynamic"
        _check(kt, g)
    assert kt.k_max == 12 and len(calls) == 4         # the build (by insertion) and 3 batches
