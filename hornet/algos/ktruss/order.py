"""The k-order of the dynamic truss (CPU Numba kernels): insertions in order, deletions
re-placed.

The k-order (Zhang and Yu, "Unboundedness and efficiency of truss maintenance in evolving
graphs", SIGMOD 2019) lists the edges by (truss number, rank): within a level, the ranks
follow the order in which a peeling removed the edges. Its invariant: every edge e lies in
at most ``t(e) - 2`` triangles whose other two edges both come after e ("s+(e) <= t(e) - 2").
The static decomposition gives one (:func:`hornet.algos.ktruss.static.truss_numbers_and_rounds`:
truss number, peeling round); ranks are then made unique, and new ranks come from two
counters shared by all levels, ``head`` (decreasing: the start of a level) and ``tail``
(increasing: the end of a level), each the next free rank, since ranks are only compared
within a level (and must differ there: the order is total).

Why it matters: after an insertion, the edges of level k that rise to k + 1 (the set A)
are found by scanning level k in order from the edges that may now break the invariant,
and an edge with no triangle shared with an earlier candidate cannot rise (its count is
s+(e) <= k - 2); so the scan only visits the candidates' later neighbours, not the whole
triangle-connected part of the level (:func:`raise_in_order`). After a deletion, the edges
whose number fell get new places at the end of their new level (:func:`order_after_deletion`).
"""
from __future__ import annotations

import numpy as np

from hornet.core.jit import njit

from .region import _ends, _grow, _new_rows, _triangles, intersect_work


@njit
def _heap_push(hr, hs, n, r, s):
    """Push slot ``s`` with rank ``r`` on the min-heap ``hr/hs[:n]``; returns the arrays
    (grown as needed) and the new size."""
    hr = _grow(hr, n + 1)
    hs = _grow(hs, n + 1)
    i = n
    hr[i] = r
    hs[i] = s
    while i > 0:
        p = (i - 1) >> 1
        if hr[p] <= hr[i]:
            break
        hr[p], hr[i] = hr[i], hr[p]
        hs[p], hs[i] = hs[i], hs[p]
        i = p
    return hr, hs, n + 1


@njit
def _heap_pop(hr, hs, n):
    """The slot of least rank, removed; returns (slot, new size)."""
    s = hs[0]
    n -= 1
    if n > 0:
        hr[0] = hr[n]
        hs[0] = hs[n]
        i = 0
        while True:
            c = 2 * i + 1
            if c >= n:
                break
            if c + 1 < n and hr[c + 1] < hr[c]:
                c += 1
            if hr[i] <= hr[c]:
                break
            hr[c], hr[i] = hr[i], hr[c]
            hs[c], hs[i] = hs[i], hs[c]
            i = c
    return s, n


@njit
def _rise(s, r, k, rank, truss, raised, level, nraised):
    """Edge ``s`` rises to level k + 1 with rank ``r``, recorded in ``raised`` / ``level``
    (grown as needed). Returns ``(raised, level, nraised)``."""
    rank[s] = r
    truss[s] = k + 1
    raised = _grow(raised, nraised + 1)
    level = _grow(level, nraised + 1)
    raised[nraised] = s
    level[nraised] = k + 1
    return raised, level, nraised + 1


@njit
def _end_level(nc, cand, alive, gone, ngone, k, rank, truss, counters, seeds, hr, hs,
               raised, level, nraised):
    """The end of level ``k`` of the insertion scan. The peeled candidates (``gone``) take
    the next ranks at the end of level k; the survivors (``alive``) become ``seeds[:ns]``,
    rise to k + 1 and take, in rank order, the ranks just below the start of level k + 1
    (``counters[0]``: the next free rank below). Returns ``(ns, seeds, hr, hs, raised,
    level, nraised)`` (the arrays grown as needed)."""
    for i in range(ngone):
        rank[cand[gone[i]]] = counters[1]
        counters[1] += 1
    ns = 0
    for i in range(nc):
        if alive[i]:
            seeds = _grow(seeds, ns + 1)
            seeds[ns] = cand[i]
            ns += 1
    if ns == 0:
        return ns, seeds, hr, hs, raised, level, nraised
    # ranks are unique; the heap sorts them without compiling a NumPy sort into the kernel
    nh = 0
    for i in range(ns):
        hr, hs, nh = _heap_push(hr, hs, nh, rank[seeds[i]], seeds[i])
    base = counters[0] - ns + 1
    for j in range(ns):
        s, nh = _heap_pop(hr, hs, nh)
        raised, level, nraised = _rise(s, base + j, k, rank, truss, raised, level, nraised)
    counters[0] = base - 1
    return ns, seeds, hr, hs, raised, level, nraised


