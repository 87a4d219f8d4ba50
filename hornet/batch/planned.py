"""GPU batches planned on the device: insert and delete with one read-back before the rewrite.

A GPU batch too large for the small-batch path (:mod:`hornet.batch.small_path`) is planned by
:func:`hornet.batch.gpu.plan.plan_batch` (validation fused with packing the sort keys,
deduplication, the lookups, the kept entries, the segments, the lists that move and their
counts per size class, all on the device, one read of the counts), then takes the blocks of
the moving lists (a delete's by the device, :func:`hornet.memory.gpu_take.allocate_on_device`:
the plan's per-class counts, already on the device, pick the block arrays that give them;
the host checks each class's room from its per-class counts and grows a short class first;
an insert's from the memory manager, see :data:`PLANNED_INSERT_TAKES`; one kernel hands
each moving list its block), rewrites the lists
(:func:`hornet.batch.gpu.kernels.merge_lists` / ``remove_lists``; an insert without edge
properties through prepared launches from the plan's addresses,
:mod:`hornet.batch.gpu.prepared_merge`) straight into their blocks,
and writes the vertex table and lists the old blocks in one kernel, in the general pipeline's
refuse-before-writing order. The old blocks go back to the bit trees without a wait: their
per-array counts reach the memory manager's bookkeeping with the next call that reads it
(:meth:`hornet.memory.manager.MemoryManager.release`), so an insert synchronizes once, at the
plan's read-back; a plan that frees no block makes no release.

A delete into a graph without edge properties (:data:`QUEUED_REMOVAL`, up to
:data:`QUEUED_REMOVAL_MAX` entries) queues its removal behind the plan's read-back
(:func:`_queue_removal`): every list of the plan loses its entries in place while the host
waits for the counts and plans the rest (refit, blocks, commit), and the lists that then move
to smaller blocks are copied there (one kernel, :func:`hornet.batch.gpu.kernels.copy_lists`).
Its launches are made from the plan's addresses (:mod:`hornet.batch.gpu.queued_removal`).
Nothing but a bad id refuses a delete, and the device skips the removal then. A delete that
the memory policy may refit (:func:`_may_refit`, a host bound before the plan) is not queued:
its refit plan would wait for the removal, and its moving lists would be written twice.

A delete after which the memory policy will refit the lists of its sources
(:func:`hornet.batch.pipeline.compact_memory`, decided from host counts once the plan is
read back) is planned again with those lists moving to their fitting blocks
(:func:`hornet.batch.gpu.plan.refit_plan`): the refit is the batch's own allocation and
rewrite instead of a second allocation, copy and release after it.

An insert into a graph with edge properties carries its property columns through the same
pass: after the plan, each kept entry finds the first batch pair that stands for it (a lookup
among the kept keys and a scatter-min, no host synchronization), and the merge writes every
field of the new entries as the general pipeline does.

Anything else (property columns on a delete, other inputs, empty batches, batches of more
than :data:`~hornet.batch.gpu.plan.MAX_ENTRIES` entries) returns None from
:func:`planned_pairs`, and the general pipeline takes the batch.
"""
from __future__ import annotations

import os

import numpy as np

from ..change import EdgeChange
from ..memory.manager import DeviceMemoryError
from .gpu import kernels as gpu_kernels
from .gpu.kernels import copy_lists
from .gpu.prepared_merge import prepared_merge
from .gpu.pairs import device_pairs
from .gpu.queued_removal import queued_removal
from .gpu.plan import (I_BAD, I_CLASS, I_SEGMENTS, I_TAKE_SHORT, MAX_ENTRIES, BatchPlan,
                       _address, commit_plan, place_moves, plan_batch, refit_plan)
from .pipeline import _field_columns, compact_memory, edge_change
from .validate import check_ids, property_values

__all__ = ["planned_pairs", "planned_update"]

