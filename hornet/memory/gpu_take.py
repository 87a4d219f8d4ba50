"""Allocation planned on the device (CUDA source ``device_take.cu``): a batch's blocks taken
without per-array host work.

The host's allocation (:meth:`hornet.memory.manager.MemoryManager.allocate_counts`) plans
which block arrays give a request's blocks (per class, the fullest arrays first) from its
per-array free counts, builds a request row per array and uploads it. Here the device keeps
the free count of every block array of the manager's lookup (:class:`DeviceTakes`), one
launch (``take_plan``) turns the per-class counts of a request, already on the device (a
batch plan's counts), into the same per-array takes, and the takes run on request rows that
were uploaded once per lookup (``take_small``, or the scan over the leaf words for large
requests). The host only checks each class's room against its per-class counts, grows a
class that is short (arrays made as an allocation makes them, before anything is taken)
and adds the per-class counts to its bookkeeping. The per-array counts reach the host
lazily, as a release's do: an asynchronous copy that the manager's next full
:meth:`~hornet.memory.manager.MemoryManager.settle` applies.

The device's free counts follow the takes made here (``take_plan`` lowers them) and the
releases without a wait (``free_add`` adds their per-array counts); anything else that
changes the arrays' free blocks on the host's side (a host allocation, a release that waits)
marks them stale, and the next take uploads the host's counts again.
"""
from __future__ import annotations

import os

import numpy as np

from ..core.cuda import PreparedLaunch, cupy, function, upload
from .bit_tree import FOREST_LEVELS
from .gpu_bit_tree import SMALL_TAKE, SMALL_TAKE_THREADS, TAKE_SMALL, _fn

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "device_take.cu")
TAKE_FIELDS = 5 + FOREST_LEVELS + 1        # a take_small request row (memory_kernels.cu)
PLAN_THREADS = 1024
_LAUNCHES: dict = {}
_ARITY = {"take_plan": 10, "free_add": 3}


def _prepared(name: str) -> PreparedLaunch:
    fn = _LAUNCHES.get(name)
    if fn is None:
        kernel = _fn(name) if name == TAKE_SMALL else function(_CU, name)
        fn = _LAUNCHES[name] = PreparedLaunch(kernel, 2 if name == TAKE_SMALL
                                              else _ARITY[name])
    return fn


class _CountsCopy:
    """A pinned host buffer, the event that says an asynchronous copy into it has landed, and
    the number of counts it holds."""

    __slots__ = ("host", "event", "n")

    def __init__(self, n: int):
        import cupyx
        self.host = cupyx.empty_pinned(1 << max(6, (max(n, 1) - 1).bit_length()),
                                       dtype=np.int64)
        self.event = cupy.cuda.Event(block=False, disable_timing=True)
        self.n = 0


#: pinned buffers of takes whose counts were read, for the next takes (a pinned allocation
#: and an event cost a batch more than the take itself; the process keeps a few)
_SPARE_COPIES: list = []


def _counts_copy(n: int) -> _CountsCopy:
    while _SPARE_COPIES:
        copy = _SPARE_COPIES.pop()
        if copy.host.shape[0] >= n:
            return copy
    return _CountsCopy(n)


class PendingTake:
    """The per-array counts of a device take on their way to the host (``lookup``: the
    manager's lookup the take used, aligned with the counts)."""

    __slots__ = ("lookup", "copy")

    def __init__(self, lookup, copy: _CountsCopy):
        self.lookup, self.copy = lookup, copy

    def done(self) -> bool:
        """Whether the counts have landed (no wait)."""
        return self.copy.event.done

    def counts(self) -> np.ndarray:
        """Host int64 (A,): blocks taken per array (waits for the copy to land); the buffer
        goes back to the process's spares for the next take."""
        self.copy.event.synchronize()
        out = self.copy.host[:self.copy.n].copy()
        if len(_SPARE_COPIES) < 8:
            _SPARE_COPIES.append(self.copy)
        return out


