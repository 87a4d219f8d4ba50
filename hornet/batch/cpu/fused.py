"""The fused CPU batch pipeline (Numba): a batch's update in three passes over its segments.

Insert: :func:`plan_insert` (nothing written), the batch's block allocation (the only step
that can fail), :func:`merge_insert` (search and merge every list, every edge field, in one
pass), :func:`changed_pairs`. Delete: :func:`plan_delete`, the allocation of the smaller
blocks (:func:`block_requests`, :func:`place_blocks`), :func:`remove_fused`,
:func:`changed_pairs`. See the comments below for what each pass does. Graphs delete
through :mod:`hornet.batch.cpu.remove_first` (no plan pass: remove in place, then move the
few lists that shrink); the planned delete here gives the same storage and is its tests'
oracle.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.jit import inline_when_parallel, ix, njit, part_range, split_kernel
from ...core.pointers import address_of, int32_view, prefetch, prefetch_l2, prefetch_write
from .lists import (CHUNKS, _count_changed, _count_heads, _field_address, _fill_changed,
                    _fill_heads, LINEAR_SEARCH, _merge_field, _moves_down, _remove_field,
                    _search_segment, _smallest_class)
from .workspace import Workspace, take


# The CPU insert runs in three passes over the segments of the sorted batch instead of
# find / keep / plan / merge / commit (the general pipeline, which the GPU keeps):
#   plan_insert   (nothing written to the graph) per list: a list that has no block, or whose
#                 block has room for all of its segment's entries (upper bound: none present),
#                 needs no search yet; the others are searched now, so that exactly the lists
#                 that outgrow their block are known and get a new block's size class (or,
#                 with defer_full, they get the class that holds every entry of the segment,
#                 unsearched: the merge finds out whether they really move). It counts the
#                 blocks wanted per class and chunk of segments as it goes.
#   (the batch allocates those blocks: the only step that can fail, before anything changes)
#   merge_insert  per list: hands a moving list its block (chunk by chunk, in segment order,
#                 as far ahead as it prefetches), searches the lists that plan_insert left
#                 unsearched (their lines come into cache for the merge that follows at
#                 once), merges the new entries in place or into the new block, every edge
#                 field alike (the batch's property values with the destinations), writes the
#                 vertex table row and lists the block a moved list leaves.
#   changed_pairs  the entries really inserted (undirected: once, src < dst).
#
# These four per-list kernels (plan_insert, merge_insert, plan_delete, remove_fused) are split
# kernels (jit.split_kernel: one compilation, run in parts on several threads for large
# batches) that split from LIST_KERNEL_MIN segments on, not PARALLEL_MIN: every segment waits
# on cache misses, so two threads pay off early. Their helpers are inlined into them
# (inline_when_parallel): called helpers keep the reference counting of the arrays passed to
# them (NRT_incref / NRT_decref calls in the loop, seen in the disassembly), atomic
# operations that drain the store buffer every segment, which defeats the prefetching.
LIST_KERNEL_MIN = 1024
MERGE_AHEAD = 16   # segments ahead whose lines merge_insert prefetches
DEFER_SEARCH = True  # lists with room for their whole segment are searched by merge_insert


# The vertex rows a batch reads and writes (degree, size class, edge pointer) sit a few lines
# apart even in ascending order (a batch of random pairs reaches a fair share of a graph's
# vertices), too sparse for the hardware prefetcher. The fused kernels prefetch them
# VERTEX_AHEAD segments ahead.
VERTEX_AHEAD = 64
ROW_WRITE_AHEAD = 32   # remove_fused's distance (its rows are prefetched for writing)


# how a fused kernel prefetches a vertex row or a list's lines (see _prefetch_row)
READ, WRITE, SECOND_LEVEL = 0, 1, 2

# _prefetch_row, _plan_row and _prefetch_segment, shared by the four fused kernels, are inlined
# in Numba's IR into them (and called from other kernels): see the note above lists._move_run.


@njit(inline=inline_when_parallel)
def _prefetch_row(v, degree, size_class, edge_ptr, hint):
    """Prefetch vertex ``v``'s row of the vertex table: ``hint`` READ (into every cache
    level), WRITE (``prefetchw``) or SECOND_LEVEL (``prefetcht1``: no first-level fill buffer
    held until the row is used; the insert's merge, far ahead)."""
    w = np.int64(v)
    a = degree.ctypes.data + degree.itemsize * w
    b = size_class.ctypes.data + size_class.itemsize * w
    c = edge_ptr.ctypes.data + edge_ptr.itemsize * w
    if hint == SECOND_LEVEL:
        prefetch_l2(a)
        prefetch_l2(b)
        prefetch_l2(c)
    elif hint == WRITE:
        prefetch_write(a)
        prefetch_write(b)
        prefetch_write(c)
    else:
        prefetch(a)
        prefetch(b)
        prefetch(c)


@njit(inline=inline_when_parallel)
def _plan_row(k, sources, seg_start, degree, size_class, edge_ptr, old_deg, old_ptr,
              new_class):
    """What a plan reads of segment ``k`` (its first entry, length, and its vertex's degree,
    size class and edge pointer, returned), with the degree and pointer recorded and no new
    class yet; the vertex row VERTEX_AHEAD segments on is prefetched."""
    if k + VERTEX_AHEAD < sources.shape[0]:
        _prefetch_row(sources[ix(k + VERTEX_AHEAD)], degree, size_class, edge_ptr, READ)
    s = ix(k)
    v = ix(sources[s])
    b = np.int64(seg_start[s])
    d0 = np.int64(degree[v])
    p = edge_ptr[v]
    old_deg[s] = d0
    old_ptr[s] = p
    new_class[s] = -1
    return b, seg_start[ix(k + 1)] - b, d0, np.int64(size_class[v]), p


@split_kernel(threshold=LIST_KERNEL_MIN)
def _plan_insert(sources, seg_start, dst, degree, size_class, edge_ptr, num_vertices,
                 min_class, defer, defer_full, old_deg, old_ptr, new_deg, new_class, pos, counts,
                 leaving, part, parts):
    # the vertex rows are prefetched VERTEX_AHEAD segments ahead (ascending, but a few lines
    # apart: too sparse for the hardware prefetcher); not the lists to search (that costs more
    # loads than it saves)
    ns = sources.shape[0]
    nv = np.int64(max(num_vertices, 1))
    for chunk in range(*part_range(CHUNKS, part, parts)):   # chunks as block_requests counts
        row = counts[chunk]
        left = 0
        for k in range(ns * chunk // CHUNKS, ns * (chunk + 1) // CHUNKS):
            s = ix(k)
            b, c, d0, cls, p = _plan_row(k, sources, seg_start, degree, size_class, edge_ptr,
                                         old_deg, old_ptr, new_class)
            cap = (np.int64(1) << cls) if cls >= 0 else np.int64(0)
            if defer and defer_full:
                # nothing is searched: every list either fits its segment, takes a block for
                # all of it (merge_insert searches both), or is empty (every entry new). Each
                # outcome is a select, not a branch: the three come in random order, and a
                # misprediction per segment cost more than the rest of its planning
                moves = d0 + c > cap
                k_new = _smallest_class(d0 + c, min_class)
                new_class[s] = k_new if moves else -1
                new_deg[s] = c if d0 == 0 else -1
                for j in range(c):               # searches overwrite these but the empty's
                    pos[ix(b + j)] = -1
                row[ix(k_new)] += moves
                left += moves & (p != 0)
                continue
            if d0 == 0:                          # every entry is new, inserted before slot 0
                for j in range(c):
                    pos[ix(b + j)] = -1
                m = c
            elif defer and d0 + c <= cap:        # fits whatever is present: merge_insert
                new_deg[s] = -1                  # searches it
                continue
            elif defer_full:                     # a block for all of its entries; merge_insert
                new_deg[s] = -1                  # searches it (and keeps the list in place if
                k_new = _smallest_class(d0 + c, min_class)   # enough of them are present)
                new_class[s] = k_new
                row[ix(k_new)] += 1
                left += 1
                continue
            else:
                m = _search_segment(int32_view(p, d0), d0, dst, b, c, nv, pos)
            d1 = d0 + m
            new_deg[s] = d1
            if d1 > cap:
                k_new = _smallest_class(d1, min_class)
                new_class[s] = k_new
                row[ix(k_new)] += 1
                left += p != 0
        leaving[chunk + 1] = left


def plan_insert(src, dst, degree, size_class, edge_ptr, num_vertices: int, min_class: int,
                ws: Workspace | None = None, segments=None, defer_full: bool = False):
    """Plan the insertion of a batch sorted by (src, dst), duplicate-free (int32 (n,) each)
    into a graph (vertex table ``degree`` int32, ``size_class`` int8, ``edge_ptr`` int64);
    changes nothing.

    Returns (sources int32 (S,), seg_start int32 (S + 1,): segment k is entries
    ``seg_start[k]:seg_start[k + 1]``, old_deg int32 (S,), old_ptr int64 (S,), new_deg int32
    (S,), new_class int8 (S,), pos int32 (n,), requests). Per segment (one per distinct
    source): ``new_class >= 0`` when the list outgrows its block (it moves to a new block of
    that class); ``new_deg`` the degree after the batch, or -1 for a list not searched yet
    (:func:`merge_insert` does it): one whose block has room for every entry of its
    segment, and with ``defer_full`` one whose block has not (its ``new_class`` is then the
    class that holds all of them: it moves unless enough of them are present, and
    :func:`merge_insert` gives the block back unused when it stays). ``defer_full`` spares
    the plan a cache miss per full list; it pays off when few entries are present already.
    ``pos``: for the entries of searched segments, as :func:`find_positions` gives them
    (absent: ``-1 - p``); others undefined. ``requests``: the blocks the plan needs, as
    :func:`block_requests` counts them (counted while planning). Arrays come from ``ws`` when
    given; ``segments``: (sources, seg_start) of ``src`` when known (see
    :func:`sorted_unique_pairs`).
    """
    plan = _plan_arrays(src, ws, segments)
    counts = np.zeros((CHUNKS, 64), dtype=np.int64)
    leaving = np.zeros(CHUNKS + 1, dtype=np.int64)
    if plan[0].shape[0]:
        _plan_insert(plan[0], plan[1], dst, degree, size_class, edge_ptr, int(num_vertices),
                     int(min_class), bool(DEFER_SEARCH), bool(defer_full), *plan[2:], counts,
                     leaving)
    np.cumsum(leaving, out=leaving)
    return (*plan, (counts.sum(axis=0), counts, leaving))


def _plan_arrays(src, ws: Workspace | None, segments=None):
    """The arrays of a fused plan of the sorted batch ``src`` (see :func:`plan_insert`), with
    the segments found (sources, seg_start; or ``segments``, found already) and the rest to be
    filled."""
    n = src.shape[0]
    if segments is not None:
        sources, seg_start = segments
        ns = sources.shape[0]
    else:
        found = _count_heads(src)
        ns = int(found[CHUNKS])
        # narrow types where they suffice: these arrays are written and read once per batch
        sources = take(ws, "sources", ns, np.int32)
        seg_start = take(ws, "seg_start32", ns + 1, np.int32)
    old_deg = take(ws, "old_deg32", ns, np.int32)
    old_ptr = take(ws, "old_ptr", ns, np.int64)
    new_deg = take(ws, "new_deg32", ns, np.int32)
    new_class = take(ws, "new_class8", ns, np.int8)
    pos = take(ws, "positions32", n, np.int32)
    if segments is None:
        seg_start[ns] = n
        if ns:
            _fill_heads(src, found, sources, seg_start)
    return sources, seg_start, old_deg, old_ptr, new_deg, new_class, pos


PREFETCH_LINES = 16   # cache lines that merge_insert prefetches per list, from the end
WRITE_LINES = 8       # the same for remove_fused, which prefetches for writing


@njit(inline="always")
def _prefetch_lines(lo, hi, hint):
    """Prefetch the cache lines of the byte range [lo, hi), the last few at most: with
    ``hint`` SECOND_LEVEL the last PREFETCH_LINES into the second-level cache (merge_insert
    rewrites them, or reads them once, MERGE_AHEAD segments later; not into the first level,
    where each line would hold a fill buffer all that time); else the last WRITE_LINES for
    writing (remove_fused rewrites its lines at once)."""
    lines = PREFETCH_LINES if hint == SECOND_LEVEL else WRITE_LINES
    a = max(lo & ~np.int64(63), (hi - 1) & ~np.int64(63) - 64 * (lines - 1))
    while a < hi:
        if hint == SECOND_LEVEL:
            prefetch_l2(a)
        else:
            prefetch_write(a)
        a += 64


@njit(inline=inline_when_parallel)
def _prefetch_segment(q, seg_start, old_deg, old_ptr, new_deg, new_class, dst, pos, nv, hint):
    """Prefetch the lines of segment ``q``'s list that a fused pass rewrites (``hint`` as
    :func:`_prefetch_lines` takes it): from where its first entry lands or sits (a guess for
    an unsearched list; 0 for a list that moves, read whole) to the list's end."""
    dq = old_deg[q]
    if dq > 0:
        if new_class[q] >= 0:
            lo = 0
        elif new_deg[q] < 0:
            lo = 0 if dq <= LINEAR_SEARCH else \
                min(dq * min(np.int64(dst[ix(seg_start[q])]), nv) // nv, dq - 1)
        else:
            pq = pos[ix(seg_start[q])]
            lo = min(-1 - pq if pq < 0 else pq, dq - 1)
        _prefetch_lines(old_ptr[q] + 4 * lo, old_ptr[q] + 4 * dq, hint)
        prefetch_write(old_ptr[q] + 4 * lo)


@dataclass(frozen=True)
class EdgeFields:
    """The edge fields a fused kernel rewrites, as addresses.

    ``bases`` int64 (A,), ascending, and ``field_bases`` int64 (A, F), C order: where each
    block array's destination column and field columns start (the memory manager's lookup);
    ``sizes`` int64 (F,): each field's itemsize (field 0: the destinations, 4); ``columns``
    int64 (F,): per field, the address of a batch column aligned with the batch's entries (the
    values to insert; for a delete, the buffers that receive the removed entries' values;
    field 0: the destinations). ``arrays`` keeps the arrays behind those addresses alive.
    """
    bases: np.ndarray
    field_bases: np.ndarray
    sizes: np.ndarray
    columns: np.ndarray
    arrays: tuple = ()

    @classmethod
    def of(cls, bases, field_bases, columns: list) -> "EdgeFields":
        """Fields of block arrays at ``bases`` / ``field_bases`` with the batch ``columns``
        (contiguous host arrays, one per field, the destinations first)."""
        if columns[0].dtype != np.int32 or not all(c.flags.c_contiguous for c in columns):
            raise TypeError("EdgeFields: the destinations must be int32 and every column "
                            "contiguous")
        return cls(np.ascontiguousarray(bases, dtype=np.int64),
                   np.ascontiguousarray(field_bases, dtype=np.int64),
                   np.array([c.dtype.itemsize for c in columns], dtype=np.int64),
                   np.array([address_of(c) for c in columns], dtype=np.int64), tuple(columns))

    @classmethod
    def destinations_only(cls, dst) -> "EdgeFields":
        return cls.of(np.zeros(0, np.int64), np.zeros((0, 1), np.int64), [dst])

    def kernel_args(self) -> tuple:
        return self.bases, self.field_bases, self.sizes, self.columns


@njit(inline="always")
def _place_next(q, new_class, at, pool, target):
    """Hand segment ``q`` the next pool block of its class (``at``: the chunk's cursor per
    class) when it moves."""
    k = new_class[q]
    if k >= 0:
        target[q] = pool[ix(at[k])]
        at[k] += 1


@split_kernel(threshold=LIST_KERNEL_MIN)
def _merge_insert(sources, seg_start, old_deg, old_ptr, new_deg, new_class, cursor, pool,
                  leaving, target, freed, dst, pos, num_vertices, degree, size_class,
                  edge_ptr, added, ahead, bases, field_bases, sizes, values, part, parts):
    ns = sources.shape[0]
    nv = np.int64(max(num_vertices, 1))
    for chunk in range(*part_range(CHUNKS, part, parts)):
        k0 = ns * chunk // CHUNKS
        k1 = ns * (chunk + 1) // CHUNKS
        inserted = 0
        at = cursor[chunk]
        j = leaving[chunk]
        # blocks are placed `ahead` segments in front of the merge, where their lines are
        # prefetched
        for q in range(k0, min(k0 + ahead, k1)):
            _place_next(ix(q), new_class, at, pool, target)
        for k in range(k0, k1):
            if k + VERTEX_AHEAD < ns:
                _prefetch_row(sources[ix(k + VERTEX_AHEAD)], degree, size_class, edge_ptr,
                              SECOND_LEVEL)
            if k + ahead < k1:
                q = ix(k + ahead)
                _place_next(q, new_class, at, pool, target)
                _prefetch_segment(k + ahead, seg_start, old_deg, old_ptr, new_deg, new_class,
                                  dst, pos, nv, SECOND_LEVEL)    # the type remove_fused uses
                if new_class[q] >= 0:          # a new block: written from its end
                    dn = new_deg[q] if new_deg[q] >= 0 else \
                        old_deg[q] + seg_start[ix(q + 1)] - seg_start[q]
                    _prefetch_lines(target[q], target[q] + 4 * dn, SECOND_LEVEL)
            s = ix(k)
            v = ix(sources[s])
            b = np.int64(seg_start[s])
            c = seg_start[ix(k + 1)] - b
            d0 = np.int64(old_deg[s])
            src_p = old_ptr[s]
            moving = new_class[s] >= 0
            if new_deg[s] < 0:
                m = _search_segment(int32_view(src_p, d0), d0, dst, b, c, nv, pos)
                if moving and d0 + m <= (np.int64(1) << size_class[v]):
                    moving = False                 # enough were present: it stays, and the
                    freed[ix(j)] = target[s]       # block planned for it goes back unused
                    j += 1
            else:
                m = new_deg[s] - d0
            dst_p = target[s] if moving else src_p
            inserted += m
            if m > 0:
                if sizes.shape[0] == 1:            # destinations only: a constant item size
                    _merge_field(src_p, dst_p, d0, m, pos, b, c, 4, values[0], pos, False, 0,
                                 pos)
                else:
                    for f in range(sizes.shape[0]):    # the destinations, then each property
                        size = sizes[f]
                        src_f = _field_address(src_p, f, bases, field_bases, sizes)
                        dst_f = _field_address(dst_p, f, bases, field_bases, sizes) \
                            if dst_p != src_p else src_f
                        _merge_field(src_f, dst_f, d0, m, pos, b, c, size, values[f], pos,
                                     False, 0, pos)
                degree[v] = d0 + m
            if moving:
                edge_ptr[v] = dst_p
                size_class[v] = new_class[s]
                if src_p != 0:                     # the block the list leaves
                    freed[ix(j)] = src_p
                    j += 1
        added[chunk] = inserted


def merge_insert(sources, seg_start, old_deg, old_ptr, new_deg, new_class, dst, pos,
                 num_vertices: int, degree, size_class, edge_ptr, requests=None, pool=None,
                 fields: EdgeFields | None = None, ws: Workspace | None = None,
                 ahead: int = MERGE_AHEAD):
    """Carry out a :func:`plan_insert` plan: search the segments it left unsearched (filling
    their ``pos``), merge every segment's absent entries into its list (in place, or into a
    fresh block of class ``new_class[k]`` for the lists that grow; a deferred list that
    planned a block but still fits its own stays) and write the vertex table (degree; edge
    pointer and size class of the moved lists).

    ``requests``: what :func:`block_requests` returned for the plan, and ``pool`` the blocks
    allocated for it (see :func:`place_blocks`: the segments get them in the same order);
    both None when no segment moves. ``fields``: the edge properties' columns and the batch's
    values (aligned with ``dst``); None: destinations only. Returns (the number of entries
    inserted; the blocks to release, int64 (L,), in segment order: those the moved lists
    left, and those planned for lists that stayed)."""
    ns = sources.shape[0]
    added = np.zeros(CHUNKS, dtype=np.int64)            # entries inserted per chunk
    if requests is None:
        counts, leaving = np.zeros((CHUNKS, 64), dtype=np.int64), np.zeros(CHUNKS + 1,
                                                                          dtype=np.int64)
        pool = np.zeros(0, dtype=np.int64)
    else:
        _, counts, leaving = requests
    target = take(ws, "target", ns, np.int64)
    freed = take(ws, "leaving_blocks", int(leaving[-1]), np.int64)
    if fields is None:
        fields = EdgeFields.destinations_only(dst)
    if ns:
        _merge_insert(sources, seg_start, old_deg, old_ptr, new_deg, new_class,
                      _block_cursors(counts), pool, leaving, target, freed, dst, pos,
                      int(num_vertices), degree, size_class, edge_ptr, added, int(ahead),
                      *fields.kernel_args())
    return int(added.sum()), freed


def changed_pairs(pos, src, dst, directed: bool, present: bool, with_index: bool = False):
    """The entries a fused batch changed, in order: with ``present`` false (an insert) those
    with ``pos < 0`` (absent before the batch), with ``present`` true (a delete) those with
    ``pos >= 0``; undirected (``directed`` false, both directions of every pair in the batch):
    only those with src < dst. Returns (src int32 (m,), dst int32 (m,), and with
    ``with_index`` their entries' indices int64 (m,)), new arrays."""
    found = _count_changed(pos, src, dst, bool(directed), bool(present), False)
    m = int(found[CHUNKS])
    s_out, d_out = np.empty(m, dtype=np.int32), np.empty(m, dtype=np.int32)
    index = np.empty(m if with_index else 0, dtype=np.int64)
    if m:
        _fill_changed(pos, src, dst, bool(directed), bool(present), False, found, s_out,
                      d_out, index)
    return (s_out, d_out, index) if with_index else (s_out, d_out)


# The blocks of a fused plan. Segments with ``new_class >= 0`` move to a fresh block of that
# class. Counting per class and chunk of segments gives the host its per-class request; after
# the allocation, chunk c's segments of class k take the pool's blocks after those of the
# chunks before it. Inserts count while planning (plan_insert) and hand out while merging
# (merge_insert, which also lists the blocks the lists leave); deletes use the two kernels
# below (remove_fused lists the blocks left): no pass compacts, counts, places and scatters
# back the moving segments.
@split_kernel
def _count_requests(new_class, old_ptr, counts, leaving, part, parts):
    n = new_class.shape[0]
    for c in range(*part_range(CHUNKS, part, parts)):
        row = counts[c]
        left = 0
        for i in range(n * c // CHUNKS, n * (c + 1) // CHUNKS):
            k = np.int64(new_class[ix(i)])
            moving = k >= 0
            row[ix(max(k, 0))] += moving            # branch-free: the class is random
            left += moving & (old_ptr[ix(i)] != 0)
        leaving[c + 1] = left


def block_requests(new_class, old_ptr):
    """Count the blocks a fused plan needs: ``new_class`` int8 (S,) (>= 0: the segment moves to
    a fresh block of that class), ``old_ptr`` int64 (S,) (its block now; 0: none).

    Returns (per_class int64 (64,): blocks wanted of each class, counts int64 (CHUNKS, 64):
    the same per chunk of segments, leaving int64 (CHUNKS + 1,): running count of the moving
    segments that leave a block, chunk by chunk)."""
    counts = np.zeros((CHUNKS, 64), dtype=np.int64)
    leaving = np.zeros(CHUNKS + 1, dtype=np.int64)
    if new_class.shape[0]:
        _count_requests(new_class, old_ptr, counts, leaving)
    np.cumsum(leaving, out=leaving)
    return counts.sum(axis=0), counts, leaving


@split_kernel
def _place_blocks(new_class, cursor, pool, target, sparse, part, parts):
    n = new_class.shape[0]
    last = pool.shape[0] - 1
    for c in range(*part_range(CHUNKS, part, parts)):
        at = cursor[c]
        if sparse:                 # few move: a branch that mostly falls through
            for i in range(n * c // CHUNKS, n * (c + 1) // CHUNKS):
                k = np.int64(new_class[ix(i)])
                if k >= 0:
                    target[ix(i)] = pool[ix(at[k])]
                    at[k] += 1
            continue
        for i in range(n * c // CHUNKS, n * (c + 1) // CHUNKS):   # branch-free
            k = np.int64(new_class[ix(i)])
            q = ix(max(k, 0))
            target[ix(i)] = pool[ix(min(at[q], last))]   # read only where moving
            at[q] += k >= 0


SPARSE_MOVES = 8   # under one moving segment in this many, place_blocks takes the branch


def _block_cursors(counts):
    """Where each chunk's blocks of each class start in the pool (int64 (CHUNKS, 64)): chunk
    c's blocks of class k follow those of the chunks before it, classes one after another."""
    cursor = np.cumsum(counts, axis=0) - counts
    cursor += np.concatenate(([0], np.cumsum(counts.sum(axis=0))[:-1]))
    return cursor


def place_blocks(new_class, counts, pool, ws: Workspace | None = None):
    """Hand out the blocks of :func:`block_requests` (``counts``): ``pool`` int64 holds
    ``per_class[k]`` fresh blocks of every class k, class after class in ascending order (what
    :meth:`hornet.memory.manager.MemoryManager.allocate_counts` returns). Returns target int64
    (S,): the block of each moving segment, defined only where ``new_class >= 0``; within a
    class the segments get the pool's blocks in segment order (as :func:`merge_insert` hands
    them out)."""
    n = new_class.shape[0]
    target = take(ws, "target", n, np.int64)
    if n and pool.shape[0]:
        _place_blocks(new_class, _block_cursors(counts), pool, target,
                      pool.shape[0] * SPARSE_MOVES < n)
    return target


@split_kernel(threshold=LIST_KERNEL_MIN)
def _plan_delete(sources, seg_start, dst, degree, size_class, edge_ptr, num_vertices,
                 min_class, old_deg, old_ptr, new_deg, new_class, pos, part, parts):
    ns = sources.shape[0]
    nv = np.int64(max(num_vertices, 1))
    for k in range(*part_range(ns, part, parts)):
        s = ix(k)
        b, c, d0, cls, p = _plan_row(k, sources, seg_start, degree, size_class, edge_ptr,
                                     old_deg, old_ptr, new_class)
        if d0 == 0:                          # nothing to delete: every entry is absent
            for j in range(c):
                pos[ix(b + j)] = -1
            new_deg[s] = 0
            continue
        # the fewest edges the list can keep (a list left empty frees its block: no move)
        if not _moves_down(max(d0 - c, np.int64(1)), cls, min_class):
            new_deg[s] = -1                  # cannot move whatever is present: searched later
            continue
        absent = _search_segment(int32_view(p, d0), d0, dst, b, c, nv, pos)
        d1 = d0 - (c - absent)
        new_deg[s] = d1
        if d1 > 0 and _moves_down(d1, cls, min_class):
            new_class[s] = _smallest_class(d1, min_class)


def plan_delete(src, dst, degree, size_class, edge_ptr, num_vertices: int, min_class: int,
                ws: Workspace | None = None, segments=None):
    """Plan the deletion of a batch sorted by (src, dst), duplicate-free (int32 (n,) each)
    from a graph (vertex table ``degree`` int32, ``size_class`` int8, ``edge_ptr`` int64);
    changes nothing.

    Returns the arrays of :func:`plan_insert` (sources, seg_start, old_deg, old_ptr,
    new_deg, new_class, pos), with ``new_class >= 0`` for the lists that move to a smaller
    block (kept under a quarter of their capacity) and ``new_deg`` -1 for the lists that cannot
    move and are not searched yet (:func:`remove_fused` does it). Arrays come from ``ws``;
    ``segments`` as in :func:`plan_insert`.
    """
    plan = _plan_arrays(src, ws, segments)
    if plan[0].shape[0]:
        _plan_delete(plan[0], plan[1], dst, degree, size_class, edge_ptr, int(num_vertices),
                     int(min_class), *plan[2:])
    return plan


@split_kernel(threshold=LIST_KERNEL_MIN)
def _remove_fused(sources, seg_start, old_deg, old_ptr, new_deg, new_class, target, dst, pos,
                  num_vertices, degree, size_class, edge_ptr, removed, freed, ahead,
                  bases, field_bases, sizes, gone, part, parts):
    ns = sources.shape[0]
    nv = np.int64(max(num_vertices, 1))
    for k in range(*part_range(ns, part, parts)):
        if k + ROW_WRITE_AHEAD < ns:
            _prefetch_row(sources[ix(k + ROW_WRITE_AHEAD)], degree, size_class, edge_ptr,
                          WRITE)
        if k + ahead < ns:
            _prefetch_segment(k + ahead, seg_start, old_deg, old_ptr, new_deg, new_class, dst,
                              pos, nv, WRITE)
        s = ix(k)
        v = ix(sources[s])
        b = np.int64(seg_start[s])
        c = seg_start[ix(k + 1)] - b
        d0 = np.int64(old_deg[s])
        removed[s] = 0
        freed[s] = 0
        if d0 == 0:
            continue
        src_p = old_ptr[s]
        if new_deg[s] < 0:
            r = c - _search_segment(int32_view(src_p, d0), d0, dst, b, c, nv, pos)
        else:
            r = d0 - new_deg[s]
        if r == 0:
            continue
        removed[s] = r
        d1 = d0 - r
        degree[v] = d1
        moving = new_class[s] >= 0
        dst_p = target[s] if moving else src_p
        first = 0
        while pos[ix(b + first)] < 0:            # the first present entry (r > 0: there is one)
            first += 1
        if sizes.shape[0] == 1:              # destinations only: a constant item size
            _remove_field(src_p, dst_p if moving and d1 > 0 else src_p, d0, d1, pos, b, c,
                          first, 4, 0, pos, False)
        else:
            for f in range(sizes.shape[0]):  # the destinations, then each property
                size = sizes[f]
                src_f = _field_address(src_p, f, bases, field_bases, sizes)
                dst_f = _field_address(dst_p, f, bases, field_bases, sizes) \
                    if moving and d1 > 0 else src_f
                # the removed edges' property values, for the change (field 0: the batch's dst)
                _remove_field(src_f, dst_f, d0, d1, pos, b, c, first, size,
                              gone[f] if f > 0 else 0, pos, False)
        if d1 == 0:                          # the list is gone: its block goes back
            edge_ptr[v] = 0
            size_class[v] = -1
            freed[s] = src_p
        elif moving:
            edge_ptr[v] = dst_p
            size_class[v] = new_class[s]
            freed[s] = src_p


def remove_fused(sources, seg_start, old_deg, old_ptr, new_deg, new_class, target, dst, pos,
                 num_vertices: int, degree, size_class, edge_ptr,
                 fields: EdgeFields | None = None, ws: Workspace | None = None,
                 ahead: int = MERGE_AHEAD):
    """Carry out a :func:`plan_delete` plan: search the segments it left unsearched (filling
    their ``pos``), remove every segment's present entries from its list (in place, or into
    ``target[k]``, a fresh block of class ``new_class[k]``, for the lists that move; ``target``
    int64 (S,), read only there) and write the vertex table (degree; edge pointer and size
    class of the moved lists; pointer 0 and class -1 for the lists left empty). ``fields``:
    the edge properties' columns, and per property a buffer aligned with ``dst`` that
    receives the values of the removed entries; None: destinations only.

    Returns (removed int64 (S,): entries removed per segment, freed int64 (S,): the block each
    segment's list left, 0 where it kept its block), from ``ws`` when given.
    """
    ns = sources.shape[0]
    removed = take(ws, "removed", ns, np.int64)
    freed = take(ws, "freed", ns, np.int64)
    if fields is None:
        fields = EdgeFields.destinations_only(dst)
    if ns:
        _remove_fused(sources, seg_start, old_deg, old_ptr, new_deg, new_class, target, dst,
                      pos, int(num_vertices), degree, size_class, edge_ptr, removed, freed,
                      int(ahead), *fields.kernel_args())
    return removed, freed
