"""The GPU version of :class:`~hornet.algos.ktruss.dynamic.DynamicTruss` (kernels in
``dynamic_gpu.cu``).

State on the device: the truss number of every edge in a GPU
:class:`~hornet.algos.edge_table.EdgeTable` keyed by the edge, and the per-edge support kept
by a GPU :class:`~hornet.algos.triangles.dynamic.DynamicTriangleCount`. Slot-indexed stamp
arrays and slot lists (int32) are the scratch of the updates; a round of any phase is a few
launches and one read of an 8-word counter array, never a per-edge host step.

Truss numbers t are the greatest fixed point of the h-index operator H(f)(e) = max k such
that k - 2 triangles of e have min(f(other two)) >= k. From a bound U, the descent
f <- min(f, H(f)) (synchronous rounds over a worklist, :meth:`GpuDynamicTruss._descend`)
ends at the greatest fixed point of min(U, H) (Sariyuce et al., VLDB 2018); when U >= t it
is t.

Deletions: the numbers before the batch are an upper bound. The worklist starts with the
surviving edges that lost a triangle counted at their level (``dt_lost_seeds``, on the graph
before the batch); an edge that falls puts the triangle neighbours whose count it changed on
the next worklist.

Insertions, in steps (the support update gives the new edges' supports s first):
f_0 = the old numbers, new edges at 2; step i computes f_{i+1} = the greatest fixed point of
min(f_i + 1, H) (step 0: min(s + 2, H) on the new edges), so every edge rises by at most one
a step (any other edge's rise comes in a later step) and f_i <= t throughout; when a step
raises nothing, f_i = t (with U = f + 1 nothing can sit at its bound, and a fixed point of
min(U, H) below t always leaves an edge at its bound). An edge that rises in step i is joined,
through triangles of the new level, by edges at its own old level that rise too, to an edge
that sat at its bound in step i - 1 (step 0: to a new edge): otherwise raising that set would
give a larger fixed point of the step before (Huang et al., SIGMOD 2014, per step). So a step
walks from those edges (``dt_expand``: same level, third edge at least that level; from a new
edge, any level up to s + 1), keeping only edges with enough triangles to rise
(``dt_admit``), raises the walked region by one and descends it with everything else fixed.
The steps end after the largest rise of an old edge, plus one. Before step 0 the new edges'
bound s + 2 is lowered to the h-index of their triangles with every old edge at t + 1 (a
bound of step 0's fixed point too), so a new edge walks only the levels it can reach.

Kernels run one warp per edge (an intersection of the endpoints' lists); the kernels that
only enumerate (``dt_push``, ``dt_expand``, ``dt_lost_seeds``) give a launch of few edges
several warps each, and the counting ones stop as soon as the edge's level is decided.

The static GPU decomposition finishes a batch larger than ``batch_share`` of the edges, and
one whose region passes ``fallback_share`` of the edges or whose update runs longer than
2 x ``fallback_share`` x the last static decomposition's time (``stats['path']`` says which).
"""
from __future__ import annotations

import os
import time

import numpy as np

from ..batch_adjacency import batch_adjacency
from ..edge_table import EdgeTable
from ..triangles import DynamicTriangleCount
from ..underlying import undirected_change, undirected_copy
from .static import truss_numbers

__all__ = ["GpuDynamicTruss"]

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dynamic_gpu.cu")
#: counter words (see dynamic_gpu.cu)
C_LOW, C_NEXT, C_TOUCHED, C_CAND, C_FRONT, C_REGION = range(6)
#: threads of one warp: the triangle kernels run one warp per edge
WARP = 32
#: synchronous rounds of the h-index that tighten the new edges' bounds before a walk
NEW_BOUND_ROUNDS = 2
#: warps a launch of few edges aims to keep busy, and the most warps that share one edge
TARGET_WARPS = 8192
MAX_PARTS = 16


