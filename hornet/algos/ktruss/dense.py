"""Dense truss blocks of :class:`hornet.algos.ktruss.dynamic.DynamicTruss` (CPU): the truss
numbers of dense, high-level parts of the graph kept in dense matrices.

A block is a set B of edges among a vertex set D (|D| at most :data:`MAX_BLOCK_VERTICES`;
:data:`WIDE_MAX_VERTICES` in the last, wide try of :func:`find_blocks`), with the truss
numbers of its edges in an int16 matrix ``F`` at the endpoints' local indices. Blocks are
found highest first and may share vertices (the cliques of a
collaboration graph overlap). The matrix has a row for every vertex of D and for every
*ghost* of B: a vertex outside D that is in two higher blocks which both have vertices in
D. The edges of higher blocks among these rows are entered as :data:`HIGH` (above every
level of B). The *boundary* of B is every other edge with an endpoint in D, those of
higher blocks excepted; ``xmax`` bounds its truss numbers.

Why a block can be updated alone. Let T_B be the truss numbers of the graph made of the
edges of B and of the higher blocks' edges among the rows, the latter counted as present
at every level. If every boundary edge has a number below every value of B, and every
higher block's edge at a vertex of D one above, then T = T_B on B: for k above the
boundary's numbers, a triangle of the k-truss that holds an edge (i, j) of B has its other
two edges in the k-truss, hence not on the boundary, hence in B or in higher blocks; its
third vertex w is in D, or the edges i-w and j-w are in two different higher blocks (one
block with i, j and w would hold i-j), which makes w a ghost; and conversely. Every
other edge sees the block edges only as triangles alive up to levels above its own: the
sparse algorithms never read a block edge's k-order rank, and block edges keep none.
Each block keeps ``floor`` (its lowest value) above ``xmax`` (:data:`MIN_BLOCK_MARGIN`
levels when it is chosen, :data:`WIDE_MARGIN` in the wide try); a higher block's bound
takes the numbers of the lower blocks' edges at its vertices, which makes the second
condition follow from the first.

What a batch costs. An update recomputes T_B by the h-index descent from an upper bound
(the old values for a deletion; the old values plus the entries the block gained, at most
the supports plus 2, for an insertion, whose old values are lower bounds), in rounds over
the block edges whose count at their value a change of the previous round can have moved.
An edge's count at level k (its triangles whose other two edges are at k or above) is one
pass over two rows of ``F``, vectorized, instead of an intersection of adjacency lists and a
table probe per triangle: on a clique of n vertices, a deletion's descent (the edges at the
deleted edge's endpoints fall, then the rest, then a check) reads about three times n^3 / 2
matrix entries. A block whose rows are mostly zeros (the wide block) keeps chunk masks, and
a pass reads only the chunks both rows may hold (:func:`_layout`).

When a deletion would lower block edges to ``xmax`` or below, the block gives up its
lowest levels instead (:meth:`TrussBlocks._evict`): those edges leave it with their
numbers before the batch and places at the end of their levels in the k-order, and the
sparse descent lowers them further; a lower block at their vertices gives up all its
edges. When a boundary edge would climb to a block's floor (an insertion), the caller
falls back to the static decomposition, which chooses new blocks (:func:`find_blocks`).
"""
from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix, csr_matrix
from scipy.sparse.csgraph import connected_components, reverse_cuthill_mckee

from hornet.core.jit import njit

from .block_kernels import (CHUNK, HIGH, _count_at, _h_index, block_peel_order,
                            boundary_split, chunk_masks, raise_bounds, raise_to,
                            write_back)
from .region import _grow, _intersect, _row, _slot

__all__ = ["TrussBlocks", "find_blocks", "block_descend", "block_support",
           "boundary_partners"]

#: the fewest edges a block has (a smaller dense part costs the sparse kernels little)
MIN_BLOCK_EDGES = 256
#: the most vertices a block has (its matrix has this many squared entries; a pass over all
#: its edges reads up to the cube over two)
MAX_BLOCK_VERTICES = 512
#: the most vertices a block has per unit of its lowest truss number: a block edge's count is
#: a pass over rows of the block's vertices, its sparse count a probe per triangle (at least
#: the lowest number minus 2 of them); a vector pass reads many entries per probe
ROWS_PER_LEVEL = 8
#: the least gap between a block's lowest number and its boundary's highest: a batch that
#: deletes fewer of its edges than this (or raises its boundary less) keeps it separated
MIN_BLOCK_MARGIN = 4
#: the last try of :func:`find_blocks` (:func:`_wide_blocks`): its least margin and most
#: vertices (its matrix: this many squared int16 entries at most)
WIDE_MARGIN = 1
WIDE_MAX_VERTICES = 1280
#: the least median truss number of a wide block's edges: an edge's sparse recount costs
#: a probe per triangle (at least its number minus 2 of them), its pass over matrix rows
#: the rows; a wide, sparse-rowed block at low levels (a social graph's core) costs an
#: insertion more in whole-block passes than the k-order scan of the edges that rise
WIDE_MIN_MEDIAN = 32
#: the lowest truss level at which a block is looked for, and how many levels are tried
MIN_BLOCK_LEVEL = 16
MAX_BLOCK_TRIES = 64
#: the most blocks (a vertex's blocks are the bits of an int64)
MAX_BLOCKS = 32
#: a block gets chunk masks (:func:`_layout`) when a pass over the chunks its edges' two
#: rows share reads at most this share of the entries of a pass over whole rows
MASK_SHARE = 0.5


