"""The GPU version of :class:`~hornet.algos.ktruss.dynamic.DynamicTruss` (kernels in
``dynamic_gpu.cu``).

State on the device: the truss number and the k-order rank of every edge in a GPU
:class:`~hornet.algos.edge_table.EdgeTable` keyed by the edge, and the per-edge support kept
by a GPU :class:`~hornet.algos.triangles.dynamic.DynamicTriangleCount`. Slot-indexed stamp
arrays and slot lists (int32) are the scratch of the updates; a round of any phase is a few
launches and one read of the counter array (with ``ko_scan``, a whole update is one launch),
never a per-edge host step.

An update's fixed steps: the batch adjacency (mirrored, sorted keys) built once, by one block
for a batch of at most :data:`SMALL_BATCH` edges (``tb_batch_keys``), and shared with the
triangle count's support update (undirected graphs); the edge-table change; then, on a graph
of at most DEVICE_SCAN_DELETE_MAX_EDGES edges, one cooperative ``ko_scan`` launch (a
deletion: after the ``dt_lost_seeds`` launch; an insertion: after ``kr_seed`` puts the new
edges first at level 2) and one read of the counters and control words at its end. The
per-update kernels go through prepared launches (argument buffers made once), the scratch
and counters are kept by the object, and no triangle count is read back: an update that
closes or opens no triangle finds nothing to do on the device.

The k-order (Zhang and Yu, SIGMOD 2019; as the CPU version, :mod:`hornet.algos.ktruss.order`):
the edges by (truss number, rank), where every edge e lies in at most t(e) - 2 triangles whose
other two edges both come after e. The static device peeling gives one (rank = peeling round,
ties broken by slot: :func:`hornet.algos.ktruss.gpu.truss_numbers_and_rounds`); new ranks come
from two host counters, ``head`` (decreasing: the start of a level) and ``tail`` (increasing:
the end of a level), since ranks are only compared within a level.

Deletions: truss numbers are the greatest fixed point of the h-index operator H(f)(e) = max k
such that k - 2 triangles of e have min(f(other two)) >= k, and the numbers before the batch
are an upper bound, so the descent f <- min(f, H(f)) (synchronous rounds over a worklist,
:meth:`GpuDynamicTruss._descend`; Sariyuce et al., VLDB 2018) ends at the new numbers. The
worklist starts with the surviving edges that lost a triangle counted at their level
(``dt_lost_seeds``, on the graph before the batch); an edge that falls puts the triangle
neighbours whose count it changed on the next worklist. The edges that fell then go to the
end of their new level, in the order of a synchronous peeling of them (``ko_peel_*``: in a
round, those with fewer than k - 1 triangles whose other edges are above k or fallen to k and
not peeled yet); no other edge gains a later triangle neighbour. Host-driven rounds keep a
count per edge in both (``DtKept``, ``KoKept``): a lower bound of its holding triangles that
the pushes lower, so that an edge is counted again only when it runs short.

Insertions (the default, :meth:`GpuDynamicTruss._insert_from_bounds`): the k-order scan
below, each new edge started at the start of the level of a lower bound of its new number
(the h-index of its triangles whose other edges are old: ``insert_start.cu``), the old edges
below that level which it may now follow in a triangle being seeds at their own levels; the
scan takes the seeds by level, lowest first, and skips the levels where nothing is to be
done, so a re-inserted edge no longer climbs (and is intersected) at every level up to its
number. With :data:`LEVELS_AT_ONCE` (the default) the scan runs every level at once
(``ko_levels.cuh``): a level depends on the others only through the edges that rise into it
from the level below, and its candidates and survivors only grow with them, so all levels
take their seeds together and each iteration lifts the survivors one level; the rounds go
with the levels an edge climbs, not with the levels that hold seeds.

On a large graph (:data:`~.dynamic_gpu_window.WINDOW_MIN_EDGES`) the scan goes by windows of
the order instead (``ko_wscan``, :mod:`.dynamic_gpu_window`): before each window (a round of
the static peeling) the candidates are peeled without the triangles of the edges the scan
passed, so that a large flat level's candidates do not spread through it.

The certified raise: :data:`INSERT_BY_RAISE`.

The k-order scan (``INSERT_BY_RAISE = False``, level by level; the CPU version does it
sequentially with a heap); with ``START_AT_LOWER_BOUND = False`` the new edges go first in the
order at level 2 and are the seeds of level k = 2. At level k the candidates are the unique set
C where a level-k edge y is in C exactly when at least k - 1 of its triangles have both other
edges above k, in C before y, or at level k after y; every edge that rises from k is in C, and
an edge with no triangle shared with an earlier candidate (or a seed) is not (its count is its
old s+ <= k - 2). C is found from the seeds by rounds on the device (``ko_eval`` decides a
list's edges; ``ko_push`` puts the later level-k neighbours of the new candidates on the next
list), then peeled at k - 1 triangles (others above k or live candidates): the survivors rise
to k + 1 (ranks at the start of it: the next level's seeds), the peeled ones go to the end of
level k. An edge visited but no candidate keeps its place. The steps end at the first level
with no survivor, so an update examines the candidates' triangles and their later neighbours,
not the whole triangle-connected part of a level.

Kernels run warps over an edge's intersection of the endpoints' lists; a round of few edges
gives each several warps (the counting phase ``ko_count`` adds the warps' counts per edge and
stops once the edge's case is decided; the next phase reads them, or, in the peeling and mode
4's candidate rounds, the last warp of the edge decides in the same phase). Every peeling goes
from a worklist (``ko_peel.cuh``): its first round counts every member, a later round only the
live members that lost a triangle to the edges peeled in the round before. ``ko_scan``'s
descent applies each new value as soon as it is known. The histograms by level (the descent's
h-index, the raise's new level) take a block per edge, its warps sharing the intersection and
one shared histogram (``ko_scan``'s descent: a warp per edge). Two drivers run the same phase
functions (:data:`DEVICE_SCAN_INSERT`, :data:`DEVICE_SCAN_DELETE`): one launch per phase with
the host reading the round counters, or ``ko_scan``, one cooperative launch per update with
grid barriers between the phases. On a graph of at most :data:`ASYNC_MAX_EDGES` edges,
``ko_scan`` runs its peelings, mode 4's candidate searches and the deletion's descent as one
asynchronous phase each (``ko_async.cuh``): a work queue of parts of edges' intersections that
every warp serves until it is empty, an edge taken again as soon as a neighbour's change may
change its decision, so a chain of small rounds costs its work, not a grid barrier a round.
Such a phase is a chain of dependent units, so a unit is cut to few dependent loads: 8-ary list
searches (:data:`ASYNC_KARY`), a triangle's two lookups and its tests each one round of loads,
a decided edge's next unit queued before its bookkeeping; a phase's first pushes take one queue
ticket a warp; a new candidate queues only the edges whose count it raised
(:data:`ASYNC_CAND_PRUNE`).

Kept candidate bounds: :data:`CAND_KEPT_BOUNDS`. The hub bit rows: :mod:`.hub_bits`. The top
levels (:mod:`.top_levels_gpu`): on a graph with a large dense top (a Kronecker graph's core:
``top_cap``'s gate), the levels from ``_top`` up are kept by a static decomposition of their
own subgraph, whose lists are short where the scan and the descent would intersect the hubs'
whole lists: an insertion's scan stops below them (``ko_scan`` mode 4 with ``k_in = _top``) and
the subgraph is decomposed when an edge joined it. A deletion that removes one of its edges
lowers them by the descent as any other edge (the descent's worklists are the edges that lost a
counted triangle, few of the dense top's; their count is taken again after it), or, with
``TOP_DELETE_BY_DESCENT = False``, decomposes the subgraph anew and hands the edges that fell
from it to the descent and its peeling. The dense blocks (:mod:`.blocks_gpu`, on a small graph
with dense high levels, which then has no top levels): their edges' numbers are kept in
matrices, and the sparse kernels take none.

The static GPU decomposition finishes a batch larger than ``batch_share`` of the edges, and
one whose region passes ``fallback_share`` of the edges or whose update runs longer than
2 x ``fallback_share`` x the last static decomposition's time (``stats['path']`` says which;
the process's first decomposition is timed twice, as it also loads its kernels). A batch of
:data:`GATE_MIN_BATCH` edges or more whose seeds pass their share of the edges goes to it at
once (``stats['gate']``), and so does, on a large graph, an insertion whose candidates pass
:data:`CANDIDATE_SHARE` x ``fallback_share`` of the edges (a flat level's candidates, peeled
back by mode 4's synchronous peelings with kept counts, :data:`SCAN_PEEL_KEPT`, cost more
than a static run). ``ko_scan`` checks the deadline between its phases and, in its
asynchronous phases, every few units a warp serves.
"""
from __future__ import annotations

