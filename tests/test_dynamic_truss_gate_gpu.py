"""GPU DynamicTruss's seed gate: a batch of at least GATE_MIN_BATCH edges counts its seeds
first and goes to the static decomposition at once when they pass their share of the edges
(deletions: the descent's worklist, host-driven or in ko_scan; insertions: the scan's
seeds), else takes the dynamic path. Either way the numbers equal the static decomposition
after every batch."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import HAS_GPU

import hornet
from hornet.generators import kronecker_edges

from truss_checks import MODES, assert_static, k_order_violations

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]


@pytest.mark.parametrize("device_scan", [False, True])
@pytest.mark.parametrize("share,path", [(0.0, "static"), (1e9, "dynamic")])
def test_seed_gate(share, path, device_scan, monkeypatch):
    import cupy as cp
    from hornet.algos import DynamicTruss
    from hornet.algos.ktruss import dynamic_gpu
    monkeypatch.setattr(dynamic_gpu, "GATE_MIN_BATCH", 16)
    monkeypatch.setattr(dynamic_gpu, "DELETE_SEED_SHARE", share)
    monkeypatch.setattr(dynamic_gpu, "DELETE_SEED_SHARE_DEVICE", share)
    monkeypatch.setattr(dynamic_gpu, "INSERT_SEED_SHARE", share)
    # (the deletion's descent by host-driven rounds or in ko_scan: both are gated)
    monkeypatch.setattr(dynamic_gpu, "DEVICE_SCAN_DELETE", device_scan)
    s, d = kronecker_edges(9, edge_factor=16, seed=2)
    g = hornet.Graph.from_edges(cp.asarray(s), cp.asarray(d), device="gpu")
    kt = DynamicTruss(g, **MODES["dynamic"])
    rng = np.random.default_rng(2)
    for b in (8, 40):                              # (below the gate's batch size, and above)
        gs, gd = (a.get() for a in g.edges())
        pick = rng.choice(gs.shape[0], b, replace=False)
        bs, bd = cp.asarray(gs[pick]), cp.asarray(gd[pick])
        for op in (g.delete_edges, g.insert_edges):
            kt.update(op(bs, bd))
            want = path if b >= 16 else "dynamic"
            assert kt.stats["path"] == want
            assert ("gate" in kt.stats) == (want == "static")
            assert_static(kt, g)
            assert k_order_violations(kt) == 0