@njit
def _peel_members(nc, cand, toff, tp, tq, truss, member, stamp, loc, keep):
    """Peel the members ``cand[:nc]`` (``member[e] == stamp``) at ``keep`` triangles: a stored
    triangle (``tp/tq[toff[i]:toff[i + 1]]``) lives while each other edge is a live member
    or has truss > ``floor`` (the members' level, ``keep + 1``). Returns (alive flags, the
    removed members' indices in removal order, how many)."""
    floor = keep + 1
    for i in range(nc):
        loc[cand[i]] = i
    cnt = np.zeros(nc, np.int64)
    for i in range(nc):
        c = 0
        for j in range(toff[i], toff[i + 1]):
            p = tp[j]
            q = tq[j]
            if ((member[p] == stamp or truss[p] > floor)
                    and (member[q] == stamp or truss[q] > floor)):
                c += 1
        cnt[i] = c
    alive = np.ones(nc, np.bool_)              # False once queued for removal
    done = np.zeros(nc, np.bool_)              # removal processed: its triangles are dead
    queue = np.empty(nc, np.int64)
    nq = 0
    for i in range(nc):
        if cnt[i] < keep:
            alive[i] = False
            queue[nq] = i
            nq += 1
    head = 0
    while head < nq:
        i = queue[head]
        head += 1
        for j in range(toff[i], toff[i + 1]):
            p = tp[j]
            q = tq[j]
            pin = member[p] == stamp
            qin = member[q] == stamp
            if not (pin or truss[p] > floor) or not (qin or truss[q] > floor):
                continue                           # never counted
            lp = loc[p] if pin else -1
            lq = loc[q] if qin else -1
            if (lp >= 0 and done[lp]) or (lq >= 0 and done[lq]):
                continue                           # killed by a member removed earlier
            if lp >= 0 and alive[lp]:
                cnt[lp] -= 1
                if cnt[lp] < keep:
                    alive[lp] = False
                    queue[nq] = lp
                    nq += 1
            if lq >= 0 and alive[lq]:
                cnt[lq] -= 1
                if cnt[lq] < keep:
                    alive[lq] = False
                    queue[nq] = lq
                    nq += 1
        done[i] = True
    return alive, queue, nq


@njit
def _near_block(keys, y, k, vfloor):
    """Whether edge slot ``y``, scanned at level ``k``, has an endpoint in a dense block whose
    lowest number is at most k (its count would compare ranks with block edges, which keep
    none; at k = the lowest number - 1 every block edge is above the level)."""
    key = keys[y]
    for x in (np.int64(key >> 32), np.int64(key & 0xFFFFFFFF)):
        if x < vfloor.shape[0] and k >= vfloor[x]:
            return True
    return False


