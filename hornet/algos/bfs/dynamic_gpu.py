"""GPU state and update driver of :class:`hornet.algos.bfs.dynamic.DynamicBFS`.

The state lives on the device (CuPy arrays sized to the id space's capacity, with every
scratch list an update needs preallocated on this object). An update is one launch of
``dbfs_update_r85`` (``bfs/dynamic.cu``; a plain launch of a grid the device holds at once by
default, or a cooperative one, see ``GPUState.cooperative``): the steps of the CPU version run
as phases of that one kernel, separated by grid barriers,
so an update has no host synchronisation, no per-level launch and no allocation (the lists
grow only with the graph or a larger batch); the host passes the batch and a few scalars.
With ``GPUState.async_queue`` the kernel is ``dbfs_update_async``: marking, relaxation (with
the marked vertices' seeds) and repair each drain a work queue while it fills, a vertex
processed as soon as it is marked or lowered, with no grid barrier per level (slower on
Kronecker deletions: bench/results/dynamic_bfs_gpu_async.md says where the time goes). The kernel reads the graph through its vertex
tables (:meth:`hornet.Graph.vertex_table`, updated in place by every change), so an update
makes no adjacency view; the grid follows the batch (``GPUState.pairs_per_block``), so a small
batch's grid barriers wait for few blocks. An update whose counts step leaves little work goes
on in one block of its grid, with the block's own barriers (``GPUState.one_block_max``). The
statistics are read from the device only when asked for.

Capacities: per-vertex arrays and lists hold ``cap`` entries (ids < cap); the chunk list (long
adjacency lists cut into passes of ``CHUNK`` entries) holds ``2 * entries / CHUNK`` (every
listed vertex at most once per phase, or once in the whole marking step, each with more than
``CHUNK`` entries); the seed list one seed per marked vertex or chunk plus one per inserted
pair; the work queue ``2 * cap`` keys plus the chunk list's length (each marked vertex once
with its chunks, each changed vertex's chunks; a relaxation that needs more finishes in
sweeps). They grow with the graph.
"""
from __future__ import annotations

import operator
import os
import struct

import numpy as np

from hornet.core.cuda import building, cupy, function, i64, launch

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dynamic.cu")

#: adjacency entries a warp reads in one pass (32 lanes x UNROLL in dynamic.cu)
CHUNK = 256
#: threads per block of dbfs_update (its __launch_bounds__)
BLOCK = 256
#: words of one counter set (C_WORDS in dynamic.cu: 30 counters, each on its own 128-byte
#: line) and the statistics' positions in it
_C_STRIDE = 16
_C_WORDS = 30 * _C_STRIDE
_C_ONE_BLOCK = 29 * _C_STRIDE
#: the work queues' pending counters (C_Q0 + q * Q_SET + Q_PEND in dynamic.cu) and their
#: value at rest (Q_TOKENS)
_Q_PENDING = tuple((16 + 4 * q + 2) * _C_STRIDE for q in range(3))
_Q_TOKENS = 1 << 40
_C_CHANGED, _C_MARKED, _C_SEEDS, _C_SCANNED, _C_LEVELS = (i * _C_STRIDE for i in (0, 1, 2, 3, 7))
#: order of the device addresses in the params array (P_* in dynamic.cu)
PARAM_NAMES = ("level", "cnt", "flag", "old", "parent", "changed", "front0", "front1",
               "orphans", "seeds", "chunks", "counters", "barrier", "times", "queue",
               "queue_length", "relax_queue_length", "qtag")
#: (phase, time) records of the timeline (TIMES_CAP in dynamic.cu) and the phases' names
TIMES_CAP = 255
PHASES = {0: "start", 1: "counts", 2: "marking", 3: "seeds", 4: "relaxation", 5: "repair",
          6: "orphans", 7: "end"}


#: the update kernel's variants (GPUState.kernel_name, "dbfs_update_async"): template
#: instances of dbfs_update_kernel in dynamic.cu (resident blocks per SM, work queue), each
#: built as a module of its own when first launched
UPDATE_KERNELS = {"dbfs_update": "dbfs_update_kernel<4, false>",
                  "dbfs_update_r85": "dbfs_update_kernel<3, false>",
                  "dbfs_update_async": "dbfs_update_kernel<3, true>"}


def _fn(name: str):
    instance = UPDATE_KERNELS.get(name)
    if instance is None:
        return function(_CU, name)
    return function(_CU, instance, (instance,))


