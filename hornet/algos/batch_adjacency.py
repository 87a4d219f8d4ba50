"""The batch adjacency that every dynamic algorithm builds from an :class:`~hornet.EdgeChange`.

A dynamic algorithm receives a change after the graph has applied it. To reason about the graph
before a deletion (G_before = G_now + D) or to ask "is (u, w) one of the batch's edges", it needs
the batch itself as a small adjacency: the change's pairs mirrored (both directions), sorted by
(vertex, neighbour), with per-vertex offsets. Its size is proportional to the batch, never to
the graph (no array over the id space).

- :func:`batch_adjacency` builds it: one sort of int64 keys ``(x << 32) | y`` (NumPy on the
  CPU, CuPy's radix sort on the GPU).
- :class:`BatchAdjacency` holds the sorted keys, the distinct vertices with their offsets and
  the neighbour lists, and answers membership in bulk (:meth:`BatchAdjacency.contains`).
- :func:`has_pair` / :func:`vertex_range` / :func:`vertex_slot` are the same queries for Numba
  kernels; the CUDA kernels use ``ba_has_pair`` / ``ba_vertex_range`` of ``batch_adjacency.cuh``.

    >>> import numpy as np
    >>> b = batch_adjacency(np.array([0, 1]), np.array([2, 2]))
    >>> b.vertices.tolist(), b.offsets.tolist(), b.neighbours.tolist()
    ([0, 1, 2], [0, 1, 2, 4], [2, 2, 0, 1])
    >>> b.contains(np.array([2, 0]), np.array([1, 1])).tolist()
    [True, False]
"""
from __future__ import annotations

import os

import numpy as np
from ..core.jit import njit

__all__ = ["BatchAdjacency", "batch_adjacency", "pair_keys", "has_pair", "vertex_range", "vertex_slot",
           "CUDA_HEADER"]

#: the CUDA twin of has_pair / vertex_slot (included by the dynamic algorithms' .cu files)
CUDA_HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "batch_adjacency.cuh")

_LOW = np.int64(0xFFFFFFFF)


def _xp(a):
    if type(a).__module__.startswith("cupy"):
        import cupy
        return cupy
    return np


def pair_keys(u, v):
    """int64 keys ``(u << 32) | v`` of int32-range vertex ids (NumPy or CuPy arrays)."""
    xp = _xp(u)
    return (xp.asarray(u).astype(xp.int64) << 32) | xp.asarray(v).astype(xp.int64)


