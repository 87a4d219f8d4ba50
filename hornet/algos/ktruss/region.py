"""Numba kernels of :class:`hornet.algos.ktruss.dynamic.DynamicTruss` (CPU).

Per-edge state lives in an :class:`~hornet.algos.edge_table.EdgeTable` (hash of the
undirected edge -> slot); every slot-indexed array (``truss``, ``support``, counts, stamps)
is indexed by slot. Stamp arrays hold values of a clock that only grows, so "marked in this
update" is ``stamp[s] == the update's stamp`` and nothing is ever cleared (no pass over the
table).

Kernels:

- :func:`insertion_supports` / :func:`deletion_supports`: exact support update for a batch
  (a triangle with several batch edges is counted once, by its batch edge of lowest key);
  parallel from :data:`SUPPORTS_PARALLEL_MIN` batch edges, serial below.
  The deletion kernel reads the graph before the batch as ``G_now`` merged with the batch
  adjacency, and also reports the surviving edges that lost a triangle, with the level up
  to which that triangle counted (the seeds of the deletion).
- :func:`lower_after_deletion`: the old numbers are an upper bound; the local h-index
  iteration :func:`_descend` lowers them to the exact values from the seeds.
- :func:`level_counts`: every edge's level count (its triangles whose other two edges are
  at its truss number or above), which deletions keep as lower bounds across updates.

Insertions raise numbers by scanning the k-order (:mod:`hornet.algos.ktruss.order`, which
uses the triangle helpers here). The kernels touch only the edges whose numbers change and
their triangle neighbours; an edge's triangles come from one intersection of its endpoints'
adjacency lists, the other edges' slots from a per-vertex row of slots kept during the
update (:func:`_row_slots`).
"""
from __future__ import annotations

import numpy as np

from hornet.core.atomics import atomic_add
from hornet.core.jit import njit, part_range, split_kernel
from hornet.core.pointers import int32_view

from ..batch_adjacency import vertex_slot
from ..edge_table import edge_key, table_find

_LOW = np.int64(0xFFFFFFFF)
#: batch edges below which the support kernels run serially: each batch edge costs an
#: intersection (microseconds), so a small batch gains less from two threads than waking
#: them costs, and on a loaded machine a parallel region waits for a descheduled worker
SUPPORTS_PARALLEL_MIN = 1024


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


@split_kernel(nrt=True, threshold=SUPPORTS_PARALLEL_MIN, combine=sum)
def insertion_supports(bu, bv, bslot, deg, ptr, keys, shift, batch_stamp, stamp, truss,
                       support, low, part, parts):
    """Add the triangles the inserted edges (already in the graph and the table) closed,
    and give each inserted edge a lower bound of its new truss number.

    ``batch_stamp[s] == stamp`` marks the batch's edges. A new triangle is counted by its
    batch edge of lowest key, once, adding 1 to the support of its three edges.

    ``low[i]`` (int32, one per inserted edge): the h-index of the minima of ``truss`` (the
    numbers before the batch) over edge i's triangles whose two other edges are not in the
    batch: the largest k with k - 2 such triangles at k or above (2 at least). A lower
    bound of i's new number: the old k-truss plus the inserted edges whose bound is k or
    more is a subgraph of the new graph in which every edge has k - 2 triangles.
    Returns the number of new triangles.
    """
    n = bu.shape[0]
    found = np.zeros(n, np.int64)
    for i in range(*part_range(n, part, parts)):
        u = bu[i]
        v = bv[i]
        A, da = _row(deg, ptr, u)
        B, db = _row(deg, ptr, v)
        buf = np.empty(min(da, db), np.int32)
        c = _intersect(A, da, B, db, buf)
        kb = edge_key(u, v)
        sb = bslot[i]
        own = 0
        hist = np.zeros(c + 3, np.int64)
        for j in range(c):
            w = buf[j]
            s2 = _slot(keys, shift, u, w)
            s3 = _slot(keys, shift, v, w)
            new2 = batch_stamp[s2] == stamp
            new3 = batch_stamp[s3] == stamp
            if not new2 and not new3:
                hist[min(truss[s2], truss[s3], c + 2)] += 1
            if new2 and edge_key(u, w) < kb:
                continue
            if new3 and edge_key(v, w) < kb:
                continue
            own += 1
            atomic_add(support, s2, 1)
            atomic_add(support, s3, 1)
        if own:
            atomic_add(support, sb, own)
        found[i] = own
        acc = 0
        k = c + 2
        while k > 2:
            acc += hist[k]
            if acc >= k - 2:
                break
            k -= 1
        low[i] = k
    return found.sum()


