"""The list-rewriting kernels of the batch pipeline (merge_lists, remove_lists) on every
backend, against NumPy (``np.insert`` / ``np.delete`` per list).

Each case lays many lists of one column out in a "home" buffer and gives some segments a
separate "away" block (out-of-place rewrites, as when a list grows or shrinks into a new
block); the others are rewritten in place. Buffers start full of junk and are compared whole
and bit for bit afterwards, so stray writes show too. List lengths cover the three GPU
strategies (one thread, one warp, one or many blocks for the huge ones: "hubs" has lists of
many removal pieces, whose survivors land several pieces back).
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from conftest import BACKENDS

OTHER_DTYPES = [np.float64, np.int8, np.uint16, np.float32, np.int64]


@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


@pytest.fixture(params=BACKENDS)
def kernels(request):
    if request.param == "gpu":
        from hornet.batch import gpu
        return gpu
    from hornet.batch import cpu
    return cpu


def junk(rng, n, dtype):
    dt = np.dtype(dtype)
    return rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).view(dt)


def bits(a):
    return a.view(np.uint8)


def list_lengths(rng, shape):
    """Old list lengths: many short ones, some medium, a few huge (per shape)."""
    n_small, n_medium, huge = {"mixed": (3000, 40, (20000, 9000)),
                               "short_only": (2000, 0, ()),
                               "many_tiny": (40000, 3, ()),
                               "huge_only": (0, 0, (60000,)),
                               "hubs": (500, 10, (250000, 4097, 4100, 70000, 2049)),
                               "none": (0, 0, ())}[shape]
    return np.concatenate([rng.integers(0, 9, n_small), rng.integers(60, 3000, n_medium),
                           np.asarray(huge, dtype=np.int64)]).astype(np.int64)


class Layout:
    """Lists at offsets of one host buffer per column (capacity ``cap`` each)."""

    def __init__(self, cap):
        self.cap = cap
        self.off = np.zeros(cap.shape[0], dtype=np.int64)
        np.cumsum(cap[:-1], out=self.off[1:]) if cap.shape[0] > 1 else None
        self.size = int(cap.sum()) + 1


class Device:
    """Host buffers moved to the backend's memory and back; list addresses on it."""

    def __init__(self, kernels):
        self.gpu = kernels.__name__.endswith(".gpu")
        if self.gpu:
            import cupy
            self.xp = cupy
        else:
            self.xp = np

    def put(self, a):
        return self.xp.asarray(a) if self.gpu else a.copy()

    def get(self, a):
        return a.get() if self.gpu else a

    def address(self, a) -> int:
        return int(a.data.ptr) if self.gpu else int(a.ctypes.data)


def _offsets(lengths):
    """Start of each of the lists of ``lengths`` in a flat array, and the total (int64)."""
    starts = np.zeros(lengths.shape[0], dtype=np.int64)
    if lengths.shape[0] > 1:
        np.cumsum(lengths[:-1], out=starts[1:])
    return starts, int(lengths.sum())


def _list_ids(lengths):
    return np.repeat(np.arange(lengths.shape[0], dtype=np.int64), lengths)


def _split(flat, lengths):
    return np.split(flat, np.cumsum(lengths)[:-1]) if lengths.shape[0] else []


def _unique_lists(rng, lengths, high):
    """Per list, the distinct values of ``lengths[v]`` random draws below ``high``: flat
    (sorted by list, then value) and their counts per list."""
    lid = _list_ids(lengths)
    keys = np.unique(lid * high + rng.integers(0, high, lid.shape[0]))
    lid = keys // high
    return keys - lid * high, np.bincount(lid, minlength=lengths.shape[0])


def merge_case(rng, shape):
    """Sorted old lists, sorted new entries absent from them, segments in random order."""
    old_len = list_lengths(rng, shape)
    n = old_len.shape[0]
    new_len = np.where(rng.random(n) < 0.8, rng.integers(0, 5, n), 0)
    if n:
        new_len[np.argmax(old_len)] = 3000             # a hub gains many entries
    vals, count = _unique_lists(rng, old_len + new_len, 10 ** 6)
    # a random split of each list's distinct values: the first old_len of a shuffle are old
    lid = _list_ids(count)
    shuffled = np.lexsort((rng.random(vals.shape[0]), lid))
    starts, _ = _offsets(count)
    is_old = np.empty(vals.shape[0], dtype=bool)
    is_old[shuffled] = np.arange(vals.shape[0]) - starts[lid[shuffled]] < \
        np.minimum(old_len, count)[lid[shuffled]]
    o_flat, w_flat = vals[is_old].astype(np.int32), vals[~is_old].astype(np.int32)
    o_len = np.bincount(lid[is_old], minlength=n)
    w_len = count - o_len
    # insertion points: new entries among the old ones of their list (both sorted)
    o_start, _ = _offsets(o_len)
    w_lid = lid[~is_old]
    ins = np.searchsorted(lid[is_old] * 10 ** 6 + o_flat, w_lid * 10 ** 6 + w_flat) \
        - o_start[w_lid]
    return _split(o_flat, o_len), _split(w_flat, w_len), _split(ins.astype(np.int64), w_len)


