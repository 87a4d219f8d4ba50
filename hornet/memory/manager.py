"""The memory manager: pools of block arrays per size class, batched allocate and release.

A vertex of degree ``d`` owns one block of ``2**ceil(log2 d)`` slots (at least
``min_block_size``). The manager hands out blocks by their *edge pointer*: the address of the
block's first destination slot. Allocation and release are batched: ``allocate(k, n)`` returns
``n`` pointers of size class ``k`` in one call, ``release(pointers)`` takes any number back.

Memory follows the graph down: a block array that becomes empty is freed (at most one spare of
at least ``SPARE_MIN_BYTES`` is kept per size class), and a size class whose utilization falls
under ``compact_below`` has its live blocks moved into fewer arrays
(:meth:`MemoryManager.compact`), after which the emptied arrays are freed. Compaction is
amortised against the pass that re-points the moved blocks' owners: it runs only when the
arrays it empties give back at least ``RELEASE_PER_ROW`` free slots per vertex-table row, so
that steady churn, whose free room the next inserts take again, does not compact batch after
batch for a few blocks. ``block_array_edges``
is a runtime setting; a block larger than a block array
gets a dedicated array.

Inside :meth:`MemoryManager.steady_churn` (an owner whose updates delete about as much as
they insert, such as a replay's sliding window) the give-back works in a wider band
(``STEADY_FREE_SHARE``, ``STEADY_COMPACT_BELOW``, and the list refit's
``hornet.memory.list_fit.STEADY_LOOSE_SHARE``): the room a delete gives back is what the
next inserts take again, so giving it back batch after batch would only move blocks to and
fro; the memory held stays bounded by the band.
"""
from __future__ import annotations

import contextlib
from operator import attrgetter

import numpy as np

from .array_table import ArrayTable
from .backend import memory_backend
from .bit_tree import FOREST_LEVELS, take_forest
from .block_array import BlockArray
from .list_fit import ListFit
from .lookup import Lookup, lookup_columns
from .manager_check import InvariantError, check as check_manager

__all__ = ["MemoryManager", "DeviceMemoryError", "InvariantError"]

_FREE = attrgetter("free")


class DeviceMemoryError(MemoryError):
    """Not enough memory for a batch. ``bytes_needed`` says how much the batch asked for."""

    def __init__(self, message: str, bytes_needed: int = 0):
        super().__init__(message)
        self.bytes_needed = bytes_needed


GROWTH = 1 / 16
"""A class that runs out of free blocks gets an array of at least this share of its blocks
(geometric growth from an exact first array). A class only grows when full, so growth leaves
it at least 1 / (1 + GROWTH) used, and growth with a spare (``SPARE_SHARE``) at least
1 / (1 + SPARE_SHARE) (0.89): the compaction threshold (``COMPACT_BELOW``) is not met by
growth alone."""

SPARE_SHARE = 2 * GROWTH
"""An empty array is kept as the class's spare only while it is at most this share of the
class's live blocks (and at least ``SPARE_MIN_BYTES``): twice the share growth makes, so that
the array an insert's growth made survives the delete that shrinks the class back (a batch
and its undo, or churn around a size) instead of being freed and made again batch after
batch."""

FULLEST_FIRST = True
"""Allocation takes blocks from the fullest arrays of a class first (see :meth:`_plan`)."""

SPARE_MIN_BYTES = {"cpu": 1 << 20, "gpu": 1 << 16}
"""Per device: an empty array smaller than this is freed, never kept as a spare: making it
again costs little next to the batch that needs it (CPU: its pages are few; GPU: the pool's
memory, a tree fill and a lookup rebuild are tens of microseconds, which a batch of a few
thousand edges takes in all, so only arrays that small are freed), while holding it is a
share of a small graph's memory that never shrinks (``SPARE_SHARE`` of every class that grew
once)."""

COMPACT_BELOW = 0.85
"""Default utilization (used / reserved blocks) under which a size class is compacted."""

COMPACT_MIN_SHARE = 1 / 256
"""A class is compacted only when its free slots are at least this share of the slots that
hold lists in every class: a class too small to matter (a few dozen blocks of a rare size)
would otherwise fall under ``compact_below`` batch after batch under churn, and each
compaction makes the owner re-point its vertices (a pass over the vertex table) to save a
few kilobytes. The memory this leaves is at most this share per class."""

FREE_SHARE = 1 / 32
"""Free blocks the block arrays may hold in all, as a share of the slots holding lists: past
it (at two compactions in a row where ``FREE_PERSIST`` says so) and at most once in
``FREE_EVERY`` compactions, compaction also takes classes
that are not under ``compact_below`` (those with the most free slots first; of those whose
block cache ring holds blocks, only in a small graph
(:meth:`hornet.memory.block_cache.BlockCache.small_graph`) one whose arrays hold more free
blocks than its ring, its ring given back to the trees first: in a larger graph the room
around a reserve is what the batches that use the reserve grow into), so that a graph under
churn stays about as tight as a fresh build instead of keeping up to ``1 - compact_below``
of every class free. The work stays proportional to the free room it gives back. Together
with the block cache's share of a small graph
(:data:`hornet.memory.block_cache.GRAPH_SHARE_SHIFT`) it bounds what a small graph holds
past a fresh build under churn to a few percent of its list slots."""

FREE_UNDER = 1 / 2
"""A compaction past the ``FREE_SHARE`` allowance gives back free room down to this share of
the allowance, not to the allowance itself: the next one waits until deletes free that much
again, so that churn which frees a little room per batch compacts once in many batches, each
time for a worthwhile amount (the re-pointing pass costs the same whatever the room). Inside
:meth:`MemoryManager.steady_churn` the room past the wider band is given back to the band
(the room under it is what the next inserts take)."""

