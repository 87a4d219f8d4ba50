"""Sparse matrix-vector product over a graph's adjacency: ``y = A x`` or ``y = A^T x``.

``A[u, v]`` is the weight of the edge u -> v (the named edge property, or 1). Undirected graphs
store both directions, so ``A`` is symmetric there.

- ``A x`` (pull): one row per vertex, ``y[u] = sum_v A[u, v] x[v]``; rows are cut into many
  more chunks than threads (about equal numbers of entries each), taken dynamically. Each
  ``y[u]`` is summed by one thread in adjacency order: deterministic.
- From the second call on an unchanged :class:`hornet.Graph`, rows are visited in its storage
  order (``Graph.vertices_in_storage_order``: each block array front to back, where the id
  order jumps between size classes at almost every row); the order is sorted once per graph
  state, so a run over the dynamic graph comes close to the same code on a CSR.
- ``A^T x`` (push): ``y[v] += A[u, v] x[u]`` with atomic float adds; the summation order (so
  the last bits) can vary between runs. For an undirected graph without weights ``A^T = A`` and
  the pull kernel is used.

Values are accumulated in float64 whatever the dtypes of ``x`` and of the weights (bool,
integers and floats accepted; complex is refused), and ``y`` is float64.
"""
from __future__ import annotations

import numba
import numpy as np

from hornet.core.atomics import atomic_add
from hornet.core.chunking import num_chunks
from hornet.core.pointers import int32_view, view as ptr_view
from ..views import as_adjacency, on_gpu, sized, storage_order
from ...core.jit import part_range, split_kernel
from ...id_mapping import values_by_vertex

__all__ = ["spmv"]


@split_kernel(threshold=0)
def _spmv_pull(deg, ptr, wptr, wlike, weighted, x, y, ordered, vid, bounds, part, parts):
    # visited row r is vertex vid[r] (vertex r unless ``ordered``), its list deg[r] entries
    # from ptr[r]; chunk c is rows bounds[c] .. bounds[c + 1] - 1
    for c in range(*part_range(bounds.shape[0] - 1, part, parts)):
        for r in range(bounds[c], bounds[c + 1]):
            d = deg[r]
            acc = 0.0
            if d:
                row = int32_view(ptr[r], d)
                if weighted:
                    w = ptr_view(wptr[r], d, wlike)
                    for j in range(d):
                        # (unsigned index: no negative-index wraparound code in the gather)
                        acc += np.float64(w[j]) * x[np.uint32(row[j])]
                else:
                    for j in range(d):
                        acc += x[np.uint32(row[j])]
            y[vid[r] if ordered else r] = acc


@split_kernel(threshold=0)
def _spmv_push(deg, ptr, wptr, wlike, weighted, x, y, ordered, vid, bounds, part, parts):
    for c in range(*part_range(bounds.shape[0] - 1, part, parts)):
        for r in range(bounds[c], bounds[c + 1]):
            d = deg[r]
            xu = x[vid[r] if ordered else r]
            if d == 0 or xu == 0.0:
                continue
            row = int32_view(ptr[r], d)
            if weighted:
                w = ptr_view(wptr[r], d, wlike)
                for j in range(d):
                    atomic_add(y, row[j], np.float64(w[j]) * xu)
            else:
                for j in range(d):
                    atomic_add(y, row[j], xu)