import time

import numpy as np

from ..batch_adjacency import BatchAdjacency, batch_adjacency
from ..edge_table import EdgeTable
from ..triangles import DynamicTriangleCount
from ..underlying import undirected_change, undirected_copy
from ..views import as_adjacency
from .gpu import truss_numbers_and_rounds
from .dynamic_gpu_rounds import HostRounds
from .dynamic_gpu_window import WindowScan
from . import top_levels_gpu
from .top_levels_gpu import TopLevels
from .hub_bits import HubBits
from .blocks_gpu import blocks_after_static
from .ko_launch import (C_EXTRA, C_FELL, C_NEXT, C_PLACED, C_TAIL, C_TOUCHED, CTR_WORDS, WARP,
                        _fn, _grid, _parts, _prepared, _ptr)
from .ko_launch import (KS_ABORT, KS_ALL, KS_DEPTH, KS_DONE, KS_HEAD, KS_LEVELS, KS_PEEL_ROUNDS,
                        KS_RAISED, KS_ROUNDS, KS_SPUN, KS_STATUS, KS_TAIL, KS_TOUCHED, KS_UNITS,
                        KS_WORDS, QUEUE_WORDS, SCAN_STAMPS)
from hornet.core.cuda import BLOCK

__all__ = ["GpuDynamicTruss"]

