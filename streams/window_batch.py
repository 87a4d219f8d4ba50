"""An insert-only batch of a windowed replay applied to the graph: the inserts, the refreshes
of ``weight`` (weighted streams) and the window's record, in work proportional to the batch.

The graph stores no event index: the window keeps the latest refresh of each edge itself
(:mod:`streams.window`), so that the graph update of a windowed batch is that of the same
batch without a window. :func:`insert_refresh` is called by
:func:`streams.replay._apply_batch` for streams without an ``op`` column replayed with a
sliding window, :func:`insert_expire` instead where no analytic is fed during the batch (the
batch and the window's expiry after it in one graph call, or on the GPU up to a medium batch's
size the insert and then the expiry's delete); :func:`last_seen` is the window's
look-up of the graph for streams that delete edges too (their graph carries ``last_seen``).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from hornet.change import EdgeChange

from .analytics import BatchChanges, to_host
from .window import EventWindow
from .window_index import (NEW_EDGE, NO_ENTRY, REFRESH, classify_events, classify_one_extra,
                           edge_keys, key_sum, one_extra_kind)

__all__ = ["insert_refresh", "insert_expire", "last_seen"]


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
        ch.inserted = g.insert_edges(*_reversed(s, d), weight=_reversed(w)[0])
    feed(ch.inserted)
    _refresh_record(g, ch, s, d, idx, w, window, feed, _classify(g, ch.inserted, s, d))


def insert_expire(g, ch: BatchChanges, s, d, idx, w, window: EventWindow, end: int) -> bool:
    """:func:`insert_refresh` and the window's expiry after it (``window.expired(end)``,
    ``end`` the batch's stop index), with the same result and the same changes in ``ch``:
    on the CPU in one graph call (:meth:`hornet.Graph.apply_edges`: the batch's edges
    inserted, the expired ones deleted, one batch), on the GPU as an insert and a delete
    whose pairs stay on the device (:func:`_insert_expire_device`); returns True, or False
    with nothing done where it does not apply: it is for replays that feed no analytic
    during the batch (each analytic sees the graph after it), while the window tracks
    refreshes (:attr:`EventWindow.tracks_refreshes`) and the batch holds at most as many
    events as the window (none of its own events leaves it at its end).

    CPU: the expired edges are taken from the window before the batch is recorded: an edge
    whose last event leaves the window expires unless the batch refreshes it, which only
    the insert finds out. Such an edge (a present edge that reoccurs just as its last
    event leaves: rare) is deleted by the call; it is inserted again with the values it
    had and left out of ``ch.expired`` before the batch's refreshes are applied. The batch
    is recorded with its distinct edges in the graph's sorted form
    (:class:`hornet.batch.mixed.SortedEdges`, 8 bytes per stored entry while it is in the
    window); when exactly that record expires, the delete takes that form instead of
    sorting the expired pairs again."""
    if not window.tracks_refreshes or idx[0] < end - window.window:
        return False
    if g.device == "gpu" and g.vertex_map is None:
        return _insert_expire_device(g, ch, s, d, idx, w, window, end)
    es, ed, kept = window.expired_edges(end)
    # the expired edges in the graph's sorted form when they are exactly the edges that
    # one earlier batch inserted (the usual case): deleted without sorting them again
    delete = kept if kept is not None else (es, ed) if es.size else None
    if w is None:
        ch.inserted, expired, kept = g.apply_edges((s, d), delete, keep_sorted=True)
    else:
        ch.inserted, expired, kept = g.apply_edges(_reversed(s, d), delete, keep_sorted=True,
                                                   weight=_reversed(w)[0])
    kind = _classify(g, ch.inserted, s, d)
    if kind is not None and expired is not None:
        refresh = kind == REFRESH
        if refresh.any():
            expired = _put_back(g, expired, edge_keys(s[refresh], d[refresh]))
    ch.expired = expired
    _refresh_record(g, ch, s, d, idx, w, window, _ignore, kind, kept)
    return True


def _insert_expire_device(g, ch, s, d, idx, w, window: EventWindow, end: int) -> bool:
    """:func:`insert_expire` on a GPU graph, with the window's expiry decided on the device:
    the batch's pairs go up once (int32: the replay's ids are below 2^31) and are queued as
    they are, every event (:meth:`streams.window.EventWindow.record_all`: the window's map
    of each queued edge's latest entry raised on the device), then the leaving entries'
    pairs become the expiry's delete where they are
    (:meth:`~streams.window.EventWindow.expired_pairs`: an entry with a later entry of its
    edge queued, such as one the batch refreshes, is nulled; no host pass over the batch's
    or the leaving entries, no upload of the expired pairs). The batch's events need no
    classification, only a weighted batch's refreshes, for their weights.

    A batch of at most :data:`TWO_CALLS_ENTRIES` entries (a medium batch's size) is
    inserted, then the expiry goes as a delete of its own, which takes the graph's
    medium-batch path (``Graph.medium_deletes``, set on the replay's graph: the expired
    edges are spread over short lists, which that path rewrites one warp each). A larger
    batch and its expiry go in one mixed call (:meth:`hornet.Graph.apply_edges`)."""
    mixed = MIXED_CALL if MIXED_CALL is not None else \
        s.shape[0] * (1 if g.directed else 2) > TWO_CALLS_ENTRIES
    xp = g._xp
    pairs = _uploaded(g, s, d)
    insert = pairs if w is None else tuple(xp.ascontiguousarray(a[::-1]) for a in pairs)
    weight = {} if w is None else {"weight": _reversed(w)[0]}
    if mixed:
        window.record_all(s, d, idx, pairs)
        ch.inserted, ch.expired = g.apply_edges(insert, window.expired_pairs(end), **weight)
    else:
        # the insert first: the window's kernels and host work then run while the device
        # rewrites its lists (its read-back waits for them otherwise). The expired edges are
        # none of the batch's (each has no later entry queued, and the batch's events are
        # queued), so the insert and the delete commute.
        ch.inserted = g.insert_edges(*insert, **weight)
        window.record_all(s, d, idx, pairs)
        delete = window.expired_pairs(end)
        if delete is not None:
            g.medium_deletes = True
            ch.expired = g.delete_edges(*delete)
    if w is not None:
        kind = _classify_uploaded(g, ch.inserted, s, d, pairs)
        if kind is not None:
            refresh = kind == REFRESH
            if refresh.any():
                ch.updated = g.update_edges(s[refresh], d[refresh], weight=w[refresh])
    return True


#: GPU windowed batches of at most this many entries (the medium-batch path's limit,
#: hornet.batch.gpu.medium.MEDIUM_ENTRIES) take an insert and a delete, larger ones one
#: mixed call
TWO_CALLS_ENTRIES = 1 << 15
#: True or False: every GPU windowed batch as one mixed call or as two (None: by size)
MIXED_CALL = None


def _uploaded(g, s, d):
    """``s``, ``d`` as int32 arrays on the graph's device (the replay's ids are below 2^31):
    cast into one (2, n) host array, which goes up in one copy (staged in pinned memory up to
    :data:`hornet.batch.gpu.pairs.STAGED_PAIR_BYTES`)."""
    both = np.empty((2, s.shape[0]), dtype=np.int32)
    both[0] = s
    both[1] = d
    if g.device == "gpu":
        from hornet.batch.gpu.pairs import STAGED_PAIR_BYTES
        from hornet.core.cuda import cupy, upload
        both = upload(both) if both.nbytes <= STAGED_PAIR_BYTES else cupy.asarray(both)
    return both[0], both[1]


def _put_back(g, expired, refreshed: np.ndarray):
    """The edges of the delete change ``expired`` whose keys are in ``refreshed`` (int64,
    a few) inserted again with the values they had; returns the change without them."""
    src, dst = to_host(expired.src), to_host(expired.dst)
    back = np.isin(edge_keys(src, dst), refreshed)
    if not back.any():
        return expired
    values = {k: to_host(v) for k, v in expired.properties.items()}
    g.insert_edges(src[back], dst[back], **{k: v[back] for k, v in values.items()})
    keep = ~back
    return EdgeChange(expired.kind, src[keep], dst[keep],
                      {k: v[keep] for k, v in values.items()}, expired.self_loops_skipped)


def _reversed(*arrays):
    return [np.ascontiguousarray(a[::-1]) for a in arrays]


def _ignore(change) -> None:
    pass


def _classify(g, ins, s, d):
    """The class of each event of the batch (``s``, ``d``) whose insert made the change
    ``ins`` (see :func:`streams.window_index.classify_events`), or None when every event
    inserted an edge of its own (the usual case of a wide id space)."""
    if len(ins) == s.shape[0]:
        return None
    keys = edge_keys(s, d)
    if s.shape[0] - len(ins) == 1:
        # one event inserted nothing: the key sums name it (a repeat or a present edge now
        # and then)
        extra = (int(keys.view(np.uint64).sum()) - key_sum(ins.src, ins.dst, g.directed)) \
            % (1 << 64)
        return classify_one_extra(keys, extra)
    a, b = to_host(ins.src), to_host(ins.dst)
    if not g.directed:
        a, b = np.minimum(a, b), np.maximum(a, b)
    return classify_events(keys, edge_keys(a, b))


def _classify_uploaded(g, ins, s, d, pairs):
    """:func:`_classify` for a batch whose pairs (``s``, ``d`` host int64) are on the
    device too (``pairs``, int32): where one event inserted nothing, its key is the
    difference of the batch's and the inserted edges' key sums, both reduced on the
    device (one scalar read back), and its events are found by comparing the ids; where
    a few inserted nothing (at most :data:`FEW_EXTRA`), :func:`few_extra_kind` finds
    them on the device."""
    n = s.shape[0]
    extra = n - len(ins)
    if g.device != "gpu" or extra == 0 or extra > FEW_EXTRA:
        return _classify(g, ins, s, d)
    if extra > 1:
        return few_extra_kind(g._xp, pairs, ins.src, ins.dst, g.directed, s, d)
    import cupy
    u, shift = cupy.uint64, cupy.uint64(32)
    a, b = ins.src.astype(u), ins.dst.astype(u)
    if not g.directed:
        a, b = cupy.minimum(a, b), cupy.maximum(a, b)
    extra = int(((pairs[0].astype(u) << shift) | pairs[1].astype(u)).sum()
                - ((a << shift) | b).sum())
    return one_extra_kind(n, np.flatnonzero((s == extra >> 32) & (d == extra & 0xFFFFFFFF)))


#: batches with more events than inserted edges by at most this: classified on the device
FEW_EXTRA = 64


def few_extra_kind(xp, pairs, ins_src, ins_dst, directed: bool, s, d) -> np.ndarray:
    """:func:`streams.window_index.classify_events` of a batch whose events are the pairs
    ``pairs`` ((src, dst) int arrays of module ``xp``: NumPy or CuPy; undirected ones with
    the smaller id first) and ``s``, ``d`` (the same pairs on the host), whose insert made
    the edges ``ins_src``, ``ins_dst`` (``xp``, any order), where few events inserted
    nothing: the events whose key the insert did not make or that share their key with
    another event (found on the device by sorting the keys, a few positions read back)
    are classified on the host, every other event is the only one of a new edge."""
    i64 = xp.int64
    keys = (pairs[0].astype(i64) << 32) | pairs[1].astype(i64)
    a, b = ins_src.astype(i64), ins_dst.astype(i64)
    if not directed:
        a, b = xp.minimum(a, b), xp.maximum(a, b)
    made = xp.sort((a << 32) | b)
    found = xp.zeros(keys.shape[0], dtype=bool)
    if made.shape[0]:
        at = xp.minimum(xp.searchsorted(made, keys), made.shape[0] - 1)
        found = made[at] == keys
    order = xp.argsort(keys)
    sk = keys[order]
    shared = xp.zeros(keys.shape[0], dtype=bool)
    if keys.shape[0] > 1:
        same = sk[1:] == sk[:-1]                  # key equal to the next one's (sorted)
        shared[1:] |= same
        shared[:-1] |= same
    look = xp.zeros(keys.shape[0], dtype=bool)
    look[order] = shared
    look |= ~found
    at = xp.flatnonzero(look)
    found_at = found[at]
    if xp is not np:
        at, found_at = at.get(), found_at.get()
    kind = np.full(keys.shape[0], NEW_EDGE, dtype=np.int8)
    if at.shape[0]:
        k = edge_keys(s[at], d[at])
        by_key = np.lexsort((at, k))               # each key's events in event order
        k, pos, f = k[by_key], at[by_key], found_at[by_key]
        last = np.ones(k.shape[0], dtype=bool)
        last[:-1] = k[1:] != k[:-1]
        kind[pos] = np.where(last, np.where(f, NEW_EDGE, REFRESH), NO_ENTRY)
    return kind


def _refresh_record(g, ch, s, d, idx, w, window, feed, kind, kept=None) -> None:
    """After the batch's insert: the refreshes of ``weight`` and the window's record of the
    events (``kind``: from :func:`_classify`; ``kept``: the batch's distinct edges in the
    graph's sorted form, recorded with them)."""
    if kind is None:
        window.record(s, d, idx, refresh=np.zeros(s.shape[0], dtype=bool), kept=kept)
        return
    mark = kind != NO_ENTRY
    refresh = kind == REFRESH
    if w is not None and refresh.any():
        ch.updated = g.update_edges(s[refresh], d[refresh], weight=w[refresh])
        feed(ch.updated)
    # (the marked events are the batch's distinct edges: ``kept`` stands for them too)
    if mark.all():
        window.record(s, d, idx, refresh=refresh, kept=kept)
        return
    window.record(s[mark], d[mark], idx[mark], refresh=refresh[mark], kept=kept)


def last_seen(g, src: np.ndarray, dst: np.ndarray):
    """(found, last_seen) of the edges (src[i], dst[i]), host arrays."""
    found, values = g.edge_values(src, dst, names=["last_seen"])
    return to_host(found), to_host(values["last_seen"])
