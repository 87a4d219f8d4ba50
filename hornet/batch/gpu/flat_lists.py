"""The lists of a planned batch rewritten over the flattened moving items (CUDA source
``flat_lists.cu``).

A plan (:mod:`hornet.batch.gpu.plan`) lists per segment its source's list (``old_ptr``,
``old_deg``), the block its new list goes to (``seg_ptr``: the same block, or a new one for
a list that moves) and its kept entries' positions (``at``, from ``seg_start``): the items
a delete removes, or the insertion points of an insert's new items. In place, the slots
before a list's first change stay and every slot from there on is rewritten (every slot of
a list that moves); those moving slots of all the batch's lists, concatenated, are cut into
tiles of equal size that one block each reads, ranks and writes, whatever the lists they
cover: the work is balanced over the moving items themselves (a tile may hold hundreds of
short lists or a piece of one hub), every moving item is read once and written once, and
reads and writes are coalesced. Five launches through prepared argument buffers: the moving
items' offsets (a scan in two kernels), the changed items' flat indices, each tile's first
segment and changed item, and the tiles.
Every count is read on the device from the plan's info (nothing is read back): a removal
can be queued before the plan's counts reach the host, and a plan that flags a bad id
leaves every list untouched. Destination lists only (int32; graphs without edge fields).
"""
from __future__ import annotations

import os

from ...core.cuda import PreparedLaunch, _max_grid, cupy, function

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "flat_lists.cu")
#: segments a block of the offsets' scan takes; flat items a block of the rewrite takes
#: (flat_lists.cu: SEG_TILE, FLAT_TILE; 256 threads a block for both)
SEG_TILE = 2048
FLAT_TILE = 2048
THREADS = 256
_STATE_WORDS = 3                   # (flat_lists.cu: S_FLAGS)

_ARITY = {"flat_sums": 10, "flat_offsets": 10, "flat_marks": 8, "flat_tiles": 6,
          "flat_remove": 9, "flat_merge": 12}
_LAUNCHES: dict = {}
_STATE: list = []


def _prepared(name: str) -> PreparedLaunch:
    fn = _LAUNCHES.get(name)
    if fn is None:
        fn = _LAUNCHES[name] = PreparedLaunch(function(_CU, name), _ARITY[name])
    return fn


def _state(tiles: int):
    """The rewrite's state (int64, reused; grows to ``tiles``): the state words, a flag per
    tile (int32), then per tile its first changed item and its first segment. Returns
    (addresses of the state, of the tiles' changed items and of their segments)."""
    flags = (tiles + 1) // 2 + 1
    words = _STATE_WORDS + flags + 2 * tiles
    if not _STATE or _STATE[0].shape[0] < words:
        _STATE[:] = [cupy.empty(max(words, 1 << 12), dtype=cupy.int64)]
    state = _STATE[0]
    state.data.memset_async(0, 8 * _STATE_WORDS + 4 * tiles)
    p = state.data.ptr
    return p, p + 8 * (_STATE_WORDS + flags), p + 8 * (_STATE_WORDS + flags + tiles)


def _offsets(ws, entries: int, slots: int, merge: bool, src: int, dst: int):
    """The segments' offsets (row 2), the changed items' flat indices (row 0) and the tiles'
    starts of the plan in ``ws``; returns (the addresses of the state, of the tiles' changed
    items and of their segments; the tiles' bound)."""
    rows, info = ws.rows, ws.info.data.ptr
    seg_start, seg_len, old_deg, at = (rows[k].data.ptr for k in (4, 7, 8, 3))
    flat, off = rows[0].data.ptr, rows[2].data.ptr
    tile_sum = ws.tile_sum.data.ptr
    tiles = slots // FLAT_TILE + 1
    p_state, tile_r, tile_s = _state(tiles)
    seg_tiles = -(-entries // SEG_TILE)
    m = int(merge)
    _prepared("flat_sums")(seg_tiles, THREADS, [info, src, dst, seg_start, seg_len, old_deg,
                                                at, m, tile_sum, p_state])
    _prepared("flat_offsets")(seg_tiles, THREADS, [info, src, dst, seg_start, seg_len, old_deg,
                                                   at, m, tile_sum, off])
    _prepared("flat_marks")(min(-(-entries // THREADS), _max_grid()), THREADS,
                            [info, src, dst, seg_start, at, off, m, flat])
    _prepared("flat_tiles")(min(-(-(entries + 1) // THREADS), _max_grid()), THREADS,
                            [info, off, flat, p_state, tile_r, tile_s])
    return p_state, tile_r, tile_s, tiles


def remove_flat(ws, entries: int, items: int) -> None:
    """Remove the kept entries of the delete plan queued in the plan scratch ``ws``
    (:func:`hornet.batch.gpu.plan.plan_batch` with ``wait`` False, ``batch_plan`` launched;
    ``entries``: its batch's entries, a bound on its segments and kept entries) from their
    lists, in place (every list: a list that moves is copied to its block afterwards).
    ``items``: at least the items of every list. Uses the plan scratch's rows 0 (the changed
    items' flat indices) and 2 (the segments' offsets), free once the plan's entries are
    scattered, and its tile sums. No host synchronization."""
    if entries <= 0:
        return
    rows = ws.rows
    old_ptr = rows[10].data.ptr
    p_state, tile_r, tile_s, tiles = _offsets(ws, entries, items, False, old_ptr, old_ptr)
    _prepared("flat_remove")(min(tiles, _max_grid()), THREADS,
                             [ws.info.data.ptr, rows[2].data.ptr, rows[4].data.ptr, old_ptr,
                              rows[3].data.ptr, rows[0].data.ptr, p_state, tile_r, tile_s])


def merge_flat(ws, entries: int, items: int, values) -> None:
    """Merge the kept entries of the insert plan in the plan scratch ``ws`` (its blocks
    placed: ``seg_ptr`` final) into their lists: each segment's new list at its ``seg_ptr``
    (in place where that is its old block), the new destinations ``values`` (int32 device,
    one per kept entry). ``entries``: the batch's entries (a bound on its segments and kept
    entries); ``items``: at least the items of every list. Scratch as :func:`remove_flat`.
    No host synchronization."""
    if entries <= 0:
        return
    rows = ws.rows
    old_ptr, seg_ptr = rows[10].data.ptr, rows[1].data.ptr
    p_state, tile_r, tile_s, tiles = _offsets(ws, entries, items + entries, True, old_ptr,
                                              seg_ptr)
    _prepared("flat_merge")(min(tiles, _max_grid()), THREADS,
                            [ws.info.data.ptr, rows[2].data.ptr, rows[4].data.ptr,
                             rows[7].data.ptr, old_ptr, seg_ptr, rows[3].data.ptr,
                             values.data.ptr, rows[0].data.ptr, p_state, tile_r, tile_s])
