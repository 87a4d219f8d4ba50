"""Copies of slot ranges between blocks, and slot addresses in other fields (CPU kernels).

The kernels here and in the batch pipeline copy element by element rather than by slice
assignment between ``carray`` views: Numba's parfor pass mishandles that assignment (the copy
silently does nothing), so element loops keep the kernels correct under either compilation.
"""
from __future__ import annotations

import numpy as np

from ..core.jit import part_range, split_kernel
from ..core.pointers import view, width_dtype
from ..core.search import array_holding


@split_kernel
def _copy_ranges(src, dst, counts, like, part, parts):
    for i in range(*part_range(src.shape[0], part, parts)):
        n = counts[i]
        if n > 0:
            a = view(dst[i], n, like)
            b = view(src[i], n, like)
            for j in range(n):
                a[j] = b[j]


def copy_ranges(src: np.ndarray, dst: np.ndarray, counts: np.ndarray, dtype) -> None:
    """Copy ``counts[i]`` items of ``dtype`` from address ``src[i]`` to ``dst[i]``, for all i
    (as unsigned integers of the dtype's width)."""
    if src.shape[0]:
        _copy_ranges(src.astype(np.int64, copy=False), dst.astype(np.int64, copy=False),
                     counts.astype(np.int64, copy=False), np.empty(0, dtype=width_dtype(dtype)))


@split_kernel
def _field_addresses(pointers, bases, field_bases, itemsize, out, part, parts):
    for i in range(*part_range(pointers.shape[0], part, parts)):
        p = pointers[i]
        if p == 0:                           # no block
            out[i] = 0
        else:
            a = array_holding(bases, p)
            out[i] = field_bases[a] + ((p - bases[a]) >> 2) * itemsize


def field_addresses(pointers: np.ndarray, bases: np.ndarray, field_bases: np.ndarray,
                    itemsize: int) -> np.ndarray:
    """Addresses in another field of the slots whose destination addresses are ``pointers``
    (int64 (n,); 0 = no block, kept 0): block arrays start at ``bases`` (int64 (A,),
    ascending; A >= 1), their column of that field at ``field_bases`` (int64 (A,)), items of
    ``itemsize`` bytes. Returns int64 (n,)."""
    out = np.empty(pointers.shape[0], dtype=np.int64)
    if pointers.shape[0]:
        _field_addresses(pointers, bases, np.ascontiguousarray(field_bases), int(itemsize), out)
    return out
