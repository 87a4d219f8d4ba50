"""DynamicTruss insertions that start each new edge at a lower bound of its new number (CPU:
DynamicTruss._place_new_edges; GPU: GpuDynamicTruss._insert_from_bounds, both drivers of its
level scan). After every batch the numbers equal the static decomposition of the same graph
state and the k-order holds without ties; on the GPU the bounds themselves equal a NumPy
h-index over the static numbers before the batch and never exceed the new numbers.
"""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.algos import truss_numbers
from hornet.algos.ktruss.dynamic import DynamicTruss
from hornet.testing import to_host

from truss_checks import MODES, arr, assert_static, clique, k_order_violations, pairs
from truss_checks import static_input

DRIVERS = ["device", "device-by-level", "rounds"]


def _use(device, driver, monkeypatch) -> None:
    """GPU: the level scan from lower bounds, in one cooperative launch per update over every
    level at once ("device") or level by level ("device-by-level"), or one launch per phase
    ("rounds"); the CPU version runs once."""
    if device == "cpu" and driver != "device":
        pytest.skip("the GPU version's drivers")
    if device == "gpu":
        from hornet.algos.ktruss import dynamic_gpu
        monkeypatch.setattr(dynamic_gpu, "INSERT_BY_RAISE", False)
        monkeypatch.setattr(dynamic_gpu, "START_AT_LOWER_BOUND", True)
        monkeypatch.setattr(dynamic_gpu, "DEVICE_SCAN_INSERT", driver != "rounds")
        monkeypatch.setattr(dynamic_gpu, "LEVELS_AT_ONCE", driver == "device")


def _ties(kt) -> int:
    """Pairs of live edges (outside a CPU object's dense blocks) sharing truss number and
    rank: the k-order is total, so none may."""
    t = kt._table
    keys = to_host(t.keys)
    live = np.flatnonzero(keys >= 0)
    blocks = getattr(kt, "_blocks", None)
    if blocks is not None:
        live = live[blocks.eblock[live] < 0]
    truss = to_host(t.columns["truss"])[live].astype(np.int64)
    rank = to_host(t.columns["rank"])[live]
    return live.shape[0] - np.unique(np.stack([truss, rank]), axis=1).shape[1]


def _check(kt, g) -> None:
    assert_static(kt, g)
    assert k_order_violations(kt) == 0
    assert _ties(kt) == 0


def _number_of(g) -> dict:
    """{(u, v) with u < v: static truss number} of the undirected graph ``g``."""
    t = to_host(truss_numbers(static_input(g)))
    out = {}
    for (u, v), x in zip(pairs(g.edges()), t.tolist()):
        out[(min(u, v), max(u, v))] = x
    return out


def _oracle_bounds(before: dict, new_pairs: list, g) -> np.ndarray:
    """The lower bound of each new edge u-v: the largest k >= 2 (at most 1023) with at least
    k - 2 triangles u-v-w whose edges u-w and v-w are both old (in ``before``, the static
    numbers before the batch) with min(numbers) >= k."""
    adj: dict = {}
    for u, v in pairs(g.edges()):
        if u != v:
            adj.setdefault(u, set()).add(v)
            adj.setdefault(v, set()).add(u)
    out = []
    for u, v in new_pairs:
        vals = []
        for w in adj[u] & adj[v]:
            a, b = (min(u, w), max(u, w)), (min(v, w), max(v, w))
            if a in before and b in before:
                vals.append(min(before[a], before[b], 1023))
        vals = np.sort(np.asarray(vals, np.int64))[::-1]
        k = 2
        for i, x in enumerate(vals):              # i + 1 triangles at x or above
            k = max(k, min(int(x), i + 3))
        out.append(k)
    return np.asarray(out, np.int64)


