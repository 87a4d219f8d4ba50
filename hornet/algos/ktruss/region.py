"""Numba kernels of :class:`hornet.algos.ktruss.dynamic.DynamicTruss` (CPU).

Per-edge state lives in an :class:`~hornet.algos.edge_table.EdgeTable` (hash of the
undirected edge -> slot); every array named ``truss``, ``support`` or ``*_stamp`` here is
indexed by slot. Stamp arrays hold values of a clock that only grows, so "stamped in this
batch" is ``stamp[s] > base`` and nothing is ever cleared (no pass over the table).

Kernels:

- :func:`insertion_supports` / :func:`deletion_supports`: exact support update for a batch
  (a triangle with several batch edges is counted once, by its batch edge of lowest key).
  The deletion kernel reads the graph before the batch as ``G_now`` merged with the batch
  adjacency, and also reports the surviving edges that lost a triangle at their own level
  (the seeds of the deletion region).
- :func:`deletion_levels`: the batched deletion, level by level (see the function).
- :func:`insertion_levels`: the batched insertion, level by level (see the function).

Both are bounded delta peels: per level, a peel runs over the edges the batch can reach,
every other edge fixed at its truss number (present at level k when its number is >= k), and
each lost triangle is subtracted once, from its surviving edges only.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from hornet.core.atomics import atomic_add
from hornet.core.pointers import int32_view

from ..batch_adjacency import vertex_slot
from ..edge_table import edge_key, table_find
from ...core.jit import njit

_LOW = np.int64(0xFFFFFFFF)


# --------------------------------------------------------------------------------------------
# Small helpers


@njit(inline="always")
def _slot(keys, shift, u, w):
    return table_find(keys, shift, edge_key(u, w))


@njit(inline="always")
def _ends(keys, s):
    k = keys[s]
    return np.int32(k >> 32), np.int32(k & _LOW)


@njit
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


@njit
def _row(deg, ptr, u):
    d = deg[u] if u < deg.shape[0] else 0
    if d == 0:
        return int32_view(np.int64(0), 0), 0
    return int32_view(ptr[u], d), d


@njit
def _common_now(deg, ptr, u, v, buf):
    """N(u) ∩ N(v) in the current graph; returns (buffer, count) (buffer grown as needed)."""
    A, da = _row(deg, ptr, u)
    B, db = _row(deg, ptr, v)
    need = min(da, db)
    if need > buf.shape[0]:
        buf = np.empty(2 * need, np.int32)
    return buf, _intersect(A, da, B, db, buf)


@njit
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


@njit
def _batch_row(vertices, offsets, neighbours, x):
    """Vertex ``x``'s neighbours in the batch adjacency (a view) and their count."""
    k = vertex_slot(vertices, x)
    if k < 0:
        return neighbours[:0], np.int64(0)
    return neighbours[offsets[k]:offsets[k + 1]], np.int64(offsets[k + 1] - offsets[k])


# --------------------------------------------------------------------------------------------
# Support updates


@njit(parallel=True)
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


