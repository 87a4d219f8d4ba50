"""Small batches on the CPU: two serial Numba kernels and the block cache, no host planning.

The fused CPU pipeline (:mod:`hornet.batch.cpu.fused`) is built for large batches. A
batch passes through a dozen kernel calls, with NumPy glue in between, and through one
batched allocation and one release in the memory manager. For a batch of one to a few hundred
edges that fixed cost is the whole cost, far more than the few edges' own work.
Here such a batch takes the small-batch path of :mod:`hornet.batch.gpu.small` with the same
header, the same block cache (:mod:`hornet.memory.block_cache`) and the same steps in
:func:`hornet.batch.small_path.small_update`. Only the kernel bodies are CPU ones:

1. :func:`_prepare` mirrors the batch, sorts it stably by (src, dst), drops repeats (first
   entry wins) and self-loops, and looks every entry up in its source's list. It keeps the new
   edges (insert) or the present ones (delete) and cuts them into segments per source. Per
   segment it decides the new degree and whether the list moves to a block of another size
   class. It writes the result rows and the header (counts per size class).
2. The host reserves the blocks the header asks for in the block cache's rings.
3. :func:`_merge` or :func:`_remove` rewrites every field of every list, in place or into a
   block popped from its new class's ring. It pushes every old block onto its class's ring,
   or onto the spill list for the bit trees, updates the vertex table, and advances the
   rings' counters.

One thread does it all: a batch of a few hundred entries waits on a few hundred cache
misses, less than one wake-up of the worker threads costs. A hub's list is rewritten in place
by ``memmove`` whatever its length (the GPU path copies long ones in pieces).
"""
from __future__ import annotations

import numpy as np

from ...core.jit import OptionalPath, ix, njit
from ...core.pointers import address_of, int32_view
from ...core.search import lower_bound
from ..small_layout import (H_CLASS, H_FREED, H_KEPT, H_LOOPS, H_MAX_ID, H_MIN_ID, H_MOVES,
                            H_PIECES, H_RELEASES, H_RESULTS, H_SEGMENTS, HEADER_WORDS, MODE_INSERT,
                            NUM_CLASSES, SMALL_ENTRIES)
from .lists import _field_address, _merge_field, _remove_field, _smallest_class

#: most entries (after mirroring) a CPU batch takes this path with; larger ones run faster
#: through the fused pipeline's parallel kernels (one thread waiting on a cache miss per entry
#: falls behind from about a thousand entries on)
CPU_SMALL_ENTRIES = 1024
MAX_ID = (1 << 31) - 1
_NO_KEY = np.uint64(0xFFFFFFFFFFFFFFFF)


# The int64 work rows of a CPU small batch: one (WORK_ROWS, SMALL_ENTRIES) array, passed as a
# whole (a Numba call checks the type of every argument: a dozen arrays cost microseconds)
ENT_PAIR, ENT_POS, ENT_RES = 0, 1, 2
SEG_VERTEX, SEG_START, SEG_LEN, SEG_OLD, SEG_NEW, SEG_PTR, SEG_CLASS, SEG_RANK, SEG_GIVE = \
    range(3, 12)
SPILL = 12
WORK_ROWS = 13


@njit
def _prepare(s, d, mirror, mode, degree, size_class, edge_ptr, table_len, min_class, header,
             ent_src, ent_dst, work, rows):
    _prepare_rows(s, d, mirror, mode, degree, size_class, edge_ptr, table_len, min_class,
                  header, ent_src, ent_dst, work[ENT_PAIR], work[ENT_POS], work[ENT_RES],
                  work[SEG_VERTEX], work[SEG_START], work[SEG_LEN], work[SEG_OLD],
                  work[SEG_NEW], work[SEG_PTR], work[SEG_CLASS], work[SEG_RANK],
                  work[SEG_GIVE], rows)


