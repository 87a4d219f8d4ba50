"""GPU state and update driver of :class:`hornet.algos.bfs.dynamic.DynamicBFS`.

The state lives on the device (CuPy arrays sized to the id space's capacity); an update is a
short sequence of kernels from ``bfs/dynamic.cu``, with the steps of the CPU version:
counts, marking rounds (one launch per level of the marked region), seeds (unsorted; every
relaxation round picks those of its level), relaxation rounds (one launch per level), repair.
Host syncs: one read of a counter per marking level, one for the seeds' number and level
range, one per relaxation level past the highest seed level (the statistics are read only when
asked for). Lists are appended through atomic counters; kernels over lists whose length only
the device knows read it from device memory (grid-stride loops, four blocks per
multiprocessor), so no count has to come to the host first.
"""
from __future__ import annotations

import os

import numpy as np

from hornet.core.cuda import cupy, function, i64, launch

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dynamic.cu")
_SMS: list = []


def _device_items(threads_per_item: int) -> int:
    """Items giving a launch four blocks per multiprocessor: for kernels over lists whose
    length only the device knows (grid-stride loops cover any length)."""
    if not _SMS:
        _SMS.append(int(cupy.cuda.Device().attributes["MultiProcessorCount"]))
    return 4 * _SMS[0] * 256 // threads_per_item


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
        self._stats = np.zeros(5, np.int64)
        self._pending = None
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
        self.old = cupy.zeros(cap, dtype=cupy.int32)          # 0 at rest (see the kernels)
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
        from .static import bfs
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
        # seeds: one per insertion at most, plus one per marked vertex (known after marking)
        seed_key = cupy.empty(max(ni, 1), dtype=cupy.uint64)
        seed_parent = cupy.empty(max(ni, 1), dtype=cupy.int32)
        # 1. counts at the old levels (a batch without deletions seeds here too)
        launch(_fn("dbfs_counts"), nd + ni, (ds, dd, i64(nd), is_, id_, i64(ni), und, level, cnt,
                                             np.int32(nd == 0), seed_key, seed_parent,
                                             counters))
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
            # 3. seeds of the marked vertices and of the insertions
            if nm:
                seed_key = cupy.empty(nm + ni, dtype=cupy.uint64)
                seed_parent = cupy.empty(nm + ni, dtype=cupy.int32)
                launch(_fn("dbfs_reset"), nm, (changed, i64(nm), level, cnt, parent, wp))
                launch(_fn("dbfs_marked_seeds"), nm, (ideg, iptr, level, changed, i64(nm),
                                                      seed_key, seed_parent, counters),
                       threads_per_item=32)
            if ni:
                launch(_fn("dbfs_insert_seeds"), ni, (is_, id_, i64(ni), und, level, seed_key,
                                                      seed_parent, counters))
        ns = 0
        levels_run = 0
        if nm or ni:
            seeds_ptr = counters[_SEEDS:_SEEDS + 1]
            launch(_fn("dbfs_seed_apply"), nm + ni, (seed_key, seeds_ptr, level, flag, old,
                                                     changed, counters))
            c = counters[:6].get()
            ns = int(c[_SEEDS])
            if ns:
                lowest, highest = 0xFFFFFFFF - int(c[_LOW]), int(c[_HIGH])
                levels_run = self._relax(deg, ptr, seed_key, seed_parent, ns, lowest, highest,
                                         wp)
        self._pending = (nm, ns, levels_run)
        if nm == 0 and ns == 0 and not (wp and nd):
            return
        # 5. repair (list lengths read on the device)
        if wp and nd:
            launch(_fn("dbfs_deleted_orphans"), nd, (ds, dd, i64(nd), und, level, parent, flag,
                                                     self.orphans, counters))
        cnt_ptr = counters[_CHANGED:_CHANGED + 1]
        orph_ptr = counters[_ORPHANS:_ORPHANS + 1]
        launch(_fn("dbfs_repair"), _device_items(32), (
            deg, ptr, ideg, iptr, und, level, cnt, parent, wp, flag, old, changed, cnt_ptr,
            self.orphans, counters), threads_per_item=32)
        if wp:
            launch(_fn("dbfs_fix_orphans"), _device_items(32), (
                ideg, iptr, level, parent, self.orphans, orph_ptr, counters),
                threads_per_item=32)
        launch(_fn("dbfs_clear_flags"), _device_items(1), (
            changed, cnt_ptr, self.orphans, orph_ptr, flag, self.expanded, old))

    def clear_stats(self) -> None:
        """The statistics of an update that changed nothing."""
        self._pending = None
        self._stats[:] = 0

    @property
    def stats(self) -> np.ndarray:
        """int64 (len(STAT_NAMES),) of the last update (its counters come from the device
        when first asked for)."""
        if self._pending is not None:
            nm, ns, levels_run = self._pending
            c = self.counters[:6].get()
            self._stats[:] = (int(c[_CHANGED]), nm, ns, int(c[_SCANNED]), levels_run)
            self._pending = None
        return self._stats

    def _relax(self, deg, ptr, seed_key, seed_parent, ns: int, lowest: int, highest: int,
               wp) -> int:
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
            items = ns + (known if known is not None else _device_items(32))
            launch(_fn("dbfs_relax"), items, (
                deg, ptr, self.level, self.parent, wp, self.flag, self.old, self.changed,
                self.expanded, self.front[r & 1], counters[prev:prev + 1], seed_key,
                seed_parent, i64(ns), np.int32(cur), self.front[(r + 1) & 1], counters[slot:slot + 1], counters),
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
