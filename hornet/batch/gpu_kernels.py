"""GPU (CuPy + CUDA C++) kernels of the batch pipeline.

Same names, argument order and results as :mod:`hornet.batch.cpu_kernels`; every array is a
CuPy array on the current device unless said otherwise. Lists are reached through int64 device
addresses (``array.data.ptr + offset``): vertex ``v``'s destination list is ``degree[v]`` int32
values at ``edge_ptr[v]``, ascending; a property column's lists are reached through their own
per-vertex (or per-segment) addresses.

The CUDA source ``kernels.cu`` is compiled once per process (NVRTC via ``cupy.RawModule``) on
first use. Work over lists of very different lengths (a hub of 10^5+ entries next to millions
of tiny lists) is load-balanced: one thread per element of the concatenated lists, each thread
finding its list by binary search over an exclusive scan. Only counts (sizes of outputs and
scratch buffers) cross to the host.
"""
from __future__ import annotations

import os

import numpy as np

from ..memory.gpu_copy import ITEM_TYPES, as_i64, cupy, function, i64, item_type, launch, scan

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
_IDX = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}
_NAMES = tuple(
    [f"find_positions<{s}, {d}, {g}>" for s in _IDX.values() for d in _IDX.values()
     for g in _IDX.values()]
    + [f"{k}<{t}>" for k in ("column_scatter", "copy_back", "remove_scatter", "gather_lists",
                             "read_at", "write_at") for t in ITEM_TYPES.values()])

_ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


def _fn(name: str):
    return function(_CU, name, _NAMES)


def _int_array(a):
    """int32 or int64 contiguous device array (other integer types become int64)."""
    a = cupy.ascontiguousarray(cupy.asarray(a))
    if a.dtype not in (np.int32, np.int64):
        a = a.astype(cupy.int64)
    return a


def _i32(a):
    return cupy.ascontiguousarray(cupy.asarray(a).astype(cupy.int32, copy=False))


def _check_out(a, dtype, name):
    if not isinstance(a, cupy.ndarray) or a.dtype != dtype or not a.flags.c_contiguous:
        raise TypeError(f"{name} must be a contiguous CuPy {np.dtype(dtype)} array")


# ---------------------------------------------------------------------------- sorting
def sorted_unique_pairs(s, d, num_vertices: int, mirror: bool, need_order: bool = True):
    """Sort a batch by (src, dst) and drop repeats, first entry wins.

    ``s``, ``d``: int64 device arrays, shape (n,). ``mirror`` (undirected batch): pair i stands
    for entries 2i (s, d) and 2i + 1 (d, s), and self-loops are dropped.
    Returns (order int64 device | None: index of each kept entry in the (mirrored) entries,
    src int32 device, dst int32 device, loops: host int, the number of self-loop pairs).
    Keys ``((src << bits | dst) << index_bits) | entry`` are sorted by CuPy's radix sort; when
    they do not fit in 63 bits, a stable argsort of plain ``src << bits | dst`` keys is used.
    """
    s = cupy.ascontiguousarray(cupy.asarray(s).astype(cupy.int64, copy=False))
    d = cupy.ascontiguousarray(cupy.asarray(d).astype(cupy.int64, copy=False))
    n = int(s.shape[0])
    bits = max(1, int(num_vertices - 1).bit_length())
    entries = n * (2 if mirror else 1)
    index_bits = max(1, int(entries - 1).bit_length()) if need_order else 0
    if n == 0:
        e = cupy.empty(0, dtype=cupy.int32)
        return (cupy.empty(0, dtype=cupy.int64) if need_order else None), e, e.copy(), 0
    if 2 * bits + index_bits <= 63:
        keys = cupy.empty(entries, dtype=cupy.uint64)
        launch(_fn("pack_pairs"), n, (s, d, i64(n), np.int32(bits), np.int32(index_bits),
                                      np.int32(1 if mirror else 0), keys))
        keys = cupy.sort(keys)
        flag = cupy.empty(entries, dtype=cupy.uint8)
        end = cupy.full(1, entries, dtype=cupy.int64)
        launch(_fn("unique_flags"), entries, (keys, i64(entries), np.int32(index_bits), flag, end))
        idx = cupy.flatnonzero(flag)
        m = int(idx.shape[0])
        order = cupy.empty(m if need_order else 1, dtype=cupy.int64)
        src = cupy.empty(m, dtype=cupy.int32)
        dst = cupy.empty(m, dtype=cupy.int32)
        launch(_fn("decode_pairs"), m, (keys, idx, i64(m), np.int32(bits), np.int32(index_bits),
                                        np.int32(1 if need_order else 0), order, src, dst))
        loops = (entries - int(end[0])) // 2 if mirror else 0
        return (order if need_order else None), src, dst, loops
    # ids too large to pack with the entry index: stable argsort of plain keys
    if mirror:
        keep_pair = s != d
        ss = cupy.stack([s, d], axis=1).ravel()
        dd = cupy.stack([d, s], axis=1).ravel()
        entry = cupy.flatnonzero(cupy.repeat(keep_pair, 2))
        ss, dd = ss[entry], dd[entry]
        loops = n - int(entry.shape[0]) // 2
    else:
        ss, dd, entry, loops = s, d, None, 0
    keys = (ss.astype(cupy.uint64) << np.uint64(bits)) | dd.astype(cupy.uint64)
    order = cupy.argsort(keys)              # stable: the first entry of a repeat comes first
    skeys = keys[order]
    first = cupy.ones(skeys.shape[0], dtype=cupy.bool_)
    if skeys.shape[0] > 1:
        first[1:] = skeys[1:] != skeys[:-1]
    idx = cupy.flatnonzero(first)
    k = skeys[idx]
    src = (k >> np.uint64(bits)).astype(cupy.int32)
    dst = (k & np.uint64((1 << bits) - 1)).astype(cupy.int32)
    o = order[idx]
    if entry is not None:
        o = entry[o]
    return (o if need_order else None), src, dst, loops


