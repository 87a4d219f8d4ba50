"""Searches in sorted arrays inside Numba kernels (CPU), shared by every layer above.

- :func:`lower_bound`: the first index of a sorted slice holding a value >= x.
- :func:`array_holding`: the block array an address falls in (the last base <= it).
"""
from __future__ import annotations

import numba

from .jit import ix

__all__ = ["lower_bound", "array_holding"]


@numba.njit(cache=True)
def lower_bound(a, lo, hi, x):
    """First index ``i`` in ``[lo, hi)`` with ``a[i] >= x`` (``hi`` if none); ``a`` ascending."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[ix(mid)] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@numba.njit(inline="always", cache=True)
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
