"""The sliding window of a replay: which edges expire after a batch, in time proportional to
the events that leave the window (never a scan of the graph).

The window keeps, in event order, one entry ``(index, src, dst)`` per edge event that set the
edge's most recent event index (a batch's last event of each edge it inserts or refreshes).
After the batch ending at event index ``e`` (exclusive), the entries with ``index < e - W``
leave the queue; an entry's edge expires when no later event of the edge is queued. Each
entry is looked at once: the work of a batch is the number of entries that leave the window.

Who knows of later events:

* Insert-only streams (every record says which of its events refreshed an edge already
  present, :meth:`EventWindow.record` with ``refresh``): an edge's events after the one that
  inserted it are its refreshes, so the window keeps the latest refresh index of each edge
  in its own hash map (:class:`streams.window_index.LatestIndex`) and the graph stores no
  event index at all. A leaving entry expires unless its edge has a later refresh.
* Insert-only GPU replays queue every event with its pairs on the device
  (:meth:`EventWindow.record_all`): the window keeps a map of each queued edge to its latest
  entry there (:class:`streams.window_device.LatestMap`); a leaving entry expires unless its
  edge has a later entry, decided on the device, where the expiry's delete takes the pairs.
* Otherwise (streams that delete edges too, where an edge's later insert is no refresh) the
  graph carries each edge's last event index (the ``last_seen`` edge property) and a batched
  look-up of the leaving entries' edges (``look_up`` of :meth:`EventWindow.expired`) decides.

    >>> import numpy as np
    >>> w = EventWindow(window=3)
    >>> w.record(np.array([0, 1]), np.array([1, 2]), np.array([0, 1]),
    ...          refresh=np.array([False, False]))
    >>> w.record(np.array([0]), np.array([1]), np.array([4]), refresh=np.array([True]))
    >>> [a.tolist() for a in w.expired(5)]   # threshold 5 - 3 = 2: (0, 1) has a later event
    [[1], [2]]
"""
from __future__ import annotations

from collections import deque
from typing import Callable

import numpy as np

from hornet.batch.validate import MAX_VERTEX_ID

from .window_device import LatestMap
from .window_index import LatestIndex, edge_keys

__all__ = ["EventWindow", "NULL"]

#: the pair that stands for no edge among the expiring pairs taken on the device (ids past
#: every graph's: a delete finds nothing for it)
NULL = (MAX_VERTEX_ID, MAX_VERTEX_ID)