def canonical_entries(src, dst):
    """Indices (int64 device) of the entries with src < dst: each undirected edge once."""
    return cupy.flatnonzero(cupy.asarray(src) < cupy.asarray(dst)).astype(cupy.int64, copy=False)


# ---------------------------------------------------------------------------- searching
def find_positions(src, dst, degree, edge_ptr, num_vertices: int):
    """Position (int64 device, shape (n,)) of each ``dst[i]`` in the sorted list of ``src[i]``,
    or -1 if absent (also when src[i] is outside [0, num_vertices)).

    ``src``, ``dst``: int32 or int64 device arrays; ``degree``: int32 or int64 per vertex;
    ``edge_ptr``: int64 addresses per vertex. One thread per query, binary search.
    """
    src, dst, degree = _int_array(src), _int_array(dst), _int_array(degree)
    edge_ptr = as_i64(edge_ptr)
    n = int(src.shape[0])
    out = cupy.empty(n, dtype=cupy.int64)
    if n:
        fn = _fn(f"find_positions<{_IDX[src.dtype]}, {_IDX[dst.dtype]}, {_IDX[degree.dtype]}>")
        launch(fn, n, (src, dst, i64(n), degree, edge_ptr, i64(num_vertices), out))
    return out


# ---------------------------------------------------------------------------- insertion
def _segments(seg_start, seg_len, old_degree):
    return as_i64(seg_start), as_i64(seg_len), as_i64(old_degree)


def merge_destinations(sources, seg_start, seg_len, new_dst, old_degree, edge_ptr, new_pos):
    """Merge each source's sorted new destinations into its sorted list, in place.

    ``sources`` (int32/int64, shape (S,)): the vertices; ``seg_start``/``seg_len`` (int64,
    (S,)): source s's new destinations are ``new_dst[seg_start[s]:][:seg_len[s]]`` (int32,
    ascending); ``old_degree`` (int64, (S,)); ``edge_ptr`` (int64 per vertex); the block of
    ``sources[s]`` has room for ``old_degree[s] + seg_len[s]`` entries. ``new_pos`` (int64
    device, shape (len(new_dst),)) receives the final slot of every new destination.

    Load-balanced: old elements that stay in place (those <= the first new one) are never
    touched; every other element gets one thread, which finds its final slot by binary search
    in the other sequence (old i -> i + #(new < old[i]); new j -> j + #(old <= new[j])) and
    writes it to a scratch buffer; a second launch copies the scratch back, coalesced.
    """
    _check_out(new_pos, np.int64, "new_pos")
    ns = int(cupy.asarray(sources).shape[0])
    if ns == 0:
        return
    seg_start, seg_len, old_degree = _segments(seg_start, seg_len, old_degree)
    new_dst = _i32(new_dst)
    base = cupy.ascontiguousarray(as_i64(edge_ptr)[as_i64(sources)])
    first = cupy.empty(ns, dtype=cupy.int64)
    tail = cupy.empty(ns, dtype=cupy.int64)
    launch(_fn("merge_plan"), ns, (base, seg_start, seg_len, new_dst, old_degree, i64(ns),
                                   first, tail))
    off, total = scan(tail)
    if total == 0:
        return
    scratch = cupy.empty(total, dtype=cupy.int32)
    launch(_fn("merge_scatter"), total, (base, seg_start, seg_len, new_dst, old_degree, first,
                                         off, i64(ns), i64(total), scratch, new_pos))
    launch(_fn("copy_back<unsigned int>"), total,
           (base, first, off, off, np.int32(0), i64(ns), i64(total), scratch))


