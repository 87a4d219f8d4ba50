"""GPU DynamicTruss with hub bit rows (hornet.algos.ktruss.hub_bits): the kernels test an
element of a shorter list against a hub's list by its bit row. The rows are exact after every
update (brute force against the graph's lists), and the numbers equal the static
decomposition after every batch, with the rows for every vertex of a list of 64 or more, for
a few of them (a memory cap), and with new vertices past the rows' range (searched). Two
objects updated in turn each read their own rows. (Small graphs get rows here: the edge gate
lowered.)"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import HAS_GPU

import hornet
from hornet.generators import kronecker_edges

from truss_checks import MODES, assert_static, k_order_violations

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]


def _kronecker(scale, seed):
    import cupy
    s, d = kronecker_edges(scale, edge_factor=16, seed=seed)
    return hornet.Graph.from_edges(cupy.asarray(s), cupy.asarray(d), device="gpu")


def _rows_exact(kt, g) -> int:
    """How many hub rows differ from their vertex's neighbours in ``g`` (brute force)."""
    hb = kt._hubs
    if hb.rows == 0:
        return 0
    row = hb.row.get()
    bits = hb.bits.get().reshape(hb.rows, hb.words)
    gs, gd = (a.get() for a in g.edges())
    bad = 0
    for x in np.flatnonzero(row >= 0):
        nb = np.unique(np.concatenate([gd[gs == x], gs[gd == x]]))
        nb = nb[nb < 64 * hb.words]
        want = np.zeros(hb.words, dtype=np.uint64)
        np.bitwise_or.at(want, nb >> 6, np.left_shift(np.uint64(1), (nb & 63).astype(np.uint64)))
        bad += int(not np.array_equal(want, bits[row[x]]))
    return bad


