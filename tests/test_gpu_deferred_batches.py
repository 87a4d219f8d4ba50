"""Deferred small GPU inserts (hornet.batch.deferred_path) against the small path that waits
for each batch and against the CPU backend: the same changes (read at once or batches later),
edge sets, properties and degrees; stalled batches (a ring of the block cache short) run
again in order; queries between pending batches see them."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from conftest import HAS_GPU, needs_data
from hornet.batch.small_layout import SMALL_ENTRIES
from hornet.testing import to_host
from small_batch_checks import (PROPS, deferred_consistent, deferring_graph, same_change,
                                same_graph, step_batch, step_properties)

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]


def _graphs(directed, props=True, tiny=False):
    kw = dict(directed=directed, edge_properties=PROPS if props else None,
              block_array_edges=1 << 10)
    return (deferring_graph("gpu", tiny, **kw), hornet.Graph(device="gpu", **kw),
            hornet.Graph(device="cpu", **kw))


@pytest.mark.parametrize("tiny", [False, True])
@pytest.mark.parametrize("directed", [False, True])
def test_deferred_inserts_match_waiting_small_path(directed, tiny, small_path_counter):
    import cupy
    rng = np.random.default_rng(11 + directed + 2 * tiny)
    deferred, waiting, cpu = _graphs(directed, tiny=tiny)
    max_pairs = SMALL_ENTRIES // (1 if directed else 2)
    late = []                                       # changes read batches later
    taken = 0
    for step in range(48):
        s, d = step_batch(rng, step, max_pairs)
        m = s.shape[0]
        if step % 5 == 3:                           # int32 host ids, no properties
            s, d = s.astype(np.int32), d.astype(np.int32)
        if rng.random() < 0.75:
            props = step_properties(rng, m) if step % 3 else {}
            before = deferred._deferred_count
            a = deferred.insert_edges(s, d, **props)
            taken += deferred._deferred_count > before
            b = waiting.insert_edges(cupy.asarray(s), cupy.asarray(d), **props)
            c = cpu.insert_edges(s, d, **props)
            if step % 2:
                late.append((a, b))
            else:
                same_change(a, b)
            same_change(c, b)
        else:
            es, ed = cpu.edges()
            k = min(es.size, m)
            pick = rng.choice(es.size, size=k, replace=False) if es.size else np.empty(0, int)
            s, d = np.r_[es[pick], s[: m - k]], np.r_[ed[pick], d[: m - k]]
            same_change(deferred.delete_edges(s, d), waiting.delete_edges(s, d))
            cpu.delete_edges(s, d)
        if step % 8 == 7:                           # device queries with batches pending
            v = np.arange(min(cpu.num_vertices, 300))
            assert np.array_equal(to_host(deferred.degree(v)), to_host(cpu.degree(v)))
            assert np.array_equal(to_host(deferred.has_edges(s[:50], d[:50])),
                                  to_host(cpu.has_edges(s[:50], d[:50])))
    for a, b in late:
        same_change(a, b)
    same_graph(deferred, waiting)
    same_graph(deferred, cpu)
    deferred_consistent(deferred, tiny)
    assert taken > 10


def test_pending_changes_settle_in_order_without_reads():
    """Many deferred inserts with nothing read between them; the entry count, then every
    change, afterwards."""
    import cupy
    rng = np.random.default_rng(3)
    deferred, waiting, _ = _graphs(True, props=False)
    pairs = [(rng.integers(0, 5000, 900), rng.integers(0, 5000, 900)) for _ in range(40)]
    got = [deferred.insert_edges(s, d) for s, d in pairs]
    want = [waiting.insert_edges(cupy.asarray(s), cupy.asarray(d)) for s, d in pairs]
    assert deferred.num_edges == waiting.num_edges
    assert deferred._deferred_count > 30
    for a, b in zip(got, want):
        same_change(a, b)
        assert len(a) == len(b)
    same_graph(deferred, waiting)
    deferred.check()


@pytest.mark.parametrize("directed", [False, True])
def test_chunked_inserts_match_the_medium_path(directed, monkeypatch):
    """Batches of up to CHUNKS small batches' entries, queued as chunks (the grid prepare
    off): the same merged change (sorted; repeats across chunks, first occurrence wins) as
    one medium batch."""
    import cupy

    from hornet.batch import deferred_path
    from hornet.batch.deferred_path import MergedChange
    monkeypatch.setattr(deferred_path, "CHUNKS", 8)
    monkeypatch.setattr(deferred_path, "GRID_PREPARE", False)
    CHUNKS = 8
    rng = np.random.default_rng(21 + directed)
    deferred, waiting, _ = _graphs(directed)
    per = SMALL_ENTRIES // (1 if directed else 2)
    merged = 0
    for step in range(14):
        m = int(rng.integers(per + 1, CHUNKS * per + 1))
        s, d = rng.integers(0, 400 + 300 * step, m), rng.integers(0, 400 + 300 * step, m)
        s[m // 2: m // 2 + 50] = s[:50]             # repeats in a later chunk
        d[m // 2: m // 2 + 50] = d[:50]
        if step % 3 == 0:
            s[:m // 3] = 7                          # a hub
        props = step_properties(rng, m)
        a = deferred.insert_edges(s, d, **props)
        merged += isinstance(a, MergedChange)
        b = waiting.insert_edges(cupy.asarray(s), cupy.asarray(d), **props)
        assert len(a) == len(b)
        same_change(a, b)
        if step % 4 == 3:
            es, ed = waiting.edges()
            pick = cupy.asarray(rng.choice(es.size, size=min(es.size, 3000), replace=False))
            same_change(deferred.delete_edges(es[pick], ed[pick]),
                        waiting.delete_edges(es[pick], ed[pick]))
    same_graph(deferred, waiting)
    deferred_consistent(deferred)
    assert merged > 5


def test_refused_and_other_inputs():
    """Bad ids (host or device) refused at the call as before; unsigned ids and device
    pairs not deferred."""
    import cupy
    g = hornet.Graph(device="gpu", directed=True)
    g.defer_inserts()
    len(g.insert_edges(np.array([0, 1]), np.array([1, 2])))     # settled (queued again if
    count = g._deferred_count                                   # it stalled)
    for bad in (np.array([0, -1]), cupy.array([0, -1]), cupy.array([0, 2**31]),
                np.array([0, 2**31], np.int64)):
        with pytest.raises(hornet.BatchError):
            g.insert_edges(bad, bad[::-1].copy())
    assert g._deferred_count == count
    g.insert_edges(np.array([5], np.uint64), np.array([6], np.uint64))
    assert g._deferred_count == count
    c = g.insert_edges(cupy.array([7, 9], cupy.int32), cupy.array([8, 9], cupy.int32))
    assert g._deferred_count == count and len(c) == 2
    c = g.insert_edges(np.array([7, 10], np.int32), np.array([8, 9], np.int32))
    assert g._deferred_count == count + 1 and len(c) == 1
    assert g.num_edges == 6 and g.num_vertices == 11
    g.check()


def test_device_properties_are_the_batch_own():
    """Host pairs with device property columns: a batch queued again after a stall reads
    its own copy of the values, whatever the caller writes into its columns afterwards."""
    import cupy
    rng = np.random.default_rng(8)
    deferred, waiting, _ = _graphs(False, tiny=True)
    for step in range(30):
        s, d = step_batch(rng, step, SMALL_ENTRIES // 2)
        props = step_properties(rng, s.shape[0])
        dprops = {k: cupy.asarray(v) for k, v in props.items()}
        a = deferred.insert_edges(s, d, **dprops)
        for v in dprops.values():
            v[:] = 0
        b = waiting.insert_edges(cupy.asarray(s), cupy.asarray(d), **props)
        same_change(a, b)
    same_graph(deferred, waiting)
    deferred.check()
    assert deferred._stalls > 0


@pytest.mark.parametrize("directed", [False, True])
def test_ready_graph_matches_the_waiting_path(directed):
    """defer_inserts(ready=True): the first batches' state made up front (device state,
    rings filled, block arrays, vertex table rows without a larger id space); the same
    changes and graph as the small path that waits (itself checked against the CPU
    backend above), deletes between the inserts."""
    import cupy
    from hornet.batch import deferred_path
    rng = np.random.default_rng(21 + directed)
    deferred, waiting, _ = _graphs(directed)
    deferred.defer_inserts(ready=True)
    assert deferred._deferred.prefilled and deferred.num_vertices == 0
    assert deferred._degree.shape[0] >= deferred_path.READY_ROWS
    deferred._mm.block_cache().check()
    late = []
    for step in range(16):
        s, d = step_batch(rng, step, 700)
        props = step_properties(rng, s.shape[0])
        late.append((deferred.insert_edges(s, d, **props),
                     waiting.insert_edges(cupy.asarray(s), cupy.asarray(d), **props)))
        if step % 4 == 3:
            es, ed = (to_host(a) for a in waiting.edges())
            k = min(es.size, 80)
            same_change(deferred.delete_edges(es[:k], ed[:k]),
                        waiting.delete_edges(es[:k], ed[:k]))
    for a, b in late:
        same_change(a, b)
    assert deferred.num_vertices == waiting.num_vertices
    same_graph(deferred, waiting)
    deferred_consistent(deferred)


@pytest.mark.parametrize("tiny", [False, True])
def test_updates_between_pending_inserts(tiny):
    """update_edges with deferred inserts pending (its lookup queued behind them, made
    again when one of them stalled): the changes and graph of a graph that does not defer
    (every update on a settled graph); float32, int64 and int8 properties."""
    import cupy
    rng = np.random.default_rng(31 + tiny)
    deferred, waiting, _ = _graphs(True, tiny=tiny)
    late = []
    for step in range(30):
        s, d = step_batch(rng, step, 900)
        props = step_properties(rng, s.shape[0])
        late.append((deferred.insert_edges(s, d, **props),
                     waiting.insert_edges(cupy.asarray(s), cupy.asarray(d), **props)))
        es, ed = (to_host(a) for a in waiting.edges())
        k = min(es.size, 400)
        pick = rng.choice(es.size, size=k, replace=False) if es.size else np.empty(0, int)
        us = np.r_[es[pick], rng.integers(0, 3000, 100)]
        ud = np.r_[ed[pick], rng.integers(0, 3000, 100)]
        vals = step_properties(rng, us.shape[0])
        if step % 3 == 1:
            vals.pop("flag")
        a, b = deferred.update_edges(us, ud, **vals), waiting.update_edges(us, ud, **vals)
        same_change(a, b)
        for name in a.previous:
            assert np.array_equal(to_host(a.previous[name]), to_host(b.previous[name]))
    for a, b in late:
        same_change(a, b)
    same_graph(deferred, waiting)
    deferred_consistent(deferred, tiny)


@needs_data
def test_gpu_replay_rows_match_cpu_replay():
    """A GPU replay (deferred inserts, rows finished once their batches settle) gives the
    CPU replay's per-batch counts; the same with verification (every batch settled and
    checked)."""
    from bench.common import DATA
    from streams.replay import replay
    path = sorted(DATA.glob("CollegeMsg*"))[0]
    cpu = replay(path, batch_size=1000, device="cpu", algos="none", max_events=30000)
    gpu = replay(path, batch_size=1000, device="gpu", algos="none", max_events=30000)
    for k in ("inserted", "deleted", "edges", "vertices"):
        assert np.array_equal(np.asarray(cpu[k]), np.asarray(gpu[k])), k
    checked = replay(path, batch_size=700, device="gpu", algos="none", max_events=12000,
                     verify=True)
    assert checked.summary["inserted"] > 0
