"""Medium batches on the GPU: the planned path's plan, the small path's workspace and rewrite.

A batch past the small-batch path (:mod:`hornet.batch.gpu.small`: one thread block sorts it)
and up to :data:`MEDIUM_ENTRIES` entries is prepared by the planned path's first kernels
(:func:`hornet.batch.gpu.plan.plan_entries`: keys, sort, lookups, ranks; the kept entries
scattered straight into this path's workspace, whose layout is the small path's,
``small_rewrite.cuh``, with room for the batch) and ``medium_segments`` (``medium_batch.cu``:
per segment the small path's decisions, ranks per size class by atomics, and whether one warp
or one block per piece rewrites it); the host reads the same header as the small path's,
once. The lists are then rewritten by ``medium_merge_warp`` / ``medium_remove_warp`` (one warp
per short list) and the small path's ``small_merge`` / ``small_remove`` (one block per piece of
the long ones), which take the moving lists' blocks from a pool the host allocated for the
batch (:meth:`~hornet.memory.manager.MemoryManager.allocate_counts`) and put the blocks they
leave on the spill list, for the bit trees (the block cache's rings are not used).
"""
from __future__ import annotations

import os

import numpy as np

from ...core.cuda import _max_grid, PreparedLaunch, cupy, function
from ..small_layout import H_FREED, H_WARPS, HEADER_WORDS, MODE_INSERT, NUM_CLASSES
from . import small
from .plan import plan_entries, plan_scratch
from .small import REWRITE_THREADS, field_words

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "medium_batch.cu")
_NAMES = ()                     # (extern "C" kernels only)

__all__ = ["MediumBatches", "MEDIUM_ENTRIES"]

#: most entries (pairs, twice that many when mirrored) a medium batch may have: past a few
#: tens of thousands of segments, one warp per short list costs the device more than the
#: planned path's one thread per short list, which outweighs the host work this path saves
MEDIUM_ENTRIES = 1 << 15
SEGMENT_THREADS = 256
WARP_THREADS = 256              # 8 warps a block, one segment each
_READ_WORDS = H_WARPS + 1
# no list is copied to a fresh block of its own class (small_prepare's rule for long in-place
# rewrites, for the small path's one block per list): a medium batch reaches many long lists
# (a delete's sampled edges mostly belong to hubs), and copying each would take blocks of large
# classes from the bit trees and give others back, batch after batch; the block kernels
# rewrite those lists in place, as the planned path does
NO_COPIES = -1
_MIN_CAPACITY = 1 << 14
#: the header word a take queued before the read-back sets when a class is short of free
#: blocks (hornet.memory.gpu_take.take_ahead): the word small_rewrite.cuh names H_SPILLS,
#: which the medium path's kernels leave alone
H_TAKE_SHORT = H_FREED + NUM_CLASSES
# word offsets in a workspace of capacity E (small_rewrite.cuh: layout)
_ENT_SRC, _ENT_DST, _ENT_PAIR, _ENT_POS, _ENT_RES = 0, 0.5, 1, 2, 3
_SEG_VERTEX, _SEG_START, _SPILL = 4, 5, 14


def workspace_words(capacity: int) -> int:
    return HEADER_WORDS + 16 * capacity


