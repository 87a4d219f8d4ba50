"""DynamicTruss insertions whose k-order scan runs every level at once (GPU: ``ko_scan`` mode
4, ``LEVELS_AT_ONCE``), and the level-by-level scan beside it: cliques of twelve sizes
(consecutive ones sharing two vertices, so an edge lies in two of them) lose a few edges each
and get them back in one batch, so the seeds lie on many levels and edges rise from one level
into the next. After every batch the numbers equal the static decomposition, the k-order
invariant holds without ties, and (at once) the scan takes fewer iterations than there are
levels with seeds. The CPU version runs the same batches with its own checks."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.algos.ktruss.dynamic import DynamicTruss

from truss_checks import MODES, arr, assert_static, clique, k_order_violations
from test_dynamic_truss_lower_start import _ties

SIZES = list(range(5, 17))


def _use(device, at_once, monkeypatch) -> None:
    if device == "cpu" and not at_once:
        pytest.skip("the GPU version's level-by-level scan")
    if device == "gpu":
        from hornet.algos.ktruss import dynamic_gpu
        monkeypatch.setattr(dynamic_gpu, "INSERT_BY_RAISE", False)
        monkeypatch.setattr(dynamic_gpu, "START_AT_LOWER_BOUND", True)
        monkeypatch.setattr(dynamic_gpu, "DEVICE_SCAN_INSERT", True)
        monkeypatch.setattr(dynamic_gpu, "LEVELS_AT_ONCE", at_once)


def _check(kt, g) -> None:
    assert_static(kt, g)
    assert k_order_violations(kt) == 0
    assert _ties(kt) == 0


@pytest.mark.parametrize("at_once", [True, False])
def test_cliques_of_many_sizes_put_back(device, at_once, monkeypatch):
    _use(device, at_once, monkeypatch)
    rng = np.random.default_rng(4)
    groups, start = [], 0
    for size in SIZES:
        groups.append(list(range(start, start + size)))
        start += size - 2                                 # (two vertices shared)
    n = start + 40
    edges = [clique(grp) for grp in groups]
    g = hornet.Graph(directed=False, device=device)
    for s, d in edges:
        g.insert_edges(arr(device, s), arr(device, d))
    g.insert_edges(arr(device, rng.integers(0, n, 300)), arr(device, rng.integers(0, n, 300)))
    kt = DynamicTruss(g, **MODES["dynamic"])
    _check(kt, g)
    for step in range(4):
        du, dv = [], []
        for s, d in edges:
            for i in rng.choice(len(s), int(rng.integers(1, 4)), replace=False):
                du.append(s[i])
                dv.append(d[i])
        kt.update(g.delete_edges(arr(device, du), arr(device, dv)))
        _check(kt, g)
        kt.update(g.insert_edges(arr(device, du), arr(device, dv)))
        assert kt.stats["path"] == "dynamic"
        _check(kt, g)
        if device == "gpu" and at_once:
            assert kt.stats["levels"] < len(SIZES)
    # a K18 on random clique vertices: k_max rises, new edges share triangles with each other
    s, d = clique(sorted(rng.choice(start, 18, replace=False).tolist()))
    kt.update(g.insert_edges(arr(device, s), arr(device, d)))
    assert kt.stats["path"] == "dynamic"
    _check(kt, g)
    assert kt.k_max >= 18
