"""The expiry delete of a sliding window taken from the pairs its entries were inserted with,
where those are: a windowed GPU replay uploads each batch's pairs once (int32), for its
insert, and the window keeps them with the batch's record
(:meth:`streams.window.EventWindow.record` with ``pairs``) until its entries leave. The
delete then needs no host pass over the leaving entries and no copy to the device.

Of the leaving entries, those whose edge has a later refresh in the window must stay: while
the window's map of refreshes (:class:`streams.window_index.LatestIndex`) holds a few live
keys (at most :data:`LIVE_LIMIT`), one pass on the device (``window_device.cu``) replaces
each such entry by the pair of one entry that expires, which the delete drops as a repeat.
An entry of key ``k`` survives when its index is below ``k``'s latest refresh (that refresh
is a later event of the edge); within a piece of the queue (indices ascending) that is a
position below the first entry whose index reaches the refresh's, so the device needs
neither the entries' indices nor their keys, only the pairs and a table of ``2 * live``
int64 (the live keys, then each key's position limit in the piece).

Where the expiry goes in one graph call with the batch's insert (the mixed call), the
expiring pairs that the batch names are dropped first (:func:`drop_named`): those are edges
the batch refreshes, which stay.

    >>> import numpy as np
    >>> piece = (np.array([3, 4, 6]), np.array([1, 2, 1]), np.array([5, 7, 5]),
    ...          (np.array([1, 2, 1], np.int32), np.array([5, 7, 5], np.int32)))
    >>> # (1, 5) was refreshed at event 6, after its entry 3: entry 3 stays, entry 6 expires
    >>> [a.tolist() for a in expiring_pairs([piece], np.array([1 << 32 | 5]), np.array([6]))]
    [[2, 2, 1], [7, 7, 5]]
"""
from __future__ import annotations

import os

import numpy as np

from .window_index import edge_keys

__all__ = ["expiring_pairs", "drop_named", "LIVE_LIMIT", "LatestMap"]

#: with more live refreshes than this, the host decides expiry entry by entry
#: (:meth:`streams.window_index.LatestIndex.take_stale`)
LIVE_LIMIT = 64

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "window_device.cu")


def expiring_pairs(pieces, live_keys: np.ndarray, live_values: np.ndarray):
    """The pairs to delete for the leaving window entries ``pieces``: each a tuple (index
    int64 (m,) ascending, src (m,), dst (m,) host arrays, (src, dst) int32 (m,) on the
    graph's device, CuPy or NumPy), in queue order; ``live_keys``, ``live_values``: the
    window's live refreshes (edge key -> latest refresh index, host int64 arrays). Returns
    (src, dst) on that device (the pieces' own arrays, changed in place, when there is one
    piece): every entry's pair, those of entries with a later refresh replaced by the pair
    of an entry that expires (each expiring edge at least once, no other edge; repeats left
    to the delete); None, with nothing changed, when no expiring entry is found among the
    first few of each piece (the caller decides on the host then). The live map is not
    changed."""
    devices = [p[3] for p in pieces]
    if live_keys.shape[0] == 0:
        if len(devices) == 1:
            return devices[0]
        xp = _module(devices[0][0])
        return (xp.concatenate([p[0] for p in devices]),
                xp.concatenate([p[1] for p in devices]))
    rep = _expiring_entry(pieces, live_keys, live_values)
    if rep is None:
        return None
    # in place: the leaving entries' pairs are the window's alone once they leave it
    for index, _, _, (ds, dd) in pieces:
        limits = np.searchsorted(index, live_values, side="left")
        _replace(ds, dd, live_keys, limits, rep)
    if len(devices) == 1:
        return devices[0]
    xp = _module(devices[0][0])
    return (xp.concatenate([p[0] for p in devices]), xp.concatenate([p[1] for p in devices]))


def _module(a):
    if isinstance(a, np.ndarray):
        return np
    import cupy
    return cupy


