"""An insert-only batch of a windowed replay applied to the graph: inserts, refreshes of
``last_seen`` (and ``weight``) and the window's record, in work proportional to the batch.

:func:`insert_refresh` is called by :func:`streams.replay._apply_batch` for streams without an
``op`` column replayed with a sliding window; :func:`last_seen` is the window's look-up of
the graph (:meth:`streams.window.EventWindow.expired`).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .analytics import BatchChanges, to_host
from .window import EventWindow

__all__ = ["insert_refresh", "last_seen"]


def insert_refresh(g, ch: BatchChanges, s, d, idx, w, start: int, n: int,
                    window: EventWindow, feed: Callable) -> None:
    """An insert-only batch of a windowed replay: every edge ends up with the ``last_seen``
    (and ``weight``) of its last event in the batch, in work proportional to the batch and
    without sorting it on the host.

    ``s``, ``d`` (host, self-loops dropped, canonical for undirected replays), ``idx``
    (int64, ascending: their event indices), ``w`` (weights or None); ``start``, ``n``: the
    batch's first event index and event count. The batch goes to the graph reversed, so
    that the insert's first-occurrence rule keeps each new edge's last event; the events it
    did not insert (a later event of the same edge was inserted, or the edge was present)
    are read back and the present edges refreshed with their last event (an edge inserted
    by this batch already has ``last_seen >= start``). The window records the events that
    set ``last_seen``, in index order, and which of them were refreshes (only the edges
    those name need a look-up when they leave the window).
    """
    props = {"last_seen": idx[::-1]}
    if w is not None:
        props["weight"] = w[::-1]
    ch.inserted = g.insert_edges(np.ascontiguousarray(s[::-1]), np.ascontiguousarray(d[::-1]),
                                 **{k: np.ascontiguousarray(v) for k, v in props.items()})
    feed(ch.inserted)
    # event -> set last_seen, indexed by event index - start (self-loops stay False)
    setter = np.zeros(n, dtype=bool)
    setter[to_host(ch.inserted.properties["last_seen"]) - start] = True
    pos = idx - start
    rest = ~setter[pos]
    if rest.any():
        rs, rd, ri = s[rest][::-1], d[rest][::-1], idx[rest][::-1]   # last events first
        found, seen = last_seen(g, rs, rd)
        old = found & (seen < start)               # present before the batch: refresh
        if old.any():
            upd = {"last_seen": ri[old]}
            if w is not None:
                upd["weight"] = w[rest][::-1][old]
            ch.updated = g.update_edges(rs[old], rd[old], **upd)
            feed(ch.updated)
            refreshed = np.zeros(n, dtype=bool)
            refreshed[to_host(ch.updated.properties["last_seen"]) - start] = True
            setter |= refreshed
            mark = setter[pos]
            window.record(s[mark], d[mark], idx[mark], refresh=refreshed[pos][mark])
            return
    mark = setter[pos]
    window.record(s[mark], d[mark], idx[mark], refresh=np.zeros(int(mark.sum()), dtype=bool))


def last_seen(g, src: np.ndarray, dst: np.ndarray):
    """(found, last_seen) of the edges (src[i], dst[i]), host arrays."""
    found, values = g.edge_values(src, dst, names=["last_seen"])
    return to_host(found), to_host(values["last_seen"])
