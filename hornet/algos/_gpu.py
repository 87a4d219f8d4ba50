"""GPU (CuPy + CUDA C++) versions of the static algorithms of :mod:`hornet.algos`.

The public functions of ``hornet.algos`` call these when their input lives on the GPU (a
``hornet.Graph(device="gpu")``, a GPU :class:`~hornet.adjacency.AdjacencyView`, a CSR pair of
CuPy arrays or a ``cupyx.scipy.sparse`` matrix). Results are CuPy arrays on the device, with the
dtypes, shapes and meaning of the CPU versions (per-edge results aligned with ``g.edges()``).

Everything per-edge stays on the device: kernels in ``gpu_kernels.cu`` (compiled once per
process by ``cupy.RawModule``) read the graph through its pointer view, so the same kernel runs
on the dynamic graph's blocks and on a contiguous CSR. Only counts (totals of scans, frontier
sizes, numbers of peeled edges) cross to the host.

- SpMV: warp-segmented (each warp walks ranges of 512 entries, 32 at a time: coalesced loads,
  rows found among the next 32 row ends by warp shuffles, per-row sums by a segmented warp
  scan; atomics only for rows crossing ranges), or merge-path per thread (Merrill & Garland;
  ``SPMV_KERNEL = "merge"``). ``A^T x`` by float64 atomics. From the second call on an
  unchanged dynamic graph, its rows are visited in storage order (size class by size class,
  each block array front to back, instead of a jump between size classes at almost every
  row) and ``y`` is gathered from the per-row sums.
- BFS: top-down steps with one thread per frontier edge (exclusive scan of the frontier's
  degrees, binary search of each thread's vertex), bottom-up steps when the frontier is large
  (Beamer's heuristic, the same switching rule as the CPU version).
- Triangles: degree orientation (one warp per vertex, ballot compaction), then one item per
  (oriented edge, element of its shorter list), binary-searched in the longer list.
- k-truss: support by the triangle kernel, then peeling with the delta algorithm (support
  decremented by triangle subtraction, Green et al. 2017) or by recounting (``"iterative"``),
  on a contiguous CSR with a per-edge state that is compacted when half of it is dead; a
  round is two launches and one read of the number of edges it leaves to peel. (The
  CPU version peels a copy of a hornet.Graph with ``delete_edges``; on the GPU every input is
  peeled this way.) ``max_truss`` bisects over k from checkpoints instead of peeling level by
  level: O(log k_max) peelings, each from the last non-empty truss.
"""
from __future__ import annotations

import copy

import os
from dataclasses import dataclass

import numpy as np

from hornet.adjacency import AdjacencyView
from hornet.core.cuda import BLOCK, as_i64, cupy, function, i64, launch, scan

from ._input import storage_order

__all__ = ["spmv", "bfs", "triangle_count", "triangles_per_vertex", "edge_support",
           "truss_numbers", "k_truss", "max_truss", "edge_list", "symmetrized", "sorted_view",
           "is_symmetric", "has_self_loops", "view_from_csr_pair", "view_from_sparse"]

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu_kernels.cu")

#: C++ type of each weight dtype the SpMV kernels read directly (others: gathered to float64)
_WEIGHT_TYPES = {
    np.dtype(np.bool_): "unsigned char", np.dtype(np.uint8): "unsigned char",
    np.dtype(np.int8): "signed char", np.dtype(np.int16): "short",
    np.dtype(np.uint16): "unsigned short", np.dtype(np.int32): "int",
    np.dtype(np.uint32): "unsigned int", np.dtype(np.int64): "long long",
    np.dtype(np.uint64): "unsigned long long", np.dtype(np.float32): "float",
    np.dtype(np.float64): "double",
}
_NAMES = tuple(
    [f"{k}<float, 0, {p}>" for k in ("spmv_warp", "spmv_merge") for p in (0, 1)]
    + [f"{k}<{c}, 1, {p}>" for k in ("spmv_warp", "spmv_merge")
       for c in sorted(set(_WEIGHT_TYPES.values())) for p in (0, 1)]
    + ["orient_pass<0>", "orient_pass<1>", "tc_count<0>", "tc_count<1>", "tc_count<2>"])

#: SpMV kernel: "warp" (warp-segmented rows, default) or "merge" (merge-path per thread)
SPMV_KERNEL = "warp"
#: SpMV visits a dynamic graph's rows in storage order from the second call on an unchanged
#: graph on (the first call, and every call when False: in id order)
SPMV_STORAGE_ORDER = True
SPMV_RANGE = 512             # SPMV_RANGE in gpu_kernels.cu (entries per warp range)
SPMV_TILE = 256 * 8          # SPMV_BLOCK * SPMV_IPT in gpu_kernels.cu
TC_IPT = 4                   # TC_IPT in gpu_kernels.cu
DEAD, ALIVE, GOING = 0, 1, 2
ALPHA = 15
BETA = 18


def _fn(name: str):
    if BLOCK != 256:         # the kernels' shared tiles assume 256-thread blocks
        raise RuntimeError("hornet.algos GPU kernels need BLOCK == 256")
    return function(_CU, name, _NAMES)


# --------------------------------------------------------------------------------------------
# small helpers


def _i32(a):
    return cupy.ascontiguousarray(cupy.asarray(a).astype(cupy.int32, copy=False))


def _addr(a) -> int:
    return int(a.data.ptr) if a.size else 0


_NULL = np.uint64(0)          # a null pointer argument


def _dummy(dtype):
    return cupy.zeros(1, dtype=dtype)


