"""The memory manager's invariant checks (:meth:`hornet.memory.manager.MemoryManager.check`)."""
from __future__ import annotations

import numpy as np


class InvariantError(AssertionError):
    """A structural invariant of the memory manager or the graph does not hold."""


def check(mm, pointers, size_classes) -> None:
    """Verify the allocator ``mm`` against the blocks that vertices say they own.

    ``pointers``/``size_classes``: the edge pointer and size class of every vertex that owns
    a block (the block cache's blocks are added here). Raises
    :class:`InvariantError` naming the first broken invariant.
    """
    mm.settle()
    lookup = mm.lookup()
    be = mm.backend
    pooled = sorted((a for pool in mm.pools.values() for a in pool), key=lambda a: a.base)
    if len(pooled) != len(lookup.arrays) or \
            any(a is not b for a, b in zip(pooled, lookup.arrays)):
        raise InvariantError("the block-array table differs from the pools")
    if not np.array_equal(lookup.bases, np.array([a.base for a in pooled], dtype=np.int64)):
        raise InvariantError("the block-array table's addresses differ from its arrays'")
    for k, pool in mm.pools.items():
        for arr in pool:
            if arr.size_class != k:
                raise InvariantError(f"block array of class {arr.size_class} in pool {k}")
            bad = be.find_inconsistency(arr.words, arr.level_offsets, arr.num_blocks)
            if bad >= 0:
                raise InvariantError(f"bit tree of {arr!r} inconsistent at word {bad}")
            free = be.count_free(arr.words, arr.level_offsets)
            if free != arr.free:
                raise InvariantError(f"{arr!r}: bit tree counts {free} free blocks, "
                                     f"the pool thinks {arr.free}")
            if arr.num_blocks > mm.blocks_per_array(k):
                raise InvariantError(f"{arr!r} exceeds block_array_edges")
        if sum(1 for a in pool if a.free == a.num_blocks) > 1:
            raise InvariantError(f"size class {k} keeps more than one empty block array")
        counted = (mm._class_blocks.get(k, 0), mm._class_used.get(k, 0))
        if counted != (sum(a.num_blocks for a in pool), sum(a.used for a in pool)):
            raise InvariantError(f"size class {k}: counted (blocks, used) {counted} differ "
                                 "from its arrays")
    free_slots = sum((b - mm._class_used.get(k, 0)) << k
                     for k, b in mm._class_blocks.items())
    if free_slots != mm._free_slots:
        raise InvariantError(f"free slots counted {mm._free_slots}, the classes' counts "
                             f"give {free_slots}")
    dt = mm._device_takes
    if dt is not None and not dt.stale and dt.lookup is lookup:
        host = np.array([a.free for a in lookup.arrays], dtype=np.int64)
        if not np.array_equal(be.to_host(dt.free), host):
            raise InvariantError("the device's free counts per block array differ from the "
                                 "host's")
    pointers = be.to_host(pointers).astype(np.int64)
    size_classes = be.to_host(size_classes).astype(np.int64)
    if mm.cache is not None:                 # the cache owns its blocks like a vertex
        try:
            mm.cache.check()
        except AssertionError as exc:
            raise InvariantError(str(exc)) from None
        cached, cached_classes = mm.cache.pointers()
        pointers = np.concatenate([pointers, be.to_host(cached).astype(np.int64)])
        size_classes = np.concatenate([size_classes, cached_classes])
    if pointers.size == 0:
        if any(a.used for pool in mm.pools.values() for a in pool):
            raise InvariantError("blocks marked used but no vertex owns a block")
        return
    index = np.searchsorted(lookup.bases, pointers, side="right") - 1
    if (index < 0).any():
        raise InvariantError("a vertex points below every block array")
    arr_class = lookup.size_class[index]
    if (arr_class != size_classes).any():
        v = int(np.flatnonzero(arr_class != size_classes)[0])
        raise InvariantError(f"vertex #{v} of size class {size_classes[v]} points into a "
                             f"block array of class {arr_class[v]}")
    offset = pointers - lookup.bases[index]
    block_bytes = np.left_shift(np.int64(4), size_classes)
    if (offset % block_bytes).any():
        raise InvariantError("a vertex pointer is not aligned to a block start")
    block = offset // block_bytes
    nblocks = np.array([a.num_blocks for a in lookup.arrays], dtype=np.int64)
    if (block >= nblocks[index]).any():
        raise InvariantError("a vertex pointer lies past the end of its block array")
    key = index * (1 << 40) + block
    if np.unique(key).size != key.size:
        raise InvariantError("two vertices share a block")
    owners = np.bincount(index, minlength=len(lookup.arrays))
    for i, arr in enumerate(lookup.arrays):
        if owners[i] != arr.used:
            raise InvariantError(f"{arr!r}: {arr.used} blocks marked used, "
                                 f"{owners[i]} owned by vertices")
        mine = block[index == i]
        if mine.size and be.to_host(be.is_free(arr.words, arr.level_offsets,
                                               be.xp.asarray(mine))).any():
            raise InvariantError(f"{arr!r}: a vertex's block is marked free")
