"""The radix sort of a large GPU batch plan's keys (CUDA source ``key_sort.cu``).

A plan's keys (``src << 31 | dst``, :mod:`hornet.batch.gpu.plan`) vary in only twice the bits
of the batch's largest id: ids below 2^24 (a graph of 16M vertices) leave 48 of the 62 key
bits in use. :func:`sort_keys` sorts them in :data:`PASSES` stable LSD passes of a digit
width that the device derives from the batch's largest id (written by ``batch_keys``, never
read back): 8-bit digits for ids below 2^24, 11-bit ones at the widest. CuPy's sort (CUB's
radix sort through Thrust) goes over all 64 bits, and allocates its temporary storage per
call. The host launches the same kernels whatever the ids, so the sorted keys end where they
started (an even number of passes); the scratch (tile counts) is kept for the next batch.
"""
from __future__ import annotations

import os

from ...core.cuda import PreparedLaunch, cupy, function

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "key_sort.cu")
#: keys a block handles (key_sort.cu: KS_TILE)
TILE = 4096
THREADS = 256
#: passes a sort makes (key_sort.cu: KS_PASSES; even: the keys end in their own buffer)
PASSES = 6
#: most digits of a pass (key_sort.cu: KS_MAX_BINS)
MAX_BINS = 2048

_LAUNCHES: dict = {}
_ARITY = {"ks_hist": 6, "ks_scan": 4, "ks_scatter": 8}
_SCRATCH: list = []


def _prepared(name: str) -> PreparedLaunch:
    fn = _LAUNCHES.get(name)
    if fn is None:
        fn = _LAUNCHES[name] = PreparedLaunch(function(_CU, name), _ARITY[name])
    return fn


def _counts(tiles: int):
    """The scratch of tile counts (uint32, MAX_BINS per tile, then MAX_BINS totals), grown
    to ``tiles`` tiles (the next power of two) and kept."""
    if not _SCRATCH or _SCRATCH[0][0] < tiles:
        cap = 1 << max(4, (tiles - 1).bit_length())
        _SCRATCH[:] = [(cap, cupy.empty(MAX_BINS * (cap + 1), dtype=cupy.uint32))]
    return _SCRATCH[0][1]


def sort_keys(keys: int, other: int, n: int, max_id: int) -> None:
    """Sort the ``n`` uint64 plan keys at device address ``keys`` in place (stable), with
    ``n`` words at ``other`` as the passes' second buffer (overwritten). ``max_id``: device
    address of an int64 at least the largest id packed in the keys (a plan's
    ``info[I_MAX_ID]``; values past 2^31 - 1 sort as 31-bit ids). Self-loop keys (all ones)
    sort last. 3 * :data:`PASSES` launches on the current stream, no synchronization."""
    if n <= 1:
        return
    tiles = -(-n // TILE)
    counts = _counts(tiles)
    hist = counts.data.ptr
    totals = hist + 4 * MAX_BINS * tiles
    src, dst = keys, other
    for p in range(PASSES):
        _prepared("ks_hist")(tiles, THREADS, [src, n, max_id, p, hist, tiles])
        _prepared("ks_scan")(MAX_BINS, THREADS, [hist, tiles, max_id, totals])
        _prepared("ks_scatter")(tiles, THREADS, [src, dst, n, max_id, p, hist, totals, tiles])
        src, dst = dst, src
