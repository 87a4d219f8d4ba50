"""Bit rows of the dense high levels, for the deletion descent on a Kronecker-like graph (CPU
Numba): :func:`build_core`, :func:`core_triangles`.

The deletion descent (:mod:`hornet.algos.ktruss.descend_rows`) lists an edge's triangles at
one level below its number. On a Kronecker graph most of the edges that fall sit on the high
levels, whose endpoints are hubs with hundreds or thousands of neighbours at those levels: an
intersection of two such level rows reads every entry of both (and marks one of them), to
find a tenth of them common.

The *core* is the set of vertices with an edge at level T or above, T the least level whose
core holds at most a given number of vertices. Each core vertex gets a bit row over the core
(bit w: its edge to core vertex w had a number of at least T when the core was built) and the
slots and numbers of those edges in bit order (a CSR whose rows are ranked by the bits:
the entry of bit w sits at the row's start plus the bits before w). The triangles of an edge
u-v at a level L >= T are then the bits of ``row(u) & row(v)``, a word at a time, each with
its two slots found by a popcount. Numbers only fall during a deletion, so rows built from
the numbers of the graph after the batch's edges are gone (they are left out) hold every
edge at level L or above for the whole descent; the entries that fell below since are
filtered by their current numbers (as the level rows of the descent are).

State (one tuple, :func:`empty_core` when there is none): ``loc`` (int32 per vertex: its core
index, -1 outside), ``prm`` (int64: T, words per row, core vertices), ``bits`` (uint64,
core vertices x words), ``pref`` (int32, aligned with ``bits``: the row's bits before the
word), ``start`` (int64, core vertices + 1: where a row's entries start), ``cslot`` (int64:
the entries' edge slots) and ``ctr`` (int32: their numbers when built, an upper bound of
their numbers during the descent).
"""
from __future__ import annotations

import numpy as np

from hornet.core.jit import njit

from .top_level import _popcount

#: the most vertices of a core: its bit rows take CORE_MAX_VERTICES^2 / 8 bytes, and a
#: triangle listing reads CORE_MAX_VERTICES / 64 words of each endpoint's row
CORE_MAX_VERTICES = 8192
#: the lowest level a core starts at (below it the descent's level rows are short)
CORE_MIN_LEVEL = 8

_LOW = np.int64(0xFFFFFFFF)
_ONE = np.uint64(1)


def empty_core():
    """The state of no core (every listing takes the level rows)."""
    return (np.full(0, -1, np.int32), np.array([np.iinfo(np.int64).max, 0, 0], np.int64),
            np.zeros(0, np.uint64), np.zeros(0, np.int32), np.zeros(1, np.int64),
            np.zeros(0, np.int64), np.zeros(0, np.int32))


@njit
def _vertex_max(keys, truss, n, batch_stamp, stamp):
    """Each vertex's highest number among its live edges (``batch_stamp != stamp``), and
    the highest of all."""
    cap = keys.shape[0]
    vmax = np.zeros(n, np.int32)
    top = 0
    for s in range(cap):
        k = keys[s]
        if k < 0 or batch_stamp[s] == stamp:
            continue
        u = k >> 32
        v = k & _LOW
        t = truss[s]
        if u < n and t > vmax[u]:
            vmax[u] = t
        if v < n and t > vmax[v]:
            vmax[v] = t
        if t > top:
            top = t
    return vmax, top


@njit
def _level_of(vmax, top, n, max_vertices, min_level):
    """The least level of at least ``min_level`` whose core (the vertices whose highest
    number ``vmax`` reaches it) holds at most ``max_vertices`` vertices; ``top + 1`` (above
    every level) when there is none."""
    hist = np.zeros(top + 2, np.int64)
    for x in range(n):
        hist[vmax[x]] += 1
    T = top + 1
    acc = 0
    t = top
    while t >= min_level:
        if acc + hist[t] > max_vertices:
            break
        acc += hist[t]
        T = t
        t -= 1
    return np.int64(T)


@njit
def build_core(keys, truss, n, batch_stamp, stamp, max_vertices, min_level):
    """The core of the live edges of the table (``keys`` >= 0) except those with
    ``batch_stamp == stamp`` (the batch's deleted edges), over vertices ``0 .. n - 1``: the
    tuple of the module docstring. T is the least level of at least ``min_level`` whose core
    holds at most ``max_vertices`` vertices; with none, the core is empty (T above every
    level)."""
    vmax, top = _vertex_max(keys, truss, n, batch_stamp, stamp)
    T = _level_of(vmax, top, n, max_vertices, min_level)
    return _build(keys, truss, n, batch_stamp, stamp, T, vmax, top)


@njit
def build_core_at(keys, truss, n, batch_stamp, stamp, T):
    """:func:`build_core` at a given level ``T``: the core of the vertices with a live edge
    (``batch_stamp != stamp``) at T or above; empty when no edge is."""
    vmax, top = _vertex_max(keys, truss, n, batch_stamp, stamp)
    return _build(keys, truss, n, batch_stamp, stamp, T, vmax, top)


