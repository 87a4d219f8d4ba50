"""DynamicTruss (CPU) on graphs with dense blocks (hornet.algos.ktruss.dense): a large
clique whose numbers exceed those of every other edge at its vertices keeps them in a dense
matrix and is updated alone. After every batch the numbers equal the static decomposition of
the same graph state, the k-order holds on the edges outside the blocks and the kept level
counts are lower bounds (brute force, truss_checks).
"""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.algos.ktruss import dense
from hornet.algos.ktruss.block_kernels import chunk_masks, raise_bounds
from hornet.algos.ktruss.dynamic import DynamicTruss

from truss_checks import MODES, assert_static, clique, k_order_violations
from truss_checks import level_count_violations


def _check(kt, g) -> None:
    assert_static(kt, g)
    assert k_order_violations(kt) == 0
    assert level_count_violations(kt) == 0
    blocks = kt._blocks
    for b in range(len(blocks)):              # every non-zero entry's chunk is in the masks
        if blocks.M[b] is not None:
            assert not (chunk_masks(blocks.F[b]) & ~blocks.M[b]).any()


def _masks(monkeypatch, masks: bool) -> None:
    """Chunk masks on every block (``masks``) or as chosen by their layout."""
    if masks:
        monkeypatch.setattr(dense, "MASK_SHARE", np.inf)


def _clique_graph(rng, size: int):
    """A K_size on vertices 0..size-1, a sparse random graph on 300 more vertices, random
    edges from the clique to them, and a K12 sharing the clique's vertices 0 and 1 (its
    other edges: the clique's boundary at level 12). Returns (graph, clique edge pairs)."""
    n = size + 300
    cs, cd = clique(range(size))
    ks, kd = clique([0, 1] + list(range(size, size + 10)))
    src = cs + ks + rng.integers(size, n, 500).tolist() + rng.integers(0, size, 150).tolist()
    dst = cd + kd + rng.integers(size, n, 500).tolist() + rng.integers(size, n, 150).tolist()
    g = hornet.Graph(directed=False, device="cpu")
    g.insert_edges(np.asarray(src), np.asarray(dst))
    return g, np.array([cs, cd]).T


@pytest.mark.parametrize("mode, masks", [("dynamic", False), ("default", False),
                                         ("dynamic", True)])
def test_clique_block_deletions_and_reinsertions(monkeypatch, mode, masks):
    """A K50 (1225 edges, one block) in a sparse graph: 20 rounds of deleting 1 to 12
    clique edges together with 3 other edges, re-inserting them, and inserting 6 uniform
    random pairs; then the deletion of a clique vertex, a new vertex joined to every clique
    vertex (its edges climb to the clique's level: the block loses its separation and the
    static decomposition takes over) and that vertex's deletion. ``masks``: the block's
    rows in chunk masks."""
    _masks(monkeypatch, masks)
    rng = np.random.default_rng(5)
    g, pairs = _clique_graph(rng, 50)
    kt = DynamicTruss(g, **MODES[mode])
    assert len(kt._blocks) == 1 and kt._blocks.vertices[0].shape[0] == 50
    _check(kt, g)
    for _ in range(20):
        pick = pairs[rng.choice(pairs.shape[0], int(rng.integers(1, 13)), replace=False)]
        gs, gd = g.edges()
        other = rng.choice(gs.shape[0], 3, replace=False)
        ds = np.concatenate([pick[:, 0], gs[other]])
        dd = np.concatenate([pick[:, 1], gd[other]])
        kt.update(g.delete_edges(ds, dd))
        _check(kt, g)
        kt.update(g.insert_edges(ds, dd))
        _check(kt, g)
        kt.update(g.insert_edges(rng.integers(0, 350, 6), rng.integers(0, 350, 6)))
        _check(kt, g)
    assert kt.k_max == 50
    kt.update(g.delete_vertices(np.array([7])))
    _check(kt, g)
    assert kt.k_max == 49
    kt.update(g.insert_edges(np.full(50, 400), np.arange(50)))
    _check(kt, g)
    assert kt.k_max == 50
    kt.update(g.delete_vertices(np.array([400])))
    _check(kt, g)


