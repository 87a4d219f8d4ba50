"""The CPU delete without a plan pass (Numba): remove in place first, then move the few lists
that shrink under a quarter of their block.

A delete never needs a block to go through: a list that loses entries fits the block it has.
The fused delete of :mod:`hornet.batch.cpu.fused` still plans first (a pass over every
segment's vertex row) so that the smaller blocks of the lists that shrink are allocated
before anything is written. Here one pass over the segments (:func:`remove_in_place`)
searches each list, removes the batch's present entries in place (every edge field), writes
the degree, gives back the blocks of lists left empty and names the lists that now fill less
than a quarter of their block (``mover_class``: the class they move to, else -1). Those lists
(a few in a hundred under random deletes) then get their blocks in one allocation and move
(:func:`move_down`): the allocation comes after the removal, so the lists' final blocks are
those the planned delete gives them (the same per-class requests, handed out in segment
order, from the same allocator state). Should no memory be left for them, they keep their
blocks: the graph holds every invariant either way (a list may sit in a block larger than
the quarter rule wants; :class:`hornet.memory.list_fit.ListFit` refits loose lists).
"""
from __future__ import annotations

import numpy as np

from ...core.jit import ix, part_range, split_kernel
from ...core.pointers import int32_view, prefetch, prefetch_write
from .fused import (LIST_KERNEL_MIN, MERGE_AHEAD, ROW_WRITE_AHEAD, WRITE, EdgeFields,
                    _plan_arrays, _prefetch_lines, _prefetch_row)
from .lists import (_field_address, _move_field, _moves_down, _remove_field, _search_segment,
                    _smallest_class)
from .workspace import Workspace, take

__all__ = ["remove_in_place", "move_down"]


@split_kernel(threshold=LIST_KERNEL_MIN)
def _remove_in_place(sources, seg_start, dst, pos, num_vertices, min_class, degree,
                     size_class, edge_ptr, removed, freed, mover_class, ahead, bases,
                     field_bases, sizes, gone, part, parts):
    ns = sources.shape[0]
    nv = np.int64(max(num_vertices, 1))
    for k in range(*part_range(ns, part, parts)):
        if k + ROW_WRITE_AHEAD < ns:
            _prefetch_row(sources[ix(k + ROW_WRITE_AHEAD)], degree, size_class, edge_ptr,
                          WRITE)
        if k + ahead < ns:
            # the row, prefetched ROW_WRITE_AHEAD segments back, names the list's lines
            q = ix(sources[ix(k + ahead)])
            dq = np.int64(degree[q])
            if dq > 0:
                _prefetch_lines(edge_ptr[q], edge_ptr[q] + 4 * dq, WRITE)
                prefetch_write(edge_ptr[q])
        s = ix(k)
        v = ix(sources[s])
        b = np.int64(seg_start[s])
        c = seg_start[ix(k + 1)] - b
        d0 = np.int64(degree[v])
        removed[s] = 0
        freed[s] = 0
        mover_class[s] = -1
        if d0 == 0:                          # nothing to delete: every entry is absent
            for j in range(c):
                pos[ix(b + j)] = -1
            continue
        p = edge_ptr[v]
        r = c - _search_segment(int32_view(p, d0), d0, dst, b, c, nv, pos)
        if r == 0:
            continue
        removed[s] = r
        d1 = d0 - r
        degree[v] = d1
        first = 0
        while pos[ix(b + first)] < 0:        # the first present entry (r > 0: there is one)
            first += 1
        if sizes.shape[0] == 1:              # destinations only: a constant item size
            _remove_field(p, p, d0, d1, pos, b, c, first, 4, 0, pos, False)
        else:
            for f in range(sizes.shape[0]):  # the destinations, then each property
                field = _field_address(p, f, bases, field_bases, sizes)
                # the removed edges' property values, for the change (field 0: the batch's dst)
                _remove_field(field, field, d0, d1, pos, b, c, first, sizes[f],
                              gone[f] if f > 0 else 0, pos, False)
        cls = np.int64(size_class[v])
        if d1 == 0:                          # the list is gone: its block goes back
            edge_ptr[v] = 0
            size_class[v] = -1
            freed[s] = p
        elif _moves_down(d1, cls, min_class):
            mover_class[s] = _smallest_class(d1, min_class)


