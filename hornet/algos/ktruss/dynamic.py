"""Truss numbers kept current under edge batches: :class:`DynamicTruss`.

State: the truss number, the support (triangles through it) and the k-order rank of every
edge, in an :class:`~hornet.algos.edge_table.EdgeTable` keyed by the edge, plus the number of
edges at each truss level (so ``k_max`` costs nothing). ``update(change)`` after every change
of the graph keeps numbers and supports equal to the static
:func:`~hornet.algos.truss_numbers` / :func:`~hornet.algos.edge_support` of the current graph.

How an update works (shared/DYNAMIC.md, "k-truss maintenance"):

1. Supports change exactly by the triangles the batch closed or opened (each triangle with
   several batch edges counted once).
2. The truss numbers are the greatest fixed point of the h-index operator H(f)(e) = max k
   such that k - 2 triangles of e have min(f(other two)) >= k; from any upper bound,
   lowering violating edges to their h-index ends at the truss numbers (Sariyuce et al.,
   "Local algorithms for hierarchical dense subgraph discovery", VLDB 2018).
3. Deletions (:func:`~hornet.algos.ktruss.region.lower_after_deletion`): numbers only
   fall, so the old numbers are the upper bound; the iteration starts from the edges that
   lost a triangle counted at their level and spreads only to neighbours whose count fell.
   Every edge keeps a lower bound of its level count (triangles whose other two edges are
   at its number or above) across updates, so an edge that loses a triangle but keeps
   enough costs no intersection. After a static run no edge has one: small deletions
   recount the edges they meet until they have spent what a pass counting every edge
   would (:class:`~hornet.algos.ktruss.level_counts.CountPass`).
   The edges that fell then get new places in the k-order
   (:func:`~hornet.algos.ktruss.order.order_after_deletion`).
4. Insertions (:func:`~hornet.algos.ktruss.order.raise_in_order`): the k-order (edges by
   truss number, then in peeling order; every edge has at most t - 2 triangles whose other
   edges come later; Zhang and Yu, SIGMOD 2019) is kept with the numbers. Each inserted
   edge starts at the start of the level of a lower bound of its new number (the h-index
   of its triangles with old edges, :meth:`DynamicTruss._place_new_edges`; level 2 when
   that is all), the old edges below it that it may now follow in a triangle are seeds at
   their levels; then, level by level, the edges that may rise are found by scanning
   the level in order from the seeds and the edges that rose from below, visiting only the
   later neighbours of the candidates, and a peel of the candidates leaves exactly those
   that rise (an edge can rise by several levels in one batch).
   On a graph with a large dense truss level (:data:`LEVEL_ROWS_MIN_EDGES` edges at a level
   of :data:`LEVEL_ROWS_MIN_LEVEL` or above: the core of a Kronecker graph, over hubs whose
   edges are mostly far below it), the scan and the deletion descent read triangles from
   adjacency rows filtered by level (:mod:`hornet.algos.ktruss.order_rows`,
   :mod:`hornet.algos.ktruss.descend_rows`), and a scan that reaches the top level and
   visits many of its edges peels that level whole on bit rows instead
   (:mod:`hornet.algos.ktruss.top_level`). A deletion batch of :data:`CORE_MIN_BATCH` edges
   or more there lists the triangles of the high levels (the levels whose vertices number
   at most :data:`~hornet.algos.ktruss.core_rows.CORE_MAX_VERTICES`) from bit rows over
   those vertices, built for the batch (:mod:`hornet.algos.ktruss.core_rows`). A batch of
   :data:`CORE_MIN_INSERT` / :data:`CORE_MIN_DELETE` edges or more there decomposes those
   levels whole on the bit rows (:mod:`hornet.algos.ktruss.core_peel`, which meets each
   triangle of the core once): an insertion's scan stops at the core's level when what is
   left of it looks dearer than the peel, which then finishes the batch; a deletion peels
   the core (without its deleted edges) first, and its descent only lowers the edges that
   fell below the core's level and those below it (``stats``: ``core`` edges peeled, ``fell``,
   ``level``, ``peel_work``; ``seconds["core"]`` / ``["peel"]``). Other graphs keep the plain kernels (and
   never compile these).
5. Dense blocks (:mod:`hornet.algos.ktruss.dense`): a dense part of the graph whose truss
   numbers all exceed those of the other edges at its vertices (a large clique: one paper
   with hundreds of authors) keeps its numbers in a dense matrix and is updated alone, by
   the h-index descent over rows of that matrix, before the steps above run on the rest
   (which never read a block edge's rank, and stop before they could). A deletion in a
   239-clique changes every one of its edges; the matrix rows make each edge's recount a
   vectorized pass instead of an adjacency intersection and a probe per triangle. The
   overlapping cliques of a collaboration graph's core (a boundary one level below at every
   threshold) are one wide block at margin 1; a deletion that lowers a block to its
   boundary takes its lowest levels out of it (into the k-order), and an insertion that
   lifts them above the rest of the boundary again gives them back.
6. The budget (:mod:`~hornet.algos.ktruss.budget`): before the expensive phase (the descent,
   the scan) the work of the batch is predicted from its first wave and its size, with
   the work per unit of each learned on the graph; a prediction over ``predict_share``
   static decompositions (a unit of update work and one of static work timed on the graph)
   goes to the static decomposition at once (``why`` "predicted"). Otherwise the update
   runs to a deadline, a multiple of its prediction within a share of the static cost;
   one that reaches it stops, and the static decomposition finishes the batch (always
   correct; ``why`` "work"): for an insertion only the levels its scan did not finish
   (:mod:`~hornet.algos.ktruss.finish`, ``why`` "level"). :attr:`DynamicTruss.stats` says
   which path the last update took (``first``, ``predicted``, ``limit``: the decision),
   how many edges it examined and its work (an insertion's scan: the entries of the
   adjacency lists it intersects and of the level rows it builds, plus the triangles it
   examines, so that its deadline sees a hub's long lists; a deletion's descent: the
   triangles it examines); after a dynamic update, or a stopped one, also the seconds of its
   stages (``seconds``: supports, dense blocks, then descent and k-order placement for a
   deletion, the k-order scan for an insertion) and their counts (deletion: ``lowered``
   edges outside blocks, ``recounted`` edges, ``descent_work`` / ``order_work`` in
   triangles examined; insertion: ``raises`` by one level, scan ``visits``, new edges
   ``placed`` above level 2; ``dense``: block edges examined; ``pass_s``: the expected
   seconds of the level-count pass, where a deletion weighed running it).
7. Small CPU graphs (:data:`BUILD_BY_UPDATE_MAX_EDGES`) are built, and rebuilt, by step 4:
   every edge inserted into the empty state (whose empty k-order is valid), so that a short
   run compiles the insertion kernels only; insertions into graphs of up to
   :data:`SCAN_LARGE_BATCHES_MAX_EDGES` edges take step 4 whatever the batch's size.

Directed graphs, as the static functions: truss numbers of the underlying undirected simple
graph U (u-v when u->v or v->u; self-loops ignored), one per stored directed edge (0 for a
self-loop). U is kept as an undirected ``hornet.Graph`` updated from the same changes
(:func:`hornet.algos.underlying.undirected_change`) and the algorithm runs on U's own
changes. The CPU version runs Numba kernels; ``DynamicTruss(g)`` of a GPU graph builds the
GPU version (:mod:`hornet.algos.ktruss.dynamic_gpu`: the same descent and the same k-order
scan, each level's candidates found and peeled in synchronous rounds of CUDA kernels).
"""
from __future__ import annotations

