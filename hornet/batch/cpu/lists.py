"""Searching, moving and reading vertex lists (CPU, Numba): the helpers that the general and
the fused pipelines and the small-batch path share.

- searches in one sorted list (:func:`_lower_bound`, :func:`_search_segment`);
- the size class a degree needs (:func:`_smallest_class`, :func:`_moves_down`);
- moving items and whole edge fields between blocks (:func:`_move_items`,
  :func:`_move_field`, :func:`_merge_field`, :func:`_remove_field`);
- branch-free filters of the entries a batch changed and of segment heads (run in
  :data:`CHUNKS` pieces);
- gathers and scatters by address (:func:`gather_lists`, :func:`read_at`, :func:`write_at`)
  and the check of every list (:func:`list_violations`).

Every kernel reads and writes vertex lists through edge pointers (see
:mod:`hornet.core.pointers`).
"""
from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.cpython.unsafe.numbers import leading_zeros
from numba.extending import intrinsic
import numpy as np

from ...core.jit import inline_when_parallel, ix, njit, part_range, split_kernel
from ...core.pointers import as_width, int32_view, view
from ...core.search import array_holding, lower_bound


# Filters run in CHUNKS pieces: each counts what it keeps, then writes it at its offset.
# Where the kept pattern is random (segment heads, src < dst), a branch per entry mispredicts
# half the time, so the write loop is branch-free: every entry is written at the next free
# slot and only a kept one advances it; the loop stops at the piece's last kept entry, so no
# stray write leaves the piece's range. The counting kernels of a split call (several parts)
# each count their own pieces; prefix_counts adds them up.
CHUNKS = 64


def prefix_counts(results: list):
    """The running counts (int64 (CHUNKS + 1,)) of a counting kernel's parts: one part's are
    final; several parts' (each holding the counts of its own pieces, zero elsewhere, not
    summed up) are added and summed up here."""
    if len(results) == 1:
        return results[0]
    found = results[0]
    for other in results[1:]:
        found += other
    return np.cumsum(found, out=found)


@split_kernel(nrt=True, combine=prefix_counts)
def _count_heads(src, part, parts):
    n = src.shape[0]
    found = np.zeros(CHUNKS + 1, dtype=np.int64)
    for c in range(*part_range(CHUNKS, part, parts)):
        i0 = n * c // CHUNKS
        i1 = n * (c + 1) // CHUNKS
        k = 0
        if i0 == 0 and i1 > 0:              # entry 0 always starts a segment
            k = 1
            i0 = 1
        for i in range(i0, i1):
            k += src[ix(i)] != src[ix(i - 1)]
        found[c + 1] = k
    if parts == 1:
        for c in range(CHUNKS):
            found[c + 1] += found[c]
    return found


@split_kernel
def _fill_heads(src, found, sources, seg_start, part, parts):
    n = src.shape[0]
    for c in range(*part_range(CHUNKS, part, parts)):
        j = found[c]
        if found[c + 1] == j:
            continue
        i0 = n * c // CHUNKS
        last = n * (c + 1) // CHUNKS - 1
        while last > 0 and src[last] == src[last - 1]:
            last -= 1
        if i0 == 0:
            sources[j] = src[0]
            seg_start[j] = 0
            j += 1
            i0 = 1
        for i in range(i0, last + 1):
            sources[ix(j)] = src[ix(i)]
            seg_start[ix(j)] = i
            j += src[ix(i)] != src[ix(i - 1)]


@njit(inline="always")
def _smallest_class(d, min_class):
    """The smallest size class (at least ``min_class``) whose blocks hold ``d`` edges:
    max(ceil(log2 d), min_class), from a leading-zero count (no loop whose exit depends on
    ``d``)."""
    return max(np.int64(64 - leading_zeros(np.uint64(max(d, 1) - 1))), np.int64(min_class))


@njit(inline="always")
def _moves_down(d, cls, min_class):
    """A list of ``d > 0`` edges in a block of class ``cls`` moves to a smaller one: it fills
    less than a quarter of its block and a smaller class holds it."""
    return 4 * d < (np.int64(1) << cls) and _smallest_class(d, min_class) < cls