def find_blocks(src: np.ndarray, dst: np.ndarray, truss: np.ndarray, n: int):
    """Dense blocks of an undirected graph with known truss numbers, highest first.

    ``src, dst`` (E,) int: each undirected edge once; ``truss`` (E,) int: its truss number;
    ``n``: the vertex range. For the levels l (highest first, at least
    :data:`MIN_BLOCK_LEVEL`, each holding at least half :data:`MIN_BLOCK_EDGES` edges, at most
    :data:`MAX_BLOCK_TRIES` of them), the edges at l or above that are in no block yet and do
    not join two vertices of one block are split into connected components; a component
    becomes a block when it has enough edges, few enough vertices (also relative to its
    lowest number: :data:`ROWS_PER_LEVEL`), and its lowest number exceeds by
    :data:`MIN_BLOCK_MARGIN` at least the highest number of its *boundary*: the other edges at its
    vertices, except those of the blocks found before (which are above it; blocks may share
    vertices). The edges at the vertices of a component with more than
    :data:`MAX_BLOCK_VERTICES` vertices are left out of the lower levels' tries (there it
    would only grow), so that the separate cliques below a large tangle are still tried.
    A last, wide try (:func:`_wide_blocks`) takes what is left at :data:`MIN_BLOCK_LEVEL`
    and above as components of up to :data:`WIDE_MAX_VERTICES` vertices at margin
    :data:`WIDE_MARGIN`.

    Returns a list of ``(vertices, edges, xmax, ghosts)``: sorted int32 vertex ids, int64
    indices into ``src``/``dst`` of the block's edges, the largest truss number of its
    boundary, and its ghost vertices (sorted int32, :func:`_ghosts`).
    """
    src = np.asarray(src, np.int64)
    dst = np.asarray(dst, np.int64)
    truss = np.asarray(truss, np.int64)
    blocks = []
    if src.shape[0] < MIN_BLOCK_EDGES:
        return blocks
    counts = np.bincount(truss)
    levels = np.arange(counts.shape[0])
    keep = (levels >= MIN_BLOCK_LEVEL) & (counts * 4 >= MIN_BLOCK_EDGES)
    tries = levels[keep][::-1][:MAX_BLOCK_TRIES]
    if tries.shape[0] == 0:
        return blocks
    # the edges at the lowest level tried or above (every try's edges are among them)
    top = np.flatnonzero(truss >= tries[-1])
    ts, ss, ds = truss[top], src[top], dst[top]
    in_block = np.zeros(src.shape[0], bool)
    joins_one = np.zeros(top.shape[0], bool)     # both ends in one block's vertices
    # the vertices of a component with too many vertices to be a block: at lower levels its
    # component only grows, so their edges are left out of the later tries (such an edge,
    # at the level tried or above, stays on the boundary of a component beside it, whose
    # margin check then counts it)
    dead = np.zeros(n, bool)
    bits = np.zeros(n, np.int64)                 # per vertex: the blocks found so far
    for level in tries.tolist():
        if len(blocks) >= MAX_BLOCKS:
            break
        high = np.flatnonzero((ts >= level) & ~in_block[top] & ~joins_one
                              & ~dead[ss] & ~dead[ds])
        nh = high.shape[0]
        if nh < MIN_BLOCK_EDGES:
            continue
        hv, hlab, elab, ne, nv, lmin = _edge_components(ss[high], ds[high], ts[high])
        ok = ((ne >= MIN_BLOCK_EDGES) & (nv <= MAX_BLOCK_VERTICES)
              & (nv <= ROWS_PER_LEVEL * lmin))
        dead[hv[nv[hlab] > MAX_BLOCK_VERTICES]] = True
        if not ok.any():
            continue
        # highest boundary number of every candidate component: the other edges at its
        # vertices, those of the blocks found before excepted
        comp = np.full(n, -1, np.int64)
        keep = ok[hlab]
        comp[hv[keep]] = hlab[keep]
        near = np.zeros(n, bool)
        near[hv[keep]] = True
        rest = ~in_block
        rest[top[high]] = False
        touching = np.flatnonzero((near[src] | near[dst]) & rest)
        xmax = np.zeros(ne.shape[0], np.int64)
        for side in (src, dst):
            c = comp[side[touching]]
            hit = c >= 0
            np.maximum.at(xmax, c[hit], truss[touching[hit]])
        for c in np.flatnonzero(ok & (lmin >= xmax + MIN_BLOCK_MARGIN)).tolist():
            if len(blocks) >= MAX_BLOCKS:
                break
            vertices = hv[hlab == c].astype(np.int32)
            edges = top[high[elab == c]]
            member = np.zeros(n, bool)
            member[vertices] = True
            in_block[edges] = True
            joins_one |= member[ss] & member[ds]
            blocks.append((vertices, edges, int(xmax[c]), _ghosts(bits, vertices, member)))
            bits[vertices] |= np.int64(1) << (len(blocks) - 1)
    _wide_blocks(blocks, src, dst, truss, n, in_block, bits)
    return blocks


def _edge_components(hs, hd, ht) -> tuple:
    """The connected components of the edges ``(hs, hd)`` with truss numbers ``ht``, on
    their own vertices: ``(hv, hlab, elab, ne, nv, lmin)``: the vertices (sorted), each
    one's component, each edge's component, and per component its edges, its vertices and
    its lowest truss number."""
    nh = hs.shape[0]
    hv, local = np.unique(np.concatenate([hs, hd]), return_inverse=True)
    m = coo_matrix((np.ones(nh, np.int8), (local[:nh], local[nh:])),
                   shape=(hv.shape[0], hv.shape[0]))
    _, hlab = connected_components(m, directed=False)
    elab = hlab[local[:nh]]
    ne = np.bincount(elab, minlength=hlab.max() + 1)
    nv = np.bincount(hlab, minlength=ne.shape[0])
    lmin = np.full(ne.shape[0], np.iinfo(np.int64).max)
    np.minimum.at(lmin, elab, ht)
    return hv, hlab, elab, ne, nv, lmin


