"""GPU DynamicTruss insertions into large flat levels (most of a level's edges become candidates
of ``ko_scan`` mode 4 and are peeled back): the synchronous peelings keep the survivors'
counts (``SCAN_PEEL_KEPT`` in ``hornet.algos.ktruss.dynamic_gpu``, ``KoKept`` in
``ko_peel.cuh``), and an insertion whose candidates pass ``CANDIDATE_SHARE`` x
``fallback_share`` of the edges, or whose candidate rounds took over
1 / ``CANDIDATE_TIME_FACTOR`` of its time limit, goes to the static decomposition at once
(the early cuts).
The numbers equal the static decomposition and the k-order holds after every batch, with
exact counts, counts that stop at the need or past it, and without counts; on cliques
chained by shared edges (one level), the triangular torus lattice (one level, every edge in
two triangles) and a small Kronecker graph."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import HAS_GPU

import hornet
from hornet.algos.ktruss.dynamic import DynamicTruss
from hornet.generators import kronecker_edges

from truss_checks import (arr, assert_static, churn_checked, k_order_violations,
                          static_numbers_equal, undirected_graph)

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]

#: (kept peeling counts, their slack: -1 exact, 0 stop at the need)
SETTINGS = [(True, 16), (True, 0), (True, -1), (False, 0)]


def _sync_rounds(monkeypatch, setting) -> None:
    """Every phase of ko_scan in synchronous rounds (as on a graph past ASYNC_MAX_EDGES),
    the peelings' counts as ``setting``."""
    from hornet.algos.ktruss import dynamic_gpu
    kept, slack = setting
    monkeypatch.setattr(dynamic_gpu, "ASYNC_MAX_EDGES", 0)
    monkeypatch.setattr(dynamic_gpu, "SCAN_PEEL_KEPT", kept)
    monkeypatch.setattr(dynamic_gpu, "SCAN_PEEL_SLACK", slack)


def _clique_chain(cliques: int, size: int):
    """``cliques`` cliques of ``size`` vertices, each sharing two vertices (an edge) with the
    next: every edge at level ``size``, one triangle-connected level."""
    pairs = set()
    step = size - 2
    for c in range(cliques):
        vs = range(c * step, c * step + size)
        for a in vs:
            for b in vs:
                if a < b:
                    pairs.add((a, b))
    s, d = zip(*sorted(pairs))
    return list(s), list(d)


def _torus(w: int, h: int):
    s, d = [], []
    for y in range(h):
        for x in range(w):
            for dx, dy in ((1, 0), (0, 1), (1, 1)):
                s.append(y * w + x)
                d.append(((y + dy) % h) * w + (x + dx) % w)
    return s, d


@pytest.mark.parametrize("setting", SETTINGS)
def test_clique_chain(setting, monkeypatch):
    """30 cliques of 10 vertices chained by shared edges: a re-insertion makes candidates
    across the level, most of them peeled back."""
    _sync_rounds(monkeypatch, setting)
    s, d = _clique_chain(30, 10)
    kt = churn_checked(undirected_graph("gpu", s, d), s, d,
                       np.random.default_rng(2), steps=5, most=40)
    assert static_numbers_equal(kt)


@pytest.mark.parametrize("setting", SETTINGS)
def test_torus_lattice(setting, monkeypatch):
    """The triangular lattice on a 20 x 16 torus: one level of 960 edges, each in two
    triangles (peelings one ring a round)."""
    _sync_rounds(monkeypatch, setting)
    s, d = _torus(20, 16)
    kt = churn_checked(undirected_graph("gpu", s, d), s, d,
                       np.random.default_rng(8), steps=4, most=6)
    assert static_numbers_equal(kt)


@pytest.mark.parametrize("setting", SETTINGS)
def test_kronecker(setting, monkeypatch):
    """Kronecker scale 10: re-insertions of up to 400 edges, many into its high levels."""
    import cupy
    _sync_rounds(monkeypatch, setting)
    ks, kd = kronecker_edges(10, edge_factor=16, seed=3)
    g = hornet.Graph.from_edges(cupy.asarray(ks), cupy.asarray(kd), device="gpu")
    s, d = (a.get() for a in g.edges())
    up = s < d
    kt = churn_checked(g, s[up], d[up], np.random.default_rng(6), steps=4, most=400, order=False)
    assert static_numbers_equal(kt)