def _arrays(view: AdjacencyView):
    """(degree int32, edge_ptr int64) of a view, contiguous on the device."""
    return _i32(view.degree), as_i64(view.edge_ptr)


def _tiles(off, nseg: int, total: int, tile: int = BLOCK):
    """Tile bounds for the ``tiled_items`` kernels (tiles of ``tile`` items): the list of each
    tile's first item, then ``nseg - 1``; returns (tseg int64 (ntiles + 1), ntiles)."""
    ntiles = -(-int(total) // tile)
    tseg = cupy.empty(ntiles + 1, dtype=cupy.int64)
    launch(_fn("tile_segments"), ntiles + 1, (off, i64(nseg), i64(tile), i64(ntiles), tseg))
    return tseg, ntiles


def _launch_tiles(name: str, ntiles: int, args: tuple) -> None:
    launch(_fn(name), ntiles, args, threads_per_item=BLOCK)


def _indptr(rows, n: int):
    """int64 (n + 1) row offsets of ascending int32 row ids."""
    if rows.size == 0:
        return cupy.zeros(n + 1, dtype=cupy.int64)
    counts = cupy.bincount(rows, minlength=n)
    return scan(counts)[0]


def to_host(a):
    """NumPy copy of a CuPy array (NumPy arrays and scalars pass through)."""
    if isinstance(a, cupy.ndarray):
        return a.get()
    return a


# --------------------------------------------------------------------------------------------
# views


def check_view(view: AdjacencyView) -> None:
    """Raise NotImplementedError unless CuPy is present and the GPU view's arrays are CuPy
    arrays (a "gpu" view over host memory would make the kernels read host addresses)."""
    if cupy is None:
        raise NotImplementedError("GPU graphs need CuPy (pip install cupy-cuda12x)")
    if not (isinstance(view.degree, cupy.ndarray) and isinstance(view.edge_ptr, cupy.ndarray)):
        raise NotImplementedError("a GPU view must hold CuPy arrays (device addresses); "
                                  "got host arrays")


def coo(view: AdjacencyView, want_src: bool = True, off=None, total: int | None = None):
    """Every stored entry in row order: ``(src int32 | None, dst int32)``."""
    deg, ptr = _arrays(view)
    if off is None:
        off, total = scan(deg)
    src = cupy.empty(total if want_src else 1, dtype=cupy.int32)
    dst = cupy.empty(total, dtype=cupy.int32)
    if total:
        tseg, nt = _tiles(off, deg.shape[0], total)
        _launch_tiles("view_coo", nt, (ptr, off, tseg, i64(total), np.int32(want_src), src, dst))
    return (src if want_src else None), dst


def _loops_and_asymmetry(view: AdjacencyView, check_symmetry: bool):
    deg, ptr = _arrays(view)
    off, total = scan(deg)
    counts = cupy.zeros(2, dtype=cupy.uint64)
    if total:
        tseg, nt = _tiles(off, deg.shape[0], total)
        _launch_tiles("loops_and_asymmetry", nt, (deg, ptr, off, tseg, i64(total),
                                                  np.int32(check_symmetry), counts))
    c = counts.get()
    return int(c[0]), int(c[1])


def has_self_loops(view: AdjacencyView) -> bool:
    return _loops_and_asymmetry(view, False)[0] > 0


def is_symmetric(view: AdjacencyView) -> bool:
    """Whether every stored (u, v) has its (v, u)."""
    if not view.sorted:
        view = sorted_view(view)
    return _loops_and_asymmetry(view, True)[1] == 0


def with_directed(view: AdjacencyView, directed: bool) -> AdjacencyView:
    if view.directed == directed:
        return view
    return AdjacencyView(view.num_vertices, view.degree, view.edge_ptr, directed, view.sorted,
                         view.device, dict(view.property_ptrs), view.owner)


def _pair_keys(src, dst):
    return (src.astype(cupy.uint64) << 32) | dst.astype(cupy.uint64)


def sorted_view(view: AdjacencyView) -> AdjacencyView:
    """A sorted, duplicate-free copy of a GPU view (properties follow; one of the duplicates'
    values is kept)."""
    n = view.num_vertices
    deg, ptr = _arrays(view)
    off, total = scan(deg)
    src, dst = coo(view, off=off, total=total)
    keys = _pair_keys(src, dst)
    order = cupy.argsort(keys)
    sk = keys[order]
    first = cupy.ones(total, dtype=cupy.bool_)
    if total > 1:
        first[1:] = sk[1:] != sk[:-1]
    sel = order[first]
    indptr = _indptr(src[sel], n)
    new = AdjacencyView.from_csr(indptr, dst[sel], directed=view.directed, sorted=True)
    ptrs, keep = {}, list(new.owner)
    if view.property_ptrs:
        from hornet.batch.gpu.kernels import gather_lists
        for name, (pptr, dt) in view.property_ptrs.items():
            vals = cupy.empty(total, dtype=dt)
            gather_lists(pptr, deg, off[:-1], vals)
            v2 = cupy.ascontiguousarray(vals[sel])
            ptrs[name] = (_addr(v2) + v2.dtype.itemsize * indptr[:-1], np.dtype(dt))
            keep.append(v2)
    return AdjacencyView(new.num_vertices, new.degree, new.edge_ptr, new.directed, True,
                         "gpu", ptrs, tuple(keep))


def symmetrized(view: AdjacencyView) -> AdjacencyView:
    """The underlying undirected simple graph (both directions, no self-loops) of a GPU view;
    an undirected sorted view without self-loops is returned as is."""
    if not view.directed and view.sorted and not has_self_loops(view):
        return view
    n = view.num_vertices
    src, dst = coo(view)
    s = cupy.concatenate([src, dst])
    d = cupy.concatenate([dst, src])
    keep = s != d
    keys = cupy.unique(_pair_keys(s[keep], d[keep]))
    s = (keys >> 32).astype(cupy.int32)
    d = (keys & 0xFFFFFFFF).astype(cupy.int32)
    return AdjacencyView.from_csr(_indptr(s, n), d, directed=False, sorted=True)


def edge_list(view: AdjacencyView):
    """``(src, dst)`` int32 CuPy arrays listed like ``hornet.Graph.edges()`` (see
    :func:`hornet.algos.edge_list`)."""
    src, dst = coo(view)
    if view.directed:
        return src, dst
    up = dst > src
    return src[up], dst[up]


def view_from_csr_pair(indptr, indices, directed) -> AdjacencyView:
    """GPU view of a CSR pair of CuPy arrays (validated like the CPU input; rows sorted and
    de-duplicated when needed; undirected iff symmetric when ``directed`` is None)."""
    indptr = cupy.asarray(indptr)
    indices = cupy.asarray(indices)
    if indptr.ndim != 1 or indices.ndim != 1:
        raise ValueError("indptr and indices must be 1-D")
    if indptr.dtype.kind not in "iu" or indices.dtype.kind not in "iu":
        raise TypeError("indptr and indices must hold integers")
    if indptr.shape[0] < 1:
        raise ValueError("indptr must have at least one element")
    n = indptr.shape[0] - 1
    if (int(indptr[0]) != 0 or int(indptr[-1]) != indices.shape[0]
            or (n > 0 and bool(cupy.any(indptr[1:] < indptr[:-1])))):
        raise ValueError("indptr must rise from 0 to len(indices)")
    if indices.size and (int(indices.min()) < 0 or int(indices.max()) >= n):
        raise ValueError(f"indices must lie in [0, {n})")
    view = AdjacencyView.from_csr(indptr, indices, directed=True)
    if not view.sorted:
        view = sorted_view(view)
    if directed is None:
        directed = not is_symmetric(view)
    return with_directed(view, bool(directed))


def view_from_sparse(mat, directed) -> AdjacencyView:
    """GPU view of a ``cupyx.scipy.sparse`` matrix (duplicates summed; values = "weight")."""
    if len(mat.shape) != 2 or mat.shape[0] != mat.shape[1]:
        raise ValueError(f"adjacency matrix must be square, got shape {mat.shape}")
    csr = mat.tocsr(copy=True)
    csr.sum_duplicates()
    data = cupy.ascontiguousarray(csr.data)
    if data.dtype.kind not in "biuf":
        raise TypeError(f"matrix values must be real numbers, got dtype {data.dtype}")
    view = AdjacencyView.from_csr(csr.indptr.astype(cupy.int64), _i32(csr.indices),
                                  directed=True, weights=data)
    if not view.sorted:
        view = sorted_view(view)
    if directed is None:
        directed = not is_symmetric(view)
    return with_directed(view, bool(directed))


# --------------------------------------------------------------------------------------------
# SpMV


def spmv(view: AdjacencyView, x, weight=None, transpose: bool = False):
    """``y = A x`` (or ``A^T x``) on the GPU; float64 CuPy array (see hornet.algos.spmv)."""
    n = view.num_vertices
    x = cupy.asarray(x)
    if x.ndim != 1 or x.shape[0] != n:
        raise ValueError(f"x must have shape ({n},), got {x.shape}")
    if x.dtype.kind not in "biuf":
        raise TypeError(f"x must hold real numbers (bool, int or float), got dtype {x.dtype}")
    x = cupy.ascontiguousarray(x, dtype=cupy.float64)
    weighted = weight is not None
    ctype = "float"
    if weighted:
        if weight not in view.property_ptrs:
            raise KeyError(f"no edge property {weight!r}; the graph has "
                           f"{sorted(view.property_ptrs) or 'none'}")
        wdt = np.dtype(view.property_ptrs[weight][1])
        if wdt.kind not in "biuf":
            raise TypeError(f"edge property {weight!r} must be real-valued, got dtype {wdt}")
        ctype = _WEIGHT_TYPES.get(wdt, "double")
    # the storage order pays from about the second SpMV on the same view (see _visit_rows):
    # a graph updated between single SpMVs never makes it
    ordered = SPMV_STORAGE_ORDER and storage_order(view, count_call="spmv") is not None
    rows = _visit_rows(view, ordered)
    wptr = rows.ptr
    if weighted:
        wptr = rows.property_ptr(view, weight)
        if wdt not in _WEIGHT_TYPES:              # e.g. float16: gather the values as float64
            from hornet.batch.gpu.kernels import gather_lists
            vals = cupy.empty(rows.nnz, dtype=wdt)
            gather_lists(wptr, rows.deg, rows.off[:-1], vals)
            vals = vals.astype(cupy.float64)
            wptr = _addr(vals) + 8 * rows.off[:-1]
    push = bool(transpose and (view.directed or weighted))
    if n == 0 or rows.nnz == 0:
        return cupy.zeros(n, dtype=cupy.float64)
    gathered = not push and rows.vid is not None          # y is written whole by the gather
    y = (cupy.empty if gathered else cupy.zeros)(n, dtype=cupy.float64)
    _spmv_rows(SPMV_KERNEL, ctype, weighted, push, rows, wptr, x, y)
    return y


def _spmv_rows(kernel, ctype, weighted, push, rows, wptr, x, y, y_rows=None) -> None:
    """SpMV over the visited ``rows`` into ``y`` (float64 (V,); zeroed, unless the pull over a
    visiting order other than the id order writes it whole).

    Pull: the sum of visited row r lands at ``y_rows[r]`` (zeroed float64 (count + 1,), made
    when None); with a visiting order other than the id order, ``y`` is then gathered from
    it: one coalesced write of ``y`` (storing the sums at scattered vertex ids costs more than
    the order gains, H100 kron22). Transpose: atomics straight into ``y``.
    """
    if push or rows.vid is None:
        y_rows = y
    elif y_rows is None:
        y_rows = cupy.zeros(rows.count + 1, dtype=cupy.float64)
    _spmv_launch(kernel, ctype, weighted, push, rows.ptr, wptr, rows.off, rows.count, rows.nnz,
                 x, y_rows, rows.range_rows() if kernel == "warp" else None, rows.vid)
    if y_rows is not y:
        cupy.take(y_rows, rows.slot, out=y)


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

    def range_rows(self):
        """The visited row holding entry ``k * SPMV_RANGE``, for every k (memoized)."""
        key = ("spmv_rows", SPMV_RANGE)
        if key not in self.memo:
            self.memo[key] = _tiles(self.off, self.count, self.nnz, tile=SPMV_RANGE)[0]
        return self.memo[key]


def _visit_rows(view: AdjacencyView, ordered: bool = True) -> _VisitRows:
    """The view's rows in the order a kernel visits them (memoized on the view).

    ``ordered``: in the order their lists are stored (``_input.storage_order``), so that a
    kernel streaming every list reads memory front to back. For a CSR that is the id order.
    A dynamic graph keeps each size class in its own block arrays, so the id order jumps
    between them at almost every row; its rows are then visited in
    ``vertices_in_storage_order()``: size classes from the smallest blocks up, each in
    address order (empty rows are not visited). The class order matters: a range of short
    rows costs the warp SpMV more than a range of one long row, and with the hubs last its
    last wave is light. In plain address order the classes fall wherever their arrays
    landed: 8 builds of Kronecker 20 ran at 0.80-0.95x the CSR's speed. In storage order,
    H100, weighted SpMV kernel over 8 builds each: Kronecker 20 / 21 / 22 at 0.935-0.963 /
    0.908-0.917 / 0.925-0.934x the CSR (id order: median 0.921 / 0.895 / 0.893;
    ``bench/spmv_order_spread_gpu.py``). Making the order costs about 1 ms on Kronecker
    20-22 (2.5 to 0.6 SpMVs). Otherwise (or for a view whose owner does not know its
    storage): id order.
    """
    vid = storage_order(view) if ordered else None
    key = ("visit_rows", vid is not None)
    rows = view.derived.get(key)
    if rows is None:
        if vid is None:
            deg, ptr = _arrays(view)
            off, nnz = _degree_scan(view, deg)
            rows = _VisitRows(ptr, deg, off, nnz, None, None, {})
        else:
            rows = _rows_in_order(view, vid)
        view.derived[key] = rows
    return rows


def _rows_in_order(view: AdjacencyView, vid) -> _VisitRows:
    """The view's rows ``vid`` (int32 CuPy, distinct vertices holding every entry) visited in
    that order."""
    deg, ptr = _arrays(view)
    vid = _i32(vid)
    count = int(vid.shape[0])
    slot = cupy.full(view.num_vertices, count, dtype=cupy.int32)
    slot[vid] = cupy.arange(count, dtype=cupy.int32)
    deg = deg[vid]
    off, nnz = scan(deg)
    return _VisitRows(ptr[vid], deg, off, nnz, vid, slot, {})


def _degree_scan(view: AdjacencyView, deg):
    """(exclusive scan of the view's degrees with the total last, total), once per view."""
    memo = view.derived.get("degree_scan")
    if memo is None:
        memo = view.derived["degree_scan"] = scan(deg)
    return memo


def _spmv_launch(kernel, ctype, weighted, push, ptr, wptr, off, n, nnz, x, y,
                 rows=None, vid=None) -> None:
    """One SpMV launch over ``n`` visited rows (plus its tiny partition kernel, unless ``rows``
    is given: the row of each SPMV_RANGE-entry range's first entry) into a zeroed ``y``
    (pull: indexed by visited row; transpose: by vertex). ``vid``: the vertex of each visited
    row (int32 CuPy; the transpose reads ``x`` there), None when row r is vertex r."""
    targs = f"<{ctype}, {int(weighted)}, {int(push)}>"
    vid = _NULL if vid is None else vid
    if kernel == "warp":
        nranges = -(-nnz // SPMV_RANGE)
        if rows is None:
            rows, _ = _tiles(off, n, nnz, tile=SPMV_RANGE)
        launch(_fn("spmv_warp" + targs), nranges,
               (ptr, wptr, off, rows, i64(n), i64(nnz), i64(nranges), x, y, vid),
               threads_per_item=32)
    elif kernel == "merge":
        ntiles = -(-(n + nnz) // SPMV_TILE)
        tile_rows = cupy.empty(ntiles + 1, dtype=cupy.int64)
        launch(_fn("merge_path_tiles"), ntiles + 1,
               (off, i64(n), i64(nnz), i64(ntiles), tile_rows))
        launch(_fn("spmv_merge" + targs), ntiles,
               (ptr, wptr, off, tile_rows, i64(n), i64(nnz), i64(ntiles), x, y, vid),
               threads_per_item=BLOCK)
    else:
        raise ValueError(f"unknown SpMV kernel {kernel!r}")


# --------------------------------------------------------------------------------------------
# BFS


def bfs(view: AdjacencyView, source, *, return_parents=False, direction_optimizing=True,
        reverse=None, alpha=ALPHA, beta=BETA, graph=None):
    """Levels (int32 CuPy, -1 unreached) and optionally parents; see hornet.algos.bfs."""
    n = view.num_vertices
    src = np.atleast_1d(np.asarray(to_host(source)))
    if src.size and src.dtype.kind not in "iu":
        raise TypeError(f"source must be integer vertex ids, got dtype {src.dtype}")
    src = src.astype(np.int64).ravel()
    if src.size and (src.min() < 0 or src.max() >= n):
        raise ValueError(f"source out of range [0, {n})")
    src = np.unique(src).astype(np.int32)
    deg, ptr = _arrays(view)
    ideg, iptr, can_bu = deg, ptr, False
    if direction_optimizing:
        if not view.directed:
            can_bu = True
        else:
            rev = reverse
            if rev is None and graph is not None and hasattr(graph, "reverse_adjacency"):
                rev = graph.reverse_adjacency()
            if rev is not None:
                from ._input import as_adjacency
                rview = as_adjacency(rev, directed=True, sort=False)
                if rview.num_vertices != n:
                    raise ValueError("reverse graph has a different number of vertices")
                if rview.device != "gpu":
                    raise ValueError("the reverse graph of a GPU graph must be on the GPU too")
                ideg, iptr = _arrays(rview)
                can_bu = True
    level = cupy.full(n, -1, dtype=cupy.int32)
    parent = cupy.full(n if return_parents else 1, -1, dtype=cupy.int32)
    if n and src.size:
        _bfs_driver(deg, ptr, ideg, iptr, can_bu, cupy.asarray(src), level, parent,
                    bool(return_parents), max(int(alpha), 1), max(int(beta), 1))
    if return_parents:
        return level, parent
    return level


def _bfs_driver(deg, ptr, ideg, iptr, can_bu, sources, level, parent, want_parent, alpha, beta):
    """Level-synchronous loop; the same switching rule as the CPU driver (Beamer's m_f > m_u /
    alpha with a growing frontier -> bottom-up; frontier < V / beta and shrinking -> top-down).
    Per level: one scan total and one counters read cross to the host."""
    n = deg.shape[0]
    nf = int(sources.shape[0])
    frontier = cupy.empty(n, dtype=cupy.int32)
    other = cupy.empty(n, dtype=cupy.int32)
    frontier[:nf] = sources
    level[sources] = 0
    m_u = int(ideg.sum(dtype=cupy.int64)) - int(ideg[sources].sum(dtype=cupy.int64))
    counters = cupy.zeros(2, dtype=cupy.uint64)
    wp = np.int32(1 if want_parent else 0)
    cur = 0
    bottom_up = False
    listed = True                 # frontier[:nf] holds the frontier (False after bottom-up)
    nf_prev = nf
    m_f = 0
    fpre = None
    while nf > 0:
        if bottom_up and nf < n // beta and nf < nf_prev:
            bottom_up = False
        if not bottom_up:
            if not listed:
                frontier[:nf] = cupy.flatnonzero(level == cur).astype(cupy.int32)
                listed = True
            fpre, m_f = scan(deg[frontier[:nf]])
            if can_bu and m_f > m_u // alpha and nf >= nf_prev:
                bottom_up = True
        nf_prev = nf
        counters.fill(0)
        if bottom_up:
            launch(_fn("bfs_bottom_up"), n, (ideg, iptr, i64(n), level, parent, wp,
                                              np.int32(cur), counters))
            c = counters.get()
            nf = int(c[0])
            m_u -= int(c[1])
            listed = False
        else:
            if m_f == 0:
                break
            tseg, nt = _tiles(fpre, nf, m_f)
            _launch_tiles("bfs_top_down", nt, (ptr, ideg, frontier, fpre, tseg, i64(m_f), level,
                                               parent, wp, np.int32(cur + 1), other, counters))
            c = counters.get()
            nf = int(c[0])
            m_u -= int(c[1])
            frontier, other = other, frontier
        cur += 1


# --------------------------------------------------------------------------------------------
# Triangles


@dataclass
class EdgeIndex:
    """Numbering of the edges {u, v}, u < v, of an undirected sorted GPU view, as
    ``g.edges()``: edge ``eoff[u] + j - lo[u]`` is (u, row_u[j]) for ``j >= lo[u]``."""

    view: AdjacencyView
    deg: object
    ptr: object
    off: object          # int64 (V+1) entry offsets
    total: int           # stored entries
    lo: object           # int64 (V)
    eoff: object         # int64 (V+1)
    num_edges: int
    esrc: object         # int32 (E)
    edst: object         # int32 (E)
    src: object          # int32 (entries): row of every entry
    dst: object          # int32 (entries)

    @classmethod
    def build(cls, view: AdjacencyView) -> "EdgeIndex":
        deg, ptr = _arrays(view)
        n = view.num_vertices
        off, total = scan(deg)
        lo = cupy.empty(n, dtype=cupy.int64)
        launch(_fn("first_above"), n, (deg, ptr, i64(n), lo))
        eoff, E = scan(deg.astype(cupy.int64) - lo)
        src, dst = coo(view, off=off, total=total)
        up = dst > src
        return cls(view, deg, ptr, off, total, lo, eoff, E, src[up], dst[up], src, dst)

    def entry_eids(self):
        """int64 edge id of every stored entry (row order; -1 for a self-loop)."""
        out = cupy.empty(self.total, dtype=cupy.int64)
        if self.total:
            tseg, nt = _tiles(self.off, self.deg.shape[0], self.total)
            _launch_tiles("entry_eids", nt, (self.deg, self.ptr, self.off, tseg, i64(self.total),
                                             self.lo, self.eoff, out))
        return out

    def map_entries(self, view: AdjacencyView):
        """int64 per stored entry of another view: the id of its undirected edge (or -1)."""
        deg, ptr = _arrays(view)
        off, total = scan(deg)
        out = cupy.empty(total, dtype=cupy.int64)
        if total:
            tseg, nt = _tiles(off, deg.shape[0], total)
            _launch_tiles("map_entries", nt, (ptr, off, tseg, i64(total), self.deg, self.ptr,
                                              self.lo, self.eoff, out))
        return out


def orient(deg, ptr, n: int, eptr=None, state=None):
    """Oriented CSR of an undirected sorted graph given by (deg, ptr): each edge once, from
    lower to higher (degree, id), lists ascending. With ``eptr`` (per-vertex addresses of int64
    per-entry edge ids) the ids come along; with ``state`` only ALIVE edges are kept.
    Returns (osrc int32, oind int32, ooff int64 (n+1), oeid int64, m)."""
    use_eid = eptr is not None
    use_state = state is not None
    if use_state and not use_eid:
        raise ValueError("an edge state needs edge ids")
    eptr_a = eptr if use_eid else ptr
    state_a = state if use_state else _dummy(cupy.uint8)
    flags = (np.int32(use_eid), np.int32(use_state), i64(n))
    ocnt = cupy.empty(max(n, 1), dtype=cupy.int64)
    di32, di64 = _dummy(cupy.int32), _dummy(cupy.int64)
    launch(_fn("orient_pass<0>"), n, (deg, ptr, eptr_a, state_a, *flags, ocnt, di64, di32, di64,
                                      di32), threads_per_item=32)
    ooff, m = scan(ocnt[:n])
    oind = cupy.empty(m, dtype=cupy.int32)
    osrc = cupy.empty(m, dtype=cupy.int32)
    oeid = cupy.empty(m if use_eid else 1, dtype=cupy.int64)
    if m:
        launch(_fn("orient_pass<1>"), n, (deg, ptr, eptr_a, state_a, *flags, di64, ooff, oind,
                                          oeid, osrc), threads_per_item=32)
    return osrc, oind, ooff, oeid, m


def count_oriented(oriented, mode: int, num_vertices: int = 0, num_edges: int = 0):
    """(total, per-vertex int64 | None, per-edge int32 | None) of an oriented graph."""
    osrc, oind, ooff, oeid, m = oriented
    total = cupy.zeros(1, dtype=cupy.uint64)
    tri = cupy.zeros(num_vertices if mode == 1 else 1, dtype=cupy.uint64)
    sup = cupy.zeros(num_edges if mode == 2 else 1, dtype=cupy.int32)
    if m:
        work = cupy.empty(m, dtype=cupy.int64)
        launch(_fn("tc_work"), m, (osrc, oind, ooff, i64(m), work))
        wpre, W = scan(work)
        if W:
            tseg, nt = _tiles(wpre, m, W, tile=BLOCK * TC_IPT)
            _launch_tiles(f"tc_count<{mode}>", nt, (osrc, oind, ooff, oeid, wpre, tseg, i64(W),
                                                    total, tri, sup))
    return (int(total.get()[0]),
            tri.view(cupy.int64) if mode == 1 else None,
            sup if mode == 2 else None)


def triangle_count(view: AdjacencyView) -> int:
    und = symmetrized(view)
    deg, ptr = _arrays(und)
    return count_oriented(orient(deg, ptr, und.num_vertices), 0)[0]


def triangles_per_vertex(view: AdjacencyView):
    und = symmetrized(view)
    deg, ptr = _arrays(und)
    n = und.num_vertices
    return count_oriented(orient(deg, ptr, n), 1, num_vertices=n)[1]


def _support(index: EdgeIndex):
    eids = index.entry_eids()
    eptr = _addr(eids) + 8 * index.off[:-1]
    o = orient(index.deg, index.ptr, index.view.num_vertices, eptr=eptr)
    return count_oriented(o, 2, num_edges=index.num_edges)[2]


def _per_input_edge(entry_map, values, fill=0):
    if entry_map is None:
        return values
    out = cupy.full(entry_map.shape[0], fill, dtype=values.dtype)
    ok = entry_map >= 0
    out[ok] = values[entry_map[ok]]
    return out


def edge_support(view: AdjacencyView):
    und = symmetrized(view)
    index = EdgeIndex.build(und)
    sup = _support(index)
    if not view.directed:
        return sup
    return _per_input_edge(index.map_entries(view), sup)


# --------------------------------------------------------------------------------------------
# k-truss

METHODS = ("delta", "iterative")
TRUSS_WARPS = 8192           # warps a peeling round aims to keep busy (about what an H100 holds)
TRUSS_MAX_PARTS = 16         # at most this many warps share one removed edge
#: counters of the last max_truss call (peeling rounds, support recounts, bisection tests)
PEEL_STATS: dict = {}


class _Work:
    """The peeled graph: a contiguous CSR (indptr, ind, per-entry edge ids) compacted to the
    live edges whenever half of its edges are dead. ``stored``: the edges with entries in it
    (two each), ``alive``: the ALIVE ones among them."""

    def __init__(self, index: EdgeIndex):
        self.n = index.view.num_vertices
        self.ind = index.dst
        self.eid = index.entry_eids()       # (no self-loops: the view is symmetrized)
        self._pointers(index.off)
        self.stored = index.num_edges
        self.alive = index.num_edges

    def _pointers(self, indptr):
        self.indptr = indptr
        self.deg = (indptr[1:] - indptr[:-1]).astype(cupy.int32)
        self.ptr = _addr(self.ind) + 4 * indptr[:-1]
        self.eptr = _addr(self.eid) + 8 * indptr[:-1]

    def remove(self, count: int, state) -> None:
        """``count`` more edges are no longer ALIVE (``state`` says so already); compacts when
        half of the stored edges are dead. No host sync: the kept entries are the two of each
        ALIVE edge, 2 * alive, so every size is known here. New arrays every time (never in
        place: the checkpoints of max_k share these by shallow copies)."""
        self.alive -= count
        if self.alive * 2 < self.stored:
            total = int(self.ind.shape[0])
            # pos: exclusive scan of the keep flags with the total last; kept entry t moves
            # to pos[t], so rows stay in order and row v starts at pos[indptr[v]]
            pos = cupy.zeros(total + 1, dtype=cupy.int64)
            pos[1:] = cupy.cumsum(state[self.eid] == ALIVE, dtype=cupy.int64)
            kept = 2 * self.alive
            ind = cupy.empty(kept, dtype=cupy.int32)
            eid = cupy.empty(kept, dtype=cupy.int64)
            launch(_fn("truss_compact"), total, (self.ind, self.eid, pos, i64(total),
                                                 i64(kept), ind, eid))
            self.ind, self.eid = ind, eid
            self._pointers(pos[self.indptr])
            self.stored = self.alive


def _pinned_u64():
    """A one-element uint64 NumPy array in pinned memory (the target of the rounds' reads)."""
    import cupyx
    return cupyx.empty_pinned(1, dtype=np.uint64)


class _Peeler:
    """Peeling of one k-truss problem: per-edge state (ALIVE, GOING, DEAD) and support, the
    live CSR (:class:`_Work`) and the rounds' buffers.

    A delta round is two launches and one 8-byte device-to-host read (see gpu_kernels.cu):
    ``truss_mark`` (the previous round's edges DEAD, this round's GOING, counter zeroed), then
    ``truss_delta`` (a fixed number of warps per removed edge, so no host-side total of the
    work is needed), then the read of the counter (how many edges fell under the threshold).
    A round's edges stay GOING until the next round's ``truss_mark``; the round that finds
    nothing more to peel marks them DEAD itself, so between peelings (``one_k``, the levels
    of ``decompose``, the checkpoints of ``max_k``) no edge is GOING."""

    def __init__(self, index: EdgeIndex, method: str):
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        self.index = index
        self.method = method
        self.E = index.num_edges
        self.state = cupy.ones(self.E, dtype=cupy.uint8)
        self.work = _Work(index)
        self.sup = self._count()
        self._counter = cupy.zeros(1, dtype=cupy.uint64)
        self._counter_host = _pinned_u64()
        self._no_edges = _dummy(cupy.int64)     # stands for an absent edge list in truss_mark
        self._no_truss = _dummy(cupy.int32)
        self._next = [None, None]               # the rounds' output buffers, used in turn
        self._turn = 0
        self._going = None                      # the edges the last round marked GOING
        self._truss = None                      # decompose: truss numbers, set as edges go
        self._level = 0                         # ... to this value
        self.rounds = 0
        self.recounts = 0

    def _count(self):
        w = self.work
        o = orient(w.deg, w.ptr, w.n, eptr=w.eptr, state=self.state)
        return count_oriented(o, 2, num_edges=self.E)[2]

    def scan(self, thr: int):
        """(removals int64, min support over live edges | None when none is live)."""
        alive = self.state == ALIVE
        if thr >= 0:
            return cupy.flatnonzero(alive & (self.sup < thr)), None
        if not bool(alive.any()):
            return cupy.empty(0, dtype=cupy.int64), None
        m = int(cupy.where(alive, self.sup, np.iinfo(np.int32).max).min())
        return cupy.flatnonzero(alive & (self.sup == m)), m

    def _mark(self, rem, mark: int) -> None:
        """One launch: the edges still GOING become DEAD, ``rem`` (int64 edge ids, ALIVE until
        now; None: no edges) becomes ``mark`` (GOING or DEAD) and, when decomposing, gets truss
        number ``_level``; the round's counter is zeroed."""
        prev = self._going
        nprev = 0 if prev is None else int(prev.shape[0])
        nrem = 0 if rem is None else int(rem.shape[0])
        truss = self._truss
        launch(_fn("truss_mark"), max(nprev + nrem, 1),
               (prev if nprev else self._no_edges, i64(nprev),
                rem if nrem else self._no_edges, i64(nrem), np.int32(mark), self.state,
                self._counter, np.int32(truss is not None),
                self._no_truss if truss is None else truss, np.int32(self._level)))
        # (the next mark reads rem: it is the scan's array, or the output buffer that this
        # round's truss_delta does not write and the next round's writes only after that mark)
        self._going = rem if (nrem and mark == GOING) else None

    def peel(self, rem, thr: int):
        """One round: removes ``rem`` (distinct ALIVE edges) and returns the live edges whose
        support fell under ``thr``."""
        self.rounds += 1
        nrem = int(rem.shape[0])
        # removing most of what is left: recounting the survivors' support is cheaper than
        # subtracting the triangles of every removed edge (the result is the same)
        if self.method == "iterative" or 2 * nrem > self.work.alive:
            self.recounts += 1
            self._mark(rem, DEAD)
            self.work.remove(nrem, self.state)
            self.sup = self._count()
            return self.scan(thr)[0]
        self._mark(rem, GOING)
        nxt = self._subtract(rem, thr)
        self.work.remove(nrem, self.state)        # (drops the GOING entries too)
        return nxt

    def _subtract(self, rem, thr: int):
        """Subtract the triangles of ``rem`` (marked GOING) from the live edges' support;
        returns the live edges that fell under ``thr`` (a view of one of two buffers used in
        turn: ``rem`` may live in the other one and is still read by the next mark)."""
        w, ix = self.work, self.index
        nrem = int(rem.shape[0])
        self._turn ^= 1
        if self._next[self._turn] is None:
            self._next[self._turn] = cupy.empty(max(self.E, 1), dtype=cupy.int64)
        nxt = self._next[self._turn]
        # warps per removed edge: enough for a round of few edges to fill the GPU (a warp
        # whose share of the edge's shorter list is empty exits at once)
        parts = min(TRUSS_MAX_PARTS, max(1, -(-TRUSS_WARPS // nrem)))
        launch(_fn("truss_delta"), nrem * parts,
               (w.deg, w.ptr, w.eptr, self.state, rem, i64(nrem), np.int32(parts), ix.esrc,
                ix.edst, self.sup, np.int32(thr), nxt, self._counter), threads_per_item=32)
        self._counter.get(out=self._counter_host)          # the round's one host sync
        k = int(self._counter_host[0])
        if k == 0:
            self._mark(None, DEAD)                 # the peeling ends: its last edges go DEAD
        return nxt[:k]

    def decompose(self):
        truss = cupy.zeros(self.E, dtype=cupy.int32)
        self._truss = truss                        # (each round's marks write the numbers)
        while True:
            rem, m = self.scan(-1)
            if m is None:
                break
            k = m + 3
            thr = k - 2
            self._level = k - 1
            while rem.shape[0]:
                rem = self.peel(rem, thr)
        self._truss = None
        return truss

    def one_k(self, k: int):
        thr = k - 2
        if thr <= 0:
            return self.state
        rem, _ = self.scan(thr)
        while rem.shape[0]:
            rem = self.peel(rem, thr)
        return self.state

    def max_k(self) -> int:
        """k_max by bisection over k, peeling from the last non-empty truss (a checkpoint
        of states and supports: the k-truss contains every larger one), so that only
        O(log k_max) peelings run instead of one per truss level. Leaves ``state`` at the
        k_max-truss; 0 for a graph without edges."""
        self.tests = 0
        if self.E == 0:
            return 0
        lo = 2                                   # every edge is in the 2-truss
        hi = _truss_bound(self.sup[self.state == ALIVE])
        saved = (self.state.copy(), self.sup.copy(), copy.copy(self.work))
        while lo < hi:
            k = (lo + hi + 1) // 2
            self.tests += 1
            self.one_k(k)
            if bool((self.state == ALIVE).any()):
                lo = k
                saved = (self.state.copy(), self.sup.copy(), copy.copy(self.work))
            else:
                hi = k - 1
                state, sup, work = saved
                self.state, self.sup, self.work = state.copy(), sup.copy(), copy.copy(work)
        self.state, self.sup, self.work = saved
        return lo


def _truss_bound(sup) -> int:
    """An upper bound of k_max from the supports: a k-truss holds at least k(k - 1) / 2
    edges (k vertices of degree k - 1 at least), each with support >= k - 2, so k_max is at
    most the largest k with k(k - 1) / 2 supports >= k - 2."""
    m = int(sup.shape[0])
    if m == 0:
        return 2
    desc = cupy.sort(sup)[::-1]
    kmax = int((1 + (1 + 8 * m) ** 0.5) / 2) + 1        # k(k - 1) / 2 <= m
    k = cupy.arange(2, kmax + 1, dtype=cupy.int64)
    need = k * (k - 1) // 2
    ok = (need <= m) & (desc[cupy.minimum(need, m) - 1] >= k - 2)
    return int(cupy.where(ok, k, 2).max())


def _truss_problem(view: AdjacencyView):
    und = symmetrized(view)
    index = EdgeIndex.build(und)
    entry_map = index.map_entries(view) if view.directed else None
    return index, entry_map


def _input_edges(view, index, entry_map):
    if entry_map is None:
        return index.esrc, index.edst
    return edge_list(view)


def truss_numbers(view: AdjacencyView, method: str = "delta"):
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    index, entry_map = _truss_problem(view)
    truss = _Peeler(index, method).decompose()
    return _per_input_edge(entry_map, truss)


def k_truss(view: AdjacencyView, k: int, method: str = "delta"):
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    k = int(k)
    index, entry_map = _truss_problem(view)
    if index.num_edges:
        state = _Peeler(index, method).one_k(k)
    else:
        state = cupy.ones(0, dtype=cupy.uint8)
    keep = _per_input_edge(entry_map, state, fill=0) == ALIVE
    src, dst = _input_edges(view, index, entry_map)
    return src[keep], dst[keep]


def max_truss(view: AdjacencyView, method: str = "delta"):
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    index, entry_map = _truss_problem(view)
    peeler = _Peeler(index, method)
    kmax = peeler.max_k()
    PEEL_STATS.update(rounds=peeler.rounds, recounts=peeler.recounts, tests=peeler.tests)
    if kmax == 0:
        z = cupy.empty(0, dtype=cupy.int32)
        return 0, z, z.copy()
    keep = _per_input_edge(entry_map, peeler.state, fill=0) == ALIVE
    src, dst = _input_edges(view, index, entry_map)
    return kmax, src[keep], dst[keep]