@njit
def raise_in_order(new_slots, keys, shift, deg, ptr, truss, support, rank, counters, clock,
                   member, pushed, loc, row_at, row_used, mark, limit, vfloor, extra):
    """Raise truss numbers after an insertion batch, level by level, scanning the k-order.

    Before the call the inserted edges ``new_slots`` hold truss 2 and the first ranks of
    level 2 (before every other edge: each is then first in all its triangles, and no other
    edge's s+ changed), every other edge its number and rank before the batch (a valid
    k-order of the old graph). ``counters`` = [head, tail] (see the module docstring).

    For k = 2, 3, ...: the seeds (the inserted edges at k = 2, then the edges that rose to
    k) are at the start of level k. Level k is scanned in rank order from the seeds
    (a min-heap): visiting y, its count is the number of its triangles whose other two
    edges are each above level k, a candidate, or at level k after y. y becomes a candidate
    when the count reaches k - 1, and then its later level-k neighbours (in a triangle whose
    third edge is at level >= k) are queued. An edge with fewer than k - 1 triangles in all
    (``support``, current) cannot reach that count: it is passed over without a visit. The candidates contain every edge of A (the
    level-k edges of the new (k + 1)-truss): by induction in rank order, an edge of A
    counts all its triangles of that truss, and the first edge of A that no earlier
    candidate queued would have s+ >= k - 1 without being a seed. Peeling the candidates at
    k - 1 triangles (others: live candidates or above level k) leaves exactly A.

    The order stays valid: A moves to the start of level k + 1 (ranks from ``head``; the
    next level's seeds); a visited edge that was no candidate keeps its place (the edges
    after it now are a subset of those its count included); the peeled candidates go to the
    end of level k in peeling order (ranks from ``tail``): each has no level-k neighbour
    after the scan's reach, and its peeling count bounds its new s+.

    ``extra`` (int64, sorted by truss number): more seeds, each put in at its own level (the
    edges that gained a triangle with an edge that joined a dense block: that edge is above
    them at once, so their s+ may have grown at their level).

    Dense blocks (:mod:`hornet.algos.ktruss.dense`): ``vfloor`` (int64 per vertex: the lowest
    number of the blocks it is in; the int64 maximum outside every block). Their edges keep
    no rank; the scan stops (aborted) before it could need one or after it broke a block's
    separation: when it would visit, at a level k >= the floor, an edge with an endpoint
    in a block (below that level every block edge is above the scanned level, so only the
    truss numbers of block edges are read, never their ranks; an edge that rose to the
    floor is a seed of that level, visited first).

    ``member`` / ``pushed`` / ``loc``: slot-indexed scratch (stamps of the clock, candidate
    positions). Returns ``(slots, levels, touched, work, aborted, k)``: one entry per raise
    by one level (slot and the level reached; an edge raised twice appears twice), the edges
    visited (with repeats across levels), the work (the entries of the adjacency lists
    intersected, :func:`~hornet.algos.ktruss.region.intersect_work`, plus triangles examined),
    whether it passed ``limit`` (then the state is incomplete and the caller falls back to
    the static decomposition) and the level scanned last: after a stop, every edge below
    it holds its final number and every other edge at least k
    (:func:`~hornet.algos.ktruss.finish.finish_from_level`).
    """
    work = np.int64(0)
    clock[0] += 1
    rstamp = clock[0]
    rows = _new_rows()
    pa = np.empty(64, np.int64)
    pb = np.empty(64, np.int64)
    tp_ = np.empty(64, np.int64)
    tq_ = np.empty(64, np.int64)
    raised = np.empty(16, np.int64)
    level = np.empty(16, np.int64)
    nraised = 0
    touched = 0
    hr = np.empty(64, np.int64)
    hs = np.empty(64, np.int64)
    cand = np.empty(16, np.int64)
    toff = np.zeros(17, np.int64)
    tp = np.empty(64, np.int64)
    tq = np.empty(64, np.int64)
    ptoff = np.zeros(1, np.int64)              # the previous level's candidate lists
    ptp = np.empty(0, np.int64)
    ptq = np.empty(0, np.int64)
    seeds = new_slots.copy()
    ns = seeds.shape[0]
    k = 2
    stamp = np.int64(0)
    ne = extra.shape[0]
    ei = 0
    while True:
        if ns == 0:
            # nothing rose to level k: the next level with extra seeds
            if ei >= ne:
                break
            k = max(k, np.int64(truss[extra[ei]]))
            stamp = np.int64(0)                # no candidate lists of the level below
        pstamp = stamp
        clock[0] += 1
        stamp = clock[0]
        nh = 0
        while ei < ne and truss[extra[ei]] <= k:
            s = extra[ei]
            ei += 1
            if truss[s] == k and pushed[s] != stamp:
                pushed[s] = stamp
                hr, hs, nh = _heap_push(hr, hs, nh, rank[s], s)
        for i in range(ns):
            s = seeds[i]
            if pushed[s] != stamp:
                pushed[s] = stamp
                hr, hs, nh = _heap_push(hr, hs, nh, rank[s], s)
        nc = 0
        nt = 0
        while nh > 0:
            y, nh = _heap_pop(hr, hs, nh)
            if work > limit or _near_block(keys, y, k, vfloor):
                return raised[:nraised], level[:nraised], touched, work, True, k
            if support[y] < k - 1:
                continue                       # fewer triangles than a candidate counts
            if pstamp != 0 and member[y] == pstamp:
                # rose from the level below: its triangle list (others at >= k) is kept
                lo = ptoff[loc[y]]
                n = ptoff[loc[y] + 1] - lo
                if n > tp_.shape[0]:           # the four scratch arrays share one size
                    pa = np.empty(2 * n, np.int64)
                    pb = np.empty(2 * n, np.int64)
                    tp_ = np.empty(2 * n, np.int64)
                    tq_ = np.empty(2 * n, np.int64)
                for i in range(n):             # a loop, not a slice assignment: its
                    tp_[i] = ptp[lo + i]       # shape check compiles Numba's string
                    tq_[i] = ptq[lo + i]       # formatting into the kernel
                work += n + 1                  # no intersection, the same triangle checks
            else:
                rows, pa, pb, tp_, tq_, n = _triangles(y, keys, shift, deg, ptr, rows, row_at,
                                                       row_used, rstamp, pa, pb, tp_, tq_,
                                                       mark)
                yu, yv = _ends(keys, y)
                work += n + 1 + intersect_work(deg[yu], deg[yv])
            touched += 1
            ry = rank[y]
            count = 0
            for i in range(n):
                p = tp_[i]
                q = tq_[i]
                tpv = truss[p]
                tqv = truss[q]
                if ((tpv > k or (tpv == k and (member[p] == stamp or rank[p] > ry)))
                        and (tqv > k or (tqv == k and (member[q] == stamp or rank[q] > ry)))):
                    count += 1
            if count < k - 1:
                continue                       # stays at level k, in its place
            member[y] = stamp
            cand = _grow(cand, nc + 1)
            toff = _grow(toff, nc + 2)
            tp = _grow(tp, nt + n)
            tq = _grow(tq, nt + n)
            cand[nc] = y
            for i in range(n):
                p = tp_[i]
                q = tq_[i]
                if truss[p] < k or truss[q] < k:
                    continue
                tp[nt] = p
                tq[nt] = q
                nt += 1
                for side in range(2):
                    z = p if side == 0 else q
                    if truss[z] == k and rank[z] > ry and pushed[z] != stamp:
                        pushed[z] = stamp
                        hr, hs, nh = _heap_push(hr, hs, nh, rank[z], z)
            nc += 1
            toff[nc] = nt
        if nc == 0:
            ns = 0
            continue
        work += nt                             # the peel reads the candidates' triangles
        if work > limit:
            return raised[:nraised], level[:nraised], touched, work, True, k
        alive, gone, ngone = _peel_members(nc, cand, toff, tp, tq, truss, member, stamp, loc,
                                           k - 1)
        # the peeled candidates end level k; A: the survivors start level k + 1
        ns, seeds, hr, hs, raised, level, nraised = _end_level(
            nc, cand, alive, gone, ngone, k, rank, truss, counters, seeds, hr, hs, raised,
            level, nraised)
        if ns == 0:
            continue
        ptoff, toff = toff, ptoff
        ptp, tp = tp, ptp
        ptq, tq = tq, ptq
        toff = _grow(toff, 17)
        k += 1
    return raised[:nraised], level[:nraised], touched, work, False, k


