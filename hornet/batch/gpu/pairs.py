"""A batch's id pairs on the device, as the GPU batch paths take them.

Host (NumPy) pairs go up in one copy through a pinned staging buffer in stream order
(:func:`hornet.core.cuda.upload`): ``cupy.asarray`` of a pageable host array waits for the
device's queue, twice per batch, which for a batch of a thousand pairs costs more than its
kernels. Device pairs are used as they are.
"""
from __future__ import annotations

import numpy as np

from ...core.cuda import cupy, upload

__all__ = ["device_pairs", "STAGED_PAIR_BYTES"]

#: host pairs up to this many bytes (both arrays) go through the staging buffers; larger
#: ones through ``cupy.asarray`` (the staging buffers stay small)
STAGED_PAIR_BYTES = 1 << 20


def device_pairs(src, dst):
    """``(src, dst)`` as contiguous int32 or int64 CuPy arrays of one dtype, shape (n,).

    ``src``, ``dst``: 1-D integer NumPy or CuPy arrays of one length. Pairs of one dtype,
    int32 or int64, keep it; any other mix becomes int64 (values past int64 wrap as
    ``astype`` wraps them: the batch's id checks refuse them)."""
    same = src.dtype == dst.dtype and src.dtype in (np.int32, np.int64)
    dtype = src.dtype if same else np.dtype(np.int64)
    n = int(src.shape[0])
    if isinstance(src, np.ndarray) and isinstance(dst, np.ndarray) and \
            2 * n * dtype.itemsize <= STAGED_PAIR_BYTES:
        both = np.empty((2, n), dtype=dtype)
        both[0] = src
        both[1] = dst
        dev = upload(both)
        return dev[0], dev[1]
    src, dst = cupy.asarray(src), cupy.asarray(dst)
    if not same:
        src, dst = src.astype(cupy.int64), dst.astype(cupy.int64)
    return cupy.ascontiguousarray(src), cupy.ascontiguousarray(dst)
