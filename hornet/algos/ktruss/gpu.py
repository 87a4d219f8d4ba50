"""GPU k-truss (CuPy + CUDA C++, kernels in ``ktruss.cu``).

Support by the keyed hash kernels (:func:`hornet.algos.triangles.gpu.support_keyed`), then
peeling. Method "delta" (Green et al. 2017: a round subtracts only the triangles lost with its
removed edges) peels on the device (:class:`_DevicePeel`): one cooperative launch of
``truss_peel`` runs a whole peeling, its rounds and levels separated by grid barriers, the host
relaunching only to compact the CSR; while the edges under a threshold are most of the live
graph they are removed at once and the survivors' support recounted instead.
``max_truss`` tests one k (a fraction of the supports' upper bound of k_max; bisection
below it while a test leaves no edge) and decomposes the non-empty truss it leaves in one
device peeling, which visits only that truss's levels; ``truss_numbers`` is one device
peeling of every level. Method "iterative"
(and "delta" with DEVICE_PEEL False) peels from the host, a round at a time (:class:`_Peeler`:
two launches and one read per round; "iterative" recounts the support every round), on a
contiguous CSR with a per-edge state, compacted when half of it is dead.
"""
from __future__ import annotations

import os

import copy
import numpy as np

from hornet.adjacency import AdjacencyView
from hornet.core.cuda import BLOCK, cupy, i64, launch
from ..gpu_arrays import NULL, address, dummy, kernels
from ..triangles.gpu import count_oriented, EdgeIndex, orient, support_keyed, _per_input_edge
from ..views_gpu import edge_list, symmetrized