class EventWindow:
    """Queue of the events that set an edge's most recent event index, oldest first.

    Parameters
    ----------
    window : int
        W, in events: after the batch ending at event index ``e``, edges whose most recent
        event has index ``< e - W`` expire.
    """

    def __init__(self, window: int):
        self.window = int(window)
        # (index int64, src, dst, kept, pairs, seq0) per record, index ascending; ``kept``:
        # what the caller gave with the record for the whole chunk, ``pairs``: the record's
        # pairs on the graph's device (see record), or None; ``seq0``: the number of its
        # first entry
        self._chunks: deque = deque()
        self._size = 0
        # latest refresh index per edge key while every record says which events are
        # refreshes; None for good once one does not (the graph's last_seen decides then)
        self._latest: LatestIndex | None = LatestIndex()
        # the map of every queued entry's edge to its latest entry, on the device of the
        # records' pairs, once they are recorded with record_all (None: the host decides)
        self._map: LatestMap | None = None
        self._seq = 0          # the number of the next queued entry (the map's numbering)

    def __len__(self) -> int:
        return self._size

    @property
    def tracks_refreshes(self) -> bool:
        """True while the window decides expiry itself (every record said which events were
        refreshes); False once expiry needs the graph's ``last_seen`` look-up."""
        return self._latest is not None

    def record(self, src: np.ndarray, dst: np.ndarray, index: np.ndarray,
               refresh: np.ndarray | None = None, kept=None, pairs=None) -> None:
        """Queue the events that set the most recent event index of edges (src[i], dst[i]) to
        ``index[i]``.

        Host arrays of equal length; every ``index`` larger than every index queued so far
        (batches arrive in stream order). Indices in ascending order are queued as they are,
        others sorted first. ``refresh`` (bool, aligned): which events refreshed an edge
        already present, when the caller knows that every other event inserted an absent
        edge and that nothing else removes edges than the window (insert-only streams);
        None otherwise (from then on, :meth:`expired` needs the graph's look-up).
        ``kept``: anything that stands for the recorded edges as a set (a replay keeps
        them in the graph's sorted form), handed back by :meth:`expired_edges` when exactly
        these entries expire together. Once the window records with :meth:`record_all`,
        a record goes there (its ``pairs``: ``src``, ``dst`` as int32 arrays on the map's
        device, or None: made here).
        """
        if refresh is None:
            self._latest = None
            self._map = None
        if index.shape[0] == 0:
            return
        index = np.asarray(index).astype(np.int64, copy=False)
        src, dst = np.asarray(src), np.asarray(dst)
        if index.shape[0] > 1 and not (index[1:] > index[:-1]).all():
            order = np.argsort(index, kind="stable")
            index, src, dst, pairs = index[order], src[order], dst[order], None
            if refresh is not None:
                refresh = np.asarray(refresh)[order]
        if self._map is not None:
            self.record_all(src, dst, index, pairs)
            return
        self._chunks.append((index, src, dst, kept, None, self._seq))
        self._size += int(index.shape[0])
        self._seq += int(index.shape[0])
        if self._latest is not None and refresh is not None:
            refresh = np.asarray(refresh, dtype=bool)
            if refresh.any():
                self._latest.raise_to(edge_keys(src[refresh], dst[refresh]), index[refresh])

    def record_all(self, src: np.ndarray, dst: np.ndarray, index: np.ndarray, pairs) -> None:
        """Queue every event (src[i], dst[i]) of an insert-only batch with its index
        ``index[i]`` (host arrays as for :meth:`record`, indices ascending and above every
        queued one), whether it inserts, refreshes or repeats an edge: from the first call
        on, the window keeps a map of each queued edge to its latest entry on the device of
        ``pairs`` (the events' (src, dst) int32 there, CuPy or NumPy; None: made from
        ``src``, ``dst``), :class:`streams.window_device.LatestMap`, and decides expiry there
        (:meth:`expired_pairs`) with no host pass over the batch's or the leaving entries.
        Entries queued before the first call are moved onto the device with it. Needs a
        window that tracks refreshes."""
        if self._latest is None:
            raise ValueError("record_all needs a window that tracks refreshes")
        index = np.asarray(index).astype(np.int64, copy=False)
        src, dst = np.asarray(src), np.asarray(dst)
        if self._map is None:
            self._map = LatestMap(np if pairs is None else _module(pairs[0]))
            xp = self._map.xp
            self._chunks = deque(c[:4] + (_on(xp, c[1], c[2], c[4]), c[5])
                                 for c in self._chunks)
            self._latest = LatestIndex()          # (the map holds the refreshes from now on)
            self._rebuild()
        xp = self._map.xp
        m = int(index.shape[0])
        if m == 0:
            return
        pairs = _on(xp, src, dst, pairs)
        self._chunks.append((index, src, dst, None, pairs, self._seq))
        self._size += m
        if self._map.needs_rebuild(m):
            self._seq += m
            self._rebuild()
        else:
            self._map.record(pairs[0], pairs[1], self._seq)
            self._seq += m

    def _rebuild(self) -> None:
        self._map.rebuild([(c[4][0], c[4][1], c[5]) for c in self._chunks])

    def _pop_pieces(self, threshold: int):
        """Every queued entry with index < threshold, removed from the queue: (a list of
        (index, src, dst, pairs, seq0) pieces in queue order (whole chunks and the front of
        one; ``pairs`` as recorded, cut alike, or None; ``seq0`` the number of the piece's
        first entry), the ``kept`` of the record when the pieces are exactly one whole
        record, else None)."""
        out, kept = [], []
        while self._chunks:
            idx, s, d, k, p, q = self._chunks[0]
            if idx[-1] < threshold:
                self._chunks.popleft()
                out.append((idx, s, d, p, q))
                kept.append(k)
                continue
            cut = int(np.searchsorted(idx, threshold, side="left"))
            if cut:
                head = tail = None
                if p is not None:
                    head, tail = (p[0][:cut], p[1][:cut]), (p[0][cut:], p[1][cut:])
                out.append((idx[:cut], s[:cut], d[:cut], head, q))
                kept.append(None)                  # a record cut in two: kept for neither
                self._chunks[0] = (idx[cut:], s[cut:], d[cut:], None, tail, q + cut)
            break
        self._size -= sum(int(c[0].shape[0]) for c in out)
        return out, (kept[0] if len(kept) == 1 else None)

    def expired(self, end: int, look_up: Callable | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`expired_edges` without the ``kept`` item."""
        return self.expired_edges(end, look_up)[:2]

    def expired_edges(self, end: int, look_up: Callable | None = None):
        """The edges to delete after the batch ending at event index ``end`` (exclusive).

        While the window tracks refreshes (:attr:`tracks_refreshes`) it decides alone, in one
        pass with one hash probe per leaving entry (none while no refresh is held).
        Otherwise ``look_up(src, dst) -> (found bool, last_seen int64)`` reads the graph's
        current ``last_seen`` of the leaving entries' edges (host arrays). Returns (src, dst)
        host arrays, each expired edge once, and the ``kept`` of the record whose entries
        are exactly those that expire (see :meth:`record`), or None.
        """
        if self._map is not None:
            out = self.expired_pairs(end)
            if out is None:
                empty = np.empty(0, np.int64)
                return empty, empty, None
            s, d = (_host(a).astype(np.int64) for a in out)
            real = s != NULL[0]
            return s[real], d[real], None
        pieces, kept = self._pop_pieces(end - self.window)
        if not pieces:
            empty = np.empty(0, np.int64)
            return empty, empty, None
        if self._latest is None:
            if look_up is None:
                raise ValueError("the window does not track refreshes: expiry needs the "
                                 "graph's last_seen look-up")
            idx, s, d = pieces[0][:3] if len(pieces) == 1 else \
                tuple(np.concatenate(parts) for parts in zip(*[p[:3] for p in pieces]))
            found, last = look_up(s, d)
            stale = np.asarray(found, dtype=bool) & (np.asarray(last) == idx)
            return s[stale], d[stale], None
        if len(self._latest) == 0 and len(pieces) == 1:
            return pieces[0][1], pieces[0][2], kept  # nothing refreshed: every entry expires
        s, d = self._latest.take_stale([p[:3] for p in pieces])
        return s, d, (kept if s.shape[0] == pieces[0][0].shape[0] else None)

    def expired_pairs(self, end: int):
        """While the window tracks refreshes: the pairs (src, dst) to delete after the batch
        ending at event index ``end`` (exclusive), or None when no entry leaves. Once the
        window records with :meth:`record_all`, they are on the records' device: the leaving
        entries' own pairs, each expiring edge once (its last leaving entry), every other
        entry turned into :data:`NULL` (a pair that names no edge), with no synchronization;
        otherwise the host arrays of :meth:`expired_edges` (each edge once; None when none
        expires)."""
        if self._latest is None:
            raise ValueError("expired_pairs needs a window that tracks refreshes")
        pieces, _ = self._pop_pieces(end - self.window)
        if not pieces:
            return None
        if self._map is None:
            s, d = self._latest.take_stale([p[:3] for p in pieces])
            return (s, d) if s.shape[0] else None
        # in place: the leaving entries' pairs are the window's alone once they leave it
        for _, _, _, (ps, pd), seq0 in pieces:
            self._map.expire(ps, pd, seq0, NULL)
        if len(pieces) == 1:
            return pieces[0][3]
        xp = self._map.xp
        return (xp.concatenate([p[3][0] for p in pieces]),
                xp.concatenate([p[3][1] for p in pieces]))

    def latest(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(found bool (E,), index int64 (E,)): each edge's most recent queued event index
        (the ``last_seen`` that the graph does not store while the window tracks refreshes).
        Sorts the whole queue: for verification, not for a batch."""
        q = edge_keys(np.asarray(src), np.asarray(dst))
        if not self._chunks:
            return np.zeros(q.shape[0], bool), np.full(q.shape[0], -1, np.int64)
        idx = np.concatenate([c[0] for c in self._chunks])
        keys = edge_keys(np.concatenate([c[1] for c in self._chunks]),
                          np.concatenate([c[2] for c in self._chunks]))
        order = np.argsort(keys, kind="stable")         # equal keys stay in index order
        keys, idx = keys[order], idx[order]
        at = np.searchsorted(keys, q, side="right") - 1
        found = (at >= 0) & (keys[np.maximum(at, 0)] == q)
        return found, np.where(found, idx[np.maximum(at, 0)], -1)


def _module(a):
    if isinstance(a, np.ndarray):
        return np
    import cupy
    return cupy


def _on(xp, src, dst, pairs):
    """``pairs`` where they are int32 arrays of module ``xp``, else ``src``, ``dst`` made so."""
    if pairs is not None and _module(pairs[0]) is xp and pairs[0].dtype == np.int32 \
            and pairs[1].dtype == np.int32:
        return pairs
    return (xp.asarray(np.asarray(src).astype(np.int32)),
            xp.asarray(np.asarray(dst).astype(np.int32)))


def _host(a) -> np.ndarray:
    return a if isinstance(a, np.ndarray) else a.get()
