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

from hornet.core.atomics import atomic_add
from hornet.core.jit import njit, part_range, split_kernel

from .core_rows import _level_of, _vertex_max
from .top_level import _popcount

__all__ = ["core_plan", "peel_core"]

_ONE = np.uint64(1)
#: a round of at least this many edges runs on several threads (each edge's triangles are
#: a row AND and hundreds of bits on a core: a few such edges repay handing a part over)
ROUND_SPLIT = 1024


@njit
def _entry(bits, pref, start, words, r, c):
    """The position of row ``r``'s entry for core vertex ``c`` (whose bit is set)."""
    w = r * words + (c >> 6)
    return start[r] + pref[w] + _popcount(bits[w] & ((_ONE << np.uint64(c & 63)) - _ONE))


@njit
def core_plan(keys, truss, support, n, batch_stamp, stamp, max_vertices, min_level):
    """The level T of the core of at most ``max_vertices`` vertices from level ``min_level``
    (:func:`~hornet.algos.ktruss.core_rows.build_core`'s level; edges with ``batch_stamp ==
    stamp`` left out) and the work :func:`peel_core` would do on it, bounded from above: its
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
def _core_edges(core):
    """The core's edges: ``(eid, ea, eb, slots)``, the edge of every row entry (int32,
    aligned with the rows' entries), each edge's two core vertices (int64) and its slot."""
    loc, prm, bits, pref, start, cslot, ctr = core
    words = prm[1]
    nv = prm[2]
    total = start[nv]
    m = total // 2
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
    return eid, ea, eb, slots


@split_kernel(threshold=ROUND_SPLIT)
def _supports(ea, eb, live, words, sup, part, parts):
    """Each core edge's triangles in the core: the bits of its two rows' AND."""
    for i in range(*part_range(ea.shape[0], part, parts)):
        a = ea[i] * words
        b = eb[i] * words
        c = 0
        for wd in range(words):
            c += _popcount(live[a + wd] & live[b + wd])
        sup[i] = c


@njit
def _destroy_range(front, lo, hi, ea, eb, live, bits, pref, start, words, eid, sup, dying, k,
                   nxt, nnext, atomic):
    """:func:`_destroy` of ``front[lo:hi]``, with atomic updates when ``atomic``."""
    work = np.int64(0)
    for i in range(lo, hi):
        e = front[i]
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
                fa = eid[start[a] + pref[ra + wd] + _popcount(bits[ra + wd] & below)]
                fb = eid[start[b] + pref[rb + wd] + _popcount(bits[rb + wd] & below)]
                if (dying[fa] and fa < e) or (dying[fb] and fb < e):
                    continue                      # another going edge destroys it
                work += 1
                for f in (fa, fb):
                    if dying[f]:
                        continue
                    if atomic:
                        was = atomic_add(sup, f, -1)
                    else:
                        was = sup[f]
                        sup[f] = was - 1
                    if was == k - 1:
                        if atomic:
                            j = atomic_add(nnext, 0, 1)
                        else:
                            j = nnext[0]
                            nnext[0] = j + 1
                        nxt[j] = f
    return work


@split_kernel(threshold=ROUND_SPLIT, combine=sum)
def _destroy(front, ea, eb, live, bits, pref, start, words, eid, sup, dying, k, nxt, nnext,
             part, parts):
    """One round of level ``k``: the edges ``front`` (``dying``) go. Each triangle of live
    edges with one of them is destroyed by its going edge of least id; its other edges lose
    it (atomically when in parts), and an edge whose support falls to ``k - 2`` joins the
    next round (``nxt``, ``nnext[0]`` its size). Returns the triangles met."""
    lo, hi = part_range(front.shape[0], part, parts)
    return _destroy_range(front, lo, hi, ea, eb, live, bits, pref, start, words, eid, sup,
                          dying, k, nxt, nnext, parts > 1)


@njit
def _rounds(st, front, nxt, nnext, cur, ea, eb, live, bits, pref, start, words, eid, sup,
            dying, gone, count, old, fell, slots, truss, rank, T, big):
    """Run the peel's rounds on this thread until it ends (returns False) or a round of
    ``big`` edges or more is next (returns True: the caller runs :func:`_destroy` on it in
    parts, then :func:`_retire`). ``st``: int64 state (round size, edges left, level,
    next rank, work). At a level's start the level is the least support left plus two and
    each edge left takes its support as its level count (the core triangles whose other
    two edges have its number or more, if it goes at this level)."""
    while True:
        if st[0] == 0:
            ncur = 0
            for i in range(st[1]):
                if not gone[cur[i]]:
                    cur[ncur] = cur[i]
                    ncur += 1
            st[1] = ncur
            if ncur == 0:
                return False
            low = sup[cur[0]]
            for i in range(ncur):
                low = min(low, sup[cur[i]])
                count[cur[i]] = sup[cur[i]]
            k = low + 2                           # above the last level: low >= k - 1
            nf = 0
            for i in range(ncur):
                e = cur[i]
                if sup[e] <= k - 2:
                    dying[e] = True
                    front[nf] = e
                    nf += 1
            st[0] = nf
            st[2] = k
        if st[0] >= big:
            return True
        nnext[0] = 0
        st[4] += _destroy_range(front, 0, st[0], ea, eb, live, bits, pref, start, words, eid,
                                sup, dying, st[2], nxt, nnext, False)
        _retire(st, front, nxt, nnext, ea, eb, live, words, dying, gone, old, fell, slots,
                truss, rank, T)


@njit
def _retire(st, front, nxt, nnext, ea, eb, live, words, dying, gone, old, fell, slots, truss,
            rank, T):
    """After a round: its edges leave the rows and take level ``st[2]`` (those below the
    core's level ``T`` fell and keep their numbers) and ranks in round order; the next
    round's edges are marked."""
    k = st[2]
    for i in range(st[0]):
        e = front[i]
        a = ea[e]
        b = eb[e]
        live[a * words + (b >> 6)] &= ~(_ONE << np.uint64(b & 63))
        live[b * words + (a >> 6)] &= ~(_ONE << np.uint64(a & 63))
        dying[e] = False
        gone[e] = True
        x = slots[e]
        old[e] = truss[x]
        if k < T:
            fell[e] = True                        # left at its number before, an upper bound
        else:
            truss[x] = k
            rank[x] = st[3]
            st[3] += 1
    n = nnext[0]
    for i in range(n):
        front[i] = nxt[i]
        dying[nxt[i]] = True
    st[0] = n


def peel_core(core, keys, truss, rank, counters):
    """Decompose the core's edges (module docstring): their exact numbers into ``truss``
    (those that fell below the core's level T keep theirs); ranks from ``counters[1]``
    (advanced) in the peel's order into ``rank``, for the edges left at T or above. The
    peel goes level by level in rounds: a round's edges go together, each triangle with
    one of them is met once; large rounds run on several threads.
    ``core``: :func:`~hornet.algos.ktruss.core_rows.build_core_at` of the current numbers
    (its rows are not changed). Returns ``(slots, old, fell, count, work)``: the core's edge
    slots (int64), their numbers before (int32), whether each fell, the level count of each
    that did not (int32: its triangles whose other two edges have its number or more, which
    are the core triangles left when its level's peel starts) and the work (row words read
    plus triangles met)."""
    loc, prm, bits, pref, start, cslot, ctr = core
    T, words = int(prm[0]), int(prm[1])
    eid, ea, eb, slots = _core_edges(core)
    m = ea.shape[0]
    live = bits.copy()
    sup = np.empty(m, np.int32)
    _supports(ea, eb, live, words, sup)
    front = np.empty(m, np.int64)
    nxt = np.empty(m, np.int64)
    nnext = np.zeros(1, np.int64)
    cur = np.arange(m, dtype=np.int64)           # the edges left, ascending
    dying = np.zeros(m, np.bool_)
    gone = np.zeros(m, np.bool_)
    count = np.empty(m, np.int32)
    old = np.empty(m, np.int32)
    fell = np.zeros(m, np.bool_)
    # round size, edges left, level, next rank, work
    st = np.array([0, m, 0, counters[1], m * words], np.int64)
    while _rounds(st, front, nxt, nnext, cur, ea, eb, live, bits, pref, start, words, eid,
                  sup, dying, gone, count, old, fell, slots, truss, rank, T, ROUND_SPLIT):
        nnext[0] = 0
        st[4] += _destroy.split(front[:st[0]], ea, eb, live, bits, pref, start, words, eid,
                                sup, dying, int(st[2]), nxt, nnext)
        _retire(st, front, nxt, nnext, ea, eb, live, words, dying, gone, old, fell, slots,
                truss, rank, T)
    counters[1] = st[3]
    return slots, old, fell, count, int(st[4])