def test_deletions_lower_a_whole_clique():
    """Deleting edges of a K60 one batch at a time lowers every clique edge (the output
    changes in most of the graph); deleting a perfect matching of 12 clique edges in one
    batch lowers numbers by two; re-inserting restores the clique."""
    rng = np.random.default_rng(8)
    g, pairs = _clique_graph(rng, 60)
    kt = DynamicTruss(g, **MODES["dynamic"])
    assert len(kt._blocks) == 1
    for u, v in ((3, 4), (10, 30), (3, 30)):
        kt.update(g.delete_edges(np.array([u]), np.array([v])))
        _check(kt, g)
        assert kt.stats["path"] == "dynamic" and kt.stats["dense"] > 1000
    kt.update(g.delete_edges(np.arange(36, 60, 2), np.arange(37, 60, 2)))
    _check(kt, g)
    kt.update(g.insert_edges(np.array([3, 10, 3] + list(range(36, 60, 2))),
                             np.array([4, 30, 30] + list(range(37, 60, 2)))))
    _check(kt, g)
    assert kt.k_max == 60


def test_random_blocks_in_a_dense_graph(monkeypatch):
    """Block thresholds lowered so that the parts of a dense random graph that qualify
    become blocks (with boundaries close to their levels): forty batches that insert,
    delete or re-insert 1 to 40 edges, with the fallback off."""
    monkeypatch.setattr(dense, "MIN_BLOCK_EDGES", 24)
    monkeypatch.setattr(dense, "MIN_BLOCK_LEVEL", 3)
    monkeypatch.setattr(dense, "ROWS_PER_LEVEL", 3)
    rng = np.random.default_rng(21)
    n = 70
    g = hornet.Graph(directed=False, device="cpu")
    g.insert_edges(rng.integers(0, n, 500), rng.integers(0, n, 500))
    s, d = clique(range(12))
    g.insert_edges(np.asarray(s), np.asarray(d))
    s, d = clique(range(30, 38))
    g.insert_edges(np.asarray(s), np.asarray(d))
    kt = DynamicTruss(g, **MODES["dynamic"])
    assert len(kt._blocks) >= 1
    _check(kt, g)
    gone = None
    for step in range(40):
        b = int(rng.integers(1, 41))
        kind = step % 3
        if kind == 0:
            kt.update(g.insert_edges(rng.integers(0, n, b), rng.integers(0, n, b)))
        elif kind == 1:
            gs, gd = g.edges()
            pick = rng.choice(gs.shape[0], min(b, gs.shape[0]), replace=False)
            gone = gs[pick], gd[pick]
            kt.update(g.delete_edges(*gone))
        else:
            kt.update(g.insert_edges(*gone))
        _check(kt, g)


def test_block_edge_between_two_higher_blocks(monkeypatch):
    """A K26 and a K20 sharing ten vertices S, and a K14 holding one vertex i of the K26
    and one vertex j of the K20 only: the edge i-j has ten triangles through S whose other
    two edges are in the two higher blocks, outside the K14's vertices. The K14's block
    counts them (S are its ghost rows): deleting nine of its edges at i leaves i-j at
    level 12 (ten of those triangles, always alive at that level), which its in-block
    triangles alone would put below 5; then an edge i-w of the K26 (w in S) goes and
    comes back, and the deleted edges come back."""
    monkeypatch.setattr(dense, "MIN_BLOCK_EDGES", 24)
    monkeypatch.setattr(dense, "MIN_BLOCK_LEVEL", 3)
    monkeypatch.setattr(dense, "ROWS_PER_LEVEL", 3)
    shared = list(range(10))
    i, j = 10, 30
    k26 = shared + [i] + list(range(11, 26))
    k20 = shared + [j] + list(range(31, 40))
    k14 = [i, j] + list(range(40, 52))
    g = hornet.Graph(directed=False, device="cpu")
    for vs in (k26, k20, k14):
        s, d = clique(vs)
        g.insert_edges(np.asarray(s), np.asarray(d))
    kt = DynamicTruss(g, **MODES["dynamic"])
    blocks = kt._blocks
    assert len(blocks) == 3
    assert blocks.real[2].tolist() == sorted(k14)
    assert set(shared) <= set(blocks.vertices[2].tolist())
    _check(kt, g)
    gone = np.full(9, i), np.arange(40, 49)
    kt.update(g.delete_edges(*gone))
    _check(kt, g)
    assert kt.stats["path"] == "dynamic"
    assert int(kt._table.get("truss", np.array([i]), np.array([j]))[0]) == 12
    kt.update(g.delete_edges(np.array([i]), np.array([3])))
    _check(kt, g)
    kt.update(g.insert_edges(np.array([i]), np.array([3])))
    _check(kt, g)
    kt.update(g.insert_edges(*gone))
    _check(kt, g)
    assert kt.stats["path"] == "dynamic"
    assert kt.k_max == 26


