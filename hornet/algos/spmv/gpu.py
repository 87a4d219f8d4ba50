"""GPU SpMV (CuPy + CUDA C++, kernels in ``spmv.cu``): ``y = A x`` or ``A^T x``.

Warp-segmented (each warp walks ranges of up to 512 entries, 32 at a time: coalesced loads,
rows found among the next 32 row ends by warp shuffles, per-row sums by a segmented warp scan;
atomics only for rows crossing ranges; shorter ranges on small graphs, so that every SM gets
many of them; a float32 ``x`` is read as float32, the sums are float64 all the same), or
merge-path per thread (Merrill & Garland; ``SPMV_KERNEL = "merge"``). ``A^T x`` by float64
atomics. From the second call on an unchanged dynamic graph, its rows are visited in storage
order (size class by size class, each block array front to back, instead of a jump between
size classes at almost every row; the order comes from the graph's storage ranks, without a
sort) and ``y`` is gathered from the per-row sums.

The pull over a hornet.Graph with float32 or float64 weights, or none, walks its block
arrays themselves instead (``spmv_blocks``: a slot's row, list position and address are
arithmetic, so no row search and no per-row pointer stands between a group's index loads
and its x gathers; tasks sized per graph, so a small graph fills the device too). Its
choices, per graph size (SPMV_BLOCKS_LARGE, measured by ``bench spmv_gpu --sweep``): below
2**26 stored entries each row's sum is stored straight at its vertex with plain loads and
stores (x and y stay in L2: the scattered stores are cheap and a gather would be one more
pass); from there on the sums go to one coalesced array gathered into y, and the per-row
loads and the stores stream past L2 (evict-first) so that x keeps it.

First call on a graph state: the per-state rows (each visited row's degree and vertex) are
two memsets and one launch over the vertex table, into buffers kept per graph (with spare
rows, so a batch's new block array needs no allocation). A new set of block arrays adds one
upload of its tables (every edge property's columns and the task table at once, not
waiting for the device); a set seen before (a one-edge insertion and its deletion) reuses
its tables. Every call: a memset of ``y`` (or of the per-row sums, then the gather) and
one launch with arguments kept per layout.
"""
from __future__ import annotations

from dataclasses import dataclass
import functools
import os
import weakref

import numpy as np

from hornet.adjacency import AdjacencyView
from hornet.core.cuda import BLOCK, PreparedLaunch, as_i64, cupy, i64, launch, scan, upload
from hornet.core.gather import gather_lists
from ..gpu_arrays import address, kernels, NULL, tiles, view_arrays
from ..views import storage_ranks

#: C++ type of each weight dtype the SpMV kernels read directly (others: gathered to float64)
_WEIGHT_TYPES = {
    np.dtype(np.bool_): "unsigned char", np.dtype(np.uint8): "unsigned char",
    np.dtype(np.int8): "signed char", np.dtype(np.int16): "short",
    np.dtype(np.uint16): "unsigned short", np.dtype(np.int32): "int",
    np.dtype(np.uint32): "unsigned int", np.dtype(np.int64): "long long",
    np.dtype(np.uint64): "unsigned long long", np.dtype(np.float32): "float",
    np.dtype(np.float64): "double",
}


#: (U, B) variants of the warp kernel (U: groups of 32 entries whose loads a warp issues
#: together; B: blocks per SM it is compiled for). The library builds only SPMV_WARP's; the
#: benchmark's sweep builds them all with ``use_warp_variants(SPMV_WARP_VARIANTS)``.
SPMV_WARP_VARIANTS = ((1, 1), (1, 8), (2, 5), (2, 6), (4, 4))
#: the warp kernel's (U, B) (any weight type other than float and double: (1, 1))
SPMV_WARP = (1, 1)
_WARP_TYPES = ("float", "double")
_CU_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spmv.cu")


def _warp_name(ctype: str, xtype: str, weighted: bool, push: bool, variant: tuple) -> str:
    """Template instance of the warp kernel (push, and weight types other than float and
    double, only in variant (1, 1))."""
    if push or (weighted and ctype not in _WARP_TYPES):
        variant = (1, 1)
    return (f"spmv_warp<{ctype}, {xtype}, {int(weighted)}, {int(push)}, "
            f"{variant[0]}, {variant[1]}>")


#: (U, B) variants of the block-walk kernel (U: groups of 32 slots whose loads a warp issues
#: together; B: blocks per SM it is compiled for); the library builds only SPMV_BLOCKS_WARP's
SPMV_BLOCKS_VARIANTS = ((2, 6), (4, 4), (4, 5))
#: the block-walk kernel's (U, B)
SPMV_BLOCKS_WARP = (2, 6)


def _blocks_name(ctype: str, xtype: str, ytype: str, weighted: bool, variant: tuple) -> str:
    """Template instance of the block-walk kernel (float or double weights, or none; y
    float only with a float x)."""
    return (f"spmv_blocks<{ctype}, {xtype}, {ytype}, {int(weighted)}, {variant[0]}, "
            f"{variant[1]}>")