@intrinsic
def _move_bytes(typingctx, dst, src, nbytes):
    """``memmove(dst, src, nbytes)`` on int64 addresses (the ranges may overlap)."""
    sig = types.void(types.int64, types.int64, types.int64)

    def codegen(context, builder, signature, args):
        to = builder.inttoptr(args[0], cgutils.voidptr_t)
        frm = builder.inttoptr(args[1], cgutils.voidptr_t)
        cgutils.raw_memmove(builder, to, frm, args[2], 1)
        return context.get_dummy_value()

    return sig, codegen


SHORT_RUN = 8   # items a list rewrite copies one by one; longer runs go through memmove


@njit(inline="always")
def _move_items(dst, src, n, like):
    """Move ``n`` items of ``like``'s dtype from address ``src`` to ``dst`` (may overlap)."""
    if n <= SHORT_RUN:
        a = view(dst, n, like)
        b = view(src, n, like)
        if dst < src:
            for t in range(n):
                a[t] = b[t]
        else:
            for t in range(n - 1, -1, -1):
                a[t] = b[t]
    else:
        _move_bytes(dst, src, n * like.itemsize)


def gather_lists(column_ptr, degree, offsets, out) -> None:
    """Concatenate every vertex's list of one column into ``out`` (``offsets``: exclusive
    scan). ``column_ptr`` int64 (V,) addresses, ``degree`` (V,), ``offsets`` int64 (V,),
    ``out`` (sum of degree,) in the column's dtype; NumPy arrays."""
    _gather_lists(column_ptr, degree, offsets, as_width(out))


def read_at(addresses, out) -> None:
    """``out[i]`` = the value at ``addresses[i]`` (int64 (n,)), read in ``out``'s dtype."""
    _read_at(addresses, as_width(out))


def write_at(addresses, values) -> None:
    """Write ``values[i]`` (in its dtype) at ``addresses[i]`` (int64 (n,))."""
    _write_at(addresses, as_width(values))


@split_kernel
def _gather_lists(column_ptr, degree, offsets, out, part, parts):
    for v in range(*part_range(column_ptr.shape[0], part, parts)):
        d = degree[v]
        if d > 0:
            lst = view(column_ptr[v], d, out)
            o = offsets[v]
            for j in range(d):
                out[o + j] = lst[j]


@split_kernel
def _read_at(addresses, out, part, parts):
    for i in range(*part_range(addresses.shape[0], part, parts)):
        out[i] = view(addresses[i], 1, out)[0]


@split_kernel
def _write_at(addresses, values, part, parts):
    for i in range(*part_range(addresses.shape[0], part, parts)):
        view(addresses[i], 1, values)[0] = values[i]


@split_kernel
def list_violations(edge_ptr, degree, num_vertices, out, part, parts):
    """Per vertex: 0 ok, 1 unsorted or duplicate, 2 destination out of range."""
    for v in range(*part_range(edge_ptr.shape[0], part, parts)):
        d = degree[v]
        out[v] = 0
        if d > 0:
            lst = int32_view(edge_ptr[v], d)
            for i in range(d):
                if lst[i] < 0 or lst[i] >= num_vertices:
                    out[v] = 2
                    break
                if i > 0 and lst[i] <= lst[i - 1]:
                    out[v] = 1
                    break


# lists up to this long are searched by a branch-free count (vectorized; no mispredicted
# halving steps); longer ones by binary search, whose halving steps then cost less than
# counting the whole list
LINEAR_SEARCH = 32


@njit(inline="always")
def _lower_bound(lst, d, x, floor, nv):
    """First index i >= ``floor`` of the sorted list ``lst[:d]`` with ``lst[i] >= x``
    (``lst[:floor] < x`` is known). Short lists: a branch-free count; long ones: interpolation
    guess (where x would sit if the list were spread evenly over the id space: vertex ids
    are usually shuffled), gallop from there, binary search."""
    if d <= LINEAR_SEARCH:
        lo = 0
        for j in range(d):
            lo += lst[ix(j)] < x
        return lo
    if floor >= d:
        return d
    g = d * min(np.int64(x), nv) // nv
    g = max(min(g, d - 1), floor)
    if lst[ix(g)] < x:
        lo = g + 1
        step = 1
        while lo + step - 1 < d and lst[ix(lo + step - 1)] < x:
            lo += step
            step *= 2
        hi = min(lo + step - 1, d)
    else:
        hi = g
        step = 1
        while hi - step >= floor and lst[ix(hi - step)] >= x:
            hi -= step
            step *= 2
        lo = max(hi - step + 1, floor)
    return lower_bound(lst, lo, hi, x)


