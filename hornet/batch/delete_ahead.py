"""A medium GPU delete queued ahead of the graph's next call, with no read-back of its own.

A caller that deletes a medium batch and then makes another graph call (a sliding window's
expiry before the batch's insert) can queue the delete's kernels without waiting for them:
:func:`delete_ahead` plans the pairs on the device (the medium path's kernels,
:meth:`hornet.batch.gpu.medium.MediumBatches.queue`) and queues the removal right behind the
plan, its grids sized by bounds (the rewrite kernels read the true numbers of short lists
and of pieces from the device's header and stride over them), and the release of the blocks
of the lists it empties (a spill list cleared first: the unused slots name no block). Every
list shrinks in its block (the graph must be inside ``Graph.steady_churn``), so the delete
takes no block. Its header is copied to the host in stream order; the next call's own
read-back (or :meth:`PendingDelete.finish`'s wait) brings it, and ``finish`` then does the
bookkeeping: the entry count, the memory policy (:func:`hornet.batch.pipeline.compact_memory`)
and the delete's change. Between the two the graph's vertex table is the delete's (later
kernels run after it in stream order) while its entry count still includes the deleted
entries (an upper bound, as the batch paths read it).

The pairs must be valid ids (non-negative, at most ``MAX_VERTEX_ID``: the caller's own, such
as edges it inserted earlier): the queued removal cannot be refused afterwards.
"""
from __future__ import annotations

import numpy as np

from ..change import EdgeChange
from .gpu.medium import MediumBatches
from .pipeline import compact_memory
from .scope import batch_scope
from .small_layout import (H_KEPT, H_MIN_ID, H_PIECES, H_RESULTS, H_SEGMENTS, MAX_FIELDS,
                           MODE_DELETE)

__all__ = ["delete_ahead", "PendingDelete", "MAX_ENTRIES"]

#: most entries (pairs, twice that many when mirrored) of a delete queued ahead: past the
#: medium path's own limit (``MEDIUM_ENTRIES``, where its one warp per short list starts to
#: cost the device more than the planned path's rewrite) the host work it saves weighs more
MAX_ENTRIES = 1 << 18
#: blocks of the rewrite kernel of long lists (one piece a block at a time, striding over the
#: header's number of pieces): a steady delete cuts no list into pieces, and lists past a
#: warp's share of items are few
PIECE_BLOCKS = 128


class PendingDelete:
    """A delete queued by :func:`delete_ahead`; :meth:`finish` completes it."""

    def __init__(self, g, ws, once, outs: dict, event):
        self.g, self.ws, self.once, self.outs, self.event = g, ws, once, outs, event

    def finish(self) -> EdgeChange:
        """The delete's bookkeeping once its header is on the host (waits for it if no later
        call has): the graph's entry count, the memory policy, and the change (the edges
        deleted, with their property values)."""
        g, ws = self.g, self.ws
        self.event.synchronize()
        header = ws.header.tolist()
        if header[H_MIN_ID] < 0 or header[H_PIECES] > ws.capacity:
            raise AssertionError("a delete queued ahead named an invalid id or outgrew its "
                                 "workspace")
        kept, nres, nseg = header[H_KEPT], header[H_RESULTS], header[H_SEGMENTS]
        g._views.clear()
        if kept:
            with batch_scope(g, kept):
                g._entries -= kept
                compact_memory(g, lambda: ws.sources(nseg))
        if self.once is not None:
            half = self.once.shape[0] // 2
            src, dst = self.once[:nres], self.once[half:half + nres]
        else:
            src, dst = ws.kept_pairs(kept)
        return EdgeChange("delete", src, dst, {k: v[:nres] for k, v in self.outs.items()}, 0)


def delete_ahead(g, s, d) -> PendingDelete | None:
    """Queue the delete of the pairs ``s``, ``d`` (int32 contiguous CuPy arrays (n,), valid
    ids, at most :data:`MAX_ENTRIES` entries once mirrored) from the GPU graph ``g`` inside its
    ``steady_churn``, without waiting (see the module docstring); None, with nothing queued,
    where this does not apply (another device, a vertex map, the medium path off, outside
    steady churn, other inputs, too many entries or edge properties)."""
    if g.device != "gpu" or g.vertex_map is not None or not g._medium_batches:
        return None
    mm = g._mm
    if not mm.steady or len(g._edge_schema) >= MAX_FIELDS:
        return None
    xp = g._xp
    if not (isinstance(s, xp.ndarray) and isinstance(d, xp.ndarray)):
        return None
    if s.ndim != 1 or s.shape != d.shape or s.dtype != np.int32 or d.dtype != np.int32:
        return None
    if not (s.flags.c_contiguous and d.flags.c_contiguous):
        return None
    mirror = not g.directed
    entries = int(s.shape[0]) * (2 if mirror else 1)
    if not 0 < entries <= MAX_ENTRIES:
        return None
    ws = _workspace(g)
    ws._reserve(entries)
    spill = ws.spilled(entries)
    spill.data.memset_async(0, entries * 8)      # (slots no emptied list fills: no block)
    once = ws.queue(s, d, mirror, MODE_DELETE, True, g._degree, g._size_class, g._edge_ptr,
                    mm.min_size_class)
    outs = {name: xp.empty(entries, dtype=dt) for name, dt in g._edge_schema.items()}
    ws.rewrite(MODE_DELETE, entries, min(entries, PIECE_BLOCKS), None, mm.lookup(),
               mm.field_dtypes, [None] * len(g._edge_schema), list(outs.values()),
               g._degree, g._size_class, g._edge_ptr)
    mm.release(spill, wait=False)
    ws.copy_header()
    event = xp.cuda.Event(disable_timing=True)
    event.record()
    g._views.clear()
    return PendingDelete(g, ws, once, outs, event)


def _workspace(g) -> MediumBatches:
    """The graph's workspace of deletes queued ahead (apart from its medium batches': both
    are read after the next call)."""
    ws = getattr(g, "_delete_ahead", None)
    if ws is None:
        ws = g._delete_ahead = MediumBatches()
    return ws
