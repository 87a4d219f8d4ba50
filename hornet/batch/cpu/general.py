"""The general CPU batch pipeline (Numba): find, keep, plan, merge or remove, commit.

The same steps as the GPU's pipeline (:mod:`hornet.batch.gpu.kernels`), one kernel each:
:func:`find_positions` looks every entry up in its source's list, :func:`keep_entries` keeps
the new (insert) or present (delete) ones, :func:`plan_segments` cuts them into segments per
source with their new degrees and block moves, :func:`merge_lists` / :func:`remove_lists`
rewrite the lists and :func:`commit_segments` the vertex table. :func:`canonical_pairs` reports
an undirected change once per edge. CPU graphs update through the fused pipeline
(:mod:`hornet.batch.cpu.fused`); this one finds the edges of ``update_edges`` and
``has_edges``, and takes whole updates when the fused pipeline is switched off.
"""
from __future__ import annotations

import numpy as np

from ...core.jit import part_range, split_kernel
from ...core.pointers import as_width, int32_view, prefetch, view, width_dtype
from .lists import (CHUNKS, _count_changed, _count_heads, _fill_changed, _fill_heads, _lower_bound,
                    _move_items, _moves_down, prefix_counts)
from .workspace import Workspace, take


def workspace() -> Workspace:
    """Buffers for one graph's batches (see :mod:`hornet.batch.cpu.workspace`); the kernels that
    take ``ws`` draw their batch-local outputs from it."""
    return Workspace()


# Prefetch distances (iterations ahead): vertex-table rows first, then the list they point to.
FAR = 32
NEAR = 16
AHEAD = 8     # segments ahead that the list rewrites prefetch
SEARCH_CHUNKS = 256   # pieces of find_positions, each walked in order


def find_positions(src, dst, degree, edge_ptr, num_vertices, ws: Workspace | None = None):
    """Position of each ``dst[i]`` in the sorted list of ``src[i]``; when absent,
    ``-1 - p`` where ``p`` is where it would be inserted (so absent means negative).

    ``src``, ``dst``: integer arrays (n,), any order; returns int64 (n,) (from ``ws`` when
    given: valid until its next batch). Each query starts where its destination would sit if
    the list were spread evenly over the id space (``degree * dst // num_vertices``: vertex ids
    are usually shuffled, so this lands within a cache line or two of the answer, and the line
    is prefetched a few queries ahead) and gallops from there, never below where the query
    before it ended when that one had the same source and a smaller destination. Skewed id
    distributions cost at most about twice a binary search's probes.
    """
    out = take(ws, "positions", src.shape[0], np.int64)
    _find_positions(src, dst, degree, edge_ptr, num_vertices, out)
    return out


