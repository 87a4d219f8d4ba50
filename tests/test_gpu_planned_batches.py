"""GPU batches planned on the device (hornet.batch.planned): the same graphs and changes as the
CPU backend and as the GPU's general pipeline, batch by batch, and the same refusals."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from conftest import HAS_GPU
from hornet.batch.validate import BatchError
from hornet.testing import to_host

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]


def _graph(device, directed, planned=True, **kw):
    g = hornet.Graph(directed=directed, device=device, block_array_edges=512, **kw)
    g._planned_batches = planned
    g._medium_batches = False            # (tests/test_gpu_medium_batches.py tests that path)
    return g


def _same(a, b):
    sa, da = a.edges()
    sb, db = b.edges()
    assert np.array_equal(to_host(sa), to_host(sb)) and np.array_equal(to_host(da), to_host(db))
    assert np.array_equal(to_host(a.degree()), to_host(b.degree()))


def _same_change(a, b):
    assert np.array_equal(to_host(a.src), to_host(b.src))
    assert np.array_equal(to_host(a.dst), to_host(b.dst))
    assert a.self_loops_skipped == b.self_loops_skipped
    for k in a.properties:
        assert np.array_equal(to_host(a.properties[k]), to_host(b.properties[k]))


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("ids", [np.int64, np.int32])
def test_planned_batches_match_cpu_and_the_general_pipeline(directed, ids):
    import cupy
    rng = np.random.default_rng(5)
    graphs = [_graph("cpu", directed), _graph("gpu", directed),
              _graph("gpu", directed, planned=False)]
    edges = set()                                    # an independent oracle of the edge set
    for step in range(24):
        n = 3000 + 500 * step                        # the id space grows with the batches
        m = int(rng.integers(2500, 30000))
        s, d = rng.integers(0, n, m), rng.integers(0, n, m)
        if step % 5 == 4:
            s[: m // 2] = 3                          # a hub outgrows its blocks
        if step % 4 == 1:
            s[:50] = d[:50]                          # self-loops
            s[m // 2:], d[m // 2:] = s[: m - m // 2], d[: m - m // 2]   # repeats
        if rng.random() < 0.6 or not edges:
            s, d = s.astype(ids), d.astype(ids)
            changes = [g.insert_edges(s if g.device == "cpu" else cupy.asarray(s),
                                      d if g.device == "cpu" else cupy.asarray(d))
                       for g in graphs]
            for u, v in zip(s.tolist(), d.tolist()):
                if directed:
                    edges.add((u, v))
                elif u != v:
                    edges.add((min(u, v), max(u, v)))
        else:
            es, ed = graphs[0].edges()
            pick = rng.choice(es.size, size=min(es.size, m), replace=False)
            s = np.r_[es[pick], s[:2000]].astype(ids)       # present edges and absent ones
            d = np.r_[ed[pick], d[:2000]].astype(ids)
            changes = [g.delete_edges(s, d) for g in graphs]
            for u, v in zip(s.tolist(), d.tolist()):
                edges.discard((u, v) if directed else (min(u, v), max(u, v)))
        _same_change(changes[0], changes[1])
        _same_change(changes[2], changes[1])
        _same(graphs[0], graphs[1])
        _same(graphs[2], graphs[1])
        gs, gd = graphs[1].edges()
        got = set(zip(to_host(gs).tolist(), to_host(gd).tolist()))
        if not directed:
            got = {(u, v) for u, v in got if u < v}
        assert got == edges
        if step % 6 == 5:
            graphs[1].check()
    graphs[1].check()


@pytest.mark.parametrize("directed", [False, True])
def test_deletes_with_properties_return_the_removed_values(directed):
    rng = np.random.default_rng(2)
    props = {"w": np.float32}
    cpu = _graph("cpu", directed, edge_properties=props)
    gpu = _graph("gpu", directed, edge_properties=props)
    s, d = rng.integers(0, 4000, 40000), rng.integers(0, 4000, 40000)
    w = rng.random(40000).astype(np.float32)
    _same_change(cpu.insert_edges(s, d, w=w), gpu.insert_edges(s, d, w=w))
    es, ed = cpu.edges()
    pick = rng.choice(es.size, size=10000, replace=False)
    _same_change(cpu.delete_edges(es[pick], ed[pick]), gpu.delete_edges(es[pick], ed[pick]))
    _same(cpu, gpu)
    absent = np.arange(5000, 10000)                 # nothing to delete: an empty change
    change = gpu.delete_edges(absent, absent + 1)
    _same_change(cpu.delete_edges(absent, absent + 1), change)
    assert sorted(change.properties) == ["w"] and len(change) == 0
    gpu.check()


@pytest.mark.parametrize("bad", ["negative", "too large"])
def test_bad_ids_are_refused_with_the_general_message_and_nothing_changes(bad):
    rng = np.random.default_rng(3)
    g = _graph("gpu", False)
    ref = _graph("gpu", False, planned=False)
    s, d = rng.integers(0, 5000, 20000), rng.integers(0, 5000, 20000)
    g.insert_edges(s, d)
    ref.insert_edges(s, d)
    d = d.copy()
    d[777] = -4 if bad == "negative" else np.iinfo(np.int32).max
    messages = []
    for graph in (g, ref):
        for op in (graph.insert_edges, graph.delete_edges):
            with pytest.raises(BatchError) as err:
                op(s, d)
            messages.append(str(err.value))
    assert messages[0] == messages[2] and messages[1] == messages[3]
    _same(g, ref)
    g.check()


def _edge_set(src, dst):
    """Host (n, 2) int64 array of the distinct undirected edges of the pairs, src < dst."""
    s, d = np.minimum(src, dst), np.maximum(src, dst)
    keep = s != d
    return np.unique(np.stack([s[keep], d[keep]], axis=1), axis=0)


def _key_set(src, dst):
    """Host int64 array of the distinct undirected edges of the pairs (ids under 2^20) as
    ascending keys min << 20 | max."""
    s, d = np.minimum(src, dst), np.maximum(src, dst)
    keep = s != d
    return np.unique((s[keep].astype(np.int64) << 20) | d[keep])


def test_large_planned_batches_against_a_host_oracle(monkeypatch):
    """A planned batch of more than 2^21 entries (mirrored), so more than a thousand scan
    tiles: the change and the graph against the edge set computed on the host, for an
    insert and then a delete of part of it named in the reverse direction."""
    import hornet.batch.planned as planned
    planned_calls = []
    original = planned.plan_batch
    monkeypatch.setattr(planned, "plan_batch",
                        lambda *a, **k: planned_calls.append(1) or original(*a, **k))
    rng = np.random.default_rng(8)
    g = hornet.Graph(directed=False, device="gpu")    # arrays of the default size
    g._medium_batches = False
    m = 3_000_000
    s, d = rng.integers(0, 400_000, m), rng.integers(0, 400_000, m)
    s[:1000] = d[:1000]                                  # self-loops
    change = g.insert_edges(s, d)
    want = _key_set(s, d)
    cs, cd = to_host(change.src).astype(np.int64), to_host(change.dst).astype(np.int64)
    assert len(planned_calls) == 1
    assert change.self_loops_skipped == int(np.count_nonzero(s == d))
    assert np.array_equal((cs << 20) | cd, want)
    gs, gd = (to_host(a).astype(np.int64) for a in g.edges())
    once = gs < gd
    assert np.array_equal((gs[once] << 20) | gd[once], want)
    pick = np.sort(rng.choice(want.shape[0], size=want.shape[0] // 3, replace=False))
    gone = g.delete_edges(want[pick] & ((1 << 20) - 1), want[pick] >> 20)
    assert len(planned_calls) == 2
    assert np.array_equal((to_host(gone.src).astype(np.int64) << 20) | to_host(gone.dst),
                          want[pick])
    gs, gd = (to_host(a).astype(np.int64) for a in g.edges())
    once = gs < gd
    assert np.array_equal((gs[once] << 20) | gd[once], np.delete(want, pick))
    g.check()


def test_deletes_that_loosen_lists_refit_them_in_the_plan(monkeypatch):
    """A planned delete after which the lists are loose moves its sources' loose lists to
    their fitting blocks itself (refit_plan): the graph, the degrees and every vertex's size
    class equal the general pipeline's (its delete, then ListFit.refit of the sources), and
    the refit after the batch finds none of the sources' lists loose."""
    import cupy
    import hornet.batch.planned as planned
    from hornet.memory.list_fit import ListFit
    refits, refit_moves = [], []
    original = planned.refit_plan
    monkeypatch.setattr(planned, "refit_plan",
                        lambda *a, **k: refits.append(1) or original(*a, **k))
    original_refit = ListFit.refit

    def counted(self, manager, *a, **k):
        moved = original_refit(self, manager, *a, **k)
        if manager is graphs[0]._mm and k.get("candidates") is not None:
            refit_moves.append(moved)          # the planned graph's refits of its sources
        return moved
    monkeypatch.setattr(ListFit, "refit", counted)
    rng = np.random.default_rng(6)
    graphs = [_graph("gpu", False), _graph("gpu", False, planned=False)]
    s, d = rng.integers(0, 5000, 120_000), rng.integers(0, 5000, 120_000)
    for g in graphs:
        g.insert_edges(cupy.asarray(s), cupy.asarray(d))
    es, ed = (to_host(a) for a in graphs[0].edges())
    for step in range(3):
        pick = rng.choice(es.shape[0], size=es.shape[0] // 4, replace=False)
        changes = [g.delete_edges(cupy.asarray(es[pick]), cupy.asarray(ed[pick]))
                   for g in graphs]
        _same_change(*changes)
        _same(*graphs)
        n = graphs[0]._n
        assert np.array_equal(to_host(graphs[0]._size_class[:n]),
                              to_host(graphs[1]._size_class[:n]))
        es, ed = (to_host(a) for a in graphs[0].edges())
        for g in graphs:
            g.check()
    assert refits, "no delete loosened the lists past the reference"
    assert not any(refit_moves)


def test_batches_at_the_plans_limit_against_a_host_oracle(monkeypatch):
    """The largest batch the plan takes (its limit set to 2^21 - 1 entries once mirrored, so
    that the test stays small), checked against the edge set computed on the host; one pair
    more goes to the general pipeline."""
    import hornet.batch.planned as planned
    MAX_ENTRIES = (1 << 21) - 1
    monkeypatch.setattr(planned, "MAX_ENTRIES", MAX_ENTRIES)
    planned_calls = []
    original = planned.plan_batch
    monkeypatch.setattr(planned, "plan_batch",
                        lambda *a, **k: planned_calls.append(1) or original(*a, **k))
    rng = np.random.default_rng(4)
    g = _graph("gpu", False)
    m = MAX_ENTRIES // 2
    s, d = rng.integers(0, 200_000, m), rng.integers(0, 200_000, m)
    change = g.insert_edges(s, d)
    want = _edge_set(s, d)
    got = np.stack([to_host(change.src), to_host(change.dst)], axis=1)
    assert np.array_equal(got, want) and len(planned_calls) == 1
    gs, gd = (to_host(a) for a in g.edges())
    once = gs < gd
    assert np.array_equal(np.stack([gs[once], gd[once]], axis=1), want)
    pick = rng.choice(want.shape[0], size=want.shape[0] // 2, replace=False)
    gone = g.delete_edges(want[pick, 1], want[pick, 0])        # the reverse direction
    assert np.array_equal(np.stack([to_host(gone.src), to_host(gone.dst)], axis=1),
                          want[np.sort(pick)]) and len(planned_calls) == 2
    g.check()
    s2, d2 = rng.integers(0, 200_000, m + 1), rng.integers(0, 200_000, m + 1)
    g.insert_edges(s2, d2)
    assert len(planned_calls) == 2                   # past the limit: the general pipeline
    rest = np.delete(want, pick, axis=0)
    both = _edge_set(np.r_[rest[:, 0], s2], np.r_[rest[:, 1], d2])
    gs, gd = (to_host(a) for a in g.edges())
    once = gs < gd
    assert np.array_equal(np.stack([gs[once], gd[once]], axis=1), both)
    g.check()


@pytest.mark.parametrize("directed", [False, True])
def test_planned_inserts_with_properties_store_the_first_occurrence(directed, monkeypatch):
    """Inserts into a graph with edge properties take the plan; each new edge keeps the
    values of its first pair in the batch (repeats, both directions of an undirected edge,
    edges already present and self-loops in the same batch), checked against a host dict
    oracle, the GPU's general pipeline and the CPU backend."""
    import cupy
    import hornet.batch.planned as planned
    calls = []
    original = planned.plan_batch
    monkeypatch.setattr(planned, "plan_batch",
                        lambda *a, **k: calls.append(1) or original(*a, **k))
    props = {"w": np.float32, "seen": np.int64}
    graphs = [_graph("gpu", directed, edge_properties=props),
              _graph("gpu", directed, planned=False, edge_properties=props),
              _graph("cpu", directed, edge_properties=props)]
    rng = np.random.default_rng(8)
    oracle = {}
    for step in range(6):
        m = 20000
        s, d = rng.integers(0, 3000, m), rng.integers(0, 3000, m)
        s[:300] = d[:300]                                   # self-loops
        s[m // 2:m // 2 + 4000], d[m // 2:m // 2 + 4000] = d[:4000], s[:4000]   # reversed
        w = rng.random(m).astype(np.float32)
        seen = np.arange(step * m, (step + 1) * m, dtype=np.int64)
        before = len(calls)
        changes = []
        for g in graphs:
            if g.device == "gpu":
                changes.append(g.insert_edges(cupy.asarray(s), cupy.asarray(d),
                                              w=cupy.asarray(w), seen=seen))
            else:
                changes.append(g.insert_edges(s, d, w=w, seen=seen))
        assert len(calls) == before + 1                     # the planned graph only
        new = {}
        for u, v, a, b in zip(s.tolist(), d.tolist(), w.tolist(), seen.tolist()):
            key = (u, v) if directed else (min(u, v), max(u, v))
            if u == v and not directed:
                continue
            if key not in oracle and key not in new:
                new[key] = (a, b)
        oracle.update(new)
        keys = sorted(new)
        c = changes[0]
        assert list(zip(to_host(c.src).tolist(), to_host(c.dst).tolist())) == keys
        assert to_host(c.properties["w"]).tolist() == [np.float32(new[k][0]) for k in keys]
        assert to_host(c.properties["seen"]).tolist() == [new[k][1] for k in keys]
        _same_change(changes[1], changes[0])
        _same_change(changes[2], changes[0])
        gs, gd, gp = graphs[0].edges(properties=True)
        got = {(u, v): (a, b) for u, v, a, b in zip(
            to_host(gs).tolist(), to_host(gd).tolist(), to_host(gp["w"]).tolist(),
            to_host(gp["seen"]).tolist())}
        assert got == {k: (float(np.float32(a)), b) for k, (a, b) in oracle.items()}
        _same(graphs[0], graphs[1])
        _same(graphs[0], graphs[2])
    graphs[0].check()


def test_planned_insert_with_bad_property_values_changes_nothing():
    g = _graph("gpu", False, edge_properties={"w": np.float32})
    rng = np.random.default_rng(9)
    s, d = rng.integers(0, 2000, 20000), rng.integers(0, 2000, 20000)
    g.insert_edges(s, d, w=np.ones(20000, np.float32))
    before = g.edges(properties=True)
    bad = np.ones(20000, np.float32)
    bad[5] = np.nan
    with pytest.raises(BatchError, match="NaN"):
        g.insert_edges(s + 1, d, w=bad)
    with pytest.raises(BatchError, match="unknown"):
        g.insert_edges(s + 1, d, x=bad)
    after = g.edges(properties=True)
    for a, b in zip(before[:2], after[:2]):
        assert np.array_equal(to_host(a), to_host(b))
    assert np.array_equal(to_host(before[2]["w"]), to_host(after[2]["w"]))
    g.check()


def test_blocks_given_back_without_a_wait_are_counted_by_every_reader():
    """A planned batch gives its old blocks back without waiting for their per-array counts
    (MemoryManager.release(wait=False)); the allocator's statistics, its check and the next
    allocation all see them: per size class, the blocks in use equal the lists that vertices
    of that class own (counted on the host from the vertex table), after every batch."""
    rng = np.random.default_rng(9)
    g = _graph("gpu", False)
    n = 20_000
    pending = 0
    for step in range(8):
        s, d = rng.integers(0, n, 6000), rng.integers(0, n, 6000)
        change = g.insert_edges(s, d)
        if step % 2:
            g.delete_edges(to_host(change.src)[::3], to_host(change.dst)[::3])
        pending += g._mm._pending_release is not None
        stats = g.memory_stats()["size_classes"]
        assert g._mm._pending_release is None             # read: the counts are in
        classes = to_host(g._size_class)[:g.num_vertices].astype(np.int64)
        owned = np.bincount(classes[classes >= 0], minlength=64)
        for k, c in stats.items():
            assert c["used_blocks"] == owned[k], (step, k)
        g.check()
    assert pending > 0                                     # the path under test was taken


def test_a_planned_batch_that_frees_no_block_gives_none_back(monkeypatch):
    """A planned delete whose lists all keep their blocks (none moves or empties: the plan's
    freed slots are 0) makes no release; one that empties lists does; the blocks in use per
    size class equal the lists that vertices of that class own, and the graph equals the
    CPU's."""
    mm_type = type(_graph("gpu", False)._mm)
    releases = []
    original = mm_type.release
    monkeypatch.setattr(mm_type, "release",
                        lambda self, *a, **k: releases.append(1) or original(self, *a, **k))
    cpu, gpu = _graph("cpu", True), _graph("gpu", True)
    s = np.repeat(np.arange(9000), 40)                  # 9000 lists of 40 entries
    d = np.tile(np.arange(40), 9000) * 7 + 1
    for g in (cpu, gpu):
        g.insert_edges(s, d)
    # (batches past the small path: 3000 lists a step, at least 6000 entries)
    for step, (drop, freed) in enumerate(((2, False), (40, True), (5, False))):
        es, ed = cpu.edges()
        rank = np.arange(es.size) - np.searchsorted(es, es)      # position in its list
        lists = np.arange(step * 3000, step * 3000 + 3000)
        pick = np.flatnonzero(np.isin(es, lists) & (rank < drop))
        want = cpu.delete_edges(es[pick], ed[pick])
        releases.clear()
        got = gpu.delete_edges(es[pick], ed[pick])
        assert bool(releases) == freed, step
        assert np.array_equal(to_host(got.src), want.src)
        assert np.array_equal(to_host(got.dst), want.dst)
        _same(cpu, gpu)
        stats = gpu.memory_stats()["size_classes"]
        classes = to_host(gpu._size_class)[:gpu.num_vertices].astype(np.int64)
        owned = np.bincount(classes[classes >= 0], minlength=64)
        for k, c in stats.items():
            assert c["used_blocks"] == owned[k], (step, k)
        gpu.check()


@pytest.mark.parametrize("n", [1, 2, 1023, 1024, 1025, 2049, 4095, 4096, 4097, 3 * 4096 + 5,
                               8 * 4096, 9 * 4096 + 1, 100_003, 1_000_037])
@pytest.mark.parametrize("spread", ["wide", "narrow"])
def test_plan_sort_kernels_match_numpy(n, spread):
    """The plan's own sort (tiles in shared memory, merge passes), with repeats and the
    self-loop key ALL_ONES among the keys, against NumPy's sort; the sorted keys end in the
    buffer the plan reads them from (the first for an even number of passes). ``narrow``:
    keys from 16 values (long runs of equal keys across the merges' tiles)."""
    import cupy
    from hornet.batch.gpu import plan
    rng = np.random.default_rng(n)
    top = 1 << 62 if spread == "wide" else 16
    keys = rng.integers(0, top, n, dtype=np.int64).astype(np.uint64)
    keys[rng.integers(0, n, n // 3)] = keys[rng.integers(0, n, n // 3)]    # repeats
    keys[rng.integers(0, n, n // 50)] = np.uint64(0xFFFFFFFFFFFFFFFF)
    keys[rng.integers(0, n, n // 50)] = 0
    bufs = cupy.zeros((2, n), dtype=cupy.uint64)
    bufs[0] = cupy.asarray(keys)
    plan._sort_keys(bufs[0].data.ptr, bufs[1].data.ptr, n)
    out = bufs[plan._merge_passes(n) & 1]
    assert np.array_equal(to_host(out), np.sort(keys))


@pytest.mark.parametrize("n", [2, 3, 8191, 8192, 8193, 5 * 8192 + 17, 100_003])
@pytest.mark.parametrize("bits", [1, 7, 20, 24, 31])
def test_radix_key_sort_matches_numpy(n, bits):
    """The large batches' radix sort (hornet.batch.gpu.key_sort) of plan keys (src << 31 |
    dst, ids below 2^bits, with repeats and the self-loop key ALL_ONES) against NumPy's
    sort, given the largest id as the plan has it on the device (or a larger bound); the
    sorted keys end in the buffer they started in."""
    import cupy
    from hornet.batch.gpu import key_sort
    rng = np.random.default_rng(n * 41 + bits)
    top = (1 << bits) - 1 if bits < 31 else (1 << 31) - 2
    u = rng.integers(0, top + 1, n).astype(np.uint64)
    v = rng.integers(0, top + 1, n).astype(np.uint64)
    keys = (u << np.uint64(31)) | v
    keys[rng.integers(0, n, n // 3)] = keys[rng.integers(0, n, n // 3)]    # repeats
    keys[rng.integers(0, n, n // 50)] = np.uint64(0xFFFFFFFFFFFFFFFF)
    for max_id in (int(max(u.max(), v.max())), top, 1 << 40):
        bufs = cupy.zeros((2, n), dtype=cupy.uint64)
        bufs[0] = cupy.asarray(keys)
        bound = cupy.array([max_id], dtype=cupy.int64)
        key_sort.sort_keys(bufs[0].data.ptr, bufs[1].data.ptr, n, bound.data.ptr)
        assert np.array_equal(to_host(bufs[0]), np.sort(keys))


@pytest.mark.parametrize("sort_max,radix", [(0, False), (0, True), (1 << 21, True)])
@pytest.mark.parametrize("ids", [np.int64, np.int32])
def test_planned_batches_with_either_sort_against_a_host_oracle(sort_max, radix, ids,
                                                                monkeypatch):
    """Batches of sizes around the sort's tiles and the scan's tiles (4096 and 2048 entries),
    with repeats and self-loops, sorted by CuPy's sort (sort_max 0, radix False), the radix
    sort (sort_max 0) or the plan's own kernels, checked against the edge set computed on
    the host after every batch."""
    import cupy
    from hornet.batch.gpu import plan
    monkeypatch.setattr(plan, "SORT_MAX", sort_max)
    monkeypatch.setattr(plan, "RADIX_SORT", radix)
    rng = np.random.default_rng(7)
    g = _graph("gpu", False)
    want = np.zeros((0, 2), dtype=np.int64)
    for m in (2049, 2048, 4096, 6145, 20_000, 40_961, 3000):
        s, d = rng.integers(0, 6000, m), rng.integers(0, 6000, m)
        s[:30] = d[:30]                                  # self-loops
        s[-100:], d[-100:] = s[100:200], d[100:200]      # repeats
        change = g.insert_edges(cupy.asarray(s.astype(ids)), cupy.asarray(d.astype(ids)))
        new = _edge_set(s, d)
        fresh = new[~np.isin(new[:, 0] << 32 | new[:, 1], want[:, 0] << 32 | want[:, 1])]
        got = np.stack([to_host(change.src), to_host(change.dst)], axis=1)
        assert np.array_equal(got, fresh)
        want = _edge_set(np.r_[want[:, 0], s], np.r_[want[:, 1], d])
        pick = rng.choice(want.shape[0], size=want.shape[0] // 3, replace=False)
        gone = g.delete_edges(cupy.asarray(want[pick, 1].astype(ids)),
                              cupy.asarray(want[pick, 0].astype(ids)))
        got = np.stack([to_host(gone.src), to_host(gone.dst)], axis=1)
        assert np.array_equal(got, want[np.sort(pick)])
        want = np.delete(want, pick, axis=0)
        gs, gd = (to_host(a) for a in g.edges())
        once = gs < gd
        assert np.array_equal(np.stack([gs[once], gd[once]], axis=1), want)
    g.check()


@pytest.mark.parametrize("small_take", [1 << 18, 0])
def test_blocks_taken_by_the_device_against_the_cpu_and_the_hosts_counts(small_take,
                                                                         monkeypatch):
    """The moving lists' blocks are taken by the device (hornet.memory.gpu_take), one-launch
    takes and (``small_take`` 0) the scan over every leaf word: batch after batch, over block
    arrays small enough that a class holds many (classes grown and emptied, takes spread over
    several arrays), the graph equals the CPU's; the device's per-array free counts equal
    the host's once settled (MemoryManager.check), and the per-class counts equal the lists
    the vertices own."""
    import hornet.batch.planned as planned
    import hornet.memory.gpu_take as gpu_take
    monkeypatch.setattr(gpu_take, "SMALL_TAKE", small_take)
    monkeypatch.setattr(planned, "PLANNED_INSERT_TAKES", 1 << 25)
    assert planned.DEVICE_TAKES
    takes = []
    original = gpu_take.allocate_on_device
    monkeypatch.setattr(gpu_take, "allocate_on_device",
                        lambda *a: takes.append(1) or original(*a))
    rng = np.random.default_rng(12)
    graphs = [_graph("cpu", False), _graph("gpu", False)]
    n = 6000
    for step in range(14):
        s, d = rng.integers(0, n, 9000), rng.integers(0, n, 9000)
        if step % 3 == 2:
            s[:3000] = rng.integers(0, 20, 3000)         # hubs outgrow their blocks
        changes = [g.insert_edges(s, d) for g in graphs]
        _same_change(*changes)
        if step % 2:
            cs, cd = to_host(changes[0].src), to_host(changes[0].dst)
            keep = rng.random(cs.shape[0]) < 0.7
            gone = [g.delete_edges(cs[keep], cd[keep]) for g in graphs]
            _same_change(*gone)
        if step % 5 == 4:                                # most of the graph deleted
            es, ed = (to_host(a) for a in graphs[0].edges())
            pick = rng.random(es.shape[0]) < 0.8
            gone = [g.delete_edges(es[pick], ed[pick]) for g in graphs]
            _same_change(*gone)
        _same(*graphs)
        g = graphs[1]
        g.check()                                         # device free counts included
        stats = g.memory_stats()["size_classes"]
        classes = to_host(g._size_class)[:g.num_vertices].astype(np.int64)
        owned = np.bincount(classes[classes >= 0], minlength=64)
        for k, c in stats.items():
            assert c["used_blocks"] == owned[k], (step, k)
    assert len(takes) >= 10 and graphs[1]._mm._device_takes is not None


@pytest.mark.parametrize("directed", [False, True])
def test_prepared_merges_match_merge_lists_and_an_edge_set(directed, monkeypatch):
    """Planned inserts merged through prepared launches from the plan's addresses
    (hornet.batch.gpu.prepared_merge) and through kernels.merge_lists leave the same
    graphs and changes, equal to a host edge set, batch after batch: short, medium (one warp)
    and huge (one block) lists, merged in place and into new blocks."""
    import cupy
    from hornet.batch import planned
    rng = np.random.default_rng(21)
    graphs = [_graph("gpu", directed), _graph("gpu", directed)]
    want = np.zeros(0, dtype=np.int64)               # the edges as keys u << 20 | v
    for step in range(8):
        m = int(rng.integers(5000, 40000))
        s, d = rng.integers(0, 20000, m), rng.integers(0, 20000, m)
        s[: m // 3] = rng.integers(0, 4, m // 3)         # huge lists
        s[m // 3: m // 2] = rng.integers(4, 200, m // 2 - m // 3)    # medium lists
        changes = []
        for k, g in enumerate(graphs):
            monkeypatch.setattr(planned, "PREPARED_MERGE", k == 0)
            changes.append(g.insert_edges(cupy.asarray(s), cupy.asarray(d)))
        _same_change(changes[0], changes[1])
        _same(graphs[0], graphs[1])
        want = np.union1d(want, _key_set(s, d) if not directed else s << 20 | d)
        src, dst = (to_host(a).astype(np.int64) for a in graphs[0].edges())
        got = np.unique(_key_set(src, dst)) if not directed else np.sort(src << 20 | dst)
        assert np.array_equal(got, want)
    for g in graphs:
        g.check()