@split_kernel(nrt=True, threshold=SUPPORTS_PARALLEL_MIN, combine=sum)
def deletion_supports(du, dv, dslot, deg, ptr, dvert, doff, dnbr, keys, shift, batch_stamp,
                      stamp, truss, support, rec_slot, rec_level, nrec, part, parts):
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
    for i in range(*part_range(n, part, parts)):
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
# The local h-index iteration of deletions


@njit
def _grow(a, n):
    if n <= a.shape[0]:
        return a
    b = np.empty(max(n, 2 * a.shape[0]), a.dtype)
    for i in range(a.shape[0]):      # a loop: a slice assignment compiles Numba's shape check
        b[i] = a[i]
    return b


@njit
def _intersect_at(A, da, B, db, pa, pb):
    """Positions of the common values of the sorted ``A[:da]`` and ``B[:db]``: into
    ``pa`` / ``pb`` (room for min(da, db)); returns how many. Merges lists of similar
    length, binary-searches the shorter in the longer when they differ by more than 16x."""
    n = 0
    if da == 0 or db == 0:
        return 0
    if da * 16 < db or db * 16 < da:
        swap = da > db
        S, ds, L, dl = (B, db, A, da) if swap else (A, da, B, db)
        lo = 0
        for i in range(ds):
            x = S[i]
            hi = dl
            while lo < hi:
                mid = (lo + hi) >> 1
                if L[mid] < x:
                    lo = mid + 1
                else:
                    hi = mid
            if lo == dl:
                break
            if L[lo] == x:
                if swap:
                    pa[n] = lo
                    pb[n] = i
                else:
                    pa[n] = i
                    pb[n] = lo
                n += 1
        return n
    i = 0
    j = 0
    while i < da and j < db:
        a = A[i]
        b = B[j]
        if a == b:
            pa[n] = i
            pb[n] = j
            n += 1
            i += 1
            j += 1
        elif a < b:
            i += 1
        else:
            j += 1
    return n


#: bits of a vertex mark (:func:`_intersect_marked`) that hold the position
_MARK_BITS = 24


@njit
def _intersect_marked(A, da, B, db, pa, pb, mark):
    """:func:`_intersect_at` by marks: the longer list's vertices are marked with their
    positions in ``mark`` (int64 per vertex, one more entry holding the last token used; a
    mark is token << :data:`_MARK_BITS` | position), then the shorter list is looked up
    entry by entry, without branches. A merge steps through both lists with a
    hard-to-predict branch per step; this reads the longer list once, sequentially, and
    makes one lookup per entry of the shorter. The common values come in the shorter
    list's order. Lists of 2^24 entries or more take the merge."""
    if da >= (1 << _MARK_BITS) or db >= (1 << _MARK_BITS):
        return _intersect_at(A, da, B, db, pa, pb)
    last = mark.shape[0] - 1
    tok = mark[last] + 1
    mark[last] = tok
    tag = tok << _MARK_BITS
    swap = da < db
    L, dl, S, ds = (B, db, A, da) if swap else (A, da, B, db)
    pl, ps = (pb, pa) if swap else (pa, pb)
    for i in range(dl):
        mark[L[i]] = tag | i
    n = 0
    low = (np.int64(1) << _MARK_BITS) - 1
    for j in range(ds):
        m = mark[S[j]]
        pl[n] = m & low
        ps[n] = j
        n += (m >> _MARK_BITS) == tok
    return n


