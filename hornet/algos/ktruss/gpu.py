"""GPU k-truss (CuPy + CUDA C++, kernels in ``ktruss.cu``).

Support by the triangle kernels (:mod:`hornet.algos.triangles.gpu`), then peeling with the
delta algorithm (support decremented by triangle subtraction, Green et al. 2017) or by
recounting (``"iterative"``), on a contiguous CSR with a per-edge state that is compacted when
half of it is dead; a round is two launches and one read of the number of edges it leaves to
peel. Every input is peeled this way (the CPU version peels a copy of a hornet.Graph with
``delete_edges``). ``max_truss`` bisects over k from checkpoints instead of peeling level by
level: O(log k_max) peelings, each from the last non-empty truss.
"""
from __future__ import annotations

import os

import copy
import numpy as np

from hornet.adjacency import AdjacencyView
from hornet.core.cuda import cupy, i64, launch
from ..gpu_arrays import address, dummy, kernels
from ..triangles.gpu import count_oriented, EdgeIndex, orient, _per_input_edge
from ..views_gpu import edge_list, symmetrized

_fn = kernels(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ktruss.cu"))


DEAD, ALIVE, GOING = 0, 1, 2
METHODS = ("delta", "iterative")
TRUSS_WARPS = 8192           # warps a peeling round aims to keep busy (about what a large GPU runs at once)
TRUSS_MAX_PARTS = 16         # at most this many warps share one removed edge


#: counters of the last max_truss call (peeling rounds, support recounts, bisection tests)
PEEL_STATS: dict = {}


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
            total = int(self.ind.shape[0])
            # pos: exclusive scan of the keep flags with the total last; kept entry t moves
            # to pos[t], so rows stay in order and row v starts at pos[indptr[v]]
            pos = cupy.zeros(total + 1, dtype=cupy.int64)
            pos[1:] = cupy.cumsum(state[self.eid] == ALIVE, dtype=cupy.int64)
            kept = 2 * self.alive
            ind = cupy.empty(kept, dtype=cupy.int32)
            eid = cupy.empty(kept, dtype=cupy.int64)
            launch(_fn("truss_compact"), total, (self.ind, self.eid, pos, i64(total),
                                                 i64(kept), ind, eid))
            self.ind, self.eid = ind, eid
            self._pointers(pos[self.indptr])
            self.stored = self.alive


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


def _truss_bound(sup) -> int:
    """An upper bound of k_max from the supports: a k-truss holds at least k(k - 1) / 2
    edges (k vertices of degree k - 1 at least), each with support >= k - 2, so k_max is at
    most the largest k with k(k - 1) / 2 supports >= k - 2."""
    m = int(sup.shape[0])
    if m == 0:
        return 2
    desc = cupy.sort(sup)[::-1]
    kmax = int((1 + (1 + 8 * m) ** 0.5) / 2) + 1        # k(k - 1) / 2 <= m
    k = cupy.arange(2, kmax + 1, dtype=cupy.int64)
    need = k * (k - 1) // 2
    ok = (need <= m) & (desc[cupy.minimum(need, m) - 1] >= k - 2)
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


def truss_numbers(view: AdjacencyView, method: str = "delta"):
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    index, entry_map = _truss_problem(view)
    truss = _Peeler(index, method).decompose()
    return _per_input_edge(entry_map, truss)


def k_truss(view: AdjacencyView, k: int, method: str = "delta"):
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    k = int(k)
    index, entry_map = _truss_problem(view)
    if index.num_edges:
        state = _Peeler(index, method).one_k(k)
    else:
        state = cupy.ones(0, dtype=cupy.uint8)
    keep = _per_input_edge(entry_map, state, fill=0) == ALIVE
    src, dst = _input_edges(view, index, entry_map)
    return src[keep], dst[keep]


def max_truss(view: AdjacencyView, method: str = "delta"):
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    index, entry_map = _truss_problem(view)
    peeler = _Peeler(index, method)
    kmax = peeler.max_k()
    PEEL_STATS.update(rounds=peeler.rounds, recounts=peeler.recounts, tests=peeler.tests)
    if kmax == 0:
        z = cupy.empty(0, dtype=cupy.int32)
        return 0, z, z.copy()
    keep = _per_input_edge(entry_map, peeler.state, fill=0) == ALIVE
    src, dst = _input_edges(view, index, entry_map)
    return kmax, src[keep], dst[keep]
