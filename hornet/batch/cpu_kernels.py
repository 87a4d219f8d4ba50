"""CPU (Numba) kernels of the batch pipeline.

Every kernel reads and writes vertex lists through edge pointers (see
:mod:`hornet.memory.pointers`); the GPU backend has the same kernels in CUDA.
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
from numba import types
from numba.core import cgutils
from numba.cpython.unsafe.numbers import leading_zeros
from numba.extending import intrinsic

from ..memory.host_heap import keep_freed_buffers
from ..memory.jit import dual_kernel, ix
from ..memory.pointers import address_of, int32_view, prefetch, prefetch_l2, prefetch_write, view
from ..memory.search import array_holding, lower_bound
from . import validate
from .workspace import Workspace, take

keep_freed_buffers()     # batches reuse the heap instead of faulting fresh pages in

RADIX_BITS = 11
SMALL_SORT = 1 << 14


def workspace() -> Workspace:
    """Buffers for one graph's batches (see :mod:`hornet.batch.workspace`); the kernels that
    take ``ws`` draw their batch-local outputs from it."""
    return Workspace()


# ---------------------------------------------------------------------------- validation
BOUND_CHUNKS = 16


@dual_kernel
def _id_bounds(a, out):
    n = a.shape[0]
    part = np.empty((BOUND_CHUNKS, 2), dtype=np.int64)
    for c in numba.prange(BOUND_CHUNKS):
        lo = np.int64(np.iinfo(np.int64).max)
        hi = np.int64(np.iinfo(np.int64).min)
        for i in range(n * c // BOUND_CHUNKS, n * (c + 1) // BOUND_CHUNKS):
            x = np.int64(a[ix(i)])
            lo = min(lo, x)
            hi = max(hi, x)
        part[c, 0] = lo
        part[c, 1] = hi
    out[0] = part[:, 0].min()
    out[1] = part[:, 1].max()


def id_bounds(arrays) -> list[int]:
    """[min, max] of each non-empty integer array (host, 1-D), flattened: one pass over each
    (NumPy's ``min`` and ``max`` are a pass each: 0.19 ms for a 10^5-pair batch, about half
    of it here)."""
    out = np.empty(2 * len(arrays), dtype=np.int64)
    for k, a in enumerate(arrays):
        _id_bounds(a, out[2 * k:2 * k + 2])
    return out.tolist()


# ---------------------------------------------------------------------------- sorting
@numba.njit(cache=True)
def _radix_argsort(keys, key_bits):
    n = keys.shape[0]
    order = np.arange(n, dtype=np.int64)
    k = keys.copy()
    k2 = np.empty_like(k)
    o2 = np.empty_like(order)
    radix = 1 << RADIX_BITS
    mask = np.uint64(radix - 1)
    shift = 0
    while shift < key_bits:
        count = np.zeros(radix + 1, dtype=np.int64)
        s = np.uint64(shift)
        for i in range(n):
            count[np.int64((k[i] >> s) & mask) + 1] += 1
        for d in range(radix):
            count[d + 1] += count[d]
        for i in range(n):
            d = np.int64((k[i] >> s) & mask)
            p = count[d]
            count[d] = p + 1
            k2[p] = k[i]
            o2[p] = order[i]
        k, k2 = k2, k
        order, o2 = o2, order
        shift += RADIX_BITS
    return order, k


def sort_keys(keys: np.ndarray, key_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Stable argsort of uint64 keys below ``2**key_bits``: (order int64, sorted keys)."""
    if keys.shape[0] <= SMALL_SORT:
        order = np.argsort(keys, kind="stable")
        return order, keys[order]
    return _radix_argsort(keys, max(1, key_bits))


_ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


@dual_kernel
def pack_pairs(s, d, bits, index_bits, mirror):
    """Keys ``((src << bits | dst) << index_bits) | entry`` for a batch of pairs.

    With ``mirror`` (undirected graphs) pair i gives entries 2i (s, d) and 2i + 1 (d, s), and
    self-loops give the all-ones key, which sorts last. Sorting these keys sorts by
    (src, dst) and, among repeats, by entry: a stable sort for free.
    """
    n = s.shape[0]
    b = np.uint64(bits)
    ib = np.uint64(index_bits)
    with_index = np.uint64(1 if index_bits > 0 else 0)   # 0: keys without the entry index
    if mirror:
        out = np.empty(2 * n, dtype=np.uint64)
        for i in numba.prange(n):
            u = np.uint64(s[i])
            v = np.uint64(d[i])
            if u == v:
                out[2 * i] = _ALL_ONES
                out[2 * i + 1] = _ALL_ONES
            else:
                out[2 * i] = (((u << b) | v) << ib) | (np.uint64(2 * i) * with_index)
                out[2 * i + 1] = (((v << b) | u) << ib) | (np.uint64(2 * i + 1) * with_index)
    else:
        out = np.empty(n, dtype=np.uint64)
        for i in numba.prange(n):
            out[i] = (((np.uint64(s[i]) << b) | np.uint64(d[i])) << ib) | \
                (np.uint64(i) * with_index)
    return out


@numba.njit(cache=True)
def unpack_unique(keys, bits, index_bits):
    """From sorted packed keys: (entry order int64, src int32, dst int32, self-loop entries),
    keeping the first entry of each (src, dst)."""
    n = keys.shape[0]
    end = n
    while end > 0 and keys[end - 1] == _ALL_ONES:
        end -= 1
    ib = np.uint64(index_bits)
    b = np.uint64(bits)
    low = (np.uint64(1) << ib) - np.uint64(1)
    dmask = (np.uint64(1) << b) - np.uint64(1)
    unique = 0
    prev = _ALL_ONES
    for i in range(end):
        k = keys[i] >> ib
        if k != prev:
            unique += 1
            prev = k
    order = np.empty(unique, dtype=np.int64)
    src = np.empty(unique, dtype=np.int32)
    dst = np.empty(unique, dtype=np.int32)
    j = 0
    prev = _ALL_ONES
    for i in range(end):
        k = keys[i] >> ib
        if k != prev:
            order[j] = np.int64(keys[i] & low)
            src[j] = np.int32(k >> b)
            dst[j] = np.int32(k & dmask)
            j += 1
            prev = k
    return order, src, dst, n - end


@numba.njit(cache=True)
def unique_sorted_pairs(keys_sorted, order, bits):
    """Like :func:`unpack_unique` for (radix-)sorted plain keys ``src << bits | dst``."""
    n = keys_sorted.shape[0]
    b = np.uint64(bits)
    dmask = (np.uint64(1) << b) - np.uint64(1)
    unique = 0
    for i in range(n):
        if i == 0 or keys_sorted[i] != keys_sorted[i - 1]:
            unique += 1
    o = np.empty(unique, dtype=np.int64)
    src = np.empty(unique, dtype=np.int32)
    dst = np.empty(unique, dtype=np.int32)
    j = 0
    for i in range(n):
        if i == 0 or keys_sorted[i] != keys_sorted[i - 1]:
            o[j] = order[i]
            src[j] = np.int32(keys_sorted[i] >> b)
            dst[j] = np.int32(keys_sorted[i] & dmask)
            j += 1
    return o, src, dst


@numba.njit(cache=True)
def _co_rank(k, a, b):
    """Merge path: how many of the first k merged items come from ``a``."""
    lo = max(0, k - b.shape[0])
    hi = min(k, a.shape[0])
    while lo < hi:
        i = (lo + hi) // 2
        if a[i] <= b[k - i - 1]:
            lo = i + 1
        else:
            hi = i
    return lo


@dual_kernel
def _merge(a, b, out, parts):
    n = out.shape[0]
    for p in numba.prange(parts):
        k0 = n * p // parts
        k1 = n * (p + 1) // parts
        i = _co_rank(k0, a, b)
        j = k0 - i
        i1 = _co_rank(k1, a, b)
        j1 = k1 - i1
        for k in range(k0, k1):
            if j >= j1 or (i < i1 and a[i] <= b[j]):
                out[k] = a[i]
                i += 1
            else:
                out[k] = b[j]
                j += 1


_POOL = None


def parallel_sort(keys: np.ndarray) -> np.ndarray:
    """Sort uint64 keys using every core: halves sorted in two threads, then a parallel merge."""
    threads = numba.get_num_threads()
    if keys.shape[0] < (1 << 18) or threads < 2:
        keys.sort()
        return keys
    half = keys.shape[0] // 2
    a, b = keys[:half], keys[half:]
    list(_pool().map(np.ndarray.sort, (a, b)))    # NumPy releases the GIL while sorting
    out = np.empty_like(keys)
    _merge(a, b, out, 4 * threads)
    return out


# Batches without an entry order sort 32-bit keys: the pairs are first split by the high bits
# of their 64-bit key (src << bits | dst) into up to 2**MAX_HIGH_BITS buckets, one parallel
# counting pass, and each bucket's 32 low bits are sorted by NumPy (twice as many keys per SIMD
# register as uint64, and buckets fit in cache). When the buckets are about even, they are
# laid out as the rows of one padded 2-D array (ROW_SLACK) and sorted by one NumPy call
# (sort along axis 1): a Python-level call per bucket cost more than its sort, 0.40 against
# 0.30 ms for the 256 buckets of 2 x 10^5 keys.
MAX_HIGH_BITS = 12
PART_CHUNKS = 16          # pieces of the partition pass (each with its own bucket counters)
PARTITION_MIN = 1 << 15   # entries below which one uint64 sort is as fast
ROW_SLACK = 0.5           # padded rows while buckets * largest bucket <= (1 + ROW_SLACK) keys