def _overlapping_cliques(rng, sizes, share: int = 2, extra: int = 300):
    """Cliques of ``sizes`` in a chain, each sharing ``share`` vertices with the one before
    (levels one apart overlap at those vertices), and ``extra`` random edges among their
    vertices and 60 more. Returns (graph, the cliques' vertex lists)."""
    cliques, start = [], 0
    for size in sizes:
        vs = list(range(start, start + size))
        cliques.append(vs)
        start += size - share
    n = start + share + 60
    src, dst = [], []
    for vs in cliques:
        s, d = clique(vs)
        src += s
        dst += d
    src += rng.integers(0, n, extra).tolist()
    dst += rng.integers(0, n, extra).tolist()
    g = hornet.Graph(directed=False, device="cpu")
    g.insert_edges(np.asarray(src), np.asarray(dst))
    return g, cliques


def _low_thresholds(monkeypatch, margin: int = 1) -> None:
    monkeypatch.setattr(dense, "WIDE_MIN_MEDIAN", 3)
    monkeypatch.setattr(dense, "MIN_BLOCK_EDGES", 24)
    monkeypatch.setattr(dense, "MIN_BLOCK_LEVEL", 3)
    monkeypatch.setattr(dense, "ROWS_PER_LEVEL", 64)
    monkeypatch.setattr(dense, "MIN_BLOCK_MARGIN", margin)


@pytest.mark.parametrize("masks", [False, True])
def test_block_gives_up_its_lowest_levels(monkeypatch, masks):
    """Overlapping cliques K14, K13, K12, K11 (each sharing two vertices with the next) and
    a K10 at the K11's last vertex: blocks at margin 1. Deleting an edge of the K11 lowers
    it to the K10's level: its block gives that level up (its edges join the k-order),
    without the static decomposition; then the edge comes back (and the block takes the
    K11 back), and edges of the higher
    cliques go (their blocks give up levels, and the lower blocks at their vertices all
    of theirs) and come back. ``masks``: every block's rows in chunk masks."""
    _low_thresholds(monkeypatch)
    _masks(monkeypatch, masks)
    rng = np.random.default_rng(3)
    g, cl = _overlapping_cliques(rng, [14, 13, 12, 11], extra=0)
    s, d = clique([cl[-1][-1]] + list(range(60, 69)))       # a K10 at the K11's last vertex
    g.insert_edges(np.asarray(s), np.asarray(d))
    kt = DynamicTruss(g, **MODES["dynamic"])
    blocks = kt._blocks
    low = cl[-1]
    ls, ld = (np.asarray(x) for x in clique(low))
    own = (ls != low[0]) | (ld != low[1])                   # the K11's own edges
    ls, ld = ls[own], ld[own]
    assert (blocks.eblock[kt._table.lookup(ls, ld)] >= 0).all()
    _check(kt, g)
    kt.update(g.delete_edges(np.array([low[3]]), np.array([low[4]])))
    _check(kt, g)
    assert kt.stats["path"] == "dynamic" and blocks.evicted.shape[0] > 0
    keep = (ls != low[3]) | (ld != low[4])
    assert (blocks.eblock[kt._table.lookup(ls[keep], ld[keep])] < 0).all()
    kt.update(g.insert_edges(np.array([low[3]]), np.array([low[4]])))
    _check(kt, g)
    assert kt.stats["path"] == "dynamic"
    # back at their level above the boundary: the block takes them back
    assert (blocks.eblock[kt._table.lookup(ls, ld)] >= 0).all()
    for vs in cl[:3]:
        gone = np.array([vs[2], vs[5], vs[7]]), np.array([vs[3], vs[6], vs[8]])
        kt.update(g.delete_edges(*gone))
        _check(kt, g)
        assert kt.stats["path"] == "dynamic"
        kt.update(g.insert_edges(*gone))
        _check(kt, g)
    assert kt.k_max == 14


