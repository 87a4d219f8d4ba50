"""The deletion descent on level rows (CPU Numba): :func:`lower_after_deletion_rows`, the
variant of :func:`~hornet.algos.ktruss.region.lower_after_deletion` that
:class:`~hornet.algos.ktruss.dynamic.DynamicTruss` takes when the graph has a large dense
truss level (:data:`~hornet.algos.ktruss.dynamic.LEVEL_ROWS_MIN_EDGES`).

Both lower the same edges to the same numbers by the same worklist h-index iteration (the
docstrings of :func:`~hornet.algos.ktruss.region._descend` and
:func:`~hornet.algos.ktruss.region.lower_after_deletion` say why it is right). They differ
in how an edge's triangles are listed. An edge x at level a that violates its bound falls
to some b < a; most fall by one level, and b, x's new count and the neighbours whose counts
drop only read the triangles whose two other edges are at a - 1 or above. At a hub of a
Kronecker graph most edges are far below the dense levels where the deletions cascade, so
intersecting the endpoints' whole adjacency lists reads many times the entries that matter.

The *level row* of vertex w (built from its second use in an update, once its edges' slots
are kept, :func:`~hornet.algos.ktruss.region._row_slots`, and only for a vertex of
:data:`ROW_MIN_DEGREE` or more) lists its neighbours whose edge had a number of at least
its level when it was built, with their slots, in adjacency order. Numbers only fall
during a deletion, so the row still holds every neighbour at that level or above (and
some that fell below: they are filtered by their current numbers). The triangles of x at
level L = a - 1 are then the common entries of its endpoints' rows (or of one row and the
other endpoint's whole list); when the h-index of those reaches L, it is x's new number.
Otherwise (x falls by more, or an endpoint's row is of a higher level), x takes the
whole-list intersection, as in the plain descent.

On the levels of a *core* (:mod:`hornet.algos.ktruss.core_rows`, built for a large batch),
the triangles at level L come from the endpoints' bit rows instead, with the numbers of the
other edges read beside their slots (kept current by the descent), so that the count and
the neighbours' updates read no number at a scattered slot.

The triangle list of an edge that falls is kept for
:func:`~hornet.algos.ktruss.order.order_after_deletion`, which reads the triangles whose
other two edges are at the edge's final number or above: a list taken at level L misses
some of those when the edge ends below L (it fell again later in the update); those lists
are taken again, whole, after the descent.
"""
from __future__ import annotations

import numpy as np

from hornet.core.jit import njit

from .core_rows import core_room, core_set, core_triangles
from .region import (_first_wave, _grow, _intersect_at, _intersect_marked, _new_rows,
                     _note_change, _push, _row, _row_slots, _slot, _triangles)

#: the least degree of a vertex that gets a level row: below it a row saves little of the
#: intersection and costs a pass over the vertex's list
ROW_MIN_DEGREE = 64
#: a level row is built this many levels below the level first asked for, so that the
#: vertex's edges that fall by more (or sit a little lower) keep using it
ROW_MARGIN = 2


@njit
def _level_row(x, L, lrow, deg, ptr, keys, shift, truss, rows, row_at, row_used, stamp):
    """Vertex x's level row for a listing at level ``L``: returns (lrow, rows, start,
    length), start -1 when x has none usable (too low a degree, met for the first time in
    the update, or a row of a level above L, built earlier in the update). ``lrow``: (at,
    level, stamp per vertex; neighbours; slots; [fill, least degree]); ``rows``: the kept slots of
    :func:`~hornet.algos.ktruss.region._row_slots` (a row is built from them)."""
    at, lvl, lst, nb, sl, fill = lrow
    if x >= row_used.shape[0] or deg[x] < fill[1]:
        return lrow, rows, np.int64(-1), np.int64(0)
    if lst[x] == stamp:
        if lvl[x] <= L:
            a = at[x]
            return lrow, rows, a, np.int64(nb[a - 1])
        return lrow, rows, np.int64(-1), np.int64(0)
    if row_used[x] != stamp and row_used[x] != -stamp:
        return lrow, rows, np.int64(-1), np.int64(0)      # first use: no slots kept
    A, d = _row(deg, ptr, x)
    rows, sx = _row_slots(x, A, deg, keys, shift, rows, row_at, row_used, stamp)
    level = max(L - ROW_MARGIN, 3)
    f = fill[0]
    nb = _grow(nb, f + 1 + d)
    sl = _grow(sl, f + 1 + d)
    c = 0
    for i in range(d):
        s = rows[sx + i]
        if truss[s] >= level:
            nb[f + 1 + c] = A[i]
            sl[f + 1 + c] = s
            c += 1
    nb[f] = c                                  # the row's length, before its entries
    at[x] = f + 1
    lvl[x] = level
    lst[x] = stamp
    fill[0] = f + 1 + c
    return (at, lvl, lst, nb, sl, fill), rows, f + 1, np.int64(c)


