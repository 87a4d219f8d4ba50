"""Numba kernels of :class:`hornet.algos.dynamic_truss.DynamicTruss` (CPU).

Per-edge state lives in an :class:`~hornet.algos._edge_table.EdgeTable` (hash of the
undirected edge -> slot); every array named ``truss``, ``support`` or ``*_stamp`` here is
indexed by slot. Stamp arrays hold values of a clock that only grows, so "stamped in this
batch" is ``stamp[s] > base`` and nothing is ever cleared (no pass over the table).

Kernels:

- :func:`insertion_supports` / :func:`deletion_supports`: exact support update for a batch
  (a triangle with several batch edges is counted once, by its batch edge of lowest key).
  The deletion kernel reads the graph before the batch as ``G_now`` merged with the batch
  adjacency, and also reports the surviving edges that lost a triangle at their own level
  (the seeds of the deletion region).
- :func:`deletion_region`: the edges whose truss number may fall (see the function).
- :func:`insertion_levels`: the batched insertion, level by level (see the function).
- :func:`peel_region`: the bounded re-peel of a region with every other edge fixed at its
  truss number.
"""
from __future__ import annotations

import numba
import numpy as np
from numba import prange

from hornet.memory.pointers import int32_view

from ._edge_table import edge_key, table_find
from ._kernels import atomic_add, atomic_cas

BIG = np.int32(1 << 30)         # "no cap": a triangle made only of region edges
_LOW = np.int64(0xFFFFFFFF)


# --------------------------------------------------------------------------------------------
# Small helpers


@numba.njit(cache=True, inline="always")
def _slot(keys, shift, u, w):
    return table_find(keys, shift, edge_key(u, w))


@numba.njit(cache=True, inline="always")
def _ends(keys, s):
    k = keys[s]
    return np.int32(k >> 32), np.int32(k & _LOW)


@numba.njit(cache=True)
def _intersect(A, da, B, db, out):
    """Common values of the sorted ``A[:da]`` and ``B[:db]`` into ``out``; returns how many.

    Merges lists of similar length; binary-searches the shorter in the longer when their
    lengths differ by more than 16x (a hub against a low-degree vertex).
    """
    n = 0
    if da == 0 or db == 0:
        return 0
    if da * 16 < db or db * 16 < da:
        if da > db:
            A, B = B, A
            da, db = db, da
        lo = 0
        for i in range(da):
            x = A[i]
            hi = db
            while lo < hi:
                mid = (lo + hi) >> 1
                if B[mid] < x:
                    lo = mid + 1
                else:
                    hi = mid
            if lo == db:
                break
            if B[lo] == x:
                out[n] = x
                n += 1
        return n
    i = 0
    j = 0
    while i < da and j < db:
        a = A[i]
        b = B[j]
        if a == b:
            out[n] = a
            n += 1
            i += 1
            j += 1
        elif a < b:
            i += 1
        else:
            j += 1
    return n


@numba.njit(cache=True)
def _row(deg, ptr, u):
    d = deg[u] if u < deg.shape[0] else 0
    if d == 0:
        return int32_view(np.int64(0), 0), 0
    return int32_view(ptr[u], d), d


@numba.njit(cache=True)
def _common_now(deg, ptr, u, v, buf):
    """N(u) ∩ N(v) in the current graph; returns (buffer, count) (buffer grown as needed)."""
    A, da = _row(deg, ptr, u)
    B, db = _row(deg, ptr, v)
    need = min(da, db)
    if need > buf.shape[0]:
        buf = np.empty(2 * need, np.int32)
    return buf, _intersect(A, da, B, db, buf)


@numba.njit(cache=True)
def _merge_rows(A, da, B, db):
    """Sorted union of two disjoint sorted lists (the neighbours before a deletion)."""
    out = np.empty(da + db, np.int32)
    i = 0
    j = 0
    n = 0
    while i < da or j < db:
        if j >= db or (i < da and A[i] < B[j]):
            out[n] = A[i]
            i += 1
        else:
            out[n] = B[j]
            j += 1
        n += 1
    return out