@pytest.mark.parametrize("seed, masks", [(0, False), (1, False), (2, False), (0, True),
                                         (1, True)])
def test_overlapping_cliques_random_batches(monkeypatch, seed, masks):
    """Overlapping cliques at levels one or two apart, random edges among and around them,
    blocks at margin 1: sixty batches that delete 1 to 30 edges (mostly clique edges),
    re-insert them or insert random pairs; the numbers equal the static ones, the k-order
    and the level counts hold after every batch. ``masks``: every block's rows in chunk
    masks."""
    _low_thresholds(monkeypatch)
    _masks(monkeypatch, masks)
    rng = np.random.default_rng(seed)
    g, cl = _overlapping_cliques(rng, [16, 15, 13, 12, 12, 10], share=int(rng.integers(1, 4)))
    kt = DynamicTruss(g, **MODES["dynamic"])
    assert len(kt._blocks) >= 1
    _check(kt, g)
    n = int(g.num_vertices)
    gone = None
    paths = []
    for step in range(60):
        b = int(rng.integers(1, 31))
        kind = step % 3
        if kind == 0:
            vs = cl[int(rng.integers(0, len(cl)))]
            s, d = clique(vs)
            pick = rng.choice(len(s), min(b, len(s)), replace=False)
            gs, gd = g.edges()
            other = rng.choice(gs.shape[0], 2, replace=False)
            gone = (np.concatenate([np.asarray(s)[pick], gs[other]]),
                    np.concatenate([np.asarray(d)[pick], gd[other]]))
            kt.update(g.delete_edges(*gone))
        elif kind == 1:
            kt.update(g.insert_edges(*gone))
        else:
            kt.update(g.insert_edges(rng.integers(0, n, b), rng.integers(0, n, b)))
        _check(kt, g)
        paths.append(kt.stats["path"])
    assert paths.count("dynamic") > len(paths) // 2


@pytest.mark.parametrize("seed, masks", [(0, False), (1, False), (0, True), (1, True)])
def test_wide_block_of_a_clique_chain(monkeypatch, seed, masks):
    """A chain of cliques K16 ... K12 (each sharing two vertices with the next: at every
    threshold the boundary is one level below, so no level's try separates any part of it
    by the margin of 4), a K30 sharing two vertices with the K16 and a K11 one vertex with
    the K12, in random sparse edges:
    the K30 is a block, the whole chain one wide block (the last try, margin 1). Forty
    batches delete chain or K30 edges (the wide block gives up its lowest levels when they
    fall to its boundary), re-insert them, or insert random pairs; the numbers equal the
    static ones, the k-order and the level counts hold after every batch. ``masks``: every
    block's rows in chunk masks."""
    _masks(monkeypatch, masks)
    monkeypatch.setattr(dense, "MIN_BLOCK_EDGES", 24)
    monkeypatch.setattr(dense, "MIN_BLOCK_LEVEL", 12)
    monkeypatch.setattr(dense, "WIDE_MIN_MEDIAN", 12)
    rng = np.random.default_rng(seed)
    g, cl = _overlapping_cliques(rng, [16, 15, 14, 13, 12], extra=250)
    k30 = cl[0][:2] + list(range(200, 228))
    k11 = [cl[-1][-1]] + list(range(240, 250))     # the chain's boundary at level 11
    for vs in (k30, k11):
        s, d = clique(vs)
        g.insert_edges(np.asarray(s), np.asarray(d))
    kt = DynamicTruss(g, **MODES["dynamic"])
    blocks = kt._blocks
    assert len(blocks) == 2
    assert sorted(blocks.real[0].tolist()) == sorted(k30)
    chain = sorted(set(v for vs in cl for v in vs))
    assert set(chain) <= set(blocks.real[1].tolist())
    _check(kt, g)
    n = int(g.num_vertices)
    gone = None
    paths = []
    evictions = 0
    for step in range(40):
        kind = step % 3
        if kind == 0:
            vs = (cl + [k30])[int(rng.integers(0, len(cl) + 1))]
            s, d = clique(vs)
            pick = rng.choice(len(s), int(rng.integers(1, 6)), replace=False)
            gone = np.asarray(s)[pick], np.asarray(d)[pick]
            kt.update(g.delete_edges(*gone))
            evictions += blocks.evicted.shape[0] > 0
        elif kind == 1:
            kt.update(g.insert_edges(*gone))
        else:
            kt.update(g.insert_edges(rng.integers(0, n, 5), rng.integers(0, n, 5)))
        _check(kt, g)
        paths.append(kt.stats["path"])
    assert paths.count("dynamic") >= 30 and evictions >= 1