def use_warp_variants(variants=((1, 1),), block_variants=None) -> None:
    """Build the SpMV module with the warp kernel in these (U, B) ``variants`` and the
    block-walk kernel in ``block_variants`` (default: SPMV_BLOCKS_WARP alone); each one a
    template instance per weight type, x type and direction: compile time grows with them."""
    global _fn
    block_variants = block_variants or (SPMV_BLOCKS_WARP,)
    _fn = kernels(_CU_PATH, tuple(
        [f"spmv_merge<float, 0, {p}>" for p in (0, 1)]
        + [f"spmv_merge<{c}, 1, {p}>" for c in sorted(set(_WEIGHT_TYPES.values()))
           for p in (0, 1)]
        + sorted({_warp_name(c, xt, wt, p, var)
                  for c, wt in [("float", False)] + [(c, True)
                                                     for c in set(_WEIGHT_TYPES.values())]
                  for xt in ("float", "double") for p in (False, True)
                  for var in variants})
        + sorted({_blocks_name(c, xt, yt, wt, var)
                  for c, wt in (("float", False), ("float", True), ("double", True))
                  for xt, yt in (("float", "double"), ("double", "double"), ("float", "float"))
                  for var in block_variants})))


use_warp_variants((SPMV_WARP,))

#: SpMV kernel: "warp" (warp-segmented rows, default) or "merge" (merge-path per thread)
SPMV_KERNEL = "warp"


#: SpMV visits a large dynamic graph's rows in storage order from the second call on an
#: unchanged graph on (the first call, smaller graphs, and every call when False: id order)
SPMV_STORAGE_ORDER = True
#: stored entries from which a graph's rows are visited in storage order
SPMV_ORDER_MIN_ENTRIES = 1 << 26
#: entries per warp range of the warp kernel: the largest power of two from 32 * U up to
#: SPMV_RANGE that still gives every SM SPMV_RANGE_WARPS ranges (a small graph's few long ranges
#: would leave most of the device idle, each warp walking its range alone); SPMV_RANGE_WARPS
#: None: always SPMV_RANGE
SPMV_RANGE = 512
SPMV_RANGE_WARPS = 128
#: the pull over a hornet.Graph visited in storage order walks its block arrays
#: (``spmv_blocks``; False: the warp kernel over the visited rows)
SPMV_BLOCKS = True
#: log2 of the slots of one block-walk task (a warp's unit of work); None: per graph, the
#: largest in SPMV_TASK_SHIFTS that still gives every resident warp SPMV_TASK_WARPS tasks
#: (long tasks spend less on finding their array and rows; a small graph needs short
#: ones, or its last tasks run on a nearly idle device)
SPMV_TASK_SHIFT = None
SPMV_TASK_SHIFTS = (9, 13)
SPMV_TASK_WARPS = 6
#: stored entries from which the pull over a hornet.Graph walks its block arrays (from the
#: first call on a graph state; below, the warp kernel over rows in id order). 0: every
#: graph: the task size follows the graph (SPMV_TASK_SHIFTS), so a small graph's tasks
#: still fill the device, and the walk has no row search and no per-row pointer to load
SPMV_BLOCKS_MIN_ENTRIES = 0
#: log2 of the block size from which the block walk reads its rows' degrees 32 rows ahead
#: (so that a group's loads stop at its list's end; smaller blocks of tasks of more than 32
#: rows load each slot's degree with the slot): 5 from the smallest blocks that hold whole
#: groups of 32 slots; 64: only in tasks of at most 32 rows
SPMV_BLOCKS_AHEAD_FROM = 5
#: stored entries from which the block walk, by default (SPMV_BLOCKS_GATHER and
#: SPMV_BLOCKS_STREAM_ROWS None), gathers y from per-row sums and streams its row loads
#: and stores: see the two settings
SPMV_BLOCKS_LARGE = 1 << 26
#: the block walk's per-row degree and vertex loads and its stores of y are streaming
#: (evict-first: read or written once, they leave L2 to x): True, False, or None: on
#: graphs of SPMV_BLOCKS_LARGE entries and more (there x alone outgrows what L2 keeps
#: beside the streams; on a smaller graph the hint only evicts lines L2 could keep)
SPMV_BLOCKS_STREAM_ROWS = None
#: the block walk sums into one value per visited row and gathers y from them (one more
#: launch, and the visited row of each vertex per state) instead of storing each sum at
#: its vertex: True, False, or None: on graphs of SPMV_BLOCKS_LARGE entries and more
#: (there the scattered 8-byte stores at vertex ids miss L2 and cost more than a coalesced
#: array of sums and one gather; on a smaller graph y stays in L2 and the gather's extra
#: pass and launch cost more)
SPMV_BLOCKS_GATHER = None
#: rows of the per-graph row buffers of the block walk beyond a layout's blocks (a share,
#: plus SPMV_BLOCKS_ROWS_MIN_SPARE): a later layout with a few more blocks (the block array
#: a batch creates) prepares its rows in the same buffers, with no allocation
SPMV_BLOCKS_ROWS_SPARE = 1 / 16
SPMV_BLOCKS_ROWS_MIN_SPARE = 4096
SPMV_TILE = 256 * 8          # SPMV_BLOCK * SPMV_IPT in spmv.cu