def merge_column(column_ptr, seg_start, seg_len, old_degree, new_pos, values):
    """Replay :func:`merge_destinations` on one edge-property column, in place.

    ``column_ptr`` (int64, shape (S,)): the column address of each source's block;
    ``values`` (device, the column's dtype, shape (len(new_pos),)): the new entries' values,
    laid out like ``new_dst``; ``new_pos``: as returned by :func:`merge_destinations`. Any
    dtype of 1, 2, 4 or 8 bytes (the move depends only on the itemsize).
    """
    column_ptr = as_i64(column_ptr)
    ns = int(column_ptr.shape[0])
    if ns == 0:
        return
    seg_start, seg_len, old_degree = _segments(seg_start, seg_len, old_degree)
    new_pos = as_i64(new_pos)
    values = cupy.ascontiguousarray(cupy.asarray(values))
    t = item_type(values.dtype)
    first = cupy.empty(ns, dtype=cupy.int64)
    tail = cupy.empty(ns, dtype=cupy.int64)
    launch(_fn("column_plan"), ns, (seg_start, seg_len, old_degree, new_pos, i64(ns), first,
                                    tail))
    off, total = scan(tail)
    if total == 0:
        return
    scratch = cupy.empty(total, dtype=values.dtype)
    launch(_fn(f"column_scatter<{t}>"), total, (column_ptr, seg_start, seg_len, old_degree,
                                                 new_pos, values, first, off, i64(ns),
                                                 i64(total), scratch))
    launch(_fn(f"copy_back<{t}>"), total,
           (column_ptr, first, off, off, np.int32(0), i64(ns), i64(total), scratch))


# ---------------------------------------------------------------------------- deletion
def remove_positions(column_ptr, seg_start, seg_len, old_degree, positions, like):
    """Delete the ascending ``positions`` (int64 device) from each list of one column, keeping
    the order of the rest (stable compaction), in place.

    ``column_ptr`` (int64, (S,)): list addresses; list s loses
    ``positions[seg_start[s]:][:seg_len[s]]`` (each < ``old_degree[s]``); ``like``: an array of
    the column's dtype (1, 2, 4 or 8 bytes). Only elements after the first deleted position
    move, one thread each, through a scratch buffer.
    """
    column_ptr = as_i64(column_ptr)
    ns = int(column_ptr.shape[0])
    if ns == 0:
        return
    seg_start, seg_len, old_degree = _segments(seg_start, seg_len, old_degree)
    positions = as_i64(positions)
    t = item_type(like.dtype)
    first = cupy.empty(ns, dtype=cupy.int64)
    tail = cupy.empty(ns, dtype=cupy.int64)
    launch(_fn("remove_plan"), ns, (seg_start, seg_len, old_degree, positions, i64(ns), first,
                                    tail))
    off, total = scan(tail)
    if total == 0:
        return
    scratch = cupy.empty(total, dtype=np.dtype(like.dtype))
    launch(_fn(f"remove_scatter<{t}>"), total, (column_ptr, seg_start, seg_len, positions,
                                                 first, off, i64(ns), i64(total), scratch))
    launch(_fn(f"copy_back<{t}>"), total,
           (column_ptr, first, off, seg_len, np.int32(1), i64(ns), i64(total), scratch))


# ---------------------------------------------------------------------------- gathers
def gather_lists(column_ptr, degree, offsets, out) -> None:
    """Concatenate every vertex's list of one column into ``out``.

    ``column_ptr`` (int64, (V,)), ``degree`` (integer, (V,)), ``offsets`` (int64, (V,)): where
    vertex v's list starts in ``out`` (a contiguous device array of the column's dtype).
    One thread per output element (load-balanced over lists of any length).
    """
    column_ptr = as_i64(column_ptr)
    nv = int(column_ptr.shape[0])
    if nv == 0:
        return
    if not out.flags.c_contiguous:
        raise TypeError("out must be contiguous")
    deg = cupy.maximum(as_i64(degree), 0)
    off, total = scan(deg)
    if total == 0:
        return
    launch(_fn(f"gather_lists<{item_type(out.dtype)}>"), total,
           (column_ptr, off, as_i64(offsets), i64(nv), i64(total), out))


def read_at(addresses, out) -> None:
    """``out[i]`` = the value of ``out``'s dtype at device address ``addresses[i]`` (int64)."""
    addresses = as_i64(addresses)
    n = int(addresses.shape[0])
    if n == 0:
        return
    if not out.flags.c_contiguous:
        raise TypeError("out must be contiguous")
    launch(_fn(f"read_at<{item_type(out.dtype)}>"), n, (addresses, i64(n), out))


def write_at(addresses, values) -> None:
    """Store ``values[i]`` at device address ``addresses[i]`` (int64), in values' dtype."""
    addresses = as_i64(addresses)
    n = int(addresses.shape[0])
    if n == 0:
        return
    values = cupy.ascontiguousarray(cupy.asarray(values))
    launch(_fn(f"write_at<{item_type(values.dtype)}>"), n, (addresses, i64(n), values))


def list_violations(edge_ptr, degree, num_vertices: int, out) -> None:
    """Per vertex into ``out`` (int8 device, (V,)): 0 ok, 1 unsorted or duplicate,
    2 destination out of [0, num_vertices). One warp per vertex, coalesced."""
    _check_out(out, np.int8, "out")
    edge_ptr = as_i64(edge_ptr)
    nv = int(edge_ptr.shape[0])
    if nv == 0:
        return
    launch(_fn("list_violations"), nv,
           (edge_ptr, as_i64(degree), i64(nv), i64(num_vertices), out), threads_per_item=32)
