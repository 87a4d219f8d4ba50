"""GPU kernels against their CPU twins: same inputs, exactly the same results.

Every situation is built twice: lists in one big NumPy buffer (addresses ``buf.ctypes.data +
itemsize * offsets``) for the CPU kernels of hornet/batch/cpu/, hornet/memory/
bit_tree.py and copy_kernels.py, and the same bytes in one CuPy buffer (``buf.data.ptr + ...``)
for the GPU kernels. Buffers are compared whole, bit for bit, so stray writes show too.

The column kernels only move items, so the CPU reference runs on the unsigned integer view of
the same itemsize (one Numba compilation per itemsize instead of per dtype), while the GPU
kernels get the real dtype.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from conftest import HAS_GPU

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]

if HAS_GPU:
    import cupy as cp

    from hornet.batch import gpu as G
    from hornet.memory import gpu_bit_tree as GT
    from hornet.memory import gpu_copy as GC

from hornet.batch import cpu as C
from hornet.memory import bit_tree as BT
from hornet.memory.copy_kernels import copy_ranges as cpu_copy_ranges
from hornet.memory.backend import _cpu_size_classes as cpu_size_classes

ALL_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
              np.float32, np.float64, np.bool_]
UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
DTYPE_IDS = [np.dtype(t).name for t in ALL_DTYPES]


def bits_of(a):
    """Bit pattern of a host or device array, as host unsigned integers."""
    a = cp.asnumpy(a) if isinstance(a, cp.ndarray) else np.asarray(a)
    return a.view(UNSIGNED[a.dtype.itemsize])


def random_values(rng, n, dtype):
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    if dt.kind == "f":
        return rng.standard_normal(n).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)


def mixed_degrees(rng, n_small, small_max, hub, hub_at=None):
    """Many tiny lists (0..small_max) and one hub of ``hub`` entries."""
    deg = rng.integers(0, small_max + 1, n_small + 1).astype(np.int64)
    deg[rng.integers(0, n_small + 1) if hub_at is None else hub_at] = hub
    return deg


def sorted_lists(rng, want, nv):
    """Sorted duplicate-free random lists with about ``want[v]`` entries in [0, nv).

    Returns (degree int64, owner int64, values int32) with values grouped by owner, ascending.
    """
    n = want.shape[0]
    owner = np.repeat(np.arange(n, dtype=np.int64), want)
    keys = np.unique(owner * nv + rng.integers(0, nv, owner.shape[0]))
    owner = keys // nv
    return np.bincount(owner, minlength=n).astype(np.int64), owner, (keys % nv).astype(np.int32)


def exclusive(a):
    out = np.zeros(a.shape[0], dtype=np.int64)
    if a.shape[0] > 1:
        np.cumsum(a[:-1], out=out[1:])
    return out


class Lists:
    """Lists of one column laid out in one buffer (capacity ``cap[v]`` each), host and device."""

    def __init__(self, rng, cap, dtype):
        self.dtype = np.dtype(dtype)
        self.off = exclusive(cap)
        total = int(cap.sum()) + 1
        self.host = random_values(rng, total, dtype)      # junk everywhere to start with
        self.dev = None

    def put(self, deg, values):
        """Write lists (values concatenated, deg[v] each) at the start of every block."""
        owner = np.repeat(np.arange(deg.shape[0], dtype=np.int64), deg)
        rank = np.arange(owner.shape[0], dtype=np.int64) - exclusive(deg)[owner]
        self.host[self.off[owner] + rank] = values
        return self

    def upload(self):
        self.dev = cp.asarray(self.host)
        return self

    def ptr_host(self):
        return (self.host.ctypes.data + self.dtype.itemsize * self.off).astype(np.int64)

    def ptr_dev(self):
        return cp.asarray(self.dev.data.ptr + self.dtype.itemsize * self.off, dtype=cp.int64)

    def same(self):
        np.testing.assert_array_equal(bits_of(self.host), bits_of(self.dev))


@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


# ---------------------------------------------------------------------------- sorting
@pytest.mark.parametrize("mirror", [False, True])
@pytest.mark.parametrize("need_order", [True, False])
@pytest.mark.parametrize("case", ["empty", "one", "dense", "wide", "big", "fallback"])
def test_sorted_unique_pairs(rng, mirror, need_order, case):
    n, nv = {"empty": (0, 10), "one": (1, 1), "dense": (3000, 40), "wide": (20000, 10 ** 6),
             "big": (300000, 5000), "fallback": (6000, 2 ** 30)}[case]
    if case == "fallback":
        pool = rng.integers(0, nv, 500)               # large ids, many repeats
        s, d = pool[rng.integers(0, 500, n)], pool[rng.integers(0, 500, n)]
    else:
        s, d = rng.integers(0, nv, n), rng.integers(0, nv, n)
    if n > 10:
        loops = rng.integers(0, n, n // 20)
        d[loops] = s[loops]                           # self-loops
        a, b = rng.integers(0, n, n // 5), rng.integers(0, n, n // 5)
        s[a], d[a] = s[b], d[b]                       # exact repeats
        a, b = rng.integers(0, n, n // 10), rng.integers(0, n, n // 10)
        s[a], d[a] = d[b], s[b]                       # reversed repeats
    s, d = s.astype(np.int64), d.astype(np.int64)
    o1, s1, d1, l1 = C.sorted_unique_pairs(s, d, nv, mirror, need_order)
    o2, s2, d2, l2 = G.sorted_unique_pairs(cp.asarray(s), cp.asarray(d), nv, mirror, need_order)
    np.testing.assert_array_equal(s1, cp.asnumpy(s2))
    np.testing.assert_array_equal(d1, cp.asnumpy(d2))
    assert s2.dtype == np.int32 and d2.dtype == np.int32
    assert int(l1) == l2 and isinstance(l2, int)
    if need_order:
        assert o2.dtype == np.int64
        np.testing.assert_array_equal(o1, cp.asnumpy(o2))
    else:
        assert o2 is None


def test_canonical_entries(rng):
    for n in (0, 1, 100000):
        s = rng.integers(0, 1000, n).astype(np.int32)
        d = rng.integers(0, 1000, n).astype(np.int32)
        got = G.canonical_entries(cp.asarray(s), cp.asarray(d))
        assert got.dtype == np.int64
        np.testing.assert_array_equal(C.canonical_entries(s, d), cp.asnumpy(got))


# ---------------------------------------------------------------------------- searching
@pytest.mark.parametrize("types", [("int32", "int32", "int32"), ("int64", "int64", "int32"),
                                   ("int32", "int64", "int64"), ("int64", "int32", "int64")])
@pytest.mark.parametrize("queries", [0, 5000, 200000])
def test_find_positions(rng, types, queries):
    if queries == 200000 and types != ("int32", "int32", "int32"):
        pytest.skip("large case with one type combination")
    st, dt, gt = (np.dtype(t) for t in types)
    nv = 300000
    deg, owner, vals = sorted_lists(rng, mixed_degrees(rng, 6000, 8, 120000), nv)
    table = deg.shape[0]
    lists = Lists(rng, deg + rng.integers(0, 3, table), np.int32).put(deg, vals).upload()
    # half hits (existing entries), half random, some sources beyond num_vertices
    hit = rng.integers(0, max(1, vals.shape[0]), queries // 2)
    src = np.concatenate([owner[hit], rng.integers(0, table + 50, queries - queries // 2)])
    dst = np.concatenate([vals[hit], rng.integers(0, nv, queries - queries // 2)])
    num_vertices = table - 3                           # the last rows do not count
    src, dst, degree = src.astype(st), dst.astype(dt), deg.astype(gt)
    want = C.find_positions(src, dst, degree, lists.ptr_host(), num_vertices)
    got = G.find_positions(cp.asarray(src), cp.asarray(dst), cp.asarray(degree), lists.ptr_dev(),
                           num_vertices)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(want, cp.asnumpy(got))
    if queries:
        assert (want >= 0).sum() >= queries // 3


# (merge_lists / remove_lists: tests/test_list_kernels.py, against NumPy on every backend)


# ---------------------------------------------------------------------------- gathers
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
def test_gather_lists(rng, dtype):
    deg = mixed_degrees(rng, 5000, 9, 150000)
    cap = deg + rng.integers(0, 3, deg.shape[0])
    col = Lists(rng, cap, dtype).put(deg, random_values(rng, int(deg.sum()), dtype)).upload()
    for sel in (np.arange(deg.shape[0]), np.flatnonzero(deg == 0)[:50],
                rng.permutation(deg.shape[0])[:1000], np.zeros(0, dtype=np.int64)):
        d32 = deg[sel].astype(np.int32)
        offsets = exclusive(d32.astype(np.int64))
        total = int(d32.sum())
        out_h = np.zeros(total, dtype=UNSIGNED[np.dtype(dtype).itemsize])
        C.gather_lists(col.ptr_host()[sel], d32, offsets, out_h) if sel.shape[0] else None
        for ddt in (np.int32, np.int64):
            out_d = cp.zeros(total, dtype=dtype)
            G.gather_lists(col.ptr_dev()[cp.asarray(sel)], cp.asarray(d32.astype(ddt)),
                           cp.asarray(offsets), out_d)
            np.testing.assert_array_equal(out_h, bits_of(out_d))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
def test_read_write_at(rng, dtype):
    n = 100000
    h = random_values(rng, n, dtype)
    d = cp.asarray(h)
    size = np.dtype(dtype).itemsize
    for k in (0, 1, 5000):
        idx = rng.integers(0, n, k)
        got_h = np.zeros(k, dtype=UNSIGNED[size])
        C.read_at((h.ctypes.data + size * idx).astype(np.int64), got_h)
        got_d = cp.zeros(k, dtype=dtype)
        G.read_at(cp.asarray(d.data.ptr + size * idx, dtype=cp.int64), got_d)
        np.testing.assert_array_equal(got_h, bits_of(got_d))
        uniq = rng.permutation(n)[:k]
        vals = random_values(rng, k, dtype)
        C.write_at((h.ctypes.data + size * uniq).astype(np.int64), bits_of(vals))
        G.write_at(cp.asarray(d.data.ptr + size * uniq, dtype=cp.int64), cp.asarray(vals))
        np.testing.assert_array_equal(bits_of(h), bits_of(d))


def test_list_violations(rng):
    nv = 100000
    deg, _, vals = sorted_lists(rng, mixed_degrees(rng, 20000, 40, 150000), nv)
    lists = Lists(rng, deg, np.int32).put(deg, vals)
    start = lists.off
    big = np.flatnonzero(deg >= 3)
    for kind, vs in enumerate(np.array_split(rng.permutation(big)[:6000], 6)):
        for v in vs.tolist() + ([int(np.argmax(deg))] if kind == 5 else []):
            i = int(rng.integers(1, deg[v]))
            j = int(rng.integers(0, deg[v]))
            a = lists.host[start[v]:start[v] + deg[v]]
            if kind == 0:
                a[i - 1], a[i] = a[i], a[i - 1]            # unsorted
            elif kind == 1:
                a[i] = a[i - 1]                             # duplicate
            elif kind == 2:
                a[j] = -1 - int(rng.integers(0, 5))         # negative
            elif kind == 3:
                a[j] = nv + int(rng.integers(0, 5))         # too large
            elif kind == 4:                                 # both: the first one decides
                a[i] = a[i - 1]
                a[j] = nv
            else:                                           # hub: late in the list
                a[deg[v] - 2] = a[deg[v] - 1] if v == np.argmax(deg) else nv
    lists.upload()
    for ddt in (np.int32, np.int64):
        for num_vertices in (nv, nv - 1000):
            want = np.full(deg.shape[0], -1, dtype=np.int8)
            C.list_violations(lists.ptr_host(), deg.astype(ddt), num_vertices, want)
            got = cp.full(deg.shape[0], -1, dtype=cp.int8)
            G.list_violations(lists.ptr_dev(), cp.asarray(deg.astype(ddt)), num_vertices, got)
            np.testing.assert_array_equal(want, cp.asnumpy(got))
            assert set(np.unique(want)) == {0, 1, 2}
    G.list_violations(cp.zeros(0, cp.int64), cp.zeros(0, cp.int32), 5, cp.zeros(0, cp.int8))


# ---------------------------------------------------------------------------- memory kernels
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=DTYPE_IDS)
def test_copy_ranges(rng, dtype):
    size = np.dtype(dtype).itemsize
    counts = rng.integers(0, 12, 4000)
    counts[rng.integers(0, 4000)] = 300000                # one huge range
    counts[rng.integers(0, 4000, 50)] = -3                # nothing
    n_src = 400000
    src_h = random_values(rng, n_src, dtype)
    src_d = cp.asarray(src_h)
    pos = np.maximum(counts, 0)
    dst_off = exclusive(pos + rng.integers(0, 3, pos.shape[0]))
    dst_h = random_values(rng, int(dst_off[-1] + pos[-1] + 1), dtype)
    dst_d = cp.asarray(dst_h)
    src_at = rng.integers(0, n_src - pos + 1)
    C_src = (src_h.ctypes.data + size * src_at).astype(np.int64)
    C_dst = (dst_h.ctypes.data + size * dst_off).astype(np.int64)
    cpu_copy_ranges(C_src, C_dst, counts, UNSIGNED[size])
    GC.copy_ranges(cp.asarray(src_d.data.ptr + size * src_at, dtype=cp.int64),
                   cp.asarray(dst_d.data.ptr + size * dst_off, dtype=cp.int64),
                   cp.asarray(counts), np.dtype(dtype))
    np.testing.assert_array_equal(bits_of(dst_h), bits_of(dst_d))
    GC.copy_ranges(cp.zeros(0, cp.int64), cp.zeros(0, cp.int64), cp.zeros(0, cp.int64), dtype)


def test_size_classes(rng):
    deg = np.concatenate([np.arange(-3, 70), 2 ** np.arange(0, 40), 2 ** np.arange(1, 40) + 1,
                          2 ** np.arange(2, 40) - 1, rng.integers(-5, 10 ** 9, 100000)])
    deg = deg.astype(np.int64)
    for min_class in (0, 1, 4):
        want = cpu_size_classes(deg, min_class)
        got = GC.size_classes(cp.asarray(deg), min_class)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(want, cp.asnumpy(got))
    assert GC.size_classes(cp.zeros(0, cp.int64), 0).shape == (0,)


# ---------------------------------------------------------------------------- bit trees
def same_tree(cpu_words, gpu_words):
    np.testing.assert_array_equal(cpu_words, cp.asnumpy(gpu_words))


@pytest.mark.parametrize("num_blocks", [1, 5, 63, 64, 65, 4095, 4096, 4097, 262147, 64 ** 3 + 1])
def test_bit_tree(rng, num_blocks):
    cw, co = BT.new_tree(num_blocks)
    gw, go = GT.new_tree(num_blocks)
    assert isinstance(go, np.ndarray) and go.dtype == np.int64
    np.testing.assert_array_equal(co, go)
    np.testing.assert_array_equal(GT.tree_layout(num_blocks), BT.tree_layout(num_blocks))
    same_tree(cw, gw)
    assert GT.count_free(gw, go) == int(BT.count_free(cw, co)) == num_blocks
    for step in range(8):
        free = int(BT.count_free(cw, co))
        count = [0, 1, free // 3 + 1, free + 5, 7, num_blocks // 2 + 1, 3, 1][step]
        out = np.empty(count, dtype=np.int64)
        got = BT.take_free(cw, co, count, out, 0)
        assert got == min(count, free)
        taken = GT.take_free(gw, go, min(count, free))   # the GPU tree trusts its caller's count
        assert taken.dtype == np.int64
        np.testing.assert_array_equal(out[:got], cp.asnumpy(taken))
        same_tree(cw, gw)
        used = BT.used_blocks(cw, co, num_blocks)
        np.testing.assert_array_equal(used, cp.asnumpy(GT.used_blocks(gw, go, num_blocks)))
        if used.shape[0]:
            back = rng.permutation(used)[:int(rng.integers(0, used.shape[0] + 1))]
            BT.give_back(cw, co, back)
            GT.give_back(gw, go, cp.asarray(back))
            same_tree(cw, gw)
        probe = rng.integers(0, num_blocks, 1000)
        np.testing.assert_array_equal(BT.is_free(cw, co, probe),
                                      cp.asnumpy(GT.is_free(gw, go, cp.asarray(probe))))
        assert GT.count_free(gw, go) == int(BT.count_free(cw, co))
        assert GT.find_inconsistency(gw, go, num_blocks) == -1
        assert int(BT.find_inconsistency(cw, co, num_blocks)) == -1
    GT.give_back(gw, go, cp.zeros(0, cp.int64))
    assert GT.take_free(gw, go, 0).shape == (0,)
    # broken trees: one flipped bit anywhere (padding, leaf or internal)
    for _ in range(20):
        bad = cw.copy()
        w = int(rng.integers(0, bad.shape[0]))
        bad[w] ^= np.uint64(1) << np.uint64(int(rng.integers(0, 64)))
        assert GT.find_inconsistency(cp.asarray(bad), go, num_blocks) == \
            int(BT.find_inconsistency(bad, co, num_blocks))


def test_bit_tree_full_and_empty():
    for num_blocks in (1, 64, 1000):
        gw, go = GT.new_tree(num_blocks)
        cw, co = BT.new_tree(num_blocks)
        ids = GT.take_free(gw, go, num_blocks)
        np.testing.assert_array_equal(cp.asnumpy(ids), np.arange(num_blocks))
        out = np.empty(num_blocks, dtype=np.int64)
        BT.take_free(cw, co, num_blocks, out, 0)
        same_tree(cw, gw)
        assert GT.count_free(gw, go) == 0
        assert BT.take_free(cw, co, 3, np.empty(3, dtype=np.int64), 0) == 0
        np.testing.assert_array_equal(cp.asnumpy(GT.used_blocks(gw, go, num_blocks)),
                                      np.arange(num_blocks))
        GT.give_back(gw, go, ids)
        BT.give_back(cw, co, np.arange(num_blocks))
        same_tree(cw, gw)
        assert GT.used_blocks(gw, go, num_blocks).shape == (0,)
