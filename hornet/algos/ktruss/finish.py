"""The static finish of an insertion scan stopped at its work limit: :func:`finish_from_level`.

The k-order scan (:func:`~hornet.algos.ktruss.order.raise_in_order`) handles the levels in
increasing order, and every level below the one it is scanning is final: an edge left there
keeps its number, and truss numbers only rise under insertions, so every other edge's number
(a lower bound) is at least that level k. So the edges at k or above are exactly the new
k-truss H, and for every j >= k the j-truss of the graph lies in H and is the j-truss of H.
The static decomposition of H alone therefore gives the exact numbers of its edges: a
stopped scan leaves the static decomposition only the part it did not finish, the dense
top of a Kronecker graph's hierarchy rather than all of it.

H's edges get new ranks, in the order of (truss number, peeling round in H), after every
rank in use (the k-order's tail): an edge of H has at most ``truss - 2`` triangles with
later edges of H, and none with an edge below level k. The edges below keep theirs.
"""
from __future__ import annotations

import numpy as np

from ..views import as_adjacency, csr_from_coo
from .static import truss_numbers_and_rounds

__all__ = ["finish_from_level"]


def finish_from_level(k: int, keys: np.ndarray, truss: np.ndarray, rank: np.ndarray,
                      counters: np.ndarray, num_vertices: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact numbers and ranks of the edges at level ``k`` or above (module docstring), in
    place in ``truss`` / ``rank`` (slot-indexed; ``keys``: the edge table's keys, live slots
    non-negative; ``counters[1]``: the next free rank at the end of the k-order, advanced).
    Returns ``(slots, old)``: H's slots and their numbers before."""
    slots = np.flatnonzero((truss >= k) & (keys >= 0))
    if slots.shape[0] == 0:
        return slots, np.zeros(0, np.int32)
    slots = slots[np.argsort(keys[slots], kind="stable")]   # the edges' lexicographic order
    hk = keys[slots]
    u = (hk >> 32).astype(np.int32)
    v = (hk & 0xFFFFFFFF).astype(np.int32)
    indptr, indices, _ = csr_from_coo(np.concatenate([u, v]), np.concatenate([v, u]),
                                      num_vertices, dedupe=False)
    view = as_adjacency((indptr, indices), directed=False)
    t, rounds = truss_numbers_and_rounds(view)
    old = truss[slots].copy()
    truss[slots] = t
    order = np.lexsort((rounds, t))
    tail = int(counters[1])
    rank[slots[order]] = np.arange(tail, tail + slots.shape[0], dtype=np.int64)
    counters[1] = tail + slots.shape[0]
    return slots, old
