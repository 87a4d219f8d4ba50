"""GPU (CuPy + CUDA C++) kernels of the batch pipeline.

Same names, argument order and results as :mod:`hornet.batch.cpu`; every array is a
CuPy array on the current device unless said otherwise. Lists are reached through int64 device
addresses (``array.data.ptr + offset``): vertex ``v``'s destination list is ``degree[v]`` int32
values at ``edge_ptr[v]``, ascending; a property column's lists are reached through their own
per-vertex (or per-segment) addresses.

The CUDA source ``kernels.cu`` is compiled once per process (NVRTC via ``cupy.RawModule``) on
first use. Work over lists of very different lengths (a hub of 10^5+ entries next to millions
of tiny lists) is load-balanced: gathers take one thread per element of the concatenated lists
(each thread finds its list by binary search over an exclusive scan); list rewrites give short
lists one thread, medium ones one warp, and huge ones one block (merges) or many blocks, one
piece of the list each (removals); the short and medium lists' kernels run on side streams
beside the huge lists' kernel (:mod:`hornet.batch.gpu.side_streams`). Only counts (sizes of outputs and scratch buffers) cross to
the host.
"""
from __future__ import annotations

import contextlib
import os

import numpy as np

from . import side_streams
from ...core.cuda import (BLOCK, ITEM_TYPES, PreparedLaunch, _max_grid, as_i64, cupy,
                          function, i64, item_type)
from ...memory.gpu_launch import launch

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
_IDX = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}
#: a removal's medium lists (one warp each) are read REMOVE_WINDOWS windows of 32 items a
#: step (that many loads in flight per lane), by a kernel built for WARP_BLOCKS blocks a
#: multiprocessor ...
REMOVE_WINDOWS = 16
WARP_BLOCKS = 4
#: (REMOVE_WINDOWS, WARP_BLOCKS) of columns of other item sizes
WARP_SHAPE_OTHER = (4, 5)
#: ... and its huge lists' pieces are BLOCK * PIECE_ITEMS items, PIECE_ITEMS per thread held
#: in registers (PIECE_ITEMS_WIDE where a column has wider items)
PIECE_ITEMS = 32
PIECE_ITEMS_WIDE = 16
#: a merge's huge lists cut into pieces of BLOCK * MERGE_PIECE_ITEMS old items, one block's
#: (merge_pieces, many blocks a list) where the caller bounds the lists' items; False: one
#: block walks each huge list (merge_block), which large planned inserts take in less time
#: (bench/results/removal_kernels_gpu_ab.md)
MERGE_PIECES = False
MERGE_PIECE_ITEMS = 16
#: the other shapes that kernels.cu is built with for 4-byte items (bench/tools/removal_gpu.py
#: compares them): (REMOVE_WINDOWS, WARP_BLOCKS) pairs and PIECE_ITEMS values
REMOVAL_SHAPES = (((16, 4), (4, 5), (8, 6)), (16, 32))
_NAMES = tuple(
    [f"find_positions<{s}, {d}, {g}>" for s in _IDX.values() for d in _IDX.values()
     for g in _IDX.values()]
    + [f"{k}<{t}>" for k in ("merge_small", "merge_warp", "merge_block", "remove_small",
                             "copy_lists", "read_at", "write_at") for t in ITEM_TYPES.values()]
    + [f"merge_pieces<{t}, {MERGE_PIECE_ITEMS}>" for t in ITEM_TYPES.values()]
    + [f"remove_warp<{t}, {w}, {b}>" for t in ITEM_TYPES.values()
       for w, b in (REMOVAL_SHAPES[0] if t == ITEM_TYPES[4] else (WARP_SHAPE_OTHER,))]
    + [f"remove_pieces<{t}, {k}>" for t in ITEM_TYPES.values()
       for k in (REMOVAL_SHAPES[1] if t == ITEM_TYPES[4] else (PIECE_ITEMS_WIDE,))])

