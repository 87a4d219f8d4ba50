"""DynamicTruss batches whose peelings and descents take many rounds: a triangular lattice on
a torus, where every edge lies in exactly two triangles (a 4-truss with no slack). Deleting
one edge drops every edge to level 3, one ring around the hole a descent round, and the
peeling that orders them there removes one ring a round while most edges stay live; closing
the hole again raises every edge through a candidate set as large as the lattice. On the GPU
the peelings go from a worklist (``ko_peel.cuh``: later rounds count only the live members
that lost a triangle), in one cooperative launch per update and in host-driven rounds, and
the host-driven descent's h-index takes short lists a warp each and long ones a block each;
inside the cooperative launch the peelings, candidate searches and descents also run as one
asynchronous, queue-driven phase each (``ko_async.cuh``).
After every batch the numbers equal the static decomposition and the k-order invariant holds
without ties; the CPU version runs the same batches with the same checks."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.algos.ktruss.dynamic import DynamicTruss

from conftest import HAS_GPU
from truss_checks import MODES, arr, assert_static, k_order_violations
from test_dynamic_truss import _use_driver
from test_dynamic_truss_lower_start import _ties

W, H = 14, 12


def _vid(x: int, y: int) -> int:
    return (y % H) * W + (x % W)


def _lattice() -> tuple[list[int], list[int]]:
    """Edges of the triangular lattice on a W x H torus: (x, y) to (x + 1, y), (x, y + 1)
    and (x + 1, y + 1)."""
    s, d = [], []
    for y in range(H):
        for x in range(W):
            for dx, dy in ((1, 0), (0, 1), (1, 1)):
                s.append(_vid(x, y))
                d.append(_vid(x + dx, y + dy))
    return s, d


def _check(kt, g) -> None:
    assert_static(kt, g)
    assert k_order_violations(kt) == 0
    assert _ties(kt) == 0


def _use_peel(device, peel, monkeypatch) -> None:
    """ko_scan's peelings, candidate searches and descents: "async" (one queue-driven phase
    each, ``ko_async.cuh``, served right after its first pushes, mode 4's split and rise
    fused: ASYNC_FUSED; 8-ary list searches: ASYNC_KARY; one-unit PUSHes in the deciding
    warp: ASYNC_INLINE), "async-barriers" (a grid barrier after the first pushes, separate
    split and rise phases, binary searches, every PUSH through the queue, a new candidate's
    PUSH listing every later edge of its level: ASYNC_CAND_PRUNE off), "async-4-blocks"
    (as "async" on a grid of four blocks, each block pushing a long share of the first lists
    while the others serve, with units of 64 elements, up to 16 units an edge, pauses up to
    512 ns and every PUSH through the queue) or "rounds" (synchronous rounds from
    worklists); the CPU version runs once (as "async")."""
    if device == "cpu" and peel != "async":
        pytest.skip("the GPU version's phases in ko_scan")
    if device == "gpu":
        from hornet.algos.ktruss import dynamic_gpu
        for flag in ("ASYNC_PEEL", "ASYNC_CAND", "ASYNC_DESCENT"):
            monkeypatch.setattr(dynamic_gpu, flag, peel != "rounds")
        monkeypatch.setattr(dynamic_gpu, "ASYNC_FUSED", peel != "async-barriers")
        monkeypatch.setattr(dynamic_gpu, "ASYNC_KARY", peel != "async-barriers")
        monkeypatch.setattr(dynamic_gpu, "ASYNC_INLINE", peel == "async")
        monkeypatch.setattr(dynamic_gpu, "ASYNC_CAND_PRUNE", peel != "async-barriers")
        if peel == "async-4-blocks":
            monkeypatch.setattr(dynamic_gpu, "SCAN_MAX_BLOCKS", 4)
            monkeypatch.setattr(dynamic_gpu, "ASYNC_CHUNK", 64)
            monkeypatch.setattr(dynamic_gpu, "ASYNC_MAX_PARTS", 16)
            monkeypatch.setattr(dynamic_gpu, "ASYNC_PAUSE_MAX", 512)
            monkeypatch.setattr(dynamic_gpu.GpuDynamicTruss, "_grid_cache", {})


@pytest.mark.parametrize("peel", ["async", "async-barriers", "async-4-blocks", "rounds"])
@pytest.mark.parametrize("driver", ["device", "device-from-2", "rounds", "raise"])
def test_torus_lattice_peels_in_rings(device, driver, peel, monkeypatch):
    _use_driver(device, driver, monkeypatch)
    _use_peel(device, peel, monkeypatch)
    s, d = _lattice()
    g = hornet.Graph(directed=False, device=device)
    g.insert_edges(arr(device, s), arr(device, d))
    kt = DynamicTruss(g, **MODES["dynamic"])
    _check(kt, g)
    assert kt.k_max == 4
    gpu = device == "gpu"
    peel_rounds = []
    # one edge out: every edge falls to 3, ordered by a peeling of many rounds
    hole = ([_vid(3, 4)], [_vid(4, 4)])
    kt.update(g.delete_edges(arr(device, hole[0]), arr(device, hole[1])))
    _check(kt, g)
    assert kt.k_max == 3
    peel_rounds.append(kt.stats.get("peel_rounds", 0))
    # an edge across the lattice (not a lattice edge): two new triangles at level 3
    across = ([_vid(9, 2)], [_vid(11, 3)])
    kt.update(g.insert_edges(arr(device, across[0]), arr(device, across[1])))
    _check(kt, g)
    peel_rounds.append(kt.stats.get("peel_rounds", 0))
    # the hole closed again: back to a 4-truss
    kt.update(g.insert_edges(arr(device, hole[0]), arr(device, hole[1])))
    _check(kt, g)
    assert kt.k_max == 4
    # two holes far apart, then both closed in one batch, then a row of edges out
    two = ([_vid(1, 1), _vid(8, 7)], [_vid(2, 2), _vid(8, 8)])
    row = ([_vid(x, 5) for x in range(0, W, 3)], [_vid(x + 1, 5) for x in range(0, W, 3)])
    for apply, (s, d) in ((g.delete_edges, two), (g.insert_edges, two), (g.delete_edges, row)):
        kt.update(apply(arr(device, s), arr(device, d)))
        assert kt.stats["path"] == "dynamic"
        _check(kt, g)
        peel_rounds.append(kt.stats.get("peel_rounds", 0))
    if gpu and not (peel.startswith("async") and driver in ("device", "device-from-2")):
        # (the single hole's peeling at level 3 goes ring by ring; asynchronous: one phase)
        assert peel_rounds[0] >= 4, peel_rounds


@pytest.mark.parametrize("peel", ["async", "async-barriers", "async-4-blocks"])
@pytest.mark.parametrize("units", [1 << 22, 64])
def test_async_peeling_random_batches(device, units, peel, monkeypatch):
    """The lattice with two hubs under random deletions and re-insertions, ko_scan's phases
    asynchronous (GPU; ``peel``: see _use_peel; units: the queue's capacity, 64 too few for
    most phases: those updates stop and fall back to the static decomposition, and leave the
    queue clean for the next ones). Exact and a k-order after every batch."""
    if device == "cpu" and units != 1 << 22:
        pytest.skip("the GPU version's queue")
    _use_driver(device, "device", monkeypatch)
    _use_peel(device, peel, monkeypatch)
    if device == "gpu":
        from hornet.algos.ktruss import dynamic_gpu
        monkeypatch.setattr(dynamic_gpu, "ASYNC_QUEUE_UNITS", units)
    rng = np.random.default_rng(11)
    s, d = _with_hubs()
    g = hornet.Graph(directed=False, device=device)
    g.insert_edges(arr(device, s), arr(device, d))
    kt = DynamicTruss(g, **MODES["dynamic"])
    _check(kt, g)
    paths = set()

    def step(change) -> None:
        kt.update(change)
        paths.add(kt.stats["path"])
        _check(kt, g)
        if device == "gpu" and kt._queue is not None:
            units, counts = kt._queue
            assert bool((units == -1).all()) and bool((counts == 0).all())

    for _ in range(8):
        pick = rng.choice(len(s), int(rng.integers(1, 40)), replace=False)
        gone = ([s[i] for i in pick], [d[i] for i in pick])
        step(g.delete_edges(arr(device, gone[0]), arr(device, gone[1])))
        step(g.insert_edges(arr(device, gone[0]), arr(device, gone[1])))
    assert ("static" in paths) if units != 1 << 22 else (paths == {"dynamic"}), paths


def _with_hubs() -> tuple[list[int], list[int]]:
    """The lattice plus two hubs, each adjacent to a third of it and to the other."""
    s, d = _lattice()
    hubs = (W * H, W * H + 1)
    for hub, start in zip(hubs, (0, W * H // 3)):
        for x in range(start, start + W * H // 3):
            s.append(x)
            d.append(hub)
    s.append(hubs[0])
    d.append(hubs[1])
    return s, d


@pytest.mark.parametrize("light_max", [0, 6, 1 << 20])
def test_descent_by_list_length(device, light_max, monkeypatch):
    """The lattice with two hubs (each adjacent to a third of the lattice and to each other)
    loses and gets back random edges, hub edges among them. GPU: host-driven rounds, the
    descent's h-index split by list length on every worklist (light_max 0: every edge a
    block; 6: lattice edges a warp, hub edges a block; huge: every edge a warp)."""
    if device == "cpu" and light_max != 0:
        pytest.skip("the GPU version's h-index split")
    _use_driver(device, "device" if device == "cpu" else "rounds", monkeypatch)
    if device == "gpu":
        from hornet.algos.ktruss import dynamic_gpu_rounds
        monkeypatch.setattr(dynamic_gpu_rounds, "HINDEX_SPLIT_MIN", 0)
        monkeypatch.setattr(dynamic_gpu_rounds, "HINDEX_LIGHT_MAX", light_max)
    rng = np.random.default_rng(7)
    s, d = _with_hubs()
    g = hornet.Graph(directed=False, device=device)
    g.insert_edges(arr(device, s), arr(device, d))
    kt = DynamicTruss(g, **MODES["dynamic"])
    _check(kt, g)
    for step in range(6):
        pick = rng.choice(len(s), int(rng.integers(1, 12)), replace=False)
        gone = ([s[i] for i in pick], [d[i] for i in pick])
        kt.update(g.delete_edges(arr(device, gone[0]), arr(device, gone[1])))
        assert kt.stats["path"] == "dynamic"
        _check(kt, g)
        kt.update(g.insert_edges(arr(device, gone[0]), arr(device, gone[1])))
        _check(kt, g)


@pytest.mark.parametrize("peel", ["async", "async-4-blocks"])
@pytest.mark.parametrize("split", [True, False])
def test_async_descent_on_long_lists(device, split, peel, monkeypatch):
    """A dense random graph (90 vertices, 85% of the pairs: every list longer than 64, so the
    GPU's split descent takes every edge in two or more warps, each entry testing one level)
    under random deletions and re-insertions of 1 to 120 edges, ko_scan's phases
    asynchronous (``peel``: see _use_peel). Exact and a k-order after every batch, every
    update on the dynamic path."""
    if device == "cpu" and not split:
        pytest.skip("the GPU version's split descent")
    _use_driver(device, "device", monkeypatch)
    _use_peel(device, peel, monkeypatch)
    if device == "gpu":
        from hornet.algos.ktruss import dynamic_gpu
        monkeypatch.setattr(dynamic_gpu, "ASYNC_DESCENT_SPLIT", split)
    rng = np.random.default_rng(5)
    n = 90
    iu = np.triu_indices(n, 1)
    keep = rng.random(iu[0].shape[0]) < 0.85
    s, d = iu[0][keep].tolist(), iu[1][keep].tolist()
    g = hornet.Graph(directed=False, device=device)
    g.insert_edges(arr(device, s), arr(device, d))
    kt = DynamicTruss(g, **MODES["dynamic"])
    _check(kt, g)
    for _ in range(5):
        pick = rng.choice(len(s), int(rng.integers(1, 120)), replace=False)
        gone = ([s[i] for i in pick], [d[i] for i in pick])
        for apply in (g.delete_edges, g.insert_edges):
            kt.update(apply(arr(device, gone[0]), arr(device, gone[1])))
            assert kt.stats["path"] == "dynamic"
            _check(kt, g)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")
@pytest.mark.parametrize("peel", ["async", "async-4-blocks"])
def test_async_phases_stopped_by_deadline(peel, monkeypatch):
    """ko_scan's asynchronous phases stop at the update's deadline, also in warps that never
    wait for work (``ks_serve`` checks the stop every KSQ_CHECK units): on the dense random
    graph of test_async_descent_on_long_lists, every other batch (deletions and
    re-insertions) gets a deadline already past, and falls back to the static
    decomposition wherever its launch stopped; the batches between them take the dynamic
    path from the queue the stopped one left. Exact and a k-order after every batch."""
    import time
    _use_driver("gpu", "device", monkeypatch)
    _use_peel("gpu", peel, monkeypatch)
    rng = np.random.default_rng(9)
    n = 90
    iu = np.triu_indices(n, 1)
    keep = rng.random(iu[0].shape[0]) < 0.85
    s, d = iu[0][keep].tolist(), iu[1][keep].tolist()
    g = hornet.Graph(directed=False, device="gpu")
    g.insert_edges(arr("gpu", s), arr("gpu", d))
    kt = DynamicTruss(g, **MODES["dynamic"])
    budget = kt._budget
    late = [False]
    kt._budget = lambda: ((time.perf_counter() - 1.0, budget()[1]) if late[0] else budget())
    paths = []
    for i in range(8):
        pick = rng.choice(len(s), int(rng.integers(60, 200)), replace=False)
        gone = ([s[j] for j in pick], [d[j] for j in pick])
        late[0] = i % 2 == 0
        for apply in (g.delete_edges, g.insert_edges):
            kt.update(apply(arr("gpu", gone[0]), arr("gpu", gone[1])))
            if late[0]:
                paths.append(kt.stats["path"])
            else:
                assert kt.stats["path"] == "dynamic"
            _check(kt, g)
    assert "static" in paths