class DeviceTakes:
    """The device side of the allocation for one lookup of a manager: per block array (in the
    lookup's order) its take_small request row (word address, count and out start written by
    ``take_plan``, base, log2 block bytes, level offsets), size class, free blocks, and the
    first leaf word of its tree among all the arrays' (the scan path). Made from the host's
    counts (:meth:`for_manager`)."""

    def __init__(self, mm, lookup):
        nf = len(mm.field_dtypes)
        width = nf + 3 + FOREST_LEVELS + 1
        rows = mm._table.rows.reshape(-1, width)
        na = rows.shape[0]
        self.lookup = lookup
        self.narrays = na
        self.stale = False
        req = np.empty((na, TAKE_FIELDS), dtype=np.int64)
        req[:, 0] = rows[:, 2 + nf]               # the bit tree's words (level 0 first)
        req[:, 1:3] = 0
        req[:, 3] = rows[:, 0]
        req[:, 4] = rows[:, 1] + 2
        req[:, 5:] = rows[:, 3 + nf:]
        word_start = np.zeros(na + 1, dtype=np.int64)
        np.cumsum(rows[:, 4 + nf] - rows[:, 3 + nf], out=word_start[1:])
        self.leaf_words = int(word_start[-1])
        free = np.fromiter((a.free for a in lookup.arrays), dtype=np.int64, count=na)
        dev = upload(np.concatenate([req.ravel(), rows[:, 1], free, word_start]))
        at = na * TAKE_FIELDS
        self.req = dev[:at]
        self.cls = dev[at:at + na]
        self.free = dev[at + na:at + 2 * na]
        self.word_start = dev[at + 2 * na:]
        self.counts = cupy.empty(2 * na, dtype=cupy.int64)    # taken, out start
        self.next_slot = cupy.empty(64, dtype=cupy.uint64)
        self._pool = None                         # the pool of takes ahead (reused)

    @staticmethod
    def for_manager(mm) -> "DeviceTakes":
        """The manager's device takes for its current lookup (made again when the lookup
        changed or the host changed free counts since; the manager is settled)."""
        lookup = mm.lookup()
        dt = mm._device_takes
        if dt is None or dt.lookup is not lookup or dt.stale:
            dt = mm._device_takes = DeviceTakes(mm, lookup)
        return dt

    def released(self, lookup, counts) -> None:
        """A release gave back ``counts[a]`` blocks of array ``a`` (uint64 device, or host
        int64, in the lookup ``lookup``'s order): the device's free counts follow, or are
        stale if the lookup is another."""
        if lookup is not self.lookup or self.stale:
            self.stale = True
            return
        if isinstance(counts, np.ndarray):
            counts = upload(np.ascontiguousarray(counts, dtype=np.int64))
        if self.narrays:
            _prepared("free_add")(-(-self.narrays // 256), 256,
                                  [self.free.data.ptr, counts.data.ptr, self.narrays])

    def host_took(self, lookup, plans) -> None:
        """The host's allocation took blocks (``plans``: the manager's [(class, [(array,
        count)], arrays created)]) while the manager's lookup is ``lookup`` (None: stale):
        the device's free counts follow (one upload and one launch), or are stale if the
        lookup is another or arrays were created."""
        if lookup is not self.lookup or self.stale or any(c for _, _, c in plans):
            self.stale = True
            return
        took = [(arr.base, t) for _, plan, _ in plans for arr, t in plan if t]
        if not took:
            return
        delta = np.zeros(self.narrays, dtype=np.int64)
        at = np.searchsorted(lookup.bases, np.array([b for b, _ in took], dtype=np.int64))
        np.subtract.at(delta, at, np.array([t for _, t in took], dtype=np.int64))
        self.released(lookup, delta)

    def take(self, need_ptr: int, total: int, pool, bad_ptr: int = 0,
             short_ptr: int = 0) -> PendingTake:
        """Take ``need[k]`` blocks of every class k (``need_ptr``: device address of int64
        (64,); ``total``: their sum, or a bound of it, host) into ``pool`` (int64 device, at
        least ``total``), class after class in ascending order; ``next_slot`` gets each
        class's first pool slot. Every class must hold its need in free blocks, unless
        ``short_ptr`` (device address of an int64) is given: then nothing is taken if a class
        holds less, and that int64 is set to 1. Nothing is taken either if the int64 at
        ``bad_ptr`` (when given) is nonzero. Returns the per-array counts'
        :class:`PendingTake`."""
        na = self.narrays
        taken, out_start = self.counts[:na], self.counts[na:]
        _prepared("take_plan")(1, PLAN_THREADS, [
            need_ptr, na, self.cls.data.ptr, self.free.data.ptr, self.req.data.ptr,
            taken.data.ptr, out_start.data.ptr, self.next_slot.data.ptr, bad_ptr,
            short_ptr])
        if not na:
            pass                                  # (no array: a class is short, or no need)
        elif total <= SMALL_TAKE:
            _prepared(TAKE_SMALL)(na, SMALL_TAKE_THREADS, [self.req.data.ptr, pool.data.ptr])
        else:
            self._scan_take(taken, out_start, pool)
        copy = _counts_copy(na)
        copy.n = na
        stream = cupy.cuda.get_current_stream()
        if na:
            cupy.cuda.runtime.memcpyAsync(copy.host.ctypes.data, taken.data.ptr, na * 8,
                                          cupy.cuda.runtime.memcpyDeviceToHost, stream.ptr)
        copy.event.record(stream)
        return PendingTake(self.lookup, copy)

    def _scan_take(self, taken, out_start, pool) -> None:
        """The take of a large request: every leaf word of every array counted, scanned, and
        the blocks extracted (memory_kernels.cu: popcount_forest, extract_forest)."""
        from .gpu_launch import launch
        from ..core.cuda import i64
        lookup = self.lookup
        addrs, table = lookup.forest
        total = self.leaf_words
        pc = cupy.empty(total, dtype=cupy.int64)
        launch(_fn("popcount_forest"), total, (addrs, self.word_start, i64(self.narrays),
                                               i64(total), pc))
        incl = cupy.cumsum(pc)
        launch(_fn("extract_forest"), total, (addrs, table, self.word_start, taken, out_start,
                                              lookup.dev_bases, lookup.dev_block_shift,
                                              i64(self.narrays), i64(total), pc, incl, pool))


def prepare(mm) -> None:
    """Before a batch's kernels are queued: the device's free counts made again for the
    manager's current lookup if they are not current and the host's counts are in without a
    wait (the batches before are done), so that the batch can take its blocks before its
    read-back (:func:`take_ahead`). Their uploads are queued before the batch's kernels: made
    once those are queued, they would wait for them (the pinned buffers of uploads are
    reused in stream order)."""
    dt = mm._device_takes
    if (dt is None or dt.stale or dt.lookup is not mm._lookup) and mm.settled_without_wait():
        mm.settle()
        DeviceTakes.for_manager(mm)


class TakeAhead:
    """A take queued before the counts it serves reached the host (:func:`take_ahead`):
    ``pool`` (int64 device, room for the bound given), ``next_slot`` (uint64 device (64,))."""

    __slots__ = ("pool", "next_slot")

    def __init__(self, pool, next_slot):
        self.pool, self.next_slot = pool, next_slot


def take_ahead(mm, need_ptr: int, bad_ptr: int, short_ptr: int, bound: int):
    """Queue the take of ``need[k]`` blocks of every class k (device address ``need_ptr``,
    int64 (64,), at most ``bound`` blocks in all) before the host knows the counts: a batch
    plan's counts, taken in stream order after the plan's kernels, so that the host does
    not take them after the plan's read-back. The device checks the room: a class short of
    free blocks (or a nonzero int64 at ``bad_ptr``, a refused batch) takes nothing, and
    sets the int64 at ``short_ptr`` to 1 (the host then allocates after the read-back, as
    :func:`allocate_on_device`). The per-array counts go to the manager's pending takes at
    once (zeros when nothing was taken); the per-class counts wait for :func:`took_ahead`
    or :func:`give_back_ahead`. Returns a :class:`TakeAhead`, or None, with nothing queued,
    when the device's free counts are not those of the manager's current lookup (see
    :func:`prepare`) or ``bound`` exceeds ``SMALL_TAKE`` (a large take scans every leaf
    word: only once the counts say that it takes anything)."""
    dt = mm._device_takes
    if dt is None or dt.stale or dt.lookup is not mm._lookup or bound > SMALL_TAKE:
        return None
    if dt._pool is None or dt._pool.shape[0] < bound:
        dt._pool = cupy.empty(1 << max(10, (max(bound, 1) - 1).bit_length()),
                              dtype=cupy.int64)
    mm._pending_takes.append(dt.take(need_ptr, bound, dt._pool, bad_ptr, short_ptr))
    return TakeAhead(dt._pool, dt.next_slot)


def took_ahead(mm, ahead: TakeAhead, per_class):
    """The take ``ahead`` succeeded (its short flag read back 0) for ``per_class`` (host
    int64 (64,), the counts it served): the per-class counts into the manager's
    bookkeeping; returns (pool, next_slot) as :func:`allocate_on_device` does."""
    total = 0
    for k in np.flatnonzero(per_class).tolist():
        n = int(per_class[k])
        mm._count(k, 0, n)
        total += n
    return ahead.pool[:total], ahead.next_slot


def give_back_ahead(mm, ahead: TakeAhead, per_class) -> None:
    """The batch of the successful take ``ahead`` (``per_class``: its counts) was refused
    after all: its blocks go back."""
    pool, _ = took_ahead(mm, ahead, per_class)
    mm.release(pool)


def allocate_on_device(mm, per_class, need_ptr: int):
    """``per_class[k]`` fresh blocks of every size class k (host int64 (64,), the same counts
    at device address ``need_ptr``), taken by the device (:class:`DeviceTakes`): returns
    (pool: their edge pointers, int64 device, class after class in ascending order;
    next_slot: uint64 device (64,), each class's first pool slot). A class short of free
    blocks gets its arrays first, as :meth:`MemoryManager.allocate_counts` would make them;
    all or nothing (:class:`~hornet.memory.manager.DeviceMemoryError`, nothing taken)."""
    mm.settle()
    classes = np.flatnonzero(per_class).tolist()
    grow = [mm._plan(k, int(per_class[k]), grow=True) for k in classes
            if mm.free_blocks(k) < per_class[k]]
    if grow:
        mm._commit_plans([(k, [], created) for k, _, created in grow])
    total = int(per_class.sum())
    dt = DeviceTakes.for_manager(mm)
    pool = cupy.empty(total, dtype=cupy.int64)
    pending = dt.take(need_ptr, total, pool)
    for k in classes:
        mm._count(k, 0, int(per_class[k]))
    mm._pending_takes.append(pending)
    return pool, dt.next_slot
