"""Load-balanced copies of slot ranges between blocks (CPU kernels).

Note: inside ``prange`` loops, Numba's parfor pass mishandles slice assignment between
``carray`` views (the copy silently does nothing), so parallel kernels here and in the batch
pipeline copy element by element.
"""
from __future__ import annotations

import numba
import numpy as np

from .jit import dual_kernel
from .pointers import view


@dual_kernel
def _copy_ranges(src, dst, counts, like):
    for i in numba.prange(src.shape[0]):
        n = counts[i]
        if n > 0:
            a = view(dst[i], n, like)
            b = view(src[i], n, like)
            for j in range(n):
                a[j] = b[j]


def copy_ranges(src: np.ndarray, dst: np.ndarray, counts: np.ndarray, dtype) -> None:
    """Copy ``counts[i]`` items of ``dtype`` from address ``src[i]`` to ``dst[i]``, for all i."""
    if src.shape[0]:
        _copy_ranges(src.astype(np.int64, copy=False), dst.astype(np.int64, copy=False),
                     counts.astype(np.int64, copy=False), np.empty(0, dtype=dtype))