def _wide_blocks(blocks, src, dst, truss, n, in_block, bits) -> None:
    """The last try of :func:`find_blocks`: the edges at :data:`MIN_BLOCK_LEVEL` or above
    in no block yet (those joining two vertices of one block included) split into
    connected components; one with at most :data:`WIDE_MAX_VERTICES` vertices whose lowest
    number exceeds its boundary's highest (margin :data:`WIDE_MARGIN`) and whose edges'
    median number is :data:`WIDE_MIN_MEDIAN` or more becomes a block
    (appended to ``blocks``; ``in_block`` and ``bits`` updated). Overlapping cliques at
    consecutive levels (a collaboration graph's core) have a boundary one level below at
    every threshold, so no try at a higher level separates any part of them by
    :data:`MIN_BLOCK_MARGIN`; as one block their batches cost vector passes over matrix
    rows instead of a sparse recount per edge, and a deletion that lowers their lowest
    level costs an eviction (:meth:`TrussBlocks._evict`), not the static fallback."""
    if len(blocks) >= MAX_BLOCKS:
        return
    sel = np.flatnonzero((truss >= MIN_BLOCK_LEVEL) & ~in_block)
    nh = sel.shape[0]
    if nh < MIN_BLOCK_EDGES:
        return
    hv, hlab, elab, ne, nv, lmin = _edge_components(src[sel], dst[sel], truss[sel])
    ok = (ne >= MIN_BLOCK_EDGES) & (nv <= WIDE_MAX_VERTICES)
    if not ok.any():
        return
    comp = np.full(n, -1, np.int64)
    keep = ok[hlab]
    comp[hv[keep]] = hlab[keep]
    rest = ~in_block
    rest[sel] = False
    touching = np.flatnonzero(((comp[src] >= 0) | (comp[dst] >= 0)) & rest)
    xmax = np.zeros(ne.shape[0], np.int64)
    for side in (src, dst):
        c = comp[side[touching]]
        hit = c >= 0
        np.maximum.at(xmax, c[hit], truss[touching[hit]])
    for c in np.flatnonzero(ok & (lmin >= xmax + WIDE_MARGIN)).tolist():
        if len(blocks) >= MAX_BLOCKS:
            break
        edges = sel[elab == c]
        if np.median(truss[edges]) < WIDE_MIN_MEDIAN:
            continue
        vertices = hv[hlab == c].astype(np.int32)
        member = np.zeros(n, bool)
        member[vertices] = True
        in_block[edges] = True
        blocks.append((vertices, edges, int(xmax[c]), _ghosts(bits, vertices, member)))
        bits[vertices] |= np.int64(1) << (len(blocks) - 1)


def _ghosts(bits: np.ndarray, vertices: np.ndarray, member: np.ndarray) -> np.ndarray:
    """The ghost rows of a new block with ``vertices`` (``member``: the same as a mask):
    the other vertices that are in two or more of the earlier blocks (``bits``: per vertex,
    a bit per earlier block) touching its vertices. A triangle of a block edge (i, j) with a
    third vertex w outside the block whose two other edges are in higher blocks counts at
    every level of the block; such w is in the block of (i, w) and in that of (j, w), two
    different blocks (one block holding i, j and w would hold the edge (i, j)), each
    touching the block's vertices. Sorted int32."""
    touching = np.bitwise_or.reduce(bits[vertices]) if vertices.shape[0] else np.int64(0)
    m = bits & touching
    return np.flatnonzero((m & (m - 1) != 0) & ~member).astype(np.int32)


