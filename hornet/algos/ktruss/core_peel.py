"""The high truss levels of a Kronecker-like graph decomposed whole on bit rows (CPU Numba):
:func:`peel_core`.

A large batch on a graph with a dense core (:mod:`hornet.algos.ktruss.core_rows`: the
vertices with an edge at level T or above, a few thousand hubs) changes numbers all over the
core's levels: a deletion lowers and an insertion raises a large part of the top levels, and
the local algorithms (the deletion descent, the insertion's k-order scan) pay an
intersection and a few table probes per edge and level they examine. The core's edges
instead are decomposed from scratch, on the core's bit rows: each edge's triangles in the
core are the bits of ``row(u) & row(v)``, and a peel level by level meets each triangle of
the core once (when its first edge goes, its bits are cleared).

Why it is exact. Let H be the edges at level T or above after the batch's own edges are in
or out, with the numbers ``truss`` they hold when the peel runs:

* after a deletion, ``truss`` is the numbers before the batch (upper bounds) without the
  deleted edges: the new T-truss lies in H, so for every j >= T the j-truss of H is that of
  the graph. An edge of H numbered j >= T in H has number j; one numbered below T has a
  number below T: it *fell* (the peel leaves its number before, an upper bound, for the
  deletion descent to lower: every other edge's number is exact or an upper bound);
* after an insertion whose k-order scan finished every level below T
  (:mod:`hornet.algos.ktruss.finish`), H is the new T-truss: every edge of H has its
  number in H.

The peel's order is a k-order of H (an edge removed with c triangles among the edges not
yet removed gets number c + 2, and the numbers never fall along the order): H's edges get
new ranks in that order, after every rank in use (the k-order's tail). Edges below T see
H's edges as above them whatever their ranks.
"""
from __future__ import annotations

import numpy as np

from hornet.core.jit import njit

from .core_rows import _level_of, _vertex_max
from .top_level import _popcount

__all__ = ["core_plan", "peel_core"]

_LOW = np.int64(0xFFFFFFFF)
_ONE = np.uint64(1)


@njit
def _entry(bits, pref, start, words, r, c):
    """The position of row ``r``'s entry for core vertex ``c`` (whose bit is set)."""
    w = r * words + (c >> 6)
    return start[r] + pref[w] + _popcount(bits[w] & ((_ONE << np.uint64(c & 63)) - _ONE))


