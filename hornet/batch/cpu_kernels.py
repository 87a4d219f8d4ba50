"""CPU (Numba) kernels of the batch pipeline.

Every kernel reads and writes vertex lists through edge pointers (see
:mod:`hornet.memory.pointers`); the GPU backend has the same kernels in CUDA.
"""
from __future__ import annotations

import numba
import numpy as np

from ..memory.pointers import int32_view, view

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


# ---------------------------------------------------------------------------- searching
@numba.njit(parallel=True, cache=True)
def find_positions(src, dst, degree, edge_ptr, num_vertices):
    """Position of each ``dst[i]`` in the sorted list of ``src[i]``, or -1 if absent."""
    out = np.empty(src.shape[0], dtype=np.int64)
    for i in numba.prange(src.shape[0]):
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
    return out


# ---------------------------------------------------------------------------- insertion
@numba.njit(parallel=True, cache=True)
def merge_destinations(sources, seg_start, seg_len, new_dst, old_degree, edge_ptr, new_pos):
    """Merge each source's sorted new destinations into its sorted list, from the back.

    The block of ``sources[s]`` has room for ``old_degree[s] + seg_len[s]`` entries.
    ``new_pos[seg_start[s] + j]`` receives the final slot of the j-th new destination.
    """
    for s in numba.prange(sources.shape[0]):
        c = seg_len[s]
        d0 = old_degree[s]
        base = seg_start[s]
        lst = int32_view(edge_ptr[sources[s]], d0 + c)
        i = d0 - 1
        j = c - 1
        w = d0 + c - 1
        while j >= 0:
            if i >= 0 and lst[i] > new_dst[base + j]:
                lst[w] = lst[i]
                i -= 1
            else:
                lst[w] = new_dst[base + j]
                new_pos[base + j] = w
                j -= 1
            w -= 1


@numba.njit(parallel=True, cache=True)
def merge_column(column_ptr, seg_start, seg_len, old_degree, new_pos, values):
    """Replay :func:`merge_destinations` on one edge-property column."""
    for s in numba.prange(column_ptr.shape[0]):
        c = seg_len[s]
        d0 = old_degree[s]
        base = seg_start[s]
        col = view(column_ptr[s], d0 + c, values)
        i = d0 - 1
        j = c - 1
        w = d0 + c - 1
        while j >= 0:
            if new_pos[base + j] == w:
                col[w] = values[base + j]
                j -= 1
            else:
                col[w] = col[i]
                i -= 1
            w -= 1


# ---------------------------------------------------------------------------- deletion
@numba.njit(parallel=True, cache=True)
def remove_positions(column_ptr, seg_start, seg_len, old_degree, positions, like):
    """Delete ascending ``positions`` from each list of one column, keeping order."""
    for s in numba.prange(column_ptr.shape[0]):
        c = seg_len[s]
        d0 = old_degree[s]
        base = seg_start[s]
        col = view(column_ptr[s], d0, like)
        w = positions[base]
        j = 0
        for r in range(positions[base], d0):
            if j < c and positions[base + j] == r:
                j += 1
            else:
                col[w] = col[r]
                w += 1


# ---------------------------------------------------------------------------- gathers
@numba.njit(parallel=True, cache=True)
def gather_lists(column_ptr, degree, offsets, out):
    """Concatenate every vertex's list of one column into ``out`` (``offsets``: exclusive scan)."""
    for v in numba.prange(column_ptr.shape[0]):
        d = degree[v]
        if d > 0:
            lst = view(column_ptr[v], d, out)
            o = offsets[v]
            for j in range(d):
                out[o + j] = lst[j]


@numba.njit(parallel=True, cache=True)
def read_at(addresses, out):
    for i in numba.prange(addresses.shape[0]):
        out[i] = view(addresses[i], 1, out)[0]


@numba.njit(parallel=True, cache=True)
def write_at(addresses, values):
    for i in numba.prange(addresses.shape[0]):
        view(addresses[i], 1, values)[0] = values[i]


@numba.njit(parallel=True, cache=True)
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