@njit
def _row_slots(x, row, deg, keys, shift, rows, row_at, row_used, stamp):
    """Where the slots of vertex x's edges, aligned with its adjacency ``row``, start in
    ``rows`` (-1: not kept). A vertex's slots are kept from its second use in an update
    (``row_used``/``row_at`` per vertex, valid with this update's ``stamp``; ``rows`` is
    one growing array), so a dense region probes the table once per edge end instead of
    twice per triangle, and a hub met once is never scanned. ``rows[0]`` is its used
    length. Returns (rows, start)."""
    if x >= row_used.shape[0]:
        return rows, np.int64(-1)
    if row_used[x] == stamp:
        return rows, row_at[x]
    if row_used[x] != -stamp:
        row_used[x] = -stamp                  # first use: probe the table directly
        return rows, np.int64(-1)
    d = deg[x]
    at = rows[0]
    rows = _grow(rows, at + d)
    for i in range(d):
        rows[at + i] = _slot(keys, shift, x, row[i])
    rows[0] = at + d
    row_used[x] = stamp
    row_at[x] = at
    return rows, at


@njit
def _new_rows():
    rows = np.empty(1024, np.int64)
    rows[0] = 1
    return rows


@njit
def intersect_work(da, db):
    """The entries :func:`_triangles` reads to intersect lists of lengths ``da`` and ``db``:
    both lists (marked) when their lengths are within 16x, else the shorter one's binary
    searches in the longer (its length times the longer's bit length). A scan's work counts
    this besides the triangles found, so that its work limit sees a hub's long lists however
    few triangles they hold."""
    m = min(da, db)
    big = max(da, db)
    if m * 16 >= big:
        return np.int64(da + db)
    b = np.int64(1)
    while big > 1:
        big >>= 1
        b += 1
    return np.int64(m) * b


@njit
def _triangles(x, keys, shift, deg, ptr, rows, row_at, row_used, stamp, pa, pb, tp, tq,
               mark):
    """The triangles of edge x in the current graph: the slots of their two other edges into
    ``tp[:n]`` (the edge at x's first endpoint) and ``tq[:n]``. Returns
    (rows, pa, pb, tp, tq, n), the arrays grown as needed (``rows``: see
    :func:`_row_slots`; its first entry is its used length). ``mark``: the vertex marks of
    :func:`_intersect_marked` (lists of similar lengths; a binary search when they differ
    by more than 16x)."""
    u, v = _ends(keys, x)
    A, da = _row(deg, ptr, u)
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
    if c == 0:
        return rows, pa, pb, tp, tq, 0
    rows, su = _row_slots(u, A, deg, keys, shift, rows, row_at, row_used, stamp)
    rows, sv = _row_slots(v, B, deg, keys, shift, rows, row_at, row_used, stamp)
    for j in range(c):
        tp[j] = rows[su + pa[j]] if su >= 0 else _slot(keys, shift, u, A[pa[j]])
        tq[j] = rows[sv + pb[j]] if sv >= 0 else _slot(keys, shift, v, B[pb[j]])
    return rows, pa, pb, tp, tq, c


@njit
def _push(queue, n, x):
    queue = _grow(queue, n + 1)
    queue[n] = x
    return queue, n + 1


