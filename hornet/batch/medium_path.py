"""The medium-batch path of a GPU graph: batches past the small path, one read-back each.

A GPU insert of more than :data:`~hornet.batch.small_layout.SMALL_ENTRIES` and at most
:data:`~hornet.batch.gpu.medium.MEDIUM_ENTRIES` entries (once mirrored; deletes too when the
graph's ``medium_deletes`` is set, see :class:`hornet.Graph`) is prepared on the device into
the small path's header and workspace layout (:mod:`hornet.batch.gpu.medium`), read back once;
the blocks of the moving lists are taken by the device from the per-class counts before the
read-back (:func:`hornet.memory.gpu_take.take_ahead`; after it, through
:func:`~hornet.memory.gpu_take.allocate_on_device`, when a class is short or the device's
free counts are not current), into a pool the kernels index by class and rank; the lists
are rewritten by one
warp per short list and one block per piece of a long one, and the old blocks go back to the
bit trees without a wait. Blocks are taken and given back as on the planned path, so that
memory follows the graph as it does there: the block cache's rings, the small path's reserve,
are left alone (a medium batch needs thousands of blocks of a class, more than a reserve sized
for small batches holds). Anything this path does not take (other inputs, bad ids, a batch
whose rewrite pieces overflow the workspace) returns None with nothing changed, and the
planned path (:mod:`hornet.batch.planned`) takes the batch, refusing bad ones with its usual
message.

The functions take the graph (see :mod:`hornet.batch.pipeline` for the state they use).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..change import EdgeChange
from ..memory.manager import DeviceMemoryError
from .gpu.medium import H_TAKE_SHORT, MEDIUM_ENTRIES, MediumBatches
from .gpu.plan import I_BAD
from .gpu.pairs import device_pairs
from .gpu.small import rewrite_lookup
from .pipeline import compact_memory
from . import planned
from .planned import _first_pairs
from .small_layout import (H_CLASS, H_FREED, H_KEPT, H_LOOPS, H_MAX_ID, H_MIN_ID, H_PIECES,
                           H_RESULTS, H_SEGMENTS, H_WARPS, MAX_FIELDS, MODE_INSERT,
                           NUM_CLASSES, SMALL_ENTRIES)
from .validate import MAX_VERTEX_ID, property_values

__all__ = ["medium_pairs", "medium_update"]


class _NotHere(Exception):
    """The batch does not fit this path's workspace (the planned path takes it)."""


def medium_pairs(g, src, dst):
    """(src, dst) as contiguous int32 or int64 device arrays of one dtype when a GPU batch
    can take the medium-batch path: two 1-D integer NumPy or CuPy arrays of one length, more
    than SMALL_ENTRIES and at most MEDIUM_ENTRIES entries once mirrored, at most
    MAX_FIELDS - 1 edge properties. None otherwise."""
    if g.device != "gpu" or dst is None or len(g._edge_schema) >= MAX_FIELDS:
        return None
    xp = g._xp
    arrays = (np.ndarray, xp.ndarray)
    if not (isinstance(src, arrays) and isinstance(dst, arrays)):
        return None
    if src.ndim != 1 or src.shape != dst.shape:
        return None
    if src.dtype.kind not in "iu" or dst.dtype.kind not in "iu":
        return None
    entries = src.shape[0] * (1 if g.directed else 2)
    if not SMALL_ENTRIES < entries <= MEDIUM_ENTRIES:
        return None
    return device_pairs(src, dst)