@split_kernel
def _find_positions(src, dst, degree, edge_ptr, num_vertices, out, part, parts):
    n = src.shape[0]
    nv = np.int64(max(num_vertices, 1))
    deg_base = degree.ctypes.data
    ptr_base = edge_ptr.ctypes.data
    for c in range(*part_range(SEARCH_CHUNKS, part, parts)):
        i1 = n * (c + 1) // SEARCH_CHUNKS
        prev_u = -1
        prev_x = 0
        prev_at = 0
        for i in range(n * c // SEARCH_CHUNKS, i1):
            if i + FAR < n and src[i + FAR] < num_vertices:
                prefetch(deg_base + 4 * np.int64(src[i + FAR]))
                prefetch(ptr_base + 8 * np.int64(src[i + FAR]))
            if i + NEAR < n and src[i + NEAR] < num_vertices:
                w = src[i + NEAR]
                dw = np.int64(degree[w])
                if dw > 0:                 # where the interpolation search will look first
                    gw = min(dw * min(np.int64(dst[i + NEAR]), nv) // nv, dw - 1)
                    prefetch(edge_ptr[w] + 4 * max(gw, 0))
            u = src[i]
            x = dst[i]
            out[i] = -1
            if u < num_vertices:
                d = np.int64(degree[u])
                if d > 0:
                    lst = int32_view(edge_ptr[u], d)
                    floor = prev_at if (u == prev_u and x > prev_x) else 0
                    lo = _lower_bound(lst, d, x, floor, nv)   # lst[:prev_at] < x already
                    if lo < d and lst[lo] == x:
                        out[i] = lo
                    else:
                        out[i] = -1 - lo
                    prev_u = u
                    prev_x = x
                    prev_at = lo


@split_kernel(nrt=True, combine=prefix_counts)
def _count_kept(pos, inserting, part, parts):
    n = pos.shape[0]
    found = np.zeros(CHUNKS + 1, dtype=np.int64)
    for c in range(*part_range(CHUNKS, part, parts)):
        k = 0
        for i in range(n * c // CHUNKS, n * (c + 1) // CHUNKS):
            k += (pos[i] < 0) == inserting
        found[c + 1] = k
    if parts == 1:
        for c in range(CHUNKS):
            found[c + 1] += found[c]
    return found


@split_kernel
def _insertion_points(pos, at, part, parts):
    for i in range(*part_range(pos.shape[0], part, parts)):
        at[i] = -1 - pos[i]


@split_kernel
def _fill_kept(pos, src, dst, inserting, found, kept, s_out, d_out, at, part, parts):
    n = pos.shape[0]
    need_index = kept.shape[0] > 0
    for c in range(*part_range(CHUNKS, part, parts)):
        j = found[c]
        if found[c + 1] == j:
            continue
        last = n * (c + 1) // CHUNKS - 1
        while (pos[last] < 0) != inserting:
            last -= 1
        for i in range(n * c // CHUNKS, last + 1):
            p = pos[i]
            s_out[j] = src[i]
            d_out[j] = dst[i]
            at[j] = -1 - p if inserting else p
            if need_index:
                kept[j] = i
            j += (p < 0) == inserting


def keep_entries(pos, src, dst, inserting: bool, need_index: bool = False,
                 ws: Workspace | None = None):
    """The entries a batch really changes, from the positions :func:`find_positions` found.

    Inserting keeps the absent entries (``pos < 0``) with ``at = -1 - pos`` (the number of old
    items before each); deleting keeps the present ones with ``at = pos``. ``pos``: int64
    (n,); ``src``, ``dst``: int32 (n,). Returns (kept: int64 (m,) indices of the kept entries,
    or None when every entry is kept or ``need_index`` is false; src int32 (m,); dst int32
    (m,); at int64 (m,)). When every entry is kept, src and dst are the arrays passed in
    (and deleting, ``at`` is ``pos``). ``at`` and ``kept`` come from ``ws`` when given.
    """
    inserting = bool(inserting)
    n = pos.shape[0]
    found = _count_kept(pos, inserting)
    m = int(found[CHUNKS])
    if m == n:
        if not inserting:
            return None, src, dst, pos
        at = take(ws, "insert_at", n, np.int64)
        _insertion_points(pos, at)
        return None, src, dst, at
    kept = take(ws, "kept", m if need_index else 0, np.int64)
    s_out, d_out = np.empty(m, dtype=src.dtype), np.empty(m, dtype=dst.dtype)
    at = take(ws, "insert_at", m, np.int64)
    _fill_kept(pos, src, dst, inserting, found, kept, s_out, d_out, at)
    return (kept if need_index else None), s_out, d_out, at


@split_kernel
def _decide_segments(sources, seg_start, n, degree, size_class, edge_ptr, inserting, min_class,
                     seg_len, old_deg, new_deg, old_ptr, resize, part, parts):
    ns = sources.shape[0]
    for k in range(*part_range(ns, part, parts)):
        v = sources[k]
        c = (seg_start[k + 1] if k + 1 < ns else n) - seg_start[k]
        d0 = np.int64(degree[v])
        cls = np.int64(size_class[v])
        cap = (np.int64(1) << cls) if cls >= 0 else np.int64(0)
        seg_len[k] = c
        old_deg[k] = d0
        old_ptr[k] = edge_ptr[v]
        if inserting:
            d1 = d0 + c
            resize[k] = d1 > cap
        else:
            d1 = d0 - c
            resize[k] = d1 > 0 and _moves_down(d1, cls, min_class)
        new_deg[k] = d1


def plan_segments(src, degree, size_class, edge_ptr, inserting: bool, min_class: int,
                  ws: Workspace | None = None):
    """Per-list plan of a batch sorted by source: one segment per distinct source.

    ``src``: int32 (m,), sorted, the source of every entry the batch changes (see
    :func:`keep_entries`); ``degree`` int32, ``size_class`` int8, ``edge_ptr`` int64: the
    vertex table. Inserting, a segment's list gains its entries; deleting, it loses them.
    Returns (sources int32 (S,), seg_start int64 (S,): first entry of each segment, seg_len
    int64 (S,), old_deg int64 (S,), new_deg int64 (S,), old_ptr int64 (S,): the edge pointer
    now (0 without a block), resize bool (S,)): inserting, the list outgrows its block;
    deleting, it keeps some edges but under a quarter of its capacity, and a smaller class
    (at least ``min_class``) holds them. The arrays come from ``ws`` when given.
    """
    found = _count_heads(src)
    ns = int(found[CHUNKS])
    sources = take(ws, "sources", ns, np.int32)
    out = [take(ws, name, ns, np.int64) for name in ("seg_start", "seg_len", "old_deg",
                                                      "new_deg", "old_ptr")]
    resize = take(ws, "resize", ns, np.bool_)
    _fill_heads(src, found, sources, out[0])
    _decide_segments(sources, out[0], src.shape[0], degree, size_class, edge_ptr,
                     bool(inserting), int(min_class), *out[1:], resize)
    return (sources, *out, resize)


@split_kernel
def commit_segments(sources, new_deg, grown, new_ptrs, new_classes, degree, size_class,
                    edge_ptr, part, parts):
    """Write a planned batch into the vertex table (after its lists were rewritten).

    ``degree[sources[k]] = new_deg[k]``; a source left with no edge gets pointer 0 and class
    -1; ``grown`` (int64 (G,), indices into the segments) moved to new blocks
    ``new_ptrs`` (int64 (G,)) of ``new_classes`` (int64 (G,)). ``sources`` int32 (S,) are
    distinct; ``new_deg`` int64 (S,). (The two loops write distinct vertices: a grown list is
    not empty; each part of a split call runs its share of both.)
    """
    for k in range(*part_range(sources.shape[0], part, parts)):
        v = sources[k]
        d = new_deg[k]
        degree[v] = d
        if d == 0:
            edge_ptr[v] = 0
            size_class[v] = -1
    for g in range(*part_range(grown.shape[0], part, parts)):
        v = sources[grown[g]]
        edge_ptr[v] = new_ptrs[g]
        size_class[v] = new_classes[g]


def merge_lists(src_ptrs, dst_ptrs, old_degree, seg_start, seg_len, insert_at, values) -> None:
    """Merge new items into many sorted lists, column by column.

    Segment ``s`` has an old list of ``old_degree[s]`` items at ``src_ptrs[f][s]`` in column
    ``f`` and writes its new list at ``dst_ptrs[f][s]`` (equal: in place; otherwise the blocks
    must not overlap, and the destination must hold ``old_degree[s] + seg_len[s]`` items).
    Its new items are ``values[f][seg_start[s]:][:seg_len[s]]``; new item ``j`` goes before
    old item ``insert_at[seg_start[s] + j]`` (nondecreasing within a segment), so it lands on
    slot ``insert_at[...] + j`` and old item ``i`` on ``i + #(insert_at <= i)``.

    ``src_ptrs``, ``dst_ptrs``: lists of int64 address arrays, shape (S,); ``old_degree``,
    ``seg_start``, ``seg_len``: int64 (S,); ``insert_at``: int64 (M,); ``values``: list of
    arrays (M,) in each column's dtype (merged as unsigned integers of its width).
    """
    for src, dst, vals in zip(src_ptrs, dst_ptrs, values):
        _merge_column(src, dst, old_degree, seg_start, seg_len, insert_at,
                      as_width(np.ascontiguousarray(vals)))


@split_kernel
def _merge_column(src, dst, old_degree, seg_start, seg_len, insert_at, values, part, parts):
    n = src.shape[0]
    size = values.itemsize
    for s in range(*part_range(n, part, parts)):
        if s + AHEAD < n:
            if old_degree[s + AHEAD] > 0:
                prefetch(src[s + AHEAD] + size * (old_degree[s + AHEAD] - 1))
            if dst[s + AHEAD] != src[s + AHEAD]:     # a new block: written from its end
                prefetch(dst[s + AHEAD] + size * (old_degree[s + AHEAD]
                                                  + seg_len[s + AHEAD] - 1))
        c = seg_len[s]
        b = seg_start[s]
        out = view(dst[s], old_degree[s] + c, values)
        i = old_degree[s]               # old items [0, i) are not placed yet
        for k in range(c):              # from the back: in place, nothing is overwritten unread
            j = c - 1 - k
            at = insert_at[b + j]
            if i > at:                  # old items [at, i) move up past the j + 1 new ones
                _move_items(dst[s] + size * (at + j + 1), src[s] + size * at, i - at, values)
                i = at
            out[at + j] = values[b + j]
        if dst[s] != src[s] and i > 0:
            _move_items(dst[s], src[s], i, values)


def remove_lists(src_ptrs, dst_ptrs, old_degree, seg_start, seg_len, positions,
                 dtypes, items: int | None = None) -> None:
    """Remove items from many lists, column by column, keeping the order of the rest.

    Segment ``s`` loses the ascending ``positions[seg_start[s]:][:seg_len[s]]`` (each <
    ``old_degree[s]``) of its list at ``src_ptrs[f][s]``; the survivors are written from slot
    0 at ``dst_ptrs[f][s]`` (equal: in place; otherwise non-overlapping blocks). ``dtypes``:
    each column's dtype. ``items``: at least ``old_degree``'s sum (the GPU sizes a workspace
    with it; unused here). Shapes as in :func:`merge_lists`.
    """
    for src, dst, dt in zip(src_ptrs, dst_ptrs, dtypes):
        _remove_column(src, dst, old_degree, seg_start, seg_len, positions,
                       np.empty(0, dtype=width_dtype(dt)))


@split_kernel
def _remove_column(src, dst, old_degree, seg_start, seg_len, positions, like, part, parts):
    n = src.shape[0]
    size = like.itemsize
    for s in range(*part_range(n, part, parts)):
        if s + AHEAD < n and old_degree[s + AHEAD] > 0:
            prefetch(src[s + AHEAD] + size * positions[seg_start[s + AHEAD]])
        c = seg_len[s]
        d0 = old_degree[s]
        b = seg_start[s]
        w = positions[b] if c > 0 else d0     # items before the first removal keep their slot
        if dst[s] != src[s] and w > 0:
            _move_items(dst[s], src[s], w, like)
        for j in range(c):                    # the run after each removal moves down
            lo = positions[b + j] + 1
            hi = positions[b + j + 1] if j + 1 < c else d0
            if hi > lo:
                _move_items(dst[s] + size * w, src[s] + size * lo, hi - lo, like)
                w += hi - lo


def canonical_entries(src, dst):
    """Indices (int64, ascending) of the entries with src < dst: each undirected edge once
    (the index part of :func:`canonical_pairs`)."""
    return canonical_pairs(src, dst)[0]


def canonical_pairs(src, dst, ws: Workspace | None = None, symmetric: bool = False):
    """Each undirected edge once: (indices int64 (m,) of the entries with src < dst, ascending,
    from ``ws`` when given; their src int32 (m,); their dst int32 (m,), always new arrays).
    ``src``, ``dst``: int32 arrays (n,). ``symmetric`` (both directions of every edge, no
    self-loop: lets the GPU twin skip a host sync) changes nothing here."""
    # the entry filter of changed_pairs with every entry in play (``src`` stands in for pos)
    found = _count_changed(src, src, dst, False, True, True)
    m = int(found[CHUNKS])
    once = take(ws, "once", m, np.int64)
    s_out, d_out = np.empty(m, dtype=np.int32), np.empty(m, dtype=np.int32)
    if m:
        _fill_changed(src, src, dst, False, True, True, found, s_out, d_out, once)
    return once, s_out, d_out
