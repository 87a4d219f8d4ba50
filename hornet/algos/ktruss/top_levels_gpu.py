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
deletion, the edges of S that fell below cap are ranked by the descent's peeling at their new
level, as the edges it lowers: an edge with t_S below cap - 1 that the descent leaves at
cap - 1 comes after the edges exact there, though S's order has it before them.
"""
from __future__ import annotations

import os

import numpy as np

from .ko_launch import C_FELL, C_NEXT, KS_FELL

__all__ = ["TOP_MIN_EDGES", "TOP_MIN_LEVEL", "DENSE_MAX_VERTICES", "DENSE_MAX_LEVELS",
           "top_cap", "top_count", "top_slots", "top_view", "dense_decompose", "decompose_top",
           "TopLevels"]

#: the top levels are kept by a static decomposition of their subgraph when the graph has at
#: least TOP_MIN_EDGES edges at a level of TOP_MIN_LEVEL or above (cap: the highest level
#: with that many edges at it or above); other graphs never take this path
TOP_MIN_EDGES = 1 << 16
TOP_MIN_LEVEL = 32
#: S is peeled on bit rows (:func:`dense_decompose`) when it has at most DENSE_MAX_VERTICES
#: vertices (rows of DENSE_MAX_VERTICES / 64 words) and its numbers span at most
#: DENSE_MAX_LEVELS levels (a round recounts every edge left, so the rounds of many sparse
#: levels cost more than the general static decomposition's); else by the general static
DENSE_MAX_VERTICES = 1 << 14
DENSE_MAX_LEVELS = 4


def _fn(name: str):
    from ..gpu_arrays import kernels
    return kernels(os.path.join(os.path.dirname(os.path.abspath(__file__)), "top_dense.cu"))(
        name)


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


def top_count(table, cap: int) -> int:
    """How many live edges of ``table`` are at level ``cap`` or above (one pass over the
    table, ``td_count_top``, and one read)."""
    import cupy as cp
    from hornet.core.cuda import i64, launch
    out = cp.zeros(1, dtype=cp.uint64)
    n = int(table.keys.shape[0])
    launch(_fn("td_count_top"), n, (table.keys, table.columns["truss"], i64(n), np.int32(cap),
                                    out))
    return int(out.get()[0])


def top_slots(table, cap: int):
    """int64 slots of the live edges of ``table`` at level ``cap`` or above."""
    import cupy as cp
    return cp.flatnonzero((table.columns["truss"] >= cap) & (table.keys >= 0))


def _local(table, slots):
    """The endpoints of the table's edges ``slots`` numbered among their own vertices (in
    id order, so a < b as in the keys): (a int32, b int32, vertex count)."""
    import cupy as cp
    keys = table.keys[slots]
    u = (keys >> 32).astype(cp.int32)
    v = (keys & 0xFFFFFFFF).astype(cp.int32)
    verts = cp.unique(cp.concatenate([u, v]))
    return (cp.searchsorted(verts, u).astype(cp.int32),
            cp.searchsorted(verts, v).astype(cp.int32), int(verts.shape[0]))


def top_view(table, slots):
    """The subgraph of the table's edges ``slots`` as an undirected sorted GPU view over its
    own vertices, and the permutation that lists ``slots`` as the view's edges (the pairs
    a < b in row order: by ascending key)."""
    import cupy as cp
    from hornet.adjacency import AdjacencyView
    from ..gpu_arrays import row_offsets
    a, b, nv = _local(table, slots)
    a, b = a.astype(cp.int64), b.astype(cp.int64)
    up = (a << 32) | b
    order = cp.argsort(up)
    entries = cp.sort(cp.concatenate([up, (b << 32) | a]))
    view = AdjacencyView.from_csr(row_offsets((entries >> 32).astype(cp.int32), nv),
                                  (entries & 0xFFFFFFFF).astype(cp.int32), directed=False,
                                  sorted=True)
    return view, order


def dense_decompose(a, b, nv: int):
    """Truss numbers and peeling rounds (int32, aligned with the edges {a[i], b[i]}, int32
    ids below ``nv``, distinct, a != b) by peeling on bit rows (``top_dense.cu``): rounds
    numbered from 0, counting only those that removed edges; an edge removed in round r
    had fewer than its level's threshold of triangles among the edges alive at its start,
    as :func:`~hornet.algos.ktruss.gpu.truss_numbers_and_rounds` gives them."""
    import cupy as cp
    import cupyx
    from hornet.core.cuda import i64, launch
    m = int(a.shape[0])
    W = (nv + 63) // 64
    bits = cp.zeros(nv * W, dtype=cp.uint64)
    launch(_fn("td_set_bits"), m, (a, b, i64(m), bits, np.int32(W)))
    truss = cp.zeros(m, dtype=cp.int32)
    rounds = cp.zeros(m, dtype=cp.int32)
    lists = [cp.arange(m, dtype=cp.int32), cp.empty(m, dtype=cp.int32)]
    removed = cp.empty(m, dtype=cp.int32)
    reset = cp.asarray(np.array([0, 0, np.iinfo(np.uint64).max], dtype=np.uint64))
    ctr = cp.empty(3, dtype=cp.uint64)
    host = cupyx.empty_pinned(3, dtype=np.uint64)
    k, r, n, cur = 2, 0, m, 0
    while n:
        ctr[:] = reset
        # (a warp per 32 list edges: a thread per edge in the launch's count)
        launch(_fn("td_round"), n, (bits, np.int32(W), a, b, lists[cur], i64(n), np.int32(k),
                                    np.int32(r), truss, rounds, removed, lists[1 - cur], ctr))
        launch(_fn("td_clear"), n, (bits, np.int32(W), a, b, removed, ctr))
        ctr.get(out=host)
        if int(host[0]):
            r += 1
        else:                                      # (every kept support is k - 1 or more)
            k = int(host[2]) + 2
        n, cur = int(host[1]), 1 - cur
    return truss, rounds


def decompose_top(table, slots, cap: int, tail: int, below: int):
    """The static decomposition of the subgraph S of the table's edges ``slots`` (see the
    module; on bit rows within :data:`DENSE_MAX_VERTICES` and :data:`DENSE_MAX_LEVELS`): every
    edge's number in S where that is ``cap`` or more, else ``below`` (an insertion's cap, a
    deletion's cap - 1), and ranks ``tail + (round << 32 | position)``, written to the
    table. Returns (t_S int32, aligned with ``slots``; the new tail)."""
    import cupy as cp
    from .gpu import truss_numbers_and_rounds
    m = int(slots.shape[0])
    if m == 0:
        return cp.empty(0, dtype=cp.int32), tail
    a, b, nv = _local(table, slots)
    if nv <= DENSE_MAX_VERTICES and \
            int(table.columns["truss"][slots].max()) - cap < DENSE_MAX_LEVELS:
        at = slots
        t_at, rounds = dense_decompose(a, b, nv)
        t = t_at
    else:
        view, order = top_view(table, slots)
        at = slots[order]
        t_at, rounds = truss_numbers_and_rounds(view)
        t = cp.empty(m, dtype=cp.int32)
        t[order] = t_at
    table.columns["truss"][at] = cp.where(t_at >= cap, t_at, below)
    table.columns["rank"][at] = tail + ((rounds.astype(cp.int64) << 32) |
                                        cp.arange(m, dtype=cp.int64))
    return t, tail + ((int(rounds.max()) + 1) << 32)


class TopLevels:
    """The top levels' steps of an update (a base of ``GpuDynamicTruss``: its table, scratch,
    counters and ``_top`` / ``_top_n`` / ``_tail``)."""

    def _top_insert(self) -> None:
        """After an insertion's scan below ``_top``: the levels from ``_top`` up decomposed
        as their own subgraph (this module) when an edge joined them."""
        t = self._table
        n = top_count(t, self._top)
        if n == self._top_n:                       # (the set only grows: none joined)
            return
        slots = top_slots(t, self._top)
        _, self._tail = decompose_top(t, slots, self._top, self._tail, self._top)
        self._top_n = n
        self.stats["top"] = n

    def _top_delete(self, n: int, fstamp) -> None:
        """A deletion that removed an edge of the top levels (keys already gone; the
        worklist ``_la[:n]`` from ``dt_lost_seeds``): their subgraph decomposed anew
        (this module), its edges that fell below ``_top`` put at ``_top - 1``
        and listed as fallen (``_fell == fstamp``, counts ``C_FELL`` and ``KS_FELL``) for
        the descent's peeling to rank at their new level (those exact at ``_top - 1`` too:
        an edge of S that the descent leaves there, though lower in S, comes after them);
        the worklist (``C_NEXT``) keeps its edges below ``_top`` and takes those whose
        number in S is below ``_top - 1`` (they may fall further)."""
        cp = self._cp
        t = self._table
        cap = self._top
        work = self._la[:n]
        work = work[t.columns["truss"][work] < cap]    # (a copy: before S's numbers change)
        slots = top_slots(t, cap)
        ts, self._tail = decompose_top(t, slots, cap, self._tail, cap - 1)
        fallen = slots[ts < cap].astype(cp.int32)
        deep = slots[ts < cap - 1].astype(cp.int32)
        nw, nd, nf = int(work.shape[0]), int(deep.shape[0]), int(fallen.shape[0])
        self._la[:nw] = work
        self._la[nw:nw + nd] = deep
        self._fell[fallen] = fstamp
        self._fallen[:nf] = fallen
        self._ctr[C_NEXT] = nw + nd
        self._ctr[C_FELL] = nf
        self._ks[KS_FELL] = nf
        self._top_n = int(slots.shape[0]) - nf
        self.stats["top"] = int(slots.shape[0])