@pytest.mark.parametrize("seed", [0, 1])
def test_chunk_mask_kernels_equal_whole_rows(seed):
    """The block kernels over chunk masks (reverse Cuthill-McKee rows, padded columns) give
    what a brute-force count over whole rows gives: in-block supports, the bounds after an
    insertion (raise_bounds) and the descent from an upper bound (equal to the
    whole-row descent, and to the descent that counts up from lower bounds)."""
    rng = np.random.default_rng(seed)
    nd = 150
    # overlapping groups of vertices, each a near-clique: mostly zero rows
    F = np.zeros((nd, nd), np.int16)
    for start in range(0, nd - 10, 7):
        vs = np.arange(start, min(nd, start + int(rng.integers(8, 20))))
        i, j = np.meshgrid(vs, vs)
        keep = (i < j) & (rng.random(i.shape) < 0.85)
        F[i[keep], j[keep]] = F[j[keep], i[keep]] = rng.integers(3, 20, keep.sum())
    li, lj = (x.astype(np.int32) for x in np.nonzero(np.triu(F)))
    P, M, pos = dense._layout(F, li, lj)
    assert M is not None
    assert not (chunk_masks(P) & ~M).any()
    pi, pj = pos[li], pos[lj]
    brute = np.array([(np.minimum(F[a], F[b]) > 0).sum() for a, b in zip(li, lj)])
    assert np.array_equal(dense.block_support(pi, pj, P, M), brute)
    assert np.array_equal(dense.block_support(li, lj, F, None), brute)
    old = F[li, lj].astype(np.int64)
    for gained, top in ((3, 12), (6, np.iinfo(np.int64).max)):
        G, Q = F.copy(), P.copy()
        f1 = np.zeros(li.shape[0], np.uint8)
        f2 = np.zeros(li.shape[0], np.uint8)
        # supports at table slots (the edges' own order reversed)
        slots = np.arange(li.shape[0])[::-1].copy()
        support = np.empty(li.shape[0], np.int32)
        support[slots] = brute if gained > 4 else 1 << 20
        cap = support[slots].astype(np.int64) + 2
        low1 = np.empty(li.shape[0], np.int16)
        low2 = np.empty(li.shape[0], np.int16)
        n1 = raise_bounds(li, lj, G, li.shape[0], top, gained, support, slots, f1,
                          low1)
        n2 = raise_bounds(pi, pj, Q, pi.shape[0], top, gained, support, slots, f2,
                          low2)
        assert np.array_equal(low1, old) and np.array_equal(low2, old)
        assert n1 == n2 == f1.sum() and np.array_equal(f1, f2)
        assert np.array_equal(G[li, lj], Q[pi, pj])
        # brute force: the old values below top raised by gained, at most cap and nd
        rise = old < top
        bnd = np.where(rise, np.minimum(np.minimum(old + gained, cap), nd), old)
        # (an old value above its bound, never a truss number, is left as it is)
        assert np.array_equal(f1 == 1, rise & (bnd > old))
        assert np.array_equal(G[li, lj], np.maximum(bnd, old))
    # the descent from the values raised by up to 5: the same numbers either way
    up = np.minimum(old + rng.integers(0, 6, old.shape[0]), nd).astype(np.int16)
    G = np.zeros_like(F)
    G[li, lj] = G[lj, li] = up
    Q = np.zeros_like(P)
    Q[pi, pj] = Q[pj, pi] = up
    ones = np.ones(li.shape[0], np.uint8)
    none = np.zeros(0, np.int16)
    r1 = dense.block_descend(li, lj, G, None, ones, 0, 1 << 60, 0, True, none)
    r2 = dense.block_descend(pi, pj, Q, M, ones, 0, 1 << 60, 0, True, none)
    assert r1[2] and r2[2]
    assert np.array_equal(G[li, lj], Q[pi, pj])
    # from lower bounds of the result (counted upwards in the first round): the same
    want = G[li, lj].astype(np.int64)
    for low in (want, np.maximum(want - rng.integers(0, 3, want.shape[0]), 2)):
        for rows, cols, mat, masks in ((li, lj, G, None), (pi, pj, Q, M)):
            W = np.zeros_like(mat)
            W[rows, cols] = W[cols, rows] = up
            r = dense.block_descend(rows, cols, W, masks, ones, 0, 1 << 60, 4, True,
                                    low.astype(np.int16))
            assert r[2] and np.array_equal(W[rows, cols], want)


