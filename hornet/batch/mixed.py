"""A mixed batch: edges inserted, then edges deleted, in one graph call.

:meth:`hornet.Graph.apply_edges` gives the result of ``insert_edges`` followed by
``delete_edges`` (the same edges, property values and changes) for a caller that has both
at once, such as a replay's sliding window (the batch's edges in, the expired ones out).
On the CPU both halves take the fused pipelines (:mod:`hornet.batch.cpu.fused`,
:mod:`hornet.batch.cpu.remove_first`) inside one batch: both halves are checked before
anything changes (the delete is sorted after the insert, while the insert's lines are still
in cache), the blocks that the insert's growing lists leave go back with the delete's in one
release, and the memory policy (:func:`hornet.batch.pipeline.compact_memory`) and the
batch's bookkeeping run once. Elsewhere (GPU graphs, graphs with a vertex map,
batches that the small-batch path takes, the fused pipelines switched off) it is the two
calls.
"""
from __future__ import annotations

from . import pipeline
from .cpu.small import CPU_SMALL_ENTRIES
from .scope import batch_length, batch_scope
from .validate import BatchError, edge_batch, property_values
from ..memory.manager import DeviceMemoryError

__all__ = ["apply_edges"]


def apply_edges(g, insert, delete, edge_props: dict):
    """``(g.insert_edges(*insert, **edge_props), g.delete_edges(*delete))``, in one call
    where the CPU's fused pipelines take both (see the module docstring). ``insert`` and
    ``delete``: (src, dst) pairs of arrays as ``insert_edges`` takes them (``dst`` None:
    a table or an (E, 2) array). A refused batch (bad ids or properties in either half,
    memory for the insert) raises and leaves the graph unchanged; with a vertex map the
    delete's ids are looked up after the insert (it may name ids the insert adds), so
    only its insert is checked first."""
    if not _fused(g, insert, delete):
        if g.vertex_map is None:           # a delete refused for its ids: before the insert
            ds, dd, dprops, _ = edge_batch(*delete, {}, g._xp)
            if dprops:
                raise BatchError(f"delete_edges takes no properties, got {sorted(dprops)}")
            delete = (ds, dd)
        inserted = g.insert_edges(*insert, **edge_props)
        return inserted, g.delete_edges(*delete)
    with batch_scope(g, batch_length(insert[0]) + batch_length(delete[0])):
        xp, K = g._xp, g._K
        s, d, props, _ = edge_batch(*insert, edge_props, xp, check=False)
        values = property_values(props, g._edge_schema, s.shape[0], xp)
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
        left = left.copy()                     # (a view of the workspace the delete reuses)
        inside = (ds < n) & (dd < n)           # pairs past the id space name no edge
        if not inside.all():
            ds, dd = ds[inside], dd[inside]
        try:
            # sorted after the insert, while the insert's lines are still cached
            _, dss, dsd, _, dseg = K.sorted_unique_pairs(
                ds, dd, max(n, 1), not g.directed, need_order=False, ws=pipeline.scratch(g),
                segments=True)
        except MemoryError as exc:
            g._mm.release(left)
            raise DeviceMemoryError("out of memory sorting the deletes of apply_edges: its "
                                    "inserts went in, its deletes did not") from exc
        deleted = pipeline._delete_fused(g, dss, dsd, dseg, also_release=left)
    return inserted, deleted


def _fused(g, insert, delete) -> bool:
    """Whether the CPU's fused pipelines take both halves in one call: a CPU graph without
    a vertex map, both pipelines on, and an insert larger than the small-batch path takes
    (that path, with its block cache, is the faster one for those)."""
    if g.device != "cpu" or g.vertex_map is not None:
        return False
    if not (g._fused_insert and g._fused_delete):
        return False
    if insert[1] is None or delete[1] is None:      # tables and (E, 2) arrays: two calls
        return False
    entries = batch_length(insert[0]) * (1 if g.directed else 2)
    return not (g._small_batches and entries <= CPU_SMALL_ENTRIES)
