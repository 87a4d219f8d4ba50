"""The batch pipeline's steps on one graph: the general and the fused updates (both devices).

:class:`hornet.Graph` owns the vertex table (``_degree`` int32, ``_size_class`` int8,
``_edge_ptr`` int64, one row per vertex id), the memory manager (``_mm``), the id space
(``_n``), the count of stored entries (``_entries``) and the cached adjacency views
(``_views``); the functions here take the graph and run a batch through the backend's kernels
(``_K``: :mod:`hornet.batch.cpu` or :mod:`hornet.batch.gpu`) in the order that keeps a refused
batch from changing anything: sort and deduplicate, find, plan, allocate (the only step that
can fail), then write the lists, the vertex table and the change.

- :func:`insert_prepared` / :func:`delete_prepared`: a checked batch into the graph. CPU
  graphs take the fused pipeline (:mod:`hornet.batch.cpu.fused`) unless
  ``Graph._fused_insert`` / ``_fused_delete`` is False, GPU graphs the general one (most GPU
  batches never get here: :mod:`hornet.batch.small_path` and :mod:`hornet.batch.planned`
  take them first);
- :func:`unique_pairs`, :func:`edge_change`, :func:`allocate_for`, :func:`compact_memory`,
  :func:`scratch`: steps that other updates of the graph share.
"""
from __future__ import annotations

import numpy as np

from ..change import EdgeChange
from ..memory.manager import DeviceMemoryError
from ..memory.repoint import repoint_moved

__all__ = ["insert_prepared", "delete_prepared", "unique_pairs", "edge_change",
           "allocate_for", "compact_memory", "scratch"]


def unique_pairs(g, s, d, n, values=None, segments: bool = False,
                 check_ids: bool = False):
    """Sort a batch by (src, dst), mirror it for undirected graphs, drop repeats (first
    wins). Returns (src int32, dst int32, values reordered to match, self-loops dropped);
    with ``segments`` (CPU) a fifth item, the segments found on the way or None; with
    ``check_ids`` (CPU) the ids are checked on the way and a last item is the id space
    they need (see :func:`hornet.batch.cpu.sort.sorted_unique_pairs`)."""
    mirror = not g.directed
    extra = {"segments": True} if segments else {}
    if check_ids:
        extra["check_ids"] = True
    order, ss, dd, loops, *rest = g._K.sorted_unique_pairs(
        s, d, n, mirror, need_order=bool(values), ws=scratch(g), **extra)
    if values:
        pair = order >> 1 if mirror else order
        values = {k: v[pair] for k, v in values.items()}
    return (ss, dd, values or {}, int(loops)) + tuple(rest)


def scratch(g):
    """The backend's reusable buffers for this graph's batch temporaries (CPU:
    :class:`hornet.batch.cpu.workspace.Workspace`, made on first use; GPU: None)."""
    ws = g.__dict__.get("_ws", False)
    if ws is False:
        ws = g._ws = g._K.workspace()
    return ws


def edge_change(g, kind, ss, dd, values, skipped=0, previous=None) -> EdgeChange:
    """The :class:`EdgeChange` of ``kind`` for the sorted entries ``ss``, ``dd`` (an undirected
    graph's mirrored entries reported once, src < dst) with their ``values`` and, for updates,
    the ``previous`` values."""
    previous = previous or {}
    if not g.directed:
        # a batch changes both directions of an undirected edge: symmetric entries
        once, ss, dd = g._K.canonical_pairs(ss, dd, ws=scratch(g), symmetric=True)
        values = {k: v[once] for k, v in values.items()}
        previous = {k: v[once] for k, v in previous.items()}
    return EdgeChange(kind, ss.astype(np.int32, copy=False), dd.astype(np.int32, copy=False),
                      values, skipped, previous)


def allocate_for(g, vertices, degrees):
    """New blocks for ``vertices`` holding ``degrees`` edges: (pointers, size classes).

    One batched allocation per size class (only per-class counts reach the host); all or
    nothing.
    """
    classes = g._mm.size_class_for(degrees)
    return g._mm.allocate_classes(classes), classes