@njit(inline=inline_when_parallel)
def _search_segment(lst, d, dst, b, c, nv, pos):
    """Positions (as :func:`find_positions` writes them) of ``dst[b:b + c]`` (ascending) in
    ``lst[:d]``, into ``pos[b:b + c]``; returns how many are absent."""
    floor = 0
    absent = 0
    for j in range(c):
        x = dst[ix(b + j)]
        lo = _lower_bound(lst, d, x, floor, nv)
        if lo < d and lst[ix(lo)] == x:
            pos[ix(b + j)] = lo
        else:
            pos[ix(b + j)] = -1 - lo
            absent += 1
        floor = lo
    return absent


# the item types of edge fields (1, 2, 4 or 8 bytes): their dtype is all a view takes from them
_U8, _U16, _U32, _U64 = (np.empty(0, dtype=t) for t in (np.uint8, np.uint16, np.uint32,
                                                         np.uint64))


@njit(inline=inline_when_parallel)
def _move_field(dst, src, n, size):
    """Move ``n`` items of ``size`` bytes (an edge field's itemsize) from address ``src`` to
    ``dst`` (the ranges may overlap). One item (an inserted or removed edge's value) is
    copied in line; runs go through :func:`_move_run`."""
    if n == 1:
        if size == 4:
            view(dst, 1, _U32)[0] = view(src, 1, _U32)[0]
        elif size == 8:
            view(dst, 1, _U64)[0] = view(src, 1, _U64)[0]
        elif size == 2:
            view(dst, 1, _U16)[0] = view(src, 1, _U16)[0]
        elif size == 1:
            view(dst, 1, _U8)[0] = view(src, 1, _U8)[0]
        else:
            _move_bytes(dst, src, size)
    else:
        _move_run(dst, src, n, size)


# _search_segment, _move_field, _merge_field and _remove_field are inlined in Numba's IR into
# the fused kernels (plan and merge of an insert, plan and removal of a delete: split kernels)
# and called everywhere else (jit.inline_when_parallel). Called in a kernel's loop, they take
# their array arguments with reference counting per segment (atomic operations that also
# stall the prefetches); inlined at the dozen places the fused kernels use them, each
# _move_field for four item sizes, they are typed and optimized again at each place, which
# costs compile time: other kernels link one compiled copy of each (LLVM still inlines the
# small ones). _move_run is always a called function.
@njit
def _move_run(dst, src, n, size):
    """:func:`_move_field` for any ``n`` (>= 0)."""
    if size == 4:
        _move_items(dst, src, n, _U32)
    elif size == 8:
        _move_items(dst, src, n, _U64)
    elif size == 2:
        _move_items(dst, src, n, _U16)
    elif size == 1:
        _move_items(dst, src, n, _U8)
    else:
        _move_bytes(dst, src, n * size)


@njit(inline="always")
def _field_address(ptr, f, bases, field_bases, sizes):
    """Address in edge field ``f`` of the slot whose destination address is ``ptr`` (field 0,
    or ``ptr`` 0 = no block: ``ptr`` itself). ``bases`` int64 (A,), ascending, and
    ``field_bases`` int64 (A, F): the block arrays' columns (the memory manager's lookup);
    ``sizes`` int64 (F,): the fields' itemsizes."""
    if f == 0 or ptr == 0:
        return ptr
    a = array_holding(bases, ptr)
    return field_bases[a, f] + ((ptr - bases[a]) >> 2) * sizes[f]


