"""Free blocks held in reserve per size class, so that small batches allocate and release
without the host.

Allocating through the bit trees takes a host plan per size class and a kernel; releasing
takes a kernel and a read-back of per-array counts. For a batch of a thousand edges that host
work costs more than the batch's kernels. A :class:`BlockCache` keeps, per size class, a ring
of blocks taken from the bit trees ahead of time (marked used there, owned by no vertex):

- a batch's kernels *pop* the blocks its moving lists need from the head of their class's
  ring and *push* the blocks those lists leave onto the tail of the old class's ring;
- the host only sees per-class counts (what the batch needs and frees, from the batch's
  header) and keeps every ring's head and tail counters. On the GPU a refill from the bit
  trees is one upload of the request rows and one launch, ``take_small_ring``, that writes
  the blocks straight into the rings and sets the device counters (no read-back); freed
  blocks go back to the bit trees instead (:meth:`MemoryManager.release`) when a ring would
  keep more than twice its goal;
- refills are paced so that their host work never piles up on one batch: :meth:`commit`
  notes every ring that falls under its *trigger* (a quarter of its goal, or ``MARK_PEAKS``
  times the largest recent need of its class, whichever is more, but at most half its
  refill level), and each batch makes at most one bounded step of three kinds. At its start
  (the small-batch path calls :meth:`top_up` while the device runs the batch's prepare
  kernel) either the manager's lookup is rebuilt, when block arrays came since, or up to
  ``STEP_CLASSES`` noted rings, the ones with the fewest batches of need left first, are
  filled to their refill level (their goal, at least ``PEAK_GOAL`` recent peak needs) from
  free blocks their arrays already hold; at its end, when the start did nothing,
  :meth:`grow_ahead` makes one block array for a class whose arrays could not hold its
  next refill (:meth:`MemoryManager.add_room`). :meth:`reserve` refills from the trees only
  a ring that cannot serve the batch at hand (the triggers keep that rare).

A ring's target is bytes-bounded (``budget_bytes`` of blocks per class, at most
``max_blocks``), so the reserve is a few MB at most and large classes keep none: their
blocks are taken and given back batch by batch, as without a cache. A refill also sizes a
ring by the traffic that emptied it: ``demand_batches`` times the blocks the class lost per
batch, net of what the batches gave back, since its previous refill (within the bytes budget
and half the ring). Either goal is at most 1/8 of the blocks holding lists in the class and,
in a graph whose lists take fewer bytes than ``SMALL_GRAPH_BUDGETS`` budgets, at most the
blocks that fill ``1 / 2**GRAPH_SHARE_SHIFT`` of the graph's list slots (but a floor at
least: ``MIN_BLOCKS``, or fewer in a graph whose list slots are fewer than
``2**FLOOR_SHARE_SHIFT`` times that many blocks' slots), so a small graph keeps a small
reserve and refills from free room in its arrays: a reserve is memory the graph holds for
nothing, and a graph of a few thousand lists under churn would otherwise hold a tenth of
its memory in rings. A class that serves hundreds of blocks a batch more than it gets back
(first edges of new vertices in a growing graph, say) then refills once in several batches,
not every other one, while a class whose pops and pushes balance (batches inserting and
deleting alike) keeps its static goal: sizing rings by the refilling batch's whole need,
balanced or not, would make balanced traffic refill and give back far more than it uses.
Classes up to ``SPARE_MAX_CLASS`` (blocks of up to 2^20 slots) may be raised
to ``SPARE_BLOCKS`` whatever their size, and by peak needs to a share of the graph
(``COPY_SHARE_SHIFT``): the small-batch path copies a hub's long list to a fresh block of its
own class (one pop and one push per batch) rather than rewrite it in place with one thread
block, and a random delete's batch copies dozens of hubs' lists of a class. The rings of
those classes (``COPY_MIN_CLASS`` on) are filled ahead by a graph's first small batch
(:meth:`fill_copy_classes`): a class's first copy would otherwise take its block from the
trees, with a new block array, on its batch's own path. Compaction empties the
ring of every class it compacts first (the manager calls :meth:`flush`), so memory still
follows the graph down; :meth:`MemoryManager.stats` counts cached blocks as unused.

Rings are int64 device arrays of ``ring_slots`` pointers per class; head and tail are
counters (slot = counter mod ``ring_slots``). Pops of one batch read slots ``[head, head +
need)`` while its pushes write ``[tail, tail + freed)``; a push is accepted only when
``tail - head + freed <= ring_slots``, so the two never overlap.
"""
from __future__ import annotations

