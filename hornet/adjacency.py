"""The read-only adjacency view that every kernel consumes.

A view is Hornet's vertex table stripped to what a traversal needs: for every vertex ``v``,
``degree[v]`` destinations (int32) stored contiguously from address ``edge_ptr[v]``, sorted
ascending when ``sorted`` is true. Edge properties are reached the same way through
``property_ptrs[name]``. The dynamic graph (:meth:`hornet.Graph.adjacency`) and a plain CSR
(:func:`AdjacencyView.from_csr`) both produce one, so each algorithm has a single
implementation whatever stores the graph.

Undirected graphs store both directions: ``sum(degree) == 2 * num_edges``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["AdjacencyView", "check_csr_pair"]


@dataclass(frozen=True)
class AdjacencyView:
    """Pointer/degree view of a graph's out-adjacency.

    Attributes
    ----------
    num_vertices : int
        Size of the vertex id space (``V``).
    degree : int32 array, shape (V,), on ``device``
        Out-degree of every vertex (both directions counted for undirected graphs).
    edge_ptr : int64 array, shape (V,), on ``device``
        Address of the first int32 destination of each vertex (host address on the CPU,
        device address on the GPU). Meaningless where ``degree == 0``.
    directed : bool
    sorted : bool
        True when every destination list is ascending and duplicate-free.
    device : "cpu" or "gpu"
    property_ptrs : dict name -> (int64 array (V,), numpy dtype)
        Per-vertex address of each edge property's values, aligned with the destinations.
    owner : object
        Whatever keeps the buffers behind the addresses alive; the view is valid only while
        ``owner`` is unchanged (a graph update invalidates views taken before it).
    derived : dict
        Memo of arrays that algorithms derive from the view (such as the scan of the
        degrees), kept as long as the view itself.
    """

    num_vertices: int
    degree: Any
    edge_ptr: Any
    directed: bool
    sorted: bool = True
    device: str = "cpu"
    property_ptrs: dict = field(default_factory=dict)
    owner: Any = None
    derived: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def num_entries(self) -> int:
        """Stored (src, dst) entries: edges for directed graphs, twice the edges for undirected."""
        return int(self.degree.sum())

    @classmethod
    def from_csr(cls, indptr, indices, *, directed: bool = True, weights=None,
                 weight_name: str = "weight", sorted: bool | None = None) -> "AdjacencyView":
        """View a CSR (``indptr`` of length V+1, ``indices`` int32) without copying edges.

        ``indices`` is converted to int32 (copied only if it is not already contiguous int32).
        For an undirected graph the CSR must hold both directions. ``sorted=None`` checks
        whether every row is ascending and duplicate-free. NumPy (CPU) or CuPy (GPU) arrays.
        """
        xp = _array_module(indices)
        indptr = xp.asarray(indptr).astype(xp.int64, copy=False)
        indices = xp.ascontiguousarray(xp.asarray(indices).astype(xp.int32, copy=False))
        n = int(indptr.shape[0]) - 1
        if n < 0:
            raise ValueError("indptr must have at least one element")
        degree = (indptr[1:] - indptr[:-1]).astype(xp.int32)
        base = _address(indices)
        edge_ptr = base + 4 * indptr[:-1]
        props = {}
        keep = [indptr, indices]
        if weights is not None:
            weights = xp.ascontiguousarray(xp.asarray(weights))
            if weights.shape != indices.shape:
                raise ValueError("weights must have one value per stored entry")
            props[weight_name] = (_address(weights) + weights.dtype.itemsize * indptr[:-1],
                                  np.dtype(weights.dtype))
            keep.append(weights)
        if sorted is None:
            sorted = _rows_sorted(xp, indptr, indices)
        device = "cpu" if xp is np else "gpu"
        return cls(n, degree, edge_ptr, directed, bool(sorted), device, props, tuple(keep))


def check_csr_pair(indptr, indices) -> int:
    """Check a CSR pair of NumPy or CuPy arrays and return its vertex count ``n``.

    Raises ValueError / TypeError unless both are 1-D integer arrays, ``indptr`` rises from 0
    to ``len(indices)`` and every index lies in ``[0, n)``.
    """
    if indptr.ndim != 1 or indices.ndim != 1:
        raise ValueError("indptr and indices must be 1-D")
    if indptr.dtype.kind not in "iu" or indices.dtype.kind not in "iu":
        raise TypeError("indptr and indices must hold integers")
    if indptr.shape[0] < 1:
        raise ValueError("indptr must have at least one element")
    n = indptr.shape[0] - 1
    if (int(indptr[0]) != 0 or int(indptr[-1]) != indices.shape[0]
            or (n > 0 and bool((indptr[1:] < indptr[:-1]).any()))):
        raise ValueError("indptr must rise from 0 to len(indices)")
    if indices.size and (int(indices.min()) < 0 or int(indices.max()) >= n):
        raise ValueError(f"indices must lie in [0, {n})")
    return n


def _array_module(a):
    if type(a).__module__.startswith("cupy"):
        import cupy
        return cupy
    return np


def _address(a) -> int:
    if isinstance(a, np.ndarray):
        return int(a.ctypes.data) if a.size else 0
    return int(a.data.ptr) if a.size else 0


def _rows_sorted(xp, indptr, indices) -> bool:
    """Every row strictly ascending (so also duplicate-free)."""
    if indices.shape[0] < 2:
        return True
    rising = indices[1:] > indices[:-1]
    # positions where a new row starts are exempt
    row_start = xp.zeros(indices.shape[0], dtype=bool)
    starts = indptr[1:-1]
    starts = starts[(starts > 0) & (starts < indices.shape[0])]
    row_start[starts] = True
    return bool(xp.all(rising | row_start[1:]))