#: the moving lists' blocks are taken by the device (hornet.memory.gpu_take); False (or the
#: environment variable HORNET_DEVICE_TAKES=0): by the host's allocation
#: (MemoryManager.allocate_counts)
DEVICE_TAKES = os.environ.get("HORNET_DEVICE_TAKES", "1") != "0"
#: planned inserts of at most this many entries (once mirrored) take their blocks on the
#: device too, before the read-back when they can (0: none; deletes and medium batches take
#: theirs on the device whatever their size). The host's allocation of a large insert's
#: blocks lies on its critical path after the read-back; above this size the inserts grow
#: block arrays often enough that making the device's free counts again for the new arrays
#: (hornet.memory.gpu_take.prepare) costs about what the host's allocation does
#: (bench/tools/ab_takes_gpu.py, bench/tools/knob_ab_gpu.py)
PLANNED_INSERT_TAKES = 1 << 20
#: deletes into graphs without edge properties queue the removal behind the plan's
#: read-back (:func:`_queue_removal`); False (or the environment variable
#: HORNET_QUEUED_REMOVAL=0): the removal is launched after it
QUEUED_REMOVAL = os.environ.get("HORNET_QUEUED_REMOVAL", "1") != "0"
#: ... for batches of at most this many entries (once mirrored): every planned delete. The
#: removal's per-segment scratch (hornet.batch.gpu.kernels._MoveScratch, five int64 rows) is
#: then sized for the batch's entries, not its segments (1.3 GB for 2 x 10^7 entries, as the
#: plan's own scratch is); a delete of 10^7 edges on Kronecker 24 takes 0.91-0.98 of the
#: time with its removal queued (bench/results/delete_latency_gpu.md)
QUEUED_REMOVAL_MAX = MAX_ENTRIES
#: a queued removal's moving lists are copied whole by one kernel (one block a list)
QUEUED_COPY = True
#: inserts into graphs without edge properties merge through prepared launches from the
#: plan's addresses (hornet.batch.gpu.prepared_merge); False: through
#: hornet.batch.gpu.kernels.merge_lists (CuPy views of the plan's rows)
PREPARED_MERGE = True
#: deletes that the memory policy may refit (:func:`_may_refit`) are not queued
QUEUED_UNLESS_REFIT = True
#: planned deletes of at least this many kept entries decide their refit and compaction from
#: bounds (:func:`hornet.memory.compaction_bound.settles_nothing`) without waiting for their
#: release's counts when the bounds settle it (the counts are taken in by the next call that
#: reads them): every planned delete (bench/results/latency_spikes_gpu.md). (Mixed batches
#: keep ``compaction_bound.MIN_ENTRIES``.)
BOUND_MIN_ENTRIES = 0
#: the queued removal launched from the plan's addresses (hornet.batch.gpu.queued_removal);
#: False: through hornet.batch.gpu.kernels.remove_lists (CuPy views of the plan's rows)
QUEUED_LAUNCH = True


def planned_pairs(g, src, dst, edge_props: dict, inserting: bool):
    """``(src, dst, values)`` when a GPU batch can be planned on the device: ``src``,
    ``dst`` two 1-D integer NumPy or CuPy arrays of one non-zero length, at most
    :data:`~hornet.batch.gpu.plan.MAX_ENTRIES` entries once mirrored, made contiguous int32
    or int64 CuPy arrays of one dtype; ``values``: inserting, the checked property columns
    of every declared edge property (missing ones 0, :func:`property_values`: a bad column
    raises here, before anything changed), each (E,) on the device; deleting, ``{}`` (a
    delete given property values is refused by the general pipeline). None otherwise."""
    if g.device != "gpu" or dst is None:
        return None
    if edge_props and not inserting:
        return None
    xp = g._xp
    arrays = (np.ndarray, xp.ndarray)
    if not (isinstance(src, arrays) and isinstance(dst, arrays)):
        return None
    if src.ndim != 1 or src.shape != dst.shape or not src.shape[0]:
        return None
    if src.shape[0] * (1 if g.directed else 2) > MAX_ENTRIES:
        return None
    if src.dtype.kind not in "iu" or dst.dtype.kind not in "iu":
        return None
    values = {}
    if inserting and (edge_props or g._edge_schema):
        values = property_values(edge_props, g._edge_schema, int(src.shape[0]), xp)
    src, dst = device_pairs(src, dst)
    return src, dst, values


def _first_pairs(xp, s, d, p, mirror: bool):
    """For every kept entry of plan ``p``, the index of the first pair of the batch
    ``s``, ``d`` that stands for it (a batch's repeats: the first occurrence wins, as in the
    general pipeline). Returns (first int32 (kept,), kept keys int64 (kept,) ascending:
    ``src << 31 | dst``). A few launches, no host synchronization: each pair is looked up
    among the kept keys (both directions when ``mirror``) and the smallest pair index is
    scattered to its entry (pairs that are not kept go to a spare slot)."""
    kept_keys = (p.src.astype(xp.int64) << 31) | p.dst.astype(xp.int64)
    n = int(s.shape[0])
    first = xp.full(p.kept + 1, n, dtype=xp.int32)
    pair = xp.arange(n, dtype=xp.int32)
    a, b = s.astype(xp.int64), d.astype(xp.int64)
    for u, v in ((a, b), (b, a)) if mirror else ((a, b),):
        key = (u << 31) | v
        at = xp.minimum(xp.searchsorted(kept_keys, key), p.kept - 1)
        at = xp.where(kept_keys[at] == key, at, p.kept)
        xp.minimum.at(first, at, pair)
    return first[:p.kept], kept_keys


