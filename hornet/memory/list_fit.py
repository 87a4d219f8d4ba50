"""Lists back into the blocks that fit them: the memory side of a graph under churn.

The batch pipeline moves a list to a smaller block only when its degree falls under a quarter
of its block (hysteresis: an insert/delete ping-pong on one vertex must not move its list
every batch). Under churn that leaves many lists in blocks twice their need: a round that
inserts random edges and deletes them again moves every list that crosses a power of two
up and none of them down, and the next rounds bump further lists, so memory creeps up.

:class:`ListFit` bounds that creep without a per-batch cost. After a batch the graph asks
:meth:`ListFit.loose` (constant time: the manager's per-class counts of used blocks and the
graph's entry count): the slots its lists hold, against the slots that fitting blocks would
take (estimated from the ratio measured at the last scan, the first check scanning), over
``1 + LOOSE_SHARE``. Only then does :meth:`ListFit.refit` scan the vertex table (vectorised, on the device) and move
every list whose fitting class is smaller than its block's (``degree <= capacity / 2``) into
a fresh block of the fitting class, all fields, in one batched allocation, copy and release.
The released blocks leave holes that compaction (:meth:`MemoryManager.compact_touched`)
then gives back.

A list only loosens when it loses entries, so after a delete batch the loose lists are
mostly that batch's: :func:`hornet.batch.pipeline.compact_memory` first refits only the
batch's sources (``refit(candidates=...)``, work proportional to the batch, the reference
ratio left as it is) and scans the whole vertex table only when the lists are still loose
after that. Under a steady sliding window (every batch inserts and deletes a share of the
edges) the scan then stays rare instead of running after every batch.
"""
from __future__ import annotations

import numpy as np

from ..core.jit import njit

__all__ = ["ListFit", "LOOSE_SHARE", "STEADY_LOOSE_SHARE"]

LOOSE_SHARE = 1 / 32
"""Lists are refitted once the slots they hold exceed fitting blocks by this share."""

STEADY_LOOSE_SHARE = 1.0
"""``LOOSE_SHARE`` inside :meth:`hornet.memory.manager.MemoryManager.steady_churn`: updates
that insert about as much as they delete would move lists up and down a power of two over and
over, so there a delete leaves a list that shrinks in its block, and the lists' slots settle
near those of each vertex's largest recent degree (under twice the fitting slots in a random
churn); past this wider band every loose list is refitted at once (a scan that measures the
reference again), so that the band then holds for many batches instead of the batch's own
lists being refitted after every delete."""