@njit
def _triangles_at(x, L, lrow, keys, shift, deg, ptr, truss, rows, row_at, row_used, stamp,
                  pa, pb, tp, tq, mark, core):
    """The triangles of edge x whose two other edges are at level ``L`` or above, a
    superset of them (entries of the rows that fell below L since), or all of x's triangles
    when no endpoint has a usable row: (lrow, rows, pa, pb, tp, tq, n, partial, valued),
    ``partial`` True when some triangle below L may be missing. An edge the ``core`` covers
    (:mod:`hornet.algos.ktruss.core_rows`) takes its bit rows instead, which also give the
    numbers of the other edges (``valued``: into ``pa`` / ``pb``, aligned with ``tp`` /
    ``tq``)."""
    k0 = keys[x]
    u = np.int64(k0 >> 32)
    v = np.int64(k0 & 0xFFFFFFFF)
    if L >= core[1][0]:
        need = core_room(u, v, core)
        if need > 0:
            if need > tp.shape[0]:
                pa = np.empty(2 * need, np.int64)
                pb = np.empty(2 * need, np.int64)
                tp = np.empty(2 * need, np.int64)
                tq = np.empty(2 * need, np.int64)
            n = core_triangles(u, v, L, core, tp, tq, pa, pb)
            if n >= 0:
                return lrow, rows, pa, pb, tp, tq, n, True, True
    lrow, rows, fu, nu = _level_row(u, L, lrow, deg, ptr, keys, shift, truss, rows, row_at,
                                    row_used, stamp)
    lrow, rows, fv, nv = _level_row(v, L, lrow, deg, ptr, keys, shift, truss, rows, row_at,
                                    row_used, stamp)
    if fu < 0 and fv < 0:
        rows, pa, pb, tp, tq, n = _triangles(x, keys, shift, deg, ptr, rows, row_at,
                                             row_used, stamp, pa, pb, tp, tq, mark)
        return lrow, rows, pa, pb, tp, tq, n, False, False
    nb = lrow[3]
    sl = lrow[4]
    if fu >= 0:
        A = nb[fu:fu + nu]
        da = nu
    else:
        A, da = _row(deg, ptr, u)
    if fv >= 0:
        B = nb[fv:fv + nv]
        db = nv
    else:
        B, db = _row(deg, ptr, v)
    need = min(da, db)
    if need > tp.shape[0]:
        pa = np.empty(2 * need, np.int64)
        pb = np.empty(2 * need, np.int64)
        tp = np.empty(2 * need, np.int64)
        tq = np.empty(2 * need, np.int64)
    if da * 16 < db or db * 16 < da:
        c = _intersect_at(A, da, B, db, pa, pb)
    else:
        c = _intersect_marked(A, da, B, db, pa, pb, mark)
    su = np.int64(-1)
    sv = np.int64(-1)
    if fu < 0:
        rows, su = _row_slots(u, A, deg, keys, shift, rows, row_at, row_used, stamp)
    if fv < 0:
        rows, sv = _row_slots(v, B, deg, keys, shift, rows, row_at, row_used, stamp)
    n = 0
    for j in range(c):
        if fu >= 0:
            p = sl[fu + pa[j]]
        else:
            p = rows[su + pa[j]] if su >= 0 else _slot(keys, shift, u, A[pa[j]])
        if fv >= 0:
            q = sl[fv + pb[j]]
        else:
            q = rows[sv + pb[j]] if sv >= 0 else _slot(keys, shift, v, B[pb[j]])
        if truss[p] < L or truss[q] < L:
            continue                           # fell below the level since the row's build
        tp[n] = p
        tq[n] = q
        n += 1
    return lrow, rows, pa, pb, tp, tq, n, True, False