def removal_case(rng, shape):
    old_len = list_lengths(rng, shape)
    vals, count = _unique_lists(rng, old_len, 10 ** 6)
    frac = rng.choice([0.0, 0.1, 0.5, 1.0], old_len.shape[0])
    lid = _list_ids(count)
    starts, _ = _offsets(count)
    gone = rng.random(vals.shape[0]) < frac[lid]
    position = np.arange(vals.shape[0]) - starts[lid]
    return _split(vals.astype(np.int32), count), \
        _split(position[gone], np.bincount(lid[gone], minlength=old_len.shape[0]))


def _expected(old_v, change, new_v, seg, merge):
    """The lists of the segments ``seg`` after the change (np.insert / np.delete of each),
    flat in segment order, and their lengths."""
    old_len = np.array([old_v[v].shape[0] for v in seg], dtype=np.int64)
    starts, _ = _offsets(old_len)
    c_len = np.array([change[v].shape[0] for v in seg], dtype=np.int64)
    empty = np.zeros(0, np.int64)
    at = np.concatenate([change[v] for v in seg] + [empty]) + np.repeat(starts, c_len)
    flat_old = np.concatenate([old_v[v] for v in seg] + [old_v[0][:0]]) if len(old_v) \
        else np.zeros(0)
    if merge:
        flat_new = np.concatenate([new_v[v] for v in seg] + [flat_old[:0]])
        return np.insert(flat_old, at, flat_new), old_len + c_len
    return np.delete(flat_old, at), old_len - c_len


def _place(buf, flat, lengths, offsets):
    """Write the lists of ``flat`` (``lengths`` each) to ``buf`` at ``offsets``."""
    starts, total = _offsets(lengths)
    lid = _list_ids(lengths)
    buf[offsets[lid] + np.arange(total) - starts[lid]] = flat


def run_case(kernels, rng, old, change, new, moved_frac, merge):
    """Lay the case out, run the kernel on every column, compare with NumPy."""
    dev = Device(kernels)
    n = len(old)
    d0 = np.array([o.shape[0] for o in old], dtype=np.int64)
    c = np.array([x.shape[0] for x in change], dtype=np.int64)
    seg = np.flatnonzero(c > 0) if rng.random() < 0.5 else np.arange(n)
    seg = rng.permutation(seg)
    moved = rng.random(seg.shape[0]) < moved_frac
    final = d0 + c if merge else d0 - c
    home = Layout(np.maximum(d0, final) + rng.integers(0, 3, n))
    away = Layout(final[seg] * moved + rng.integers(0, 2, seg.shape[0]))
    seg_len = c[seg]
    seg_start = np.zeros(seg.shape[0], dtype=np.int64)
    if seg.shape[0] > 1:
        np.cumsum(seg_len[:-1], out=seg_start[1:])
    change_flat = np.concatenate([change[v] for v in seg] + [np.zeros(0, np.int64)])
    for dtype in [np.int32] + OTHER_DTYPES[:2 if n > 20000 else None]:
        dt = np.dtype(dtype)
        if dtype is np.int32:
            old_v = old
            new_v = new
        else:
            old_v = _split(junk(rng, int(d0.sum()), dt), d0)
            new_v = _split(junk(rng, int(c.sum()), dt), c) if merge else None
        hb, ab = junk(rng, home.size, dt), junk(rng, away.size, dt)
        if n:
            _place(hb, np.concatenate(old_v), d0, home.off)
        want_h, want_a = hb.copy(), ab.copy()
        res, res_len = _expected(old_v, change, new_v, seg, merge)
        for buf, which, offsets in ((want_a, moved, away.off[:seg.shape[0]]),
                                    (want_h, ~moved, home.off[seg])):
            keep = np.repeat(which, res_len)
            _place(buf, res[keep], res_len[which], offsets[which])
        dh, da = dev.put(hb), dev.put(ab)
        src = dev.address(dh) + dt.itemsize * home.off[seg]
        dst = np.where(moved, dev.address(da) + dt.itemsize * away.off, src)
        args = [[dev.put(src)], [dev.put(dst)], dev.put(d0[seg]), dev.put(seg_start),
                dev.put(seg_len), dev.put(change_flat)]
        if merge:
            vals = np.concatenate([new_v[v] for v in seg] + [np.zeros(0, dt)])
            kernels.merge_lists(*args, [dev.put(vals)])
        else:
            kernels.remove_lists(*args, [dt])
        np.testing.assert_array_equal(bits(dev.get(dh)), bits(want_h), err_msg=f"home {dt}")
        np.testing.assert_array_equal(bits(dev.get(da)), bits(want_a), err_msg=f"away {dt}")


