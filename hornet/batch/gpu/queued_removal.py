"""A planned delete's removal queued before its plan's counts reach the host
(:func:`hornet.batch.planned._queue_removal`), launched from device addresses.

The same kernels as :func:`hornet.batch.gpu.kernels.remove_lists` with ``counted`` (the move
plan, the huge lists' pieces, then per column the short, medium and huge lists' removal, every
list in place), but every argument is an address or a host int that the caller has at hand
(the rows of the plan's scratch, the move scratch's buffers), written into prepared argument
buffers: no CuPy view, no argument conversion, no array check. The short and medium lists'
kernels run on side streams (:mod:`hornet.batch.gpu.side_streams`), as there. The host's
part of the removal lies on a queued delete's critical path (the device waits for its
launches).
"""
from __future__ import annotations

import numpy as np

from ...core.cuda import BLOCK, cupy, item_type
from . import side_streams
from .kernels import (SMALL_MOVE, WARP_MOVE, _move_scratch, grid_for, prepared,
                      removal_pieces, removal_warps)

__all__ = ["queued_removal"]


def queued_removal(lists: int, old_degree: int, seg_start: int, seg_len: int,
                   positions: int, bound: int, items: int, dtypes, seg_count: int,
                   veto: int) -> None:
    """Remove, in place, the entries of every segment of a queued delete plan (device
    addresses of int64 rows, one value per segment: ``lists`` the list's address,
    ``old_degree``, ``seg_start``, ``seg_len``; ``positions``: int64 per entry, the removed
    positions, ascending per segment). ``bound``: at least the number of segments (the rows
    hold that many); ``seg_count``: address of the true number (int64, on the device);
    ``veto``: address of an int64 word, nonzero: nothing is touched. ``items``: at least
    the lists' entries in all (host int). ``dtypes``: the dtype of each column; the columns
    past the first are not supported here (graphs with edge properties take
    :func:`~hornet.batch.gpu.kernels.remove_lists`). No host synchronization."""
    if bound <= 0:
        return
    if len(dtypes) != 1:
        raise ValueError("a queued removal rewrites the destination column only")
    scratch = _move_scratch()
    first, moving, medium, huge, piece_base = (a.data.ptr for a in scratch.segments(bound))
    counts = scratch.counts.data.ptr
    stream = cupy.cuda.get_current_stream().ptr
    piece, (pieces,) = removal_pieces(dtypes[:1])
    cupy.cuda.runtime.memsetAsync(counts, 0, 3 * 8, stream)
    prepared("plan_moves")(grid_for(bound), BLOCK, [
        lists, lists, old_degree, seg_start, seg_len, positions, 0, bound, SMALL_MOVE,
        WARP_MOVE, piece, first, moving, medium, huge, piece_base, counts, seg_count,
        veto])
    # huge segments move more than WARP_MOVE items each, out of `items` in all
    max_segs = min(bound, int(items) // (WARP_MOVE + 1) + 1)
    max_pieces = int(items) // piece + max_segs
    owner, state = scratch.pieces(max_pieces)
    owner, state = owner.data.ptr, state.data.ptr
    prepared("list_pieces")(grid_for(max_segs, 32), BLOCK, [
        old_degree, first, huge, counts + 8, piece_base, piece, owner])
    t = item_type(np.dtype(dtypes[0]))
    args = [lists, lists, old_degree, seg_start, seg_len, positions, first]
    sides = side_streams.fork()           # (hornet.batch.gpu.side_streams)
    small_on, warp_on = (stream, stream) if sides is None else (sides[0].ptr, sides[1].ptr)
    prepared(f"remove_small<{t}>")(grid_for(bound), BLOCK, args + [
        moving, SMALL_MOVE, bound, seg_count, veto], small_on)
    prepared(removal_warps(dtypes[:1])[0])(grid_for(bound, 32), BLOCK,
                                            args + [medium, counts], warp_on)
    cupy.cuda.runtime.memsetAsync(state, 0, 4 * (1 + max_pieces), stream)
    prepared(pieces)(grid_for(max_pieces, BLOCK), BLOCK,
                      args + [counts + 16, piece_base, owner, state])
    side_streams.join(sides)
