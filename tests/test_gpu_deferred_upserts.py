"""Deferred GPU upserts (``Graph.deferred_upsert``, hornet.batch.deferred_path): one deferred
batch inserts the new pairs and rewrites the present ones' properties. Against a CPU graph
that makes the two calls it stands for (update_edges, then insert_edges, of the same batch):
the same inserted and updated changes (new and previous values, read at once or batches
later), edge sets, properties and degrees; stalled batches run again in order; plain
inserts, deletes and queries between pending upserts; a weighted stream's replay."""
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


def _same_update(a, b):
    """``a`` (an upsert's update) equals ``b`` (update_edges'), an empty ``b`` included."""
    same_change(a, b)
    for name in b.properties:
        assert np.array_equal(to_host(a.previous[name]), to_host(b.previous[name])), name


def _graphs(tiny: bool):
    kw = dict(directed=True, edge_properties=PROPS, block_array_edges=1 << 10)
    return deferring_graph("gpu", tiny, **kw), hornet.Graph(device="cpu", **kw)


@pytest.mark.parametrize("tiny", [False, True])
def test_upserts_match_update_then_insert(tiny):
    rng = np.random.default_rng(41 + tiny)
    gpu, cpu = _graphs(tiny)
    late, upserts = [], 0
    for step in range(48):
        s, d = step_batch(rng, step, SMALL_ENTRIES if step % 2 else 900)
        m = s.shape[0]
        if step % 5 == 3:                           # int32 host ids
            s, d = s.astype(np.int32), d.astype(np.int32)
        if step % 3 and cpu.num_edges:              # present edges in the batch
            es, ed = cpu.edges()
            k = min(es.size, m // 2)
            pick = rng.choice(es.size, size=k, replace=False)
            s[:k], d[:k] = es[pick], ed[pick]
        props = step_properties(rng, m)
        kind = rng.random()
        if kind < 0.7:
            got = gpu.deferred_upsert(s, d, props)
            assert got is not None
            upserts += 1
            b_upd = cpu.update_edges(s, d, **props)
            b_ins = cpu.insert_edges(s, d, **props)
            if step % 2:
                late.append((got, (b_ins, b_upd)))
            else:
                same_change(got[0], b_ins)
                _same_update(got[1], b_upd)
        elif kind < 0.85:                           # a plain deferred insert between them
            late.append(((gpu.insert_edges(s, d, **props), None),
                         (cpu.insert_edges(s, d, **props), None)))
        else:
            es, ed = cpu.edges()
            k = min(es.size, m)
            pick = rng.choice(es.size, size=k, replace=False) if es.size else np.empty(0, int)
            s, d = np.r_[es[pick], s[: m - k]], np.r_[ed[pick], d[: m - k]]
            same_change(gpu.delete_edges(s, d), cpu.delete_edges(s, d))
        if step % 8 == 7:                           # queries with batches pending
            v = np.arange(min(cpu.num_vertices, 300))
            assert np.array_equal(to_host(gpu.degree(v)), to_host(cpu.degree(v)))
    for (a_ins, a_upd), (b_ins, b_upd) in late:
        same_change(a_ins, b_ins)
        if b_upd is not None:
            _same_update(a_upd, b_upd)
    same_graph(gpu, cpu)
    deferred_consistent(gpu, tiny)
    assert upserts > 20


def test_chunked_upserts_match_update_then_insert(monkeypatch):
    """Upserts of more pairs than one small batch holds, as chunks of disjoint sources (the
    grid prepare off): merged changes equal to the two calls'; a batch whose sources cannot
    be spread over CHUNKS small batches (a hub) is not taken."""
    from hornet.batch import deferred_path
    from hornet.batch.deferred_path import CHUNKS, MergedUpdate
    monkeypatch.setattr(deferred_path, "GRID_PREPARE", False)
    rng = np.random.default_rng(47)
    gpu, cpu = _graphs(False)
    merged = 0
    for step in range(10):
        m = int(rng.integers(SMALL_ENTRIES + 1, CHUNKS * SMALL_ENTRIES * 9 // 10))
        s, d = rng.integers(0, 300 + 200 * step, m), rng.integers(0, 300 + 200 * step, m)
        s[m // 2: m // 2 + 50], d[m // 2: m // 2 + 50] = s[:50], d[:50]   # repeats
        if cpu.num_edges:
            es, ed = cpu.edges()
            k = min(es.size, m // 3)
            pick = rng.choice(es.size, size=k, replace=False)
            s[-k:], d[-k:] = es[pick], ed[pick]
        props = step_properties(rng, m)
        got = gpu.deferred_upsert(s, d, props)
        assert got is not None
        merged += isinstance(got[1], MergedUpdate)
        b_upd = cpu.update_edges(s, d, **props)
        b_ins = cpu.insert_edges(s, d, **props)
        same_change(got[0], b_ins)
        _same_update(got[1], b_upd)
    hub = np.full(SMALL_ENTRIES + 10, 7)
    assert gpu.deferred_upsert(hub, np.arange(hub.shape[0]),
                               step_properties(rng, hub.shape[0])) is None
    same_graph(gpu, cpu)
    deferred_consistent(gpu)
    assert merged == 10


def test_upsert_refuses_what_it_does_not_take():
    """Undirected graphs, missing properties, device pairs, more pairs than CHUNKS small
    batches or one grid batch hold, ids out of range: None and the graph unchanged (the
    caller's two calls take them)."""
    import cupy
    g = hornet.Graph(device="gpu", directed=True, edge_properties=PROPS)
    g.defer_inserts()
    s, d = np.array([0, 1, 2]), np.array([1, 2, 3])
    full = step_properties(np.random.default_rng(0), 3)
    assert g.deferred_upsert(s, d, {"w": full["w"]}) is None
    assert g.deferred_upsert(cupy.asarray(s), cupy.asarray(d), full) is None
    from hornet.batch.deferred_path import CHUNKS, upsert_pairs
    big = np.arange(max(CHUNKS * SMALL_ENTRIES, upsert_pairs(g)) + 1)
    assert g.deferred_upsert(big, big + 1, step_properties(np.random.default_rng(1),
                                                           big.shape[0])) is None
    assert g.deferred_upsert(np.array([-1, 2]), np.array([1, 2]),
                             step_properties(np.random.default_rng(2), 2)) is None
    assert g.num_edges == 0
    u = hornet.Graph(device="gpu", directed=False, edge_properties=PROPS)
    u.defer_inserts()
    assert u.deferred_upsert(s, d, full) is None
    ins, upd = g.deferred_upsert(s, d, full)
    assert len(ins) == 3 and len(upd) == 0 and g.num_edges == 3


@needs_data
@pytest.mark.parametrize("window", [None, 20000])
def test_weighted_replay_matches_cpu(window):
    """A weighted stream's GPU replay (its batches upserted) gives the CPU replay's rows and
    final graph; with verification every batch is checked against the reference."""
    from bench.common import DATA
    from streams.replay import replay
    path = sorted(DATA.glob("soc-sign-bitcoinotc*"))[0]
    cpu = replay(path, batch_size=1000, device="cpu", algos="none", window=window)
    gpu = replay(path, batch_size=1000, device="gpu", algos="none", window=window)
    for k in ("inserted", "deleted", "edges", "vertices"):
        assert np.array_equal(np.asarray(cpu[k]), np.asarray(gpu[k])), k
    checked = replay(path, batch_size=700, device="gpu", algos="none", max_events=15000,
                     verify=True, window=window)
    assert checked.summary["inserted"] > 0