class BatchAdjacency:
    """A batch of undirected pairs, mirrored and sorted (all arrays on one device).

    Attributes
    ----------
    src, dst : int32 (B,)
        The pairs as given (each once; for a change of an undirected graph ``src < dst``).
    keys : int64 (2B,)
        ``(x << 32) | y`` for both directions of every pair, ascending (no repeats when the
        pairs are distinct). Vertex ``x``'s batch neighbours are the low halves of the keys
        between ``x << 32`` and ``(x + 1) << 32`` (:func:`vertex_range`): kernels need
        nothing else.
    vertices : int32 (K,)
        The distinct vertices of the batch, ascending (made on first use).
    offsets : int64 (K + 1,)
        ``neighbours[offsets[k]:offsets[k + 1]]`` are the batch neighbours of ``vertices[k]``,
        ascending (made on first use).
    neighbours : int32 (2B,)
        The low halves of ``keys`` (made on first use).
    """

    def __init__(self, src, dst, keys):
        self.src, self.dst, self.keys = src, dst, keys
        self._lists = None

    @property
    def device(self) -> str:
        return "cpu" if isinstance(self.keys, np.ndarray) else "gpu"

    def __len__(self) -> int:
        return int(self.src.shape[0])

    def _per_vertex(self):
        if self._lists is None:
            xp = _xp(self.keys)
            keys = self.keys
            n = keys.shape[0]
            hi = (keys >> 32).astype(xp.int32)
            if n:
                starts = xp.concatenate([xp.zeros(1, dtype=xp.int64),
                                         (xp.flatnonzero(hi[1:] != hi[:-1]) + 1).astype(xp.int64)])
                vertices = xp.ascontiguousarray(hi[starts])
                offsets = xp.concatenate([starts, xp.full(1, n, dtype=xp.int64)])
            else:
                vertices = xp.zeros(0, dtype=xp.int32)
                offsets = xp.zeros(1, dtype=xp.int64)
            self._lists = (vertices, offsets, (keys & _LOW).astype(xp.int32))
        return self._lists

    @property
    def vertices(self):
        return self._per_vertex()[0]

    @property
    def offsets(self):
        return self._per_vertex()[1]

    @property
    def neighbours(self):
        return self._per_vertex()[2]

    def contains(self, u, w):
        """bool array: is ``(u[i], w[i])`` (either direction) a pair of the batch."""
        xp = _xp(self.keys)
        q = pair_keys(xp.asarray(u), xp.asarray(w))
        if self.keys.shape[0] == 0:
            return xp.zeros(q.shape[0], dtype=bool)
        pos = xp.searchsorted(self.keys, q)
        pos = xp.minimum(pos, self.keys.shape[0] - 1)
        return self.keys[pos] == q

    def neighbours_of(self, x: int):
        """Batch neighbours of vertex ``x`` (int32, ascending; empty when ``x`` is not in it)."""
        xp = _xp(self.keys)
        lo = int(xp.searchsorted(self.keys, np.int64(x) << 32))
        hi = int(xp.searchsorted(self.keys, np.int64(x + 1) << 32))
        return (self.keys[lo:hi] & _LOW).astype(xp.int32)


def batch_adjacency(src, dst) -> BatchAdjacency:
    """The mirrored, sorted adjacency of the pairs ``(src[i], dst[i])``.

    Parameters
    ----------
    src, dst : integer arrays (B,) on one device (NumPy or CuPy), ids in [0, 2**31)
        Distinct unordered pairs without self-loops (what an undirected graph's EdgeChange
        holds); repeats would appear twice in the lists.

    Returns
    -------
    BatchAdjacency on the device of ``src``. Work: one sort of 2B keys (no host sync on the
    GPU until the per-vertex arrays are asked for).
    """
    xp = _xp(src)
    src = xp.ascontiguousarray(xp.asarray(src).astype(xp.int32, copy=False))
    dst = xp.ascontiguousarray(xp.asarray(dst).astype(xp.int32, copy=False))
    if src.shape != dst.shape or src.ndim != 1:
        raise ValueError("src and dst must be 1-D arrays of one length")
    keys = xp.sort(xp.concatenate([pair_keys(src, dst), pair_keys(dst, src)]))
    return BatchAdjacency(src, dst, keys)


# --------------------------------------------------------------------------------------------
# Numba queries (for kernels that take the arrays of a BatchAdjacency)


@njit(inline="always")
def _first_at_least(keys, q):
    """Index of the first element of the ascending ``keys`` that is >= ``q``."""
    lo = 0
    hi = keys.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[mid] < q:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(inline="always")
def has_pair(keys, u, w):
    """Whether the sorted int64 ``keys`` hold ``(u << 32) | w``."""
    q = (np.int64(u) << 32) | np.int64(w)
    lo = _first_at_least(keys, q)
    return lo < keys.shape[0] and keys[lo] == q


@njit(inline="always")
def vertex_range(keys, x):
    """``(lo, hi)``: the keys of vertex ``x``'s batch neighbours are ``keys[lo:hi]`` (their low
    32 bits are the neighbours, ascending)."""
    return (_first_at_least(keys, np.int64(x) << 32),
            _first_at_least(keys, (np.int64(x) + 1) << 32))


@njit(inline="always")
def vertex_slot(vertices, x):
    """Index of ``x`` in the ascending int32 ``vertices`` (-1 if absent)."""
    lo = _first_at_least(vertices, x)
    if lo < vertices.shape[0] and vertices[lo] == x:
        return lo
    return -1