def medium_update(g, mode, s, d, edge_props) -> EdgeChange | None:
    """Insert (MODE_INSERT) or delete (MODE_DELETE) a medium batch (pairs from
    :func:`medium_pairs`). Returns None, with nothing changed, when an id is out of range or
    the batch's rewrite does not fit the workspace: the planned path then takes it."""
    from ..memory import gpu_take            # (GPU only: imported on the first medium batch)
    xp, mm = g._xp, g._mm
    if g._medium is None:
        g._medium = MediumBatches()
    ws = g._medium
    inserting = mode == MODE_INSERT
    # inside steady churn a delete leaves shrinking lists in their blocks, as the planned
    # path does (hornet.memory.list_fit.STEADY_LOOSE_SHARE)
    keep_blocks = not inserting and bool(mm.steady)
    # (such a delete moves no list: it takes no blocks, so none are taken ahead)
    takes = planned.DEVICE_TAKES and not keep_blocks
    ahead = []
    if takes:
        gpu_take.prepare(mm)

    def take_ahead(info, head, entries):
        """The moving lists' blocks taken by the device before the read-back (nothing
        when the batch is refused or a class is short: see gpu_take.take_ahead)."""
        ahead.append(gpu_take.take_ahead(mm, head + 8 * H_CLASS, info + 8 * I_BAD,
                                         head + 8 * H_TAKE_SHORT, entries))

    header, once = ws.prepare(s, d, not g.directed, mode, keep_blocks, g._degree,
                              g._size_class, g._edge_ptr, mm.min_size_class,
                              take_ahead if takes else None)
    header = header.tolist()                  # Python ints: cheaper to read one by one
    if header[H_MIN_ID] < 0 or header[H_MAX_ID] > MAX_VERTEX_ID:
        return None                           # (a take ahead took nothing)
    kept, nres, nseg = header[H_KEPT], header[H_RESULTS], header[H_SEGMENTS]
    need = np.asarray(header[H_CLASS:H_CLASS + NUM_CLASSES], dtype=np.int64)
    moves = bool(kept and need.any())
    took = ahead[0] if ahead and moves and not header[H_TAKE_SHORT] else None
    kind = "insert" if inserting else "delete"
    try:
        if header[H_PIECES] > ws.capacity:
            raise _NotHere
        if inserting:
            values = property_values(edge_props, g._edge_schema, s.shape[0], xp)
            n = max(g._n, int(header[H_MAX_ID]) + 1)
            g._reserve(n)
    except BaseException as exc:
        if took is not None:
            gpu_take.give_back_ahead(mm, took, need)
        if isinstance(exc, _NotHere):
            return None
        raise
    outs = {name: xp.empty(nres, dtype=dt) for name, dt in g._edge_schema.items()}
    pool = None
    if took is not None:
        pool, _ = gpu_take.took_ahead(mm, took, need)
    elif moves:
        try:
            if planned.DEVICE_TAKES:
                pool, _ = gpu_take.allocate_on_device(mm, need, ws.workspace.data.ptr +
                                                      8 * H_CLASS)
            else:
                pool = mm.allocate_counts(need)
        except DeviceMemoryError:
            return None                        # the planned path decides (and may refuse)
    # ---- nothing above changed the graph; from here on the batch is committed ----
    g._views.clear()
    if inserting:
        g._n = n
    if kept:
        if inserting and g._edge_schema:
            ks, kd = ws.view(0, kept, np.int32), ws.view(0.5, kept, np.int32)
            first, _ = _first_pairs(xp, s, d, SimpleNamespace(src=ks, dst=kd, kept=kept),
                                    not g.directed)
            ws.set_first_pairs(first)
        ws.rewrite(mode, header[H_WARPS], header[H_PIECES], pool, rewrite_lookup(mm),
                   mm.field_dtypes,
                   [values[k] for k in g._edge_schema] if inserting
                   else [None] * len(g._edge_schema),
                   list(outs.values()), g._degree, g._size_class, g._edge_ptr)
        spills = sum(header[H_FREED:H_FREED + NUM_CLASSES])
        g._entries += kept if inserting else -kept
        if spills:
            # the counts come back with the next call that reads them (as on the planned path);
            # in stream order: the next batch's kernels, which reuse the spill list, come after
            mm.release(ws.spilled(spills), wait=False)
        if not inserting:
            compact_memory(g, lambda: ws.sources(nseg))
    if once is not None:
        half = once.shape[0] // 2
        src, dst = once[:nres], once[half:half + nres]
    else:
        src, dst = ws.kept_pairs(kept)
    return EdgeChange(kind, src, dst, outs, int(header[H_LOOPS]) if inserting else 0)
