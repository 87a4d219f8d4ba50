"""GPU DynamicTruss with dense blocks (hornet.algos.ktruss.blocks_gpu): the numbers of a small
graph's cliques kept in matrices on the device. After every batch the numbers equal the static
decomposition (and the k-order holds for the edges outside the blocks): deletions and
re-insertions inside the cliques, at their boundary and elsewhere, overlapping cliques (a
lower block with the higher block's edges among its rows), new pairs between two vertices of
a block that were no edges of it, and real collaboration graphs."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import HAS_GPU

import hornet

from truss_checks import MODES, assert_static, clique, k_order_violations, real_graph

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]


def _graph(s, d):
    import cupy
    return hornet.Graph.from_edges(cupy.asarray(np.asarray(s, np.int64)),
                                   cupy.asarray(np.asarray(d, np.int64)), device="gpu")


def _cliques(rng, missing: int = 0):
    """Two overlapping cliques (40 and 30 vertices, 4 shared), a third one apart (26), a
    sparse random part around them and edges from the cliques into it; ``missing`` pairs of
    the largest clique left out. Returns (src, dst, the left-out pairs)."""
    s, d = [], []
    for vs in (range(0, 40), range(36, 66), range(100, 126)):
        a, b = clique(list(vs))
        s += a
        d += b
    s, d = np.asarray(s), np.asarray(d)
    out = []
    if missing:
        inside = np.flatnonzero((s < 36) & (d < 36))
        drop = rng.choice(inside, missing, replace=False)
        out = list(zip(s[drop].tolist(), d[drop].tolist()))
        keep = np.ones(s.shape[0], bool)
        keep[drop] = False
        s, d = s[keep], d[keep]
    rs = rng.integers(130, 400, 1500)
    rd = rng.integers(130, 400, 1500)
    xs = rng.integers(0, 126, 400)
    xd = rng.integers(130, 400, 400)
    s = np.concatenate([s, rs, xs])
    d = np.concatenate([d, rd, xd])
    ok = s != d
    return s[ok], d[ok], out


def _churn(kt, g, s, d, rng, steps, most, focus=None):
    """Delete 1 to ``most`` edges (half of them from ``focus`` when given), re-insert them,
    each update checked against the static decomposition and the k-order."""
    import cupy
    for _ in range(steps):
        k = int(rng.integers(1, most + 1))
        pick = rng.choice(len(s), k, replace=False)
        if focus is not None:
            pick = np.unique(np.concatenate([pick, rng.choice(focus, k, replace=False)]))
        gone = cupy.asarray(s[pick]), cupy.asarray(d[pick])
        kt.update(g.delete_edges(*gone))
        assert_static(kt, g)
        kt.update(g.insert_edges(*gone))
        assert_static(kt, g)
        assert k_order_violations(kt) == 0


@pytest.mark.parametrize("seed", [0, 1])
def test_blocks_delete_and_reinsert(seed):
    from hornet.algos import DynamicTruss
    rng = np.random.default_rng(seed)
    s, d, _ = _cliques(rng)
    g = _graph(s, d)
    kt = DynamicTruss(g, **MODES["dynamic"])
    assert kt._blocks is not None and kt._blocks.nblocks >= 2
    gs, gd = (a.get() for a in g.edges())
    inside = np.flatnonzero((gs < 126) & (gd < 126))
    _churn(kt, g, gs, gd, rng, 6, 25, focus=inside)
    assert kt._blocks is not None           # (the cliques kept their margin)
    # uniform pairs in, then out again
    import cupy
    for _ in range(3):
        a = cupy.asarray(rng.integers(0, 400, 30))
        b = cupy.asarray(rng.integers(0, 400, 30))
        ch = g.insert_edges(a, b)
        kt.update(ch)
        assert_static(kt, g)
        kt.update(g.delete_edges(ch.src, ch.dst))
        assert_static(kt, g)
        assert k_order_violations(kt) == 0


def test_blocks_deep_deletion_falls_back_and_stays_exact():
    """Deleting most of a clique takes it below its boundary: the static decomposition
    finishes the batch, the block goes (the higher ones stay), and later batches stay
    exact."""
    import cupy
    from hornet.algos import DynamicTruss
    rng = np.random.default_rng(3)
    s, d, _ = _cliques(rng)
    g = _graph(s, d)
    kt = DynamicTruss(g, **MODES["dynamic"])
    gs, gd = (a.get() for a in g.edges())
    small = np.flatnonzero((gs >= 100) & (gs < 126) & (gd >= 100) & (gd < 126))
    pick = rng.choice(small, small.shape[0] * 3 // 4, replace=False)
    gone = cupy.asarray(gs[pick]), cupy.asarray(gd[pick])
    kt.update(g.delete_edges(*gone))
    assert_static(kt, g)
    if kt.stats["path"] == "static":         # (the two higher cliques keep their blocks)
        assert kt._blocks is not None and kt._blocks.nblocks == 2
    kt.update(g.insert_edges(*gone))
    assert_static(kt, g)
    _churn(kt, g, gs, gd, rng, 3, 20)


def test_blocks_new_pair_inside_a_block():
    """Pairs of the largest clique that were no edges: inserted, they are boundary edges of
    its block (the static decomposition finishes the batch where they reach the block's
    levels); the numbers stay exact before and after."""
    import cupy
    from hornet.algos import DynamicTruss
    rng = np.random.default_rng(4)
    s, d, out = _cliques(rng, missing=3)
    g = _graph(s, d)
    kt = DynamicTruss(g, **MODES["dynamic"])
    assert kt._blocks is not None
    u, v = (cupy.asarray([p[i] for p in out[:2]]) for i in (0, 1))
    kt.update(g.insert_edges(u, v))
    assert_static(kt, g)
    kt.update(g.delete_edges(u, v))
    assert_static(kt, g)
    gs, gd = (a.get() for a in g.edges())
    _churn(kt, g, gs, gd, rng, 3, 20)


@pytest.mark.parametrize("name", ["ca-GrQc.txt.gz", "ca-HepTh.txt.gz"])
def test_blocks_real_collaboration_graphs(name):
    from hornet.algos import DynamicTruss
    s, d = real_graph(name)
    g = _graph(s, d)
    kt = DynamicTruss(g, **MODES["dynamic"])
    assert kt._blocks is not None
    rng = np.random.default_rng(5)
    gs, gd = (a.get() for a in g.edges())
    t = kt.truss_numbers.get()
    high = np.flatnonzero(t >= 16)
    _churn(kt, g, gs, gd, rng, 4, 30, focus=high)
