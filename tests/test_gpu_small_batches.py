"""The small-batch GPU path (hornet.batch.gpu.small) against the CPU backend and against the
general GPU pipeline: identical changes, edge sets, properties and degrees after every batch;
bad input refused with the general path's messages and the graph unchanged."""
from __future__ import annotations


import numpy as np
import pytest

import hornet
from conftest import HAS_GPU
from hornet.batch.small_layout import SMALL_ENTRIES
from hornet.testing import to_host
from small_batch_checks import (PROPS, EdgeTable, insert_delete_cycles, same_change, same_graph,
                                snapshot, step_batch, step_properties, without_small_path)

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]

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
    general = without_small_path("gpu", **kw)
    max_pairs = SMALL_ENTRIES // (1 if directed else 2)
    steps = 60
    for step in range(steps):
        s, d = step_batch(rng, step, max_pairs)
        m = s.shape[0]
        cupy_input = step % 2 == 0
        conv = cupy.asarray if cupy_input else (lambda x: x)
        if rng.random() < 0.6:
            props = step_properties(rng, m)
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
        same_change(a, b)
        same_change(a, c)
        same_graph(cpu, small)
        if step % 10 == 9:
            small.check()
    small.check()
    assert small_path_counter["gpu"] == steps
    assert small.memory_stats()["stored_entries"] == cpu.memory_stats()["stored_entries"]


def test_small_batches_take_blocks_from_the_cache_not_the_host_allocator(monkeypatch):
    """Insert/delete cycles of fresh random batches: lists move between size classes all the
    time, yet most batches run neither the host allocator (a plan per class, a pass over the
    bit trees) nor the release kernel (a read-back of counts): only those where a ring runs
    dry (refill) or would keep too many blocks (spill)."""
    from hornet.generators import kronecker_edges
    from hornet.memory.manager import MemoryManager
    calls = {"n": 0}
    for name in ("allocate_counts", "allocate_into_rings", "release"):
        original = getattr(MemoryManager, name)

        def counting(self, *a, _original=original, **k):
            calls["n"] += self.xp is not np
            return _original(self, *a, **k)

        monkeypatch.setattr(MemoryManager, name, counting)
    s, d = kronecker_edges(16, edge_factor=8, seed=3)
    cpu = hornet.Graph.from_edges(s, d, directed=False, device="cpu")
    gpu = hornet.Graph.from_edges(s, d, directed=False, device="gpu")
    rng = np.random.default_rng(11)
    moved, with_host_allocator, batches = insert_delete_cycles(gpu, cpu, rng, 1 << 16, 500, 50,
                                                               calls)
    same_graph(cpu, gpu)
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
        same_change(cpu.insert_edges(s, d), gpu.insert_edges(s, d))
        same_graph(cpu, gpu)
    batches = 12
    while cpu.num_edges:
        es, ed = cpu.edges()
        pick = rng.choice(es.size, size=min(es.size, SMALL_ENTRIES), replace=False)
        same_change(cpu.delete_edges(es[pick], ed[pick]), gpu.delete_edges(es[pick], ed[pick]))
        same_graph(cpu, gpu)
        batches += 1
    gpu.check()
    assert gpu.num_edges == 0 and gpu.memory_stats()["stored_entries"] == 0
    assert small_path_counter["gpu"] == batches