def spmv(view: AdjacencyView, x, weight=None, transpose: bool = False, dtype=np.float64):
    """``y = A x`` (or ``A^T x``) on the GPU; CuPy array of ``dtype`` (float64 or float32;
    see hornet.algos.spmv)."""
    n = view.num_vertices
    x = cupy.asarray(x)
    if x.ndim != 1 or x.shape[0] != n:
        raise ValueError(f"x must have shape ({n},), got {x.shape}")
    if x.dtype.kind not in "biuf":
        raise TypeError(f"x must hold real numbers (bool, int or float), got dtype {x.dtype}")
    # float32 x is read as float32 by the warp kernel (converted to float64 per product:
    # the same sums, half the gathered bytes); every other dtype is converted once
    keep32 = x.dtype == cupy.float32 and SPMV_KERNEL == "warp"
    x = cupy.ascontiguousarray(x, dtype=cupy.float32 if keep32 else cupy.float64)
    weighted = weight is not None
    ctype = "float"
    owner = view.owner
    if weighted:
        # (a graph whose pull walks its block arrays comes with a view without property
        # addresses (see walks_blocks): the block walk reads the property's columns, other
        # kernels get the graph's view that has them)
        props = view.property_ptrs
        if weight not in props and _walks_blocks(view):
            props = {k: (None, dt) for k, dt in owner.edge_properties.items()}
        if weight not in props:
            raise KeyError(f"no edge property {weight!r}; the graph has "
                           f"{sorted(props) or 'none'}")
        wdt = np.dtype(props[weight][1])
        if wdt.kind not in "biuf":
            raise TypeError(f"edge property {weight!r} must be real-valued, got dtype {wdt}")
        ctype = _WEIGHT_TYPES.get(wdt, "double")
    push = bool(transpose and (view.directed or weighted))
    dtype = np.dtype(dtype)
    if n == 0:
        return cupy.zeros(0, dtype=dtype)
    if (not push and SPMV_BLOCKS and SPMV_KERNEL == "warp" and _walks_blocks(view)
            and (not weighted or wdt in (np.float32, np.float64))
            and _stored_entries(view) >= SPMV_BLOCKS_MIN_ENTRIES):
        # (a float32 y straight from the kernel when x is float32 too)
        y = _spmv_blocks(view, weight, ctype, x,
                         dtype if x.dtype == cupy.float32 else np.float64)
        return y.astype(dtype, copy=False)
    if weighted and weight not in view.property_ptrs:
        view = owner.adjacency(properties=True)
    # the storage order pays from about the second SpMV on the same view (see _visit_rows):
    # a graph updated between single SpMVs never makes it; below SPMV_ORDER_MIN_ENTRIES the
    # few launches that make it cost more than a whole SpMV (and the gather of y more than
    # the order gains)
    ordered = False
    if SPMV_STORAGE_ORDER and getattr(owner, "storage_ranks", None) is not None:
        nnz = _degree_scan(view)[1]
        ordered = (nnz >= SPMV_ORDER_MIN_ENTRIES
                   and storage_ranks(view, count_call="spmv") is not None)
    rows = _visit_rows(view, ordered)
    if rows.nnz == 0:
        return cupy.zeros(n, dtype=dtype)
    wptr = rows.ptr
    if weighted:
        wptr = rows.property_ptr(view, weight)
        if wdt not in _WEIGHT_TYPES:              # e.g. float16: gather the values as float64
            vals = cupy.empty(rows.nnz, dtype=wdt)
            gather_lists(wptr, rows.deg, rows.off[:-1], vals)
            vals = vals.astype(cupy.float64)
            wptr = address(vals) + 8 * rows.off[:-1]
    gathered = not push and rows.vid is not None          # y is written whole by the gather
    y = (cupy.empty if gathered else cupy.zeros)(n, dtype=cupy.float64)
    _spmv_rows(SPMV_KERNEL, ctype, weighted, push, rows, wptr, x, y)
    return y.astype(dtype, copy=False)


