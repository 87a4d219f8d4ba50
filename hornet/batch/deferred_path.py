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
from .small_layout import (H_CLASS, H_FREED, H_KEPT, H_LOOPS, H_RESULTS, MAX_FIELDS,
                           NUM_CLASSES, SMALL_ENTRIES)
from .validate import MAX_VERTEX_ID, property_values

__all__ = ["DeferredState", "PendingChange", "deferred_insert", "settle", "LIMIT_REFRESH"]

#: deferred batches between two refreshes of the rings' limits on the device
LIMIT_REFRESH = 16


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
    return src.shape[0] * (1 if g.directed else 2) <= SMALL_ENTRIES


def deferred_insert(g, src, dst, edge_props) -> EdgeChange | None:
    """Queue the insert of host pairs ``src``, ``dst`` (``edge_props`` as the graph's
    insert takes them) without waiting; a :class:`PendingChange`, or None when the batch is
    not deferred (the small path or another takes it, every pending batch settled first)."""
    if not _eligible(g, src, dst):
        return None
    mm = g._mm_
    cache = mm.block_cache()
    queue = g._deferred_queue
    if queue:
        _settle_ready(g)
    if mm.lookup_stale() or cache._want or cache._grow:
        return None                      # a refill step is due: the small path makes it
    same = src.dtype == dst.dtype and src.dtype in (np.int32, np.int64)
    both = np.empty((2, src.shape[0]), dtype=src.dtype if same else np.int64)
    both[0] = src                        # (signed ids only: exact in int64)
    both[1] = dst
    lo, hi = int(both.min()), int(both.max())
    if lo < 0 or hi > MAX_VERTEX_ID:
        return None                      # the small path refuses it with its message
    xp = g._xp
    values = property_values(edge_props, g._edge_schema, src.shape[0], xp)
    dev = g._deferred
    if dev is None:
        from .gpu.deferred import DeferredBatches
        dev = g._deferred = DeferredBatches()
        g._deferred_queue = queue = deque()
        g._deferred_count = 0
    from .gpu.deferred import SLOTS
    if len(queue) >= SLOTS:
        _settle_one(g)                   # the oldest batch's workspace is needed again
        if mm.lookup_stale() or cache._want or cache._grow:
            settle(g)
            return None
    if g._deferred_count % LIMIT_REFRESH == 0:
        dev.set_limits(_limits(cache))
    g._deferred_count += 1
    # nothing below waits; the graph changes from _reserve on (which leaves it as it was
    # when out of memory), every allocation of the batch made before
    from ..core.cuda import upload
    pairs = upload(both)
    rows = xp.empty(2 * SMALL_ENTRIES, dtype=xp.int32)
    outs = {name: xp.empty(src.shape[0], dtype=dt) for name, dt in g._edge_schema.items()}
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
    from .gpu.deferred import H_ACCEPT, H_STALLED
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


def _run_again(g) -> None:
    """The oldest pending batch stalled: it and every batch after it did nothing on the
    device. Clear the stall word (after them in stream order) and run them again, in order,
    through the graph's insert with deferral off; each change takes its run's result."""
    queue, dev = g._deferred_queue, g._deferred
    tickets = list(queue)
    queue.clear()
    dev.clear_stall()
    g._stalls += 1
    before = g._deferred_batches
    g._deferred_batches = False
    g._running_again = True
    try:
        for t in tickets:
            t.change._resolve(g._insert_edges(t.s, t.d, t.edge_props))
    finally:
        g._deferred_batches = before
        g._running_again = False
