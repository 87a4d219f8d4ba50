"""Sorting a CPU batch by (src, dst) and dropping its repeats (Numba).

A batch's pairs are packed into 64-bit keys, partitioned into buckets by their high bits
(:func:`partition_pairs`, one pass that also checks the ids), the buckets sorted in parallel
and unpacked without their repeats (:func:`sorted_unique_pairs`, the entry point; first
occurrence wins; undirected batches are mirrored on the way). Small batches take a plain
radix sort (:func:`sort_keys`) or a parallel merge sort (:func:`parallel_sort`).
"""
from __future__ import annotations

import numba
import numpy as np

from .. import validate
from ...core.jit import ix, njit, part_range, split_kernel
from .workspace import Workspace, take


RADIX_BITS = 11
SMALL_SORT = 1 << 14


@njit
def _radix_argsort(keys, key_bits):
    n = keys.shape[0]
    order = np.arange(n, dtype=np.int64)
    k = keys.copy()
    k2 = np.empty_like(k)
    o2 = np.empty_like(order)
    radix = 1 << RADIX_BITS
    mask = np.uint64(radix - 1)
    shift = 0
    while shift < key_bits:
        count = np.zeros(radix + 1, dtype=np.int64)
        s = np.uint64(shift)
        for i in range(n):
            count[np.int64((k[i] >> s) & mask) + 1] += 1
        for d in range(radix):
            count[d + 1] += count[d]
        for i in range(n):
            d = np.int64((k[i] >> s) & mask)
            p = count[d]
            count[d] = p + 1
            k2[p] = k[i]
            o2[p] = order[i]
        k, k2 = k2, k
        order, o2 = o2, order
        shift += RADIX_BITS
    return order, k