@numba.njit(parallel=True, cache=True)
def partition_pairs(s, d, bits, high_bits, mirror, keys):
    """Split the keys ``src << bits | dst`` of a batch by their ``high_bits`` top bits.

    ``s``, ``d``: int64 (n,), ``2 * bits - high_bits <= 32``. With ``mirror`` pair i stands
    for (s, d) and (d, s) and self-loops are dropped. Writes the low 32-bit keys grouped by
    bucket (in no order inside one) to ``keys`` (uint32, at least (2n,) with ``mirror``, else
    (n,)) and returns (bucket starts int64 (2**high_bits + 1,), m keys, self-loops dropped,
    width, the smallest id, the largest id). With ``width`` 0 bucket b is
    ``keys[start[b]:start[b + 1]]``; otherwise (when ``keys`` has room for 2**high_bits rows of
    the largest bucket's size, ``width``) bucket b is row b of
    ``keys[:2**high_bits * width].reshape(-1, width)``, its ``start[b + 1] - start[b]`` keys
    first and the row padded with 2**32 - 1 (which sorts last).

    The ids are checked on the way (the first pass reads them anyway): when one is negative or
    not below ``2**bits``, nothing is written to ``keys`` and only the two bounds mean
    anything (the caller refuses the batch, or partitions again with more bits).
    """
    n = s.shape[0]
    nb = 1 << high_bits
    b64 = np.uint64(bits)
    lb = np.uint64(2 * bits - high_bits)
    low_mask = (np.uint64(1) << lb) - np.uint64(1)
    id_mask = (np.uint64(1) << b64) - np.uint64(1)     # keeps a bad id's bucket in range
    count = np.zeros(PART_CHUNKS * nb, dtype=np.int64)
    loops = np.zeros(PART_CHUNKS, dtype=np.int64)
    lows = np.zeros(PART_CHUNKS, dtype=np.int64)
    highs = np.zeros(PART_CHUNKS, dtype=np.int64)
    for c in numba.prange(PART_CHUNKS):
        lp = 0
        row = c * nb
        lo = np.int64(np.iinfo(np.int64).max)
        hi = np.int64(np.iinfo(np.int64).min)
        for i in range(n * c // PART_CHUNKS, n * (c + 1) // PART_CHUNKS):
            x = np.int64(s[ix(i)])
            y = np.int64(d[ix(i)])
            lo = min(lo, min(x, y))
            hi = max(hi, max(x, y))
            u = np.uint64(x) & id_mask
            v = np.uint64(y) & id_mask
            if mirror:
                if u == v:
                    lp += 1
                else:
                    count[ix(row + np.int64(((u << b64) | v) >> lb))] += 1
                    count[ix(row + np.int64(((v << b64) | u) >> lb))] += 1
            else:
                count[ix(row + np.int64(((u << b64) | v) >> lb))] += 1
        loops[c] = lp
        lows[c] = lo
        highs[c] = hi
    lo = lows.min() if n else 0
    hi = highs.max() if n else -1
    start = np.zeros(nb + 1, dtype=np.int64)
    if lo < 0 or hi > np.int64(id_mask):
        return start, 0, 0, 0, lo, hi
    total = 0
    widest = 0
    for b in range(nb):                       # bucket-major: each bucket contiguous
        start[b] = total
        for c in range(PART_CHUNKS):
            k = count[c * nb + b]
            count[c * nb + b] = total
            total += k
        widest = max(widest, total - start[b])
    start[nb] = total
    width = widest if nb * widest <= keys.shape[0] else 0
    for c in numba.prange(PART_CHUNKS):
        row = c * nb
        for i in range(n * c // PART_CHUNKS, n * (c + 1) // PART_CHUNKS):
            u = np.uint64(s[ix(i)])
            v = np.uint64(d[ix(i)])
            if mirror and u == v:
                continue
            key = (u << b64) | v
            b = np.int64(key >> lb)
            at = ix(row + b)
            p = count[at]
            count[at] = p + 1
            keys[ix(p + (b * width - start[b] if width else 0))] = np.uint32(key & low_mask)
            if mirror:
                key = (v << b64) | u
                b = np.int64(key >> lb)
                at = ix(row + b)
                p = count[at]
                count[at] = p + 1
                keys[ix(p + (b * width - start[b] if width else 0))] = \
                    np.uint32(key & low_mask)
    if width:
        for b in numba.prange(nb):
            for p in range(b * width + start[b + 1] - start[b], (b + 1) * width):
                keys[ix(p)] = np.uint32(0xFFFFFFFF)
    return start, total, loops.sum(), width, lo, hi


@numba.njit(parallel=True, cache=True)
def unpack_buckets(keys, start, width, bits, high_bits, sources, seg_start):
    """From buckets of sorted low keys (laid out as :func:`partition_pairs` says for
    ``width``): (src int32, dst int32) of the distinct pairs, ascending, and S, the number of
    their segments, written to ``sources[:S]`` (int32, the distinct sources) and
    ``seg_start[:S + 1]`` (int32, where each one's pairs start, then the pair count) as
    :func:`plan_insert` takes them; both at least as long as the key count (+ 1). Needs
    ``high_bits <= bits``: a source's keys then lie in one bucket."""
    nb = start.shape[0] - 1
    low_bits = np.uint64(2 * bits - high_bits)
    b64 = np.uint64(bits)
    dmask = (np.uint64(1) << b64) - np.uint64(1)
    groups = min(nb, PART_CHUNKS)
    found = np.zeros(groups + 1, dtype=np.int64)
    heads = np.zeros(groups + 1, dtype=np.int64)
    for g in numba.prange(groups):
        k = 0
        h = 0
        for b in range(nb * g // groups, nb * (g + 1) // groups):
            o = b * width - start[b] if width else 0    # bucket b's key p is keys[p + o]
            for p in range(start[b], start[b + 1]):
                x = keys[ix(p + o)]
                if p == start[b] or x != keys[ix(p + o - 1)]:
                    k += 1
                    h += p == start[b] or (x >> b64) != (keys[ix(p + o - 1)] >> b64)
        found[g + 1] = k
        heads[g + 1] = h
    for g in range(groups):
        found[g + 1] += found[g]
        heads[g + 1] += heads[g]
    src = np.empty(found[groups], dtype=np.int32)
    dst = np.empty(found[groups], dtype=np.int32)
    seg_start[heads[groups]] = found[groups]
    for g in numba.prange(groups):
        j = found[g]
        h = heads[g]
        for b in range(nb * g // groups, nb * (g + 1) // groups):
            high = np.uint64(b) << low_bits
            o = b * width - start[b] if width else 0
            for p in range(start[b], start[b + 1]):
                x = keys[ix(p + o)]
                if p == start[b] or x != keys[ix(p + o - 1)]:
                    key = high | np.uint64(x)
                    u = np.int32(key >> b64)
                    src[ix(j)] = u
                    dst[ix(j)] = np.int32(key & dmask)
                    if p == start[b] or (x >> b64) != (keys[ix(p + o - 1)] >> b64):
                        sources[ix(h)] = u
                        seg_start[ix(h)] = j
                        h += 1
                    j += 1
    return src, dst, heads[groups]


def _sort_buckets(keys, start) -> None:
    """Sort every bucket ``keys[start[b]:start[b + 1]]`` in place, in two threads when large:
    this one and one of the pool. (Two pool threads while this one waited took 0.72 ms for
    the 2 x 10^5 keys of a 10^5-pair batch right after a parallel kernel, whose OpenMP worker
    still spins on the other core; this thread and one pool thread 0.40 ms, this thread alone
    0.39 ms; 2 x 10^6 keys: 2.64 ms, alone 4.06 ms.)"""
    bounds = start.tolist()
    nb = len(bounds) - 1
    if numba.get_num_threads() < 2 or keys.shape[0] < (1 << 18):
        _sort_range(keys, bounds, 0, nb)
        return
    half = int(np.searchsorted(start, keys.shape[0] // 2))       # about half of the keys
    half = min(max(half, 1), nb - 1) if nb > 1 else 1
    other = _pool().submit(_sort_range, keys, bounds, half, nb)
    _sort_range(keys, bounds, 0, half)
    other.result()


def _sort_range(keys, bounds, b0, b1) -> None:
    for b in range(b0, b1):
        lo, hi = bounds[b], bounds[b + 1]
        if hi - lo > 1:
            keys[lo:hi].sort()                # NumPy releases the GIL while sorting


def _pool():
    """Two threads for NumPy sorts (which release the GIL), made on first use."""
    global _POOL
    if _POOL is None:
        from concurrent.futures import ThreadPoolExecutor
        _POOL = ThreadPoolExecutor(2, thread_name_prefix="hornet-sort")
    return _POOL


def sorted_unique_pairs(s: np.ndarray, d: np.ndarray, num_vertices: int, mirror: bool,
                        need_order: bool = True, ws: Workspace | None = None,
                        segments: bool = False, check_ids: bool = False):
    """Sort a batch by (src, dst) and drop repeats, first entry wins.

    ``mirror``: undirected batch; each pair stands for both directions and self-loops are
    dropped. Returns (order into the (mirrored) entries, src int32, dst int32, self-loops);
    with ``need_order=False`` the order is not computed (None). ``ws``: a workspace for the
    sort keys. With ``segments`` a fifth item: the segments of the result as
    :func:`plan_insert` takes them ((sources, seg_start), found while unpacking the bucket
    sort of large batches), or None where they were not found on the way.

    ``check_ids``: ``s`` and ``d`` (int64) are not checked yet. A negative or too large id
    raises :class:`hornet.batch.validate.BatchError` as
    :func:`hornet.batch.validate.check_ids` would; ``num_vertices`` is the id space so far,
    grown here to cover the batch; a last item is returned: the ids the batch needs (largest
    id + 1, 0 when empty). The bucket sort's first pass reads every id anyway and checks them
    there (one pass over the batch fewer: 0.15 ms of a 10^5-pair insert into Kronecker 20);
    other batches are checked first.
    """
    entries = s.shape[0] * (2 if mirror else 1)
    index_bits = max(1, int(entries - 1).bit_length()) if need_order else 0
    bits, high_bits, bucketed = _key_layout(num_vertices, entries, need_order)
    top = ()
    if check_ids and not bucketed:            # no partition pass to check them on the way
        top = (validate.check_ids([(s, "src"), (d, "dst")]),)
        if top[0] > num_vertices:
            bits, high_bits, bucketed = _key_layout(top[0], entries, need_order)
    if bucketed:
        keys = take(ws, "sort_keys", entries + int(ROW_SLACK * entries), np.uint32)
        start, m, loops, width, lo, hi = partition_pairs(s, d, bits, high_bits, mirror, keys)
        if check_ids and not top:
            if lo < 0 or hi > validate.MAX_VERTEX_ID:
                validate.check_ids([(s, "src"), (d, "dst")])    # raises, naming the id
            if hi >> bits:                    # the batch grows the id space past 2**bits
                return sorted_unique_pairs(s, d, hi + 1, mirror, need_order, ws, segments) + \
                    (int(hi) + 1,)
            top = (int(hi) + 1,)
        if width:                             # even buckets: the rows of one 2-D sort
            keys[:(start.shape[0] - 1) * width].reshape(-1, width).sort(axis=1)
        else:
            _sort_buckets(keys[:m], start)
        # the segments go to the plan's buffers (reused batch after batch)
        sources = take(ws, "sources", m, np.int32)
        seg_start = take(ws, "seg_start32", m + 1, np.int32)
        src, dst, ns = unpack_buckets(keys, start, width, bits, high_bits, sources, seg_start)
        found = (sources[:ns], seg_start[:ns + 1])
        return (None, src, dst, int(loops)) + ((found,) if segments else ()) + top
    out = _sorted_unique_pairs(s, d, bits, mirror, need_order, index_bits)
    return (out + (None,) if segments else out) + top


def _key_layout(num_vertices: int, entries: int, need_order: bool):
    """(bits per id, bucket bits, whether the bucket sort takes the batch) for ids below
    ``num_vertices``."""
    bits = max(1, int(num_vertices - 1).bit_length())
    high_bits = max(2 * bits - 32, min(8, 2 * bits))
    bucketed = not need_order and entries >= PARTITION_MIN and \
        high_bits <= min(MAX_HIGH_BITS, bits)
    return bits, high_bits, bucketed


def _sorted_unique_pairs(s, d, bits: int, mirror: bool, need_order: bool, index_bits: int):
    """:func:`sorted_unique_pairs` for batches that the bucket sort does not take."""
    if 2 * bits + index_bits <= 63:
        keys = parallel_sort(pack_pairs(s, d, bits, index_bits, mirror))
        order, src, dst, loops = unpack_unique(keys, bits, index_bits)
        return (order if need_order else None), src, dst, loops // 2
    # ids too large to pack with the entry index: LSD radix argsort of plain keys
    if mirror:
        loop = s == d
        idx = np.flatnonzero(~loop)
        ss = np.column_stack([s, d]).ravel()
        dd = np.column_stack([d, s]).ravel()
        keep = np.repeat(~loop, 2)
        entry = np.flatnonzero(keep)
        ss, dd = ss[keep], dd[keep]
        loops = s.shape[0] - idx.shape[0]
    else:
        ss, dd, entry, loops = s, d, None, 0
    keys = (ss.astype(np.uint64) << np.uint64(bits)) | dd.astype(np.uint64)
    order, skeys = sort_keys(keys, 2 * bits)
    o, src, dst = unique_sorted_pairs(skeys, order, bits)
    if entry is not None:
        o = entry[o]
    return o, src, dst, loops


# ---------------------------------------------------------------------------- searching
# Prefetch distances (iterations ahead): vertex-table rows first, then the list they point to.
FAR = 32
NEAR = 16
AHEAD = 8     # segments ahead that the list rewrites prefetch


SEARCH_CHUNKS = 256   # pieces of find_positions, each walked in order


def find_positions(src, dst, degree, edge_ptr, num_vertices, ws: Workspace | None = None):
    """Position of each ``dst[i]`` in the sorted list of ``src[i]``; when absent,
    ``-1 - p`` where ``p`` is where it would be inserted (so absent means negative).

    ``src``, ``dst``: integer arrays (n,), any order; returns int64 (n,) (from ``ws`` when
    given: valid until its next batch). Each query starts where its destination would sit if
    the list were spread evenly over the id space (``degree * dst // num_vertices``: vertex ids
    are usually shuffled, so this lands within a cache line or two of the answer, and the line
    is prefetched a few queries ahead) and gallops from there, never below where the query
    before it ended when that one had the same source and a smaller destination. Skewed id
    distributions cost at most about twice a binary search's probes.
    """
    out = take(ws, "positions", src.shape[0], np.int64)
    _find_positions(src, dst, degree, edge_ptr, num_vertices, out)
    return out


@dual_kernel
def _find_positions(src, dst, degree, edge_ptr, num_vertices, out):
    n = src.shape[0]
    nv = np.int64(max(num_vertices, 1))
    deg_base = degree.ctypes.data
    ptr_base = edge_ptr.ctypes.data
    for c in numba.prange(SEARCH_CHUNKS):
        i1 = n * (c + 1) // SEARCH_CHUNKS
        prev_u = -1
        prev_x = 0
        prev_at = 0
        for i in range(n * c // SEARCH_CHUNKS, i1):
            if i + FAR < n and src[i + FAR] < num_vertices:
                prefetch(deg_base + 4 * np.int64(src[i + FAR]))
                prefetch(ptr_base + 8 * np.int64(src[i + FAR]))
            if i + NEAR < n and src[i + NEAR] < num_vertices:
                w = src[i + NEAR]
                dw = np.int64(degree[w])
                if dw > 0:                 # where the interpolation search will look first
                    gw = min(dw * min(np.int64(dst[i + NEAR]), nv) // nv, dw - 1)
                    prefetch(edge_ptr[w] + 4 * max(gw, 0))
            u = src[i]
            x = dst[i]
            out[i] = -1
            if u < num_vertices:
                d = np.int64(degree[u])
                if d > 0:
                    lst = int32_view(edge_ptr[u], d)
                    floor = prev_at if (u == prev_u and x > prev_x) else 0
                    lo = _lower_bound(lst, d, x, floor, nv)   # lst[:prev_at] < x already
                    if lo < d and lst[lo] == x:
                        out[i] = lo
                    else:
                        out[i] = -1 - lo
                    prev_u = u
                    prev_x = x
                    prev_at = lo


# ---------------------------------------------------------------------------- planning
# Filters run in CHUNKS pieces: each counts what it keeps, then writes it at its offset.
# Where the kept pattern is random (segment heads, src < dst), a branch per entry mispredicts
# half the time, so the write loop is branch-free: every entry is written at the next free
# slot and only a kept one advances it; the loop stops at the piece's last kept entry, so no
# stray write leaves the piece's range.
CHUNKS = 64


@dual_kernel
def _count_kept(pos, inserting):
    n = pos.shape[0]
    found = np.zeros(CHUNKS + 1, dtype=np.int64)
    for c in numba.prange(CHUNKS):
        k = 0
        for i in range(n * c // CHUNKS, n * (c + 1) // CHUNKS):
            k += (pos[i] < 0) == inserting
        found[c + 1] = k
    for c in range(CHUNKS):
        found[c + 1] += found[c]
    return found


@dual_kernel
def _insertion_points(pos, at):
    for i in numba.prange(pos.shape[0]):
        at[i] = -1 - pos[i]


@dual_kernel
def _fill_kept(pos, src, dst, inserting, found, kept, s_out, d_out, at):
    n = pos.shape[0]
    need_index = kept.shape[0] > 0
    for c in numba.prange(CHUNKS):
        j = found[c]
        if found[c + 1] == j:
            continue
        last = n * (c + 1) // CHUNKS - 1
        while (pos[last] < 0) != inserting:
            last -= 1
        for i in range(n * c // CHUNKS, last + 1):
            p = pos[i]
            s_out[j] = src[i]
            d_out[j] = dst[i]
            at[j] = -1 - p if inserting else p
            if need_index:
                kept[j] = i
            j += (p < 0) == inserting


def keep_entries(pos, src, dst, inserting: bool, need_index: bool = False,
                 ws: Workspace | None = None):
    """The entries a batch really changes, from the positions :func:`find_positions` found.

    Inserting keeps the absent entries (``pos < 0``) with ``at = -1 - pos`` (the number of old
    items before each); deleting keeps the present ones with ``at = pos``. ``pos``: int64
    (n,); ``src``, ``dst``: int32 (n,). Returns (kept: int64 (m,) indices of the kept entries,
    or None when every entry is kept or ``need_index`` is false; src int32 (m,); dst int32
    (m,); at int64 (m,)). When every entry is kept, src and dst are the arrays passed in
    (and deleting, ``at`` is ``pos``). ``at`` and ``kept`` come from ``ws`` when given.
    """
    inserting = bool(inserting)
    n = pos.shape[0]
    found = _count_kept(pos, inserting)
    m = int(found[CHUNKS])
    if m == n:
        if not inserting:
            return None, src, dst, pos
        at = take(ws, "insert_at", n, np.int64)
        _insertion_points(pos, at)
        return None, src, dst, at
    kept = take(ws, "kept", m if need_index else 0, np.int64)
    s_out, d_out = np.empty(m, dtype=src.dtype), np.empty(m, dtype=dst.dtype)
    at = take(ws, "insert_at", m, np.int64)
    _fill_kept(pos, src, dst, inserting, found, kept, s_out, d_out, at)
    return (kept if need_index else None), s_out, d_out, at


@dual_kernel
def _count_heads(src):
    n = src.shape[0]
    found = np.zeros(CHUNKS + 1, dtype=np.int64)
    for c in numba.prange(CHUNKS):
        i0 = n * c // CHUNKS
        i1 = n * (c + 1) // CHUNKS
        k = 0
        if i0 == 0 and i1 > 0:              # entry 0 always starts a segment
            k = 1
            i0 = 1
        for i in range(i0, i1):
            k += src[ix(i)] != src[ix(i - 1)]
        found[c + 1] = k
    for c in range(CHUNKS):
        found[c + 1] += found[c]
    return found


@dual_kernel
def _fill_heads(src, found, sources, seg_start):
    n = src.shape[0]
    for c in numba.prange(CHUNKS):
        j = found[c]
        if found[c + 1] == j:
            continue
        i0 = n * c // CHUNKS
        last = n * (c + 1) // CHUNKS - 1
        while last > 0 and src[last] == src[last - 1]:
            last -= 1
        if i0 == 0:
            sources[j] = src[0]
            seg_start[j] = 0
            j += 1
            i0 = 1
        for i in range(i0, last + 1):
            sources[ix(j)] = src[ix(i)]
            seg_start[ix(j)] = i
            j += src[ix(i)] != src[ix(i - 1)]


@numba.njit(inline="always", cache=True)
def _smallest_class(d, min_class):
    """The smallest size class (at least ``min_class``) whose blocks hold ``d`` edges:
    max(ceil(log2 d), min_class), from a leading-zero count (no loop whose exit depends on
    ``d``)."""
    return max(np.int64(64 - leading_zeros(np.uint64(max(d, 1) - 1))), np.int64(min_class))


@numba.njit(inline="always", cache=True)
def _moves_down(d, cls, min_class):
    """A list of ``d > 0`` edges in a block of class ``cls`` moves to a smaller one: it fills
    less than a quarter of its block and a smaller class holds it."""
    return 4 * d < (np.int64(1) << cls) and _smallest_class(d, min_class) < cls


@dual_kernel
def _decide_segments(sources, seg_start, n, degree, size_class, edge_ptr, inserting, min_class,
                     seg_len, old_deg, new_deg, old_ptr, resize):
    ns = sources.shape[0]
    for k in numba.prange(ns):
        v = sources[k]
        c = (seg_start[k + 1] if k + 1 < ns else n) - seg_start[k]
        d0 = np.int64(degree[v])
        cls = np.int64(size_class[v])
        cap = (np.int64(1) << cls) if cls >= 0 else np.int64(0)
        seg_len[k] = c
        old_deg[k] = d0
        old_ptr[k] = edge_ptr[v]
        if inserting:
            d1 = d0 + c
            resize[k] = d1 > cap
        else:
            d1 = d0 - c
            resize[k] = d1 > 0 and _moves_down(d1, cls, min_class)
        new_deg[k] = d1


def plan_segments(src, degree, size_class, edge_ptr, inserting: bool, min_class: int,
                  ws: Workspace | None = None):
    """Per-list plan of a batch sorted by source: one segment per distinct source.

    ``src``: int32 (m,), sorted, the source of every entry the batch changes (see
    :func:`keep_entries`); ``degree`` int32, ``size_class`` int8, ``edge_ptr`` int64: the
    vertex table. Inserting, a segment's list gains its entries; deleting, it loses them.
    Returns (sources int32 (S,), seg_start int64 (S,): first entry of each segment, seg_len
    int64 (S,), old_deg int64 (S,), new_deg int64 (S,), old_ptr int64 (S,): the edge pointer
    now (0 without a block), resize bool (S,)): inserting, the list outgrows its block;
    deleting, it keeps some edges but under a quarter of its capacity, and a smaller class
    (at least ``min_class``) holds them. The arrays come from ``ws`` when given.
    """
    found = _count_heads(src)
    ns = int(found[CHUNKS])
    sources = take(ws, "sources", ns, np.int32)
    out = [take(ws, name, ns, np.int64) for name in ("seg_start", "seg_len", "old_deg",
                                                      "new_deg", "old_ptr")]
    resize = take(ws, "resize", ns, np.bool_)
    _fill_heads(src, found, sources, out[0])
    _decide_segments(sources, out[0], src.shape[0], degree, size_class, edge_ptr,
                     bool(inserting), int(min_class), *out[1:], resize)
    return (sources, *out, resize)


@dual_kernel
def commit_segments(sources, new_deg, grown, new_ptrs, new_classes, degree, size_class,
                    edge_ptr):
    """Write a planned batch into the vertex table (after its lists were rewritten).

    ``degree[sources[k]] = new_deg[k]``; a source left with no edge gets pointer 0 and class
    -1; ``grown`` (int64 (G,), indices into the segments) moved to new blocks
    ``new_ptrs`` (int64 (G,)) of ``new_classes`` (int64 (G,)). ``sources`` int32 (S,) are
    distinct; ``new_deg`` int64 (S,).
    """
    for k in numba.prange(sources.shape[0]):
        v = sources[k]
        d = new_deg[k]
        degree[v] = d
        if d == 0:
            edge_ptr[v] = 0
            size_class[v] = -1
    for g in numba.prange(grown.shape[0]):
        v = sources[grown[g]]
        edge_ptr[v] = new_ptrs[g]
        size_class[v] = new_classes[g]


# ---------------------------------------------------------------------------- moving lists
def merge_lists(src_ptrs, dst_ptrs, old_degree, seg_start, seg_len, insert_at, values) -> None:
    """Merge new items into many sorted lists, column by column.

    Segment ``s`` has an old list of ``old_degree[s]`` items at ``src_ptrs[f][s]`` in column
    ``f`` and writes its new list at ``dst_ptrs[f][s]`` (equal: in place; otherwise the blocks
    must not overlap, and the destination must hold ``old_degree[s] + seg_len[s]`` items).
    Its new items are ``values[f][seg_start[s]:][:seg_len[s]]``; new item ``j`` goes before
    old item ``insert_at[seg_start[s] + j]`` (nondecreasing within a segment), so it lands on
    slot ``insert_at[...] + j`` and old item ``i`` on ``i + #(insert_at <= i)``.

    ``src_ptrs``, ``dst_ptrs``: lists of int64 address arrays, shape (S,); ``old_degree``,
    ``seg_start``, ``seg_len``: int64 (S,); ``insert_at``: int64 (M,); ``values``: list of
    arrays (M,) in each column's dtype.
    """
    for src, dst, vals in zip(src_ptrs, dst_ptrs, values):
        _merge_column(src, dst, old_degree, seg_start, seg_len, insert_at, vals)


@intrinsic
def _move_bytes(typingctx, dst, src, nbytes):
    """``memmove(dst, src, nbytes)`` on int64 addresses (the ranges may overlap)."""
    sig = types.void(types.int64, types.int64, types.int64)

    def codegen(context, builder, signature, args):
        to = builder.inttoptr(args[0], cgutils.voidptr_t)
        frm = builder.inttoptr(args[1], cgutils.voidptr_t)
        cgutils.raw_memmove(builder, to, frm, args[2], 1)
        return context.get_dummy_value()

    return sig, codegen


SHORT_RUN = 8   # items a list rewrite copies one by one; longer runs go through memmove


@numba.njit(inline="always", cache=True)
def _move_items(dst, src, n, like):
    """Move ``n`` items of ``like``'s dtype from address ``src`` to ``dst`` (may overlap)."""
    if n <= SHORT_RUN:
        a = view(dst, n, like)
        b = view(src, n, like)
        if dst < src:
            for t in range(n):
                a[t] = b[t]
        else:
            for t in range(n - 1, -1, -1):
                a[t] = b[t]
    else:
        _move_bytes(dst, src, n * like.itemsize)


@dual_kernel
def _merge_column(src, dst, old_degree, seg_start, seg_len, insert_at, values):
    n = src.shape[0]
    size = values.itemsize
    for s in numba.prange(n):
        if s + AHEAD < n:
            if old_degree[s + AHEAD] > 0:
                prefetch(src[s + AHEAD] + size * (old_degree[s + AHEAD] - 1))
            if dst[s + AHEAD] != src[s + AHEAD]:     # a new block: written from its end
                prefetch(dst[s + AHEAD] + size * (old_degree[s + AHEAD]
                                                  + seg_len[s + AHEAD] - 1))
        c = seg_len[s]
        b = seg_start[s]
        out = view(dst[s], old_degree[s] + c, values)
        i = old_degree[s]               # old items [0, i) are not placed yet
        for k in range(c):              # from the back: in place, nothing is overwritten unread
            j = c - 1 - k
            at = insert_at[b + j]
            if i > at:                  # old items [at, i) move up past the j + 1 new ones
                _move_items(dst[s] + size * (at + j + 1), src[s] + size * at, i - at, values)
                i = at
            out[at + j] = values[b + j]
        if dst[s] != src[s] and i > 0:
            _move_items(dst[s], src[s], i, values)


def remove_lists(src_ptrs, dst_ptrs, old_degree, seg_start, seg_len, positions,
                 dtypes, items: int | None = None) -> None:
    """Remove items from many lists, column by column, keeping the order of the rest.

    Segment ``s`` loses the ascending ``positions[seg_start[s]:][:seg_len[s]]`` (each <
    ``old_degree[s]``) of its list at ``src_ptrs[f][s]``; the survivors are written from slot
    0 at ``dst_ptrs[f][s]`` (equal: in place; otherwise non-overlapping blocks). ``dtypes``:
    each column's dtype. ``items``: at least ``old_degree``'s sum (the GPU sizes a workspace
    with it; unused here). Shapes as in :func:`merge_lists`.
    """
    for src, dst, dt in zip(src_ptrs, dst_ptrs, dtypes):
        _remove_column(src, dst, old_degree, seg_start, seg_len, positions,
                       np.empty(0, dtype=dt))


@dual_kernel
def _remove_column(src, dst, old_degree, seg_start, seg_len, positions, like):
    n = src.shape[0]
    size = like.itemsize
    for s in numba.prange(n):
        if s + AHEAD < n and old_degree[s + AHEAD] > 0:
            prefetch(src[s + AHEAD] + size * positions[seg_start[s + AHEAD]])
        c = seg_len[s]
        d0 = old_degree[s]
        b = seg_start[s]
        w = positions[b] if c > 0 else d0     # items before the first removal keep their slot
        if dst[s] != src[s] and w > 0:
            _move_items(dst[s], src[s], w, like)
        for j in range(c):                    # the run after each removal moves down
            lo = positions[b + j] + 1
            hi = positions[b + j + 1] if j + 1 < c else d0
            if hi > lo:
                _move_items(dst[s] + size * w, src[s] + size * lo, hi - lo, like)
                w += hi - lo


def canonical_entries(src, dst):
    """Indices (int64, ascending) of the entries with src < dst: each undirected edge once
    (the index part of :func:`canonical_pairs`)."""
    return canonical_pairs(src, dst)[0]


def canonical_pairs(src, dst, ws: Workspace | None = None, symmetric: bool = False):
    """Each undirected edge once: (indices int64 (m,) of the entries with src < dst, ascending,
    from ``ws`` when given; their src int32 (m,); their dst int32 (m,), always new arrays).
    ``src``, ``dst``: int32 arrays (n,). ``symmetric`` (both directions of every edge, no
    self-loop: lets the GPU twin skip a host sync) changes nothing here."""
    # the entry filter of changed_pairs with every entry in play (``src`` stands in for pos)
    found = _count_changed(src, src, dst, False, True, True)
    m = int(found[CHUNKS])
    once = take(ws, "once", m, np.int64)
    s_out, d_out = np.empty(m, dtype=np.int32), np.empty(m, dtype=np.int32)
    if m:
        _fill_changed(src, src, dst, False, True, True, found, s_out, d_out, once)
    return once, s_out, d_out


# ---------------------------------------------------------------------------- gathers
@dual_kernel
def gather_lists(column_ptr, degree, offsets, out):
    """Concatenate every vertex's list of one column into ``out`` (``offsets``: exclusive scan)."""
    for v in numba.prange(column_ptr.shape[0]):
        d = degree[v]
        if d > 0:
            lst = view(column_ptr[v], d, out)
            o = offsets[v]
            for j in range(d):
                out[o + j] = lst[j]


@dual_kernel
def read_at(addresses, out):
    for i in numba.prange(addresses.shape[0]):
        out[i] = view(addresses[i], 1, out)[0]


@dual_kernel
def write_at(addresses, values):
    for i in numba.prange(addresses.shape[0]):
        view(addresses[i], 1, values)[0] = values[i]


@dual_kernel
def list_violations(edge_ptr, degree, num_vertices, out):
    """Per vertex: 0 ok, 1 unsorted or duplicate, 2 destination out of range."""
    for v in numba.prange(edge_ptr.shape[0]):
        d = degree[v]
        out[v] = 0
        if d > 0:
            lst = int32_view(edge_ptr[v], d)
            for i in range(d):
                if lst[i] < 0 or lst[i] >= num_vertices:
                    out[v] = 2
                    break
                if i > 0 and lst[i] <= lst[i - 1]:
                    out[v] = 1
                    break


# ---------------------------------------------------------------------------- fused CPU insert
# The CPU insert runs in three passes over the segments of the sorted batch instead of
# find / keep / plan / merge / commit (the general pipeline, which the GPU keeps):
#   plan_insert   (nothing written to the graph) per list: a list that has no block, or whose
#                 block has room for all of its segment's entries (upper bound: none present),
#                 needs no search yet; the others are searched now, so that exactly the lists
#                 that outgrow their block are known and get a new block's size class (or,
#                 with defer_full, they get the class that holds every entry of the segment,
#                 unsearched: the merge finds out whether they really move). It counts the
#                 blocks wanted per class and chunk of segments as it goes.
#   (the batch allocates those blocks: the only step that can fail, before anything changes)
#   merge_insert  per list: hands a moving list its block (chunk by chunk, in segment order,
#                 as far ahead as it prefetches), searches the lists that plan_insert left
#                 unsearched (their lines come into cache for the merge that follows at
#                 once), merges the new entries in place or into the new block, every edge
#                 field alike (the batch's property values with the destinations), writes the
#                 vertex table row and lists the block a moved list leaves.
#   changed_pairs  the entries really inserted (undirected: once, src < dst).
#
# These four per-list kernels (plan_insert, merge_insert, plan_delete, remove_fused) take their
# parallel compilation from LIST_KERNEL_MIN segments on, not PARALLEL_MIN: every segment waits
# on cache misses, so two threads pay off early; and their serial twins run slower even on one
# thread. In the serial twin Numba keeps the reference counting of the arrays passed to the
# inlined helpers (NRT_incref / NRT_decref calls in the loop, seen in its disassembly): atomic
# operations that drain the store buffer every segment, which defeats the prefetching. The
# parallel compilation's loop has none. Measured (Kronecker 20, 2 threads, same process):
# inserting 1000 random edges 1.32 -> 0.91 ms, deleting them 0.79 -> 0.56 ms; 3000 edges 1.70
# -> 1.21 ms; batches of 20 and 200 edges unchanged.
LIST_KERNEL_MIN = 64
MERGE_AHEAD = 16   # segments ahead whose lines merge_insert prefetches
DEFER_SEARCH = True  # lists with room for their whole segment are searched by merge_insert
# lists up to this long are searched by a branch-free count (vectorized; no mispredicted
# halving steps). Same-process A/B against 16, Kronecker 20, 10^5 inserts (15 rounds):
# 32: 0.938 per-round ratio, 64: 0.957, 128: 0.990; deletes at 32: 0.999
LINEAR_SEARCH = 32


@numba.njit(inline="always", cache=True)
def _lower_bound(lst, d, x, floor, nv):
    """First index i >= ``floor`` of the sorted list ``lst[:d]`` with ``lst[i] >= x``
    (``lst[:floor] < x`` is known). Short lists: a branch-free count; long ones: interpolation
    guess (where x would sit if the list were spread evenly over the id space: vertex ids
    are usually shuffled), gallop from there, binary search."""
    if d <= LINEAR_SEARCH:
        lo = 0
        for j in range(d):
            lo += lst[ix(j)] < x
        return lo
    if floor >= d:
        return d
    g = d * min(np.int64(x), nv) // nv
    g = max(min(g, d - 1), floor)
    if lst[ix(g)] < x:
        lo = g + 1
        step = 1
        while lo + step - 1 < d and lst[ix(lo + step - 1)] < x:
            lo += step
            step *= 2
        hi = min(lo + step - 1, d)
    else:
        hi = g
        step = 1
        while hi - step >= floor and lst[ix(hi - step)] >= x:
            hi -= step
            step *= 2
        lo = max(hi - step + 1, floor)
    return lower_bound(lst, lo, hi, x)


@numba.njit(inline="always", cache=True)
def _search_segment(lst, d, dst, b, c, nv, pos):
    """Positions (as :func:`find_positions` writes them) of ``dst[b:b + c]`` (ascending) in
    ``lst[:d]``, into ``pos[b:b + c]``; returns how many are absent."""
    floor = 0
    absent = 0
    for j in range(c):
        x = dst[ix(b + j)]
        lo = _lower_bound(lst, d, x, floor, nv)
        if lo < d and lst[ix(lo)] == x:
            pos[ix(b + j)] = lo
        else:
            pos[ix(b + j)] = -1 - lo
            absent += 1
        floor = lo
    return absent


# The vertex rows a batch reads and writes (degree, size class, edge pointer) sit a few lines
# apart even in ascending order: 10^5 random pairs reach 182,000 of Kronecker 20's 10^6
# vertices. The fused kernels prefetch them VERTEX_AHEAD segments ahead: writing the rows of
# 70,000 new lists took 1.00 ms without and 0.67 ms with (2 threads).
VERTEX_AHEAD = 64   # (64 against 32 with second-level row prefetches: order-balanced 0.985)
ROW_WRITE_AHEAD = 32   # remove_fused's distance (its rows are prefetched for writing)


# how a fused kernel prefetches a vertex row or a list's lines (see _prefetch_row)
READ, WRITE, SECOND_LEVEL = 0, 1, 2


@numba.njit(inline="always", cache=True)
def _prefetch_row(v, degree, size_class, edge_ptr, hint):
    """Prefetch vertex ``v``'s row of the vertex table: ``hint`` READ (into every cache
    level), WRITE (``prefetchw``) or SECOND_LEVEL (``prefetcht1``: no first-level fill buffer
    held until the row is used; the insert's merge, far ahead)."""
    w = np.int64(v)
    a = degree.ctypes.data + degree.itemsize * w
    b = size_class.ctypes.data + size_class.itemsize * w
    c = edge_ptr.ctypes.data + edge_ptr.itemsize * w
    if hint == SECOND_LEVEL:
        prefetch_l2(a)
        prefetch_l2(b)
        prefetch_l2(c)
    elif hint == WRITE:
        prefetch_write(a)
        prefetch_write(b)
        prefetch_write(c)
    else:
        prefetch(a)
        prefetch(b)
        prefetch(c)


@numba.njit(inline="always", cache=True)
def _plan_row(k, sources, seg_start, degree, size_class, edge_ptr, old_deg, old_ptr,
              new_class):
    """What a plan reads of segment ``k`` (its first entry, length, and its vertex's degree,
    size class and edge pointer, returned), with the degree and pointer recorded and no new
    class yet; the vertex row VERTEX_AHEAD segments on is prefetched."""
    if k + VERTEX_AHEAD < sources.shape[0]:
        _prefetch_row(sources[ix(k + VERTEX_AHEAD)], degree, size_class, edge_ptr, READ)
    s = ix(k)
    v = ix(sources[s])
    b = np.int64(seg_start[s])
    d0 = np.int64(degree[v])
    p = edge_ptr[v]
    old_deg[s] = d0
    old_ptr[s] = p
    new_class[s] = -1
    return b, seg_start[ix(k + 1)] - b, d0, np.int64(size_class[v]), p


@dual_kernel(threshold=LIST_KERNEL_MIN)
def _plan_insert(sources, seg_start, dst, degree, size_class, edge_ptr, num_vertices,
                 min_class, defer, defer_full, old_deg, old_ptr, new_deg, new_class, pos, counts,
                 leaving):
    # the vertex rows are prefetched VERTEX_AHEAD segments ahead (ascending, but a few lines
    # apart: too sparse for the hardware prefetcher); not the lists to search (that cost more
    # loads than it saved, measured)
    ns = sources.shape[0]
    nv = np.int64(max(num_vertices, 1))
    for chunk in numba.prange(CHUNKS):      # chunks as block_requests counts them
        row = counts[chunk]
        left = 0
        for k in range(ns * chunk // CHUNKS, ns * (chunk + 1) // CHUNKS):
            s = ix(k)
            b, c, d0, cls, p = _plan_row(k, sources, seg_start, degree, size_class, edge_ptr,
                                         old_deg, old_ptr, new_class)
            cap = (np.int64(1) << cls) if cls >= 0 else np.int64(0)
            if defer and defer_full:
                # nothing is searched: every list either fits its segment, takes a block for
                # all of it (merge_insert searches both), or is empty (every entry new). Each
                # outcome is a select, not a branch: the three come in random order, and a
                # misprediction per segment cost more than the rest of its planning
                moves = d0 + c > cap
                k_new = _smallest_class(d0 + c, min_class)
                new_class[s] = k_new if moves else -1
                new_deg[s] = c if d0 == 0 else -1
                for j in range(c):               # searches overwrite these but the empty's
                    pos[ix(b + j)] = -1
                row[ix(k_new)] += moves
                left += moves & (p != 0)
                continue
            if d0 == 0:                          # every entry is new, inserted before slot 0
                for j in range(c):
                    pos[ix(b + j)] = -1
                m = c
            elif defer and d0 + c <= cap:        # fits whatever is present: merge_insert
                new_deg[s] = -1                  # searches it
                continue
            elif defer_full:                     # a block for all of its entries; merge_insert
                new_deg[s] = -1                  # searches it (and keeps the list in place if
                k_new = _smallest_class(d0 + c, min_class)   # enough of them are present)
                new_class[s] = k_new
                row[ix(k_new)] += 1
                left += 1
                continue
            else:
                m = _search_segment(int32_view(p, d0), d0, dst, b, c, nv, pos)
            d1 = d0 + m
            new_deg[s] = d1
            if d1 > cap:
                k_new = _smallest_class(d1, min_class)
                new_class[s] = k_new
                row[ix(k_new)] += 1
                left += p != 0
        leaving[chunk + 1] = left


def plan_insert(src, dst, degree, size_class, edge_ptr, num_vertices: int, min_class: int,
                ws: Workspace | None = None, segments=None, defer_full: bool = False):
    """Plan the insertion of a batch sorted by (src, dst), duplicate-free (int32 (n,) each)
    into a graph (vertex table ``degree`` int32, ``size_class`` int8, ``edge_ptr`` int64);
    changes nothing.

    Returns (sources int32 (S,), seg_start int32 (S + 1,): segment k is entries
    ``seg_start[k]:seg_start[k + 1]``, old_deg int32 (S,), old_ptr int64 (S,), new_deg int32
    (S,), new_class int8 (S,), pos int32 (n,), requests). Per segment (one per distinct
    source): ``new_class >= 0`` when the list outgrows its block (it moves to a new block of
    that class); ``new_deg`` the degree after the batch, or -1 for a list not searched yet
    (:func:`merge_insert` does it): one whose block has room for every entry of its
    segment, and with ``defer_full`` one whose block has not (its ``new_class`` is then the
    class that holds all of them: it moves unless enough of them are present, and
    :func:`merge_insert` gives the block back unused when it stays). ``defer_full`` spares
    the plan a cache miss per full list; it pays off when few entries are present already.
    ``pos``: for the entries of searched segments, as :func:`find_positions` gives them
    (absent: ``-1 - p``); others undefined. ``requests``: the blocks the plan needs, as
    :func:`block_requests` counts them (counted while planning). Arrays come from ``ws`` when
    given; ``segments``: (sources, seg_start) of ``src`` when known (see
    :func:`sorted_unique_pairs`).
    """
    plan = _plan_arrays(src, ws, segments)
    counts = np.zeros((CHUNKS, 64), dtype=np.int64)
    leaving = np.zeros(CHUNKS + 1, dtype=np.int64)
    if plan[0].shape[0]:
        _plan_insert(plan[0], plan[1], dst, degree, size_class, edge_ptr, int(num_vertices),
                     int(min_class), bool(DEFER_SEARCH), bool(defer_full), *plan[2:], counts,
                     leaving)
    np.cumsum(leaving, out=leaving)
    return (*plan, (counts.sum(axis=0), counts, leaving))


def _plan_arrays(src, ws: Workspace | None, segments=None):
    """The arrays of a fused plan of the sorted batch ``src`` (see :func:`plan_insert`), with
    the segments found (sources, seg_start; or ``segments``, found already) and the rest to be
    filled."""
    n = src.shape[0]
    if segments is not None:
        sources, seg_start = segments
        ns = sources.shape[0]
    else:
        found = _count_heads(src)
        ns = int(found[CHUNKS])
        # narrow types where they suffice: these arrays are written and read once per batch
        sources = take(ws, "sources", ns, np.int32)
        seg_start = take(ws, "seg_start32", ns + 1, np.int32)
    old_deg = take(ws, "old_deg32", ns, np.int32)
    old_ptr = take(ws, "old_ptr", ns, np.int64)
    new_deg = take(ws, "new_deg32", ns, np.int32)
    new_class = take(ws, "new_class8", ns, np.int8)
    pos = take(ws, "positions32", n, np.int32)
    if segments is None:
        seg_start[ns] = n
        if ns:
            _fill_heads(src, found, sources, seg_start)
    return sources, seg_start, old_deg, old_ptr, new_deg, new_class, pos


PREFETCH_LINES = 16   # cache lines that merge_insert prefetches per list, from the end
# (16 against 8 with second-level prefetches: order-balanced 0.988, 30 rounds, fresh graphs)
WRITE_LINES = 8       # the same for remove_fused, which prefetches for writing


@numba.njit(inline="always", cache=True)
def _prefetch_lines(lo, hi, hint):
    """Prefetch the cache lines of the byte range [lo, hi), the last few at most: with
    ``hint`` SECOND_LEVEL the last PREFETCH_LINES into the second-level cache (merge_insert
    rewrites them, or reads them once, MERGE_AHEAD segments later; not into the first level,
    where each line would hold a fill buffer all that time: same-process A/B on fresh graphs,
    Kronecker 20, 10^5 inserts, 30 rounds, against ``prefetchw``: order-balanced 0.979,
    per-round 0.951); else the last WRITE_LINES for writing (remove_fused: second-level
    prefetches made 10^5 deletes 2% slower)."""
    lines = PREFETCH_LINES if hint == SECOND_LEVEL else WRITE_LINES
    a = max(lo & ~np.int64(63), (hi - 1) & ~np.int64(63) - 64 * (lines - 1))
    while a < hi:
        if hint == SECOND_LEVEL:
            prefetch_l2(a)
        else:
            prefetch_write(a)
        a += 64


@numba.njit(inline="always", cache=True)
def _prefetch_segment(q, seg_start, old_deg, old_ptr, new_deg, new_class, dst, pos, nv, hint):
    """Prefetch the lines of segment ``q``'s list that a fused pass rewrites (``hint`` as
    :func:`_prefetch_lines` takes it): from where its first entry lands or sits (a guess for
    an unsearched list; 0 for a list that moves, read whole) to the list's end."""
    dq = old_deg[q]
    if dq > 0:
        if new_class[q] >= 0:
            lo = 0
        elif new_deg[q] < 0:
            lo = 0 if dq <= LINEAR_SEARCH else \
                min(dq * min(np.int64(dst[ix(seg_start[q])]), nv) // nv, dq - 1)
        else:
            pq = pos[ix(seg_start[q])]
            lo = min(-1 - pq if pq < 0 else pq, dq - 1)
        _prefetch_lines(old_ptr[q] + 4 * lo, old_ptr[q] + 4 * dq, hint)
        prefetch_write(old_ptr[q] + 4 * lo)


@dataclass(frozen=True)
class EdgeFields:
    """The edge fields a fused kernel rewrites, as addresses.

    ``bases`` int64 (A,), ascending, and ``field_bases`` int64 (A, F), C order: where each
    block array's destination column and field columns start (the memory manager's lookup);
    ``sizes`` int64 (F,): each field's itemsize (field 0: the destinations, 4); ``columns``
    int64 (F,): per field, the address of a batch column aligned with the batch's entries (the
    values to insert; for a delete, the buffers that receive the removed entries' values;
    field 0: the destinations). ``arrays`` keeps the arrays behind those addresses alive.
    """
    bases: np.ndarray
    field_bases: np.ndarray
    sizes: np.ndarray
    columns: np.ndarray
    arrays: tuple = ()

    @classmethod
    def of(cls, bases, field_bases, columns: list) -> "EdgeFields":
        """Fields of block arrays at ``bases`` / ``field_bases`` with the batch ``columns``
        (contiguous host arrays, one per field, the destinations first)."""
        if columns[0].dtype != np.int32 or not all(c.flags.c_contiguous for c in columns):
            raise TypeError("EdgeFields: the destinations must be int32 and every column "
                            "contiguous")
        return cls(np.ascontiguousarray(bases, dtype=np.int64),
                   np.ascontiguousarray(field_bases, dtype=np.int64),
                   np.array([c.dtype.itemsize for c in columns], dtype=np.int64),
                   np.array([address_of(c) for c in columns], dtype=np.int64), tuple(columns))

    @classmethod
    def destinations_only(cls, dst) -> "EdgeFields":
        return cls.of(np.zeros(0, np.int64), np.zeros((0, 1), np.int64), [dst])

    def kernel_args(self) -> tuple:
        return self.bases, self.field_bases, self.sizes, self.columns


# the item types of edge fields (1, 2, 4 or 8 bytes): their dtype is all a view takes from them
_U8, _U16, _U32, _U64 = (np.empty(0, dtype=t) for t in (np.uint8, np.uint16, np.uint32,
                                                         np.uint64))


@numba.njit(inline="always", cache=True)
def _move_field(dst, src, n, size):
    """Move ``n`` items of ``size`` bytes (an edge field's itemsize) from address ``src`` to
    ``dst`` (the ranges may overlap)."""
    if size == 4:
        _move_items(dst, src, n, _U32)
    elif size == 8:
        _move_items(dst, src, n, _U64)
    elif size == 2:
        _move_items(dst, src, n, _U16)
    elif size == 1:
        _move_items(dst, src, n, _U8)
    else:
        _move_bytes(dst, src, n * size)


@numba.njit(inline="always", cache=True)
def _field_address(ptr, f, bases, field_bases, sizes):
    """Address in edge field ``f`` of the slot whose destination address is ``ptr`` (field 0,
    or ``ptr`` 0 = no block: ``ptr`` itself). ``bases`` int64 (A,), ascending, and
    ``field_bases`` int64 (A, F): the block arrays' columns (the memory manager's lookup);
    ``sizes`` int64 (F,): the fields' itemsizes."""
    if f == 0 or ptr == 0:
        return ptr
    a = array_holding(bases, ptr)
    return field_bases[a, f] + ((ptr - bases[a]) >> 2) * sizes[f]


@numba.njit(inline="always", cache=True)
def _merge_field(src_f, dst_f, d0, m, pos, b, c, size, values_f, index, by_index, out_f, res):
    """Merge a segment's absent entries into one edge field of its list: the ``d0`` old items
    at address ``src_f`` and the ``m`` entries of ``b:b + c`` whose ``pos`` is ``-1 - at``
    (``at`` old items before it; ``pos >= 0``: present, skipped) go to ``dst_f`` (== ``src_f``:
    in place, from the back so that nothing is overwritten unread). Entry j's value is at
    ``values_f + size * (index[j] if by_index else j)``; with ``out_f`` (0: none) it is also
    copied to row ``res[j]`` (when >= 0) of the result column at ``out_f``."""
    i = d0                      # old items [0, i) are not placed yet
    r = m                       # new items not placed yet
    for t in range(c):
        j = b + c - 1 - t
        p = pos[ix(j)]
        if p >= 0:              # present already
            continue
        at = -1 - p
        r -= 1
        if i > at:              # old items [at, i) move up past the r + 1 new ones
            _move_field(dst_f + size * (at + r + 1), src_f + size * at, i - at, size)
            i = at
        value = values_f + size * (index[ix(j)] if by_index else j)
        _move_field(dst_f + size * (at + r), value, 1, size)
        if out_f != 0 and res[ix(j)] >= 0:
            _move_field(out_f + size * res[ix(j)], value, 1, size)
    if dst_f != src_f and i > 0:
        _move_field(dst_f, src_f, i, size)


@numba.njit(inline="always", cache=True)
def _remove_field(src_f, dst_f, d0, d1, pos, b, c, first, size, out_f, res, by_res):
    """Remove a segment's present entries from one edge field of its list: the ``d0`` old
    items at ``src_f`` lose those at the positions ``pos[b + j] >= 0`` (ascending; entry
    ``first`` is the first present one); the ``d1`` left go to ``dst_f`` (== ``src_f``: in
    place, front to back). With ``out_f`` (0: none) each removed value is first copied to
    row ``res[b + j]`` (``by_res``; skipped when negative) or ``b + j`` of the column at
    ``out_f``."""
    if out_f != 0:
        for j in range(first, c):
            p = pos[ix(b + j)]
            row = res[ix(b + j)] if by_res else b + j
            if p >= 0 and row >= 0:
                _move_field(out_f + size * row, src_f + size * p, 1, size)
    if d1 == 0:
        return
    j = first
    w = np.int64(pos[ix(b + j)])    # items before it keep their slot
    if dst_f != src_f and w > 0:
        _move_field(dst_f, src_f, w, size)
    while j < c:                    # the run after each removed item moves down
        lo = np.int64(pos[ix(b + j)]) + 1
        j += 1
        while j < c and pos[ix(b + j)] < 0:
            j += 1
        hi = np.int64(pos[ix(b + j)]) if j < c else d0
        if hi > lo:
            _move_field(dst_f + size * w, src_f + size * lo, hi - lo, size)
            w += hi - lo


@numba.njit(inline="always", cache=True)
def _place_next(q, new_class, at, pool, target):
    """Hand segment ``q`` the next pool block of its class (``at``: the chunk's cursor per
    class) when it moves."""
    k = new_class[q]
    if k >= 0:
        target[q] = pool[ix(at[k])]
        at[k] += 1


@dual_kernel(threshold=LIST_KERNEL_MIN)
def _merge_insert(sources, seg_start, old_deg, old_ptr, new_deg, new_class, cursor, pool,
                  leaving, target, freed, dst, pos, num_vertices, degree, size_class,
                  edge_ptr, added, ahead, bases, field_bases, sizes, values):
    ns = sources.shape[0]
    nv = np.int64(max(num_vertices, 1))
    for chunk in numba.prange(CHUNKS):
        k0 = ns * chunk // CHUNKS
        k1 = ns * (chunk + 1) // CHUNKS
        inserted = 0
        at = cursor[chunk]
        j = leaving[chunk]
        # blocks are placed `ahead` segments in front of the merge, where their lines are
        # prefetched
        for q in range(k0, min(k0 + ahead, k1)):
            _place_next(ix(q), new_class, at, pool, target)
        for k in range(k0, k1):
            if k + VERTEX_AHEAD < ns:
                _prefetch_row(sources[ix(k + VERTEX_AHEAD)], degree, size_class, edge_ptr,
                              SECOND_LEVEL)
            if k + ahead < k1:
                q = ix(k + ahead)
                _place_next(q, new_class, at, pool, target)
                _prefetch_segment(q, seg_start, old_deg, old_ptr, new_deg, new_class, dst,
                                  pos, nv, SECOND_LEVEL)
                if new_class[q] >= 0:          # a new block: written from its end
                    dn = new_deg[q] if new_deg[q] >= 0 else \
                        old_deg[q] + seg_start[ix(q + 1)] - seg_start[q]
                    _prefetch_lines(target[q], target[q] + 4 * dn, SECOND_LEVEL)
            s = ix(k)
            v = ix(sources[s])
            b = np.int64(seg_start[s])
            c = seg_start[ix(k + 1)] - b
            d0 = np.int64(old_deg[s])
            src_p = old_ptr[s]
            moving = new_class[s] >= 0
            if new_deg[s] < 0:
                m = _search_segment(int32_view(src_p, d0), d0, dst, b, c, nv, pos)
                if moving and d0 + m <= (np.int64(1) << size_class[v]):
                    moving = False                 # enough were present: it stays, and the
                    freed[ix(j)] = target[s]       # block planned for it goes back unused
                    j += 1
            else:
                m = new_deg[s] - d0
            dst_p = target[s] if moving else src_p
            inserted += m
            if m > 0:
                if sizes.shape[0] == 1:            # destinations only: a constant item size
                    _merge_field(src_p, dst_p, d0, m, pos, b, c, 4, values[0], pos, False, 0,
                                 pos)
                else:
                    for f in range(sizes.shape[0]):    # the destinations, then each property
                        size = sizes[f]
                        src_f = _field_address(src_p, f, bases, field_bases, sizes)
                        dst_f = _field_address(dst_p, f, bases, field_bases, sizes) \
                            if dst_p != src_p else src_f
                        _merge_field(src_f, dst_f, d0, m, pos, b, c, size, values[f], pos,
                                     False, 0, pos)
                degree[v] = d0 + m
            if moving:
                edge_ptr[v] = dst_p
                size_class[v] = new_class[s]
                if src_p != 0:                     # the block the list leaves
                    freed[ix(j)] = src_p
                    j += 1
        added[chunk] = inserted


def merge_insert(sources, seg_start, old_deg, old_ptr, new_deg, new_class, dst, pos,
                 num_vertices: int, degree, size_class, edge_ptr, requests=None, pool=None,
                 fields: EdgeFields | None = None, ws: Workspace | None = None,
                 ahead: int = MERGE_AHEAD):
    """Carry out a :func:`plan_insert` plan: search the segments it left unsearched (filling
    their ``pos``), merge every segment's absent entries into its list (in place, or into a
    fresh block of class ``new_class[k]`` for the lists that grow; a deferred list that
    planned a block but still fits its own stays) and write the vertex table (degree; edge
    pointer and size class of the moved lists).

    ``requests``: what :func:`block_requests` returned for the plan, and ``pool`` the blocks
    allocated for it (see :func:`place_blocks`: the segments get them in the same order);
    both None when no segment moves. ``fields``: the edge properties' columns and the batch's
    values (aligned with ``dst``); None: destinations only. Returns (the number of entries
    inserted; the blocks to release, int64 (L,), in segment order: those the moved lists
    left, and those planned for lists that stayed)."""
    ns = sources.shape[0]
    added = np.zeros(CHUNKS, dtype=np.int64)            # entries inserted per chunk
    if requests is None:
        counts, leaving = np.zeros((CHUNKS, 64), dtype=np.int64), np.zeros(CHUNKS + 1,
                                                                          dtype=np.int64)
        pool = np.zeros(0, dtype=np.int64)
    else:
        _, counts, leaving = requests
    target = take(ws, "target", ns, np.int64)
    freed = take(ws, "leaving_blocks", int(leaving[-1]), np.int64)
    if fields is None:
        fields = EdgeFields.destinations_only(dst)
    if ns:
        _merge_insert(sources, seg_start, old_deg, old_ptr, new_deg, new_class,
                      _block_cursors(counts), pool, leaving, target, freed, dst, pos,
                      int(num_vertices), degree, size_class, edge_ptr, added, int(ahead),
                      *fields.kernel_args())
    return int(added.sum()), freed


@numba.njit(inline="always", cache=True)
def _changed(pos, src, dst, i, directed, present, every):
    """Entry i was changed: present before the batch (deleting) or absent (inserting), or
    ``every`` entry; undirected batches count each pair once (src < dst)."""
    i = ix(i)
    return (every | ((pos[i] >= 0) == present)) & (directed | (src[i] < dst[i]))


@dual_kernel
def _count_changed(pos, src, dst, directed, present, every):
    n = pos.shape[0]
    found = np.zeros(CHUNKS + 1, dtype=np.int64)
    for c in numba.prange(CHUNKS):
        k = 0
        for i in range(n * c // CHUNKS, n * (c + 1) // CHUNKS):
            k += _changed(pos, src, dst, i, directed, present, every)
        found[c + 1] = k
    for c in range(CHUNKS):
        found[c + 1] += found[c]
    return found


@dual_kernel
def _fill_changed(pos, src, dst, directed, present, every, found, s_out, d_out, index):
    n = pos.shape[0]
    with_index = index.shape[0] > 0
    for c in numba.prange(CHUNKS):          # branch-free (see the planning section)
        j = found[c]
        if found[c + 1] == j:
            continue
        last = n * (c + 1) // CHUNKS - 1
        while not _changed(pos, src, dst, last, directed, present, every):
            last -= 1
        for i in range(n * c // CHUNKS, last + 1):
            s_out[ix(j)] = src[ix(i)]
            d_out[ix(j)] = dst[ix(i)]
            if with_index:
                index[ix(j)] = i
            j += _changed(pos, src, dst, i, directed, present, every)


def changed_pairs(pos, src, dst, directed: bool, present: bool, with_index: bool = False):
    """The entries a fused batch changed, in order: with ``present`` false (an insert) those
    with ``pos < 0`` (absent before the batch), with ``present`` true (a delete) those with
    ``pos >= 0``; undirected (``directed`` false, both directions of every pair in the batch):
    only those with src < dst. Returns (src int32 (m,), dst int32 (m,), and with
    ``with_index`` their entries' indices int64 (m,)), new arrays."""
    found = _count_changed(pos, src, dst, bool(directed), bool(present), False)
    m = int(found[CHUNKS])
    s_out, d_out = np.empty(m, dtype=np.int32), np.empty(m, dtype=np.int32)
    index = np.empty(m if with_index else 0, dtype=np.int64)
    if m:
        _fill_changed(pos, src, dst, bool(directed), bool(present), False, found, s_out,
                      d_out, index)
    return (s_out, d_out, index) if with_index else (s_out, d_out)


# The blocks of a fused plan. Segments with ``new_class >= 0`` move to a fresh block of that
# class. Counting per class and chunk of segments gives the host its per-class request; after
# the allocation, chunk c's segments of class k take the pool's blocks after those of the
# chunks before it. Inserts count while planning (plan_insert) and hand out while merging
# (merge_insert, which also lists the blocks the lists leave); deletes use the two kernels
# below (remove_fused lists the blocks left). Before, the moving segments were compacted,
# counted by class, placed and scattered back (four passes, about 0.6 ms of a 10^5 insert into
# Kronecker 20).
@dual_kernel
def _count_requests(new_class, old_ptr, counts, leaving):
    n = new_class.shape[0]
    for c in numba.prange(CHUNKS):
        row = counts[c]
        left = 0
        for i in range(n * c // CHUNKS, n * (c + 1) // CHUNKS):
            k = np.int64(new_class[ix(i)])
            moving = k >= 0
            row[ix(max(k, 0))] += moving            # branch-free: the class is random
            left += moving & (old_ptr[ix(i)] != 0)
        leaving[c + 1] = left


def block_requests(new_class, old_ptr):
    """Count the blocks a fused plan needs: ``new_class`` int8 (S,) (>= 0: the segment moves to
    a fresh block of that class), ``old_ptr`` int64 (S,) (its block now; 0: none).

    Returns (per_class int64 (64,): blocks wanted of each class, counts int64 (CHUNKS, 64):
    the same per chunk of segments, leaving int64 (CHUNKS + 1,): running count of the moving
    segments that leave a block, chunk by chunk)."""
    counts = np.zeros((CHUNKS, 64), dtype=np.int64)
    leaving = np.zeros(CHUNKS + 1, dtype=np.int64)
    if new_class.shape[0]:
        _count_requests(new_class, old_ptr, counts, leaving)
    np.cumsum(leaving, out=leaving)
    return counts.sum(axis=0), counts, leaving


@dual_kernel
def _place_blocks(new_class, cursor, pool, target, sparse):
    n = new_class.shape[0]
    last = pool.shape[0] - 1
    for c in numba.prange(CHUNKS):
        at = cursor[c]
        if sparse:                 # few move: a branch that mostly falls through
            for i in range(n * c // CHUNKS, n * (c + 1) // CHUNKS):
                k = np.int64(new_class[ix(i)])
                if k >= 0:
                    target[ix(i)] = pool[ix(at[k])]
                    at[k] += 1
            continue
        for i in range(n * c // CHUNKS, n * (c + 1) // CHUNKS):   # branch-free
            k = np.int64(new_class[ix(i)])
            q = ix(max(k, 0))
            target[ix(i)] = pool[ix(min(at[q], last))]   # read only where moving
            at[q] += k >= 0


SPARSE_MOVES = 8   # under one moving segment in this many, place_blocks takes the branch


def _block_cursors(counts):
    """Where each chunk's blocks of each class start in the pool (int64 (CHUNKS, 64)): chunk
    c's blocks of class k follow those of the chunks before it, classes one after another."""
    cursor = np.cumsum(counts, axis=0) - counts
    cursor += np.concatenate(([0], np.cumsum(counts.sum(axis=0))[:-1]))
    return cursor


def place_blocks(new_class, counts, pool, ws: Workspace | None = None):
    """Hand out the blocks of :func:`block_requests` (``counts``): ``pool`` int64 holds
    ``per_class[k]`` fresh blocks of every class k, class after class in ascending order (what
    :meth:`hornet.memory.manager.MemoryManager.allocate_counts` returns). Returns target int64
    (S,): the block of each moving segment, defined only where ``new_class >= 0``; within a
    class the segments get the pool's blocks in segment order (as :func:`merge_insert` hands
    them out)."""
    n = new_class.shape[0]
    target = take(ws, "target", n, np.int64)
    if n and pool.shape[0]:
        _place_blocks(new_class, _block_cursors(counts), pool, target,
                      pool.shape[0] * SPARSE_MOVES < n)
    return target


# ---------------------------------------------------------------------------- fused CPU delete
# The CPU delete mirrors the fused insert:
#   plan_delete   (nothing written to the graph) per list: a list that keeps at least a
#                 quarter of its block whatever its segment removes (upper bound: every entry
#                 present) cannot move, and is not searched yet; the others are searched now,
#                 so that exactly the lists that move to a smaller block are known.
#   (the batch allocates those blocks: the only step that can fail, before anything changes)
#   remove_fused  per list: searches the lists that plan_delete left unsearched, removes the
#                 present entries (in place, or into the smaller block), writes the vertex
#                 table row, and reports the block a moved or emptied list leaves.
#   changed_pairs  the entries really deleted (present: pos >= 0).


@dual_kernel(threshold=LIST_KERNEL_MIN)
def _plan_delete(sources, seg_start, dst, degree, size_class, edge_ptr, num_vertices,
                 min_class, old_deg, old_ptr, new_deg, new_class, pos):
    ns = sources.shape[0]
    nv = np.int64(max(num_vertices, 1))
    for k in numba.prange(ns):
        s = ix(k)
        b, c, d0, cls, p = _plan_row(k, sources, seg_start, degree, size_class, edge_ptr,
                                     old_deg, old_ptr, new_class)
        if d0 == 0:                          # nothing to delete: every entry is absent
            for j in range(c):
                pos[ix(b + j)] = -1
            new_deg[s] = 0
            continue
        # the fewest edges the list can keep (a list left empty frees its block: no move)
        if not _moves_down(max(d0 - c, np.int64(1)), cls, min_class):
            new_deg[s] = -1                  # cannot move whatever is present: searched later
            continue
        absent = _search_segment(int32_view(p, d0), d0, dst, b, c, nv, pos)
        d1 = d0 - (c - absent)
        new_deg[s] = d1
        if d1 > 0 and _moves_down(d1, cls, min_class):
            new_class[s] = _smallest_class(d1, min_class)


def plan_delete(src, dst, degree, size_class, edge_ptr, num_vertices: int, min_class: int,
                ws: Workspace | None = None, segments=None):
    """Plan the deletion of a batch sorted by (src, dst), duplicate-free (int32 (n,) each)
    from a graph (vertex table ``degree`` int32, ``size_class`` int8, ``edge_ptr`` int64);
    changes nothing.

    Returns the arrays of :func:`plan_insert` (sources, seg_start, old_deg, old_ptr,
    new_deg, new_class, pos), with ``new_class >= 0`` for the lists that move to a smaller
    block (kept under a quarter of their capacity) and ``new_deg`` -1 for the lists that cannot
    move and are not searched yet (:func:`remove_fused` does it). Arrays come from ``ws``;
    ``segments`` as in :func:`plan_insert`.
    """
    plan = _plan_arrays(src, ws, segments)
    if plan[0].shape[0]:
        _plan_delete(plan[0], plan[1], dst, degree, size_class, edge_ptr, int(num_vertices),
                     int(min_class), *plan[2:])
    return plan


@dual_kernel(threshold=LIST_KERNEL_MIN)
def _remove_fused(sources, seg_start, old_deg, old_ptr, new_deg, new_class, target, dst, pos,
                  num_vertices, degree, size_class, edge_ptr, removed, freed, ahead,
                  bases, field_bases, sizes, gone):
    ns = sources.shape[0]
    nv = np.int64(max(num_vertices, 1))
    for k in numba.prange(ns):
        if k + ROW_WRITE_AHEAD < ns:
            _prefetch_row(sources[ix(k + ROW_WRITE_AHEAD)], degree, size_class, edge_ptr,
                          WRITE)
        if k + ahead < ns:
            _prefetch_segment(k + ahead, seg_start, old_deg, old_ptr, new_deg, new_class, dst,
                              pos, nv, WRITE)
        s = ix(k)
        v = ix(sources[s])
        b = np.int64(seg_start[s])
        c = seg_start[ix(k + 1)] - b
        d0 = np.int64(old_deg[s])
        removed[s] = 0
        freed[s] = 0
        if d0 == 0:
            continue
        src_p = old_ptr[s]
        if new_deg[s] < 0:
            r = c - _search_segment(int32_view(src_p, d0), d0, dst, b, c, nv, pos)
        else:
            r = d0 - new_deg[s]
        if r == 0:
            continue
        removed[s] = r
        d1 = d0 - r
        degree[v] = d1
        moving = new_class[s] >= 0
        dst_p = target[s] if moving else src_p
        first = 0
        while pos[ix(b + first)] < 0:            # the first present entry (r > 0: there is one)
            first += 1
        if sizes.shape[0] == 1:              # destinations only: a constant item size
            _remove_field(src_p, dst_p if moving and d1 > 0 else src_p, d0, d1, pos, b, c,
                          first, 4, 0, pos, False)
        else:
            for f in range(sizes.shape[0]):  # the destinations, then each property
                size = sizes[f]
                src_f = _field_address(src_p, f, bases, field_bases, sizes)
                dst_f = _field_address(dst_p, f, bases, field_bases, sizes) \
                    if moving and d1 > 0 else src_f
                # the removed edges' property values, for the change (field 0: the batch's dst)
                _remove_field(src_f, dst_f, d0, d1, pos, b, c, first, size,
                              gone[f] if f > 0 else 0, pos, False)
        if d1 == 0:                          # the list is gone: its block goes back
            edge_ptr[v] = 0
            size_class[v] = -1
            freed[s] = src_p
        elif moving:
            edge_ptr[v] = dst_p
            size_class[v] = new_class[s]
            freed[s] = src_p


def remove_fused(sources, seg_start, old_deg, old_ptr, new_deg, new_class, target, dst, pos,
                 num_vertices: int, degree, size_class, edge_ptr,
                 fields: EdgeFields | None = None, ws: Workspace | None = None,
                 ahead: int = MERGE_AHEAD):
    """Carry out a :func:`plan_delete` plan: search the segments it left unsearched (filling
    their ``pos``), remove every segment's present entries from its list (in place, or into
    ``target[k]``, a fresh block of class ``new_class[k]``, for the lists that move; ``target``
    int64 (S,), read only there) and write the vertex table (degree; edge pointer and size
    class of the moved lists; pointer 0 and class -1 for the lists left empty). ``fields``:
    the edge properties' columns, and per property a buffer aligned with ``dst`` that
    receives the values of the removed entries; None: destinations only.

    Returns (removed int64 (S,): entries removed per segment, freed int64 (S,): the block each
    segment's list left, 0 where it kept its block), from ``ws`` when given.
    """
    ns = sources.shape[0]
    removed = take(ws, "removed", ns, np.int64)
    freed = take(ws, "freed", ns, np.int64)
    if fields is None:
        fields = EdgeFields.destinations_only(dst)
    if ns:
        _remove_fused(sources, seg_start, old_deg, old_ptr, new_deg, new_class, target, dst,
                      pos, int(num_vertices), degree, size_class, edge_ptr, removed, freed,
                      int(ahead), *fields.kernel_args())
    return removed, freed
