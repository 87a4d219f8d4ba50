"""Replay checkpoints: snapshots that a replay writes and starts from.

A snapshot written by :func:`streams.replay.replay` (``--snapshot``, ``--snapshot-every``)
is a :mod:`hornet.snapshot` file (the graph with its edge properties, ``weight`` and
``last_seen`` included, and the vertex map of ``--map-ids``) whose metadata also holds the
replay's position, a :class:`ReplayPosition`: the index of the next event, the batches
applied, the window, the BFS source and the first event's time (time batching). That is
all the state a replay carries between batches besides the graph: the sliding window's queue
is rebuilt from the edges' ``last_seen`` (each present edge's one live entry, see
:func:`restore_window`; a graph property in streams with deletions, otherwise the window's
own record, saved as the snapshot's ``edge_extra:last_seen`` column), and every analytic starts with one static computation on the
graph. So a replay started from such a snapshot gives the same graph and analytics, batch
for batch, as the uninterrupted replay, provided that it reads the rest of the same stream
with the same settings (batch size or time, window, directedness, analytics):

* ``resume=True`` (``--resume``): the stream is the one the snapshot's replay read; its
  events before the snapshot's position are skipped.
* otherwise the stream continues the snapshot's: its events are numbered from the
  snapshot's position on (what a window and the batch cuts count in).

A snapshot without a position (:meth:`hornet.Graph.save`) starts a replay at event 0; a
window needs the position and the edges' ``last_seen``.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from .analytics import ReplayError, to_host
from .format import EventBlock
from .window import EventWindow

__all__ = ["ReplayPosition", "check_params", "start", "write", "restore_window",
           "skip_events", "shift_events"]

SNAPSHOT_SUFFIXES = (".arrow", ".parquet")
_KIND = "hornet.replay"


@dataclass
class ReplayPosition:
    """Where a replay stands after a batch.

    ``next_event``: index of the first event not yet applied (events are numbered from the
    start of the replayed stream); ``batches``: batches applied; ``window``: the sliding
    window (events) or None; ``bfs_source``: the BFS source's dense id (None before the first
    batch); ``t0``: the first event's time when batches are time windows (their origin);
    ``stream``: the stream's file name (for messages).
    """

    next_event: int = 0
    batches: int = 0
    window: int | None = None
    bfs_source: int | None = None
    t0: float | int | None = None
    stream: str | None = None

    def to_dict(self) -> dict:
        return {"kind": _KIND, **dataclasses.asdict(self)}

    @classmethod
    def from_dict(cls, d: dict | None, where: str) -> "ReplayPosition | None":
        if not d or d.get("kind") != _KIND:
            return None
        try:
            return cls(**{f.name: d.get(f.name, f.default) for f in dataclasses.fields(cls)})
        except TypeError as e:
            raise ReplayError(f"{where}: unreadable replay position ({e})") from None


def check_params(from_snapshot, snapshot, snapshot_every, resume: bool) -> None:
    """Raise ReplayError for snapshot settings that cannot work together."""
    if snapshot_every is not None:
        if isinstance(snapshot_every, bool) or int(snapshot_every) != snapshot_every or \
                snapshot_every < 1:
            raise ReplayError(f"snapshot_every must be a positive integer (batches), got "
                              f"{snapshot_every!r}")
        if snapshot is None:
            raise ReplayError("snapshot_every needs a snapshot file (--snapshot PATH)")
    for what, path in (("from_snapshot", from_snapshot), ("snapshot", snapshot)):
        if path is not None and os.path.splitext(os.fspath(path))[1].lower() not in \
                SNAPSHOT_SUFFIXES:
            raise ReplayError(f"{what} {os.fspath(path)!r}: a snapshot file ends in .arrow "
                              "or .parquet")
    if resume and from_snapshot is None:
        raise ReplayError("resume needs a snapshot to resume from (--from-snapshot PATH)")


def start(hornet, path, directed: bool, device: str, eprops: dict, window: int | None,
          resume: bool):
    """``(graph, vertex map or None, position or None, last_seen or None)`` from a
    snapshot, with the edge properties the replay needs (missing ones are added, 0); the
    graph is detached from its map (the replay feeds it dense ids). ``last_seen``: (src,
    dst, last event index) host arrays of every edge, for a window (None without one)."""
    from hornet import snapshot
    p = os.fspath(path)
    g, extra = snapshot.load(p, hornet.Graph, device=device, with_extra=True)
    columns = (extra or {}).pop("edge_columns", None)
    position = ReplayPosition.from_dict(extra, p)
    if g.directed != bool(directed):
        kind = "directed" if g.directed else "undirected"
        raise ReplayError(f"{p}: the snapshot holds a {kind} graph; replay "
                          + ("without --undirected" if g.directed else "with --undirected"))
    if position is None and (resume or window is not None):
        raise ReplayError(f"{p}: the snapshot holds no replay position (it was not written by "
                          "hornet replay --snapshot); " + ("--resume" if resume else
                                                            "a sliding window") + " needs it")
    seen = None
    if window is not None and columns is not None and "last_seen" in columns:
        seen = (columns["src"], columns["dst"], columns["last_seen"].astype(np.int64))
    elif window is not None and "last_seen" in g.edge_properties:
        src, dst, props = g.edges(properties=True, dense=True)
        seen = (to_host(src), to_host(dst), to_host(props["last_seen"]).astype(np.int64))
    if window is not None and seen is None:
        raise ReplayError(f"{p}: the snapshot's edges carry no last_seen (its replay had no "
                          "window); a sliding window cannot start from it")
    added = []
    for name, dt in eprops.items():
        have = g.edge_properties.get(name)
        if have is None:
            g.add_edge_property(name, dt)
            added.append(name)
        elif np.dtype(have) != np.dtype(dt):
            raise ReplayError(f"{p}: edge property {name!r} is {np.dtype(have)}, the replay "
                              f"needs {np.dtype(dt)}")
    if window is not None and seen[2].size:
        latest = int(seen[2].max())
        if latest >= position.next_event:
            raise ReplayError(f"{p}: an edge's last_seen ({latest}) is not before the "
                              f"snapshot's next event ({position.next_event})")
    vmap, g.vertex_map = g.vertex_map, None
    if "last_seen" in added and seen is not None and seen[2].size:
        # a stream with deletions read on from an insert-only replay's snapshot: the graph
        # now stores last_seen, as the window's look-ups need
        g.update_edges(seen[0], seen[1], last_seen=seen[2])
    return g, vmap, position, seen


def restore_window(seen, window: EventWindow, insert_only: bool) -> None:
    """Queue in ``window`` the one live entry of every edge: ``seen`` = (src, dst,
    last_seen) host arrays, as :func:`start` returns them.

    Of the entries an uninterrupted replay's window holds, only those are live (an entry
    expires its edge only while the edge's ``last_seen`` equals the entry's index); every
    present edge has one (its ``last_seen`` is inside the window, or it would have expired).
    In an insert-only stream (``insert_only``) none of them is a refresh: an edge's later
    events are queued as they come (:meth:`EventWindow.record`)."""
    src, dst, last = seen
    if not last.size:
        return
    window.record(src.astype(np.int64), dst.astype(np.int64), last,
                  refresh=np.zeros(last.shape[0], dtype=bool) if insert_only else None)


def _window_columns(window: EventWindow):
    """``edge_columns`` for :func:`hornet.snapshot.save`: each edge's last event index as the
    window records it (a window that tracks refreshes; the graph stores no ``last_seen``)."""
    def columns(src, dst):
        found, last = window.latest(src, dst)
        if not found.all():
            i = int(np.argmin(found))
            raise ReplayError(f"the window holds no event of edge {int(src[i])}->"
                              f"{int(dst[i])}")
        return {"last_seen": last}
    return columns


def write(g, path, vmap, position: ReplayPosition, window: EventWindow | None = None) -> None:
    """Save ``g`` with ``vmap`` and ``position`` to ``path`` through a temporary file (no
    partial snapshot); with a ``window`` that tracks refreshes, its record of each edge's
    last event goes along (column ``edge_extra:last_seen``)."""
    from hornet import snapshot
    p = os.fspath(path)
    root, ext = os.path.splitext(p)
    tmp = f"{root}.partial{ext}"
    columns = _window_columns(window) if window is not None and window.tracks_refreshes \
        else None
    try:
        snapshot.save(g, tmp, vertex_map=vmap, extra=position.to_dict(), edge_columns=columns)
        os.replace(tmp, p)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def skip_events(blocks: Iterable[EventBlock], count: int):
    """``blocks`` without their events of index < ``count`` (indices unchanged)."""
    for blk in blocks:
        if blk.stop <= count:
            continue
        yield blk if blk.start >= count else blk.slice(count - blk.start, len(blk))


def shift_events(blocks: Iterable[EventBlock], offset: int):
    """``blocks`` with their event indices increased by ``offset``."""
    for blk in blocks:
        yield dataclasses.replace(blk, start=blk.start + offset) if offset else blk