class ListFit:
    """When and how a graph's lists go back to fitting blocks (one per graph).

    ``slots_per_entry``: fitting slots per stored entry, measured by the last scan (None
    before the first one: the first check after a delete scans).
    """

    __slots__ = ("slots_per_entry", "refits")

    def __init__(self):
        self.slots_per_entry: float | None = None
        self.refits = 0                    # scans that moved lists (for tests and benchmarks)

    def loose(self, manager, entries: int) -> bool:
        """Whether the lists of ``manager`` hold more than ``1 + LOOSE_SHARE`` times the slots
        of fitting blocks for ``entries`` stored entries (host ints only, no device work)."""
        used = manager.list_slots()
        if entries <= 0 or used == 0:
            return False
        if self.slots_per_entry is None:
            return True                    # no reference yet: the first check scans
        return self.exceeds(used, entries, bool(manager.steady))

    def exceeds(self, used: int, entries: int, steady: bool) -> bool:
        """Whether lists holding ``used`` slots for ``entries`` stored entries are loose
        against the reference (:meth:`loose`'s test; False without a reference, without
        entries or without slots)."""
        if entries <= 0 or used <= 0 or self.slots_per_entry is None:
            return False
        share = STEADY_LOOSE_SHARE if steady else LOOSE_SHARE
        return used > (1.0 + share) * self.slots_per_entry * entries

    def refit(self, manager, degree, size_class, edge_ptr, n: int, entries: int,
              candidates=None) -> int:
        """Move every list of vertices ``[0, n)`` whose degree fits a smaller size class than
        its block's into a fresh block of that class; returns how many lists moved.

        ``degree`` int32, ``size_class`` int8 and ``edge_ptr`` int64 (one row per vertex, on
        the manager's device) are updated in place; every edge field is copied in list order
        (sorted lists stay sorted). When the new blocks do not fit in memory nothing moves,
        and the lists as they are become the reference (no retry every batch).

        ``candidates`` (distinct vertex ids in ``[0, n)``, int32 or int64, on the manager's
        device): only these lists are looked at (the work is proportional to them, not to
        ``n``), and the reference stays as it is: lists elsewhere may still be loose.
        Ignored inside ``manager.steady_churn()``: there every list is looked at (see
        ``STEADY_LOOSE_SHARE``).
        """
        xp = manager.xp
        if manager.steady:
            candidates = None
        if candidates is None and xp is np:
            # the CPU's scan of the whole table: one compiled pass (the vectorised test below
            # makes half a dozen passes over table-sized temporaries)
            movers, classes = _loose_lists(degree, size_class, int(n), manager.min_size_class)
            return self._move(manager, degree, size_class, edge_ptr, movers, classes,
                              degree[movers], entries, candidates)
        if candidates is None:
            rows = None
            deg = degree[:n]
            rank = size_class[:n]
        else:
            rows = xp.asarray(candidates).astype(xp.int64, copy=False)
            deg = degree[rows]
            rank = size_class[rows]
        fit = manager.size_class_for(deg)                  # int64, -1 for degree 0
        loose = xp.flatnonzero((fit < rank.astype(xp.int64)) & (deg > 0))
        movers = loose if rows is None else rows[loose]
        return self._move(manager, degree, size_class, edge_ptr, movers, fit[loose], deg[loose],
                          entries, candidates)

    def _move(self, manager, degree, size_class, edge_ptr, movers, classes, mover_deg,
              entries: int, candidates) -> int:
        """The lists of vertices ``movers`` (degrees ``mover_deg``) into fresh blocks of
        ``classes``; the rest of :meth:`refit`."""
        xp = manager.xp
        moved = int(movers.shape[0])
        if moved:
            try:
                new_ptr = manager.allocate_classes(classes)
            except MemoryError:                        # DeviceMemoryError: nothing taken
                if candidates is None:
                    self.slots_per_entry = manager.list_slots() / entries
                return 0
            old_ptr = edge_ptr[movers]
            manager.copy_slots(old_ptr, new_ptr, mover_deg.astype(xp.int64))
            edge_ptr[movers] = new_ptr
            size_class[movers] = classes.astype(size_class.dtype)
            manager.release(old_ptr)
            self.refits += 1
        if candidates is None:
            # every list now sits in its fitting block: the slots held are the fitting slots
            self.slots_per_entry = manager.list_slots() / entries if entries > 0 else None
        return moved


@njit
def _loose_lists(degree, size_class, n, min_class):
    """(vertices int64 (m,), their fitting classes int64 (m,)): the vertices of ``[0, n)``
    with edges whose degree fits a smaller size class than their block's, ascending."""
    movers = np.empty(n, dtype=np.int64)
    classes = np.empty(n, dtype=np.int64)
    m = 0
    for v in range(n):
        d = np.int64(degree[v])
        c = np.int64(size_class[v])
        # the fitting class is smaller than c exactly when half the block holds the list
        # (and c is above the smallest class): one comparison per vertex, the class itself
        # computed for the few that move
        if d > 0 and c > min_class and d <= (np.int64(1) << (c - 1)):
            k = np.int64(min_class)
            while (np.int64(1) << k) < d:
                k += 1
            movers[m] = v
            classes[m] = k
            m += 1
    return movers[:m].copy(), classes[:m].copy()
