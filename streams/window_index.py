"""The window's own record of edge events, kept outside the graph: a hash map from edge key
to the latest index of its refresh events, and the classification of an insert-only
batch's events. With these, an insert-only windowed replay stores no ``last_seen`` property
in the graph, and its graph updates are those of the same replay without a window.

Edge keys are int64 ``src << 32 | dst`` with ids in [0, 2^31): never negative, so that the
map marks free and removed slots with -1 and -2.

    >>> import numpy as np
    >>> m = LatestIndex()
    >>> m.raise_to(np.array([7, 9, 7]), np.array([3, 4, 5]))
    >>> m.get(np.array([7, 9, 8])).tolist()
    [5, 4, -1]
    >>> m.remove_up_to(np.array([7, 9]), np.array([4, 4]))   # 7 has a later index: kept
    >>> m.get(np.array([7, 9])).tolist(), len(m)
    ([5, -1], 1)
"""
from __future__ import annotations

import numpy as np

from hornet.core.jit import ix, njit

__all__ = ["LatestIndex", "classify_events", "classify_one_extra", "one_extra_kind", "key_sum",
           "edge_keys",
           "NO_ENTRY", "NEW_EDGE", "REFRESH"]

FREE, REMOVED = -1, -2
_MULT = np.uint64(0x9E3779B97F4A7C15)     # Fibonacci hashing: the top bits pick the slot
MIN_SLOTS = 1 << 10


def edge_keys(s: np.ndarray, d: np.ndarray) -> np.ndarray:
    """int64 keys ``s << 32 | d`` (E,) of edges (s[i], d[i]) with ids in [0, 2^31)."""
    return (np.asarray(s).astype(np.int64) << 32) | np.asarray(d).astype(np.int64)


@njit(inline="always")
def _slot(key, shift):
    return np.int64((np.uint64(key) * _MULT) >> np.uint64(shift))


@njit
def _raise_to(table_keys, table_values, shift, keys, values):
    """table[keys[i]] = max(table[keys[i]], values[i]) for every i; returns (free slots
    taken, removed slots taken again): an absent key goes to the first removed slot on its
    probe path, else to the free slot that ends it."""
    mask = table_keys.shape[0] - 1
    taken = 0
    reused = 0
    for i in range(keys.shape[0]):
        k = keys[ix(i)]
        h = _slot(k, shift)
        reuse = -1
        while True:
            t = table_keys[ix(h)]
            if t == k:
                if values[ix(i)] > table_values[ix(h)]:
                    table_values[ix(h)] = values[ix(i)]
                break
            if t == FREE:
                if reuse < 0:
                    reuse = h
                    taken += 1
                else:
                    reused += 1
                table_keys[ix(reuse)] = k
                table_values[ix(reuse)] = values[ix(i)]
                break
            if t == REMOVED and reuse < 0:
                reuse = h
            h = (h + 1) & mask
    return taken, reused


@njit
def _get(table_keys, table_values, shift, keys, out):
    """out[i] = table[keys[i]], or -1 where absent."""
    mask = table_keys.shape[0] - 1
    for i in range(keys.shape[0]):
        k = keys[ix(i)]
        h = _slot(k, shift)
        out[ix(i)] = -1
        while True:
            t = table_keys[ix(h)]
            if t == k:
                out[ix(i)] = table_values[ix(h)]
                break
            if t == FREE:
                break
            h = (h + 1) & mask


@njit
def _remove_up_to(table_keys, table_values, shift, keys, values):
    """Remove keys[i] where its value is <= values[i]; returns the number removed."""
    mask = table_keys.shape[0] - 1
    removed = 0
    for i in range(keys.shape[0]):
        k = keys[ix(i)]
        h = _slot(k, shift)
        while True:
            t = table_keys[ix(h)]
            if t == k:
                if table_values[ix(h)] <= values[ix(i)]:
                    table_keys[ix(h)] = REMOVED
                    removed += 1
                break
            if t == FREE:
                break
            h = (h + 1) & mask
    return removed