#: lists moving at most this many items are rewritten by one thread each ...
SMALL_MOVE = 64
#: ... at most this many by one warp each; longer ones by one block each (merges), or by many
#: blocks each, one piece of removal_pieces() items a block (removals)
WARP_MOVE = 4096


def removal_warps(dtypes) -> list[str]:
    """The medium lists' removal kernel of each column of ``dtypes``."""
    return ["remove_warp<{}, {}, {}>".format(item_type(dt), *(
        (REMOVE_WINDOWS, WARP_BLOCKS) if np.dtype(dt).itemsize == 4 else WARP_SHAPE_OTHER))
        for dt in dtypes]


def removal_pieces(dtypes) -> tuple[int, list[str]]:
    """How a removal of columns of ``dtypes`` cuts its huge lists: (items of a piece, one
    block's; the pieces kernel of each column): one piece size for every column, held in
    registers (:data:`PIECE_ITEMS` a thread, :data:`PIECE_ITEMS_WIDE` when a column has wider
    items)."""
    types = [item_type(dt) for dt in dtypes]
    k = PIECE_ITEMS if all(np.dtype(dt).itemsize == 4 for dt in dtypes) else PIECE_ITEMS_WIDE
    return BLOCK * k, [f"remove_pieces<{t}, {k}>" for t in types]

_ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


def workspace():
    """No host workspace on the GPU: the ``ws`` argument of the kernels below is accepted for
    the CPU backend's sake (:mod:`hornet.batch.cpu.workspace`) and ignored."""
    return None


def _fn(name: str):
    return function(_CU, name, _NAMES)


#: argument counts of the kernels that the queued removal and the prepared merge launch
#: through prepared argument buffers (:class:`hornet.core.cuda.PreparedLaunch`)
_PREPARED_ARITY = {"plan_moves": 19, "list_pieces": 7, "remove_small": 12, "remove_warp": 9,
                   "remove_pieces": 11, "merge_small": 10, "merge_warp": 10,
                   "merge_block": 10}
_PREPARED: dict = {}


def prepared(name: str) -> PreparedLaunch:
    """The prepared launch of kernel ``name`` of kernels.cu (made on first use)."""
    fn = _PREPARED.get(name)
    if fn is None:
        fn = _PREPARED[name] = PreparedLaunch(_fn(name), _PREPARED_ARITY[name.split("<")[0]])
    return fn


