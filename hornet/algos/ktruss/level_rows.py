"""Adjacency rows filtered by truss level, for the k-order scan of an insertion (CPU Numba).

While :func:`~hornet.algos.ktruss.order.raise_in_order` scans level k, an edge's count and its
candidate triangles only read the triangles whose two other edges are at level k or above
(every other triangle is skipped after its two truss numbers are read). At a hub of a
Kronecker or social graph most edges are far below the dense levels where the scan spends
its time, so intersecting the whole adjacency lists of a hub edge's endpoints reads many
times the entries that matter. The *level row* of vertex x at level k is the sorted list of
its neighbours w with ``truss(x, w) >= k``, with the edges' slots; the triangles of an edge
u-v with both other edges at level k or above are exactly the common entries of the level
rows of u and v.

Rows are valid for one level of the scan: numbers below k never reach k during the scan of
level k (lower levels are finished; the edges that rise from level k rise above it), and
numbers at or above k stay at or above it, so the row of x at a level k' < k holds every
entry of its row at k: a row is built from the row of the previous level scanned when x has
one there (a filter of a shorter list), otherwise from x's whole adjacency list, once x's
edges have listed enough triangles at the level to pay for the build (:data:`BUILD_SHIFT`;
until then they take the whole-list intersection,
:func:`~hornet.algos.ktruss.region._triangles`, or the row of the other endpoint against
x's whole list).

Two buffers hold the rows: the current level's and the previous level's (the state is a
tuple of arrays, :func:`new_level_rows`; :func:`next_level` swaps the buffers). The state
also counts the entries read (:func:`take_read`): the source entries of the rows built and
the entries of the lists intersected, for the scan's work limit.
"""
from __future__ import annotations

import numpy as np

from hornet.core.jit import njit

from .region import _grow, _intersect_at, _intersect_marked, _row, _row_slots, _slot, \
    _triangles, intersect_work

#: a vertex's row is built once the triangles its edges listed at the level without a row
#: (each a scattered read of the edge at the vertex) reach its source entries (its whole
#: list, or its row of the previous level) shifted right by this: a build reads each
#: source entry's number at a scattered slot, so a vertex met a few times at a level (a hub
#: in triangles with low-degree vertices) keeps the whole-list intersection, and one whose
#: edges list many triangles there (a vertex of the dense levels) gets its row early
BUILD_SHIFT = 1
#: slot of the per-level state tuple's scalar array: [current level stamp, previous level
#: stamp, current fill, previous fill, entries read since :func:`take_read`]
_CUR, _PREV, _FILL, _PFILL, _READ = 0, 1, 2, 3, 4


@njit
def new_level_rows(n):
    """Fresh state for a vertex range of ``n``: (scalars, then per vertex: row start, row
    length, the level stamp of its row, the level stamp of its first use and the
    triangles its edges listed at that level without a row; then the current
    level's neighbours, slots, truss numbers and ranks, and the same four of the previous
    level). No vertex holds a row."""
    sc = np.zeros(5, np.int64)
    return (sc, np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64),
            np.zeros(n, np.int64), np.zeros(n, np.int64),
            np.empty(1024, np.int32), np.empty(1024, np.int64),
            np.empty(1024, np.int32), np.empty(1024, np.int64),
            np.empty(1024, np.int32), np.empty(1024, np.int64),
            np.empty(1024, np.int32), np.empty(1024, np.int64))


@njit
def next_level(state, stamp):
    """Start the rows of a new scanned level with stamp ``stamp``: the current rows become the
    previous level's (read-only), the other buffer is reused for the new level."""
    sc, at, ln, lvl, used, uses, cn, cs, ct, cr, pn, ps, pt, pr = state
    sc[_PREV] = sc[_CUR]
    sc[_CUR] = stamp
    sc[_PFILL] = sc[_FILL]
    sc[_FILL] = 0
    return (sc, at, ln, lvl, used, uses, pn, ps, pt, pr, cn, cs, ct, cr)


@njit
def take_read(state):
    """The entries read by :func:`level_triangles` since the last call (rows built, lists
    intersected), and the count reset."""
    sc = state[0]
    r = sc[_READ]
    sc[_READ] = 0
    return r