@njit
def _first_wave(rec_slot, rec_level, truss, valid, cnt, counted, queued, stamp):
    """The edges a deletion's lost triangles put in doubt: each recorded triangle slot
    ``rec_slot[i]`` (lost at level ``rec_level[i]``) takes one off a valid count ``cnt`` of an
    edge whose level it counted at; an edge left with fewer than ``truss - 2`` triangles (or
    without a valid count) is queued once (``queued`` set to ``stamp``). Returns
    ``(queue, n)``: int64 slots, the first ``n`` of them queued."""
    queue = np.empty(16, np.int64)
    nq = 0
    for i in range(rec_slot.shape[0]):
        x = rec_slot[i]
        if rec_level[i] < truss[x]:
            continue                           # the triangle did not count at x's level
        if counted[x] > valid:
            cnt[x] -= 1
            if cnt[x] >= truss[x] - 2:
                continue                       # x keeps enough triangles at its level
        if queued[x] != stamp:
            queued[x] = stamp
            queue, nq = _push(queue, nq, x)
    return queue, nq


@njit
def _note_change(x, old, stamp, changed, ch_slot, ch_old, nch, tri, tp, tq, n):
    """Remember edge x's value before the update the first time it changes, with its
    triangles (the slots of their other two edges, ``tp/tq[:n]``; the graph does not change
    during the update, so the list stays x's): ``tri`` = (offsets aligned with ``ch_slot``,
    first edges, second edges), appended to."""
    if changed[x] != stamp:
        changed[x] = stamp
        ch_slot = _grow(ch_slot, nch + 1)
        ch_old = _grow(ch_old, nch + 1)
        ch_slot[nch] = x
        ch_old[nch] = old
        toff, bp, bq = tri
        at = toff[nch]
        toff = _grow(toff, nch + 2)
        bp = _grow(bp, at + n)
        bq = _grow(bq, at + n)
        for i in range(n):
            bp[at + i] = tp[i]
            bq[at + i] = tq[i]
        toff[nch + 1] = at + n
        tri = (toff, bp, bq)
        nch += 1
    return ch_slot, ch_old, nch, tri


@njit
def _descend(queue, nq, stamp, valid, keys, shift, deg, ptr, truss, cnt, counted, queued,
             seen, changed, ch_slot, ch_old, nch, tri, work, limit, rows, row_at, row_used,
             mark):
    """Lower truss numbers from an upper bound to the exact values: the worklist h-index
    iteration (Sariyuce et al., VLDB 2018).

    The truss numbers t are the greatest fixed point of the operator
    H(f)(e) = max k such that at least k - 2 triangles of e have min(f(other two)) >= k.
    If f >= t everywhere, lowering any edge to min(f(e), H(f)(e)) keeps f >= t (H is
    monotone and H(t) = t), and once f(e) <= H(f)(e) for every edge, f <= t (every level
    set {f >= k} is then a subgraph whose edges have k - 2 triangles in it). So, from an
    upper bound, lowering edges until none violates f(e) <= H(f)(e) ends at t exactly.

    ``cnt[e]`` (valid when ``counted[e] > valid``) is at most the number of e's triangles
    with min(f(other two)) >= f(e) (exactly that number right after e was recounted; see
    :func:`lower_after_deletion` for why a lower bound is kept across updates): while
    ``cnt[e] >= f(e) - 2``, e does not violate the bound and is not recounted. Popping e
    recounts it from its triangles; if it violates, f(e) becomes the h-index of
    the triangles' minima (capped at f(e) - 1) and each neighbour y whose count included
    the triangle (f(y) in (new, old] of e, third edge >= f(y)) loses one; one that now
    violates is queued, and so is a neighbour without a count (any edge may fall).

    ``queue[:nq]``: the edges to check first (``queued[e] == stamp`` for each). Returns
    (ch_slot, ch_old, nch, tri, touched, aborted): the changed-edge record (with the
    changed edges' triangles, see :func:`_note_change`) extended, how many
    edges were recounted (first time in this update, ``seen``), and whether ``work[0]``
    passed ``limit`` (the values are then incomplete).
    """
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
            return ch_slot, ch_old, nch, tri, touched, True
        floor = 2
        rows, pa, pb, tp, tq, n = _triangles(x, keys, shift, deg, ptr, rows, row_at,
                                             row_used, stamp, pa, pb, tp, tq, mark)
        work[0] += n + 1
        if seen[x] != stamp:
            seen[x] = stamp
            touched += 1
        if a + 1 > hist.shape[0]:
            hist = np.zeros(2 * (a + 1), np.int64)
        for i in range(n):
            hist[max(min(truss[tp[i]], truss[tq[i]], a), floor)] += 1
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
            hist[max(min(truss[tp[i]], truss[tq[i]], a), floor)] = 0
        # triangles with min >= b (minima capped at a); at the floor x is final
        cnt[x] = acc
        counted[x] = stamp
        if b == a:
            continue
        truss[x] = b
        ch_slot, ch_old, nch, tri = _note_change(x, a, stamp, changed, ch_slot, ch_old, nch,
                                                 tri, tp, tq, n)
        for i in range(n):
            p = tp[i]
            q = tq[i]
            fp = truss[p]
            fq = truss[q]
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
    return ch_slot, ch_old, nch, tri, touched, False


