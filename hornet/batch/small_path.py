"""The small-batch path of a graph: a batch of a few thousand entries in two kernels.

A batch small enough (:data:`~hornet.batch.small_layout.SMALL_ENTRIES` entries on the GPU,
:data:`~hornet.batch.cpu.small.CPU_SMALL_ENTRIES` on the CPU, once mirrored) is prepared by
one kernel (:mod:`hornet.batch.gpu.small`, :mod:`hornet.batch.cpu.small`), whose header
(:mod:`hornet.batch.small_layout`) tells the host which blocks the batch takes from and gives
to the block cache (:mod:`hornet.memory.block_cache`); a second kernel rewrites the lists. A
GPU graph's first small batch fills the rings of the classes whose lists the kernels copy
within their class ahead (:meth:`~hornet.memory.block_cache.BlockCache.fill_copy_classes`);
a graph without edge properties rewrites without the block-array lookup, so that a batch
that made block arrays leaves its rebuild to the next batch's cache step. A GPU delete is
prepared wide (long lists rewritten in place by pieces side by side) once the graph has block
arrays of a class whose lists would be copied within it
(:data:`~hornet.batch.gpu.small.WIDE_MIN_CLASS`).
Anything this path does not take (other inputs, bad ids: the general pipeline then refuses
them with its usual message) returns None with nothing changed.

The functions take the graph (see :mod:`hornet.batch.pipeline` for the state they use).
"""
from __future__ import annotations

from itertools import compress
from operator import or_

import numpy as np

from .cpu.small import CPU_SMALL_ENTRIES, CpuSmallBatches, small_path_gate
from ..change import EdgeChange
from ..memory.manager import DeviceMemoryError
from .gpu.pairs import device_pairs
from .gpu.small import WIDE_MIN_CLASS, SmallBatches, rewrite_lookup
from .pipeline import compact_memory
from .small_layout import (H_CLASS, H_FREED, H_KEPT, H_LOOPS, H_MAX_ID, H_MIN_ID, H_MOVES,
                           H_PIECES, H_RESULTS, MAX_FIELDS, MODE_DELETE, MODE_INSERT,
                           NUM_CLASSES, SMALL_ENTRIES)
from .validate import MAX_VERTEX_ID, host_ids, property_values

__all__ = ["small_pairs", "small_update", "MODE_INSERT", "MODE_DELETE"]


def small_pairs(g, src, dst):
    """(src, dst) as contiguous int32 or int64 device arrays of one dtype (int64 on the
    CPU) when the batch can take the small-batch path (:mod:`hornet.batch.gpu.small`,
    :mod:`hornet.batch.cpu.small`): two 1-D integer NumPy or CuPy arrays of one length, at
    most SMALL_ENTRIES (GPU) or CPU_SMALL_ENTRIES (CPU) entries once mirrored, at most
    MAX_FIELDS - 1 edge properties, and on the CPU once the path's kernels are compiled or
    cached (:data:`hornet.batch.cpu.small.small_path_gate`). None otherwise (the general
    pipeline takes it)."""
    if dst is None or len(g._edge_schema) >= MAX_FIELDS:
        return None
    xp = g._xp
    arrays = (np.ndarray, xp.ndarray)
    if not (isinstance(src, arrays) and isinstance(dst, arrays)):
        return None
    if src.ndim != 1 or src.shape != dst.shape or not src.shape[0]:
        return None
    if src.dtype.kind not in "iu" or dst.dtype.kind not in "iu":
        return None
    limit = SMALL_ENTRIES if g.device == "gpu" else CPU_SMALL_ENTRIES
    if src.shape[0] * (1 if g.directed else 2) > limit:
        return None
    if g.device == "cpu":
        # the CPU kernels are compiled lazily (small_path_gate) and for int64 pairs only:
        # one compilation, for the cost of copying a thousand ids at most
        if not small_path_gate.take():
            return None
        return host_ids(src), host_ids(dst)
    return device_pairs(src, dst)


