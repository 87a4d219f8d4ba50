"""hornet.memory.compaction_bound: a delete's refit and compaction skipped without reading its
release's counts only when they would do nothing. CPU: before every delete's compaction, a
"nothing" verdict is checked against what the compaction then does (lists, classes, blocks
and the manager's statistics unchanged). GPU: graphs with and without the shortcut stay
equal (edges, size classes, memory statistics) batch after batch, through deletes that
loosen the lists and free room and deletes too small to, and the shortcut is taken."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from conftest import HAS_GPU
from hornet.batch import pipeline
from hornet.memory.compaction_bound import settles_nothing
from hornet.testing import to_host
from small_batch_checks import same_graph


def _batches(rng, n, steps):
    """(kind, src, dst): inserts of random pairs, deletes of some of the edges inserted (a
    few large ones, which loosen lists and free room)."""
    live = []
    for step in range(steps):
        if step % 3 == 2 and live:
            s, d = np.concatenate([x for x, _ in live]), np.concatenate([y for _, y in live])
            share = 0.9 if step % 9 == 8 else 0.2
            pick = rng.random(s.size) < share
            yield "delete", s[pick], d[pick]
            live = [(s[~pick], d[~pick])]
        else:
            m = int(rng.integers(1000, 20_000))
            s, d = rng.integers(0, n, m), rng.integers(0, n, m)
            s[: m // 3] = rng.integers(0, 50, m // 3)            # lists of every length
            live.append((s, d))
            yield "insert", s, d


def _churn(rng, n, steps):
    """(kind, src, dst): a graph of 100,000 random pairs (a third in 50 lists), then deletes
    of 1% to 3% of the edges inserted (too few to loosen the lists) and inserts of as many."""
    s, d = rng.integers(0, n, 100_000), rng.integers(0, n, 100_000)
    s[:30_000] = rng.integers(0, 50, 30_000)
    live_s, live_d = s, d
    yield "insert", s, d
    for step in range(steps):
        if step % 2:
            m = int(rng.integers(1000, 3000))
            s, d = rng.integers(0, n, m), rng.integers(0, n, m)
            live_s, live_d = np.concatenate([live_s, s]), np.concatenate([live_d, d])
            yield "insert", s, d
        else:
            pick = rng.random(live_s.size) < rng.uniform(0.01, 0.03)
            yield "delete", live_s[pick], live_d[pick]
            live_s, live_d = live_s[~pick], live_d[~pick]


def test_a_nothing_verdict_is_what_the_compaction_does(monkeypatch):
    verdicts = []
    original = pipeline.compact_memory

    def checked(g, sources=None, released_slots=None):
        mm = g._mm
        nothing = settles_nothing(mm, mm.list_fit, g._entries, 0, g._n)
        verdicts.append(nothing)
        before = (g._edge_ptr[:g._n].copy(), g._size_class[:g._n].copy(), mm.stats())
        original(g, sources, released_slots)
        if nothing:
            assert np.array_equal(before[0], g._edge_ptr[:g._n])
            assert np.array_equal(before[1], g._size_class[:g._n])
            assert before[2] == mm.stats()
    monkeypatch.setattr(pipeline, "compact_memory", checked)
    rng = np.random.default_rng(5)
    n = 1 << 17
    g = hornet.Graph(directed=False, device="cpu", num_vertices=n, block_array_edges=1 << 12)
    for kind, s, d in _batches(rng, n, 27):
        (g.insert_edges if kind == "insert" else g.delete_edges)(s, d)
    g.check()
    assert True in verdicts and False in verdicts


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")
def test_gpu_deletes_that_skip_the_wait_leave_the_same_graphs(monkeypatch):
    import hornet.memory.compaction_bound as bound
    taken = []
    original = bound.settles_nothing

    def checked(mm, fit, entries, released_slots, rows):
        """The verdict, and where it says nothing would be settled, the proof on the same
        graph: once the counts land the lists are not loose, and compacting the touched
        classes moves, frees and flushes nothing."""
        verdict = original(mm, fit, entries, released_slots, rows)
        taken.append(verdict)
        if verdict:
            assert not fit.loose(mm, entries)                       # (waits for the counts)
            before = mm.stats()
            old, _ = mm.compact_touched(rows=rows)
            assert old.size == 0 and mm.stats() == before
        return verdict
    monkeypatch.setattr(bound, "settles_nothing", checked)
    import hornet.batch.planned as planned
    monkeypatch.setattr(bound, "MIN_ENTRIES", 0)                # every planned delete
    monkeypatch.setattr(planned, "BOUND_MIN_ENTRIES", 0)
    rng = np.random.default_rng(6)
    n = 1 << 22                      # many rows: compacting must give back much room
    graphs = [hornet.Graph(directed=False, device="gpu", num_vertices=n,
                           block_array_edges=1 << 12) for _ in range(2)]
    for g in graphs:
        g._small_batches = g._medium_batches = False           # every batch planned
    batches = list(_churn(rng, n, 16)) + list(_batches(rng, n, 18))
    for kind, s, d in batches:
        changes = []
        for k, g in enumerate(graphs):
            if k == 1:                                           # the reference: no shortcut
                monkeypatch.setattr(bound, "settles_nothing", lambda *a, **k: False)
            changes.append((g.insert_edges if kind == "insert" else g.delete_edges)(s, d))
            monkeypatch.setattr(bound, "settles_nothing", checked)
        assert np.array_equal(to_host(changes[0].src), to_host(changes[1].src))
        assert np.array_equal(to_host(changes[0].dst), to_host(changes[1].dst))
        same_graph(graphs[0], graphs[1], size_classes=True)
        # (the two graphs' block arrays are not compared: device takes may pick other free
        # blocks in each, so their layouts, and what compaction finds in them, can differ
        # with or without the shortcut; the verdicts are checked on their own graph above)
    for g in graphs:
        g.check()
    assert True in taken