class MediumBatches:
    """The device workspace of one graph's medium batches (int64, grown to the next power of
    two a batch needs, at least ``_MIN_CAPACITY`` entries), reused batch after batch (the
    kernels of one batch run in stream order)."""

    def __init__(self):
        import cupyx
        self.capacity = 0
        self.workspace = None
        self.header = cupyx.empty_pinned(_READ_WORDS, dtype=np.int64)   # read back here
        self._launches: dict = {}

    def _launch(self, path: str, names: tuple, name: str, nargs: int) -> PreparedLaunch:
        launch = self._launches.get(name)
        if launch is None:
            launch = self._launches[name] = PreparedLaunch(function(path, name, names), nargs)
        return launch

    def _reserve(self, entries: int) -> None:
        if entries > self.capacity:
            cap = 1 << max(_MIN_CAPACITY.bit_length() - 1, (entries - 1).bit_length())
            self.workspace = None
            self.workspace = cupy.empty(workspace_words(cap), dtype=cupy.int64)
            self.capacity = cap

    def _at(self, offset: float) -> int:
        """Device address of the workspace region at ``offset`` * capacity words past the
        header."""
        return self.workspace.data.ptr + 8 * (HEADER_WORDS + int(offset * self.capacity))

    def view(self, offset: float, count: int, dtype=np.int64):
        """The workspace region at ``offset`` (one of the ``_`` offsets), its first
        ``count`` items of ``dtype`` (int32 for the entries' src and dst)."""
        start = HEADER_WORDS + int(offset * self.capacity)
        if np.dtype(dtype) == np.int32:
            return self.workspace[start:start + self.capacity // 2].view(cupy.int32)[:count]
        return self.workspace[start:start + count]

    def prepare(self, s, d, mirror: bool, mode: int, keep_blocks: bool, degree, size_class,
                edge_ptr, min_class: int, before_read=None):
        """Plan the pairs ``s``, ``d`` (int32 or int64 device arrays of one dtype,
        contiguous, (n,), 0 < n * (2 if mirror else 1) <= MEDIUM_ENTRIES) against the
        vertex table (``degree`` int32, ``size_class`` int8, ``edge_ptr`` int64, all
        (table_len,) on the device) into the workspace; ``keep_blocks`` (deleting): lists
        that shrink stay in their blocks.

        Returns (header: host int64 array indexed by the ``H_*`` slots, valid until the next
        call; once: int32 device array (entries,) whose first ``header[H_RESULTS]`` items
        are the change's src and whose items from entries // 2 on its dst, for a mirrored
        batch; None otherwise: the change is the kept entries, :meth:`kept_pairs`).
        ``before_read``: called with (the plan's info, the header: device addresses; the
        batch's entries) once the batch's kernels are queued, before the read-back (work the
        device does for the batch before the host reads its header).
        """
        n = int(s.shape[0])
        entries = n * (2 if mirror else 1)
        self._reserve(entries)
        cap = self.capacity
        ws = self.workspace
        ws.data.memset_async(0, _READ_WORDS * 8)           # the header's counters
        once = cupy.empty(entries, dtype=cupy.int32) if mirror else None
        half = entries // 2
        scratch = plan_scratch(entries)
        plan_entries(scratch, s, d, mirror, mode == MODE_INSERT, degree, edge_ptr,
                     self._at(_ENT_SRC), self._at(_ENT_DST), self._at(_ENT_POS),
                     self._at(_SEG_START), once.data.ptr if mirror else 0,
                     once.data.ptr + 4 * half if mirror else 0, self._at(_ENT_RES))
        grid = min(-(-entries // SEGMENT_THREADS), _max_grid())
        self._launch(_CU, _NAMES, "medium_segments", 12)(grid, SEGMENT_THREADS, [
            scratch.info.data.ptr, ws.data.ptr, cap, int(mirror), int(mode),
            int(keep_blocks), degree.data.ptr, size_class.data.ptr, edge_ptr.data.ptr,
            degree.shape[0], int(min_class), NO_COPIES])
        if before_read is not None:
            before_read(scratch.info.data.ptr, ws.data.ptr, entries)
        stream = cupy.cuda.get_current_stream()
        cupy.cuda.runtime.memcpyAsync(self.header.ctypes.data, ws.data.ptr, _READ_WORDS * 8,
                                      cupy.cuda.runtime.memcpyDeviceToHost, stream.ptr)
        stream.synchronize()
        return self.header, once

    def kept_pairs(self, kept: int):
        """Copies of the prepared batch's kept entries (src, dst: int32 device (kept,),
        sorted): a directed batch's change."""
        return self.view(_ENT_SRC, kept, np.int32).copy(), \
            self.view(_ENT_DST, kept, np.int32).copy()

    def sources(self, segments: int):
        """The prepared batch's distinct sources (int32 device (segments,), ascending)."""
        return self.view(_SEG_VERTEX, segments).astype(cupy.int32)

    def set_first_pairs(self, first) -> None:
        """Each kept entry's first pair in the batch (``first``: device integers (kept,)),
        whose property values an insert stores."""
        self.view(_ENT_PAIR, int(first.shape[0]))[:] = first

    def rewrite(self, mode: int, warps: int, pieces: int, pool, lookup, field_dtypes, values,
                outs, degree, size_class, edge_ptr) -> None:
        """Rewrite the prepared batch's lists and update the vertex table in place: the
        header's ``warps`` (``H_WARPS``) short lists one warp each, its ``pieces``
        (``H_PIECES``) pieces of the long ones one block each.

        ``pool``: int64 device array of the header's per-class counts of blocks, class after
        class (:meth:`MemoryManager.allocate_counts`), or None when no list moves;
        ``lookup`` (None: a graph without edge properties), ``field_dtypes``, ``values``,
        ``outs``: as :meth:`SmallBatches.rewrite`.
        Every block given back goes to the spill list (:meth:`spilled`, the header's
        ``H_FREED`` counts class after class).
        """
        nf, sizes, v, o = field_words(field_dtypes, values, outs)
        ws = self.workspace.data.ptr
        # no rings (accept none: blocks given back go to the spill list)
        rings = [0, 0, 0, 0, 0 if pool is None else pool.data.ptr]
        rest = [degree.data.ptr, size_class.data.ptr, edge_ptr.data.ptr,
                *small.lookup_words(lookup), nf, sizes, *v, *o]
        inserting = mode == MODE_INSERT
        if warps:
            name = "medium_merge_warp" if inserting else "medium_remove_warp"
            grid = min(-(-int(warps) * 32 // WARP_THREADS), _max_grid())
            self._launch(_CU, _NAMES, name, 29)(grid, WARP_THREADS,
                                                [ws, self.capacity, *rings, *rest])
        if pieces:
            name = "small_merge" if inserting else "small_remove"
            self._launch(small._CU, small._NAMES, name, 30)(
                int(pieces), REWRITE_THREADS, [ws, self.capacity, 1, *rings, *rest])

    def spilled(self, count: int):
        """The old blocks the rewrite put on the spill list (int64 device view, (count,))."""
        return self.view(_SPILL, int(count))

