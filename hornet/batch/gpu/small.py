"""Small batches on the GPU: a fused path of two kernels and one small read-back.

The general pipeline (:mod:`hornet.batch.gpu.kernels`) is built for batches of 10^5 to 10^7
edges: each step is a CuPy operation or a kernel sized to the batch, and a batch costs about
150 of them plus a dozen synchronizations, so a 1,000-edge batch takes milliseconds of host
time for microseconds of GPU work. Here a batch of at most :data:`SMALL_ENTRIES` entries
(pairs, twice that many when an undirected batch is mirrored) takes:

1. ``small_prepare`` (one thread block): validation figures, mirroring, a bitonic sort by
   (src, dst, entry) in shared memory, repeats and self-loops dropped (first entry wins), a
   binary search of every entry in its source's list, the kept entries cut into segments
   per source with their new degrees and whether each list moves to a block of another size
   class, and the result rows. Everything stays in a per-graph device workspace except the
   header (a few counts and the per-size-class numbers of moving lists), read by the host
   in one copy;
2. the block cache (:mod:`hornet.memory.block_cache`) checked against the header's
   per-class counts: a ring short of what the batch needs is refilled from the bit trees
   (rarely: the cache refills rings ahead of need, one bounded step per batch, that of the
   batch's start made while the host waits for the header), and the host decides which
   rings take the blocks the batch gives back;
3. ``small_merge`` / ``small_remove`` (one block per piece of work): every field of every
   list rewritten in place or into a block popped from its new class's ring, the result's
   property values, the vertex table updated, and every old block pushed onto its class's
   ring (or, when that ring is full, onto a spill list given back to the bit trees: one
   kernel and a read-back of per-array counts). A list rewritten in place is one piece. A
   list that moves is cut into pieces of 8,192 old items copied side by side, and a hub's
   list that would move more than 2,048 items in place (up to ``COPY_MAX_CLASS``) is copied
   to a fresh block of its own class instead, so that a batch touching lists of 10^5 items
   is not one block stepping through them. A delete prepared wide (``wide``, the small
   path's deletes: ``small_remove_wide``) copies no list within its class: a long list that
   keeps its block is rewritten in place, cut at multiples of 4,096 items into pieces run side
   by side (a piece writes once the pieces its survivors land on have read theirs), so only
   the items after its first removed one move and no block is popped, and the short lists
   (at most 1,024 items to move) take one warp each instead of one block.

The caller (:class:`hornet.graph.Graph`) owns the order of these steps and falls back to the
general pipeline for anything this path does not take (bad ids, so that the error message
is the same, more than ``MAX_FIELDS - 1`` edge properties, larger batches).
"""
from __future__ import annotations

import os

import numpy as np

from ...core.cuda import PreparedLaunch, as_signed64, cupy, function, i64
from ...memory.block_cache import SPARE_MAX_CLASS as COPY_MAX_CLASS
from ..small_layout import (H_PIECES, HEADER_WORDS, MAX_FIELDS, MODE_DELETE, MODE_INSERT,
                            MODE_WIDE, SMALL_ENTRIES)

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "small_batch.cu")
_ID_TYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}
# (the second argument: the instance that runs upserts, hornet.batch.gpu.deferred)
_NAMES = tuple(f"small_prepare<{t}, {u}>" for t in _ID_TYPES.values() for u in ("false", "true"))

PREPARE_THREADS = 1024
PREPARE_ARGS = 47           # small_prepare's parameters (from the 14th: deferred batches)
REWRITE_THREADS = 256
_READ_WORDS = H_PIECES + 1
# entries: src and dst (int32, E words together), pair, pos, res; segments: 10 arrays
SPILL_OFFSET = HEADER_WORDS + 14 * SMALL_ENTRIES
# deferred upserts (small_batch.cu, FOUND_OFFSET): the found edges' pairs and positions
FOUND_OFFSET = SPILL_OFFSET + SMALL_ENTRIES
# (then, in deferred batches' workspaces, their host property values: VALUE_OFFSET)
WORKSPACE_WORDS = FOUND_OFFSET + 2 * SMALL_ENTRIES
# the small path's own workspace: then the lists of a wide delete (small_batch.cu WIDE_OFFSET)
WIDE_OFFSET = WORKSPACE_WORDS
WIDE_WORDS = 3 * SMALL_ENTRIES


