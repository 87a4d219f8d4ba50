"""Bounds of vertex-id arrays (CPU): the one pass that validation makes over a batch."""
from __future__ import annotations

import numba
import numpy as np

from ...core.jit import dual_kernel, ix


BOUND_CHUNKS = 16
_INT64_MAX = np.int64(np.iinfo(np.int64).max)
_INT64_MIN = np.int64(np.iinfo(np.int64).min)


@dual_kernel
def _id_bounds(a, out):
    n = a.shape[0]
    part = np.empty((BOUND_CHUNKS, 2), dtype=np.int64)
    for c in numba.prange(BOUND_CHUNKS):
        lo = _INT64_MAX
        hi = _INT64_MIN
        for i in range(n * c // BOUND_CHUNKS, n * (c + 1) // BOUND_CHUNKS):
            x = np.int64(a[ix(i)])
            lo = min(lo, x)
            hi = max(hi, x)
        part[c, 0] = lo
        part[c, 1] = hi
    lo = part[0, 0]                 # loops, not NumPy's min and max: those compile
    hi = part[0, 1]                 # their own kernels into this one
    for c in range(1, BOUND_CHUNKS):
        lo = min(lo, part[c, 0])
        hi = max(hi, part[c, 1])
    out[0] = lo
    out[1] = hi


def id_bounds(arrays) -> list[int]:
    """[min, max] of each non-empty integer array (host, 1-D), flattened: one pass over each
    (NumPy's ``min`` and ``max`` take a pass each)."""
    out = np.empty(2 * len(arrays), dtype=np.int64)
    for k, a in enumerate(arrays):
        _id_bounds(a, out[2 * k:2 * k + 2])
    return out.tolist()
