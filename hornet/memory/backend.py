"""What the memory manager needs from a device: an array module and a few kernels.

The CPU backend runs the Numba kernels of this package on NumPy buffers; the GPU backend runs
CUDA kernels (``gpu_bit_tree``, ``gpu_copy``) on CuPy buffers. The manager's logic is the same
for both; only per-size-class and per-block-array counts cross to the host.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from ..core.jit import ix, njit, part_range, split_kernel
from ..core.search import array_directory
from . import bit_tree


@dataclass(frozen=True)
class MemoryBackend:
    device: str
    xp: Any
    new_tree: Callable            # num_blocks -> (words, level_offsets host int64)
    count_free: Callable          # (words, offsets) -> int
    used_blocks: Callable         # (words, offsets, num_blocks) -> xp int64
    is_free: Callable             # (words, offsets, blocks) -> xp bool
    find_inconsistency: Callable  # (words, offsets, num_blocks) -> int (-1 = consistent)
    copy_ranges: Callable         # (src, dst, counts, dtype) -> None
    size_classes: Callable        # (degree int64, min_class) -> int64
    take_forest: Callable         # [(words, offsets, count, base, shift)] -> xp int64 pointers
    forest: Callable              # [(words, offsets)] -> several trees, for release_pointers
    release_pointers: Callable    # (forest, bases, shifts, pointers) -> host counts per tree
    # (classes int64, per_class host int64 (64,) from class_counts, pool) -> int64 (n,): entry
    # i gets a distinct block of class classes[i] from pool (classes ascending, per_class each)
    place_by_class: Callable
    class_counts: Callable        # classes int64 -> host int64 (64,): how many of each class
    # (pointers int64, bases (A,), field bases (A,), itemsize) -> addresses in that field,
    # all on the device (one kernel)
    field_addresses: Callable
    # (word addresses int64 (A,), padded level offsets int64 (A, FOREST_LEVELS + 1), host) ->
    # what ``forest`` makes of the same trees; None: the manager calls ``forest``
    forest_from_table: Callable | None = None
    # (rows (R, 5 + FOREST_LEVELS + 1) host int64, rings, ring_shift, state, state words) ->
    # None: blocks taken straight into the block cache's rings (GPU; None: the cache writes
    # the pointers ``take_forest`` returns)
    take_into_rings: Callable | None = None
    # [(words, offsets, num_blocks, used count, base, shift)] -> xp int64: the pointers of
    # every used block of several trees in one pass (GPU; None: the manager asks each array)
    used_forest: Callable | None = None
    # ([(BlockArray, count, log2 block bytes)], number of fields) -> xp int64: take_forest
    # for block arrays, their trees described by the arrays' cached lookup rows (what the
    # manager's allocations call on the GPU; the CPU takes through its own kernel)
    take_arrays: Callable | None = None

    def address(self, a) -> int:
        """Address of an array's first element."""
        return int(a.ctypes.data) if self.xp is np else int(a.data.ptr)

    def to_host(self, a):
        return a if self.xp is np else self.xp.asnumpy(a)


def _cpu_take_free(words, offsets, count):
    out = np.empty(int(count), dtype=np.int64)
    got = bit_tree.take_free(words, offsets, int(count), out, 0)
    return out[:got]


def _cpu_take_into_rings(rows, rings, ring_shift, state, state_words):
    """The CPU side of ``take_small_ring`` (``memory_kernels.cu``): the blocks of every row
    (see :func:`hornet.memory.gpu_bit_tree.take_into_rings`) taken by one compiled call and
    written to their ring slots, the counters set."""
    counts = np.ascontiguousarray(rows[:, 1])
    ptrs = bit_tree.take_forest(np.ascontiguousarray(rows[:, 0]),
                                np.ascontiguousarray(rows[:, 5:]), counts,
                                np.ascontiguousarray(rows[:, 3]), np.ascontiguousarray(rows[:, 4]))
    ring = np.repeat(rows[:, 2] >> 32, counts)
    first = np.repeat(rows[:, 2] & 0xffffffff, counts)
    step = np.arange(ptrs.shape[0], dtype=np.int64) - np.repeat(np.cumsum(counts) - counts,
                                                                counts)
    rings[(ring << ring_shift) + ((first + step) & ((1 << ring_shift) - 1))] = ptrs
    state[:] = state_words


def _cpu_take_forest(requests):
    """Per request (words, level_offsets, count, base, shift): the pointers ``base + (block
    << shift)`` of its ``count`` lowest free blocks, taken; all requests concatenated."""
    parts = [np.zeros(0, dtype=np.int64)]
    for words, offsets, count, base, shift in requests:
        parts.append(base + (_cpu_take_free(words, offsets, count) << shift))
    return np.concatenate(parts)


class _CpuForest:
    """The bit trees of one lookup (word addresses int64 (A,), padded level offsets int64 (A,
    FOREST_LEVELS + 1)) and, made on the first release through them, the directory that maps
    an address to its block array (:func:`hornet.core.search.array_directory` of the
    lookup's bases: the same for every release until the arrays change)."""

    __slots__ = ("addrs", "table", "_directory")

    def __init__(self, addrs, table):
        self.addrs, self.table, self._directory = addrs, table, None

    def directory(self, bases):
        if self._directory is None:
            self._directory = array_directory(bases)
        return self._directory


def _cpu_forest(trees):
    return _CpuForest(*bit_tree.forest_table(trees, lambda w: int(w.ctypes.data)))


