"""Dynamic triangle counting: global count, per-vertex counts and per-edge support kept current
batch by batch (Makkar, Bader, Green, "Exact and Parallel Triangle Counting in Dynamic Graphs",
HiPC 2017, in batch form).

    >>> import hornet, numpy as np
    >>> g = hornet.Graph.from_edges([0, 1], [1, 2], device="cpu")
    >>> tc = DynamicTriangleCount(g)
    >>> tc.update(g.insert_edges([0], [2]))
    >>> tc.count, tc.per_vertex.tolist(), tc.per_edge().tolist()
    (1, [1, 1, 1], [1, 1, 1])
    >>> tc.support_of(np.array([2]), np.array([0])).tolist()
    [1]

How a batch is counted. Insertions (the batch B is already in the graph): for every batch
edge (u, v) and every common neighbour w of u and v, let m be the number of the other two
edges (u, w), (v, w) that are also in B, and add 6 / (m + 1) (6, 3 or 2). A triangle holding k
batch edges is found k times, each time with weight 6 / k: the sum divided by 6 is exactly the
number of new triangles, so a triangle whose three edges arrive together counts once. Each
find adds its weight to the triangle's three vertices and three edges too: integer arithmetic
in units of 1/6 (the state is kept in those units; after a whole batch every total is a
multiple of 6). Deletions: the same sum over the deleted batch D on the graph before the batch,
G_before = G_now + D, whose lists are G_now's list merged with D's (disjoint): the lost
triangles.

Per edge the supports live in an :class:`~hornet.algos.edge_table.EdgeTable` keyed by the
edge (``DynamicTriangleCount.table``, column ``"support6"``: support in units of 1/6; read
:meth:`DynamicTriangleCount.support_of`); per vertex an int64 array over the id space (units
of 1/6), grown by doubling. The batch's own adjacency (mirrored, sorted:
:func:`~hornet.algos.batch_adjacency.batch_adjacency`) answers "is (u, w) in the batch" by binary
search. Work per batch: the sort of the batch, and for each batch edge the length of its
endpoint's shorter list times a binary search; never a pass over the graph (the id-space
array and the table grow by amortised doubling and rehashing).

CPU: Numba kernels, batch edges cut into chunks of about equal work taken dynamically. GPU:
CUDA kernels (``triangles/dynamic.cu``), one thread per (batch edge, element of the shorter
list), the work scanned on the device; the count stays on the device (read by :attr:`count`).

Directed graphs, as the static functions: triangles of the underlying undirected simple graph
U (u-v when u->v or v->u; self-loops ignored). U is kept as an undirected ``hornet.Graph``
updated from the same changes: an inserted u->v is offered to U (U inserts {u, v} only when it
is new, i.e. neither direction was present before the batch); a deleted u->v removes {u, v}
from U only when v->u is not in the graph after the batch. U's own change is then counted as
above. :meth:`DynamicTriangleCount.per_edge` gives every directed edge the support of its
undirected edge (0 for a self-loop), aligned with ``g.edges()``.
"""
from __future__ import annotations

import os

import numba
import numpy as np

from hornet.core.atomics import atomic_add
from hornet.core.chunking import chunk_bounds, chunk_bounds_numpy, num_chunks, threads_for
from hornet.core.pointers import int32_view
from hornet.core.search import lower_bound

from ..batch_adjacency import BatchAdjacency, batch_adjacency, has_pair, vertex_range
from ..edge_table import EdgeTable, edge_key, table_find
from ..underlying import undirected_change, undirected_copy
from ...core.jit import njit, part_range, split_kernel

__all__ = ["DynamicTriangleCount"]

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dynamic.cu")
_NAMES = ()                 # (extern "C" kernels only)
_KINDS = ("insert", "delete", "update")
#: batches of at most this many edges are prepared by one block (PREPARE_BLOCK in dynamic.cu)
PREPARE_BLOCK = 1024
#: CPU batches of at most this many edges are cut into chunks in NumPy, larger ones by the
#: parallel kernels (:func:`_work`, :func:`~hornet.core.chunking.chunk_bounds`)
NUMPY_CHUNKING_MAX_BATCH = 1 << 12
#: CPU graphs of at most this many (undirected) edges are built by counting all their edges
#: as one inserted batch (:meth:`DynamicTriangleCount._build_by_update`), not by the static
#: count, whose kernels a short run then never compiles (the batch count costs several
#: times the static count's time per edge: a few milliseconds at this size)
BUILD_BY_UPDATE_MAX_EDGES = 1 << 12


# --------------------------------------------------------------------------------------------
# CPU kernels


