"""Whether a delete's compaction can be decided without waiting for its release's counts.

After a delete, :func:`hornet.batch.pipeline.compact_memory` checks whether the lists are
loose (:meth:`hornet.memory.list_fit.ListFit.loose`) and compacts the classes that gave
blocks back (:meth:`MemoryManager.compact_touched`). Both read the memory manager's counts,
and on the GPU the counts of the delete's own release come back with its kernels: reading
them waits for the whole batch on the device. A release only lowers the blocks in use, by at
most the slots it gives back (a delete's plan knows them), so bounds taken from the counts
before it tell, in most batches of a large graph, that neither step would do anything once
the counts land: then nothing is read (the counts are taken in by the next call that reads
the manager's bookkeeping, which also drops the arrays the release emptied).
"""
from __future__ import annotations

import os

from . import manager as _m

__all__ = ["ENABLED", "settles_nothing"]

#: False (or the environment variable HORNET_COMPACTION_BOUND=0): every delete reads its
#: release's counts
ENABLED = os.environ.get("HORNET_COMPACTION_BOUND", "1") != "0"
#: deletes of fewer entries read their counts: their wait is short, and the counts left for
#: the next batch cost it about what the delete saves (bench/results/removal_kernels_gpu_ab.md)
MIN_ENTRIES = 1 << 17


def settles_nothing(mm, fit, entries: int, released_slots: int, rows: int) -> bool:
    """True when, once the pending release of ``mm`` (at most ``released_slots`` slots, the
    only one on its way) has landed, the lists of ``entries``
    entries are certainly not loose for ``fit`` and ``mm.compact_touched(rows)`` would
    certainly move, free and flush nothing. False: decide with the counts (they may wait)."""
    # (device takes still on their way need not land: the class counts that the bounds read
    # count their blocks already)
    if not ENABLED or _m.FREE_EVERY != 1 or _m.FREE_PERSIST:
        return False                  # (compaction keeps state across calls then)
    lists_now = mm.list_slots(settle=False)        # the release counted as holding lists
    if fit.slots_per_entry is None or fit.exceeds(lists_now, entries, bool(mm.steady)):
        return False                  # (not loose with the most slots: not loose after)
    free_after = mm._free_slots + released_slots
    lists_low = max(lists_now - released_slots, 0)
    if free_after >= _m.RELEASE_PER_ROW * rows:
        share = _m.STEADY_FREE_SHARE if mm.steady else _m.FREE_SHARE
        if free_after - (share * lists_low if lists_low > 0 else 0.0) > 0:
            return False              # (free room past the allowance: classes may give back)
    below = min(mm.compact_below, _m.STEADY_COMPACT_BELOW) if mm.steady else mm.compact_below
    for k, pool in mm.pools.items():
        if not pool:
            continue
        used, blocks = mm._class_used.get(k, 0), mm._class_blocks.get(k, 0)
        low = used - min(used, released_slots >> k)           # used blocks after, at least
        cached = mm._cached(k)
        if cached and low <= cached:
            return False              # the class may hold cached blocks only (a flush)
        if free_after >= _m.RELEASE_PER_ROW * rows and low < below * blocks and \
                ((blocks - used) << k) + released_slots >= _m.COMPACT_MIN_SHARE * lists_low:
            return False              # the class may fall under its threshold with room
    return True
