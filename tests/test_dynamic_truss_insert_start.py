"""DynamicTruss (CPU): inserted edges start the k-order scan at a lower bound of their new
number (hornet.algos.ktruss.dynamic.DynamicTruss._place_new_edges), and the triangle lists
of the region kernels come from vertex marks (hornet.algos.ktruss.region._intersect_marked).
After every batch the numbers equal the static decomposition of the same graph state, the
k-order holds and is a total order, and the kept level counts are lower bounds (brute force,
truss_checks).
"""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.algos.ktruss import region
from hornet.algos.ktruss.dynamic import DynamicTruss

from truss_checks import MODES, assert_static, clique, k_order_ties, k_order_violations
from truss_checks import level_count_violations


def _check(kt, g) -> None:
    assert_static(kt, g)
    assert k_order_violations(kt) == 0
    assert k_order_ties(kt) == 0
    assert level_count_violations(kt) == 0


def test_marked_intersection_equals_the_common_values():
    """Positions found by marks point at the common values of two sorted lists (NumPy's
    intersect1d as the oracle), whichever list is longer, with the marks of earlier calls
    still in the array."""
    rng = np.random.default_rng(0)
    mark = np.zeros(2001, np.int64)
    for _ in range(200):
        a = np.unique(rng.integers(0, 2000, rng.integers(0, 300))).astype(np.int32)
        b = np.unique(rng.integers(0, 2000, rng.integers(0, 300))).astype(np.int32)
        room = max(1, min(a.shape[0], b.shape[0]))
        pa = np.empty(room, np.int64)
        pb = np.empty(room, np.int64)
        n = region._intersect_marked(a, a.shape[0], b, b.shape[0], pa, pb, mark)
        assert np.array_equal(a[pa[:n]], b[pb[:n]])
        assert np.array_equal(np.sort(a[pa[:n]]), np.intersect1d(a, b))


def _overlapping_cliques(rng):
    """K12 on 0..11, K10 on 8..17 and K9 on 15..23 (overlapping: the cliques of a
    collaboration graph), bridge edges between them (numbers a level or two apart) and a
    sparse random graph on 200 more vertices attached to them."""
    parts = [clique(range(12)), clique(range(8, 18)), clique(range(15, 24))]
    src = [u for s, _ in parts for u in s]
    dst = [v for _, d in parts for v in d]
    src += [0, 1, 2, 3, 4, 5] + rng.integers(24, 224, 400).tolist() + rng.integers(0, 24, 80).tolist()
    dst += [12, 13, 14, 16, 17, 18] + rng.integers(24, 224, 400).tolist() + rng.integers(24, 224, 80).tolist()
    g = hornet.Graph(directed=False, device="cpu")
    g.insert_edges(np.asarray(src), np.asarray(dst))
    return g


@pytest.mark.parametrize("seed", [0, 1])
def test_reinserted_clique_edges_start_above_level_2(seed):
    """Deleting clique and bridge edges of overlapping cliques lowers whole cliques; putting
    them back starts most of them at their lower bound (above level 2: ``stats["placed"]``)
    and raises the cliques again, through the region algorithms every time."""
    rng = np.random.default_rng(seed)
    g = _overlapping_cliques(rng)
    kt = DynamicTruss(g, **MODES["dynamic"])
    _check(kt, g)
    placed = 0
    for step in range(6):
        gs, gd = g.edges()
        keep = (gs < gd) & (gd < 24)                   # clique and bridge edges
        cand = np.flatnonzero(keep)
        pick = rng.choice(cand, int(rng.integers(1, 12)), replace=False)
        s, d = gs[pick], gd[pick]
        kt.update(g.delete_edges(s, d))
        assert kt.stats["path"] == "dynamic"
        _check(kt, g)
        kt.update(g.insert_edges(s, d))
        assert kt.stats["path"] == "dynamic"
        placed += kt.stats["placed"]
        _check(kt, g)
    assert placed > 0


@pytest.mark.parametrize("directed", [False, True])
def test_small_random_batches_keep_a_total_k_order(directed):
    """Random insertions, deletions and re-insertions on small graphs (dense enough that new
    edges start above level 2 and share triangles with each other): the numbers equal the
    static decomposition and the k-order holds, without ties, after every batch."""
    placed = 0
    for seed in range(24):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(6, 16))
        g = hornet.Graph(directed=directed, device="cpu")
        kt = DynamicTruss(g, **MODES["dynamic"])
        gone = None
        for step in range(12):
            b = int(rng.integers(1, 25))
            if step % 3 == 0 or g.num_edges == 0:
                s, d = rng.integers(0, n, b), rng.integers(0, n, b)
                change = g.insert_edges(s[s != d], d[s != d])     # self-loops: other tests
            elif step % 3 == 1:
                gs, gd = g.edges()
                pick = rng.choice(gs.shape[0], min(b, gs.shape[0]), replace=False)
                gone = gs[pick], gd[pick]
                change = g.delete_edges(*gone)
            else:
                change = g.insert_edges(*gone)
            kt.update(change)
            placed += kt.stats.get("placed", 0)
            assert_static(kt, g)
            assert k_order_violations(kt) == 0, (seed, step)
            assert k_order_ties(kt) == 0, (seed, step)
    assert placed > 0