@pytest.mark.parametrize("max_rows", [None, 5])
def test_hub_rows_delete_and_reinsert(max_rows, monkeypatch):
    import cupy as cp
    from hornet.algos import DynamicTruss
    from hornet.algos.ktruss import hub_bits
    monkeypatch.setattr(hub_bits, "MIN_DEGREE", 64)
    monkeypatch.setattr(hub_bits, "MIN_EDGES", 0)
    g = _kronecker(9, 3)
    nv = int(g.vertex_table()[0].shape[0])
    if max_rows is not None:
        monkeypatch.setattr(hub_bits, "MAX_BYTES", max_rows * 8 * ((nv + 63) // 64))
    kt = DynamicTruss(g, **MODES["dynamic"])
    deg = g.vertex_table()[0].get()
    hubs = int((deg >= 64).sum())
    assert kt._hubs.rows == (hubs if max_rows is None else max_rows) and hubs > 5
    if max_rows is not None:                       # (the highest degrees)
        got = np.flatnonzero(kt._hubs.row.get() >= 0)
        assert deg[got].min() >= np.sort(deg)[-max_rows]
    rng = np.random.default_rng(max_rows or 0)
    for step in range(4):
        gs, gd = (a.get() for a in g.edges())
        hub = np.flatnonzero(kt._hubs.row.get() >= 0)
        near = np.flatnonzero(np.isin(gs, hub) | np.isin(gd, hub))
        pick = np.unique(np.concatenate([rng.choice(near, 30, replace=False),
                                         rng.choice(gs.shape[0], 20, replace=False)]))
        s, d = cp.asarray(gs[pick]), cp.asarray(gd[pick])
        for op in (g.delete_edges, g.insert_edges):
            kt.update(op(s, d))
            assert kt.stats["path"] == "dynamic"
            assert_static(kt, g)
            assert k_order_violations(kt) == 0
            assert _rows_exact(kt, g) == 0
    # new pairs among the hubs, and to new vertices past the rows' range
    a, b = rng.choice(hub, 40), rng.choice(hub, 40)
    keep = a != b
    kt.update(g.insert_edges(cp.asarray(a[keep]), cp.asarray(b[keep])))
    assert_static(kt, g)
    assert _rows_exact(kt, g) == 0
    # (triangles of a hub and two new vertices: {hub_i, far_i}, {hub_i, far_i-1},
    # {far_i, far_i-1})
    far = np.arange(64 * kt._hubs.words + 3, 64 * kt._hubs.words + 8, dtype=np.int64)
    s = np.concatenate([hub[:5], hub[:5], far])
    d = np.concatenate([far, np.roll(far, 1), np.roll(far, 1)])
    kt.update(g.insert_edges(cp.asarray(s), cp.asarray(d)))
    assert kt.stats["path"] == "dynamic"
    assert_static(kt, g)
    assert k_order_violations(kt) == 0
    kt.update(g.delete_edges(cp.asarray(s[:5]), cp.asarray(d[:5])))
    assert_static(kt, g)
    assert _rows_exact(kt, g) == 0


def test_two_objects_read_their_own_rows(monkeypatch):
    import cupy as cp
    from hornet.algos import DynamicTruss
    from hornet.algos.ktruss import dynamic_gpu, hub_bits
    monkeypatch.setattr(hub_bits, "MIN_DEGREE", 64)
    monkeypatch.setattr(hub_bits, "MIN_EDGES", 0)
    g1, g2 = _kronecker(9, 4), _kronecker(8, 5)
    k1, k2 = DynamicTruss(g1, **MODES["dynamic"]), DynamicTruss(g2, **MODES["dynamic"])
    assert k1._hubs.rows > 0 and k2._hubs.rows > 0
    rng = np.random.default_rng(7)
    monkeypatch.setattr(hub_bits, "MIN_EDGES", 1 << 30)
    monkeypatch.setattr(hub_bits, "SMALL_MIN_DEGREE", 1 << 30)
    g3 = _kronecker(8, 6)
    k3 = DynamicTruss(g3, **MODES["dynamic"])           # (no vertex reaches the degree: no rows)
    assert k3._hubs.rows == 0
    for step in range(3):
        for g, kt in ((g1, k1), (g3, k3), (g2, k2)):
            monkeypatch.setattr(dynamic_gpu, "HUB_BITS", step != 1)   # (rows off in turn)
            gs, gd = (a.get() for a in g.edges())
            pick = rng.choice(gs.shape[0], 40, replace=False)
            s, d = cp.asarray(gs[pick]), cp.asarray(gd[pick])
            for op in (g.delete_edges, g.insert_edges):
                kt.update(op(s, d))
                assert kt.stats["path"] == "dynamic"
                assert_static(kt, g)
                assert _rows_exact(kt, g) == 0


def test_small_graph_rows_by_default():
    """A graph below the edge gate gets a row for every vertex whose list the kernels search
    (degree SMALL_MIN_DEGREE or more) with the default constants, and its updates (deletions
    and re-insertions around the hubs) equal the static decomposition with exact rows."""
    import cupy as cp
    from hornet.algos import DynamicTruss
    from hornet.algos.ktruss import hub_bits
    g = _kronecker(10, 8)
    assert g.num_edges < hub_bits.MIN_EDGES
    kt = DynamicTruss(g, **MODES["dynamic"])
    deg = g.vertex_table()[0].get()
    assert kt._hubs.rows == int((deg >= hub_bits.SMALL_MIN_DEGREE).sum()) > 5
    rng = np.random.default_rng(11)
    hub = np.flatnonzero(kt._hubs.row.get() >= 0)
    for _ in range(4):
        gs, gd = (a.get() for a in g.edges())
        near = np.flatnonzero(np.isin(gs, hub) & np.isin(gd, hub))
        pick = np.unique(np.concatenate([rng.choice(near, 40, replace=False),
                                         rng.choice(gs.shape[0], 20, replace=False)]))
        s, d = cp.asarray(gs[pick]), cp.asarray(gd[pick])
        for op in (g.delete_edges, g.insert_edges):
            kt.update(op(s, d))
            assert kt.stats["path"] == "dynamic"
            assert_static(kt, g)
            assert k_order_violations(kt) == 0
            assert _rows_exact(kt, g) == 0