@njit
def _level_row(x, k, state, deg, ptr, keys, shift, truss, rank, rows, row_at, row_used,
               rstamp):
    """The level-k row of vertex x: returns (state, rows, start, length), start -1 when x
    has none (yet: see :data:`BUILD_SHIFT`). Each entry keeps the edge's truss number and
    rank, which do not change while level k is scanned."""
    sc, at, ln, lvl, used, uses, cn, cs, ct, cr, pn, ps, pt, pr = state
    cur = sc[_CUR]
    if lvl[x] == cur:
        return state, rows, at[x], ln[x]
    fill = sc[_FILL]
    prev = lvl[x] == sc[_PREV] and sc[_PREV] != 0
    if used[x] != cur:
        used[x] = cur
        uses[x] = 0
    source = ln[x] if prev else deg[x]
    if uses[x] == 0 or uses[x] < (source >> BUILD_SHIFT):
        return state, rows, np.int64(-1), np.int64(0)
    sc[_READ] += source
    if prev:
        # filter the previous level's row
        a = at[x]
        m = ln[x]
        cn = _grow(cn, fill + m)
        cs = _grow(cs, fill + m)
        ct = _grow(ct, fill + m)
        cr = _grow(cr, fill + m)
        c = 0
        for i in range(m):
            s = ps[a + i]
            t = truss[s]
            if t >= k:
                cn[fill + c] = pn[a + i]
                cs[fill + c] = s
                ct[fill + c] = t
                cr[fill + c] = rank[s]
                c += 1
    else:
        A, d = _row(deg, ptr, x)
        rows, sx = _row_slots(x, A, deg, keys, shift, rows, row_at, row_used, rstamp)
        cn = _grow(cn, fill + d)
        cs = _grow(cs, fill + d)
        ct = _grow(ct, fill + d)
        cr = _grow(cr, fill + d)
        c = 0
        for i in range(d):
            s = rows[sx + i] if sx >= 0 else _slot(keys, shift, x, A[i])
            t = truss[s]
            if t >= k:
                cn[fill + c] = A[i]
                cs[fill + c] = s
                ct[fill + c] = t
                cr[fill + c] = rank[s]
                c += 1
    at[x] = fill
    ln[x] = c
    lvl[x] = cur
    sc[_FILL] = fill + c
    return (sc, at, ln, lvl, used, uses, cn, cs, ct, cr, pn, ps, pt, pr), rows, fill, \
        np.int64(c)