_fn = kernels(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ktruss.cu"))


DEAD, ALIVE, GOING = 0, 1, 2
METHODS = ("delta", "iterative")
TRUSS_WARPS = 8192           # warps a peeling round aims to keep busy (about what a large GPU runs at once)
TRUSS_MAX_PARTS = 16         # at most this many warps share one removed edge


#: counters of the last max_truss call (peeling rounds, support recounts, bisection tests)
PEEL_STATS: dict = {}
#: (diagnostics) the span and items of the last device peeling's frontier buffers
FRONTIER: dict = {}

#: method "delta" peels on the device (:class:`_DevicePeel`, one launch per peeling); False:
#: on the host, a round at a time (:class:`_Peeler`, as method "iterative" does)
DEVICE_PEEL = True
#: how _DevicePeel finds k_max: "decompose" (one peeling of every level), "bisect" (one
#: peeling per bisection test) or "bisect_decompose" (bisection tests until one leaves a
#: non-empty k-truss, then one peeling of every level of that truss)
MAX_TRUSS_SEARCH = "bisect_decompose"
#: "bisect_decompose": the first test's k, as a fraction of the upper bound of k_max (the
#: supports' bound, :func:`_truss_bound`: on Graph500 Kronecker graphs k_max is 0.34-0.45 of
#: it, so the first test keeps a non-empty truss there; a test that empties the graph costs
#: a whole peeling and a restore)
TRUSS_FIRST_TEST = 0.3
PEEL_BLOCKS_PER_SM = None    # resident blocks per multiprocessor of truss_peel (None: all)
GONE_NEVER = 0x7FFFFFFF      # GONE_NEVER in ktruss.cu
TRUSS_CHUNK = 32             # TRUSS_CHUNK in ktruss.cu
#: the most of the device's free memory (free in the driver plus free in CuPy's pool) that
#: truss_peel's two frontier buffers may take: each holds an item per ``span`` elements of
#: every live edge's shorter list, span the least multiple of TRUSS_CHUNK (doubling) that
#: fits (:func:`_frontier_span`)
FRONTIER_MEMORY_SHARE = 0.4
# truss_peel's control words (K_* in ktruss.cu)
K_ALIVE, K_ABUF, K_ROUND, K_STATUS, K_LEVELS, K_ROUNDS, K_CNT, K_MIN, K_WORDS = \
    0, 1, 2, 3, 4, 5, 8, 11, 16


class _Work:
    """The peeled graph: a contiguous CSR (indptr, ind, per-entry edge ids) compacted to the
    live edges whenever half of its edges are dead. ``stored``: the edges with entries in it
    (two each), ``alive``: the ALIVE ones among them."""

    def __init__(self, index: EdgeIndex):
        self.n = index.view.num_vertices
        self.ind = index.dst
        self.eid = index.entry_eids()       # (no self-loops: the view is symmetrized)
        self._pointers(index.off)
        self.stored = index.num_edges
        self.alive = index.num_edges

    def _pointers(self, indptr):
        self.indptr = indptr
        self.deg = (indptr[1:] - indptr[:-1]).astype(cupy.int32)
        self.ptr = address(self.ind) + 4 * indptr[:-1]
        self.eptr = address(self.eid) + 8 * indptr[:-1]

    def remove(self, count: int, state) -> None:
        """``count`` more edges are no longer ALIVE (``state`` says so already); compacts when
        half of the stored edges are dead. No host sync: the kept entries are the two of each
        ALIVE edge, 2 * alive, so every size is known here. New arrays every time (never in
        place: the checkpoints of max_k share these by shallow copies)."""
        self.alive -= count
        if self.alive * 2 < self.stored:
            self.compact(state == ALIVE, self.alive)

    def compact(self, keep, alive: int) -> None:
        """Rebuilds the CSR from the entries of the edges with ``keep`` (bool (E,) on the
        device), ``alive`` of them; new arrays (the old ones may be shared by checkpoints)."""
        self.alive = alive
        total = int(self.ind.shape[0])
        # pos: exclusive scan of the keep flags with the total last; kept entry t moves
        # to pos[t], so rows stay in order and row v starts at pos[indptr[v]]
        pos = cupy.zeros(total + 1, dtype=cupy.int64)
        pos[1:] = cupy.cumsum(keep[self.eid], dtype=cupy.int64)
        kept = 2 * alive
        ind = cupy.empty(kept, dtype=cupy.int32)
        eid = cupy.empty(kept, dtype=cupy.int64)
        launch(_fn("truss_compact"), total, (self.ind, self.eid, pos, i64(total),
                                             i64(kept), ind, eid))
        self.ind, self.eid = ind, eid
        self._pointers(pos[self.indptr])
        self.stored = alive


def _pinned_u64():
    """A one-element uint64 NumPy array in pinned memory (the target of the rounds' reads)."""
    import cupyx
    return cupyx.empty_pinned(1, dtype=np.uint64)


class _Peeler:
    """Peeling of one k-truss problem: per-edge state (ALIVE, GOING, DEAD) and support, the
    live CSR (:class:`_Work`) and the rounds' buffers.

    A delta round is two launches and one 8-byte device-to-host read (see ktruss.cu):
    ``truss_mark`` (the previous round's edges DEAD, this round's GOING, counter zeroed), then
    ``truss_delta`` (a fixed number of warps per removed edge, so no host-side total of the
    work is needed), then the read of the counter (how many edges fell under the threshold).
    A round's edges stay GOING until the next round's ``truss_mark``; the round that finds
    nothing more to peel marks them DEAD itself, so between peelings (``one_k``, the levels
    of ``decompose``, the checkpoints of ``max_k``) no edge is GOING."""

    def __init__(self, index: EdgeIndex, method: str):
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        self.index = index
        self.method = method
        self.E = index.num_edges
        self.state = cupy.ones(self.E, dtype=cupy.uint8)
        self.work = _Work(index)
        self.sup = self._count()
        self._counter = cupy.zeros(1, dtype=cupy.uint64)
        self._counter_host = _pinned_u64()
        self._no_edges = dummy(cupy.int64)     # stands for an absent edge list in truss_mark
        self._no_truss = dummy(cupy.int32)
        self._next = [None, None]               # the rounds' output buffers, used in turn
        self._turn = 0
        self._going = None                      # the edges the last round marked GOING
        self._truss = None                      # decompose: truss numbers, set as edges go
        self._level = 0                         # ... to this value
        self.rounds = 0
        self.recounts = 0

    def _count(self):
        w = self.work
        o = orient(w.deg, w.ptr, w.n, eptr=w.eptr, state=self.state)
        return count_oriented(o, 2, num_edges=self.E)[2]

    def scan(self, thr: int):
        """(removals int64, min support over live edges | None when none is live)."""
        alive = self.state == ALIVE
        if thr >= 0:
            return cupy.flatnonzero(alive & (self.sup < thr)), None
        if not bool(alive.any()):
            return cupy.empty(0, dtype=cupy.int64), None
        m = int(cupy.where(alive, self.sup, np.iinfo(np.int32).max).min())
        return cupy.flatnonzero(alive & (self.sup == m)), m

    def _mark(self, rem, mark: int) -> None:
        """One launch: the edges still GOING become DEAD, ``rem`` (int64 edge ids, ALIVE until
        now; None: no edges) becomes ``mark`` (GOING or DEAD) and, when decomposing, gets truss
        number ``_level``; the round's counter is zeroed."""
        prev = self._going
        nprev = 0 if prev is None else int(prev.shape[0])
        nrem = 0 if rem is None else int(rem.shape[0])
        truss = self._truss
        launch(_fn("truss_mark"), max(nprev + nrem, 1),
               (prev if nprev else self._no_edges, i64(nprev),
                rem if nrem else self._no_edges, i64(nrem), np.int32(mark), self.state,
                self._counter, np.int32(truss is not None),
                self._no_truss if truss is None else truss, np.int32(self._level)))
        # (the next mark reads rem: it is the scan's array, or the output buffer that this
        # round's truss_delta does not write and the next round's writes only after that mark)
        self._going = rem if (nrem and mark == GOING) else None

    def peel(self, rem, thr: int):
        """One round: removes ``rem`` (distinct ALIVE edges) and returns the live edges whose
        support fell under ``thr``."""
        self.rounds += 1
        nrem = int(rem.shape[0])
        # removing most of what is left: recounting the survivors' support is cheaper than
        # subtracting the triangles of every removed edge (the result is the same)
        if self.method == "iterative" or 2 * nrem > self.work.alive:
            self.recounts += 1
            self._mark(rem, DEAD)
            self.work.remove(nrem, self.state)
            self.sup = self._count()
            return self.scan(thr)[0]
        self._mark(rem, GOING)
        nxt = self._subtract(rem, thr)
        self.work.remove(nrem, self.state)        # (drops the GOING entries too)
        return nxt

    def _subtract(self, rem, thr: int):
        """Subtract the triangles of ``rem`` (marked GOING) from the live edges' support;
        returns the live edges that fell under ``thr`` (a view of one of two buffers used in
        turn: ``rem`` may live in the other one and is still read by the next mark)."""
        w, ix = self.work, self.index
        nrem = int(rem.shape[0])
        self._turn ^= 1
        if self._next[self._turn] is None:
            self._next[self._turn] = cupy.empty(max(self.E, 1), dtype=cupy.int64)
        nxt = self._next[self._turn]
        # warps per removed edge: enough for a round of few edges to fill the GPU (a warp
        # whose share of the edge's shorter list is empty exits at once)
        parts = min(TRUSS_MAX_PARTS, max(1, -(-TRUSS_WARPS // nrem)))
        launch(_fn("truss_delta"), nrem * parts,
               (w.deg, w.ptr, w.eptr, self.state, rem, i64(nrem), np.int32(parts), ix.esrc,
                ix.edst, self.sup, np.int32(thr), nxt, self._counter), threads_per_item=32)
        self._counter.get(out=self._counter_host)          # the round's one host sync
        k = int(self._counter_host[0])
        if k == 0:
            self._mark(None, DEAD)                 # the peeling ends: its last edges go DEAD
        return nxt[:k]

    def decompose(self):
        truss = cupy.zeros(self.E, dtype=cupy.int32)
        self._truss = truss                        # (each round's marks write the numbers)
        while True:
            rem, m = self.scan(-1)
            if m is None:
                break
            k = m + 3
            thr = k - 2
            self._level = k - 1
            while rem.shape[0]:
                rem = self.peel(rem, thr)
        self._truss = None
        return truss

    def stats(self) -> dict:
        return dict(rounds=self.rounds, recounts=self.recounts, tests=self.tests)

    def one_k(self, k: int):
        thr = k - 2
        if thr <= 0:
            return self.state
        rem, _ = self.scan(thr)
        while rem.shape[0]:
            rem = self.peel(rem, thr)
        return self.state

    def max_k(self) -> int:
        """k_max by bisection over k, peeling from the last non-empty truss (a checkpoint
        of states and supports: the k-truss contains every larger one), so that only
        O(log k_max) peelings run instead of one per truss level. Leaves ``state`` at the
        k_max-truss; 0 for a graph without edges."""
        self.tests = 0
        if self.E == 0:
            return 0
        lo = 2                                   # every edge is in the 2-truss
        hi = _truss_bound(self.sup[self.state == ALIVE])
        saved = (self.state.copy(), self.sup.copy(), copy.copy(self.work))
        while lo < hi:
            k = (lo + hi + 1) // 2
            self.tests += 1
            self.one_k(k)
            if bool((self.state == ALIVE).any()):
                lo = k
                saved = (self.state.copy(), self.sup.copy(), copy.copy(self.work))
            else:
                hi = k - 1
                state, sup, work = saved
                self.state, self.sup, self.work = state.copy(), sup.copy(), copy.copy(work)
        self.state, self.sup, self.work = saved
        return lo


class _DevicePeel:
    """Delta peeling run on the device (``truss_peel`` in ktruss.cu): one cooperative launch
    runs every level and round of a peeling, separated by grid barriers; the host relaunches
    only to compact the CSR when fewer than half of its stored edges are alive (a few times
    per peeling), reading its control words (16 uint64) after each launch.

    State: ``sup`` (int32 (E,), the support within the live graph), ``gone`` (int32 (E,):
    GONE_NEVER while the edge is alive, else the round that removed it), the alive list (two
    int64 buffers of E, compacted as edges go), two frontier buffers (uint64 items, one per
    ``span`` elements of an edge's shorter list: :func:`_frontier_span`), the control words
    and the grid barrier.
    """

    def __init__(self, index: EdgeIndex):
        self.index = index
        self.E = E = index.num_edges
        self.work = w = _Work(index)
        self.sup = support_keyed(w.deg, w.ptr, w.eptr, w.n, E)
        self.gone = cupy.full(E, GONE_NEVER, dtype=cupy.int32)
        self.alive = [cupy.arange(E, dtype=cupy.int64), cupy.empty(E, dtype=cupy.int64)]
        # a round's items: at most one per span elements of every live edge's shorter list
        # (degrees only fall as the CSR is compacted)
        self.span, cap = _frontier_span(w.deg, index.esrc, index.edst)
        FRONTIER.update(span=self.span, items=cap)
        self.front = [cupy.empty(max(cap, 1), dtype=cupy.uint64) for _ in range(2)]
        self.ctl = cupy.zeros(K_WORDS, dtype=cupy.uint64)
        self.bar = cupy.zeros(4, dtype=cupy.uint32)
        self.host_ctl = np.zeros(K_WORDS, dtype=np.uint64)
        self.host_ctl[K_ALIVE] = E
        self.alive_count = E
        self.launches = 0
        self.compactions = 0
        self.recounts = 0
        self.tests = 0

    @staticmethod
    def _grid(kernel) -> int:
        """Blocks of truss_peel: every multiprocessor's resident blocks (a cooperative launch
        needs them all resident), at most PEEL_BLOCKS_PER_SM each."""
        sms = int(cupy.cuda.Device().attributes["MultiProcessorCount"])
        fit = int(cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.ptr, BLOCK,
                                                                              0))
        per_sm = fit if PEEL_BLOCKS_PER_SM is None else min(fit, PEEL_BLOCKS_PER_SM)
        return max(1, per_sm) * sms

    def run(self, fixed_thr: int, truss=None) -> int:
        """Peels on the device: ``fixed_thr >= 0``: every edge whose support falls below it
        (one k); ``fixed_thr == -1``: the whole decomposition, truss numbers into ``truss``
        (int32 (E,)). Returns the number of edges left alive."""
        w, ix = self.work, self.index
        kernel = _fn("truss_peel").kernel
        while True:
            c = self.host_ctl
            c[K_CNT:K_CNT + 3] = 0
            c[K_MIN:K_MIN + 3] = np.iinfo(np.uint64).max
            c[K_STATUS] = 0
            self.ctl.set(c)
            kernel((self._grid(kernel),), (BLOCK,),
                   (w.deg, w.ptr, w.eptr, ix.esrc, ix.edst, self.sup, self.gone,
                    NULL if truss is None else truss, self.alive[0], self.alive[1],
                    self.front[0], self.front[1], self.ctl, self.bar, i64(w.stored),
                    np.int32(fixed_thr), np.int32(self.span)),
                   enable_cooperative_groups=True)
            self.launches += 1
            self.host_ctl = c = self.ctl.get()
            if int(self.bar[2].get()):
                raise RuntimeError("truss_peel: a grid barrier timed out")
            self.alive_count = int(c[K_ALIVE])
            if int(c[K_STATUS]) == 0:
                return self.alive_count
            self.compactions += 1
            w.compact(self.gone == GONE_NEVER, self.alive_count)

    def state(self):
        """uint8 (E,): ALIVE for the edges left, DEAD for the others."""
        return (self.gone == GONE_NEVER).astype(cupy.uint8)

    def decompose(self):
        truss = cupy.zeros(self.E, dtype=cupy.int32)
        if self.E:
            self.run(-1, truss)
        return truss

    def one_k(self, k: int):
        if k - 2 > 0 and self.E:
            self.peel_below(k - 2)
        return self.state()

    def peel_below(self, thr: int) -> int:
        """Peels every edge whose support falls below ``thr`` (thr >= 1); returns the edges
        left. While the edges under the threshold are over half of the live ones, they are
        all removed at once and the survivors' support is recounted on the compacted CSR
        (cheaper than subtracting the triangles of most of the graph); the rest of the
        cascade runs on the device (:meth:`run`)."""
        while self.alive_count:
            below = (self.gone == GONE_NEVER) & (self.sup < thr)
            nrem = int(cupy.count_nonzero(below))
            if nrem == 0:
                return self.alive_count
            if 2 * nrem <= self.alive_count:
                return self.run(thr)
            self.recounts += 1
            self.gone[below] = 0                  # (before every round number: gone)
            self.alive_count -= nrem
            w = self.work
            w.compact(self.gone == GONE_NEVER, self.alive_count)
            self.sup = support_keyed(w.deg, w.ptr, w.eptr, w.n, self.E)
        return 0

    def _save(self):
        n = self.alive_count
        ab = int(self.host_ctl[K_ABUF]) & 1
        return (self.gone.copy(), self.sup.copy(), self.alive[ab][:int(self.host_ctl[K_ALIVE])]
                .copy(), n, copy.copy(self.work))

    def _restore(self, saved) -> None:
        gone, sup, alive, n, work = saved
        self.gone, self.sup, self.work = gone.copy(), sup.copy(), copy.copy(work)
        self.alive[0][:alive.shape[0]] = alive
        self.host_ctl[K_ALIVE] = alive.shape[0]
        self.host_ctl[K_ABUF] = 0
        self.alive_count = n

    def max_k(self) -> int:
        """k_max, leaving the k_max-truss alive. MAX_TRUSS_SEARCH "bisect": bisection over k
        from the last non-empty truss, one peeling (:meth:`peel_below`) per test (a non-empty
        truss is a checkpoint of supports, states and CSR, compacted when it holds under half
        of the stored edges: the k-truss contains every larger one); "decompose": the whole
        decomposition in one device peeling (every edge removed once, level by level);
        "bisect_decompose": bisection tests (the first at TRUSS_FIRST_TEST of the upper
        bound) until one leaves a non-empty k-truss, then the decomposition of that truss
        (its edges' truss numbers are their truss numbers in the whole graph: every j-truss
        with j >= k lies inside it), which visits only its non-empty levels.
        0 for a graph without edges."""
        if self.E == 0:
            return 0
        if MAX_TRUSS_SEARCH == "decompose":
            return self._keep_top(self.decompose())
        lo, hi = 2, _truss_bound(self.sup)
        walk = MAX_TRUSS_SEARCH == "bisect_decompose"
        saved = self._save()
        first = True
        while lo < hi:
            k = (lo + hi + 1) // 2
            if walk and first:
                k = max(lo + 1, min(hi, int(hi * TRUSS_FIRST_TEST)))
            first = False
            self.tests += 1
            left = self.peel_below(k - 2)
            if left:
                lo = k
                if 2 * left < self.work.stored:
                    self.compactions += 1
                    self.work.compact(self.gone == GONE_NEVER, left)
                if walk:
                    truss = cupy.zeros(self.E, dtype=cupy.int32)
                    self.run(-1, truss)
                    return self._keep_top(truss)
                saved = self._save()
            else:
                hi = k - 1
                self._restore(saved)
        self._restore(saved)
        return lo

    def _keep_top(self, truss) -> int:
        """k_max = the largest truss number in ``truss`` (int32 (E,), 0 for the edges not
        decomposed); leaves the edges with it alive."""
        kmax = int(truss.max())
        self.gone = cupy.where(truss == kmax, GONE_NEVER, 0).astype(cupy.int32)
        return kmax

    def stats(self) -> dict:
        c = self.host_ctl
        return dict(levels=int(c[K_LEVELS]), rounds=int(c[K_ROUNDS]), launches=self.launches,
                    recounts=self.recounts, compactions=self.compactions, tests=self.tests)


def _frontier_span(deg, esrc, edst) -> tuple:
    """(span, items) of truss_peel's frontier: the least span (TRUSS_CHUNK doubled) for
    which two buffers of ``items`` uint64 (an item per span elements of every edge's shorter
    list: what a round that removes every edge appends) fit in FRONTIER_MEMORY_SHARE of the
    device's free memory; the largest span tried (2^12 TRUSS_CHUNK) when none fits.
    ``deg`` int32 (n,), ``esrc`` / ``edst`` int32 (E,) on the device."""
    E = int(esrc.shape[0])
    if E == 0:
        return TRUSS_CHUNK, 0
    ds = cupy.minimum(deg[esrc], deg[edst]).astype(cupy.int64)
    free, _ = cupy.cuda.runtime.memGetInfo()
    pool = cupy.get_default_memory_pool()
    budget = FRONTIER_MEMORY_SHARE * (free + pool.free_bytes())
    span = TRUSS_CHUNK
    while True:
        items = int(((ds + span - 1) // span).sum())
        if 2 * 8 * items <= budget or span >= TRUSS_CHUNK << 12:
            return span, items
        span *= 2


def _truss_bound(sup) -> int:
    """An upper bound of k_max from the supports: a k-truss holds at least k(k - 1) / 2
    edges (k vertices of degree k - 1 at least), each with support >= k - 2, so k_max is at
    most the largest k with k(k - 1) / 2 supports >= k - 2 (counted from a histogram of the
    supports, capped where k(k - 1) / 2 exceeds the edges)."""
    m = int(sup.shape[0])
    if m == 0:
        return 2
    kcap = int((1 + (1 + 8 * m) ** 0.5) / 2) + 1        # k(k - 1) / 2 <= m
    hist = cupy.bincount(cupy.minimum(sup, kcap), minlength=kcap + 1)
    at_least = cupy.cumsum(hist[::-1])[::-1]          # [s]: supports >= s, for s <= kcap
    k = cupy.arange(2, kcap + 1, dtype=cupy.int64)
    need = k * (k - 1) // 2
    ok = (need <= m) & (at_least[k - 2] >= need)
    return int(cupy.where(ok, k, 2).max())


def _truss_problem(view: AdjacencyView):
    und = symmetrized(view)
    index = EdgeIndex.build(und)
    entry_map = index.map_entries(view) if view.directed else None
    return index, entry_map


def _input_edges(view, index, entry_map):
    if entry_map is None:
        return index.esrc, index.edst
    return edge_list(view)


def _peeler(index: EdgeIndex, method: str):
    """The peeling of ``method``: delta on the device (DEVICE_PEEL) or a round at a time."""
    if method == "delta" and DEVICE_PEEL:
        return _DevicePeel(index)
    return _Peeler(index, method)


def truss_numbers(view: AdjacencyView, method: str = "delta"):
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    index, entry_map = _truss_problem(view)
    truss = _peeler(index, method).decompose()
    return _per_input_edge(entry_map, truss)


def truss_numbers_and_rounds(view: AdjacencyView):
    """Truss numbers of an undirected GPU ``view`` (int32 CuPy (E,), aligned with its edges
    like :func:`truss_numbers`) and the peeling round of every edge (int32 CuPy (E,), rounds
    numbered over the whole device peeling): in the order of (truss number, round), every edge
    lies in at most ``truss - 2`` triangles whose other two edges come later, ties in any order
    (an edge removed in round r had fewer than its level's threshold of triangles with edges
    alive at the start of round r). The GPU dynamic truss keeps this order (its k-order)."""
    index, entry_map = _truss_problem(view)
    if entry_map is not None:
        raise ValueError("truss_numbers_and_rounds expects an undirected graph")
    peel = _DevicePeel(index)
    return peel.decompose(), peel.gone


def k_truss(view: AdjacencyView, k: int, method: str = "delta"):
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    k = int(k)
    index, entry_map = _truss_problem(view)
    if index.num_edges:
        state = _peeler(index, method).one_k(k)
    else:
        state = cupy.ones(0, dtype=cupy.uint8)
    keep = _per_input_edge(entry_map, state, fill=0) == ALIVE
    src, dst = _input_edges(view, index, entry_map)
    return src[keep], dst[keep]


def max_truss(view: AdjacencyView, method: str = "delta"):
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    index, entry_map = _truss_problem(view)
    peeler = _peeler(index, method)
    kmax = peeler.max_k()
    PEEL_STATS.clear()
    PEEL_STATS.update(peeler.stats())
    if kmax == 0:
        z = cupy.empty(0, dtype=cupy.int32)
        return 0, z, z.copy()
    state = peeler.state() if isinstance(peeler, _DevicePeel) else peeler.state
    keep = _per_input_edge(entry_map, state, fill=0) == ALIVE
    src, dst = _input_edges(view, index, entry_map)
    return kmax, src[keep], dst[keep]
