"""DynamicTruss (CPU): the kept s+ bounds of the level-rows insertion scan
(hornet.algos.ktruss.order_rows: a queued edge whose bound plus its triangles with the
level's candidates stays under k - 1 is passed over without listing its triangles).

After every batch: the numbers equal the static decomposition, the k-order holds (brute
force) and every kept bound (an edge whose ``sprank`` equals its rank) is at least the edge's
true s+ (its triangles whose other two edges come after it in the k-order, brute force).
On a Kronecker graph and on random dense graphs (Hypothesis), with the level-rows scan forced
on; the Kronecker run must pass over some edges, and gives the same numbers and k-order
violations (none) as the same batches with the bounds off.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hornet
from hornet.algos.ktruss import dynamic
from hornet.algos.ktruss.dynamic import DynamicTruss
from hornet.generators import kronecker_edges

from truss_checks import MODES, assert_static, k_order_ties, k_order_violations


def splus_bound_violations(kt) -> int:
    """Edges whose kept bound is valid (``sprank == rank``) but below their s+, counted
    from the definition by brute force."""
    if kt._splus is None:
        return 0
    splus, sprank, ext = kt._splus
    assert not ext.any(), "ext is zero outside a scan"
    t = kt._table
    keys = np.asarray(t.keys)
    truss, rank = np.asarray(t.columns["truss"]), np.asarray(t.columns["rank"])
    live = np.flatnonzero(keys >= 0)
    order = {}
    for s in live.tolist():
        k = int(keys[s])
        order[(k >> 32, k & 0xFFFFFFFF)] = (int(truss[s]), int(rank[s]), s)
    adj = {}
    for u, v in order:
        adj.setdefault(u, set()).add(v)
        adj.setdefault(v, set()).add(u)
    bad = 0
    for (u, v), (tr, r, s) in order.items():
        if sprank[s] != r:
            continue
        mine = (tr, r)
        later = sum(1 for w in adj[u] & adj[v]
                    if order[(min(u, w), max(u, w))][:2] > mine
                    and order[(min(v, w), max(v, w))][:2] > mine)
        bad += later > splus[s]
    return bad


def force_rows(monkeypatch, bounds: bool = True) -> None:
    """Every insertion scan on level rows (no top-level peel: its re-ranking would leave
    few bounds to test), deletion rows at every vertex; kept bounds on or off."""
    monkeypatch.setattr(dynamic, "LEVEL_ROWS_MIN_LEVEL", 0)
    monkeypatch.setattr(dynamic, "LEVEL_ROWS_MIN_EDGES", 0)
    monkeypatch.setattr(dynamic, "ROW_MIN_DEGREE", 1)
    monkeypatch.setattr(dynamic, "SCAN_BOUNDS", bounds)


def _check(kt, g) -> None:
    assert_static(kt, g)
    assert k_order_violations(kt) == 0
    assert k_order_ties(kt) == 0
    assert splus_bound_violations(kt) == 0


@pytest.mark.parametrize("full_pass", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kronecker_delete_and_reinsert_with_bounds(seed, full_pass, monkeypatch):
    """``full_pass``: the first scan counts every edge's s+ (else the bounds come from the
    scans' visits alone). Random edges of a Kronecker graph (scale 9) deleted and re-inserted five times,
    then edges between hubs inserted and deleted: checked after every batch; the scans
    pass over some queued edges; the same batches with the bounds off give the same
    numbers and raises."""
    s, d = kronecker_edges(9, edge_factor=16, seed=seed)
    s, d = np.asarray(s), np.asarray(d)
    g = hornet.Graph.from_edges(s, d, device="cpu")
    ref = hornet.Graph.from_edges(s, d, device="cpu")
    force_rows(monkeypatch, True)
    monkeypatch.setattr(dynamic, "SCAN_BOUNDS_PASS", full_pass)
    kt = DynamicTruss(g, **MODES["dynamic"])
    monkeypatch.setattr(dynamic, "SCAN_BOUNDS", False)
    off = DynamicTruss(ref, **MODES["dynamic"])
    rng = np.random.default_rng(seed)
    skipped = 0

    def both(op, a, b):
        kt.update(getattr(g, op)(a, b))
        off.update(getattr(ref, op)(a, b))
        assert kt.stats["path"] == off.stats["path"] == "dynamic"
        _check(kt, g)
        assert_static(off, ref)
        assert kt.stats["raises" if op == "insert_edges" else "lowered"] == \
            off.stats["raises" if op == "insert_edges" else "lowered"]
        return kt.stats.get("skipped", 0)

    for _ in range(5):
        gs, gd = (np.asarray(a) for a in g.edges(dense=True))
        pick = rng.choice(gs.shape[0], int(rng.integers(5, 80)), replace=False)
        both("delete_edges", gs[pick], gd[pick])
        skipped += both("insert_edges", gs[pick], gd[pick])
    deg = np.asarray(g.adjacency(properties=False).degree)
    hubs = np.argsort(deg)[-40:]
    a, b = rng.choice(hubs, 60), rng.choice(hubs, 60)
    skipped += both("insert_edges", a, b)
    both("delete_edges", a, b)
    skipped += both("insert_edges", a[:30], b[:30])
    assert off.stats.get("skipped", 0) == 0
    assert skipped > 0


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_random_batches_keep_valid_bounds(data):
    """Random dense graphs (16 vertices) under random delete and insert batches (some
    re-inserting what was just deleted): after every batch the numbers are the static
    ones, the k-order holds and every kept bound is at least the true s+."""
    with pytest.MonkeyPatch.context() as mp:
        force_rows(mp, True)
        n = 16
        pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
        keep = data.draw(st.lists(st.booleans(), min_size=len(pairs), max_size=len(pairs)))
        s = [p[0] for p, k in zip(pairs, keep) if k]
        d = [p[1] for p, k in zip(pairs, keep) if k]
        g = hornet.Graph(directed=False, device="cpu")
        if s:
            g.insert_edges(np.array(s), np.array(d))
        kt = DynamicTruss(g, **MODES["dynamic"])
        last = None
        for _ in range(data.draw(st.integers(1, 8))):
            op = data.draw(st.sampled_from(["insert", "delete", "reinsert"]))
            if op == "reinsert" and last is not None:
                a, b = last
                kt.update(g.insert_edges(a, b))
                last = None
            elif op == "delete":
                gs, gd = (np.asarray(x) for x in g.edges(dense=True))
                if gs.shape[0] == 0:
                    continue
                idx = data.draw(st.lists(st.integers(0, gs.shape[0] - 1), min_size=1,
                                         max_size=12, unique=True))
                last = (gs[idx], gd[idx])
                kt.update(g.delete_edges(*last))
            else:
                m = data.draw(st.integers(1, 12))
                a = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=m,
                                                max_size=m)))
                b = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=m,
                                                max_size=m)))
                kt.update(g.insert_edges(a, b))
            _check(kt, g)
