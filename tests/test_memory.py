"""The memory manager: bit trees against brute force, batched allocation, release, compaction."""
from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hornet.memory import bit_tree as bt
from hornet.memory.manager import GROWTH, InvariantError, MemoryManager
from hornet.core.search import array_directory, array_holding, array_in_directory


@given(n=st.integers(1, 5000), ops=st.lists(st.tuples(st.booleans(), st.integers(0, 300)),
                                           max_size=12))
def test_bit_tree_matches_a_set_of_free_blocks(n, ops):
    words, offsets = bt.new_tree(n)
    free = set(range(n))
    out = np.empty(n, dtype=np.int64)
    for take, k in ops:
        if take:
            got = bt.take_free(words, offsets, k, out, 0)
            expect = sorted(free)[:k]          # lowest free blocks first
            assert out[:got].tolist() == expect
            free -= set(expect)
        else:
            used = sorted(set(range(n)) - free)[:k]
            bt.give_back(words, offsets, np.asarray(used, dtype=np.int64))
            free |= set(used)
        assert bt.find_inconsistency(words, offsets, n) == -1
        assert bt.count_free(words, offsets) == len(free)
        assert bt.used_blocks(words, offsets, n).tolist() == sorted(set(range(n)) - free)


@given(gaps=st.lists(st.integers(1, 1 << 40), min_size=1, max_size=300),
       start=st.integers(1, 1 << 44), probes=st.lists(st.integers(-(1 << 20), 1 << 20),
                                                      max_size=50), seed=st.integers(0, 99))
def test_array_directory_finds_the_same_array_as_a_binary_search(gaps, start, probes, seed):
    """array_in_directory against array_holding (and a brute-force count) for addresses
    below, inside, at the edges of and past arrays spread over wide and narrow ranges."""
    bases = start + np.cumsum(np.asarray(gaps, dtype=np.int64)) - gaps[0]
    directory = array_directory(bases)
    assert directory.shape[0] - 2 <= 1 << 14
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, bases.shape[0], 64)
    addresses = np.concatenate([bases, bases - 1, bases + 1, bases[picks] + rng.integers(
        0, 1 << 41, 64), bases[0] + np.asarray(probes, dtype=np.int64)])
    got = np.asarray([_in_directory(directory, bases, int(a)) for a in addresses])
    expect = np.maximum(np.searchsorted(bases, addresses, side="right") - 1, 0)
    assert got.tolist() == expect.tolist()
    assert got.tolist() == [_holding(bases, int(a)) for a in addresses]


def test_release_of_no_blocks_without_arrays():
    """A delete that empties every list hands release only zero pointers; with no block
    array left, nothing is looked up (the empty directory)."""
    mm = MemoryManager([("dst", np.int32)], block_array_edges=64)
    assert array_directory(np.zeros(0, dtype=np.int64)).tolist() == [6, 0, 0]
    mm.release(np.zeros(5, dtype=np.int64))
    ptrs = mm.allocate(1, 3)
    mm.release(np.concatenate([ptrs, np.zeros(2, dtype=np.int64)]))
    mm.release_spares()
    assert not mm.lookup().arrays
    mm.release(np.zeros(4, dtype=np.int64))
    assert mm.stats()["block_bytes"] == 0


@numba.njit
def _in_directory(directory, bases, address):
    return array_in_directory(directory, bases, address)


@numba.njit
def _holding(bases, address):
    return array_holding(bases, address)


def test_bit_tree_inconsistency_is_detected():
    words, offsets = bt.new_tree(200)
    out = np.empty(64, dtype=np.int64)
    bt.take_free(words, offsets, 64, out, 0)       # empties leaf word 0
    assert bt.find_inconsistency(words, offsets, 200) == -1
    words[offsets[1]] |= np.uint64(1)              # parent claims word 0 has a free block
    assert bt.find_inconsistency(words, offsets, 200) == offsets[1]


@pytest.mark.parametrize("small_take", [False, True])
def test_forest_take_and_release_match_one_tree_at_a_time(device, small_take, monkeypatch):
    """take_forest / release_pointers (many bit trees in one pass) against sets of free
    blocks, on every backend: lowest free blocks first, pointers base + (block << shift).
    On the GPU, both the scan over whole leaf levels and the one-block-per-tree take_small."""
    from hornet.memory.backend import memory_backend
    if device == "gpu":
        from hornet.memory import gpu_bit_tree
        monkeypatch.setattr(gpu_bit_tree, "SMALL_TAKE", 1 << 40 if small_take else 0)
    elif small_take:
        pytest.skip("the CPU has one take path")
    be = memory_backend(device)
    xp = be.xp
    rng = np.random.default_rng(5)
    sizes = [1, 63, 64, 65, 4097, 300_001]
    trees = [be.new_tree(n) for n in sizes]
    free = [np.ones(n, dtype=bool) for n in sizes]
    bases = np.array([(a + 1) << 40 for a in range(len(sizes))], dtype=np.int64)
    shifts = rng.integers(2, 7, len(sizes)).astype(np.int64)
    for _ in range(4):
        requests, want = [], []
        for a, (words, offsets) in enumerate(trees):
            count = int(rng.integers(0, free[a].sum() + 1)) if rng.random() < 0.8 else 0
            base, shift = int(bases[a]), int(shifts[a])
            ids = np.flatnonzero(free[a])[:count]
            free[a][ids] = False
            requests.append((words, offsets, count, base, shift))
            want.append(base + (ids << shift))
        got = be.to_host(be.take_forest(requests))
        assert np.array_equal(got, np.concatenate(want))
        pointers, count_back = [], []
        for a, n in enumerate(sizes):
            used = np.flatnonzero(~free[a])
            back = rng.permutation(used)[:int(rng.integers(0, used.size + 1))]
            free[a][back] = True
            pointers.append(bases[a] + (back.astype(np.int64) << shifts[a]))
            count_back.append(back.size)
        pointers = np.concatenate(pointers)
        pointers = pointers[rng.permutation(pointers.size)]     # trees interleaved
        counts = be.release_pointers(be.forest(trees), xp.asarray(bases), xp.asarray(shifts),
                                     xp.asarray(pointers))
        assert np.array_equal(counts, count_back)
        for (words, offsets), n, f in zip(trees, sizes, free):
            assert be.find_inconsistency(words, offsets, n) == -1
            assert be.count_free(words, offsets) == int(f.sum())
            assert np.array_equal(be.to_host(be.used_blocks(words, offsets, n)),
                                  np.flatnonzero(~f))
        if be.used_forest is not None:           # every tree's used blocks in one pass
            got = be.to_host(be.used_forest([
                (words, offsets, n, int((~f).sum()), int(bases[a]), int(shifts[a]))
                for a, ((words, offsets), n, f) in enumerate(zip(trees, sizes, free))]))
            want = [bases[a] + (np.flatnonzero(~f).astype(np.int64) << shifts[a])
                    for a, f in enumerate(free)]
            assert np.array_equal(got, np.concatenate(want))