def _retire(g, sources, new_deg, old_ptrs, moved, new_ptrs, new_classes,
            emptied=None) -> None:
    """Write a planned batch into the vertex table (its lists already rewritten) and free
    the blocks it left.

    ``sources`` (int32 (S,), distinct) get degrees ``new_deg`` (int64 (S,)); the segments
    ``moved`` (int64 indices, (G,)) now live in blocks ``new_ptrs`` of ``new_classes``
    (int64 (G,)); ``old_ptrs`` (int64 (S,)) are the pointers before the batch (0: no
    block); ``emptied`` (bool (S,), optional): segments left without edges.
    """
    xp = g._xp
    g._K.commit_segments(sources, new_deg, moved, new_ptrs, new_classes, g._degree,
                            g._size_class, g._edge_ptr)
    freed = old_ptrs[moved]
    if emptied is not None:
        freed = xp.concatenate([freed, xp.where(emptied, old_ptrs, 0)])
    # pointers 0 (no block before) are skipped; the per-array counts come back with the
    # next call that reads the allocator's bookkeeping (GPU), not at the end of this batch
    g._mm.release(freed, wait=False)


def _field_columns(g, ptrs):
    """Per edge field, the addresses of the blocks whose destination addresses are given."""
    return [g._mm.field_addresses(ptrs, f) for f in range(len(g._mm.field_dtypes))]


def _moved_field_columns(g, columns, moved, new_ptrs):
    """``columns`` (from :func:`_field_columns`) with the segments ``moved`` (int64 (G,))
    re-pointed to their new blocks ``new_ptrs``: only the moved lists are looked up."""
    out = []
    for f, col in enumerate(columns):
        col = col.copy()
        col[moved] = g._mm.field_addresses(new_ptrs, f)
        out.append(col)
    return out


#: inside ``Graph.steady_churn`` (deletes that the next inserts fill again: a sliding
#: window's expiry) the classes are compacted once in this many delete batches: the room a
#: delete gives back is taken again by the next batch's inserts, so giving it back batch
#: after batch moves blocks to and fro; the classes that the deletes in between touched wait
#: for the next compaction (the manager keeps them). The lists' refit is checked at every
#: delete, in the deletes in between without waiting for the counts of a release on its way
#: where the lists are within the band even with its blocks counted as holding lists
#: (1: compaction at every delete)
STEADY_COMPACT_EVERY = 4


def compact_memory(g, sources=None, released_slots: int | None = None) -> None:
    """After a delete batch: lists back into fitting blocks once they hold too many slots
    (:class:`hornet.memory.list_fit.ListFit`, a constant-time check), then the classes that
    gave blocks back since the last call compacted, the vertices of moved blocks re-pointed.
    Inserts do not call it: an insert leaves no list loose, and the holes that lists moving
    up leave are where the next lists moving up go; the classes it touched wait for the next
    delete, so that growth pays no compaction.

    ``sources`` (the distinct vertices whose lists lost entries in the batch, on the graph's
    device, or a callable returning them, or None): once the lists are loose, those lists
    are refitted first (work proportional to the batch: a list only loosens when it loses
    entries, so under steady churn the loose lists are the batch's), and the whole vertex
    table is scanned only if the lists are still loose. Every delete path passes the same
    vertices, so that they all leave the same lists in the same classes.

    ``released_slots`` (GPU): the slots that the batch's release, still on its way, gives
    back (0: it made none), from a caller that knows them; when bounds from the counts before
    it show that nothing would be refitted or compacted
    (:func:`hornet.memory.compaction_bound.settles_nothing`), the counts are not waited
    for.

    Inside steady churn (``mm.steady``) the classes are compacted once in
    :data:`STEADY_COMPACT_EVERY` calls (counted per graph)."""
    mm = g._mm
    between = False                  # a steady delete between two compactions
    if mm.steady and STEADY_COMPACT_EVERY > 1:
        waited = g.__dict__.get("_steady_deletes", 0) + 1
        g._steady_deletes = waited % STEADY_COMPACT_EVERY
        between = waited < STEADY_COMPACT_EVERY
    fit = mm.list_fit
    if between and fit.slots_per_entry is not None and \
            not fit.exceeds(mm.list_slots(settle=None), g._entries, True):
        return                       # (a release on its way counted as holding lists: no wait)
    if released_slots is not None:
        from ..memory.compaction_bound import settles_nothing
        if settles_nothing(mm, fit, g._entries,
                           released_slots if mm._pending_release is not None else 0, g._n):
            return
    if fit.loose(mm, g._entries):
        if callable(sources):
            sources = sources()
        if sources is not None and fit.slots_per_entry is not None:
            fit.refit(mm, g._degree, g._size_class, g._edge_ptr, g._n, g._entries,
                      candidates=sources)
        if sources is None or fit.loose(mm, g._entries):
            fit.refit(mm, g._degree, g._size_class, g._edge_ptr, g._n, g._entries)
    if between:
        return
    old, new = mm.compact_touched(rows=g._n)   # the re-pointing below passes over the table
    if old.size == 0:
        return
    if g.device == "cpu":
        repoint_moved(g._edge_ptr, g._size_class, g._n, mm.last_evacuated, old, new)
        return
    from ..memory.gpu_repoint import repoint_moved as repoint_moved_gpu
    repoint_moved_gpu(g._edge_ptr, g._size_class, g._n, mm.last_evacuated, old, new)


