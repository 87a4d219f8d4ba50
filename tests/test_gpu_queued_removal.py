"""GPU deletes whose removal is queued behind the plan's read-back (hornet.batch.planned:
_queue_removal): the same graphs, changes and size classes as the CPU backend and as the same
deletes with the removal launched after the read-back, lists of every length (one thread,
one warp, many blocks a list), lists that move, and a take that fails after the removal; and
planned merges into lists of the same shapes."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from conftest import HAS_GPU
from hornet.testing import to_host
from small_batch_checks import same_graph as _same

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]


@pytest.fixture(autouse=True)
def _queue_every_delete(monkeypatch):
    """Every planned delete queues its removal (also those the memory policy may refit),
    unless a test says otherwise."""
    import hornet.batch.planned as planned
    monkeypatch.setattr(planned, "QUEUED_UNLESS_REFIT", False)


def _graph(device, directed=False):
    g = hornet.Graph(directed=directed, device=device, block_array_edges=512)
    g._medium_batches = False
    g._small_batches = False             # (every GPU batch takes the plan)
    return g


def _check_delete(changes, want, cpu, gpu, after):
    """The GPU deletes' changes equal the CPU's (``want``); the GPU graph equals the CPU graph
    and, size classes included, the graph whose removal ran after the read-back (``after``)."""
    for change in changes:
        assert np.array_equal(to_host(change.src), want.src)
        assert np.array_equal(to_host(change.dst), want.dst)
    _same(cpu, gpu)
    _same(after, gpu, size_classes=True)
    gpu.check()


def _hub_pairs(rng, n, m):
    """Pairs whose sources reach lists of every length: a few hubs of tens of thousands of
    entries (removed by many blocks a list), some of hundreds (one warp) and many short
    lists (one thread)."""
    s, d = rng.integers(0, n, m), rng.integers(0, n, m)
    s[: m // 4] = rng.integers(0, 4, m // 4)            # hubs
    s[m // 4: m // 2] = rng.integers(4, 200, m // 2 - m // 4)
    return s, d


@pytest.mark.parametrize("directed, copy, side", [(False, True, True), (True, True, False),
                                                  (False, False, False)])
def test_queued_removals_match_the_cpu_and_the_removal_after_the_read_back(directed, copy,
                                                                          side, monkeypatch):
    """Deletes of 0.1% to 60% of the edges, the removal queued, against the CPU and the
    removal after the read-back; the lists that move copied by one kernel (``copy``) or by a
    removal of nothing, the removal launched from the plan's addresses (``copy``; the short
    and medium lists on side streams with ``side``) or through remove_lists."""
    import cupy
    import hornet.batch.planned as planned
    from hornet.batch.gpu import side_streams
    monkeypatch.setattr(planned, "QUEUED_COPY", copy)
    monkeypatch.setattr(planned, "QUEUED_LAUNCH", copy)
    monkeypatch.setattr(side_streams, "ENABLED", side)
    copied = []
    original_copy = planned.copy_lists
    monkeypatch.setattr(planned, "copy_lists",
                        lambda *a, **k: copied.append(a[4]) or original_copy(*a, **k))
    queued = []
    original = planned._queue_removal
    monkeypatch.setattr(planned, "_queue_removal",
                        lambda *a, **k: queued.append(1) or original(*a, **k))
    rng = np.random.default_rng(11)
    cpu, gpu, after = _graph("cpu", directed), _graph("gpu", directed), _graph("gpu", directed)
    s, d = _hub_pairs(rng, 60_000, 400_000)
    for g in (cpu, gpu, after):
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
        monkeypatch.setattr(planned, "QUEUED_REMOVAL", False)
        calls = len(queued)
        ref = after.delete_edges(cupy.asarray(bs), cupy.asarray(bd))
        assert len(queued) == calls                          # the removal after the read-back
        monkeypatch.setattr(planned, "QUEUED_REMOVAL", True)
        _check_delete((got, ref), want, cpu, gpu, after)
    assert len(queued) == 6
    assert bool(copied) == copy and all(m > 0 for m in copied)


def test_a_take_that_fails_after_a_queued_removal_keeps_the_lists_in_their_blocks(
        monkeypatch):
    """The removal is done when the blocks of the lists that move are taken; should no
    block be found, the lists keep their blocks: the delete still happens, the graph is
    valid and equals the CPU's edge for edge."""
    import hornet.batch.planned as planned
    from hornet.memory.manager import DeviceMemoryError
    rng = np.random.default_rng(12)
    cpu, gpu = _graph("cpu"), _graph("gpu")
    s, d = _hub_pairs(rng, 20_000, 200_000)
    for g in (cpu, gpu):
        g.insert_edges(s, d)
    takes = []

    def refuse(*a, **k):
        takes.append(1)
        raise DeviceMemoryError("no room (test)")
    monkeypatch.setattr(planned, "_take_blocks", refuse)
    es, ed = cpu.edges()
    hubs = np.flatnonzero(np.isin(es, np.arange(4)))
    pick = hubs[rng.random(hubs.size) < 0.9]                # the hubs shrink: their lists move
    want = cpu.delete_edges(es[pick], ed[pick])
    got = gpu.delete_edges(es[pick], ed[pick])
    assert takes, "no list moved"
    assert np.array_equal(to_host(got.src), want.src)
    assert np.array_equal(to_host(got.dst), want.dst)
    _same(cpu, gpu)
    gpu.check()
    monkeypatch.undo()
    es, ed = cpu.edges()                                     # and the graph goes on
    pick = rng.choice(es.size, size=es.size // 3, replace=False)
    _ = cpu.delete_edges(es[pick], ed[pick]), gpu.delete_edges(es[pick], ed[pick])
    _same(cpu, gpu)
    gpu.check()


def test_queued_removal_of_lists_of_every_shape():
    """A directed graph whose queued delete has lists of every shape against the CPU: a hub
    losing every other entry, thousands of lists losing only their last entry (one moving
    item each), lists emptied, and a list losing its first entry only (every item moves)."""
    rng = np.random.default_rng(13)
    cpu, gpu = _graph("cpu", True), _graph("gpu", True)
    hub = np.arange(20_000, 70_000)
    s = [np.zeros(hub.size, dtype=np.int64)]
    d = [hub]
    short = np.arange(1, 4001)
    s.append(np.repeat(short, 3))
    d.append(rng.integers(5000, 20_000, short.size * 3))
    gone = np.arange(4001, 4601)
    s.append(np.repeat(gone, 5))
    d.append(rng.integers(5000, 20_000, gone.size * 5))
    s.append(np.full(3000, 4601))
    d.append(np.arange(30_000, 33_000))
    s, d = np.concatenate(s), np.concatenate(d)
    for g in (cpu, gpu):
        g.insert_edges(s, d)
    es, ed = cpu.edges()
    pick = [np.flatnonzero(es == 0)[::2]]                       # every other hub entry
    starts = np.searchsorted(es, short)
    counts = np.searchsorted(es, short, side="right") - starts
    pick.append(starts + counts - 1)                            # each short list's last
    pick.append(np.flatnonzero(np.isin(es, gone)))              # emptied lists
    pick.append(np.searchsorted(es, [4601]))                    # a first entry only
    pick = np.concatenate(pick)
    want = cpu.delete_edges(es[pick], ed[pick])
    got = gpu.delete_edges(es[pick], ed[pick])
    assert np.array_equal(to_host(got.src), want.src)
    assert np.array_equal(to_host(got.dst), want.dst)
    _same(cpu, gpu)
    gpu.check()


@pytest.mark.parametrize("side", [True, False])
def test_planned_merges_into_lists_of_every_shape_match_the_cpu(side, monkeypatch):
    """Planned inserts into lists of every shape against the CPU: hubs whose new entries fit
    their blocks (merged in place, new entries at the front, spread, and at the back), lists
    that move, short lists, absent sources, repeats and present edges; deletes between. The
    short and medium lists rewritten on side streams (``side``) or on the batch's stream."""
    import cupy
    from hornet.batch.gpu import side_streams
    monkeypatch.setattr(side_streams, "ENABLED", side)
    rng = np.random.default_rng(14)
    cpu, gpu = _graph("cpu", True), _graph("gpu", True)
    s = np.r_[np.zeros(40_000, np.int64), np.ones(20_000, np.int64), np.full(20_000, 2),
              rng.integers(3, 30_000, 60_000)]
    d = np.r_[np.arange(100_000, 140_000), np.arange(0, 40_000, 2), np.arange(20_000) * 3,
              rng.integers(0, 200_000, 60_000)]
    for g in (cpu, gpu):
        g.insert_edges(s, d)
    for step in range(4):
        parts = [(np.zeros(5000, np.int64), rng.integers(0, 100_000, 5000)),   # front of 0
                 (np.ones(8000, np.int64), rng.integers(0, 40_000, 8000)),      # spread in 1
                 (np.full(3000, 2), rng.integers(60_000, 90_000, 3000)),        # back of 2
                 (rng.integers(3, 40_000, 30_000), rng.integers(0, 200_000, 30_000))]
        bs = np.concatenate([p[0] for p in parts])
        bd = np.concatenate([p[1] for p in parts])
        bs, bd = np.r_[bs, bs[:500]], np.r_[bd, bd[:500]]               # repeats
        want = cpu.insert_edges(bs, bd)
        got = gpu.insert_edges(cupy.asarray(bs), cupy.asarray(bd))
        assert np.array_equal(to_host(got.src), want.src)
        assert np.array_equal(to_host(got.dst), want.dst)
        _same(cpu, gpu)
        gpu.check()
        es, ed = cpu.edges()                                               # and some go
        pick = rng.choice(es.size, size=es.size // 20, replace=False)
        _ = cpu.delete_edges(es[pick], ed[pick]), gpu.delete_edges(es[pick], ed[pick])
        _same(cpu, gpu)


def test_deletes_that_may_refit_are_not_queued(monkeypatch):
    """With QUEUED_UNLESS_REFIT, a delete that the memory policy refits never has its
    removal queued (the host's bound before the plan covers every refit); deletes that
    cannot refit are queued; graphs, changes and size classes equal the CPU's."""
    import cupy
    import hornet.batch.planned as planned
    monkeypatch.setattr(planned, "QUEUED_UNLESS_REFIT", True)
    calls = []
    for name in ("_queue_removal", "refit_plan"):
        original = getattr(planned, name)
        monkeypatch.setattr(planned, name, lambda *a, _o=original, _n=name, **k:
                            calls.append(_n) or _o(*a, **k))
    rng = np.random.default_rng(15)
    cpu, gpu, after = _graph("cpu"), _graph("gpu"), _graph("gpu")
    s, d = _hub_pairs(rng, 40_000, 300_000)
    for g in (cpu, gpu, after):
        g.insert_edges(s, d)
    both = queued = refits = 0
    for share in (0.002, 0.3, 0.01, 0.6, 0.002, 0.2):
        es, ed = cpu.edges()
        pick = rng.choice(es.size, size=max(1, int(es.size * share) // 2), replace=False)
        bs, bd = cupy.asarray(es[pick]), cupy.asarray(ed[pick])
        want = cpu.delete_edges(es[pick], ed[pick])
        monkeypatch.setattr(planned, "QUEUED_REMOVAL", False)
        after.delete_edges(bs, bd)                       # the removal after the read-back
        monkeypatch.setattr(planned, "QUEUED_REMOVAL", True)
        calls.clear()
        got = gpu.delete_edges(bs, bd)
        _check_delete((got,), want, cpu, gpu, after)
        q, r = "_queue_removal" in calls, "refit_plan" in calls
        both += q and r
        queued += q
        refits += r
    assert both == 0
    assert queued and refits, (queued, refits)
