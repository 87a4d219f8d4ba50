"""Deferred small inserts: a GPU insert that returns without waiting for the device.

The small-batch path (:mod:`hornet.batch.small_path`) waits once per batch, for the header of
its prepare kernel. On a graph that defers inserts (``Graph.defer_inserts``; a stream replay
does), an insert of host (NumPy) signed integer pairs of at most ``CHUNKS`` small batches'
entries is *deferred* instead (:mod:`hornet.batch.gpu.deferred`): its ids and properties
are checked at the call (device pairs take the small path: their ids would have to be read
back, a wait as long as the small path's), its kernels are queued with the block cache's part decided on the device, and the call returns a
:class:`PendingChange` at once. The host reads the batch's header later (*settles* it,
oldest first: without a wait when a later batch is queued and the header has come, else
waiting for it): the block cache's counters, the graph's entry count and the spilled blocks
follow it, and the change's length becomes known. A stream of small inserts then costs host
work per batch and no wait, the device running behind. A larger batch is queued as
consecutive chunks of pairs, whose changes merge (:class:`MergedChange`), except where the
device state prepares larger batches at once (``grid_entries``: the GPU's grid prepare,
:mod:`hornet.batch.gpu.deferred`): a batch of up to that many entries is then one deferred
batch, insert or upsert, in a workspace of that capacity (``GRID_PREPARE``).

A directed graph's *upsert* (``DeferredState.deferred_upsert``: a weighted replay's batch)
inserts the new pairs and rewrites the present ones' properties in one deferred batch: the
prepare kernel finds the present edges too and, once the batch is known not to stall, writes
their values (the update's :class:`PendingUpdate` holds their old ones). A larger upsert is
queued as chunks whose pairs have disjoint sources, so that each keeps the batch's first
occurrences.

What stays exact: every later kernel, of any path, runs after a queued batch's in stream
order. A batch can stall, though: when a ring of the block cache holds fewer blocks than the
batch pops, it and every deferred batch after it do nothing, until settling finds it, fills
the rings it needs from the bit trees and queues them again. So everything but this module
reads the graph settled: the graph's memory manager, entry count and vertex table
(``_mm``, ``_entries``, ``_degree``, ``_size_class``, ``_edge_ptr``, :class:`DeferredState`)
settle every pending batch before they answer. The block cache's steps of refilling ahead
(``BlockCache.top_up`` and ``grow_ahead``) are made between batches as on the small path,
after settling.

Result buffers: each workspace slot keeps its own device buffers for the results of the
batch queued in it (the change's rows, property values, an upsert's found edges), made once
(``REUSE_BUFFERS``), so that a batch allocates nothing on the device. A change reads its
arrays as copies (a change's arrays outlive the slot's next batch); a change still held,
and not read yet, when its slot takes another batch is read then (:func:`_reclaim`).
"""
from __future__ import annotations

import weakref
from collections import deque
from itertools import compress
from operator import or_

import numpy as np

from ..change import EdgeChange
from .scope import batch_scope
from .small_layout import (H_ACCEPT, H_CLASS, H_FOUND, H_FREED, H_KEPT, H_LOOPS,
                           H_RESULTS, H_STALLED, MAX_FIELDS, NUM_CLASSES, SMALL_ENTRIES)
from .validate import MAX_VERTEX_ID, property_values

__all__ = ["DeferredState", "PendingChange", "PendingUpdate", "MergedChange", "MergedUpdate",
           "deferred_insert",
           "deferred_upsert", "settle",
           "make_ready", "upsert_pairs", "LIMIT_REFRESH", "CHUNKS", "GRID_PREPARE", "GRID_UPSERTS",
           "READY_ROWS",
           "READY_PEAK_GOAL", "EMULATIONS"]

#: deferred batches between two refreshes of the rings' limits on the device (besides the
#: refresh after every refill, which moves the goals)
LIMIT_REFRESH = 64
#: a graph's first deferred batch fills the rings of the classes up to this one ...
PREFILL_CLASS = 12
#: ... to at least this many blocks (and their refill level)
PREFILL_BLOCKS = 16
#: where no grid batch takes it (``GRID_PREPARE`` off, devices without grid batches), a
#: deferred insert is queued as at most this many small batches (chunks of its pairs);
#: larger inserts take the medium path. A batch of 10^4 events then costs its host about a
#: small batch's work per chunk (the medium path's several waits and allocations more), and
#: the device a one-block prepare per chunk, one after the other
CHUNKS = 3
#: rows of the vertex table made at ``Graph.defer_inserts(ready=True)`` (a stream's id space
#: grows batch after batch: the table then grows less often while the stream runs)
READY_ROWS = 1 << 14
#: ... and its block cache's refills bring a ring to this many recent peak needs at least
#: (BlockCache.peak_goal): a refill waits for every queued batch, so that a stream that
#: drains rings batch after batch refills them less often
READY_PEAK_GOAL = 32
#: every workspace slot keeps the device buffers of its batches' results (False: a batch
#: allocates its own)
REUSE_BUFFERS = True
#: a batch of more entries than a small batch, up to the device state's ``grid_entries``,
#: goes as one batch prepared by a grid of blocks (False: as chunks, CHUNKS at most)
GRID_PREPARE = True
#: ... upserts too (False: an upsert of more pairs than a small batch goes as chunks of
#: disjoint keys)
GRID_UPSERTS = True


