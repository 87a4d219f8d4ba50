"""In-place removal of a queued delete plan over the flattened moving items (CUDA source
``flat_remove.cu``).

A delete plan (:mod:`hornet.batch.gpu.plan`) lists per segment its source's list (``old_ptr``,
``old_deg``) and the ascending positions its kept entries remove (``at``, from
``seg_start``). Every item from a list's first removed position on moves down or goes; those
moving items of all the batch's lists, concatenated, are cut into tiles of equal size that one
block each reads, ranks and writes, whatever the lists they cover: the work is balanced over
the moving items themselves (a tile may hold hundreds of short lists or a piece of one hub),
every surviving item is read once and written once, and reads and writes are coalesced. Four
launches through prepared argument buffers: the moving items' offsets (a scan in two
kernels), the removed items' flat indices, and the tiles. Every count is read on the device
from the plan's info (nothing is read back): the removal can be queued before the plan's
counts reach the host, and a plan that flags a bad id leaves every list untouched.
"""
from __future__ import annotations

import os

from ...core.cuda import PreparedLaunch, _max_grid, cupy, function

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "flat_remove.cu")
#: segments a block of the offsets' scan takes; flat items a block of the removal takes
#: (flat_remove.cu: SEG_TILE, FLAT_TILE; 256 threads a block for both)
SEG_TILE = 2048
FLAT_TILE = 2048
THREADS = 256
_STATE_WORDS = 3                   # (flat_remove.cu: S_FLAGS)

_ARITY = {"flat_sums": 6, "flat_offsets": 6, "flat_marks": 5, "flat_remove": 7}
_LAUNCHES: dict = {}
_STATE: list = []


def _prepared(name: str) -> PreparedLaunch:
    fn = _LAUNCHES.get(name)
    if fn is None:
        fn = _LAUNCHES[name] = PreparedLaunch(function(_CU, name), _ARITY[name])
    return fn


def _state(tiles: int):
    """The removal's state words and per-tile flags (int64, reused; grows to ``tiles``)."""
    words = _STATE_WORDS + (tiles + 1) // 2 + 1
    if not _STATE or _STATE[0].shape[0] < words:
        _STATE[:] = [cupy.empty(max(words, 1 << 12), dtype=cupy.int64)]
    return _STATE[0]


def remove_flat(ws, entries: int, items: int) -> None:
    """Remove the kept entries of the delete plan queued in the plan scratch ``ws``
    (:func:`hornet.batch.gpu.plan.plan_batch` with ``wait`` False, ``batch_plan`` launched;
    ``entries``: its batch's entries, a bound on its segments and kept entries) from their
    lists, in place (int32 destination lists; no other field). ``items``: at least the
    items of every list (sizes the per-tile flags). Uses the plan scratch's rows 0 (the
    removed items' flat indices) and 2 (the segments' offsets), free once the plan's entries
    are scattered, and its tile sums. No host synchronization."""
    if entries <= 0:
        return
    rows, info = ws.rows, ws.info.data.ptr
    seg_start, old_deg, old_ptr, at = (rows[k].data.ptr for k in (4, 8, 10, 3))
    flat, off = rows[0].data.ptr, rows[2].data.ptr
    tile_sum = ws.tile_sum.data.ptr
    tiles = items // FLAT_TILE + 1
    state = _state(tiles)
    state.data.memset_async(0, 8 * _STATE_WORDS + 4 * tiles)
    seg_tiles = -(-entries // SEG_TILE)
    p_state = state.data.ptr
    _prepared("flat_sums")(seg_tiles, THREADS, [info, seg_start, old_deg, at, tile_sum, p_state])
    _prepared("flat_offsets")(seg_tiles, THREADS, [info, seg_start, old_deg, at, tile_sum, off])
    _prepared("flat_marks")(min(-(-entries // THREADS), _max_grid()), THREADS,
                            [info, seg_start, at, off, flat])
    _prepared("flat_remove")(min(tiles, _max_grid()), THREADS,
                             [info, off, seg_start, old_ptr, at, flat, p_state])