@values_by_vertex
@sized
def spmv(g, x, weight: str | None = None, transpose: bool = False, *,
         dtype=np.float64) -> np.ndarray:
    """``y = A x`` (or ``A^T x``) with ``A[u, v]`` the weight of edge u -> v.

    Parameters
    ----------
    g : hornet.Graph, AdjacencyView, (indptr, indices) or scipy.sparse matrix
        For a scipy matrix its values are the edge property ``"weight"``: pass
        ``weight="weight"`` to multiply by the matrix itself (``weight=None`` uses its pattern).
    x : array-like (V,), dict or table
        bool, integer or float values: an array aligned with the dense ids (for a
        hornet.Graph with a vertex map: with ``g.vertex_ids()``), or values by vertex id, a
        dict ``{id: value}`` or a table (Arrow, pandas) with a ``vertex`` column and one value
        column such as :func:`hornet.algos.to_table` makes; ids are original ids when ``g``
        has a vertex map, and vertices not named get 0.
    weight : str, optional
        Name of the edge property holding ``A``'s values; ``None``: every edge counts 1.
    transpose : bool, default False
        Compute ``A^T x`` (for directed graphs: sums over in-edges).
    dtype : float64 (default) or float32
        The dtype of ``y``. Each row is summed in float64 either way and rounded once (on
        the GPU, a long row summed in pieces adds its pieces in ``dtype``); float32 halves
        the bytes of ``y`` written, which a float32 pipeline (float32 weights and ``x``)
        gains from.

    Returns
    -------
    y : array of ``dtype``, shape (V,) (a CuPy array when ``g`` is on the GPU; there split rows
        are summed with atomics, so the last bits may differ from the CPU's. On the GPU,
        ``A x`` over a hornet.Graph (no weights, float32 or float64 weights) walks its
        block arrays in storage order (``Graph.storage_blocks``) from the first call; on
        other inputs, repeated calls on an unchanged graph visit its rows in storage order
        from the second call)

    Raises
    ------
    ValueError  if ``x`` is not 1-D of length V, or names a vertex twice.
    KeyError    if ``x`` names a vertex the graph does not have.
    TypeError   if ``x`` (or the weight property) is not real-valued, or ``dtype`` is not
                float64 or float32.
    KeyError    if the graph has no edge property ``weight``.

    ``y`` is indexed by dense id: ``hornet.algos.to_table(y, g)`` names it by original ids.

    Examples
    --------
    >>> import hornet                                     # x by original id, y named back
    >>> g = hornet.Graph.from_edges(["a", "b"], ["b", "c"], vertex_map=True, device="cpu")
    >>> hornet.algos.to_table(spmv(g, {"c": 100.0, "a": 1.0}), g).to_pylist()[1]
    {'vertex': 'b', 'value': 101.0}
    >>> import numpy as np
    >>> indptr, indices = np.array([0, 1, 3, 4]), np.array([1, 0, 2, 1])   # path 0-1-2
    >>> spmv((indptr, indices), np.array([1.0, 10.0, 100.0])).tolist()
    [10.0, 101.0, 10.0]
    """
    # (a GPU graph whose SpMV walks its block arrays reads the property's block-array
    # columns directly: its view is made without the per-vertex property addresses, which
    # it adds only when needed)
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"dtype must be float64 or float32, got {dtype}")
    lean = False
    if weight is not None and hasattr(g, "storage_blocks") and on_gpu(g):
        from .gpu import walks_blocks
        lean = walks_blocks(g)
    view = as_adjacency(g, sort=False, properties=weight is not None and not lean)
    if view.device == "gpu":
        from .gpu import spmv as gpu_spmv
        return gpu_spmv(view, x, weight, transpose, dtype)
    n = view.num_vertices
    x = np.asarray(x)
    if x.ndim != 1 or x.shape[0] != n:
        raise ValueError(f"x must have shape ({n},), got {x.shape}")
    if x.dtype.kind not in "biuf":
        raise TypeError(f"x must hold real numbers (bool, int or float), got dtype {x.dtype}")
    x = np.ascontiguousarray(x, dtype=np.float64)
    deg = np.asarray(view.degree)
    ptr = np.asarray(view.edge_ptr)
    if weight is None:
        weighted = False
        wptr = np.zeros(n, np.int64)
        wlike = np.empty(0, np.float64)
    else:
        if weight not in view.property_ptrs:
            raise KeyError(f"no edge property {weight!r}; the graph has "
                           f"{sorted(view.property_ptrs) or 'none'}")
        wptr, wdt = view.property_ptrs[weight]
        if np.dtype(wdt).kind not in "biuf":
            raise TypeError(f"edge property {weight!r} must be real-valued, got dtype {wdt}")
        weighted = True
        wptr = np.asarray(wptr)
        wlike = np.empty(0, np.dtype(wdt))
    # from the second call on an unchanged graph, its rows in storage order: each block array
    # front to back, not a jump between size classes at almost every row
    vid = storage_order(view, count_call="spmv")
    ordered = vid is not None
    if not ordered:
        vid = np.zeros(0, np.int32)
    else:
        deg, ptr = _in_order(view, "degree", deg, vid), _in_order(view, "edge_ptr", ptr, vid)
        if weighted:
            wptr = _in_order(view, ("weight", weight), wptr, vid)
    bounds = _chunks(view, deg, ordered)
    push = transpose and (view.directed or weighted)
    y = np.zeros(n, np.float64) if push or ordered else np.empty(n, np.float64)
    with numba.parallel_chunksize(1):
        if push:
            _spmv_push(deg, ptr, wptr, wlike, weighted, x, y, ordered, vid, bounds)
        else:
            _spmv_pull(deg, ptr, wptr, wlike, weighted, x, y, ordered, vid, bounds)
    return y.astype(dtype, copy=False)


def _chunks(view, deg: np.ndarray, ordered: bool) -> np.ndarray:
    """Row bounds (int64 (chunks + 1,)) of the chunks the threads take dynamically: runs of
    rows holding about equal numbers of entries (a row is never split), memoized on the view
    for each visiting order (in storage order the hubs come last, together)."""
    key = ("spmv_chunks", ordered)
    memo = view.derived.get(key)
    if memo is None:
        n = deg.shape[0]
        nchunks = num_chunks(n, grain=1 << 10)
        off = np.cumsum(deg, dtype=np.int64)
        total = int(off[-1]) if n else 0
        cuts = (np.arange(1, nchunks, dtype=np.int64) * total) // nchunks
        inner = np.searchsorted(off, cuts, side="right")
        memo = view.derived[key] = np.unique(np.concatenate([[0], inner, [n]])).astype(np.int64)
    return memo


def _in_order(view, name, values: np.ndarray, vid: np.ndarray) -> np.ndarray:
    """``values[vid]``, memoized on the view under ``name``."""
    key = ("in_storage_order", name)
    memo = view.derived.get(key)
    if memo is None:
        memo = view.derived[key] = np.ascontiguousarray(values[vid])
    return memo
