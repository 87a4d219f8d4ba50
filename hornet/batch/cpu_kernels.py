"""CPU (Numba) kernels of the batch pipeline.

Every kernel reads and writes vertex lists through edge pointers (see
:mod:`hornet.memory.pointers`); the GPU backend has the same kernels in CUDA.
"""
from __future__ import annotations

import numba
import numpy as np

from ..memory.jit import dual_kernel
from ..memory.pointers import int32_view, prefetch, view

RADIX_BITS = 11
SMALL_SORT = 1 << 14


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
    global _POOL
    threads = numba.get_num_threads()
    if keys.shape[0] < (1 << 18) or threads < 2:
        keys.sort()
        return keys
    if _POOL is None:
        from concurrent.futures import ThreadPoolExecutor
        _POOL = ThreadPoolExecutor(2, thread_name_prefix="hornet-sort")
    half = keys.shape[0] // 2
    a, b = keys[:half], keys[half:]
    list(_POOL.map(np.ndarray.sort, (a, b)))      # NumPy releases the GIL while sorting
    out = np.empty_like(keys)
    _merge(a, b, out, 4 * threads)
    return out


def sorted_unique_pairs(s: np.ndarray, d: np.ndarray, num_vertices: int, mirror: bool,
                        need_order: bool = True):
    """Sort a batch by (src, dst) and drop repeats, first entry wins.

    ``mirror``: undirected batch; each pair stands for both directions and self-loops are
    dropped. Returns (order into the (mirrored) entries, src int32, dst int32, self-loops);
    with ``need_order=False`` the order is not computed (None).
    """
    bits = max(1, int(num_vertices - 1).bit_length())
    entries = s.shape[0] * (2 if mirror else 1)
    index_bits = max(1, int(entries - 1).bit_length()) if need_order else 0
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
FAR = 16
NEAR = 8


@dual_kernel
def find_positions(src, dst, degree, edge_ptr, num_vertices):
    """Position of each ``dst[i]`` in the sorted list of ``src[i]``; when absent,
    ``-1 - p`` where ``p`` is where it would be inserted (so absent means negative)."""
    n = src.shape[0]
    out = np.empty(n, dtype=np.int64)
    deg_base = degree.ctypes.data
    ptr_base = edge_ptr.ctypes.data
    for i in numba.prange(n):
        if i + FAR < n and src[i + FAR] < num_vertices:
            prefetch(deg_base + 4 * np.int64(src[i + FAR]))
            prefetch(ptr_base + 8 * np.int64(src[i + FAR]))
        if i + NEAR < n and src[i + NEAR] < num_vertices:
            w = src[i + NEAR]
            if degree[w] > 0:
                prefetch(edge_ptr[w] + 2 * np.int64(degree[w]))   # middle of the list
        u = src[i]
        out[i] = -1
        if u < num_vertices:
            d = degree[u]
            if d > 0:
                lst = int32_view(edge_ptr[u], d)
                lo, hi = 0, d
                x = dst[i]
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if lst[mid] < x:
                        lo = mid + 1
                    else:
                        hi = mid
                if lo < d and lst[lo] == x:
                    out[i] = lo
                else:
                    out[i] = -1 - lo
    return out


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


@dual_kernel
def _merge_column(src, dst, old_degree, seg_start, seg_len, insert_at, values):
    n = src.shape[0]
    for s in numba.prange(n):
        if s + NEAR < n:
            if old_degree[s + NEAR] > 0:
                prefetch(src[s + NEAR] + values.itemsize * (old_degree[s + NEAR] - 1))
            if dst[s + NEAR] != src[s + NEAR]:     # a new block: written from its end
                prefetch(dst[s + NEAR] + values.itemsize * (old_degree[s + NEAR]
                                                            + seg_len[s + NEAR] - 1))
        c = seg_len[s]
        d0 = old_degree[s]
        b = seg_start[s]
        out = view(dst[s], d0 + c, values)
        old = out if dst[s] == src[s] else view(src[s], d0, values)
        i = d0 - 1
        for k in range(c):           # from the back: in place, nothing is overwritten unread
            j = c - 1 - k
            at = insert_at[b + j]
            while i >= at:
                out[i + j + 1] = old[i]
                i -= 1
            out[at + j] = values[b + j]
        if dst[s] != src[s]:
            while i >= 0:
                out[i] = old[i]
                i -= 1


def remove_lists(src_ptrs, dst_ptrs, old_degree, seg_start, seg_len, positions,
                 dtypes) -> None:
    """Remove items from many lists, column by column, keeping the order of the rest.

    Segment ``s`` loses the ascending ``positions[seg_start[s]:][:seg_len[s]]`` (each <
    ``old_degree[s]``) of its list at ``src_ptrs[f][s]``; the survivors are written from slot
    0 at ``dst_ptrs[f][s]`` (equal: in place; otherwise non-overlapping blocks). ``dtypes``:
    each column's dtype. Shapes as in :func:`merge_lists`.
    """
    for src, dst, dt in zip(src_ptrs, dst_ptrs, dtypes):
        _remove_column(src, dst, old_degree, seg_start, seg_len, positions,
                       np.empty(0, dtype=dt))


@dual_kernel
def _remove_column(src, dst, old_degree, seg_start, seg_len, positions, like):
    n = src.shape[0]
    for s in numba.prange(n):
        if s + NEAR < n and old_degree[s + NEAR] > 0:
            prefetch(src[s + NEAR])
        c = seg_len[s]
        d0 = old_degree[s]
        b = seg_start[s]
        out = view(dst[s], d0, like)
        old = out if dst[s] == src[s] else view(src[s], d0, like)
        start = 0
        if dst[s] == src[s]:          # in place: items before the first removal stay
            start = positions[b] if c > 0 else d0
        w = start
        j = 0
        for i in range(start, d0):    # forward: in place, every write lands on a read item
            if j < c and positions[b + j] == i:
                j += 1
            else:
                out[w] = old[i]
                w += 1


CHUNKS = 64   # pieces of a parallel filter (counted, then written at their offsets)


@dual_kernel
def canonical_entries(src, dst):
    """Indices of entries with src < dst (ascending): each undirected edge once."""
    n = src.shape[0]
    found = np.zeros(CHUNKS + 1, dtype=np.int64)
    for c in numba.prange(CHUNKS):
        k = 0
        for i in range(n * c // CHUNKS, n * (c + 1) // CHUNKS):
            if src[i] < dst[i]:
                k += 1
        found[c + 1] = k
    for c in range(CHUNKS):
        found[c + 1] += found[c]
    out = np.empty(found[CHUNKS], dtype=np.int64)
    for c in numba.prange(CHUNKS):
        j = found[c]
        for i in range(n * c // CHUNKS, n * (c + 1) // CHUNKS):
            if src[i] < dst[i]:
                out[j] = i
                j += 1
    return out


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
