"""A GPU batch planned on the device with one read-back (CUDA source ``plan.cu``).

The general pipeline (:mod:`hornet.batch.gpu.kernels`) validates, sorts, deduplicates, finds,
keeps, cuts into segments and counts per size class in separate steps, each reading a count
back to size the next one. :func:`plan_batch` does the same work in five launches and a
sort, and reads every count the host needs at once: sizes it does not know yet (kept
entries, segments) are bounded by the batch's entries, and the kernels read the true counts
from the device. The scan that ranks the kept entries is fused into two of the launches
(``batch_ranks`` sums tiles and its last block scans the sums, ``batch_scatter`` rescans its
tile), and a batch of at most :data:`SORT_MAX` entries is sorted by the module's own
kernels (tiles sorted in shared memory, then ``log2(tiles)`` merge passes) into the plan's
scratch, instead of CuPy's sort and its temporary storage (bench/tools/plan_sort_gpu.py
compares the two by size). Its temporaries live in one scratch reused
batch after batch, and its kernels are launched through prepared argument buffers: a batch's
host work does not allocate a dozen arrays or convert a hundred kernel arguments.

Sort keys are ``src << 31 | dst`` (ids are int32, at most
:data:`hornet.batch.validate.MAX_VERTEX_ID`): no bit width depends on the graph or on the
batch's largest id, so validation is a by-product of packing the keys.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ...core.cuda import BLOCK, PreparedLaunch, _max_grid, cupy, function, upload
from . import key_sort

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plan.cu")
_ID_TYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}
_NAMES = tuple(f"batch_keys<{t}>" for t in _ID_TYPES.values())

# info slots (plan.cu)
I_BAD, I_MAX_ID, I_LOOPS, I_KEPT, I_SEGMENTS, I_ONCE, I_MOVES, I_TICKET, I_CLASS = range(9)
NUM_CLASSES = 64
I_FREED = I_CLASS + NUM_CLASSES
#: set by a take queued before the read-back (hornet.memory.gpu_take.take_ahead) that found
#: a class short of free blocks
I_TAKE_SHORT = I_FREED + 1
INFO_WORDS = I_TAKE_SHORT + 1
#: batch_plan's modes (plan.cu)
MODE_DELETE, MODE_INSERT, MODE_KEEP_BLOCKS, MODE_REFIT = range(4)
#: most entries (pairs, twice that many when mirrored) a planned batch may have: its scratch
#: (eleven int64 rows of the next power of two, :class:`_Scratch`) is kept for the next batch
MAX_ENTRIES = (1 << 25) - 1
#: keys a block of ``batch_tile_sort`` sorts in shared memory (plan.cu)
SORT_TILE = 1024
SORT_THREADS = 256
#: most entries sorted by the module's kernels (more: the radix sort of
#: :mod:`hornet.batch.gpu.key_sort` up to RADIX_MAX, or CuPy's sort); overridable with the
#: environment variable HORNET_PLAN_SORT_MAX (0: never the module's kernels)
SORT_MAX = int(os.environ.get("HORNET_PLAN_SORT_MAX", 1 << 18))
#: batches of more than SORT_MAX entries, up to RADIX_MAX, are sorted by
#: :func:`hornet.batch.gpu.key_sort.sort_keys` (passes over the bits the batch's ids use,
#: no temporary storage); False (or the environment variable HORNET_PLAN_RADIX=0), or
#: larger batches: by CuPy's sort (all 64 bits). On the H200, 2 x 10^6 keys of ids below
#: 2^24: 231 us of device time against CuPy's 237, and K24 10^6 inserts 0.92x with it (the
#: host's time in CuPy's call); 2 x 10^7 keys: 2375 us against 1387
#: (bench/tools/key_sort_gpu.py, bench/tools/knob_ab_gpu.py)
RADIX_SORT = os.environ.get("HORNET_PLAN_RADIX", "1") != "0"
RADIX_MAX = 1 << 22
#: entries a block of ``batch_ranks`` / ``batch_scatter`` ranks (plan.cu: SCAN_TILE)
SCAN_TILE = 2048
SCAN_THREADS = 256

_SCRATCH: list = []
_LAUNCHES: dict = {}
# kernel -> its number of parameters (every launch goes through a PreparedLaunch)
_ARITY = {"batch_keys<int>": 6, "batch_keys<long long>": 6, "batch_find": 8,
          "batch_ranks": 9, "batch_scatter": 15, "batch_plan": 17, "batch_place": 6,
          "batch_commit": 10, "batch_tile_sort": 2, "batch_merge_pass": 4,
          "batch_common": 7, "batch_overlap": 7, "batch_shift": 6, "batch_degrees": 5}


def _prepared(name: str) -> PreparedLaunch:
    fn = _LAUNCHES.get(name)
    if fn is None:
        fn = _LAUNCHES[name] = PreparedLaunch(function(_CU, name, _NAMES), _ARITY[name])
    return fn


def _launch(name: str, n: int, args: list) -> None:
    """Kernel ``name`` over ``n`` items (grid-stride, BLOCK threads a block) with ``args``
    (ints: device pointers and scalars, one per parameter), through a prepared argument
    buffer: a CuPy kernel call converts every argument on each launch."""
    if n > 0:
        _prepared(name)(min((n + BLOCK - 1) // BLOCK, _max_grid()), BLOCK, args)


def _launch_tiles(name: str, tiles: int, threads: int, args: list) -> None:
    """Kernel ``name`` on ``tiles`` blocks of ``threads`` threads (one block per tile)."""
    if tiles > 0:
        _prepared(name)(tiles, threads, args)


def _sort_keys(first: int, other: int, entries: int) -> None:
    """Sort the ``entries`` uint64 keys at device address ``first`` with the module's kernels,
    using ``entries`` words at ``other`` as the merge passes' second buffer: the sorted keys
    end at ``other`` when the number of passes (:func:`_merge_passes`) is odd, at ``first``
    otherwise."""
    tiles = -(-entries // SORT_TILE)
    _launch_tiles("batch_tile_sort", tiles, SORT_THREADS, [first, entries])
    width = SORT_TILE
    for _ in range(_merge_passes(entries)):
        _launch("batch_merge_pass", entries, [first, other, entries, width])
        first, other = other, first
        width *= 2


def _merge_passes(entries: int) -> int:
    return (-(-entries // SORT_TILE) - 1).bit_length()


class _Scratch:
    """The plan's temporaries, reused batch after batch (the kernels of one batch run in
    stream order, and nothing outside a batch keeps them): ``wide`` int64 (11, capacity),
    (also as ``rows``, its 1-D rows, and ``keys``, row 0 as uint64), ``sources`` int32,
    ``keep`` uint8 (capacity,), ``tile_sum`` int64 (2 per tile of SCAN_TILE entries),
    ``info`` int64 (INFO_WORDS,) and its pinned host copy. The capacity grows to the next
    power of two a batch needs."""

    def __init__(self):
        import cupyx
        self.capacity = 0
        self.info = cupy.empty(INFO_WORDS, dtype=cupy.int64)
        self.host = cupyx.empty_pinned(INFO_WORDS, dtype=np.int64)
        self.copied = cupy.cuda.Event(disable_timing=True)    # see copy_info_event

    def reserve(self, entries: int) -> None:
        if entries > self.capacity:
            cap = 1 << max(10, (entries - 1).bit_length())
            self.wide = cupy.empty((11, cap), dtype=cupy.int64)
            # the rows as 1-D arrays, made once: a batch slices them once the counts are known
            self.rows = [self.wide[k] for k in range(11)]
            self.keys = self.rows[0].view(cupy.uint64)
            self.sources = cupy.empty(cap, dtype=cupy.int32)
            self.keep = cupy.empty(cap, dtype=cupy.uint8)
            self.tile_sum = cupy.empty(2 * (cap // SCAN_TILE + 1), dtype=cupy.int64)
            self.capacity = cap

    def copy_info(self) -> None:
        """``info`` queued for a copy into the pinned host buffer (valid after the stream's
        next synchronization)."""
        stream = cupy.cuda.get_current_stream()
        cupy.cuda.runtime.memcpyAsync(self.host.ctypes.data, self.info.data.ptr,
                                      INFO_WORDS * 8, cupy.cuda.runtime.memcpyDeviceToHost,
                                      stream.ptr)

    def copy_info_event(self):
        """``info`` queued for a copy into the pinned host buffer, and an event recorded after
        it: once the event has completed, ``host`` holds the counts, whatever the stream has
        queued after the event (work queued behind the read-back runs while the host waits
        for it)."""
        self.copy_info()
        self.copied.record()
        return self.copied

    def readback(self) -> np.ndarray:
        """``info`` copied into the pinned host buffer (the plan's one synchronization)."""
        self.copy_info()
        cupy.cuda.get_current_stream().synchronize()
        return self.host


def _scratch(entries: int, slot: int = 0) -> _Scratch:
    while len(_SCRATCH) <= slot:
        _SCRATCH.append(_Scratch())
    ws = _SCRATCH[slot]
    ws.reserve(entries)
    return ws


def plan_scratch(entries: int, slot: int = 0) -> _Scratch:
    """The process's plan scratch number ``slot``, grown to hold a batch of ``entries``
    entries (reused batch after batch: the kernels of one batch run in stream order). A
    mixed batch plans its two halves side by side in slots 0 and 1
    (:mod:`hornet.batch.planned_mixed`)."""
    return _scratch(entries, slot)


def plan_entries(ws: _Scratch, s, d, mirror: bool, inserting: bool, degree, edge_ptr,
                 p_src: int, p_dst: int, p_at: int, p_seg_start: int, p_once_src: int,
                 p_once_dst: int, p_res: int = 0) -> None:
    """The plan's first steps for the pairs ``s``, ``d`` (as :func:`plan_batch`): ``ws.info``
    cleared, the keys packed (validation), sorted, deduplicated and looked up in their
    lists, ranked, and the kept entries scattered to the device addresses given: ``p_src``,
    ``p_dst`` (int32), ``p_at`` (int64: insertion point or position), ``p_seg_start`` (int64,
    per segment), ``p_once_src``, ``p_once_dst`` (int32, the entries with src < dst; 0 for a
    directed graph) and ``p_res`` (int64 per kept entry, its row in the change; 0: not
    written). Every output has room for the batch's entries. The counts are in ``ws.info``
    on the device (kept, segments, once, loops, bad, largest id); nothing is read back."""
    n = int(s.shape[0])
    entries = n * (2 if mirror else 1)
    table_len = int(degree.shape[0])
    info = ws.info
    info.data.memset_async(0, INFO_WORDS * 8)
    row = ws.wide.data.ptr
    step = ws.capacity * 8
    # rows 2 and 5 hold the scan's two rank words (batch_plan writes row 5 afterwards)
    r_keys, r_at_all, r_flags = (row + k * step for k in range(3))
    r_once = row + 5 * step
    p_info, p_keep = info.data.ptr, ws.keep.data.ptr
    own_sort = entries <= SORT_MAX
    # the module's sort ends in the keys' row when the keys start in at_all's row for an odd
    # number of merge passes (at_all is written after the sort)
    start = r_at_all if own_sort and _merge_passes(entries) & 1 else r_keys
    _launch(f"batch_keys<{_ID_TYPES[s.dtype]}>", n,
            [s.data.ptr, d.data.ptr, n, int(mirror), p_info, start])
    if own_sort:
        _sort_keys(start, r_at_all if start == r_keys else r_keys, entries)
    elif RADIX_SORT and entries <= RADIX_MAX:     # (at_all's row is written after the sort)
        key_sort.sort_keys(r_keys, r_at_all, entries, p_info + 8 * I_MAX_ID)
    else:
        ws.keys[:entries].sort()
    _launch("batch_find", entries, [r_keys, entries, degree.data.ptr, edge_ptr.data.ptr,
                                    table_len, int(inserting), p_keep, r_at_all])
    tiles = -(-entries // SCAN_TILE)
    p_tile_sum = ws.tile_sum.data.ptr
    _launch_tiles("batch_ranks", tiles, SCAN_THREADS,
                  [r_keys, p_keep, entries, int(mirror), r_flags, r_once, p_tile_sum, tiles,
                   p_info])
    _launch_tiles("batch_scatter", tiles, SCAN_THREADS,
                  [r_keys, p_keep, r_at_all, r_flags, r_once, p_tile_sum, entries, p_info,
                   p_src, p_dst, p_at, p_seg_start, p_once_src, p_once_dst, p_res])


@dataclass
class BatchPlan:
    """A planned batch. Host ints: ``bad`` (an id outside [0, MAX_VERTEX_ID]: nothing else is
    valid), ``top`` (largest id + 1), ``loops`` (self-loop pairs dropped), ``kept``
    (entries the batch changes), ``segments``, ``moves`` (segments whose list moves),
    ``per_class`` (host int64 (64,): moving segments per new size class), ``freed_slots``
    (the slots of the blocks that moving or emptied lists give back) and ``refit`` (a delete
    planned again by :func:`refit_plan`).

    Device arrays, each cut to its true length on its first use (None for a plan that
    flags a bad id): ``src``, ``dst`` (int32 (kept,), sorted by
    (src, dst)), ``at`` (int64 (kept,): insertion point or position in the old list),
    per segment ``sources`` (int32), ``seg_start``, ``seg_len``, ``old_deg``, ``new_deg``,
    ``old_ptr`` (int64), ``seg_ptr`` (int64: the segment's block after the batch, ``old_ptr``
    until :func:`place_moves` gives the moving lists their new blocks), ``freed`` (int64
    scratch that :func:`commit_plan` fills), and ``moved`` / ``move_class`` (int64 (moves,): the moving
    segments, in no particular order, and their new classes); ``once_src``, ``once_dst``
    (int32 (kept / 2,)): an undirected batch's kept edges once, src < dst (None for a
    directed graph).
    """
    bad: bool
    top: int
    loops: int
    kept: int
    segments: int
    moves: int
    per_class: np.ndarray
    freed_slots: int = 0
    refit: bool = False
    take_short: bool = False         # a take queued before the read-back took nothing
    pending: object = None           # the PendingPlan it was made from (refit_plan)
    # (ws, src, dst, once_pairs, mirror, half): where the device arrays are cut from, each on
    # its first use (a delete reads few of them; a CuPy view costs microseconds of host time)
    cut_from: tuple | None = None

    def __getattr__(self, name: str):
        # only called for attributes not set yet: the device arrays, cut on first use
        if name not in _VIEWS:
            raise AttributeError(name)
        source = self.__dict__.get("cut_from")
        value = None if source is None else _view(self, name, *source)
        setattr(self, name, value)
        return value


def plan_batch(s, d, mirror: bool, inserting: bool, degree, size_class, edge_ptr,
               min_class: int, keep_blocks: bool = False, slot: int = 0,
               wait: bool = True):
    """Plan an insert (``inserting``) or delete of the pairs ``s``, ``d`` (contiguous int32 or
    int64 device arrays of one dtype, shape (n,), 0 < n and n * (2 if mirror else 1) <=
    MAX_ENTRIES) against the vertex table
    (``degree`` int32, ``size_class`` int8, ``edge_ptr`` int64, each (table_len,) on the
    device; ids at or past table_len have no list). ``mirror``: an undirected graph (each
    pair stands for both directions; self-loops are dropped). ``keep_blocks`` (deleting):
    lists that shrink stay in their blocks (the plan moves none).

    Five launches (prepared argument buffers) and a sort (:data:`SORT_MAX`), one read-back. The plan's
    ``src``, ``dst``, ``once_src`` and ``once_dst`` are arrays of their own (a batch's change
    keeps them); every other array of the plan is a view of the process's plan scratch, which
    the next call overwrites (in stream order: a batch's kernels that read them are queued
    before it). The scratch grows to the largest batch planned and is kept.

    ``slot``: which plan scratch (:func:`plan_scratch`). ``wait`` False: nothing is read
    back; returns a :class:`PendingPlan`, whose ``finish`` makes the plan once its
    ``ws.info`` has reached the host (``ws.copy_info()`` and a synchronization: a caller
    planning two batches reads both back at once).
    """
    n = int(s.shape[0])
    entries = n * (2 if mirror else 1)
    ws = plan_scratch(entries, slot)
    # the change's arrays get their own allocations (a caller keeping the change keeps no
    # scratch); everything else lives in the reused scratch
    src = cupy.empty(entries, dtype=cupy.int32)
    dst = cupy.empty(entries, dtype=cupy.int32)
    once_pairs = cupy.empty(entries if mirror else 0, dtype=cupy.int32)
    # the wide rows (see _launch_plan; views made once the counts are known, the kernels get
    # addresses): at (row 3) and seg_start (row 4) are written by the scan
    row = ws.wide.data.ptr
    step = ws.capacity * 8
    r_at, r_seg_start = row + 3 * step, row + 4 * step
    p_src, p_dst = src.data.ptr, dst.data.ptr
    half = entries // 2 if mirror else 0       # once_src: once_pairs[:half], once_dst after
    plan_entries(ws, s, d, mirror, inserting, degree, edge_ptr, p_src, p_dst, r_at,
                 r_seg_start, once_pairs.data.ptr if mirror else 0,
                 once_pairs.data.ptr + 4 * half if mirror else 0)
    mode = MODE_INSERT if inserting else (MODE_KEEP_BLOCKS if keep_blocks else MODE_DELETE)
    pending = PendingPlan(ws, src, dst, once_pairs, mirror, half, entries)
    _launch_plan(pending, mode, degree, size_class, edge_ptr, min_class)
    if not wait:
        return pending
    return pending.finish(ws.readback())


def _launch_plan(pending, mode: int, degree, size_class, edge_ptr, min_class: int) -> None:
    """``batch_plan`` of the queued plan ``pending`` in ``mode`` (plan.cu): each segment's
    source, length, degrees, pointers and whether its list moves, into the scratch's rows."""
    ws = pending.ws
    row = ws.wide.data.ptr
    step = ws.capacity * 8
    # the wide rows: keys, at_all, flags, at, seg_start, moved, move_class, seg_len, old_deg,
    # new_deg, old_ptr; seg_ptr takes at_all's row (read by batch_scatter, queued before)
    r_seg_start, r_moved, r_move_class, r_seg_len, r_old_deg, r_new_deg, r_old_ptr = (
        row + k * step for k in range(4, 11))
    r_seg_ptr = row + step
    _launch("batch_plan", pending.entries, [
        pending.src.data.ptr, r_seg_start, ws.info.data.ptr, degree.data.ptr,
        size_class.data.ptr, edge_ptr.data.ptr, int(degree.shape[0]), mode, int(min_class),
        ws.sources.data.ptr, r_seg_len, r_old_deg, r_new_deg, r_old_ptr, r_moved,
        r_move_class, r_seg_ptr])


def refit_plan(plan: BatchPlan, degree, size_class, edge_ptr, min_class: int,
               refit: bool = True, keep_blocks: bool = False) -> BatchPlan:
    """The delete ``plan`` (from :func:`plan_batch`, nothing done with it yet, against the
    same vertex table) planned again so that every list of its segments that keeps edges
    and that a smaller size class holds moves to that class (the lists that
    :meth:`hornet.memory.list_fit.ListFit.refit` would move among the batch's sources once
    the batch is in), and none else but those the delete moves anyway: the refit is then the
    batch's own allocation and rewrite. ``refit`` False: planned again as a plain delete;
    ``keep_blocks``: planned again with every list kept in its block (no list moves).
    One launch and one read-back."""
    pending = plan.pending
    info = pending.ws.info
    info[I_MOVES:I_MOVES + 1].fill(0)
    info[I_CLASS:].fill(0)                       # the per-class counts and I_FREED
    mode = MODE_KEEP_BLOCKS if keep_blocks else (MODE_REFIT if refit else MODE_DELETE)
    _launch_plan(pending, mode, degree, size_class, edge_ptr, min_class)
    new = pending.finish(pending.ws.readback())
    new.refit = refit and not keep_blocks
    return new


@dataclass
class PendingPlan:
    """A plan queued on the device whose counts are not read back yet (:func:`plan_batch`
    with ``wait`` False): ``ws`` its scratch, the rest the arrays its change keeps and the
    batch's ``entries``."""
    ws: _Scratch
    src: object
    dst: object
    once_pairs: object
    mirror: bool
    half: int
    entries: int = 0

    def finish(self, h: np.ndarray) -> BatchPlan:
        """The plan, from ``h``: its ``ws.info`` on the host."""
        plan = _made_plan(h, self.ws, self.src, self.dst, self.once_pairs, self.mirror,
                          self.half)
        plan.pending = self
        return plan


#: the plan's device arrays: (per kept entry, per segment, per move) -> scratch row (None:
#: an array of its own or the sources' scratch)
_ROWS = {"at": 3, "seg_start": 4, "seg_len": 7, "old_deg": 8, "new_deg": 9, "old_ptr": 10,
         "seg_ptr": 1, "freed": 2, "moved": 5, "move_class": 6}
_VIEWS = frozenset(_ROWS) | {"src", "dst", "sources", "once_src", "once_dst"}


def _view(plan: BatchPlan, name: str, ws, src, dst, once_pairs, mirror: bool, half: int):
    """The plan's device array ``name``, cut to its true length (see :class:`BatchPlan`)."""
    m, ns = plan.kept, plan.segments
    if name in ("src", "dst"):
        return (src if name == "src" else dst)[:m]
    if name == "sources":
        return ws.sources[:ns]
    if name in ("once_src", "once_dst"):
        if not mirror:
            return None
        return once_pairs[:m // 2] if name == "once_src" else once_pairs[half:half + m // 2]
    row = ws.rows[_ROWS[name]]
    return row[:m] if name == "at" else row[:plan.moves] if name in ("moved", "move_class") \
        else row[:ns]


def _address(plan: BatchPlan, name: str) -> int:
    """Device address of the plan's scratch array ``name`` (a row of :data:`_ROWS`, or
    ``sources``) without cutting a view of it."""
    ws = plan.cut_from[0]
    if name == "sources":
        return ws.sources.data.ptr
    return ws.wide.data.ptr + _ROWS[name] * ws.capacity * 8


def _made_plan(h, ws, src, dst, once_pairs, mirror: bool, half: int) -> BatchPlan:
    plan = BatchPlan(bool(h[I_BAD]), int(h[I_MAX_ID]) + 1, int(h[I_LOOPS]), int(h[I_KEPT]),
                     int(h[I_SEGMENTS]), int(h[I_MOVES]),
                     h[I_CLASS:I_CLASS + NUM_CLASSES].copy(), int(h[I_FREED]),
                     take_short=bool(h[I_TAKE_SHORT]))
    if not plan.bad:
        plan.cut_from = (ws, src, dst, once_pairs, mirror, half)
    return plan



def place_moves(plan: BatchPlan, class_start, pool) -> None:
    """Give every moving list of ``plan`` a distinct block of its new class from ``pool``
    (int64 device: ``plan.per_class[k]`` blocks of every class k, class after class in
    ascending order, as :meth:`MemoryManager.allocate_counts` returns them), written into
    ``plan.seg_ptr``. ``class_start``: where class k's blocks start in ``pool``, host int64
    (64,) (uploaded), or uint64 device (64,) (advanced in place). One launch, no
    synchronization."""
    if not plan.moves:
        return
    next_slot = upload(np.ascontiguousarray(class_start, dtype=np.uint64)) \
        if isinstance(class_start, np.ndarray) else class_start
    _launch("batch_place", plan.moves, [_address(plan, "moved"), _address(plan, "move_class"),
                                        plan.moves, next_slot.data.ptr, pool.data.ptr,
                                        _address(plan, "seg_ptr")])


def commit_plan(plan: BatchPlan, degree, size_class, edge_ptr, min_class: int):
    """Write ``plan`` into the vertex table (``degree`` int32, ``size_class`` int8,
    ``edge_ptr`` int64, device, long enough for every source): new degrees, the moved lists'
    blocks (``plan.seg_ptr``) and classes, no block for emptied lists. Returns
    ``plan.freed`` (int64 device (segments,)): the old blocks given back, 0 where none (a view
    of the plan's scratch, valid until the next plan). One launch."""
    _launch("batch_commit", plan.segments, [
        _address(plan, "sources"), _address(plan, "new_deg"), _address(plan, "old_ptr"),
        _address(plan, "seg_ptr"), plan.segments, int(min_class), degree.data.ptr,
        size_class.data.ptr, edge_ptr.data.ptr, _address(plan, "freed")])
    return plan.freed


def count_common(ins: PendingPlan, entries: int, dele: PendingPlan, del_entries: int,
                 out) -> None:
    """``out[0]`` (int64 device, zeroed by the caller) += the kept entries of the queued
    insert plan ``ins`` (``entries``: its batch's entries) whose key is among the sorted keys
    of the queued delete plan ``dele`` (``del_entries`` of them). One launch, no wait."""
    _launch("batch_common", entries, [ins.src.data.ptr, ins.dst.data.ptr,
                                      ins.ws.info.data.ptr, entries,
                                      dele.ws.keys.data.ptr, del_entries, out.data.ptr])


def shift_for_removal(ins: BatchPlan, dele: BatchPlan) -> None:
    """Make the insert plan ``ins`` merge into its lists after the delete plan ``dele``
    (planned against the same table, lists kept in their blocks) removed its entries in place:
    each shared list's old degree (``ins.old_deg``) less the entries it loses, each insertion
    point (``ins.at``) less the removed positions before it, and the delete's new degrees
    (``dele.new_deg``) plus the entries the insert adds (so that a list the delete empties
    and the insert refills keeps its block). Three launches, no wait."""
    _launch("batch_overlap", ins.segments, [ins.sources.data.ptr, ins.segments,
                                            dele.sources.data.ptr, dele.seg_len.data.ptr,
                                            dele.segments, -1, ins.old_deg.data.ptr])
    _launch("batch_shift", ins.kept, [ins.src.data.ptr, ins.at.data.ptr, ins.kept,
                                      dele.src.data.ptr, dele.at.data.ptr, dele.kept])
    _launch("batch_overlap", dele.segments, [dele.sources.data.ptr, dele.segments,
                                             ins.sources.data.ptr, ins.seg_len.data.ptr,
                                             ins.segments, 1, dele.new_deg.data.ptr])


def set_degrees(ins: BatchPlan, degree) -> None:
    """``degree`` (int32 device) of the insert plan's sources set to ``ins.old_deg +
    ins.seg_len`` (after :func:`shift_for_removal`: the degrees after both halves). One
    launch."""
    _launch("batch_degrees", ins.segments, [ins.sources.data.ptr, ins.old_deg.data.ptr,
                                            ins.seg_len.data.ptr, ins.segments,
                                            degree.data.ptr])
