"""Turning whatever the user passes into the :class:`~hornet.adjacency.AdjacencyView` kernels read.

Every algorithm in :mod:`hornet.algos` has ONE implementation over an ``AdjacencyView``; this
module is the only place that knows about the other input kinds:

- an object with ``.adjacency()`` (:class:`hornet.Graph`): its own view, no copy;
- an ``AdjacencyView``: used as is;
- an ``(indptr, indices)`` pair (CSR, NumPy): viewed without copying when its rows are sorted and
  duplicate-free, else a sorted, de-duplicated copy is made;
- a ``scipy.sparse`` matrix or array: converted to CSR, duplicates summed (so the values stay
  those of ``A @ x``), indices sorted; its values become the edge property ``"weight"``.

For the last two kinds the graph is undirected when its pattern is symmetric (both directions
stored), directed otherwise, unless ``directed=`` says so.

GPU inputs (a ``hornet.Graph(device="gpu")`` or its view, a CSR pair of CuPy arrays, a
``cupyx.scipy.sparse`` matrix) give a GPU view, cleaned the same way on the device
(:mod:`hornet.algos.views_gpu`); the algorithms then run their CUDA versions.

It also holds the CSR helpers the algorithms share: sorting/de-duplicating a view, the
underlying undirected simple graph of a view (:func:`symmetrized`), and the edge listing that
matches ``hornet.Graph.edges()`` (:func:`edge_list`).
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from hornet.adjacency import AdjacencyView, check_csr_pair
from hornet.core.chunking import SERIAL_WORK, threads_for
from hornet.core.pointers import int32_view, view as ptr_view
from hornet.core.search import lower_bound
from ..core.jit import njit, part_range, split_kernel

__all__ = ["as_adjacency", "input_size", "sized", "sorted_view", "storage_order",
           "storage_ranks", "symmetrized",
           "edge_list", "is_symmetric",
           "csr_from_coo", "gather_csr", "entry_offsets", "require_cpu", "on_gpu"]


# --------------------------------------------------------------------------------------------
# Public entry point


def as_adjacency(obj: Any, *, directed: bool | None = None, sort: bool = True,
                 properties: bool = True) -> AdjacencyView:
    """Normalise ``obj`` to an :class:`AdjacencyView` (on the device that holds it).

    Parameters
    ----------
    obj : hornet.Graph, AdjacencyView, (indptr, indices) pair, or scipy.sparse matrix
        See the module docstring. ``indptr`` has V+1 entries, ``indices`` are vertex ids.
    directed : bool, optional
        Directedness of a CSR pair or scipy matrix. ``None``: undirected iff the pattern is
        symmetric. Ignored for a Graph or a view (they know).
    sort : bool, default True
        Return a view whose lists are ascending and duplicate-free (copying only if needed).
    properties : bool, default True
        False: the caller reads no edge property, so a Graph's view may leave out the
        property addresses (cheaper to make).

    Returns
    -------
    AdjacencyView: on the host, or on the GPU (``device == "gpu"``) when ``obj`` is there (a
    GPU Graph or view, a CSR pair of CuPy arrays, a cupyx.scipy.sparse matrix)

    Examples
    --------
    >>> import numpy as np
    >>> v = as_adjacency((np.array([0, 1, 2]), np.array([1, 0])))
    >>> v.num_vertices, v.directed, v.degree.tolist()
    (2, False, [1, 1])
    """
    if isinstance(obj, AdjacencyView):
        view = obj
    elif hasattr(obj, "adjacency") and callable(obj.adjacency):
        try:
            view = obj.adjacency(properties=properties)
        except TypeError:                  # an adjacency() without the option
            view = obj.adjacency()
    elif _is_scipy_sparse(obj):
        view = _from_scipy(obj, directed)
    elif _is_cupy_sparse(obj):
        from . import views_gpu
        view = views_gpu.view_from_sparse(obj, directed)
    elif isinstance(obj, (tuple, list)) and len(obj) == 2:
        if _is_device_array(obj[0]) or _is_device_array(obj[1]):
            from . import views_gpu
            view = views_gpu.view_from_csr_pair(obj[0], obj[1], directed)
        else:
            view = _from_csr_pair(obj[0], obj[1], directed)
    else:
        raise TypeError(
            "expected a hornet.Graph, an AdjacencyView, an (indptr, indices) pair or a "
            f"scipy.sparse matrix, got {type(obj).__name__}")
    if view.device == "gpu":
        from . import views_gpu
        views_gpu.check_view(view)
        if sort and not view.sorted:
            view = views_gpu.sorted_view(view)
        return view
    require_cpu(view)
    if sort and not view.sorted:
        view = sorted_view(view)
    return view


def storage_order(view: AdjacencyView, *, count_call: str | None = None):
    """The order in which a kernel that streams every list should visit the view's rows, or
    None for the id order (memoized on the view).

    A view whose owner knows how its lists are stored (a :class:`hornet.Graph`:
    ``vertices_in_storage_order()``, size class by size class, each block array front to
    back) gets that order: int32 (R,) on the view's device, the R vertices holding entries.
    A CSR's rows are stored in id order: None.

    ``count_call``: the name of a caller that pays for the order only from its second call on
    the same view (the view is replaced by the graph's next update): its first call gets None.
    """
    return _memo_from_owner(view, "vertices_in_storage_order", "storage_order", count_call)


def storage_ranks(view: AdjacencyView, *, count_call: str | None = None):
    """``(rank, total)`` of the view's lists in storage order (see
    ``hornet.Graph.storage_ranks``: int64 (V,) on the view's device, distinct in
    [0, total) for the vertices with entries, -1 for the others), or None for a view whose
    owner does not know its storage (a CSR: id order). Memoized on the view.

    ``count_call``: the name of a caller that uses the order only from its second call on
    the same view (the view is replaced by the graph's next update): its first call gets
    None.
    """
    return _memo_from_owner(view, "storage_ranks", "storage_ranks", count_call)


def _memo_from_owner(view: AdjacencyView, method: str, key: str, count_call: str | None):
    """``view.owner.<method>()`` memoized in ``view.derived[key]``; None when the owner has
    no such method, or (with ``count_call``) on that caller's first call on the view."""
    compute = getattr(view.owner, method, None)
    if compute is None:
        return None
    if count_call is not None:
        calls_key = ("calls", count_call)
        calls = view.derived[calls_key] = view.derived.get(calls_key, 0) + 1
        if calls < 2:
            return None
    memo = view.derived.get(key)
    if memo is None:
        memo = view.derived[key] = compute()
    return memo


def require_cpu(view: AdjacencyView) -> None:
    """Raise unless ``view`` is a host view (for code that has no GPU version)."""
    if view.device != "cpu":
        raise NotImplementedError(
            "this operation has no GPU version; use a CPU graph (device='cpu') or pass its "
            "CSR (g.to_csr()) copied to the host")


def on_gpu(obj: Any) -> bool:
    """Whether ``obj`` lives on the GPU (a GPU Graph or view, a CSR pair of CuPy arrays, a
    cupyx.scipy.sparse matrix), decided without converting it."""
    if isinstance(obj, AdjacencyView):
        return obj.device == "gpu"
    if hasattr(obj, "adjacency") and callable(obj.adjacency):
        dev = getattr(obj, "device", None)
        return (dev if isinstance(dev, str) else obj.adjacency().device) == "gpu"
    if _is_cupy_sparse(obj):
        return True
    if isinstance(obj, (tuple, list)) and len(obj) == 2:
        return _is_device_array(obj[0]) or _is_device_array(obj[1])
    return False


def input_size(obj: Any) -> int:
    """Cheap estimate of an input's size (stored entries + vertices), without converting it."""
    try:
        if isinstance(obj, AdjacencyView):
            if obj.num_vertices >= SERIAL_WORK:        # big enough already: skip the O(V) sum
                return int(obj.num_vertices)
            return int(obj.num_vertices) + int(np.asarray(obj.degree).sum())
        if hasattr(obj, "num_edges") and hasattr(obj, "num_vertices"):
            return int(obj.num_vertices) + 2 * int(obj.num_edges)
        if _is_scipy_sparse(obj):
            return int(obj.shape[0]) + int(obj.nnz)
        if isinstance(obj, (tuple, list)) and len(obj) == 2:
            return len(obj[0]) + len(obj[1])
    except Exception:          # pragma: no cover - estimate only
        pass
    return 1 << 62


def sized(fn):
    """Decorator: run ``fn(g, ...)`` single-threaded when ``g`` is small (see threads_for)."""
    @functools.wraps(fn)
    def wrapper(g, *args, **kwargs):
        with threads_for(input_size(g)):
            return fn(g, *args, **kwargs)
    return wrapper


# --------------------------------------------------------------------------------------------
# Other input kinds


def _is_scipy_sparse(obj) -> bool:
    mod = type(obj).__module__
    if not mod.startswith("scipy.sparse"):
        return False
    import scipy.sparse as sp
    return sp.issparse(obj)


def _is_cupy_sparse(obj) -> bool:
    return type(obj).__module__.startswith("cupyx.scipy.sparse")


def _is_device_array(a) -> bool:
    return type(a).__module__.startswith("cupy")


def _from_scipy(mat, directed):
    if mat.ndim != 2 or mat.shape[0] != mat.shape[1]:
        raise ValueError(f"adjacency matrix must be square, got shape {mat.shape}")
    csr = mat.tocsr(copy=True)
    csr.sum_duplicates()            # canonical: sorted indices, no duplicates (values summed)
    indptr = np.asarray(csr.indptr, dtype=np.int64)
    indices = np.ascontiguousarray(csr.indices, dtype=np.int32)
    data = np.ascontiguousarray(csr.data)
    if data.dtype.kind not in "biuf":
        raise TypeError(f"matrix values must be real numbers, got dtype {data.dtype}")
    view = AdjacencyView.from_csr(indptr, indices, directed=True, weights=data, sorted=True)
    if directed is None:
        directed = not is_symmetric(view)
    return _with_directed(view, bool(directed))


def _from_csr_pair(indptr, indices, directed):
    indptr = np.asarray(indptr)
    indices = np.asarray(indices)
    check_csr_pair(indptr, indices)
    view = AdjacencyView.from_csr(indptr, indices, directed=True)
    if not view.sorted:
        view = sorted_view(view)
    if directed is None:
        directed = not is_symmetric(view)
    return _with_directed(view, bool(directed))


def _with_directed(view: AdjacencyView, directed: bool) -> AdjacencyView:
    if view.directed == directed:
        return view
    return AdjacencyView(view.num_vertices, view.degree, view.edge_ptr, directed, view.sorted,
                         view.device, dict(view.property_ptrs), view.owner)


# --------------------------------------------------------------------------------------------
# CSR helpers


def entry_offsets(degree: np.ndarray) -> np.ndarray:
    """int64 (V+1): exclusive prefix sum of ``degree`` (the row order of stored entries)."""
    off = np.zeros(degree.shape[0] + 1, dtype=np.int64)
    np.cumsum(degree, out=off[1:])
    return off


@split_kernel(threshold=0)
def _gather_indices(deg, ptr, off, out, part, parts):
    for v in range(*part_range(deg.shape[0], part, parts)):
        d = deg[v]
        if d:
            row = int32_view(ptr[v], d)
            base = off[v]
            for j in range(d):
                out[base + j] = row[j]


@split_kernel(threshold=0)
def _gather_prop(deg, pptr, off, like, out, part, parts):
    for v in range(*part_range(deg.shape[0], part, parts)):
        d = deg[v]
        if d:
            row = ptr_view(pptr[v], d, like)
            base = off[v]
            for j in range(d):
                out[base + j] = row[j]


def gather_csr(view: AdjacencyView, props: bool = True):
    """Contiguous copy of a view: ``(indptr int64 (V+1), indices int32, {name: values})``."""
    deg = np.asarray(view.degree)
    off = entry_offsets(deg)
    ind = np.empty(int(off[-1]), dtype=np.int32)
    _gather_indices(deg, np.asarray(view.edge_ptr), off, ind)
    out = {}
    if props:
        for name, (pptr, dt) in view.property_ptrs.items():
            vals = np.empty(ind.shape[0], dtype=dt)
            _gather_prop(deg, np.asarray(pptr), off, np.empty(0, dt), vals)
            out[name] = vals
    return off, ind, out


@njit
def _counting_sort(keys, order, num_keys, out):
    """Stable counting sort of the positions ``order`` by ``keys[order]`` (into ``out``);
    returns the bucket offsets (num_keys + 1)."""
    cnt = np.zeros(num_keys + 1, np.int64)
    for i in range(order.shape[0]):
        cnt[keys[order[i]] + 1] += 1
    for v in range(num_keys):
        cnt[v + 1] += cnt[v]
    fill = cnt[:-1].copy()
    for i in range(order.shape[0]):
        p = order[i]
        k = keys[p]
        out[fill[k]] = p
        fill[k] += 1
    return cnt


@split_kernel(threshold=0)
def _mark_unique(indptr, dst, perm, keep, newdeg, part, parts):
    n = indptr.shape[0] - 1
    for v in range(*part_range(n, part, parts)):
        c = 0
        for p in range(indptr[v], indptr[v + 1]):
            if p > indptr[v] and dst[perm[p]] == dst[perm[p - 1]]:
                keep[p] = 0
            else:
                keep[p] = 1
                c += 1
        newdeg[v] = c


@split_kernel(threshold=0)
def _compact_rows(indptr, dst, perm, keep, newptr, ind_out, perm_out, part, parts):
    n = indptr.shape[0] - 1
    for v in range(*part_range(n, part, parts)):
        q = newptr[v]
        for p in range(indptr[v], indptr[v + 1]):
            if keep[p]:
                ind_out[q] = dst[perm[p]]
                perm_out[q] = perm[p]
                q += 1


def csr_from_coo(src, dst, num_vertices: int, *, dedupe: bool = True):
    """Sorted CSR of the entries ``(src[i], dst[i])`` (two stable counting-sort passes,
    by dst then by src, so equal entries keep their input order).

    Returns ``(indptr int64 (V+1), indices int32, perm int64)`` where ``perm[p]`` is the input
    position the stored entry ``p`` came from (the first one, when duplicates are dropped), so
    edge properties follow with ``values[perm]``.
    """
    src = np.ascontiguousarray(src, dtype=np.int32)
    dst = np.ascontiguousarray(dst, dtype=np.int32)
    m = src.shape[0]
    by_dst = np.empty(m, np.int64)
    _counting_sort(dst, np.arange(m, dtype=np.int64), num_vertices, by_dst)
    perm = np.empty(m, np.int64)
    indptr = _counting_sort(src, by_dst, num_vertices, perm)
    if not dedupe:
        return indptr, np.ascontiguousarray(dst[perm]), perm
    keep = np.empty(m, np.uint8)
    newdeg = np.empty(num_vertices, np.int64)
    _mark_unique(indptr, dst, perm, keep, newdeg)
    newptr = entry_offsets(newdeg)
    ind2 = np.empty(int(newptr[-1]), np.int32)
    perm2 = np.empty(int(newptr[-1]), np.int64)
    _compact_rows(indptr, dst, perm, keep, newptr, ind2, perm2)
    return newptr, ind2, perm2


@split_kernel(threshold=0)
def _row_ids(off, out, part, parts):
    for v in range(*part_range(off.shape[0] - 1, part, parts)):
        for p in range(off[v], off[v + 1]):
            out[p] = v


def sorted_view(view: AdjacencyView) -> AdjacencyView:
    """A sorted, duplicate-free copy of ``view`` (properties follow; the first duplicate wins)."""
    off, ind, props = gather_csr(view)
    src = np.empty(ind.shape[0], np.int32)
    _row_ids(off, src)
    indptr, ind2, perm = csr_from_coo(src, ind, view.num_vertices)
    new = AdjacencyView.from_csr(indptr, ind2, directed=view.directed, sorted=True)
    ptrs = {}
    keep = list(new.owner)
    for name, vals in props.items():
        v2 = np.ascontiguousarray(vals[perm])
        ptrs[name] = (_addr(v2) + v2.dtype.itemsize * indptr[:-1], v2.dtype)
        keep.append(v2)
    return AdjacencyView(new.num_vertices, new.degree, new.edge_ptr, new.directed, True,
                         "cpu", ptrs, tuple(keep))


def _addr(a: np.ndarray) -> int:
    return int(a.ctypes.data) if a.size else 0


@split_kernel(threshold=0, combine=sum)
def _symmetric_kernel(deg, ptr, part, parts):
    """Stored (u, v) without their (v, u), over this part's rows."""
    b = 0
    for u in range(*part_range(deg.shape[0], part, parts)):
        d = deg[u]
        if d:
            row = int32_view(ptr[u], d)
            for j in range(d):
                v = row[j]
                dv = deg[v]
                if dv == 0:
                    b += 1
                else:
                    other = int32_view(ptr[v], dv)
                    p = lower_bound(other, 0, dv, u)
                    if p == dv or other[p] != u:
                        b += 1
    return b


def is_symmetric(view: AdjacencyView) -> bool:
    """Whether every stored (u, v) has its (v, u) (``view`` must be sorted)."""
    if not view.sorted:
        view = sorted_view(view)
    return _symmetric_kernel(np.asarray(view.degree), np.asarray(view.edge_ptr)) == 0


@split_kernel(threshold=0)
def _both_directions(deg, ptr, off, src, dst, part, parts):
    """Write (u, v) and (v, u) for every stored entry with u != v; self-loops become (-1, -1)."""
    m = off[deg.shape[0]]
    for u in range(*part_range(deg.shape[0], part, parts)):
        d = deg[u]
        if d:
            row = int32_view(ptr[u], d)
            for j in range(d):
                v = row[j]
                p = off[u] + j
                if v == u:
                    src[p] = -1
                    dst[p] = -1
                    src[m + p] = -1
                    dst[m + p] = -1
                else:
                    src[p] = u
                    dst[p] = v
                    src[m + p] = v
                    dst[m + p] = u


def symmetrized(view: AdjacencyView) -> AdjacencyView:
    """The underlying undirected simple graph of ``view``: both directions, no self-loops.

    An undirected input is returned as is when it already holds no self-loops. Properties are
    dropped (this is a structure for triangle-type algorithms).
    """
    if not view.directed and view.sorted and not has_self_loops(view):
        return view
    deg = np.asarray(view.degree)
    off = entry_offsets(deg)
    m = int(off[-1])
    src = np.empty(2 * m, np.int32)
    dst = np.empty(2 * m, np.int32)
    _both_directions(deg, np.asarray(view.edge_ptr), off, src, dst)
    keep = src >= 0
    src, dst = src[keep], dst[keep]
    indptr, ind, _ = csr_from_coo(src, dst, view.num_vertices)
    return AdjacencyView.from_csr(indptr, ind, directed=False, sorted=True)


@split_kernel(threshold=0, combine=sum)
def _self_loops(deg, ptr, part, parts):
    """Stored (u, u) over this part's rows."""
    b = 0
    for u in range(*part_range(deg.shape[0], part, parts)):
        d = deg[u]
        if d:
            row = int32_view(ptr[u], d)
            for j in range(d):
                if row[j] == u:
                    b += 1
    return b


def has_self_loops(view: AdjacencyView) -> bool:
    return _self_loops(np.asarray(view.degree), np.asarray(view.edge_ptr)) > 0


@split_kernel(threshold=0)
def _upper_counts(deg, ptr, directed, cnt, part, parts):
    for u in range(*part_range(deg.shape[0], part, parts)):
        d = deg[u]
        if d == 0:
            cnt[u] = 0
        elif directed:
            cnt[u] = d
        else:
            row = int32_view(ptr[u], d)
            cnt[u] = d - lower_bound(row, 0, d, u + 1)


@split_kernel(threshold=0)
def _fill_edges(deg, ptr, directed, eoff, src, dst, part, parts):
    for u in range(*part_range(deg.shape[0], part, parts)):
        d = deg[u]
        if d == 0:
            continue
        row = int32_view(ptr[u], d)
        first = 0 if directed else lower_bound(row, 0, d, u + 1)
        q = eoff[u]
        for j in range(first, d):
            src[q] = u
            dst[q] = row[j]
            q += 1


def edge_list(view: AdjacencyView):
    """``(src, dst)`` int32 arrays listed like ``hornet.Graph.edges()``.

    Undirected: each edge once with ``src < dst`` (self-loops left out), in row order; directed:
    every stored entry in row order. Row order is lexicographic when the view is sorted.
    A GPU view gives CuPy arrays.
    """
    if view.device == "gpu":
        from . import views_gpu
        return views_gpu.edge_list(view)
    deg = np.asarray(view.degree)
    ptr = np.asarray(view.edge_ptr)
    cnt = np.empty(deg.shape[0], np.int64)
    _upper_counts(deg, ptr, view.directed, cnt)
    eoff = entry_offsets(cnt)
    m = int(eoff[-1])
    src = np.empty(m, np.int32)
    dst = np.empty(m, np.int32)
    _fill_edges(deg, ptr, view.directed, eoff, src, dst)
    return src, dst
