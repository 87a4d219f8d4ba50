"""A mixed batch: edges inserted, then edges deleted, in one graph call.

:meth:`hornet.Graph.apply_edges` gives the result of ``insert_edges`` followed by
``delete_edges`` (the same edges, property values and changes) for a caller that has both
at once, such as a replay's sliding window (the batch's edges in, the expired ones out).
On the CPU both halves take the fused pipelines (:mod:`hornet.batch.cpu.fused`,
:mod:`hornet.batch.cpu.remove_first`) inside one batch: both halves are checked before
anything changes (the delete is sorted after the insert, while the insert's lines are still
in cache), the blocks that the insert's growing lists leave go back with the delete's in one
release, and the memory policy (:func:`hornet.batch.pipeline.compact_memory`) and the
batch's bookkeeping run once. A caller that deletes the edges of an earlier insert (a
sliding window) may keep them in the delete's sorted form (:class:`SortedEdges`) and spare
the delete its sort. On the GPU, batches past the small-batch path are planned together
on the device with one read-back (:mod:`hornet.batch.planned_mixed`). Elsewhere (graphs
with a vertex map, batches that the small-batch path takes, the fused or planned pipelines
switched off, and on the GPU an edge that the insert adds and the delete names) it is the
two calls.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import pipeline
from .cpu.small import CPU_SMALL_ENTRIES
from .planned import planned_pairs
from .planned_mixed import planned_apply
from .small_layout import SMALL_ENTRIES
from .scope import batch_length, batch_scope
from .validate import BatchError, edge_batch, property_values
from ..memory.manager import DeviceMemoryError

__all__ = ["apply_edges", "SortedEdges"]


@dataclass(frozen=True)
class SortedEdges:
    """Edges in the form a delete sorts its batch into: the stored entries (``src``,
    ``dst`` int32, both directions of an undirected edge) sorted by (src, dst), without
    repeats, of a graph that is ``directed`` or not. :func:`apply_edges` returns an
    insert's edges in this form on request (``keep_sorted``) and deletes edges given in it
    without sorting them again: a caller that deletes the edges of an earlier batch (a
    sliding window) keeps them meanwhile (8 bytes per stored entry)."""

    src: np.ndarray
    dst: np.ndarray
    directed: bool


def apply_edges(g, insert, delete, edge_props: dict, keep_sorted: bool = False):
    """``(g.insert_edges(*insert, **edge_props), g.delete_edges(*delete))``, in one call
    where the CPU's fused pipelines take both (see the module docstring). ``insert``:
    (src, dst) as ``insert_edges`` takes them (``dst`` None: a table or an (E, 2) array);
    ``delete``: the same, or a :class:`SortedEdges` of this graph's kind, or None (nothing
    deleted: the delete change is None). With ``keep_sorted`` a third item: the insert's
    distinct edges (new or present before; all present after the insert) as
    :class:`SortedEdges` when the fused pipelines took it, else None. A refused batch (bad
    ids or properties in either half, memory for the insert) raises and leaves the graph
    unchanged; with a vertex map the delete's ids are looked up after the insert (it may
    name ids the insert adds), so only its insert is checked first."""
    if isinstance(delete, SortedEdges):
        if delete.directed != g.directed:
            raise BatchError("SortedEdges of a directed graph for an undirected one, or the "
                             "other way round")
    if g.device == "gpu":
        changes = _planned(g, insert, delete, edge_props)
        if changes is not None:
            return (*changes, None) if keep_sorted else changes
    if not _fused(g, insert, delete):
        if isinstance(delete, SortedEdges):
            delete = (delete.src, delete.dst)
        elif delete is not None and g.vertex_map is None:   # a delete refused for its ids:
            ds, dd, dprops, _ = edge_batch(*delete, {}, g._xp)   # before the insert
            if dprops:
                raise BatchError(f"delete_edges takes no properties, got {sorted(dprops)}")
            delete = (ds, dd)
        inserted = g.insert_edges(*insert, **edge_props)
        deleted = None if delete is None else g.delete_edges(*delete)
        return (inserted, deleted, None) if keep_sorted else (inserted, deleted)
    plain = delete is not None and not isinstance(delete, SortedEdges)
    with batch_scope(g, batch_length(insert[0]) + (batch_length(delete[0]) if plain else 0)):
        xp, K = g._xp, g._K
        s, d, props, _ = edge_batch(*insert, edge_props, xp, check=False)
        values = property_values(props, g._edge_schema, s.shape[0], xp)
        if plain:
            ds, dd, dprops, _ = edge_batch(*delete, {}, xp)
            if dprops:
                raise BatchError(f"delete_edges takes no properties, got {sorted(dprops)}")
        # the insert's sort checks its ids and says how far the id space grows
        ss, sd, values, skipped, segments, top = pipeline.unique_pairs(
            g, s, d, g._n, values, segments=True, check_ids=True)
        n = max(g._n, top)
        g._reserve(n)
        inserted, left = pipeline.insert_fused_kept(g, ss, sd, values, skipped, segments, n)
        # ---- committed: the delete, checked already, cannot be refused ----
        # (fresh arrays, not the workspace's)
        kept = SortedEdges(ss, sd, g.directed) if keep_sorted else None
        deleted = None
        if delete is None:
            g._mm.release(left)
        elif isinstance(delete, SortedEdges):
            deleted = pipeline._delete_fused(g, *_inside(delete, n), None,
                                             also_release=left.copy())
        else:
            deleted = _delete_after(g, K, ds, dd, n, left.copy())
    return (inserted, deleted, kept) if keep_sorted else (inserted, deleted)


def _planned(g, insert, delete, edge_props: dict):
    """Both changes of a GPU mixed batch planned together (:mod:`hornet.batch.planned_mixed`),
    or None with nothing changed where that path does not take it: a graph with a vertex
    map or the planned path off, no delete, inputs the planned path does not take, both
    halves small enough for the small-batch path, or an edge that the insert adds and the
    delete names."""
    if g.vertex_map is not None or not g._planned_batches or delete is None:
        return None
    if isinstance(delete, SortedEdges):
        delete = (delete.src, delete.dst)
    if insert[1] is None or delete[1] is None:
        return None
    per = 1 if g.directed else 2
    ni, nd = batch_length(insert[0]), batch_length(delete[0])
    if g._small_batches and max(ni, nd) * per <= SMALL_ENTRIES:
        return None
    pairs = planned_pairs(g, *insert, edge_props, True)
    if pairs is None:
        return None
    del_pairs = planned_pairs(g, *delete, {}, False)
    if del_pairs is None:
        return None
    with batch_scope(g, ni + nd):
        return planned_apply(g, *pairs, *del_pairs[:2])


def _inside(edges: SortedEdges, n: int):
    """The entries of ``edges`` whose ids are below ``n`` (all of them for edges this graph
    held: sorted by src, and an undirected graph's entries go both ways)."""
    src, dst = edges.src, edges.dst
    if not src.shape[0] or (src[-1] < n and (not edges.directed or dst.max() < n)):
        return src, dst
    keep = (src < n) & (dst < n)
    return src[keep], dst[keep]


def _delete_after(g, K, ds, dd, n: int, left):
    """The delete half of a fused mixed batch: the pairs (``ds``, ``dd``, checked) sorted
    after the insert, while the insert's lines are still in cache, then deleted; ``left``:
    the blocks the insert's moved lists left, released with the delete's."""
    inside = (ds < n) & (dd < n)               # pairs past the id space name no edge
    if not inside.all():
        ds, dd = ds[inside], dd[inside]
    try:
        _, dss, dsd, _, dseg = K.sorted_unique_pairs(
            ds, dd, max(n, 1), not g.directed, need_order=False, ws=pipeline.scratch(g),
            segments=True)
    except MemoryError as exc:
        g._mm.release(left)
        raise DeviceMemoryError("out of memory sorting the deletes of apply_edges: its "
                                "inserts went in, its deletes did not") from exc
    return pipeline._delete_fused(g, dss, dsd, dseg, also_release=left)


def _fused(g, insert, delete) -> bool:
    """Whether the CPU's fused pipelines take both halves in one call: a CPU graph without
    a vertex map, both pipelines on, and an insert larger than the small-batch path takes
    (that path, with its block cache, is the faster one for those)."""
    if g.device != "cpu" or g.vertex_map is not None:
        return False
    if not (g._fused_insert and g._fused_delete):
        return False
    if insert[1] is None:                           # tables and (E, 2) arrays: two calls
        return False
    if delete is not None and not isinstance(delete, SortedEdges) and delete[1] is None:
        return False
    entries = batch_length(insert[0]) * (1 if g.directed else 2)
    return not (g._small_batches and entries <= CPU_SMALL_ENTRIES)
