"""DynamicTruss on a real graph (ca-GrQc, 14k edges, a 44-clique), equal to the static
functions on the same graph state after every batch (CPU and GPU)."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.algos import max_truss
from hornet.algos.ktruss import region
from hornet.algos.ktruss.dynamic import DynamicTruss
from hornet.testing import to_host

from truss_checks import MODES, arr as _arr, assert_static as _assert_static
from truss_checks import real_graph as _real_graph


def test_dynamic_path_is_taken():
    """CPU, default thresholds: small batches on a real graph much larger than them go
    through the region algorithms, never the static fallback (even deletions inside its
    44-clique, which lower the numbers of all its edges), and equal the static result."""
    s, d = _real_graph("ca-GrQc.txt.gz")
    rng = np.random.default_rng(11)
    g = hornet.Graph.from_edges(np.asarray(s), np.asarray(d), device="cpu")
    n = g.num_vertices
    kt = DynamicTruss(g)
    paths = []
    for step in range(12):
        if step % 2 == 0:
            change = g.insert_edges(np.asarray(rng.integers(0, n, 5)),
                                    np.asarray(rng.integers(0, n, 5)))
        else:
            gs, gd = g.edges()
            pick = np.asarray(rng.integers(0, len(to_host(gs)), 5))
            change = g.delete_edges(gs[pick], gd[pick])
        kt.update(change)
        paths.append(kt.stats["path"])
        _assert_static(kt, g)
    assert paths.count("dynamic") == 12, paths


@pytest.mark.parallel_kernels
@pytest.mark.parametrize("mode", ["dynamic", "default"])
def test_real_graph_batches(device, mode, monkeypatch):
    """ca-GrQc: random insertion and deletion batches (10 to 300 edges), equal to the static
    decomposition after each; then deleting the vertices of the max truss lowers k_max.
    On the CPU the support kernels run in parts from 64 batch edges here (the batches of 10
    on one thread)."""
    for kernel in (region.insertion_supports, region.deletion_supports):
        monkeypatch.setattr(kernel, "threshold", 64)
    s, d = _real_graph("ca-GrQc.txt.gz")
    rng = np.random.default_rng(5)
    g = hornet.Graph.from_edges(_arr(device, s), _arr(device, d), device=device)
    kw = MODES[mode]
    kt = DynamicTruss(g, **kw)
    _assert_static(kt, g)
    n = g.num_vertices
    for size in (10, 100, 300):
        gs, gd = g.edges()
        # new edges inside dense neighbourhoods: endpoints of existing edges, rewired
        a = rng.integers(0, len(to_host(gs)), size)
        b = rng.integers(0, len(to_host(gs)), size)
        kt.update(g.insert_edges(gs[_arr(device, a)], gd[_arr(device, b)]))
        _assert_static(kt, g)
        kt.update(g.insert_edges(_arr(device, rng.integers(0, n, size)),
                                 _arr(device, rng.integers(0, n, size))))
        _assert_static(kt, g)
        gs, gd = g.edges()
        pick = _arr(device, rng.integers(0, len(to_host(gs)), size))
        kt.update(g.delete_edges(gs[pick], gd[pick]))
        _assert_static(kt, g)
    k_before = kt.k_max
    _, ts, td = max_truss(g)
    kt.update(g.delete_vertices(_arr(device, np.unique(to_host(ts))[:3])))
    _assert_static(kt, g)
    assert kt.k_max <= k_before