@njit(inline="always")
def _prepare_rows(s, d, mirror, mode, degree, size_class, edge_ptr, table_len, min_class,
                  header, ent_src, ent_dst, ent_pair, ent_pos, ent_res, seg_vertex, seg_start,
                  seg_len, seg_old, seg_new, seg_ptr, seg_class, seg_rank, seg_give, rows):
    ne = 2 * s.shape[0] if mirror else s.shape[0]
    keys = np.empty(ne, dtype=np.uint64)
    lo_id = np.int64(MAX_ID) + 1
    hi_id = np.int64(-1)
    loops = 0
    for i in range(ne):
        pair = i >> 1 if mirror else i
        u = np.int64(s[ix(pair)])
        v = np.int64(d[ix(pair)])
        if mirror and i & 1:
            u, v = v, u
        lo_id = min(lo_id, min(u, v))
        hi_id = max(hi_id, max(u, v))
        key = _NO_KEY                    # self-loops and bad ids sort last, and are dropped
        if mirror and u == v:
            loops += 1 - (i & 1)
        elif u >= 0 and v >= 0 and u <= MAX_ID and v <= MAX_ID:
            key = (np.uint64(u) << np.uint64(32)) | np.uint64(v)
        keys[ix(i)] = key
    order = np.argsort(keys, kind="mergesort")       # stable: repeats keep entry order
    kept = 0
    for t in range(ne):
        i = order[ix(t)]
        key = keys[ix(i)]
        if key == _NO_KEY:
            break
        if t > 0 and keys[ix(order[ix(t - 1)])] == key:
            continue                     # a repeat: the first entry won
        u = np.int64(key >> np.uint64(32))
        v = np.int64(key & np.uint64(0xFFFFFFFF))
        d0 = np.int64(degree[ix(u)]) if u < table_len else np.int64(0)
        p = np.int64(-1)                 # absent, would go first
        if d0 > 0:
            lst = int32_view(edge_ptr[ix(u)], d0)
            at = lower_bound(lst, 0, d0, v)
            p = at if at < d0 and lst[ix(at)] == v else -1 - at
        if (p < 0) if mode == MODE_INSERT else (p >= 0):
            ent_src[kept] = u
            ent_dst[kept] = v
            ent_pair[kept] = i >> 1 if mirror else i
            ent_pos[kept] = p            # as find_positions gives it (absent: -1 - at)
            kept += 1
    nseg = 0
    nres = 0
    for j in range(kept):
        if j == 0 or ent_src[ix(j)] != ent_src[ix(j - 1)]:
            seg_start[nseg] = j
            seg_vertex[nseg] = ent_src[ix(j)]
            nseg += 1
        if not mirror or ent_src[ix(j)] < ent_dst[ix(j)]:
            ent_res[ix(j)] = nres
            rows[nres] = ent_src[ix(j)]
            rows[SMALL_ENTRIES + nres] = ent_dst[ix(j)]
            nres += 1
        else:
            ent_res[ix(j)] = -1
    header[:] = 0
    moves = 0
    releases = 0
    for sg in range(nseg):
        start = seg_start[ix(sg)]
        c = (seg_start[ix(sg + 1)] if sg + 1 < nseg else kept) - start
        u = seg_vertex[ix(sg)]
        has_row = u < table_len
        d0 = np.int64(degree[ix(u)]) if has_row else np.int64(0)
        cls = np.int64(size_class[ix(u)]) if has_row else np.int64(-1)
        to = np.int64(-1)
        give_back = False
        if mode == MODE_INSERT:
            d1 = d0 + c
            if d1 > ((np.int64(1) << cls) if cls >= 0 else 0):
                to = _smallest_class(d1, min_class)
                give_back = cls >= 0
        else:
            d1 = d0 - c
            if d1 == 0:
                give_back = True
            elif 4 * d1 < (np.int64(1) << cls) and _smallest_class(d1, min_class) < cls:
                to = _smallest_class(d1, min_class)
                give_back = True
        seg_len[sg] = c
        seg_old[sg] = d0
        seg_new[sg] = d1
        seg_ptr[sg] = edge_ptr[ix(u)] if has_row else 0
        seg_class[sg] = to
        if to >= 0:
            seg_rank[sg] = header[H_CLASS + to]
            header[H_CLASS + to] += 1
            moves += 1
        seg_give[sg] = -1
        if give_back:
            seg_give[sg] = (cls << 32) | header[H_FREED + cls]
            header[H_FREED + cls] += 1
            releases += 1
    header[H_KEPT] = kept
    header[H_SEGMENTS] = nseg
    header[H_MOVES] = moves
    header[H_LOOPS] = loops
    header[H_MIN_ID] = lo_id if ne > 0 else 0
    header[H_MAX_ID] = hi_id
    header[H_RESULTS] = nres
    header[H_RELEASES] = releases
    header[H_PIECES] = nseg


@njit(inline="always")
def _new_block(sg, seg_class, seg_ptr, seg_rank, rings, state, slots):
    """The segment's block after the batch: its old one, or the next of its new class's ring."""
    to = seg_class[ix(sg)]
    if to < 0:
        return seg_ptr[ix(sg)]
    return rings[ix(to * slots + ((state[ix(to)] + seg_rank[ix(sg)]) & (slots - 1)))]