class DeferredState:
    """The part of :class:`hornet.Graph` that deferred batches touch: its memory manager,
    entry count and vertex table as the rest of the graph reads them (``_mm``, ``_entries``,
    ``_degree``, ``_size_class``, ``_edge_ptr``: every deferred batch settled first; this
    module reads ``_mm_`` and the others with a trailing underscore, as they stand) and the
    batches' state."""

    # small GPU inserts queued without a wait and settled later (defer_inserts)
    _deferred_batches = False
    _deferred = None            # their device state (made on first use) ...
    _deferred_queue = ()        # ... the batches not settled yet, oldest first
    _deferred_count = 0
    _stalls = 0                 # times deferred batches found a ring short (queued again)
    _running_again = False      # while one runs through the small path in its place
    _queueing = False           # while a deferred insert is queued (it reads them as they are)

    def defer_inserts(self, on: bool = True, *, ready: bool = False,
                      batch_entries: int = 0) -> None:
        """GPU graphs: queue small inserts of host pairs (up to ``CHUNKS`` small batches'
        entries, or a grid batch's: see the module) without waiting for the device;
        ``insert_edges`` then returns a change whose length and arrays are read when first
        asked for, and every other call on the graph sees the inserts done (see :mod:`hornet.batch.deferred_path`). Off by
        default; a stream replay turns it on.

        ``ready``: also make now what the first deferred batch would make (the device
        state, the small classes' rings filled, room in the vertex table for
        ``READY_ROWS`` ids), so that a stream's first batch does not pay for it (a replay
        passes it once the graph's array growth is set). ``batch_entries``: with ``ready``,
        the entries of the caller's batches (pairs, twice for an undirected graph), when
        known: what batches of that size make on first use is made too (the GPU's grid
        workspaces, for batches of more entries than a small batch)."""
        self._deferred_batches = bool(on)
        if on and ready:
            make_ready(self, batch_entries)

    def deferred_upsert(self, src, dst, edge_props: dict):
        """A directed graph that defers inserts: insert the pairs ``src``, ``dst`` (host
        signed integer arrays of one small batch) that are new, and set the properties of
        those already present, in one deferred batch (first occurrence wins on repeats; the
        same graph and changes as ``update_edges`` then ``insert_edges`` of the batch).
        ``edge_props``: a value (array or scalar) for every edge property of the graph.
        Returns (inserted, updated): a :class:`PendingChange` and a :class:`PendingUpdate`,
        or None when the batch is not deferred (nothing done: the caller makes the two
        calls)."""
        return deferred_upsert(self, src, dst, edge_props)

    def _settled(self, name: str):
        if self._deferred_queue and not self._queueing:
            settle(self)
        return self.__dict__[name]

    # the memory manager, the entry count and the vertex table as everything but the
    # deferred path reads them: settled (a batch that stalled ran again, see the module)
    _mm = property(lambda self: self._settled("_mm_"),
                   lambda self, v: self.__dict__.__setitem__("_mm_", v))
    _entries = property(lambda self: self._settled("_entries_"),
                        lambda self, v: self.__dict__.__setitem__("_entries_", v))
    _degree = property(lambda self: self._settled("_degree_"),
                       lambda self, v: self.__dict__.__setitem__("_degree_", v))
    _size_class = property(lambda self: self._settled("_size_class_"),
                           lambda self, v: self.__dict__.__setitem__("_size_class_", v))
    _edge_ptr = property(lambda self: self._settled("_edge_ptr_"),
                         lambda self, v: self.__dict__.__setitem__("_edge_ptr_", v))