@njit
def _descend_rows(queue, nq, stamp, valid, keys, shift, deg, ptr, truss, cnt, counted, queued,
                  seen, changed, ch_slot, ch_old, ch_lvl, nch, tri, work, limit, rows, row_at,
                  row_used, mark, lrow, at_ch, core):
    """:func:`~hornet.algos.ktruss.region._descend` listing a violating edge's triangles at
    one level below its number first (module docstring). ``ch_lvl``: per changed edge, the
    level its kept triangle list was taken at (0: whole); ``at_ch`` (slot-indexed): a
    changed edge's index in ``ch_slot``. An edge that fell before in the update and is
    recounted reads its kept list when it covers the level asked for. Returns (ch_slot, ch_old, ch_lvl,
    nch, tri, touched, aborted, lrow, rows)."""
    pa = np.empty(64, np.int64)
    pb = np.empty(64, np.int64)
    tp = np.empty(64, np.int64)
    tq = np.empty(64, np.int64)
    hist = np.zeros(64, np.int64)
    touched = 0
    head = 0
    while head < nq:
        x = queue[head]
        head += 1
        queued[x] = 0
        a = truss[x]
        if counted[x] > valid and cnt[x] >= a - 2:
            continue
        if work[0] > limit:
            return ch_slot, ch_old, ch_lvl, nch, tri, touched, True, lrow, rows
        if seen[x] != stamp:
            seen[x] = stamp
            touched += 1
        if a + 1 > hist.shape[0]:
            hist = np.zeros(2 * (a + 1), np.int64)
        # first at level a - 1 (from level rows where the endpoints have them), then whole
        floor = a - 1 if a >= 5 else 2
        while True:
            i0 = at_ch[x] if changed[x] == stamp else -1
            if i0 >= 0 and (ch_lvl[i0] == 0 or (floor > 2 and ch_lvl[i0] <= floor)):
                # fell before in this update: its kept list (whole, or taken at a level
                # at or below this one) instead of an intersection
                if ch_lvl[i0] == 0:
                    floor = 2
                toff, bp, bq = tri
                lo = toff[i0]
                m = toff[i0 + 1] - lo
                if m > tp.shape[0]:            # the four scratch arrays share one size
                    pa = np.empty(2 * m, np.int64)
                    pb = np.empty(2 * m, np.int64)
                    tp = np.empty(2 * m, np.int64)
                    tq = np.empty(2 * m, np.int64)
                n = 0
                valued = False
                for j in range(m):
                    p = bp[lo + j]
                    q = bq[lo + j]
                    if floor > 2 and (truss[p] < floor or truss[q] < floor):
                        continue
                    tp[n] = p
                    tq[n] = q
                    n += 1
            elif floor > 2:
                lrow, rows, pa, pb, tp, tq, n, partial, valued = _triangles_at(
                    x, floor, lrow, keys, shift, deg, ptr, truss, rows, row_at, row_used,
                    stamp, pa, pb, tp, tq, mark, core)
                if not partial:
                    floor = 2
            else:
                rows, pa, pb, tp, tq, n = _triangles(x, keys, shift, deg, ptr, rows, row_at,
                                                     row_used, stamp, pa, pb, tp, tq, mark)
                valued = False
            if not valued:                     # the other edges' numbers into pa / pb
                for i in range(n):
                    pa[i] = truss[tp[i]]
                    pb[i] = truss[tq[i]]
            work[0] += n + 1
            for i in range(n):
                hist[max(min(pa[i], pb[i], a), floor)] += 1
            acc = 0
            b = a
            while b > floor:
                acc += hist[b]
                if acc >= b - 2:
                    break
                b -= 1
            if b == floor:
                acc += hist[floor]
            for i in range(n):
                hist[max(min(pa[i], pb[i], a), floor)] = 0
            if floor == 2 or acc >= floor - 2:
                break
            floor = 2                          # falls below the level: the whole list
        # triangles with min >= b (minima capped at a); at the floor 2 x is final
        cnt[x] = acc
        counted[x] = stamp
        if b == a:
            continue
        truss[x] = b
        core_set(keys[x], b, core)
        if changed[x] != stamp:
            ch_lvl = _grow(ch_lvl, nch + 1)
            ch_lvl[nch] = floor if floor > 2 else 0
            at_ch[x] = nch
        ch_slot, ch_old, nch, tri = _note_change(x, a, stamp, changed, ch_slot, ch_old, nch,
                                                 tri, tp, tq, n)
        for i in range(n):
            p = tp[i]
            q = tq[i]
            fp = pa[i]                         # numbers of the other edges (not x)
            fq = pb[i]
            m = min(fp, fq)
            if m > a or m <= b:
                continue                       # the triangle's weight is unchanged
            # it counted for its other edges at level m (in (b, a]), no longer
            for side in range(2):
                y = p if side == 0 else q
                if (fp if side == 0 else fq) != m:
                    continue
                if counted[y] > valid:
                    cnt[y] -= 1
                    if cnt[y] >= m - 2:
                        continue
                if queued[y] != stamp:
                    queued[y] = stamp
                    queue, nq = _push(queue, nq, y)
    return ch_slot, ch_old, ch_lvl, nch, tri, touched, False, lrow, rows


