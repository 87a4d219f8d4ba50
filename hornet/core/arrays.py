"""Array helpers shared by the graph's CPU and GPU paths: each takes the array module
(``numpy`` or ``cupy``) as ``xp`` and works on either device."""
from __future__ import annotations

import numpy as np


def rows_sorted_unique(xp, indptr, indices) -> bool:
    """Every CSR row strictly ascending (so sorted and duplicate-free)."""
    if indices.shape[0] < 2:
        return True
    rising = indices[1:] > indices[:-1]
    starts = indptr[1:-1]
    starts = starts[(starts > 0) & (starts < indices.shape[0])]
    ok = rising.copy()
    ok[starts - 1] = True            # the step into a new row may fall
    return bool(ok.all())


def expand(xp, counts, offsets=None):
    """``repeat(arange(len(counts)), counts)`` as int32 (CuPy's repeat takes no array counts)."""
    if xp is np:
        return np.repeat(np.arange(counts.shape[0], dtype=np.int32), counts)
    if offsets is None:
        offsets = xp.cumsum(counts)
    else:
        offsets = offsets[1:]
    total = int(offsets[-1]) if offsets.shape[0] else 0
    return xp.searchsorted(offsets, xp.arange(total), side="right").astype(xp.int32)


def scatter_last(xp, target, ids, values) -> None:
    """``target[ids] = values`` where a repeated id takes its last value, on every device
    (a GPU scatter leaves the winner of repeated indices undefined)."""
    if ids.shape[0] > 1:
        _, first_in_reversed = xp.unique(ids[::-1], return_index=True)
        keep = ids.shape[0] - 1 - first_in_reversed
        ids, values = ids[keep], values[keep]
    target[ids] = values
