"""GPU state and update driver of :class:`hornet.algos.dynamic_bfs.DynamicBFS`.

The state lives on the device (CuPy arrays sized to the id space's capacity); an update is a
short sequence of kernels from ``dynamic_bfs.cu``, with the steps of the CPU version:
counts, marking rounds (one launch per level of the marked region), seeds (unsorted; every
relaxation round picks those of its level), relaxation rounds (one launch per level), repair.
Host syncs: one read of a counter per marking level, one for the seeds' number and level
range, one per relaxation level past the highest seed level, one for the statistics at the
end. Lists are appended through atomic counters; kernels over lists whose length only the
device knows read it from device memory (grid-stride loops over the whole grid), so no count
has to come to the host first.
"""
from __future__ import annotations

import os

import numpy as np

from hornet.memory.gpu_copy import cupy, function, i64, launch

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dynamic_bfs.cu")
#: items that make a launch use the whole grid (lists whose length only the device knows)
_WHOLE_GRID = 1 << 40
_CHANGED, _SEEDS, _SCANNED, _ORPHANS, _LOW, _HIGH = range(6)
#: counters[_ROUND0 + r % _ROUND_SLOTS]: frontier size after relaxation round r;
#: counters[_ROUND0 - 1] stays 0 (the empty frontier before the first round)
_ROUND0 = 16
_ROUND_SLOTS = 4000


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
        self.counters = cupy.zeros(_ROUND0 + _ROUND_SLOTS, dtype=cupy.uint64)
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
        self.expanded = cupy.zeros(cap, dtype=cupy.int32)
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
        ds, dd = (_i32(dels[0]), _i32(dels[1])) if dels is not None else (_EMPTY(), _EMPTY())
        is_, id_ = (_i32(ins[0]), _i32(ins[1])) if ins is not None else (_EMPTY(), _EMPTY())
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
        # 3. seeds (unsorted; their level range comes to the host with their number)
        ns = 0
        levels_run = 0
        if nm or ni:
            seed_key = cupy.empty(nm + ni, dtype=cupy.uint64)
            seed_parent = cupy.empty(nm + ni, dtype=cupy.int32)
            if nm:
                launch(_fn("dbfs_reset"), nm, (changed, i64(nm), level, cnt, parent, wp))
                launch(_fn("dbfs_marked_seeds"), nm, (ideg, iptr, level, changed, i64(nm),
                                                      seed_key, seed_parent, counters),
                       threads_per_item=32)
            if ni:
                launch(_fn("dbfs_insert_seeds"), ni, (is_, id_, i64(ni), und, level, seed_key,
                                                      seed_parent, counters))
            c = counters[:6].get()
            ns = int(c[_SEEDS])
            if ns:
                lowest, highest = 0xFFFFFFFF - int(c[_LOW]), int(c[_HIGH])
                launch(_fn("dbfs_seed_flags"), ns, (seed_key, i64(ns), level, flag, old,
                                                    changed, counters))
                launch(_fn("dbfs_seed_apply"), ns, (seed_key, i64(ns), level))
                if wp:
                    launch(_fn("dbfs_seed_parents"), ns, (seed_key, seed_parent, i64(ns),
                                                          level, parent))
                levels_run = self._relax(deg, ptr, seed_key, ns, lowest, highest, wp)
        if nm == 0 and ns == 0 and not (wp and nd):
            self.stats[:] = (0, 0, 0, int(counters[_SCANNED].get()), 0)
            return
        # 5. repair (list lengths read on the device)
        if wp and nd:
            launch(_fn("dbfs_deleted_orphans"), nd, (ds, dd, i64(nd), und, level, parent, flag,
                                                     self.orphans, counters))
        cnt_ptr = counters[_CHANGED:_CHANGED + 1]
        orph_ptr = counters[_ORPHANS:_ORPHANS + 1]
        launch(_fn("dbfs_repair"), _WHOLE_GRID, (
            deg, ptr, ideg, iptr, und, level, cnt, parent, wp, flag, old, changed, cnt_ptr,
            self.orphans, counters), threads_per_item=32)
        if wp:
            launch(_fn("dbfs_fix_orphans"), _WHOLE_GRID, (ideg, iptr, level, parent,
                                                          self.orphans, orph_ptr, counters),
                   threads_per_item=32)
        launch(_fn("dbfs_clear_flags"), _WHOLE_GRID, (changed, cnt_ptr, self.orphans, orph_ptr,
                                                      flag, self.expanded))
        c = counters[:6].get()
        self.stats[:] = (int(c[_CHANGED]), nm, ns, int(c[_SCANNED]), levels_run)

    def _relax(self, deg, ptr, seed_key, ns: int, lowest: int, highest: int, wp) -> int:
        """Level-synchronous relaxation from the seeds (levels ``lowest`` .. ``highest``);
        returns the levels run. Round r's next frontier is counted in counters[16 + r]; up to
        the highest seed level no count is read (the rounds must run anyway), after it one
        read per round tells whether the frontier died out."""
        counters = self.counters
        known = 0                    # current frontier size where known on the host
        cur = lowest
        r = 0
        while True:
            slot = _ROUND0 + r % _ROUND_SLOTS
            if r >= _ROUND_SLOTS:
                counters[slot] = 0          # reused slot
            prev = _ROUND0 - 1 if r == 0 else _ROUND0 + (r - 1) % _ROUND_SLOTS
            items = ns + (known if known is not None else _WHOLE_GRID)
            launch(_fn("dbfs_relax"), items, (
                deg, ptr, self.level, self.parent, wp, self.flag, self.old, self.changed,
                self.expanded, self.front[r & 1], counters[prev:prev + 1], seed_key, i64(ns),
                np.int32(cur), self.front[(r + 1) & 1], counters[slot:slot + 1], counters),
                threads_per_item=32)
            r += 1
            if cur >= highest:
                known = int(counters[slot].get())
                if known == 0:
                    break
            else:
                known = None
            cur += 1
        return r


_EMPTY_CACHE: list = []


def _EMPTY():
    if not _EMPTY_CACHE:
        _EMPTY_CACHE.append(cupy.empty(0, dtype=cupy.int32))
    return _EMPTY_CACHE[0]


def _i32(a):
    return cupy.ascontiguousarray(cupy.asarray(a).astype(cupy.int32, copy=False))


def _arrays(view):
    """(degree int32, edge_ptr int64) of a view, contiguous on the device."""
    deg = cupy.ascontiguousarray(view.degree.astype(cupy.int32, copy=False))
    ptr = cupy.ascontiguousarray(view.edge_ptr.astype(cupy.int64, copy=False))
    return deg, ptr
