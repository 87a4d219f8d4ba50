"""The CPU DynamicTruss's budget (hornet/algos/ktruss/budget.py) and the static finish of a
stopped insertion (hornet/algos/ktruss/finish.py).

A batch whose prediction passes the gate goes static before its expensive phase (forced on:
``predict_share=0``), none does with the gate off; an insertion whose scan stops at its
deadline is finished by the static decomposition of the levels it did not finish (forced: a
tiny ``fallback_share``), with the plain scan and the level-rows scan, and the k-order and
level counts it leaves serve the updates after it. Every result equals the static
decomposition, and ``stats`` says which path each update took."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.algos.ktruss import budget as B
from hornet.algos.ktruss.dynamic import DynamicTruss
from hornet.generators import kronecker_edges

from test_dynamic_truss_level_rows import force_level_rows
from truss_checks import assert_static, k_order_violations, level_count_violations


def test_budget_arithmetic():
    b = B.UpdateBudget(gate=2.0, factor=3.0, low=0.25, high=1.0)
    # no rates yet: the prior ratio; no spread: no prediction, no gate, the deadline's cap
    S = 4_000_000 / B.COST_RATIO_PRIOR
    assert b.static_units("delete", 4_000_000) == S
    assert b.decide("delete", 10**9, 1, 4_000_000) == (
        False, int(B.UNKNOWN_SHARE * S) + B.STATIC_OVERHEAD, None)
    W = 1_000_000                                      # the static work of the graph
    b.static_timed(2.0, W)                             # 2 us a static unit
    b.learn_rate("delete", 1.0, W, W)                  # 1 us an update unit
    b.learn_rate("delete", 1.0, B.LEARN_MIN_WORK - 1, 1)   # too small to teach
    b.learn_rate("delete", 1.0, W // 65, W)            # too small against the static work
    assert b.static_units("delete", W) == pytest.approx(2 * W)
    assert b.static_units("insert", W) == W / B.COST_RATIO_PRIOR    # rates by kind
    b.learn_rate("delete", 30.0, W, W)                 # the faster of two
    assert b.static_units("delete", W) == pytest.approx(2 * W)
    b.learn_rate("delete", 4.0, W, W)                  # from three on, the median
    assert b.static_units("delete", W) == pytest.approx(W / 2)
    # 100 units a first-wave triangle, 1000 a batch edge
    b.learn_spread("delete", 1000, 100, 100_000)
    b.learn_spread("delete", 10, 1, B.LEARN_MIN_WORK - 1)             # too small to teach
    assert b.predict("delete", 10, 0) == 1000 and b.predict("insert", 10, 0) is None
    assert b.predict("delete", 10, 3) == 3000          # the larger of the two measures
    b.learn_spread("insert", 1000, 100, 100_000)
    assert b.predict("insert", 10, 3) == 1000          # an insertion's: its first wave
    S = W // 2
    # small prediction: the low share; medium: factor x prediction; large: the cap; over
    # the gate: static before any work
    assert b.decide("delete", 100, 1, W) == (False, int(0.25 * S) + B.STATIC_OVERHEAD,
                                             10_000)
    assert b.decide("delete", 1000, 1, W)[:2] == (False, int(0.6 * S) + B.STATIC_OVERHEAD)
    assert b.decide("delete", 9000, 1, W)[:2] == (False, S + B.STATIC_OVERHEAD)
    assert b.decide("delete", 10_001, 1, W)[:2] == (True, 0)
    assert b.decide("delete", 1, 1001, W)[:2] == (True, 0)
    # a bound (a core's peel): the prediction is at most it, and stands in for a missing one
    assert b.decide("delete", 10_001, 1, W, bound=50_000) == (
        False, int(0.3 * S) + B.STATIC_OVERHEAD, 50_000)
    assert b.decide("delete", 100, 1, W, bound=200_000)[2] == 10_000
    assert b.decide("insert", 10, 1, W, bound=50_000)[2] == 1000
    assert B.UpdateBudget().decide("insert", 10, 1, W, bound=50_000)[2] == 50_000
    b.learn_spread("delete", 1000, 100, 300_000)       # medians of two: the smaller
    assert b.predict("delete", 10, 1) == 1000
    b.learn_spread("insert", 1000, 100, 80_000, stopped=True)   # counted factor (3) times
    b.learn_spread("insert", 1000, 100, 80_000, stopped=True)
    assert b.predict("insert", 10, 0) == pytest.approx(10 * 240)   # median of 100, 240, 240


def _graph(scale=10, seed=3):
    src, dst = kronecker_edges(scale, edge_factor=8, seed=seed)
    return hornet.Graph.from_edges(src, dst, directed=False, device="cpu")


def _check(kt, g):
    assert_static(kt, g)
    assert k_order_violations(kt) == 0
    assert level_count_violations(kt) == 0


def _rounds(g, kts, rng, sizes):
    """Delete and re-insert random edges of ``g`` (the same batches for every object of
    ``kts``, each on its own copy of the graph); yields the stats of every update."""
    for b in sizes:
        gs, gd = (np.asarray(a) for a in g[0].edges(dense=True))
        pick = rng.choice(gs.shape[0], b, replace=False)
        s, d = gs[pick], gd[pick]
        for kind in ("delete", "insert"):
            stats = []
            for gi, kt in zip(g, kts):
                ch = gi.delete_edges(s, d) if kind == "delete" else gi.insert_edges(s, d)
                kt.update(ch)
                _check(kt, gi)
                stats.append(dict(kt.stats))
            yield kind, stats


def test_gate_forced_on_and_off_give_equal_results():
    """Three objects on copies of one graph, the same batches: the default, the gate forced
    on (every batch of a kind with a prediction goes static before its expensive phase,
    why "predicted") and off (no batch does). All equal the static decomposition."""
    g = [_graph() for _ in range(3)]
    kts = [DynamicTruss(g[0], batch_share=1.0),
           DynamicTruss(g[1], batch_share=1.0, predict_share=0.0),
           DynamicTruss(g[2], batch_share=1.0, predict_share=np.inf, fallback_share=1e9)]
    rng = np.random.default_rng(5)
    gated = {"delete": 0, "insert": 0}
    for kind, (default, on, off) in _rounds(g, kts, rng, (40, 60, 80, 40)):
        assert off["path"] == "dynamic" and off.get("why") != "predicted", off
        if on["predicted"] is not None:
            assert on["path"] == "static" and on["why"] == "predicted", on
            assert "work" not in on                  # nothing of the update ran
            gated[kind] += 1
        else:
            assert on["path"] == "dynamic", on       # the first of its kind: no prediction
        assert default["path"] in ("dynamic", "static") and default["first"] >= 0
    assert gated["delete"] and gated["insert"]


@pytest.mark.parametrize("rows", ["plain", "rows"])
def test_stopped_insertion_finishes_from_its_level(rows, monkeypatch):
    """A deadline no insertion meets (a tiny ``fallback_share``, no fixed allowance): the
    scan stops, and the static decomposition of the levels it did not finish completes the
    batch (why "level"): exact, with a valid k-order and level counts, which the updates
    after it (at the default budget) keep exact."""
    force_level_rows(monkeypatch, rows == "rows")
    monkeypatch.setattr(B, "STATIC_OVERHEAD", 0)
    g = [_graph(seed=4), _graph(seed=4)]
    kts = [DynamicTruss(g[0], batch_share=1.0, fallback_share=1e-9, predict_share=np.inf),
           DynamicTruss(g[1], batch_share=1.0)]
    rng = np.random.default_rng(6)
    finished = []
    for kind, (tiny, default) in _rounds(g, kts, rng, (50, 120)):
        if kind == "insert" and tiny["path"] == "static":
            assert tiny["why"] == "level", tiny
            assert tiny["level"] >= 2 and tiny["finished"] > 0
            finished.append(tiny["level"])
    assert finished
    budget = kts[1]._budget
    kts[0]._budget.gate, kts[0]._budget.low, kts[0]._budget.high = (budget.gate, budget.low,
                                                                    budget.high)
    for _ in _rounds(g, kts, rng, (30, 200)):
        pass


def test_level_count_pass_waits_for_its_time(monkeypatch):
    """After a static run the level counts are due: a deletion recounts the edges it meets
    (counts still due, its seconds added up) until the deletions since the static run have
    spent the pass's time, then the next one runs the pass (counts no longer due). Both
    kinds of deletion, and the insertions between them, equal the static decomposition, and
    the counts they leave are lower bounds of the true ones."""
    from hornet.algos.ktruss import level_counts as lc
    monkeypatch.setattr(lc, "LEVEL_PASS_SHARE", 1e30)       # priced out: lazy
    g = _graph()
    kt = DynamicTruss(g, batch_share=1.0, predict_share=np.inf, fallback_share=1e9)
    assert kt._pass.due and kt._pass.spent == 0
    rng = np.random.default_rng(2)
    for step, (kind, (st,)) in enumerate(_rounds([g], [kt], rng, (30, 30, 30))):
        assert st["path"] == "dynamic", st
        if kind == "delete":
            assert kt._pass.due and kt._pass.spent > 0
    # the rental ran out: the next deletion counts every edge first
    kt._pass.spent = np.inf
    for kind, (st,) in _rounds([g], [kt], rng, (30, 30)):
        assert st["path"] == "dynamic", st
        assert not kt._pass.due
    assert kt._pass.rate is not None and kt._pass.rate > 0
    # a static run makes them due again, with nothing spent
    kt._redecompose()
    assert kt._pass.due and kt._pass.spent == 0


def test_peel_priced_by_learned_rates():
    """A core decomposition's work in descent units: DESCENT_PER_PEEL peel units a descent
    unit until both rates are learned, then by the ratio of their seconds per unit."""
    from hornet.algos.ktruss import dynamic as dyn
    kt = DynamicTruss(_graph())
    kt._budget.rates["peel"], kt._budget.rates["delete"] = [], []
    assert kt._peel_in_descent_units(8000.0) == 8000.0 / dyn.DESCENT_PER_PEEL
    kt._budget.rates["delete"] = [4e-7]
    assert kt._peel_in_descent_units(8000.0) == 8000.0 / dyn.DESCENT_PER_PEEL
    kt._budget.rates["peel"] = [1e-8]
    assert kt._peel_in_descent_units(8000.0) == pytest.approx(8000.0 * 1e-8 / 4e-7)