@njit(inline=inline_when_parallel)
def _merge_field(src_f, dst_f, d0, m, pos, b, c, size, values_f, index, by_index, out_f, res):
    """Merge a segment's absent entries into one edge field of its list: the ``d0`` old items
    at address ``src_f`` and the ``m`` entries of ``b:b + c`` whose ``pos`` is ``-1 - at``
    (``at`` old items before it; ``pos >= 0``: present, skipped) go to ``dst_f`` (== ``src_f``:
    in place, from the back so that nothing is overwritten unread). Entry j's value is at
    ``values_f + size * (index[j] if by_index else j)``; with ``out_f`` (0: none) it is also
    copied to row ``res[j]`` (when >= 0) of the result column at ``out_f``."""
    i = d0                      # old items [0, i) are not placed yet
    r = m                       # new items not placed yet
    for t in range(c):
        j = b + c - 1 - t
        p = pos[ix(j)]
        if p >= 0:              # present already
            continue
        at = -1 - p
        r -= 1
        if i > at:              # old items [at, i) move up past the r + 1 new ones
            _move_field(dst_f + size * (at + r + 1), src_f + size * at, i - at, size)
            i = at
        value = values_f + size * (index[ix(j)] if by_index else j)
        _move_field(dst_f + size * (at + r), value, 1, size)
        if out_f != 0 and res[ix(j)] >= 0:
            _move_field(out_f + size * res[ix(j)], value, 1, size)
    if dst_f != src_f and i > 0:
        _move_field(dst_f, src_f, i, size)


@njit(inline=inline_when_parallel)
def _remove_field(src_f, dst_f, d0, d1, pos, b, c, first, size, out_f, res, by_res):
    """Remove a segment's present entries from one edge field of its list: the ``d0`` old
    items at ``src_f`` lose those at the positions ``pos[b + j] >= 0`` (ascending; entry
    ``first`` is the first present one); the ``d1`` left go to ``dst_f`` (== ``src_f``: in
    place, front to back). With ``out_f`` (0: none) each removed value is first copied to
    row ``res[b + j]`` (``by_res``; skipped when negative) or ``b + j`` of the column at
    ``out_f``."""
    if out_f != 0:
        for j in range(first, c):
            p = pos[ix(b + j)]
            row = res[ix(b + j)] if by_res else b + j
            if p >= 0 and row >= 0:
                _move_field(out_f + size * row, src_f + size * p, 1, size)
    if d1 == 0:
        return
    j = first
    w = np.int64(pos[ix(b + j)])    # items before it keep their slot
    if dst_f != src_f and w > 0:
        _move_field(dst_f, src_f, w, size)
    while j < c:                    # the run after each removed item moves down
        lo = np.int64(pos[ix(b + j)]) + 1
        j += 1
        while j < c and pos[ix(b + j)] < 0:
            j += 1
        hi = np.int64(pos[ix(b + j)]) if j < c else d0
        if hi > lo:
            _move_field(dst_f + size * w, src_f + size * lo, hi - lo, size)
            w += hi - lo


@njit(inline="always")
def _changed(pos, src, dst, i, directed, present, every):
    """Entry i was changed: present before the batch (deleting) or absent (inserting), or
    ``every`` entry; undirected batches count each pair once (src < dst)."""
    i = ix(i)
    return (every | ((pos[i] >= 0) == present)) & (directed | (src[i] < dst[i]))


@split_kernel(nrt=True, combine=prefix_counts)
def _count_changed(pos, src, dst, directed, present, every, part, parts):
    n = pos.shape[0]
    found = np.zeros(CHUNKS + 1, dtype=np.int64)
    for c in range(*part_range(CHUNKS, part, parts)):
        k = 0
        for i in range(n * c // CHUNKS, n * (c + 1) // CHUNKS):
            k += _changed(pos, src, dst, i, directed, present, every)
        found[c + 1] = k
    if parts == 1:
        for c in range(CHUNKS):
            found[c + 1] += found[c]
    return found


@split_kernel
def _fill_changed(pos, src, dst, directed, present, every, found, s_out, d_out, index,
                  part, parts):
    n = pos.shape[0]
    with_index = index.shape[0] > 0
    for c in range(*part_range(CHUNKS, part, parts)):   # branch-free (see the planning section)
        j = found[c]
        if found[c + 1] == j:
            continue
        last = n * (c + 1) // CHUNKS - 1
        while not _changed(pos, src, dst, last, directed, present, every):
            last -= 1
        for i in range(n * c // CHUNKS, last + 1):
            s_out[ix(j)] = src[ix(i)]
            d_out[ix(j)] = dst[ix(i)]
            if with_index:
                index[ix(j)] = i
            j += _changed(pos, src, dst, i, directed, present, every)
