"""A mixed GPU batch planned on the device: inserts and deletes with one read-back.

:meth:`hornet.Graph.apply_edges` on a GPU graph (a sliding window's batch and expiry) plans
both halves against the vertex table as it is (:func:`hornet.batch.gpu.plan.plan_batch`,
side by side in two plan scratches) and reads both plans' counts back at once, with the
number of edges that the insert adds and the delete names. Where there is none (an edge in
both halves is then one the graph holds already, which the insert skips and the delete
removes), the result of the insert followed by the delete is:

- the delete's entries removed from their lists in place (the delete moves no list: a
  shrinking list stays in its block, as inside :meth:`hornet.Graph.steady_churn`, until the
  memory policy refits the loose lists, :func:`hornet.batch.pipeline.compact_memory`);
- the insert's entries merged into the lists that are left (its insertion points and old
  degrees less what the removal took: :func:`hornet.batch.gpu.plan.shift_for_removal`),
  the growing lists straight into the blocks of one allocation (taken by the device before
  the read-back where a planned insert's are, :data:`TAKES_AHEAD`);
- both plans written into the vertex table, the blocks given back in one release, the
  memory policy run once (decided from bounds where they settle it without the release's
  counts, :data:`COMPACTION_BOUND`);

for a graph without edge properties the removal and the merge are launched from the plans'
addresses, as a planned delete's and insert's are (:data:`ADDRESSED`),

and the two changes are the plans' own: the insert's new edges (with their property values)
and the delete's present edges (with the values they had), as the two calls give them.
Otherwise (an edge the insert adds and the delete removes, or anything the planned path does
not take) :func:`planned_apply` returns None with nothing changed, and the caller makes the
two calls.
"""
from __future__ import annotations

import numpy as np

from . import planned
from ..memory import compaction_bound
from .gpu import kernels as gpu_kernels
from .gpu.plan import (I_BAD, I_CLASS, I_SEGMENTS, I_TAKE_SHORT, _address, commit_plan,
                       count_common, place_moves, plan_batch, set_degrees, shift_for_removal)
from .gpu.queued_removal import queued_removal
from .pipeline import _field_columns, compact_memory, edge_change
from .planned import _change, _first_pairs, merge_from_plan
from .validate import check_ids

__all__ = ["planned_apply"]

_COMMON: list = []
#: the insert's blocks taken by the device before the read-back (within
#: :data:`hornet.batch.planned.PLANNED_INSERT_TAKES`, as a planned insert's); False: after it
TAKES_AHEAD = True
#: graphs without edge properties: the removal and the merge launched from the plans'
#: addresses (:mod:`hornet.batch.gpu.queued_removal`, :mod:`hornet.batch.gpu.prepared_merge`);
#: False: through CuPy views of the plans' rows
ADDRESSED = True
#: the delete's compaction decided from bounds where they settle it
#: (:mod:`hornet.memory.compaction_bound`); False: from the release's counts
COMPACTION_BOUND = True


def _common():
    """(device int64 (1,), pinned host int64 (1,)): the count of edges in both halves."""
    if not _COMMON:
        import cupy
        import cupyx
        _COMMON.append((cupy.zeros(1, dtype=cupy.int64), cupyx.empty_pinned(1, dtype=np.int64)))
    return _COMMON[0]


def _read_back(ins, dele, common) -> int:
    """Both plans' counts and the common count on the host (one synchronization); returns
    the common count."""
    import cupy
    ins.ws.copy_info()
    dele.ws.copy_info()
    dev, host = common
    stream = cupy.cuda.get_current_stream()
    cupy.cuda.runtime.memcpyAsync(host.ctypes.data, dev.data.ptr, 8,
                                  cupy.cuda.runtime.memcpyDeviceToHost, stream.ptr)
    stream.synchronize()
    return int(host[0])


