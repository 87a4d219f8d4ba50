"""Deferred small inserts: a GPU insert of host pairs that returns without waiting.

The small-batch path (:mod:`hornet.batch.small_path`) waits once per batch, for the header of
its prepare kernel. An insert of host (NumPy) pairs that the small path would take is
*deferred* instead (:mod:`hornet.batch.gpu.deferred`): its ids are checked on the host, its
kernels are queued with the block cache's decisions made on the device, and the call returns
a :class:`PendingChange` at once. The host reads the batch's header later (*settles* it): the
cache's counters, the graph's entry count and the spilled blocks follow it, and the change's
length becomes known. So a stream of small inserts costs host work per batch and no wait,
the device running behind.

What stays exact: the device's state is always the graph's in stream order (every later
kernel, of any path, runs after the batch's). The host's bookkeeping (the memory manager's and
the block cache's counts, the entry count) lags until the batches are settled; the graph's
``_mm`` and ``_entries`` settle every pending batch before they answer, so that every other
path and query sees them settled. A batch the device could not run (a ring of the block cache
short of blocks: the batch and the deferred batches after it did nothing, see
:mod:`hornet.batch.gpu.deferred`) is run again through the small path when settled, in order;
its change takes that run's result.

A batch is deferred only when nothing needs the host first: GPU graph, host integer pairs the
small path takes, ids valid, no refill or array growth of the block cache due and the block
array lookup current (otherwise the small path runs the batch, after settling the others).
"""
from __future__ import annotations

from collections import deque
from itertools import compress
from operator import or_

import numpy as np

from ..change import EdgeChange
from .small_layout import (H_ACCEPT, H_CLASS, H_FREED, H_KEPT, H_LOOPS, H_RESULTS,
                           H_STALLED, MAX_FIELDS, NUM_CLASSES, SMALL_ENTRIES)
from .validate import MAX_VERTEX_ID, property_values

__all__ = ["DeferredState", "PendingChange", "MergedChange", "deferred_insert", "settle",
           "LIMIT_REFRESH", "CHUNKS"]

#: deferred batches between two refreshes of the rings' limits on the device
LIMIT_REFRESH = 16
#: a deferred insert is queued as at most this many small batches (chunks of its pairs)
CHUNKS = 8


class DeferredState:
    """The part of :class:`hornet.Graph` that deferred batches touch: its memory manager and
    entry count as the rest of the graph reads them (``_mm``, ``_entries``: every deferred
    batch settled first, their host bookkeeping following the batches' headers; this module
    uses ``_mm_`` and ``_entries_``, as they stand) and the batches' state."""

    # GPU inserts of host pairs that the small path takes are queued without a wait and
    # settled later (set per graph: a stream replay does); False: the small path waits
    _deferred_batches = False
    _deferred = None            # their device state (made on first use) ...
    _deferred_queue = ()        # ... the batches not settled yet, oldest first
    _deferred_count = 0
    _stalls = 0                 # deferred batches found a ring short and ran again
    _running_again = False      # while stalled batches run again (through the small path)

    @property
    def _mm(self):
        if self._deferred_queue:
            settle(self)
        return self._mm_

    @_mm.setter
    def _mm(self, mm) -> None:
        self._mm_ = mm

    @property
    def _entries(self) -> int:
        if self._deferred_queue:
            settle(self)
        return self._entries_

    @_entries.setter
    def _entries(self, entries: int) -> None:
        self._entries_ = entries


class PendingChange(EdgeChange):
    """The :class:`~hornet.change.EdgeChange` of a deferred insert: ``src``, ``dst``,
    ``properties`` and ``self_loops_skipped`` are read from the batch once it is settled
    (the first read settles it and the batches before it, waiting for its header)."""

    def __init__(self, graph):
        self.kind = "insert"
        self.previous = {}
        self.vertex_map = None
        self._graph = graph
        self._done = None

    def _result(self) -> EdgeChange:
        if self._done is None:
            settle(self._graph, self)
        done = self._done
        if isinstance(done, tuple):             # (rows, outs, length, self-loops): cut now
            rows, outs, n, loops = done
            done = self._done = EdgeChange("insert", rows[:n],
                                           rows[SMALL_ENTRIES:SMALL_ENTRIES + n],
                                           {k: v[:n] for k, v in outs.items()}, loops)
        return done

    def _resolve(self, change) -> None:
        """Settled: an EdgeChange, or (rows, outs, length, self-loops) of the batch's
        buffers, cut when first read."""
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
            return "EdgeChange(insert, pending)"
        return super().__repr__()


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
            self._done = EdgeChange("insert", src[order], dst[order], props,
                                    sum(int(p.self_loops_skipped) for p in parts))
            self._parts = None
        return self._done

    def __len__(self) -> int:
        if self._done is not None:
            return len(self._done)
        return sum(len(p) for p in self._parts)

    @property
    def pending(self) -> bool:
        return self._done is None and any(getattr(p, "pending", False) for p in self._parts)


class _Ticket:
    __slots__ = ("slot", "s", "d", "edge_props", "rows", "outs", "change")

    def __init__(self, slot, s, d, edge_props, rows, outs, change):
        self.slot, self.s, self.d, self.edge_props = slot, s, d, edge_props
        self.rows, self.outs, self.change = rows, outs, change


def _eligible(g, src, dst) -> bool:
    if g.device != "gpu" or dst is None or not g._deferred_batches:
        return False
    if not (isinstance(src, np.ndarray) and isinstance(dst, np.ndarray)):
        return False
    if src.ndim != 1 or src.shape != dst.shape or not src.shape[0]:
        return False
    if src.dtype.kind != "i" or dst.dtype.kind != "i":
        return False
    if len(g._edge_schema) >= MAX_FIELDS:
        return False
    return src.shape[0] * (1 if g.directed else 2) <= CHUNKS * SMALL_ENTRIES


