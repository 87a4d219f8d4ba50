"""The core's levels decomposed on bit rows (hornet.algos.ktruss.core_peel) against the static
decomposition: of the T-truss itself (an insertion's finish), of the T-truss less some
deleted edges (the edges left at T or above exact, the others fallen below T), with the
level counts against brute force and the peel's order a k-order; and DynamicTruss batches on
a Kronecker graph whose insertion scans stop at the core or run through it by the stop's
estimate, and whose deletions peel a core that some edges fall out of."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.algos import truss_numbers
from hornet.algos.ktruss import core_peel, dynamic
from hornet.algos.ktruss.core_peel import core_plan, peel_core
from hornet.algos.ktruss.core_rows import build_core_at
from hornet.algos.ktruss.dynamic import DynamicTruss
from hornet.generators import kronecker_edges

from test_dynamic_truss_level_rows import force_level_rows
from truss_checks import MODES, assert_static, k_order_ties, k_order_violations
from truss_checks import level_count_violations


def _kron(scale: int, seed: int = 1):
    s, d = kronecker_edges(scale, edge_factor=16, seed=seed)
    return hornet.Graph.from_edges(np.asarray(s), np.asarray(d), device="cpu")


def _numbers(src, dst) -> dict:
    g = hornet.Graph.from_edges(src, dst, device="cpu")
    s, d = g.edges(dense=True)
    t = np.asarray(truss_numbers(g))
    return dict(zip(((s.astype(np.int64) << 32) | d).tolist(), t.tolist()))


def _check_peel(keys, slots, truss, rank, count, fell, T, want, alive):
    """Numbers of the edges left at T or above are ``want``'s, the fallen ones' are below
    T; each count is the edge's triangles among the edges with its number or more (brute
    force over the live edges ``alive``); the ranks are a k-order of those edges."""
    pair = {}
    for i, x in enumerate(slots):
        k = int(keys[x])
        if fell[i]:
            assert want[k] < T
        else:
            assert truss[x] == want[k]
            pair[(k >> 32, k & 0xFFFFFFFF)] = x
    nbr = {}
    for k in alive:
        u, v = k >> 32, k & 0xFFFFFFFF
        nbr.setdefault(u, set()).add(v)
        nbr.setdefault(v, set()).add(u)
    edge = lambda a, b: (min(a, b) << 32) | max(a, b)      # noqa: E731
    for i, x in enumerate(slots):
        if fell[i]:
            continue
        k = int(keys[x])
        u, v = k >> 32, k & 0xFFFFFFFF
        t = want[k]
        later = at_level = 0
        for w in nbr[u] & nbr[v]:
            a, b = want[edge(u, w)], want[edge(v, w)]
            at_level += a >= t and b >= t
            # s+: triangles whose other two edges come after this one in the k-order
            after = [(want[e], rank[pair[(e >> 32, e & 0xFFFFFFFF)]] if want[e] >= T else -1)
                     for e in (edge(u, w), edge(v, w))]
            later += all(o > (t, rank[x]) for o in after)
        assert count[i] == at_level
        assert later <= t - 2


@pytest.mark.parametrize("scale, parts", [(9, False), (11, False), (11, True)])
def test_peel_of_a_truss_and_of_a_truss_less_edges(scale, parts, monkeypatch):
    """``parts``: every round of the peel runs in parts on the threads (atomic updates)."""
    if parts:
        monkeypatch.setattr(core_peel, "ROUND_SPLIT", 1)
    g = _kron(scale)
    src, dst = g.edges(dense=True)
    keys = (src.astype(np.int64) << 32) | dst
    t = np.asarray(truss_numbers(g)).astype(np.int32)
    want = dict(zip(keys.tolist(), t.tolist()))
    n = g.num_vertices
    rng = np.random.default_rng(scale)
    for T in sorted({4, int(np.median(t[t > 2])), int(t.max())}):
        none = np.zeros(keys.shape[0], np.int64)
        truss, rank = t.copy(), np.zeros(keys.shape[0], np.int64)
        counters = np.array([-1, 0], np.int64)
        core = build_core_at(keys, truss, n, none, -1, T)
        slots, old, fell, count, work = peel_core(core, keys, truss, rank, counters)
        assert np.array_equal(np.sort(slots), np.flatnonzero(t >= T))
        assert not fell.any() and np.array_equal(old, t[slots]) and work > 0
        assert counters[1] == slots.shape[0]
        _check_peel(keys, slots, truss, rank, count, fell, T, want, keys.tolist())
        # the truss less some of its edges: the batch stamp leaves them out
        stamp = np.zeros(keys.shape[0], np.int64)
        pick = rng.choice(np.flatnonzero(t >= T), max(1, (t >= T).sum() // 20), replace=False)
        stamp[pick] = 5
        left = stamp != 5
        after = _numbers(src[left], dst[left])
        truss = t.copy()
        core = build_core_at(keys, truss, n, stamp, 5, T)
        slots, old, fell, count, work = peel_core(core, keys, truss, rank, counters)
        assert np.array_equal(np.sort(slots), np.flatnonzero((t >= T) & left))
        assert np.array_equal(truss[slots[fell]], t[slots[fell]])   # fallen: left as before
        _check_peel(keys, slots, truss, rank, count, fell, T, after, keys[left].tolist())


def test_plan_bounds_the_peel():
    """core_plan's level is the least whose core fits the vertex budget; its work bound
    is at least what the peel does."""
    g = _kron(10)
    src, dst = g.edges(dense=True)
    keys = (src.astype(np.int64) << 32) | dst
    t = np.asarray(truss_numbers(g)).astype(np.int32)
    s = np.asarray(hornet.algos.edge_support(g), np.int32)
    none = np.zeros(keys.shape[0], np.int64)
    for budget in (30, 100, 1000):
        T, bound = core_plan(keys, t, s, g.num_vertices, none, -1, budget, 3)
        verts = lambda k: np.unique(np.concatenate([src[t >= k], dst[t >= k]])).shape[0]  # noqa
        assert verts(T) <= budget and (T == 3 or verts(T - 1) > budget)
        core = build_core_at(keys, t.copy(), g.num_vertices, none, -1, T)
        work = peel_core(core, keys, t.copy(), np.zeros(keys.shape[0], np.int64),
                         np.zeros(2, np.int64))[4]
        assert work <= bound


@pytest.mark.parametrize("estimate", ["stop", "scan", "adaptive"])
def test_kronecker_batches_through_the_core(estimate, monkeypatch):
    """Delete / re-insert batches of a Kronecker graph with every batch's core peeled
    (deletions) and the insertion scans stopping at the core ("stop": the stop's estimate
    always passes its work, "scan": never, "adaptive": the estimate of the kernel); after
    each, the static numbers, the k-order, no ties and the level counts (brute force)."""
    force_level_rows(monkeypatch, True, peel=60)
    plan = dynamic.core_plan

    def planned(*args):
        T, work = plan(*args)
        if args[5] != -1 or estimate == "stop":      # a deletion's plan (its batch stamp)
            return T, 0
        return T, work if estimate == "adaptive" else 1 << 40     # past any estimate

    monkeypatch.setattr(dynamic, "core_plan", planned)
    g = _kron(10, seed=3)
    kt = DynamicTruss(g, **MODES["dynamic"])
    rng = np.random.default_rng(7)
    stopped = fell = 0
    for size in (30, 200, 600):
        gs, gd = (np.asarray(a) for a in g.edges(dense=True))
        pick = rng.choice(gs.shape[0], size, replace=False)
        kt.update(g.delete_edges(gs[pick], gd[pick]))
        assert kt.stats["path"] == "dynamic" and "core" in kt.stats
        fell += kt.stats["fell"]
        assert_static(kt, g)
        kt.update(g.insert_edges(gs[pick], gd[pick]))
        assert kt.stats["path"] == "dynamic"
        stopped += "core" in kt.stats
        assert_static(kt, g)
        assert k_order_violations(kt) == 0 and k_order_ties(kt) == 0
        assert level_count_violations(kt) == 0
    assert fell > 0
    assert (stopped == 3) if estimate == "stop" else (stopped == 0) if estimate == "scan" \
        else True


def test_scan_stopped_at_its_deadline_inside_the_core(monkeypatch):
    """An insertion scan that reaches its work limit at a level of the core (every edge at
    level 3 or above: the core of every vertex) is finished on the core's bit rows from
    that level: the static numbers, the k-order, no ties and the level counts after it."""
    force_level_rows(monkeypatch, True, peel=1 << 20)
    plan = dynamic.core_plan
    monkeypatch.setattr(dynamic, "core_plan", lambda *a: (plan(*a)[0], 1 << 40))
    g = _kron(10, seed=4)
    kt = DynamicTruss(g, **MODES["dynamic"])
    kt.core_min_delete = np.iinfo(np.int64).max
    rng = np.random.default_rng(3)
    gs, gd = (np.asarray(a) for a in g.edges(dense=True))
    pick = rng.choice(gs.shape[0], 400, replace=False)
    kt.update(g.delete_edges(gs[pick], gd[pick]))
    assert "core" not in kt.stats
    kt._decide = lambda kind, first, batch, bound=None: (False, 20000)
    kt.update(g.insert_edges(gs[pick], gd[pick]))
    del kt._decide
    st = kt.stats
    assert st["path"] == "static" and st["why"] == "level" and st["core"] > 0, st
    assert_static(kt, g)
    assert k_order_violations(kt) == 0 and k_order_ties(kt) == 0
    assert level_count_violations(kt) == 0


def test_peeled_deletion_whose_descent_alone_would_go_static(monkeypatch):
    """A deletion whose own prediction passes the gate but whose core peel bounds it below:
    it peels the core, and its descent below the core runs to the longest deadline (not to
    none: a stopped descent after a peel would finish statically). Exact after it."""
    force_level_rows(monkeypatch, True, peel=60)
    plan = dynamic.core_plan
    monkeypatch.setattr(dynamic, "core_plan", lambda *args: (plan(*args)[0], 0))
    g = _kron(10, seed=3)
    kt = DynamicTruss(g)
    rng = np.random.default_rng(11)
    gs, gd = (np.asarray(a) for a in g.edges(dense=True))
    pick = rng.choice(gs.shape[0], 300, replace=False)
    kt._budget.spreads["delete"] = [(1e12, 1e12)]        # any descent predicted dear
    kt.update(g.delete_edges(gs[pick], gd[pick]))
    assert kt.stats["path"] == "dynamic" and "core" in kt.stats, kt.stats
    assert kt.stats["limit"] > 0
    assert_static(kt, g)
    assert k_order_violations(kt) == 0 and level_count_violations(kt) == 0