def planned_update(g, inserting: bool, s, d, values=None) -> EdgeChange:
    """Insert (``inserting``) or delete the pairs ``s``, ``d`` (from :func:`planned_pairs`);
    an insert stores ``values`` (name -> (E,) device column of every declared edge property,
    from :func:`planned_pairs`; the first occurrence of a repeated pair wins) in the new
    entries' fields, rewritten in the same pass as the destinations.
    Raises :class:`hornet.batch.validate.BatchError` (graph unchanged) for ids outside
    [0, MAX_VERTEX_ID], with the general pipeline's message."""
    from ..memory import gpu_take            # (GPU only: imported on the first planned batch)
    mm = g._mm
    entries = int(s.shape[0]) * (1 if g.directed else 2)
    device_takes = DEVICE_TAKES and (not inserting or entries <= PLANNED_INSERT_TAKES)
    if inserting and device_takes:
        gpu_take.prepare(mm)
    # inside steady churn a delete leaves shrinking lists in their blocks
    # (hornet.memory.list_fit.STEADY_LOOSE_SHARE)
    queued = (QUEUED_REMOVAL and not inserting and not g._edge_schema and
              entries <= QUEUED_REMOVAL_MAX and not _may_refit(g, entries))
    p = plan_batch(s, d, not g.directed, inserting, g._degree, g._size_class, g._edge_ptr,
                   mm.min_size_class, keep_blocks=not inserting and bool(mm.steady),
                   wait=not (inserting and device_takes) and not queued)
    ahead = None
    if queued:
        p = _queue_removal(g, p)
    elif not isinstance(p, BatchPlan):     # an insert's blocks taken before the read-back
        ws = p.ws
        info = ws.info.data.ptr
        ahead = gpu_take.take_ahead(mm, info + 8 * I_CLASS, info + 8 * I_BAD,
                                    info + 8 * I_TAKE_SHORT, p.entries)
        p = p.finish(ws.readback())
    if p.bad:                            # (a take ahead took nothing)
        xp = g._xp
        check_ids([(s.astype(xp.int64), "src"), (d.astype(xp.int64), "dst")], xp)
        raise AssertionError("the batch plan flagged an id that check_ids accepts")
    kind = "insert" if inserting else "delete"
    if ahead is not None and (p.take_short or not p.moves):
        ahead = None                     # it took nothing: the blocks are taken below
    if inserting:
        n = max(g._n, p.top)
        try:
            g._reserve(n)
        except BaseException:
            if ahead is not None:
                gpu_take.give_back_ahead(mm, ahead, p.per_class)
            raise
    if not inserting and p.kept and not mm.steady and _refits(g, p):
        p = refit_plan(p, g._degree, g._size_class, g._edge_ptr, mm.min_size_class)
    if ahead is not None:
        pool, class_start = gpu_take.took_ahead(mm, ahead, p.per_class)
    elif p.moves:
        try:
            pool, class_start = _take_blocks(mm, p, device_takes)   # the only step that can fail
        except DeviceMemoryError:
            if not (p.refit or queued):
                raise
            # the refit finds no room: the delete alone (ListFit.refit moves nothing then);
            # a queued removal is done already: then its lists keep their blocks
            p = _replanned(g, p, refit=False, keep_blocks=not p.refit)
            if p.moves:
                try:
                    pool, class_start = _take_blocks(mm, p, device_takes)
                except DeviceMemoryError:
                    if not queued:
                        raise
                    p = _replanned(g, p, refit=False, keep_blocks=True)
    if p.moves:
        place_moves(p, class_start, pool)            # the moving lists' blocks: p.seg_ptr
    # ---- nothing above changed the graph (but a queued removal, which no delete past its
    # plan refuses); from here on the batch is committed ----
    g._views.clear()
    if inserting:
        g._n = n
    if not p.kept:
        empty = {name: g._xp.empty(0, dtype=dt) for name, dt in g._edge_schema.items()}
        return _change(g, kind, p, empty, p.loops if inserting else 0)
    K = g._K
    prepared = (inserting and PREPARED_MERGE and not g._edge_schema and
                not gpu_kernels.MERGE_PIECES)
    if prepared:
        columns = moved_columns = None           # (the merge takes the plan's addresses)
    else:
        columns = _field_columns(g, p.old_ptr)
        # growing / shrinking lists are rewritten straight into their new blocks
        moved_columns = _field_columns(g, p.seg_ptr) if p.moves else columns
    if inserting:
        kept_values, change_values = {}, {}
        if g._edge_schema:
            xp = g._xp
            first, kept_keys = _first_pairs(xp, s, d, p, not g.directed)
            kept_values = {name: values[name][first] for name in g._edge_schema}
            change_values = kept_values
            if p.once_src is not None:          # the change lists each edge once (src < dst)
                once = xp.searchsorted(kept_keys, (p.once_src.astype(xp.int64) << 31)
                                       | p.once_dst.astype(xp.int64))
                change_values = {name: v[once] for name, v in kept_values.items()}
        if prepared:            # (the destination column: its addresses are the pointers)
            merge_from_plan(p)
        else:
            K.merge_lists(columns, moved_columns, p.old_deg, p.seg_start, p.seg_len, p.at,
                          [p.dst] + [kept_values[name] for name in g._edge_schema],
                          items=g._entries)
        g._entries += p.kept
        # inserts leave no list loose and do not compact (hornet.batch.pipeline.compact_memory)
        _commit(g, p)
        return _change(g, kind, p, change_values, p.loops)
    xp = g._xp
    gone = {}
    for f, (name, dt) in enumerate(g._edge_schema.items(), start=1):
        gone[name] = xp.empty(p.kept, dtype=dt)
        slots = xp.repeat(columns[f], p.seg_len) + dt.itemsize * p.at
        K.read_at(slots, gone[name])
    if queued:                   # removed in place already: the moving lists are copied
        if p.moves and QUEUED_COPY:
            copy_lists([p.old_ptr], [p.seg_ptr], p.new_deg, p.moved, p.moves, mm.field_dtypes)
        elif p.moves:
            none = g._xp.zeros(p.moves, dtype=g._xp.int64)     # (a removal of nothing)
            K.remove_lists([p.old_ptr[p.moved]], [p.seg_ptr[p.moved]], p.new_deg[p.moved],
                           none, none, none, mm.field_dtypes, items=g._entries)
    else:
        K.remove_lists(columns, moved_columns, p.old_deg, p.seg_start, p.seg_len, p.at,
                       mm.field_dtypes, items=g._entries)
    g._entries -= p.kept
    _commit(g, p)
    # the release on its way is this batch's (freed_slots) or, freeing none, there is none
    released = p.freed_slots if p.freed_slots or g._mm._pending_release is None else None
    if p.kept < BOUND_MIN_ENTRIES:
        released = None
    compact_memory(g, p.sources, released_slots=released)
    if gone:
        return edge_change(g, kind, p.src, p.dst, gone)
    return _change(g, kind, p, {}, 0)