class PendingChange(EdgeChange):
    """The :class:`~hornet.change.EdgeChange` of a deferred insert: ``src``, ``dst``,
    ``properties`` and ``self_loops_skipped`` are read from the batch once it is settled
    (the first read settles it and the batches before it, waiting for its header)."""

    kind = "insert"
    previous = property(lambda self: {})

    def __init__(self, graph):
        self.vertex_map = None
        self._graph = graph
        self._done = None

    def _result(self) -> EdgeChange:
        if self._done is None:
            settle(self._graph, self)
        if isinstance(self._done, tuple):       # the batch's buffers: cut now
            self._done = self._cut(self._done)
        return self._done

    @staticmethod
    def _cut(done) -> EdgeChange:
        """The change from (rows, outs, length, self-loops, capacity) of an insert's buffers
        (copies: the buffers are the workspace slot's, see the module)."""
        rows, outs, n, loops, cap = done
        return EdgeChange("insert", rows[:n].copy(),
                          rows[cap:cap + n].copy(),
                          {k: v[:n].copy() for k, v in outs.items()}, loops)

    def _resolve(self, change) -> None:
        """Settled: an EdgeChange, or (rows, outs, length, self-loops, capacity) of the
        batch's buffers, cut when first read."""
        self._done = change

    def __len__(self) -> int:
        if self._done is None:
            settle(self._graph, self)
        done = self._done
        return done[2] if isinstance(done, tuple) else len(done)

    @property
    def pending(self) -> bool:
        """Whether the batch is still unsettled."""
        return self._done is None

    src = property(lambda self: self._result().src)
    dst = property(lambda self: self._result().dst)
    properties = property(lambda self: self._result().properties)
    self_loops_skipped = property(lambda self: self._result().self_loops_skipped)

    def __repr__(self) -> str:
        if self._done is None:
            return f"EdgeChange({self.kind}, pending)"
        return super().__repr__()


class PendingUpdate(PendingChange):
    """The update part of a deferred upsert (:func:`deferred_upsert`): the present edges
    whose properties it rewrote, sorted by (src, dst), their new values in ``properties`` and
    the replaced ones in ``previous``, read once settled."""

    kind = "update"

    @staticmethod
    def _cut(done) -> EdgeChange:
        """The change from (rows, found, length, capacity) of an upsert's buffers."""
        rows, found, n, cap = done
        at = 2 * cap
        return EdgeChange("update", rows[at:at + n].copy(),
                          rows[at + cap:at + cap + n].copy(),
                          {k: new[:n].copy() for k, (new, _) in found.items()}, 0,
                          {k: old[:n].copy() for k, (_, old) in found.items()})

    previous = property(lambda self: self._result().previous)


class MergedChange(PendingChange):
    """The change of a batch queued as consecutive chunks (``parts``: their changes, pending
    or not): their edges together, sorted by (src, dst) when first read; the length is
    theirs summed."""

    def __init__(self, graph, parts):
        super().__init__(graph)
        self._parts = parts

    def _result(self) -> EdgeChange:
        if self._done is None:
            parts = [p._result() if isinstance(p, PendingChange) else p for p in self._parts]
            xp = self._graph._xp
            src = xp.concatenate([p.src for p in parts])
            dst = xp.concatenate([p.dst for p in parts])
            order = xp.argsort((src.astype(xp.int64) << 32) | dst.astype(xp.int64))
            props = {k: xp.concatenate([p.properties[k] for p in parts])[order]
                     for k in parts[0].properties}
            prev = {k: xp.concatenate([p.previous[k] for p in parts])[order]
                    for k in parts[0].previous}
            self._done = EdgeChange(self.kind, src[order], dst[order], props,
                                    sum(int(p.self_loops_skipped) for p in parts), prev)
            self._parts = None
        return self._done

    def __len__(self) -> int:
        if self._done is not None:
            return len(self._done)
        return sum(len(p) for p in self._parts)

    @property
    def pending(self) -> bool:
        return self._done is None and any(getattr(p, "pending", False) for p in self._parts)


class MergedUpdate(MergedChange):
    """The update of an upsert queued as chunks (their :class:`PendingUpdate` parts, whose
    keys are disjoint), merged as :class:`MergedChange` merges, ``previous`` too."""

    def __init__(self, graph, parts):
        self.kind = "update"
        self.vertex_map = None
        self._graph = graph
        self._done = None
        self._parts = parts

    previous = property(lambda self: self._result().previous)


class _Ticket:
    """A queued batch: its workspace, host pairs (2, m), property values (host arrays where
    the device state stages them, else device arrays), result
    buffers and change; an upsert's also its found edges' buffers (per property: new and old
    values) and its update change; a grid batch's capacity and grid slot; whether the pairs
    are the view of the pinned row they are staged from (``staged``)."""
    __slots__ = ("slot", "both", "values", "rows", "outs", "change", "found", "update", "cap",
                 "grid", "staged")

    def __init__(self, slot, both, values, rows, outs, change, found=None, update=None,
                 cap=SMALL_ENTRIES, grid=-1, staged=False):
        self.slot, self.both, self.values = slot, both, values
        self.rows, self.outs, self.change = rows, outs, change
        self.found, self.update, self.cap, self.grid = found, update, cap, grid
        self.staged = staged

    def where(self) -> dict:
        """The device state's keywords of a grid batch (its capacity and grid slot); none
        for a small batch."""
        return {} if self.cap == SMALL_ENTRIES else {"cap": self.cap, "grid": self.grid}


