"""Gathering the lists of a pointer view into one contiguous device array (CuPy + CUDA C++).

A pointer view (a graph's vertex table, an adjacency view) holds, per vertex, the device
address of a list of one column (destinations or an edge property); the batch pipeline and
the GPU algorithms both read whole columns through :func:`gather_lists`. The CUDA source
``gather.cu`` is compiled once per process, on first use.
"""
from __future__ import annotations

import os

from .cuda import ITEM_TYPES, as_i64, cupy, function, i64, item_type, launch, scan

__all__ = ["gather_lists"]

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gather.cu")
_NAMES = tuple(f"gather_lists<{t}>" for t in ITEM_TYPES.values())


def gather_lists(column_ptr, degree, offsets, out) -> None:
    """Concatenate every vertex's list of one column into ``out``.

    ``column_ptr`` (int64, (V,)), ``degree`` (integer, (V,)), ``offsets`` (int64, (V,)): where
    vertex v's list starts in ``out`` (a contiguous device array of the column's dtype); all
    on the device. One thread per output element (load-balanced over lists of any length).
    """
    column_ptr = as_i64(column_ptr)
    nv = int(column_ptr.shape[0])
    if nv == 0:
        return
    if not out.flags.c_contiguous:
        raise TypeError("out must be contiguous")
    deg = cupy.maximum(as_i64(degree), 0)
    off, total = scan(deg)
    if total == 0:
        return
    launch(function(_CU, f"gather_lists<{item_type(out.dtype)}>", _NAMES), total,
           (column_ptr, off, as_i64(offsets), i64(nv), i64(total), out))
