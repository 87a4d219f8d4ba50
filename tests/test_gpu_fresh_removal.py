"""GPU deletes that move their long lists to fresh blocks (hornet.batch.planned.FRESH_MIN,
hornet.batch.gpu.plan.MODE_FRESH): the removal writes those lists' survivors from the old
block into the new one. The same changes and graphs as the CPU backend, lists of every
length (one thread, one warp, many blocks a list), repeated and absent pairs, and a take
that finds no room (the lists then lose their entries in place)."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from conftest import HAS_GPU
from hornet.testing import to_host
from small_batch_checks import same_graph

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]


def _graph(device, directed=False):
    g = hornet.Graph(directed=directed, device=device, block_array_edges=512)
    g._medium_batches = False
    g._small_batches = False             # (every GPU batch takes the plan)
    return g


def _hub_pairs(rng, n, m):
    """A few hubs of tens of thousands of entries, some lists of hundreds, many short."""
    s, d = rng.integers(0, n, m), rng.integers(0, n, m)
    s[: m // 4] = rng.integers(0, 4, m // 4)
    s[m // 4: m // 2] = rng.integers(4, 200, m // 2 - m // 4)
    return s, d


@pytest.mark.parametrize("directed, fresh_min, queued, ahead", [
    (False, 2048, True, True), (True, 64, True, True), (False, 1, False, False),
    (False, 8192, True, True), (False, 2048, False, False), (True, 512, True, False)])
def test_deletes_into_fresh_blocks_match_the_cpu(directed, fresh_min, queued, ahead,
                                                 monkeypatch):
    """Deletes of 0.1% to 60% of the edges, lists of more than ``fresh_min`` entries moved
    to fresh blocks, against the CPU graph edge for edge and change for change (the huge
    lists' pieces one warp's, or with 8192 one block's); the blocks taken and the removal
    queued before the read-back (``queued``), or after it; ``ahead`` False: the device's
    free counts are taken as stale, and a queued fresh delete takes its blocks after the
    read-back."""
    import cupy
    import hornet.batch.planned as planned
    from hornet.batch.gpu import plan as plan_module
    from hornet.memory import gpu_take
    monkeypatch.setattr(planned, "FRESH_MIN", fresh_min)
    monkeypatch.setattr(planned, "FRESH_ENTRIES", 1)
    monkeypatch.setattr(planned, "FRESH_QUEUED", queued)
    if not ahead:
        monkeypatch.setattr(gpu_take, "take_ahead", lambda *a, **k: None)
    monkeypatch.setattr(planned, "_refits", lambda g, p: False)   # (a refit plans again)
    monkeypatch.setattr(planned, "_may_refit", lambda g, e: False)
    fresh_queued = []
    original_queue = planned._queue_fresh_removal
    monkeypatch.setattr(planned, "_queue_fresh_removal",
                        lambda *a: fresh_queued.append(1) or original_queue(*a))
    placed = []
    original_place = planned.place_moves
    monkeypatch.setattr(planned, "place_moves",
                        lambda p, *a: placed.append(p.moves) or original_place(p, *a))
    modes = []
    original = plan_module._launch_plan
    monkeypatch.setattr(plan_module, "_launch_plan",
                        lambda p, mode, *a, **k: modes.append(mode) or original(p, mode, *a,
                                                                                  **k))
    rng = np.random.default_rng(21)
    cpu, gpu = _graph("cpu", directed), _graph("gpu", directed)
    s, d = _hub_pairs(rng, 60_000, 400_000)
    for g in (cpu, gpu):
        g.insert_edges(s, d)
    for step in range(6):
        es, ed = cpu.edges()
        share = (0.002, 0.02, 0.3, 0.05, 0.6, 0.01)[step]
        pick = rng.choice(es.size, size=max(1, int(es.size * share) // 2), replace=False)
        bs = np.r_[es[pick], rng.integers(0, 60_000, 500)]   # present edges and absent ones
        bd = np.r_[ed[pick], rng.integers(0, 60_000, 500)]
        if step % 2:
            bs, bd = bs[::-1].copy(), bd[::-1].copy()          # repeats, either direction
            bs, bd = np.r_[bs, bs[:100]], np.r_[bd, bd[:100]]
        want = cpu.delete_edges(bs, bd)
        got = gpu.delete_edges(cupy.asarray(bs), cupy.asarray(bd))
        assert np.array_equal(to_host(got.src), want.src)
        assert np.array_equal(to_host(got.dst), want.dst)
        same_graph(cpu, gpu)
        gpu.check()
        s2, d2 = rng.integers(0, 60_000, 3000), rng.integers(0, 60_000, 3000)
        _ = cpu.insert_edges(s2, d2), gpu.insert_edges(cupy.asarray(s2), cupy.asarray(d2))
        same_graph(cpu, gpu)
    assert plan_module.MODE_FRESH in modes
    assert len(fresh_queued) == (6 if queued else 0)
    assert any(placed) or (queued and ahead)      # (placed by the device when taken ahead)


def test_a_fresh_delete_without_room_removes_in_place(monkeypatch):
    """Should no block be found for the fresh lists, the delete removes every list's entries
    in place: same changes and graph as the CPU's, and the graph goes on."""
    import hornet.batch.planned as planned
    from hornet.memory.manager import DeviceMemoryError
    monkeypatch.setattr(planned, "FRESH_MIN", 256)
    monkeypatch.setattr(planned, "FRESH_ENTRIES", 1)
    rng = np.random.default_rng(22)
    cpu, gpu = _graph("cpu"), _graph("gpu")
    s, d = _hub_pairs(rng, 20_000, 200_000)
    for g in (cpu, gpu):
        g.insert_edges(s, d)
    takes = []

    def refuse(*a, **k):
        takes.append(1)
        raise DeviceMemoryError("no room (test)")
    original = planned._take_blocks
    monkeypatch.setattr(planned, "_take_blocks", refuse)
    es, ed = cpu.edges()
    pick = rng.choice(es.size, size=es.size // 10, replace=False)
    want = cpu.delete_edges(es[pick], ed[pick])
    got = gpu.delete_edges(es[pick], ed[pick])
    assert takes, "no list moved"
    assert np.array_equal(to_host(got.src), want.src)
    assert np.array_equal(to_host(got.dst), want.dst)
    same_graph(cpu, gpu)
    gpu.check()
    monkeypatch.setattr(planned, "_take_blocks", original)
    es, ed = cpu.edges()
    pick = rng.choice(es.size, size=es.size // 3, replace=False)
    _ = cpu.delete_edges(es[pick], ed[pick]), gpu.delete_edges(es[pick], ed[pick])
    same_graph(cpu, gpu)
    gpu.check()


@pytest.mark.parametrize("fresh_min", [64, 4096, 8192])
def test_fresh_removals_of_lists_of_every_shape(fresh_min, monkeypatch):
    """The removal shapes' lists (two hubs, warp-sized and short lists; dense runs of removed
    entries across piece boundaries, first entries, lists emptied) deleted into fresh
    blocks, against the CPU graph."""
    import hornet.batch.planned as planned
    from test_gpu_removal_shapes import _lists, _picks
    monkeypatch.setattr(planned, "FRESH_MIN", fresh_min)
    monkeypatch.setattr(planned, "FRESH_ENTRIES", 1)
    monkeypatch.setattr(planned, "_refits", lambda g, p: False)
    monkeypatch.setattr(planned, "_may_refit", lambda g, e: False)
    rng = np.random.default_rng(23)
    cpu, gpu = _graph("cpu", True), _graph("gpu", True)
    s, d = _lists(rng)
    for g in (cpu, gpu):
        g.insert_edges(s, d)
    for _ in range(2):
        es, ed = cpu.edges()
        pick = _picks(rng, es)
        want = cpu.delete_edges(es[pick], ed[pick])
        got = gpu.delete_edges(es[pick], ed[pick])
        assert np.array_equal(to_host(got.src), want.src)
        assert np.array_equal(to_host(got.dst), want.dst)
        same_graph(cpu, gpu)
        gpu.check()