def _cpu_release_pointers(forest, bases, shifts, pointers):
    counts = np.zeros(bases.shape[0], dtype=np.int64)
    bit_tree.release_forest(forest.addrs, forest.table, bases, forest.directory(bases), shifts,
                            pointers, counts)
    return counts


PLACE_CHUNKS = 16


@split_kernel(nrt=True, threshold=0, combine=sum)
def _cpu_class_counts_kernel(classes, part_index, parts):
    """How many entries of each size class (int64 (64,)); negative classes are not counted.
    (A split call's parts each count their pieces; their sum is the answer.)"""
    n = classes.shape[0]
    part = np.zeros((PLACE_CHUNKS, 64), dtype=np.int64)
    for c in range(*part_range(PLACE_CHUNKS, part_index, parts)):
        for i in range(n * c // PLACE_CHUNKS, n * (c + 1) // PLACE_CHUNKS):
            k = classes[ix(i)]
            if k >= 0:
                part[c, ix(k)] += 1
    out = np.zeros(64, dtype=np.int64)
    for c in range(PLACE_CHUNKS):
        for k in range(64):
            out[k] += part[c, k]
    return out


def _cpu_place_by_class_kernel(classes, per_class, pool):
    """Entry i gets the next block of its class in ``pool`` (classes one after the other,
    ascending; ``per_class``: their counts), entries of one class in order; in pieces (two
    split kernels: count per piece, then place)."""
    part = np.zeros((PLACE_CHUNKS, 64), dtype=np.int64)
    _count_by_piece(classes, part)
    _piece_offsets(part)
    out = np.empty(classes.shape[0], dtype=np.int64)
    _place_by_piece(classes, part, pool, out)
    return out


@split_kernel(threshold=0)
def _count_by_piece(classes, part, part_index, parts):
    n = classes.shape[0]
    for c in range(*part_range(PLACE_CHUNKS, part_index, parts)):
        for i in range(n * c // PLACE_CHUNKS, n * (c + 1) // PLACE_CHUNKS):
            part[c, ix(classes[ix(i)])] += 1


@njit
def _piece_offsets(part):
    at = 0
    for k in range(64):                  # class-major: piece c of class k after pieces < c
        for c in range(PLACE_CHUNKS):
            m = part[c, k]
            part[c, k] = at
            at += m


@split_kernel(threshold=0)
def _place_by_piece(classes, part, pool, out, part_index, parts):
    n = classes.shape[0]
    for c in range(*part_range(PLACE_CHUNKS, part_index, parts)):
        for i in range(n * c // PLACE_CHUNKS, n * (c + 1) // PLACE_CHUNKS):
            k = ix(classes[ix(i)])
            out[ix(i)] = pool[ix(part[c, k])]
            part[c, k] += 1


def _cpu_class_counts(classes):
    return _cpu_class_counts_kernel(classes.astype(np.int64, copy=False))


def _cpu_place_by_class(classes, per_class, pool):
    return _cpu_place_by_class_kernel(classes.astype(np.int64, copy=False), per_class, pool)


def _gpu_place_by_class(classes, per_class, pool):
    """``per_class`` (host) turned into each class's first pool entry, uploaded through the
    pinned staging buffer by :func:`hornet.memory.gpu_copy.place_by_class`."""
    from .gpu_copy import place_by_class
    class_start = np.zeros(per_class.shape[0], dtype=np.int64)
    np.cumsum(per_class[:-1], out=class_start[1:])
    return place_by_class(classes, class_start, pool)


def _cpu_size_classes(degree, min_class):
    out = np.empty(degree.shape[0], dtype=np.int64)
    _size_classes(degree, min_class, out)
    return out


@split_kernel
def _size_classes(degree, min_class, out, part, parts):
    for i in range(*part_range(degree.shape[0], part, parts)):
        d = degree[i]
        if d <= 0:
            out[i] = -1
        else:
            k = 0
            while (np.int64(1) << k) < d:
                k += 1
            out[i] = max(k, min_class)



@lru_cache(maxsize=None)
def memory_backend(device: str) -> MemoryBackend:
    """The backend for ``device`` ("cpu" or "gpu"); GPU kernels compile on first use."""
    if device == "cpu":
        from .copy_kernels import copy_ranges, field_addresses
        return MemoryBackend("cpu", np, bit_tree.new_tree,
                             lambda w, o: int(bit_tree.count_free(w, o)), bit_tree.used_blocks,
                             bit_tree.is_free, lambda w, o, n: int(bit_tree.find_inconsistency(
                                 w, o, n)),
                             copy_ranges, _cpu_size_classes, _cpu_take_forest, _cpu_forest,
                             _cpu_release_pointers, _cpu_place_by_class, _cpu_class_counts,
                             field_addresses, _CpuForest, _cpu_take_into_rings)
    if device == "gpu":
        import cupy
        from . import gpu_bit_tree as t
        from .gpu_copy import class_counts, copy_ranges, field_addresses, size_classes
        return MemoryBackend("gpu", cupy, t.new_tree, t.count_free,
                             t.used_blocks, t.is_free, t.find_inconsistency, copy_ranges,
                             size_classes, t.take_forest, t.forest, t.release_pointers,
                             _gpu_place_by_class, class_counts, field_addresses,
                             t.forest_from_table, t.take_into_rings, t.used_forest,
                             t.take_arrays)
    raise ValueError(f"unknown device {device!r}")