FREE_EVERY = 1
"""Compactions (delete batches) between two that give back free room past ``FREE_SHARE``: a
ping-pong of batches whose deletes leave holes that its inserts fill again pays for that
compaction once in this many deletes, not at every one."""

FREE_PERSIST = False
"""True: free room past ``FREE_SHARE`` is given back only when it was past it at the
previous compaction too (room that the inserts between two delete batches did not fill
again). False: at the first compaction that finds it. Updates that delete about as much as
they insert say so with :meth:`MemoryManager.steady_churn` (whose wider band keeps their
room) instead of paying a delete's excess free room for a round more."""

RELEASE_PER_ROW = 1 / 16
"""Free slots a compaction must give back per vertex-table row that the owner passes over to
re-point the moved blocks (see :meth:`MemoryManager.compact`): below it the pass costs more
than the room is worth. The room a graph may hold because of it is at most a sixteenth of a
slot per vertex id (a quarter byte for int32 destinations, against the vertex table's 13)."""

STEADY_FREE_SHARE = 1 / 4
"""``FREE_SHARE`` inside :meth:`MemoryManager.steady_churn`: free blocks past this share of
the slots holding lists are given back (``FREE_PERSIST`` and ``FREE_EVERY`` apply too)."""

STEADY_COMPACT_BELOW = 1 / 2
"""Inside :meth:`MemoryManager.steady_churn` a class is compacted for its own utilization
only under the smaller of this and ``compact_below``."""

STEADY_GROWTH_ROOM = True
"""Inside :meth:`MemoryManager.steady_churn` on a graph with a growth floor
(``growth_floor_slots``), a class counts as under ``STEADY_COMPACT_BELOW`` only with the
free blocks of one floor-sized array left out of its blocks: a class of few live blocks in
such an array (or whose holes and one such array are about half its room) would otherwise
be compacted into an exact array that its next growth follows with another floor-sized
array, batch after batch (each an array made and freed, a lookup rebuild and a re-pointing
pass). The room this keeps is the floor's, at most one array per class (False: every free
block counts)."""

COMPACT_TO = 1 / (1 + GROWTH)
"""Compaction evacuates a class's sparsest arrays until it is at least this used: the gap
to ``COMPACT_BELOW`` is the hysteresis that keeps a class from compacting batch after batch."""


