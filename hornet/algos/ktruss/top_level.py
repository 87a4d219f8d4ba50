"""The top truss level of an insertion's k-order scan peeled as a whole, on bit rows (CPU
Numba): :func:`peel_top_level`, which
:func:`~hornet.algos.ktruss.order_rows.raise_in_order_rows` calls when its scan of the
highest level (no edge above it) has visited many edges.

The top level of a Kronecker graph is one dense part over a few thousand hub vertices (a
third of a million edges at K18, under a thousand vertices). A batch whose raises reach it
makes almost all of its edges candidates, and the final peel removes them all again: the
scan then costs a whole-adjacency (or level-row) intersection and a heap step per edge of
the level. Peeling the level on its own instead costs one pass over the table's truss
numbers, a bit row per vertex of the level (its neighbours at the level) and, per edge,
an AND of two bit rows; then each triangle of the level is met once, when its first edge
goes.

Why it is right. At the top level k nothing is above k, so the level-k edges that rise
(the set A of :func:`~hornet.algos.ktruss.order.raise_in_order`) are exactly the
(k + 1)-truss of the level-k subgraph: peeling the level at k - 1 triangles leaves A. The
peeling order is a valid k-order of the level: an edge removed with c triangles among the
edges not yet removed (later in the order, or in A, above the level after the raise) has
s+ = c <= k - 2. Every level-k edge gets a new rank (the end of the level, in removal
order); edges below the level see the level as above them whatever its ranks, so their
s+ is unchanged.
"""
from __future__ import annotations

import numpy as np

from hornet.core.jit import njit

_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)


@njit(inline="always")
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return np.int64((x * _H01) >> np.uint64(56))


@njit
def peel_top_level(k, keys, truss, rank, counters, n, max_vertices):
    """Peel the edges at level ``k`` (the highest level: no edge above it) at ``k - 1``
    triangles among themselves. The removed edges get new ranks at the end of level k, in
    removal order (``counters[1]``, the k-order's next free rank there); the others (A,
    the level-k edges of the new (k + 1)-truss) keep their numbers and ranks: the caller
    raises them. ``n``: the vertex range. Returns ``(ok, survivors, edges, work)``:
    ``ok`` False (nothing changed) when the level has more than ``max_vertices`` vertices;
    the survivors' slots, the level's edges and the work (edges plus triangles met)."""
    cap = truss.shape[0]
    m = 0
    for s in range(cap):
        if truss[s] == k and keys[s] >= 0:
            m += 1
    edges = np.empty(m, np.int64)
    m = 0
    for s in range(cap):
        if truss[s] == k and keys[s] >= 0:
            edges[m] = s
            m += 1
    loc = np.full(n, -1, np.int64)
    ea = np.empty(m, np.int64)
    eb = np.empty(m, np.int64)
    nv = 0
    for i in range(m):
        key = keys[edges[i]]
        u = np.int64(key >> 32)
        v = np.int64(key & 0xFFFFFFFF)
        if loc[u] < 0:
            loc[u] = nv
            nv += 1
        if loc[v] < 0:
            loc[v] = nv
            nv += 1
        if nv > max_vertices:
            return False, edges[:0], edges[:0], np.int64(m)
        ea[i] = loc[u]
        eb[i] = loc[v]
    words = (nv + 63) >> 6
    bits = np.zeros((nv, words), np.uint64)
    eid = np.full((nv, nv), -1, np.int32)
    one = np.uint64(1)
    for i in range(m):
        a = ea[i]
        b = eb[i]
        bits[a, b >> 6] |= one << np.uint64(b & 63)
        bits[b, a >> 6] |= one << np.uint64(a & 63)
        eid[a, b] = i
        eid[b, a] = i
    sup = np.empty(m, np.int64)
    for i in range(m):
        a = ea[i]
        b = eb[i]
        c = 0
        for w in range(words):
            c += _popcount(bits[a, w] & bits[b, w])
        sup[i] = c
    keep = k - 1
    gone = np.zeros(m, np.bool_)
    queue = np.empty(m, np.int64)
    nq = 0
    for i in range(m):
        if sup[i] < keep:
            gone[i] = True
            queue[nq] = i
            nq += 1
    work = np.int64(m)
    head = 0
    while head < nq:
        i = queue[head]
        head += 1
        a = ea[i]
        b = eb[i]
        for w in range(words):
            x = bits[a, w] & bits[b, w]
            while x != 0:
                low = x & (~x + one)
                c = w * 64 + _popcount(low - one)
                x ^= low
                work += 1
                for e in (eid[a, c], eid[b, c]):
                    sup[e] -= 1
                    if sup[e] < keep and not gone[e]:
                        gone[e] = True
                        queue[nq] = e
                        nq += 1
        bits[a, b >> 6] &= ~(one << np.uint64(b & 63))
        bits[b, a >> 6] &= ~(one << np.uint64(a & 63))
        rank[edges[i]] = counters[1]
        counters[1] += 1
    survivors = np.empty(m - nq, np.int64)
    j = 0
    for i in range(m):
        if not gone[i]:
            survivors[j] = edges[i]
            j += 1
    return True, survivors, edges, work
