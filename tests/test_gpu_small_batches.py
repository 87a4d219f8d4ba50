"""The small-batch GPU path (hornet.batch.gpu_small) against the CPU backend and against the
general GPU pipeline: identical changes, edge sets, properties and degrees after every batch;
bad input refused with the general path's messages and the graph unchanged."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import hornet
from conftest import HAS_GPU
from hornet.batch.gpu_small import SMALL_ENTRIES
from hornet.testing import to_host

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]

PROPS = {"w": np.float32, "t": np.int64, "flag": np.int8}


def _snapshot(g):
    s, d, p = g.edges(properties=True)
    return to_host(s), to_host(d), {k: to_host(v) for k, v in p.items()}, to_host(g.degree())


def _same_change(a, b):
    assert a.kind == b.kind
    assert np.array_equal(to_host(a.src), to_host(b.src))
    assert np.array_equal(to_host(a.dst), to_host(b.dst))
    assert sorted(a.properties) == sorted(b.properties)
    for k in a.properties:
        assert np.array_equal(to_host(a.properties[k]), to_host(b.properties[k])), k
    assert a.self_loops_skipped == b.self_loops_skipped


def _same_graph(a, b):
    sa, sb = _snapshot(a), _snapshot(b)
    assert np.array_equal(sa[0], sb[0]) and np.array_equal(sa[1], sb[1])
    for k in sa[2]:
        assert np.array_equal(sa[2][k], sb[2][k]), k
    assert np.array_equal(sa[3], sb[3])
    assert a.num_vertices == b.num_vertices and a.num_edges == b.num_edges


@pytest.fixture
def small_path_counter(monkeypatch):
    """Counts the batches the small path really took."""
    taken = {"n": 0}
    original = hornet.Graph._small_update

    def counting(self, *args):
        change = original(self, *args)
        taken["n"] += change is not None
        return change

    monkeypatch.setattr(hornet.Graph, "_small_update", counting)
    return taken


def _general(**kw):
    """A GPU graph whose batches all take the general pipeline."""
    g = hornet.Graph(device="gpu", **kw)
    g._small_pairs = lambda src, dst: None
    return g


@pytest.mark.parametrize("reserve", ["default", "tiny"])
@pytest.mark.parametrize("directed", [False, True])
def test_small_batches_match_cpu_and_general_path(directed, reserve, small_path_counter):
    """``reserve="tiny"``: the block cache aims at two blocks per class, so rings run dry
    (refills from the bit trees) and overflow (blocks spilled back to them) all the time."""
    import cupy
    rng = np.random.default_rng(5)
    kw = dict(directed=directed, edge_properties=PROPS, block_array_edges=1 << 10)
    cpu = hornet.Graph(device="cpu", **kw)
    small = hornet.Graph(device="gpu", **kw)
    if reserve == "tiny":
        target = small._mm.block_cache().target
        target[:] = np.minimum(target, 2)
    general = _general(**kw)
    max_pairs = SMALL_ENTRIES // (1 if directed else 2)
    steps = 60
    for step in range(steps):
        n = 50 + 40 * step                      # the id space grows batch after batch
        m = int(rng.integers(1, max_pairs + 1))
        s, d = rng.integers(0, n, m), rng.integers(0, n, m)
        if step % 6 == 5:                       # a hub: its list outgrows many blocks
            s[: m // 2] = 3
        if step % 4 == 1:                       # repeats and self-loops inside the batch
            s[m // 2:], d[m // 2:] = s[: m - m // 2], d[: m - m // 2]
            d[:10] = s[:10]
        cupy_input = step % 2 == 0
        conv = cupy.asarray if cupy_input else (lambda x: x)
        if rng.random() < 0.6:
            w = rng.random(m).astype(np.float32)
            t = rng.integers(-10**12, 10**12, m)
            flag = rng.integers(-128, 128, m).astype(np.int8)
            props = dict(w=w, t=t, flag=flag)
            a = cpu.insert_edges(s, d, **props)
            b = small.insert_edges(conv(s), conv(d), **{k: conv(v) for k, v in props.items()})
            c = general.insert_edges(s, d, **props)
        else:
            es, ed = cpu.edges()
            k = min(es.size, m)
            pick = rng.choice(es.size, size=k, replace=False) if es.size else np.empty(0, int)
            s = np.r_[es[pick], s[: m - k]]     # present edges and (mostly) absent ones
            d = np.r_[ed[pick], d[: m - k]]
            a = cpu.delete_edges(s, d)
            b = small.delete_edges(conv(s), conv(d))
            c = general.delete_edges(s, d)
        _same_change(a, b)
        _same_change(a, c)
        _same_graph(cpu, small)
        if step % 10 == 9:
            small.check()
    small.check()
    assert small_path_counter["n"] == steps
    assert small.memory_stats()["stored_entries"] == cpu.memory_stats()["stored_entries"]


def test_small_batches_take_blocks_from_the_cache_not_the_host_allocator(monkeypatch):
    """Insert/delete cycles of fresh random batches: lists move between size classes all the
    time, yet most batches run neither the host allocator (a plan per class, a pass over the
    bit trees) nor the release kernel (a read-back of counts): only those where a ring runs
    dry (refill) or would keep too many blocks (spill)."""
    from hornet.generators import kronecker_edges
    from hornet.memory.manager import MemoryManager
    calls = {"n": 0}
    for name in ("allocate_counts", "release"):
        original = getattr(MemoryManager, name)

        def counting(self, *a, _original=original, **k):
            calls["n"] += self.xp is not np
            return _original(self, *a, **k)

        monkeypatch.setattr(MemoryManager, name, counting)
    s, d = kronecker_edges(16, edge_factor=8, seed=3)
    cpu = hornet.Graph.from_edges(s, d, directed=False, device="cpu")
    gpu = hornet.Graph.from_edges(s, d, directed=False, device="gpu")
    rng = np.random.default_rng(11)
    moved, with_host_allocator, batches = 0, 0, 0
    for cycle in range(50):
        bs, bd = rng.integers(0, 1 << 16, 500), rng.integers(0, 1 << 16, 500)
        before = to_host(gpu._edge_ptr).copy()
        for op in ("insert", "delete"):
            calls["n"] = 0
            if op == "insert":
                a, b = cpu.insert_edges(bs, bd), gpu.insert_edges(bs, bd)
            else:
                a, b = cpu.delete_edges(a.src, a.dst), gpu.delete_edges(b.src, b.dst)
            _same_change(a, b)
            if cycle >= 10:                     # the rings are filled by now
                batches += 1
                with_host_allocator += calls["n"] > 0
        if cycle >= 10:
            moved += int((to_host(gpu._edge_ptr) != before).sum())
        if cycle % 10 == 9:
            _same_graph(cpu, gpu)
    gpu.check()
    assert moved > 5000                         # lists really moved to other blocks ...
    assert with_host_allocator <= batches // 4, (with_host_allocator, batches, moved)
    cached = sum(c["cached_blocks"] for c in gpu.memory_stats()["size_classes"].values())
    assert cached > 0


def test_hub_lists_merge_and_shrink_in_place_across_chunks(small_path_counter):
    """A list of thousands of entries (many 256-item chunks of the rewriting block) takes new
    edges at its front, middle and back, in place and into larger blocks, then loses them."""
    cpu = hornet.Graph(directed=True, device="cpu")
    gpu = hornet.Graph(directed=True, device="gpu")
    rng = np.random.default_rng(9)
    for step in range(12):
        d = rng.choice(100_000, size=SMALL_ENTRIES, replace=False)
        s = np.zeros_like(d)
        _same_change(cpu.insert_edges(s, d), gpu.insert_edges(s, d))
        _same_graph(cpu, gpu)
    batches = 12
    while cpu.num_edges:
        es, ed = cpu.edges()
        pick = rng.choice(es.size, size=min(es.size, SMALL_ENTRIES), replace=False)
        _same_change(cpu.delete_edges(es[pick], ed[pick]), gpu.delete_edges(es[pick], ed[pick]))
        _same_graph(cpu, gpu)
        batches += 1
    gpu.check()
    assert gpu.num_edges == 0 and gpu.memory_stats()["stored_entries"] == 0
    assert small_path_counter["n"] == batches


def test_hub_lists_are_copied_in_pieces_with_their_properties(small_path_counter):
    """Few new or removed edges in the middle of lists of tens of thousands: rewritten in
    place, one block would step through half of each list, so the small path copies such a
    list to a fresh block of its own size class, in pieces run side by side (every field,
    the result's property values and the vertex table as the CPU backend has them)."""
    rng = np.random.default_rng(21)
    kw = dict(directed=False, edge_properties=PROPS)
    cpu, gpu = hornet.Graph(device="cpu", **kw), hornet.Graph(device="gpu", **kw)
    hubs = np.array([1, 2, 3])

    def props(m):
        return dict(w=rng.random(m).astype(np.float32), t=rng.integers(-10**12, 10**12, m),
                    flag=rng.integers(-128, 128, m).astype(np.int8))

    for hub, degree in zip(hubs, (20_000, 33_000, 45_000)):      # built in small batches
        others = rng.choice(np.arange(10, 200_000), size=degree, replace=False)
        for part in np.array_split(others, -(-degree // (SMALL_ENTRIES // 2))):
            s = np.full(part.size, hub)
            p = props(part.size)
            _same_change(cpu.insert_edges(s, part, **p), gpu.insert_edges(s, part, **p))
    _same_graph(cpu, gpu)
    copied = 0
    for step in range(24):
        m = int(rng.integers(20, 200))
        ptr_before = to_host(gpu._edge_ptr)[hubs].copy()
        class_before = to_host(gpu._size_class)[hubs].copy()
        if step % 2 == 0:
            s, d = rng.choice(hubs, m), rng.integers(10, 200_000, m)
            p = props(m)
            _same_change(cpu.insert_edges(s, d, **p), gpu.insert_edges(s, d, **p))
        else:
            es, ed = cpu.edges()
            pick = rng.choice(np.flatnonzero(np.isin(es, hubs)), size=m, replace=False)
            _same_change(cpu.delete_edges(es[pick], ed[pick]),
                         gpu.delete_edges(es[pick], ed[pick]))
        _same_graph(cpu, gpu)
        same_class = to_host(gpu._size_class)[hubs] == class_before
        copied += int((same_class & (to_host(gpu._edge_ptr)[hubs] != ptr_before)).sum())
        if step % 8 == 7:
            gpu.check()
    assert copied >= 24            # hub lists were copied within their class, not rewritten
    gpu.release_spare_memory()
    gpu.check()


@pytest.mark.parametrize("bad", [
    dict(src=[0, -1], dst=[1, 2]),
    dict(src=[0, 1], dst=[1, hornet.graph.MAX_VERTEX_ID + 1]),
    dict(src=[0, 1], dst=[1, 2], w=[0.5, float("nan")]),
    dict(src=[0, 1], dst=[1, 2], nope=[1, 2]),
    dict(src=[0, 1], dst=[1, 2], t=[0.5, 1.5]),           # floats into an int64 property
])
def test_bad_small_batches_are_refused_like_large_ones(bad):
    import cupy
    kw = dict(directed=False, edge_properties=PROPS)
    cpu, gpu = hornet.Graph(device="cpu", **kw), hornet.Graph(device="gpu", **kw)
    for g in (cpu, gpu):
        g.insert_edges(np.arange(5), np.arange(1, 6))
    before = _snapshot(gpu)
    bad = dict(bad)
    src, dst = np.asarray(bad.pop("src")), np.asarray(bad.pop("dst"))
    with pytest.raises(Exception) as on_cpu:
        cpu.insert_edges(src, dst, **bad)
    with pytest.raises(type(on_cpu.value)) as on_gpu:
        gpu.insert_edges(cupy.asarray(src), cupy.asarray(dst),
                         **{k: np.asarray(v) for k, v in bad.items()})
    assert str(on_gpu.value) == str(on_cpu.value)
    if not bad:
        with pytest.raises(type(on_cpu.value)):
            gpu.delete_edges(cupy.asarray(src), cupy.asarray(dst))
    after = _snapshot(gpu)
    assert all(np.array_equal(x, y) for x, y in zip(before[:2], after[:2]))
    gpu.check()


def test_batches_too_large_or_with_many_properties_take_the_general_path(small_path_counter):
    many = {f"p{i}": np.int32 for i in range(8)}           # dst + 8 properties: 9 fields
    g = hornet.Graph(device="gpu", edge_properties=many)
    g.insert_edges(np.arange(10), np.arange(1, 11))
    assert small_path_counter["n"] == 0
    most = {f"p{i}": np.dtype(t) for i, t in enumerate(
        [np.int8, np.int16, np.int32, np.int64, np.uint16, np.float32, np.float64])}
    g, cpu = hornet.Graph(device="gpu", edge_properties=most), hornet.Graph(edge_properties=most,
                                                                              device="cpu")
    vals = {k: (np.arange(10) * 7 - 20).astype(t) for k, t in most.items()}
    _same_change(g.insert_edges(np.arange(10), np.arange(1, 11), **vals),
                 cpu.insert_edges(np.arange(10), np.arange(1, 11), **vals))
    _same_graph(g, cpu)
    _same_change(g.delete_edges(np.arange(0, 10, 2), np.arange(1, 11, 2)),
                 cpu.delete_edges(np.arange(0, 10, 2), np.arange(1, 11, 2)))
    _same_graph(g, cpu)
    assert small_path_counter["n"] == 2
    n = SMALL_ENTRIES // 2 + 1                              # mirrored: one entry too many
    g.insert_edges(np.arange(n), np.arange(1, n + 1))
    assert small_path_counter["n"] == 2
    g.check()


def test_small_insert_out_of_device_memory_leaves_the_graph_unchanged(small_path_counter):
    import cupy
    pool = cupy.get_default_memory_pool()
    g = hornet.Graph(directed=True, device="gpu", block_array_edges=1 << 22)
    n = 1 << 20
    g.insert_edges(np.arange(n), np.arange(1, n + 1))      # 2^20 one-edge blocks, all used
    g.insert_edges(np.array([0]), np.array([1]))           # present: the small path only
    assert small_path_counter["n"] == 1                     # makes its workspace
    before = _snapshot(g)
    gc.collect()                            # earlier tests' garbage holds no device memory
    cupy.cuda.Device().synchronize()
    pool.free_all_blocks()                  # no cached room: the limit is what is held
    pool.set_limit(size=pool.total_bytes() + (1 << 20))
    try:
        # one more one-edge list: the class grows by an array as large as it is (4 MiB)
        with pytest.raises(hornet.DeviceMemoryError) as info:
            g.insert_edges(np.array([n + 5]), np.array([1]))
        assert info.value.bytes_needed > 0
    finally:
        pool.set_limit(size=0)
    g.check()
    after = _snapshot(g)
    assert all(np.array_equal(a, b) for a, b in zip(before, after))
    assert g.num_vertices == n + 1
    g.insert_edges(np.array([n + 5]), np.array([1]))       # with memory back: it goes in
    assert g.num_vertices == n + 6 and small_path_counter["n"] == 2
    g.check()