@njit
def _take_stale(table_keys, table_values, shift, live, index, src, dst, out_src, out_dst,
                start):
    """One pass over leaving window entries (index[i], src[i], dst[i]): the entry's edge
    expires unless the table holds a later index for it; an expiring edge named in the table
    leaves the table. The expiring edges go to out_src / out_dst from ``start`` on, in entry
    order. Returns (expiring entries written, table entries removed)."""
    mask = table_keys.shape[0] - 1
    at = start
    removed = 0
    for i in range(index.shape[0]):
        later = np.int64(-1)
        h = np.int64(0)
        if live:
            k = (np.int64(src[ix(i)]) << 32) | np.int64(dst[ix(i)])
            h = _slot(k, shift)
            while True:
                t = table_keys[ix(h)]
                if t == k:
                    later = table_values[ix(h)]
                    break
                if t == FREE:
                    break
                h = (h + 1) & mask
        if later <= index[ix(i)]:
            out_src[ix(at)] = src[ix(i)]
            out_dst[ix(at)] = dst[ix(i)]
            at += 1
            if later >= 0:
                table_keys[ix(h)] = REMOVED
                removed += 1
    return at - start, removed


class LatestIndex:
    """Open-addressing hash map (host, Numba) from int64 edge key (>= 0) to the largest int64
    index given for it. Work per call proportional to the keys given; the table is rebuilt
    (live entries only, twice their count at least, load under a half) when free slots run
    short."""

    def __init__(self):
        self._keys = np.full(MIN_SLOTS, FREE, dtype=np.int64)
        self._values = np.zeros(MIN_SLOTS, dtype=np.int64)
        self._live = 0
        self._used = 0         # slots not free: live and removed

    def __len__(self) -> int:
        return self._live

    @property
    def _shift(self) -> int:
        return 64 - int(self._keys.shape[0]).bit_length() + 1

    def raise_to(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Map every ``keys[i]`` (int64 (K,), >= 0) to the largest of its current value and
        ``values[i]`` (int64 (K,))."""
        if keys.shape[0] == 0:
            return
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        values = np.ascontiguousarray(values, dtype=np.int64)
        self._fit(self._live + keys.shape[0])
        taken, reused = _raise_to(self._keys, self._values, self._shift, keys, values)
        self._live += taken + reused
        self._used += taken

    def get(self, keys: np.ndarray) -> np.ndarray:
        """int64 (K,): the value of each of ``keys`` (int64 (K,)), -1 where absent."""
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        out = np.empty(keys.shape[0], dtype=np.int64)
        if self._live and keys.shape[0]:
            _get(self._keys, self._values, self._shift, keys, out)
        else:
            out.fill(-1)
        return out

    def remove_up_to(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Remove each of ``keys`` whose value is at most the matching ``values``."""
        if self._live and keys.shape[0]:
            self._live -= _remove_up_to(self._keys, self._values, self._shift,
                                        np.ascontiguousarray(keys, dtype=np.int64),
                                        np.ascontiguousarray(values, dtype=np.int64))

    def items(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys, values) int64 of the live entries, in slot order (a pass over the
        table's slots)."""
        live = self._keys >= 0
        return self._keys[live], self._values[live]

    def take_stale(self, pieces) -> tuple[np.ndarray, np.ndarray]:
        """The edges of leaving window entries that expire, and those edges' keys removed:
        ``pieces`` is a list of (index int64 (m,), src (m,), dst (m,)) host arrays (ids in
        [0, 2^31), one integer dtype across pieces); an entry expires unless the map holds
        a later index for its edge (``later <= index``: the map's value is the entry's own
        refresh or older), and an expiring edge named in the map leaves it. Returns (src,
        dst) of the expiring entries in entry order, one hash probe per entry in one pass
        (the same as :meth:`get` then :meth:`remove_up_to` of the expiring named keys)."""
        total = sum(int(p[0].shape[0]) for p in pieces)
        dtype = np.result_type(*[p[1].dtype for p in pieces], *[p[2].dtype for p in pieces])
        out_s = np.empty(total, dtype=dtype)
        out_d = np.empty(total, dtype=dtype)
        at = 0
        for index, src, dst in pieces:
            if index.shape[0] == 0:
                continue
            # writable pairs (a read-only stream column is copied): one compile of the kernel
            wrote, removed = _take_stale(self._keys, self._values, self._shift,
                                         self._live > 0, index,
                                         np.require(src, dtype, "CW"),
                                         np.require(dst, dtype, "CW"), out_s, out_d, at)
            at += wrote
            self._live -= removed
        return out_s[:at], out_d[:at]

    def _fit(self, live_bound: int) -> None:
        """Rebuild when the slots in use could pass half the table."""
        cap = self._keys.shape[0]
        if 2 * (self._used + (live_bound - self._live)) <= cap:
            return
        new_cap = MIN_SLOTS
        while new_cap < 4 * live_bound:
            new_cap *= 2
        live = self._keys >= 0
        keys, values = self._keys[live], self._values[live]
        self._keys = np.full(new_cap, FREE, dtype=np.int64)
        self._values = np.zeros(new_cap, dtype=np.int64)
        self._live = self._used = 0
        if keys.shape[0]:
            taken, _ = _raise_to(self._keys, self._values, self._shift, keys, values)
            self._live = self._used = taken


# event classes of an insert-only batch (classify_events)
NO_ENTRY, NEW_EDGE, REFRESH = 0, 1, 2


@njit
def _member(set_keys, k, shift, add):
    """True when key ``k`` is in the open-addressing set ``set_keys``; otherwise False,
    and with ``add`` the key is added."""
    mask = set_keys.shape[0] - 1
    h = _slot(k, shift)
    while True:
        t = set_keys[ix(h)]
        if t == k:
            return True
        if t == FREE:
            if add:
                set_keys[ix(h)] = k
            return False
        h = (h + 1) & mask


@njit
def _classify(keys, inserted, out, set_keys, seen_keys, shift):
    for j in range(inserted.shape[0]):
        _member(set_keys, inserted[ix(j)], shift, True)
    for i in range(keys.shape[0] - 1, -1, -1):
        k = keys[ix(i)]
        if _member(seen_keys, k, shift, True):
            out[ix(i)] = NO_ENTRY
        else:
            out[ix(i)] = NEW_EDGE if _member(set_keys, k, shift, False) else REFRESH


def classify_events(keys: np.ndarray, inserted: np.ndarray) -> np.ndarray:
    """The class of each event of an insert-only batch, int8 (E,): NEW_EDGE for the last event
    of an edge the batch inserted, REFRESH for the last event of an edge present before the
    batch, NO_ENTRY for an event that a later event of the same edge in the batch
    supersedes.

    ``keys``: int64 (E,) edge keys of the batch's events in event order (self-loops dropped);
    ``inserted``: int64 (I,) keys of the edges the batch inserted (any order). Host arrays;
    one pass over each, hash tables of at least twice their length."""
    n = max(int(keys.shape[0]), int(inserted.shape[0]), 1)
    cap = 1
    while cap < 2 * n:
        cap *= 2
    cap = max(cap, 16)
    shift = 64 - cap.bit_length() + 1
    out = np.empty(keys.shape[0], dtype=np.int8)
    _classify(np.ascontiguousarray(keys, dtype=np.int64),
              np.ascontiguousarray(inserted, dtype=np.int64), out,
              np.full(cap, FREE, dtype=np.int64), np.full(cap, FREE, dtype=np.int64), shift)
    return out


def key_sum(src, dst, directed: bool) -> int:
    """The sum modulo 2^64 of the edge keys of (src[i], dst[i]) (int arrays of equal length,
    NumPy or CuPy: reduced where they are, one scalar to the host); undirected edges are
    keyed with the smaller id first."""
    xp = np if isinstance(src, np.ndarray) else __import__("cupy")
    a, b = src.astype(xp.int64), dst.astype(xp.int64)
    if not directed:
        a, b = xp.minimum(a, b), xp.maximum(a, b)
    return int(((a << 32) | b).view(xp.uint64).sum()) % (1 << 64)


def classify_one_extra(keys: np.ndarray, extra: int) -> np.ndarray:
    """:func:`classify_events` for a batch with exactly one event more than edges inserted,
    given that event's key ``extra`` (the batch's key sum less the inserted edges' key sum,
    modulo 2^64: see :func:`key_sum`). Either ``extra`` names an edge present before the
    batch (its one event refreshes it) or a new edge with two events (the first is
    superseded). Two vectorised passes over ``keys`` (int64 (E,), host), no table."""
    return one_extra_kind(keys.shape[0], np.flatnonzero(keys == extra))


def one_extra_kind(n: int, at: np.ndarray) -> np.ndarray:
    """:func:`classify_one_extra` given the positions ``at`` (ascending) of the events of
    the extra key in a batch of ``n`` events."""
    kind = np.full(n, NEW_EDGE, dtype=np.int8)
    if at.shape[0] == 1:
        kind[at[0]] = REFRESH
    else:
        kind[at[:-1]] = NO_ENTRY
    return kind