import time

import numpy as np

from hornet.core.jit import CompileTimer, compile_timer

from ..batch_adjacency import batch_adjacency
from ..edge_table import EdgeTable
from ..triangles import edge_support
from ..underlying import undirected_change, undirected_copy
from ..views import as_adjacency
from . import order as O
from . import region as K
from .core_peel import core_plan, peel_core
from .core_rows import (CORE_MAX_VERTICES, CORE_MIN_LEVEL, build_core, build_core_at,
                        empty_core)
from .budget import STATIC_OVERHEAD, UpdateBudget
from .dense import TrussBlocks, boundary_partners
from .finish import finish_from_level
from .level_counts import CountPass, level_counts
from .descend_rows import ROW_MIN_DEGREE, lower_after_deletion_rows
from .order_rows import raise_in_order_rows
from .static import truss_numbers_and_rounds

__all__ = ["DynamicTruss"]

#: the deadline of an update (:mod:`.budget`): this many times its prediction, at least
#: DEADLINE_LOW_SHARE of ``fallback_share`` static decompositions
DEADLINE_FACTOR = 2.5
DEADLINE_LOW_SHARE = 0.2
#: graphs of at most this many edges are built (and rebuilt) by inserting all their edges
#: into the empty state (:meth:`DynamicTruss._build_by_update`), so that a short run never
#: compiles the static decomposition (the insertion costs a few times the static
#: decomposition's time per edge: milliseconds at this size)
BUILD_BY_UPDATE_MAX_EDGES = 1 << 12
#: insertions into a graph of at most this many edges always take the k-order scan
#: (``batch_share=None``): there a rebuild costs more than the scan of even a large batch,
#: and the scan's work limit still sends an oversized one to a rebuild
SCAN_LARGE_BATCHES_MAX_EDGES = 1 << 20
#: such a build gives up (and the static decomposition runs) past this many times the
#: graph's edges plus three times its triangles in work
BUILD_WORK_FACTOR = 16
#: the insertion scan reads adjacency rows filtered by level (:mod:`.order_rows`) on a graph
#: with a truss level of at least LEVEL_ROWS_MIN_LEVEL that holds LEVEL_ROWS_MIN_EDGES
#: edges (the dense core of a Kronecker graph: its candidates' endpoints are hubs whose
#: edges are mostly far below that level); elsewhere building the rows costs more than
#: the whole-list intersections they spare
LEVEL_ROWS_MIN_LEVEL = 32
LEVEL_ROWS_MIN_EDGES = 1 << 16
#: that scan peels the highest level whole on bit rows (:mod:`.top_level`) once it has
#: visited a TOP_PEEL_SHARE-th of the level's edges (and TOP_PEEL_MIN_VISITS): a batch that
#: reaches the dense top level of a Kronecker graph makes most of it candidates, all of
#: which the scan's peel removes again. Not with dense blocks (whose edges keep no rank),
#: nor on a level of more than TOP_PEEL_MAX_VERTICES vertices (its bit rows and edge
#: matrix would be too large)
TOP_PEEL_SHARE = 8
TOP_PEEL_MIN_VISITS = 1024
TOP_PEEL_MAX_VERTICES = 4096
#: a deletion batch of at least this many edges on such a graph lists the triangles of the
#: high levels from bit rows (:mod:`.core_rows`); building them reads the whole edge table,
#: which a smaller batch's descent does not repay
CORE_MIN_BATCH = 256
#: an insertion batch of at least this many edges on such a graph stops its k-order scan at
#: the level of a core of at most CORE_PEEL_MAX_VERTICES vertices and decomposes the levels
#: from there on the core's bit rows (:mod:`.core_peel`)
CORE_MIN_INSERT = 256
#: a deletion batch of at least this many edges on such a graph decomposes that core on bit
#: rows before its descent, which then only finishes the levels below
CORE_MIN_DELETE = 256
#: a unit of the deletion descent's work (a triangle examined, with its table probes)
#: costs about this many units of the core's peel (a triangle met on bit rows) until both
#: rates are learned on the graph: the deletion peels when its predicted work passes the
#: peel's in descent units
DESCENT_PER_PEEL = 8
CORE_PEEL_MAX_VERTICES = CORE_MAX_VERTICES
#: a batch predicted to do less work than this share of the edges plans no core peel
PLAN_MIN_EDGE_SHARE = 0.125
#: dense-block matrix entries read per unit of work (a unit: an intersection step or a
#: triangle examined, with its table probes and scattered reads; the entries of a block row
#: are read in vector lanes, 16 int16 entries per compare)
DENSE_PER_WORK = 128