@numba.njit(cache=True)
def _batch_row(vertices, offsets, neighbours, x):
    lo = 0
    hi = vertices.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if vertices[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    if lo < vertices.shape[0] and vertices[lo] == x:
        a = offsets[lo]
        b = offsets[lo + 1]
        return neighbours[a:b], np.int64(b - a)
    return neighbours[:0], np.int64(0)


# --------------------------------------------------------------------------------------------
# Support updates


@numba.njit(parallel=True, cache=True)
def insertion_supports(bu, bv, bslot, deg, ptr, keys, shift, batch_stamp, stamp, support):
    """Add the triangles the inserted edges (already in the graph and the table) closed.

    ``batch_stamp[s] == stamp`` marks the batch's edges. A new triangle is counted by its
    batch edge of lowest key, once, adding 1 to the support of its three edges.
    Returns the number of new triangles.
    """
    n = bu.shape[0]
    found = np.zeros(n, np.int64)
    for i in prange(n):
        u = bu[i]
        v = bv[i]
        A, da = _row(deg, ptr, u)
        B, db = _row(deg, ptr, v)
        buf = np.empty(min(da, db), np.int32)
        c = _intersect(A, da, B, db, buf)
        kb = edge_key(u, v)
        sb = bslot[i]
        own = 0
        for j in range(c):
            w = buf[j]
            s2 = _slot(keys, shift, u, w)
            s3 = _slot(keys, shift, v, w)
            if batch_stamp[s2] == stamp and edge_key(u, w) < kb:
                continue
            if batch_stamp[s3] == stamp and edge_key(v, w) < kb:
                continue
            own += 1
            atomic_add(support, s2, 1)
            atomic_add(support, s3, 1)
        if own:
            atomic_add(support, sb, own)
        found[i] = own
    return found.sum()


@numba.njit(parallel=True, cache=True)
def deletion_supports(du, dv, dslot, deg, ptr, dvert, doff, dnbr, keys, shift, batch_stamp,
                      stamp, truss, support, seed_stamp, seeds, nseeds):
    """Subtract the triangles the deleted edges took with them; collect the deletion seeds.

    The deleted edges are gone from the graph but still in the table (stamped in
    ``batch_stamp``). Triangles are those of the graph before the batch: the neighbours of
    an endpoint are its current list merged with its batch list. A lost triangle is counted
    by its deleted edge of lowest key, once, subtracting 1 from each surviving edge.

    A surviving edge x lost a triangle *at its level* when the triangle's two other edges
    both have truss numbers >= truss[x]: only such edges may fall, and they are written to
    ``seeds`` (each once; ``nseeds[0]`` counts them; ``seeds`` must hold twice the number
    of lost triangles). Returns the number of lost triangles.
    """
    n = du.shape[0]
    found = np.zeros(n, np.int64)
    for i in prange(n):
        u = du[i]
        v = dv[i]
        A1, da1 = _row(deg, ptr, u)
        A2, da2 = _batch_row(dvert, doff, dnbr, u)
        B1, db1 = _row(deg, ptr, v)
        B2, db2 = _batch_row(dvert, doff, dnbr, v)
        A = _merge_rows(A1, da1, A2, da2)
        B = _merge_rows(B1, db1, B2, db2)
        buf = np.empty(min(A.shape[0], B.shape[0]), np.int32)
        c = _intersect(A, A.shape[0], B, B.shape[0], buf)
        kd = edge_key(u, v)
        td = truss[dslot[i]]
        own = 0
        for j in range(c):
            w = buf[j]
            s2 = _slot(keys, shift, u, w)
            s3 = _slot(keys, shift, v, w)
            gone2 = batch_stamp[s2] == stamp
            gone3 = batch_stamp[s3] == stamp
            if gone2 and edge_key(u, w) < kd:
                continue
            if gone3 and edge_key(v, w) < kd:
                continue
            own += 1
            t2 = truss[s2]
            t3 = truss[s3]
            if not gone2:
                atomic_add(support, s2, -1)
                if td >= t2 and t3 >= t2 and atomic_cas(seed_stamp, s2, seed_stamp[s2],
                                                        stamp) != stamp:
                    seeds[atomic_add(nseeds, 0, 1)] = s2
            if not gone3:
                atomic_add(support, s3, -1)
                if td >= t3 and t2 >= t3 and atomic_cas(seed_stamp, s3, seed_stamp[s3],
                                                        stamp) != stamp:
                    seeds[atomic_add(nseeds, 0, 1)] = s3
        found[i] = own
    return found.sum()


# --------------------------------------------------------------------------------------------
# The deletion region


@numba.njit(cache=True)
def _relevant(truss, join, base, p, tx, drop):
    """Edge p is in the region and may have fallen below tx (a batch lowers by <= drop)."""
    return join[p] > base and truss[p] - drop < tx


@numba.njit(cache=True)
def _evaluate(x, keys, shift, deg, ptr, truss, join, base, drop, buf):
    """Triangles of x at its level whose other edges are outside the region (or cannot fall
    below truss[x]); returns (buffer, count)."""
    u, v = _ends(keys, x)
    tx = truss[x]
    buf, c = _common_now(deg, ptr, u, v, buf)
    a = 0
    for j in range(c):
        w = buf[j]
        p = _slot(keys, shift, u, w)
        q = _slot(keys, shift, v, w)
        if truss[p] < tx or truss[q] < tx:
            continue
        if _relevant(truss, join, base, p, tx, drop) or _relevant(truss, join, base, q, tx, drop):
            continue
        a += 1
    return buf, a


@numba.njit(cache=True)
def deletion_region(seeds, keys, shift, deg, ptr, truss, drop, clock, eval_t, join, popped,
                    avail, limit):
    """The surviving edges whose truss number may fall after a deletion batch.

    An edge x keeps its truss number t when at least t - 2 of its triangles at level t
    (other two edges with truss >= t) survive with both other edges outside the region (or
    in it but unable to fall below t: a batch of ``drop`` deletions lowers a truss number by
    at most ``drop``). So: the seeds (edges that lost a level triangle to the batch) are
    evaluated; an edge whose available level triangles drop below t - 2 joins the region,
    and its level triangles are then subtracted from its neighbours' counts (each triangle
    once, by the first of its region edges to be processed), which may pull them in too.
    Every edge left outside keeps its number (the outside edges at level >= t, with the
    unchanged higher trusses, still form a t-truss of the new graph).

    ``clock`` (int64 (1,)) is the stamp clock; ``eval_t``, ``join``, ``popped`` are stamp
    arrays, ``avail`` an int32 scratch, all indexed by slot. Returns the region's slots, or
    an array of length ``limit + 1`` when it outgrows ``limit`` (the caller falls back).
    """
    base = clock[0]
    t = base
    region = np.empty(16, np.int64)
    nreg = 0
    head = 0
    buf = np.empty(64, np.int32)
    for i in range(seeds.shape[0]):
        x = seeds[i]
        tx = truss[x]
        if tx <= 2 or eval_t[x] > base:
            continue
        t += 1
        eval_t[x] = t
        buf, a = _evaluate(x, keys, shift, deg, ptr, truss, join, base, drop, buf)
        avail[x] = a
        if a < tx - 2:
            t += 1
            join[x] = t
            if nreg == region.shape[0]:
                region = np.concatenate((region, np.empty(nreg, np.int64)))
            region[nreg] = x
            nreg += 1
    buf2 = np.empty(64, np.int32)
    while head < nreg:
        p = region[head]
        head += 1
        if nreg > limit:
            break
        u, v = _ends(keys, p)
        tp = truss[p]
        buf2, c = _common_now(deg, ptr, u, v, buf2)
        for j in range(c):
            w = buf2[j]
            s1 = _slot(keys, shift, u, w)
            s2 = _slot(keys, shift, v, w)
            for side in range(2):
                x = s1 if side == 0 else s2
                q = s2 if side == 0 else s1
                if join[x] > base:
                    continue
                tx = truss[x]
                if tx <= 2 or tp < tx or truss[q] < tx or tp - drop >= tx:
                    continue
                if eval_t[x] <= base:
                    t += 1
                    eval_t[x] = t
                    buf, a = _evaluate(x, keys, shift, deg, ptr, truss, join, base, drop, buf)
                    avail[x] = a
                else:
                    q_in = _relevant(truss, join, base, q, tx, drop)
                    if q_in and (join[q] < eval_t[x] or popped[q] > base):
                        continue           # not counted at evaluation, or q subtracted it
                    if join[p] < eval_t[x]:
                        continue           # p was already out when x was evaluated
                    avail[x] -= 1
                if avail[x] < tx - 2:
                    t += 1
                    join[x] = t
                    if nreg == region.shape[0]:
                        region = np.concatenate((region, np.empty(nreg, np.int64)))
                    region[nreg] = x
                    nreg += 1
        t += 1
        popped[p] = t
    clock[0] = t + 1
    return region[:nreg]


# --------------------------------------------------------------------------------------------
# The bounded re-peel


@numba.njit(cache=True)
def _region_triangles(region, keys, shift, deg, ptr, truss, loc_stamp, loc, stamp, present):
    """Triangles of the region's edges in the current graph.

    Returns CSR ``(off int64 (R+1), p int32, q int32, cap int32)``: entry j of region edge i
    is a triangle whose other edges are p, q (local ids, -1 outside the region) and whose
    outside edges have truss numbers >= cap (BIG when both are inside). Triangles with an
    outside edge below ``present`` are left out (never alive at the levels peeled).
    """
    R = region.shape[0]
    cnt = np.zeros(R + 1, np.int64)
    buf = np.empty(64, np.int32)
    for i in range(R):
        u, v = _ends(keys, region[i])
        buf, c = _common_now(deg, ptr, u, v, buf)
        k = 0
        for j in range(c):
            w = buf[j]
            a = _slot(keys, shift, u, w)
            b = _slot(keys, shift, v, w)
            if (loc_stamp[a] != stamp and truss[a] < present) or \
               (loc_stamp[b] != stamp and truss[b] < present):
                continue
            k += 1
        cnt[i + 1] = k
    off = np.cumsum(cnt)
    m = off[R]
    P = np.empty(m, np.int32)
    Q = np.empty(m, np.int32)
    C = np.empty(m, np.int32)
    for i in range(R):
        u, v = _ends(keys, region[i])
        buf, c = _common_now(deg, ptr, u, v, buf)
        k = off[i]
        for j in range(c):
            w = buf[j]
            a = _slot(keys, shift, u, w)
            b = _slot(keys, shift, v, w)
            ina = loc_stamp[a] == stamp
            inb = loc_stamp[b] == stamp
            if (not ina and truss[a] < present) or (not inb and truss[b] < present):
                continue
            cap = BIG
            if not ina:
                cap = min(cap, truss[a])
            if not inb:
                cap = min(cap, truss[b])
            P[k] = loc[a] if ina else -1
            Q[k] = loc[b] if inb else -1
            C[k] = cap
            k += 1
    return off, P, Q, C


@numba.njit(cache=True)
def _bin_remove(x, c, head, nxt, prv):
    a = prv[x]
    b = nxt[x]
    if a >= 0:
        nxt[a] = b
    else:
        head[c] = b
    if b >= 0:
        prv[b] = a


@numba.njit(cache=True)
def _bin_add(x, c, head, nxt, prv):
    h = head[c]
    nxt[x] = h
    prv[x] = -1
    if h >= 0:
        prv[h] = x
    head[c] = x


@numba.njit(cache=True)
def _lose(x, count, head, nxt, prv, lo):
    """One triangle of alive edge x died: move it one bin down; returns the new low bin."""
    c = count[x]
    _bin_remove(x, c, head, nxt, prv)
    count[x] = c - 1
    _bin_add(x, c - 1, head, nxt, prv)
    return min(lo, c - 1)


@numba.njit(cache=True)
def peel_region(region, keys, shift, deg, ptr, truss, loc_stamp, loc, stamp, k_start, k_stop):
    """Truss numbers of the region's edges, every edge outside fixed at ``truss``.

    An outside edge with truss number t keeps its triangles alive up to level t. Levels run
    from ``k_start`` to ``k_stop``: at level k, triangles with an outside edge below k die,
    then region edges with fewer than k - 2 live triangles are removed (truss number k - 1),
    in a cascade (bins by count, so each triangle's death costs O(1)). Edges still alive
    after ``k_stop`` get ``k_stop``. Empty levels are skipped.

    ``loc_stamp[s] == stamp`` marks region slots, ``loc[s]`` their position in ``region``
    (set here). Returns int32 (R,): the new truss numbers, aligned with ``region``.
    """
    R = region.shape[0]
    for i in range(R):
        loc_stamp[region[i]] = stamp
        loc[region[i]] = i
    off, P, Q, C = _region_triangles(region, keys, shift, deg, ptr, truss, loc_stamp, loc,
                                     stamp, k_start)
    # capped triangles, each once (by its region edge of lowest local id)
    ncap = 0
    for i in range(R):
        for j in range(off[i], off[i + 1]):
            if C[j] < BIG and (P[j] < 0 or P[j] > i) and (Q[j] < 0 or Q[j] > i):
                ncap += 1
    cap_i = np.empty(ncap, np.int64)
    cap_j = np.empty(ncap, np.int64)
    cap_v = np.empty(ncap, np.int32)
    n = 0
    for i in range(R):
        for j in range(off[i], off[i + 1]):
            if C[j] < BIG and (P[j] < 0 or P[j] > i) and (Q[j] < 0 or Q[j] > i):
                cap_i[n] = i
                cap_j[n] = j
                cap_v[n] = C[j]
                n += 1
    order = np.argsort(cap_v, kind="mergesort")
    count = np.empty(R, np.int64)
    maxc = 0
    for i in range(R):
        count[i] = off[i + 1] - off[i]
        maxc = max(maxc, count[i])
    head = np.full(maxc + 1, -1, np.int64)
    nxt = np.empty(R, np.int64)
    prv = np.empty(R, np.int64)
    for i in range(R):
        _bin_add(i, count[i], head, nxt, prv)
    alive = np.ones(R, np.bool_)
    value = np.empty(R, np.int32)
    n_alive = R
    lo = 0
    cp = 0
    k = k_start
    while n_alive > 0 and k <= k_stop:
        while cp < ncap and cap_v[order[cp]] < k:          # outside edges below k leave
            o = order[cp]
            cp += 1
            i = cap_i[o]
            j = cap_j[o]
            p = P[j]
            q = Q[j]
            if alive[i] and (p < 0 or alive[p]) and (q < 0 or alive[q]):
                lo = _lose(i, count, head, nxt, prv, lo)
                if p >= 0:
                    lo = _lose(p, count, head, nxt, prv, lo)
                if q >= 0:
                    lo = _lose(q, count, head, nxt, prv, lo)
        thr = k - 2
        while lo < thr and n_alive > 0:
            x = head[lo]
            if x < 0:
                lo += 1
                continue
            _bin_remove(x, lo, head, nxt, prv)
            alive[x] = False
            value[x] = k - 1
            n_alive -= 1
            for j in range(off[x], off[x + 1]):
                p = P[j]
                q = Q[j]
                if C[j] < k or (p >= 0 and not alive[p]) or (q >= 0 and not alive[q]):
                    continue                                   # already dead
                if p >= 0:
                    lo = _lose(p, count, head, nxt, prv, lo)
                if q >= 0:
                    lo = _lose(q, count, head, nxt, prv, lo)
        if n_alive == 0:
            break
        while lo <= maxc and head[lo] < 0:
            lo += 1
        nk = lo + 3                                            # first level removing by count
        if cp < ncap:
            nk = min(nk, cap_v[order[cp]] + 1)                 # or by an outside edge leaving
        k = max(k + 1, nk)
    if n_alive:
        for i in range(R):
            if alive[i]:
                value[i] = k_stop
    return value


# --------------------------------------------------------------------------------------------
# The insertion, level by level


@numba.njit(cache=True)
def _level_support(x, keys, shift, deg, ptr, truss, floor, buf):
    """Triangles of x whose other two edges have truss >= floor; returns (buffer, count)."""
    u, v = _ends(keys, x)
    buf, c = _common_now(deg, ptr, u, v, buf)
    a = 0
    for j in range(c):
        w = buf[j]
        if truss[_slot(keys, shift, u, w)] >= floor and truss[_slot(keys, shift, v, w)] >= floor:
            a += 1
    return buf, a


@numba.njit(cache=True)
def insertion_levels(new_slots, keys, shift, deg, ptr, truss, support, clock, member, reject,
                     loc_stamp, loc, limit):
    """Raise truss numbers after an insertion batch, one level at a time.

    Before the call, ``truss`` holds the numbers of the graph before the batch and 2 for the
    new edges (a valid lower bound). Let A_L be the edges whose truss number in the new graph
    is >= L while their current value is below L. Every edge of A_L is joined to a new edge
    of A_L by triangles of the new L-truss through edges of A_L (Huang et al. 2014, for a
    batch: an L-truss part not reached from a new edge would already be an L-truss of the
    old graph). So, for L = 3, 4, ...: start from the new edges at level L - 1, walk
    triangles whose other edges are at level >= L - 1, through edges exactly at level L - 1
    that still have L - 2 such triangles; peel that candidate set at threshold L - 2 with
    the edges above L - 1 fixed; the survivors are A_L and move to level L. Stop when no new
    edge reaches L (then A_L is empty). An edge can rise several levels in one batch.

    Returns ``(slots, levels, region)``: one entry per raise by one level (slot and the
    level reached; an edge raised twice appears twice) and the candidate edges examined at
    each level (repeats across levels); or ``region`` of length
    ``limit + 1`` when the candidates outgrow ``limit`` (the caller falls back).
    """
    raised = np.empty(16, np.int64)
    level = np.empty(16, np.int64)
    nraised = 0
    touched = np.empty(16, np.int64)
    ntouched = 0
    total = 0
    L = 3
    buf = np.empty(64, np.int32)
    buf2 = np.empty(64, np.int32)
    cand = np.empty(16, np.int64)
    while True:
        clock[0] += 1
        stamp = clock[0]
        nc = 0
        for i in range(new_slots.shape[0]):
            s = new_slots[i]
            if truss[s] == L - 1 and support[s] >= L - 2 and member[s] != stamp:
                buf, a = _level_support(s, keys, shift, deg, ptr, truss, L - 1, buf)
                if a >= L - 2:
                    member[s] = stamp
                    if nc == cand.shape[0]:
                        cand = np.concatenate((cand, np.empty(nc, np.int64)))
                    cand[nc] = s
                    nc += 1
        if nc == 0:
            break
        head = 0
        while head < nc:
            e = cand[head]
            head += 1
            u, v = _ends(keys, e)
            buf2, c = _common_now(deg, ptr, u, v, buf2)
            for j in range(c):
                w = buf2[j]
                p = _slot(keys, shift, u, w)
                q = _slot(keys, shift, v, w)
                if truss[p] < L - 1 or truss[q] < L - 1:
                    continue
                for side in range(2):
                    x = p if side == 0 else q
                    if truss[x] != L - 1 or member[x] == stamp or reject[x] == stamp:
                        continue
                    if support[x] < L - 2:
                        reject[x] = stamp
                        continue
                    buf, a = _level_support(x, keys, shift, deg, ptr, truss, L - 1, buf)
                    if a < L - 2:
                        reject[x] = stamp
                        continue
                    member[x] = stamp
                    if nc == cand.shape[0]:
                        cand = np.concatenate((cand, np.empty(nc, np.int64)))
                    cand[nc] = x
                    nc += 1
            if total + nc > limit:
                clock[0] += 1
                return raised[:0], level[:0], np.empty(limit + 1, np.int64)
        total += nc
        clock[0] += 1
        pstamp = clock[0]
        region = cand[:nc].copy()
        vals = peel_region(region, keys, shift, deg, ptr, truss, loc_stamp, loc, pstamp, L, L)
        for i in range(nc):
            if vals[i] == L:
                truss[region[i]] = L
                if nraised == raised.shape[0]:
                    raised = np.concatenate((raised, np.empty(nraised, np.int64)))
                    level = np.concatenate((level, np.empty(nraised, np.int64)))
                raised[nraised] = region[i]
                level[nraised] = L
                nraised += 1
        if ntouched + nc > touched.shape[0]:
            touched = np.concatenate((touched, np.empty(ntouched + nc, np.int64)))
        touched[ntouched:ntouched + nc] = region
        ntouched += nc
        L += 1
    clock[0] += 1
    return raised[:nraised], level[:nraised], touched[:ntouched]