#: True: insertions raise the numbers to a certified upper bound over every level at once and
#: descend from it (:meth:`GpuDynamicTruss._insert_raise`: edges with too many later triangles
#: move up to a level where they have none, ``kr_*``; the deletion's descent and peeling make
#: that exact); False: the k-order scan, whose rounds grow with the levels an update climbs.
INSERT_BY_RAISE = False
#: True: the level scan starts every inserted edge at a lower bound of its new number (the
#: h-index of its triangles with old edges), the old edges below it that it may now follow in
#: a triangle being seeds at their own levels (:meth:`GpuDynamicTruss._insert_from_bounds`);
#: False: every inserted edge starts at level 2 and climbs level by level.
START_AT_LOWER_BOUND = True
#: True (with DEVICE_SCAN_INSERT and START_AT_LOWER_BOUND): the insertion's scan runs every
#: level at once (``ko_scan`` mode 4, ``ko_levels.cuh``): iterations of candidate rounds and
#: peeling rounds over all levels, the survivors rising one level per iteration, so its rounds
#: go with the levels an edge climbs, not with the levels that hold seeds; False: level by
#: level, lowest first (mode 0).
LEVELS_AT_ONCE = True
#: member stamps by level of mode 4 (KS_LEVEL_STAMPS in ko_levels.cuh)
LEVEL_STAMPS = 1 << 16
#: True: the insertion's k-order scan runs as one cooperative launch per update (``ko_scan``,
#: grid barriers between phases): an insertion climbs many levels of few edges each, and a
#: host read per round would dominate; False: one launch per phase, the host reading the
#: counters between rounds (the same phase functions).
DEVICE_SCAN_INSERT = True
#: The same choice for the deletion's descent and peeling; None: by the graph's size. On a
#: large graph their rounds are few and wide, where separate launches sized by the host's
#: read use the device better than one grid; on a small one (at most
#: DEVICE_SCAN_DELETE_MAX_EDGES undirected edges) the host's reads between rounds cost more
#: than the rounds.
DEVICE_SCAN_DELETE: bool | None = None
DEVICE_SCAN_DELETE_MAX_EDGES = 1 << 21
#: The same choice for the certified raise of an insertion and its descent and peeling
#: (``ko_scan`` mode 3); None: by the graph's size, as DEVICE_SCAN_DELETE.
DEVICE_SCAN_RAISE: bool | None = None
#: ko_scan's phases run as one asynchronous phase each (a work queue that every warp serves
#: to its end, ``ko_async.cuh``) on a graph of at most ASYNC_MAX_EDGES edges: the peelings
#: (ASYNC_PEEL), mode 4's candidate search (ASYNC_CAND) and the deletion's descent
#: (ASYNC_DESCENT). A small update's phases are chains of rounds of few edges each, whose
#: grid barriers cost more than their work; False: synchronous rounds.
ASYNC_PEEL = ASYNC_CAND = ASYNC_DESCENT = True
#: True: the asynchronous descent splits an edge whose shorter list is longer than ASYNC_CHUNK
#: over warps, each entry testing one level (the edge falls a level at a time); False: one warp
#: per edge, its h-index at once (a hub edge's long list is then one warp's chain of searches).
ASYNC_DESCENT_SPLIT = True
#: True: an asynchronous phase serves its queue right after its first pushes (no grid barrier:
#: ``ko_async.cuh``), and mode 4 splits its members in the peeling's first pushes and lists and
#: raises the survivors in one phase (three barriers an iteration, not seven).
ASYNC_FUSED = True
#: True: the asynchronous phases' units search the longer list 8-ary (``lower_bound_8ary``:
#: about a third of the dependent loads of a binary search, for more loads in all)
ASYNC_KARY = True
#: True: an edge decided by a one-unit queue entry (peeled, a new candidate, fallen in the
#: descent) runs its PUSH in the deciding warp at once instead of through the queue (one
#: hand-over less on every step of a chain, but the warp is held meanwhile); False: every
#: PUSH through the queue
ASYNC_INLINE = False
#: True: a new candidate's PUSH (mode 4's asynchronous candidate search) lists a later
#: level-k edge only when the triangle's third edge holds for it (above k, a candidate, or at
#: k after it): the other ones' counts did not change; False: every later level-k edge
ASYNC_CAND_PRUNE = True
#: True: mode 4's candidate rounds (ko_scan's synchronous candidate search: a graph of more
#: than ASYNC_MAX_EDGES edges, or ASYNC_CAND False) keep, for every edge counted below its
#: level's need, an upper bound of its count (the count, plus one for every push since it that
#: found a triangle of it completed: ``ko_bound_due`` in ``dynamic_gpu.cu``), and a push lists
#: the edge for a count again only when that bound reaches k - 1; False: every push of a later
#: level-k edge lists it (its count taken again after each new candidate beside it)
CAND_KEPT_BOUNDS = True
#: True: mode 4's synchronous peelings (a graph of more than ASYNC_MAX_EDGES edges, or
#: ASYNC_PEEL False) keep every surviving member's count (``KoKept`` in ``ko_peel.cuh``, as
#: the host-driven peeling's PEEL_KEPT_COUNTS): a member is counted again only when the
#: edges peeled around it took it below k - 1, not after every round that took one of its
#: triangles (a large flat level, whose candidates mostly keep k - 1 triangles and more, is
#: then counted about once, not once a round); counts stop at k - 1 + SCAN_PEEL_SLACK
SCAN_PEEL_KEPT = True
SCAN_PEEL_SLACK = 16
#: an insertion on a graph of more than CANDIDATE_CUT_MIN_EDGES edges goes to the static
#: decomposition as soon as its candidates (mode 4's P, all levels) pass CANDIDATE_SHARE x
#: ``fallback_share`` of the edges (``stats['gate'] = 'candidates'``): their peeling, which
#: intersects hub lists for every candidate, costs far more per edge than a static
#: decomposition, so such an update costs its candidate rounds and one static run, not its
#: deadline and a static run (bench/results/dynamic_truss_gpu_flat.md)
CANDIDATE_SHARE = 0.02
CANDIDATE_CUT_MIN_EDGES = 1 << 22
#: on such a graph, mode 4 also goes to the static decomposition when an iteration's
#: candidate rounds end after 1 / CANDIDATE_TIME_FACTOR of the update's time limit
#: (``stats['gate'] = 'candidate time'``): the candidates' peeling takes about twice their
#: rounds, so the update would pass its deadline and cost that and a static run; 0: never
CANDIDATE_TIME_FACTOR = 3
#: shorter-list elements per queue unit (x32), most units per edge, longest pause (ns, 2^k):
#: the phases are chains of dependent units, so an edge is spread wide and work taken soon
ASYNC_CHUNK, ASYNC_MAX_PARTS, ASYNC_PAUSE_MAX = 32, 32, 128
ASYNC_MAX_EDGES = 1 << 21
#: units the queue holds in one phase (a longer phase stops: the update falls back)
ASYNC_QUEUE_UNITS = 1 << 22
#: True: a deletion of top-level edges lowers them by the descent as any other edge (their
#: count recounted after it); False: the top levels decomposed anew (:meth:`_top_delete`)
TOP_DELETE_BY_DESCENT = True
#: Batches of at least GATE_MIN_BATCH edges count their seeds first (one read): a deletion
#: whose worklist passes DELETE_SEED_SHARE of the edges (DELETE_SEED_SHARE_DEVICE where its
#: descent runs in ko_scan, on a graph of at most DEVICE_SCAN_DELETE_MAX_EDGES edges: there
#: a worklist of a tenth of the edges or more still beats the static decomposition), or an
#: insertion whose seeds (new edges and the old edges they may now follow) pass
#: INSERT_SEED_SHARE, goes to the static decomposition at once instead of after its deadline
GATE_MIN_BATCH = 2048
DELETE_SEED_SHARE, INSERT_SEED_SHARE = 0.02, 0.007
DELETE_SEED_SHARE_DEVICE = 0.2
#: True: a small graph's dense high levels kept as matrices (blocks_gpu; with mode 4 insertions)
DENSE_BLOCKS = True
#: True: the kernels test an element of a shorter list against a hub's long list by the
#: hub's bit row (:mod:`.hub_bits`) instead of searching the list; the rows are kept either way
HUB_BITS = True
#: batches of at most this many edges get their batch adjacency from one block
#: (``tb_batch_keys``, SMALL_BATCH in batch_keys.cu) instead of a sort
SMALL_BATCH = 1024
#: resident blocks per multiprocessor of ko_scan, and the most blocks of its grid (0: no cap)
SCAN_BLOCKS_PER_SM, SCAN_MAX_BLOCKS = 2, 0
#: stamps an update may take at most: the clock starts over before an update, never during
UPDATE_STAMPS = 1 << 22
#: whether this process has run a static decomposition (its first one, which loads its
#: kernels, is timed again for the deadlines: :meth:`GpuDynamicTruss._recompute`)
_STATIC_WARM = [False]
class GpuDynamicTruss(HostRounds, TopLevels, WindowScan):
    """Truss numbers of a GPU :class:`hornet.Graph`, kept current (see the module; directed
    graphs as in :mod:`hornet.algos.ktruss.dynamic`).

    Same interface as :class:`~hornet.algos.ktruss.dynamic.DynamicTruss` (which builds this
    class for a GPU graph): ``truss_numbers``, ``support``, ``k_max``, ``k_truss(k)``,
    ``update(change)``, ``stats``; results are CuPy arrays.

    Parameters
    ----------
    g : hornet.Graph on the GPU
    fallback_share : float
        A batch whose region passes this share of the edges, or whose update has run
        2 x this share x the last static decomposition's time, is finished by the static
        decomposition.
    batch_share : float
        A batch larger than this share of the edges goes to the static decomposition
        directly.
    """

    def __init__(self, g, *, fallback_share: float = 0.5, batch_share: float = 0.1):
        import cupy
        import cupyx
        self._cp = cupy
        self.graph = g
        self._und = undirected_copy(g) if g.directed else g
        self.fallback_share = float(fallback_share)
        self.batch_share = float(batch_share)
        self.stats: dict = {"path": "build", "region": 0, "batch": 0}
        self._tc = DynamicTriangleCount(g)
        self._table = None
        self._clock = 0
        self._cap = -1
        self._list_size = -1
        self._dirty = None
        # the round counters and ko_scan's control words: one buffer, cleared by one memset
        self._words = cupy.zeros(CTR_WORDS + KS_WORDS + QUEUE_WORDS, dtype=cupy.uint64)
        self._ctr = self._words[:CTR_WORDS]
        self._ks = self._words[CTR_WORDS:]
        self._words_host = cupyx.empty_pinned(CTR_WORDS + KS_WORDS + QUEUE_WORDS,
                                              dtype=np.uint64)
        self._ctr_host = self._words_host[:CTR_WORDS]
        self._ks_host = self._words_host[CTR_WORDS:]
        self._batch_keys = cupy.empty(2 * SMALL_BATCH, dtype=cupy.int64)
        self._batch_views: dict = {}
        self._queue = None                        # (units, entry counts): _async_queue
        self._scan_layout, self._scan_cache = None, {}   # (_scan_values)
        self._bar = cupy.zeros(4, dtype=cupy.uint32)
        self._recompute()
        deg, ptr = self._view()
        self._hubs = HubBits(deg, ptr, int(deg.shape[0]), len(self._table))

    # ------------------------------------------------------------------ state
    def _recompute(self) -> None:
        """Static GPU decomposition of the whole graph and its k-order (rank: peeling round
        << 32 | position in the edge list), scattered into the table; resets the rank
        counters (timed: its time bounds what an update may spend)."""
        cp = self._cp
        src, dst = self._und.edges(dense=True)
        cp.cuda.Device().synchronize()
        start = time.perf_counter()
        view = as_adjacency(self._und, properties=False)
        t, rounds = truss_numbers_and_rounds(view)
        warm = None
        if not _STATIC_WARM[0]:
            # the process's first decomposition (and table) also loads or compiles its
            # kernels: the decomposition timed again, so that the deadlines it sets are
            # those of the work alone
            cp.cuda.Device().synchronize()
            _STATIC_WARM[0] = True
            again = time.perf_counter()
            truss_numbers_and_rounds(view)
            cp.cuda.Device().synchronize()
            warm = time.perf_counter() - again
        t = t.astype(cp.int32, copy=False)
        m = int(t.shape[0])
        rank = (rounds.astype(cp.int64) << 32) | cp.arange(m, dtype=cp.int64)
        if self._table is None:
            self._table = EdgeTable("gpu", {"truss": np.int32, "rank": np.int64},
                                    capacity=max(16, 2 * m))
            self._table.insert(src, dst, truss=t, rank=rank)
        else:
            at = self._table.lookup(src, dst)
            self._table.columns["truss"][at] = t
            self._table.columns["rank"][at] = rank
        # (head ranks fill the lower half of window -1 of the scan by windows, whose
        # candidates peeled before window 0 rank in its upper half: dynamic_gpu_window)
        self._head = -(1 << 31) - 1
        self._tail = ((int(rounds.max()) + 1) << 32) if m else 0
        cp.cuda.Device().synchronize()
        self._static_seconds = time.perf_counter() - start if warm is None else warm
        fit = LEVELS_AT_ONCE and DEVICE_SCAN_INSERT and START_AT_LOWER_BOUND and not INSERT_BY_RAISE
        self._blocks = blocks_after_static(self, src, dst, t) if DENSE_BLOCKS and fit else None
        self._top = 0 if self._blocks is not None else top_levels_gpu.top_cap(t)
        self._top_n = int(cp.count_nonzero(t >= self._top)) if self._top else 0
        self._cache = None
        self._k_max = None

    def _scratch(self, extra: int) -> None:
        """Slot-indexed stamps (reallocated, zeroed, when the table is rehashed) and slot
        lists with room for every live edge plus ``extra``."""
        cp = self._cp
        t = self._table
        if t.capacity != self._cap:
            self._cap = t.capacity
            self._mark = cp.zeros(self._cap, dtype=cp.int32)
            self._seen = cp.zeros(self._cap, dtype=cp.int32)
            self._member = cp.zeros(self._cap, dtype=cp.int32)
            self._touched = cp.zeros(self._cap, dtype=cp.int32)
            self._gone = cp.zeros(self._cap, dtype=cp.int32)
            self._fell = cp.zeros(self._cap, dtype=cp.int32)
            # kept counts of the host-driven rounds (DtKept, KoKept) and lowered-in-round stamps
            self._dcnt = cp.zeros(self._cap, dtype=cp.int32)
            self._dvalid = cp.zeros(self._cap, dtype=cp.int32)
            self._lowr = cp.zeros(self._cap, dtype=cp.int32)
            # mode 4's kept candidate bounds: pushes by edge (wrapping), and stamp << 32 |
            # (count - pushes at its start) by edge
            self._kpush = cp.zeros(self._cap, dtype=cp.uint32)
            self._kbase = cp.zeros(self._cap, dtype=cp.uint64)
        if self._dirty is None:                      # (mode 4's dirty stamp by level)
            self._dirty = cp.zeros(LEVEL_STAMPS, dtype=cp.int32)
        need = len(t) + int(extra) + 16
        if need > self._list_size:
            size = max(need, self._list_size + self._list_size // 4)
            self._list_size = size
            (self._la, self._lb, self._low, self._low_old, self._newval, self._region,
             self._fallen, self._cand, self._front, self._front2, self._newcnt) = (
                cp.empty(size, dtype=cp.int32) for _ in range(11))
            # the counting phases' per-item counts: zero between phases (their readers
            # zero them again)
            self._cnt = cp.zeros(size, dtype=cp.int32)
            self._rank_old = cp.empty(size, dtype=cp.int64)

    def _tick(self, span: int = 1) -> np.int32:
        """A fresh stamp (``span`` > 1: the last of ``span`` fresh ones; a kernel takes the
        others)."""
        if self._clock + span >= (1 << 31) - 1:   # wrap: start the stamps over
            for a in (self._mark, self._seen, self._member, self._touched, self._gone,
                      self._fell, self._dirty, self._dvalid, self._lowr,
                      getattr(self, "_kbase", None)):
                if a is not None:
                    a.fill(0)
            self._clock = 0
        self._clock += span
        return np.int32(self._clock)

    def _state(self, tstamp) -> tuple:
        """The leading kernel arguments of the k-order kernels (KO_STATE_PARAMS)."""
        deg, ptr = self._view()
        t = self._table
        return (deg, ptr, t.keys, np.int32(t.shift), t.columns["truss"], t.columns["rank"],
                self._member, self._gone, self._seen, self._touched, tstamp, self._ctr)

    def _scan(self, mode: int, n: int, k: int, members, mstamp, tstamp, deadline,
              max_region, overlap=None, extras=None) -> bool:
        """One cooperative ``ko_scan`` launch (its control words cleared by ``_begin``): mode
        0, the insertion scan from the seeds ``_la[:n]`` at level ``k`` (with ``extras``,
        ``(slots, levels)`` int32 sorted by level: from those instead, each put in at its
        level, lowest first); mode 2, the
        deletion's descent from the worklist ``_la`` (``ctr[C_NEXT]`` long), then the peeling
        of the edges it lowered (into ``members``, marked ``_fell == mstamp``; all must go);
        mode 3, the certified raise from the new edges ``_la[:n]``, then mode 2 from the
        raised edges; mode 4, the insertion scan over every level at once from the seeds
        ``_low_old[:ctr[C_EXTRA]]`` (``members``: ``_region``). ``overlap()``, when given,
        runs on the host between the launch and the read (host work that queues behind the
        launch). Updates the rank counters and the
        statistics (one read of the counters and control words); returns False when it
        stopped early (deadline, region, stamps) or edges survived the deletion's peeling."""
        from hornet.core.cuda import BLOCK
        launch = _prepared("ko_scan", 50, cooperative=True)
        queue = self._async_queue()
        qmodes = (int(ASYNC_PEEL) | 2 * int(ASYNC_CAND) | 4 * int(ASYNC_DESCENT) |
                  8 * int(ASYNC_DESCENT_SPLIT) | 16 * int(ASYNC_FUSED) |
                  32 * int(ASYNC_KARY) | 64 * int(ASYNC_INLINE) | 128 * int(ASYNC_CAND_PRUNE) |
                  (ASYNC_CHUNK // 32) << 8 | ASYNC_MAX_PARTS << 16 |
                  (int(ASYNC_PAUSE_MAX).bit_length() - 1) << 22)
        base = int(self._tick(SCAN_STAMPS)) - SCAN_STAMPS
        left = (deadline - time.perf_counter()) * 1e9
        deadline_ns = int(min(max(left, 0.0), 2.0 ** 62))
        region = int(min(max_region, 2 ** 62))
        P = _ptr
        vals = self._scan_values(mode, members, queue)
        vals[10], vals[23], vals[26], vals[27] = int(tstamp), int(mstamp), base, SCAN_STAMPS
        vals[28], vals[29], vals[30], vals[31] = int(self._tail), region, deadline_ns, mode
        vals[34], vals[35], vals[36], vals[43] = int(n), int(k), int(self._head), qmodes
        vals[48] = SCAN_PEEL_SLACK
        vals[49] = (CANDIDATE_TIME_FACTOR if mode == 4 and
                    len(self._table) > CANDIDATE_CUT_MIN_EDGES else 0)
        vals[37:40] = ((P(extras[0]), P(extras[1]), int(extras[0].shape[0]))
                       if extras is not None else (0, 0, 0))
        launch(self._scan_grid(_fn("ko_scan").kernel), BLOCK, vals)
        if overlap is not None:
            overlap()
        self._words.get(out=self._words_host)
        c = self._ks_host
        if int(c[KS_SPUN]):
            raise RuntimeError("ko_scan: a grid barrier timed out")
        self._touched_count = int(c[KS_TOUCHED])
        self._peel_rounds = int(c[KS_PEEL_ROUNDS])
        self._head = int(c[KS_HEAD].view(np.int64))
        self._tail += int(c[KS_TAIL])
        self._rounds += int(c[KS_ROUNDS])
        self._levels = int(c[KS_LEVELS])
        self._raised = int(c[KS_RAISED])
        self._units, self._depth = int(c[KS_UNITS]), int(c[KS_DEPTH])
        if int(c[KS_STATUS]) != KS_DONE:
            self._cnt.fill(0)                     # (a phase may have stopped before its reader)
            if queue is not None:                 # (a stopped queue may hold units)
                queue[0].fill(-1)
                queue[1].fill(0)
            return False
        return True

    def _scan_values(self, mode: int, members, queue) -> np.ndarray:
        """ko_scan's 50 argument values (int64) with the current graph, table and scratch
        arrays; the scalars (slots 10, 23, 26-31, 34-43 but the queue's, 48, 49) are the
        caller's to set. The scratch's addresses are kept while its sizes stay (its arrays
        are replaced only when they change), the graph's and table's are read every time."""
        t = self._table
        layout = (self._cap, self._list_size, queue is not None, id(self._dirty),
                  CAND_KEPT_BOUNDS, SCAN_PEEL_KEPT)
        if self._scan_layout != layout:
            self._scan_layout = layout
            self._scan_cache = {}
        vals = self._scan_cache.get(mode)
        P = _ptr
        if vals is None:
            if mode == 4:      # (seeds, the peeling's second list, dirty levels, the next P)
                seeds, kb, lowered, other = self._low_old, self._low, self._dirty, self._fallen
            else:
                seeds, kb, lowered, other = (self._la, self._region if mode else self._low,
                                             self._low, self._region)
            vals = self._scan_cache[mode] = np.array([
                0, 0, 0, 0, 0, 0,
                P(self._member), P(self._gone), P(self._seen), P(self._touched), 0,
                P(self._ctr),
                P(seeds), P(self._front), P(self._front2), P(self._cand),
                0, P(self._lb), P(kb), P(self._cnt),
                P(lowered), P(self._low_old), P(self._fell), 0, P(self._ks),
                P(self._bar), 0, 0, 0, 0, 0, 0,
                P(other),
                P(self._rank_old), 0, 0, 0,
                0, 0, 0,
                *((P(queue[0]), P(queue[1]), int(queue[0].shape[0])) if queue is not None
                  else (0, 0, 0)), 0,
                *((P(self._kpush), P(self._kbase)) if CAND_KEPT_BOUNDS else (0, 0)),
                *((P(self._dcnt), P(self._dvalid)) if SCAN_PEEL_KEPT and mode == 4
                  else (0, 0)), 0, 0],
                dtype=np.int64)
        deg, ptr = self._view()
        vals[0], vals[1], vals[2], vals[3] = P(deg), P(ptr), P(t.keys), t.shift
        vals[4], vals[5] = P(t.columns["truss"]), P(t.columns["rank"])
        vals[16] = P(members if mode else self._region)
        return vals

    def _async_queue(self):
        """(units, entry counts) of ko_scan's asynchronous phases (made on first use), or
        None where every phase runs in rounds (:data:`ASYNC_PEEL`, :data:`ASYNC_MAX_EDGES`)."""
        if not (ASYNC_PEEL or ASYNC_CAND or ASYNC_DESCENT) or \
                self.graph.num_edges > ASYNC_MAX_EDGES:
            return None
        if self._queue is None:
            cp = self._cp
            self._queue = (cp.full(ASYNC_QUEUE_UNITS, -1, dtype=cp.int64),
                           cp.zeros(ASYNC_QUEUE_UNITS, dtype=cp.int32))
        return self._queue

    _grid_cache: dict = {}

    @classmethod
    def _scan_grid(cls, kernel) -> int:
        """Blocks of ko_scan: every multiprocessor's resident blocks (a cooperative launch
        needs them all resident), at most SCAN_BLOCKS_PER_SM each and SCAN_MAX_BLOCKS in all."""
        import cupy
        from hornet.core.cuda import BLOCK
        dev = cupy.cuda.Device().id
        if dev not in cls._grid_cache:
            sms = int(cupy.cuda.Device().attributes["MultiProcessorCount"])
            fit = int(cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
                kernel.ptr, BLOCK, 0))
            blocks = max(1, min(fit, SCAN_BLOCKS_PER_SM)) * sms
            cls._grid_cache[dev] = min(blocks, SCAN_MAX_BLOCKS) if SCAN_MAX_BLOCKS else blocks
        return cls._grid_cache[dev]

    def _read(self) -> np.ndarray:
        """The counters on the host (the round's one synchronization; ko_scan's control words
        come along: the host-driven peeling counts there)."""
        self._words.get(out=self._words_host)
        return self._ctr_host

    def _view(self):
        """(degree, edge pointer) arrays the kernels read the graph through: its vertex table
        (the same arrays across updates: no view to make per update), else its view."""
        und = self._und
        if hasattr(und, "vertex_table"):
            return und.vertex_table()
        view = und.adjacency(properties=False)
        return view.degree, view.edge_ptr

    # ------------------------------------------------------------------ results
    @property
    def truss_numbers(self):
        """int32 CuPy array (E,): truss numbers aligned with ``g.edges()``."""
        if self._cache is None:
            src, dst = self.graph.edges(dense=True)
            self._cache = (src, dst, self._table.get("truss", src, dst).astype(self._cp.int32))
        return self._cache[2]

    @property
    def support(self):
        """int32 CuPy array (E,): triangles through every edge, aligned with ``g.edges()``."""
        return self._tc.per_edge()

    @property
    def k_max(self) -> int:
        """The largest k with a non-empty k-truss (0 without edges, 2 without triangles)."""
        if self._k_max is None:
            t = self.truss_numbers
            self._k_max = int(t.max()) if t.shape[0] else 0
        return self._k_max

    def k_truss(self, k: int):
        """Edges of the k-truss: ``(src, dst)`` int32 CuPy arrays, listed like ``g.edges()``
        (``k <= 2``: every edge, self-loops excluded, as the static ``k_truss``)."""
        t = self.truss_numbers
        keep = t >= max(int(k), 1)              # self-loops have number 0, other edges >= 2
        return self._cache[0][keep], self._cache[1][keep]

    # ------------------------------------------------------------------ updates
    def update(self, change) -> None:
        """Bring the state up to date with ``change`` (already applied to the graph).

        Raises ValueError (state unchanged) for a change of another kind or device.
        """
        kind = getattr(change, "kind", None)
        if kind not in ("insert", "delete", "update"):
            raise ValueError(f"expected an EdgeChange (kind insert/delete/update), got {change!r}")
        if isinstance(change.src, np.ndarray):
            raise ValueError("the change's arrays are NumPy arrays (a CPU graph's change?)")
        n = len(change)
        self.stats = {"path": "none", "region": 0, "batch": n}
        if n == 0 or kind == "update":
            return
        cp = self._cp
        self._cache = None
        self._k_max = None
        src, dst = change.src, change.dst
        if self.graph.directed:
            # (the triangle count keeps its own underlying graph, updated from the change)
            self._tc.update(change)
            src, dst = undirected_change(self.graph, self._und, kind, src, dst)
            if src.shape[0] == 0:
                return
        # (a graph's change holds contiguous int32 arrays already: no conversion call)
        if src.dtype != np.int32 or not src.flags.c_contiguous:
            src = cp.ascontiguousarray(src.astype(cp.int32, copy=False))
        if dst.dtype != np.int32 or not dst.flags.c_contiguous:
            dst = cp.ascontiguousarray(dst.astype(cp.int32, copy=False))
        b = int(src.shape[0])
        deleting = kind == "delete"
        self._hubs.apply(src, dst, not deleting)        # (before any kernel reads the rows)
        self._hubs.activate(HUB_BITS)
        # (an insertion's kernels do not read the batch adjacency: it is made after their
        # launch, for the supports alone)
        batch = self._batch(src, dst) if deleting else None

        def queued():
            # the supports (the triangles the batch closed or opened, from the same batch)
            # and a deletion's table change: host work that the truss kernels do not wait
            # for (neither reads the other's state; the deleted keys are gone only after
            # dt_lost_seeds read them), issued behind the update's cooperative launch
            if not self.graph.directed:
                self._tc.apply_gpu_batch(batch if deleting else self._batch(src, dst),
                                         deleting)
            if deleting:
                self._table.delete_present(src, dst)

        self.stats["path"] = "dynamic"
        small = b <= self.batch_share * len(self._table)
        if kind == "insert":
            slots = self._table.insert_new(src, dst)
            if not small:
                queued()
                self._table.columns["truss"][slots] = 2
                return self._fallback(0)
            if START_AT_LOWER_BOUND and not INSERT_BY_RAISE:
                return self._insert_from_bounds(slots, queued)
            if INSERT_BY_RAISE and self._device_scan(DEVICE_SCAN_RAISE):
                self._insert_raise_scan(slots, queued)
                return
            queued()
            if INSERT_BY_RAISE:
                self._insert_raise(slots)
            else:
                self._insert(src, dst, slots)
        elif small:
            self._delete(src, dst, batch, queued)
        else:
            queued()
            self._fallback(0)

    def _batch(self, src, dst):
        """The batch adjacency of the undirected change ``(src, dst)`` (int32, distinct
        pairs): a small batch by one block into a buffer of this object (valid until the
        next update), a larger one by :func:`batch_adjacency`'s sort."""
        b = int(src.shape[0])
        if b > SMALL_BATCH:
            return batch_adjacency(src, dst)
        keys = self._batch_views.get(b)             # (views of the buffer, kept by length)
        if keys is None:
            keys = self._batch_views[b] = self._batch_keys[:2 * b]
        _prepared("tb_batch_keys", 4)(1, SMALL_BATCH, (_ptr(src), _ptr(dst), b, _ptr(keys)))
        return BatchAdjacency(src, dst, keys)

    def _device_scan(self, choice) -> bool:
        """Whether a phase runs as one cooperative launch (``choice`` None: by the graph's
        size, DEVICE_SCAN_DELETE_MAX_EDGES)."""
        if choice is None:
            return self.graph.num_edges <= DEVICE_SCAN_DELETE_MAX_EDGES
        return bool(choice)

    def _fallback(self, region: int) -> None:
        self._recompute()
        self.stats.update(path="static", region=int(region))

    def _budget(self):
        """(deadline in perf_counter seconds, most region edges) of the current update."""
        share = self.fallback_share
        return (time.perf_counter() + 2.0 * share * self._static_seconds,
                share * max(len(self._table), 1))

    def _begin(self, extra: int) -> np.int32:
        """Scratch for an update of ``extra`` new edges; zeroes the counters and ko_scan's
        control words; returns the update's ``touched`` stamp."""
        import cupy
        self._scratch(extra)
        w = self._words
        cupy.cuda.runtime.memsetAsync(w.data.ptr, 0, w.nbytes,
                                      cupy.cuda.get_current_stream().ptr)
        self._rounds = self._peel_rounds = 0
        if self._clock + UPDATE_STAMPS >= (1 << 31) - 1:
            self._tick(UPDATE_STAMPS)             # (starts the stamps over)
        return self._tick()

    def _delete(self, src, dst, batch, queued) -> None:
        """Lower the numbers after a deletion batch (the deleted edges still in the table;
        ``batch``: its batch adjacency). ``queued()`` runs once after the ``dt_lost_seeds``
        launch (with one cooperative launch, after that launch too): it removes the deleted
        keys from the table."""
        deadline, _ = self._budget()
        tstamp = self._begin(0)
        t = self._table
        deg, ptr = self._view()
        stamp = self._tick()
        nb = int(src.shape[0])
        parts = int(_parts(nb))
        P = _ptr
        if self._blocks is not None:             # (the block edges stay off the worklist)
            self._blocks.delete(t, src, dst, self._mark, stamp)
        _prepared("dt_lost_seeds", 14)(
            _grid(nb * parts * WARP), BLOCK,
            (P(deg), P(ptr), P(src), P(dst), nb, P(batch.keys), P(t.keys), t.shift,
             P(t.columns["truss"]), P(self._mark), int(stamp), P(self._la), P(self._ctr),
             parts))
        fstamp = self._tick()
        top_hit = bool(self._top) and bool((t.get("truss", src, dst) >= self._top).any())
        if nb >= GATE_MIN_BATCH:
            # a large batch: its worklist's length read first, and one too long for the
            # descent to beat the static decomposition goes to it at once
            queued()
            queued = None
            n = int(self._read()[C_NEXT])
            self.stats["seeds"] = n
            share = (DELETE_SEED_SHARE_DEVICE if self._device_scan(DEVICE_SCAN_DELETE)
                     else DELETE_SEED_SHARE)
            if n > share * len(t):
                self.stats.update(seeds=n, gate="seeds")
                return self._fallback(n)
        if top_hit and not TOP_DELETE_BY_DESCENT:
            # the batch deleted an edge of the top levels: their subgraph decomposed anew,
            # the worklist restricted to the levels below and the edges that fell from it
            if queued is not None:
                queued()
            self._top_delete(int(self._read()[C_NEXT]), fstamp)
            queued = None
        if self._device_scan(DEVICE_SCAN_DELETE):
            # the descent from the worklist (its length read on the device) and the peeling
            # of the edges that fell, in one launch
            done = self._scan(2, 0, 0, self._fallen, fstamp, tstamp, deadline, 1 << 62,
                              queued)
            touched = self._touched_count
            self.stats.update(units=self._units, depth=self._depth)
        else:
            if queued is not None:
                queued()
            n = int(self._read()[C_NEXT])
            self.stats["seeds"] = n
            done = self._descend(n, tstamp, fstamp, deadline)
            if done:
                # the edges that fell: the end of their new level, in an order peeled from
                # them (the host's copy of the counters is current: every phase ends with
                # its read)
                nf = int(self._ctr_host[C_FELL])
                done = self._peel(self._fallen, nf, self._fell, fstamp, tstamp, deadline,
                                  to_empty=True) >= 0
            touched = int(self._ctr_host[C_TOUCHED])
            self._tail += int(self._ctr_host[C_TAIL])      # (the host-driven peeling's)
        done = done and (self._blocks is None or self._blocks.deleted())
        if not done:                               # (the caller deletes the batch's keys)
            return self._fallback(touched)
        if top_hit and TOP_DELETE_BY_DESCENT:     # (the descent lowered the top's edges)
            self._top_n = self.stats["top"] = top_levels_gpu.top_count(t, self._top)
        self.stats.update(region=touched, rounds=self._rounds, peel_rounds=self._peel_rounds)

    def _insert_from_bounds(self, slots, queued) -> None:
        """Raise the numbers after an insertion batch (new edges in the table, ``slots``
        int64): the k-order scan (see the module), each new edge started at a lower bound of
        its new number instead of level 2.

        ``is_lower_bound``: the bound L of a new edge is the h-index of its triangles whose
        other two edges are old (their numbers before the batch). ``is_place``: the new edge
        takes number L and a rank at the start of level L (from ``head``). Its own count of
        later triangles may exceed L - 2, so every new edge is a seed at its level.
        ``is_partners``: an old edge x below L in a triangle with it, whose third edge is at
        x's level or above, may now have one more triangle whose other edges come after x:
        a seed at x's level (the edges at L or above have the new edge before them). The
        scan then runs from the seeds sorted by level (``ko_scan`` mode 0 with extras, or
        host-driven rounds), from the lowest, skipping the levels where nothing is to be
        done: a new edge no longer climbs, and is no longer intersected, at every level up
        to its bound. Before it, one launch counts every seed at its own level (as the
        scan's first round would) and only those that reach k - 1 stay seeds (see the
        comment there): the levels the scan visits are those with work. ``queued()`` (the
        support update) is issued before the count of seeds is read. ``stats``: ``seeds``
        (listed), ``active`` (kept), ``placed`` (new edges above level 2), ``region`` (the
        scan's distinct edges plus the seeds: an edge may count twice). With
        :data:`LEVELS_AT_ONCE` and :data:`DEVICE_SCAN_INSERT`, the seeds go to ``ko_scan``
        mode 4 unfiltered and unsorted (its first round counts them), the count of seeds
        read on the device (``stats``: ``seeds``, ``placed``, ``region`` the scan's distinct
        edges, ``levels`` its iterations, ``peel_rounds`` its peeling rounds)."""
        from hornet.core.cuda import BLOCK, i64, launch
        cp = self._cp
        b = int(slots.shape[0])
        deadline, max_region = self._budget()
        tstamp = self._begin(b)
        t = self._table
        deg, ptr = self._view()
        keys = t.keys
        truss, rank = t.columns["truss"], t.columns["rank"]
        slots = cp.ascontiguousarray(slots.astype(cp.int64, copy=False))
        cstamp = self._tick()
        low, ext = self._newval, self._low_old
        slots, bs = (self._blocks.insert(t, slots, low, self._fell, cstamp) if self._blocks
                     else (slots, b))
        if bs < 0:             # (blocks: the edges outside them first, placed; all seed)
            return queued() or self._fallback(0)
        P, sl = _ptr, _ptr(slots)
        _prepared("is_lower_bound", 8)(_grid(max(bs, 1) * BLOCK), BLOCK, (
            P(deg), P(ptr), P(keys), t.shift, P(truss), sl, bs, P(low)))
        _prepared("is_place", 10)(_grid(max(bs, 1)), BLOCK, (
            sl, bs, P(low), P(truss), P(rank), int(self._head), P(self._fell), int(cstamp),
            P(ext), P(self._ctr)))
        self._head -= bs
        _prepared("is_partners", 12)(_grid(b * BLOCK), BLOCK, (
            P(deg), P(ptr), P(keys), t.shift, P(truss), sl, b, P(low), P(self._fell),
            int(cstamp), P(ext), P(self._ctr)))
        if b >= GATE_MIN_BATCH:
            # a large batch: its seeds counted first, and one with too many for the scan to
            # beat the static decomposition goes to it at once
            seeds = int(self._read()[C_EXTRA])
            if seeds > INSERT_SEED_SHARE * len(t):
                queued()
                self.stats.update(seeds=seeds, gate="seeds")
                return self._fallback(seeds)
        if LEVELS_AT_ONCE and DEVICE_SCAN_INSERT and self._windowed():
            return self._insert_windowed(tstamp, deadline, max_region, queued)
        if LEVELS_AT_ONCE and DEVICE_SCAN_INSERT:
            # every level at once, its seeds' count read on the device: one read at the end
            cut = self._candidate_cut(max_region)
            done = self._scan(4, 0, self._top, self._region, 0, tstamp, deadline, cut, queued)
            done = done and (self._blocks is None or self._blocks.check(t))
            c = self._words_host
            if not done:
                nc = int(self._ks_host[KS_ALL])
                if cut < max_region and nc > cut:
                    self.stats.update(gate="candidates", candidates=nc)
                elif int(self._ks_host[KS_ABORT]) == 2:
                    self.stats.update(gate="candidate time", candidates=nc)
                return self._fallback(self._touched_count)
            if self._top:
                self._top_insert()
            self.stats.update(region=self._touched_count, rounds=self._rounds,
                              peel_rounds=self._peel_rounds,
                              levels=self._levels, placed=int(c[C_PLACED]),
                              seeds=int(c[C_EXTRA]), units=self._units, depth=self._depth,
                              candidates=int(self._ks_host[KS_ALL]))
            return
        queued()
        c = self._read()
        ne, placed = int(c[C_EXTRA]), int(c[C_PLACED])
        # every seed's count at its own level before the scan (triangles whose other edges
        # are above it or at its level after it), all levels in one launch: a seed below
        # k - 1 is no candidate unless a candidate before it in a triangle pushes it, which
        # the scan does whether or not it is a seed (the levels below only add edges at the
        # start of its level, which count only as candidates), so only the others are kept
        parts = _parts(ne)
        launch(_fn("ko_count"), ne * int(parts),
               self._state(tstamp) + (ext, i64(ne), parts, np.int32(-1), self._member,
                                      self._tick(), np.int32(-1), np.int32(1), self._cnt),
               threads_per_item=WARP)
        levels = truss[ext[:ne]]
        active = cp.flatnonzero(self._cnt[:ne] >= levels - 1)
        self._cnt[:ne] = 0
        self._levels = 0
        if active.shape[0] == 0:                  # no level to scan: the order holds
            self.stats.update(region=ne, rounds=0, levels=0, placed=placed, seeds=ne,
                              active=0)
            return
        levels = levels[active]
        order = cp.argsort(levels)
        extras = (cp.ascontiguousarray(ext[:ne][active[order]]),
                  cp.ascontiguousarray(levels[order]))
        if DEVICE_SCAN_INSERT:
            done = self._scan(0, 0, 2, self._region, 0, tstamp, deadline, max_region,
                              extras=extras)
            touched = self._touched_count
        else:
            done = self._scan_rounds(0, tstamp, deadline, max_region, extras=extras)
            touched = int(self._read()[C_TOUCHED])
        if not done:
            return self._fallback(touched)
        self.stats.update(region=touched + ne, rounds=self._rounds, levels=self._levels,
                          placed=placed, seeds=ne, active=int(active.shape[0]))

    def _candidate_cut(self, max_region: float) -> float:
        """The most candidates mode 4 may hold before the update goes to the static
        decomposition: :data:`CANDIDATE_SHARE` x ``fallback_share`` of the edges on a graph of
        more than :data:`CANDIDATE_CUT_MIN_EDGES` edges, else ``max_region``."""
        m = len(self._table)
        if m <= CANDIDATE_CUT_MIN_EDGES:
            return max_region
        return min(max_region, CANDIDATE_SHARE * self.fallback_share * m)

    def _new_edges_first(self, slots):
        """An insertion's start: its budget and time stamp, and the new edges (table
        ``slots``) at level 2, first in the k-order. Returns (deadline, max_region, tstamp)."""
        cp = self._cp
        b = int(slots.shape[0])
        deadline, max_region = self._budget()
        tstamp = self._begin(b)
        t = self._table
        t.columns["truss"][slots] = 2
        t.columns["rank"][slots] = cp.arange(self._head - b + 1, self._head + 1, dtype=cp.int64)
        self._head -= b
        return deadline, max_region, tstamp

    def _insert(self, src, dst, slots) -> None:
        """Raise the numbers after an insertion batch (new edges in the table, ``slots``):
        the k-order scan, level by level from the new edges at level 2 (see the module)."""
        cp = self._cp
        b = int(src.shape[0])
        deadline, max_region, tstamp = self._new_edges_first(slots)
        self._la[:b] = slots.astype(cp.int32)
        self._levels = 0
        if DEVICE_SCAN_INSERT:
            done = self._scan(0, b, 2, self._region, 0, tstamp, deadline, max_region)
            touched = self._touched_count
        else:
            done = self._scan_rounds(b, tstamp, deadline, max_region)
            touched = int(self._read()[C_TOUCHED])
        if not done:
            return self._fallback(touched)
        self.stats.update(region=touched, rounds=self._rounds, levels=self._levels)

    def _insert_raise_scan(self, slots, queued) -> None:
        """:meth:`_insert_raise` in one cooperative launch (``ko_scan`` mode 3): the raise
        rounds, the descent from the raised edges and the peeling of the edges it lowered,
        the host reading the counters once at the end (``queued()`` runs between the launch
        and that read)."""
        cp = self._cp
        b = int(slots.shape[0])
        deadline, max_region = self._budget()
        tstamp = self._begin(b)
        t = self._table
        _prepared("kr_seed", 6)(_grid(b), BLOCK, (
            _ptr(cp.ascontiguousarray(slots)), b, _ptr(t.columns["truss"]),
            _ptr(t.columns["rank"]), int(self._head), _ptr(self._la)))
        self._head -= b
        fstamp = self._tick()
        done = self._scan(3, b, 0, self._fallen, fstamp, tstamp, deadline, max_region,
                          queued)
        if not done:
            return self._fallback(self._touched_count)
        self.stats.update(region=self._touched_count, rounds=self._rounds,
                          raise_rounds=self._levels, raised=self._raised)