def remove_in_place(src, dst, num_vertices: int, min_class: int, degree, size_class,
                    edge_ptr, fields: EdgeFields | None = None, ws: Workspace | None = None,
                    segments=None, ahead: int = MERGE_AHEAD):
    """Remove the present entries of a batch sorted by (src, dst), duplicate-free (int32 (n,)
    each) from their lists in place, every edge field, and write the degrees (vertex table
    ``degree`` int32, ``size_class`` int8, ``edge_ptr`` int64); lists left empty give their
    block back (pointer 0, class -1). ``fields``: the edge properties' columns, and per
    property a buffer aligned with ``dst`` that receives the values of the removed entries;
    None: destinations only. ``segments``: (sources, seg_start) of ``src`` when known (see
    :func:`hornet.batch.cpu.sort.sorted_unique_pairs`).

    Returns (sources int32 (S,), seg_start int32 (S + 1,): the batch's segments, pos int32
    (n,): each entry's position as :func:`hornet.batch.cpu.general.find_positions` gives it
    (present: >= 0), removed int64 (S,): entries removed per segment, freed int64 (S,): the
    block a list left empty gave back, else 0, mover_class int8 (S,): the smaller class a
    list now under a quarter of its block moves to, else -1; see :func:`move_down`), from
    ``ws`` when given.
    """
    sources, seg_start, *_, pos = _plan_arrays(src, ws, segments)
    ns = sources.shape[0]
    removed = take(ws, "removed", ns, np.int64)
    freed = take(ws, "freed", ns, np.int64)
    mover_class = take(ws, "new_class8", ns, np.int8)
    if fields is None:
        fields = EdgeFields.destinations_only(dst)
    if ns:
        _remove_in_place(sources, seg_start, dst, pos, int(num_vertices), int(min_class),
                         degree, size_class, edge_ptr, removed, freed, mover_class,
                         int(ahead), *fields.kernel_args())
    return sources, seg_start, pos, removed, freed, mover_class


MOVE_AHEAD = 8   # movers ahead whose old and new blocks move_down prefetches (rows: twice)


@split_kernel
def _move_down(sources, movers, classes, target, degree, size_class, edge_ptr, freed, bases,
               field_bases, sizes, part, parts):
    m = movers.shape[0]
    for i in range(*part_range(m, part, parts)):
        if i + 2 * MOVE_AHEAD < m:
            _prefetch_row(sources[ix(movers[ix(i + 2 * MOVE_AHEAD)])], degree, size_class,
                          edge_ptr, WRITE)
        if i + MOVE_AHEAD < m:
            q = ix(sources[ix(movers[ix(i + MOVE_AHEAD)])])
            prefetch(edge_ptr[q])
            prefetch_write(target[ix(i + MOVE_AHEAD)])
        s = ix(movers[ix(i)])
        v = ix(sources[s])
        d = np.int64(degree[v])
        p = edge_ptr[v]
        t = target[ix(i)]
        for f in range(sizes.shape[0]):
            _move_field(_field_address(t, f, bases, field_bases, sizes),
                        _field_address(p, f, bases, field_bases, sizes), d, sizes[f])
        edge_ptr[v] = t
        size_class[v] = classes[ix(i)]
        freed[s] = p


def move_down(sources, mover_class, allocate, degree, size_class, edge_ptr, freed,
              fields) -> None:
    """Move the lists that :func:`remove_in_place` named (``mover_class[k] >= 0``) into
    fresh blocks of that class, every edge field, and write their edge pointer and size
    class; ``freed[k]`` (int64 (S,)) receives the block each moved list left.

    ``allocate(per_class)`` (host int64 (64,) -> int64 blocks, class after class ascending,
    as :meth:`hornet.memory.manager.MemoryManager.allocate_counts`) gives the blocks: within
    a class the lists take them in segment order (as the planned delete hands them out).
    ``fields()`` returns the :class:`EdgeFields` of the block arrays after the allocation
    (its batch columns are not read). Returns the number of lists moved.
    """
    movers = np.flatnonzero(mover_class >= 0)
    if movers.shape[0] == 0:
        return 0
    classes = mover_class[movers].astype(np.int64)
    pool = allocate(np.bincount(classes, minlength=64))
    target = np.empty(movers.shape[0], dtype=np.int64)
    target[np.argsort(classes, kind="stable")] = pool
    bases, field_bases, sizes, _ = fields().kernel_args()
    _move_down(sources, movers, classes, target, degree, size_class, edge_ptr, freed, bases,
               field_bases, sizes)
    return int(movers.shape[0])
