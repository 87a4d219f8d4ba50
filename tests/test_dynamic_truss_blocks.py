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
from hornet.algos.ktruss.dynamic import DynamicTruss

from truss_checks import MODES, assert_static, clique, k_order_violations
from truss_checks import level_count_violations


def _check(kt, g) -> None:
    assert_static(kt, g)
    assert k_order_violations(kt) == 0
    assert level_count_violations(kt) == 0


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


@pytest.mark.parametrize("mode", ["dynamic", "default"])
def test_clique_block_deletions_and_reinsertions(mode):
    """A K50 (1225 edges, one block) in a sparse graph: 20 rounds of deleting 1 to 12
    clique edges together with 3 other edges, re-inserting them, and inserting 6 uniform
    random pairs; then the deletion of a clique vertex, a new vertex joined to every clique
    vertex (its edges climb to the clique's level: the block loses its separation and the
    static decomposition takes over) and that vertex's deletion."""
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
