"""Paced refills of the block cache (hornet.memory.block_cache.BlockCache.top_up): once every
class has served a batch, no batch finds a ring short, one call refills a bounded number of
rings, and a call that makes block arrays takes no blocks. Checked against the allocator's
own invariants (every block handed out is a distinct block of its class, the cache's device
counters equal the host's) and, for graphs, against a set of edges kept on the side."""
from __future__ import annotations

import numpy as np

import hornet
from hornet.memory.block_cache import NUM_CLASSES, STEP_CLASSES
from hornet.memory.manager import MemoryManager


class _Steps:
    """Per batch (a call of ``cache.top_up``, then one of ``cache.grow_ahead``): (rings
    refilled, arrays made, lookup rebuilt) by those two calls."""

    def __init__(self, cache):
        self.calls = []
        take, top_up, grow_ahead, mm = (cache._take_into_rings, cache.top_up,
                                        cache.grow_ahead, cache.manager)
        self.refilled = 0

        def counting_take(amount):
            self.refilled = len(amount)
            return take(amount)

        def counting_top_up():
            self.refilled, arrays = 0, mm.arrays_created
            stale = mm.lookup_stale()
            top_up()
            self.calls.append([self.refilled, mm.arrays_created - arrays,
                               stale and not mm.lookup_stale()])

        def counting_grow_ahead():
            arrays = mm.arrays_created
            grow_ahead()
            self.calls[-1][1] += mm.arrays_created - arrays
        cache._take_into_rings = counting_take
        cache.top_up = counting_top_up
        cache.grow_ahead = counting_grow_ahead

    def check(self) -> None:
        """At most STEP_CLASSES rings refilled, and a batch that refilled, made arrays or
        rebuilt the lookup did nothing else."""
        for refilled, made, rebuilt in self.calls:
            assert refilled <= STEP_CLASSES
            assert bool(refilled) + bool(made) + bool(rebuilt) <= 1