class GPUState:
    """Device arrays of the state: level, cnt, flag, old, parent, qtag (int32, capacity), the
    scratch lists (changed vertices, two frontiers, orphans, seeds, chunks), two counter sets
    and the grid barrier's words."""

    #: resident blocks per multiprocessor of dbfs_update (None: as many as fit)
    blocks_per_sm: int | None = None
    #: marking, relaxation and repair drain a work queue while it fills (the kernel
    #: "dbfs_update_async": no grid barrier between the levels of a phase, see
    #: dynamic_update.cuh, "work queue"); False: level-synchronous phases (``kernel_name``),
    #: the faster on Kronecker graphs (bench/results/dynamic_bfs_gpu_async.md)
    async_queue: bool = False
    #: at most this many work queue slots for the relaxation (None: as many as the queue has;
    #: a relaxation that needs more finishes in sweeps over the changed vertices: for tests)
    relax_queue_limit: int | None = None
    #: the level-synchronous kernel: "dbfs_update" (4 blocks of 256 threads per SM, 64
    #: registers a thread) or "dbfs_update_r85" (3 blocks, 85 registers, fewer spills)
    #: (chosen from bench/tools/dbfs_grid.py's sweeps: bench/results/dynamic_bfs_gpu.md,
    #: "Where the time goes")
    kernel_name: str = "dbfs_update_r85"
    #: lists of at most this many entries are read by one thread, longer ones by a warp
    #: (0: every list by a warp; at most 255). 8, 16 and 4 time alike on Kronecker 22 and 24
    #: within the runs' spread; 8 had the lowest mean over the deletions of the same-run
    #: comparison (bench/results/dynamic_bfs_gpu_ab.md)
    small_max: int = 8
    #: nanoseconds a block waiting at a grid barrier pauses between polls (0: none; rounded
    #: down to a multiple of 8, at most 2040): fewer polls of the barrier word leave the L2
    #: to the blocks still arriving (the same sweep)
    barrier_backoff_ns: int = 64
    #: record a timeline of the update's phases (one %globaltimer stamp per grid barrier,
    #: read with :meth:`timeline`); off by default (a benchmark's breakdown)
    record_timeline: bool = False
    #: launch through the driver with a preallocated argument buffer (False: CuPy's call,
    #: which converts every argument and queries the occupancy on each launch)
    direct_launch: bool = True
    #: launch as a cooperative kernel (the driver checks that every block is resident). False
    #: (the default: a cheaper launch on the host and the device, see
    #: bench/results/dynamic_bfs_gpu_ab.md): an ordinary launch of the same grid, which never
    #: exceeds the blocks the device holds at once (``grid``), so every block is resident as
    #: long as no other kernel holds the multiprocessors for good (hornet launches on the
    #: current stream only); a grid barrier that waits too long still ends the update with
    #: the error that ``stats`` raises. Only with ``direct_launch``.
    cooperative: bool = False
    #: grid sized by the batch: one block per this many directed pairs of the batch, at
    #: least ``min_blocks``, at most the resident grid (a small batch's grid barriers then
    #: wait for few blocks, while a large batch's relaxation rounds, whose frontiers grow
    #: with the batch, keep every resident warp); None: always the resident grid. Chosen
    #: from bench/tools/dbfs_grid.py's sweeps (bench/results/dynamic_bfs_gpu_grid.md).
    pairs_per_block: int | None = 128
    #: the fewest blocks of a grid sized by the batch (None: one per multiprocessor)
    min_blocks: int | None = None
    #: an update whose counts step leaves at most this much work (marked vertices + 8 x the
    #: chunks of their long lists + inserted directed pairs) goes on in one block of the
    #: grid, the others leaving: its later barriers are that block's own instead of grid
    #: barriers (0: never; at most 255; the level-synchronous kernel only; see "one block"
    #: in dynamic.cu)
    one_block_max: int = 64
    #: deletions alone in an undirected graph, without parents (level-synchronous kernel): a
    #: marked level-1 vertex with an unmarked level-1 neighbour settles on level 2 while
    #: marking (see "Settling" in dynamic.cu); False: it is seeded there and relaxed
    settle: bool = True
    #: with ``settle``: the seeds and the relaxation in passes where the thread that lowers
    #: a vertex with a short list reads that list at once (see "chase" in dynamic.cu);
    #: False: the seed step and level-synchronous relaxation rounds
    chase: bool = True

    def __init__(self, owner, n: int):
        self.owner = owner
        self.n = 0
        self.cap = 0
        self.level = None
        self.parity = 0
        self._stats = np.zeros(5, np.int64)
        self._building = True           # the update kernel's module may still be building
        self._one_block = False
        self._pending = False
        counters = np.zeros(2 * _C_WORDS, dtype=np.uint64)
        for base in (0, _C_WORDS):
            counters[[base + w for w in _Q_PENDING]] = _Q_TOKENS
        self.counters = cupy.asarray(counters)
        self.queue = cupy.empty(0, dtype=cupy.uint64)
        self.barrier = cupy.zeros(64, dtype=cupy.uint32)      # see P_BARRIER in dynamic.cu
        self.seeds = cupy.empty(0, dtype=cupy.uint64)
        self.chunks = cupy.empty(0, dtype=cupy.int32)
        self._grid = None
        self._grid_kernel = None
        self._sms = 1
        self._settings_key = None      # the class settings the launch values were made for
        self._settings = None          # (kernel address, mode bits but the parity, cooperative)
        self._reserved = (-1, -1)      # (entries, pairs) the lists were last sized for
        self.times = None
        # the kernel's arguments, 8 bytes each (the int mode in the low half of the last),
        # and the pointers to them that the driver reads at launch
        self._args = np.zeros(13, np.uint64)
        self._tables = None             # the vertex tables whose addresses _args holds
        self._empty = cupy.empty(0, dtype=cupy.int32)
        self._arg_ptrs = np.arange(13, dtype=np.uint64) * 8 + np.uint64(self._args.ctypes.data)
        self._arg_ptrs_address = int(self._arg_ptrs.ctypes.data)
        self._grow(max(n, 1))
        self.n = n
        self._rebuild(n)

    def _grow(self, cap: int) -> None:
        old_cap = self.cap

        def grown(a, fill):
            b = cupy.full(cap, fill, dtype=cupy.int32)
            if a is not None:
                b[:old_cap] = a[:old_cap]
            return b

        self.level = grown(self.level, -1)
        self.cnt = grown(getattr(self, "cnt", None), 0)
        self.flag = cupy.zeros(cap, dtype=cupy.int32)          # 0 at rest (see the kernel)
        self.old = cupy.zeros(cap, dtype=cupy.uint32)          # 0 at rest
        self.parent = grown(getattr(self, "parent", None), -1) if self.owner.want_parents \
            else cupy.full(1, -1, dtype=cupy.int32)
        self.changed = cupy.empty(cap, dtype=cupy.int32)
        self.front = [cupy.empty(cap, dtype=cupy.int32), cupy.empty(cap, dtype=cupy.int32)]
        self.orphans = cupy.empty(cap, dtype=cupy.int32)
        self.qtag = cupy.zeros(cap, dtype=cupy.int32)          # 0 at rest (see the kernel)
        self.cap = cap
        self._params()

    def _reserve(self, entries: int, pairs: int) -> None:
        """Chunk and seed lists for a graph of ``entries`` stored adjacency entries (both
        lists of a directed graph) and a batch of ``pairs`` inserted directed pairs."""
        chunks = 2 * (entries // CHUNK) + 2
        seeds = self.cap + chunks + pairs
        grew = False
        # every marked vertex once and the chunks of their lists (marking), the chunks of the
        # changed vertices' lists (repair), lowered vertices (relaxation: as many as fit)
        slots = 2 * self.cap + chunks
        if self.queue.shape[0] < slots:
            self.queue = cupy.full(max(slots, self.queue.shape[0] + self.queue.shape[0] // 2),
                                   -1, dtype=cupy.int64).view(cupy.uint64)      # QSENT
            grew = True
        if self.chunks.shape[0] < 2 * chunks:                   # int2 entries
            self.chunks = cupy.empty(2 * max(chunks, self.chunks.shape[0]), dtype=cupy.int32)
            grew = True
        if self.seeds.shape[0] < seeds:
            self.seeds = cupy.empty(max(seeds, 2 * self.seeds.shape[0]), dtype=cupy.uint64)
            grew = True
        if grew:
            self._params()
        self._reserved = (entries, pairs)

    def _params(self) -> None:
        arrays = {"level": self.level, "cnt": self.cnt, "flag": self.flag, "old": self.old,
                  "parent": self.parent, "changed": self.changed, "front0": self.front[0],
                  "front1": self.front[1], "orphans": self.orphans, "seeds": self.seeds,
                  "chunks": self.chunks, "counters": self.counters, "barrier": self.barrier}
        ptrs = [arrays[k].data.ptr for k in PARAM_NAMES[:13]]
        ptrs.append(self.times.data.ptr if self.times is not None else 0)
        qlen = int(self.queue.shape[0])
        limit = self.relax_queue_limit
        ptrs += [self.queue.data.ptr if qlen else 0, qlen,
                 qlen if limit is None else min(qlen, max(int(limit), 0)), self.qtag.data.ptr]
        self._queue_limit = limit
        self.params = cupy.asarray(np.array(ptrs, dtype=np.uint64))
        self._params_ptr = self.params.data.ptr
        self._args[0] = self._params_ptr
        self._reserved = (-1, -1)          # the capacity may have moved: check at the next run

    def _timeline_switch(self) -> None:
        """Allocate (or drop) the timeline buffer when ``record_timeline`` changed."""
        want = bool(self.record_timeline)
        if want != (self.times is not None):
            self.times = cupy.zeros(1 + 2 * TIMES_CAP, dtype=cupy.uint64) if want else None
            self._params()

    def timeline(self) -> list[tuple[str, float]]:
        """The last update's phases with the microseconds each took (from the kernel's start
        to its end, one entry per grid barrier; needs ``record_timeline``). Synchronises."""
        if self.times is None:
            raise ValueError("set GPUState.record_timeline = True before the update")
        t = self.times.get()
        n = int(t[0])
        rec = t[1:1 + 2 * n].reshape(n, 2)
        return [(PHASES.get(int(rec[i, 0]), str(int(rec[i, 0]))),
                 (int(rec[i, 1]) - int(rec[i - 1, 1])) / 1e3) for i in range(1, n)]

    def cover(self, n: int) -> None:
        """Extend the state to ids < n (new vertices unreached; the source on level 0)."""
        if n <= self.n:
            return
        if n > self.cap:
            self._grow(max(n, 2 * self.cap))
        src = self.owner.source
        if self.n <= src < n:
            self.level[src] = 0
        self.n = n

    def counts(self):
        """Parent counts (int32 (capacity,); for checks)."""
        return self.cnt

    def _rebuild(self, n: int) -> None:
        from .static import bfs
        owner = self.owner
        g = owner.graph
        if owner.source < n:
            out = bfs(g, owner.source, return_parents=owner.want_parents,
                      reverse=owner._reverse, dense=True)
            lv, par = out if owner.want_parents else (out, None)
            self.level[:n] = lv
            if par is not None:
                self.parent[:n] = par
        view = g.adjacency(properties=False)
        deg, ptr = _arrays(view)
        self.cnt[:n] = 0                     # the counts kernel adds to them
        launch(_fn("dbfs_initial_counts"), n, (deg, ptr, i64(n), self.level, self.cnt),
               threads_per_item=32)

    def kernel(self) -> str:
        """The update kernel's name for the class settings (``async_queue``, ``kernel_name``)."""
        return "dbfs_update_async" if self.async_queue else self.kernel_name

    def grid(self, pairs: int | None = None) -> int:
        """Blocks of dbfs_update for a batch of ``pairs`` directed pairs (None: the largest
        grid): at most every multiprocessor's resident blocks (a cooperative launch needs
        them all resident), fewer for a small batch (see ``pairs_per_block``)."""
        name = "dbfs_update_async" if self.async_queue else self.kernel_name     # kernel()
        if self._grid is None or self._grid_kernel != name:
            kernel = _fn(name).kernel
            self._grid_kernel = name
            sms = int(cupy.cuda.Device().attributes["MultiProcessorCount"])
            fit = int(cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
                kernel.ptr, BLOCK, 0))
            per_sm = fit if self.blocks_per_sm is None else min(fit, self.blocks_per_sm)
            self._grid = max(1, per_sm) * sms
            self._sms = sms
        if pairs is None or self.pairs_per_block is None:
            return self._grid
        least = self._sms if self.min_blocks is None else max(1, int(self.min_blocks))
        return min(self._grid, max(least, -(-pairs // self.pairs_per_block)))

    def _launch_settings(self, key=None):
        """(kernel address, mode bits but the parity, cooperative) for the class settings as
        they are now (``key``: their values, :data:`_settings_of`; made again only when one
        of them changed)."""
        if key is None:
            key = _settings_of(self)
        if key != self._settings_key:
            if self.record_timeline != (self.times is not None):
                self._timeline_switch()
            owner = self.owner
            mode = (0 if owner.directed else 1) | (2 if owner.want_parents else 0) | \
                (8 if self.settle else 0) | (16 if self.settle and self.chase else 0) | \
                (min(max(int(self.small_max), 0), 255) << 8) | \
                (min(max(int(self.barrier_backoff_ns) // 8, 0), 255) << 16) | \
                (min(max(int(self.one_block_max), 0), 255) << 24)
            if self.relax_queue_limit != self._queue_limit:
                self._params()
            self._settings = (_fn(self.kernel()).kernel.ptr, mode, bool(self.cooperative))
            self._settings_key = key
        return self._settings

    def _kernel_building(self) -> bool:
        """The update in place of the kernel while its module builds (see :meth:`run`):
        True when it did it."""
        instance = UPDATE_KERNELS.get(self.kernel())
        if instance is None or not building(_CU, (instance,)):
            self._building = False          # built (or never listed): no more checks
            return False
        self._rebuild(self.n)
        g = self.owner.graph
        self._stats[:] = 0
        self._stats[0] = self.n              # every level set, every list read
        self._stats[3] = g.num_edges * (1 if self.owner.directed else 2)
        self._pending = False
        return True

    def _bind_tables(self, deg, ptr, ideg, iptr) -> None:
        """The vertex tables' addresses into the launch arguments (again only when the
        tables are other objects: the id space outgrew them, or a directed graph's)."""
        self._tables = (deg, ptr)
        self._args[1:5] = (deg.data.ptr, ptr.data.ptr, ideg.data.ptr, iptr.data.ptr)

    def run(self, dels, ins) -> None:
        """Launch the update of one batch: deletions ``dels`` and insertions ``ins``
        ((src, dst) int32 device arrays of the change, or None), already applied to the
        graph. No synchronisation, allocation or read-back: the batch's addresses, counts and
        the mode go into the preallocated argument buffer of one launch. The path is one
        function of plain steps, the arrays' attributes read directly (an update's host part
        runs with cold caches, right after the graph's change: every object and function it
        touches costs).

        While the update kernel's module is still being built in the background (a first
        run, :func:`hornet.core.cuda.prebuild`), the levels are recomputed from scratch
        instead (exact; the static BFS's module builds in a fraction of the time)."""
        if self._building and self._kernel_building():
            return
        owner = self.owner
        rev = owner._reverse
        mult = 1 if rev is not None else 2
        # the batch's arrays as they are when int32 and contiguous (EdgeChange arrays), else
        # converted (kept referenced until the launch: the kernel reads them)
        if dels is None:
            ds = dd = None
            dsp = ddp = nd = 0
        else:
            ds, dd = dels
            if not (_FAST_ATTRS and ds.dtype is _I32 and dd.dtype is _I32 and
                    ds._c_contiguous and dd._c_contiguous):
                ds, dd = _pair_i32(ds, dd)
            dsp = ds.data.ptr
            ddp = dd.data.ptr
            nd = ds.size * mult
        if ins is None:
            is_ = id_ = None
            isp = idp = ni = 0
        else:
            is_, id_ = ins
            if not (_FAST_ATTRS and is_.dtype is _I32 and id_.dtype is _I32 and
                    is_._c_contiguous and id_._c_contiguous):
                is_, id_ = _pair_i32(is_, id_)
            isp = is_.data.ptr
            idp = id_.data.ptr
            ni = is_.size * mult
        g = owner.graph
        # the vertex tables themselves (updated in place by every change; the kernel reads
        # ids < n only): no view to make after each update
        deg, ptr = g.vertex_table()
        tables = self._tables
        if rev is not None:
            self._bind_tables(deg, ptr, *rev.vertex_table())
        elif tables is None or deg is not tables[0] or ptr is not tables[1]:
            self._bind_tables(deg, ptr, deg, ptr)
        # stored entries: both directions of an undirected graph's edges, or a directed
        # graph's edges and those of its reverse index
        entries = 2 * g.num_edges
        reserved = self._reserved
        if entries > reserved[0] or ni > reserved[1]:
            self._reserve(entries, ni)
        key = _settings_of(self)
        if key != self._settings_key:
            self._launch_settings(key)
        kernel, mode, cooperative = self._settings
        mode |= self.parity << 2
        grid = self.grid(nd + ni)
        if self.direct_launch:
            _pack_batch(self._args, 40, dsp, ddp, isp, idp, nd, ni, self.n, mode)
            if cooperative:
                _driver.launchCooperativeKernel(kernel, grid, 1, 1, BLOCK, 1, 1, 0,
                                                _current_stream().ptr, self._arg_ptrs_address)
            else:
                _driver.launchKernel(kernel, grid, 1, 1, BLOCK, 1, 1, 0, _current_stream().ptr,
                                     self._arg_ptrs_address, 0)
        else:
            empty = self._empty
            deg, ptr = self._tables
            ideg, iptr = (deg, ptr) if rev is None else rev.vertex_table()
            _fn(self.kernel())((grid,), (BLOCK,),
                   (self.params, deg, ptr, ideg, iptr, empty if ds is None else ds,
                    empty if dd is None else dd, empty if is_ is None else is_,
                    empty if id_ is None else id_, np.int64(nd), np.int64(ni),
                    np.int64(self.n), np.uint32(mode).view(np.int32)),
                   enable_cooperative_groups=True)
        self._set = self.parity
        self.parity ^= 1
        self._pending = True

    def clear_stats(self) -> None:
        """The statistics of an update that changed nothing."""
        self._pending = False
        self._stats[:] = 0
        self._one_block = False

    @property
    def stats(self) -> np.ndarray:
        """int64 (len(STAT_NAMES),) of the last update (its counters come from the device
        when first asked for). Raises RuntimeError if a grid barrier of an update timed out
        or a loop past its bound (the state is then invalid)."""
        if self._pending:
            c = self.counters[self._set * _C_WORDS:(self._set + 1) * _C_WORDS].get()
            if int(self.barrier[2].get()):
                raise RuntimeError("dbfs_update: a grid barrier or a work queue waited past "
                                   "its limit, or a loop ran past its bound; the dynamic BFS "
                                   "state is invalid")
            self._stats[:] = (int(c[_C_CHANGED]), int(c[_C_MARKED]), int(c[_C_SEEDS]),
                              int(c[_C_SCANNED]), int(c[_C_LEVELS]))
            self._one_block = bool(c[_C_ONE_BLOCK])
            self._pending = False
        return self._stats

    @property
    def one_block_used(self) -> bool:
        """Whether the last update went on in one block after its counts step (see
        ``one_block_max``; read with the statistics)."""
        self.stats
        return self._one_block


_I32 = np.dtype(np.int32)
#: the batch's launch arguments (arguments 5-12, 8 bytes each: four addresses, nd, ni, n, and
#: the int mode in the low half of the last) written into the argument buffer at once
_pack_batch = struct.Struct("<8Q").pack_into
_I64 = np.dtype(np.int64)
#: the settings a launch is made for, read in one call (``GPUState._launch_settings``'s key)
_settings_of = operator.attrgetter(
    "async_queue", "kernel_name", "small_max", "barrier_backoff_ns", "cooperative",
    "record_timeline", "relax_queue_limit", "one_block_max", "settle", "chase")
#: the driver module (its launch functions looked up at each call, so that a tool may wrap
#: them) and the current stream's getter
_driver = cupy.cuda.driver if cupy is not None else None
_current_stream = cupy.cuda.get_current_stream if cupy is not None else None
#: CuPy arrays expose their contiguity as a plain field (read without making the strides)
_FAST_ATTRS = cupy is not None and hasattr(cupy.ndarray, "_c_contiguous")


def _dense(a, dtype) -> bool:
    """a is a 1-D array of dtype (a np.dtype) with unit stride (the dtype by identity first,
    NumPy's and CuPy's int32 being one object)."""
    return (a.dtype is dtype or a.dtype == dtype) and a.ndim == 1 and \
        (a.shape[0] < 2 or a.strides[0] == a.itemsize)


def _i32(a):
    """a as a contiguous 1-D int32 CuPy array (no copy when it already is one)."""
    if _dense(a, _I32):
        return a
    return cupy.ascontiguousarray(cupy.asarray(a).astype(cupy.int32, copy=False)).ravel()


def _pair_i32(s, d):
    """(s, d) as contiguous 1-D int32 CuPy arrays."""
    return _i32(s), _i32(d)


def _arrays(view):
    """(degree int32, edge_ptr int64) of a view, contiguous on the device."""
    deg, ptr = view.degree, view.edge_ptr
    if not _dense(deg, _I32):
        deg = cupy.ascontiguousarray(deg.astype(cupy.int32, copy=False))
    if not _dense(ptr, _I64):
        ptr = cupy.ascontiguousarray(ptr.astype(cupy.int64, copy=False))
    return deg, ptr
