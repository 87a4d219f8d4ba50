"""Bounds of vertex-id arrays (CPU): the one pass that validation makes over a batch."""
from __future__ import annotations

import numpy as np

from ...core.jit import ix, part_range, split_kernel


BOUND_CHUNKS = 16
_INT64_MAX = np.int64(np.iinfo(np.int64).max)
_INT64_MIN = np.int64(np.iinfo(np.int64).min)


def _bounds_of_parts(results: list):
    """(min, max) of a split call's parts' (min, max)."""
    if len(results) == 1:
        return results[0]
    return min(r[0] for r in results), max(r[1] for r in results)


@split_kernel(nrt=True, combine=_bounds_of_parts)
def _id_bounds(a, part_index, parts):
    n = a.shape[0]
    part = np.empty((BOUND_CHUNKS, 2), dtype=np.int64)
    c0, c1 = part_range(BOUND_CHUNKS, part_index, parts)
    if c0 == c1:                    # more parts than chunks: this part has none
        return _INT64_MAX, _INT64_MIN
    for c in range(c0, c1):
        lo = _INT64_MAX
        hi = _INT64_MIN
        for i in range(n * c // BOUND_CHUNKS, n * (c + 1) // BOUND_CHUNKS):
            x = np.int64(a[ix(i)])
            lo = min(lo, x)
            hi = max(hi, x)
        part[c, 0] = lo
        part[c, 1] = hi
    lo = part[c0, 0]                # loops, not NumPy's min and max: those compile
    hi = part[c0, 1]                # their own kernels into this one
    for c in range(c0 + 1, c1):
        lo = min(lo, part[c, 0])
        hi = max(hi, part[c, 1])
    return lo, hi


def id_bounds(arrays) -> list[int]:
    """[min, max] of each non-empty integer array (host, 1-D), flattened: one pass over each
    (NumPy's ``min`` and ``max`` take a pass each)."""
    out = []
    for a in arrays:
        out.extend(_id_bounds(a))
    return [int(x) for x in out]