def grid_for(n: int, threads_per_item: int = 1) -> int:
    """Blocks of BLOCK threads for ``n`` items of ``threads_per_item`` threads each, within
    the device's grid bound."""
    return max(1, min((n * threads_per_item + BLOCK - 1) // BLOCK, _max_grid()))


def _int_array(a):
    """int32 or int64 contiguous device array (other integer types become int64)."""
    a = cupy.ascontiguousarray(cupy.asarray(a))
    if a.dtype not in (np.int32, np.int64):
        a = a.astype(cupy.int64)
    return a


def _check_out(a, dtype, name):
    if not isinstance(a, cupy.ndarray) or a.dtype != dtype or not a.flags.c_contiguous:
        raise TypeError(f"{name} must be a contiguous CuPy {np.dtype(dtype)} array")


# ---------------------------------------------------------------------------- validation
_BOUNDS_START = np.array([np.iinfo(np.int64).max, np.iinfo(np.int64).min], dtype=np.int64)


def id_bounds(arrays) -> list[int]:
    """[min, max] of each non-empty int64 device array, flattened (host ints): one kernel per
    array and one read for all of them."""
    out = cupy.asarray(np.tile(_BOUNDS_START, len(arrays)))
    for k, a in enumerate(arrays):
        a = as_i64(a)
        launch(_fn("id_bounds"), a.shape[0], (a, i64(a.shape[0]), out[2 * k:]))
    return out.get().tolist()


# ---------------------------------------------------------------------------- sorting
def sorted_unique_pairs(s, d, num_vertices: int, mirror: bool, need_order: bool = True,
                        ws=None):
    """Sort a batch by (src, dst) and drop repeats, first entry wins.

    ``s``, ``d``: int64 device arrays, shape (n,). ``mirror`` (undirected batch): pair i stands
    for entries 2i (s, d) and 2i + 1 (d, s), and self-loops are dropped.
    Returns (order int64 device | None: index of each kept entry in the (mirrored) entries,
    src int32 device, dst int32 device, loops: host int, the number of self-loop pairs).
    Keys ``((src << bits | dst) << index_bits) | entry`` are sorted by CuPy's radix sort; when
    they do not fit in 63 bits, a stable argsort of plain ``src << bits | dst`` keys is used.
    """
    s = cupy.ascontiguousarray(cupy.asarray(s).astype(cupy.int64, copy=False))
    d = cupy.ascontiguousarray(cupy.asarray(d).astype(cupy.int64, copy=False))
    n = int(s.shape[0])
    bits = max(1, int(num_vertices - 1).bit_length())
    entries = n * (2 if mirror else 1)
    index_bits = max(1, int(entries - 1).bit_length()) if need_order else 0
    if n == 0:
        e = cupy.empty(0, dtype=cupy.int32)
        return (cupy.empty(0, dtype=cupy.int64) if need_order else None), e, e.copy(), 0
    if 2 * bits + index_bits <= 63:
        keys = cupy.empty(entries, dtype=cupy.uint64)
        launch(_fn("pack_pairs"), n, (s, d, i64(n), np.int32(bits), np.int32(index_bits),
                                      np.int32(1 if mirror else 0), keys))
        keys.sort()
        flag = cupy.empty(entries, dtype=cupy.int32)
        info = cupy.full(2, entries, dtype=cupy.int64)     # [kept keys, first self-loop key]
        launch(_fn("unique_flags"), entries, (keys, i64(entries), np.int32(index_bits), flag,
                                              info[1:]))
        rank = cupy.cumsum(flag, dtype=cupy.int32)
        info[:1] = rank[-1:]
        m, end = (int(v) for v in info.get())              # the one count read of the sort
        order = cupy.empty(m if need_order else 1, dtype=cupy.int64)
        src = cupy.empty(m, dtype=cupy.int32)
        dst = cupy.empty(m, dtype=cupy.int32)
        launch(_fn("decode_pairs"), entries, (keys, rank, i64(entries), np.int32(bits),
                                              np.int32(index_bits),
                                              np.int32(1 if need_order else 0), order, src, dst))
        loops = (entries - end) // 2 if mirror else 0
        return (order if need_order else None), src, dst, loops
    # ids too large to pack with the entry index: stable argsort of plain keys
    if mirror:
        keep_pair = s != d
        ss = cupy.stack([s, d], axis=1).ravel()
        dd = cupy.stack([d, s], axis=1).ravel()
        entry = cupy.flatnonzero(cupy.repeat(keep_pair, 2))
        ss, dd = ss[entry], dd[entry]
        loops = n - int(entry.shape[0]) // 2
    else:
        ss, dd, entry, loops = s, d, None, 0
    keys = (ss.astype(cupy.uint64) << np.uint64(bits)) | dd.astype(cupy.uint64)
    order = cupy.argsort(keys)              # stable: the first entry of a repeat comes first
    skeys = keys[order]
    first = cupy.ones(skeys.shape[0], dtype=cupy.bool_)
    if skeys.shape[0] > 1:
        first[1:] = skeys[1:] != skeys[:-1]
    idx = cupy.flatnonzero(first)
    k = skeys[idx]
    src = (k >> np.uint64(bits)).astype(cupy.int32)
    dst = (k & np.uint64((1 << bits) - 1)).astype(cupy.int32)
    o = order[idx]
    if entry is not None:
        o = entry[o]
    return (o if need_order else None), src, dst, loops


def canonical_entries(src, dst):
    """Indices (int64 device) of the entries with src < dst: each undirected edge once."""
    return cupy.flatnonzero(cupy.asarray(src) < cupy.asarray(dst)).astype(cupy.int64, copy=False)


def canonical_pairs(src, dst, ws=None, symmetric: bool = False):
    """Each undirected edge once: (indices int64 (m,) of the entries with src < dst; their src
    int32; their dst int32), all on the device (same contract as the CPU kernel).

    ``symmetric``: the entries hold both directions of every edge and no self-loop (the
    entries a batch changed in an undirected graph), so m is half of them and no count has to
    reach the host.
    """
    src, dst = cupy.asarray(src), cupy.asarray(dst)
    if not symmetric:
        once = canonical_entries(src, dst)
        return once, src[once].astype(cupy.int32, copy=False), dst[once].astype(cupy.int32,
                                                                              copy=False)
    src = cupy.ascontiguousarray(src.astype(cupy.int32, copy=False))
    dst = cupy.ascontiguousarray(dst.astype(cupy.int32, copy=False))
    n = int(src.shape[0])
    m = n // 2
    once = cupy.empty(m, dtype=cupy.int64)
    s_out, d_out = cupy.empty(m, dtype=cupy.int32), cupy.empty(m, dtype=cupy.int32)
    if n:
        flag = cupy.empty(n, dtype=cupy.int32)
        launch(_fn("canonical_flags"), n, (src, dst, i64(n), flag))
        rank = cupy.cumsum(flag, dtype=cupy.int32)
        launch(_fn("canonical_scatter"), n, (src, dst, rank, i64(n), once, s_out, d_out))
    return once, s_out, d_out


# ---------------------------------------------------------------------------- searching
def find_positions(src, dst, degree, edge_ptr, num_vertices: int, ws=None):
    """Position (int64 device, shape (n,)) of each ``dst[i]`` in the sorted list of ``src[i]``;
    when absent, ``-1 - p`` with ``p`` its insertion point (-1 when src[i] is outside
    [0, num_vertices)), so absent means negative.

    ``src``, ``dst``: int32 or int64 device arrays; ``degree``: int32 or int64 per vertex;
    ``edge_ptr``: int64 addresses per vertex. One thread per query, binary search.
    """
    src, dst, degree = _int_array(src), _int_array(dst), _int_array(degree)
    edge_ptr = as_i64(edge_ptr)
    n = int(src.shape[0])
    out = cupy.empty(n, dtype=cupy.int64)
    if n:
        fn = _fn(f"find_positions<{_IDX[src.dtype]}, {_IDX[dst.dtype]}, {_IDX[degree.dtype]}>")
        launch(fn, n, (src, dst, i64(n), degree, edge_ptr, i64(num_vertices), out))
    return out


# ---------------------------------------------------------------------------- planning
def keep_entries(pos, src, dst, inserting: bool, need_index: bool = False, ws=None):
    """The entries a batch really changes (same contract as
    :func:`hornet.batch.cpu.general.keep_entries`; every array on the device).

    Inserting keeps the absent entries (``pos < 0``) with ``at = -1 - pos``; deleting keeps the
    present ones with ``at = pos``. ``pos`` int64 (n,), ``src``/``dst`` int32 (n,). Returns
    (kept int64 (m,) or None, src, dst, at int64 (m,)); the kept count crosses to the host.
    One flag kernel, a scan and (when some entries go) one compaction of all four arrays.
    """
    pos = as_i64(pos)
    n = int(pos.shape[0])
    at = cupy.empty(n, dtype=cupy.int64)
    if n == 0:
        return None, src, dst, at
    flag = cupy.empty(n, dtype=cupy.int32)
    launch(_fn("keep_flags"), n, (pos, i64(n), np.int32(inserting), at, flag))
    rank = cupy.cumsum(flag, dtype=cupy.int32)
    m = int(rank[-1])
    if m == n:
        return None, src, dst, at
    src = cupy.ascontiguousarray(src.astype(cupy.int32, copy=False))
    dst = cupy.ascontiguousarray(dst.astype(cupy.int32, copy=False))
    kept = cupy.empty(m if need_index else 1, dtype=cupy.int64)
    s_out, d_out = cupy.empty(m, dtype=cupy.int32), cupy.empty(m, dtype=cupy.int32)
    at_out = cupy.empty(m, dtype=cupy.int64)
    launch(_fn("keep_scatter"), n, (rank, i64(n), src, dst, at, np.int32(need_index), kept,
                                    s_out, d_out, at_out))
    return (kept if need_index else None), s_out, d_out, at_out


def plan_segments(src, degree, size_class, edge_ptr, inserting: bool, min_class: int,
                  ws=None):
    """Per-list plan of a batch sorted by source (same contract as
    :func:`hornet.batch.cpu.general.plan_segments`; every array on the device).

    ``src`` int32 (m,) sorted; ``degree`` int32, ``size_class`` int8, ``edge_ptr`` int64: the
    vertex table. Returns (sources int32, seg_start, seg_len, old_deg, new_deg, old_ptr: int64,
    resize bool), each of shape (S,). Segment starts by one compaction, then one kernel reads
    the vertex table and decides every segment.
    """
    src = cupy.ascontiguousarray(cupy.asarray(src).astype(cupy.int32, copy=False))
    _check_out(degree, np.int32, "degree")
    _check_out(size_class, np.int8, "size_class")
    edge_ptr = as_i64(edge_ptr)
    n = int(src.shape[0])
    head = cupy.empty(n, dtype=cupy.bool_)
    if n:
        head[0] = True
        cupy.not_equal(src[1:], src[:-1], out=head[1:])
    seg_start = cupy.flatnonzero(head).astype(cupy.int64, copy=False)
    ns = int(seg_start.shape[0])
    sources = cupy.empty(ns, dtype=cupy.int32)
    seg_len, old_deg, new_deg, old_ptr = (cupy.empty(ns, dtype=cupy.int64) for _ in range(4))
    resize = cupy.empty(ns, dtype=cupy.bool_)
    launch(_fn("plan_segments"), ns, (src, seg_start, i64(ns), i64(n), degree, size_class,
                                      edge_ptr, np.int32(1 if inserting else 0),
                                      np.int32(min_class), sources, seg_len, old_deg, new_deg,
                                      old_ptr, resize))
    return sources, seg_start, seg_len, old_deg, new_deg, old_ptr, resize


def commit_segments(sources, new_deg, grown, new_ptrs, new_classes, degree, size_class,
                    edge_ptr) -> None:
    """Write a planned batch into the vertex table (same contract as
    :func:`hornet.batch.cpu.general.commit_segments`; every array on the device).

    ``sources`` int32 (S,) distinct, ``new_deg`` int64 (S,); ``grown`` int64 (G,) segment
    indices moved to blocks ``new_ptrs`` (int64 (G,)) of ``new_classes`` (integer (G,)).
    ``degree`` int32, ``size_class`` int8, ``edge_ptr`` int64 are written in place.
    """
    _check_out(degree, np.int32, "degree")
    _check_out(size_class, np.int8, "size_class")
    _check_out(edge_ptr, np.int64, "edge_ptr")
    sources = cupy.ascontiguousarray(cupy.asarray(sources).astype(cupy.int32, copy=False))
    ns = int(sources.shape[0])
    launch(_fn("commit_degrees"), ns, (sources, as_i64(new_deg), i64(ns), degree, size_class,
                                       edge_ptr))
    ng = int(grown.shape[0])
    launch(_fn("commit_moves"), ng, (sources, as_i64(grown), i64(ng), as_i64(new_ptrs),
                                     as_i64(new_classes), size_class, edge_ptr))


# ---------------------------------------------------------------------------- moving lists
class _MoveScratch:
    """Device buffers of the move plans and removals, reused call after call (a plan's kernels
    run in stream order, and nothing outside one :func:`merge_lists` / :func:`remove_lists`
    call keeps them): ``segs``, five int64 arrays of ``capacity`` for a plan's per-segment
    arrays, ``counts`` uint64 (3,), and the removals' ``owner`` int32 and ``state`` int32
    (1 + pieces each). Each grows to the next power of two a call needs. The kernels get the
    whole buffers (they stop at the counts they are given): no CuPy view is made per call."""

    def __init__(self):
        self.capacity = 0
        self.segs = None
        self.counts = cupy.empty(3, dtype=cupy.uint64)
        self.owner = None
        self.state = None

    def segments(self, ns: int):
        if ns > self.capacity:
            self.capacity = 1 << max(10, (ns - 1).bit_length())
            self.segs = [cupy.empty(self.capacity, dtype=cupy.int64) for _ in range(5)]
        return self.segs

    def pieces(self, count: int):
        """(owner int32, state int32): buffers of at least ``count`` and ``1 + count``."""
        if self.owner is None or self.owner.shape[0] < count:
            cap = 1 << max(10, (count - 1).bit_length())
            self.owner = cupy.empty(cap, dtype=cupy.int32)
            self.state = cupy.empty(cap + 1, dtype=cupy.int32)
        return self.owner, self.state


_MOVE_SCRATCH: list = []


def _move_scratch() -> _MoveScratch:
    if not _MOVE_SCRATCH:
        _MOVE_SCRATCH.append(_MoveScratch())
    return _MOVE_SCRATCH[0]


class _MovePlan:
    """How the segments of one merge / removal are split among the three kernels (shared by
    every column): ``first`` and ``moving`` per segment, the segments for one warp each
    (``medium``) and the huge ones (``huge``); for a removal, the huge segments' pieces
    (``piece_base``). Their numbers stay on the device (``counts``), so planning needs no
    host sync. The arrays are the process's :class:`_MoveScratch` buffers (at least ``ns``
    long; valid until the next plan, in stream order). ``counted``: (address of the number
    of segments on the device, address of a veto word: nonzero, no segment), or None: all
    ``ns`` segments."""

    def __init__(self, src, dst, old_degree, seg_start, seg_len, change, merge: bool,
                 counted=None, piece: int = 0):
        ns = int(src.shape[0])
        self.ns = ns
        scratch = _move_scratch()
        self.first, self.moving, self.medium, self.huge, self.piece_base = \
            scratch.segments(ns)
        self.counts = scratch.counts
        self.counts.data.memset_async(0, 3 * 8)
        launch(_fn("plan_moves"), ns, (src, dst, old_degree, seg_start, seg_len, change,
                                       np.int32(merge), i64(ns), i64(SMALL_MOVE),
                                       i64(WARP_MOVE), i64(piece),
                                       self.first, self.moving, self.medium, self.huge,
                                       self.piece_base, self.counts,
                                       *(counted or (0, 0))))

    def count_at(self, k: int) -> int:
        """Device address of ``counts[k]`` (a kernel argument; no CuPy view made)."""
        return self.counts.data.ptr + 8 * k


def _on(sides, k: int):
    """Context: side stream ``k`` of ``sides`` (:func:`side_streams.fork`) current, or
    nothing when there are none."""
    return contextlib.nullcontext() if sides is None else sides[k]


def _columns(src_ptrs, dst_ptrs, old_degree, seg_start, seg_len, change):
    return ([as_i64(p) for p in src_ptrs], [as_i64(p) for p in dst_ptrs],
            as_i64(old_degree), as_i64(seg_start), as_i64(seg_len), as_i64(change))


def merge_lists(src_ptrs, dst_ptrs, old_degree, seg_start, seg_len, insert_at, values,
                items: int | None = None) -> None:
    """Merge new items into many sorted lists, column by column (same contract as
    :func:`hornet.batch.cpu.general.merge_lists`; every array on the device).

    ``src_ptrs``/``dst_ptrs``: lists (one per column) of int64 addresses, shape (S,); equal
    addresses merge in place. ``insert_at`` (int64, (M,)): the number of old items before each
    new one; ``values``: list of (M,) arrays, one per column, any dtype of 1, 2, 4 or 8 bytes.
    Short lists get one thread, medium ones one warp; huge ones many blocks each (pieces of
    :data:`MERGE_PIECE_ITEMS` items a thread) when :data:`MERGE_PIECES` is set and ``items``
    (host int, at least the sum of ``old_degree``) is given, else one block each. No host
    synchronization.
    """
    src_ptrs, dst_ptrs, old_degree, seg_start, seg_len, insert_at = _columns(
        src_ptrs, dst_ptrs, old_degree, seg_start, seg_len, insert_at)
    ns = int(old_degree.shape[0])
    if ns == 0:
        return
    pieces = bool(MERGE_PIECES) and items is not None
    piece = BLOCK * MERGE_PIECE_ITEMS if pieces else 0
    plan = _MovePlan(src_ptrs[0], dst_ptrs[0], old_degree, seg_start, seg_len, insert_at, True,
                     piece=piece)
    if pieces:
        # every huge segment has at least one piece, one per `piece` old items after that
        max_pieces = int(items) // piece + ns
        owner, state = _move_scratch().pieces(max_pieces)
        launch(_fn("list_pieces"), ns, (old_degree, plan.first, plan.huge, plan.count_at(1),
                                        plan.piece_base, i64(piece), owner),
               threads_per_item=32)
    values = [cupy.ascontiguousarray(cupy.asarray(v)) for v in values]
    sides = side_streams.fork()      # short and medium lists beside the huge ones
    for src, dst, vals in zip(src_ptrs, dst_ptrs, values):
        t = item_type(vals.dtype)
        args = (src, dst, old_degree, seg_start, seg_len, insert_at, vals)
        with _on(sides, 0):
            launch(_fn(f"merge_small<{t}>"), ns, args + (plan.moving, i64(SMALL_MOVE),
                                                         i64(ns)))
        with _on(sides, 1):
            launch(_fn(f"merge_warp<{t}>"), ns, args + (plan.first, plan.medium,
                                                        plan.count_at(0)), threads_per_item=32)
        if pieces:
            state.data.memset_async(0, 4 * (1 + max_pieces))     # ticket + flags, per column
            launch(_fn(f"merge_pieces<{t}, {MERGE_PIECE_ITEMS}>"), max_pieces,
                   args + (plan.first, plan.count_at(2), plan.piece_base, owner, state),
                   threads_per_item=BLOCK)
        else:
            launch(_fn(f"merge_block<{t}>"), ns,
                   args + (plan.first, plan.huge, plan.count_at(1)), threads_per_item=BLOCK)
    side_streams.join(sides)


def remove_lists(src_ptrs, dst_ptrs, old_degree, seg_start, seg_len, positions,
                 dtypes, items: int | None = None, counted=None) -> None:
    """Remove items from many lists, column by column, keeping the order of the rest (same
    contract as :func:`hornet.batch.cpu.general.remove_lists`; every array on the device).

    ``positions`` (int64, (M,)): ascending per segment; ``dtypes``: each column's dtype;
    ``items``: at least the sum of ``old_degree`` (host int; it sizes the workspace of the
    huge lists' pieces; None: summed on the device, one sync).
    Short lists get one thread, medium ones one warp, huge ones many blocks (pieces of
    removal_pieces() items, rewritten in place in parallel).

    ``counted`` (a plan queued on the device before its counts reach the host): (address of
    the number of segments, int64 on the device; address of a veto word, int64: nonzero, no
    segment is touched); the arrays then have room for at least that many segments (their
    length bounds it) and ``items`` is required. No host synchronization either way.
    """
    src_ptrs, dst_ptrs, old_degree, seg_start, seg_len, positions = _columns(
        src_ptrs, dst_ptrs, old_degree, seg_start, seg_len, positions)
    ns = int(old_degree.shape[0])
    if ns == 0:
        return
    piece, piece_kernels = removal_pieces(dtypes)
    plan = _MovePlan(src_ptrs[0], dst_ptrs[0], old_degree, seg_start, seg_len, positions, False,
                     counted, piece)
    if items is None:
        items = int(old_degree.sum())
    # huge segments move more than WARP_MOVE items each, out of `items` in all
    max_segs = min(ns, int(items) // (WARP_MOVE + 1) + 1)
    max_pieces = int(items) // piece + max_segs
    owner, state = _move_scratch().pieces(max_pieces)
    launch(_fn("list_pieces"), max_segs, (old_degree, plan.first, plan.huge, plan.count_at(1),
                                          plan.piece_base, i64(piece), owner),
           threads_per_item=32)
    sides = side_streams.fork()      # short and medium lists beside the huge ones' pieces
    for src, dst, dt, warps, pieces in zip(src_ptrs, dst_ptrs, dtypes, removal_warps(dtypes),
                                           piece_kernels):
        t = item_type(dt)
        args = (src, dst, old_degree, seg_start, seg_len, positions, plan.first)
        with _on(sides, 0):
            launch(_fn(f"remove_small<{t}>"), ns, args + (plan.moving, i64(SMALL_MOVE),
                                                          i64(ns), *(counted or (0, 0))))
        with _on(sides, 1):
            launch(_fn(warps), ns,
                   args + (plan.medium, plan.count_at(0)), threads_per_item=32)
        state.data.memset_async(0, 4 * (1 + max_pieces))     # ticket + flags, per column
        launch(_fn(pieces), max_pieces,
               args + (plan.count_at(2), plan.piece_base, owner, state),
               threads_per_item=BLOCK)
    side_streams.join(sides)


def copy_lists(src_ptrs, dst_ptrs, count, segs, moves: int, dtypes) -> None:
    """Copy whole lists to other blocks, column by column: for each of the first ``moves``
    entries ``s`` of ``segs`` (int64 on the device), ``count[s]`` items of the column's dtype
    from address ``src_ptrs[c][s]`` to ``dst_ptrs[c][s]`` (int64 device arrays; the blocks
    do not overlap). One launch per column, one block per list, no host synchronization."""
    if moves <= 0:
        return
    count, segs = as_i64(count), as_i64(segs)
    for src, dst, dt in zip(src_ptrs, dst_ptrs, dtypes):
        launch(_fn(f"copy_lists<{item_type(dt)}>"), moves,
               (as_i64(src), as_i64(dst), count, segs, i64(moves)), threads_per_item=BLOCK)


# ---------------------------------------------------------------------------- gathers
def read_at(addresses, out) -> None:
    """``out[i]`` = the value of ``out``'s dtype at device address ``addresses[i]`` (int64)."""
    addresses = as_i64(addresses)
    n = int(addresses.shape[0])
    if n == 0:
        return
    if not out.flags.c_contiguous:
        raise TypeError("out must be contiguous")
    launch(_fn(f"read_at<{item_type(out.dtype)}>"), n, (addresses, i64(n), out))


def write_at(addresses, values) -> None:
    """Store ``values[i]`` at device address ``addresses[i]`` (int64), in values' dtype."""
    addresses = as_i64(addresses)
    n = int(addresses.shape[0])
    if n == 0:
        return
    values = cupy.ascontiguousarray(cupy.asarray(values))
    launch(_fn(f"write_at<{item_type(values.dtype)}>"), n, (addresses, i64(n), values))


def list_violations(edge_ptr, degree, num_vertices: int, out) -> None:
    """Per vertex into ``out`` (int8 device, (V,)): 0 ok, 1 unsorted or duplicate,
    2 destination out of [0, num_vertices). One warp per vertex, coalesced."""
    _check_out(out, np.int8, "out")
    edge_ptr = as_i64(edge_ptr)
    nv = int(edge_ptr.shape[0])
    if nv == 0:
        return
    launch(_fn("list_violations"), nv,
           (edge_ptr, as_i64(degree), i64(nv), i64(num_vertices), out), threads_per_item=32)