@njit
def core_plan(keys, truss, support, n, batch_stamp, stamp, max_vertices, min_level):
    """The level T of the core of at most ``max_vertices`` vertices from level ``min_level``
    (:func:`~hornet.algos.ktruss.core_rows.core_level`; edges with ``batch_stamp == stamp``
    left out) and the work :func:`peel_core` would do on it, bounded from above: its
    edges times the words of a row, plus a third of their supports (every triangle of the
    core has three core edges). Returns ``(T, work)`` (T above every level: no core)."""
    vmax, top = _vertex_max(keys, truss, n, batch_stamp, stamp)
    T = _level_of(vmax, top, n, max_vertices, min_level)
    nv = 0
    for x in range(n):
        if vmax[x] >= T:
            nv += 1
    m = np.int64(0)
    sup = np.int64(0)
    for s in range(keys.shape[0]):
        if keys[s] >= 0 and truss[s] >= T and batch_stamp[s] != stamp:
            m += 1
            sup += support[s]
    return T, m * ((nv + 63) // 64) + sup // 3


@njit
def peel_core(core, keys, truss, rank, counters):
    """Decompose the core's edges (module docstring): their exact numbers into ``truss``
    (those that fell below the core's level T keep theirs); ranks from ``counters[1]``
    (advanced) in the peel's order into ``rank``, for the edges left at T or above.
    ``core``: :func:`~hornet.algos.ktruss.core_rows.build_core_at` of the current numbers
    (its rows are not changed). Returns ``(slots, old, fell, count, work)``: the core's edge
    slots (int64), their numbers before (int32), whether each fell, the level count of each
    that did not (int32: its triangles whose other two edges have its number or more, which
    are the core triangles left when its level's peel starts) and the work (row words read
    plus triangles met)."""
    loc, prm, bits, pref, start, cslot, ctr = core
    T = prm[0]
    words = prm[1]
    nv = prm[2]
    total = start[nv]
    m = total // 2
    # edge ids: entry positions -> edge, each edge's two core vertices
    eid = np.empty(total, np.int32)
    ea = np.empty(m, np.int64)
    eb = np.empty(m, np.int64)
    slots = np.empty(m, np.int64)
    e = 0
    for r in range(nv):
        pos = start[r]
        for wd in range(words):
            x = bits[r * words + wd]
            while x:
                low = x & (~x + _ONE)
                c = wd * 64 + _popcount(low - _ONE)
                x ^= low
                if r < c:
                    eid[pos] = e
                    ea[e] = r
                    eb[e] = c
                    slots[e] = cslot[pos]
                    e += 1
                else:
                    eid[pos] = eid[_entry(bits, pref, start, words, c, r)]
                pos += 1
    live = bits.copy()
    sup = np.empty(m, np.int32)
    for i in range(m):
        a = ea[i] * words
        b = eb[i] * words
        c = 0
        for wd in range(words):
            c += _popcount(live[a + wd] & live[b + wd])
        sup[i] = c
    work = np.int64(m) * words
    # level by level: at level k the edges with at most k - 2 triangles among the edges
    # left go, in the order they are queued (each triangle is met once, when its first
    # edge goes: its bits are cleared then)
    old = np.empty(m, np.int32)
    fell = np.zeros(m, np.bool_)
    gone = np.zeros(m, np.bool_)
    count = np.empty(m, np.int32)
    cur = np.arange(m).astype(np.int32)      # the edges left, ascending
    ncur = m
    queue = np.empty(m, np.int32)
    tail = counters[1]
    while ncur:
        low = sup[cur[0]]
        for i in range(ncur):
            low = min(low, sup[cur[i]])
            count[cur[i]] = sup[cur[i]]
        k = low + 2                           # above the last level: low >= k - 1
        nq = 0
        for i in range(ncur):
            e = cur[i]
            if sup[e] <= k - 2:
                gone[e] = True
                queue[nq] = e
                nq += 1
        head = 0
        while head < nq:
            e = queue[head]
            head += 1
            a = ea[e]
            b = eb[e]
            ra = a * words
            rb = b * words
            for wd in range(words):
                x = live[ra + wd] & live[rb + wd]
                while x:
                    lowbit = x & (~x + _ONE)
                    below = lowbit - _ONE
                    x ^= lowbit
                    work += 1
                    fa = eid[start[a] + pref[ra + wd] + _popcount(bits[ra + wd] & below)]
                    fb = eid[start[b] + pref[rb + wd] + _popcount(bits[rb + wd] & below)]
                    sup[fa] -= 1
                    if sup[fa] <= k - 2 and not gone[fa]:
                        gone[fa] = True
                        queue[nq] = fa
                        nq += 1
                    sup[fb] -= 1
                    if sup[fb] <= k - 2 and not gone[fb]:
                        gone[fb] = True
                        queue[nq] = fb
                        nq += 1
            live[ra + (b >> 6)] &= ~(_ONE << np.uint64(b & 63))
            live[rb + (a >> 6)] &= ~(_ONE << np.uint64(a & 63))
            x = slots[e]
            old[e] = truss[x]
            if k < T:
                fell[e] = True                # left at its number before, an upper bound
            else:
                truss[x] = k
                rank[x] = tail
                tail += 1
        j = 0
        for i in range(ncur):
            if not gone[cur[i]]:
                cur[j] = cur[i]
                j += 1
        ncur = j
    counters[1] = tail
    return slots, old, fell, count, work