class MemoryManager:
    """Per-size-class pools of :class:`BlockArray` for edges with several fields.

    Parameters
    ----------
    fields : list of (name, dtype)
        Edge fields; the first must be the int32 destination.
    block_array_edges : int
        Slots per block array (a power of two). Blocks this large or larger get a dedicated
        array of one block.
    min_block_size : int
        Smallest block (a power of two, default 1).
    compact_below : float
        Utilization (used / reserved blocks) under which a size class is compacted (default
        ``COMPACT_BELOW``; it must be under ``COMPACT_TO``, or compaction could not stop).
    """

    def __init__(self, fields, *, block_array_edges: int = 1 << 16, min_block_size: int = 1,
                 compact_below: float = COMPACT_BELOW, device: str = "cpu"):
        for name, value in (("block_array_edges", block_array_edges),
                            ("min_block_size", min_block_size)):
            if value < 1 or value & (value - 1):
                raise ValueError(f"{name} must be a power of two >= 1, got {value}")
        if not 0.0 <= compact_below < COMPACT_TO:
            raise ValueError(f"compact_below must be in [0, {COMPACT_TO:.3f})")
        self.field_names = [str(n) for n, _ in fields]
        self.field_dtypes = [np.dtype(d) for _, d in fields]
        if self.field_dtypes[0] != np.int32:
            raise ValueError("the first edge field must be the int32 destination")
        self.block_array_edges = int(block_array_edges)
        self.min_size_class = int(min_block_size).bit_length() - 1
        self.compact_below = float(compact_below)
        self.backend = memory_backend(device)
        self.xp = self.backend.xp
        self.pools: dict[int, list[BlockArray]] = {}
        self.last_compacted: list[int] = []
        self.last_evacuated: list[tuple[int, int, int]] = []
        self._touched: set[int] = set()    # classes whose utilization may have dropped
        self._class_blocks: dict[int, int] = {}   # per class: blocks in its arrays ...
        self._class_used: dict[int, int] = {}     # ... and blocks in use (kept current)
        self._free_slots = 0               # free slots of every class's arrays (kept current)
        self._lookup: Lookup | None = None
        self._layout_memo = None      # (lookup, {field: storage layout}), see storage_layout
        self._layout_fields: set = set()   # fields whose storage layout was read
        self._arrays_changed_since_refresh = False   # see refresh
        self._table: ArrayTable | None = None   # the arrays by address (made by lookup())
        self._created: list[BlockArray] = []     # arrays that came and went since the table
        self._freed: list[BlockArray] = []       # was last brought up to date
        self.cache = None                  # BlockCache, made by block_cache() on first use
        self.arrays_created = 0            # block arrays made so far (a statistic)
        self.list_fit = ListFit()          # when the owner's lists go back to fitting blocks
        self._free_over = False            # free room past FREE_SHARE at the last compaction
        self._free_wait = 0                # compactions left before FREE_SHARE applies again
        # (lookup, PendingRelease) of a release whose per-array counts are still on their way
        # (GPU, release(wait=False)); every method that reads the counts settles it first
        self._pending_release = None
        self._release_slot = None          # the buffers of those releases (GPU)
        # device takes (hornet.memory.gpu_take) whose per-array counts are on their way, the
        # device's free counts they keep, and the classes whose arrays a release emptied
        # while takes were pending (dropped once those are in)
        self._pending_takes: list = []
        self._device_takes = None
        self._maybe_empty: set = set()
        self._list_slots = None            # list_slots(), until the counts change
        self.steady = 0                    # depth of steady_churn() blocks around the caller
        # slots a block array made by growth holds at least (within block_array_edges; 0:
        # geometric growth alone), see :meth:`hornet.Graph.set_array_growth`
        self.growth_floor_slots = 0

    # ------------------------------------------------------------------ size classes
    def size_class_for(self, degree):
        """Smallest size class holding ``degree`` edges (int64 array; -1 for degree 0)."""
        return self.backend.size_classes(self.xp.asarray(degree).astype(self.xp.int64, copy=False),
                                         self.min_size_class)

    def blocks_per_array(self, size_class: int) -> int:
        return max(1, self.block_array_edges >> size_class)

    # ------------------------------------------------------------------ block cache
    @property
    def spare_min_bytes(self) -> int:
        """The least bytes kept as a spare per size class on this device (``SPARE_MIN_BYTES``)."""
        return SPARE_MIN_BYTES[self.backend.device]

    def block_cache(self):
        """This manager's :class:`hornet.memory.block_cache.BlockCache` (made on first use):
        rings of reserved free blocks per size class for batches that allocate and release
        on the device."""
        if self.cache is None:
            from .block_cache import BlockCache
            self.cache = BlockCache(self)
        return self.cache

    def cached_changed(self, size_classes) -> None:
        """The block cache gained or lost blocks of ``size_classes``: their utilization (blocks
        owned / blocks reserved) may have dropped, so compaction looks at them again."""
        self._touched.update(map(int, size_classes))
        self._list_slots = None

    def blocks_holding_lists(self, size_class: int) -> int:
        """Blocks of a class in use and not held by the block cache."""
        if self._pending_release is not None:
            self._settle_release()
        return self._class_used.get(size_class, 0) - self._cached(size_class)

    def _cached(self, size_class: int) -> int:
        return self.cache.size(size_class) if self.cache is not None else 0

    def list_slots(self, settle: bool | None = True) -> int:
        """Slots of the blocks that hold lists, every class (host counts only). ``settle``
        False: without waiting for the counts of a release still on its way (GPU), which
        then count as holding lists (an estimate, for decisions on the graph's size); None:
        its counts taken only if they have landed already (no wait)."""
        pending = self._pending_release
        if pending is not None and (settle or (settle is None and pending[1].done())):
            self._settle_release()
        # kept between changes (every change of a class's used blocks goes through _count,
        # every change of the cache's holdings through cached_changed or a release): the
        # block cache asks for it per class it looks at, several times a batch
        if self._list_slots is None:
            cache = self.cache
            if cache is None:
                self._list_slots = sum(used << k for k, used in self._class_used.items())
            else:                      # the cache's counters read directly (after every batch)
                head, tail = cache.head, cache.tail
                self._list_slots = sum((used - tail[k] + head[k]) << k
                                       for k, used in self._class_used.items())
        return self._list_slots

    # ------------------------------------------------------------------ allocation
    def allocate(self, size_class: int, count: int) -> np.ndarray:
        """Edge pointers (int64, shape (count,)) of ``count`` fresh blocks of ``size_class``.

        Takes from the arrays with the most free blocks first, then adds arrays sized to the
        request (growing geometrically with the class), so a bulk build gets exactly-fitting
        arrays.
        Raises :class:`DeviceMemoryError` (nothing allocated) when memory runs out.
        """
        count = int(count)
        if count == 0:
            return self.xp.empty(0, dtype=self.xp.int64)
        return self._take([self._plan(size_class, count, grow=True)])

    def allocate_classes(self, classes):
        """One fresh block per entry of ``classes`` (int64 size classes, shape (n,), on the
        backend's device): their edge pointers, int64 (n,).

        Every class present is planned on the host (only per-class counts cross), the blocks
        of all classes are taken from their bit trees in one pass, and one kernel hands each
        entry a block of its class. All or nothing: on :class:`DeviceMemoryError` nothing is
        taken.
        """
        n = int(classes.shape[0])
        if n == 0:
            return self.xp.zeros(0, dtype=self.xp.int64)
        per_class = self.backend.class_counts(classes)
        pool = self.allocate_counts(per_class)
        return self.backend.place_by_class(classes, per_class, pool)

    def allocate_counts(self, per_class):
        """``per_class[k]`` fresh blocks of every size class k (host integer array): their
        edge pointers (int64, on the device), class after class in ascending order. One pass
        over the bit trees; all or nothing (:class:`DeviceMemoryError`)."""
        return self._take([self._plan(k, int(per_class[k]), grow=True)
                           for k in np.flatnonzero(per_class).tolist()])

    def _plan(self, size_class, count, grow, arrays=None, exact=False):
        """Where ``count`` blocks of ``size_class`` come from: [(array, blocks)] plus the arrays
        created for them (not in the pool yet). ``arrays``: the candidates (default: the
        class's pool). Raises DeviceMemoryError (nothing created) when memory runs out."""
        if self._pending_release is not None or self._pending_takes:
            self.settle()
        arrays = self.pools.get(size_class, []) if arrays is None else arrays
        plan, created, planned = [], [], 0
        # the fullest arrays with free blocks first (best fit): the holes that lists moving
        # away leave are filled before the sparse arrays that growth made, which then drain
        # and are freed without a copy; a graph under churn stays as packed as a fresh build
        # (full arrays are left out before the sort, at C level: most of a large class's
        # arrays are full, and a refill plans several classes)
        for arr in sorted(filter(_FREE, arrays), key=_FREE, reverse=not FULLEST_FIRST):
            take = min(arr.free, count - planned)
            plan.append((arr, take))
            planned += take
            if planned == count:
                break
        if planned < count and grow:
            try:
                # geometric growth across calls (a new array holds at least GROWTH times the
                # class's blocks before this call), exact fit within a call: a bulk build
                # wastes nothing
                before = 0 if exact else int(GROWTH * sum(a.num_blocks for a in arrays))
                floor = 0 if exact else self.growth_floor_slots >> size_class
                limit = self.blocks_per_array(size_class)
                while planned < count:
                    need = count - planned
                    arr = BlockArray(size_class, min(limit, max(need, before, floor)),
                                     self.field_dtypes, self.backend)
                    created.append(arr)
                    before = 0
                    take = min(arr.free, need)
                    plan.append((arr, take))
                    planned += take
            except MemoryError as exc:
                need_bytes = (count << size_class) * sum(d.itemsize for d in self.field_dtypes)
                raise DeviceMemoryError(
                    f"out of memory allocating {count} blocks of {1 << size_class} edges "
                    f"({need_bytes} bytes)", need_bytes) from exc
        if planned < count:
            raise AssertionError("allocation without growth ran out of blocks")
        return size_class, plan, created

    def free_blocks(self, size_class: int) -> int:
        """Free blocks in the arrays of a class (host counts; the block cache's blocks are
        not free)."""
        if self._pending_release is not None:
            self._settle_release()
        return self._class_blocks.get(size_class, 0) - self._class_used.get(size_class, 0)

    def lookup_stale(self) -> bool:
        """Whether block arrays came or went since :meth:`lookup` was last built (the next
        call rebuilds it)."""
        return self._lookup is None

    def add_room(self, size_class: int, blocks: int, lookup: bool = True) -> bool:
        """Make one block array for ``size_class`` when its arrays hold fewer than ``blocks``
        free blocks and none of them is empty (a class keeps one empty array at most), sized
        as an allocation of ``blocks`` would size it (geometric growth, at most
        ``block_array_edges``), taking none of its blocks; the lookup is brought up to date
        at once unless ``lookup`` is False (then :meth:`lookup` rebuilds it when next
        called). Returns whether an array was made. All or nothing
        (:class:`DeviceMemoryError`). Lets a caller pay for a new array on another call than
        the one that takes its blocks."""
        free = self.free_blocks(size_class)
        if free >= blocks:
            return False
        pool = self.pools.get(size_class, [])
        if any(a.free == a.num_blocks for a in pool):
            return False
        count = free + min(int(blocks) - free, self.blocks_per_array(size_class))
        _, _, created = self._plan(size_class, count, grow=True)
        if not created:
            return False
        self._commit_plans([(size_class, [], created)])
        if lookup:
            self.lookup()
        return True

    def allocate_into_rings(self, per_class: dict, ring_at: dict, rings, ring_slots: int,
                            state, state_words) -> None:
        """``per_class[k]`` fresh blocks of every listed size class k, written by the device
        into ring k of the block cache's ``rings`` (int64 device array of ``ring_slots``
        slots per ring, a power of two) from slot counter ``ring_at[k]`` on (wrapping), and
        the cache's device counters ``state`` set to ``state_words`` (host int64) in the same
        launch: one upload, one launch, no read-back. Needs the backend's
        ``take_into_rings`` (GPU). All or nothing (:class:`DeviceMemoryError`)."""
        plans = [self._plan(k, int(n), grow=True) for k, n in sorted(per_class.items()) if n]
        nf = len(self.field_dtypes)
        rows = np.empty((sum(len(plan) for _, plan, _ in plans), 5 + FOREST_LEVELS + 1),
                        dtype=np.int64)
        mask = ring_slots - 1
        i = 0
        for k, plan, _ in plans:
            at = int(ring_at[k])
            for arr, take in plan:
                row = arr.lookup_row()
                rows[i, 0] = row[2 + nf]                   # the bit tree's words
                rows[i, 1] = take
                rows[i, 2] = (k << 32) | (at & mask)
                rows[i, 3] = row[0]
                rows[i, 4] = k + 2
                rows[i, 5:] = row[3 + nf:]
                at += take
                i += 1
        self.backend.take_into_rings(rows, rings, ring_slots.bit_length() - 1, state,
                                     state_words)
        self._commit_plans(plans)

    def _take(self, plans):
        """Carry out plans made by :meth:`_plan`: the blocks of every plan in one pass over the
        bit trees; returns their edge pointers, plan by plan (int64, on the device)."""
        if self.backend.device == "cpu":
            ptrs = _cpu_take(plans, len(self.field_dtypes))
        else:                                  # (GPU: the request table from the arrays' rows)
            ptrs = self.backend.take_arrays([(arr, take, k + 2) for k, plan, _ in plans
                                             for arr, take in plan if take],
                                            len(self.field_dtypes))
        self._commit_plans(plans)
        return ptrs

    def _commit_plans(self, plans) -> None:
        """The host's counts after the blocks of ``plans`` were taken (free blocks per array,
        used blocks per class, the arrays created for them joining their pools)."""
        for k, plan, created in plans:
            taken = 0
            for arr, take in plan:
                arr.free -= take
                taken += take
            self._count(k, 0, taken)
            if created:
                self.arrays_created += len(created)
                self._touched.add(k)           # more room: utilization may have dropped
                self.pools.setdefault(k, []).extend(created)
                self._count(k, sum(a.num_blocks for a in created), 0)
                self._arrays_changed(created=created)
        if self._device_takes is not None:         # the device's free counts follow
            self._device_takes.host_took(self._lookup, plans)

    def _count(self, size_class: int, blocks: int, used: int) -> None:
        """Add to the class's block and used-block counts (what compaction decides on)."""
        self._class_blocks[size_class] = self._class_blocks.get(size_class, 0) + blocks
        self._class_used[size_class] = self._class_used.get(size_class, 0) + used
        self._free_slots += (blocks - used) << size_class
        self._list_slots = None

    def release(self, pointers: np.ndarray, wait: bool = True) -> None:
        """Give blocks back (edge pointers as returned by :meth:`allocate`, any classes; 0
        stands for no block and is skipped).

        One kernel frees them in every bit tree at once; per-array counts are all that crosses
        to the host. ``wait`` False (GPU): the counts are copied back asynchronously and
        taken into the host's bookkeeping by the next call that reads it (:meth:`settle`),
        so that a batch giving blocks back does not wait for its own kernels.
        """
        xp = self.xp
        pointers = xp.asarray(pointers).astype(xp.int64, copy=False)
        if pointers.size == 0:
            return
        if self._pending_release is not None:
            self._settle_release()
        lookup = self.lookup()
        if not wait and self.backend.device == "gpu":
            from .gpu_bit_tree import ReleaseSlot, release_pointers_async
            if self._release_slot is None:     # (its buffers are reused release after release)
                self._release_slot = ReleaseSlot()
            self._pending_release = (lookup, release_pointers_async(
                lookup.forest, lookup.dev_bases, lookup.dev_block_shift, pointers,
                self._release_slot))
            if self._device_takes is not None:     # the device's free counts follow
                self._device_takes.released(lookup, self._release_slot.counts)
            return
        counts = self.backend.release_pointers(lookup.forest, lookup.dev_bases,
                                               lookup.dev_block_shift, pointers)
        if self._device_takes is not None:
            self._device_takes.released(lookup, counts)
        self._released(lookup, counts)

    def settle(self) -> None:
        """Take the per-array counts of device takes and of a release made with ``wait=False``
        into the host's bookkeeping (free blocks per array, used blocks per class, emptied
        arrays dropped); no-op when none is pending."""
        takes, self._pending_takes = self._pending_takes, []
        for take in takes:                         # (their class counts are in already)
            counts = take.counts()
            hit = np.flatnonzero(counts)
            for arr, n in zip(take.lookup.table.arrays_with_bases(
                    take.lookup.bases[hit].tolist()), counts[hit].tolist()):
                arr.free -= n
        self._settle_release()
        self._drop_emptied()

    def settled_without_wait(self) -> bool:
        """Whether :meth:`settle` would not wait for the device (the counts of every pending
        take and release have landed)."""
        pending = self._pending_release
        return (pending is None or pending[1].done()) and all(t.done() for t in
                                                               self._pending_takes)

    def _settle_release(self) -> None:
        """:meth:`settle` for the pending release alone (the used blocks per class exact,
        which is all that most readers need): an array it empties is dropped once no device
        take is pending (whose blocks may come from it)."""
        pending, self._pending_release = self._pending_release, None
        if pending is not None:
            self._released(pending[0], pending[1].counts())

    def _released(self, lookup, counts) -> None:
        """The host's counts after a release gave back ``counts[a]`` blocks of lookup array
        ``a`` (host int64 (A,))."""
        emptied = self._maybe_empty
        given = {}                                 # blocks given back per class
        hit = np.flatnonzero(counts)
        for arr, n in zip(lookup.table.arrays_with_bases(lookup.bases[hit].tolist()),
                          counts[hit].tolist()):
            arr.free += n
            given[arr.size_class] = given.get(arr.size_class, 0) + n
            if arr.free == arr.num_blocks:
                emptied.add(arr.size_class)
        for k, n in given.items():
            self._count(k, 0, -n)
        self._touched.update(given)
        self._drop_emptied()

    def _drop_emptied(self) -> None:
        """Drop the empty arrays of the classes a release emptied arrays of (spares kept),
        unless a device take is pending (then the next :meth:`settle`)."""
        if self._maybe_empty and not self._pending_takes:
            emptied, self._maybe_empty = self._maybe_empty, set()
            for k in emptied:
                if k in self.pools:
                    self._drop_empty(k, keep_spare=True)

    def _drop_empty(self, size_class: int, keep_spare: bool) -> None:
        pool = self.pools[size_class]
        empty = [a for a in pool if a.free == a.num_blocks]
        keep = max(empty, key=lambda a: a.num_blocks) if (keep_spare and empty) else None
        live = sum(a.used for a in pool)
        if keep is not None and (live == 0 or keep.num_blocks > SPARE_SHARE * live or
                                 keep.nbytes < self.spare_min_bytes):
            keep = None  # a spare for an empty class, or larger than growth, holds memory
                         # for nothing; a small one is cheaper to make again than to hold
        dropped = [a for a in empty if a is not keep]
        if dropped:
            self._count(size_class, -sum(a.num_blocks for a in dropped), 0)
            self.pools[size_class] = [a for a in pool if a not in dropped]
            if not self.pools[size_class]:
                del self.pools[size_class]
            self._arrays_changed(freed=dropped)

    def release_spares(self) -> None:
        """Free every empty block array, spares included (the block cache is emptied first)."""
        self.settle()
        if self.cache is not None:
            self.cache.flush()
        for k in list(self.pools):
            self._drop_empty(k, keep_spare=False)

    # ------------------------------------------------------------------ compaction
    @contextlib.contextmanager
    def steady_churn(self):
        """Context manager: the updates inside delete about as much as they insert (the room
        a delete gives back is taken again by the inserts that follow), so give-back works
        in a wider band: free room past ``STEADY_FREE_SHARE`` of the list slots, classes
        under ``STEADY_COMPACT_BELOW`` utilization, lists past
        ``hornet.memory.list_fit.STEADY_LOOSE_SHARE`` (then refitted all at once; a delete
        inside leaves a list that shrinks in its block). Blocks may nest; the band applies
        while any is open."""
        self.steady += 1
        try:
            yield self
        finally:
            self.steady -= 1

    def compact_touched(self, rows: int = 0):
        """:meth:`compact` restricted to the classes that gave back blocks or got new arrays
        since the last call: only their utilization can have dropped under
        ``compact_below``, so the result is the same as checking every class. ``rows``: as
        in :meth:`compact`."""
        self.settle()
        touched, self._touched = self._touched, set()
        return self.compact(sorted(touched), rows)

    def compact(self, size_classes=None, rows: int = 0):
        """Move live blocks out of the emptiest arrays of under-used classes; free those arrays.

        Returns ``(old_pointers, new_pointers)`` of the moved blocks (whole blocks are copied,
        every field); the caller re-points its vertices. In a class under ``compact_below``
        utilization the sparsest arrays are emptied (into free room in the arrays kept, then
        into arrays sized to fit) and freed, until the class is at least ``COMPACT_TO`` used.
        While the free slots of all classes exceed ``FREE_SHARE`` of the slots holding lists
        (here, and at the previous call where ``FREE_PERSIST`` says so; at most once in
        ``FREE_EVERY`` calls), the other
        classes (the most free slots first; one holding cached blocks only as ``FREE_SHARE``
        says) give back the excess the same way, down to ``FREE_UNDER`` of the allowance.
        A class whose free slots are under ``COMPACT_MIN_SHARE`` of
        the slots holding lists is left alone.

        ``rows``: the vertex-table rows the caller passes over to re-point the moved blocks
        (0: none). Nothing moves unless the arrays to empty hold at least
        ``RELEASE_PER_ROW * rows`` free slots: the pass costs the same whatever the room it
        gives back, so a class that steady churn keeps a little under the threshold (room
        that the next inserts take again) is not compacted batch after batch.
        """
        self.settle()
        empty = self.xp.empty(0, dtype=self.xp.int64)
        self.last_compacted = []                   # the classes compacted by this call
        self.last_evacuated = []                   # (start, end, log2 block bytes) of the
                                                   # arrays emptied (their dst columns)
        list_slots = self.list_slots()
        share = STEADY_FREE_SHARE if self.steady else FREE_SHARE
        below = min(self.compact_below, STEADY_COMPACT_BELOW) if self.steady \
            else self.compact_below
        # free slots past the graph's allowance (cached blocks count as used)
        over = self._free_slots - (share * list_slots if list_slots > 0 else 0.0)
        persisted = self._free_over or not FREE_PERSIST
        self._free_over = over > 0
        if self._free_wait > 0 or not persisted:       # past the allowance: wait
            self._free_wait = max(self._free_wait - 1, 0)
            over = min(over, 0)
        elif over > 0:
            self._free_wait = FREE_EVERY - 1
            if not self.steady:                        # down to part of the allowance
                over += (1 - FREE_UNDER) * share * list_slots
        classes = list(self.pools if size_classes is None else size_classes)
        if over <= 0:
            # only a class under the threshold, or whose blocks are all cached, can give
            # room back (the common case after a small delete: none, decided in a pass of
            # a few comparisons per class)
            used, blocks = self._class_used, self._class_blocks
            classes = [k for k in classes if k in self.pools and (
                used[k] < below * blocks[k] or (self._cached(k) and
                                                self._cached(k) == used[k]))]
            if not classes:
                return empty, empty
        classes.sort(key=lambda k: (self._class_blocks.get(k, 0) - self._class_used.get(k, 0))
                     << k, reverse=True)           # the most free slots first
        # plan first (cached blocks counted as used, nothing flushed or moved): which classes
        # give back room, and whether it is worth the re-pointing pass
        planned, room = [], 0
        for k in classes:
            pool = self.pools.get(k)
            if not pool:
                continue
            cached = self._cached(k)
            if cached and cached == self._class_used[k]:
                self.cache.flush([k])              # no list left: a reserve holds memory for
                continue                           # nothing (its emptied arrays are freed)
            # otherwise cached blocks count as used: the cache's reserve is bounded (a few MB)
            # and must not make a small class look under-used, or batches would compact and
            # refill it over and over; past the free allowance, in a small graph (whose
            # reserve the cache bounds by shares of it), a class whose free room outweighs
            # its ring gives both back (the ring is flushed before the move)
            free_slots = (self._class_blocks[k] - self._class_used[k]) << k
            under = self._class_used[k] < below * self._class_blocks[k]
            if under and self.steady and self.growth_floor_slots and STEADY_GROWTH_ROOM:
                # the room of one growth array is not under-use: the class's next growth
                # would add it again
                under = self._class_used[k] < below * (
                    self._class_blocks[k] - (self.growth_floor_slots >> k))
            if not under and (over <= 0 or (cached and (
                    cached > free_slots >> k or not self.cache.small_graph()))):
                continue
            if free_slots < COMPACT_MIN_SHARE * list_slots:
                continue
            enough = None if under else -(-int(over) >> k)   # the graph's allowance
            given = sum(a.free for a in self._evacuation(pool, enough)) << k
            if given == 0 and not cached:
                continue
            planned.append((k, enough))
            room += given
            over -= given
        if not planned or room < RELEASE_PER_ROW * rows:
            return empty, empty
        # every class's evacuated arrays and the blocks their live blocks move to, planned on
        # the host; then one pass finds the live blocks of every evacuated array, one takes
        # the new blocks of every class and one copy moves them: the device work does not
        # grow with the number of classes or arrays
        moves = []                                 # (class, evacuated, kept, plan, blocks)
        for k, enough in planned:
            if self._cached(k):                    # cached blocks go back to the trees first
                self.cache.flush([k])
            pool = self.pools.get(k)
            if not pool:
                continue
            evacuate = self._evacuation(pool, enough)
            if not evacuate:
                continue
            keep = [a for a in pool if all(a is not e for e in evacuate)]
            live = sum(a.used for a in evacuate)
            plan = self._plan(k, live, True, keep, exact=True) if live else None
            moves.append((k, evacuate, keep, plan, live))
        if not moves:
            return empty, empty
        xp = self.xp
        old = self._used_pointers([(k, a) for k, evacuate, *_ in moves for a in evacuate])
        plans = [plan for *_, plan, _ in moves if plan is not None]
        new = self._take(plans) if plans else old
        for k, evacuate, keep, plan, _ in moves:
            if plan is not None:
                keep = keep + plan[2]              # the arrays created for the moved blocks
            self.pools[k] = keep + evacuate        # both ends of the copy must be addressable
        sizes = xp.asarray(np.array([1 << k for k, *_ in moves], dtype=np.int64))
        self.copy_slots(old, new, xp.repeat(sizes, [live for *_, live in moves]))
        for k, evacuate, keep, plan, _ in moves:
            if plan is not None:
                keep = keep + plan[2]
            self.pools[k] = keep
            self.last_evacuated.extend((a.base, a.base + (a.num_blocks << (k + 2)), k + 2)
                                       for a in evacuate)
            self._count(k, -sum(a.num_blocks for a in evacuate), -sum(a.used for a in evacuate))
            self._arrays_changed(freed=evacuate)
            self.last_compacted.append(k)
        return old, new

    def _used_pointers(self, arrays):
        """The pointers of the used blocks of ``arrays`` ([(size class, BlockArray)]), array
        after array, each ascending (int64, on the device): one pass over every array's tree
        where the backend has one (GPU), one call per array otherwise."""
        xp = self.xp
        if not arrays:
            return xp.zeros(0, dtype=xp.int64)
        used_forest = self.backend.used_forest
        if used_forest is not None:
            return used_forest([(a.words, a.level_offsets, a.num_blocks, a.used, a.base, k + 2)
                                for k, a in arrays])
        return xp.concatenate([a.base + (a.used_blocks() << (k + 2)) for k, a in arrays])

    @staticmethod
    def _evacuation(pool: list, enough: int | None) -> list:
        """The arrays of one class to empty: up to ``COMPACT_TO`` utilization (``enough``
        None: the class is under ``compact_below``), or as few as give back ``enough`` free
        blocks (the graph's allowance)."""
        if enough is None:
            return _sparsest_arrays(pool)
        return _sparsest_arrays(pool, 1.0, enough)

    # ------------------------------------------------------------------ addressing and copies
    def _arrays_changed(self, created=(), freed=()) -> None:
        """Block arrays were created or freed: the lookup is stale (the table catches up on
        the next :meth:`lookup`)."""
        if self._table is not None:        # else lookup() builds it from the pools
            self._created.extend(created)
            self._freed.extend(freed)
        self._lookup = None
        self._arrays_changed_since_refresh = True

    def lookup(self) -> Lookup:
        """The block arrays sorted by address (:class:`~hornet.memory.array_table.ArrayTable`,
        brought up to date after arrays come or go), and the tables the kernels take."""
        if self._lookup is None:
            nf = len(self.field_dtypes)
            if self._table is None:
                self._table = ArrayTable([a for pool in self.pools.values() for a in pool],
                                         width=nf + 3 + FOREST_LEVELS + 1)
            else:
                self._table.update(self._created, self._freed)
            self._created, self._freed = [], []
            rows = self._table.rows.reshape(-1, nf + 3 + FOREST_LEVELS + 1)
            bases, classes, field_bases, word_addrs, levels, shifts = lookup_columns(rows, nf)
            if self.backend.forest_from_table is not None:
                forest = self.backend.forest_from_table(word_addrs, levels)
            else:
                forest = self.backend.forest([(a.words, a.level_offsets)
                                              for a in self._table.arrays])
            if self.xp is np:
                dev = (bases, field_bases, shifts)
            else:
                na = bases.shape[0]
                from ..core.cuda import upload      # pinned, in stream order: no wait
                up = upload(np.concatenate([bases, field_bases.ravel(), shifts]))
                dev = (up[:na], up[na:na + na * nf].reshape(na, nf), up[na + na * nf:])
            self._lookup = Lookup(bases, self._table, field_bases, classes, *dev, forest)
        return self._lookup

    def refresh(self) -> bool:
        """After block arrays came or went, bring the storage layouts that were read before
        (the fields asked for) up to date, and with them the lookup: called after each
        batch, so that what reads them between batches (an algorithm's first call on a new
        graph state) does not build them. A graph whose layouts nobody reads builds nothing
        here (its lookup stays as lazy as its batches need it). Returns whether arrays had
        come or gone since the last refresh."""
        changed = self._arrays_changed_since_refresh
        self._arrays_changed_since_refresh = False
        if changed:
            for field in self._layout_fields:
                self.storage_layout(field)          # (memoized while the lookup stands)
        return changed

    def storage_layout(self, field: int = 0) -> dict:
        """The block arrays in storage order (size class by size class, smallest blocks
        first, each class's arrays by address: the order of ``Graph.storage_ranks``), as
        host int64 arrays of shape (A,): ``size_class`` (log2 of a block's slots),
        ``num_blocks``, ``first_rank`` (the storage rank of each array's first block; block
        b of array a has rank first_rank[a] + b) and ``column``: the device address of each
        array's first slot in column ``field`` (slot s of array a at ``column[a] + s *
        itemsize``). A kernel that walks every slot of every array in this order meets each
        list at its rank, without a per-vertex pointer. The same dict (read-only) comes back
        for as long as no block array is created or freed, so that callers can key what
        they derive from it on its identity."""
        lookup = self.lookup()
        memo = self._layout_memo
        if memo is None or memo[0] is not lookup:
            ranked = np.lexsort((lookup.bases, lookup.size_class))
            blocks = np.array([a.num_blocks for a in lookup.arrays], dtype=np.int64)[ranked]
            common = {"size_class": np.asarray(lookup.size_class, dtype=np.int64)[ranked],
                      "num_blocks": blocks, "first_rank": np.cumsum(blocks) - blocks}
            memo = self._layout_memo = (lookup, {}, ranked, common)
        layout = memo[1].get(field)
        if layout is None:
            self._layout_fields.add(field)
            layout = memo[1][field] = dict(memo[3], column=np.asarray(
                lookup.field_bases[:, field], dtype=np.int64)[memo[2]])
        return layout

    def field_addresses(self, pointers: np.ndarray, field: int) -> np.ndarray:
        """Addresses in column ``field`` of the slots whose destination addresses are given
        (int64, shape of ``pointers``). Field 0 is the destination column: its addresses are
        ``pointers`` themselves, returned without a copy when they are int64."""
        xp = self.xp
        pointers = xp.asarray(pointers).astype(xp.int64, copy=False)
        if field == 0:
            return pointers
        if pointers.size == 0:
            return pointers.copy()
        lookup = self.lookup()
        if not lookup.bases.shape[0]:
            return xp.zeros_like(pointers)
        return self.backend.field_addresses(pointers, lookup.dev_bases,
                                            xp.ascontiguousarray(lookup.dev_field_bases[:, field]),
                                            self.field_dtypes[field].itemsize)

    def copy_slots(self, src, dst, counts) -> None:
        """Copy the first ``counts[i]`` slots of every field from block ``src[i]`` to block
        ``dst[i]`` (edge pointers int64 (m,), counts int64 (m,), on the device; the blocks
        must not overlap)."""
        for f, dt in enumerate(self.field_dtypes):
            self.backend.copy_ranges(self.field_addresses(src, f), self.field_addresses(dst, f),
                                     counts, dt)

    def add_field(self, name: str, dtype, fill=0) -> None:
        """Add an edge field to every block array, filled with ``fill``."""
        self.settle()
        self.field_names.append(str(name))
        self.field_dtypes.append(np.dtype(dtype))
        for pool in self.pools.values():
            for arr in pool:
                arr.add_column(dtype, fill)
        self._table, self._created, self._freed = None, [], []   # every row changed
        self._lookup = None
        self._arrays_changed_since_refresh = True

    # ------------------------------------------------------------------ statistics and checks
    @property
    def bytes_per_slot(self) -> int:
        return sum(d.itemsize for d in self.field_dtypes)

    def stats(self) -> dict:
        """Reserved bytes, block counts and utilization, in total and per size class.
        ``used_blocks`` counts the blocks holding a list; ``cached_blocks`` the free blocks the
        block cache holds in reserve (marked used in the bit trees)."""
        self.settle()
        per_class = {}
        reserved = 0
        for k, pool in sorted(self.pools.items()):
            nbytes = sum(a.nbytes for a in pool)
            blocks = sum(a.num_blocks for a in pool)
            cached = self._cached(k)
            used = sum(a.used for a in pool) - cached      # blocks that hold a list
            per_class[k] = {"block_size": 1 << k, "block_arrays": len(pool), "blocks": blocks,
                            "used_blocks": used, "cached_blocks": cached,
                            "reserved_bytes": nbytes,
                            "block_utilization": used / blocks if blocks else 0.0}
            reserved += nbytes
        return {"block_bytes": reserved, "block_arrays": sum(len(p) for p in self.pools.values()),
                "size_classes": per_class}

    def check(self, pointers: np.ndarray, size_classes: np.ndarray) -> None:
        """Verify the allocator against the blocks that vertices say they own.

        ``pointers``/``size_classes``: the edge pointer and size class of every vertex that owns
        a block (the block cache's blocks are added here). Raises :class:`InvariantError`
        naming the first broken invariant (:func:`hornet.memory.manager_check.check`).
        """
        check_manager(self, pointers, size_classes)