@njit(inline="always")
def _give_back(sg, seg_ptr, seg_give, rings, state, slots, accept, spill, spills):
    """The segment's old block, when it leaves it: onto its class's ring (class accepted) or
    the spill list. Returns the spill list's new length."""
    give = seg_give[ix(sg)]
    if give < 0:
        return spills
    cls = give >> 32
    rank = give & 0xFFFFFFFF
    if (accept >> np.uint64(cls)) & np.uint64(1):
        at = cls * slots + ((state[ix(NUM_CLASSES + cls)] + rank) & (slots - 1))
        rings[ix(at)] = seg_ptr[ix(sg)]
        return spills
    spill[ix(spills)] = seg_ptr[ix(sg)]
    return spills + 1


@njit(inline="always")
def _advance_rings(header, state, accept):
    for k in range(NUM_CLASSES):
        state[k] += header[H_CLASS + k]
        if (accept >> np.uint64(k)) & np.uint64(1):
            state[NUM_CLASSES + k] += header[H_FREED + k]


@njit
def _merge(header, ent_dst, work, rings, state, slots, accept, degree, size_class, edge_ptr,
           bases, field_bases, sizes, values, outs):
    _merge_rows(header, ent_dst, work[ENT_PAIR], work[ENT_POS], work[ENT_RES],
                work[SEG_VERTEX], work[SEG_START], work[SEG_LEN], work[SEG_OLD], work[SEG_NEW],
                work[SEG_PTR], work[SEG_CLASS], work[SEG_RANK], work[SEG_GIVE], work[SPILL],
                rings, state, slots, accept, degree, size_class, edge_ptr, bases, field_bases,
                sizes, values, outs)


@njit(inline="always")
def _merge_rows(header, ent_dst, ent_pair, ent_pos, ent_res, seg_vertex, seg_start, seg_len,
                seg_old, seg_new, seg_ptr, seg_class, seg_rank, seg_give, spill, rings, state,
                slots, accept, degree, size_class, edge_ptr, bases, field_bases, sizes, values,
                outs):
    nseg = header[H_SEGMENTS]
    dst_values = np.int64(ent_dst.ctypes.data)   # field 0 reads the entries' destinations
    spills = 0
    for sg in range(nseg):
        old = seg_ptr[ix(sg)]
        target = _new_block(sg, seg_class, seg_ptr, seg_rank, rings, state, slots)
        d0 = seg_old[ix(sg)]
        c = seg_len[ix(sg)]
        b = seg_start[ix(sg)]
        for f in range(sizes.shape[0]):  # field 0's values: the entries' destinations
            _merge_field(_field_address(old, f, bases, field_bases, sizes),
                         _field_address(target, f, bases, field_bases, sizes), d0, c,
                         ent_pos, b, c, sizes[f], dst_values if f == 0 else values[f],
                         ent_pair, f > 0, outs[f], ent_res)
        u = ix(seg_vertex[ix(sg)])
        degree[u] = seg_new[ix(sg)]
        if seg_class[ix(sg)] >= 0:
            edge_ptr[u] = target
            size_class[u] = seg_class[ix(sg)]
        spills = _give_back(sg, seg_ptr, seg_give, rings, state, slots, accept, spill, spills)
    _advance_rings(header, state, accept)


@njit
def _remove(header, work, rings, state, slots, accept, degree, size_class, edge_ptr, bases,
            field_bases, sizes, outs):
    _remove_rows(header, work[ENT_POS], work[ENT_RES], work[SEG_VERTEX], work[SEG_START],
                 work[SEG_LEN], work[SEG_OLD], work[SEG_NEW], work[SEG_PTR], work[SEG_CLASS],
                 work[SEG_RANK], work[SEG_GIVE], work[SPILL], rings, state, slots, accept,
                 degree, size_class, edge_ptr, bases, field_bases, sizes, outs)