def insert_prepared(g, s, d, values, n) -> EdgeChange:
    """Insert a batch normalised by :func:`edge_batch`; ``n``: the id space it needs, or
    None when its ids are not checked yet (the CPU's fused insert, whose sort checks them
    on its way)."""
    xp, K = g._xp, g._K
    if g.device == "cpu" and g._fused_insert:
        ss, dd, values, skipped, segments, *top = unique_pairs(
        g,             s, d, g._n if n is None else n, values, segments=True, check_ids=n is None)
        n = max(g._n, top[0]) if n is None else n
        g._reserve(n)
        return _insert_fused(g, ss, dd, values, skipped, segments, n)
    g._reserve(n)
    ws = scratch(g)
    ss, dd, values, skipped = unique_pairs(g, s, d, n, values)
    pos = K.find_positions(ss, dd, g._degree, g._edge_ptr, g._n, ws=ws)
    kept, ss, dd, insert_at = K.keep_entries(pos, ss, dd, True, bool(values), ws=ws)
    if kept is not None:
        values = {k: v[kept] for k, v in values.items()}
    sources, seg_start, seg_len, old_deg, new_deg, old_ptrs, grow = K.plan_segments(
        ss, g._degree, g._size_class, g._edge_ptr, True, g._mm.min_size_class,
        ws=ws)
    grown = xp.flatnonzero(grow)
    new_ptrs, new_classes = allocate_for(g, sources[grown], new_deg[grown])
    # ---- nothing above changed the graph; from here on the batch is committed ----
    g._views.clear()
    g._n = n
    columns = _field_columns(g, old_ptrs)      # growing lists merge straight into new blocks
    K.merge_lists(columns, _moved_field_columns(g, columns, grown, new_ptrs), old_deg,
                  seg_start, seg_len, insert_at,
                  [dd] + [values[name] for name in g._edge_schema])
    _retire(g, sources, new_deg, old_ptrs, grown, new_ptrs, new_classes)
    g._entries += int(dd.shape[0])
    return edge_change(g, "insert", ss, dd, values, skipped)


def _edge_fields(g, dst, columns: dict):
    """The edge fields of a fused CPU batch (:class:`hornet.batch.cpu.fused.EdgeFields`):
    the block arrays' columns, and the batch columns ``dst`` then ``columns[name]`` per
    property (contiguous host arrays of the property's dtype, aligned with the batch's
    entries; the kernels read or write them in place)."""
    if not g._edge_schema:
        return None
    batch = [dst] + [columns[name] for name in g._edge_schema]
    lookup = g._mm.lookup()
    return g._K.EdgeFields.of(lookup.bases, lookup.field_bases, batch)