def field_words(field_dtypes, values, outs):
    """(nf, sizes, v, o): the rewrite kernels' field scalars (``FIELD_PARAMS`` of
    small_rewrite.cuh) for ``field_dtypes`` (dst then the edge properties), ``values`` (per
    property: a device array or None) and ``outs`` (per property: a device array); v and o
    are lists of MAX_FIELDS - 1 addresses (0: none)."""
    sizes = 0
    for f, dt in enumerate(field_dtypes):
        sizes |= np.dtype(dt).itemsize << (8 * f)
    v = [0] * (MAX_FIELDS - 1)
    o = [0] * (MAX_FIELDS - 1)
    for f, (val, out) in enumerate(zip(values, outs)):
        v[f] = int(val.data.ptr) if val is not None else 0
        o[f] = int(out.data.ptr)
    return len(field_dtypes), sizes, v, o


def lookup_words(lookup) -> tuple:
    """(bases, field bases, arrays): the rewrite kernels' lookup scalars (``FIELD_PARAMS`` of
    small_rewrite.cuh) for the memory manager's lookup, or (0, 0, 0) for None: a graph
    without edge properties, whose kernels address the destination column by the block
    pointers alone (``field_address`` of field 0) and never read the lookup."""
    if lookup is None:
        return 0, 0, 0
    return (int(lookup.dev_bases.data.ptr), int(lookup.dev_field_bases.data.ptr),
            int(lookup.bases.shape[0]))


def rewrite_lookup(mm):
    """The lookup that a batch's rewrite kernels take from the memory manager ``mm``: None
    for a graph without edge properties (see :func:`lookup_words`), so that a batch whose
    allocation made block arrays does not rebuild the lookup on its own path: the next
    batch's block-cache step rebuilds it while the device runs that batch's prepare kernel
    (:meth:`hornet.memory.block_cache.BlockCache.top_up`), or whatever reads it first."""
    return mm.lookup() if len(mm.field_dtypes) > 1 else None


class WideMarks:
    """The marks of ``small_remove_wide`` (one int64 word per piece of a batch, on the
    device) and the count of batches that used them: a batch marks its pieces with values
    above every earlier batch's, so the words are never cleared."""

    def __init__(self):
        self.words = cupy.zeros(1024, dtype=cupy.int64)
        self.serial = 0

    def next(self, pieces: int) -> tuple:
        """(device address of at least ``pieces`` words, the batch's serial), for one launch
        of ``small_remove_wide``."""
        if self.words.shape[0] < pieces:      # words start at 0: any serial is ahead
            self.words = cupy.zeros(max(pieces, 2 * self.words.shape[0]), dtype=cupy.int64)
        self.serial += 1
        return self.words.data.ptr, self.serial


#: the least size class whose lists (more than COPY_ITEMS, 2,048, entries) a delete copies
#: within their class unless prepared wide: the small path prepares a delete wide once the
#: graph has block arrays of such a class; on graphs without them the block per list of
#: ``small_remove`` was measured as fast or faster (soc-Epinions1, 1,000-edge deletes)
WIDE_MIN_CLASS = 12

#: small_remove_wide's parameters
REMOVE_WIDE_ARGS = 30


