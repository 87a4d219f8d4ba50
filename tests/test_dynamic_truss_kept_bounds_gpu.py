"""GPU DynamicTruss insertions whose candidate rounds (``ko_scan`` mode 4, synchronous: a
graph past ``ASYNC_MAX_EDGES`` or ``ASYNC_CAND = False``) keep an upper bound of every counted
edge's count (``CAND_KEPT_BOUNDS`` in ``hornet.algos.ktruss.dynamic_gpu``, ``ko_bound_due`` in
``dynamic_gpu.cu``): an edge is counted again only when the pushes since its count could
bring it to its level's need. The numbers equal the static decomposition and the k-order
holds after every batch, with and without the bounds, with every phase in rounds or only the
candidate search, and with the asynchronous search (which keeps no bounds); on a dense random
graph (many candidates beside each edge, triangles completed by two new candidates in one
round), a Kronecker graph with hub bit rows, and batches of uniform random pairs that raise
k_max."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import HAS_GPU

import hornet
from hornet.algos.ktruss.dynamic import DynamicTruss
from hornet.generators import kronecker_edges

from truss_checks import (MODES, arr, assert_static, churn_checked, k_order_violations,
                          static_numbers_equal, undirected_graph)

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]

#: (kept candidate bounds, asynchronous phases: "all", "none" (every phase in rounds, as on a
#: large graph) or "no-cand" (the candidate search in rounds))
SETTINGS = [(True, "none"), (True, "no-cand"), (False, "none"), (False, "no-cand"),
            (True, "all")]


def _setting(monkeypatch, setting) -> None:
    from hornet.algos.ktruss import dynamic_gpu
    kept, phases = setting
    monkeypatch.setattr(dynamic_gpu, "CAND_KEPT_BOUNDS", kept)
    if phases == "none":
        monkeypatch.setattr(dynamic_gpu, "ASYNC_MAX_EDGES", 0)
    elif phases == "no-cand":
        monkeypatch.setattr(dynamic_gpu, "ASYNC_CAND", False)


@pytest.mark.parametrize("setting", SETTINGS)
def test_dense_random_graph(setting, monkeypatch):
    """70 vertices, 80% of the pairs: re-insertions of up to 200 edges raise many edges
    several levels, with many candidates beside every edge."""
    _setting(monkeypatch, setting)
    rng = np.random.default_rng(17)
    n = 70
    iu = np.triu_indices(n, 1)
    keep = rng.random(iu[0].shape[0]) < 0.8
    s, d = iu[0][keep].tolist(), iu[1][keep].tolist()
    kt = churn_checked(undirected_graph("gpu", s, d), s, d, rng, steps=5, most=200)
    assert static_numbers_equal(kt)


@pytest.mark.parametrize("setting", SETTINGS)
def test_kronecker_with_hub_rows(setting, monkeypatch):
    """Kronecker scale 9 (hub bit rows forced on): re-insertions of up to 300 edges, many
    of them hub edges."""
    import cupy
    from hornet.algos.ktruss import hub_bits
    _setting(monkeypatch, setting)
    monkeypatch.setattr(hub_bits, "MIN_EDGES", 0)
    monkeypatch.setattr(hub_bits, "MIN_DEGREE", 64)
    ks, kd = kronecker_edges(9, edge_factor=16, seed=7)
    g = hornet.Graph.from_edges(cupy.asarray(ks), cupy.asarray(kd), device="gpu")
    s, d = (a.get() for a in g.edges())
    up = s < d
    kt = churn_checked(g, s[up], d[up], np.random.default_rng(4), steps=4, most=300, order=False)
    assert static_numbers_equal(kt)


@pytest.mark.parametrize("setting", SETTINGS)
def test_uniform_insertions_raise_kmax(setting, monkeypatch):
    """A sparse random graph grown by batches of uniform random pairs until it is dense:
    every level rises, k_max with it, each batch checked."""
    _setting(monkeypatch, setting)
    rng = np.random.default_rng(23)
    n = 60
    s = rng.integers(0, n, 150)
    d = rng.integers(0, n, 150)
    ok = s != d
    g = undirected_graph("gpu", s[ok], d[ok])
    kt = DynamicTruss(g, **MODES["dynamic"])
    assert_static(kt, g)
    k0 = kt.k_max
    for _ in range(8):
        bs, bd = rng.integers(0, n, 120), rng.integers(0, n, 120)
        ok = bs != bd
        kt.update(g.insert_edges(arr("gpu", bs[ok]), arr("gpu", bd[ok])))
        assert kt.stats["path"] == "dynamic"
        assert_static(kt, g)
        assert k_order_violations(kt) == 0
    assert kt.k_max > k0