def _insert_fused(g, ss, dd, values, skipped, segments, n) -> EdgeChange:
    """CPU insert (see :mod:`hornet.batch.cpu.fused`):
    plan (searching only the lists that may outgrow their block, and none of those
    while few entries turn out present: see ``Graph._defer_full_present``), allocate, then
    search-and-merge every list, every edge field, in one pass."""
    change, left = insert_fused_kept(g, ss, dd, values, skipped, segments, n)
    g._mm.release(left)
    return change


def insert_fused_kept(g, ss, dd, values, skipped, segments, n):
    """:func:`_insert_fused` without giving back the blocks that the moved lists left:
    returns (the change, those blocks: int64 (L,), a workspace view valid until the graph's
    next insert; the caller releases them)."""
    K, mm, ws = g._K, g._mm, scratch(g)
    values = {name: np.ascontiguousarray(values[name], dtype=dt)
              for name, dt in g._edge_schema.items()}
    sources, seg_start, old_deg, old_ptr, new_deg, new_class, pos, requests = \
        K.plan_insert(ss, dd, g._degree, g._size_class, g._edge_ptr, n,
                      mm.min_size_class, ws=ws, segments=segments,
                      defer_full=g._present_share <= g._defer_full_present)
    moving = int(requests[0].sum())
    # the allocation is the only step of a fused batch that can fail: before any write
    pool = mm.allocate_counts(requests[0]) if moving else None
    fields = _edge_fields(g, dd, values)      # after the allocation: new arrays included
    # ---- nothing above changed the graph; from here on the batch is committed ----
    g._views.clear()
    g._n = n
    inserted, freed = K.merge_insert(sources, seg_start, old_deg, old_ptr, new_deg,
                                     new_class, dd, pos, n, g._degree,
                                     g._size_class, g._edge_ptr,
                                     requests if moving else None, pool, fields, ws=ws)
    g._entries += inserted
    g._present_share = 1.0 - inserted / max(ss.shape[0], 1)
    s_out, d_out, *index = K.changed_pairs(pos, ss, dd, g.directed, False,
                                           with_index=bool(values))
    props = {name: v[index[0]] for name, v in values.items()}
    return EdgeChange("insert", s_out, d_out, props, skipped), freed


def delete_prepared(g, s, d, top: int) -> EdgeChange:
    """``top``: the batch's largest id + 1 (pairs with ids past the graph's are absent)."""
    xp, K = g._xp, g._K
    if top > g._n:
        inside = (s < g._n) & (d < g._n)
        s, d = s[inside], d[inside]
    ws = scratch(g)
    if g.device == "cpu" and g._fused_delete:
        ss, dd, _, _, segments = unique_pairs(g, s, d, max(g._n, 1), segments=True)
        return _delete_fused(g, ss, dd, segments)
    ss, dd, _, _ = unique_pairs(g, s, d, max(g._n, 1))
    pos = K.find_positions(ss, dd, g._degree, g._edge_ptr, g._n, ws=ws)
    _, ss, dd, pos = K.keep_entries(pos, ss, dd, False, ws=ws)
    sources, seg_start, seg_len, old_deg, new_deg, old_ptrs, shrink = K.plan_segments(
        ss, g._degree, g._size_class, g._edge_ptr, False, g._mm.min_size_class,
        ws=ws)
    shrunk = xp.flatnonzero(shrink)
    new_ptrs, new_classes = allocate_for(g, sources[shrunk], new_deg[shrunk])
    # ---- committed from here on ----
    g._views.clear()
    columns = _field_columns(g, old_ptrs)
    gone = {}
    for f, (name, dt) in enumerate(g._edge_schema.items(), start=1):
        gone[name] = xp.empty(ss.shape[0], dtype=dt)
        slots = xp.repeat(columns[f], seg_len) + dt.itemsize * pos
        K.read_at(slots, gone[name])
    # shrinking lists move straight to new blocks
    K.remove_lists(columns, _moved_field_columns(g, columns, shrunk, new_ptrs), old_deg,
                   seg_start, seg_len, pos, g._mm.field_dtypes, items=g._entries)
    g._entries -= int(ss.shape[0])
    _retire(g, sources, new_deg, old_ptrs, shrunk, new_ptrs, new_classes,
                 emptied=new_deg == 0)
    compact_memory(g, sources)
    return edge_change(g, "delete", ss, dd, gone)