def planned_apply(g, s, d, values: dict, ds, dd):
    """(insert change, delete change) of inserting the pairs ``s``, ``d`` with ``values``
    and then deleting the pairs ``ds``, ``dd`` (each from
    :func:`hornet.batch.planned.planned_pairs`), or None with nothing changed where the
    insert adds an edge that the delete names (the caller then makes the two calls).
    Raises :class:`hornet.batch.validate.BatchError` (graph unchanged) for ids outside
    [0, MAX_VERTEX_ID] in either half, and DeviceMemoryError (graph unchanged) when the
    insert's growing lists find no room."""
    from ..memory import gpu_take            # (GPU only: imported on the first mixed batch)
    mm, xp, K = g._mm, g._xp, g._K
    mirror = not g.directed
    per = 2 if mirror else 1
    entries = int(s.shape[0]) * per
    # the insert's blocks taken by the device before the read-back, as a planned insert's
    device_takes = planned.DEVICE_TAKES and entries <= planned.PLANNED_INSERT_TAKES
    if device_takes and TAKES_AHEAD:
        gpu_take.prepare(mm)
    table = (g._degree, g._size_class, g._edge_ptr, mm.min_size_class)
    pending_i = plan_batch(s, d, mirror, True, *table, slot=0, wait=False)
    pending_d = plan_batch(ds, dd, mirror, False, *table, keep_blocks=True, slot=1,
                           wait=False)
    ahead = None
    if device_takes and TAKES_AHEAD:
        info = pending_i.ws.info.data.ptr
        ahead = gpu_take.take_ahead(mm, info + 8 * I_CLASS, info + 8 * I_BAD,
                                    info + 8 * I_TAKE_SHORT, entries)
    common = _common()
    common[0].data.memset_async(0, 8)
    count_common(pending_i, entries, pending_d, int(ds.shape[0]) * per, common[0])
    both = _read_back(pending_i, pending_d, common)
    p = pending_i.finish(pending_i.ws.host)
    q = pending_d.finish(pending_d.ws.host)
    if ahead is not None and (p.bad or p.take_short or not p.moves):
        ahead = None                         # it took nothing: the blocks are taken below
    for plan, a, b in ((p, s, d), (q, ds, dd)):
        if plan.bad:
            if ahead is not None:
                gpu_take.give_back_ahead(mm, ahead, p.per_class)
            check_ids([(a.astype(xp.int64), "src"), (b.astype(xp.int64), "dst")], xp)
            raise AssertionError("the batch plan flagged an id that check_ids accepts")
    if both:
        if ahead is not None:
            gpu_take.give_back_ahead(mm, ahead, p.per_class)
        return None
    n = max(g._n, p.top)
    try:
        g._reserve(n)
    except BaseException:
        if ahead is not None:
            gpu_take.give_back_ahead(mm, ahead, p.per_class)
        raise
    if ahead is not None:
        pool, class_start = gpu_take.took_ahead(mm, ahead, p.per_class)
    elif p.moves:                                   # the only step that can fail
        pool, class_start = planned._take_blocks(mm, p, device_takes)
    if p.moves:
        place_moves(p, class_start, pool)
    # ---- nothing above changed the graph; from here on the batch is committed ----
    g._views.clear()
    g._n = n
    gone = {}
    # graphs without edge properties: the removal and the merge launched from the plans'
    # addresses (no CuPy view of the plans' rows, no argument conversion)
    plain = ADDRESSED and not g._edge_schema
    if q.kept and plain:
        ws = q.pending.ws
        info = ws.info.data.ptr
        queued_removal(_address(q, "old_ptr"), _address(q, "old_deg"),
                       _address(q, "seg_start"), _address(q, "seg_len"), _address(q, "at"),
                       q.segments, g._entries, mm.field_dtypes, info + 8 * I_SEGMENTS,
                       info + 8 * I_BAD)
    elif q.kept:
        columns = _field_columns(g, q.old_ptr)
        for f, (name, dt) in enumerate(g._edge_schema.items(), start=1):
            gone[name] = xp.empty(q.kept, dtype=dt)
            slots = xp.repeat(columns[f], q.seg_len) + dt.itemsize * q.at
            K.read_at(slots, gone[name])
        K.remove_lists(columns, columns, q.old_deg, q.seg_start, q.seg_len, q.at,
                       mm.field_dtypes, items=g._entries)
    change_values = {name: xp.empty(0, dtype=dt) for name, dt in g._edge_schema.items()}
    if p.kept:
        if q.kept:
            shift_for_removal(p, q)
        if plain and not gpu_kernels.MERGE_PIECES:
            merge_from_plan(p)
        else:
            kept_values = {}
            if g._edge_schema:
                first, kept_keys = _first_pairs(xp, s, d, p, mirror)
                kept_values = {name: values[name][first] for name in g._edge_schema}
                change_values = kept_values
                if p.once_src is not None:      # the change lists each edge once (src < dst)
                    once = xp.searchsorted(kept_keys, (p.once_src.astype(xp.int64) << 31)
                                           | p.once_dst.astype(xp.int64))
                    change_values = {name: v[once] for name, v in kept_values.items()}
            columns = _field_columns(g, p.old_ptr)
            moved_columns = _field_columns(g, p.seg_ptr) if p.moves else columns
            K.merge_lists(columns, moved_columns, p.old_deg, p.seg_start, p.seg_len, p.at,
                          [p.dst] + [kept_values[name] for name in g._edge_schema])
    # the delete's plan first: its new degrees count the insert's entries (shift_for_removal),
    # so a list it empties that the insert refills keeps its block; then the insert's (the
    # growing lists' new blocks and classes), then the insert's lists' degrees after both
    freed = [commit_plan(q, g._degree, g._size_class, g._edge_ptr, mm.min_size_class),
             commit_plan(p, g._degree, g._size_class, g._edge_ptr, mm.min_size_class)]
    if p.kept and q.kept:
        set_degrees(p, g._degree)
    freed = [f for f, plan in zip(freed, (q, p)) if f.size and plan.freed_slots]
    if freed:
        mm.release(freed[0] if len(freed) == 1 else xp.concatenate(freed), wait=False)
    g._entries += p.kept - q.kept
    if q.kept:
        # the slots the release on its way gives back at most (a list the delete empties
        # and the insert refills keeps its block: fewer), or None where an earlier release
        # is still on its way
        released = p.freed_slots + q.freed_slots
        if not released and mm._pending_release is not None:
            released = None
        if q.kept < compaction_bound.MIN_ENTRIES or not COMPACTION_BOUND:
            released = None
        compact_memory(g, q.sources, released_slots=released)
    inserted = _change(g, "insert", p, change_values, p.loops)
    if gone:
        deleted = edge_change(g, "delete", q.src, q.dst, gone)
    else:
        empty = {name: xp.empty(0, dtype=dt) for name, dt in g._edge_schema.items()}
        deleted = _change(g, "delete", q, empty, 0)
    return inserted, deleted
