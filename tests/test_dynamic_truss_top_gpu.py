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


@pytest.mark.parametrize("device_delete", [True, False])
@pytest.mark.parametrize("min_edges", [64, 600])
@pytest.mark.parametrize("seed", [0, 1])
def test_kronecker_top_levels_delete_and_reinsert(seed, min_edges, device_delete, monkeypatch):
    import cupy as cp
    from hornet.algos import DynamicTruss
    from hornet.algos.ktruss import dynamic_gpu
    _gate(monkeypatch, min_edges)
    monkeypatch.setattr(dynamic_gpu, "DEVICE_SCAN_DELETE", device_delete)
    rng = np.random.default_rng(seed)
    g = _kronecker(9, seed)
    kt = DynamicTruss(g, **MODES["dynamic"])
    cap = kt._top
    assert 3 <= cap <= kt.k_max
    truss = kt.truss_numbers.get()
    assert int((truss >= cap).sum()) >= min_edges
    if min_edges > 64:
        assert cap < kt.k_max                      # (several levels above the cap)
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