def _greatest_fixpoint(F, li, lj):
    """Brute force: from the values ``F[li, lj]`` (an upper bound), every edge's value
    lowered to min(value, h-index of the current values) until none moves (NumPy, whole
    rows)."""
    F = F.astype(np.int64)
    while True:
        moved = False
        for a, b in zip(li, lj):
            m = np.minimum(F[a], F[b])
            v = F[a, b]
            k = v
            while k > 2 and (m >= k).sum() < k - 2:
                k -= 1
            if k != v:
                F[a, b] = F[b, a] = k
                moved = True
        if not moved:
            return F[li, lj]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_descent_after_clique_deletions_equals_brute_force(seed):
    """A K40 (values 40) and a K24 sharing 4 vertices (values 24) as one block's matrix:
    up to 24 entries deleted, the descent from the old values (first round from the rows
    that lost entries; falls of several levels take the probing path) ends at the
    brute-force greatest fixpoint, with whole rows and with chunk masks."""
    rng = np.random.default_rng(seed)
    nd = 60
    F = np.zeros((nd, nd), np.int16)
    for vs, val in ((np.arange(40), 40), (np.arange(36, 60), 24)):
        i, j = np.meshgrid(vs, vs)
        F[i[i != j], j[i != j]] = np.maximum(F[i[i != j], j[i != j]], val)
    li, lj = (x.astype(np.int32) for x in np.nonzero(np.triu(F)))
    gone = rng.choice(li.shape[0], int(rng.integers(8, 25)), replace=False)
    F[li[gone], lj[gone]] = F[lj[gone], li[gone]] = 0
    act = np.zeros(nd, np.uint8)
    act[li[gone]] = act[lj[gone]] = 1
    keep = np.ones(li.shape[0], bool)
    keep[gone] = False
    li, lj = li[keep], lj[keep]
    want = _greatest_fixpoint(F, li, lj)
    none = np.zeros(0, np.int16)
    G = F.copy()
    assert dense.block_descend(li, lj, G, None, act, 0, 1 << 60, 4, False, none)[2]
    assert np.array_equal(G[li, lj], want)
    P, M, pos = dense._layout(F, li, lj)
    if M is None:                              # a clique's rows: masks forced
        P = np.zeros((nd, 64), np.int16)
        perm = np.argsort(pos)
        P[:, :nd] = F[np.ix_(perm, perm)]
        M = chunk_masks(P)
    pa = np.zeros(nd, np.uint8)
    pa[pos] = act
    assert dense.block_descend(pos[li], pos[lj], P, M, pa, 0, 1 << 60, 4, False, none)[2]
    assert np.array_equal(P[pos[li], pos[lj]], want)