@njit(inline="always")
def _remove_rows(header, ent_pos, ent_res, seg_vertex, seg_start, seg_len, seg_old, seg_new,
                 seg_ptr, seg_class, seg_rank, seg_give, spill, rings, state, slots, accept,
                 degree, size_class, edge_ptr, bases, field_bases, sizes, outs):
    nseg = header[H_SEGMENTS]
    spills = 0
    for sg in range(nseg):
        old = seg_ptr[ix(sg)]
        d0 = seg_old[ix(sg)]
        d1 = seg_new[ix(sg)]
        c = seg_len[ix(sg)]
        b = seg_start[ix(sg)]
        target = _new_block(sg, seg_class, seg_ptr, seg_rank, rings, state, slots) \
            if d1 > 0 else 0
        for f in range(sizes.shape[0]):  # every entry is present: the first is entry 0
            src_f = _field_address(old, f, bases, field_bases, sizes)
            dst_f = _field_address(target, f, bases, field_bases, sizes) if d1 > 0 else src_f
            _remove_field(src_f, dst_f, d0, d1, ent_pos, b, c, 0, sizes[f], outs[f], ent_res,
                          True)
        u = ix(seg_vertex[ix(sg)])
        degree[u] = d1
        if d1 == 0:
            edge_ptr[u] = 0
            size_class[u] = -1
        elif seg_class[ix(sg)] >= 0:
            edge_ptr[u] = target
            size_class[u] = seg_class[ix(sg)]
        spills = _give_back(sg, seg_ptr, seg_give, rings, state, slots, accept, spill, spills)
    _advance_rings(header, state, accept)


# A process sends this many small batches through the fused pipeline (whose kernels every
# replay compiles anyway) before it compiles the small-batch kernels, unless they are cached
# from an earlier run: they save microseconds a batch and cost seconds to compile.
SMALL_PATH_PROMOTE = 256
small_path_gate = OptionalPath((_prepare,), promote_calls=SMALL_PATH_PROMOTE)


class CpuSmallBatches:
    """The workspace of one CPU graph's small batches, reused batch after batch; the same
    interface as :class:`hornet.batch.gpu.small.SmallBatches`."""

    def __init__(self):
        e = SMALL_ENTRIES
        self.header = np.zeros(HEADER_WORDS, dtype=np.int64)
        self.ent_src = np.empty(e, dtype=np.int32)
        self.ent_dst = np.empty(e, dtype=np.int32)
        self.work = np.empty((WORK_ROWS, e), dtype=np.int64)   # rows: ENT_PAIR ... SPILL
        self._sizes = {}                  # field dtypes (tuple) -> their itemsizes, int64
        self._no_columns = np.zeros(1, dtype=np.int64)

    def prepare(self, s, d, mirror: bool, mode: int, degree, size_class, edge_ptr,
                min_class: int):
        """:func:`_prepare` on pairs ``s``, ``d`` (int64 host arrays,
        contiguous, (n,), n * (2 if mirror else 1) <= SMALL_ENTRIES) against the vertex
        table. Returns (header: int64 array indexed by the ``H_*`` slots, valid until the next
        call; rows: int32 (2 * SMALL_ENTRIES,), the result's src in its first
        ``header[H_RESULTS]`` entries and its dst from SMALL_ENTRIES on)."""
        rows = np.empty(2 * SMALL_ENTRIES, dtype=np.int32)
        _prepare(s, d, bool(mirror), int(mode), degree, size_class, edge_ptr,
                 int(degree.shape[0]), int(min_class), self.header, self.ent_src, self.ent_dst,
                 self.work, rows)
        return self.header, rows

    def rewrite(self, mode: int, pieces: int, cache, accept: int, lookup, field_dtypes,
                values, outs, degree, size_class, edge_ptr) -> None:
        """Rewrite the prepared batch's lists (:func:`_merge` or :func:`_remove`) and update
        the vertex table; the arguments are those of
        :meth:`hornet.batch.gpu.small.SmallBatches.rewrite` (``pieces`` is not needed)."""
        key = tuple(field_dtypes)
        sizes = self._sizes.get(key)
        if sizes is None:
            sizes = self._sizes[key] = np.array(
                [np.dtype(dt).itemsize for dt in field_dtypes], dtype=np.int64)
        keep = [np.ascontiguousarray(v, dtype=dt) if v is not None else None
                for v, dt in zip(values, field_dtypes[1:])]
        if keep:
            vals = np.array([0] + [address_of(v) if v is not None else 0 for v in keep],
                            dtype=np.int64)
            outp = np.array([0] + [address_of(o) for o in outs], dtype=np.int64)
        else:                             # destinations only: no columns to read or fill
            vals = outp = self._no_columns
        ring = (cache.rings, cache.state, cache.ring_slots, np.uint64(accept))
        table = (degree, size_class, edge_ptr, lookup.bases, lookup.field_bases, sizes)
        if mode == MODE_INSERT:
            _merge(self.header, self.ent_dst, self.work, *ring, *table, vals, outp)
        else:
            _remove(self.header, self.work, *ring, *table, outp)
        del keep                          # the values lived through the kernel

    def spilled(self, count: int):
        """The old blocks the rewrite put on the spill list (int64 view, (count,))."""
        return self.work[SPILL, :int(count)]