def _may_refit(g, entries: int) -> bool:
    """Whether a delete of ``entries`` entries may be refitted (:func:`_refits`), from host
    counts before its plan: a delete gives back at least the slots its moving lists take
    (each moves to a smaller class), so the lists hold at most the slots they hold now
    (a release still on its way counted as held unless its counts have landed), for at
    least the entries now less the batch's. False under steady churn (no refit). Only with :data:`QUEUED_UNLESS_REFIT`:
    a refit plan read back behind a queued removal waits for it, and the removal's moving
    lists are then copied once more (the removal after the read-back writes them straight
    into their new blocks)."""
    mm = g._mm
    if not QUEUED_UNLESS_REFIT or mm.steady:
        return False
    return mm.list_fit.exceeds(mm.list_slots(settle=None), g._entries - entries, False)


def _replanned(g, p, refit: bool, keep_blocks: bool) -> BatchPlan:
    return refit_plan(p, g._degree, g._size_class, g._edge_ptr, g._mm.min_size_class,
                      refit=refit, keep_blocks=keep_blocks)


def _queue_removal(g, pending) -> BatchPlan:
    """The delete plan ``pending`` (queued, not read back) read back behind an event, with
    the removal queued after it: every list of the plan loses its entries in place
    (:func:`hornet.batch.gpu.kernels.remove_lists`, the number of segments read on the
    device, nothing touched when the plan flags a bad id), and the device runs it while the
    host takes the counts and plans the rest. The lists that the plan moves are copied to
    their new blocks afterwards. Returns the plan."""
    ws = pending.ws
    copied = ws.copy_info_event()
    e = pending.entries
    info = ws.info.data.ptr
    if QUEUED_LAUNCH:
        # the plan's rows (plan.py: _launch_plan): at 3, seg_start 4, seg_len 7, old_deg 8,
        # old_ptr 10
        row, step = ws.wide.data.ptr, ws.capacity * 8
        queued_removal(row + 10 * step, row + 8 * step, row + 4 * step, row + 7 * step,
                       row + 3 * step, e, g._entries, g._mm.field_dtypes,
                       info + 8 * I_SEGMENTS, info + 8 * I_BAD)
    else:
        rows = ws.rows
        old_ptr = rows[10][:e]
        g._K.remove_lists([old_ptr], [old_ptr], rows[8][:e], rows[4][:e], rows[7][:e],
                          rows[3][:e], g._mm.field_dtypes, items=g._entries,
                          counted=(info + 8 * I_SEGMENTS, info + 8 * I_BAD))
    copied.synchronize()
    return pending.finish(ws.host)


