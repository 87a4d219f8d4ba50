"""Property updates of a directed GPU graph found by the batch paths' own lookups.

:meth:`hornet.Graph.update_edges` sets the properties of edges already present. The general
pipeline does it in a dozen CuPy steps, each sized for 10^7 edges and several reading a count
back; here a batch is looked up the way a delete of it would be, without deleting anything:

- a batch of at most :data:`~hornet.batch.small_layout.SMALL_ENTRIES` pairs by the small-batch
  path's ``small_prepare`` in delete mode (:mod:`hornet.batch.gpu.small`: one block sorts,
  drops repeats, first pair wins, and finds every pair in its source's list), whose header is
  the one read-back;
- a larger one by :func:`hornet.batch.gpu.plan.plan_batch` in delete mode (one read-back),
  each found entry's first batch pair from :func:`hornet.batch.planned._first_pairs`;

then every updated property's old values are read and the new ones written at the found
slots (a lookup of the field's column and two launches per property). Neither lookup changes
the graph: the lists, the vertex table and the memory manager are untouched, and the plan's
move counts are ignored.

The result equals the general pipeline's (:class:`~hornet.change.EdgeChange` of kind
``update``: the found edges sorted by (src, dst), their new values in ``properties`` and the
replaced ones in ``previous``). Undirected graphs, inputs these paths do not take and ids out
of range (so that the general pipeline refuses them with its message) return None.
"""
from __future__ import annotations

import os

from ..change import EdgeChange
from .deferred_path import settle
from .gpu.plan import plan_batch
from .gpu.small import SmallBatches
from .planned import _first_pairs, planned_pairs
from .small_layout import H_KEPT, H_MAX_ID, H_MIN_ID, HEADER_WORDS, MODE_DELETE, SMALL_ENTRIES
from .small_path import small_pairs
from .validate import MAX_VERTEX_ID, property_values

__all__ = ["found_update"]

_FOUND_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu", "found_write.cu")
_FOUND_NAMES = tuple(f"found_write<{t}>" for t in
                     ("unsigned char", "unsigned short", "unsigned int", "unsigned long long"))

# the small path's workspace (small_rewrite.cuh, Layout): after the header, the kept entries'
# src and dst (int32, SMALL_ENTRIES each), then their first pairs and positions (int64)
_PAIR_AT = HEADER_WORDS + SMALL_ENTRIES
_POS_AT = _PAIR_AT + SMALL_ENTRIES


def found_update(g, src, dst, edge_props: dict) -> EdgeChange | None:
    """Update the properties ``edge_props`` (name -> (E,) values or a scalar, as
    :meth:`hornet.Graph.update_edges` takes them) of the present edges among the pairs
    ``src``, ``dst`` (1-D integer NumPy or CuPy arrays of one length E) of the directed GPU
    graph ``g``; repeats: the first pair wins. Returns the update's EdgeChange (device
    arrays), or None with nothing changed when this path does not take the batch."""
    if g.device != "gpu" or not g.directed:
        return None
    small = small_pairs(g, src, dst) if g._small_batches else None
    if small is None and not g._planned_batches:
        return None
    xp = g._xp
    if small is not None:
        s, d = small
        values = property_values(edge_props, g._edge_schema, int(s.shape[0]), xp,
                                 fill_missing=False)
        if g._small is None:
            g._small = SmallBatches()
        # deferred inserts pending (hornet.batch.deferred_path): the lookup is queued behind
        # them on the vertex table as it stands, and they are settled once its header came
        # (no wait left: they ran before it); one that stalled did not run, so the lookup
        # is made again on the settled graph
        pending = bool(g._deferred_queue) and not g._queueing
        stalls = g._stalls
        if pending:
            header, rows = g._small.prepare(s, d, False, MODE_DELETE, g._degree_,
                                            g._size_class_, g._edge_ptr_,
                                            g._mm_.min_size_class)
            settle(g)
            if g._stalls != stalls:
                return found_update(g, src, dst, edge_props)
        else:
            header, rows = g._small.prepare(s, d, False, MODE_DELETE, g._degree,
                                            g._size_class, g._edge_ptr, g._mm.min_size_class)
        if header[H_MIN_ID] < 0 or header[H_MAX_ID] > MAX_VERTEX_ID:
            return None
        kept = int(header[H_KEPT])
        ws = g._small.workspace
        ss, dd = rows[:kept], rows[SMALL_ENTRIES:SMALL_ENTRIES + kept]
        first, pos = ws[_PAIR_AT:_PAIR_AT + kept], ws[_POS_AT:_POS_AT + kept]
    else:
        pairs = planned_pairs(g, src, dst, {}, False)
        if pairs is None:
            return None
        s, d, _ = pairs
        values = property_values(edge_props, g._edge_schema, int(s.shape[0]), xp,
                                 fill_missing=False)
        p = plan_batch(s, d, False, False, g._degree, g._size_class, g._edge_ptr,
                       g._mm.min_size_class)
        if p.bad:
            return None
        kept = p.kept
        if not kept:
            ss = dd = xp.empty(0, dtype=xp.int32)
            first = pos = xp.empty(0, dtype=xp.int64)
        else:
            ss, dd, pos = p.src, p.dst, p.at
            first, _ = _first_pairs(xp, s, d, p, False)
    return _write_found(g, ss, dd, first, pos, values)


def _write_found(g, ss, dd, first, pos, values: dict) -> EdgeChange:
    """Read the old and write the new values of the found entries (``ss``, ``dd`` int32
    (K,) sorted; ``first``: each entry's first batch pair, ``pos``: its position in its
    list, int (K,), device) for every property in ``values`` (name -> (E,) device column):
    one kernel per property (``found_write`` of found_write.cu: the slot's address through
    the memory manager's lookup, the old value read, the new one written)."""
    xp = g._xp
    names = list(g._edge_schema)
    new, previous = {}, {}
    k = int(ss.shape[0])
    if k:
        from ..core.cuda import function, item_type
        from ..memory.gpu_launch import launch
        ss = xp.ascontiguousarray(ss.astype(xp.int32, copy=False))
        pos = xp.ascontiguousarray(pos.astype(xp.int64, copy=False))
        first = xp.ascontiguousarray(first.astype(xp.int64, copy=False))
        lookup = g._mm.lookup()
        field_bases = lookup.dev_field_bases
    for name, column in values.items():
        dtype = g._edge_schema[name]
        kept = xp.empty(k, dtype=dtype)
        old = xp.empty(k, dtype=dtype)
        if k:
            column = xp.ascontiguousarray(column.astype(dtype, copy=False))
            fn = function(_FOUND_CU, f"found_write<{item_type(dtype)}>", _FOUND_NAMES)
            launch(fn, k, (ss, pos, first, k, g._edge_ptr, lookup.dev_bases,
                           lookup.bases.shape[0], field_bases, field_bases.shape[1],
                           names.index(name) + 1, column, kept, old))
        new[name], previous[name] = kept, old
    # ss, dd: the small path's fresh result rows or the plan's own arrays (no scratch)
    return EdgeChange("update", ss, dd, new, 0, previous)