class SmallBatches:
    """The device workspace of one graph's small batches (int64, ``WORKSPACE_WORDS`` and
    ``WIDE_WORDS`` for wide deletes), reused batch after batch (the kernels of one batch run
    in stream order)."""

    #: prepare deletes with MODE_WIDE and rewrite them with ``small_remove_wide`` (when
    #: :meth:`prepare` is asked for it); False: as the deferred path's deletes
    wide_removal: bool = True

    #: launch both kernels through the driver with prebuilt argument buffers
    #: (:class:`~hornet.core.cuda.PreparedLaunch`) and read the header with one copy into
    #: pinned memory; False: CuPy's kernel call and array read (the same kernels)
    direct_launch: bool = True

    def __init__(self):
        import cupyx
        self.workspace = cupy.empty(WORKSPACE_WORDS + WIDE_WORDS, dtype=cupy.int64)
        self.header = cupyx.empty_pinned(_READ_WORDS, dtype=np.int64)   # read back here
        self._header_copied = cupy.cuda.Event(block=False, disable_timing=True)
        self._launches: dict = {}
        self._marks = WideMarks()
        self.prepared_wide = False      # the last prepare's batch is a wide delete

    def _launch(self, name: str, nargs: int) -> PreparedLaunch:
        launch = self._launches.get(name)
        if launch is None:
            launch = self._launches[name] = PreparedLaunch(function(_CU, name, _NAMES), nargs)
        return launch

    def prepare(self, s, d, mirror: bool, mode: int, degree, size_class, edge_ptr,
                min_class: int, during=None, wide: bool = False):
        """Run ``small_prepare`` on pairs ``s``, ``d`` (int32 or int64 device arrays of one
        dtype, contiguous, (n,), 0 < n and
        n * (2 if mirror else 1) <= SMALL_ENTRIES) against the vertex table (``degree`` int32,
        ``size_class`` int8, ``edge_ptr`` int64, all (table_len,) on the device).

        ``wide``: a delete (``mode`` MODE_DELETE) is prepared for ``small_remove_wide``
        (when ``wide_removal``), which :meth:`rewrite` then runs.

        ``during``: None or a callable run once the kernel and the header's copy are queued
        and before the host waits for them (host work that overlaps the kernel; it may queue
        device work of its own, which runs after the copy).

        Returns (header: host int64 array indexed by the ``H_*`` slots, valid until the next
        call, rows: int32 device
        array (2 * SMALL_ENTRIES,) whose first ``header[H_RESULTS]`` entries are the result's
        src and whose entries from SMALL_ENTRIES on its dst).
        """
        rows = cupy.empty(2 * SMALL_ENTRIES, dtype=cupy.int32)
        self.prepared_wide = wide and self.wide_removal and mode == MODE_DELETE
        if self.prepared_wide:
            mode |= MODE_WIDE
        name = f"small_prepare<{_ID_TYPES[s.dtype]}, false>"
        if not self.direct_launch:
            function(_CU, name, _NAMES)(
                (1,), (PREPARE_THREADS,),
                (s, d, i64(s.shape[0]), np.int32(mirror), np.int32(mode), degree, size_class,
                 edge_ptr, i64(degree.shape[0]), i64(min_class), i64(COPY_MAX_CLASS),
                 self.workspace, rows, i64(0), i64(0), i64(0), i64(0), i64(0), i64(0),
                 i64(0), i64(0), i64(0), i64(0), i64(0), np.int32(0), np.uint64(0),
                 *[i64(0)] * (3 * (MAX_FIELDS - 1))))
            if during is not None:
                during()
            self.workspace[:_READ_WORDS].get(out=self.header)
            return self.header, rows
        ws = self.workspace.data.ptr
        self._launch(name, PREPARE_ARGS)(1, PREPARE_THREADS, [
            s.data.ptr, d.data.ptr, s.shape[0], int(mirror), int(mode), degree.data.ptr,
            size_class.data.ptr, edge_ptr.data.ptr, degree.shape[0], int(min_class),
            COPY_MAX_CLASS, ws, rows.data.ptr] + [0] * (PREPARE_ARGS - 13))
        stream = cupy.cuda.get_current_stream()
        cupy.cuda.runtime.memcpyAsync(self.header.ctypes.data, ws, _READ_WORDS * 8,
                                      cupy.cuda.runtime.memcpyDeviceToHost, stream.ptr)
        if during is None:
            stream.synchronize()
            return self.header, rows
        self._header_copied.record(stream)
        during()
        self._header_copied.synchronize()      # not the device work ``during`` queued
        return self.header, rows

    def rewrite(self, mode: int, pieces: int, cache, accept: int, lookup, field_dtypes,
                values, outs, degree, size_class, edge_ptr) -> None:
        """Rewrite the prepared batch's lists (``small_merge`` or ``small_remove``, one block
        per piece: ``pieces`` is the header's ``H_PIECES``) and update the vertex table in
        place.

        ``cache``: the memory manager's block cache, holding the blocks the header's class
        counts need (:meth:`BlockCache.reserve`); ``accept``: bit mask of the classes whose
        rings take the blocks given back (:meth:`BlockCache.accepts`), the others go to the
        spill list (:meth:`spilled`); ``lookup``: the memory manager's block
        array lookup, or None for a graph without edge properties (:func:`rewrite_lookup`);
        ``field_dtypes``: dtypes of dst and the edge properties; ``values``:
        per property, its (n,) device array of the batch's values (insert) or None;
        ``outs``: per property, the result's (rows,) device array to fill. A delete that
        :meth:`prepare` prepared wide runs ``small_remove_wide``.
        """
        nf, sizes, v, o = field_words(field_dtypes, values, outs)
        if self.prepared_wide:
            self._remove_wide(int(pieces), cache, accept, lookup, nf, sizes, v, o, degree,
                              size_class, edge_ptr)
            return
        name = "small_merge" if mode == MODE_INSERT else "small_remove"
        bases, field_bases, narrays = lookup_words(lookup)
        if self.direct_launch:
            # (capacity SMALL_ENTRIES, pieces numbered per segment, no pool)
            self._launch(name, 30)(int(pieces), REWRITE_THREADS, [
                self.workspace.data.ptr, SMALL_ENTRIES, 0, cache.rings.data.ptr,
                cache.state.data.ptr, cache.ring_slots, as_signed64(int(accept)), 0,
                degree.data.ptr, size_class.data.ptr, edge_ptr.data.ptr,
                bases, field_bases, narrays, nf, sizes, *v, *o])
            return
        function(_CU, name, _NAMES)(
            (int(pieces),), (REWRITE_THREADS,),
            (self.workspace, i64(SMALL_ENTRIES), np.int32(0), cache.rings, cache.state,
             i64(cache.ring_slots), np.uint64(accept), i64(0), degree, size_class, edge_ptr,
             i64(bases), i64(field_bases), i64(narrays), np.int32(nf), np.uint64(sizes),
             *[i64(x) for x in v], *[i64(x) for x in o]))

    def _remove_wide(self, pieces, cache, accept, lookup, nf, sizes, v, o, degree,
                     size_class, edge_ptr) -> None:
        """``small_remove_wide`` over ``pieces`` blocks (see :meth:`rewrite`)."""
        marks, serial = self._marks.next(pieces)
        bases, field_bases, narrays = lookup_words(lookup)
        if self.direct_launch:
            self._launch("small_remove_wide", REMOVE_WIDE_ARGS)(pieces, REWRITE_THREADS, [
                self.workspace.data.ptr, cache.rings.data.ptr,
                cache.state.data.ptr, cache.ring_slots, as_signed64(int(accept)), 0,
                degree.data.ptr, size_class.data.ptr, edge_ptr.data.ptr, marks, serial,
                bases, field_bases, narrays, nf, sizes, *v, *o])
            return
        function(_CU, "small_remove_wide", _NAMES)(
            (pieces,), (REWRITE_THREADS,),
            (self.workspace, cache.rings, cache.state,
             i64(cache.ring_slots), np.uint64(accept), i64(0), degree, size_class, edge_ptr,
             i64(marks), i64(serial), i64(bases), i64(field_bases), i64(narrays),
             np.int32(nf), np.uint64(sizes), *[i64(x) for x in v], *[i64(x) for x in o]))

    def spilled(self, count: int):
        """The old blocks the rewrite put on the spill list (int64 device view, (count,)):
        those of the classes whose rings did not take them, for the bit trees."""
        return self.workspace[SPILL_OFFSET:SPILL_OFFSET + int(count)]