@njit
def order_after_deletion(slots, tri, truss, rank, counters, clock, member, loc, limit):
    """Give the edges whose truss number fell (``slots``, new numbers in ``truss``) their
    places in the k-order: the end of their new level, in an order peeled from them.

    For the edges that fell to level k: the count of each is its triangles whose other two
    edges are above level k or fell to k too; peeling at k - 2 (the lowest counts first,
    any order) removes all of them, since the numbers are exact (no subset of them is in
    the (k + 1)-truss). Placed at the end of level k in that order, each has s+ at most
    its count when removed. No other edge's s+ grows: an edge at level k is now before
    them as before; an edge between k and the old level was after them and is now before
    them; deleted triangles only lower counts.

    ``tri``: the edges' triangles as :func:`~hornet.algos.ktruss.region.lower_after_deletion`
    found them (offsets aligned with ``slots``, other edges' slots), so no intersection is
    repeated here.

    Returns ``(ok, work)``: ``ok`` False if some edge could not be peeled (the numbers
    were not exact) or the work passed ``limit``; the caller then rebuilds the order from
    a static decomposition.
    """
    work = np.int64(0)
    m = slots.shape[0]
    if m == 0:
        return True, work
    toff_in, bp, bq = tri
    perm = np.argsort(truss[slots], kind="mergesort")
    by_level = slots[perm]
    toff = np.zeros(m + 1, np.int64)
    tp = np.empty(64, np.int64)
    tq = np.empty(64, np.int64)
    a = 0
    while a < m:
        k = truss[by_level[a]]
        b = a
        while b < m and truss[by_level[b]] == k:
            b += 1
        clock[0] += 1
        stamp = clock[0]
        for i in range(a, b):
            member[by_level[i]] = stamp
        nt = 0
        for i in range(a, b):
            lo = toff_in[perm[i]]
            n = toff_in[perm[i] + 1] - lo
            work += n + 1
            if work > limit:
                return False, work
            tp = _grow(tp, nt + n)
            tq = _grow(tq, nt + n)
            for j in range(n):
                p = bp[lo + j]
                q = bq[lo + j]
                if truss[p] < k or truss[q] < k:
                    continue
                tp[nt] = p
                tq[nt] = q
                nt += 1
            toff[i - a + 1] = nt
        nc = b - a
        alive, gone, ngone = _peel_members(nc, by_level[a:b], toff[:nc + 1], tp, tq, truss,
                                           member, stamp, loc, k - 1)
        if ngone < nc:
            return False, work
        for i in range(ngone):
            rank[by_level[a + gone[i]]] = counters[1]
            counters[1] += 1
        a = b
    return True, work
