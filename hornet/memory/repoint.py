"""Vertices re-pointed to the blocks that compaction moved (CPU kernel).

Compaction (:meth:`hornet.memory.manager.MemoryManager.compact`) empties whole block arrays
and reports each moved block's old and new pointer; the owners of those blocks are the
vertices whose pointer lies inside an evacuated array. One pass over the vertex table finds
them: a vertex of a size class that moved no block is passed over on its class byte alone,
the others search the few evacuated address ranges, and the owners read their new pointer
from a table indexed by block.
"""
from __future__ import annotations

import numpy as np

from ..core.jit import njit, part_range, split_kernel

__all__ = ["repoint_moved"]


@njit
def _last_at_most(a, x):
    """Index of the last item of ascending ``a`` that is <= x (-1: none)."""
    lo, hi = 0, a.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


@njit
def _moves_by_block(starts, shifts, offsets, old, new, dense):
    for i in range(old.shape[0]):
        a = _last_at_most(starts, old[i])
        dense[offsets[a] + ((old[i] - starts[a]) >> shifts[a])] = new[i]


@split_kernel
def _repoint(edge_ptr, size_class, n, starts, ends, shifts, offsets, dense, classes, part, parts):
    for v in range(*part_range(n, part, parts)):
        c = size_class[v]
        if c < 0 or not (classes >> np.uint64(c)) & np.uint64(1):
            continue                     # no list, or not of a class that moved blocks
        p = edge_ptr[v]
        if p == 0:
            continue
        a = _last_at_most(starts, p)
        if a < 0 or p >= ends[a]:
            continue
        q = dense[offsets[a] + ((p - starts[a]) >> shifts[a])]
        if q != 0:
            edge_ptr[v] = q


def repoint_moved(edge_ptr: np.ndarray, size_class: np.ndarray, n: int, ranges,
                  old: np.ndarray, new: np.ndarray) -> None:
    """Re-point vertices ``[0, n)`` whose block moved from ``old[i]`` to ``new[i]``.

    ``edge_ptr`` int64 and ``size_class`` int8 (host, one row per vertex; class -1: no list)
    are read, ``edge_ptr`` updated in place; ``ranges``: ``(start, end, shift)`` of each
    evacuated array (host ints: its destination column's address range, and log2 of its
    block's bytes), holding every ``old`` pointer; ``old``, ``new`` int64 (M,) host arrays,
    any order. The moves are first spread over a table with one row per block of the
    evacuated arrays, so that each vertex of the table costs a search among the ranges and
    at most one look-up.
    """
    if old.shape[0] == 0:
        return
    bounds = np.array(sorted(ranges), dtype=np.int64).reshape(-1, 3)
    starts = np.ascontiguousarray(bounds[:, 0])
    ends = np.ascontiguousarray(bounds[:, 1])
    shifts = np.ascontiguousarray(bounds[:, 2])
    blocks = (ends - starts) >> shifts
    offsets = np.zeros(blocks.shape[0] + 1, dtype=np.int64)
    np.cumsum(blocks, out=offsets[1:])
    dense = np.zeros(int(offsets[-1]), dtype=np.int64)
    _moves_by_block(starts, shifts, offsets, old, new, dense)
    classes = np.uint64(0)               # bit k: blocks of size class k moved
    for k in set((shifts - 2).tolist()):
        classes |= np.uint64(1) << np.uint64(k)
    _repoint(edge_ptr, size_class, np.int64(n), starts, ends, shifts, offsets, dense, classes)
