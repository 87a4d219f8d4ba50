"""The planning kernels of the batch pipeline (keep_entries, plan_segments, commit_segments)
on every backend, and the CPU sort, search and filter kernels, against NumPy references.

The references are the NumPy steps the pipeline used before these kernels fused them, so a
batch is planned exactly as before on both backends.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from conftest import BACKENDS
from hornet.batch import cpu as C
from hornet.batch.cpu.lists import CHUNKS
from hornet.batch.cpu.sort import PARTITION_MIN, ROW_SLACK, partition_pairs


@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


class Backend:
    def __init__(self, name):
        if name == "gpu":
            import cupy
            from hornet.batch import gpu
            self.K, self.xp = gpu, cupy
        else:
            self.K, self.xp = C, np

    def put(self, a):
        return self.xp.asarray(a) if self.xp is not np else np.array(a)

    def get(self, a):
        return a if a is None or isinstance(a, np.ndarray) else a.get()


@pytest.fixture(params=BACKENDS)
def be(request):
    return Backend(request.param)


def vertex_table(rng, nv):
    """degree int32, size class int8 (-1 without edges, else a class holding the degree,
    sometimes larger), edge pointers int64 (0 without a block)."""
    degree = np.where(rng.random(nv) < 0.3, 0, rng.integers(1, 300, nv)).astype(np.int32)
    degree[rng.integers(0, nv, 3)] = 70000                        # a few hubs
    fit = np.ceil(np.log2(np.maximum(degree, 1))).astype(np.int64)
    cls = np.where(degree > 0, fit + rng.integers(0, 3, nv), -1).astype(np.int8)
    ptr = np.where(degree > 0, rng.integers(1, 1 << 40, nv) * 8, 0).astype(np.int64)
    return degree, cls, ptr


def sorted_sources(rng, nv, m, table_degree=None):
    """Sorted sources of m entries; deleting, no source exceeds its degree."""
    src = np.sort(rng.integers(0, nv, m)).astype(np.int32)
    if table_degree is not None:
        src = src[table_degree[src] > 0]
        rank = np.arange(src.shape[0]) - np.searchsorted(src, src)
        src = src[rank < table_degree[src]]
    return src


# ---------------------------------------------------------------------------- keep_entries
@pytest.mark.parametrize("inserting", [True, False])
@pytest.mark.parametrize("need_index", [True, False])
@pytest.mark.parametrize("kept", ["all", "none", "mixed", "runs"])
# the largest input runs the parallel twins (tests/conftest.py: parallel_kernels)
@pytest.mark.parametrize("n", [0, 7, pytest.param(50000, marks=pytest.mark.parallel_kernels)])
def test_keep_entries(be, rng, inserting, need_index, kept, n):
    src = np.sort(rng.integers(0, 1000, n)).astype(np.int32)
    dst = rng.integers(0, 1000, n).astype(np.int32)
    where = rng.integers(0, 100, n)
    present = {"all": np.full(n, not inserting), "none": np.full(n, inserting),
               "mixed": rng.random(n) < 0.5,
               "runs": (np.arange(n) // 777) % 2 == 0}[kept]
    pos = np.where(present, where, -1 - where).astype(np.int64)
    k, s, d, at = be.K.keep_entries(be.put(pos), be.put(src), be.put(dst), inserting, need_index)
    keep = pos < 0 if inserting else pos >= 0
    want_at = -1 - pos[keep] if inserting else pos[keep]
    np.testing.assert_array_equal(be.get(s), src[keep])
    np.testing.assert_array_equal(be.get(d), dst[keep])
    np.testing.assert_array_equal(be.get(at), want_at)
    assert be.get(at).dtype == np.int64 and be.get(s).dtype == np.int32
    if keep.all() or not need_index:
        assert k is None
    else:
        np.testing.assert_array_equal(be.get(k), np.flatnonzero(keep))


# ---------------------------------------------------------------------------- plan_segments
def plan_reference(src, degree, cls, ptr, inserting, min_class):
    """The NumPy steps of the pipeline before plan_segments."""
    n = src.shape[0]
    head = np.ones(n, dtype=bool)
    head[1:] = src[1:] != src[:-1]
    starts = np.flatnonzero(head)
    sources = src[starts]
    seg_len = np.diff(starts, append=n)
    old = degree[sources].astype(np.int64)
    c = cls[sources].astype(np.int64)
    if inserting:
        new = old + seg_len
        cap = np.where(c >= 0, np.left_shift(1, np.maximum(c, 0)), 0)
        resize = new > cap
    else:
        new = old - seg_len
        fit = np.where(new > 0, np.ceil(np.log2(np.maximum(new, 1))), -1).astype(np.int64)
        fit = np.where(new > 0, np.maximum(fit, min_class), -1)
        resize = (new > 0) & (4 * new < np.left_shift(1, c)) & (fit < c)
    return sources, starts, seg_len, old, new, ptr[sources], resize


@pytest.mark.parametrize("inserting", [True, False])
@pytest.mark.parametrize("min_class", [0, 3])
@pytest.mark.parametrize("m", [0, 1, 3000, 300000])
def test_plan_segments(be, rng, inserting, min_class, m):
    nv = 20000
    degree, cls, ptr = vertex_table(rng, nv)
    cls = np.where(cls >= 0, np.maximum(cls, min_class), -1).astype(np.int8)
    src = sorted_sources(rng, nv, m, None if inserting else degree)
    if not inserting and src.shape[0]:
        # some lists lose every edge, some nearly all (they shrink)
        v = np.unique(src)[:50]
        src = np.sort(np.concatenate([src[~np.isin(src, v)], np.repeat(v, degree[v])]))
        src = src.astype(np.int32)
    got = be.K.plan_segments(be.put(src), be.put(degree), be.put(cls), be.put(ptr), inserting,
                             min_class)
    want = plan_reference(src, degree, cls, ptr, inserting, min_class)
    names = ["sources", "seg_start", "seg_len", "old_deg", "new_deg", "old_ptr", "resize"]
    dtypes = [np.int32] + [np.int64] * 5 + [np.bool_]
    for name, dt, g, w in zip(names, dtypes, got, want):
        g = be.get(g)
        assert g.dtype == dt, name
        np.testing.assert_array_equal(g, w, err_msg=name)
    if m >= 3000:
        assert 0 < int(want[6].sum()) < want[6].shape[0]


# ---------------------------------------------------------------------------- commit_segments
@pytest.mark.parametrize("ns", [0, 5, 40000])
def test_commit_segments(be, rng, ns):
    nv = 100000
    degree, cls, ptr = vertex_table(rng, nv)
    sources = np.sort(rng.choice(nv, ns, replace=False)).astype(np.int32)
    new_deg = np.where(rng.random(ns) < 0.2, 0, rng.integers(1, 1000, ns)).astype(np.int64)
    grown = np.flatnonzero((new_deg > 0) & (rng.random(ns) < 0.4)).astype(np.int64)
    new_ptrs = rng.integers(1, 1 << 40, grown.shape[0]).astype(np.int64) * 8
    new_classes = rng.integers(0, 20, grown.shape[0]).astype(np.int64)
    tables = [be.put(a) for a in (degree, cls, ptr)]
    be.K.commit_segments(be.put(sources), be.put(new_deg), be.put(grown), be.put(new_ptrs),
                         be.put(new_classes), *tables)
    want_deg, want_cls, want_ptr = degree.copy(), cls.copy(), ptr.copy()
    want_deg[sources] = new_deg
    gone = sources[new_deg == 0]
    want_ptr[gone], want_cls[gone] = 0, -1
    want_ptr[sources[grown]], want_cls[sources[grown]] = new_ptrs, new_classes
    for got, want in zip(tables, (want_deg, want_cls, want_ptr)):
        np.testing.assert_array_equal(be.get(got), want)


# ---------------------------------------------------------------------------- CPU kernels
@pytest.mark.parametrize("mirror", [False, True])
@pytest.mark.parametrize("nv", [2, 300, 70000, 1 << 20, 5 << 20])
@pytest.mark.parametrize("n", [0, 40000, 400000])
@pytest.mark.parametrize("skewed", [False, True])
def test_sorted_unique_pairs_without_order(rng, mirror, nv, n, skewed):
    """The bucketed 32-bit sort (batches without an entry order) against np.unique; even
    buckets (sorted as the padded rows of one array) and ``skewed`` ones (half the pairs
    from one source: one bucket each)."""
    s, d = rng.integers(0, nv, n), rng.integers(0, nv, n)
    if n:
        a = rng.integers(0, n, n // 10)
        d[a] = s[a]                                   # self-loops
        b, c = rng.integers(0, n, n // 5), rng.integers(0, n, n // 5)
        s[b], d[b] = d[c], s[c]                       # repeats, reversed
        if skewed:
            s[: n // 2] = nv - 1
    if n and 256 <= nv <= 1 << 20:                    # which layout the partition takes
        bits = int(nv - 1).bit_length()
        high = max(2 * bits - 32, min(8, 2 * bits))
        entries = n * (2 if mirror else 1)
        keys = np.empty(entries + int(ROW_SLACK * entries), dtype=np.uint32)
        _, _, _, width, lo, hi = partition_pairs(s, d, bits, high, mirror, keys)
        assert (lo, hi) == (min(s.min(), d.min()), max(s.max(), d.max()))
        if skewed and nv >= 70000:
            assert width == 0                         # one bucket holds half the keys
        if nv == 1 << 20 and not skewed:
            assert width > 0                          # every bucket in use, about even
    order, src, dst, loops = C.sorted_unique_pairs(s, d, nv, mirror, need_order=False)
    assert order is None and src.dtype == np.int32 and dst.dtype == np.int32
    if mirror:
        keep = s != d
        ps, pd = np.r_[s[keep], d[keep]], np.r_[d[keep], s[keep]]
        assert loops == int((~keep).sum())
    else:
        ps, pd = s, d
        assert loops == 0
    key = np.unique(ps.astype(np.int64) * nv + pd)
    np.testing.assert_array_equal(src, key // nv)
    np.testing.assert_array_equal(dst, key % nv)
    # the segments found on the way, where found, are those of the result
    *again, segments = C.sorted_unique_pairs(s, d, nv, mirror, need_order=False,
                                             segments=True)
    np.testing.assert_array_equal(again[1], src)
    entries = n * (2 if mirror else 1)
    assert (segments is not None) == (entries >= PARTITION_MIN and 256 <= nv <= 1 << 20)
    if segments is not None:
        sources, seg_start = segments
        heads = np.flatnonzero(np.r_[True, src[1:] != src[:-1]]) if src.size else []
        assert sources.dtype == np.int32 and seg_start.dtype == np.int32
        np.testing.assert_array_equal(sources, src[heads])
        np.testing.assert_array_equal(seg_start, np.r_[heads, src.size])


def csr_lists(rng, nv, hub):
    deg = rng.integers(0, 40, nv)
    deg[: len(hub)] = hub
    owner = np.repeat(np.arange(nv), deg)
    keys = np.unique(owner * (1 << 22) + rng.integers(0, 1 << 22, owner.shape[0]))
    owner, vals = keys >> 22, (keys & ((1 << 22) - 1)).astype(np.int32)
    degree = np.bincount(owner, minlength=nv).astype(np.int32)
    off = np.zeros(nv, dtype=np.int64)
    np.cumsum(degree[:-1], out=off[1:])
    return degree, owner, vals, off


@pytest.mark.parametrize("order", ["sorted", "random", "repeats"])
def test_find_positions_galloping(rng, order):
    """Queries in (src, dst) order gallop along long lists; any order gives the same answer."""
    nv = 5000
    degree, owner, vals, off = csr_lists(rng, nv, [200000, 30000, 3000])
    ptr = vals.ctypes.data + 4 * off
    m = 300000
    hit = rng.integers(0, vals.shape[0], m // 2)
    src = np.concatenate([owner[hit], rng.integers(0, nv + 10, m - m // 2)])
    dst = np.concatenate([vals[hit], rng.integers(0, 1 << 22, m - m // 2)])
    if order == "sorted":
        o = np.lexsort((dst, src))
        src, dst = src[o], dst[o]
    elif order == "repeats":
        o = np.lexsort((dst, src))
        src, dst = np.repeat(src[o], 2), np.repeat(dst[o], 2)
    got = C.find_positions(src.astype(np.int32), dst.astype(np.int32), degree, ptr, nv - 2)
    want = np.full(src.shape[0], -1, dtype=np.int64)
    inside = src < nv - 2
    for v in np.unique(src[inside]):
        q = np.flatnonzero(src == v)
        lst = vals[off[v]:off[v] + degree[v]]
        p = np.searchsorted(lst, dst[q])
        found = (p < lst.shape[0]) & (lst[np.minimum(p, lst.shape[0] - 1)] == dst[q]) \
            if lst.shape[0] else np.zeros(q.shape[0], dtype=bool)
        want[q] = np.where(found, p, -1 - p)
    np.testing.assert_array_equal(got, want)


def canonical_case(rng, n, pattern):
    """(src, dst) int32 of length n: random, no entry with src < dst ("none"), all of them
    ("all"), or kept entries only at the ends of the kernels' pieces ("ends")."""
    s = rng.integers(0, 1000, n).astype(np.int32)
    d = rng.integers(0, 1000, n).astype(np.int32)
    if pattern == "none":
        d = s.copy()
    elif pattern == "all":
        d = s + 1
    elif pattern == "ends":
        d = s.copy()
        d[:: n // 64] += 1
        d[n // 64 - 1:: n // 64] += 1
    return s, d


@pytest.mark.parametrize("pattern", ["random", "none", "all", "ends"])
def test_canonical_entries(rng, pattern):
    s, d = canonical_case(rng, 200003, pattern)
    np.testing.assert_array_equal(C.canonical_entries(s, d), np.flatnonzero(s < d))


@pytest.mark.parametrize("pattern", ["random", "none", "all", "ends"])
def test_canonical_pairs(be, rng, pattern):
    check_canonical_pairs(be, *canonical_case(rng, 100003, pattern))


def check_canonical_pairs(be, s, d, **options):
    """canonical_pairs on the backend against NumPy: the entries with src < dst, in order."""
    once, so, do = be.K.canonical_pairs(be.put(s), be.put(d), **options)
    want = np.flatnonzero(s < d)
    np.testing.assert_array_equal(be.get(once), want)
    np.testing.assert_array_equal(be.get(so), s[want])
    np.testing.assert_array_equal(be.get(do), d[want])
    assert be.get(so).dtype == np.int32 and be.get(once).dtype == np.int64
    return want


@pytest.mark.parametrize("edges", [0, 1, 5000])
def test_canonical_pairs_of_symmetric_entries(be, rng, edges):
    """``symmetric=True`` (both directions of each edge, no self-loop, sorted like a batch's
    entries): the same result as the general path, without counting on the host."""
    u = rng.integers(0, 800, edges)
    v = (u + rng.integers(1, 800, edges)) % 800
    keys = np.unique(np.concatenate([u * 1000 + v, v * 1000 + u]))
    s, d = (keys // 1000).astype(np.int32), (keys % 1000).astype(np.int32)
    want = check_canonical_pairs(be, s, d, symmetric=True)
    assert want.shape[0] == s.shape[0] // 2


# ---------------------------------------------------------------------------- workspace
def test_workspace_reuses_buffers():
    from hornet.batch.cpu.workspace import Workspace
    ws = Workspace()
    a = ws.take("x", 1000, np.int64)
    b = ws.take("x", 800, np.int64)                 # smaller: the same memory
    assert b.ctypes.data == a.ctypes.data and b.shape == (800,)
    c = ws.take("x", 5000, np.int64)                # larger: a new buffer
    assert c.shape == (5000,) and ws.take("x", 5000, np.int64).ctypes.data == c.ctypes.data
    assert ws.take("y", 10, np.int32).dtype == np.int32 and ws.nbytes >= 5000 * 8 + 40
    ws.clear()
    assert ws.nbytes == 0


def test_kernels_with_a_workspace_agree(rng):
    """The pipeline's kernels give the same answers from workspace buffers, batch after batch
    (buffers shrinking and growing in between)."""
    ws = C.workspace()
    nv = 5000
    degree, owner, vals, off = csr_lists(rng, nv, [30000, 3000])
    ptr = vals.ctypes.data + 4 * off
    cls = np.where(degree > 0, np.ceil(np.log2(np.maximum(degree, 1))), -1).astype(np.int8)
    for m in (200000, 3000, 400000, 50):
        s, d = rng.integers(0, nv, m), rng.integers(0, 1 << 22, m)
        hit = rng.integers(0, vals.shape[0], m // 3)
        s[: m // 3], d[: m // 3] = owner[hit], vals[hit]
        got = C.sorted_unique_pairs(s, d, 1 << 22, False, False, ws=ws)
        want = C.sorted_unique_pairs(s, d, 1 << 22, False, False)
        for g, w in zip(got[1:], want[1:]):
            np.testing.assert_array_equal(g, w)
        ss, dd = want[1], want[2]
        pos = C.find_positions(ss, dd, degree, ptr, nv, ws=ws)
        np.testing.assert_array_equal(pos, C.find_positions(ss, dd, degree, ptr, nv))
        for inserting in (True, False):
            k1 = C.keep_entries(pos, ss, dd, inserting, True, ws=ws)
            k2 = C.keep_entries(pos.copy(), ss, dd, inserting, True)
            for g, w in zip(k1, k2):
                if w is None:
                    assert g is None
                else:
                    np.testing.assert_array_equal(g, w)
            p1 = C.plan_segments(k1[1], degree, cls, ptr, inserting, 0, ws=ws)
            p2 = C.plan_segments(k2[1], degree, cls, ptr, inserting, 0)
            for g, w in zip(p1, p2):
                np.testing.assert_array_equal(g, w)
        c1, c2 = C.canonical_pairs(ss, dd, ws=ws), C.canonical_pairs(ss, dd)
        for g, w in zip(c1, c2):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("n", [0, 1, 7, 1000, 40_000])
@pytest.mark.parametrize("moving", [0.0, 0.01, 0.3, 1.0])
def test_block_requests_and_place_blocks(rng, n, moving):
    """Each moving segment gets the next pool block of its class in segment order (against a
    Python reference); the moving segments that leave a block are counted chunk by chunk."""
    new_class = np.where(rng.random(n) < moving, rng.integers(0, 12, n), -1).astype(np.int8)
    old_ptr = np.where(rng.random(n) < 0.5, rng.integers(1, 1 << 40, n), 0).astype(np.int64)
    per_class, counts, leaving = C.block_requests(new_class, old_ptr)
    assert per_class.tolist() == np.bincount(new_class[new_class >= 0], minlength=64).tolist()
    leaves = (new_class >= 0) & (old_ptr != 0)
    # chunk c holds the segments [n * c // CHUNKS, n * (c + 1) // CHUNKS)
    assert leaving.tolist() == [int(leaves[:n * c // CHUNKS].sum())
                                for c in range(CHUNKS + 1)]
    pool = rng.permutation(1 << 20)[:int(per_class.sum())].astype(np.int64) + (1 << 44)
    target = C.place_blocks(new_class, counts, pool)
    start = np.concatenate(([0], np.cumsum(per_class)[:-1]))
    expect_target, taken = {}, {}
    for i in range(n):
        k = int(new_class[i])
        if k >= 0:
            expect_target[i] = int(pool[start[k] + taken.get(k, 0)])
            taken[k] = taken.get(k, 0) + 1
    assert {i: int(target[i]) for i in expect_target} == expect_target
