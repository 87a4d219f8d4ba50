"""A planned insert's merge launched from device addresses (graphs without edge properties).

The same kernels, grids and streams as :func:`hornet.batch.gpu.kernels.merge_lists` without
merge pieces (the move plan, then the short, medium and huge lists' merges of the destination
column), but every argument is an address or a host int that the caller has at hand (the
rows of the plan's scratch, the kept destinations, the move scratch's buffers), written into
prepared argument buffers: no CuPy view, no argument conversion, no array check. After a
planned insert's read-back the host's launches are the batch's critical path (the device
waits for them), as for :mod:`hornet.batch.gpu.queued_removal`.
"""
from __future__ import annotations

import numpy as np

from ...core.cuda import BLOCK, cupy, item_type
from . import side_streams
from .kernels import SMALL_MOVE, WARP_MOVE, _move_scratch, grid_for, prepared

__all__ = ["prepared_merge"]


def prepared_merge(old_lists: int, new_lists: int, old_degree: int, seg_start: int,
                   seg_len: int, insert_at: int, values: int, segments: int, dtype) -> None:
    """Merge the new items of ``segments`` segments into their sorted lists (device addresses
    of int64 rows, one value per segment: ``old_lists`` the list's block, ``new_lists`` the
    block it is written to (equal: in place), ``old_degree``, ``seg_start``, ``seg_len``;
    per new item: ``insert_at`` int64, the old items before it, and ``values``, the items,
    of ``dtype``). The destination column only. No host synchronization."""
    if segments <= 0:
        return
    scratch = _move_scratch()
    first, moving, medium, huge, piece_base = (a.data.ptr for a in scratch.segments(segments))
    counts = scratch.counts.data.ptr
    stream = cupy.cuda.get_current_stream().ptr
    cupy.cuda.runtime.memsetAsync(counts, 0, 3 * 8, stream)
    prepared("plan_moves")(grid_for(segments), BLOCK, [
        old_lists, new_lists, old_degree, seg_start, seg_len, insert_at, 1, segments,
        SMALL_MOVE, WARP_MOVE, 0, first, moving, medium, huge, piece_base, counts, 0, 0])
    t = item_type(np.dtype(dtype))
    args = [old_lists, new_lists, old_degree, seg_start, seg_len, insert_at, values]
    sides = side_streams.fork()           # short and medium lists beside the huge ones
    small_on, warp_on = (stream, stream) if sides is None else (sides[0].ptr, sides[1].ptr)
    prepared(f"merge_small<{t}>")(grid_for(segments), BLOCK, args + [
        moving, SMALL_MOVE, segments], small_on)
    prepared(f"merge_warp<{t}>")(grid_for(segments, 32), BLOCK, args + [
        first, medium, counts], warp_on)
    prepared(f"merge_block<{t}>")(grid_for(segments, BLOCK), BLOCK, args + [
        first, huge, counts + 8])
    side_streams.join(sides)
