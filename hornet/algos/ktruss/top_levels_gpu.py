"""The top truss levels of :class:`~hornet.algos.ktruss.dynamic_gpu.GpuDynamicTruss` kept by a
static decomposition of their own subgraph (the GPU counterpart of :mod:`.top_level`).

A Kronecker graph's highest levels are one dense part among a few thousand hub vertices
(hundreds of thousands of edges at one level above a hundred). A batch that reaches it makes
almost every edge of the level a candidate of the insertion's scan, or a member of the
deletion's descent, and every step of those intersects the hubs' whole adjacency lists. The
subgraph S of the edges at level ``cap`` or above is small and its lists short, so one static
decomposition of S (:func:`~hornet.algos.ktruss.gpu.truss_numbers_and_rounds` on its own CSR
over its own vertices) replaces that work.

Why it is exact. Let t be the truss numbers of the graph G after the batch and t_S those of
S (truss numbers only grow with the graph, so t_S <= t on S). For j >= cap the j-truss of G
lies inside every set that holds all edges with t >= cap, and is then the j-truss of that
set.

- Insertion (old numbers are lower bounds): the update's scan settles every level below cap
  first (``ko_scan`` mode 4 with ``k_in = cap``: no edge at cap or above is a candidate; the
  levels below see those edges as above them, as they stay). Then S (the edges at cap or
  above: old ones, new ones placed there, risen ones) holds every edge with t >= cap, and
  every edge of S has t >= cap, so t = max(cap, t_S) on S.
- Deletion (old numbers are upper bounds): S (the surviving edges that were at cap or above)
  holds every edge with t >= cap, so an edge of S with t_S >= cap has t = t_S, and one with
  t_S < cap has t_S <= t <= cap - 1: exact at cap - 1, else an upper bound for the descent
  to lower. An edge below cap keeps every triangle counted at its level when an edge of S
  falls to cap - 1, so only the edges that fall further push their neighbours (the
  descent's own push).

The k-order on S: the static peeling's (round, position) order (every edge lies in at most
t_S - 2 triangles whose other edges come later: those were alive when it was peeled), with
ranks from the update's tail counter, so they stay unique and the levels at cap and above are
ordered anew as a whole. Edges below cap see S as above them whatever its ranks. After a
deletion, the edges of S at cap - 1 keep the static's ranks too: they come after every other
edge of that level (all below S), the edges of S that fall further are below them, so their
later triangles are those the static's order bounds.
"""
from __future__ import annotations

__all__ = ["TOP_MIN_EDGES", "TOP_MIN_LEVEL", "top_cap", "top_slots", "top_view",
           "decompose_top"]

#: the top levels are kept by a static decomposition of their subgraph when the graph has at
#: least TOP_MIN_EDGES edges at a level of TOP_MIN_LEVEL or above (cap: the highest level
#: with that many edges at it or above); other graphs never take this path
TOP_MIN_EDGES = 1 << 16
TOP_MIN_LEVEL = 32


def top_cap(truss) -> int:
    """The level from which the top levels are kept whole (see the module): the highest k >=
    :data:`TOP_MIN_LEVEL` with at least :data:`TOP_MIN_EDGES` edges at k or above in
    ``truss`` (int32 CuPy, one number per edge), or 0."""
    import cupy as cp
    if truss.shape[0] < TOP_MIN_EDGES:
        return 0
    hist = cp.bincount(truss.astype(cp.int32, copy=False))
    above = cp.cumsum(hist[::-1])[::-1]           # [k]: edges at k or above
    ks = cp.flatnonzero(above >= TOP_MIN_EDGES)
    k = int(ks[-1]) if ks.shape[0] else 0
    return k if k >= TOP_MIN_LEVEL else 0


def top_slots(table, cap: int):
    """int64 slots of the live edges of ``table`` at level ``cap`` or above."""
    import cupy as cp
    return cp.flatnonzero((table.columns["truss"] >= cap) & (table.keys >= 0))


def top_view(table, slots):
    """The subgraph of the table's edges ``slots`` as an undirected sorted GPU view over its
    own vertices (numbered in id order), and the permutation that lists ``slots`` as the
    view's edges (the pairs a < b in row order: by ascending key)."""
    import cupy as cp
    from hornet.adjacency import AdjacencyView
    from ..gpu_arrays import row_offsets
    keys = table.keys[slots]
    u = (keys >> 32).astype(cp.int32)
    v = (keys & 0xFFFFFFFF).astype(cp.int32)
    verts = cp.unique(cp.concatenate([u, v]))
    a = cp.searchsorted(verts, u).astype(cp.int64)
    b = cp.searchsorted(verts, v).astype(cp.int64)
    up = (a << 32) | b                             # (a < b: the table keys are ordered)
    order = cp.argsort(up)
    entries = cp.sort(cp.concatenate([up, (b << 32) | a]))
    view = AdjacencyView.from_csr(row_offsets((entries >> 32).astype(cp.int32),
                                              int(verts.shape[0])),
                                  (entries & 0xFFFFFFFF).astype(cp.int32), directed=False,
                                  sorted=True)
    return view, order


def decompose_top(table, slots, cap: int, tail: int, below: int):
    """The static decomposition of the subgraph S of the table's edges ``slots`` (see the
    module): every edge's number in S where that is ``cap`` or more, else ``below`` (an
    insertion's cap, a deletion's cap - 1), and ranks ``tail + (round << 32 | position)``,
    written to the table. Returns (t_S int32, aligned with ``slots``; the new tail)."""
    import cupy as cp
    from .gpu import truss_numbers_and_rounds
    m = int(slots.shape[0])
    if m == 0:
        return cp.empty(0, dtype=cp.int32), tail
    view, order = top_view(table, slots)
    t_sorted, rounds = truss_numbers_and_rounds(view)
    t = cp.empty(m, dtype=cp.int32)
    t[order] = t_sorted
    at = slots[order]
    table.columns["truss"][at] = cp.where(t_sorted >= cap, t_sorted, below)
    table.columns["rank"][at] = tail + ((rounds.astype(cp.int64) << 32) |
                                        cp.arange(m, dtype=cp.int64))
    return t, tail + ((int(rounds.max()) + 1) << 32)
