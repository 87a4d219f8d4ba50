"""The sliding window of a replay: which edges expire after a batch, in time proportional to
the events that leave the window (never a scan of the graph).

Every edge carries the index of its most recent insert event (the graph's ``last_seen`` edge
property). The window keeps, in event order, one entry ``(index, src, dst)`` per edge event that
set ``last_seen`` (a batch's last event of each edge it inserts or refreshes). After the batch
ending at event index ``e`` (exclusive), the entries with ``index < e - W`` leave the queue; an
entry's edge expires when it is still in the graph with ``last_seen == index`` (a later event
has refreshed it otherwise, or it was deleted). Each entry is looked at once: the work of a
batch is the number of entries that leave the window, plus one batched property look-up of
those edges. When the caller says which recorded events were refreshes (insert-only
streams), only the leaving entries whose edge a queued refresh names are looked up: the
others cannot have a later event.

    >>> import numpy as np
    >>> w = EventWindow(window=3)
    >>> w.record(np.array([0, 1]), np.array([1, 2]), np.array([0, 1]))
    >>> w.record(np.array([0]), np.array([1]), np.array([4]))      # (0, 1) refreshed
    >>> last = {(0, 1): 4, (1, 2): 1}
    >>> def look_up(s, d):
    ...     found = np.array([(a, b) in last for a, b in zip(s.tolist(), d.tolist())])
    ...     return found, np.array([last.get((a, b), -1) for a, b in zip(s.tolist(), d.tolist())])
    >>> [a.tolist() for a in w.expired(5, look_up)]   # threshold 5 - 3 = 2
    [[1], [2]]
"""
from __future__ import annotations

from collections import deque
from typing import Callable

import numpy as np

__all__ = ["EventWindow"]


class EventWindow:
    """Queue of the events that set an edge's ``last_seen``, oldest first.

    Parameters
    ----------
    window : int
        W, in events: after the batch ending at event index ``e``, edges whose most recent
        event has index ``< e - W`` expire.
    """

    def __init__(self, window: int):
        self.window = int(window)
        self._chunks: deque = deque()     # (index int64, src, dst) arrays, index ascending
        self._size = 0
        # refresh events (an insert of an edge already present) still queued, as
        # (index, edge key) chunks: only the entries whose edge one of them refreshed can
        # have a later event; the others expire without a look-up. ``_tracked`` turns False
        # for good once a record does not say which events are refreshes.
        self._refreshes: deque = deque()
        self._tracked = True

    def __len__(self) -> int:
        return self._size

    def record(self, src: np.ndarray, dst: np.ndarray, index: np.ndarray,
               refresh: np.ndarray | None = None) -> None:
        """Queue the events that set ``last_seen`` of edges (src[i], dst[i]) to ``index[i]``.

        Host arrays of equal length; every ``index`` larger than every index queued so far
        (batches arrive in stream order). Indices in ascending order are queued as they are,
        others sorted first. ``refresh`` (bool, aligned): which events refreshed an edge
        already present, when the caller knows that every other event inserted an absent
        edge and that nothing else removes edges than the window (insert-only streams);
        None otherwise (every entry leaving the window is then looked up).
        """
        if refresh is None:
            self._tracked = False
            self._refreshes.clear()
        if index.shape[0] == 0:
            return
        index = np.asarray(index).astype(np.int64, copy=False)
        src, dst = np.asarray(src), np.asarray(dst)
        if index.shape[0] > 1 and not (index[1:] > index[:-1]).all():
            order = np.argsort(index, kind="stable")
            index, src, dst = index[order], src[order], dst[order]
            if refresh is not None:
                refresh = np.asarray(refresh)[order]
        self._chunks.append((index, src, dst))
        self._size += int(index.shape[0])
        if self._tracked and refresh is not None and refresh.any():
            self._refreshes.append((index[refresh], _edge_keys(src[refresh], dst[refresh])))

    def _pop_before(self, threshold: int):
        """Every queued entry with index < threshold, removed from the queue."""
        out = []
        while self._chunks:
            idx, s, d = self._chunks[0]
            if idx[-1] < threshold:
                out.append(self._chunks.popleft())
                continue
            cut = int(np.searchsorted(idx, threshold, side="left"))
            if cut:
                out.append((idx[:cut], s[:cut], d[:cut]))
                self._chunks[0] = (idx[cut:], s[cut:], d[cut:])
            break
        if not out:
            return None
        self._size -= sum(int(c[0].shape[0]) for c in out)
        return tuple(np.concatenate(parts) for parts in zip(*out))

    def _maybe_refreshed(self, s: np.ndarray, d: np.ndarray, threshold: int):
        """Which of the popped entries (s, d) may have a later event: all of them when
        refreshes are not tracked, else those whose edge a queued refresh names (a superset:
        every refresh after a popped entry is still queued). The refreshes now leaving the
        window are dropped after the check."""
        if not self._tracked:
            return None
        if not self._refreshes:
            return np.zeros(s.shape[0], dtype=bool)
        keys = np.concatenate([k for _, k in self._refreshes])
        while self._refreshes:
            idx, k = self._refreshes[0]
            if idx[-1] < threshold:
                self._refreshes.popleft()
                continue
            cut = int(np.searchsorted(idx, threshold, side="left"))
            if cut:
                self._refreshes[0] = (idx[cut:], k[cut:])
            break
        if keys.shape[0] > 4 * s.shape[0]:
            return None                        # as costly as looking every entry up
        return np.isin(_edge_keys(s, d), keys)

    def expired(self, end: int, look_up: Callable) -> tuple[np.ndarray, np.ndarray]:
        """The edges to delete after the batch ending at event index ``end`` (exclusive).

        ``look_up(src, dst) -> (found bool, last_seen int64)`` reads the graph's current
        ``last_seen`` of the given edges (host arrays); it is called for the leaving entries
        that a later event may have refreshed (every one of them unless refreshes are
        tracked, see :meth:`record`), never with more. Returns (src, dst) host arrays, each
        expired edge once.
        """
        threshold = end - self.window
        popped = self._pop_before(threshold)
        if popped is None:
            self._maybe_refreshed(np.empty(0, np.int64), np.empty(0, np.int64), threshold)
            empty = np.empty(0, np.int64)
            return empty, empty
        idx, s, d = popped
        check = self._maybe_refreshed(s, d, threshold)
        if check is None:
            found, last = look_up(s, d)
            stale = np.asarray(found, dtype=bool) & (np.asarray(last) == idx)
            return s[stale], d[stale]
        stale = ~check
        if check.any():
            found, last = look_up(s[check], d[check])
            stale[check] = np.asarray(found, dtype=bool) & (np.asarray(last) == idx[check])
        return s[stale], d[stale]


def _edge_keys(s: np.ndarray, d: np.ndarray) -> np.ndarray:
    """int64 keys ``s << 32 | d`` of edges with ids in [0, 2^31)."""
    return (np.asarray(s).astype(np.int64) << 32) | np.asarray(d).astype(np.int64)