def _layout(F: np.ndarray, li: np.ndarray, lj: np.ndarray):
    """The row order and chunk masks of a new block (module docstring of
    :mod:`~hornet.algos.ktruss.block_kernels`): ``F`` (int16 (nd, nd), rows by sorted
    vertex), ``li, lj`` its edges. The rows in reverse Cuthill-McKee order, the columns
    padded to a multiple of :data:`CHUNK`; masked when a pass over the chunks an edge's two
    rows share reads at most :data:`MASK_SHARE` of a whole row (a clique's rows share all
    their chunks: no masks, sorted rows). Returns ``(F, M, pos)``: the matrix, the masks
    (None: none) and the row of each sorted vertex (int32)."""
    nd = F.shape[0]
    plain = (F, None, np.arange(nd, dtype=np.int32))
    if li.shape[0] == 0:
        return plain
    perm = reverse_cuthill_mckee(csr_matrix(F != 0), symmetric_mode=True)
    pos = np.empty(nd, np.int32)
    pos[perm] = np.arange(nd, dtype=np.int32)
    P = np.zeros((nd, -(-nd // CHUNK) * CHUNK), np.int16)
    P[:, :nd] = F[np.ix_(perm, perm)]
    M = chunk_masks(P)
    # chunks both rows of an edge may hold (a popcount; np.bitwise_count needs NumPy 2)
    shared = int(np.unpackbits((M[pos[li]] & M[pos[lj]]).view(np.uint8)).sum(dtype=np.int64))
    if shared * CHUNK > MASK_SHARE * li.shape[0] * nd:
        return plain
    return P, M, pos


#: levels a falling edge is recounted at one by one (a vector pass each) before one
#: histogram pass finds its h-index
STEPS = 4
#: no lower bounds for :func:`block_descend`
_NO_LOW = np.zeros(0, np.int16)


@njit(inline="always")
def _count_up(F, M, i, j, b, a, hist):
    """The h-index of block edge (i, j) known to lie in [b, a - 1]: the levels above b
    counted one by one (a vector pass each) while they hold, up to :data:`STEPS` of
    them, then one histogram pass (``hist``: zeros, at least ``a`` of them)."""
    for _ in range(STEPS):
        if b + 1 >= a or _count_at(F, M, i, j, b + 1) < b - 1:
            return b
        b += 1
    if b + 1 >= a:
        return b
    return _h_index(F, M, i, j, a - 1, hist)


@njit
def block_descend(li, lj, F, M, active, floor, limit, steps, edges, low):
    """Lower the block's values ``F`` (int16 (nd, nd), symmetric; an upper bound of the
    block's own truss numbers) to those truss numbers: the h-index descent in rounds.

    ``li, lj`` (m,) int32: the local endpoints of the block's edges (an edge with
    ``F == 0`` is gone); ``M``: the block's chunk masks (None: none; module docstring
    of :mod:`~hornet.algos.ktruss.block_kernels`). ``active`` (nd,) uint8: the vertices
    whose rows changed (the first round evaluates the edges touching them); or, when it is
    an (m,) array with ``edges``, the edges the first round evaluates (every other edge
    satisfies its bound). An edge whose
    value exceeds its count at that value plus 2 falls to min(value - 1, h-index). The next
    round evaluates an edge at value a only when an edge at one of its vertices fell from a
    or above to below a (from a fallen edge's values, each vertex keeps the range (lowest
    new, highest old]): no other change moves its count at a. Once a round changes nothing
    every edge satisfies its bound, so the values are the truss numbers (the values never
    drop below them: a value only falls to an h-index of values that are all upper bounds).
    Values update in place during a round (any mix of older and newer values is an upper
    bound).

    ``floor``: a value may not fall to it or below (the boundary's highest number: the block
    is no longer separated); ``limit``: the most matrix entries to read; ``steps``: the
    levels below its value a falling edge is recounted at one by one in the first round
    (:data:`STEPS` in later ones), then one histogram pass finds its h-index; ``low`` (one
    per edge, or empty): lower bounds of the numbers (the values before an insertion), from
    which a falling edge's levels are counted upwards in the first round instead
    (:func:`_count_up`: after an insertion the bounds can be far above, the numbers near
    the old values). Returns
    ``(entries_read, rounds, ok)``: ``ok`` False when either was reached (``F`` is then
    incomplete).
    """
    nd = F.shape[0]
    m = li.shape[0]
    big = np.iinfo(np.int64).max
    # per vertex, the values its changed edges fell from (hi) and to (lo) in the previous
    # round (lo, hi] and in this one (nlo, nhi]
    lo = np.zeros(nd, np.int64)
    hi = np.zeros(nd, np.int64)
    nlo = np.full(nd, big, np.int64)
    nhi = np.zeros(nd, np.int64)
    read = np.int64(0)
    rounds = 0
    hist = np.zeros(nd + 2, np.int32)
    deep = 0                                   # > 0: recent falls of 3 levels or more
    while True:
        rounds += 1
        changed = 0
        for q in range(m):
            i = li[q]
            j = lj[q]
            if rounds == 1:
                if edges:
                    if active[q] == 0:
                        continue
                elif active[i] == 0 and active[j] == 0:
                    continue
                a = np.int64(F[i, j])
            else:
                a = np.int64(F[i, j])
                if not ((lo[i] < a <= hi[i]) or (lo[j] < a <= hi[j])):
                    continue                   # no triangle's weight at its value changed
            if a == 0 or (low.shape[0] and a <= low[q]):
                continue                       # gone, or at its lower bound
            read += nd
            if _count_at(F, M, i, j, a) >= a - 2:
                continue
            if rounds == 1 and low.shape[0]:
                if a > hist.shape[0]:
                    hist = np.zeros(2 * a, np.int32)
                b = _count_up(F, M, i, j, max(np.int64(low[q]), 2), a, hist)
                read += nd * (min(b - low[q], STEPS) + 1)
            elif deep > 0 and (steps if rounds == 1 else STEPS) == 4 and a > 6:
                # recent falls were of 3 or 4 levels (a clique that lost edges): the
                # levels a - 1 to a - 4 in 2 or 3 passes, not up to 4 one by one
                if _count_at(F, M, i, j, a - 3) >= a - 5:
                    if _count_at(F, M, i, j, a - 1) >= a - 3:
                        b = a - 1
                    else:
                        b = a - 2 if _count_at(F, M, i, j, a - 2) >= a - 4 else a - 3
                        read += nd
                elif _count_at(F, M, i, j, a - 4) >= a - 6:
                    b = a - 4
                else:
                    b = a - 5
                    if b > 2:
                        read += nd
                        b = _h_index(F, M, i, j, b, hist)
                read += 2 * nd
                deep = min(deep + 1, 8) if a - b >= 3 else deep - 1
            else:
                b = a - 1
                while b > a - 1 - (steps if rounds == 1 else STEPS) and b > 2:
                    read += nd
                    if _count_at(F, M, i, j, b) >= b - 2:
                        break
                    b -= 1
                else:
                    if b > 2:
                        read += nd
                        if b + 1 > hist.shape[0]:
                            hist = np.zeros(2 * (b + 1), np.int32)
                        b = _h_index(F, M, i, j, b, hist)
                if low.shape[0] == 0:
                    deep = min(deep + 1, 8) if a - b >= 3 else max(deep - 1, -8)
            if b <= floor:
                return read, rounds, False
            F[i, j] = b
            F[j, i] = b
            nlo[i] = min(nlo[i], b)
            nlo[j] = min(nlo[j], b)
            nhi[i] = max(nhi[i], a)
            nhi[j] = max(nhi[j], a)
            changed += 1
        if changed == 0:
            return read, rounds, True
        if read > limit:
            return read, rounds, False
        lo[:] = nlo
        hi[:] = nhi
        nlo[:] = big
        nhi[:] = 0


@njit
def block_support(li, lj, F, M):
    """In-block support of each edge (i, j) of ``li, lj``: the vertices w with both
    ``F[i, w]`` and ``F[j, w]`` non-zero (``M``: chunk masks, as in :func:`block_descend`).
    int32 (m,)."""
    out = np.empty(li.shape[0], np.int32)
    for q in range(li.shape[0]):
        out[q] = _count_at(F, M, li[q], lj[q], 1)
    return out


@njit
def boundary_partners(bu, bv, deg, ptr, keys, shift, eblock, truss):
    """The edges outside every block whose count in the k-order may have grown by a triangle
    with one of the new edges ``bu[i]``-``bv[i]`` (a new block edge, above them; or a new
    edge placed at the start of its level ``truss``, after the lower levels): for each
    common neighbour w of the two endpoints, an edge to w that is in no block, below the new
    edge's level, and whose partner edge (the other edge to w) is at its level or above.
    int64 slots, with repeats."""
    out = np.empty(16, np.int64)
    n = 0
    buf = np.empty(16, np.int32)
    for q in range(bu.shape[0]):
        a = bu[q]
        b = bv[q]
        A, da = _row(deg, ptr, a)
        B, db = _row(deg, ptr, b)
        if min(da, db) > buf.shape[0]:
            buf = np.empty(2 * min(da, db), np.int32)
        c = _intersect(A, da, B, db, buf)
        top = truss[_slot(keys, shift, a, b)]
        for t in range(c):
            w = buf[t]
            s1 = _slot(keys, shift, a, w)
            s2 = _slot(keys, shift, b, w)
            for side in range(2):
                x = s1 if side == 0 else s2
                y = s2 if side == 0 else s1
                if eblock[x] < 0 and truss[y] >= truss[x] and truss[x] < top:
                    out = _grow(out, n + 1)
                    out[n] = x
                    n += 1
    return out[:n]


def _bits(masks: np.ndarray) -> list[int]:
    """The bits set in any int64 of ``masks``, ascending (the blocks they name)."""
    m = int(np.bitwise_or.reduce(masks)) if masks.shape[0] else 0
    return [b for b in range(64) if (m >> b) & 1]


def _lowest_bit(mask: np.ndarray) -> np.ndarray:
    """Index of the lowest set bit of every int64 of ``mask`` (-1 where none)."""
    low = mask & -mask
    out = np.full(mask.shape[0], -1, np.int64)
    nz = low != 0
    out[nz] = np.log2(low[nz].astype(np.float64)).astype(np.int64)
    return out


class TrussBlocks:
    """The dense blocks of one CPU dynamic truss and their bookkeeping.

    Blocks are listed highest first (:func:`find_blocks`); they may share vertices. Per
    block ``b``: ``vertices[b]`` (int32: the vertex of each row of its matrix, its own
    vertices and its ghost vertices, see :func:`_ghosts`; ``vsort[b]`` the same sorted,
    ``vpos[b]`` the row of each of those), ``real[b]`` (sorted int32: its own
    vertices), ``F[b]`` (int16 (nd, nd) at the endpoints' local indices (rows): the truss
    number of each of its edges, :data:`HIGH` for an edge of a higher block among its rows,
    0 elsewhere; more zero columns and the chunk masks ``M[b]`` where :func:`_layout`
    chose them), ``li[b]`` / ``lj[b]`` (int32: local endpoints of its edges,
    i < j), ``slots[b]`` (int64: their edge-table slots), ``xmax[b]`` (an upper bound of its
    boundary: the numbers of the other edges at its vertices, those of higher blocks
    excepted) and ``floor[b]`` (its lowest number). ``vmask`` (int64 per vertex: bit b set
    when it is a vertex of block b), ``gmask`` (the same for the rows of block b: its
    vertices and its ghosts), ``vfloor`` (int64 per vertex: the lowest floor of its
    blocks) and ``eblock`` (int32 per table slot: the block of that edge, -1 none).

    Separation (every block's floor above its xmax) makes each block's numbers its own
    truss numbers with the higher blocks' edges counted as always present
    (module docstring); an update that would break it reports failure and the caller
    falls back to the static decomposition.
    """

    def __init__(self):
        self.clear(0, 0)

    def clear(self, n: int, capacity: int) -> None:
        """No blocks (``n`` vertices, a table of ``capacity`` slots)."""
        self.vertices, self.F, self.li, self.lj, self.slots = [], [], [], [], []
        self.M: list[np.ndarray] = []           # per block: chunk masks (see _layout)
        self.vsort: list[np.ndarray] = []       # per block: its rows' vertices, sorted
        self.vpos: list[np.ndarray] = []        # and the row of each of those
        # per block: the edges it gave up (:meth:`_evict`) and its boundary bound before
        self.out_u: list[np.ndarray] = []
        self.out_v: list[np.ndarray] = []
        self.base: list[int] = []
        self.real: list[np.ndarray] = []
        self.xmax: list[int] = []
        self.floor = np.zeros(0, np.int64)
        self.vmask = np.zeros(max(n, 1), np.int64)
        self.gmask = np.zeros(max(n, 1), np.int64)
        self.vfloor = np.full(max(n, 1), np.iinfo(np.int64).max, np.int64)
        self.eblock = np.full(capacity, -1, np.int32)
        self.evicted = np.zeros(0, np.int64)   # slots the last deletion took out of blocks
        self.read = 0                          # matrix entries the last update read

    def __len__(self) -> int:
        return len(self.F)

    def build(self, src: np.ndarray, dst: np.ndarray, truss: np.ndarray, slots: np.ndarray,
              n: int, capacity: int) -> None:
        """Choose the blocks of a graph (:func:`find_blocks`) whose edges ``src, dst`` have
        the (exact) numbers ``truss`` and the table slots ``slots``."""
        self.clear(n, capacity)
        for real, edges, xmax, ghosts in find_blocks(src, dst, truss, n):
            b = len(self.F)
            vertices = np.union1d(real, ghosts).astype(np.int32)
            nd = vertices.shape[0]
            i = np.searchsorted(vertices, src[edges]).astype(np.int32)
            j = np.searchsorted(vertices, dst[edges]).astype(np.int32)
            li, lj = np.minimum(i, j), np.maximum(i, j)
            F = np.zeros((nd, nd), np.int16)
            F[li, lj] = F[lj, li] = truss[edges]
            for a in range(b):                 # the higher blocks' edges among its rows
                hi, hj, ok = self._local(b, *self._ends(a), vertices)
                F[hi[ok], hj[ok]] = F[hj[ok], hi[ok]] = HIGH
            F, M, pos = _layout(F, li, lj)
            i, j = pos[li], pos[lj]
            li, lj = np.minimum(i, j), np.maximum(i, j)
            rows = np.empty(nd, np.int32)
            rows[pos] = vertices
            self.vmask[real] |= np.int64(1) << b
            self.gmask[vertices] |= np.int64(1) << b
            self.vertices.append(rows)
            self.vsort.append(vertices)
            self.vpos.append(pos)
            self.real.append(real)
            self.F.append(F)
            self.M.append(M)
            self.li.append(li)
            self.lj.append(lj)
            self.slots.append(np.asarray(slots[edges], np.int64))
            self.xmax.append(int(xmax))
            self.out_u.append(np.zeros(0, np.int64))
            self.out_v.append(np.zeros(0, np.int64))
            self.base.append(int(xmax))
            self.eblock[self.slots[b]] = b
        self._floors()

    def _ends(self, b: int):
        v = self.vertices[b]
        return v[self.li[b]], v[self.lj[b]]

    def _local(self, b, u, v, vertices=None):
        """Local indices (rows) in block ``b`` of the pairs ``u, v`` and whether both are
        its vertices; with ``vertices`` (sorted) given, the indices into them instead."""
        vs = self.vsort[b] if vertices is None else vertices
        i = np.minimum(np.searchsorted(vs, u), vs.shape[0] - 1)
        j = np.minimum(np.searchsorted(vs, v), vs.shape[0] - 1)
        ok = (vs[i] == u) & (vs[j] == v)
        if vertices is None:
            i, j = self.vpos[b][i], self.vpos[b][j]
        return i.astype(np.int32), j.astype(np.int32), ok

    def _mark(self, b, i, j) -> None:
        """Set the chunk mask bits of the entries ``(i, j)`` and ``(j, i)`` of block ``b``
        (rows; entries about to become non-zero)."""
        M = self.M[b]
        if M is None or len(i) == 0:
            return
        i = np.asarray(i, np.int64)
        j = np.asarray(j, np.int64)
        for r, col in ((i, j), (j, i)):
            c = col // CHUNK
            np.bitwise_or.at(M, (r, c >> 6), np.left_shift(np.uint64(1),
                                                           (c & 63).astype(np.uint64)))

    def _floors(self, blocks=None) -> None:
        """``floor`` (of ``blocks``, a list; all by default) from the matrices, and
        ``vfloor``."""
        full = blocks is None or self.floor.shape[0] != len(self)
        if full:
            self.floor = np.full(len(self), np.iinfo(np.int64).max, np.int64)
            blocks = range(len(self))
        for b in blocks:
            vals = self.F[b][self.li[b], self.lj[b]]
            self.floor[b] = int(vals.min()) if vals.shape[0] else np.iinfo(np.int64).max
        self.vfloor[:] = np.iinfo(np.int64).max
        for b in range(len(self)):
            vs = self.real[b]
            self.vfloor[vs] = np.minimum(self.vfloor[vs], self.floor[b])

    def separated(self) -> bool:
        """Whether every block's floor is above its boundary bound."""
        return bool((self.floor > np.array(self.xmax, np.int64)).all())

    def relocate(self, table) -> None:
        """The edge table was rehashed: look the block edges' slots up again."""
        self.eblock = np.full(table.capacity, -1, np.int32)
        for b in range(len(self)):
            self.slots[b] = np.asarray(table.lookup(*self._ends(b)), np.int64)
            self.eblock[self.slots[b]] = b

    def grow_vertices(self, n: int) -> None:
        """Room for vertex ids below ``n`` (new vertices are in no block)."""
        if n > self.vmask.shape[0]:
            extra = n - self.vmask.shape[0]
            self.vmask = np.concatenate([self.vmask, np.zeros(extra, np.int64)])
            self.gmask = np.concatenate([self.gmask, np.zeros(extra, np.int64)])
            self.vfloor = np.concatenate([self.vfloor,
                                          np.full(extra, np.iinfo(np.int64).max, np.int64)])

    def raise_xmax(self, u: np.ndarray, v: np.ndarray, values: np.ndarray,
                   below=None) -> None:
        """Raise the boundary bound of every block with a vertex among ``u`` or ``v`` to the
        ``values`` of those edges; with ``below`` (one per edge) only the blocks before it
        (the edge is of block ``below``, which is low for the higher blocks only)."""
        values = np.asarray(values, np.int64)
        if values.shape[0] == 0:
            return
        top = np.array(self.xmax, np.int64)
        if not (top < int(values.max())).any():   # no value can raise a bound
            return
        masks = self.vmask[u] | self.vmask[v]
        if below is not None:
            masks &= (np.int64(1) << np.asarray(below, np.int64)) - 1
        raise_to(masks, values, top)
        self.xmax = top.tolist()

    def _write_back(self, b: int, truss: np.ndarray, rose: list | None = None):
        """Copy block ``b``'s values into the slot-indexed ``truss`` and its lowest value into
        ``floor[b]``; returns the slots that changed and their values before. Where values
        rose (an insertion; those of a deletion fell below the bounds they were in) the
        higher blocks' bounds must take the changed edges: with ``rose`` (a list), their
        ends, values and block are appended to it for :meth:`raise_xmax`."""
        li, lj, slots = self.li[b], self.lj[b], self.slots[b]
        q = np.empty(li.shape[0], np.int64)
        old = np.empty(li.shape[0], truss.dtype)
        n, low = write_back(li, lj, self.F[b], slots, truss, q, old)
        self.floor[b] = low
        q = q[:n]
        if rose is not None and b > 0 and n:
            vs = self.vertices[b]
            rose.append((vs[li[q]], vs[lj[q]], truss[slots[q]], np.full(n, b)))
        return slots[q], old[:n]

    def _vfloor(self, before: np.ndarray) -> None:
        """``vfloor`` again where a block's floor moved from ``before``."""
        if not np.array_equal(before, self.floor):
            self._floors(())

    def _descend(self, b, active, limit, steps=STEPS, edges=False, low=None):
        low = _NO_LOW if low is None else low
        return block_descend(self.li[b], self.lj[b], self.F[b], self.M[b], active,
                             self.xmax[b], limit, steps, edges, low)

    def after_deletion(self, u, v, slots, truss, limit, rank, counters):
        """The blocks' part of a deletion batch (``u, v``: the deleted edges, ``slots``: their
        table slots, still present). A deleted block edge leaves its block and the matrices
        of the lower blocks that list it as :data:`HIGH`; each block that lost an entry
        descends from its old values, starting from the rows of the lost entries (highest
        block first). A block whose values would fall to its boundary bound gives up its
        lowest levels instead (:meth:`_evict`): they become edges outside every block, with
        ranks in the k-order (``rank``, ``counters``: the table's rank column and the
        k-order's [head, tail]). Returns ``(ok, changed slots, old values, edges examined,
        entries read)``; ``ok`` False when ``limit`` entries were read."""
        owner = self.eblock[slots]
        hit = owner >= 0
        none = np.zeros(0, np.int64)
        self.evicted = none
        if not hit.any():
            return True, none, none, 0, 0
        u, v, owner, gone = u[hit], v[hit], owner[hit], slots[hit]
        self.eblock[gone] = -1
        active = [None] * len(self)
        saved = {}                             # per block: the matrix before the batch
        for b in _bits(self.gmask[u] & self.gmask[v]):
            i, j, ok = self._local(b, u, v)
            ok &= owner <= b                   # its own edges and the higher blocks' ones
            if not ok.any():
                continue
            F = self.F[b]
            saved[b] = (F.copy(), self.li[b], self.lj[b], self.slots[b], i[ok], j[ok])
            F[i[ok], j[ok]] = F[j[ok], i[ok]] = 0
            active[b] = np.zeros(F.shape[0], np.uint8)
            active[b][i[ok]] = active[b][j[ok]] = 1
            if (owner == b).any():
                keep = F[self.li[b], self.lj[b]] > 0
                self.li[b], self.lj[b] = self.li[b][keep], self.lj[b][keep]
                self.slots[b] = self.slots[b][keep]
        changed, old = [none], [none]
        floors = self.floor.copy()
        examined = read = 0
        self._dissolve = set()                 # lower blocks an eviction left unseparated
        for b in range(len(self)):
            if b in self._dissolve:
                if b not in saved:
                    saved[b] = (self.F[b].copy(), self.li[b], self.lj[b], self.slots[b],
                                none, none)
                ok, r = self._evict(b, saved, rank, counters, limit - read, True)
                read += r
            elif active[b] is None:
                continue
            else:
                r, _, ok = self._descend(b, active[b], limit - read)
                read += r
                if not ok and read <= limit:
                    ok, r = self._evict(b, saved, rank, counters, limit - read)
                    read += r
            examined += self.li[b].shape[0]
            if not ok:
                return False, none, none, examined, read
            ch, before = self._write_back(b, truss)
            changed.append(ch)
            old.append(before)
        self._vfloor(floors)
        self.read = read
        return True, np.concatenate(changed), np.concatenate(old), examined, read

    def _evict(self, b, saved, rank, counters, limit, everything=False):
        """Block ``b``'s values would fall to its boundary bound: its lowest levels leave it.

        ``saved``: the matrix before the batch, the edge lists and slots before it, the
        local ends of the batch's entries taken out. For the levels L of its edges,
        lowest first: the matrix is reset to its values before the batch less the batch's
        entries and the edges at L or below, and descends (bound: L); the first L that
        descends without passing its bound is kept. The evicted edges keep their numbers
        before the batch and join the k-order at the end of their levels, in an order
        peeled from the block's matrix before the batch
        (:func:`~hornet.algos.ktruss.block_kernels.block_peel_order`): every other edge at
        their vertices is below them (boundary) or above (the block's own higher levels,
        higher blocks), so their s+ is that peel's count, and no other
        edge's s+ grows. The caller's descent of the edges outside the blocks then lowers
        them further where they lost triangles. An evicted edge in the rows or at a vertex
        of a lower block was above all of that block's levels and is now outside every
        block: the lower block is no longer separated and gives up all its edges the same
        way when its turn comes (``everything``; ``_dissolve`` lists those blocks). Returns
        ``(ok, entries read)``; ``ok`` False when ``limit`` entries were read or the peel
        failed (values not exact)."""
        F0, li0, lj0, slots0, zi, zj = saved[b]
        F = self.F[b]
        li, lj, sl = self.li[b], self.lj[b], self.slots[b]
        cur = F0[li, lj].astype(np.int64)
        if cur.shape[0] == 0:
            return True, 0
        # the levels to try: all edges at the bound or below go; then one level more each
        levels = np.unique(np.maximum(cur, int(self.xmax[b])))
        if everything:
            levels = levels[-1:]
        read = 0
        ok = False
        ev = cur < 0
        for L in levels.tolist():
            ev = cur <= L
            F[:] = F0
            F[zi, zj] = F[zj, zi] = 0
            F[li[ev], lj[ev]] = F[lj[ev], li[ev]] = 0
            act = np.zeros(F.shape[0], np.uint8)
            act[zi] = act[zj] = 1
            act[li[ev]] = act[lj[ev]] = 1
            r, _, ok = block_descend(li[~ev], lj[~ev], F, self.M[b], act,
                                     max(int(self.xmax[b]), L),
                                     limit - read, STEPS, False, _NO_LOW)
            read += r
            if ok or read > limit:
                break
        if not ok:
            return False, read
        # a lower block lists them as above its levels (in its rows) or leaves them off its
        # boundary (at its vertices): it would lose its separation
        eu, ew = self.vertices[b][li[ev]], self.vertices[b][lj[ev]]
        below = (self.gmask[eu] & self.gmask[ew]) | self.vmask[eu] | self.vmask[ew]
        self._dissolve.update(x + b + 1 for x in _bits(below >> (b + 1)))
        top = int(cur[ev].max())
        self.eblock[sl[ev]] = -1
        self.evicted = np.concatenate([self.evicted, sl[ev]])
        self.li[b], self.lj[b], self.slots[b] = li[~ev], lj[~ev], sl[~ev]
        if not everything:                     # candidates to take back (:meth:`reabsorb`)
            if self.out_u[b].shape[0] == 0:
                self.base[b] = int(self.xmax[b])
            self.out_u[b] = np.concatenate([self.out_u[b], eu.astype(np.int64)])
            self.out_v[b] = np.concatenate([self.out_v[b], ew.astype(np.int64)])
        self.xmax[b] = max(int(self.xmax[b]), top)
        order, peeled = block_peel_order(li0, lj0, F0, top)
        if not peeled:
            return False, read
        rank[slots0[order]] = np.arange(counters[1], counters[1] + order.shape[0],
                                        dtype=np.int64)
        counters[1] += order.shape[0]
        return True, read

    def reabsorb(self, table, deg, ptr) -> np.ndarray:
        """After an insertion: a block that gave up edges (:meth:`_evict`) takes the edges
        between its vertices outside every block back once they are all above the rest of
        its boundary (:func:`~hornet.algos.ktruss.block_kernels.boundary_split`), as when
        the edges a deletion took come back; the rest of the boundary bounds it again. The
        numbers are exact, so its matrix with them holds its own truss numbers; they leave
        the k-order (every other edge at the block's vertices is below them, so no other
        edge's s+ changes). Not where one touches a lower block (which lists no such edge
        in its matrix). Returns their slots."""
        got = [np.zeros(0, np.int64)]
        moved = []
        truss = table.columns["truss"]
        for b in range(len(self)):
            if self.out_u[b].shape[0] == 0:
                continue
            slots = np.asarray(table.lookup(self.out_u[b], self.out_v[b]), np.int64)
            slots = slots[slots >= 0]          # a deleted one is no edge: not needed
            slots = slots[self.eblock[slots] < 0]
            if slots.shape[0] == 0:
                self.out_u[b] = self.out_v[b] = np.zeros(0, np.int64)
                continue
            if int(truss[slots].min()) <= self.base[b]:
                continue
            vs = self.real[b]
            inside = np.zeros(self.vmask.shape[0], np.bool_)
            inside[vs] = True
            top, inner = boundary_split(vs, inside, deg, ptr, table.keys, table.shift,
                                        self.eblock, b, truss)
            self.base[b] = int(top)
            take = inner[truss[inner] > top]
            keys = table.keys[take]
            u, v = keys >> 32, keys & 0xFFFFFFFF
            lower = np.int64(0)                # the lower blocks that still hold edges
            for x in range(b + 1, len(self)):
                if self.li[x].shape[0]:
                    lower |= np.int64(1) << x
            if take.shape[0] == 0 or ((self.gmask[u] | self.gmask[v]) & lower).any():
                continue
            i, j, _ = self._local(b, u, v)
            i, j = np.minimum(i, j), np.maximum(i, j)
            F = self.F[b]
            self._mark(b, i, j)
            F[i, j] = F[j, i] = truss[take]
            self.li[b] = np.concatenate([self.li[b], i])
            self.lj[b] = np.concatenate([self.lj[b], j])
            self.slots[b] = np.concatenate([self.slots[b], take])
            self.eblock[take] = b
            self.xmax[b] = int(top)
            self.out_u[b] = self.out_v[b] = np.zeros(0, np.int64)
            got.append(take)
            moved.append(b)
        if moved:
            self._floors(moved)
        return np.concatenate(got)

    def after_insertion(self, u, v, slots, truss, support, limit):
        """The blocks' part of an insertion batch (``u, v``: the inserted edges, ``slots``:
        their table slots, truss numbers 2 for now; ``support``: the table's support
        column, up to date). An inserted edge with both ends in a
        block's vertices tries the highest such block; it joins unless its in-block support
        plus 2 is at most the block's boundary bound (then it is a boundary edge, left to
        the k-order scan). Highest block first, each block that gained entries (its own new
        edges, :data:`HIGH` entries of higher blocks' new edges among its rows) descends from its
        old values plus the entries gained (an insertion raises a truss number by at most
        one), at most the supports plus 2, and its new edges' in-block supports plus 2
        (:func:`~hornet.algos.ktruss.block_kernels.raise_bounds`). Returns ``(ok, seed,
        changed slots, old values, edges examined)``: ``seed`` (bool per inserted edge)
        False for the edges that joined a block."""
        seed = np.ones(u.shape[0], bool)
        none = np.zeros(0, np.int64)
        self.read = 0
        if not len(self):
            return True, seed, none, none, 0
        common = self.vmask[u] & self.vmask[v]
        target = _lowest_bit(common)
        if not (target >= 0).any():
            return True, seed, none, none, 0
        rows = self.gmask[u] & self.gmask[v]      # the blocks with both ends among its rows
        changed, old = [none], [none]
        floors = self.floor.copy()
        examined = read = 0
        rose = []                                 # for the higher blocks' bounds
        for b in _bits(rows):
            F = self.F[b]
            nd = F.shape[0]
            own = np.flatnonzero(target == b)
            high = np.flatnonzero((target >= 0) & (target < b) & ~seed
                                  & ((rows >> b) & 1 == 1))
            if own.shape[0] == 0 and high.shape[0] == 0:
                continue
            hi, hj, _ = self._local(b, u[high], v[high])
            self._mark(b, hi, hj)
            F[hi, hj] = F[hj, hi] = HIGH
            gained = high.shape[0]
            if own.shape[0]:
                i, j, _ = self._local(b, u[own], v[own])
                i, j = np.minimum(i, j), np.maximum(i, j)
                self._mark(b, i, j)
                F[i, j] = F[j, i] = 1
                bound = block_support(i, j, F, self.M[b]).astype(np.int64) + 2
                join = bound > self.xmax[b]
                F[i[~join], j[~join]] = F[j[~join], i[~join]] = 0
                seed[own[join]] = False
                gained += int(join.sum())
            if gained == 0:
                continue
            li, lj = self.li[b], self.lj[b]
            nold = li.shape[0]
            # an edge at value o rises only if the (o + 1)-truss gains a new entry: a
            # higher block's edge (above every level), or a new edge of the block whose
            # number reaches o + 1 (at most its in-block support plus 2)
            top = np.iinfo(np.int64).max if high.shape[0] else 0
            first = np.zeros(nold, np.uint8)
            if own.shape[0] and join.any():
                i, j = i[join], j[join]
                top = max(top, int(bound[join].max()))
                F[i, j] = F[j, i] = np.minimum(bound[join], nd)
                li = self.li[b] = np.concatenate([li, i])
                lj = self.lj[b] = np.concatenate([lj, j])
                first = np.concatenate([first, np.ones(i.shape[0], np.uint8)])
                self.slots[b] = np.concatenate([self.slots[b], slots[own[join]]])
                self.eblock[slots[own[join]]] = b
            low = np.empty(li.shape[0], np.int16)
            raise_bounds(li, lj, F, nold, top, gained, support, self.slots[b], first, low)
            # a falling edge counts up from its old value (the numbers only rose)
            r, _, ok = self._descend(b, first, limit - read, STEPS, True, low)
            read += r
            examined += self.li[b].shape[0]
            if not ok:
                return False, seed, none, none, examined
            ch, before = self._write_back(b, truss, rose)
            changed.append(ch)
            old.append(before)
        if rose:
            self.raise_xmax(*(np.concatenate(x) for x in zip(*rose)))
        self._vfloor(floors)
        self.read = read
        return self.separated(), seed, np.concatenate(changed), np.concatenate(old), examined
