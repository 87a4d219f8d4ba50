"""The k-order scan of an insertion on level rows (CPU Numba): :func:`raise_in_order_rows`,
the variant of :func:`~hornet.algos.ktruss.order.raise_in_order` that
:class:`~hornet.algos.ktruss.dynamic.DynamicTruss` takes when the graph has a large dense
truss level (:data:`~hornet.algos.ktruss.dynamic.LEVEL_ROWS_MIN_EDGES`).

Both scans find the same candidates, peel them the same way and leave the same numbers and
k-order (the docstring of :func:`~hornet.algos.ktruss.order.raise_in_order` says why they
are right). This one reads an edge's triangles from adjacency rows filtered by the scanned
level (:mod:`hornet.algos.ktruss.level_rows`: at a hub of a Kronecker graph most edges are
far below the dense level that most candidates sit in), the candidates and the queued edges
as bits by slot, and peels triangle lists that mark the edges above the level by sign. On
graphs without such a level the rows cost more to build than they save: those keep the
plain scan (and never compile this one).
"""
from __future__ import annotations

import numpy as np

from hornet.core.jit import njit

from .level_rows import _grow_values, level_triangles, new_level_rows, next_level, take_read
from .order import _end_level, _heap_pop, _heap_push, _near_block, _rise
from .region import _grow, _new_rows
from .top_level import peel_top_level

#: the work of a visit the stop of :func:`raise_in_order_rows` assumes before its first
#: (about that of an edge between two hubs of a Kronecker graph's core)
STOP_VISIT_PRIOR = 1024.0


@njit(inline="always")
def _bit(bits, s):
    return (bits[s >> 6] >> np.uint64(s & 63)) & np.uint64(1)


@njit(inline="always")
def _set_bit(bits, s):
    bits[s >> 6] |= np.uint64(1) << np.uint64(s & 63)


@njit(inline="always")
def _clear_bit(bits, s):
    bits[s >> 6] &= ~(np.uint64(1) << np.uint64(s & 63))


@njit
def _peel_bits(nc, cand, toff, tp, tq, mbits, loc, keep):
    """Peel the members ``cand[:nc]`` (their bits set in ``mbits``, by slot) at ``keep``
    triangles. A stored triangle (``tp/tq[toff[i]:toff[i + 1]]``: the other two edges, each
    a slot s at the members' level or ``-1 - s`` above it) lives while each of its edges is
    above the level or a live member. Returns (alive flags, the removed members' indices in
    removal order, how many)."""
    for i in range(nc):
        loc[cand[i]] = i
    cnt = np.zeros(nc, np.int64)
    for i in range(nc):
        c = 0
        for j in range(toff[i], toff[i + 1]):
            p = tp[j]
            q = tq[j]
            if (p < 0 or _bit(mbits, p)) and (q < 0 or _bit(mbits, q)):
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
            pin = p >= 0 and _bit(mbits, p)
            qin = q >= 0 and _bit(mbits, q)
            if not (pin or p < 0) or not (qin or q < 0):
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
def _push_slot(a, n, s):
    a = _grow(a, n + 1)
    a[n] = s
    return a, n + 1