class DynamicTruss:
    """Truss decomposition of an undirected :class:`hornet.Graph`, updated batch by batch.

    Parameters
    ----------
    g : hornet.Graph
        Undirected. The object reads ``g`` (never changes it); call :meth:`update` with every
        :class:`~hornet.EdgeChange` that ``g`` returns, right after the call that made it.
    fallback_share : float
        The most an update may spend, in static decompositions of the graph (the seconds
        of a unit of update work and of static work are learned on the graph,
        :mod:`~hornet.algos.ktruss.budget`): its deadline, ``DEADLINE_FACTOR`` times its
        predicted work within ``[DEADLINE_LOW_SHARE, 1]`` times this. An update that
        reaches it stops, and the static decomposition finishes the batch (an insertion:
        only the levels its scan did not finish, :mod:`~hornet.algos.ktruss.finish`).
    predict_share : float
        A batch whose predicted work costs more than this many times ``fallback_share``
        static decompositions goes to the static decomposition before the update's
        expensive phase (``stats["why"] == "predicted"``; ``inf``: never, ``0``: every batch
        of a kind that has a prediction, i.e. after one update of that kind ran to its end).
    batch_share : float or None
        A batch larger than this share of the edges goes to the static decomposition
        directly (its region would be most of the graph). None (the default): 0.1 for
        deletions, and for insertions into a graph of more than
        :data:`SCAN_LARGE_BATCHES_MAX_EDGES` edges; insertions into a smaller graph always
        take the k-order scan (its work limit still sends an oversized one to a rebuild),
        which on such graphs costs less than rebuilding them.

    Examples
    --------
    >>> import numpy as np, hornet
    >>> g = hornet.Graph.from_edges([0, 0, 1], [1, 2, 2], device="cpu")   # a triangle
    >>> kt = DynamicTruss(g)
    >>> kt.k_max
    3
    >>> kt.update(g.insert_edges([0, 1, 2], [3, 3, 3]))                  # now a K4
    >>> kt.k_max, kt.truss_numbers.tolist()
    (4, [4, 4, 4, 4, 4, 4])
    >>> kt.update(g.delete_edges([0], [1]))
    >>> kt.k_max
    3
    """

    def __new__(cls, g, **thresholds):
        if cls is DynamicTruss and getattr(g, "device", "cpu") == "gpu":
            from .dynamic_gpu import GpuDynamicTruss
            return GpuDynamicTruss(g, **thresholds)
        return super().__new__(cls)

    def __init__(self, g, *, fallback_share: float = 1.0, predict_share: float = 1.0,
                 batch_share: float | None = None):
        if not (hasattr(g, "insert_edges") and hasattr(g, "adjacency")):
            raise TypeError(f"expected a hornet.Graph, got {type(g).__name__}")
        self.graph = g
        self._und = undirected_copy(g) if g.directed else g
        self.fallback_share = float(fallback_share)
        self.predict_share = float(predict_share)
        self.batch_share = None if batch_share is None else float(batch_share)
        self._budget = UpdateBudget(self.predict_share * self.fallback_share, DEADLINE_FACTOR,
                                    DEADLINE_LOW_SHARE * self.fallback_share,
                                    self.fallback_share)
        #: deletion batches from this size on build the bit rows of :mod:`.core_rows`
        self.core_min_batch = CORE_MIN_BATCH
        #: insertion batches from this size on decompose the core's levels on bit rows
        #: (:mod:`.core_peel`) instead of scanning them; cores of at most this many vertices
        self.core_min_insert = CORE_MIN_INSERT
        #: deletion batches from this size on decompose the core's levels on bit rows
        #: before the descent (:meth:`_peel_core_deleted`)
        self.core_min_delete = CORE_MIN_DELETE
        self.core_max_vertices = CORE_PEEL_MAX_VERTICES
        self.stats: dict = {"path": "build", "region": 0, "batch": 0}
        self._compiling = CompileTimer()         # the compile seconds of the current update
        self._clock = np.zeros(1, np.int64)
        # the triangle lists of the edges a deletion lowers (offsets, first, second edges)
        self._tri = (np.zeros(17, np.int64), np.empty(64, np.int64), np.empty(64, np.int64))
        self._blocks = TrussBlocks()
        self._pass = CountPass()                 # when the level counts are listed whole
        self._rebuild()
        self.stats = {"path": "build", "region": 0, "batch": 0}

    # ------------------------------------------------------------------ state
    def _rebuild(self) -> None:
        """Decomposition and supports of the whole graph (construction, large batches): a
        graph of at most :data:`BUILD_BY_UPDATE_MAX_EDGES` edges by inserting all its edges
        into the empty state (:meth:`_build_by_update`), a larger one (or one whose insertion
        passes its work limit) by the static decomposition."""
        und = self._und
        if und.num_edges <= BUILD_BY_UPDATE_MAX_EDGES and self._build_by_update(und):
            return
        src, dst = und.edges(dense=True)
        t, rank = self._static_truss(und)
        s = np.asarray(edge_support(und), np.int32)
        self._table = EdgeTable("cpu", {"truss": np.int32, "support": np.int32,
                                        "rank": np.int64},
                                capacity=max(16, 2 * src.shape[0]))
        self._table.insert(src, dst, truss=t, support=s, rank=rank)
        self._triangles = int(s.sum(dtype=np.int64)) // 3
        self._budget.static_timed(self._static_net, self._static_work())
        self._levels = np.bincount(t, minlength=3).astype(np.int64)
        self._scratch_for(self._table.capacity)
        self._valid = self._tick()           # the kept level counts no longer hold
        self._build_blocks(src, dst, t, self._table.lookup(src, dst))
        self._pass.fall_due()
        self._cache = None

    def _build_by_update(self, und) -> bool:
        """The empty graph's state, then all of ``und``'s edges as one inserted batch (step 4
        of the module docstring: the empty k-order is valid, so the result is the exact
        decomposition with a valid k-order), so that a short run compiles the insertion
        kernels only, not the static decomposition's. Returns False (state to be rebuilt
        statically) when the insertion passes :data:`BUILD_WORK_FACTOR` times the graph's
        edges plus three times its triangles. Its time stands in for the static
        decomposition's in :meth:`_limit` (on such a graph a rebuild is this build)."""
        start = time.perf_counter()
        compiled = self._compiling.seconds
        src, dst = und.edges(dense=True)
        self._table = EdgeTable("cpu", {"truss": np.int32, "support": np.int32,
                                        "rank": np.int64},
                                capacity=max(16, 2 * src.shape[0]))
        self._triangles = 0
        self._levels = np.zeros(3, np.int64)
        self._counters = np.array([-1, 0], np.int64)      # head, tail of an empty k-order
        self._pass.fall_due()
        self._cache = None
        self._scratch_for(self._table.capacity)
        self._valid = self._tick()           # the kept level counts no longer hold
        n = int(self._view()[0].shape[0])
        self._blocks.clear(n, self._table.capacity)       # blocks are chosen from the result
        if src.shape[0]:
            u = np.ascontiguousarray(src, np.int32)
            v = np.ascontiguousarray(dst, np.int32)
            if self._insert_batch(u, v, build=True):
                return False
            slots = self._table.lookup(src, dst)
            self._build_blocks(src, dst, self._table.columns["truss"][slots], slots)
        self._static_seconds = time.perf_counter() - start
        self._budget.static_timed(self._static_seconds - (self._compiling.seconds - compiled),
                                  self._static_work())
        return True
    def _build_blocks(self, src, dst, t, slots) -> None:
        """Choose the dense blocks of the current graph from exact numbers ``t``."""
        self._blocks.build(src, dst, t, slots, int(self._view()[0].shape[0]),
                           self._table.capacity)

    def _full_level_counts(self) -> None:
        """Every edge's level count (triangles whose other two edges are at its truss number
        or above; :func:`~hornet.algos.ktruss.region.lower_after_deletion` keeps them as
        lower bounds): the counts of earlier updates are dropped first.

        Only deletions read the counts, so a static decomposition leaves them due
        (``_pass.due``) and a deletion after it computes them (:class:`.CountPass` says
        which): a graph that only grows never runs (nor compiles) this pass. One listing of
        the triangles gives every count (:mod:`.level_counts`), its seconds timed."""
        self._pass.due = False
        self._valid = self._tick()
        t = self._table
        start, compiled = time.perf_counter(), self._compiling.seconds
        level_counts(self._und.adjacency(properties=False), t.keys, t.shift,
                     t.columns["truss"], self._count, self._counted, self._tick(),
                     self._blocks.eblock)
        if self._compiling.seconds == compiled and self._triangles:
            self._pass.rate = (time.perf_counter() - start) / self._triangles

    def _static_truss(self, und) -> tuple[np.ndarray, np.ndarray]:
        """The static decomposition, timed (its time bounds what an update may spend): truss
        numbers and a k-order (unique ranks in the order of (truss number, peeling round);
        see :mod:`hornet.algos.ktruss.order`). Resets the rank counters."""
        start = time.perf_counter()
        # peeled on the adjacency view (a CSR with an edge-state mask), not on a copy of the
        # Graph: the copy's peel runs the batch delete pipeline, whose kernels a replay
        # without deletions would otherwise compile for this alone
        with compile_timer() as compiling:
            t, rounds = truss_numbers_and_rounds(as_adjacency(und, properties=False))
        t = np.asarray(t, np.int32)
        rank = np.empty(t.shape[0], np.int64)
        rank[np.lexsort((rounds, t))] = np.arange(t.shape[0], dtype=np.int64)
        self._counters = np.array([-1, t.shape[0]], np.int64)   # head, tail
        self._static_seconds = time.perf_counter() - start
        # the seconds the budget learns from (a first run's compiles or cache loads left out)
        self._static_net = self._static_seconds - compiling.seconds
        return t, rank

    def _learn(self, kind: str, seconds: float, work: int) -> None:
        """The seconds a unit of region work of ``kind`` costs on this graph, for the
        budget; an update that compiled a kernel is left out."""
        if self._compiling.seconds == 0:
            self._budget.learn_rate(kind, seconds, work, self._static_work())

    def _static_work(self) -> int:
        """The static decomposition's work on the current graph: edges + 3 x triangles."""
        return len(self._table) + 3 * self._triangles

    def _redecompose(self) -> None:
        """Static decomposition of the whole graph into the table (supports are current)."""
        und = self._und
        src, dst = und.edges(dense=True)
        t, rank = self._static_truss(und)
        at = self._table.lookup(src, dst)
        self._table.columns["truss"][at] = t
        self._table.columns["rank"][at] = rank
        self._levels = np.bincount(t, minlength=3).astype(np.int64)
        self._budget.static_timed(self._static_net, self._static_work())
        self._build_blocks(src, dst, t, at)
        self._pass.fall_due()
        self._valid = self._tick()           # the kept level counts no longer hold

    def _scratch_for(self, capacity: int) -> None:
        """Slot-indexed arrays of the region kernels (reallocated only when the table is
        rehashed): ``_batch_stamp`` marks the current batch's edges; ``_count`` holds a
        lower bound of the triangles counted at an edge's level, valid where ``_counted`` is
        above ``_valid`` (kept across updates; new arrays hold no valid count); ``_queued`` marks the deletion worklist, ``_changed`` the edges whose number
        changed, ``_seen`` the edges examined. The k-order kernels use ``_walked`` /
        ``_queued`` as their member / queued stamps and ``_loc`` for member positions."""
        if getattr(self, "_cap", None) == capacity:
            return
        self._cap = capacity
        self._valid = int(self._clock[0])
        self._batch_stamp = np.zeros(capacity, np.int64)
        self._count = np.zeros(capacity, np.int32)
        self._counted = np.zeros(capacity, np.int64)
        self._queued = np.zeros(capacity, np.int64)
        self._walked = np.zeros(capacity, np.int64)
        self._changed = np.zeros(capacity, np.int64)
        self._seen = np.zeros(capacity, np.int64)
        self._loc = np.zeros(capacity, np.int64)

    def _vertex_scratch(self, n: int):
        """Vertex-indexed arrays of the region kernels, grown with the graph's vertex range:
        where a vertex's edge slots are kept during an update, and the marks of
        :func:`~hornet.algos.ktruss.region._intersect_marked` (one more entry: the last
        token)."""
        if getattr(self, "_row_at", None) is None or self._row_at.shape[0] < n:
            n = max(n, 16, 2 * getattr(self, "_row_at", np.zeros(0)).shape[0])
            self._row_at = np.zeros(n, np.int64)
            self._row_used = np.zeros(n, np.int64)
            self._mark = np.zeros(n + 1, np.int64)
        return self._row_at, self._row_used, self._mark

    def _level_row_scratch(self, n: int):
        """Vertex-indexed arrays of the deletion descent on level rows
        (:func:`~hornet.algos.ktruss.descend_rows.lower_after_deletion_rows`): where a
        vertex's level row starts, its level, and the stamp of the update that built it."""
        if getattr(self, "_lrow", None) is None or self._lrow[0].shape[0] < n:
            n = max(n, 16, 2 * getattr(self, "_lrow", (np.zeros(0),))[0].shape[0])
            self._lrow = (np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64))
        return self._lrow

    def _tick(self) -> int:
        self._clock[0] += 1
        return int(self._clock[0])

    def _shift_levels(self, old: np.ndarray, new: np.ndarray) -> None:
        top = int(max(old.max(initial=0), new.max(initial=0))) + 1
        if top > self._levels.shape[0]:
            self._levels = np.concatenate([self._levels,
                                           np.zeros(top - self._levels.shape[0], np.int64)])
        n = self._levels.shape[0]
        self._levels -= np.bincount(np.asarray(old, np.int64), minlength=n)
        self._levels += np.bincount(np.asarray(new, np.int64), minlength=n)

    def _limit(self) -> int:
        """The most work (intersections plus triangles examined) any batch may take:
        ``fallback_share`` static decompositions (the dense blocks' part of an insertion,
        before its prediction)."""
        b = self._budget
        return int(b.high * b.static_units("insert", self._static_work())) + STATIC_OVERHEAD

    def _decide(self, kind: str, first: int, batch: int,
                bound: float | None = None) -> tuple[bool, int]:
        """Before the expensive phase of an update of ``kind`` and ``batch`` edges whose
        first wave holds ``first`` triangles: whether the batch goes static now, and the
        update's work limit (:meth:`~hornet.algos.ktruss.budget.UpdateBudget.decide`;
        ``bound``: the work of a batch that decomposes the core, which bounds the
        prediction), both in :attr:`stats` (``predicted``: the predicted work, None before
        a prediction; ``limit``)."""
        static, limit, predicted = self._budget.decide(kind, first, batch,
                                                       self._static_work(), bound)
        self.stats.update(first=int(first), limit=int(limit),
                          predicted=None if predicted is None else int(predicted))
        return static, limit

    # ------------------------------------------------------------------ results
    @property
    def truss_numbers(self) -> np.ndarray:
        """int32 (E,): the truss number of every edge, aligned with ``g.edges()``."""
        if self._cache is None:
            src, dst = self.graph.edges(dense=True)
            self._cache = (src, dst, self._table.get("truss", src, dst).astype(np.int32))
        return self._cache[2]

    @property
    def support(self) -> np.ndarray:
        """int32 (E,): triangles through every edge, aligned with ``g.edges()``."""
        src, dst = self.graph.edges(dense=True)
        return self._table.get("support", src, dst).astype(np.int32)

    @property
    def k_max(self) -> int:
        """The largest k with a non-empty k-truss (0 without edges, 2 without triangles)."""
        nz = np.flatnonzero(self._levels)
        return int(nz[-1]) if nz.size else 0

    def k_truss(self, k: int):
        """Edges of the k-truss: ``(src, dst)`` int32, listed like ``g.edges()``.

        ``k <= 2`` gives every edge, self-loops excluded (as the static ``k_truss``).
        """
        t = self.truss_numbers
        src, dst = self._cache[0], self._cache[1]
        keep = t >= max(int(k), 1)              # self-loops have number 0, other edges >= 2
        return src[keep], dst[keep]

    # ------------------------------------------------------------------ updates
    def update(self, change) -> None:
        """Bring the state up to date with ``change`` (already applied to the graph).

        ``change.kind`` "insert" or "delete" (a vertex deletion arrives as the deletion of
        its edges); "update" changes only properties and leaves truss numbers alone.
        Raises ValueError (state unchanged) for anything else.
        """
        kind = getattr(change, "kind", None)
        if kind not in ("insert", "delete", "update"):
            raise ValueError(f"expected an EdgeChange (kind insert/delete/update), got {change!r}")
        if not isinstance(change.src, np.ndarray):
            raise ValueError("the change's arrays are not NumPy arrays (a GPU graph's change?)")
        n = len(change)
        self.stats = {"path": "none", "region": 0, "batch": n}
        if n == 0 or kind == "update":
            return
        self._cache = None
        src, dst = change.src, change.dst
        if self.graph.directed:
            src, dst = undirected_change(self.graph, self._und, kind, src, dst)
            if src.shape[0] == 0:
                return
        u = np.ascontiguousarray(src, np.int32)
        v = np.ascontiguousarray(dst, np.int32)
        # an update that compiles a kernel (a first run's) teaches no work rate (_learn)
        with compile_timer() as self._compiling:
            if kind == "insert":
                self._insert(u, v)
            else:
                self._delete(u, v)

    def _fallback(self, region: int = 0, why: str = "work") -> None:
        """Finish the batch by rebuilding the state (a small graph by insertion, see
        :meth:`_rebuild`; a larger one by the static decomposition); ``why``: "work" (over
        the limit) or "block" (a dense block lost its separation), in :attr:`stats`."""
        if self._und.num_edges <= BUILD_BY_UPDATE_MAX_EDGES:
            self._rebuild()
        else:
            self._redecompose()
        self.stats.update(path="static", region=int(region), why=why)

    def _view(self):
        view = self._und.adjacency(properties=False)
        return np.asarray(view.degree), np.asarray(view.edge_ptr)

    def _insert(self, u: np.ndarray, v: np.ndarray) -> None:
        t = self._table
        share = self.batch_share
        if share is None:
            share = np.inf if self._und.num_edges <= SCAN_LARGE_BATCHES_MAX_EDGES else 0.1
        if u.shape[0] > share * (len(t) + u.shape[0]):
            self._rebuild()
            self.stats.update(path="static")
            return
        if self._insert_batch(u, v):
            return self._fallback(self.stats["region"], self.stats["why"])

    def _insert_batch(self, u: np.ndarray, v: np.ndarray, build: bool = False) -> bool:
        """Insert the new edges ``u``-``v`` (int32) into the state by the k-order scan;
        returns whether the batch must be finished by a rebuild (the state is then
        incomplete): its work limit passed, or a dense block lost its separation
        (``stats["why"]``: "work" or "block"). ``build``:
        the whole graph into the empty state (limit :data:`BUILD_WORK_FACTOR` times edges
        plus three times triangles; nothing learned from its time)."""
        t = self._table
        begin = time.perf_counter()
        slots = t.insert_new(u, v)
        self._scratch_for(t.capacity)
        blocks = self._blocks
        if blocks.eblock.shape[0] != t.capacity:
            blocks.relocate(t)
        truss, support, rank = t.columns["truss"], t.columns["support"], t.columns["rank"]
        truss[slots] = 2
        support[slots] = 0
        # the inserted edges go first in the k-order (level 2, before every other edge)
        head = int(self._counters[0])
        rank[slots] = np.arange(head - slots.shape[0] + 1, head + 1, dtype=np.int64)
        self._counters[0] = head - slots.shape[0]
        stamp = self._tick()
        self._batch_stamp[slots] = stamp
        deg, ptr = self._view()
        low = np.empty(slots.shape[0], np.int32)
        self._triangles += K.insertion_supports(u, v, slots, deg, ptr, t.keys, t.shift,
                                                self._batch_stamp, stamp, truss, support, low)
        seconds = {"supports": time.perf_counter() - begin}
        if build:
            limit = BUILD_WORK_FACTOR * (len(t) + 3 * self._triangles) + STATIC_OVERHEAD
        else:
            limit = self._limit()
        self._shift_levels(np.zeros(0, np.int64), np.full(slots.shape[0], 2, np.int64))
        seed, dense = np.ones(slots.shape[0], bool), 0
        if len(blocks):
            blocks.grow_vertices(deg.shape[0])
            ok, seed, changed, before, dense = blocks.after_insertion(
                u, v, slots, truss, support, DENSE_PER_WORK * limit)
            if not ok:
                self.stats.update(region=int(dense), why="block")
                return True
            self._counted[changed] = 0
            self._shift_levels(before, truss[changed])
        seeds, extra = self._place_new_edges(slots, seed, low, deg, ptr)
        # the first wave: the triangles of the scan's seeds
        first = int(support[seeds].sum(dtype=np.int64) + support[extra].sum(dtype=np.int64))
        plan = None
        if (not build and not len(blocks) and slots.shape[0] >= self.core_min_insert
                and self._dense_level() and self._may_peel("insert", first, slots.shape[0])):
            plan = core_plan(t.keys, truss, support, deg.shape[0], self._batch_stamp, -1,
                             self.core_max_vertices, CORE_MIN_LEVEL)
        if not build:
            static, limit = self._decide("insert", first, slots.shape[0],
                                         None if plan is None else plan[1])
            if static:
                self.stats.update(why="predicted", seconds=seconds)
                return True
        start = time.perf_counter()
        seconds["dense"] = start - begin - seconds["supports"]
        if self._dense_level():
            top = int(np.flatnonzero(self._levels)[-1])
            switch = max(TOP_PEEL_MIN_VISITS, int(self._levels[top]) // TOP_PEEL_SHARE)
            stop, stop_work = (np.iinfo(np.int64).max, 0) if plan is None else plan
            raised, level, touched, work, aborted, k = raise_in_order_rows(
                seeds, t.keys, t.shift, deg, ptr, truss, support, rank, self._counters,
                self._clock, self._walked, self._loc, *self._vertex_scratch(deg.shape[0]),
                limit, blocks.vfloor, extra, top,
                np.iinfo(np.int64).max if len(blocks) else switch, TOP_PEEL_MAX_VERTICES,
                stop, stop_work)
            if aborted and work <= limit and k >= stop:
                seconds["scan"] = time.perf_counter() - start
                work = self._finish_core(slots, raised, level, int(k), deg.shape[0], work,
                                         touched, seconds)
                self._learn("insert", time.perf_counter() - start, work)
                self._budget.learn_spread("insert", first, slots.shape[0], work)
                return False
        else:
            raised, level, touched, work, aborted, k = O.raise_in_order(
                seeds, t.keys, t.shift, deg, ptr, truss, support, rank, self._counters,
                self._clock, self._walked, self._queued, self._loc,
                *self._vertex_scratch(deg.shape[0]), limit, blocks.vfloor, extra)
        seconds["scan"] = time.perf_counter() - start
        if not build:
            self._learn("insert", seconds["scan"] + seconds["dense"],
                        work + (blocks.read // DENSE_PER_WORK if len(blocks) else 0))
            # a stopped scan's work is a lower bound of the batch's: it still teaches
            self._budget.learn_spread("insert", first, slots.shape[0], work, bool(aborted))
        if aborted:
            why = "work" if work > limit else "block"
            self.stats.update(region=int(touched), why=why, seconds=seconds, work=int(work))
            if why == "work" and not build and not len(blocks):
                if plan is not None and k >= plan[0]:
                    # stopped inside the core: its bit rows finish the levels from k
                    self._finish_core(slots, raised, level, int(k), deg.shape[0], work,
                                      touched, seconds)
                    self.stats.update(path="static", why="level")
                    return False
                self._finish_insertion(slots, raised, level, int(k), deg.shape[0])
                return False
            return True
        if not self._boundary_below_blocks(np.concatenate([slots[seed], raised])):
            self.stats.update(region=int(touched), why="block")
            return True
        if len(blocks):
            self._counted[blocks.reabsorb(t, deg, ptr)] = 0
        # the new edges and those that rose have no level count (the others' counts only grew)
        self._counted[slots] = 0
        self._counted[raised] = 0
        self._shift_levels(level - 1, level)     # each raise moves one edge up one level
        self.stats.update(path="dynamic", region=int(touched + dense), work=int(work),
                          dense=int(dense), raises=int(level.shape[0]), visits=int(touched),
                          seconds=seconds)
        return False

    def _finish_insertion(self, slots: np.ndarray, raised: np.ndarray, level: np.ndarray,
                          k: int, n: int) -> None:
        """Finish an insertion whose scan stopped at its work limit while scanning level
        ``k``: the static decomposition of the edges at level k or above
        (:func:`~hornet.algos.ktruss.finish.finish_from_level`); the levels below are final.
        ``raised`` / ``level``: the raises the scan made."""
        start = time.perf_counter()
        t = self._table
        truss = t.columns["truss"]
        self._shift_levels(level - 1, level)
        top, old = finish_from_level(k, t.keys, truss, t.columns["rank"], self._counters, n)
        self._shift_levels(old, truss[top])
        # the edges that rose lose their level counts (the others' counts only grew)
        self._counted[slots] = 0
        self._counted[raised] = 0
        self._counted[top] = 0
        self.stats["seconds"]["finish"] = time.perf_counter() - start
        self.stats.update(path="static", why="level", level=int(k),
                          finished=int(top.shape[0]))

    def _finish_core(self, slots: np.ndarray, raised: np.ndarray, level: np.ndarray, k: int,
                     n: int, work: int, touched: int, seconds: dict) -> int:
        """Finish an insertion whose scan stopped before level ``k``, the core's level
        (every level below is final): the edges at k or above decomposed on the core's bit
        rows (:func:`~hornet.algos.ktruss.core_peel.peel_core`). ``raised`` / ``level``:
        the raises the scan made, ``work`` its work. Returns the work with the peel's."""
        start = time.perf_counter()
        t = self._table
        truss = t.columns["truss"]
        self._shift_levels(level - 1, level)
        core = build_core_at(t.keys, truss, n, self._batch_stamp, -1, k)
        top, old, _, count, more = peel_core(core, t.keys, truss, t.columns["rank"],
                                             self._counters)
        self._shift_levels(old, truss[top])
        # the edges that rose lose their level counts (the others' counts only grew); the
        # core's edges get their exact counts
        self._counted[slots] = 0
        self._counted[raised] = 0
        self._count[top] = count
        self._counted[top] = self._tick()
        seconds["core"] = time.perf_counter() - start
        self.stats.update(path="dynamic", region=int(touched + top.shape[0]),
                          work=int(work + more), raises=int(level.shape[0]),
                          visits=int(touched), level=int(k), core=int(top.shape[0]),
                          seconds=seconds)
        return work + int(more)

    def _peel_core_deleted(self, rec_slot: np.ndarray, rec_level: np.ndarray, n: int,
                           stamp: int, T: int):
        """Before the descent of a large deletion: the edges of the core at level ``T``
        (the batch's own edges left out) decomposed on bit rows
        (:func:`~hornet.algos.ktruss.core_peel.peel_core`): exact numbers, level counts and
        new ranks for those that stay at the core's level or above. Those that fell below
        it keep their numbers (upper bounds) and are seeds of the descent; the records of
        the others are dropped (their numbers and level counts are final).
        Returns the descent's records ``(rec_slot, rec_level)``, the peel's work, the
        old numbers and the slots of the edges whose number it changed, and the core's rows
        (:mod:`.core_rows`, the numbers they hold those before the peel)."""
        t = self._table
        truss = t.columns["truss"]
        core = build_core_at(t.keys, truss, n, self._batch_stamp, stamp, T)
        top, old, fell, count, work = peel_core(core, t.keys, truss, t.columns["rank"],
                                                self._counters)
        final = top[~fell]
        # exact level counts for the edges left in the core; the others fall
        self._counted[top[fell]] = 0
        self._count[final] = count[~fell]
        self._counted[final] = self._tick()
        drop = np.zeros(truss.shape[0], bool)
        drop[final] = True
        keep = ~drop[rec_slot]
        seeds = top[fell]
        rec_slot = np.concatenate([rec_slot[keep], seeds])
        rec_level = np.concatenate([rec_level[keep],
                                    np.full(seeds.shape[0], np.iinfo(np.int32).max, np.int32)])
        moved = truss[final] != old[~fell]
        self.stats.update(core=int(top.shape[0]), fell=int(seeds.shape[0]), level=int(T))
        return rec_slot, rec_level, int(work), old[~fell][moved], final[moved], core

    def _peel_in_descent_units(self, peel_work: float) -> float:
        """A core decomposition of ``peel_work`` units (:func:`~.core_peel.core_plan`) in
        units of the deletion descent: by the seconds per unit of each learned on this graph
        once both are, :data:`DESCENT_PER_PEEL` peel units a descent unit before."""
        peel, descent = self._budget.unit_rate("peel"), self._budget.unit_rate("delete")
        if peel is None or descent is None:
            return peel_work / DESCENT_PER_PEEL
        return peel_work * peel / descent

    def _may_peel(self, kind: str, first: int, batch: int) -> bool:
        """Whether a batch may be worth a core's decomposition, so that it plans one
        (:func:`~hornet.algos.ktruss.core_peel.core_plan`, a pass over the edge table): no
        prediction yet, or one of at least :data:`PLAN_MIN_EDGE_SHARE` of the edges (in the
        peel's units): less work than that costs less than the core's rows alone."""
        p = self._budget.predict(kind, first, batch)
        scale = DESCENT_PER_PEEL if kind == "delete" else 1
        return p is None or p * scale >= PLAN_MIN_EDGE_SHARE * len(self._table)

    def _dense_level(self) -> bool:
        """Whether the insertion scan reads level rows
        (:func:`~hornet.algos.ktruss.order_rows.raise_in_order_rows`): some truss level of
        :data:`LEVEL_ROWS_MIN_LEVEL` or above holds :data:`LEVEL_ROWS_MIN_EDGES` edges."""
        high = self._levels[LEVEL_ROWS_MIN_LEVEL:]
        return bool(high.shape[0]) and int(high.max()) >= LEVEL_ROWS_MIN_EDGES

    def _place_new_edges(self, slots: np.ndarray, sparse: np.ndarray, low: np.ndarray,
                         deg: np.ndarray, ptr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Start the k-order scan of an insertion from each new edge's lower bound.

        ``slots`` (int64): the inserted edges, at level 2 first in the k-order; ``sparse``
        (bool, aligned): those in no dense block; ``low`` (int32, aligned): lower bounds of
        their new numbers (:func:`~hornet.algos.ktruss.region.insertion_supports`).
        A sparse new edge whose bound L exceeds 2 takes number L and keeps its rank (from
        ``head``: the start of level L). Its own s+ (triangles whose other two edges come
        after it) may exceed L - 2, as at level 2: every new edge is a seed, which the scan
        visits (it either stays, its count then within the bound, or is peeled to the end
        of the level or rises). The edges of levels L and above have it before them, as
        before the batch they had nothing; an old edge whose s+ may have grown is below
        level L, in a triangle with it and a third edge at its level or above: those are
        seeds at their own levels, like the edges in a triangle with a new block edge.
        Skipping levels 2 to L - 1 spares the scan of those levels from the new edge.

        Returns ``(seeds, extra)`` for :func:`~hornet.algos.ktruss.order.raise_in_order`:
        the new edges left at level 2, and the other seeds (int64, by truss number)."""
        t = self._table
        truss = t.columns["truss"]
        up = sparse & (low > 2)
        moved = slots[up]
        self.stats["placed"] = int(moved.shape[0])
        if moved.shape[0]:
            truss[moved] = low[up]
            self._shift_levels(np.full(moved.shape[0], 2, np.int64), low[up])
        # the new edges above some old edges: new block edges and the moved ones
        above = slots[~sparse | up]
        if above.shape[0] == 0:
            return slots[sparse], np.zeros(0, np.int64)
        keys = t.keys[above]
        extra = np.unique(np.concatenate([
            boundary_partners(keys >> 32, keys & 0xFFFFFFFF, deg, ptr, t.keys, t.shift,
                              self._blocks.eblock, truss), moved]))
        extra = extra[np.argsort(truss[extra], kind="stable")]
        return slots[sparse & ~up], extra

    def _boundary_below_blocks(self, edges: np.ndarray) -> bool:
        """After an insertion: raise the boundary bound of each block with a vertex at one of
        ``edges`` (slots: the non-block edges inserted or raised) to their numbers; False if
        a block is no longer separated."""
        blocks = self._blocks
        if not len(blocks) or edges.shape[0] == 0:
            return True
        keys = self._table.keys[edges]
        u, v = keys >> 32, keys & 0xFFFFFFFF
        n = blocks.vmask.shape[0]
        inside = (u < n) & (v < n)               # new vertices are in no block
        blocks.raise_xmax(u[inside], v[inside], self._table.columns["truss"][edges[inside]])
        return blocks.separated()

    def _delete(self, u: np.ndarray, v: np.ndarray) -> None:
        t = self._table
        if u.shape[0] > (0.1 if self.batch_share is None else self.batch_share) * len(t):
            self._rebuild()
            self.stats.update(path="static")
            return
        begin = time.perf_counter()
        slots = t.lookup(u, v)
        truss, support = t.columns["truss"], t.columns["support"]
        stamp = self._tick()
        self._batch_stamp[slots] = stamp
        deg, ptr = self._view()
        ba = batch_adjacency(u, v)
        ddeg = np.diff(ba.offsets)
        # records: at most two per lost triangle; a deleted edge's lost triangles are bounded
        # by the smaller neighbourhood (before the batch) of its endpoints
        old_du = deg[u].astype(np.int64) + ddeg[np.searchsorted(ba.vertices, u)]
        old_dv = deg[v].astype(np.int64) + ddeg[np.searchsorted(ba.vertices, v)]
        room = 2 * int(np.minimum(old_du, old_dv).sum()) + 1
        rec_slot = np.empty(room, np.int64)
        rec_level = np.empty(room, np.int32)
        nrec = np.zeros(1, np.int64)
        self._triangles -= K.deletion_supports(
            u, v, slots, deg, ptr, ba.vertices, ba.offsets, ba.neighbours, t.keys, t.shift,
            self._batch_stamp, stamp, truss, support, rec_slot, rec_level, nrec)
        m = int(nrec[0])
        rec_slot, rec_level = rec_slot[:m], rec_level[:m]
        blocks = self._blocks
        # the first wave: the triangles of the edges that lost one at their level (before
        # the level counts spare some of them), an edge once per triangle it lost there
        # (no sort to count it once: the measure only has to be the one the spreads learn)
        at_level = rec_slot[rec_level >= truss[rec_slot]]
        first = int(support[at_level].sum(dtype=np.int64))
        plan = None
        if (not len(blocks) and u.shape[0] >= self.core_min_delete and self._dense_level()
                and self._may_peel("delete", first, u.shape[0])):
            plan = core_plan(t.keys, truss, support, deg.shape[0], self._batch_stamp, stamp,
                             self.core_max_vertices, CORE_MIN_LEVEL)
        # the peel's work in the descent's units
        bound = None if plan is None else self._peel_in_descent_units(plan[1])
        static, limit = self._decide("delete", first, u.shape[0], bound)
        if static:
            t.delete_present(u, v)
            self._counted[slots] = 0
            self._shift_levels(truss[slots].astype(np.int64), np.zeros(0, np.int64))
            return self._fallback(0, "predicted")
        predicted = self._budget.predict("delete", first, u.shape[0])
        peel = plan is not None and (predicted is None or predicted >= bound)
        if peel:
            # the core bounds the peel's work; the descent's deadline follows the descent's
            # own prediction (a stopped descent costs a static decomposition), the longest
            # one where that prediction alone would have sent the batch static (the peel
            # leaves the descent only the levels below the core)
            b = self._budget
            whole, limit, _ = b.decide("delete", first, u.shape[0], self._static_work())
            if whole:
                limit = int(b.high * b.static_units("delete", self._static_work()))
                limit += STATIC_OVERHEAD
            self.stats["limit"] = int(limit)
        lazy = False
        if self._pass.due and not peel:
            lazy, self.stats["pass_s"] = self._pass.lazily(
                first, self._budget.unit_rate("delete"), self._budget.static_rate(),
                self._triangles, self._static_work())
        if self._pass.due and peel:
            # the peel gives the core's edges exact level counts, which is where a pass over
            # every triangle would spend most of its time; the others get theirs when the
            # descent recounts them (the counts made since the static run stay valid)
            self._pass.due = False
        elif lazy:
            # the descent recounts the edges it meets without a count; the pass would list
            # every triangle, which the batch may spend on its recounts before it stops
            limit += self._triangles
            self.stats["limit"] = int(limit)
        elif self._pass.due:
            # counted on the graph after the batch: add back the lost triangles that counted
            # at their edge's level, which lower_after_deletion takes off again (block edges
            # have no count)
            self._full_level_counts()
            lost = rec_slot[rec_level >= truss[rec_slot]]
            np.add.at(self._count, lost, 1)
        gone_levels = truss[slots].astype(np.int64)
        seconds = {"supports": time.perf_counter() - begin}
        aborted, touched, work, dense, why = False, 0, 0, 0, "work"
        peel_old, peel_slots = np.zeros(0, np.int32), np.zeros(0, np.int64)
        timed = time.perf_counter()
        if len(blocks):
            ok, dense_slots, dense_old, dense, read = blocks.after_deletion(
                u, v, slots, truss, DENSE_PER_WORK * limit, t.columns["rank"], self._counters)
            aborted = not ok
            work = read // DENSE_PER_WORK
            why = "work" if work > limit else "block"
            # a block edge's lost triangles are the block's own business; the edges a block
            # gave up (evicted: no level count) are outside now
            self._counted[blocks.evicted] = 0
            outside = blocks.eblock[rec_slot] < 0
            rec_slot, rec_level = rec_slot[outside], rec_level[outside]
        counts = {}
        if not aborted:
            start = time.perf_counter()
            seconds["dense"] = start - begin - seconds["supports"]
            args = (rec_slot, rec_level, t.keys, t.shift, deg, ptr, truss, self._clock,
                    self._valid, self._count, self._counted, self._queued, self._seen,
                    self._changed, *self._vertex_scratch(deg.shape[0]), self._tri,
                    limit - work)
            if self._dense_level():
                if peel:
                    peeled = self._peel_core_deleted(rec_slot, rec_level, deg.shape[0], stamp,
                                                     plan[0])
                    rec_slot, rec_level, peel_work, peel_old, peel_slots, _ = peeled
                    self.stats["peel_work"] = int(peel_work)
                    self._learn("peel", time.perf_counter() - start, peel_work)
                    args = (rec_slot, rec_level) + args[2:]
                    seconds["peel"] = time.perf_counter() - start
                    core = peeled[5]             # the peel's rows, at the numbers after it
                    core[6][:] = truss[core[5]]
                elif u.shape[0] < self.core_min_batch:
                    core = empty_core()
                else:
                    core = build_core(t.keys, truss, deg.shape[0], self._batch_stamp, stamp,
                                      CORE_MAX_VERTICES, CORE_MIN_LEVEL)
                    seconds["core"] = time.perf_counter() - start
                slots_changed, old, tri, touched, more, aborted = lower_after_deletion_rows(
                    *args, *self._level_row_scratch(deg.shape[0]), ROW_MIN_DEGREE, self._loc,
                    core)
            else:
                slots_changed, old, tri, touched, more, aborted = K.lower_after_deletion(
                    *args)
            self._tri = tri                  # grown buffers: kept for the next deletion
            sparse = more
            seconds["descent"] = time.perf_counter() - start
            counts = dict(lowered=int(slots_changed.shape[0]), recounted=int(touched),
                          descent_work=int(more))
            if not aborted:
                # the edges whose number fell: new places in the k-order
                placed, more = O.order_after_deletion(
                    slots_changed, tri, truss, t.columns["rank"], self._counters, self._clock,
                    self._walked, self._loc, limit - work - sparse)
                sparse += more
                aborted = not placed
                counts["order_work"] = int(more)
            work += sparse
            seconds["order"] = time.perf_counter() - start - seconds["descent"]
            # the blocks' entries read count too (DENSE_PER_WORK a unit): with a wide block
            # the sparse part alone can be too small to time
            # (the peel's part left out: the budget predicts the descent's work, which its
            # limit bounds)
            self._learn("delete", time.perf_counter() - timed - seconds.get("peel", 0.0),
                        work)
            if lazy:
                self._pass.spent += seconds["descent"] + seconds["order"]
            if not peel:
                # a stopped descent's work is a lower bound of the batch's: it still teaches;
                # so does one without kept counts (its recounts make it an upper bound of a
                # counted one's: a deletion after it peels or goes static a little early).
                # A descent below a peeled core does a fraction of the work the prediction
                # stands for (the descent of the whole batch, which decides against the peel)
                self._budget.learn_spread("delete", first, u.shape[0], work, bool(aborted))
        t.delete_present(u, v)
        self._counted[slots] = 0
        self._shift_levels(gone_levels, np.zeros(0, np.int64))
        if aborted:
            return self._fallback(touched + dense, why)
        if len(blocks):
            self._counted[dense_slots] = 0
            self._shift_levels(dense_old, truss[dense_slots])
        self._shift_levels(peel_old, truss[peel_slots])
        self._shift_levels(old, truss[slots_changed])
        self.stats.update(path="dynamic", region=int(touched + dense), work=int(work),
                          dense=int(dense), seconds=seconds, **counts)