@njit
def _build(keys, truss, n, batch_stamp, stamp, T, vmax, top):
    cap = keys.shape[0]
    loc = np.full(n, -1, np.int32)
    if T > top:
        return (loc, np.array([np.iinfo(np.int64).max, 0, 0], np.int64),
                np.zeros(0, np.uint64), np.zeros(0, np.int32), np.zeros(1, np.int64),
                np.zeros(0, np.int64), np.zeros(0, np.int32))
    nc = 0
    for x in range(n):
        if vmax[x] >= T:
            loc[x] = nc
            nc += 1
    words = (nc + 63) // 64
    m = 0
    for s in range(cap):
        if keys[s] >= 0 and truss[s] >= T and batch_stamp[s] != stamp:
            m += 1
    edges = np.empty(m, np.int64)
    m = 0
    for s in range(cap):
        if keys[s] >= 0 and truss[s] >= T and batch_stamp[s] != stamp:
            edges[m] = s
            m += 1
    bits = np.zeros(nc * words, np.uint64)
    for i in range(m):
        k = keys[edges[i]]
        a = loc[k >> 32]
        b = loc[k & _LOW]
        bits[a * words + (b >> 6)] |= _ONE << np.uint64(b & 63)
        bits[b * words + (a >> 6)] |= _ONE << np.uint64(a & 63)
    pref = np.empty(nc * words, np.int32)
    start = np.empty(nc + 1, np.int64)
    acc = 0
    for r in range(nc):
        start[r] = acc
        c = 0
        for wd in range(words):
            pref[r * words + wd] = c
            c += _popcount(bits[r * words + wd])
        acc += c
    start[nc] = acc
    cslot = np.empty(acc, np.int64)
    ctr = np.empty(acc, np.int32)
    for i in range(m):
        s = edges[i]
        k = keys[s]
        a = loc[k >> 32]
        b = loc[k & _LOW]
        for side in range(2):
            r, c = (a, b) if side == 0 else (b, a)
            w = r * words + (c >> 6)
            below = (_ONE << np.uint64(c & 63)) - _ONE
            pos = start[r] + pref[w] + _popcount(bits[w] & below)
            cslot[pos] = s
            ctr[pos] = truss[s]
    return (loc, np.array([T, words, nc], np.int64), bits, pref, start, cslot, ctr)


@njit
def core_triangles(u, v, L, core, tp, tq, vp, vq):
    """The triangles of edge u-v (``u`` its first endpoint) whose two other edges are at
    level ``L`` or above, from the core's bit rows: the slots of the other edges into
    ``tp`` (at u) and ``tq`` (at v), their numbers into ``vp`` / ``vq``; each must hold
    :func:`core_room` entries. Returns how many, or -1 when the core does not cover the
    listing (L below T, or an endpoint outside the core). The numbers are the core's
    (``ctr``), which :func:`core_set` keeps equal to the table's during the descent."""
    loc, prm, bits, pref, start, cslot, ctr = core
    if L < prm[0] or u >= loc.shape[0] or v >= loc.shape[0]:
        return -1
    a = loc[u]
    b = loc[v]
    if a < 0 or b < 0:
        return -1
    words = prm[1]
    ba = a * words
    bb = b * words
    sa = start[a]
    sb = start[b]
    n = 0
    for wd in range(words):
        ma = bits[ba + wd]
        mb = bits[bb + wd]
        m = ma & mb
        while m:
            below = (m & (~m + _ONE)) - _ONE
            pa = sa + pref[ba + wd] + _popcount(ma & below)
            pb = sb + pref[bb + wd] + _popcount(mb & below)
            m &= m - _ONE
            fa = ctr[pa]
            fb = ctr[pb]
            if fa < L or fb < L:
                continue
            tp[n] = cslot[pa]
            tq[n] = cslot[pb]
            vp[n] = fa
            vq[n] = fb
            n += 1
    return n


@njit
def core_set(key, value, core):
    """The core's number of edge ``key`` (``(u << 32) | v``) becomes ``value``, when the core
    holds the edge (the descent calls it for every edge whose number it changes)."""
    loc, prm, bits, pref, start, cslot, ctr = core
    u = key >> 32
    v = key & _LOW
    if u >= loc.shape[0] or v >= loc.shape[0]:
        return
    a = loc[u]
    b = loc[v]
    if a < 0 or b < 0:
        return
    words = prm[1]
    for side in range(2):
        r, c = (a, b) if side == 0 else (b, a)
        w = r * words + (c >> 6)
        bit = _ONE << np.uint64(c & 63)
        if bits[w] & bit == 0:
            return
        ctr[start[r] + pref[w] + _popcount(bits[w] & (bit - _ONE))] = value


@njit
def core_room(u, v, core):
    """The most triangles :func:`core_triangles` can list for edge u-v (0 when the core
    does not cover it)."""
    loc, prm, bits, pref, start, cslot, ctr = core
    if u >= loc.shape[0] or v >= loc.shape[0]:
        return 0
    a = loc[u]
    b = loc[v]
    if a < 0 or b < 0:
        return 0
    return min(start[a + 1] - start[a], start[b + 1] - start[b])