@njit
def lower_after_deletion_rows(rec_slot, rec_level, keys, shift, deg, ptr, truss, clock, valid,
                              cnt, counted, queued, seen, changed, row_at, row_used, mark, tri,
                              limit, row_start, row_level, row_stamp, min_degree, at_ch, core):
    """:func:`~hornet.algos.ktruss.region.lower_after_deletion` (same arguments and results)
    on level rows; ``row_start``, ``row_level``, ``row_stamp``: int64 scratch per vertex
    (stamps of ``clock``), kept by the caller across updates; ``min_degree``: the least
    degree of a vertex that gets a level row (:data:`ROW_MIN_DEGREE`); ``at_ch``:
    slot-indexed int64 scratch; ``core``: the bit rows of the high levels
    (:func:`~hornet.algos.ktruss.core_rows.build_core`, or
    :func:`~hornet.algos.ktruss.core_rows.empty_core`)."""
    clock[0] += 1
    stamp = clock[0]
    queue, nq = _first_wave(rec_slot, rec_level, truss, valid, cnt, counted, queued, stamp)
    ch_slot = np.empty(16, np.int64)
    ch_old = np.empty(16, np.int32)
    ch_lvl = np.empty(16, np.int64)
    work = np.zeros(1, np.int64)
    tri[0][0] = 0
    lrow = (row_start, row_level, row_stamp, np.empty(1024, np.int32),
            np.empty(1024, np.int64), np.zeros(2, np.int64))
    lrow[5][1] = min_degree
    rows = _new_rows()
    ch_slot, ch_old, ch_lvl, nch, tri, touched, aborted, lrow, rows = _descend_rows(
        queue, nq, stamp, valid, keys, shift, deg, ptr, truss, cnt, counted, queued, seen,
        changed, ch_slot, ch_old, ch_lvl, 0, tri, work, limit, rows, row_at, row_used, mark,
        lrow, at_ch, core)
    if not aborted:
        tri = _whole_lists(ch_slot, ch_lvl, nch, tri, keys, shift, deg, ptr, truss, rows,
                           row_at, row_used, stamp, mark, work)
    return ch_slot[:nch], ch_old[:nch], tri, touched, work[0], aborted


@njit
def _whole_lists(ch_slot, ch_lvl, nch, tri, keys, shift, deg, ptr, truss, rows, row_at,
                 row_used, stamp, mark, work):
    """The kept triangle lists (``tri``, aligned with ``ch_slot[:nch]``) with every list
    that was taken at a level above its edge's final number taken again, whole."""
    redo = 0
    for i in range(nch):
        if ch_lvl[i] > truss[ch_slot[i]]:
            redo += 1
    if redo == 0:
        return tri
    toff, bp, bq = tri
    noff = np.zeros(nch + 2 if nch + 2 > 17 else 17, np.int64)
    nbp = np.empty(max(toff[nch], 64), np.int64)
    nbq = np.empty(max(toff[nch], 64), np.int64)
    pa = np.empty(64, np.int64)
    pb = np.empty(64, np.int64)
    tp = np.empty(64, np.int64)
    tq = np.empty(64, np.int64)
    at = 0
    for i in range(nch):
        if ch_lvl[i] > truss[ch_slot[i]]:
            rows, pa, pb, tp, tq, n = _triangles(ch_slot[i], keys, shift, deg, ptr, rows,
                                                 row_at, row_used, stamp, pa, pb, tp, tq,
                                                 mark)
            work[0] += n + 1
            nbp = _grow(nbp, at + n)
            nbq = _grow(nbq, at + n)
            for j in range(n):
                nbp[at + j] = tp[j]
                nbq[at + j] = tq[j]
        else:
            lo = toff[i]
            n = toff[i + 1] - lo
            nbp = _grow(nbp, at + n)
            nbq = _grow(nbq, at + n)
            for j in range(n):
                nbp[at + j] = bp[lo + j]
                nbq[at + j] = bq[lo + j]
        at += n
        noff[i + 1] = at
    return (noff, nbp, nbq)