@njit
def lower_after_deletion(rec_slot, rec_level, keys, shift, deg, ptr, truss, clock, valid,
                         cnt, counted, queued, seen, changed, row_at, row_used, mark, tri,
                         limit):
    """New truss numbers after a deletion batch (``truss`` updated in place).

    Truss numbers only fall, so the numbers before the batch are an upper bound and
    :func:`_descend` lowers them to the exact values. It starts from the surviving edges
    that lost a triangle counted at their own level (a record of
    :func:`deletion_supports` with ``rec_level >= truss``); every other edge still
    satisfies the bound until a neighbour falls, and then it is queued. Its work is the
    triangles of the edges whose number falls, plus those of their neighbours checked.

    Level counts kept across updates: ``cnt[e]`` with ``counted[e] > valid`` is a lower bound
    of e's triangles whose other two edges have truss numbers >= e's (exact when computed;
    :func:`level_counts` gives every edge one). Each lost triangle counted at e's level lowers
    the true count by one, and so the bound: an edge whose bound stays at ``truss - 2`` or
    above cannot fall and costs no intersection. The caller keeps the bounds valid where the
    true count could drop otherwise: an edge whose own number changes up, or a new edge, is
    invalidated (``counted = 0``); new triangles and neighbours that rise only add to true
    counts; neighbours that fall are subtracted here (:func:`_descend`).

    Returns ``(slots, old_values, triangles, touched, work, aborted)``: the edges whose number
    changed with their values before the batch, their triangles (``(offsets, p, q)``: edge
    ``slots[i]``'s triangles have other edges ``p[offsets[i]:offsets[i + 1]]`` and ``q[...]``,
    for :func:`~hornet.algos.ktruss.order.order_after_deletion`), how many distinct edges were recounted, the work
    (intersections plus the triangles they examined) and whether it passed ``limit``
    (then the numbers are incomplete and the caller falls back). ``tri``: the arrays the
    triangles are written into (int64: offsets with room for 17 entries or more, and two
    arrays of any length), grown as needed and returned: a caller that keeps them for the
    next update spares it growing (copying) them again and touching fresh memory.
    """
    clock[0] += 1
    stamp = clock[0]
    queue, nq = _first_wave(rec_slot, rec_level, truss, valid, cnt, counted, queued, stamp)
    ch_slot = np.empty(16, np.int64)
    ch_old = np.empty(16, np.int32)
    work = np.zeros(1, np.int64)
    tri[0][0] = 0
    ch_slot, ch_old, nch, tri, touched, aborted = _descend(
        queue, nq, stamp, valid, keys, shift, deg, ptr, truss, cnt, counted, queued, seen,
        changed, ch_slot, ch_old, 0, tri, work, limit, _new_rows(), row_at, row_used, mark)
    return ch_slot[:nch], ch_old[:nch], tri, touched, work[0], aborted
