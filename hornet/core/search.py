"""Searches in sorted arrays inside Numba kernels (CPU), shared by every layer above.

- :func:`lower_bound`: the first index of a sorted slice holding a value >= x.
- :func:`array_holding`: the block array an address falls in (the last base <= it).
- :func:`array_directory` / :func:`array_in_directory`: the same answer through a directory
  of the address range, for kernels that map many addresses against one set of arrays.
"""
from __future__ import annotations

import numpy as np

from .jit import ix, njit

__all__ = ["lower_bound", "array_holding", "array_directory", "array_in_directory"]


@njit
def lower_bound(a, lo, hi, x):
    """First index ``i`` in ``[lo, hi)`` with ``a[i] >= x`` (``hi`` if none); ``a`` ascending."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[ix(mid)] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(inline="always")
def array_holding(bases, address):
    """Index of the block array holding ``address``: the last of ``bases`` (int64 (A,), A >= 1,
    ascending) that is <= ``address`` (branch-free halving steps)."""
    a = 0
    n = bases.shape[0]
    while n > 1:
        half = n >> 1
        a = a + half if bases[ix(a + half)] <= address else a
        n -= half
    return a


# A binary search over the block arrays' bases costs a branch misprediction at most of its
# ~10 steps (LLVM turns the select back into a branch), and giving back a batch's blocks
# searches once per block. The directory cuts the
# address range [bases[0], bases[-1]] into at most 2**DIRECTORY_BITS equal granules and
# stores, per granule start, the last array at or below it; an address then needs two reads
# and, only where an array starts inside its granule, a search among those arrays.
DIRECTORY_BITS = 14


@njit
def array_directory(bases):
    """The directory of ``bases`` (int64 (A,), ascending) for :func:`array_in_directory`:
    int32 (G + 2,); entry 0 is the granule's log2 size, entry ``1 + g`` the index of the last
    base <= ``bases[0] + (g << shift)``, entry ``G + 1`` is A - 1 (G: the granules, at most
    ``2**DIRECTORY_BITS``). Without arrays (A = 0) it holds one granule and maps nothing:
    no address may be looked up in it."""
    na = bases.shape[0]
    if na == 0:
        out = np.zeros(3, dtype=np.int32)
        out[0] = 6
        return out
    span = bases[na - 1] - bases[0]
    shift = 6
    while (span >> shift) >= (1 << DIRECTORY_BITS):
        shift += 1
    granules = (span >> shift) + 1
    out = np.empty(granules + 2, dtype=np.int32)
    out[0] = shift
    a = 0
    for g in range(granules):
        start = bases[0] + (np.int64(g) << shift)
        while a + 1 < na and bases[a + 1] <= start:
            a += 1
        out[g + 1] = a
    out[granules + 1] = na - 1
    return out


@njit(inline="always")
def array_in_directory(directory, bases, address):
    """:func:`array_holding` through ``directory = array_directory(bases)``: the index of the
    last of ``bases`` that is <= ``address`` (0 for an address below them all)."""
    granules = directory.shape[0] - 2
    g = min(max(address - bases[0], 0) >> directory[0], granules - 1)
    lo = np.int64(directory[ix(g + 1)])
    hi = np.int64(directory[ix(g + 2)])       # the answer lies in [lo, hi]
    if hi - lo <= 1:      # at most one array starts in the granule: no branch on the address
        return lo + np.int64((hi > lo) & (bases[ix(hi)] <= address))
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if bases[ix(mid)] <= address:
            lo = mid
        else:
            hi = mid - 1
    return lo