def _manager(**kw):
    return MemoryManager([("dst", np.int32), ("w", np.float64)], **kw)


def test_allocation_is_batched_and_fills_exactly_sized_arrays():
    mm = _manager(block_array_edges=1 << 10)
    ptrs = mm.allocate(3, 100)                     # 128 blocks of 8 fit per array
    assert ptrs.shape == (100,) and np.unique(ptrs).size == 100
    pool = mm.pools[3]
    assert len(pool) == 1 and pool[0].num_blocks == 100   # sized to the request
    mm.check(ptrs, np.full(100, 3))
    grown = int(GROWTH * 100)
    more = mm.allocate(3, grown - 2)               # grows geometrically across calls
    assert [a.num_blocks for a in mm.pools[3]] == [100, grown]
    bulk = mm.allocate(3, 300)   # within a call: free room first, then full arrays, exact fit
    rest = 300 - 2
    assert [a.num_blocks for a in mm.pools[3]] == \
        [100, grown] + [128] * (rest // 128) + ([rest % 128] if rest % 128 else [])
    mm.check(np.r_[ptrs, more, bulk], np.full(400 + grown - 2, 3))


def test_blocks_larger_than_a_block_array_get_dedicated_arrays():
    mm = _manager(block_array_edges=64)
    ptrs = mm.allocate(8, 3)                       # 256-edge blocks
    assert [a.num_blocks for a in mm.pools[8]] == [1, 1, 1]
    mm.check(ptrs, np.full(3, 8))
    mm.release(ptrs)
    assert 8 not in mm.pools                       # nothing live: no spare kept


def test_release_frees_empty_arrays_keeping_at_most_one_spare():
    mm = _manager(block_array_edges=64)            # 16 blocks of class 2 per array
    ptrs = mm.allocate(2, 64)
    assert len(mm.pools[2]) == 4
    keep, drop = ptrs[:8], ptrs[8:]
    mm.release(drop)
    mm.check(keep, np.full(8, 2))
    assert sum(a.free == a.num_blocks for a in mm.pools[2]) <= 1
    assert mm.stats()["block_arrays"] <= 2


def test_compaction_moves_blocks_and_contents():
    mm = _manager(block_array_edges=64)
    ptrs = mm.allocate(2, 64)                      # 4 arrays x 16 blocks
    for f, fill in ((0, lambda p: (p % 1000).astype(np.int32)), (1, lambda p: p * 0.5)):
        addrs = mm.field_addresses(ptrs, f)
        _write(addrs, fill(ptrs), mm.field_dtypes[f])
    live = ptrs[::5]                               # 13 of 64 live: 20% utilization
    mm.release(np.setdiff1d(ptrs, live))
    old, new = mm.compact()
    assert old.size > 0
    moved = dict(zip(old.tolist(), new.tolist()))
    now = np.array([moved.get(p, p) for p in live.tolist()], dtype=np.int64)
    mm.check(now, np.full(now.size, 2))
    stats = mm.stats()["size_classes"][2]
    assert stats["block_utilization"] >= 0.5
    assert np.array_equal(_read(mm.field_addresses(now, 0), np.int32), (live % 1000))
    assert np.array_equal(_read(mm.field_addresses(now, 1), np.float64), live * 0.5)


@pytest.mark.gpu
def test_gpu_new_tree_matches_the_cpu_tree():
    """A new GPU bit tree (every level filled by one launch, or level by level past
    fill_tree's levels) equals the CPU's new tree word for word, at sizes around the word and
    level boundaries."""
    from conftest import HAS_GPU
    if not HAS_GPU:
        pytest.skip("no CUDA GPU / CuPy")
    import cupy
    from hornet.memory import gpu_bit_tree as gt
    for n in (0, 1, 63, 64, 65, 4095, 4096, 4097, 262143, 262144, 262145, 3 * (1 << 20) + 7):
        words, offsets = gt.new_tree(n)
        want, want_offsets = bt.new_tree(n)
        assert np.array_equal(offsets, want_offsets)
        assert np.array_equal(cupy.asnumpy(words), want), n
    saved = gt._FILL_TREE_LEVELS
    try:
        gt._FILL_TREE_LEVELS = 0                       # the level-by-level fill
        words, _ = gt.new_tree(262145)
        assert np.array_equal(cupy.asnumpy(words), bt.new_tree(262145)[0])
    finally:
        gt._FILL_TREE_LEVELS = saved


@pytest.mark.gpu
def test_gpu_repointing_matches_the_cpu_kernel():
    """hornet.memory.gpu_repoint against hornet.memory.repoint on the same vertex table:
    evacuated ranges of several classes, moved blocks in any order, vertices of other classes,
    without a list or outside the ranges left alone."""
    from conftest import HAS_GPU
    if not HAS_GPU:
        pytest.skip("no CUDA GPU / CuPy")
    import cupy
    from hornet.memory.gpu_repoint import repoint_moved as gpu_repoint
    from hornet.memory.repoint import repoint_moved
    rng = np.random.default_rng(3)
    ranges, old = [], []
    for a, k in enumerate([2, 2, 5, 0]):
        start, nblocks = (a + 1) << 32, int(rng.integers(1, 400))
        ranges.append((start, start + (nblocks << (k + 2)), k + 2))
        used = rng.choice(nblocks, size=int(rng.integers(1, nblocks + 1)), replace=False)
        old.append((start + (used.astype(np.int64) << (k + 2)), k))
    old_ptr = np.concatenate([o for o, _ in old])
    old_cls = np.concatenate([np.full(o.size, k) for o, k in old])
    new_ptr = (9 << 40) + np.arange(old_ptr.size, dtype=np.int64) * 64
    n = 5000
    edge_ptr = np.zeros(n, dtype=np.int64)
    size_class = np.full(n, -1, dtype=np.int8)
    owners = rng.choice(n, size=old_ptr.size, replace=False)
    edge_ptr[owners], size_class[owners] = old_ptr, old_cls
    others = np.setdiff1d(np.arange(n), owners)[:1000]
    edge_ptr[others] = (7 << 40) + others * 16             # outside every range
    size_class[others] = rng.choice([0, 2, 3, 5], others.size)
    order = rng.permutation(old_ptr.size)
    want = edge_ptr.copy()
    repoint_moved(want, size_class, n, ranges, old_ptr[order], new_ptr[order])
    got = cupy.asarray(edge_ptr)
    gpu_repoint(got, cupy.asarray(size_class), n, ranges, cupy.asarray(old_ptr[order]),
                cupy.asarray(new_ptr[order]))
    assert np.array_equal(cupy.asnumpy(got), want)
    assert np.array_equal(want[owners], new_ptr)


def test_check_catches_shared_and_foreign_blocks():
    mm = _manager(block_array_edges=64)
    ptrs = mm.allocate(1, 4)
    with pytest.raises(InvariantError, match="share"):
        mm.check(np.r_[ptrs[:3], ptrs[0]], np.full(4, 1))
    with pytest.raises(InvariantError, match="class"):
        mm.check(ptrs, np.full(4, 2))
    with pytest.raises(InvariantError, match="marked used"):
        mm.check(ptrs[:3], np.full(3, 1))


def test_settings_are_validated():
    with pytest.raises(ValueError, match="power of two"):
        _manager(block_array_edges=100)
    with pytest.raises(ValueError, match="power of two"):
        _manager(min_block_size=3)


def _write(addrs, values, dtype):
    from hornet.batch.cpu.lists import write_at
    write_at(addrs, np.asarray(values, dtype=dtype))


def _read(addrs, dtype):
    from hornet.batch.cpu.lists import read_at
    out = np.empty(addrs.shape[0], dtype=dtype)
    read_at(addrs, out)
    return out


# ---------------------------------------------------------------------------- block cache
def _pop(cache, need):
    """What a batch's kernels do with ``need[k]`` blocks per class: read them at the rings'
    heads (the host side of the contract; the GPU kernels do it on the device)."""
    out = []
    for k in np.flatnonzero(need):
        slots = k * cache.ring_slots + (cache.head[k] + np.arange(need[k])) % cache.ring_slots
        out.append(np.asarray(cache.rings)[slots])
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def _commit(cache, need, freed, accept):
    """:meth:`BlockCache.commit`, and the device counters advanced as a batch's last kernel
    block advances them."""
    spilled = cache.commit(need, freed, accept)
    cache.state[:] = np.array(cache.head + cache.tail)
    return spilled


def _push(cache, freed_ptrs, k):
    slots = k * cache.ring_slots + (cache.tail[k] + np.arange(len(freed_ptrs))) % \
        cache.ring_slots
    cache.rings[slots] = freed_ptrs


def test_small_take_spans_chunks_of_level1_words(device, monkeypatch):
    """The one-block-per-tree take on a tree of more level-1 words than the block has
    threads, free blocks sparse at the front and dense at the back (a fresh region under
    one level-1 word): lowest free blocks first, across the chunk boundary, the tree
    consistent after."""
    if device != "gpu":
        pytest.skip("a GPU kernel")
    from hornet.memory import gpu_bit_tree
    from hornet.memory.backend import memory_backend
    monkeypatch.setattr(gpu_bit_tree, "SMALL_TAKE", 1 << 40)
    be = memory_backend("gpu")
    n = 5_000_000                                  # 1,221 level-1 words: two chunks
    words, offsets = be.new_tree(n)
    rng = np.random.default_rng(8)
    free = np.zeros(n, dtype=bool)
    free[rng.choice(4_000_000, 3000, replace=False)] = True
    free[n - 9000:] = True
    base = 1 << 40
    everything = be.to_host(be.take_forest([(words, offsets, n, base, 3)]))
    assert np.array_equal(everything, base + (np.arange(n, dtype=np.int64) << 3))
    back = base + (np.flatnonzero(free).astype(np.int64) << 3)
    xp = be.xp
    be.release_pointers(be.forest([(words, offsets)]), xp.asarray(np.array([base])),
                        xp.asarray(np.array([3])), xp.asarray(back))
    assert be.count_free(words, offsets) == int(free.sum())
    for count in (2500, 4000, 5000):
        ids = np.flatnonzero(free)[:count]
        got = be.to_host(be.take_forest([(words, offsets, count, base, 3)]))
        assert np.array_equal(got, base + (ids << 3))
        free[ids] = False
        assert be.find_inconsistency(words, offsets, n) == -1
        assert be.count_free(words, offsets) == int(free.sum())


def test_small_take_shares_fresh_regions_among_warps(device, monkeypatch):
    """The one-block-per-tree take when the free blocks of a request sit under many
    neighbouring level-1 words (a fresh region far larger than one warp's words, after a
    fragmented front; the block's warps share those words out): lowest free blocks first,
    counts that end inside a leaf word, at a leaf word's end and at a level-1 word's end, the
    tree consistent after each take and every block handed out once."""
    if device != "gpu":
        pytest.skip("a GPU kernel")
    from hornet.memory import gpu_bit_tree
    from hornet.memory.backend import memory_backend
    monkeypatch.setattr(gpu_bit_tree, "SMALL_TAKE", 1 << 40)
    be = memory_backend("gpu")
    n = 3 << 20                                     # 768 level-1 words
    words, offsets = be.new_tree(n)
    base = 1 << 40
    everything = be.to_host(be.take_forest([(words, offsets, n, base, 4)]))
    assert np.array_equal(everything, base + (np.arange(n, dtype=np.int64) << 4))
    rng = np.random.default_rng(12)
    free = np.zeros(n, dtype=bool)
    free[rng.choice(1 << 20, 50_000, replace=False)] = True     # fragmented front
    free[1 << 20:] = True                                       # fresh back: 512 words
    back = base + (np.flatnonzero(free).astype(np.int64) << 4)
    xp = be.xp
    be.release_pointers(be.forest([(words, offsets)]), xp.asarray(np.array([base])),
                        xp.asarray(np.array([4])), xp.asarray(back))
    assert be.count_free(words, offsets) == int(free.sum())
    seen = []
    for count in (1, 49_999, 64, 4096 - 17, 17, 300_001, 1_000_000, 5, None):
        count = int(free.sum()) - 1 if count is None else count     # (all but one)
        ids = np.flatnonzero(free)[:count]
        got = be.to_host(be.take_forest([(words, offsets, count, base, 4)]))
        assert np.array_equal(got, base + (ids << 4))
        free[ids] = False
        seen.append(got)
        assert be.find_inconsistency(words, offsets, n) == -1
        assert be.count_free(words, offsets) == int(free.sum())
    every = np.concatenate(seen)
    assert np.unique(every).size == every.size


def test_block_cache_hands_out_reserved_blocks_and_takes_them_back():
    from hornet.memory.block_cache import FLOOR_SHARE_SHIFT, MIN_BLOCKS, NUM_CLASSES
    mm = _manager(block_array_edges=1 << 12)
    # lists of class 6 enough that the floors of classes 0 to 3 are MIN_BLOCKS
    others = mm.allocate(6, MIN_BLOCKS << (3 + FLOOR_SHARE_SHIFT - 6))

    def check(pointers, classes):
        mm.check(np.r_[others, pointers], np.r_[np.full(others.size, 6), classes])
    cache = mm.block_cache()
    need = np.zeros(NUM_CLASSES, np.int64)
    need[[0, 3]] = [5, 7]
    cache.reserve(need)
    assert (cache.sizes() >= need).all()
    # each ring short of blocks is filled to need + goal; a class without lists has its
    # floor as goal (no traffic yet to raise it)
    assert cache.goal(0) == MIN_BLOCKS
    assert cache.goal(1) == MIN_BLOCKS
    assert cache.size(0) == 5 + cache.goal(0) and cache.size(3) == 7 + cache.goal(3)
    check(np.zeros(0, np.int64), np.zeros(0, np.int64))      # the cache owns them all
    stats = mm.stats()["size_classes"]
    assert stats[0]["used_blocks"] == 0 and stats[0]["cached_blocks"] == cache.size(0)
    taken = _pop(cache, need)
    classes = np.repeat([0, 3], [5, 7])
    assert _commit(cache, need, np.zeros(NUM_CLASSES, np.int64), 0) == 0
    check(taken, classes)                       # popped blocks now belong to "vertices"
    assert mm.stats()["size_classes"][3]["used_blocks"] == 7
    # a batch gives back 2 of its class-3 blocks: the ring takes them
    freed = np.zeros(NUM_CLASSES, np.int64)
    freed[3] = 2
    accept = cache.accepts(np.zeros(NUM_CLASSES, np.int64), freed)
    assert accept == 1 << 3
    _push(cache, taken[5:7], 3)
    assert _commit(cache, np.zeros(NUM_CLASSES, np.int64), freed, accept) == 0
    check(np.r_[taken[:5], taken[7:]], np.r_[classes[:5], classes[7:]])
    # flushing gives every cached block back to the bit trees
    cache.flush()
    assert cache.sizes().sum() == 0
    check(np.r_[taken[:5], taken[7:]], np.r_[classes[:5], classes[7:]])
    assert sum(c["cached_blocks"] for c in mm.stats()["size_classes"].values()) == 0
    cache.state[3] += 1                            # device counters out of step: caught
    with pytest.raises(InvariantError, match="counters"):
        check(np.r_[taken[:5], taken[7:]], np.r_[classes[:5], classes[7:]])


def test_block_cache_refill_writes_blocks_at_the_rings_tails_across_the_wrap(device):
    """A refill (one launch on the GPU: blocks taken from the trees straight into the rings,
    counters set) puts distinct free blocks of the right class at the ring's tail, wrapping
    past the ring's end, from several block arrays of one class, and the device counters
    equal the host's. Checked against the allocator's own invariants (every cached block
    marked used, in its class, owned once) and a per-slot read of the rings."""
    from hornet.memory.block_cache import BlockCache, NUM_CLASSES
    mm = MemoryManager([("dst", np.int32), ("w", np.float64)], block_array_edges=1 << 6,
                       device=device)
    xp = mm.xp
    held = mm.allocate(2, 20)                      # class 2: 16 blocks per array, two arrays
    given = mm.backend.to_host(held)[[0, 1, 2, 17, 18]]   # free room in both arrays
    mm.release(xp.asarray(given))
    held = np.delete(mm.backend.to_host(held), [0, 1, 2, 17, 18])
    cache = mm.cache = BlockCache(mm, ring_slots=32)
    # traffic left both counters of classes 2 and 3 near the end of the ring
    for k in (2, 3):
        cache.head[k] = cache.tail[k] = 29
    cache.state[:] = xp.asarray(np.array(cache.head + cache.tail, dtype=np.int64))
    need = np.zeros(NUM_CLASSES, np.int64)
    need[[2, 3]] = [6, 5]
    cache.reserve(need)
    assert cache.size(2) >= 6 and cache.size(3) >= 5
    assert cache.tail[2] - 29 == cache.size(2) > 32 - 29   # the refill wrapped
    rings = mm.backend.to_host(cache.rings)
    for k in (2, 3):
        slots = k * 32 + (cache.head[k] + np.arange(cache.size(k))) % 32
        got = rings[slots]
        assert np.unique(got).size == got.size and (got != 0).all()
        if k == 2:                                 # the free room of both old arrays first
            assert set(given.tolist()) <= set(got.tolist())
    mm.check(held, np.full(15, 2, np.int64))       # includes the cache's blocks and counters
    assert mm.backend.to_host(cache.state).tolist() == cache.head + cache.tail


def test_block_cache_refuses_pushes_past_twice_its_target_and_large_classes():
    from hornet.memory.block_cache import NUM_CLASSES
    mm = _manager(block_array_edges=1 << 12)
    cache = mm.block_cache()
    freed = np.zeros(NUM_CLASSES, np.int64)
    freed[2] = 2 * cache.goal(2) + 1
    freed[40] = 1                                  # blocks of 2**40 slots: no reserve
    assert cache.target[40] == 0 and cache.goal(40) == 0
    assert cache.accepts(np.zeros(NUM_CLASSES, np.int64), freed) == 0
    freed[2] = 2 * cache.goal(2)
    assert cache.accepts(np.zeros(NUM_CLASSES, np.int64), freed) == 1 << 2
    from hornet.memory.block_cache import GRAPH_SHARE_SHIFT, LIST_SHARE_SHIFT
    mm.allocate(2, 100 << LIST_SHARE_SHIFT)         # lists of class 2: a larger goal ...
    assert cache.goal(2) == (100 << LIST_SHARE_SHIFT + 2) >> GRAPH_SHARE_SHIFT + 2 < 100
    mm.allocate(10, 200)                            # ... once the graph's lists are enough
    assert cache.goal(2) == 100 < cache.target[2]
    # as many taken as given back (no growth): kept past twice the goal, within the room
    # for balanced batches (twice the goal's ceiling, or a share of the graph's list slots)
    cache.target[2] = 10
    room = cache._balanced_room(2)
    assert room >= 2 * 100
    need = np.zeros(NUM_CLASSES, np.int64)
    need[2] = freed[2] = 15 * cache.goal(2)
    cache.reserve(need)
    cache.boost[2] = 0                             # without the refill's raise: goal 10
    assert cache.goal(2) == 10
    assert 2 * cache.goal(2) < cache.size(2) - need[2] + freed[2] <= room
    assert cache.accepts(need, freed) == 1 << 2
    need[2] = freed[2] = room + 1                  # past the room: spilled
    cache.reserve(need)
    cache.boost[2] = 0
    assert cache.size(2) - need[2] + freed[2] > room
    assert cache.accepts(need, freed) == 0
    with pytest.raises(ValueError, match="ring_slots"):
        need = np.zeros(NUM_CLASSES, np.int64)
        need[1] = cache.ring_slots
        cache.reserve(need)


def test_block_cache_keeps_the_balanced_turnover_of_large_blocks(monkeypatch):
    """A batch that copies hub lists to fresh blocks of their class (as many blocks taken as
    given back) keeps the given-back blocks in the ring when a block takes SPARE_MIN_BYTES
    or more (each would otherwise free its array and the next batch make it again), and
    spills them when the blocks are small next to that and to the graph."""
    import hornet.memory.manager as manager
    from hornet.memory.block_cache import NUM_CLASSES
    mm = _manager(block_array_edges=1 << 12)
    cache = mm.block_cache()
    mm.allocate(8, 4)                              # four hub lists of 256 slots
    need = np.zeros(NUM_CLASSES, np.int64)
    need[8] = 3
    freed = need.copy()
    cache.reserve(need)
    assert mm.bytes_per_slot << 8 < manager.SPARE_MIN_BYTES["cpu"]
    assert cache.accepts(need, freed) == 0         # small blocks, a small graph: spilled
    monkeypatch.setitem(manager.SPARE_MIN_BYTES, "cpu", mm.bytes_per_slot << 8)
    assert cache.accepts(need, freed) == 1 << 8
    freed[8] = 4                                   # more given back than taken: growth
    assert cache.accepts(need, freed) == 0


def test_block_cache_top_up_refills_low_rings_ahead_of_need():
    """top_up refills, before any batch needs it, a ring that has served and fell under its
    trigger (a quarter of its goal, at least two batches' need) to its goal; a ring above that, or one that never served, is left
    alone, and a batch's reserve then finds the blocks there. The arrays the next refill
    needs are made by grow_ahead, before the ring runs low, and the lookup rebuilt by the
    next top_up, each a batch of its own. The refilled blocks
    are distinct free blocks of the class (the allocator's invariants)."""
    from hornet.memory.block_cache import MIN_BLOCKS, NUM_CLASSES
    mm = _manager(block_array_edges=1 << 12)
    others = mm.allocate(6, MIN_BLOCKS << 10)      # lists enough for floors of MIN_BLOCKS
    cache = mm.block_cache()
    zero = np.zeros(NUM_CLASSES, np.int64)
    need = zero.copy()
    need[2] = 3
    cache.reserve(need)
    goal = cache.goal(2)
    assert cache.size(2) == 3 + goal
    cache.top_up()                                 # the reserve made arrays: the lookup
    assert cache.last_step == "lookup"
    arrays = mm.arrays_created
    cache.grow_ahead()                             # (one step a batch: nothing more)
    assert mm.arrays_created == arrays
    cache.top_up()                                 # full enough: nothing taken ...
    assert cache.size(2) == 3 + goal and cache.refills == 1 and cache.last_step is None
    cache.grow_ahead()                             # ... but arrays for the next refill
    assert cache.last_step == "grow" and mm.arrays_created > arrays
    assert mm.free_blocks(2) >= goal and mm.lookup_stale()
    cache.top_up()                                 # the next batch: the lookup first
    assert cache.last_step == "lookup" and not mm.lookup_stale()
    taken = []
    from hornet.memory.block_cache import MARK_PEAKS, MARK_SHIFT
    while cache.size(2) >= max(goal >> MARK_SHIFT, MARK_PEAKS * 3):   # batches drain it ...
        cache.top_up()
        assert cache.last_step is None
        step = zero.copy()
        step[2] = min(3, cache.size(2))
        taken.append(_pop(cache, step))
        _commit(cache, step, zero, 0)
    arrays = mm.arrays_created
    cache.top_up()                # ... under a quarter of its goal (and two batches' need)
    assert cache.refills == 2 and cache.size(2) >= goal and cache.last_step == "take"
    assert mm.arrays_created == arrays             # the room was there
    assert cache.size(5) == 0                      # never served: not touched
    before = cache.refills
    cache.reserve(need)                            # the batch finds its blocks cached
    assert cache.refills == before
    taken = np.concatenate(taken)
    mm.check(np.r_[others, taken], np.r_[np.full(others.size, 6), np.full(taken.size, 2)])


def test_block_cache_goals_follow_the_net_drain_of_refills(monkeypatch):
    """A refill raises a ring's goal to DEMAND_BATCHES times what its class lost per batch,
    net of blocks given back, since the previous refill (at most half the ring and the bytes
    budget); raises are kept. Balanced traffic raises nothing."""
    from hornet.memory import block_cache
    from hornet.memory.block_cache import BlockCache, DEMAND_BATCHES, MIN_BLOCKS, NUM_CLASSES
    # the graph's share (GRAPH_SHARE_SHIFT) out of the way: the raises are what is tested
    monkeypatch.setattr(block_cache, "GRAPH_SHARE_SHIFT", 0)
    assert DEMAND_BATCHES > 1
    mm = _manager(block_array_edges=1 << 16)
    # static goals of MIN_BLOCKS, and classes 0, 1 and 3 with lists enough that the cap of a
    # goal (1 / 2**LIST_SHARE_SHIFT of the class's lists) leaves room for the raises
    from hornet.memory.block_cache import LIST_SHARE_SHIFT
    cache = mm.cache = BlockCache(mm, max_blocks=MIN_BLOCKS)
    share = 1 << LIST_SHARE_SHIFT
    for k, lists in ((0, share * 800), (1, share * 80), (3, share * cache.ceiling[3])):
        mm.allocate(k, int(lists))
    zero = np.zeros(NUM_CLASSES, np.int64)
    need = zero.copy()
    need[0] = 100
    need[1] = 100
    freed = zero.copy()
    freed[1] = 90                         # class 1 gets most of its blocks back
    cache.reserve(need)
    assert cache.goal(0) == cache.floor(0) and cache.goal(1) == cache.floor(1)   # no traffic yet
    taken = []
    for _ in range(3):                    # a growing graph's batches: class 0 only drains
        cache.reserve(need)
        accept = cache.accepts(need, freed)
        taken.append(_pop(cache, need))
        _push(cache, taken[-1][100:190], 1)
        _commit(cache, need, freed, accept)
    # the second batch found the rings short (they hold need + 16): the refill saw one batch
    # of net drain 100 (class 0) and 10 (class 1); the third batch popped from the ring
    assert cache.goal(0) == DEMAND_BATCHES * 100
    assert cache.goal(1) == max(cache.floor(1), DEMAND_BATCHES * 10)
    assert cache.size(0) == 100 + cache.goal(0) - 2 * 100
    balanced = zero.copy()
    balanced[2] = 40
    cache.reserve(balanced)
    for _ in range(4):                    # pops and pushes balance: no raise at the refill
        accept = cache.accepts(balanced, balanced)
        got = _pop(cache, balanced)
        _push(cache, got, 2)
        _commit(cache, balanced, balanced, accept)
    cache.head[2] = cache.tail[2]         # (as if the ring had run dry)
    cache.state[:] = np.array(cache.head + cache.tail)
    cache.reserve(balanced)
    assert cache.goal(2) == cache.floor(2)
    assert cache.goal(0) == DEMAND_BATCHES * 100                # raises are kept
    huge = zero.copy()
    huge[3] = cache.ring_slots // 2
    cache.reserve(huge)
    cache.drained[3], cache.served[3] = cache.ring_slots, 1     # a drain past the ceiling
    cache.head[3] = cache.tail[3]
    cache.state[:] = np.array(cache.head + cache.tail)
    cache.reserve(huge)
    assert cache.goal(3) == cache.ceiling[3] <= cache.ring_slots // 2
    assert cache.size(3) == huge[3] + cache.goal(3) <= cache.ring_slots


def test_compaction_empties_the_cache_of_an_underused_class(monkeypatch):
    from hornet.memory import block_cache
    from hornet.memory.block_cache import NUM_CLASSES
    monkeypatch.setattr(block_cache, "GRAPH_SHARE_SHIFT", 0)   # a ring in a graph this small
    mm = _manager(block_array_edges=64)            # 16 blocks of class 2 per array
    ptrs = mm.allocate(2, 64)
    cache = mm.block_cache()
    cache.target[2] = 4
    freed = np.zeros(NUM_CLASSES, np.int64)
    freed[2] = 8                                   # 8 blocks go to the ring (2 x target)
    accept = cache.accepts(np.zeros(NUM_CLASSES, np.int64), freed)
    _push(cache, ptrs[:8], 2)
    _commit(cache, np.zeros(NUM_CLASSES, np.int64), freed, accept)
    live = ptrs[8::6]
    mm.release(np.setdiff1d(ptrs[8:], live))       # 10 blocks hold lists, 8 are cached
    mm.check(live, np.full(live.size, 2))
    old, new = mm.compact_touched()                # 18 of 64 in use (cached included)
    assert cache.size(2) == 0                      # flushed before the class was compacted
    moved = dict(zip(old.tolist(), new.tolist()))
    now = np.array([moved.get(p, p) for p in live.tolist()], dtype=np.int64)
    mm.check(now, np.full(now.size, 2))
    assert mm.stats()["size_classes"][2]["block_utilization"] >= 0.5


def test_a_full_reserve_does_not_make_a_class_compact():
    """Cached blocks count as used for compaction: a reserve larger than the lists of its
    class (a small graph) must not make every batch compact the class and refill it."""
    from hornet.memory.block_cache import FLOOR_SHARE_SHIFT, MIN_BLOCKS, NUM_CLASSES
    mm = _manager(block_array_edges=1 << 14)
    # lists enough elsewhere that class 4's floor is MIN_BLOCKS (a graph large enough for a
    # reserve of MIN_BLOCKS blocks of 16 slots)
    others = mm.allocate(0, MIN_BLOCKS << (4 + FLOOR_SHARE_SHIFT))
    cache = mm.block_cache()
    assert cache.floor(4) == MIN_BLOCKS
    need = np.zeros(NUM_CLASSES, np.int64)
    need[4] = 3
    cache.reserve(need)                            # 3 + target blocks in a fresh class
    taken = _pop(cache, need)
    _commit(cache, need, np.zeros(NUM_CLASSES, np.int64), 0)
    freed = np.zeros(NUM_CLASSES, np.int64)
    freed[4] = 2                                   # two lists leave: their blocks are cached
    accept = cache.accepts(np.zeros(NUM_CLASSES, np.int64), freed)
    _push(cache, taken[1:], 4)
    _commit(cache, np.zeros(NUM_CLASSES, np.int64), freed, accept)
    old, _ = mm.compact_touched()
    assert old.size == 0 and cache.size(4) == cache.goal(4) + 2 >= MIN_BLOCKS + 2
    mm.check(np.r_[others, taken[:1]], np.r_[np.zeros(others.size, np.int64), [4]])


def test_a_class_left_without_lists_gives_its_reserve_back():
    from hornet.memory.block_cache import NUM_CLASSES
    mm = _manager(block_array_edges=1 << 14)
    cache = mm.block_cache()
    need = np.zeros(NUM_CLASSES, np.int64)
    need[5] = 2
    cache.reserve(need)
    taken = _pop(cache, need)
    _commit(cache, need, np.zeros(NUM_CLASSES, np.int64), 0)
    mm.release(taken)                              # the class's last lists are gone
    mm.compact_touched()
    assert cache.size(5) == 0 and 5 not in mm.pools
    assert mm.stats()["block_bytes"] == 0
    mm.check(np.zeros(0, np.int64), np.zeros(0, np.int64))


class _Stub:
    """A block array as the table sees one: a base address and a lookup row."""

    def __init__(self, base):
        self.base = base

    def lookup_row(self):
        return np.array([self.base, self.base % 7, self.base * 3], dtype=np.int64)


@given(st.lists(st.tuples(st.lists(st.integers(1, 10**6), max_size=6),
                          st.lists(st.integers(0, 40), max_size=6)), max_size=10))
def test_array_table_edits_equal_a_rebuild(windows):
    """Arrays created and freed in windows (some both in one window): the edited table holds
    exactly the live arrays, ascending by address, with their rows."""
    from hornet.memory.array_table import ArrayTable
    table = ArrayTable(width=3)
    live, used = [], set()
    for bases, picks in windows:
        created = [_Stub(b) for b in dict.fromkeys(bases) if b not in used]
        used |= {a.base for a in created}
        pool = live + created
        freed = list({id(pool[i % len(pool)]): pool[i % len(pool)]
                      for i in picks if pool}.values())
        table.update(created, freed)
        gone = {id(a) for a in freed}
        live = [a for a in pool if id(a) not in gone]
        expect = sorted(live, key=lambda a: a.base)
        assert [id(a) for a in table.arrays] == [id(a) for a in expect]
        np.testing.assert_array_equal(
            table.rows, np.array([a.lookup_row() for a in expect], dtype=np.int64).reshape(-1, 3))


def test_array_table_refuses_an_unknown_array():
    from hornet.memory.array_table import ArrayTable
    table = ArrayTable([_Stub(10), _Stub(30)], width=3)
    with pytest.raises(KeyError, match="not in the block-array table"):
        table.delete([_Stub(30)])          # same address, another array
    assert [a.base for a in table.arrays] == [10, 30]


def test_manager_check_catches_a_stale_array_table():
    mm = MemoryManager([("dst", np.int32)], block_array_edges=64)
    ptrs = mm.allocate(2, 40)                      # two arrays of class 2
    mm.check(ptrs, np.full(ptrs.size, 2))
    mm.lookup().arrays.pop()                       # the table loses an array
    with pytest.raises(InvariantError, match="block-array table"):
        mm.check(ptrs, np.full(ptrs.size, 2))


def test_block_cache_goals_are_at_most_a_share_of_the_lists():
    """A reserve is memory held for nothing: a ring's goal, raised by traffic or not, is at
    most 1 / 2**LIST_SHARE_SHIFT of the blocks holding lists in its class, and at most the
    blocks that fill 1 / 2**GRAPH_SHARE_SHIFT of the graph's list slots (its floor at
    least)."""
    from hornet.memory.block_cache import GRAPH_SHARE_SHIFT, LIST_SHARE_SHIFT
    share = 1 << LIST_SHARE_SHIFT
    mm = _manager(block_array_edges=1 << 16)
    cache = mm.block_cache()
    mm.allocate(0, 20 * share)
    assert cache.goal(0) == max(cache.floor(0), (20 * share) >> GRAPH_SHARE_SHIFT) < 20
    mm.allocate(12, 16)                            # lists elsewhere: the graph's share grows
    assert cache.goal(0) == max(cache.floor(0), 20) == 20
    cache.boost[0] = 500
    assert cache.goal(0) == max(cache.floor(0), 20)    # raised by traffic, capped by the lists
    mm.allocate(0, share * 500 - 20 * share)
    assert cache.goal(0) == mm.list_slots() >> GRAPH_SHARE_SHIFT < 500   # ... by the graph
    mm.allocate(12, 64)
    assert cache.goal(0) == 500
    assert cache.goal(5) == cache.floor(5)         # a class without lists
    assert cache.goal(12) == max(cache.floor(12), (mm.list_slots() >> GRAPH_SHARE_SHIFT) >> 12)


def test_block_cache_floor_is_proportional_to_the_graph():
    """A ring's floor (its goal without lists or traffic) is MIN_BLOCKS in a graph whose list
    slots are at least 2**FLOOR_SHARE_SHIFT times that many blocks' slots, and shrinks with
    the graph below that (to none): the reserve of a small graph's large classes stays a
    small share of its memory."""
    from hornet.memory.block_cache import FLOOR_SHARE_SHIFT, MIN_BLOCKS
    mm = _manager(block_array_edges=1 << 16)
    cache = mm.block_cache()
    assert [cache.floor(k) for k in (0, 5, 12)] == [MIN_BLOCKS] * 3   # no lists yet
    mm.allocate(0, 200 << FLOOR_SHARE_SHIFT)        # 200 x 2**FLOOR_SHARE_SHIFT list slots
    slots = mm.list_slots()
    assert slots == 200 << FLOOR_SHARE_SHIFT
    assert cache.floor(0) == MIN_BLOCKS and cache.floor(4) == 12 and cache.floor(7) == 1
    assert cache.floor(8) == 0
    # the floor of a class's reserve holds at most 2**-FLOOR_SHARE_SHIFT of the list slots
    for k in range(12):
        assert (cache.floor(k) << k) <= slots >> FLOOR_SHARE_SHIFT


@pytest.mark.parametrize("size_class,num_blocks", [(0, 1), (3, 70), (5, 4097)])
def test_block_array_storage_is_the_same_compiled_or_made_by_numpy(size_class, num_blocks,
                                                                   monkeypatch):
    """A CPU block array is made by one compiled call (_cpu_storage) or, before that path
    opens, by NumPy calls: the same columns, bit tree and lookup row either way."""
    from hornet.core import jit
    from hornet.memory.backend import memory_backend
    from hornet.memory.block_array import BlockArray
    made = {}
    for policy in ("always", "never"):
        monkeypatch.setattr(jit, "optional_path_policy", policy)
        arr = BlockArray(size_class, num_blocks, [np.dtype(np.int32), np.dtype(np.float64)],
                         memory_backend("cpu"))
        made[policy] = arr
    a, b = made["always"], made["never"]
    for x, y in zip(a.columns, b.columns):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    assert np.array_equal(a.words, b.words)
    assert np.array_equal(a.level_offsets, b.level_offsets)
    row_a, row_b = a.lookup_row(), b.lookup_row()
    # the addresses differ (two allocations); the layout does not
    addresses = [0] + list(range(2, 2 + len(a.columns))) + [2 + len(a.columns)]
    assert np.array_equal(np.delete(row_a, addresses), np.delete(row_b, addresses))
    assert row_a[1] == row_b[1] == size_class


def test_releases_without_a_wait_count_every_array_as_the_arrays_grow(device):
    """Releases without a wait (GPU: one ReleaseSlot reused release after release, its
    buffers grown when the arrays outnumber them) give back exactly the blocks released:
    the host's counts after each settle equal the trees' (``check``), from a handful of block
    arrays to more than a hundred."""
    mm = MemoryManager([("dst", np.int32)], block_array_edges=1 << 4, device=device)
    xp = mm.xp
    held = np.zeros(0, dtype=np.int64)
    rng = np.random.default_rng(5)
    for blocks in (20, 300, 1500):                 # class 1: 8 blocks per array
        held = np.concatenate([held, mm.backend.to_host(mm.allocate(1, blocks))])
        give = rng.choice(held.size, held.size // 3, replace=False)
        mm.release(xp.asarray(held[give]), wait=False)
        held = np.delete(held, give)
        mm.release(xp.asarray(np.zeros(3, dtype=np.int64)), wait=False)   # nothing
        mm.settle()
        mm.check(held, np.full(held.size, 1, np.int64))
    assert sum(len(p) for p in mm.pools.values()) > 100


@pytest.mark.gpu
@pytest.mark.parametrize("small_take", [False, True])
def test_gpu_allocations_take_the_blocks_the_cpu_takes(small_take, monkeypatch):
    """The GPU manager's allocations (the request table made from the arrays' lookup rows,
    ``take_arrays``: one launch, or the scan over whole leaf levels) hand out the same blocks
    as the CPU manager's for the same calls: same class, same array (in the order the pools
    made them), same block, through growth, releases that leave holes in several arrays, and
    allocations of several classes at once."""
    from conftest import HAS_GPU
    if not HAS_GPU:
        pytest.skip("no CUDA GPU / CuPy")
    from hornet.memory import gpu_bit_tree
    monkeypatch.setattr(gpu_bit_tree, "SMALL_TAKE", 1 << 40 if small_take else 0)
    mms = {d: MemoryManager([("dst", np.int32), ("w", np.float32)], block_array_edges=1 << 6,
                            device=d) for d in ("cpu", "gpu")}

    def blocks(mm, ptrs):
        ptrs = mm.backend.to_host(ptrs).tolist()
        out = []
        for p in ptrs:
            out.append(next((k, i, (p - a.base) >> (k + 2))
                            for k, pool in sorted(mm.pools.items())
                            for i, a in enumerate(pool)
                            if a.base <= p < a.base + (a.num_blocks << (k + 2))))
        return out

    rng = np.random.default_rng(11)
    held = {d: [] for d in mms}
    for step in range(6):
        per_class = np.zeros(64, dtype=np.int64)
        per_class[[0, 1, 3]] = rng.integers(1, 90, size=3)
        got = {}
        for d, mm in mms.items():
            ptrs = mm.allocate_counts(per_class)
            got[d] = blocks(mm, ptrs)
            held[d].extend(mm.backend.to_host(ptrs).tolist())
        assert got["cpu"] == got["gpu"], step
        give = rng.choice(len(held["cpu"]), len(held["cpu"]) // 3, replace=False)
        for d, mm in mms.items():
            mm.release(mm.xp.asarray(np.asarray(held[d], dtype=np.int64)[give]))
            held[d] = np.delete(np.asarray(held[d], dtype=np.int64), give).tolist()
    for d, mm in mms.items():
        h = np.asarray(held[d], dtype=np.int64)
        classes = np.array([k for k, _, _ in blocks(mm, h)], dtype=np.int64)
        mm.check(h, classes)