#: device -> a factory of the device part of deferred batches, for devices other than the GPU
#: (tests register an emulation of the GPU's kernels on the CPU backend)
EMULATIONS: dict = {}


def _device_state(device: str):
    if device == "gpu":
        from .gpu.deferred import DeferredBatches
        return DeferredBatches()
    return EMULATIONS[device]()


def _eligible(g, src, dst) -> bool:
    if not g._deferred_batches or dst is None or (g.device != "gpu" and
                                                  g.device not in EMULATIONS):
        return False
    if not (isinstance(src, np.ndarray) and isinstance(dst, np.ndarray)):
        return False
    if src.ndim != 1 or src.shape != dst.shape or not src.shape[0]:
        return False
    if src.dtype.kind != "i" or dst.dtype.kind != "i":
        return False
    if len(g._edge_schema) >= MAX_FIELDS:
        return False
    return src.shape[0] * (1 if g.directed else 2) <= max(CHUNKS * SMALL_ENTRIES,
                                                          _grid_entries(g))


def upsert_pairs(g) -> int:
    """Most pairs that one deferred upsert of graph ``g`` queues as one batch (more go as
    chunks of disjoint keys): a small batch's, or the GPU's grid-prepared batch's."""
    return max(SMALL_ENTRIES, _grid_entries(g) if GRID_UPSERTS else 0)


def _grid_entries(g) -> int:
    """Most entries of one deferred batch prepared at once beyond a small batch's (0:
    none): the device state's ``grid_entries`` (GPU), with ``GRID_PREPARE``."""
    if not GRID_PREPARE or g.device != "gpu":
        return 0
    if g._deferred is not None:
        return getattr(g._deferred, "grid_entries", 0)
    from .gpu.deferred import GRID_ENTRIES
    return GRID_ENTRIES


def deferred_insert(g, src, dst, edge_props) -> EdgeChange | None:
    """Queue the insert of host pairs ``src``, ``dst`` (``edge_props`` as the graph's
    insert takes them) without waiting; a :class:`PendingChange`, or None when the
    batch is not deferred (another path takes it, every pending batch settled first). A
    batch of
    more entries than one small batch holds (at most ``CHUNKS`` times as many) is queued as
    consecutive chunks of pairs: inserting them one after the other gives the batch's
    graph (a repeat in a later chunk finds the edge present; the first occurrence wins),
    and its change is theirs, merged (:class:`MergedChange`)."""
    if not _eligible(g, src, dst):
        return None
    g._queueing = True
    try:
        return _deferred_insert(g, src, dst, edge_props)
    finally:
        g._queueing = False


def deferred_upsert(g, src, dst, edge_props: dict):
    """Queue the upsert of host pairs ``src``, ``dst`` (see ``DeferredState.deferred_upsert``)
    without waiting: (PendingChange, PendingUpdate), or None when it is not deferred (a
    graph without deferral, an undirected one, pairs of more than one small batch, a
    property not given, ids out of range: nothing done). Values are checked before anything
    is queued, as the insert's are."""
    if not (g.device == "gpu" and _eligible(g, src, dst) and g.directed and
            g.vertex_map is None and set(edge_props) == set(g._edge_schema)):
        return None
    parts = None
    if src.shape[0] > upsert_pairs(g):
        parts = _key_chunks(src)
        if parts is None:
            return None
    g._queueing = True
    try:
        with batch_scope(g, src.shape[0]):
            return _deferred_insert(g, src, dst, edge_props, upsert=True, parts=parts)
    finally:
        g._queueing = False


