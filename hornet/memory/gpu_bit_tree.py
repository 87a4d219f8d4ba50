"""Device-resident bit trees (CuPy + CUDA C++), the GPU twin of :mod:`hornet.memory.bit_tree`.

Same layout as the CPU trees: one ``uint64`` device array holding every level, level 0 (one
bit per block, 1 = free) first; bit ``i`` of word ``w`` at level ``l + 1`` is set iff word
``64 w + i`` of level ``l`` is non-zero; bits past the end of a level are 0. ``level_offsets``
is the HOST ``int64`` array of :func:`hornet.memory.bit_tree.tree_layout` (start of every level,
total length last).

GPU-friendly operations instead of the CPU's descent from the root: taking the ``count``
lowest free blocks is a popcount per leaf word, an exclusive scan and one extraction thread per
word, followed by a rebuild of the upper levels (one ballot per 32 parent bits). Only counts
cross to the host.
"""
from __future__ import annotations

import os

import numpy as np

from ..core.cuda import PreparedLaunch, cupy, function, i64, upload
from .gpu_launch import launch
from .gpu_copy import CU_SOURCE, CU_TEMPLATES

WORD_BITS = 64
#: requests for at most this many blocks in all take the one-launch path (take_small: one
#: block of threads per tree, no scan and no second launch, the host's work a table and an
#: upload); larger ones the scan over whole leaf levels, whose kernels spread a tree's
#: blocks over the whole device. The environment variable HORNET_SMALL_TAKE overrides it
SMALL_TAKE = int(os.environ.get("HORNET_SMALL_TAKE", 1 << 18))
SMALL_TAKE_THREADS = 1024
#: the one-launch takes: a warp takes the free blocks under one level-1 word 64 leaf words
#: abreast
TAKE_SMALL = "take_small"
TAKE_SMALL_RING = "take_small_ring"