def _parts(n: int) -> np.int32:
    """Warps per edge for a launch over ``n`` edges: enough for a few edges (a hub's long
    list) to fill the GPU."""
    return np.int32(min(MAX_PARTS, max(1, -(-TARGET_WARPS // max(int(n), 1)))))


def _fn(name: str):
    from hornet.core.cuda import function
    return function(_CU, name)


class GpuDynamicTruss:
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
        self._ctr = cupy.zeros(8, dtype=cupy.uint64)
        self._ctr_host = cupyx.empty_pinned(8, dtype=np.uint64)
        self._recompute()

    # ------------------------------------------------------------------ state
    def _recompute(self) -> None:
        """Static GPU decomposition of the whole graph, scattered into the table (timed: its
        time bounds what an update may spend)."""
        cp = self._cp
        src, dst = self._und.edges(dense=True)
        cp.cuda.Device().synchronize()
        start = time.perf_counter()
        t = cp.asarray(truss_numbers(self._und)).astype(cp.int32)
        if self._table is None:
            self._table = EdgeTable("gpu", {"truss": np.int32},
                                    capacity=max(16, 2 * int(src.shape[0])))
            self._table.insert(src, dst, truss=t)
        else:
            self._table.columns["truss"][self._table.lookup(src, dst)] = t
        cp.cuda.Device().synchronize()
        self._static_seconds = time.perf_counter() - start
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
        need = len(t) + int(extra) + 16
        if need > self._list_size:
            size = max(need, self._list_size + self._list_size // 4)
            self._list_size = size
            (self._la, self._lb, self._low, self._low_old, self._newval, self._region,
             self._bound, self._cand, self._front, self._front2) = (
                cp.empty(size, dtype=cp.int32) for _ in range(10))

    def _tick(self) -> np.int32:
        self._clock += 1
        if self._clock >= (1 << 31) - 1:          # wrap: start the stamps over
            for a in (self._mark, self._seen, self._member, self._touched):
                a.fill(0)
            self._clock = 1
        return np.int32(self._clock)

    def _read(self) -> np.ndarray:
        """The counters on the host (the round's one synchronization)."""
        self._ctr.get(out=self._ctr_host)
        return self._ctr_host

    def _view(self):
        view = self._und.adjacency(properties=False)
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
        """Edges of the k-truss: ``(src, dst)`` int32 CuPy arrays, listed like ``g.edges()``."""
        t = self.truss_numbers
        keep = t >= int(k)
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
        before = self._tc.count
        self._tc.update(change)
        closed = self._tc.count != before        # one scalar read back per batch
        self._cache = None
        self._k_max = None
        src, dst = change.src, change.dst
        if self.graph.directed:
            src, dst = undirected_change(self.graph, self._und, kind, src, dst)
            if src.shape[0] == 0:
                return
        src = cp.ascontiguousarray(src.astype(cp.int32, copy=False))
        dst = cp.ascontiguousarray(dst.astype(cp.int32, copy=False))
        b = int(src.shape[0])
        self.stats["path"] = "dynamic"
        if kind == "insert":
            slots = self._table.insert_new(src, dst)
            if not closed:                       # no new triangle: nothing else moves
                self._table.columns["truss"][slots] = 2
                return
            if b > self.batch_share * len(self._table):
                self._table.columns["truss"][slots] = 2
                return self._fallback(0)
            self._insert(src, dst, slots)
        else:
            if closed and b <= self.batch_share * len(self._table):
                self._delete(src, dst)
            self._table.delete_present(src, dst)
            if closed and b > self.batch_share * len(self._table):
                self._fallback(0)

    def _fallback(self, region: int) -> None:
        self._recompute()
        self.stats.update(path="static", region=int(region))

    def _budget(self):
        """(deadline in perf_counter seconds, most region edges) of the current update."""
        share = self.fallback_share
        return (time.perf_counter() + 2.0 * share * self._static_seconds,
                share * max(len(self._table), 1))

    def _begin(self, extra: int) -> np.int32:
        """Scratch for an update of ``extra`` new edges; zeroes the counters; returns the
        update's ``touched`` stamp."""
        self._scratch(extra)
        self._ctr.fill(0)
        self._rounds = 0
        return self._tick()

    def _descend(self, n: int, member_stamp, tstamp, deadline) -> bool:
        """The h-index descent from the worklist ``_la[:n]`` (distinct slots) to its fixed
        point. With ``member_stamp`` != 0 only region edges are put back on the worklist.
        Returns False when the deadline passed (the values are then bounds, not final)."""
        from hornet.core.cuda import i64, launch
        deg, ptr = self._view()
        t = self._table
        truss = t.columns["truss"]
        cur, nxt = self._la, self._lb
        hindex, apply, push = _fn("dt_hindex"), _fn("dt_apply"), _fn("dt_push")
        while n:
            stamp = self._tick()
            launch(hindex, n, (deg, ptr, t.keys, np.int32(t.shift), truss, cur, i64(n),
                               self._newval, self._touched, tstamp, self._ctr, self._member,
                               np.int32(0), np.int32(0)), threads_per_item=WARP)
            launch(apply, n, (cur, i64(n), self._newval, truss, self._low, self._low_old, nxt,
                              self._mark, stamp, self._ctr))
            parts = _parts(n)
            launch(push, n * int(parts), (deg, ptr, t.keys, np.int32(t.shift), truss,
                                          self._low, self._low_old, i64(n), self._member,
                                          np.int32(member_stamp), nxt, self._mark, stamp,
                                          self._ctr, parts), threads_per_item=WARP)
            n = int(self._read()[C_NEXT])
            self._rounds += 1
            cur, nxt = nxt, cur
            if n and time.perf_counter() > deadline:
                return False
        return True

    def _delete(self, src, dst) -> None:
        """Lower the numbers after a deletion batch (the deleted edges still in the table)."""
        from hornet.core.cuda import i64, launch
        deadline, _ = self._budget()
        tstamp = self._begin(0)
        t = self._table
        deg, ptr = self._view()
        ba = batch_adjacency(src, dst)
        stamp = self._tick()
        nb = int(src.shape[0])
        parts = _parts(nb)
        launch(_fn("dt_lost_seeds"), nb * int(parts),
               (deg, ptr, src, dst, i64(nb), ba.keys, t.keys, np.int32(t.shift),
                t.columns["truss"], self._mark, stamp, self._la, self._ctr, parts),
               threads_per_item=WARP)
        n = int(self._read()[C_NEXT])
        done = self._descend(n, 0, tstamp, deadline)
        touched = int(self._read()[C_TOUCHED])
        if not done:                               # (the caller deletes the batch's keys)
            return self._fallback(touched)
        self.stats.update(region=touched, rounds=self._rounds)

    def _insert(self, src, dst, slots) -> None:
        """Raise the numbers after an insertion batch (new edges in the table, ``slots``)."""
        from hornet.core.cuda import BLOCK, _max_grid, i64, launch
        cp = self._cp
        t = self._table
        b = int(src.shape[0])
        deadline, max_region = self._budget()
        tstamp = self._begin(b)
        truss = t.columns["truss"]
        new = slots.astype(cp.int32)
        truss[slots] = (self._tc.support_of(src, dst) + 2).astype(cp.int32)
        deg, ptr = self._view()
        keys, shift = t.keys, np.int32(t.shift)
        expand, admit = _fn("dt_expand"), _fn("dt_admit")
        full_grid = (int(_max_grid()),)
        first = True
        ms = self._tick()
        ss = self._tick()
        launch(_fn("dt_seed"), b, (new, i64(b), self._member, ms, self._seen, ss,
                                   self._region, self._front))
        self._new_bounds(new, b, ms, tstamp)
        truss[slots] -= 1              # the walk reads a new edge as its bound minus one
        while True:
            if first:
                self._ctr[C_REGION] = b
                nf, nreg, relaxed = b, b, 1
            else:
                # the edges that sat at their bound (in _cand, marked seen): those that can
                # still rise start the walk
                self._ctr[C_FRONT] = 0
                self._ctr[C_REGION] = 0
                admit(full_grid, (BLOCK,), (deg, ptr, keys, shift, truss, self._cand,
                                            self._member, ms, self._front, self._region,
                                            self._touched, tstamp, self._ctr))
                c = self._read()
                nf, nreg, relaxed = int(c[C_FRONT]), int(c[C_REGION]), 0
            front, front2 = self._front, self._front2
            while nf:
                self._ctr[C_CAND] = 0
                self._ctr[C_FRONT] = 0
                parts = _parts(nf)
                launch(expand, nf * int(parts),
                       (deg, ptr, keys, shift, truss, front, i64(nf), np.int32(relaxed),
                        self._seen, ss, self._cand, self._ctr, parts), threads_per_item=WARP)
                admit(full_grid, (BLOCK,), (deg, ptr, keys, shift, truss, self._cand,
                                            self._member, ms, front2, self._region,
                                            self._touched, tstamp, self._ctr))
                c = self._read()
                nf, nreg, relaxed = int(c[C_FRONT]), int(c[C_REGION]), 0
                self._rounds += 1
                front, front2 = front2, front
                if nreg > max_region or time.perf_counter() > deadline:
                    return self._fallback(int(c[C_TOUCHED]))
            if nreg:
                launch(_fn("dt_raise"), nreg, (self._region, i64(nreg), truss, self._bound))
                self._la[:nreg] = self._region[:nreg]
            if not self._descend(nreg, ms, tstamp, deadline):
                return self._fallback(int(self._read()[C_TOUCHED]))
            ms = self._tick()
            ss = self._tick()
            self._ctr[C_CAND] = 0
            launch(_fn("dt_saturated"), nreg,
                   (self._region, i64(nreg), i64(b if first else 0), truss, self._bound,
                    self._cand, self._seen, ss, self._ctr))
            c = self._read()
            first = False
            if int(c[C_CAND]) == 0:
                break
        self.stats.update(region=int(c[C_TOUCHED]), rounds=self._rounds)

    def _new_bounds(self, new, b: int, ms, tstamp) -> None:
        """Tighten the new edges' bound s + 2 (in ``truss``; the new edges marked
        ``member == ms``) to the h-index of their triangles with every old edge one level
        up: step 0's fixed point lies below both. Two synchronous rounds (new edges in one
        triangle refine each other); no read back."""
        from hornet.core.cuda import i64, launch
        deg, ptr = self._view()
        t = self._table
        truss = t.columns["truss"]
        for _ in range(NEW_BOUND_ROUNDS):
            launch(_fn("dt_hindex"), b, (deg, ptr, t.keys, np.int32(t.shift), truss, new,
                                         i64(b), self._newval, self._touched, tstamp,
                                         self._ctr, self._member, ms, np.int32(1)),
                   threads_per_item=WARP)
            launch(_fn("dt_apply"), b, (new, i64(b), self._newval, truss, self._low,
                                        self._low_old, self._lb, self._mark, self._tick(),
                                        self._ctr))
