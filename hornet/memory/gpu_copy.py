"""Load-balanced copies of slot ranges and size classes on the GPU (CuPy + CUDA C++).

GPU twin of :mod:`hornet.memory.copy_kernels` and the CPU size-class kernels of
:mod:`hornet.memory.backend`. The CUDA source ``memory_kernels.cu`` (also used by
:mod:`hornet.memory.gpu_bit_tree`) is compiled once per process, on first use.
"""
from __future__ import annotations

import os

import numpy as np

from ..core.cuda import ITEM_TYPES, as_i64, cupy, function, i64, item_type, scan, upload
from .gpu_launch import launch

CU_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "memory_kernels.cu")
CU_TEMPLATES = tuple(f"copy_ranges<{t}>" for t in ITEM_TYPES.values())


def _fn(name: str):
    return function(CU_SOURCE, name, CU_TEMPLATES)


def copy_ranges(src, dst, counts, dtype) -> None:
    """Copy ``counts[i]`` items of ``dtype`` from device address ``src[i]`` to ``dst[i]``.

    ``src``, ``dst``: int64 device addresses, shape (n,); ``counts``: integer, shape (n,)
    (<= 0: nothing). Every item gets its own thread (ranges located by binary search over the
    scan of the counts), so one huge range spreads over the whole GPU. Ranges must not overlap.
    """
    n = int(src.shape[0])
    if n == 0:
        return
    counts = cupy.maximum(as_i64(counts), 0)
    off, total = scan(counts)
    if total == 0:
        return
    fn = _fn(f"copy_ranges<{item_type(dtype)}>")
    launch(fn, total, (as_i64(src), as_i64(dst), off, i64(n), i64(total)))


def place_by_class(classes, class_start, pool):
    """``out[i]`` = a distinct entry of ``pool`` from class ``classes[i]``'s range, which starts
    at ``class_start[k]`` (``classes``, ``pool``: int64 device arrays; ``class_start``: int64,
    host or device; entries of one class in any order)."""
    classes = as_i64(classes)
    n = int(classes.shape[0])
    out = cupy.empty(n, dtype=cupy.int64)
    if isinstance(class_start, np.ndarray):     # through the pinned staging buffer: no wait
        next_slot = upload(np.ascontiguousarray(class_start, dtype=np.uint64))
    else:
        next_slot = cupy.array(class_start, dtype=cupy.uint64)
    launch(_fn("place_by_class"), n, (classes, i64(n), next_slot, as_i64(pool), out))
    return out


def field_addresses(pointers, bases, field_bases, itemsize: int):
    """Addresses in another field of the slots whose destination addresses are ``pointers``
    (int64 device (n,); 0 = no block, kept 0): block arrays start at ``bases`` (int64 device
    (A,), ascending; A >= 1), their column of that field at ``field_bases`` (int64 device
    (A,)), items of ``itemsize`` bytes. One kernel; returns int64 device (n,)."""
    pointers = as_i64(pointers)
    out = cupy.empty(pointers.shape[0], dtype=cupy.int64)
    if pointers.shape[0]:
        launch(_fn("field_addresses"), pointers.shape[0],
               (pointers, i64(pointers.shape[0]), as_i64(bases), i64(bases.shape[0]),
                as_i64(field_bases), i64(itemsize), out))
    return out


def class_counts(classes) -> np.ndarray:
    """Host int64 array of 64: how many of ``classes`` (int64 device array) are each size class
    (other values, such as -1, are not counted). One kernel and one read."""
    classes = as_i64(classes)
    counts = cupy.zeros(64, dtype=cupy.uint64)
    launch(_fn("class_counts"), classes.shape[0], (classes, i64(classes.shape[0]), counts))
    return counts.get().astype(np.int64)


def size_classes(degree, min_class: int):
    """Per vertex ceil(log2(degree)), at least ``min_class``; -1 where degree <= 0.

    ``degree``: integer device array, shape (n,). Returns int64 device array, shape (n,).
    """
    degree = as_i64(degree)
    out = cupy.empty(degree.shape[0], dtype=cupy.int64)
    launch(_fn("size_classes"), degree.shape[0],
           (degree, i64(degree.shape[0]), i64(min_class), out))
    return out
