"""An insert-only batch of a windowed replay applied to the graph: the inserts, the refreshes
of ``weight`` (weighted streams) and the window's record, in work proportional to the batch.

The graph stores no event index: the window keeps the latest refresh of each edge itself
(:mod:`streams.window`), so that the graph update of a windowed batch is that of the same
batch without a window. :func:`insert_refresh` is called by
:func:`streams.replay._apply_batch` for streams without an ``op`` column replayed with a
sliding window; :func:`last_seen` is the window's look-up of the graph for streams that
delete edges too (their graph carries ``last_seen``).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .analytics import BatchChanges, to_host
from .window import EventWindow
from .window_index import (NO_ENTRY, REFRESH, classify_events, classify_one_extra, edge_keys,
                           key_sum)

__all__ = ["insert_refresh", "last_seen"]


def insert_refresh(g, ch: BatchChanges, s, d, idx, w, window: EventWindow,
                   feed: Callable) -> None:
    """An insert-only batch of a windowed replay: the batch's new edges inserted (with the
    ``weight`` of their last event), present edges refreshed (their ``weight`` set to that of
    their last event), and the window's record of the events that set an edge's most recent
    event index, marked new or refresh.

    ``s``, ``d`` (host, self-loops dropped, canonical for undirected replays), ``idx``
    (int64, ascending: their event indices), ``w`` (float64 weights, or None: unweighted).
    Weighted batches go to the graph reversed, so that the insert's first-occurrence rule
    stores each new edge's last weight. When the graph inserted one edge per event (no
    repeats, nothing present: the usual case of a wide id space), every event is recorded
    as new as it is; when one event inserted nothing, the sums of the batch's and the
    inserted edges' keys name it (:func:`streams.window_index.classify_one_extra`);
    otherwise one pass with hash tables over the batch and the inserted edges
    (:func:`streams.window_index.classify_events`) finds each edge's last event.
    """
    if w is None:
        ch.inserted = g.insert_edges(s, d)
    else:
        ch.inserted = g.insert_edges(np.ascontiguousarray(s[::-1]),
                                     np.ascontiguousarray(d[::-1]),
                                     weight=np.ascontiguousarray(w[::-1]))
    feed(ch.inserted)
    if len(ch.inserted) == s.shape[0]:
        window.record(s, d, idx, refresh=np.zeros(s.shape[0], dtype=bool))
        return
    ins = ch.inserted
    keys = edge_keys(s, d)
    if s.shape[0] - len(ins) == 1:
        # one event inserted nothing: the key sums name it (the usual case of a wide id
        # space: a repeat or a present edge now and then)
        extra = (int(keys.view(np.uint64).sum()) - key_sum(ins.src, ins.dst, g.directed)) \
            % (1 << 64)
        kind = classify_one_extra(keys, extra)
    else:
        a, b = to_host(ins.src), to_host(ins.dst)
        if not g.directed:
            a, b = np.minimum(a, b), np.maximum(a, b)
        kind = classify_events(keys, edge_keys(a, b))
    mark = kind != NO_ENTRY
    refresh = kind == REFRESH
    if w is not None and refresh.any():
        ch.updated = g.update_edges(s[refresh], d[refresh], weight=w[refresh])
        feed(ch.updated)
    window.record(s[mark], d[mark], idx[mark], refresh=refresh[mark])


def last_seen(g, src: np.ndarray, dst: np.ndarray):
    """(found, last_seen) of the edges (src[i], dst[i]), host arrays."""
    found, values = g.edge_values(src, dst, names=["last_seen"])
    return to_host(found), to_host(values["last_seen"])