def _spmv_rows(kernel, ctype, weighted, push, rows, wptr, x, y, y_rows=None) -> None:
    """SpMV over the visited ``rows`` into ``y`` (float64 (V,); zeroed, unless the pull over a
    visiting order other than the id order writes it whole).

    Pull: the sum of visited row r lands at ``y_rows[r]`` (zeroed float64 (count + 1,), made
    when None); with a visiting order other than the id order, ``y`` is then gathered from
    it: one coalesced write of ``y`` (storing the sums at scattered vertex ids costs more than
    the order gains). Transpose: atomics straight into ``y``.
    """
    if push or rows.vid is None:
        y_rows = y
    elif y_rows is None:
        y_rows = cupy.zeros(rows.count + 1, dtype=cupy.float64)
    if kernel == "warp":
        rng = warp_range(rows.nnz)
        launch(_fn(_warp_name(ctype, _X_TYPES[x.dtype.char], weighted, push, SPMV_WARP)),
               -(-rows.nnz // rng), (rows.ptr, wptr, rows.off, rows.range_rows(rng),
                                     i64(rows.count), i64(rows.nnz), i64(-(-rows.nnz // rng)),
                                     i64(rng), x, y_rows, NULL if rows.vid is None else rows.vid),
               threads_per_item=32)
    else:
        _spmv_launch(kernel, ctype, weighted, push, rows.ptr, wptr, rows.off, rows.count,
                     rows.nnz, x, y_rows, rows.vid)
    if y_rows is not y:
        cupy.take(y_rows, rows.slot, out=y)


def walks_blocks(g) -> bool:
    """Whether the pull over GPU graph ``g`` (a hornet.Graph) walks its block arrays (the
    block-walk settings and ``g``'s stored entries): then its view needs no per-vertex
    property addresses."""
    entries = int(g.num_edges) * (1 if g.directed else 2)
    return SPMV_BLOCKS and SPMV_KERNEL == "warp" and entries >= SPMV_BLOCKS_MIN_ENTRIES


def _walks_blocks(view: AdjacencyView) -> bool:
    """Whether ``view`` is the whole of a graph that can lay out its block arrays (a
    hornet.Graph's own view: ``storage_blocks``), so that the block walk can read it."""
    return (hasattr(view.owner, "storage_blocks") and _stored_entries(view) is not None)


def block_walk_choice(setting, entries: int) -> bool:
    """A block-walk choice (SPMV_BLOCKS_GATHER, SPMV_BLOCKS_STREAM_ROWS) for a graph of
    ``entries`` stored entries: the setting, or (None) whether the graph is large
    (SPMV_BLOCKS_LARGE)."""
    return entries >= SPMV_BLOCKS_LARGE if setting is None else bool(setting)


def _spmv_blocks(view: AdjacencyView, weight, ctype: str, x, dtype=np.float64):
    """``y = A x`` (CuPy (V,) of ``dtype``: float64, or float32 with a float32 ``x``) by
    the block-walk kernel over the block arrays of the graph owning ``view``: each row's
    sum stored at its vertex (``y`` zeroed first), or gathered from per-row sums
    (SPMV_BLOCKS_GATHER); ``weight``: the edge property read as ``ctype`` (float or
    double), or None; ``x``: float32 or float64, contiguous. One launch (after the
    per-state preparation of the first call on a graph state), its arguments kept per set
    of block arrays."""
    entries = _stored_entries(view)
    gather = block_walk_choice(SPMV_BLOCKS_GATHER, entries)
    stream = block_walk_choice(SPMV_BLOCKS_STREAM_ROWS, entries)
    walks, walk = _block_walk(view, slot=gather)
    n = view.num_vertices
    dtype = np.dtype(dtype)
    fn, grid, args, added_from = walk.plan(weight, ctype, x.dtype.char, dtype.char)
    size = dtype.itemsize
    if gather:
        # one sum per visited row, and the zero row (count) of the vertices without a list,
        # in the graph's buffer of row sums: zeroed from the first row the kernel adds to
        # (blocks larger than a task, the last size classes) on; it stores every other row.
        # (The launch goes out before y is made: the device starts sooner.)
        # The rows added to are zeroed again after the gather, for the next call (most
        # often the same walk and dtype): then no memset precedes the launch.
        y_rows = walks.row_sums(walk.count + 1, dtype)
        zero = (address(y_rows) + size * added_from, size * (walk.count + 1 - added_from))
        if walks.zeroed != zero:
            _memset(zero[0], 0, zero[1])
        if grid:
            fn(grid, BLOCK, args + [walks.deg_at, 0, address(x), address(y_rows),
                                    int(SPMV_BLOCKS_AHEAD_FROM), int(stream)])
        y = cupy.empty(n, dtype=dtype)              # written whole by the gather
        cupy.take(y_rows, walks.slot[:n], out=y)
        _memset(zero[0], 0, zero[1])
        walks.zeroed = zero
        return y
    y = cupy.zeros(n, dtype=dtype)
    if grid:
        fn(grid, BLOCK, args + [walks.deg_at, walks.vid_at, address(x), address(y),
                                int(SPMV_BLOCKS_AHEAD_FROM), int(stream)])
    return y


class _BlockWalk:
    """The device tables of the block walk for one set of block arrays (a storage layout,
    identified by its content: the arrays' sizes, classes and every column's addresses),
    made in one upload when the layout first appears: the arrays by address (``by_addr``:
    base, first visited row, size class; for the per-state rows), per array in storage
    order its first visited row, size class, slots and destination column address, every
    edge property's column addresses, and the first task of each array for the task size of
    the current settings (another task size: its own small upload, on first use). Per
    kernel instance and weight, the launch arguments (:meth:`plan`). Nothing here depends
    on a graph state: the per-state rows live in the graph's :class:`_GraphWalks`."""

    def __init__(self, layout: dict, columns: dict):
        """``layout``: ``Graph.storage_blocks()``; ``columns``: {edge property name: its
        column addresses in the same order (host int64 (A,))}."""
        self.size_class = size_class = layout["size_class"]          # host int64 (A,)
        self.first_row = first_row = layout["first_rank"]
        self.na = na = int(size_class.shape[0])
        self.count = int(first_row[-1] + layout["num_blocks"][-1]) if na else 0
        if self.count >= 1 << 31:
            raise ValueError("more than 2**31 blocks")
        self.slots = layout["num_blocks"] << size_class                   # host int64 (A,)
        self.total_slots = int(self.slots.sum())
        self._shift_for = (None, 0)            # (settings, task shift under them)
        order = np.argsort(layout["column"], kind="stable")              # arrays by address
        shift = self.task_shift()
        task_first = self._task_first(shift)
        names = list(columns)
        host = np.concatenate(
            [layout["column"][order], first_row[order], size_class[order],      # by_addr
             first_row, size_class, self.slots, layout["column"]]               # arrays
            + [columns[name] for name in names] + [task_first]).astype(np.int64)
        self.dev = upload(host)
        at = address(self.dev)
        self.by_addr = at
        self.arrays = at + 8 * 3 * na
        self.columns = {name: at + 8 * (7 + i) * na for i, name in enumerate(names)}
        self.columns[None] = at + 8 * 6 * na                 # (unweighted: not read)
        self.task_tables = {shift: (at + 8 * (7 + len(names)) * na, int(task_first[-1]),
                                    None)}
        self.plans: dict = {}

    def _task_first(self, shift: int) -> np.ndarray:
        """The first task of each array for tasks of ``2**shift`` slots, the total last
        (host int64 (A + 1,))."""
        tasks = (self.slots + (1 << shift) - 1) >> shift
        out = np.zeros(self.na + 1, dtype=np.int64)
        np.cumsum(tasks, out=out[1:])
        return out

    def task_shift(self) -> int:
        """log2 of the slots per task (SPMV_TASK_SHIFT, or the choice it leaves to the
        graph's size: see there)."""
        if SPMV_TASK_SHIFT is not None:
            return int(SPMV_TASK_SHIFT)
        key = (SPMV_TASK_SHIFTS, SPMV_TASK_WARPS, SPMV_BLOCKS_WARP)
        if self._shift_for[0] != key:
            warps = _sm_count() * (BLOCK // 32) * SPMV_BLOCKS_WARP[1]      # resident warps
            lo, shift = SPMV_TASK_SHIFTS
            while shift > lo and self.total_slots < (SPMV_TASK_WARPS * warps) << shift:
                shift -= 1
            self._shift_for = (key, shift)
        return self._shift_for[1]

    def task_table(self, shift: int):
        """``(address, ntasks)``: the device table of the first task of each array for tasks
        of ``2**shift`` slots (made on first use for a task size other than the one of the
        settings the layout first appeared under)."""
        table = self.task_tables.get(shift)
        if table is None:
            host = self._task_first(shift)
            dev = upload(host)
            table = self.task_tables[shift] = (address(dev), int(host[-1]), dev)
        return table[0], table[1]

    def added_from(self, shift: int) -> int:
        """The first visited row of the blocks larger than a task of ``2**shift`` slots
        (their rows are summed by several tasks, added atomically; every row before is
        stored by one task): the first row of the first array of a larger size class
        (classes ascend in storage order), ``count`` when there is none."""
        a = int(np.searchsorted(self.size_class, shift, side="right"))
        return int(self.first_row[a]) if a < self.na else self.count

    def plan(self, weight, ctype: str, xchar: str, ychar: str = "d"):
        """``(launch, grid, args)`` of the block-walk kernel for edge property ``weight``
        (or None) read as ``ctype``, x and y of dtype characters ``xchar`` and ``ychar``
        ("f" or "d"; y "f" only with x "f"), under
        the current settings (SPMV_BLOCKS_WARP, the task size): the launch takes ``args``
        followed by the addresses of the rows' degrees and vertices (0: y is the per-row
        sums), of x and of y, and the values of SPMV_BLOCKS_AHEAD_FROM and of the streaming
        choice (grid 0: no task); and :meth:`added_from` of the task size."""
        shift = self.task_shift()
        key = (weight, ctype, xchar, ychar, SPMV_BLOCKS_WARP, shift)
        plan = self.plans.get(key)
        if plan is None:
            tasks_at, ntasks = self.task_table(shift)
            fn = _prepared(_blocks_name(ctype, _X_TYPES[xchar], _X_TYPES[ychar],
                                        weight is not None,
                                        SPMV_BLOCKS_WARP), 11)
            grid = min(-(-ntasks * 32 // BLOCK), _sm_count() * 32)
            plan = self.plans[key] = (fn, grid, [tasks_at, self.arrays, self.na, shift,
                                                 self.columns[weight]],
                                      self.added_from(shift))
        return plan


class _GraphWalks:
    """The block walks of one graph: its most recent :class:`_BlockWalk` by layout content
    (``walks``, at most _WALKS_KEPT; ``last``: the layout dict last seen and its walk, so
    that an unchanged layout costs no key), and the per-state rows that every walk of the
    graph writes into the same device buffers (one graph state is current at a time): for
    each visited row its degree (int32 at ``deg_at``, 0 for a free block) and its vertex
    (int32 at ``vid_at``, -1 for a free block), and for SPMV_BLOCKS_GATHER ``slot``, the
    visited row of each vertex (int32, ``count`` for a vertex without a list: the zero
    row). The buffers have spare rows (SPMV_BLOCKS_ROWS_SPARE), so a layout with a few
    more blocks reuses them."""

    def __init__(self):
        self.last = None
        self.walks: dict = {}
        self.rows = None
        self.capacity = 0
        self.deg_at = self.vid_at = 0
        self.slot = None
        self.sums = None
        self.zeroed = None      # (address, bytes) of the row sums known to be zero

    def walk_of(self, owner) -> _BlockWalk:
        """The walk of ``owner``'s current block arrays (made when they are new)."""
        layout = owner.storage_blocks()
        if self.last is not None and self.last[0] is layout:
            return self.last[1]
        columns = {name: owner.storage_blocks(name)["column"] for name in owner.edge_properties}
        # the content of the layout, every column included (an array freed and another
        # made at its destination address may hold its properties elsewhere)
        key = b"".join([layout["size_class"].tobytes(), layout["num_blocks"].tobytes(),
                        layout["column"].tobytes()]
                       + [c.tobytes() for c in columns.values()])
        walk = self.walks.get(key)
        if walk is None:
            if len(self.walks) >= _WALKS_KEPT:
                self.walks.clear()
            walk = self.walks[key] = _BlockWalk(layout, columns)
        self.last = (layout, walk)
        return walk

    def prepare(self, owner, walk: _BlockWalk, slot: bool) -> None:
        """Write the rows of ``owner``'s current state (whose block arrays are ``walk``'s):
        two memsets and one launch over the vertex table (``slot``: also ``slot``)."""
        count = walk.count
        if count > self.capacity:
            self.capacity = (count + int(count * SPMV_BLOCKS_ROWS_SPARE)
                             + SPMV_BLOCKS_ROWS_MIN_SPARE)
            self.rows = None                                   # (the old buffers go first)
            self.rows = cupy.empty(2 * self.capacity, dtype=cupy.int32)
            self.deg_at = address(self.rows)
            self.vid_at = self.deg_at + 4 * self.capacity
        if count:
            _memset(self.deg_at, 0, 4 * count)
            _memset(self.vid_at, 0xFF, 4 * count)                               # -1
        n = owner.num_vertices
        slot_at = 0
        if slot:
            if self.slot is None or self.slot.shape[0] < n:
                self.slot = cupy.empty(max(n, 1), dtype=cupy.int32)
            slot_at = address(self.slot)
        if n:
            deg, ptr = owner.vertex_table()                # (contiguous; rows < n: the view)
            grid = min(-(-n // BLOCK), _sm_count() * 32)
            _prepared("blocks_rows", 9)(grid, BLOCK, [
                address(deg), address(ptr), n, walk.by_addr, walk.na, self.deg_at,
                self.vid_at, slot_at, count])

    def row_sums(self, count: int, dtype):
        """A device buffer of ``count`` sums of ``dtype`` for the gathered walk, the graph's
        own (reused by every call: the calls of one stream use it one after another;
        ``zeroed``: the byte range of it a call left zeroed for the next one)."""
        nbytes = count * np.dtype(dtype).itemsize
        if self.sums is None or self.sums.nbytes < nbytes:
            self.sums = None                                   # (the old buffer goes first)
            self.sums = cupy.empty(nbytes + nbytes // 16, dtype=cupy.uint8)
            self.zeroed = None
        return self.sums[:nbytes].view(dtype)

    def rows_of(self, walk: _BlockWalk):
        """(deg, vid): the current state's rows (int32 CuPy views of the buffers, ``count``
        each; for checks)."""
        return (self.rows[:walk.count],
                self.rows[self.capacity:self.capacity + walk.count])


def _memset(at: int, value: int, nbytes: int) -> None:
    """Set ``nbytes`` bytes of device memory from address ``at`` to ``value``, in stream
    order."""
    cupy.cuda.runtime.memsetAsync(at, value, nbytes, cupy.cuda.get_current_stream().ptr)


#: PreparedLaunch of each SpMV kernel launched through one (by name)
_PREPARED: dict = {}


def _prepared(name: str, nargs: int) -> PreparedLaunch:
    """The reused :class:`PreparedLaunch` of kernel ``name`` of the SpMV module."""
    fn = _fn(name)
    entry = _PREPARED.get(name)
    if entry is None or entry[1] is not fn:
        entry = _PREPARED[name] = (PreparedLaunch(fn, nargs), fn)
    return entry[0]


#: per graph (weakly: dropped with the graph), its :class:`_GraphWalks`
_WALKS = weakref.WeakKeyDictionary()
#: layouts kept per graph
_WALKS_KEPT = 4


def _renew_walk(graph_ref) -> None:
    """After a batch that created or freed block arrays of the graph ``graph_ref`` refers
    to (``Graph.on_storage_change``): its walk for the new arrays, with the launch plans
    the previous walk had made, so that the first SpMV on the new state only writes the
    state's rows. A walk that cannot be made now (out of memory) is made by that call."""
    g = graph_ref()
    walks = None if g is None else _WALKS.get(g)
    if walks is None:
        return
    before = walks.last[1] if walks.last is not None else None
    try:
        walk = walks.walk_of(g)
        if before is not None and walk is not before:
            for key in list(before.plans):
                if key[4:] == (SPMV_BLOCKS_WARP, walk.task_shift()):
                    walk.plan(*key[:4])
    except MemoryError:
        walks.last = None


def _block_walk(view: AdjacencyView, slot: bool = False):
    """``(walks, walk)``: the :class:`_GraphWalks` of the graph owning ``view`` (a
    hornet.Graph's whole view) and the :class:`_BlockWalk` of its block arrays, the rows
    prepared for the graph state of ``view`` on first use (memoized on the view: valid
    until the next update); ``slot``: with ``walks.slot``."""
    memo = view.derived.get("block_walk")
    if memo is None or (slot and not view.derived.get("block_walk_slot")):
        owner = view.owner
        walks = _WALKS.get(owner)
        if walks is None:
            walks = _WALKS[owner] = _GraphWalks()
            owner.on_storage_change(functools.partial(_renew_walk, weakref.ref(owner)))
        walk = walks.walk_of(owner)
        walks.prepare(owner, walk, slot)
        memo = view.derived["block_walk"] = (walks, walk)
        view.derived["block_walk_slot"] = slot
    return memo


@dataclass
class _VisitRows:
    """The rows a kernel visits, in visiting order: ``ptr``/``deg``/``off`` (the exclusive
    scan of ``deg``, total last) per visited row, ``count`` rows holding ``nnz`` entries.
    ``vid``: the vertex of each visited row (int32), and ``slot``: the visited row of each
    vertex (int32 (V,), ``count`` for a vertex not visited); both None when row r is vertex r.
    """

    ptr: object
    deg: object
    off: object
    nnz: int
    vid: object = None
    slot: object = None
    memo: dict = None

    @property
    def count(self) -> int:
        return int(self.deg.shape[0])

    def property_ptr(self, view: AdjacencyView, name: str):
        """Per visited row, the address of edge property ``name`` (int64, memoized)."""
        key = ("property", name)
        if key not in self.memo:
            p = as_i64(view.property_ptrs[name][0])
            self.memo[key] = p if self.vid is None else p[self.vid]
        return self.memo[key]

    def range_rows(self, rng: int):
        """The visited row holding entry ``k * rng``, for every k (int64, memoized)."""
        key = ("spmv_rows", rng)
        if key not in self.memo:
            self.memo[key] = tiles(_fn, self.off, self.count, self.nnz, tile=rng)[0]
        return self.memo[key]


def _visit_rows(view: AdjacencyView, ordered: bool = True) -> _VisitRows:
    """The view's rows in the order a kernel visits them (memoized on the view).

    ``ordered``: in the order their lists are stored (``views.storage_ranks``), so that a
    kernel streaming every list reads memory front to back. For a CSR that is the id order.
    A dynamic graph keeps each size class in its own block arrays, so the id order jumps
    between them at almost every row; its rows are then visited by storage rank: size
    classes from the smallest blocks up, each block array front to back, a free block
    being an empty row. The class order matters: a range of short rows costs the warp SpMV
    more than a range of one long row, and with the hubs last its last wave is light (in
    plain address order the classes fall wherever their arrays landed, and the speed varies
    from build to build). Making the order costs a few vectorized passes over the vertices
    and one scatter (no sort): less than one SpMV. Otherwise (or for a view whose owner
    does not know its storage): id order.
    """
    ranks = storage_ranks(view) if ordered else None
    key = ("visit_rows", ranks is not None)
    rows = view.derived.get(key)
    if rows is None:
        if ranks is None:
            deg, ptr = view_arrays(view)
            off, nnz = _degree_scan(view)
            rows = _VisitRows(ptr, deg, off, nnz, None, None, {})
        else:
            rows = _rows_by_rank(view, *ranks)
        view.derived[key] = rows
    return rows


def _rows_by_rank(view: AdjacencyView, rank, count: int) -> _VisitRows:
    """The view's rows visited by storage rank (``rank``: int64 (V,), distinct in
    [0, count) for the vertices with entries, -1 for the others)."""
    if count >= 1 << 31:
        raise ValueError("more than 2**31 storage ranks")
    deg, ptr = view_arrays(view)
    n = view.num_vertices
    vid = cupy.zeros(count, dtype=cupy.int32)
    deg_rows = cupy.zeros(count, dtype=cupy.int32)
    ptr_rows = cupy.zeros(count, dtype=cupy.int64)
    slot = cupy.empty(n, dtype=cupy.int32)
    launch(_fn("rows_by_rank"), n, (deg, ptr, as_i64(rank), i64(n), i64(count), vid, deg_rows,
                                    ptr_rows, slot))
    off, nnz = scan(deg_rows)
    return _VisitRows(ptr_rows, deg_rows, off, nnz, vid, slot, {})
def _degree_scan(view: AdjacencyView):
    """(exclusive scan of the view's degrees with the total last, total), once per view; the
    total of a graph's own view comes from the graph (no wait for the scan on the device)."""
    memo = view.derived.get("degree_scan")
    if memo is None:
        deg = view_arrays(view)[0]
        total = _stored_entries(view)
        if total is None:
            memo = scan(deg)
        else:
            off = cupy.zeros(deg.shape[0] + 1, dtype=cupy.int64)
            if deg.shape[0]:
                cupy.cumsum(deg, dtype=cupy.int64, out=off[1:])
            memo = (off, total)
        view.derived["degree_scan"] = memo
    return memo


def _stored_entries(view: AdjacencyView):
    """The entries of a hornet Graph's own view, known on the host (an undirected graph
    stores both directions of each edge and no self-loop); None for any other view."""
    owner = view.owner
    if getattr(owner, "storage_ranks", None) is None or not hasattr(owner, "num_edges"):
        return None
    if getattr(owner, "num_vertices", None) != view.num_vertices or \
            getattr(owner, "directed", None) != view.directed:
        return None
    return int(owner.num_edges) * (1 if view.directed else 2)


def warp_range(nnz: int) -> int:
    """Entries per warp range of the warp kernel for ``nnz`` entries (see SPMV_RANGE)."""
    group = 32 * SPMV_WARP[0]
    if SPMV_RANGE_WARPS is None:
        return max(SPMV_RANGE, group)
    want = _sm_count() * SPMV_RANGE_WARPS
    rng = SPMV_RANGE
    while rng > group and nnz < rng * want:
        rng //= 2
    return max(rng, group)


def _sm_count() -> int:
    """Streaming multiprocessors of the current device (cached)."""
    dev = cupy.cuda.Device()
    count = _SMS.get(dev.id)
    if count is None:
        count = _SMS[dev.id] = int(dev.attributes["MultiProcessorCount"])
    return count


_SMS: dict = {}
#: C++ type of the x dtypes the warp kernel reads (by NumPy type character)
_X_TYPES = {"f": "float", "d": "double"}


def _spmv_launch(kernel, ctype, weighted, push, ptr, wptr, off, n, nnz, x, y, vid=None) -> None:
    """One merge-path SpMV launch over ``n`` visited rows (plus its tiny partition kernel) into
    a zeroed ``y`` (pull: indexed by visited row; transpose: by vertex); ``x`` float64.
    ``vid``: the vertex of each visited row (int32 CuPy; the transpose reads ``x`` there),
    None when row r is vertex r."""
    targs = f"<{ctype}, {int(weighted)}, {int(push)}>"
    vid = NULL if vid is None else vid
    if kernel != "merge":
        raise ValueError(f"unknown SpMV kernel {kernel!r}")
    ntiles = -(-(n + nnz) // SPMV_TILE)
    tile_rows = cupy.empty(ntiles + 1, dtype=cupy.int64)
    launch(_fn("merge_path_tiles"), ntiles + 1, (off, i64(n), i64(nnz), i64(ntiles), tile_rows))
    launch(_fn("spmv_merge" + targs), ntiles,
           (ptr, wptr, off, tile_rows, i64(n), i64(nnz), i64(ntiles), x, y, vid),
           threads_per_item=BLOCK)