def deferred_insert(g, src, dst, edge_props) -> EdgeChange | None:
    """Queue the insert of host pairs ``src``, ``dst`` (``edge_props`` as the graph's
    insert takes them) without waiting; a :class:`PendingChange`, or None when the batch is
    not deferred (another path takes it, every pending batch settled first). A batch of
    more entries than one small batch holds (at most ``CHUNKS`` times as many) is queued as
    consecutive chunks of pairs: inserting them one after the other gives the batch's
    graph (a repeat in a later chunk finds the edge present; the first occurrence wins),
    and its change is theirs, merged (:class:`MergedChange`)."""
    if not _eligible(g, src, dst):
        return None
    mm = g._mm_
    cache = mm.block_cache()
    if g._deferred_queue:
        _settle_ready(g)
    if _refill_due(mm, cache):
        return None                      # a refill step is due: the small path makes it
    same = src.dtype == dst.dtype and src.dtype in (np.int32, np.int64)
    both = np.empty((2, src.shape[0]), dtype=src.dtype if same else np.int64)
    both[0] = src                        # (signed ids only: exact in int64)
    both[1] = dst
    lo, hi = int(both.min()), int(both.max())
    if lo < 0 or hi > MAX_VERTEX_ID:
        return None                      # the small path refuses it with its message
    values = property_values(edge_props, g._edge_schema, src.shape[0], g._xp)
    if g._deferred is None:
        from .gpu.deferred import DeferredBatches
        g._deferred = DeferredBatches()
        g._deferred_queue = deque()
        g._deferred_count = 0
    n = src.shape[0]
    per = SMALL_ENTRIES // (1 if g.directed else 2)
    if n <= per:
        return _queue(g, mm, cache, both, values, hi)
    parts = []
    for start in range(0, n, per):
        stop = min(n, start + per)
        chunk = both[:, start:stop]
        vals = {k: v[start:stop] for k, v in values.items()}
        part = _queue(g, mm, cache, chunk, vals, hi)
        if part is None:
            if not parts:
                return None              # nothing queued: another path takes the batch
            part = _run_waiting(g, chunk[0], chunk[1], vals)
        parts.append(part)
    return MergedChange(g, parts)


def _refill_due(mm, cache) -> bool:
    """Whether the block cache has a step of its refill due (a lookup to rebuild, rings
    under their trigger, arrays to grow), which the small path's batches make."""
    return mm.lookup_stale() or bool(cache._want) or bool(cache._grow)


def _queue(g, mm, cache, both, values: dict, hi: int):
    """Queue one small batch (host pairs ``both`` (2, m), ``values`` per property of the
    graph its (m,) device array, ids at most ``hi``); its PendingChange, or None with
    nothing changed when a refill step became due while a workspace was freed."""
    from .gpu.deferred import SLOTS
    dev, queue, xp = g._deferred, g._deferred_queue, g._xp
    if len(queue) >= SLOTS:
        _settle_one(g)                   # the oldest batch's workspace is needed again
        if _refill_due(mm, cache):
            settle(g)
            return None
    if g._deferred_count % LIMIT_REFRESH == 0:
        dev.set_limits(_limits(cache))
    g._deferred_count += 1
    # nothing below waits; the graph changes from _reserve on (which leaves it as it was
    # when out of memory), every allocation of the batch made before
    from ..core.cuda import upload
    m = both.shape[1]
    pairs = upload(both)
    rows = xp.empty(2 * SMALL_ENTRIES, dtype=xp.int32)
    outs = {name: xp.empty(m, dtype=dt) for name, dt in g._edge_schema.items()}
    n = max(g._n, hi + 1)
    g._reserve(n)
    g._views.clear()
    g._n = n
    slot = _free_slot(queue)
    dev.launch(slot, pairs[0], pairs[1], not g.directed, g._degree, g._size_class,
               g._edge_ptr, mm.min_size_class, cache, mm.lookup(), mm.field_dtypes,
               [values[k] for k in g._edge_schema], list(outs.values()), rows)
    change = PendingChange(g)
    queue.append(_Ticket(slot, both[0], both[1], values, rows, outs, change))
    return change


def _free_slot(queue) -> int:
    used = {t.slot for t in queue}
    from .gpu.deferred import SLOTS
    return next(k for k in range(SLOTS) if k not in used)


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
    while queue:
        t = queue[0]
        _settle_one(g)
        if t.change is upto:
            return


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
        _run_again(g)
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
            mm.release(dev.spilled(t.slot, spills), wait=False)
    t.change._resolve((t.rows, t.outs, nres, header[H_LOOPS]))


def _run_waiting(g, s, d, values: dict) -> EdgeChange:
    """Insert host pairs ``s``, ``d`` with property ``values`` through the graph's insert,
    deferral off (the small path, which waits)."""
    before = g._deferred_batches
    g._deferred_batches = False
    g._running_again = True
    try:
        return g._insert_edges(s, d, values)
    finally:
        g._deferred_batches = before
        g._running_again = False


def _run_again(g) -> None:
    """The oldest pending batch stalled: it and every batch after it did nothing on the
    device. Clear the stall word (after them in stream order) and run them again, in order,
    through the graph's insert with deferral off; each change takes its run's result."""
    queue, dev = g._deferred_queue, g._deferred
    tickets = list(queue)
    queue.clear()
    dev.clear_stall()
    g._stalls += 1
    for t in tickets:
        t.change._resolve(_run_waiting(g, t.s, t.d, t.edge_props))