import os
import weakref

import numpy as np


NUM_CLASSES = 64
RING_SLOTS = 16384         # a power of two, at least twice the most blocks one batch may pop
BUDGET_BYTES = 1 << 18     # per class: the bytes of blocks a ring aims to hold
MAX_BLOCKS = 1024          # per class: the most blocks a ring aims to hold
MIN_BLOCKS = 16            # per class: what a ring may hold whatever its class's lists
FLOOR_SHARE_SHIFT = 10     # ... but no more blocks than 1/1024 of the graph's list slots fill
LIST_SHARE_SHIFT = 3       # beyond that, a goal (raised or not) is at most 1/8 of the lists
GRAPH_SHARE_SHIFT = 9      # ... and no more blocks than 1/512 of the graph's list slots fill
SMALL_GRAPH_BUDGETS = 16   # ... in a graph whose lists take fewer bytes than 16 class budgets
DEMAND_BATCHES = 8         # a refill holds this many batches of the class's net drain (0: off)
SPARE_BLOCKS = 2           # per class up to SPARE_MAX_CLASS: what traffic may always raise to
SPARE_MAX_CLASS = 20       # (a hub's list copied to a fresh block of its class every batch)
COPY_MIN_CLASS = 12        # (lists of at most 2^11 items are never copied: COPY_ITEMS)
COPY_SHARE_SHIFT = 10      # ... and peak needs may raise them to 1/1024 of the list slots
STEP_CLASSES = 3           # the most rings one top_up step refills
MARK_SHIFT = 2             # a ring under 1/4 of its goal is refilled ahead ...
MARK_PEAKS = 3             # ... or under this many of its class's peak needs
PEAK_GOAL = 8              # ... to at least this many peak needs (within the goal's ceiling)
PEAK_DECAY_SHIFT = 4       # a class's peak need loses 1/16 at every batch that takes from it
#: BlockCache.top_up refills ahead of need (environment HORNET_CACHE_TOP_UP=0: it does nothing,
#: rings are refilled when a batch finds them short)
TOP_UP = os.environ.get("HORNET_CACHE_TOP_UP", "1") != "0"


def _classes(counts, classes):
    """The size classes a batch's per-class ``counts`` may be nonzero in: ``classes`` when
    the caller knows them (the touched classes, ascending), every class otherwise."""
    return range(len(counts)) if classes is None else classes


