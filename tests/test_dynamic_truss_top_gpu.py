"""GPU DynamicTruss with its top levels kept by a static decomposition of their own subgraph
(hornet.algos.ktruss.top_levels_gpu): the insertion's scan stops below the cap level and the
levels from it up are decomposed whole; a deletion of one of their edges decomposes them anew
and hands the edges that fell from them to the descent.

Kronecker graphs (a dense core over hub vertices) with the gate lowered so that the cap lies
at the top level or a few levels below it; random edges and edges among the core's vertices
deleted and put back, and new pairs among them inserted, through the region algorithms every
time, with both deletion drivers (one cooperative launch, host rounds). After every batch the
numbers equal the static decomposition and the k-order holds with no ties (brute force)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import HAS_GPU

import hornet
from hornet.generators import kronecker_edges

from truss_checks import MODES, assert_static, k_order_violations
from test_dynamic_truss_lower_start import _ties

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]


def _kronecker(scale, seed):
    import cupy
    s, d = kronecker_edges(scale, edge_factor=16, seed=seed)
    return hornet.Graph.from_edges(cupy.asarray(s), cupy.asarray(d), device="gpu")


def _check(kt, g) -> None:
    assert_static(kt, g)
    assert k_order_violations(kt) == 0
    assert _ties(kt) == 0


def _gate(monkeypatch, min_edges: int) -> None:
    from hornet.algos.ktruss import top_levels_gpu
    monkeypatch.setattr(top_levels_gpu, "TOP_MIN_EDGES", min_edges)
    monkeypatch.setattr(top_levels_gpu, "TOP_MIN_LEVEL", 3)


# (seed, the cap at the top level or below it, deletions in one cooperative launch or host
# rounds, the top levels peeled on bit rows or by the general static, a deletion's top edges
# lowered by the descent instead of a decomposition)
CASES = [(0, "top", True, True, False), (0, "below", False, True, False),
         (1, "top", False, False, False), (1, "below", True, False, False),
         (0, "top", True, True, True), (1, "below", False, False, True)]


@pytest.mark.parametrize("seed,where,device_delete,dense,by_descent", CASES)
def test_kronecker_top_levels_delete_and_reinsert(seed, where, device_delete, dense,
                                                  by_descent, monkeypatch):
    import cupy as cp
    from hornet.algos import DynamicTruss, truss_numbers
    from hornet.algos.ktruss import dynamic_gpu, top_levels_gpu
    g = _kronecker(9, seed)
    t0 = truss_numbers(g).get()
    # (the gate's size: the top level's edges, or one more, which puts the cap below it)
    min_edges = int((t0 == t0.max()).sum()) + (where == "below")
    _gate(monkeypatch, min_edges)
    monkeypatch.setattr(dynamic_gpu, "DEVICE_SCAN_DELETE", device_delete)
    monkeypatch.setattr(dynamic_gpu, "TOP_DELETE_BY_DESCENT", by_descent)
    monkeypatch.setattr(top_levels_gpu, "DENSE_MAX_LEVELS", 1 << 30)
    if not dense:
        monkeypatch.setattr(top_levels_gpu, "DENSE_MAX_VERTICES", 0)
    rng = np.random.default_rng(seed)
    kt = DynamicTruss(g, **MODES["dynamic"])
    cap = kt._top
    assert 3 <= cap <= kt.k_max
    assert (cap < kt.k_max) == (where == "below")
    truss = kt.truss_numbers.get()
    assert top_levels_gpu.top_count(kt._table, cap) == kt._top_n == int((truss >= cap).sum())
    gs, gd = (a.get() for a in g.edges())
    top = np.flatnonzero(truss >= cap)
    core = np.unique(np.concatenate([gs[top], gd[top]]))
    tops = {"delete": 0, "re-insert": 0}
    for step in range(6):
        gs, gd = (a.get() for a in g.edges())
        truss = kt.truss_numbers.get()
        if step % 2:                               # edges of the top levels and others
            at = np.flatnonzero(truss >= cap)
            pick = np.concatenate([rng.choice(at, min(at.shape[0], 12), replace=False),
                                   rng.choice(gs.shape[0], 8, replace=False)])
            pick = np.unique(pick)
        else:
            pick = rng.choice(gs.shape[0], int(rng.integers(5, 60)), replace=False)
        s, d = cp.asarray(gs[pick]), cp.asarray(gd[pick])
        for kind, op in (("delete", g.delete_edges), ("re-insert", g.insert_edges)):
            kt.update(op(s, d))
            assert kt.stats["path"] == "dynamic"
            tops[kind] += "top" in kt.stats
            _check(kt, g)
            assert kt._top_n == int((kt.truss_numbers.get() >= cap).sum())
    # new pairs among the core's vertices: the top levels grow
    a, b = rng.choice(core, 80), rng.choice(core, 80)
    keep = a != b
    kt.update(g.insert_edges(cp.asarray(a[keep]), cp.asarray(b[keep])))
    assert kt.stats["path"] == "dynamic"
    _check(kt, g)
    assert tops["delete"] >= 3 and tops["re-insert"] >= 3


def test_cap_is_the_highest_level_with_enough_edges_above(monkeypatch):
    import cupy as cp
    from hornet.algos.ktruss import top_levels_gpu as T
    monkeypatch.setattr(T, "TOP_MIN_EDGES", 10)
    monkeypatch.setattr(T, "TOP_MIN_LEVEL", 4)
    t = cp.asarray(np.array([2] * 30 + [5] * 6 + [7] * 3 + [9] * 1, dtype=np.int32))
    assert T.top_cap(t) == 5                       # 10 edges at 5 or above, 4 at 7 or above
    monkeypatch.setattr(T, "TOP_MIN_LEVEL", 6)
    assert T.top_cap(t) == 0                       # (5 is below the lowest level allowed)
    monkeypatch.setattr(T, "TOP_MIN_LEVEL", 4)
    monkeypatch.setattr(T, "TOP_MIN_EDGES", 41)
    assert T.top_cap(t) == 0                       # (fewer edges than the gate)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bit_row_peeling_against_the_static(seed):
    """dense_decompose (bit rows) on random graphs with planted cliques: the numbers equal
    the static decomposition's, and ordering the edges by (number, round, index), every
    edge lies in at most number - 2 triangles whose other edges come later (brute force)."""
    import cupy as cp
    from hornet.algos import truss_numbers
    from hornet.algos.ktruss.top_levels_gpu import dense_decompose
    rng = np.random.default_rng(seed)
    n = [70, 130, 200][seed]
    pairs_ = {(int(a), int(b)) for a, b in rng.integers(0, n, (6 * n, 2)) if a != b}
    for size in (6, 9, 14):
        vs = rng.choice(n, size, replace=False)
        pairs_ |= {(int(a), int(b)) for a in vs for b in vs if a != b}
    e = np.array(sorted({(min(a, b), max(a, b)) for a, b in pairs_}), dtype=np.int32)
    t, rounds = (x.get() for x in dense_decompose(cp.asarray(e[:, 0]), cp.asarray(e[:, 1]), n))
    g = hornet.Graph.from_edges(cp.asarray(e[:, 0]), cp.asarray(e[:, 1]), device="gpu")
    gs, gd = (x.get() for x in g.edges())
    want = dict(zip(zip(gs.tolist(), gd.tolist()), truss_numbers(g).get().tolist()))
    assert t.tolist() == [want[(int(a), int(b))] for a, b in e]
    assert t.max() >= 14
    key = {(int(a), int(b)): (int(t[i]), int(rounds[i]), i) for i, (a, b) in enumerate(e)}
    adj = {}
    for a, b in key:
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)
    for (a, b), mine in key.items():
        later = sum(1 for w in adj[a] & adj[b]
                    if key[(min(a, w), max(a, w))] > mine and key[(min(b, w), max(b, w))] > mine)
        assert later <= mine[0] - 2