def _key_chunks(src):
    """An upsert of more pairs than a small batch holds, as chunks whose keys are disjoint
    (every pair of one source in one chunk: src modulo the chunk count), so that each chunk's
    first occurrences are the batch's: (order: a stable permutation of the pairs, bounds:
    the chunks' ends in it), or None when no count up to twice CHUNKS keeps every chunk
    within a small batch."""
    n = src.shape[0]
    for k in range(-(-n // SMALL_ENTRIES), 2 * CHUNKS + 1):
        part = (src % k).astype(np.int8)
        counts = np.bincount(part, minlength=k)
        if counts.max() <= SMALL_ENTRIES:
            return np.argsort(part, kind="stable"), np.cumsum(counts)
    return None


def _start(g) -> None:
    """The graph's device state of deferred batches, made on first use."""
    g._deferred = _device_state(g.device)
    g._deferred_queue = deque()
    g._deferred_count = 0
    # per workspace slot: its result buffers ((dtype pairs of the properties, upsert) ->
    # (rows, outs, found)) and weak references to the changes of the last batch queued in it
    g._deferred_buffers = [{} for _ in range(g._deferred.slots)]
    g._deferred_users = [() for _ in range(g._deferred.slots)]
    g._deferred_next = 0


def make_ready(g, batch_entries: int = 0) -> None:
    """What a graph's first deferred batches make, made now (``Graph.defer_inserts(ready=
    True)``): the device state, the rings of the small classes filled (:func:`_prefill`),
    block arrays for the classes whose arrays lack room for their next refill (the block
    cache's grow_ahead steps), rings under their trigger refilled, the memory manager's
    lookup, room in the vertex table for ``READY_ROWS`` ids (the id space itself does not
    grow) and the rings' limits on the device, every workspace slot's result buffers; with
    ``batch_entries`` beyond a small batch's (and up to the device state's grid batches'),
    the grid batches' workspaces, kernels and result buffers.
    Called again after ``Graph.reserve``, it makes what the reserve left to the first batch.
    Devices without deferred batches: nothing."""
    if g.device != "gpu" and g.device not in EMULATIONS:
        return
    if g._deferred is None:
        _start(g)
    caps = [SMALL_ENTRIES]
    if SMALL_ENTRIES < batch_entries <= _grid_entries(g):
        g._deferred.make_grid()
        caps.append(_grid_entries(g))
    if REUSE_BUFFERS:
        # every slot's result buffers, of the inserts and (a directed graph with edge
        # properties on the GPU: a weighted replay's batches) the upserts
        kinds = (False, True) if g.directed and g._edge_schema and g.device == "gpu" else \
            (False,)
        for cap in caps:
            for upsert in kinds:
                for slot in range(g._deferred.slots):
                    _buffers(g, slot, upsert, cap)
    mm = g._mm
    cache = mm.block_cache()
    cache.peak_goal = max(cache.peak_goal, READY_PEAK_GOAL)
    if not g._deferred.prefilled:
        _prefill(g, mm, cache)
    # the arrays the refills just made short of room for their next refill (what the next
    # batches' grow_ahead steps would make, one a batch, each followed by a lookup rebuild)
    for k in sorted(cache._grow):
        try:
            mm.add_room(k, max(cache._fill[k], 1), lookup=False)
        except MemoryError:              # (DeviceMemoryError: nothing changed)
            break
    cache._grow.clear()
    if cache._want:                      # (rings a reserve left under their trigger)
        cache.top_up()
    mm.lookup()
    g._reserve(max(g._n, READY_ROWS))
    # the rings' limits as the next batch would upload them (a step of its own otherwise)
    dev = g._deferred
    dev.set_limits(_limits(cache))
    dev.limits_due = g._deferred_count + LIMIT_REFRESH


def _deferred_insert(g, src, dst, edge_props, upsert: bool = False, parts=None):
    mm = g._mm_
    cache = mm.block_cache()
    if g._deferred is None:
        _start(g)
    elif g._deferred_queue:
        _settle_ready(g)
    # the batch's own copy of its pairs (2, n) (ids are signed: exact in int64), made where
    # one ticket takes them (_queue: in the pinned row they are staged from, where the
    # device state has one), or here for batches queued as chunks
    same = src.dtype == dst.dtype and src.dtype in (np.int32, np.int64)
    dtype = src.dtype if same else np.dtype(np.int64)
    # (ids out of range: None, nothing queued; the small path refuses the batch with its
    # message. A batch of one ticket is checked where its pairs are staged, see _queue)
    if not g._deferred.prefilled:
        _prefill(g, mm, cache)
    values = {}
    if edge_props or g._edge_schema:
        # host columns stay on the host where the device state stages them with the pairs
        # (DeferredBatches.host_values), checked as the device path checks them
        host = getattr(g._deferred, "host_values", False) and \
            not any(hasattr(v, "__cuda_array_interface__") for v in edge_props.values())
        values = _own_host_values(edge_props, g._edge_schema, src.shape[0]) if host else None
        if values is None:
            values = property_values(edge_props, g._edge_schema, src.shape[0],
                                     np if host else g._xp)
            # the batch's own values too (a batch queued again after a stall reads them
            # again)
            values = {k: v.copy() if v is edge_props.get(k) else v for k, v in values.items()}
    n = src.shape[0]
    per = SMALL_ENTRIES // (1 if g.directed else 2)
    entries = n * (1 if g.directed else 2)
    cap = SMALL_ENTRIES if entries <= SMALL_ENTRIES else \
        _grid_entries(g) if GRID_UPSERTS or not upsert else 0
    if entries > cap:
        cap = SMALL_ENTRIES              # (chunks of small batches)
    if upsert and parts is None:
        t = _queue(g, mm, cache, (src, dst, dtype), values, None, upsert=True, cap=cap)
        return None if t is None else (t.change, t.update)
    if cap != SMALL_ENTRIES or n <= per:     # one batch (a grid batch, or a small one)
        t = _queue(g, mm, cache, (src, dst, dtype), values, None, cap=cap)
        return None if t is None else t.change
    both = _stacked(src, dst, dtype, None)
    hi = _id_bound(both)
    if hi is None:
        return None
    if upsert:                           # chunks of disjoint keys (_key_chunks)
        order, ends = parts
        both = both[:, order]
        values = {k: v[order if isinstance(v, np.ndarray) else g._xp.asarray(order)]
                  for k, v in values.items()}
        tickets = [_queue(g, mm, cache, both[:, a:b], {k: v[a:b] for k, v in values.items()},
                          hi, upsert=True) for a, b in zip([0, *ends[:-1]], ends) if b > a]
        return (MergedChange(g, [t.change for t in tickets]),
                MergedUpdate(g, [t.update for t in tickets]))
    parts = []
    for start in range(0, n, per):
        stop = min(n, start + per)
        parts.append(_queue(g, mm, cache, both[:, start:stop],
                            {k: v[start:stop] for k, v in values.items()}, hi).change)
    return MergedChange(g, parts)


def _own_host_values(edge_props: dict, schema: dict, n: int):
    """The batch's own copies of ``edge_props`` where every property of ``schema`` is given
    as a host array of its dtype, shape (n,), and none is NaN (what :func:`property_values`
    would make of them, without its general checks and casts); None otherwise (the caller
    takes the general path, which also words the refusal)."""
    if len(edge_props) != len(schema):
        return None
    out = {}
    for name, dtype in schema.items():
        v = edge_props.get(name)
        if type(v) is not np.ndarray or v.dtype != dtype or v.shape != (n,):
            return None
        if v.dtype.kind == "f" and np.isnan(v).any():
            return None
        out[name] = v.copy()
    return out


def _prefill(g, mm, cache) -> None:
    """At a graph's first deferred batch, the rings of the classes up to ``PREFILL_CLASS``
    that hold fewer than ``PREFILL_BLOCKS`` blocks filled (BlockCache.reserve: to that many
    plus their refill level): a class's first batch would otherwise stall (a ring that was
    never filled has no trigger to refill it ahead)."""
    settle(g)
    need = [0] * NUM_CLASSES
    classes = list(range(mm.min_size_class, PREFILL_CLASS + 1))
    for k in classes:
        need[k] = PREFILL_BLOCKS
    try:
        cache.reserve(need, classes)
    except (ValueError, MemoryError):    # (DeviceMemoryError: nothing changed)
        pass
    g._deferred.prefilled = True
    g._deferred.limits_due = 0


def _refill_step(g, mm, cache) -> None:
    """The block cache's steps of the batch, as the small path makes them, when due: the
    lookup rebuilt after block arrays came, rings under their trigger refilled
    (BlockCache.top_up: every pending batch settled first, so that the rings it refills are
    the device's), else one block array made for a class short of room (grow_ahead). Arrays
    and the lookup are the manager's alone (the pending batches' kernels take blocks from
    the rings only): they need nothing settled."""
    if mm.lookup_stale():
        mm.lookup()
    cache.last_step = None
    if cache._want:
        settle(g)
        cache.top_up()
        g._deferred.limits_due = 0       # goals move with refills
    if cache._grow:
        cache.grow_ahead()


def _id_bound(both) -> int | None:
    """The largest id of the pairs ``both`` (2, m), or None when an id is negative or past
    MAX_VERTEX_ID (src and dst written into ``both`` as its dtype: an id that does not fit
    int64 comes out negative)."""
    lo, hi = int(both.min()), int(both.max())
    return None if lo < 0 or hi > MAX_VERTEX_ID else hi


def _stacked(src, dst, dtype, row):
    """The pairs as (2, n) of ``dtype``: written into ``row`` (a (2, n) view) if given, else
    into a new array."""
    both = np.empty((2, src.shape[0]), dtype=dtype) if row is None else row
    both[0] = src
    both[1] = dst
    return both


def _queue(g, mm, cache, both, values: dict, hi: int | None, upsert: bool = False,
           cap: int = SMALL_ENTRIES) -> _Ticket | None:
    """Queue one batch (host pairs ``both`` (2, m), or (src, dst, dtype) to be written
    where the batch's slot stages them; ``values`` per property of the
    graph its (m,) device array, ids at most ``hi`` (None: checked once staged, see
    :func:`_id_bound`); ``upsert``: the present pairs' properties rewritten too; ``cap``:
    its workspace's capacity, SMALL_ENTRIES or the device state's ``grid_entries``); its
    ticket, or None (nothing queued) when ``hi`` is None and an id is out of range."""
    dev, queue, xp = g._deferred, g._deferred_queue, g._xp
    while len(queue) >= dev.slots:
        _settle_one(g)                   # the oldest batch's workspace is needed again
    grid = -1 if cap == SMALL_ENTRIES else _free_grid_slot(g)
    if cache._want or cache._grow or mm.lookup_stale():
        _refill_step(g, mm, cache)
    else:
        cache.last_step = None
    if g._deferred_count >= dev.limits_due:
        dev.set_limits(_limits(cache))
        dev.limits_due = g._deferred_count + LIMIT_REFRESH
    # nothing below waits; the graph changes from _reserve on (which leaves it as it was
    # when out of memory), every allocation of the batch made before
    staged = False
    if REUSE_BUFFERS:
        # slots taken in turn: a slot's buffers are reused as late as can be, when the
        # changes that read them are usually gone (else _reclaim copies them first)
        slot = _free_slot(queue, dev.slots, g._deferred_next)
        g._deferred_next = slot + 1
        if isinstance(both, tuple):      # (written into the slot's pinned row, if any)
            src, dst, dtype = both
            pairs_row = getattr(dev, "pairs_row", None)
            row = None if pairs_row is None else pairs_row(slot, src.shape[0], dtype, cap,
                                                           grid)
            both, staged = _stacked(src, dst, dtype, row), row is not None
    elif isinstance(both, tuple):
        both = _stacked(*both, None)
    if hi is None:
        hi = _id_bound(both)
        if hi is None:
            return None
    m = both.shape[1]
    if REUSE_BUFFERS:
        rows, outs, found = _slot_buffers(g, slot, upsert, cap)
        t = _Ticket(slot, both, values, rows, outs, PendingChange(g), found,
                    PendingUpdate(g) if upsert else None, cap, grid, staged)
        g._deferred_users[slot] = (weakref.ref(t.change),) if not upsert else \
            (weakref.ref(t.change), weakref.ref(t.update))
    else:
        t = _Ticket(-1, both, values,
                    xp.empty((4 if upsert else 2) * cap, dtype=xp.int32),
                    {name: xp.empty(m, dtype=dt) for name, dt in g._edge_schema.items()},
                    PendingChange(g), cap=cap, grid=grid)
        if upsert:
            t.found = {name: (xp.empty(m, dtype=dt), xp.empty(m, dtype=dt))
                       for name, dt in g._edge_schema.items()}
            t.update = PendingUpdate(g)
    n = max(g._n, hi + 1)
    g._reserve(n)
    g._views.clear()
    g._n = n
    _launch(g, mm, cache, t)
    return t


def _launch(g, mm, cache, t) -> None:
    """Launch ticket ``t``'s kernels in its workspace (a free one where it has none: buffers
    of its own; host pairs staged for it) and queue it."""
    dev, queue = g._deferred, g._deferred_queue
    if not REUSE_BUFFERS:
        t.slot = _free_slot(queue, dev.slots)
    grid = t.where()
    s, d, values = dev.stage(t.slot, t.both, [t.values[k] for k in g._edge_schema],
                             **({"staged": True, **grid} if t.staged else grid))
    g._deferred_count += 1
    dev.launch(t.slot, s, d, not g.directed, g._degree_, g._size_class_,
               g._edge_ptr_, mm.min_size_class, cache, mm.lookup(), mm.field_dtypes,
               values, list(t.outs.values()), t.rows,
               None if t.found is None else list(t.found.values()), **grid)
    queue.append(t)


def _free_grid_slot(g) -> int:
    """A grid slot of the device state that no queued batch holds, the oldest batches
    settled until one is free."""
    queue, dev = g._deferred_queue, g._deferred
    while True:
        used = {t.grid for t in queue}
        for k in range(dev.grid_slots):
            if k not in used:
                return k
        _settle_one(g)


def _free_slot(queue, slots: int, start: int = 0) -> int:
    """The first workspace slot from ``start`` on (in turn) that no queued batch holds."""
    used = [t.slot for t in queue]
    for k in range(start, start + slots):
        if k % slots not in used:
            return k % slots
    raise RuntimeError("deferred batches: no free workspace slot")


def _slot_buffers(g, slot: int, upsert: bool, cap: int = SMALL_ENTRIES):
    """The result buffers of workspace ``slot`` (free) for a batch of the graph's edge
    properties and workspace capacity ``cap``: (rows: int32 device (2 * cap,), an upsert's
    (4 * cap,); outs: per property (cap,) of its dtype; found: an upsert's per property (new,
    old) values of that shape, else None), made on first use; the changes of the batch
    queued there before, if still held and not read, read first (:func:`_reclaim`)."""
    _reclaim(g, slot)
    return _buffers(g, slot, upsert, cap)


def _buffers(g, slot: int, upsert: bool, cap: int):
    """Workspace ``slot``'s result buffers of :func:`_slot_buffers`, made if missing."""
    key = (tuple(g._edge_schema.items()), upsert, cap)
    bufs = g._deferred_buffers[slot].get(key)
    if bufs is None:
        xp = g._xp
        rows = xp.empty((4 if upsert else 2) * cap, dtype=xp.int32)
        outs = {name: xp.empty(cap, dtype=dt) for name, dt in key[0]}
        found = {name: (xp.empty(cap, dtype=dt), xp.empty(cap, dtype=dt))
                 for name, dt in key[0]} if upsert else None
        bufs = g._deferred_buffers[slot][key] = (rows, outs, found)
    return bufs


def _reclaim(g, slot: int) -> None:
    """Before workspace ``slot``'s buffers take another batch: the changes of the batch
    queued there before that are still held and not read yet read now (their copies)."""
    for ref in g._deferred_users[slot]:
        change = ref()
        if change is not None and isinstance(change._done, tuple):
            change._done = change._cut(change._done)
    g._deferred_users[slot] = ()


def _limits(cache) -> np.ndarray:
    """Per class, the most blocks its ring may keep after a batch gives blocks back
    (:meth:`BlockCache.accepts`: twice the goal, or the last refill's level if more)."""
    out = np.zeros(NUM_CLASSES, dtype=np.int64)
    for k in range(NUM_CLASSES):
        if cache.ceiling[k] or cache.target[k] or cache._fill[k]:
            out[k] = max(2 * cache.goal(k), cache._fill[k])
    return out


def settle(g, upto: PendingChange | None = None) -> None:
    """Settle the graph's deferred batches in order: every one, or those up to and including
    ``upto``'s (waiting for their headers)."""
    queue = g._deferred_queue
    while queue and (upto is None or upto._done is None):
        _settle_one(g)


def _settle_ready(g) -> None:
    """Settle the deferred batches whose headers have come, oldest first, without waiting."""
    queue, dev = g._deferred_queue, g._deferred
    while queue and dev.ready(queue[0].slot):
        _settle_one(g)


def _settle_one(g) -> None:
    """Settle the oldest deferred batch (waiting for its header); a stalled one runs again
    with every batch after it."""
    queue, dev = g._deferred_queue, g._deferred
    t = queue[0]
    header = dev.header(t.slot)
    if header[H_STALLED]:
        _run_again(g, header)
        return
    queue.popleft()
    kept, nres = header[H_KEPT], header[H_RESULTS]
    if kept:
        mm = g._mm_
        cache = mm.block_cache()
        need = header[H_CLASS:H_CLASS + NUM_CLASSES]
        freed = header[H_FREED:H_FREED + NUM_CLASSES]
        touched = list(compress(range(NUM_CLASSES), map(or_, need, freed)))
        spills = cache.commit(need, freed, header[H_ACCEPT], touched)
        g._entries_ += kept
        if spills:
            # in stream order after the batch's rewrite; the workspace is not reused before
            mm.release(dev.spilled(t.slot, spills, **t.where()), wait=False)
    t.change._resolve((t.rows, t.outs, nres, header[H_LOOPS], t.cap))
    if t.update is not None:
        t.update._resolve((t.rows, t.found, header[H_FOUND], t.cap))


def _run_waiting(g, t) -> None:
    """Insert ticket ``t``'s batch through the graph's insert, deferral off (the small
    path, which waits); its change takes the result."""
    before = g._deferred_batches
    g._deferred_batches = False
    g._running_again = True
    try:
        if t.update is not None:         # an upsert: the update, then the insert
            t.update._resolve(g._update_edges(t.both[0], t.both[1], t.values))
        t.change._resolve(g._insert_edges(t.both[0], t.both[1], t.values))
    finally:
        g._deferred_batches = before
        g._running_again = False


def _run_again(g, header: list) -> None:
    """The oldest pending batch stalled (``header``: its header, whose class counts are
    what it needs): it and every batch after it did nothing on the device. Clear the stall
    word (after them in stream order), fill the rings it found short (BlockCache.reserve,
    from the bit trees without a wait) and queue them all again, in order; a batch the
    rings cannot serve (more blocks of a class than a ring holds, or none left on the
    device) runs through the small path, the ones after it too."""
    queue, dev = g._deferred_queue, g._deferred
    tickets = list(queue)
    queue.clear()
    dev.clear_stall()
    g._stalls += 1
    mm = g._mm_
    cache = mm.block_cache()
    need = header[H_CLASS:H_CLASS + NUM_CLASSES]
    try:
        cache.reserve(need, [k for k in range(NUM_CLASSES) if need[k]])
    except (ValueError, MemoryError):
        for t in tickets:
            _run_waiting(g, t)
        return
    dev.limits_due = 0
    for t in tickets:
        _launch(g, mm, cache, t)