@split_kernel(threshold=0)
def _work(deg, bsrc, bdst, bkeys, deleting, work, part, parts):
    """Items of batch edge i: its shorter endpoint list (with the batch's list when deleting)."""
    for i in range(*part_range(bsrc.shape[0], part, parts)):
        u = bsrc[i]
        v = bdst[i]
        lu = np.int64(deg[u])
        lv = np.int64(deg[v])
        if deleting:
            a, b = vertex_range(bkeys, u)
            lu += b - a
            a, b = vertex_range(bkeys, v)
            lv += b - a
        work[i + 1] = min(lu, lv) + 1


def _work_numpy(deg: np.ndarray, batch, deleting: bool) -> np.ndarray:
    """:func:`_work` in NumPy: int64 (B,) items of every batch edge."""
    lu = deg[batch.src].astype(np.int64)
    lv = deg[batch.dst].astype(np.int64)
    if deleting:
        keys = batch.keys
        for ends, lens in ((batch.src, lu), (batch.dst, lv)):
            first = ends.astype(np.int64) << 32
            lens += (np.searchsorted(keys, first + (np.int64(1) << 32))
                     - np.searchsorted(keys, first))
    return np.minimum(lu, lv) + 1


@njit
def _in_list(row, n, w):
    p = lower_bound(row, 0, n, w)
    return p < n and row[p] == w


@njit
def _in_batch_list(bkeys, lo, hi, x, w):
    q = (np.int64(x) << 32) | np.int64(w)
    p = lower_bound(bkeys, lo, hi, q)
    return p < hi and bkeys[p] == q


