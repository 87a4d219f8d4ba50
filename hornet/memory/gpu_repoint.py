"""Vertices re-pointed to the blocks that compaction moved (GPU twin of
:mod:`hornet.memory.repoint`; CUDA source ``memory_kernels.cu``).

The moves are spread over a device table with one row per block of the evacuated arrays (one
kernel), then one pass over the vertex table gives each owner of a moved block its new
pointer (a vertex of a class that moved no block is passed over on its class byte): two
launches and one upload of the evacuated ranges, no sort and no read-back.
"""
from __future__ import annotations

import numpy as np

from ..core.cuda import cupy, i64, upload
from .gpu_copy import _fn
from .gpu_launch import launch

__all__ = ["repoint_moved"]


def repoint_moved(edge_ptr, size_class, n: int, ranges, old, new) -> None:
    """Re-point vertices ``[0, n)`` whose block moved from ``old[i]`` to ``new[i]`` (same
    contract as :func:`hornet.memory.repoint.repoint_moved`, with ``edge_ptr`` int64,
    ``size_class`` int8, ``old`` and ``new`` int64 on the device; ``ranges``: host
    ``(start, end, shift)`` of each evacuated array, holding every ``old`` pointer)."""
    m = int(old.shape[0])
    if m == 0 or n <= 0:
        return
    bounds = np.array(sorted(ranges), dtype=np.int64).reshape(-1, 3)
    na = bounds.shape[0]
    blocks = (bounds[:, 1] - bounds[:, 0]) >> bounds[:, 2]
    offsets = np.zeros(na + 1, dtype=np.int64)
    np.cumsum(blocks, out=offsets[1:])
    dev = upload(np.concatenate([bounds[:, 0], bounds[:, 1], bounds[:, 2], offsets]))
    starts, ends, shifts, off = dev[:na], dev[na:2 * na], dev[2 * na:3 * na], dev[3 * na:]
    dense = cupy.zeros(int(offsets[-1]), dtype=cupy.int64)
    launch(_fn("repoint_scatter"), m, (old, new, i64(m), starts, shifts, off, i64(na), dense))
    classes = 0                                  # bit k: blocks of size class k moved
    for k in set((bounds[:, 2] - 2).tolist()):
        classes |= 1 << k
    launch(_fn("repoint_vertices"), n, (edge_ptr, size_class, i64(n), starts, ends, shifts, off,
                                        i64(na), dense, np.uint64(classes)))