def sort_keys(keys: np.ndarray, key_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Stable argsort of uint64 keys below ``2**key_bits``: (order int64, sorted keys)."""
    if keys.shape[0] <= SMALL_SORT:
        order = np.argsort(keys, kind="stable")
        return order, keys[order]
    return _radix_argsort(keys, max(1, key_bits))


_ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


def pack_pairs(s, d, bits, index_bits, mirror):
    """Keys ``((src << bits | dst) << index_bits) | entry`` for a batch of pairs.

    With ``mirror`` (undirected graphs) pair i gives entries 2i (s, d) and 2i + 1 (d, s), and
    self-loops give the all-ones key, which sorts last. Sorting these keys sorts by
    (src, dst) and, among repeats, by entry: a stable sort for free.
    """
    out = np.empty(s.shape[0] * (2 if mirror else 1), dtype=np.uint64)
    _pack_pairs(s, d, bits, index_bits, mirror, out)
    return out


@split_kernel
def _pack_pairs(s, d, bits, index_bits, mirror, out, part, parts):
    b = np.uint64(bits)
    ib = np.uint64(index_bits)
    with_index = np.uint64(1 if index_bits > 0 else 0)   # 0: keys without the entry index
    first, end = part_range(s.shape[0], part, parts)
    if mirror:
        for i in range(first, end):
            u = np.uint64(s[i])
            v = np.uint64(d[i])
            if u == v:
                out[2 * i] = _ALL_ONES
                out[2 * i + 1] = _ALL_ONES
            else:
                out[2 * i] = (((u << b) | v) << ib) | (np.uint64(2 * i) * with_index)
                out[2 * i + 1] = (((v << b) | u) << ib) | (np.uint64(2 * i + 1) * with_index)
    else:
        for i in range(first, end):
            out[i] = (((np.uint64(s[i]) << b) | np.uint64(d[i])) << ib) | \
                (np.uint64(i) * with_index)


@njit
def unpack_unique(keys, bits, index_bits):
    """From sorted packed keys: (entry order int64, src int32, dst int32, self-loop entries),
    keeping the first entry of each (src, dst)."""
    n = keys.shape[0]
    end = n
    while end > 0 and keys[end - 1] == _ALL_ONES:
        end -= 1
    ib = np.uint64(index_bits)
    b = np.uint64(bits)
    low = (np.uint64(1) << ib) - np.uint64(1)
    dmask = (np.uint64(1) << b) - np.uint64(1)
    unique = 0
    prev = _ALL_ONES
    for i in range(end):
        k = keys[i] >> ib
        if k != prev:
            unique += 1
            prev = k
    order = np.empty(unique, dtype=np.int64)
    src = np.empty(unique, dtype=np.int32)
    dst = np.empty(unique, dtype=np.int32)
    j = 0
    prev = _ALL_ONES
    for i in range(end):
        k = keys[i] >> ib
        if k != prev:
            order[j] = np.int64(keys[i] & low)
            src[j] = np.int32(k >> b)
            dst[j] = np.int32(k & dmask)
            j += 1
            prev = k
    return order, src, dst, n - end


@njit
def unique_sorted_pairs(keys_sorted, order, bits):
    """Like :func:`unpack_unique` for (radix-)sorted plain keys ``src << bits | dst``."""
    n = keys_sorted.shape[0]
    b = np.uint64(bits)
    dmask = (np.uint64(1) << b) - np.uint64(1)
    unique = 0
    for i in range(n):
        if i == 0 or keys_sorted[i] != keys_sorted[i - 1]:
            unique += 1
    o = np.empty(unique, dtype=np.int64)
    src = np.empty(unique, dtype=np.int32)
    dst = np.empty(unique, dtype=np.int32)
    j = 0
    for i in range(n):
        if i == 0 or keys_sorted[i] != keys_sorted[i - 1]:
            o[j] = order[i]
            src[j] = np.int32(keys_sorted[i] >> b)
            dst[j] = np.int32(keys_sorted[i] & dmask)
            j += 1
    return o, src, dst


@njit
def _co_rank(k, a, b):
    """Merge path: how many of the first k merged items come from ``a``."""
    lo = max(0, k - b.shape[0])
    hi = min(k, a.shape[0])
    while lo < hi:
        i = (lo + hi) // 2
        if a[i] <= b[k - i - 1]:
            lo = i + 1
        else:
            hi = i
    return lo


@split_kernel
def _merge(a, b, out, pieces, part, parts):
    n = out.shape[0]
    for p in range(*part_range(pieces, part, parts)):
        k0 = n * p // pieces
        k1 = n * (p + 1) // pieces
        i = _co_rank(k0, a, b)
        j = k0 - i
        i1 = _co_rank(k1, a, b)
        j1 = k1 - i1
        for k in range(k0, k1):
            if j >= j1 or (i < i1 and a[i] <= b[j]):
                out[k] = a[i]
                i += 1
            else:
                out[k] = b[j]
                j += 1


_POOL = None


def parallel_sort(keys: np.ndarray) -> np.ndarray:
    """Sort uint64 keys using every core: halves sorted in two threads, then a parallel merge."""
    threads = numba.get_num_threads()
    if keys.shape[0] < (1 << 18) or threads < 2:
        keys.sort()
        return keys
    half = keys.shape[0] // 2
    a, b = keys[:half], keys[half:]
    list(_pool().map(np.ndarray.sort, (a, b)))    # NumPy releases the GIL while sorting
    out = np.empty_like(keys)
    _merge(a, b, out, 4 * threads)
    return out


# Batches without an entry order sort 32-bit keys: the pairs are first split by the high bits
# of their 64-bit key (src << bits | dst) into up to 2**MAX_HIGH_BITS buckets, one parallel
# counting pass, and each bucket's 32 low bits are sorted by NumPy (twice as many keys per SIMD
# register as uint64, and buckets fit in cache). When the buckets are about even, they are
# laid out as the rows of one padded 2-D array (ROW_SLACK) and sorted by one NumPy call
# (sort along axis 1): a Python-level call per bucket costs more than its sort.
MAX_HIGH_BITS = 12
PART_CHUNKS = 16          # pieces of the partition pass (each with its own bucket counters)
PARTITION_MIN = 1 << 15   # entries below which one uint64 sort is as fast
ROW_SLACK = 0.5           # padded rows while buckets * largest bucket <= (1 + ROW_SLACK) keys


def partition_pairs(s, d, bits, high_bits, mirror, keys):
    """Split the keys ``src << bits | dst`` of a batch by their ``high_bits`` top bits.

    ``s``, ``d``: int64 (n,), ``2 * bits - high_bits <= 32``. With ``mirror`` pair i stands
    for (s, d) and (d, s) and self-loops are dropped. Writes the low 32-bit keys grouped by
    bucket (in no order inside one) to ``keys`` (uint32, at least (2n,) with ``mirror``, else
    (n,)) and returns (bucket starts int64 (2**high_bits + 1,), m keys, self-loops dropped,
    width, the smallest id, the largest id). With ``width`` 0 bucket b is
    ``keys[start[b]:start[b + 1]]``; otherwise (when ``keys`` has room for 2**high_bits rows of
    the largest bucket's size, ``width``) bucket b is row b of
    ``keys[:2**high_bits * width].reshape(-1, width)``, its ``start[b + 1] - start[b]`` keys
    first and the row padded with 2**32 - 1 (which sorts last).

    The ids are checked on the way (the first pass reads them anyway): when one is negative or
    not below ``2**bits``, nothing is written to ``keys`` and only the two bounds mean
    anything (the caller refuses the batch, or partitions again with more bits).

    Three split kernels (count per piece, scatter per piece, pad the rows) around one small
    serial one (the buckets' offsets).
    """
    nb = 1 << high_bits
    count = np.zeros(PART_CHUNKS * nb, dtype=np.int64)
    ends = np.empty((PART_CHUNKS, 3), dtype=np.int64)      # per piece: self-loops, lo, hi
    _partition_count(s, d, bits, high_bits, mirror, count, ends)
    start, total, loops, width, lo, hi = _bucket_offsets(count, ends, s.shape[0], bits,
                                                         high_bits, keys.shape[0])
    if total < 0:                           # a bad id: nothing written
        return start, 0, 0, 0, lo, hi
    _partition_scatter(s, d, bits, high_bits, mirror, count, start, width, keys)
    if width:
        _pad_rows(keys, start, width)
    return start, total, loops, width, lo, hi


@split_kernel(threshold=0)
def _partition_count(s, d, bits, high_bits, mirror, count, ends, part, parts):
    """Per piece c of the batch: its keys per bucket (``count[c * nb + b]``), and its
    self-loops, smallest and largest id (``ends[c]``)."""
    n = s.shape[0]
    nb = 1 << high_bits
    b64 = np.uint64(bits)
    lb = np.uint64(2 * bits - high_bits)
    id_mask = (np.uint64(1) << b64) - np.uint64(1)     # keeps a bad id's bucket in range
    for c in range(*part_range(PART_CHUNKS, part, parts)):
        lp = 0
        row = c * nb
        lo = np.int64(np.iinfo(np.int64).max)
        hi = np.int64(np.iinfo(np.int64).min)
        for i in range(n * c // PART_CHUNKS, n * (c + 1) // PART_CHUNKS):
            x = np.int64(s[ix(i)])
            y = np.int64(d[ix(i)])
            lo = min(lo, min(x, y))
            hi = max(hi, max(x, y))
            u = np.uint64(x) & id_mask
            v = np.uint64(y) & id_mask
            if mirror:
                if u == v:
                    lp += 1
                else:
                    count[ix(row + np.int64(((u << b64) | v) >> lb))] += 1
                    count[ix(row + np.int64(((v << b64) | u) >> lb))] += 1
            else:
                count[ix(row + np.int64(((u << b64) | v) >> lb))] += 1
        ends[c, 0] = lp
        ends[c, 1] = lo
        ends[c, 2] = hi


@njit
def _bucket_offsets(count, ends, n, bits, high_bits, room):
    """From :func:`_partition_count`'s counts: (bucket starts, keys, self-loops, width, the
    smallest id, the largest id) as :func:`partition_pairs` returns them, with ``count``
    turned into each piece's next write position per bucket; keys -1 (and ``count`` left)
    when an id is out of range."""
    nb = 1 << high_bits
    id_mask = np.int64((np.uint64(1) << np.uint64(bits)) - np.uint64(1))
    lo = ends[0, 1] if n else 0
    hi = ends[0, 2] if n else -1
    loops = 0
    for c in range(PART_CHUNKS):
        loops += ends[c, 0]
        if n:
            lo = min(lo, ends[c, 1])
            hi = max(hi, ends[c, 2])
    start = np.zeros(nb + 1, dtype=np.int64)
    if lo < 0 or hi > id_mask:
        return start, -1, 0, 0, lo, hi
    total = 0
    widest = 0
    for b in range(nb):                       # bucket-major: each bucket contiguous
        start[b] = total
        for c in range(PART_CHUNKS):
            k = count[c * nb + b]
            count[c * nb + b] = total
            total += k
        widest = max(widest, total - start[b])
    start[nb] = total
    width = widest if nb * widest <= room else 0
    return start, total, loops, width, lo, hi


@split_kernel(threshold=0)
def _partition_scatter(s, d, bits, high_bits, mirror, count, start, width, keys, part,
                       parts):
    """Write each piece's low keys at its positions (``count``, from
    :func:`_bucket_offsets`)."""
    n = s.shape[0]
    nb = 1 << high_bits
    b64 = np.uint64(bits)
    lb = np.uint64(2 * bits - high_bits)
    low_mask = (np.uint64(1) << lb) - np.uint64(1)
    for c in range(*part_range(PART_CHUNKS, part, parts)):
        row = c * nb
        for i in range(n * c // PART_CHUNKS, n * (c + 1) // PART_CHUNKS):
            u = np.uint64(s[ix(i)])
            v = np.uint64(d[ix(i)])
            if mirror and u == v:
                continue
            key = (u << b64) | v
            b = np.int64(key >> lb)
            at = ix(row + b)
            p = count[at]
            count[at] = p + 1
            keys[ix(p + (b * width - start[b] if width else 0))] = np.uint32(key & low_mask)
            if mirror:
                key = (v << b64) | u
                b = np.int64(key >> lb)
                at = ix(row + b)
                p = count[at]
                count[at] = p + 1
                keys[ix(p + (b * width - start[b] if width else 0))] = \
                    np.uint32(key & low_mask)


@split_kernel(threshold=0)
def _pad_rows(keys, start, width, part, parts):
    """Pad each bucket's row (``width`` keys) after its keys with 2**32 - 1."""
    for b in range(*part_range(start.shape[0] - 1, part, parts)):
        for p in range(b * width + start[b + 1] - start[b], (b + 1) * width):
            keys[ix(p)] = np.uint32(0xFFFFFFFF)


def unpack_buckets(keys, start, width, bits, high_bits, sources, seg_start):
    """From buckets of sorted low keys (laid out as :func:`partition_pairs` says for
    ``width``): (src int32, dst int32) of the distinct pairs, ascending, and S, the number of
    their segments, written to ``sources[:S]`` (int32, the distinct sources) and
    ``seg_start[:S + 1]`` (int32, where each one's pairs start, then the pair count) as
    :func:`plan_insert` takes them; both at least as long as the key count (+ 1). Needs
    ``high_bits <= bits``: a source's keys then lie in one bucket. Two split kernels over
    groups of buckets: count the distinct pairs and sources, then write them."""
    groups = min(start.shape[0] - 1, PART_CHUNKS)
    found = np.zeros(groups + 1, dtype=np.int64)
    heads = np.zeros(groups + 1, dtype=np.int64)
    _count_unique(keys, start, width, bits, found, heads)
    np.cumsum(found, out=found)
    np.cumsum(heads, out=heads)
    src = np.empty(found[groups], dtype=np.int32)
    dst = np.empty(found[groups], dtype=np.int32)
    seg_start[heads[groups]] = found[groups]
    _fill_unique(keys, start, width, bits, high_bits, found, heads, src, dst, sources,
                 seg_start)
    return src, dst, int(heads[groups])


@split_kernel(threshold=0)
def _count_unique(keys, start, width, bits, found, heads, part, parts):
    """Per group g of buckets: its distinct pairs (``found[g + 1]``) and distinct sources
    (``heads[g + 1]``)."""
    nb = start.shape[0] - 1
    b64 = np.uint64(bits)
    groups = found.shape[0] - 1
    for g in range(*part_range(groups, part, parts)):
        k = 0
        h = 0
        for b in range(nb * g // groups, nb * (g + 1) // groups):
            o = b * width - start[b] if width else 0    # bucket b's key p is keys[p + o]
            for p in range(start[b], start[b + 1]):
                x = keys[ix(p + o)]
                if p == start[b] or x != keys[ix(p + o - 1)]:
                    k += 1
                    h += p == start[b] or (x >> b64) != (keys[ix(p + o - 1)] >> b64)
        found[g + 1] = k
        heads[g + 1] = h


@split_kernel(threshold=0)
def _fill_unique(keys, start, width, bits, high_bits, found, heads, src, dst, sources,
                 seg_start, part, parts):
    """Write each group's distinct pairs and segments from its offsets (``found``,
    ``heads``: running counts of :func:`_count_unique`)."""
    nb = start.shape[0] - 1
    low_bits = np.uint64(2 * bits - high_bits)
    b64 = np.uint64(bits)
    dmask = (np.uint64(1) << b64) - np.uint64(1)
    groups = found.shape[0] - 1
    for g in range(*part_range(groups, part, parts)):
        j = found[g]
        h = heads[g]
        for b in range(nb * g // groups, nb * (g + 1) // groups):
            high = np.uint64(b) << low_bits
            o = b * width - start[b] if width else 0
            for p in range(start[b], start[b + 1]):
                x = keys[ix(p + o)]
                if p == start[b] or x != keys[ix(p + o - 1)]:
                    key = high | np.uint64(x)
                    u = np.int32(key >> b64)
                    src[ix(j)] = u
                    dst[ix(j)] = np.int32(key & dmask)
                    if p == start[b] or (x >> b64) != (keys[ix(p + o - 1)] >> b64):
                        sources[ix(h)] = u
                        seg_start[ix(h)] = j
                        h += 1
                    j += 1


def _sort_buckets(keys, start) -> None:
    """Sort every bucket ``keys[start[b]:start[b + 1]]`` in place, in two threads when large:
    this one and one of the pool (this one works rather than waits on two pool threads)."""
    bounds = start.tolist()
    nb = len(bounds) - 1
    if numba.get_num_threads() < 2 or keys.shape[0] < (1 << 18):
        _sort_range(keys, bounds, 0, nb)
        return
    half = int(np.searchsorted(start, keys.shape[0] // 2))       # about half of the keys
    half = min(max(half, 1), nb - 1) if nb > 1 else 1
    other = _pool().submit(_sort_range, keys, bounds, half, nb)
    _sort_range(keys, bounds, 0, half)
    other.result()


def _sort_range(keys, bounds, b0, b1) -> None:
    for b in range(b0, b1):
        lo, hi = bounds[b], bounds[b + 1]
        if hi - lo > 1:
            keys[lo:hi].sort()                # NumPy releases the GIL while sorting


def _pool():
    """Two threads for NumPy sorts (which release the GIL), made on first use."""
    global _POOL
    if _POOL is None:
        from concurrent.futures import ThreadPoolExecutor
        _POOL = ThreadPoolExecutor(2, thread_name_prefix="hornet-sort")
    return _POOL


def sorted_unique_pairs(s: np.ndarray, d: np.ndarray, num_vertices: int, mirror: bool,
                        need_order: bool = True, ws: Workspace | None = None,
                        segments: bool = False, check_ids: bool = False):
    """Sort a batch by (src, dst) and drop repeats, first entry wins.

    ``mirror``: undirected batch; each pair stands for both directions and self-loops are
    dropped. Returns (order into the (mirrored) entries, src int32, dst int32, self-loops);
    with ``need_order=False`` the order is not computed (None). ``ws``: a workspace for the
    sort keys. With ``segments`` a fifth item: the segments of the result as
    :func:`plan_insert` takes them ((sources, seg_start), found while unpacking the bucket
    sort of large batches), or None where they were not found on the way.

    ``check_ids``: ``s`` and ``d`` (int64) are not checked yet. A negative or too large id
    raises :class:`hornet.batch.validate.BatchError` as
    :func:`hornet.batch.validate.check_ids` would; ``num_vertices`` is the id space so far,
    grown here to cover the batch; a last item is returned: the ids the batch needs (largest
    id + 1, 0 when empty). The bucket sort's first pass reads every id anyway and checks them
    there (one pass over the batch fewer); other batches are checked first.
    """
    entries = s.shape[0] * (2 if mirror else 1)
    index_bits = max(1, int(entries - 1).bit_length()) if need_order else 0
    bits, high_bits, bucketed = _key_layout(num_vertices, entries, need_order)
    top = ()
    if check_ids and not bucketed:            # no partition pass to check them on the way
        top = (validate.check_ids([(s, "src"), (d, "dst")]),)
        if top[0] > num_vertices:
            bits, high_bits, bucketed = _key_layout(top[0], entries, need_order)
    if bucketed:
        keys = take(ws, "sort_keys", entries + int(ROW_SLACK * entries), np.uint32)
        start, m, loops, width, lo, hi = partition_pairs(s, d, bits, high_bits, mirror, keys)
        if check_ids and not top:
            if lo < 0 or hi > validate.MAX_VERTEX_ID:
                validate.check_ids([(s, "src"), (d, "dst")])    # raises, naming the id
            if hi >> bits:                    # the batch grows the id space past 2**bits
                return sorted_unique_pairs(s, d, hi + 1, mirror, need_order, ws, segments) + \
                    (int(hi) + 1,)
            top = (int(hi) + 1,)
        if width:                             # even buckets: the rows of one 2-D sort
            keys[:(start.shape[0] - 1) * width].reshape(-1, width).sort(axis=1)
        else:
            _sort_buckets(keys[:m], start)
        # the segments go to the plan's buffers (reused batch after batch)
        sources = take(ws, "sources", m, np.int32)
        seg_start = take(ws, "seg_start32", m + 1, np.int32)
        src, dst, ns = unpack_buckets(keys, start, width, bits, high_bits, sources, seg_start)
        found = (sources[:ns], seg_start[:ns + 1])
        return (None, src, dst, int(loops)) + ((found,) if segments else ()) + top
    out = _sorted_unique_pairs(s, d, bits, mirror, need_order, index_bits)
    return (out + (None,) if segments else out) + top


def _key_layout(num_vertices: int, entries: int, need_order: bool):
    """(bits per id, bucket bits, whether the bucket sort takes the batch) for ids below
    ``num_vertices``."""
    bits = max(1, int(num_vertices - 1).bit_length())
    high_bits = max(2 * bits - 32, min(8, 2 * bits))
    bucketed = not need_order and entries >= PARTITION_MIN and \
        high_bits <= min(MAX_HIGH_BITS, bits)
    return bits, high_bits, bucketed


def _sorted_unique_pairs(s, d, bits: int, mirror: bool, need_order: bool, index_bits: int):
    """:func:`sorted_unique_pairs` for batches that the bucket sort does not take."""
    if 2 * bits + index_bits <= 63:
        keys = parallel_sort(pack_pairs(s, d, bits, index_bits, mirror))
        order, src, dst, loops = unpack_unique(keys, bits, index_bits)
        return (order if need_order else None), src, dst, loops // 2
    # ids too large to pack with the entry index: LSD radix argsort of plain keys
    if mirror:
        loop = s == d
        idx = np.flatnonzero(~loop)
        ss = np.column_stack([s, d]).ravel()
        dd = np.column_stack([d, s]).ravel()
        keep = np.repeat(~loop, 2)
        entry = np.flatnonzero(keep)
        ss, dd = ss[keep], dd[keep]
        loops = s.shape[0] - idx.shape[0]
    else:
        ss, dd, entry, loops = s, d, None, 0
    keys = (ss.astype(np.uint64) << np.uint64(bits)) | dd.astype(np.uint64)
    order, skeys = sort_keys(keys, 2 * bits)
    o, src, dst = unique_sorted_pairs(skeys, order, bits)
    if entry is not None:
        o = entry[o]
    return o, src, dst, loops