def _expiring_entry(pieces, live_keys, live_values):
    """(src, dst) of an entry that expires, looked for among the first ``2 * live + 8``
    entries of each piece, or None."""
    for index, src, dst, _ in pieces:
        c = min(int(index.shape[0]), 2 * int(live_keys.shape[0]) + 8)
        keys = edge_keys(src[:c], dst[:c])
        stays = ((keys[:, None] == live_keys[None, :])
                 & (index[:c, None] < live_values[None, :])).any(axis=1)
        free = np.flatnonzero(~stays)
        if free.shape[0]:
            return int(src[free[0]]), int(dst[free[0]])
    return None


def _replace(ds, dd, live_keys, limits, rep) -> None:
    """In place: the entries of (``ds``, ``dd``) that stay replaced by ``rep`` (see the
    module docstring): one kernel on the GPU, its NumPy twin on the host."""
    m = int(ds.shape[0])
    if isinstance(ds, np.ndarray):
        keys = edge_keys(ds, dd)
        pos = np.arange(m)
        stays = np.zeros(m, dtype=bool)
        for k, limit in zip(live_keys.tolist(), limits.tolist()):   # a few live keys
            stays |= (keys == k) & (pos < limit)
        ds[stays], dd[stays] = rep
        return
    from hornet.core.cuda import BLOCK, _max_grid, upload
    table = upload(np.concatenate([live_keys, limits]).astype(np.int64))
    _prepared("window_expiring", 9)(min(-(-m // BLOCK), _max_grid()), BLOCK, [
        ds.data.ptr, dd.data.ptr, m, table.data.ptr, int(live_keys.shape[0]), int(rep[0]),
        int(rep[1]), ds.data.ptr, dd.data.ptr])


_TABLE: list = []          # the set of drop_named, reused (kernels of one batch in order)
_LAUNCHES: dict = {}


def _prepared(name: str, nargs: int):
    from hornet.core.cuda import PreparedLaunch, function
    fn = _LAUNCHES.get(name)
    if fn is None:
        fn = _LAUNCHES[name] = PreparedLaunch(function(_CU, name), nargs)
    return fn


def drop_named(pairs, named, null: tuple[int, int]) -> None:
    """In place: every pair of ``pairs`` ((src, dst) int32 contiguous arrays, CuPy or NumPy)
    that the pairs ``named`` (the same kind) hold too becomes ``null`` (a pair that names no
    edge of the graph). Undirected pairs must be given alike (smaller id first). A hash set
    of ``named`` on the device: a memset and two launches, no synchronization.

    >>> p = (np.array([1, 2, 3], np.int32), np.array([5, 6, 7], np.int32))
    >>> drop_named(p, (np.array([2], np.int32), np.array([6], np.int32)), (9, 9))
    >>> [a.tolist() for a in p]
    [[1, 9, 3], [5, 9, 7]]
    """
    n, m = int(named[0].shape[0]), int(pairs[0].shape[0])
    if n == 0 or m == 0:
        return
    if isinstance(pairs[0], np.ndarray):          # (the host's twin)
        hit = np.isin(edge_keys(pairs[0], pairs[1]), edge_keys(named[0], named[1]))
        pairs[0][hit], pairs[1][hit] = null
        return
    import cupy
    from hornet.core.cuda import BLOCK, _max_grid
    bits = max(10, (2 * n - 1).bit_length())
    if not _TABLE or _TABLE[0].shape[0] < 1 << bits:
        _TABLE[:] = [cupy.empty(1 << bits, dtype=cupy.uint64)]
    table = _TABLE[0]
    size = 1 << bits
    table.data.memset_async(0xFF, size * 8)
    grid = min(-(-max(n, m) // BLOCK), _max_grid())
    _prepared("named_fill", 6)(grid, BLOCK, [named[0].data.ptr, named[1].data.ptr, n,
                                             table.data.ptr, 64 - bits, size - 1])
    _prepared("named_drop", 8)(grid, BLOCK, [pairs[0].data.ptr, pairs[1].data.ptr, m,
                                             table.data.ptr, 64 - bits, size - 1,
                                             int(null[0]), int(null[1])])


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