@njit(parallel=True)
def deletion_supports(du, dv, dslot, deg, ptr, dvert, doff, dnbr, keys, shift, batch_stamp,
                      stamp, truss, support, rec_slot, rec_level, nrec):
    """Subtract the triangles the deleted edges took with them; record who lost what.

    The deleted edges are gone from the graph but still in the table (stamped in
    ``batch_stamp``). Triangles are those of the graph before the batch: the neighbours of
    an endpoint are its current list merged with its batch list. A lost triangle is counted
    by its deleted edge of lowest key, once, subtracting 1 from each surviving edge.

    Every (surviving edge x, lost triangle) pair is recorded as ``rec_slot`` = x and
    ``rec_level`` = the smaller truss number of the triangle's two other edges: the triangle
    belonged to the k-truss for every k up to min(truss[x], rec_level). ``nrec[0]`` counts
    the records (``rec_*`` must hold twice the number of lost triangles). Returns the
    number of lost triangles.
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
                r = atomic_add(nrec, 0, 1)
                rec_slot[r] = s2
                rec_level[r] = min(td, t3)
            if not gone3:
                atomic_add(support, s3, -1)
                r = atomic_add(nrec, 0, 1)
                rec_slot[r] = s3
                rec_level[r] = min(td, t2)
        found[i] = own
    return found.sum()


# --------------------------------------------------------------------------------------------
# The deletion, level by level


@njit
def _count_level(x, k, base, keys, shift, deg, ptr, truss, removed, buf):
    """Triangles of x whose other edges are in the k-truss before the batch and not removed
    at level k (``removed[s] > base``); returns (buffer, count)."""
    u, v = _ends(keys, x)
    buf, c = _common_now(deg, ptr, u, v, buf)
    a = 0
    for j in range(c):
        w = buf[j]
        p = _slot(keys, shift, u, w)
        q = _slot(keys, shift, v, w)
        if truss[p] >= k and truss[q] >= k and removed[p] <= base and removed[q] <= base:
            a += 1
    return buf, a, c


@njit
def _lose(x, k, base, t, from_batch, keys, shift, deg, ptr, truss, touch, removed, exact_t,
          cnt, buf, work):
    """Edge x (in the k-truss before the batch) lost one triangle at level k.

    Until its count matters x keeps a lower bound: truss[x] - 2 (its triangles at its own
    level, all in the k-truss) minus every loss seen. When the bound falls below k - 2 the
    exact count is taken (triangles of the current graph with both other edges present at
    level k); from then on only losses that count was made with are subtracted (the caller
    checks that) and losses to the batch (not in the current graph) are ignored.
    Returns (clock, buffer, whether x leaves the k-truss); ``work[0]`` grows by the
    triangles an exact count examined.
    """
    if touch[x] <= base:
        t += 1
        touch[x] = t
        cnt[x] = truss[x] - 2
    if exact_t[x] <= base:
        cnt[x] -= 1
        if cnt[x] < k - 2:
            t += 1
            exact_t[x] = t
            buf, a, c = _count_level(x, k, base, keys, shift, deg, ptr, truss, removed, buf)
            work[0] += c + 1
            cnt[x] = a
    elif not from_batch:
        cnt[x] -= 1
    if cnt[x] < k - 2:
        t += 1
        removed[x] = t
        return t, buf, True
    return t, buf, False


@njit
def deletion_levels(rec_slot, rec_level, keys, shift, deg, ptr, truss, clock, touch, removed,
                    popped, exact_t, cnt, seen, limit):
    """New truss numbers after a deletion batch, one level at a time.

    For every level k, the edges that leave the k-truss (truss number >= k before, < k
    after) are exactly those a peel of (old k-truss minus the batch) at threshold k - 2
    removes, and that peel starts from the edges that lost a triangle of the old k-truss to
    the batch (the records of :func:`deletion_supports`). Per level, counts are kept only
    for the edges such a loss reaches, as lazy lower bounds until they could matter (see
    :func:`_lose`), and each lost triangle is subtracted once (by the first of its removed
    edges to be processed). An edge's new truss number is (the lowest level it leaves) - 1;
    edges never removed keep theirs. ``truss`` is read only (the numbers before the batch).

    Returns ``(slots, values, touched, work)``: the edges whose number fell with their new
    values (an edge leaving several levels appears once per level), how many distinct edges
    were examined, and the work: intersections plus the triangles they examined. The
    results are incomplete when ``work`` > ``limit`` (the caller falls back).
    """
    nrec = rec_slot.shape[0]
    kmax = 0
    for i in range(nrec):
        kmax = max(kmax, min(rec_level[i], truss[rec_slot[i]]))
    clock[0] += 1
    batch = clock[0]
    out_slot = np.empty(16, np.int64)
    out_val = np.empty(16, np.int32)
    nout = 0
    touched = 0
    work = np.zeros(1, np.int64)
    queue = np.empty(16, np.int64)
    buf = np.empty(64, np.int32)
    buf2 = np.empty(64, np.int32)
    for k in range(3, kmax + 1):
        clock[0] += 1
        base = clock[0]
        t = base
        nq = 0
        for i in range(nrec):
            x = rec_slot[i]
            if rec_level[i] < k or truss[x] < k or removed[x] > base:
                continue
            if seen[x] != batch:
                seen[x] = batch
                touched += 1
            t, buf, gone = _lose(x, k, base, t, True, keys, shift, deg, ptr, truss, touch,
                                 removed, exact_t, cnt, buf, work)
            if gone:
                if nq == queue.shape[0]:
                    queue = np.concatenate((queue, np.empty(nq, np.int64)))
                queue[nq] = x
                nq += 1
        head = 0
        while head < nq:
            p = queue[head]
            head += 1
            if work[0] > limit:
                clock[0] = t + 1
                return out_slot[:0], out_val[:0], touched, work[0]
            u, v = _ends(keys, p)
            buf2, c = _common_now(deg, ptr, u, v, buf2)
            work[0] += c + 1
            for j in range(c):
                w = buf2[j]
                s1 = _slot(keys, shift, u, w)
                s2 = _slot(keys, shift, v, w)
                for side in range(2):
                    x = s1 if side == 0 else s2
                    q = s2 if side == 0 else s1
                    if truss[x] < k or truss[q] < k or removed[x] > base:
                        continue
                    q_gone = removed[q] > base
                    if q_gone and popped[q] > base:
                        continue                   # q, processed first, subtracted it
                    if exact_t[x] > base and (removed[p] < exact_t[x] or
                                              (q_gone and removed[q] < exact_t[x])):
                        continue                   # not in x's exact count
                    if seen[x] != batch:
                        seen[x] = batch
                        touched += 1
                    t, buf, gone = _lose(x, k, base, t, False, keys, shift, deg, ptr, truss,
                                         touch, removed, exact_t, cnt, buf, work)
                    if gone:
                        if nq == queue.shape[0]:
                            queue = np.concatenate((queue, np.empty(nq, np.int64)))
                        queue[nq] = x
                        nq += 1
            t += 1
            popped[p] = t
        # the edges removed at this level (an edge leaves the k-truss for every k above its
        # new number: the first, lowest level that removes it sets the number)
        for i in range(nq):
            x = queue[i]
            if nout == out_slot.shape[0]:
                out_slot = np.concatenate((out_slot, np.empty(nout, np.int64)))
                out_val = np.concatenate((out_val, np.empty(nout, np.int32)))
            out_slot[nout] = x
            out_val[nout] = k - 1
            nout += 1
        clock[0] = t + 1
    return out_slot[:nout], out_val[:nout], touched, work[0]


# --------------------------------------------------------------------------------------------
# The insertion, level by level


@njit
def _level_triangles(x, keys, shift, deg, ptr, truss, floor, buf, tp, tq, work):
    """Triangles of x whose other two edges have truss >= floor: their slots into ``tp``,
    ``tq`` (grown as needed). Returns (buffer, tp, tq, count); ``work[0]`` grows by the
    triangles examined."""
    u, v = _ends(keys, x)
    buf, c = _common_now(deg, ptr, u, v, buf)
    work[0] += c + 1
    if c > tp.shape[0]:
        tp = np.empty(2 * c, np.int64)
        tq = np.empty(2 * c, np.int64)
    a = 0
    for j in range(c):
        w = buf[j]
        p = _slot(keys, shift, u, w)
        q = _slot(keys, shift, v, w)
        if truss[p] >= floor and truss[q] >= floor:
            tp[a] = p
            tq[a] = q
            a += 1
    return buf, tp, tq, a


@njit
def _grow(a, n):
    if n <= a.shape[0]:
        return a
    b = np.empty(max(n, 2 * a.shape[0]), a.dtype)
    b[:a.shape[0]] = a
    return b


@njit
def _peel_one_level(nc, cand, toff, tp, tq, truss, member, stamp, loc, L):
    """Peel the candidates at threshold L - 2: a triangle (from the stored lists) lives
    while each other edge is a live candidate or has truss >= L. Returns alive flags."""
    for i in range(nc):
        loc[cand[i]] = i
    cnt = np.zeros(nc, np.int64)
    for i in range(nc):
        c = 0
        for j in range(toff[i], toff[i + 1]):
            p = tp[j]
            q = tq[j]
            if (member[p] == stamp or truss[p] >= L) and (member[q] == stamp or truss[q] >= L):
                c += 1
        cnt[i] = c
    alive = np.ones(nc, np.bool_)              # False once queued for removal
    done = np.zeros(nc, np.bool_)              # removal processed: its triangles are dead
    queue = np.empty(nc, np.int64)
    nq = 0
    for i in range(nc):
        if cnt[i] < L - 2:
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
            if not (pin or truss[p] >= L) or not (qin or truss[q] >= L):
                continue                           # never a triangle of this level
            lp = loc[p] if pin else -1
            lq = loc[q] if qin else -1
            if (lp >= 0 and done[lp]) or (lq >= 0 and done[lq]):
                continue                           # killed by a member processed earlier
            if lp >= 0 and alive[lp]:
                cnt[lp] -= 1
                if cnt[lp] < L - 2:
                    alive[lp] = False
                    queue[nq] = lp
                    nq += 1
            if lq >= 0 and alive[lq]:
                cnt[lq] -= 1
                if cnt[lq] < L - 2:
                    alive[lq] = False
                    queue[nq] = lq
                    nq += 1
        done[i] = True
    return alive


@njit
def insertion_levels(new_slots, keys, shift, deg, ptr, truss, support, clock, member, reject,
                     loc, limit):
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

    Returns ``(slots, levels, region, work)``: one entry per raise by one level (slot and
    the level reached; an edge raised twice appears twice), the candidate edges examined at
    each level (repeats across levels), and the work: intersections plus the triangles they
    examined. The results are incomplete when ``work`` > ``limit`` (the caller falls back).
    """
    work = np.zeros(1, np.int64)
    raised = np.empty(16, np.int64)
    level = np.empty(16, np.int64)
    nraised = 0
    touched = np.empty(16, np.int64)
    ntouched = 0
    L = 3
    buf = np.empty(64, np.int32)
    wp = np.empty(64, np.int64)                # one edge's level triangles (scratch)
    wq = np.empty(64, np.int64)
    cand = np.empty(16, np.int64)
    toff = np.zeros(17, np.int64)              # candidate i's triangles: tp/tq[toff[i]:toff[i+1]]
    tp = np.empty(64, np.int64)
    tq = np.empty(64, np.int64)
    while True:
        clock[0] += 1
        stamp = clock[0]
        nc = 0
        nt = 0
        head = 0
        i_new = 0
        while True:
            # next edge to examine: the new edges at level L - 1 first, then the walk
            if i_new < new_slots.shape[0]:
                x = new_slots[i_new]
                i_new += 1
                if truss[x] != L - 1 or support[x] < L - 2 or member[x] == stamp:
                    continue
            elif head < nc:
                head += 1
                x = -1
                for j in range(toff[head - 1], toff[head]):
                    for side in range(2):
                        y = tp[j] if side == 0 else tq[j]
                        if truss[y] != L - 1 or member[y] == stamp or reject[y] == stamp:
                            continue
                        if support[y] < L - 2:
                            reject[y] = stamp
                            continue
                        buf, wp, wq, a = _level_triangles(y, keys, shift, deg, ptr, truss,
                                                          L - 1, buf, wp, wq, work)
                        if a < L - 2:
                            reject[y] = stamp
                            continue
                        member[y] = stamp
                        cand = _grow(cand, nc + 1)
                        toff = _grow(toff, nc + 2)
                        tp = _grow(tp, nt + a)
                        tq = _grow(tq, nt + a)
                        cand[nc] = y
                        tp[nt:nt + a] = wp[:a]
                        tq[nt:nt + a] = wq[:a]
                        nt += a
                        nc += 1
                        toff[nc] = nt
                if work[0] > limit:
                    clock[0] += 1
                    return raised[:0], level[:0], cand[:nc], work[0]
                continue
            else:
                break
            # a new edge at level L - 1: a seed when it has L - 2 level triangles
            buf, wp, wq, a = _level_triangles(x, keys, shift, deg, ptr, truss, L - 1, buf,
                                              wp, wq, work)
            if a < L - 2:
                continue
            member[x] = stamp
            cand = _grow(cand, nc + 1)
            toff = _grow(toff, nc + 2)
            tp = _grow(tp, nt + a)
            tq = _grow(tq, nt + a)
            cand[nc] = x
            tp[nt:nt + a] = wp[:a]
            tq[nt:nt + a] = wq[:a]
            nt += a
            nc += 1
            toff[nc] = nt
        if nc == 0:
            break
        alive = _peel_one_level(nc, cand, toff, tp, tq, truss, member, stamp, loc, L)
        for i in range(nc):
            if alive[i]:
                raised = _grow(raised, nraised + 1)
                level = _grow(level, nraised + 1)
                raised[nraised] = cand[i]
                level[nraised] = L
                nraised += 1
        for i in range(nc):
            if alive[i]:
                truss[cand[i]] = L
        touched = _grow(touched, ntouched + nc)
        touched[ntouched:ntouched + nc] = cand[:nc]
        ntouched += nc
        L += 1
    clock[0] += 1
    return raised[:nraised], level[:nraised], touched[:ntouched], work[0]
