"""Numba kernels of the dense truss blocks (:mod:`hornet.algos.ktruss.dense`) beside their
descent: an edge's count at a level and its h-index (a pass over two matrix rows), the
bounds an insertion starts the descent from, the write-back of a block's values, the
k-order of the levels a block gives up, the boundary of a block that may take edges back,
and the boundary bounds that changed edges raise.

Chunk masks. The rows of a block whose vertices each meet few of the others (the wide block
of overlapping cliques) are mostly zeros. Such a block's rows are ordered so that each
vertex's neighbours lie close together (reverse Cuthill-McKee), its matrix has a multiple of
:data:`CHUNK` columns, and ``M`` (uint64 (nd, words)) has bit c of row i set when columns
``c * CHUNK`` to ``c * CHUNK + CHUNK - 1`` of row i may hold a non-zero entry: a pass over
rows i and j reads only the chunks set in both masks (a zero entry counts for nothing). A
mask may keep a chunk that became zero; every non-zero entry's chunk is set
(:func:`chunk_masks`, :meth:`~hornet.algos.ktruss.dense.TrussBlocks._mark`). ``M`` None:
the plain pass over whole rows."""
from __future__ import annotations

import numpy as np

from numba.cpython.unsafe.numbers import trailing_zeros

from hornet.core.jit import ix, njit

from .region import _grow, _row, _slot

__all__ = ["CHUNK", "HIGH", "block_peel_order", "boundary_split", "chunk_masks",
           "raise_bounds", "raise_to", "write_back"]

#: the matrix value of an edge of a higher block among a block's vertices: above every level
#: of the block (its triangles count at every level)
HIGH = np.iinfo(np.int16).max
#: columns per bit of a block's chunk masks (one vector of int16 lanes)
CHUNK = 16


def chunk_masks(F: np.ndarray) -> np.ndarray:
    """The chunk masks of a matrix with a multiple of :data:`CHUNK` columns: uint64
    (rows, ceil(chunks / 64)), bit c of row i set where chunk c of row i holds a non-zero
    entry."""
    nd, ncol = F.shape
    nch = ncol // CHUNK
    words = -(-nch // 64)
    hit = np.zeros((nd, words * 64), bool)
    hit[:, :nch] = (F.reshape(nd, nch, CHUNK) != 0).any(axis=2)
    shifts = np.arange(64, dtype=np.uint64)
    return np.bitwise_or.reduce(hit.reshape(nd, words, 64).astype(np.uint64) << shifts,
                                axis=2)


@njit(inline="always")
def _count_at(F, M, i, j, k):
    """Triangles of block edge (i, j) whose two other edges are at ``k`` or above: one pass
    over rows i and j of ``F`` (vectorized: int16 lanes), over the chunks set in both rows
    of the masks ``M`` where it has some (module docstring; None: whole rows, a separate
    compilation, whose loop the chunk pass would keep from vectorizing)."""
    if M is None:
        return _count_rows(F, i, j, k)
    return _count_chunks(F, M, i, j, k)


@njit(inline="always")
def _count_rows(F, i, j, k):
    Fi = F[i]
    Fj = F[j]
    k16 = np.int16(min(k, HIGH))
    c = np.int32(0)
    for w in range(Fi.shape[0]):
        c += np.int32(min(Fi[w], Fj[w]) >= k16)
    return c


@njit(inline="always")
def _count_chunks(F, M, i, j, k):
    Fi = F[i]
    Fj = F[j]
    Mi = M[i]
    Mj = M[j]
    k16 = np.int16(min(k, HIGH))
    c = np.int32(0)
    # a trip count the compiler cannot fold: LLVM vectorizes the loop over a chunk, where
    # a constant one is unrolled into scalar code (twice the time)
    width = CHUNK + min(Fi.shape[0], 0)
    for wd in range(Mi.shape[0]):
        x = Mi[wd] & Mj[wd]
        while x:
            base = (wd * 64 + trailing_zeros(x)) * CHUNK
            part = np.int16(0)
            for w in range(base, base + width):
                part += np.int16(min(Fi[ix(w)], Fj[ix(w)]) >= k16)
            c += part
            x &= x - np.uint64(1)
    return c


@njit
def _h_index(F, M, i, j, cap, hist):
    """The largest k <= cap with at least k - 2 triangles of (i, j) whose other two edges
    are at k or above (2 at least). ``hist``: zeros, at least cap + 1 of them (left zero).
    ``M``: chunk masks, as in :func:`_count_at`."""
    Fi = F[i]
    Fj = F[j]
    if M is None:
        for w in range(Fi.shape[0]):
            m = min(Fi[w], Fj[w])
            if m >= 2:
                hist[min(np.int64(m), cap)] += 1
    else:
        _tally_chunks(Fi, Fj, M[i], M[j], cap, hist)
    acc = 0
    k = cap
    while k > 2:
        acc += hist[k]
        if acc >= k - 2:
            break
        k -= 1
    for t in range(cap + 1):                 # a loop, not a slice assignment (its shape
        hist[t] = 0                          # check compiles string formatting)
    return max(k, 2)


@njit
def _tally_chunks(Fi, Fj, Mi, Mj, cap, hist):
    """The histogram of :func:`_h_index` over the chunks set in both masks."""
    for wd in range(Mi.shape[0]):
        x = Mi[wd] & Mj[wd]
        while x:
            base = (wd * 64 + trailing_zeros(x)) * CHUNK
            for w in range(base, base + CHUNK):
                m = min(Fi[ix(w)], Fj[ix(w)])
                if m >= 2:
                    hist[min(np.int64(m), cap)] += 1
            x &= x - np.uint64(1)


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
def raise_bounds(li, lj, F, nold, top, gained, support, slots, first, low):
    """Upper bounds of a block's new values after an insertion, in place in ``F``.

    ``li, lj``: the block's edges, the first ``nold`` of them old (their values in ``F``
    are their numbers before the batch), the others new (at their bounds already, ``first``
    1). An old edge at value o below ``top`` (the highest value the batch's new entries
    may reach) may rise by at most ``gained`` (the entries the block gained: one insertion
    raises a number by at most one), to at most the block's size and to at most its
    support in the graph plus 2 (``support`` at its table slot, ``slots`` per edge; the
    support bounds its number in the block too). ``first`` (uint8, zeros for the old
    edges) is set to 1 for the old edges raised (bound above the old value), the edges the
    descent evaluates first;
    ``low`` (int16 per edge) to lower bounds of the new values: the old values, 2 for the
    new edges (the descent counts a falling edge's levels up from there). Returns how many
    edges were raised."""
    nd = F.shape[0]
    n = 0
    for q in range(nold):
        o = F[li[q], lj[q]]
        low[q] = o
        if o < top:
            b = min(np.int64(o) + gained, nd, np.int64(support[slots[q]]) + 2)
            if b > o:
                F[li[q], lj[q]] = b
                F[lj[q], li[q]] = b
                first[q] = 1
                n += 1
    for q in range(nold, li.shape[0]):
        low[q] = 2
    return n


@njit
def raise_to(masks, values, top):
    """``top[b] = max(top[b], values[e])`` for every bit b of every ``masks[e]`` (int64:
    the blocks at an edge's vertices)."""
    for e in range(masks.shape[0]):
        m = masks[e]
        while m:
            b = trailing_zeros(m)
            if values[e] > top[b]:
                top[b] = values[e]
            m &= m - 1


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
