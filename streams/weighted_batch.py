"""An insert-only batch of a weighted replay without a window: new edges inserted with the
weight of their last event, edges present before the batch given that weight.

:func:`insert_latest` is called by :func:`streams.replay._apply_batch` for weighted streams
without an ``op`` column replayed without a window. The batch goes to the graph reversed, so
that the graph's first-occurrence rule for repeated pairs keeps each edge's last event: one
insert, and (when the graph inserted fewer edges than the batch has events) one update of
the whole batch, whose change is cut to the edges the insert did not add (they were
rewritten with the weight they had just been given), or, for a caller that watches nothing
between the calls, the update first and the insert after it, or both in one deferred batch of
a GPU graph (:meth:`hornet.Graph.deferred_upsert`, no wait) once the replay met a repeat
(before, the insert alone, as a deferred insert: :class:`LatestPath`). The graph calls take
the device's batch paths with the batch as it is: no host sort or set operation per batch,
and on the GPU one read-back per call plus the cut's count.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from hornet.batch.deferred_path import upsert_pairs

from .analytics import BatchChanges

__all__ = ["insert_latest", "LatestPath"]


class LatestPath:
    """A replay's choice for its weighted batches of more pairs than one deferred batch takes
    (a small batch's, or on the GPU a grid-prepared batch's) on a graph that defers inserts,
    made from what its earlier batches found: while every
    batch inserted one new edge per event (no repeats, no edge present before: streams of
    distinct edges), a batch goes as a deferred insert, whose length is read to confirm it
    (one wait); once a batch found otherwise, the replay's batches go as deferred upserts
    (no wait, but the device looks every pair up and writes the present ones' weights, chunk
    by chunk)."""

    #: batches of at most this many pairs go as upserts whatever came before: one deferred
    #: batch's upsert costs the device little, and the insert's length would be a wait
    #: (None: the most pairs one deferred upsert of the graph takes,
    #: ``hornet.batch.deferred_path.upsert_pairs``)
    min_pairs = None

    def __init__(self):
        self.upserts = False


def insert_latest(g, ch: BatchChanges, s, d, w, feed: Callable, *,
                  update_first: bool = False, path: LatestPath | None = None) -> None:
    """Apply the batch ``s``, ``d`` (host int arrays, self-loops dropped, canonical for
    undirected replays) with weights ``w`` (host float64, aligned) to the graph ``g``:
    ``ch.inserted`` the new edges (weight of their last event), ``ch.updated`` the edges
    present before the batch with their last event's weight (None when there are none);
    ``feed`` gets each change after the graph call that made it.

    ``path``: a :class:`LatestPath` (with ``update_first``, on a graph that defers inserts):
    the insert alone while the replay's batches held distinct new edges only.

    ``update_first``: update, then insert (the update then finds the edges present before
    the batch alone, and its change needs no cut), for a caller whose ``feed`` watches
    nothing (the changes and the graph are the same, only the graph between the two calls
    differs); it costs an update of a batch of new edges that the other order skips. A graph
    that defers inserts takes both in one deferred call where it can
    (``Graph.deferred_upsert``: ``ch.updated`` is then its pending update, possibly empty).
    """
    if update_first and (path is None or path.upserts or not _insert_first(g, s, path)):
        # a GPU graph that defers inserts: both in one deferred batch, no wait (it copies
        # what it keeps of the batch: reversed views)
        upsert = getattr(g, "deferred_upsert", None)
        both = upsert(s[::-1], d[::-1], {"weight": w[::-1]}) if upsert is not None else None
        if both is not None:
            ch.inserted, ch.updated = both
            return
    sr, dr, wr = s[::-1].copy(), d[::-1].copy(), w[::-1].copy()
    if update_first and path is not None and not path.upserts and _insert_first(g, s, path):
        # the insert first, the update only where it left events out, see LatestPath
        empty = g.num_edges == 0
        ch.inserted = g.insert_edges(sr, dr, weight=wr)
        if len(ch.inserted) < sr.shape[0]:
            path.upserts = True
            # (into an empty graph the insert's first occurrences are the batch's last
            # events: nothing present before, nothing to update)
            if not empty:
                updated = _without(g.update_edges(sr, dr, weight=wr), ch.inserted)
                if len(updated):
                    ch.updated = updated
        return
    if update_first:
        # (no deferred upsert took the batch) (an empty id space holds no edge; the edge
        # count would settle a GPU graph's pending inserts, which the update's lookup queues
        # behind instead)
        updated = g.update_edges(sr, dr, weight=wr) if g.num_vertices else None
        ch.inserted = g.insert_edges(sr, dr, weight=wr)
        feed(ch.inserted)
        if updated is not None and len(updated):
            ch.updated = updated
            feed(ch.updated)
        return
    ch.inserted = g.insert_edges(sr, dr, weight=wr)
    feed(ch.inserted)
    if len(ch.inserted) < sr.shape[0]:        # repeats, or edges present before the batch
        updated = _without(g.update_edges(sr, dr, weight=wr), ch.inserted)
        if len(updated):
            ch.updated = updated
            feed(ch.updated)


def _insert_first(g, s, path: LatestPath) -> bool:
    """Whether a batch of ``s.shape[0]`` pairs on graph ``g`` is one that :class:`LatestPath`
    sends as an insert first while its batches held distinct new edges: a graph that defers
    inserts, more pairs than one deferred upsert takes."""
    return getattr(g, "_deferred_batches", False) and s.shape[0] > (
        upsert_pairs(g) if path.min_pairs is None else path.min_pairs)


def _without(change, inserted):
    """``change`` (an EdgeChange) less the edges of ``inserted`` (both sorted by (src, dst),
    on one device): a searchsorted and one compaction, on the changes' device."""
    if not len(change) or not len(inserted):
        return change
    if isinstance(change.src, np.ndarray):
        xp = np
    else:
        import cupy as xp
    key = (change.src.astype(xp.int64) << 32) | change.dst.astype(xp.int64)
    gone = (inserted.src.astype(xp.int64) << 32) | inserted.dst.astype(xp.int64)
    at = xp.minimum(xp.searchsorted(gone, key), gone.shape[0] - 1)
    keep = xp.flatnonzero(gone[at] != key)
    if keep.shape[0] == key.shape[0]:
        return change
    return dataclasses.replace(change, src=change.src[keep], dst=change.dst[keep],
                               properties={k: v[keep] for k, v in change.properties.items()},
                               previous={k: v[keep] for k, v in change.previous.items()})
