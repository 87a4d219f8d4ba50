"""GPU DynamicTruss updates in host-driven rounds whose descent and peelings keep a count per
edge (``DESCENT_KEPT_COUNTS`` in ``hornet.algos.ktruss.dynamic_gpu_rounds``, ``DtKept`` in
``ko_descent.cuh``; ``PEEL_KEPT_COUNTS`` there too, ``KoKept`` in ``ko_peel.cuh``): an edge
is counted again only when the triangles that a neighbour's fall or peel took leave it short. The numbers equal the static decomposition and the k-order holds after every
batch (deletions and the insertions' level scan, whose peelings leave survivors), with exact
counts (slack -1), counts that stop at the need (slack 0: every loss counts the edge again)
or a little past it, and without counts; on a Kronecker graph with hub bit rows (hub edges keep their levels while many
neighbours fall), a dense random graph (long lists, many triangles lost twice in a round)
and the triangular torus lattice (a descent one ring a round)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import HAS_GPU

import hornet
from hornet.generators import kronecker_edges

from truss_checks import churn_checked, static_numbers_equal, undirected_graph

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]

#: (descent keeps counts, its slack, peelings keep counts, their slack)
SETTINGS = [(True, -1, True, -1), (True, 0, True, 0), (True, 3, True, 2), (False, 0, False, 0),
            (True, -1, False, 0), (False, 0, True, -1)]


def _host_rounds(monkeypatch, setting, split_min: int = 1024) -> None:
    """Updates by host-driven rounds with the counts of ``setting`` (see SETTINGS), the
    descent's h-index split by list length from ``split_min`` worklist edges."""
    from hornet.algos.ktruss import dynamic_gpu, dynamic_gpu_rounds
    kept, slack, peel_kept, peel_slack = setting
    monkeypatch.setattr(dynamic_gpu, "DEVICE_SCAN_DELETE", False)
    monkeypatch.setattr(dynamic_gpu, "DEVICE_SCAN_INSERT", False)
    monkeypatch.setattr(dynamic_gpu_rounds, "DESCENT_KEPT_COUNTS", kept)
    monkeypatch.setattr(dynamic_gpu_rounds, "DESCENT_SLACK", slack)
    monkeypatch.setattr(dynamic_gpu_rounds, "PEEL_KEPT_COUNTS", peel_kept)
    monkeypatch.setattr(dynamic_gpu_rounds, "PEEL_SLACK", peel_slack)
    monkeypatch.setattr(dynamic_gpu_rounds, "HINDEX_SPLIT_MIN", split_min)


@pytest.mark.parametrize("setting", SETTINGS)
def test_dense_random_graph(setting, monkeypatch):
    """90 vertices, 85% of the pairs (lists longer than a warp's run, levels around 70):
    deletions of up to 300 edges lower most edges several levels in several rounds."""
    _host_rounds(monkeypatch, setting, split_min=0)
    rng = np.random.default_rng(11)
    n = 90
    iu = np.triu_indices(n, 1)
    keep = rng.random(iu[0].shape[0]) < 0.85
    s, d = iu[0][keep].tolist(), iu[1][keep].tolist()
    kt = churn_checked(undirected_graph("gpu", s, d), s, d, rng, steps=5, most=300,
                       check_deletes=True, insert_path=False)
    assert static_numbers_equal(kt)


@pytest.mark.parametrize("setting", SETTINGS)
def test_torus_lattice(setting, monkeypatch):
    """The triangular lattice on a 14 x 12 torus (every edge in two triangles): deleting
    edges drops every edge to level 3, one ring around each hole a round."""
    _host_rounds(monkeypatch, setting)
    w, h = 14, 12
    s, d = [], []
    for y in range(h):
        for x in range(w):
            for dx, dy in ((1, 0), (0, 1), (1, 1)):
                s.append(y * w + x)
                d.append(((y + dy) % h) * w + (x + dx) % w)
    kt = churn_checked(undirected_graph("gpu", s, d), s, d,
                       np.random.default_rng(3), steps=4, most=3,
                       check_deletes=True, insert_path=False)
    assert static_numbers_equal(kt)


@pytest.mark.parametrize("setting", SETTINGS)
def test_kronecker_with_hub_rows(setting, monkeypatch):
    """Kronecker scale 9 (hub bit rows forced on, the edge gate lowered): deletions of up to
    300 edges, many of them hub edges, whose descents take hundreds of edges a round."""
    import cupy
    from hornet.algos.ktruss import hub_bits
    _host_rounds(monkeypatch, setting)
    monkeypatch.setattr(hub_bits, "MIN_EDGES", 0)
    monkeypatch.setattr(hub_bits, "MIN_DEGREE", 64)
    ks, kd = kronecker_edges(9, edge_factor=16, seed=5)
    g = hornet.Graph.from_edges(cupy.asarray(ks), cupy.asarray(kd), device="gpu")
    s, d = (a.get() for a in g.edges())
    up = s < d
    kt = churn_checked(g, s[up], d[up], np.random.default_rng(9), steps=4, most=300, order=False,
                       check_deletes=True, insert_path=False)
    assert static_numbers_equal(kt)
