"""GPU DynamicTruss insertions by the scan by windows of the k-order (``ko_wscan``,
``hornet.algos.ktruss.dynamic_gpu_window``; its graph-size gate lowered to 0 so that it runs
on small graphs): candidates peeled before every window without the triangles of the edges
the scan passed, peeled ones ranked at the end of the window before.

After every batch the numbers equal the static decomposition, and the k-order holds with no
ties (brute force), with and without the kept expiries and bounds, windows of one round or
more; on cliques chained by shared edges (one flat level), the triangular torus lattice,
small Kronecker graphs (re-insertions, uniform new pairs, pairs among the core's vertices that
raise several levels, the top levels kept by their own decomposition) and a counter of window
ranks that runs out."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import HAS_GPU

from truss_checks import MODES, arr, assert_static, churn_checked, static_numbers_equal, \
    undirected_graph
from test_dynamic_truss_flat_gpu import _clique_chain, _torus
from test_dynamic_truss_lower_start import _ties
from test_dynamic_truss_top_gpu import _check, _kronecker

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]


def _windows(monkeypatch, keep: bool = True, shift: int = 0, bounds: bool = True) -> None:
    from hornet.algos.ktruss import dynamic_gpu_window as W
    monkeypatch.setattr(W, "WINDOW_MIN_EDGES", 0)
    monkeypatch.setattr(W, "WINDOW_KEEP_EXPIRY", keep)
    monkeypatch.setattr(W, "WINDOW_SHIFT", shift)
    monkeypatch.setattr(W, "WINDOW_KEPT_BOUNDS", bounds)


@pytest.mark.parametrize("keep", [True, False])
def test_clique_chain(keep, monkeypatch):
    """30 cliques of 10 vertices chained by shared edges (one level): re-insertions whose
    candidates would spread through the level."""
    _windows(monkeypatch, keep)
    s, d = _clique_chain(30, 10)
    kt = churn_checked(undirected_graph("gpu", s, d), s, d,
                       np.random.default_rng(2), steps=5, most=40)
    assert kt.stats.get("scan") == "windows"
    assert _ties(kt) == 0
    assert static_numbers_equal(kt)


@pytest.mark.parametrize("keep", [True, False])
def test_torus_lattice(keep, monkeypatch):
    """The triangular lattice on a 20 x 16 torus: one level, every edge in two triangles."""
    _windows(monkeypatch, keep)
    s, d = _torus(20, 16)
    kt = churn_checked(undirected_graph("gpu", s, d), s, d,
                       np.random.default_rng(8), steps=4, most=6)
    assert _ties(kt) == 0
    assert static_numbers_equal(kt)


@pytest.mark.parametrize("keep,seed,shift,bounds", [(True, 3, 0, True), (False, 3, 0, True),
                                                    (True, 5, 0, False), (True, 5, 2, True)])
def test_kronecker_reinsert(keep, seed, shift, bounds, monkeypatch):
    """Kronecker scale 10: deletions and re-insertions of up to 400 edges (windows of one
    round or of four, with and without kept candidate bounds); the scan passed more than one
    window in some re-insertion."""
    _windows(monkeypatch, keep, shift, bounds)
    g = _kronecker(10, seed)
    s, d = (a.get() for a in g.edges())
    up = s < d
    from hornet.algos.ktruss.dynamic import DynamicTruss
    kt = DynamicTruss(g, **MODES["dynamic"])
    rng = np.random.default_rng(seed)
    windows = 0
    for _ in range(4):
        pick = rng.choice(int(up.sum()), int(rng.integers(1, 401)), replace=False)
        gone = (arr("gpu", s[up][pick]), arr("gpu", d[up][pick]))
        kt.update(g.delete_edges(*gone))
        assert_static(kt, g)
        kt.update(g.insert_edges(*gone))
        assert kt.stats["path"] == "dynamic" and kt.stats["scan"] == "windows"
        windows = max(windows, kt.stats["windows"])
        _check(kt, g)
    assert windows > 1


@pytest.mark.parametrize("seed", [0, 1])
def test_kronecker_new_pairs(seed, monkeypatch):
    """New pairs: uniform ones, and pairs among the vertices of the highest levels (numbers
    rise by several levels, over more than one iteration); deleted again after."""
    import cupy as cp
    _windows(monkeypatch)
    g = _kronecker(9, seed)
    from hornet.algos.ktruss.dynamic import DynamicTruss
    kt = DynamicTruss(g, **MODES["dynamic"])
    rng = np.random.default_rng(seed)
    nv = int(g.num_vertices)
    levels = 0
    for step in range(4):
        t = kt.truss_numbers.get()
        gs, gd = (a.get() for a in g.edges())
        if step % 2:
            top = np.flatnonzero(t >= np.percentile(t, 90))
            core = np.unique(np.concatenate([gs[top], gd[top]]))
            a, b = rng.choice(core, 60), rng.choice(core, 60)
        else:
            a, b = rng.integers(0, nv, 60), rng.integers(0, nv, 60)
        keep = a != b
        ch = g.insert_edges(cp.asarray(a[keep]), cp.asarray(b[keep]))
        kt.update(ch)
        assert kt.stats["path"] == "dynamic"
        levels = max(levels, kt.stats.get("levels") or 0)
        _check(kt, g)
        kt.update(g.delete_edges(ch.src, ch.dst))
        _check(kt, g)
    assert levels > 1


def test_kronecker_top_levels(monkeypatch):
    """The top levels kept by their own decomposition (gate lowered): the scan by windows
    stops below them, and they are decomposed when an edge joined them."""
    import cupy as cp
    from hornet.algos import truss_numbers
    from hornet.algos.ktruss import top_levels_gpu
    from hornet.algos.ktruss.dynamic import DynamicTruss
    _windows(monkeypatch)
    g = _kronecker(9, 0)
    t0 = truss_numbers(g).get()
    monkeypatch.setattr(top_levels_gpu, "TOP_MIN_EDGES", int((t0 == t0.max()).sum()) + 1)
    monkeypatch.setattr(top_levels_gpu, "TOP_MIN_LEVEL", 3)
    kt = DynamicTruss(g, **MODES["dynamic"])
    assert 3 <= kt._top < kt.k_max
    rng = np.random.default_rng(7)
    for _ in range(4):
        gs, gd = (a.get() for a in g.edges())
        pick = rng.choice(gs.shape[0], int(rng.integers(5, 80)), replace=False)
        s, d = cp.asarray(gs[pick]), cp.asarray(gd[pick])
        kt.update(g.delete_edges(s, d))
        _check(kt, g)
        kt.update(g.insert_edges(s, d))
        assert kt.stats["path"] == "dynamic" and kt.stats["scan"] == "windows"
        _check(kt, g)


@pytest.mark.parametrize("counter", ["drops", "head"])
def test_window_ranks_run_out(counter, monkeypatch):
    """Once the ranks given out at the ends of windows reach WINDOW_DROP_LIMIT, or the
    start of a level reaches HEAD_LIMIT, the next insertion makes the ranks anew by the
    static decomposition (the counters start over) and the one after is dynamic again; the
    numbers and the k-order stay exact."""
    from hornet.algos.ktruss import dynamic_gpu_window as W
    from hornet.algos.ktruss.dynamic import DynamicTruss
    _windows(monkeypatch)
    s, d = _clique_chain(20, 9)
    g = undirected_graph("gpu", s, d)
    kt = DynamicTruss(g, **MODES["dynamic"])
    rng = np.random.default_rng(3)
    for step in range(4):
        pick = rng.choice(len(s), 12, replace=False)
        gone = (arr("gpu", np.asarray(s)[pick]), arr("gpu", np.asarray(d)[pick]))
        kt.update(g.delete_edges(*gone))
        _check(kt, g)
        due = step % 2 == 1
        if due and counter == "drops":
            kt._wdrop = W.WINDOW_DROP_LIMIT
        elif due:
            kt._head = W.HEAD_LIMIT - 1
        kt.update(g.insert_edges(*gone))
        assert kt.stats["path"] == ("static" if due else "dynamic")
        if due:
            assert kt._wdrop == 0 and kt._head == -(1 << 31) - 1
        _check(kt, g)