def merge_from_plan(p: BatchPlan) -> None:
    """The destination column's merge of the planned insert ``p`` (a graph without edge
    properties), launched from the addresses of its plan's rows
    (:func:`hornet.batch.gpu.prepared_merge.prepared_merge`); no host synchronization."""
    prepared_merge(_address(p, "old_ptr"), _address(p, "seg_ptr" if p.moves else "old_ptr"),
                   _address(p, "old_deg"), _address(p, "seg_start"), _address(p, "seg_len"),
                   _address(p, "at"), p.dst.data.ptr, p.segments, p.dst.dtype)


def _take_blocks(mm, p, device: bool):
    """The blocks of the plan ``p``'s moving lists: (pool, class starts), as
    :func:`~hornet.batch.gpu.plan.place_moves` takes them. ``device``: the device decides
    which block arrays give them, from the plan's per-class counts where they are on the
    device (:func:`hornet.memory.gpu_take.allocate_on_device`); else the host's allocation.
    Raises DeviceMemoryError (nothing taken)."""
    if device:
        from ..memory.gpu_take import allocate_on_device
        return allocate_on_device(mm, p.per_class, p.pending.ws.info.data.ptr + 8 * I_CLASS)
    pool = mm.allocate_counts(p.per_class)
    class_start = np.zeros(p.per_class.shape[0], dtype=np.int64)
    np.cumsum(p.per_class[:-1], out=class_start[1:])
    return pool, class_start


def _refits(g, p) -> bool:
    """Whether the memory policy refits the lists of the delete plan ``p``'s sources once
    the batch is in (:func:`hornet.batch.pipeline.compact_memory`: the lists are loose
    past the reference ratio): the slots the lists hold after the batch are the slots now,
    plus the moving lists' new blocks, less the blocks that moving or emptied lists give
    back (host counts only). Then :func:`refit_plan` makes that refit part of the batch."""
    mm = g._mm
    fit = mm.list_fit
    if fit.slots_per_entry is None:
        return False
    grown = sum(int(c) << k for k, c in enumerate(p.per_class.tolist()) if c)
    return fit.exceeds(mm.list_slots() + grown - p.freed_slots, g._entries - p.kept,
                       bool(mm.steady))


def _commit(g, p) -> None:
    """The plan ``p`` into the vertex table (its lists already rewritten), and the blocks
    that moved or emptied lists left given back to the memory manager, whose per-array counts
    come back with the next call that reads them (no synchronization here)."""
    freed = commit_plan(p, g._degree, g._size_class, g._edge_ptr, g._mm.min_size_class)
    if p.freed_slots:            # (none: every pointer is 0, no block goes back)
        g._mm.release(freed, wait=False)      # pointers 0 (no block given back) are skipped


def _change(g, kind: str, p, values: dict, skipped: int) -> EdgeChange:
    """The batch's :class:`EdgeChange` from the plan: an undirected graph's kept edges once
    (src < dst, as the plan listed them), a directed graph's kept entries."""
    if p.once_src is not None:
        return EdgeChange(kind, p.once_src, p.once_dst, values, skipped, {})
    if p.src is None:
        e = g._xp.empty(0, dtype=g._xp.int32)
        return EdgeChange(kind, e, e.copy(), values, skipped, {})
    return EdgeChange(kind, p.src, p.dst, values, skipped, {})