@njit
def level_triangles(y, k, state, keys, shift, deg, ptr, truss, rank, rows, row_at, row_used,
                    rstamp, pa, pb, tp, tq, tv, mark):
    """The triangles of edge y whose two other edges are at level k or above (a superset:
    where an endpoint has no level row yet, all of y's triangles, as
    :func:`~hornet.algos.ktruss.region._triangles`): the slots of their other two edges into
    ``tp[:n]`` (the edge at y's first endpoint) and ``tq[:n]``, and their truss numbers and
    ranks into ``tv[0:2, :n]`` and ``tv[2:4, :n]`` (read from the rows, in order, instead of
    four scattered reads per triangle). Returns (state, rows, pa, pb, tp, tq, tv, n)."""
    k0 = keys[y]
    u = np.int64(k0 >> 32)
    v = np.int64(k0 & 0xFFFFFFFF)
    state, rows, fu, nu = _level_row(u, k, state, deg, ptr, keys, shift, truss, rank, rows,
                                     row_at, row_used, rstamp)
    state, rows, fv, nv = _level_row(v, k, state, deg, ptr, keys, shift, truss, rank, rows,
                                     row_at, row_used, rstamp)
    if fu < 0 and fv < 0:
        rows, pa, pb, tp, tq, n = _triangles(y, keys, shift, deg, ptr, rows, row_at,
                                             row_used, rstamp, pa, pb, tp, tq, mark)
        state[0][_READ] += intersect_work(deg[u], deg[v])
        state[5][u] += n
        state[5][v] += n
        tv = _grow_values(tv, n)
        for j in range(n):                     # a rank is read only at the level
            a = truss[tp[j]]
            b = truss[tq[j]]
            tv[0, j] = a
            tv[1, j] = b
            tv[2, j] = rank[tp[j]] if a == k else 0
            tv[3, j] = rank[tq[j]] if b == k else 0
        return state, rows, pa, pb, tp, tq, tv, n
    if fu < 0 or fv < 0:
        # one endpoint has a row: its entries against the other's whole list
        if fu < 0:
            x, fx, nx, o = v, fv, nv, u
        else:
            x, fx, nx, o = u, fu, nu, v
        rows, pa, pb, tp, tq, tv, n = _row_against_list(
            x, fx, nx, o, k, state, keys, shift, deg, ptr, truss, rank, rows, row_at,
            row_used, rstamp, pa, pb, tp, tq, tv, mark)
        state[5][o] += n
        if fu < 0:                             # tp: the edges at y's first endpoint u
            tp, tq = tq, tp
            for j in range(n):
                tv[0, j], tv[1, j] = tv[1, j], tv[0, j]
                tv[2, j], tv[3, j] = tv[3, j], tv[2, j]
        return state, rows, pa, pb, tp, tq, tv, n
    cn = state[6]
    cs = state[7]
    ct = state[8]
    cr = state[9]
    need = min(nu, nv)
    if need > tp.shape[0]:
        pa = np.empty(2 * need, np.int64)
        pb = np.empty(2 * need, np.int64)
        tp = np.empty(2 * need, np.int64)
        tq = np.empty(2 * need, np.int64)
    tv = _grow_values(tv, need)
    state[0][_READ] += intersect_work(nu, nv)
    A = cn[fu:fu + nu]
    B = cn[fv:fv + nv]
    if nu * 16 < nv or nv * 16 < nu:
        c = _intersect_at(A, nu, B, nv, pa, pb)
    else:
        c = _intersect_marked(A, nu, B, nv, pa, pb, mark)
    for j in range(c):
        a = fu + pa[j]
        b = fv + pb[j]
        tp[j] = cs[a]
        tq[j] = cs[b]
        tv[0, j] = ct[a]
        tv[1, j] = ct[b]
        tv[2, j] = cr[a]
        tv[3, j] = cr[b]
    return state, rows, pa, pb, tp, tq, tv, c


@njit
def _row_against_list(x, fx, nx, o, k, state, keys, shift, deg, ptr, truss, rank, rows,
                      row_at, row_used, rstamp, pa, pb, tp, tq, tv, mark):
    """The triangles of edge x-o from x's level row (``fx``, ``nx``) and o's whole list:
    the edges at x into ``tp``, those at o into ``tq``, values as :func:`level_triangles`
    (read from the row at x, scattered at o). Returns (rows, pa, pb, tp, tq, tv, n)."""
    cn = state[6]
    cs = state[7]
    ct = state[8]
    cr = state[9]
    B, db = _row(deg, ptr, o)
    need = min(nx, db)
    if need > tp.shape[0]:
        pa = np.empty(2 * need, np.int64)
        pb = np.empty(2 * need, np.int64)
        tp = np.empty(2 * need, np.int64)
        tq = np.empty(2 * need, np.int64)
    tv = _grow_values(tv, need)
    state[0][_READ] += intersect_work(nx, db)
    A = cn[fx:fx + nx]
    if nx * 16 < db or db * 16 < nx:
        c = _intersect_at(A, nx, B, db, pa, pb)
    else:
        c = _intersect_marked(A, nx, B, db, pa, pb, mark)
    if c == 0:
        return rows, pa, pb, tp, tq, tv, 0
    rows, so = _row_slots(o, B, deg, keys, shift, rows, row_at, row_used, rstamp)
    for j in range(c):
        a = fx + pa[j]
        q = rows[so + pb[j]] if so >= 0 else _slot(keys, shift, o, B[pb[j]])
        tp[j] = cs[a]
        tq[j] = q
        tv[0, j] = ct[a]
        tv[2, j] = cr[a]
        b = truss[q]
        tv[1, j] = b
        tv[3, j] = rank[q] if b == k else 0
    return rows, pa, pb, tp, tq, tv, c


@njit
def _grow_values(tv, n):
    """``tv`` (4, m) int64 with room for n columns."""
    if n <= tv.shape[1]:
        return tv
    return np.empty((4, max(n, 2 * tv.shape[1])), np.int64)