@split_kernel(nrt=True, threshold=0, combine=sum)
def _count_batch(deg, ptr, bsrc, bdst, bkeys, deleting, sign, bounds, pv6,
                 tkeys, tshift, tval, track, part, parts):
    """Weighted triangles of the batch edges (see the module docstring); returns the signed
    total in units of 1/6 and adds to ``pv6`` (per vertex) and ``tval`` (per edge slot)."""
    nchunks = bounds.shape[0] - 1
    totals = np.zeros(nchunks, np.int64)
    for c in range(*part_range(nchunks, part, parts)):
        local = 0
        for i in range(bounds[c], bounds[c + 1]):
            u = bsrc[i]
            v = bdst[i]
            ulo = uhi = vlo = vhi = 0
            if deleting:
                ulo, uhi = vertex_range(bkeys, u)
                vlo, vhi = vertex_range(bkeys, v)
            # x: the endpoint with the shorter list, y: the other
            if deg[u] + (uhi - ulo) <= deg[v] + (vhi - vlo):
                x, y, xlo, xhi, ylo, yhi = u, v, ulo, uhi, vlo, vhi
            else:
                x, y, xlo, xhi, ylo, yhi = v, u, vlo, vhi, ulo, uhi
            dx = deg[x]
            dy = deg[y]
            rx = int32_view(ptr[x] if dx else 0, dx)
            ry = int32_view(ptr[y] if dy else 0, dy)
            acc = 0
            for p in range(dx + (xhi - xlo)):
                if p < dx:
                    w = rx[p]
                else:
                    w = np.int32(bkeys[xlo + p - dx] & 0xFFFFFFFF)
                found = _in_list(ry, dy, w)
                if not found and deleting:
                    found = _in_batch_list(bkeys, ylo, yhi, y, w)
                if not found:
                    continue
                xw = has_pair(bkeys, x, w)
                yw = has_pair(bkeys, y, w)
                d = sign * (6 // (1 + np.int64(xw) + np.int64(yw)))
                acc += d
                atomic_add(pv6, w, d)
                if track:
                    if not (deleting and xw):
                        atomic_add(tval, table_find(tkeys, tshift, edge_key(x, w)), d)
                    if not (deleting and yw):
                        atomic_add(tval, table_find(tkeys, tshift, edge_key(y, w)), d)
            if acc:
                atomic_add(pv6, x, acc)
                atomic_add(pv6, y, acc)
                if track and not deleting:
                    atomic_add(tval, table_find(tkeys, tshift, edge_key(x, y)), acc)
            local += acc
        totals[c] = local
    return totals.sum()


# --------------------------------------------------------------------------------------------
# the algorithm


class DynamicTriangleCount:
    """Triangle count, per-vertex counts and per-edge support of a graph, kept current.

    Parameters
    ----------
    g : hornet.Graph
        CPU or GPU, directed or undirected. Built with one static count (a CPU graph of at
        most :data:`BUILD_BY_UPDATE_MAX_EDGES` edges: its edges counted as one inserted batch).
    track_edges : bool, default True
        Keep per-edge support (:meth:`per_edge`); False saves the edge table and its updates.

    Call :meth:`update` with every :class:`~hornet.EdgeChange` that ``g.insert_edges``,
    ``g.delete_edges``, ``g.update_edges`` or ``g.delete_vertices`` returns, right after that
    call (a refused batch returns no change: nothing to call).

    Attributes
    ----------
    count : int
        ``triangle_count(g)``.
    per_vertex : int64 array (g.num_vertices,) on g's device
        ``triangles_per_vertex(g)`` (a fresh array each read).
    """

    def __init__(self, g, track_edges: bool = True):
        from .static import edge_support, triangles_per_vertex
        if not (hasattr(g, "insert_edges") and hasattr(g, "adjacency")):
            raise TypeError(f"expected a hornet.Graph, got {type(g).__name__}")
        self.graph = g
        self.device = g.device
        self.track_edges = bool(track_edges)
        xp = self._xp = np if g.device == "cpu" else _cupy()
        self._und = undirected_copy(g) if g.directed else g
        und = self._und
        n = und.num_vertices
        if self.device == "cpu" and und.num_edges <= BUILD_BY_UPDATE_MAX_EDGES:
            self._build_by_update(und)
            return
        pv = xp.asarray(triangles_per_vertex(und)).astype(xp.int64)
        self._pv6 = xp.zeros(max(16, n), dtype=xp.int64)
        self._pv6[:n] = 6 * pv
        total = int(pv.sum()) // 3
        if self.device == "cpu":
            self._count6 = 6 * total
        else:
            self._count6 = xp.full(1, 6 * total, dtype=xp.int64)
        self.table = None
        if self.track_edges:
            s, d = und.edges(dense=True)
            sup = xp.asarray(edge_support(und)).astype(xp.int64)
            self.table = EdgeTable(self.device, {"support6": np.int64},
                                   capacity=int(2 * s.shape[0]) + 16)
            self.table.insert(s, d, support6=6 * sup)

    def _build_by_update(self, und) -> None:
        """The state of an empty graph, then every edge of ``und`` counted as one inserted
        batch (CPU): exact by the batch counting of the module docstring, and a short run
        compiles the update kernels only, not the static count's."""
        n = und.num_vertices
        self._pv6 = np.zeros(max(16, n), dtype=np.int64)
        self._count6 = 0
        s, d = und.edges(dense=True)
        self.table = None
        if self.track_edges:
            self.table = EdgeTable("cpu", {"support6": np.int64},
                                   capacity=int(2 * s.shape[0]) + 16)
        if s.shape[0]:
            self._update_cpu(und.adjacency(properties=False), s, d, False)

    # ------------------------------------------------------------------ results
    @property
    def count(self) -> int:
        c = self._count6 if self.device == "cpu" else int(self._count6.get()[0])
        return int(c) // 6

    @property
    def per_vertex(self):
        n = self.graph.num_vertices
        self._grow(n)
        return self._pv6[:n] // 6

    def per_edge(self):
        """Support of every edge, aligned with ``g.edges()`` (int32, on g's device); directed:
        each stored edge gets its undirected edge's support (0 for a self-loop)."""
        if self.table is None:
            raise RuntimeError("built with track_edges=False: no per-edge support")
        s, d = self.graph.edges(dense=True)
        return (self.table.get("support6", s, d) // 6).astype(self._xp.int32)

    def support_of(self, u, v):
        """Support (int64, on g's device) of the edges {u[i], v[i]} of the underlying
        undirected graph (0 where there is no such edge)."""
        if self.table is None:
            raise RuntimeError("built with track_edges=False: no per-edge support")
        return self.table.get("support6", u, v) // 6

    def _grow(self, n: int) -> None:
        cap = self._pv6.shape[0]
        if n > cap:
            new = self._xp.zeros(max(n, 2 * cap), dtype=self._xp.int64)
            new[:cap] = self._pv6
            self._pv6 = new

    # ------------------------------------------------------------------ updates
    def update(self, change) -> None:
        """Apply one EdgeChange of the graph (after the graph applied it).

        Raises ValueError (state unchanged) for a change of another kind or device.
        """
        kind = getattr(change, "kind", None)
        if kind not in _KINDS:
            raise ValueError(f"expected an EdgeChange (kind insert/delete/update), got {change!r}")
        if kind == "update" or len(change) == 0:
            return
        src, dst = change.src, change.dst
        if (self.device == "gpu") == isinstance(src, np.ndarray):
            raise ValueError(f"the change's arrays are not on the graph's device ({self.device})")
        if self.graph.directed:
            src, dst = undirected_change(self.graph, self._und, kind, src, dst)
            if src.shape[0] == 0:
                return
        deleting = kind == "delete"
        view = self._und.adjacency(properties=False)
        self._grow(view.num_vertices)
        if self.device == "cpu":
            self._update_cpu(view, src, dst, deleting)
        else:
            self._update_gpu(view, src, dst, deleting)

    def _update_cpu(self, view, src, dst, deleting: bool) -> None:
        batch = batch_adjacency(src, dst)
        deg = np.asarray(view.degree)
        ptr = np.asarray(view.edge_ptr)
        nb = len(batch)
        track = self.table is not None
        if track and not deleting:
            self.table.insert_new(batch.src, batch.dst)
        work = np.zeros(nb + 1, np.int64)
        if nb <= NUMPY_CHUNKING_MAX_BATCH:
            # the same items and chunks in NumPy: no kernels to compile for them
            np.cumsum(_work_numpy(deg, batch, deleting), out=work[1:])
            bounds = chunk_bounds_numpy(work, num_chunks(int(work[-1]), grain=1 << 12))
        else:
            with threads_for(4 * nb):
                _work(deg, batch.src, batch.dst, batch.keys, deleting, work)
            np.cumsum(work, out=work)
            bounds = chunk_bounds(work, num_chunks(int(work[-1]), grain=1 << 12))
        t = self.table
        tkeys = t.keys if track else np.zeros(1, np.int64)
        tval = t.columns["support6"] if track else np.zeros(1, np.int64)
        with threads_for(int(work[-1])), numba.parallel_chunksize(1):
            total = _count_batch(deg, ptr, batch.src, batch.dst, batch.keys, deleting,
                                 -1 if deleting else 1, bounds, self._pv6, tkeys,
                                 t.shift if track else 0, tval, track)
        self._count6 += int(total)
        if track and deleting:
            self.table.delete_present(batch.src, batch.dst)

    def apply_gpu_batch(self, batch: BatchAdjacency, deleting: bool) -> None:
        """The GPU update from the caller's batch adjacency of an undirected graph's change
        (``batch``: :class:`~hornet.algos.batch_adjacency.BatchAdjacency` on the GPU of the
        change's distinct pairs, already applied to the graph; ``deleting``: a deletion).
        For a dynamic algorithm that validated the change and built the batch itself (no
        second sort, no check)."""
        view = self._und.adjacency(properties=False)
        self._grow(view.num_vertices)
        self._update_gpu(view, batch.src, batch.dst, deleting, batch)

    def _workspace(self, nb: int):
        """Per-batch-edge scratch (ex, ey int32 (nb,), xr, yr int64 (2 nb,), wpre int64
        (nb + 1,)), kept between updates and grown by doubling."""
        cp = self._xp
        ws = getattr(self, "_ws", None)
        if ws is None or ws[0].shape[0] < nb:
            size = max(nb, 2 * (ws[0].shape[0] if ws is not None else 64))
            ws = self._ws = (cp.empty(size, dtype=cp.int32), cp.empty(size, dtype=cp.int32),
                             cp.empty(2 * size, dtype=cp.int64),
                             cp.empty(2 * size, dtype=cp.int64),
                             cp.empty(size + 1, dtype=cp.int64))
        return ws

    def _update_gpu(self, view, src, dst, deleting: bool, batch=None) -> None:
        from hornet.core.cuda import BLOCK, _max_grid, function, i64, launch
        cp = self._xp
        if batch is None:
            batch = batch_adjacency(src, dst)
        nb = len(batch)
        deg = view.degree
        ptr = view.edge_ptr
        track = self.table is not None
        if track and not deleting:
            self.table.insert_new(batch.src, batch.dst)
        ex, ey, xr, yr, wpre = self._workspace(nb)
        if nb <= PREPARE_BLOCK:
            # one block: the work and its scan in one launch
            function(_CU, "dtc_prepare_scan", _NAMES)(
                (1,), (PREPARE_BLOCK,),
                (deg, batch.src, batch.dst, i64(nb), batch.keys, np.int32(deleting), ex, ey,
                 xr, yr, wpre))
        else:
            wpre[0] = 0
            launch(function(_CU, "dtc_prepare", _NAMES), nb,
                   (deg, batch.src, batch.dst, i64(nb), batch.keys, np.int32(deleting), ex,
                    ey, xr, yr, wpre[1:]))
            wpre = cp.cumsum(wpre[:nb + 1])
        t = self.table
        dummy = self._pv6            # (an unused pointer argument when not tracking)
        # items are counted on the device: size the grid from the batch (grid-stride)
        grid = int(min(_max_grid(), max(1, -(-nb * 64 // BLOCK))))
        function(_CU, "dtc_count", _NAMES)(
            (grid,), (BLOCK,),
            (deg, ptr, ex, ey, xr, yr, wpre, i64(nb), batch.keys, np.int32(deleting),
             i64(-1 if deleting else 1), self._count6, self._pv6,
             t.keys if track else dummy, np.int32(t.shift if track else 0),
             t.columns["support6"] if track else dummy, np.int32(track)))
        if track and deleting:
            self.table.delete_present(batch.src, batch.dst)


def _cupy():
    import cupy
    return cupy
