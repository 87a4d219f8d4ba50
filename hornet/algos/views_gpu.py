"""GPU input views: the device twin of :mod:`hornet.algos.views` (CuPy + CUDA C++).

A GPU graph, a GPU :class:`~hornet.adjacency.AdjacencyView`, a CSR pair of CuPy arrays or a
``cupyx.scipy.sparse`` matrix becomes a checked, sorted, duplicate-free GPU view here, cleaned
on the device (kernels in ``views.cu``); also the view helpers the GPU algorithms share
(:func:`coo`, :func:`symmetrized`, :func:`edge_list`). Only counts
cross to the host.
"""
from __future__ import annotations

import os

import numpy as np

from hornet.adjacency import AdjacencyView, check_csr_pair
from hornet.core.cuda import cupy, i64, scan
from hornet.core.gather import gather_lists
from .gpu_arrays import address, i32, kernels, launch_tiles, row_offsets, tiles, view_arrays

_fn = kernels(os.path.join(os.path.dirname(os.path.abspath(__file__)), "views.cu"))


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
    deg, ptr = view_arrays(view)
    if off is None:
        off, total = scan(deg)
    src = cupy.empty(total if want_src else 1, dtype=cupy.int32)
    dst = cupy.empty(total, dtype=cupy.int32)
    if total:
        tseg, nt = tiles(_fn, off, deg.shape[0], total)
        launch_tiles(_fn, "view_coo", nt, (ptr, off, tseg, i64(total), np.int32(want_src), src, dst))
    return (src if want_src else None), dst


def _loops_and_asymmetry(view: AdjacencyView, check_symmetry: bool):
    deg, ptr = view_arrays(view)
    off, total = scan(deg)
    counts = cupy.zeros(2, dtype=cupy.uint64)
    if total:
        tseg, nt = tiles(_fn, off, deg.shape[0], total)
        launch_tiles(_fn, "loops_and_asymmetry", nt, (deg, ptr, off, tseg, i64(total),
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
    deg, ptr = view_arrays(view)
    off, total = scan(deg)
    src, dst = coo(view, off=off, total=total)
    keys = _pair_keys(src, dst)
    order = cupy.argsort(keys)
    sk = keys[order]
    first = cupy.ones(total, dtype=cupy.bool_)
    if total > 1:
        first[1:] = sk[1:] != sk[:-1]
    sel = order[first]
    indptr = row_offsets(src[sel], n)
    new = AdjacencyView.from_csr(indptr, dst[sel], directed=view.directed, sorted=True)
    ptrs, keep = {}, list(new.owner)
    if view.property_ptrs:
        for name, (pptr, dt) in view.property_ptrs.items():
            vals = cupy.empty(total, dtype=dt)
            gather_lists(pptr, deg, off[:-1], vals)
            v2 = cupy.ascontiguousarray(vals[sel])
            ptrs[name] = (address(v2) + v2.dtype.itemsize * indptr[:-1], np.dtype(dt))
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
    return AdjacencyView.from_csr(row_offsets(s, n), d, directed=False, sorted=True)


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
    check_csr_pair(indptr, indices)
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
    view = AdjacencyView.from_csr(csr.indptr.astype(cupy.int64), i32(csr.indices),
                                  directed=True, weights=data)
    if not view.sorted:
        view = sorted_view(view)
    if directed is None:
        directed = not is_symmetric(view)
    return with_directed(view, bool(directed))
