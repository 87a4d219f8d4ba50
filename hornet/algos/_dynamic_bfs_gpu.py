"""GPU state and update driver of :class:`hornet.algos.dynamic_bfs.DynamicBFS`.

The state lives on the device (CuPy arrays sized to the id space's capacity); an update is a
short sequence of kernels from ``dynamic_bfs.cu``, with the steps of the CPU version:
counts, marking rounds (one launch per level of the marked region), seeds (sorted once by
level with CuPy), relaxation rounds (one launch per level), repair. Host syncs: one read of
a counter per marking or relaxation level, one for the seeds' levels, one for the statistics
at the end. Lists are appended through atomic counters; kernels over lists whose length only
the device knows read it from device memory (grid-stride loops), so no count has to come to
the host first.
"""
from __future__ import annotations

import os

import numpy as np

from hornet.memory.gpu_copy import cupy, function, i64, launch

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dynamic_bfs.cu")
#: items that make a launch use the whole grid (lists whose length only the device knows)
_WHOLE_GRID = 1 << 40
_CHANGED, _SEEDS, _SCANNED, _ORPHANS, _FRONT_A, _FRONT_B = range(6)


def _fn(name: str):
    return function(_CU, name)


class GPUState:
    """Device arrays of the state: level, cnt, old, flag, parent (int32, capacity) and the
    scratch lists (changed, two frontiers, orphans)."""

    def __init__(self, owner, n: int):
        self.owner = owner
        self.n = 0
        self.cap = 0
        self.level = None
        self.stats = np.zeros(5, np.int64)
        self.counters = cupy.zeros(8, dtype=cupy.uint64)
        self._grow(max(n, 1))
        self.n = n
        self._rebuild(n)

    def _grow(self, cap: int) -> None:
        old_cap = self.cap

        def grown(a, fill):
            b = cupy.full(cap, fill, dtype=cupy.int32)
            if a is not None:
                b[:old_cap] = a[:old_cap]
            return b

        self.level = grown(self.level, -1)
        self.cnt = grown(getattr(self, "cnt", None), 0)
        self.flag = grown(getattr(self, "flag", None), 0)
        self.old = cupy.empty(cap, dtype=cupy.int32)
        self.parent = grown(getattr(self, "parent", None), -1) if self.owner.want_parents \
            else cupy.full(1, -1, dtype=cupy.int32)
        self.changed = cupy.empty(cap, dtype=cupy.int32)
        self.front = [cupy.empty(cap, dtype=cupy.int32), cupy.empty(cap, dtype=cupy.int32)]
        self.orphans = cupy.empty(cap, dtype=cupy.int32)
        self.cap = cap

    def cover(self, n: int) -> None:
        """Extend the state to ids < n (new vertices unreached; the source on level 0)."""
        if n <= self.n:
            return
        if n > self.cap:
            self._grow(max(n, 2 * self.cap))
        src = self.owner.source
        if self.n <= src < n:
            self.level[src] = 0
        self.n = n

    def counts(self):
        """Parent counts (int32 (capacity,); for checks)."""
        return self.cnt

    def _rebuild(self, n: int) -> None:
        from .bfs import bfs
        owner = self.owner
        g = owner.graph
        if owner.source < n:
            out = bfs(g, owner.source, return_parents=owner.want_parents,
                      reverse=owner._reverse)
            lv, par = out if owner.want_parents else (out, None)
            self.level[:n] = lv
            if par is not None:
                self.parent[:n] = par
        view = g.adjacency(properties=False)
        deg, ptr = _arrays(view)
        launch(_fn("dbfs_initial_counts"), n, (deg, ptr, i64(n), self.level, self.cnt),
               threads_per_item=32)

    def run(self, dels, ins) -> None:
        owner = self.owner
        und = np.int32(0 if owner.directed else 1)
        mult = 1 if owner.directed else 2
        view = owner.graph.adjacency(properties=False)
        deg, ptr = _arrays(view)
        if owner._reverse is None:
            ideg, iptr = deg, ptr
        else:
            ideg, iptr = _arrays(owner._reverse.adjacency(properties=False))
        empty = cupy.empty(0, dtype=cupy.int32)
        ds, dd = (_i32(dels[0]), _i32(dels[1])) if dels is not None else (empty, empty)
        is_, id_ = (_i32(ins[0]), _i32(ins[1])) if ins is not None else (empty, empty)
        nd = ds.shape[0] * mult
        ni = is_.shape[0] * mult
        level, cnt, flag, old, parent = self.level, self.cnt, self.flag, self.old, self.parent
        changed, counters = self.changed, self.counters
        wp = np.int32(1 if owner.want_parents else 0)
        counters.fill(0)
        # 1. counts at the old levels
        launch(_fn("dbfs_counts"), nd + ni, (ds, dd, i64(nd), is_, id_, i64(ni), und, level, cnt))
        # 2. marking rounds
        nm = 0
        if nd:
            launch(_fn("dbfs_candidates"), nd, (ds, dd, i64(nd), und, level, cnt, flag, old,
                                                changed, counters))
            lo, hi = 0, int(counters[_CHANGED].get())
            while lo < hi:
                launch(_fn("dbfs_mark"), hi - lo, (deg, ptr, level, cnt, flag, old, changed,
                                                   i64(lo), i64(hi), counters),
                       threads_per_item=32)
                lo, hi = hi, int(counters[_CHANGED].get())
            nm = hi
        # 3. seeds
        seed_key = cupy.empty(nm + ni, dtype=cupy.uint64)
        seed_parent = cupy.empty(nm + ni, dtype=cupy.int32)
        if nm:
            launch(_fn("dbfs_reset"), nm, (changed, i64(nm), level, cnt, parent, wp))
            launch(_fn("dbfs_marked_seeds"), nm, (ideg, iptr, level, changed, i64(nm), seed_key,
                                                  seed_parent, counters), threads_per_item=32)
        if ni:
            launch(_fn("dbfs_insert_seeds"), ni, (is_, id_, i64(ni), und, level, seed_key,
                                                  seed_parent, counters))
        ns = int(counters[_SEEDS].get())
        levels_run = 0
        if ns:
            order = cupy.argsort(seed_key[:ns])
            keys = seed_key[:ns][order]
            parents = seed_parent[:ns][order]
            launch(_fn("dbfs_seed_flags"), ns, (keys, i64(ns), level, flag, old, changed,
                                                counters))
            launch(_fn("dbfs_seed_apply"), ns, (keys, i64(ns), level))
            if owner.want_parents:
                launch(_fn("dbfs_seed_parents"), ns, (keys, parents, i64(ns), level, parent))
            t = (keys >> 32).astype(cupy.int64)
            first = cupy.flatnonzero(cupy.concatenate([cupy.ones(1, bool), t[1:] != t[:-1]]))
            seed_levels = t[first].get().tolist()
            seed_start = first.get().tolist() + [ns]
            levels_run = self._relax(deg, ptr, keys, seed_levels, seed_start, wp)
        # 5. repair
        if wp and nd:
            launch(_fn("dbfs_deleted_orphans"), nd, (ds, dd, i64(nd), und, level, parent, flag,
                                                     self.orphans, counters))
        nchanged_bound = int(counters[_CHANGED].get())
        cnt_ptr = counters[_CHANGED:_CHANGED + 1]
        orph_ptr = counters[_ORPHANS:_ORPHANS + 1]
        launch(_fn("dbfs_repair"), nchanged_bound, (
            deg, ptr, ideg, iptr, und, level, cnt, parent, wp, flag, old, changed, cnt_ptr,
            self.orphans, counters), threads_per_item=32)
        if wp:
            launch(_fn("dbfs_fix_orphans"), _WHOLE_GRID, (ideg, iptr, level, parent,
                                                          self.orphans, orph_ptr, counters),
                   threads_per_item=32)
        launch(_fn("dbfs_clear_flags"), _WHOLE_GRID, (changed, cnt_ptr, self.orphans, orph_ptr,
                                                      flag))
        c = counters.get()
        self.stats[:] = (int(c[_CHANGED]), nm, ns, int(c[_SCANNED]), levels_run)

    def _relax(self, deg, ptr, keys, seed_levels, seed_start, wp) -> int:
        """Level-synchronous relaxation from the sorted seeds; returns the levels run."""
        counters = self.counters
        a, b = 0, 1                  # frontier buffers / their counters _FRONT_A + a, + b
        known = 0                    # entries already in the current frontier
        si = 0
        cur = 0
        rounds = 0
        while True:
            if known == 0:
                if si == len(seed_levels):
                    break
                cur = seed_levels[si]
            extra = 0
            if si < len(seed_levels) and seed_levels[si] == cur:
                lo, hi = seed_start[si], seed_start[si + 1]
                launch(_fn("dbfs_push_seeds"), hi - lo, (
                    keys, i64(lo), i64(hi), self.level, self.front[a],
                    counters[_FRONT_A + a:_FRONT_A + a + 1]))
                extra = hi - lo
                si += 1
            counters[_FRONT_A + b] = 0
            launch(_fn("dbfs_relax"), known + extra, (
                deg, ptr, self.level, self.parent, wp, self.flag, self.old, self.changed,
                self.front[a], counters[_FRONT_A + a:_FRONT_A + a + 1], np.int32(cur),
                self.front[b], counters[_FRONT_A + b:_FRONT_A + b + 1], counters),
                threads_per_item=32)
            known = int(counters[_FRONT_A + b].get())
            a, b = b, a
            cur += 1
            rounds += 1
        return rounds


def _i32(a):
    return cupy.ascontiguousarray(cupy.asarray(a).astype(cupy.int32, copy=False))


def _arrays(view):
    """(degree int32, edge_ptr int64) of a view, contiguous on the device."""
    deg = cupy.ascontiguousarray(view.degree.astype(cupy.int32, copy=False))
    ptr = cupy.ascontiguousarray(view.edge_ptr.astype(cupy.int64, copy=False))
    return deg, ptr
