"""A GPU batch planned on the device with one read-back (CUDA source ``plan.cu``).

The general pipeline (:mod:`hornet.batch.gpu.kernels`) validates, sorts, deduplicates, finds,
keeps, cuts into segments and counts per size class in separate steps, each reading a count
back to size the next one. :func:`plan_batch` does the same work in five launches, a sort
and a scan, and reads every count the host needs at once: sizes it does not know yet (kept entries, segments) are
bounded by the batch's entries, and the kernels read the true counts from the device.

Sort keys are ``src << 31 | dst`` (ids are int32, at most
:data:`hornet.batch.validate.MAX_VERTEX_ID`): no bit width depends on the graph or on the
batch's largest id, so validation is a by-product of packing the keys.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ...core.cuda import cupy, function, i64, launch

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plan.cu")
_ID_TYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}
_NAMES = tuple(f"batch_keys<{t}>" for t in _ID_TYPES.values())

# info slots (plan.cu)
I_BAD, I_MAX_ID, I_LOOPS, I_KEPT, I_SEGMENTS, I_ONCE, I_MOVES, I_CLASS = 0, 1, 2, 3, 4, 5, 6, 8
NUM_CLASSES = 64
INFO_WORDS = I_CLASS + NUM_CLASSES
#: most entries (pairs, twice that many when mirrored) a planned batch may have: one scan ranks
#: three counts of up to 21 bits each packed in an int64
MAX_ENTRIES = (1 << 21) - 1

_PINNED: list = []


def _fn(name: str):
    return function(_CU, name, _NAMES)


def _readback(info) -> np.ndarray:
    """``info`` copied into a reused pinned host buffer (the one synchronization)."""
    if not _PINNED:
        import cupyx
        _PINNED.append(cupyx.empty_pinned(INFO_WORDS, dtype=np.int64))
    host = _PINNED[0]
    info.get(out=host)
    return host


@dataclass
class BatchPlan:
    """A planned batch. Host ints: ``bad`` (an id outside [0, MAX_VERTEX_ID]: nothing else is
    valid), ``top`` (largest id + 1), ``loops`` (self-loop pairs dropped), ``kept``
    (entries the batch changes), ``segments``, ``moves`` (segments whose list moves), and
    ``per_class`` (host int64 (64,): moving segments per new size class).

    Device arrays, each cut to its true length: ``src``, ``dst`` (int32 (kept,), sorted by
    (src, dst)), ``at`` (int64 (kept,): insertion point or position in the old list),
    per segment ``sources`` (int32), ``seg_start``, ``seg_len``, ``old_deg``, ``new_deg``,
    ``old_ptr`` (int64), and ``moved`` / ``move_class`` (int64 (moves,): the moving
    segments, in no particular order, and their new classes); ``once_src``, ``once_dst``
    (int32 (kept / 2,)): an undirected batch's kept edges once, src < dst (None for a
    directed graph).
    """
    bad: bool
    top: int
    loops: int
    kept: int
    segments: int
    moves: int
    per_class: np.ndarray
    src: object = None
    dst: object = None
    at: object = None
    sources: object = None
    seg_start: object = None
    seg_len: object = None
    old_deg: object = None
    new_deg: object = None
    old_ptr: object = None
    moved: object = None
    move_class: object = None
    once_src: object = None
    once_dst: object = None


def plan_batch(s, d, mirror: bool, inserting: bool, degree, size_class, edge_ptr,
               min_class: int) -> BatchPlan:
    """Plan an insert (``inserting``) or delete of the pairs ``s``, ``d`` (contiguous int32 or
    int64 device arrays of one dtype, shape (n,), 0 < n and n * (2 if mirror else 1) <=
    MAX_ENTRIES) against the vertex table
    (``degree`` int32, ``size_class`` int8, ``edge_ptr`` int64, each (table_len,) on the
    device; ids at or past table_len have no list). ``mirror``: an undirected graph (each
    pair stands for both directions; self-loops are dropped).

    Five launches, a sort and a scan, one read-back; nothing is written outside the returned
    arrays.
    """
    n = int(s.shape[0])
    entries = n * (2 if mirror else 1)
    table_len = int(degree.shape[0])
    info = cupy.zeros(INFO_WORDS, dtype=cupy.int64)
    # a few buffers (rows of `entries` items) instead of a dozen allocations; the change's
    # arrays get their own (a caller keeping the change keeps no scratch)
    wide = cupy.empty((11, entries), dtype=cupy.int64)
    sources = cupy.empty(entries, dtype=cupy.int32)
    pairs = cupy.empty((2, entries), dtype=cupy.int32)
    once_pairs = cupy.empty(entries if mirror else 0, dtype=cupy.int32)
    keep = cupy.empty(entries, dtype=cupy.uint8)
    keys = wide[0].view(cupy.uint64)
    at_all, flags, at, seg_start, moved, move_class = (wide[k] for k in range(1, 7))
    seg_len, old_deg, new_deg, old_ptr = (wide[k] for k in range(7, 11))
    src, dst = pairs[0], pairs[1]
    launch(_fn(f"batch_keys<{_ID_TYPES[s.dtype]}>"), n, (s, d, i64(n), np.int32(mirror), info,
                                                          keys))
    keys.sort()
    launch(_fn("batch_find"), entries, (keys, i64(entries), degree, edge_ptr, i64(table_len),
                                        np.int32(inserting), keep, at_all))
    w = max(1, entries.bit_length())           # 3 * w <= 63 (MAX_ENTRIES)
    launch(_fn("batch_ranks"), entries, (keys, keep, i64(entries), np.int32(w),
                                         np.int32(mirror), flags))
    rank = cupy.cumsum(flags)
    half = entries // 2 if mirror else 0
    once_src, once_dst = once_pairs[:half], once_pairs[half:2 * half]
    launch(_fn("batch_scatter"), entries, (keys, keep, at_all, rank, i64(entries),
                                           np.int32(w), info, src, dst, at, seg_start,
                                           once_src if mirror else i64(0),
                                           once_dst if mirror else i64(0)))
    launch(_fn("batch_plan"), entries, (src, seg_start, info, degree, size_class, edge_ptr,
                                        i64(table_len), np.int32(inserting), np.int32(min_class),
                                        sources, seg_len, old_deg, new_deg, old_ptr, moved,
                                        move_class))
    h = _readback(info)
    plan = BatchPlan(bool(h[I_BAD]), int(h[I_MAX_ID]) + 1, int(h[I_LOOPS]), int(h[I_KEPT]),
                     int(h[I_SEGMENTS]), int(h[I_MOVES]),
                     h[I_CLASS:I_CLASS + NUM_CLASSES].copy())
    if plan.bad:
        return plan
    m, ns, mv = plan.kept, plan.segments, plan.moves
    plan.src, plan.dst, plan.at = src[:m], dst[:m], at[:m]
    plan.sources, plan.seg_start = sources[:ns], seg_start[:ns]
    plan.seg_len, plan.old_deg = seg_len[:ns], old_deg[:ns]
    plan.new_deg, plan.old_ptr = new_deg[:ns], old_ptr[:ns]
    plan.moved, plan.move_class = moved[:mv], move_class[:mv]
    if mirror:
        plan.once_src, plan.once_dst = once_src[:m // 2], once_dst[:m // 2]
    return plan