def _pop(cache, need):
    """What a batch's kernels do with ``need[k]`` blocks per class: read them at the rings'
    heads (host copies of device rings)."""
    rings = cache.manager.backend.to_host(cache.rings)
    out = [rings[k * cache.ring_slots + (cache.head[k] + np.arange(need[k])) % cache.ring_slots]
           for k in np.flatnonzero(need)]
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def test_top_up_keeps_draining_rings_ahead_in_bounded_steps(device):
    """Four classes drained at different, jittered rates (a growing graph's batches) and
    one whose pops and pushes balance: after the first batch (every ring empty) no batch's
    reserve refills; each batch's top_up and grow_ahead refill at most STEP_CLASSES rings,
    make block arrays or rebuild the lookup, one of the three at most; every block taken is
    a distinct block of its class."""
    mm = MemoryManager([("dst", np.int32), ("w", np.float32)], block_array_edges=1 << 12,
                       device=device)
    xp = mm.xp
    lists = {k: mm.backend.to_host(mm.allocate(k, 8192 >> k)) for k in range(6)}
    # and long lists enough that the graph's share (GRAPH_SHARE_SHIFT) leaves the rings of
    # the small classes room for several batches
    lists[10] = mm.backend.to_host(mm.allocate(10, 512))
    cache = mm.block_cache()
    steps = _Steps(cache)
    rng = np.random.default_rng(4)
    rate = {0: 60, 1: 30, 2: 12, 3: 5}
    zero = np.zeros(NUM_CLASSES, np.int64)
    held = {k: [v] for k, v in lists.items()}
    for batch in range(150):
        cache.top_up()
        need = zero.copy()
        for k, r in rate.items():
            need[k] = rng.integers(r // 2, r + r // 2 + 1)
        need[4] = 8                                # balanced: 8 taken, 8 given back
        freed = zero.copy()
        freed[4] = 8
        shorts = cache.short_refills
        cache.reserve(need)
        if batch:
            assert cache.short_refills == shorts, f"batch {batch} found a ring short"
        accept = cache.accepts(need, freed)
        got = _pop(cache, need)
        at = 0
        for k in np.flatnonzero(need).tolist():
            held[k].append(got[at:at + need[k]])
            at += need[k]
        # class 4 gives back 8 blocks it held (its oldest lists) to its ring
        four = np.concatenate(held[4])
        back, held[4] = four[:8], [four[8:]]
        assert accept >> 4 & 1
        ring4 = 4 * cache.ring_slots + (cache.tail[4] + np.arange(8)) % cache.ring_slots
        cache.rings[xp.asarray(ring4)] = xp.asarray(back)
        assert cache.commit(need, freed, accept) == 0
        cache.state[:] = xp.asarray(np.array(cache.head + cache.tail, dtype=np.int64))
        cache.grow_ahead()
    assert len(steps.calls) == 150
    steps.check()
    assert sum(made for _, made, _ in steps.calls) > 0       # the classes grew on the way
    assert sum(1 for refilled, _, _ in steps.calls if refilled) >= 4
    ptrs = np.concatenate([np.concatenate(v) for v in held.values()])
    classes = np.concatenate([np.full(sum(p.size for p in v), k) for k, v in held.items()])
    mm.check(ptrs, classes)          # distinct blocks of their classes; counters as the host's


def test_growing_graph_refills_the_cache_one_step_per_batch(device, small_path_counter):
    """Small batches of random pairs inserted into a Kronecker graph (the graph grows),
    then deleted again: every batch takes the small-batch path, makes at most one top_up
    step, and few after the first batches find a ring short; the edges equal a set kept
    on the side, the graph's invariants hold, and deleting the inserted edges gives the
    reserve's blocks back with compaction (memory follows the graph down)."""
    from hornet.generators import kronecker_edges
    scale = 15
    src, dst = kronecker_edges(scale, seed=3)
    g = hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False,
                                device=device, block_array_edges=1 << 12)
    to_host = g._mm.backend.to_host
    es, ed = g.edges()
    edges = set(zip(to_host(es).tolist(), to_host(ed).tolist()))
    start = g.num_edges
    rng = np.random.default_rng(11)
    n = 1 << scale
    mm = g._mm
    inserted = []
    shorts = []
    for batch in range(60):
        s = rng.integers(0, n, 200)
        d = rng.integers(0, n, 200)
        before = mm.cache.short_refills if mm.cache is not None else 0
        change = g.insert_edges(s, d)
        shorts.append(mm.cache.short_refills - before)
        if batch == 0:
            steps = _Steps(mm.cache)
        cs, cd = to_host(change.src).tolist(), to_host(change.dst).tolist()
        inserted.append((change.src, change.dst))
        for a, b in zip(cs, cd):                   # each edge once, src < dst
            assert a < b and (a, b) not in edges
            edges.add((a, b))
    assert small_path_counter[device] == 60
    # top_up keeps ahead: after the first batches a ring is found short only now and then
    # (a class's first batch, or a peak past the rest)
    assert sum(shorts[5:]) <= 2
    assert len(steps.calls) == 59
    steps.check()
    es, ed = g.edges()
    assert set(zip(to_host(es).tolist(), to_host(ed).tolist())) == edges
    g.check()
    grown = g.memory_stats()["block_bytes"]
    for s, d in reversed(inserted):
        g.delete_edges(s, d)
    g.check()
    assert g.num_edges == start
    es, ed = g.edges()
    hs, hd = to_host(src).tolist(), to_host(dst).tolist()
    assert set(zip(to_host(es).tolist(), to_host(ed).tolist())) == \
        {(min(a, b), max(a, b)) for a, b in zip(hs, hd) if a != b}
    g.release_spare_memory()
    after = g.memory_stats()
    assert sum(c["cached_blocks"] for c in after["size_classes"].values()) == 0
    assert after["block_bytes"] < grown              # memory followed the graph down
    g.check()