def small_update(g, mode, s, d, edge_props) -> EdgeChange | None:
    """Insert (MODE_INSERT) or delete (MODE_DELETE) a small batch with two kernels and
    the block cache (GPU: one read-back of counts; see :mod:`hornet.batch.gpu.small` and
    :mod:`hornet.batch.cpu.small`). Returns None,
    with nothing changed, when an id is out of range: the general pipeline then refuses
    the batch with its usual message."""
    xp, mm = g._xp, g._mm
    if g._small is None:
        g._small = SmallBatches() if g.device == "gpu" else CpuSmallBatches()
    cache = mm.block_cache()
    # one bounded step of the cache's refill per batch (BlockCache.top_up: a lookup rebuild
    # or a refill of a few rings), on the GPU while the device runs the prepare kernel and
    # the host would wait for its header
    if g.device == "gpu":
        header, rows = g._small.prepare(s, d, not g.directed, mode, g._degree, g._size_class,
                                        g._edge_ptr, mm.min_size_class, during=cache.top_up,
                                        wide=any(k >= WIDE_MIN_CLASS for k in mm.pools))
    else:
        cache.top_up()
        header, rows = g._small.prepare(s, d, not g.directed, mode, g._degree, g._size_class,
                                        g._edge_ptr, mm.min_size_class)
    header = header[:H_PIECES + 1].tolist()   # Python ints: cheaper to read one by one
    if header[H_MIN_ID] < 0 or header[H_MAX_ID] > MAX_VERTEX_ID:
        return None
    kind = "insert" if mode == MODE_INSERT else "delete"
    if mode == MODE_INSERT:
        values = property_values(edge_props, g._edge_schema, s.shape[0], xp)
        n = max(g._n, int(header[H_MAX_ID]) + 1)
        g._reserve(n)
    kept, nres = header[H_KEPT], header[H_RESULTS]
    outs = {name: xp.empty(nres, dtype=dt) for name, dt in g._edge_schema.items()}
    need = header[H_CLASS:H_CLASS + NUM_CLASSES]
    freed = header[H_FREED:H_FREED + NUM_CLASSES]
    # the few classes the batch takes blocks from or gives blocks to (counts are >= 0)
    touched = list(compress(range(NUM_CLASSES), map(or_, need, freed)))
    refills = cache.short_refills
    if kept and header[H_MOVES]:
        try:
            cache.reserve(need, touched)   # a ring short of blocks takes them from the trees
        except DeviceMemoryError:
            if mode == MODE_INSERT:
                raise
            # a delete is never refused for the smaller blocks its lists would move to: the
            # general pipeline deletes and leaves such lists in their blocks
            return None
    accept = cache.accepts(need, freed, touched)
    # ---- nothing above changed the graph; from here on the batch is committed ----
    g._views.clear()
    if mode == MODE_INSERT:
        g._n = n
    if kept:
        g._small.rewrite(mode, header[H_PIECES], cache, accept,
                            rewrite_lookup(mm) if g.device == "gpu" else mm.lookup(),
                            mm.field_dtypes,
                            [values[k] for k in g._edge_schema] if mode == MODE_INSERT
                            else [None] * len(g._edge_schema),
                            list(outs.values()), g._degree, g._size_class,
                            g._edge_ptr)
        spills = cache.commit(need, freed, accept, touched)
        # an array for a class short of room, while the device rewrites the lists (only
        # when neither top_up nor a ring found short took from the trees this batch: one
        # step of the cache's refill per batch)
        if cache.short_refills == refills:
            cache.grow_ahead()
        if g.device == "gpu" and not cache.copy_classes_filled:
            try:                           # (once per graph: its first small batch)
                cache.fill_copy_classes()
            except DeviceMemoryError:
                pass                       # the rings fill on demand, as without it
        g._entries += kept if mode == MODE_INSERT else -kept
        if spills:
            # released with a wait for its counts: the rewrite is the batch's last kernel, so
            # a deferred read saves no overlap here and its pinned copy and event cost more
            mm.release(g._small.spilled(spills))
        # a delete may leave lists loose without moving any: the list-fit check runs after
        # every delete, as in the general pipeline, so both paths refit on the same batches
        if mode == MODE_DELETE:
            compact_memory(g, lambda: _lost_entries(g, rows[:nres],
                                                    rows[SMALL_ENTRIES:SMALL_ENTRIES + nres]))
    return EdgeChange(kind, rows[:nres], rows[SMALL_ENTRIES:SMALL_ENTRIES + nres], outs,
                      int(header[H_LOOPS]) if mode == MODE_INSERT else 0)


def _lost_entries(g, src, dst):
    """The distinct vertices whose lists lost entries to a delete of the edges (src, dst)
    (an undirected graph's edges listed once: both ends), on the graph's device."""
    xp = g._xp
    ends = src if g.directed else xp.concatenate([src, dst])
    return xp.unique(ends)