class BlockCache:
    """Rings of reserved free blocks per size class for one :class:`MemoryManager`.

    ``rings``: int64 (NUM_CLASSES * ring_slots,) on the manager's device; ``state``: int64
    (2 * NUM_CLASSES,) on the device, every ring's head counter then its tail counter, as the
    kernels read them; ``head``/``tail``: the host's copies (lists of ints). A batch's
    kernels advance ``state`` themselves; the host advances its copies with :meth:`commit`.
    The manager's bit trees mark cached blocks used.
    """

    #: a refill brings a ring to at least this many of its class's recent peak needs (a
    #: graph whose batches are queued without a wait raises it: each refill of its rings
    #: waits for every queued batch first, see hornet.batch.deferred_path)
    peak_goal = PEAK_GOAL

    def __init__(self, manager, ring_slots: int = RING_SLOTS, budget_bytes: int = BUDGET_BYTES,
                 max_blocks: int = MAX_BLOCKS, demand_batches: int = DEMAND_BATCHES):
        if ring_slots < 1 or ring_slots & (ring_slots - 1):
            raise ValueError(f"ring_slots must be a power of two, got {ring_slots}")
        self._manager = weakref.ref(manager)    # no cycle: a dropped graph frees at once
        self.ring_slots = int(ring_slots)
        xp = manager.xp
        self.rings = xp.zeros(NUM_CLASSES * self.ring_slots, dtype=xp.int64)
        self.state = xp.zeros(2 * NUM_CLASSES, dtype=xp.int64)
        self.head = [0] * NUM_CLASSES
        self.tail = [0] * NUM_CLASSES
        slots_in_budget = np.int64(budget_bytes // manager.bytes_per_slot)
        # list slots under which the graph is small next to its reserve (see small_graph)
        self._small_slots = SMALL_GRAPH_BUDGETS * int(slots_in_budget)
        target = np.minimum(max_blocks, slots_in_budget >> np.arange(NUM_CLASSES,
                                                                      dtype=np.int64))
        target[:manager.min_size_class] = 0
        self.target = target
        # what traffic may raise a goal to: the bytes budget, half the ring (need + goal fit)
        self.ceiling = np.minimum(self.ring_slots // 2,
                                  slots_in_budget >> np.arange(NUM_CLASSES, dtype=np.int64))
        self.ceiling[:SPARE_MAX_CLASS + 1] = np.maximum(self.ceiling[:SPARE_MAX_CLASS + 1],
                                                        SPARE_BLOCKS)
        self.ceiling[:manager.min_size_class] = 0
        self.demand_batches = int(demand_batches)
        self.boost = [0] * NUM_CLASSES   # per class: goal set by traffic at the last refills
        # per class since its last refill: blocks popped less blocks freed, batches served
        # (lists of ints, like head and tail: a batch updates a few entries one by one)
        self.drained = [0] * NUM_CLASSES
        self.served = [0] * NUM_CLASSES
        self._served = set()            # classes whose ring ever held blocks (tail > 0)
        # per class: the most blocks one recent batch took (decaying; top_up refills a ring
        # ahead under MARK_PEAKS of them, to at least PEAK_GOAL of them)
        self.peak = [0] * NUM_CLASSES
        self._mark = [0] * NUM_CLASSES  # its goal >> MARK_SHIFT as of its last refill
        self._fill = [0] * NUM_CLASSES  # what the class's last refill brought its ring to
        self._want = set()              # rings under their trigger (found by commit)
        self._grow = set()              # classes whose arrays lack room for their next refill
        self.refills = 0                # refills from the bit trees so far (a statistic)
        self.short_refills = 0          # ... of them by reserve: a batch found a ring short
        self.grow_steps = 0             # grow_ahead steps that made block arrays
        # what this batch's steps did: None, "lookup" or "take" (top_up), "grow" (grow_ahead)
        self.last_step = None
        self.copy_classes_filled = False   # see fill_copy_classes

    @property
    def manager(self):
        return self._manager()

    # ------------------------------------------------------------------ counts
    def sizes(self) -> np.ndarray:
        """Blocks held per class (host int64 (NUM_CLASSES,))."""
        return np.array(self.tail, dtype=np.int64) - np.array(self.head, dtype=np.int64)

    def size(self, size_class: int) -> int:
        return self.tail[size_class] - self.head[size_class]

    # ------------------------------------------------------------------ a batch
    def reserve(self, need, classes=None) -> None:
        """Make every ring ``k`` hold at least ``need[k]`` blocks (NUM_CLASSES host integers,
        each at most ``ring_slots // 2``). A ring short of its batch's need is filled to
        ``need`` plus its refill level (:meth:`_level`), from the bit trees in one batched
        allocation; the other rings are left to :meth:`top_up`, so that this call's work is
        proportional to the rings the batch found short (none, while top_up keeps up). A
        refill first raises the goal of every class it refills to ``demand_batches`` times
        the class's net drain per batch since its previous refill (within its ceiling;
        raises are kept: a goal that fell back would make the ring spill what the next
        batches need). All or nothing: on :class:`DeviceMemoryError` no ring changed.

        ``classes`` (here and in :meth:`accepts`, :meth:`commit`): optional, the classes
        whose ``need`` or ``freed`` may be nonzero (ascending), so that a batch touching two
        classes does not walk all NUM_CLASSES of them; None: every class."""
        head, tail = self.head, self.tail
        short = [k for k in _classes(need, classes) if need[k] > tail[k] - head[k]]
        if not short:
            return
        if any(need[k] > self.ring_slots // 2 for k in short):
            raise ValueError("a batch may take at most ring_slots // 2 blocks of one class")
        self._refill(short, need)
        self.short_refills += 1

    def top_up(self) -> None:
        """One bounded step of refilling ahead of need, for the start of a batch (the
        small-batch path calls it while the device runs the batch's prepare kernel, before
        the host reads the batch's header). When block arrays came since the manager's
        lookup was built (:meth:`grow_ahead` of the previous batch), the step rebuilds the
        lookup and takes nothing. Otherwise, of the rings that :meth:`commit` found under
        their trigger (:meth:`_trigger`), the ``STEP_CLASSES`` with the fewest peak needs
        left whose arrays hold free blocks are filled to their refill level
        (:meth:`_level`; at most what the arrays hold); a class whose arrays hold none, or
        too few for its next refill, is noted for :meth:`grow_ahead`. ``last_step`` says
        what the call did ("lookup", "take" or None). Out of device memory: nothing changes
        (a batch's :meth:`reserve` decides)."""
        self.last_step = None
        if not TOP_UP:
            return
        mm = self.manager
        if mm.lookup_stale():
            mm.lookup()
            self.last_step = "lookup"
            return
        if not self._want:
            return
        head, tail, peak = self.head, self.tail, self.peak
        low = [k for k in self._want if tail[k] - head[k] < self._trigger(k)]
        self._want.intersection_update(low)
        if not low:
            return
        # the fewest batches of peak need left first (ties: the smaller class)
        low.sort(key=lambda k: ((tail[k] - head[k]) / max(peak[k], 1), k))
        free = {k: mm.free_blocks(k) for k in low}
        step = [k for k in low if free[k]][:STEP_CLASSES]
        self._grow.update(k for k in low if not free[k])
        if not step:
            return
        try:
            # what the arrays hold, at most the level: a ring left under its trigger asks
            # again, its arrays grown by a later grow_ahead
            self._refill(step, None, free=free)
        except MemoryError:                # DeviceMemoryError: nothing changed
            return
        self._want.difference_update(step)
        self.last_step = "take"

    def fill_for(self, lists: int, entries: int) -> None:
        """:meth:`fill_ahead` for a graph that inserts alone grow to at most ``lists`` lists
        of ``entries`` entries in all: ring k aims at the lists that may ever reach class k
        (a list in a class above the smallest holds more than half its block: at most
        ``entries >> (k - 1)`` of them), within its ceiling (the bytes budget of a class, as
        for a graph with an array growth floor: ``hornet.Graph.set_array_growth``)."""
        blocks = [0] * NUM_CLASSES
        low = self.manager.min_size_class
        for k in range(low, NUM_CLASSES):
            n = int(lists) if k == low else min(int(lists), int(entries) >> (k - 1))
            if n <= 0:
                break
            blocks[k] = min(n, int(self.ceiling[k]))
        self.fill_ahead(blocks)

    def fill_ahead(self, blocks) -> None:
        """Raise the goal of every ring k to ``blocks[k]`` (host integers, NUM_CLASSES of
        them; within the ring's ceiling and its cap, see :meth:`goal`) and fill the rings to
        their refill levels now, from the bit trees in one batched allocation: for a caller
        that knows the traffic ahead (:meth:`hornet.Graph.reserve`), so that the batches
        that follow find their blocks in the rings instead of refilling them (each refill a
        plan, a launch and often new block arrays and a lookup rebuild). Nothing is noted
        for :meth:`grow_ahead`: the rings hold what the caller expects to need. All or
        nothing (:class:`DeviceMemoryError`)."""
        ks = [k for k in range(NUM_CLASSES) if blocks[k] > 0 and self.ceiling[k]]
        if not ks:
            return
        boost = list(self.boost)
        for k in ks:
            self.boost[k] = max(self.boost[k], min(int(blocks[k]), int(self.ceiling[k])))
        try:
            self._refill(ks, None)
        except MemoryError:
            self.boost = boost
            raise
        self._grow.difference_update(ks)

    def fill_copy_classes(self) -> None:
        """Fill ahead, in one batched allocation, the empty ring of every class from
        ``COPY_MIN_CLASS`` to ``SPARE_MAX_CLASS`` that holds lists, to its refill level
        (``SPARE_BLOCKS`` where the class's share of lists allows): the small-batch path copies a hub's list to a fresh block of
        its class, and the first copy of a class would otherwise find its ring empty and take
        the block from the trees, often making a block array, on its batch's own path. For
        a graph's first small batch (``copy_classes_filled`` says whether it ran). All or
        nothing (:class:`DeviceMemoryError`)."""
        self.copy_classes_filled = True
        mm = self.manager
        blocks = [0] * NUM_CLASSES
        for k in range(max(mm.min_size_class, COPY_MIN_CLASS), SPARE_MAX_CLASS + 1):
            if self.size(k) == 0 and mm.blocks_holding_lists(k) > 0:
                blocks[k] = SPARE_BLOCKS
        self.fill_ahead(blocks)

    def grow_ahead(self) -> None:
        """The other bounded step, for the end of a batch (the small-batch path calls it
        once the device rewrites the batch's lists): when this batch's :meth:`top_up` did
        nothing, one block array for the most urgent class noted as short of room
        (:meth:`MemoryManager.add_room`; the lookup is left to the next batch's
        :meth:`top_up`). So a batch makes arrays, rebuilds the lookup or takes blocks from
        the trees, at most one of the three. ``last_step`` becomes "grow" when it made an
        array. Out of device memory: nothing changes."""
        if not TOP_UP or self.last_step is not None or not self._grow:
            return
        head, tail = self.head, self.tail
        # a ring under its trigger first, then the smaller class
        k = min(self._grow, key=lambda k: (tail[k] - head[k] >= self._trigger(k), k))
        self._grow.discard(k)
        mm = self.manager
        if not mm._class_used.get(k, 0):
            return                         # the class emptied (ring too) since it was noted
        try:
            made = mm.add_room(k, max(self._fill[k], 1), lookup=False)
        except MemoryError:                # DeviceMemoryError: nothing changed
            self._grow.clear()
            return
        if made:
            self.grow_steps += 1
            self.last_step = "grow"

    def _trigger(self, k: int) -> int:
        """Blocks under which :meth:`top_up` refills ring ``k``: its mark (a share of its
        goal) or ``MARK_PEAKS`` recent peak needs, whichever is more, but at most half the
        level its last refill brought it to (a class that keeps no reserve, or was never
        refilled, has none: a batch's :meth:`reserve` serves it)."""
        return min(max(self._mark[k], MARK_PEAKS * self.peak[k]), self._fill[k] >> 1)

    def _level(self, k: int) -> tuple:
        """(refill level, raised boost, goal with that boost) of ring ``k``: its goal after
        a refill raises it by the class's net drain since the previous refill (see
        :meth:`reserve`), and at least ``PEAK_GOAL`` times the class's recent peak need
        (within the goal's ceiling, its share of the class's lists and the ring's half: a
        batch's need plus the level fit the ring). A level of many batches makes a ring's
        refills rare, each a step of :meth:`top_up`."""
        rate = -(-max(self.drained[k], 0) // max(self.served[k], 1))            # ceil
        ceiling = int(self.ceiling[k])
        b = max(self.boost[k], min(self.demand_batches * rate, ceiling))
        cap = self._cap(k)
        g = min(max(int(self.target[k]), b), cap)
        level = max(g, min(self.peak_goal * self.peak[k], self._peak_ceiling(k),
                           self.ring_slots // 2, cap))
        return level, b, g

    def _peak_ceiling(self, k: int) -> int:
        """The most blocks that recent peak needs may raise ring ``k`` to: its ceiling, or
        for a class up to ``SPARE_MAX_CLASS`` (whose blocks the small-batch path pops and
        pushes in pairs, a hub's list copied to a fresh block of its class) as many blocks
        as fill ``1 / 2**COPY_SHARE_SHIFT`` of the graph's list slots if more: a batch
        touching a few hubs of a class then finds their blocks in the ring, instead of
        taking them from the trees (and making block arrays) on its own path, while the
        reserve of every such class stays a small share of the graph."""
        ceiling = int(self.ceiling[k])
        if k > SPARE_MAX_CLASS or not ceiling:
            return ceiling
        share = (self.manager.list_slots(settle=False) >> COPY_SHARE_SHIFT) >> k
        return max(ceiling, min(share, self.ring_slots // 2))

    def _refill(self, ks, need, free=None) -> None:
        """Fill every ring of ``ks`` to ``need[k]`` (None: nothing) plus its refill level
        (:meth:`_level`), at most ``free[k]`` blocks if given (what the class's arrays hold:
        none made), from the trees in one batched allocation; the rings' marks, levels and
        boosts follow."""
        head, tail = self.head, self.tail
        amount = {}
        levels = {k: self._level(k) for k in ks}
        for k in ks:
            size = tail[k] - head[k]
            n = int(need[k]) if need is not None else 0
            a = min(max(n + levels[k][0] - size, 0), self.ring_slots - size)
            if free is not None:
                a = min(a, free[k])
            if a > 0:
                amount[k] = a
        if amount:
            self._take_into_rings(amount)          # all or nothing: may raise, nothing changed
        for k in ks:
            level, b, g = levels[k]
            self.boost[k] = b
            self._mark[k] = g >> MARK_SHIFT
            self._fill[k] = level
        mm = self.manager
        for k in amount:
            self.drained[k] = self.served[k] = 0
            if mm.free_blocks(k) < self._fill[k]:  # arrays for the next refill, made by
                self._grow.add(k)                  # grow_ahead on a batch of its own

    def _take_into_rings(self, amount: dict) -> None:
        """``amount[k]`` blocks of every listed class from the bit trees onto ring k's tail
        (GPU: written by one launch that also sets the device counters; CPU: pointers
        returned, then written)."""
        mm = self.manager
        self.refills += 1
        if mm.backend.take_into_rings is not None:
            tail = list(self.tail)
            for k, a in amount.items():
                tail[k] += a
            words = np.array(self.head + tail, dtype=np.int64)
            mm.allocate_into_rings(amount, {k: self.tail[k] for k in amount}, self.rings,
                                   self.ring_slots, self.state, words)
            self.tail = tail
            self._served.update(amount)
            mm.cached_changed(amount)
            return
        counts = np.zeros(NUM_CLASSES, dtype=np.int64)
        for k, a in amount.items():
            counts[k] = a
        self._append(counts, mm.allocate_counts(counts))      # ascending class

    def accepts(self, need, freed, classes=None) -> int:
        """Bit mask of the classes whose ring takes the ``freed[k]`` blocks a batch gives back
        while it pops ``need[k]`` (NUM_CLASSES host integers each): room in the ring, and
        either no more than twice the goal (or the ring's refill level, if more) left after
        the batch, or no growth (a batch that gives back no more than it takes, such as hub
        lists copied within their class, does not spill; in a small graph only while no more
        than :meth:`_balanced_room` is left, a small share of its class and of the graph).
        The other classes' blocks go back to the bit trees."""
        mask = 0
        small = self.small_graph()
        for k in _classes(freed, classes):
            f = freed[k]
            if f:
                size = self.tail[k] - self.head[k]
                left = size - need[k] + f
                if size + f <= self.ring_slots and (
                        (f <= need[k] and (not small or left <= self._balanced_room(k))) or
                        left <= max(2 * self.goal(k), self._fill[k])):
                    mask |= 1 << k
        return mask

    def goal(self, size_class: int) -> int:
        """Blocks ring ``size_class`` aims to hold now: its target, or more where the traffic
        of recent refills asked for more (see :meth:`reserve`), but at most
        ``1 / 2**LIST_SHARE_SHIFT`` of the class's blocks holding lists (:meth:`floor` at
        least): the reserve, up to twice the goals once a batch gave blocks back, stays a
        small share of the graph's memory."""
        return self._goal(size_class, self.boost[size_class])

    def goals(self, boost=None) -> np.ndarray:
        """:meth:`goal` of every class (host int64 (NUM_CLASSES,)), with ``boost`` (per class)
        in place of the current raises if given."""
        boost = self.boost if boost is None else boost
        return np.array([self._goal(k, int(boost[k])) for k in range(NUM_CLASSES)],
                        dtype=np.int64)

    def floor(self, size_class: int) -> int:
        """Blocks a ring may aim to hold whatever its class's lists: ``MIN_BLOCKS``, but no
        more than fill ``1 / 2**FLOOR_SHARE_SHIFT`` of the graph's list slots (none where one
        block would fill more), so that a small graph's reserve stays a small share of its
        memory. A graph
        without lists (nothing to be proportional to: its first batches) has ``MIN_BLOCKS``."""
        slots = self.manager.list_slots()
        if slots == 0:
            return MIN_BLOCKS
        return min(MIN_BLOCKS, (slots >> FLOOR_SHARE_SHIFT) >> size_class)

    def _goal(self, size_class: int, boost: int) -> int:
        return min(max(int(self.target[size_class]), boost), self._cap(size_class))

    def small_graph(self) -> bool:
        """Whether the graph's lists take fewer slots than ``SMALL_GRAPH_BUDGETS`` class
        budgets: there the reserve that the budgets allow would be a large share of the
        graph (a tenth of a graph of a few thousand lists under churn), so goals and the
        blocks kept after balanced batches are bounded by shares of the graph
        (``GRAPH_SHARE_SHIFT``); in a larger graph the budgets bound the reserve. Decided
        without waiting for a release still on its way."""
        return self.manager.list_slots(settle=False) < self._small_slots

    def _balanced_room(self, size_class: int) -> int:
        """The most blocks ring ``size_class`` of a small graph (:meth:`small_graph`; a larger
        one keeps them all) may keep after a batch that gave back no more than it took: twice
        its goal's ceiling (:meth:`_cap`), or as many as fill
        ``4 / 2**GRAPH_SHARE_SHIFT`` of the graph's list slots if more (within the ring's
        ceiling); a larger turnover of small blocks goes back to the trees. A class whose
        blocks take ``spare_min_bytes`` or more keeps its whole turnover (hub lists copied
        to fresh blocks of their class batch after batch): such blocks are few to an array
        (or an array each), which a spill would empty and free and the next batch make
        again."""
        mm = self.manager
        if mm.bytes_per_slot << size_class >= mm.spare_min_bytes:
            return self.ring_slots
        share = (mm.list_slots() >> max(GRAPH_SHARE_SHIFT - 2, 0)) >> size_class
        return max(2 * self._cap(size_class), min(int(self.ceiling[size_class]), share))

    def _cap(self, size_class: int) -> int:
        """The most blocks ring ``size_class`` may aim to hold (see :meth:`goal`)."""
        mm = self.manager
        cap = mm.blocks_holding_lists(size_class) >> LIST_SHARE_SHIFT
        if self.small_graph():
            cap = min(cap, (mm.list_slots() >> GRAPH_SHARE_SHIFT) >> size_class)
        cap = max(self.floor(size_class), cap)
        if mm.growth_floor_slots:
            # a graph that only grows (hornet.Graph.set_array_growth) drains its rings batch
            # after batch: they may hold what the bytes budget allows, whatever its lists
            cap = max(cap, int(self.ceiling[size_class]))
        return cap

    def commit(self, need, freed, accepted: int, classes=None) -> int:
        """Advance the host's counters after a batch popped ``need[k]`` blocks and pushed the
        ``freed[k]`` of the classes in the ``accepted`` mask (its kernels advanced ``state``);
        returns how many freed blocks were not pushed (the batch's spill list, for the bit
        trees). Rings left under their trigger are noted for :meth:`top_up`."""
        spilled = 0
        changed = []
        # (per batch on the deferred path: the lists and sets bound once, _trigger inlined)
        head, tail, drained, served, peak = self.head, self.tail, self.drained, self.served, \
            self.peak
        ceiling, mark, fill = self.ceiling, self._mark, self._fill
        for k in _classes(need, classes):
            n, f = need[k], freed[k]
            if n or f:
                h = head[k] = head[k] + n
                if accepted >> k & 1 and f:
                    t = tail[k] = tail[k] + f
                    self._served.add(k)
                else:
                    t = tail[k]
                    spilled += f
                drained[k] += n - f           # spilled blocks count: the class had them
                served[k] += 1
                changed.append(k)
                if n and ceiling[k]:          # (a class that keeps no reserve: none)
                    p = peak[k]
                    p = peak[k] = max(n, p - (p >> PEAK_DECAY_SHIFT))
                    # (_trigger(k))
                    if t - h < min(max(mark[k], MARK_PEAKS * p), fill[k] >> 1):
                        self._want.add(k)
        self.manager.cached_changed(changed)
        return spilled

    # ------------------------------------------------------------------ back to the trees
    def pointers(self, classes=None):
        """The cached blocks of ``classes`` (default: all): (edge pointers int64 on the
        device, their size classes host int64)."""
        xp = self.manager.xp
        ks = [k for k in (range(NUM_CLASSES) if classes is None else classes) if self.size(k)]
        if not ks:
            return xp.zeros(0, dtype=xp.int64), np.zeros(0, dtype=np.int64)
        first = np.array([k * self.ring_slots for k in ks], dtype=np.int64)
        start = np.array([self.head[k] for k in ks], dtype=np.int64)
        slot = self._slots(first, start, np.array([self.size(k) for k in ks], dtype=np.int64))
        return self.rings[xp.asarray(slot)], np.repeat(np.asarray(ks, dtype=np.int64),
                                                       [self.size(k) for k in ks])

    def flush(self, classes=None) -> None:
        """Give the cached blocks of ``classes`` (default: all) back to the bit trees."""
        ptrs, _ = self.pointers(classes)
        ks = [k for k in (range(NUM_CLASSES) if classes is None else classes) if self.size(k)]
        for k in ks:
            self.head[k] = self.tail[k]
            self.drained[k] = self.served[k] = 0
        # a flushed ring waits for its class's next batch to ask for blocks again
        gone = range(NUM_CLASSES) if classes is None else classes
        self._want.difference_update(gone)
        self._grow.difference_update(gone)
        self._upload_state()
        if ptrs.shape[0]:
            self.manager.release(ptrs)

    def check(self) -> None:
        """The device's counters equal the host's (raises AssertionError otherwise)."""
        dev = self.manager.backend.to_host(self.state).tolist()
        if dev != self.head + self.tail:
            raise AssertionError(f"block cache counters differ: device {dev}, host "
                                 f"{self.head + self.tail}")

    # ------------------------------------------------------------------ internals
    def _slots(self, first, start, sizes):
        """Ring slots ``first[i] + (start[i] + j) mod ring_slots`` for j < sizes[i], class
        after class (host int64)."""
        offset = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        step = np.arange(int(sizes.sum()), dtype=np.int64) - np.repeat(offset, sizes)
        return np.repeat(first, sizes) + (np.repeat(start, sizes) + step) % self.ring_slots

    def _append(self, amount, pool) -> None:
        """Write ``pool`` (device int64, ``amount[k]`` blocks of each class k in ascending
        class order) at the rings' tails."""
        xp = self.manager.xp
        ks = np.flatnonzero(amount)
        sizes = amount[ks]
        tails = np.array([self.tail[k] for k in ks], dtype=np.int64)
        self.rings[xp.asarray(self._slots(ks * self.ring_slots, tails, sizes))] = pool
        for k, n in zip(ks.tolist(), sizes.tolist()):
            self.tail[k] += n
            self._served.add(k)
        self._upload_state()
        self.manager.cached_changed(ks)

    def _upload_state(self) -> None:
        words = np.array(self.head + self.tail, dtype=np.int64)
        if self.manager.xp is np:
            self.state[:] = words
        else:                   # through a pinned buffer, in stream order: no wait
            from ..core.cuda import upload
            self.state[:] = upload(words)