@pytest.mark.parametrize("shape", ["mixed", "short_only", "many_tiny", "huge_only", "none"])
@pytest.mark.parametrize("moved", [0.0, 0.5, 1.0])
def test_merge_lists(kernels, rng, shape, moved):
    old, new, ins = merge_case(rng, shape)
    run_case(kernels, rng, old, ins, new, moved, merge=True)


@pytest.mark.parametrize("shape", ["mixed", "short_only", "many_tiny", "huge_only", "hubs",
                                   "none"])
@pytest.mark.parametrize("moved", [0.0, 0.5, 1.0])
def test_remove_lists(kernels, rng, shape, moved):
    old, gone = removal_case(rng, shape)
    run_case(kernels, rng, old, gone, None, moved, merge=False)


def test_several_columns_share_one_plan(kernels, rng):
    """Two columns in one call: the destination column and a float64 property."""
    dev = Device(kernels)
    old = [np.array([1, 5, 9], np.int32), np.array([], np.int32), np.arange(0, 400, 2, dtype=np.int32)]
    new = [np.array([0, 7], np.int32), np.array([3], np.int32), np.array([1, 399], np.int32)]
    ins = [np.searchsorted(o, w).astype(np.int64) for o, w in zip(old, new)]
    cap = np.array([5, 1, 202])
    lay = Layout(cap)
    cols = []
    for dt in (np.int32, np.float64):
        buf = np.zeros(lay.size, dtype=dt)
        for v, o in enumerate(old):
            buf[lay.off[v]:lay.off[v] + o.shape[0]] = o
        cols.append(dev.put(buf))
    ptrs = [dev.put(dev.address(b) + b.itemsize * lay.off) for b in cols]
    vals = np.concatenate(new)
    kernels.merge_lists(ptrs, ptrs, dev.put(np.array([3, 0, 200])), dev.put(np.array([0, 2, 3])),
                        dev.put(np.array([2, 1, 2])), dev.put(np.concatenate(ins)),
                        [dev.put(vals), dev.put(vals.astype(np.float64) + 0.5)])
    got_i, got_f = dev.get(cols[0]), dev.get(cols[1])
    for v, (o, w) in enumerate(zip(old, new)):
        want = np.sort(np.concatenate([o, w]))
        seen = got_i[lay.off[v]:lay.off[v] + want.shape[0]]
        np.testing.assert_array_equal(seen, want)
        # new entries carry their +0.5 property, old ones their own value
        f = got_f[lay.off[v]:lay.off[v] + want.shape[0]]
        np.testing.assert_array_equal(f, want + np.isin(want, w) * 0.5)


def test_removal_from_several_columns(kernels, rng):
    """Three columns in one call, hubs of many removal pieces among short lists, in place: every
    column ends as NumPy's np.delete of it (each column's pieces are scheduled afresh)."""
    dev = Device(kernels)
    old_len = np.array([150000, 3, 0, 9000, 40, 70000, 1], dtype=np.int64)
    old = [np.sort(rng.choice(10 ** 7, d, replace=False)).astype(np.int32) for d in old_len]
    gone = [np.flatnonzero(rng.random(d) < f).astype(np.int64)
            for d, f in zip(old_len, [0.6, 0.5, 0.0, 0.02, 1.0, 0.001, 1.0])]
    lay = Layout(old_len + 1)
    dtypes = [np.int32, np.float64, np.int8]
    cols = []
    for dt in dtypes:
        buf = np.zeros(lay.size, dtype=dt)
        for v, o in enumerate(old):
            buf[lay.off[v]:lay.off[v] + o.shape[0]] = o
        cols.append(dev.put(buf))
    ptrs = [dev.put(dev.address(b) + np.dtype(b.dtype).itemsize * lay.off) for b in cols]
    seg_len = np.array([g.shape[0] for g in gone], dtype=np.int64)
    seg_start = np.concatenate([[0], np.cumsum(seg_len[:-1])]).astype(np.int64)
    kernels.remove_lists(ptrs, ptrs, dev.put(old_len), dev.put(seg_start), dev.put(seg_len),
                         dev.put(np.concatenate(gone)), dtypes, items=int(old_len.sum()))
    for dt, col in zip(dtypes, cols):
        got = dev.get(col)
        for v, (o, g) in enumerate(zip(old, gone)):
            want = np.delete(o, g).astype(dt)
            np.testing.assert_array_equal(got[lay.off[v]:lay.off[v] + want.shape[0]], want,
                                          err_msg=f"list {v}, column {np.dtype(dt)}")