def test_copy_class_rings_filled_ahead_and_kept_by_hub_copies(device):
    """``fill_copy_classes`` fills the empty ring of every class from COPY_MIN_CLASS to
    SPARE_MAX_CLASS that holds lists (and of no other class); on the GPU the first small
    batch does it. Batches touching the hubs' lists then pop and push blocks of those classes
    (GPU: a hub's list copied to a fresh block of its class) without finding their rings
    short;
    the edges equal a set kept on the side and the graph's invariants (every cached block a
    distinct block of its class) hold throughout."""
    from hornet.memory.block_cache import COPY_MIN_CLASS, SPARE_BLOCKS, SPARE_MAX_CLASS
    rng = np.random.default_rng(5)
    n = 1 << 16
    # sixteen hubs whose lists fill each of classes 12, 13 and 14 (degrees 3000, 6000,
    # 12000: enough lists that the classes' share allows SPARE_BLOCKS), in a graph large
    # enough not to bound its reserve by its own size, and a sparse random rest
    hubs = {16 * j + i: 3000 << j for j in range(3) for i in range(16)}
    others = np.arange(len(hubs), n)
    src = np.concatenate([np.full(k, v) for v, k in hubs.items()] +
                         [rng.integers(0, n, 300000)])
    dst = np.concatenate([rng.choice(others, k, replace=False) for k in hubs.values()] +
                         [rng.integers(0, n, 300000)])
    g = hornet.Graph.from_edges(src, dst, num_vertices=n, directed=False, device=device)
    to_host = g._mm.backend.to_host
    es, ed = g.edges()
    edges = set(zip(to_host(es).tolist(), to_host(ed).tolist()))
    cache = g._mm.block_cache()
    if device == "cpu":                      # (the GPU's first small batch calls it)
        cache.fill_copy_classes()
    else:
        xp = g._xp                           # (device pairs: the small-batch path)
        change = g.insert_edges(xp.asarray([n - 1]), xp.asarray([n - 2]))
        g.delete_edges(change.src, change.dst)
        if change.src.size:
            edges.discard((int(change.src[0]), int(change.dst[0])))
    assert cache.copy_classes_filled
    classes = to_host(g._size_class[:n]).astype(np.int64)
    held = set(classes[classes >= 0].tolist())
    for k in range(COPY_MIN_CLASS, SPARE_MAX_CLASS + 1):
        if k in held:
            assert cache.size(k) >= SPARE_BLOCKS, k
        else:
            assert cache.size(k) == 0, k
    g.check()
    hub_ids = np.array(list(hubs))
    short = []                               # classes a batch found short (reserve)
    reserve = cache.reserve

    def noting_reserve(need, classes=None):
        short.extend(k for k in range(NUM_CLASSES) if need[k] > cache.size(k))
        return reserve(need, classes)
    cache.reserve = noting_reserve
    for batch in range(20):
        s = np.concatenate([rng.choice(hub_ids, 2, replace=False), rng.integers(48, n, 40)])
        d = rng.integers(48, n, s.size)
        change = g.insert_edges(g._xp.asarray(s), g._xp.asarray(d))
        for a, b in zip(to_host(change.src).tolist(), to_host(change.dst).tolist()):
            edges.add((a, b))
        gone = g.delete_edges(change.src[::2], change.dst[::2])
        for a, b in zip(to_host(gone.src).tolist(), to_host(gone.dst).tolist()):
            edges.discard((a, b))
    # (the CPU's small path moves lists but copies none within their class)
    assert not [k for k in short if k >= COPY_MIN_CLASS], short
    es, ed = g.edges()
    assert set(zip(to_host(es).tolist(), to_host(ed).tolist())) == edges
    g.check()


def test_emptied_graph_gives_every_block_back_after_a_noted_grow(device, monkeypatch):
    """A class noted short of room by one batch and emptied by a later one gets no block
    array at that later batch's end: the state machine's steps (an edge, two hubs grown
    across size classes, the analytics and the reference checked after each, every edge
    deleted in one batch) leave no block, on the compiled kernels' paths."""
    import hornet.core.jit as jit
    import hornet.testing as ht
    monkeypatch.setattr(jit.OptionalPath, "take", lambda self: True)

    class NoProperties:
        def draw(self, strategy):
            return {}

    m = ht.graph_state_machine(device=device, directed=False)()
    m.algorithms_match_oracles()
    m.insert(batch={"src": np.array([0]), "dst": np.array([1]), "props": {}})
    m.algorithms_match_oracles()
    m.matches_reference()
    for hub in (0, 1):
        m.grow_hub(data=NoProperties(), hub=hub)
        m.algorithms_match_oracles()
        m.matches_reference()
    m.delete_everything()              # asserts that no block is held
    assert m.graph.memory_stats()["block_bytes"] == 0