def tree_layout(num_blocks: int) -> np.ndarray:
    """Start of every level in the flat word array, plus the total length at the end (host).

    Identical to :func:`hornet.memory.bit_tree.tree_layout` (kept here so that this module
    needs no Numba).
    """
    offsets = [0]
    words = max(1, -(-int(num_blocks) // WORD_BITS))
    while True:
        offsets.append(offsets[-1] + words)
        if words == 1:
            break
        words = -(-words // WORD_BITS)
    return np.asarray(offsets, dtype=np.int64)


def _fn(name: str):
    return function(CU_SOURCE, name, CU_TEMPLATES)


_DEV_OFFSETS: dict = {}


def _device_offsets(level_offsets):
    """level_offsets on the device (cached per layout; layouts are few)."""
    host = np.ascontiguousarray(np.asarray(level_offsets, dtype=np.int64))
    key = host.tobytes()
    dev = _DEV_OFFSETS.get(key)
    if dev is None:
        if len(_DEV_OFFSETS) > 256:
            _DEV_OFFSETS.clear()
        dev = cupy.asarray(host)
        _DEV_OFFSETS[key] = dev
    return dev


def _levels(level_offsets) -> int:
    return int(len(level_offsets)) - 1


def _rebuild_upper(words, level_offsets) -> None:
    """Recompute every internal level from the leaves up."""
    off = [int(x) for x in level_offsets]
    fn = _fn("rebuild_level")
    for level in range(1, len(off) - 1):
        nchild = off[level] - off[level - 1]
        nparent = off[level + 1] - off[level]
        launch(fn, nparent * WORD_BITS,
               (words, i64(off[level - 1]), i64(nchild), i64(off[level]), i64(nparent)))


_FILL_TREE_LEVELS = 8          # levels the fill_tree kernel takes (memory_kernels.cu)


def new_tree(num_blocks: int):
    """A tree with every block free: (words uint64 device array, level_offsets host int64)."""
    offsets = tree_layout(num_blocks)
    words = cupy.empty(int(offsets[-1]), dtype=cupy.uint64)
    levels = len(offsets) - 1
    if levels <= _FILL_TREE_LEVELS:       # every level in one launch (the common case)
        o = [int(x) for x in offsets[1:]]
        launch(_fn("fill_tree"), o[-1], (words, i64(num_blocks), np.int32(levels),
                                         *(i64(x) for x in o + o[-1:] * (8 - levels))))
        return words, offsets
    fn = _fn("fill_level")
    n = int(num_blocks)
    for level in range(len(offsets) - 1):
        start, stop = int(offsets[level]), int(offsets[level + 1])
        launch(fn, stop - start, (words[start:stop], i64(stop - start), i64(n)))
        n = stop - start
    return words, offsets


def _select(words, level_offsets, invert: int, nbits: int, count: int | None, clear: int):
    """Block ids of the first ``count`` selected leaf bits (free, or used when ``invert``).

    ``count`` must not exceed the number of selected bits (the caller knows it: no sync);
    None: all of them (their number crosses to the host).
    """
    nw = int(level_offsets[1]) - int(level_offsets[0])
    leaves = words[int(level_offsets[0]):int(level_offsets[1])]
    pc = cupy.empty(nw, dtype=cupy.int64)
    launch(_fn("popcount_words"), nw, (leaves, i64(nw), np.int32(invert), i64(nbits), pc))
    inclusive = cupy.cumsum(pc)
    k = int(inclusive[-1]) if count is None else max(0, int(count))
    out = cupy.empty(k, dtype=cupy.int64)
    if k == 0:
        return out
    prefix = inclusive - pc
    launch(_fn("extract_bits"), nw, (leaves, i64(nw), np.int32(invert), i64(nbits), prefix,
                                     i64(k), np.int32(clear), out))
    return out


def take_free(words, level_offsets, count: int):
    """Mark the ``count`` lowest free blocks used; return their ids (int64 device, ascending).

    ``count`` must not exceed the free blocks (BlockArray.take clamps it with its host count).
    """
    if int(count) <= 0:
        return cupy.empty(0, dtype=cupy.int64)
    out = _select(words, level_offsets, 0, 0, count, 1)
    if out.shape[0]:
        _rebuild_upper(words, level_offsets)
    return out


def give_back(words, level_offsets, blocks) -> None:
    """Mark ``blocks`` (integer device array, each in use) free again and fix their ancestors."""
    blocks = cupy.ascontiguousarray(cupy.asarray(blocks).astype(cupy.int64, copy=False))
    n = blocks.shape[0]
    if n == 0:
        return
    launch(_fn("give_back"), n, (words, _device_offsets(level_offsets),
                                 np.int32(_levels(level_offsets)), blocks, i64(n)))


def take_forest(requests):
    """Blocks from several trees in one pass (one launch, or two kernels and a scan, whatever
    the number of trees: :func:`take_rows`): per request ``(words, level_offsets, count, base,
    shift)`` the pointers ``base + (block << shift)`` of the ``count`` lowest free blocks of
    that tree (``count`` at most its free blocks), which become used. Returns all requests'
    pointers concatenated (int64 device). Only the request table (a few numbers per tree)
    goes from the host to the device.
    """
    from .bit_tree import forest_table
    requests = [r for r in requests if r[2] > 0]
    if not requests:
        return cupy.empty(0, dtype=cupy.int64)
    addrs, table = forest_table([(w, off) for w, off, *_ in requests], lambda w: int(w.data.ptr))
    column = [np.array([r[i] for r in requests], dtype=np.int64) for i in (2, 3, 4)]
    return take_rows(addrs, table, *column)


def take_arrays(requests, num_fields: int):
    """Blocks of several block arrays in one take: per request ``(array, count, shift)``
    (a :class:`hornet.memory.block_array.BlockArray`, at most its free blocks, log2 of its
    block's bytes) the pointers of its ``count`` lowest free blocks, request after request
    (int64 device). The request table comes from the arrays' cached lookup rows
    (:meth:`~hornet.memory.block_array.BlockArray.lookup_row`) in a few NumPy calls,
    whatever the number of arrays (:func:`take_rows`)."""
    if not requests:
        return cupy.empty(0, dtype=cupy.int64)
    n = len(requests)
    rows = np.concatenate([arr.lookup_row() for arr, _, _ in requests]).reshape(n, -1)
    count = np.fromiter((c for _, c, _ in requests), dtype=np.int64, count=n)
    shift = np.fromiter((sh for *_, sh in requests), dtype=np.int64, count=n)
    w = 2 + num_fields                  # row layout: see BlockArray.lookup_row
    return take_rows(rows[:, w], rows[:, w + 1:], count, rows[:, 0], shift)


def take_rows(word_addrs, table, count, base, shift):
    """:func:`take_forest` for trees described by host rows (the block arrays' cached lookup
    rows, :meth:`hornet.memory.block_array.BlockArray.lookup_row`): per request ``a`` the
    tree's word address ``word_addrs[a]`` and padded level offsets ``table[a]`` (host int64
    (R, FOREST_LEVELS + 1)), the ``count[a]`` lowest free blocks taken (each at most the
    tree's free blocks; ``count`` host int64 (R,), every one positive), their pointers
    ``base[a] + (block << shift[a])``. Returns every request's pointers, request after
    request (int64 device). The request table is made by a few NumPy calls over the rows,
    whatever the number of trees; one upload."""
    nreq = int(count.shape[0])
    total_blocks = int(count.sum())
    out = cupy.empty(total_blocks, dtype=cupy.int64)
    if nreq == 0:
        return out
    out_start = np.zeros(nreq, dtype=np.int64)
    np.cumsum(count[:-1], out=out_start[1:])
    if total_blocks <= SMALL_TAKE:
        rows = np.empty((nreq, 5 + table.shape[1]), dtype=np.int64)
        rows[:, 0] = word_addrs
        rows[:, 1] = count
        rows[:, 2] = out_start
        rows[:, 3] = base
        rows[:, 4] = shift
        rows[:, 5:] = table
        req = upload(rows)
        if not _TAKE_SMALL_LAUNCH:
            _TAKE_SMALL_LAUNCH.append(PreparedLaunch(_fn(TAKE_SMALL), 2))
        _TAKE_SMALL_LAUNCH[0](nreq, SMALL_TAKE_THREADS, [req.data.ptr, out.data.ptr])
        return out
    word_start = np.zeros(nreq + 1, dtype=np.int64)
    np.cumsum(table[:, 1] - table[:, 0], out=word_start[1:])   # leaf words (level 0 first)
    packed = np.concatenate([word_addrs, word_start, count, out_start, base, shift,
                             table.ravel()]).astype(np.int64, copy=False)
    dev = upload(packed)
    p = dev.data.ptr
    d_addrs, d_start = p, p + 8 * nreq
    d_count, d_out_start, d_base, d_shift = (p + 8 * (2 * nreq + 1 + i * nreq)
                                             for i in range(4))
    d_table = p + 8 * (6 * nreq + 1)
    total = int(word_start[-1])
    pc = cupy.empty(total, dtype=cupy.int64)
    launch(_fn("popcount_forest"), total, (d_addrs, d_start, i64(nreq), i64(total), pc))
    incl = cupy.cumsum(pc)
    launch(_fn("extract_forest"), total, (d_addrs, d_table, d_start, d_count, d_out_start,
                                          d_base, d_shift, i64(nreq), i64(total), pc, incl, out))
    return out


def used_forest(requests):
    """The pointers of every used block of several trees, in one pass (two kernels and a scan,
    whatever the number of trees): per request ``(words, level_offsets, num_blocks, count,
    base, shift)`` (``count``: the tree's used blocks, known to the host) the pointers ``base +
    (block << shift)`` of its used blocks, ascending; all requests' pointers concatenated
    (int64 device, ``sum(count)``). Nothing is read back; the trees are not changed."""
    requests = [r for r in requests if r[3] > 0]
    count = np.array([r[3] for r in requests], dtype=np.int64)
    out = cupy.empty(int(count.sum()), dtype=cupy.int64)
    if not requests:
        return out
    nreq = len(requests)
    addrs = np.array([int(r[0].data.ptr) + 8 * int(r[1][0]) for r in requests], dtype=np.int64)
    leaves = np.array([int(r[1][1]) - int(r[1][0]) for r in requests], dtype=np.int64)
    word_start = np.zeros(nreq + 1, dtype=np.int64)
    np.cumsum(leaves, out=word_start[1:])
    out_start = np.zeros(nreq, dtype=np.int64)
    np.cumsum(count[:-1], out=out_start[1:])
    packed = np.concatenate([addrs, word_start, out_start,
                             np.array([r[2] for r in requests], dtype=np.int64),
                             np.array([r[4] for r in requests], dtype=np.int64),
                             np.array([r[5] for r in requests], dtype=np.int64)])
    dev = upload(packed)                    # one host-to-device copy, pinned: no wait
    d_addrs, d_start = dev[:nreq], dev[nreq:2 * nreq + 1]
    rest = dev[2 * nreq + 1:]
    d_out_start, d_nbits, d_base, d_shift = (rest[i * nreq:(i + 1) * nreq] for i in range(4))
    total = int(word_start[-1])
    pc = cupy.empty(total, dtype=cupy.int64)
    launch(_fn("popcount_used_forest"), total, (d_addrs, d_start, d_nbits, i64(nreq),
                                                i64(total), pc))
    incl = cupy.cumsum(pc)
    launch(_fn("extract_used_forest"), total, (d_addrs, d_start, d_nbits, d_out_start, d_base,
                                               d_shift, i64(nreq), i64(total), pc, incl, out))
    return out


_TAKE_SMALL_LAUNCH: list = []


def take_into_rings(rows, rings, ring_shift: int, state, state_words) -> None:
    """Take blocks from several trees straight into the block cache's rings, and set the
    rings' counters, in one copy and one launch (``take_small_ring``).

    ``rows``: host int64 (R, 5 + FOREST_LEVELS + 1), one per tree: word address, count, ring
    position ``(ring << 32) | first slot`` (slots wrap within the ring), base, log2 block
    bytes, level offsets (at most one row per tree); ``rings``: the cache's int64 device
    array of ``2**ring_shift`` slots per ring; ``state``: its int64 device counters, set to
    ``state_words`` (host int64, same length) in the same launch. Nothing is read back.
    """
    nreq = int(rows.shape[0])
    if nreq == 0:
        state[:] = upload(np.ascontiguousarray(state_words, dtype=np.int64))
        return
    total = rows.size + state_words.shape[0]
    if total > _RING_REFILL_WORDS:
        packed = upload(np.concatenate([rows.ravel(), state_words]).astype(np.int64,
                                                                             copy=False))
        _fn(TAKE_SMALL_RING)((nreq,), (SMALL_TAKE_THREADS,),
                               (packed, rings, np.int32(ring_shift), state,
                                packed[rows.size:], np.int32(state_words.shape[0])))
        return
    _ring_refill().launch(rows, rings, ring_shift, state, state_words, total)


_RING_REFILL_WORDS = 1 << 14


class _RingRefill:
    """The reused pieces of :func:`take_into_rings`: a pinned buffer the request rows and
    counters are written to (an event says when the device has read the last ones), and
    a driver launch with a prebuilt argument buffer (:class:`PreparedLaunch`): a refill is
    a few microseconds of host work past its planning."""

    def __init__(self):
        import cupyx
        self.host = cupyx.empty_pinned(_RING_REFILL_WORDS, dtype=np.int64)
        self.copied = cupy.cuda.Event(block=False, disable_timing=True)
        self.kernel = PreparedLaunch(_fn(TAKE_SMALL_RING), 6)

    def launch(self, rows, rings, ring_shift, state, state_words, total) -> None:
        self.copied.synchronize()          # the last refill's copy has left the buffer
        nr = rows.size
        self.host[:nr] = rows.reshape(-1)
        self.host[nr:total] = state_words
        packed = cupy.empty(total, dtype=cupy.int64)     # per call: the stream's pool
        stream = cupy.cuda.get_current_stream()
        cupy.cuda.runtime.memcpyAsync(packed.data.ptr, self.host.ctypes.data, total * 8,
                                      cupy.cuda.runtime.memcpyHostToDevice, stream.ptr)
        self.copied.record(stream)
        self.kernel(int(rows.shape[0]), SMALL_TAKE_THREADS, [
            packed.data.ptr, rings.data.ptr, int(ring_shift), state.data.ptr,
            packed.data.ptr + 8 * nr, int(state_words.shape[0])])


_RING_REFILL = []


def _ring_refill() -> _RingRefill:
    if not _RING_REFILL:
        _RING_REFILL.append(_RingRefill())
    return _RING_REFILL[0]


def forest(trees):
    """Several trees described for :func:`release_pointers` (device arrays)."""
    from .bit_tree import forest_table
    return forest_from_table(*forest_table(trees, lambda w: int(w.data.ptr)))


def forest_from_table(addrs, table):
    """:func:`forest` of trees already described by their host rows (word addresses (A,),
    padded level offsets (A, FOREST_LEVELS + 1)): one upload through a pinned buffer, in
    stream order (a batch that made block arrays does not wait for the device's queue)."""
    dev = upload(np.concatenate([addrs, table.ravel()]).astype(np.int64, copy=False))
    return dev[:addrs.shape[0]], dev[addrs.shape[0]:].reshape(table.shape)


def release_pointers(forest_arrays, bases, shifts, pointers):
    """Give back the blocks at ``pointers`` (int64 device) in the block arrays whose sorted
    base addresses are ``bases`` (int64 device, (A,)) and log2 block bytes ``shifts``; the
    arrays' trees are ``forest_arrays`` (see :func:`forest`). One kernel; returns the host
    int64 count of blocks given back per array (the only transfer)."""
    return _launch_release(forest_arrays, bases, shifts, pointers).get().astype(np.int64)


def _launch_release(forest_arrays, bases, shifts, pointers, counts=None):
    """The ``release_forest`` kernel of :func:`release_pointers` queued; returns its uint64
    device counts per array (``counts``: a uint64 device buffer of one per array to zero and
    use, instead of a new one)."""
    addrs, table = forest_arrays
    narrays = int(bases.shape[0])
    if counts is None:
        counts = cupy.zeros(narrays, dtype=cupy.uint64)
    elif narrays:
        counts.data.memset_async(0, narrays * 8)
    n = int(pointers.shape[0])
    launch(_fn("release_forest"), n, (cupy.ascontiguousarray(pointers), i64(n), bases, shifts,
                                      i64(narrays), addrs, table, counts))
    return counts


class PendingRelease:
    """The per-array counts of a :func:`release_pointers_async` launch on their way to the
    host: the blocks are back in their trees (in stream order); :meth:`counts` waits for the
    copy only, and is what the caller's bookkeeping needs."""

    __slots__ = ("_host", "_event", "_n")

    def __init__(self, host, event, n: int):
        self._host, self._event, self._n = host, event, n

    def done(self) -> bool:
        """Whether the counts have landed (no wait)."""
        return self._event.done

    def counts(self) -> np.ndarray:
        """Host int64 (A,): blocks given back per array (waits for the copy to land)."""
        self._event.synchronize()
        return self._host[:self._n].view(np.int64).copy()


# pinned buffers of queued count copies, with their events: a buffer goes back to CuPy's pinned
# pool (which does not follow streams) only once its copy has landed, checked at the next
# release rather than in a finalizer (a finalizer that waits on an event can run inside the
# garbage collector, in the middle of another CUDA call)
_in_flight: list = []


def _keep_until_copied(host, event) -> None:
    _in_flight[:] = [(h, e) for h, e in _in_flight if not e.done]
    _in_flight.append((host, event))


class ReleaseSlot:
    """The buffers of one owner's releases without a wait, reused release after release: the
    device counts, their pinned host copy and the event that says the copy has landed. The
    owner hands the slot to one release at a time (it reads the counts of a
    :class:`PendingRelease` before it releases again), so that a release allocates no
    device or pinned memory and makes no event."""

    __slots__ = ("counts", "host", "event")

    def __init__(self):
        self.counts = self.host = self.event = None

    def reserve(self, narrays: int) -> None:
        """Room for the counts of ``narrays`` arrays (grown to a power of two)."""
        if self.counts is not None and self.counts.shape[0] >= narrays:
            return
        import cupyx
        if self.event is not None:
            self.event.synchronize()         # the last copy has left the old pinned buffer
        else:
            self.event = cupy.cuda.Event(block=False, disable_timing=True)
        cap = 1 << max(6, (max(narrays, 1) - 1).bit_length())
        self.counts = cupy.empty(cap, dtype=cupy.uint64)
        self.host = cupyx.empty_pinned(cap, dtype=np.uint64)


def release_pointers_async(forest_arrays, bases, shifts, pointers,
                           slot: ReleaseSlot | None = None) -> PendingRelease:
    """:func:`release_pointers` without waiting: the kernel and an asynchronous copy of the
    per-array counts into pinned host memory are queued on the current stream, and the
    returned :class:`PendingRelease` hands the counts over when they are needed (a batch that
    gives blocks back does not wait for its own kernels; the next host read of the device
    finds the counts there). ``slot``: the caller's :class:`ReleaseSlot`, whose buffers the
    release uses (its previous release's counts must have been read)."""
    if slot is not None:
        narrays = int(bases.shape[0])
        slot.reserve(narrays)
        counts = _launch_release(forest_arrays, bases, shifts, pointers, slot.counts)
        stream = cupy.cuda.get_current_stream()
        if narrays:
            cupy.cuda.runtime.memcpyAsync(slot.host.ctypes.data, counts.data.ptr, narrays * 8,
                                          cupy.cuda.runtime.memcpyDeviceToHost, stream.ptr)
        slot.event.record(stream)
        return PendingRelease(slot.host, slot.event, narrays)
    import cupyx
    counts = _launch_release(forest_arrays, bases, shifts, pointers)
    narrays = int(counts.shape[0])
    host = cupyx.empty_pinned(narrays, dtype=np.uint64)
    stream = cupy.cuda.get_current_stream()
    if narrays:
        cupy.cuda.runtime.memcpyAsync(host.ctypes.data, counts.data.ptr, narrays * 8,
                                      cupy.cuda.runtime.memcpyDeviceToHost, stream.ptr)
    event = cupy.cuda.Event(block=False, disable_timing=True)
    event.record(stream)
    _keep_until_copied(host, event)
    # ``counts`` is freed to CuPy's pool here: its memory is reused only by work queued after
    # the copy on this stream (CuPy's pool is stream-ordered for one stream)
    return PendingRelease(host, event, narrays)


def count_free(words, level_offsets) -> int:
    """Number of free blocks (host int)."""
    nw = int(level_offsets[1]) - int(level_offsets[0])
    pc = cupy.empty(nw, dtype=cupy.int64)
    launch(_fn("popcount_words"), nw,
           (words[int(level_offsets[0]):int(level_offsets[1])], i64(nw), np.int32(0), i64(0), pc))
    return int(pc.sum())


def used_blocks(words, level_offsets, num_blocks: int):
    """Ids of the blocks in use (leaf bit 0, below ``num_blocks``), ascending: int64 device."""
    return _select(words, level_offsets, 1, int(num_blocks), None, 0)


def is_free(words, level_offsets, blocks):
    """Per block (integer device array): True where its leaf bit says free (bool device)."""
    blocks = cupy.ascontiguousarray(cupy.asarray(blocks).astype(cupy.int64, copy=False))
    out = cupy.empty(blocks.shape[0], dtype=cupy.bool_)
    launch(_fn("is_free"), blocks.shape[0],
           (words[int(level_offsets[0]):], blocks, i64(blocks.shape[0]), out))
    return out


def find_inconsistency(words, level_offsets, num_blocks: int) -> int:
    """-1 if the tree is consistent, else the flat index of the first wrong word (host int).

    Same checks and answer as the CPU ``find_inconsistency``: padding bits must be 0 at every
    level and every internal bit must equal (child word != 0).
    """
    result = cupy.asarray(np.full(1, np.iinfo(np.uint64).max, dtype=np.uint64))
    total = int(level_offsets[-1])
    launch(_fn("tree_check"), total, (words, _device_offsets(level_offsets),
                                      np.int32(_levels(level_offsets)), i64(num_blocks), result))
    r = int(result[0])
    return -1 if r == int(np.iinfo(np.uint64).max) else r