def test_hub_lists_are_copied_in_pieces_with_their_properties(small_path_counter):
    """Few new edges in the middle of lists of tens of thousands: rewritten in place, one
    block would step through half of each list, so the small path copies such a list to a
    fresh block of its own size class, in pieces run side by side (every field, the result's
    property values and the vertex table as the CPU backend has them). Removed edges leave
    such lists in their blocks: they are rewritten in place by pieces side by side."""
    rng = np.random.default_rng(21)
    kw = dict(directed=False, edge_properties=PROPS)
    cpu, gpu = hornet.Graph(device="cpu", **kw), hornet.Graph(device="gpu", **kw)
    hubs = np.array([1, 2, 3])

    for hub, degree in zip(hubs, (20_000, 33_000, 45_000)):      # built in small batches
        others = rng.choice(np.arange(10, 200_000), size=degree, replace=False)
        for part in np.array_split(others, -(-degree // (SMALL_ENTRIES // 2))):
            s = np.full(part.size, hub)
            p = step_properties(rng, part.size)
            same_change(cpu.insert_edges(s, part, **p), gpu.insert_edges(s, part, **p))
    same_graph(cpu, gpu)
    copied = 0
    for step in range(24):
        m = int(rng.integers(20, 200))
        ptr_before = to_host(gpu._edge_ptr)[hubs].copy()
        class_before = to_host(gpu._size_class)[hubs].copy()
        if step % 2 == 0:
            s, d = rng.choice(hubs, m), rng.integers(10, 200_000, m)
            p = step_properties(rng, m)
            same_change(cpu.insert_edges(s, d, **p), gpu.insert_edges(s, d, **p))
        else:
            es, ed = cpu.edges()
            pick = rng.choice(np.flatnonzero(np.isin(es, hubs)), size=m, replace=False)
            same_change(cpu.delete_edges(es[pick], ed[pick]),
                         gpu.delete_edges(es[pick], ed[pick]))
        same_graph(cpu, gpu)
        same_class = to_host(gpu._size_class)[hubs] == class_before
        moved = same_class & (to_host(gpu._edge_ptr)[hubs] != ptr_before)
        if step % 2 == 0:
            copied += int(moved.sum())
        else:
            assert not moved.any()          # wide removal: in place
        if step % 8 == 7:
            gpu.check()
    assert copied >= 24            # hub lists were copied within their class, not rewritten
    gpu.release_spare_memory()
    gpu.check()


def test_small_insert_out_of_device_memory_leaves_the_graph_unchanged(small_path_counter):
    import cupy
    pool = cupy.get_default_memory_pool()
    g = hornet.Graph(directed=True, device="gpu", block_array_edges=1 << 22)
    n = 1 << 20
    g.insert_edges(np.arange(n), np.arange(1, n + 1))      # 2^20 one-edge blocks, all used
    g.insert_edges(np.array([0]), np.array([1]))           # present: the small path only
    assert small_path_counter["gpu"] == 1                   # makes its workspace
    before = snapshot(g)
    cupy.cuda.Device().synchronize()

    def tight(size):
        # a device with 1 MiB left: a pool limit would let the request reuse free room
        # inside the pool's chunks, which depends on what earlier tests left behind
        if size > (1 << 20):
            raise cupy.cuda.memory.OutOfMemoryError(size, pool.total_bytes(), 0)
        return pool.malloc(size)
    cupy.cuda.set_allocator(tight)
    try:
        # one more one-edge list: the vertex table doubles and the class grows by an array
        with pytest.raises(hornet.DeviceMemoryError) as info:
            g.insert_edges(np.array([n + 5]), np.array([1]))
        assert info.value.bytes_needed > (1 << 20)
    finally:
        cupy.cuda.set_allocator(pool.malloc)
    g.check()
    after = snapshot(g)
    assert all(np.array_equal(a, b) for a, b in zip(before, after))
    assert g.num_vertices == n + 1
    g.insert_edges(np.array([n + 5]), np.array([1]))       # with memory back: it goes in
    assert g.num_vertices == n + 6 and small_path_counter["gpu"] == 2
    g.check()


def test_prepared_launches_match_cupy_calls(small_path_counter):
    """The driver launches with prebuilt argument buffers (``SmallBatches.direct_launch``)
    and CuPy's kernel calls run the same kernels on the same arguments: two graphs, one
    each way, give identical changes (property values included) and graphs, int32 and int64
    ids, inserts that move lists and deletes."""
    import cupy
    from hornet.batch.gpu.small import SmallBatches
    rng = np.random.default_rng(17)
    kw = dict(directed=False, edge_properties=PROPS, block_array_edges=1 << 10)
    direct, called = hornet.Graph(device="gpu", **kw), hornet.Graph(device="gpu", **kw)
    called._small = SmallBatches()
    called._small.direct_launch = False
    max_pairs = SMALL_ENTRIES // 2
    for step in range(16):
        s, d = step_batch(rng, step, max_pairs)
        dtype = cupy.int32 if step % 2 else cupy.int64
        s, d = cupy.asarray(s, dtype=dtype), cupy.asarray(d, dtype=dtype)
        if step % 4 == 3:
            es, ed = direct.edges()
            k = min(es.size, s.shape[0])
            s, d = cupy.asarray(es[:k], dtype=dtype), cupy.asarray(ed[:k], dtype=dtype)
            same_change(direct.delete_edges(s, d), called.delete_edges(s, d))
        else:
            props = {k: cupy.asarray(v) for k, v in step_properties(rng, s.shape[0]).items()}
            same_change(direct.insert_edges(s, d, **props), called.insert_edges(s, d, **props))
        same_graph(direct, called)
    direct.check()
    called.check()
    assert small_path_counter["gpu"] == 32
    assert direct._small.direct_launch and not called._small.direct_launch


@pytest.mark.parametrize("wide", [True, False])
def test_long_lists_lose_edges_in_place_by_pieces(wide, small_path_counter):
    """Deletes from lists of up to 45,000 entries (``SmallBatches.wide_removal``: rewritten
    in place by pieces of 4,096 items side by side, each waiting for the piece before it to
    have read its items; without it: copied within their class): runs of removed entries
    across the pieces' borders, the first and last entries, 3,000 entries of one list in its
    first pieces, lists emptied and shrunk to a smaller class, properties of 1, 2, 4 and 8
    bytes; changes (with their property values) and the graph's edges and properties
    against a NumPy table of the edges."""
    from hornet.batch.gpu.small import SmallBatches
    props = {"w": np.float32, "t": np.int64, "flag": np.int8, "h": np.int16}
    rng = np.random.default_rng(33)

    def values(m):
        return dict(w=rng.random(m).astype(np.float32), t=rng.integers(-10**12, 10**12, m),
                    flag=rng.integers(-128, 128, m).astype(np.int8),
                    h=rng.integers(-30000, 30000, m).astype(np.int16))

    oracle = EdgeTable(props)
    gpu = hornet.Graph(device="gpu", directed=True, edge_properties=props)
    gpu._small = SmallBatches()
    gpu._small.wide_removal = wide
    hubs = np.array([1, 2, 3, 4])
    batches = 0
    for hub, degree in zip(hubs, (20_000, 33_000, 45_000, 9_000)):
        others = rng.choice(np.arange(10, 200_000), size=degree, replace=False)
        for part in np.array_split(others, -(-degree // SMALL_ENTRIES)):
            s = np.full(part.size, hub)
            p = values(part.size)
            gpu.insert_edges(s, part, **p)
            oracle.insert(s, part, p)
            batches += 1
    oracle.same(gpu)

    def delete(s, d):
        a, b = oracle.delete(s, d), gpu.delete_edges(s, d)
        assert np.array_equal(to_host(b.src), a[0]) and np.array_equal(to_host(b.dst), a[1])
        for k in props:
            assert np.array_equal(to_host(b.properties[k]), a[2][k]), k
        oracle.same(gpu)

    for step in range(10):
        picks = []
        for hub in hubs:
            nb = oracle.neighbors(hub)
            if nb.size == 0:
                continue
            if step % 5 == 0:           # runs across the borders of 4,096-item pieces
                at = np.arange(4096, nb.size, 4096)
                pos = (at[:, None] + np.arange(-7, 9)[None, :]).ravel()
            elif step % 5 == 1:         # first and last entries, and a few between
                pos = np.r_[0, nb.size - 1, rng.integers(0, nb.size, 5)]
            elif step % 5 == 2:         # many of one list, most in its first pieces
                many = 3000 if hub == 3 else 250
                pos = rng.choice(min(nb.size, 7000), size=min(nb.size, 7000, many),
                                 replace=False)
            else:
                pos = rng.integers(0, nb.size, 40)
            pos = np.unique(pos[(pos >= 0) & (pos < nb.size)])
            picks.append((np.full(pos.size, hub), nb[pos]))
        s = np.concatenate([p[0] for p in picks])
        d = np.concatenate([p[1] for p in picks])
        keep = rng.permutation(s.size)[:SMALL_ENTRIES]      # (in any order)
        delete(s[keep], d[keep])
        batches += 1
        if step == 6:                   # a hub emptied, another shrunk under a quarter
            for hub, left in ((4, 0), (1, 1000)):
                nb = oracle.neighbors(hub)
                gone = rng.choice(nb, size=nb.size - left, replace=False)
                for part in np.array_split(gone, -(-gone.size // SMALL_ENTRIES)):
                    delete(np.full(part.size, hub), part)
                    batches += 1
    gpu.check()
    assert small_path_counter["gpu"] == batches