def _delete_planned(g, ss, dd, segments=None) -> EdgeChange:
    """The planned CPU delete (``plan_delete``, the smaller blocks allocated before anything
    is written, then ``remove_fused``): no graph takes it; it is the oracle of the storage
    that :func:`_delete_fused` leaves (tests/test_remove_first.py). Same arguments and result."""
    K, mm, ws = g._K, g._mm, scratch(g)
    sources, seg_start, old_deg, old_ptr, new_deg, new_class, pos = K.plan_delete(
        ss, dd, g._degree, g._size_class, g._edge_ptr, g._n, mm.min_size_class, ws=ws,
        segments=segments)
    per_class, counts, _ = K.block_requests(new_class, old_ptr)
    target = old_ptr if not per_class.any() else \
        K.place_blocks(new_class, counts, mm.allocate_counts(per_class), ws=ws)
    gone = {name: np.empty(ss.shape[0], dtype=dt) for name, dt in g._edge_schema.items()}
    fields = _edge_fields(g, dd, gone)
    g._views.clear()
    removed, freed = K.remove_fused(sources, seg_start, old_deg, old_ptr, new_deg, new_class,
                                    target, dd, pos, g._n, g._degree, g._size_class,
                                    g._edge_ptr, fields, ws=ws)
    g._entries -= int(removed.sum())
    mm.release(freed)
    compact_memory(g, lambda: sources[removed > 0])
    s_out, d_out, *index = K.changed_pairs(pos, ss, dd, g.directed, True,
                                           with_index=bool(gone))
    return EdgeChange("delete", s_out, d_out, {n: v[index[0]] for n, v in gone.items()}, 0)


def _delete_fused(g, ss, dd, segments=None, ws=None, also_release=None) -> EdgeChange:
    """CPU delete (see :mod:`hornet.batch.cpu.remove_first`): search-and-remove every list in
    place, every edge field, in one pass; then the lists left under a quarter of their block
    move to smaller blocks (one allocation; should it fail they keep their blocks, a valid
    graph either way), except inside ``steady_churn``, where they keep their blocks (see
    :data:`hornet.memory.list_fit.STEADY_LOOSE_SHARE`). Nothing can refuse the batch once
    it is checked and sorted. ``ws``: the workspace of its temporaries (default: the
    graph's); ``also_release``: further blocks to give back with the delete's (int64)."""
    K, mm = g._K, g._mm
    ws = scratch(g) if ws is None else ws
    # the removed entries' property values land here (aligned with the batch)
    gone = {name: np.empty(ss.shape[0], dtype=dt) for name, dt in g._edge_schema.items()}
    fields = _edge_fields(g, dd, gone)
    # ---- from here on the batch is committed ----
    g._views.clear()
    sources, seg_start, pos, removed, freed, mover_class = K.remove_in_place(
        ss, dd, g._n, mm.min_size_class, g._degree, g._size_class, g._edge_ptr, fields,
        ws=ws, segments=segments)
    g._entries -= int(removed.sum())
    try:
        if not mm.steady:                  # (steady churn: shrinking lists keep their blocks)
            K.move_down(sources, mover_class, mm.allocate_counts, g._degree, g._size_class,
                        g._edge_ptr, freed,
                        lambda: _edge_fields(g, dd, gone) or K.EdgeFields.destinations_only(dd))
    except DeviceMemoryError:
        pass                               # the lists keep their blocks (see remove_first)
    if also_release is not None and also_release.shape[0]:
        freed = np.concatenate((freed, also_release))
    mm.release(freed)                      # pointers 0 (list kept its block) are skipped
    compact_memory(g, lambda: sources[removed > 0])
    s_out, d_out, *index = K.changed_pairs(pos, ss, dd, g.directed, True,
                                           with_index=bool(gone))
    props = {name: v[index[0]] for name, v in gone.items()}
    return EdgeChange("delete", s_out, d_out, props, 0)
