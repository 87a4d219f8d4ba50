"""The small-batch CPU path (hornet.batch.cpu.small) against the fused CPU pipeline: identical
changes, edge sets, properties and degrees after every batch; the block cache's rings run
dry and overflow; bad input refused with the general path's messages, the graph unchanged."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.batch.cpu.small import CPU_SMALL_ENTRIES
from small_batch_checks import (PROPS, insert_delete_cycles, same_change, same_graph, step_batch,
                                step_properties, without_small_path)

@pytest.mark.parametrize("reserve", ["default", "tiny"])
@pytest.mark.parametrize("directed", [False, True])
def test_small_batches_match_the_fused_pipeline(directed, reserve, small_path_counter):
    """``reserve="tiny"``: the block cache aims at two blocks per class, so rings run dry
    (refills from the bit trees) and overflow (blocks spilled back to them) all the time."""
    rng = np.random.default_rng(5)
    kw = dict(directed=directed, edge_properties=PROPS, block_array_edges=1 << 10)
    small, fused = hornet.Graph(device="cpu", **kw), without_small_path("cpu", **kw)
    if reserve == "tiny":
        target = small._mm.block_cache().target
        target[:] = np.minimum(target, 2)
    max_pairs = CPU_SMALL_ENTRIES // (1 if directed else 2)
    steps = 80
    for step in range(steps):
        s, d = step_batch(rng, step, max_pairs)
        m = s.shape[0]
        if step % 3 == 2:                       # int32 ids take the path too
            s, d = s.astype(np.int32), d.astype(np.int32)
        if rng.random() < 0.6:
            props = step_properties(rng, m)
            a, b = small.insert_edges(s, d, **props), fused.insert_edges(s, d, **props)
        else:
            es, ed = fused.edges()
            k = min(es.size, m)
            pick = rng.choice(es.size, size=k, replace=False) if es.size else np.empty(0, int)
            s = np.r_[es[pick], s[: m - k]]     # present edges and (mostly) absent ones
            d = np.r_[ed[pick], d[: m - k]]
            a, b = small.delete_edges(s, d), fused.delete_edges(s, d)
        same_change(a, b)
        same_graph(small, fused, size_classes=True)
        small.check()
    assert small_path_counter["cpu"] == steps
    stats = small.memory_stats()
    assert stats["stored_entries"] == fused.memory_stats()["stored_entries"]
    assert sum(c["cached_blocks"] for c in stats["size_classes"].values()) > 0


def test_hub_list_grows_and_shrinks_to_nothing(small_path_counter):
    """One list of thousands of entries takes new edges at its front, middle and back, in
    place and into larger blocks, then loses them all, in small batches."""
    small = hornet.Graph(directed=True, device="cpu")
    fused = without_small_path("cpu", directed=True)
    rng = np.random.default_rng(9)
    batches = 0
    for step in range(12):
        d = rng.choice(100_000, size=CPU_SMALL_ENTRIES, replace=False)
        s = np.zeros_like(d)
        same_change(small.insert_edges(s, d), fused.insert_edges(s, d))
        batches += 1
    same_graph(small, fused, size_classes=True)
    while fused.num_edges:
        es, ed = fused.edges()
        pick = rng.choice(es.size, size=min(es.size, CPU_SMALL_ENTRIES), replace=False)
        same_change(small.delete_edges(es[pick], ed[pick]), fused.delete_edges(es[pick],
                                                                              ed[pick]))
        same_graph(small, fused, size_classes=True)
        batches += 1
    small.check()
    assert small.num_edges == 0 and small.memory_stats()["stored_entries"] == 0
    assert small_path_counter["cpu"] == batches
    small.release_spare_memory()
    small.check()


def test_small_batches_take_blocks_from_the_cache_not_the_host_allocator(monkeypatch):
    """Insert/delete cycles of fresh random batches into Kronecker 14: lists move between size
    classes all the time, yet most batches call neither the allocator nor the release of the
    memory manager, only those where a ring runs dry or would keep too many blocks."""
    from hornet.generators import kronecker_edges
    from hornet.memory.manager import MemoryManager
    from hornet.core import jit
    monkeypatch.setattr(jit, "optional_path_policy", "always")   # the small path from batch 1
    calls = {"n": 0}
    for name in ("allocate_counts", "release"):
        original = getattr(MemoryManager, name)

        def counting(self, *a, _original=original, **k):
            calls["n"] += self is calls.get("watched")      # the small-path graph's only
            return _original(self, *a, **k)

        monkeypatch.setattr(MemoryManager, name, counting)
    s, d = kronecker_edges(14, edge_factor=8, seed=3)
    small = hornet.Graph.from_edges(s, d, directed=False, device="cpu")
    calls["watched"] = small._mm
    fused = without_small_path("cpu", directed=False)
    fused.insert_edges(s, d)
    rng = np.random.default_rng(11)
    moved, with_allocator, batches = insert_delete_cycles(small, fused, rng, 1 << 14, 200, 40,
                                                          calls)
    same_graph(small, fused, size_classes=True)
    small.check()
    assert moved > 1000                         # lists really moved to other blocks ...
    assert with_allocator <= batches // 4, (with_allocator, batches, moved)