@pytest.mark.parametrize("sync", [True, False])
def test_candidate_cut(sync, monkeypatch):
    """The early cut (its graph-size gate lowered to 0): a re-insertion whose candidates pass
    the share goes to the static decomposition (``stats['gate'] == 'candidates'``) and its
    numbers equal the static ones, as do the later updates'; with a share no update reaches
    the same re-insertions stay dynamic."""
    from hornet.algos.ktruss import dynamic_gpu
    monkeypatch.setattr(dynamic_gpu, "CANDIDATE_CUT_MIN_EDGES", 0)
    if sync:
        monkeypatch.setattr(dynamic_gpu, "ASYNC_MAX_EDGES", 0)
    s, d = _clique_chain(12, 9)
    rng = np.random.default_rng(4)
    for share, want in ((1e-9, "static"), (1e9, "dynamic")):
        monkeypatch.setattr(dynamic_gpu, "CANDIDATE_SHARE", share)
        g = undirected_graph("gpu", s, d)
        # (no deadline: only the cut may send an update to the static decomposition)
        kt = DynamicTruss(g, fallback_share=1.0, batch_share=1.0)
        kt._static_seconds = 1e9
        cut = 0
        for _ in range(3):
            pick = rng.choice(len(s), 5, replace=False)
            gone = (arr("gpu", np.asarray(s)[pick]), arr("gpu", np.asarray(d)[pick]))
            kt.update(g.delete_edges(*gone))
            assert_static(kt, g)
            kt._static_seconds = 1e9
            kt.update(g.insert_edges(*gone))
            assert kt.stats["path"] == want
            if want == "static":
                assert kt.stats.get("gate") == "candidates"
                cut += 1
            kt._static_seconds = 1e9
            assert_static(kt, g)
        assert k_order_violations(kt) == 0
        assert cut == (3 if want == "static" else 0)


@pytest.mark.parametrize("sync", [True, False])
def test_candidate_time_cut(sync, monkeypatch):
    """The early cut by time (its graph-size gate lowered to 0, the share cut off): with a
    factor that every candidate search passes, each re-insertion goes to the static
    decomposition after its candidate rounds (``stats['gate'] == 'candidate time'``), its
    numbers equal to the static ones; with the factor 0 the same re-insertions stay
    dynamic."""
    from hornet.algos.ktruss import dynamic_gpu
    monkeypatch.setattr(dynamic_gpu, "CANDIDATE_CUT_MIN_EDGES", 0)
    monkeypatch.setattr(dynamic_gpu, "CANDIDATE_SHARE", 1e9)
    if sync:
        monkeypatch.setattr(dynamic_gpu, "ASYNC_MAX_EDGES", 0)
    s, d = _clique_chain(12, 9)
    rng = np.random.default_rng(5)
    for factor, want in ((1 << 30, "static"), (0, "dynamic")):
        monkeypatch.setattr(dynamic_gpu, "CANDIDATE_TIME_FACTOR", factor)
        g = undirected_graph("gpu", s, d)
        kt = DynamicTruss(g, fallback_share=1.0, batch_share=1.0)
        for _ in range(3):
            pick = rng.choice(len(s), 5, replace=False)
            gone = (arr("gpu", np.asarray(s)[pick]), arr("gpu", np.asarray(d)[pick]))
            kt._static_seconds = 1e9
            kt.update(g.delete_edges(*gone))
            assert_static(kt, g)
            # (a time limit of a second: only the projection passes it)
            kt._static_seconds = 0.5
            kt.update(g.insert_edges(*gone))
            assert kt.stats["path"] == want
            assert kt.stats.get("gate") == ("candidate time" if want == "static" else None)
            assert_static(kt, g)
        assert k_order_violations(kt) == 0