@njit
def raise_in_order_rows(new_slots, keys, shift, deg, ptr, truss, support, rank, counters,
                        clock, member, loc, row_at, row_used, mark, limit, vfloor, extra,
                        top, top_switch, top_vertices, stop, stop_work):
    """:func:`~hornet.algos.ktruss.order.raise_in_order` (same arguments, less its
    ``pushed`` stamps; same results) reading triangles from level rows
    (:func:`~hornet.algos.ktruss.level_rows.level_triangles`), the level's candidates and
    queued edges as bits by slot (a few MB: the scan's checks of them stay in cache, unlike
    stamps in slot-indexed int64 arrays), and keeping a candidate's triangle list with the
    edges above the level marked as ``-1 - slot`` (its peel reads no truss number).

    The highest level (``top``: the highest truss number before the scan; no edge is above
    a level at or over it, nor over the highest level reached by a raise): once its scan
    has visited ``top_switch`` edges, the scan of the level stops and the whole level is
    peeled on bit rows instead (:func:`~hornet.algos.ktruss.top_level.peel_top_level`, when
    it has at most ``top_vertices`` vertices): its survivors rise, every other edge of the
    level gets a new rank in the peel's order.

    ``member`` / ``loc``: slot-indexed scratch (stamps of the clock: the candidates, whose
    triangle lists a candidate that rose reuses at the next level; candidate positions).
    ``stop``, ``stop_work``: the scan stops (``aborted``, ``k`` >= ``stop``, work within the
    limit) before it would scan a level at or above ``stop``, every level below final (the
    caller decomposes the rest, :mod:`hornet.algos.ktruss.core_peel`, in about
    ``stop_work``), when what is left looks dearer: the seeds of the level, each visited at
    every level up to the highest, at the work per visit so far (:data:`STOP_VISIT_PRIOR`
    before a visit).
    Returns ``(slots, levels, touched, work, aborted, k)`` as the plain scan.
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
    lrows = new_level_rows(deg.shape[0])
    tv = np.empty((4, 64), np.int64)           # truss numbers and ranks of the triangles
    # the level's candidates and queued edges as bits by slot (a few MB: the scan's
    # checks of them stay in cache, unlike stamps in slot-indexed int64 arrays)
    mbits = np.zeros((truss.shape[0] >> 6) + 1, np.uint64)
    pbits = np.zeros((truss.shape[0] >> 6) + 1, np.uint64)
    plist = np.empty(64, np.int64)
    npl = 0
    seeds = new_slots.copy()
    ns = seeds.shape[0]
    k = 2
    top_now = top
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
        if k >= stop:
            per = work / touched if touched else STOP_VISIT_PRIOR
            if per * ns * (top_now - k + 1) >= stop_work:
                return raised[:nraised], level[:nraised], touched, work, True, k
        pstamp = stamp
        clock[0] += 1
        stamp = clock[0]
        lrows = next_level(lrows, stamp)
        nh = 0
        while ei < ne and truss[extra[ei]] <= k:
            s = extra[ei]
            ei += 1
            if truss[s] == k and not _bit(pbits, s):
                _set_bit(pbits, s)
                plist, npl = _push_slot(plist, npl, s)
                hr, hs, nh = _heap_push(hr, hs, nh, rank[s], s)
        for i in range(ns):
            s = seeds[i]
            if not _bit(pbits, s):
                _set_bit(pbits, s)
                plist, npl = _push_slot(plist, npl, s)
                hr, hs, nh = _heap_push(hr, hs, nh, rank[s], s)
        nc = 0
        nt = 0
        visits = 0
        peeled = False                         # the level peeled whole (the top level)
        tried = False
        while nh > 0:
            y, nh = _heap_pop(hr, hs, nh)
            if work > limit or _near_block(keys, y, k, vfloor):
                return raised[:nraised], level[:nraised], touched, work, True, k
            if support[y] < k - 1:
                continue                       # fewer triangles than a candidate counts
            if k >= top_now and visits >= top_switch and not tried:
                tried = True
                ok, survivors, every, more = peel_top_level(k, keys, truss, rank, counters,
                                                            deg.shape[0], top_vertices)
                work += more
                if ok:
                    touched += every.shape[0]
                    peeled = True
                    break
            visits += 1
            if pstamp != 0 and member[y] == pstamp:
                # rose from the level below: its triangle list (others at >= k) is kept
                lo = ptoff[loc[y]]
                n = ptoff[loc[y] + 1] - lo
                if n > tp_.shape[0]:           # the four scratch arrays share one size
                    pa = np.empty(2 * n, np.int64)
                    pb = np.empty(2 * n, np.int64)
                    tp_ = np.empty(2 * n, np.int64)
                    tq_ = np.empty(2 * n, np.int64)
                tv = _grow_values(tv, n)
                for i in range(n):             # a loop, not a slice assignment: its
                    p = ptp[lo + i]            # shape check compiles Numba's string
                    q = ptq[lo + i]            # formatting into the kernel
                    p = p if p >= 0 else -1 - p
                    q = q if q >= 0 else -1 - q
                    tp_[i] = p
                    tq_[i] = q
                    tv[0, i] = truss[p]
                    tv[1, i] = truss[q]
                    tv[2, i] = rank[p]
                    tv[3, i] = rank[q]
                work += n + 1                  # no intersection, the same triangle checks
            else:
                lrows, rows, pa, pb, tp_, tq_, tv, n = level_triangles(
                    y, k, lrows, keys, shift, deg, ptr, truss, rank, rows, row_at, row_used,
                    rstamp, pa, pb, tp_, tq_, tv, mark)
                work += n + 1 + take_read(lrows)
            touched += 1
            ry = rank[y]
            count = 0
            for i in range(n):
                tpv = tv[0, i]
                tqv = tv[1, i]
                if ((tpv > k or (tpv == k and (tv[2, i] > ry or _bit(mbits, tp_[i]))))
                        and (tqv > k or (tqv == k and (tv[3, i] > ry
                                                       or _bit(mbits, tq_[i]))))):
                    count += 1
            if count < k - 1:
                continue                       # stays at level k, in its place
            member[y] = stamp
            _set_bit(mbits, y)
            cand = _grow(cand, nc + 1)
            toff = _grow(toff, nc + 2)
            tp = _grow(tp, nt + n)
            tq = _grow(tq, nt + n)
            cand[nc] = y
            for i in range(n):
                if tv[0, i] < k or tv[1, i] < k:
                    continue
                p = tp_[i]
                q = tq_[i]
                tp[nt] = p if tv[0, i] == k else -1 - p     # above the level: -1 - slot
                tq[nt] = q if tv[1, i] == k else -1 - q
                nt += 1
                for side in range(2):
                    z = p if side == 0 else q
                    if tv[side, i] == k and tv[2 + side, i] > ry and not _bit(pbits, z):
                        _set_bit(pbits, z)
                        plist, npl = _push_slot(plist, npl, z)
                        hr, hs, nh = _heap_push(hr, hs, nh, tv[2 + side, i], z)
            nc += 1
            toff[nc] = nt
        for i in range(npl):                   # the level's marks, cleared for the next
            _clear_bit(pbits, plist[i])
        npl = 0
        if peeled:
            for i in range(nc):
                _clear_bit(mbits, cand[i])
            ns = survivors.shape[0]
            seeds = _grow(seeds, ns)
            for i in range(ns):
                seeds[i] = survivors[i]
            # the survivors: the start of level k + 1 (any order: all of them are seeds)
            base = counters[0] - ns + 1
            for j in range(ns):
                raised, level, nraised = _rise(seeds[j], base + j, k, rank, truss, raised,
                                               level, nraised)
            counters[0] = base - 1
            if work > limit:
                return raised[:nraised], level[:nraised], touched, work, True, k
            stamp = np.int64(0)                # no candidate lists for the next level
            if ns:
                k += 1
                top_now = max(top_now, k)
            continue
        if nc == 0:
            ns = 0
            continue
        work += nt                             # the peel reads the candidates' triangles
        if work > limit:
            return raised[:nraised], level[:nraised], touched, work, True, k
        alive, gone, ngone = _peel_bits(nc, cand, toff, tp, tq, mbits, loc, k - 1)
        for i in range(nc):
            _clear_bit(mbits, cand[i])
        # the peeled candidates end level k; A: the survivors start level k + 1
        ns, seeds, hr, hs, raised, level, nraised = _end_level(
            nc, cand, alive, gone, ngone, k, rank, truss, counters, seeds, hr, hs, raised,
            level, nraised)
        if ns == 0:
            continue
        top_now = max(top_now, k + 1)
        ptoff, toff = toff, ptoff
        ptp, tp = tp, ptp
        ptq, tq = tq, ptq
        toff = _grow(toff, 17)
        k += 1
    return raised[:nraised], level[:nraised], touched, work, False, k