def _sparsest_arrays(pool: list, target: float = COMPACT_TO, enough: int | None = None) -> list:
    """The arrays of one class to evacuate: the sparsest first, as few as bring the class to
    ``target`` utilization once their live blocks fill the free room of the arrays kept
    (the rest going to new arrays of exact size), or, given ``enough``, as few as take
    that many free blocks away. Every array, if none is enough."""
    used = sum(a.used for a in pool)
    kept_blocks = sum(a.num_blocks for a in pool)
    kept_free = free = kept_blocks - used
    moving = 0
    chosen = []
    for arr in sorted(pool, key=attrgetter("used")):
        if used >= target * (kept_blocks + max(0, moving - kept_free)):
            break
        if enough is not None and free - max(0, kept_free - moving) >= enough:
            break
        chosen.append(arr)
        kept_blocks -= arr.num_blocks
        kept_free -= arr.free
        moving += arr.used
    return chosen


def _cpu_take(plans, num_fields: int) -> np.ndarray:
    """The CPU side of :meth:`MemoryManager._take`: every (array, count) of the plans taken
    from its bit tree by one kernel call (the arrays' cached lookup rows carry the trees)."""
    reqs = [(arr, take, k + 2) for k, plan, _ in plans for arr, take in plan if take]
    if not reqs:
        return np.zeros(0, dtype=np.int64)
    # one concatenation: np.stack handles each row in Python, and a class whose arrays hold
    # scattered holes hands blocks out from a hundred arrays
    rows = np.concatenate([arr.lookup_row() for arr, _, _ in reqs]).reshape(len(reqs), -1)
    counts = np.array([t for _, t, _ in reqs], dtype=np.int64)
    shifts = np.array([sh for _, _, sh in reqs], dtype=np.int64)
    w = 2 + num_fields                  # row layout: see BlockArray.lookup_row
    # contiguous copies (a few rows): a column of several rows is strided, of one row not,
    # and each layout would be a kernel compilation of its own
    c = np.ascontiguousarray
    return take_forest(c(rows[:, w]), c(rows[:, w + 1:w + 2 + FOREST_LEVELS]), counts,
                       c(rows[:, 0]), shifts)

