"""A sliding window's expiry decided on the device that holds its entries' pairs: a windowed
GPU replay uploads each batch's pairs once (int32), for its insert, and the window queues
them as they are, every event of the batch (:meth:`streams.window.EventWindow.record_all`),
until they leave the window; the expiry's delete then takes the leaving entries' pairs where
they are, with no host pass over them and no copy to the device.

Of the leaving entries, those whose edge has a later entry queued (a refresh, a repeat within
a batch, or an event of the batch that expires them) must stay. :class:`LatestMap` keeps, on
the device, each queued edge's latest entry (the entries numbered in queue order): one pass
over a record raises its keys (``latest_record``), one pass over the leaving entries nulls
those whose edge maps to a later entry (``latest_expire``, ``window_device.cu``), so that
each expiring edge is named once, by its last leaving entry.

    >>> import numpy as np
    >>> m = LatestMap(np)
    >>> m.record(np.array([1, 2, 1], np.int32), np.array([5, 7, 5], np.int32), 0)
    >>> # entries 0 and 2 are (1, 5): entry 0 has a later entry and stays queued
    >>> pairs = (np.array([1, 2], np.int32), np.array([5, 7], np.int32))
    >>> m.expire(*pairs, 0, (-1, -1))
    >>> [a.tolist() for a in pairs]
    [[-1, 2], [-1, 7]]
"""
from __future__ import annotations

import os

import numpy as np

from .window_index import edge_keys

__all__ = ["LatestMap"]

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "window_device.cu")
_LAUNCHES: dict = {}


def _prepared(name: str, nargs: int):
    from hornet.core.cuda import PreparedLaunch, function
    fn = _LAUNCHES.get(name)
    if fn is None:
        fn = _LAUNCHES[name] = PreparedLaunch(function(_CU, name), nargs)
    return fn


#: the device map's slots: at least this many, and at least MAP_SLACK times the entries it
#: holds when it is (re)built; rebuilt once the keys it may hold pass half its slots
MAP_MIN_SLOTS = 1 << 12
MAP_SLACK = 3


class LatestMap:
    """Map from edge key to the sequence number of its latest queued window entry, on the
    device of the pairs it is given (CuPy: a hash table and the kernels of
    ``window_device.cu``; NumPy: its twin on :class:`streams.window_index.LatestIndex`).

    The window numbers its queued entries 0, 1, 2, ... in queue order. :meth:`record` raises
    each recorded entry's key to the entry's number; :meth:`expire` turns every leaving entry
    whose key maps to a larger number (a later entry of the same edge is queued: a refresh,
    or a repeat within a batch) into a null pair, so that of the leaving entries exactly one
    per expiring edge stays: its last. No host work per entry, no synchronization. Keys are
    never removed on the device: the table is built again from the queued entries
    (:meth:`rebuild`) once the keys recorded since the last build could fill half of it.
    """

    def __init__(self, xp):
        self.xp = xp
        self._host = None          # the NumPy twin's map
        self._keys = self._values = None
        self._slots = 0
        self._bound = 0            # keys the table may hold: at most, not counted exactly
        if xp is np:
            from .window_index import LatestIndex
            self._host = LatestIndex()

    def needs_rebuild(self, entries: int) -> bool:
        """Whether recording ``entries`` more entries calls for :meth:`rebuild` first."""
        return self._host is None and 2 * (self._bound + entries) > self._slots

    def rebuild(self, pieces) -> None:
        """The map made again from the queued entries ``pieces``: (src, dst, seq0) per record
        in queue order, the pairs int32 on the map's device, seq0 the number of the first."""
        if self._host is not None:
            from .window_index import LatestIndex
            self._host = LatestIndex()
            for src, dst, seq0 in pieces:
                self.record(src, dst, seq0)
            return
        total = sum(int(p[0].shape[0]) for p in pieces)
        slots = MAP_MIN_SLOTS
        while slots < MAP_SLACK * total:
            slots *= 2
        if slots != self._slots:
            self._keys = self._values = None
            self._keys = self.xp.empty(slots, dtype=self.xp.uint64)
            self._values = self.xp.empty(slots, dtype=self.xp.uint64)
            self._slots = slots
        self._keys.data.memset_async(0xFF, slots * 8)
        self._values.data.memset_async(0, slots * 8)
        self._bound = 0
        for src, dst, seq0 in pieces:
            self.record(src, dst, seq0)

    def record(self, src, dst, seq0: int) -> None:
        """Raise the key of each pair (``src[i]``, ``dst[i]``) (int32 on the map's device) to
        ``seq0 + i``. Call :meth:`rebuild` instead where :meth:`needs_rebuild` says so."""
        m = int(src.shape[0])
        if m == 0:
            return
        if self._host is not None:
            self._host.raise_to(edge_keys(src, dst), np.arange(seq0, seq0 + m, dtype=np.int64))
            return
        from hornet.core.cuda import BLOCK, _max_grid
        self._bound += m
        _prepared("latest_record", 8)(min(-(-m // BLOCK), _max_grid()), BLOCK, [
            src.data.ptr, dst.data.ptr, m, int(seq0), self._keys.data.ptr,
            self._values.data.ptr, 64 - (self._slots.bit_length() - 1), self._slots - 1])

    def expire(self, src, dst, seq0: int, null: tuple[int, int]) -> None:
        """In place: each leaving entry (``src[i]``, ``dst[i]``), numbered ``seq0 + i``, whose
        key maps to a larger number becomes ``null``; the others are the expiring edges, each
        once."""
        m = int(src.shape[0])
        if m == 0:
            return
        if self._host is not None:
            keys = edge_keys(src, dst)
            seq = np.arange(seq0, seq0 + m, dtype=np.int64)
            later = self._host.get(keys) > seq
            src[later], dst[later] = null
            self._host.remove_up_to(keys[~later], seq[~later])
            return
        from hornet.core.cuda import BLOCK, _max_grid
        _prepared("latest_expire", 10)(min(-(-m // BLOCK), _max_grid()), BLOCK, [
            src.data.ptr, dst.data.ptr, m, int(seq0), self._keys.data.ptr,
            self._values.data.ptr, 64 - (self._slots.bit_length() - 1), self._slots - 1,
            int(null[0]), int(null[1])])
