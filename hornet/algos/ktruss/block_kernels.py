"""Numba kernels of the dense truss blocks (:mod:`hornet.algos.ktruss.dense`) beside their
descent: an edge's count at a level (a pass over two matrix rows), which block edges an
insertion cannot raise, the write-back of a block's values, the k-order of the levels a block
gives up, and the boundary of a block that may take edges back."""
from __future__ import annotations

import numpy as np

from hornet.core.jit import njit

from .region import _grow, _row, _slot

__all__ = ["HIGH", "block_peel_order", "boundary_split", "cannot_rise", "write_back"]

#: the matrix value of an edge of a higher block among a block's vertices: above every level
#: of the block (its triangles count at every level)
HIGH = np.iinfo(np.int16).max


@njit(inline="always")
def _count_at(F, i, j, k):
    """Triangles of block edge (i, j) whose two other edges are at ``k`` or above: one pass
    over rows i and j of ``F`` (vectorized: int16 lanes)."""
    Fi = F[i]
    Fj = F[j]
    k16 = np.int16(min(k, HIGH))
    c = np.int32(0)
    for w in range(Fi.shape[0]):
        c += np.int32(min(Fi[w], Fj[w]) >= k16)
    return c


@njit
def block_peel_order(li, lj, F, top):
    """A k-order of the block edges ``li, lj`` whose value in ``F`` (int16, exact truss
    numbers of the block, :data:`HIGH` for higher blocks' edges) is at most ``top``: by value,
    and within value k in an order peeled at k - 2 triangles whose other two edges are
    alive (a value above k, or k and not removed yet). Boundary edges are below every value
    of the block and never count. Returns ``(order, ok)``: indices into ``li`` (int64);
    ``ok`` False when a level could not be peeled (the values were not exact)."""
    nd = F.shape[0]
    m = li.shape[0]
    W = F.copy()
    Q = np.full((nd, nd), -1, np.int32)
    vals = np.empty(m, np.int64)
    nlev = np.zeros(top + 2, np.int64)
    for q in range(m):
        Q[li[q], lj[q]] = q
        Q[lj[q], li[q]] = q
        vals[q] = F[li[q], lj[q]]
        if 2 <= vals[q] <= top:
            nlev[vals[q] + 1] += 1
    for k in range(top + 1):
        nlev[k + 1] += nlev[k]
    by = np.empty(nlev[top + 1], np.int64)
    fill = nlev.copy()
    for q in range(m):
        if 2 <= vals[q] <= top:
            by[fill[vals[q]]] = q
            fill[vals[q]] += 1
    cnt = np.zeros(m, np.int64)
    state = np.zeros(m, np.int8)               # 1: queued, 2: removed
    order = np.empty(by.shape[0], np.int64)
    n = 0
    for k in range(2, top + 1):
        lo = nlev[k]
        hi = nlev[k + 1]
        if lo == hi:
            continue
        k16 = np.int16(k)
        head = n
        for t in range(lo, hi):
            q = by[t]
            Fi = W[li[q]]
            Fj = W[lj[q]]
            c = 0
            for w in range(nd):
                c += min(Fi[w], Fj[w]) >= k16
            cnt[q] = c
            if c <= k - 2:
                state[q] = 1
                order[n] = q
                n += 1
        while head < n:
            q = order[head]
            head += 1
            i = li[q]
            j = lj[q]
            for w in range(nd):
                a = W[i, w]
                b = W[j, w]
                if a < k16 or b < k16:
                    continue
                for side in range(2):
                    x = i if side == 0 else j
                    val = a if side == 0 else b
                    if val != k16:
                        continue
                    p = Q[x, w]
                    if p >= 0 and state[p] == 0:
                        cnt[p] -= 1
                        if cnt[p] <= k - 2:
                            state[p] = 1
                            order[n] = p
                            n += 1
            state[q] = 2
            W[i, j] = 0
            W[j, i] = 0
        if n < hi:
            return order[:n], False
    return order, True


@njit
def boundary_split(vs, inside, deg, ptr, keys, shift, eblock, b, truss):
    """The edges at the vertices ``vs`` of block ``b`` that are in neither ``b`` nor a block
    before it (``eblock`` from 0 to ``b``): the highest truss number of those to a vertex
    not ``inside`` (bool per vertex) or in a lower block, and the slots of those between two
    vertices inside in no block (each once). Returns (highest, slots)."""
    top = 0
    out = np.empty(16, np.int64)
    n = 0
    for x in vs:
        A, d = _row(deg, ptr, x)
        for t in range(d):
            y = A[t]
            s = _slot(keys, shift, x, y)
            e = eblock[s]
            if 0 <= e <= b:
                continue
            if e < 0 and y < inside.shape[0] and inside[y]:
                if x < y:
                    out = _grow(out, n + 1)
                    out[n] = s
                    n += 1
                continue
            if truss[s] > top:
                top = truss[s]
    return top, out[:n]


@njit
def cannot_rise(li, lj, F, edges, old):
    """Which of the block ``edges`` (indices into ``li, lj``) cannot rise above their values
    ``old`` before an insertion: ``F`` holds upper bounds of the new values, and an edge
    with fewer than old - 1 triangles at old + 1 or above has an h-index of at most its old
    value. bool per edge."""
    out = np.zeros(edges.shape[0], np.bool_)
    for t in range(edges.shape[0]):
        q = edges[t]
        o = old[t]
        out[t] = _count_at(F, li[q], lj[q], o + 1) < o - 1
    return out


@njit
def write_back(li, lj, F, slots, truss, out_q, out_old):
    """Copy a block's values ``F[li, lj]`` into ``truss[slots]``: the indices of the edges
    whose value changed into ``out_q``, their values before into ``out_old`` (room for every
    edge). Returns (how many changed, the lowest value; the int64 maximum for no edge)."""
    n = 0
    low = np.iinfo(np.int64).max
    for q in range(li.shape[0]):
        v = F[li[q], lj[q]]
        s = slots[q]
        if v < low:
            low = v
        if truss[s] != v:
            out_q[n] = q
            out_old[n] = truss[s]
            truss[s] = v
            n += 1
    return n, low