def _check_bounds(kt, g, before: dict, change) -> int:
    """GPU: the bounds the last insertion used (``_newval``, aligned with the change) equal
    the oracle and do not exceed the new numbers; returns how many exceed 2."""
    new_pairs = pairs((change.src, change.dst))
    want = _oracle_bounds(before, new_pairs, g)
    got = to_host(kt._newval[:len(new_pairs)]).astype(np.int64)
    assert np.array_equal(got, want)
    now = _number_of(g)
    assert all(int(x) <= now[(min(u, v), max(u, v))] for x, (u, v) in zip(got, new_pairs))
    return int((got > 2).sum())


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("seed", [0, 1])
def test_reinserted_edges_start_at_their_bounds(device, driver, seed, monkeypatch):
    """A dense random graph: random batches deleted and put back, and batches of random
    pairs, every one through the region algorithms; the bounds (GPU) equal the NumPy h-index
    and some exceed level 2 (the re-inserted edges start above it)."""
    _use(device, driver, monkeypatch)
    rng = np.random.default_rng(seed)
    n = 36
    g = hornet.Graph(directed=False, device=device)
    g.insert_edges(arr(device, rng.integers(0, n, 360)), arr(device, rng.integers(0, n, 360)))
    kt = DynamicTruss(g, **MODES["dynamic"])
    _check(kt, g)
    placed = 0
    for step in range(12):
        b = int(rng.integers(1, 25))
        before = _number_of(g)
        if step % 3 == 2:
            change = g.insert_edges(arr(device, rng.integers(0, n, b)),
                                    arr(device, rng.integers(0, n, b)))
        else:
            gs, gd = g.edges()
            pick = arr(device, rng.choice(gs.shape[0], b, replace=False))
            gone = gs[pick], gd[pick]
            kt.update(g.delete_edges(*gone))
            assert kt.stats["path"] == "dynamic"
            _check(kt, g)
            before = _number_of(g)
            change = g.insert_edges(*gone)
        kt.update(change)
        assert kt.stats["path"] in ("dynamic", "none")
        _check(kt, g)
        if device == "gpu" and len(change):
            placed += _check_bounds(kt, g, before, change)
        elif len(change):
            placed += kt.stats["placed"]
    assert placed > 0


@pytest.mark.parametrize("driver", DRIVERS)
def test_clique_edges_put_back_raise_k_max(device, driver, monkeypatch):
    """A K20 in a sparse random graph: a tenth of its edges deleted in one batch (k_max
    falls), put back in one batch (k_max 20 again; the re-inserted edges start above level 2,
    the clique edges they share triangles with rise as seeds of their own levels); then half
    of it deleted and put back, and a K24 on 14 of its vertices and 10 new ones (k_max rises
    to 24, new edges in triangles with each other only)."""
    _use(device, driver, monkeypatch)
    rng = np.random.default_rng(5)
    g = hornet.Graph(directed=False, device=device)
    g.insert_edges(arr(device, rng.integers(0, 200, 600)), arr(device, rng.integers(0, 200, 600)))
    core = list(range(0, 100, 5))                          # 20 vertices
    s, d = clique(core)
    g.insert_edges(arr(device, s), arr(device, d))
    kt = DynamicTruss(g, **MODES["dynamic"])
    _check(kt, g)
    assert kt.k_max == 20
    for share in (0.1, 0.5):
        pick = rng.choice(len(s), int(share * len(s)), replace=False)
        du, dv = [s[i] for i in pick], [d[i] for i in pick]
        kt.update(g.delete_edges(arr(device, du), arr(device, dv)))
        _check(kt, g)
        assert kt.k_max < 20
        before = _number_of(g)
        change = g.insert_edges(arr(device, du), arr(device, dv))
        kt.update(change)
        assert kt.stats["path"] == "dynamic"
        _check(kt, g)
        assert kt.k_max == 20
        placed = (_check_bounds(kt, g, before, change) if device == "gpu"
                  else kt.stats["placed"])
        assert share > 0.2 or placed > 0
    s2, d2 = clique(core[:14] + list(range(300, 310)))
    kt.update(g.insert_edges(arr(device, s2), arr(device, d2)))
    assert kt.stats["path"] == "dynamic"
    _check(kt, g)
    assert kt.k_max == 24


def test_directed_hub_edges_put_back(device, monkeypatch):
    """A directed graph (reciprocal pairs, self-loops: the numbers are those of the
    underlying undirected simple graph) with two adjacent hubs: hub edges deleted and put
    back (one direction of a reciprocal pair too, which changes nothing underneath); the
    numbers equal the static decomposition after every batch."""
    _use(device, "device", monkeypatch)
    rng = np.random.default_rng(3)
    n = 80
    src = [0] * (n - 1) + list(range(2, n)) + rng.integers(2, n, 500).tolist() + [0, 1, 2]
    dst = list(range(1, n)) + [1] * (n - 2) + rng.integers(2, n, 500).tolist() + [0, 1, 2]
    src += [1, 3]
    dst += [0, 0]                                   # reciprocal pairs
    g = hornet.Graph(directed=True, device=device)
    g.insert_edges(arr(device, src), arr(device, dst))
    kt = DynamicTruss(g, **MODES["dynamic"])
    assert_static(kt, g)
    bu, bv = [0, 0, 2, 3, 0, 1], [1, 2, 1, 1, 5, 0]
    for _ in range(2):
        kt.update(g.delete_edges(arr(device, bu), arr(device, bv)))
        assert_static(kt, g)
        assert k_order_violations(kt) == 0
        kt.update(g.insert_edges(arr(device, bu), arr(device, bv)))
        assert kt.stats["path"] in ("dynamic", "none")
        assert_static(kt, g)
        assert k_order_violations(kt) == 0
