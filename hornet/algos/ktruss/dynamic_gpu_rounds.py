"""Host-driven rounds of :class:`~hornet.algos.ktruss.dynamic_gpu.GpuDynamicTruss`: one launch
per phase and a read of the counters between rounds, instead of ``ko_scan``'s single
cooperative launch (the deletion's descent on a large graph, ``INSERT_BY_RAISE`` with a
host-driven raise, ``DEVICE_SCAN_INSERT = False``). The constants and helpers are the module
:mod:`.dynamic_gpu`'s, read when called."""
from __future__ import annotations

import time

import numpy as np

from .ko_launch import (C_ALL, C_EVAL, C_FELL, C_HEADN, C_NEWC, C_NEXT, C_RAISED, C_TAIL,
                        C_TOUCHED, PUSH_PARTS, WARP, _fn, _parts)

__all__ = ["HostRounds"]


#: the host-driven descent's h-index on a worklist of at least HINDEX_SPLIT_MIN edges: a warp
#: per edge whose shorter list has at most HINDEX_LIGHT_MAX elements (eight edges a block
#: instead of one), a block per other edge
HINDEX_SPLIT_MIN = 1024
HINDEX_LIGHT_MAX = 256
#: True: the host-driven descent keeps a count per edge (``DtKept`` in ``ko_descent.cuh``): the
#: h-index phase leaves each edge a lower bound of its triangles at its level, a neighbour's
#: fall that takes one of them lowers it, and an edge is counted again only when it drops
#: below the level's need; False: every such push lists the edge again (a hub edge that keeps
#: its level is then counted again in every round that lowers a neighbour).
DESCENT_KEPT_COUNTS = True
#: the h-index phase's enumeration of an edge that keeps its level stops at (level - 2) x (1 +
#: DESCENT_SLACK_SIXTEENTHS / 16) + DESCENT_SLACK triangles (room for the difference in losses
#: before it is counted again); DESCENT_SLACK -1: never (the count is exact)
DESCENT_SLACK = 16
DESCENT_SLACK_SIXTEENTHS = 0
#: True: the host-driven peeling keeps a surviving member's count (``KoKept``, ``ko_peel.cuh``),
#: counting it again only when it drops below k - 1; counts stop at k - 1 + PEEL_SLACK (-1:
#: never). False: every member that lost a triangle is counted again.
PEEL_KEPT_COUNTS = True
PEEL_SLACK = 16
#: the host-driven peeling's counters in ko_scan's words (PC_* in ko_peel.cuh)
PC_REM, PC_NEXT, PC_PEELED = 0, 2, 4


class HostRounds:
    """The host-driven methods (a base of ``GpuDynamicTruss``: its state and its ``_read``)."""

    def _descend(self, n: int, tstamp, fstamp, deadline) -> bool:
        """The h-index descent from the worklist ``_la[:n]`` (distinct slots) to its fixed
        point, one launch per phase (the h-index: a block per edge, or, on a worklist of
        :data:`HINDEX_SPLIT_MIN` edges or more, a warp per edge whose shorter
        list has at most :data:`HINDEX_LIGHT_MAX` elements and a block per
        other edge); every lowered edge goes once to ``_fallen`` (``_fell == fstamp``, count
        ``C_FELL``). Returns False when the deadline passed (the values are then bounds, not
        final)."""
        from hornet.core.cuda import BLOCK, _max_grid, i64, launch
        deg, ptr = self._view()
        t = self._table
        truss = t.columns["truss"]
        cur, nxt = self._la, self._lb
        hindex, apply, push = _fn("dt_hindex_block"), _fn("dt_apply"), _fn("dt_push")
        split, heavy = _fn("dt_hindex_split"), _fn("dt_hindex_heavy")
        full_grid = (int(_max_grid()),)
        null = np.uint64(0)
        if DESCENT_KEPT_COUNTS:
            # (the counts are valid where valid == fstamp: this update's)
            newcnt = self._newcnt
            slack = np.int32(-1 if DESCENT_SLACK < 0 else
                             min(DESCENT_SLACK, 0xffff) | DESCENT_SLACK_SIXTEENTHS << 16)
            kept = (self._dcnt, self._dvalid, fstamp, self._lowr)
        else:
            newcnt, slack = null, np.int32(0)
            kept = (null, null, np.int32(0), null)
        while n:
            stamp = self._tick()
            head = (deg, ptr, t.keys, np.int32(t.shift), truss)
            if n >= HINDEX_SPLIT_MIN:
                # a warp per edge of short lists, a block per edge of the others
                launch(split, n, head + (cur, i64(n), self._newval, self._touched, tstamp,
                                         self._ctr, self._cand, self._front2,
                                         np.int32(HINDEX_LIGHT_MAX), newcnt, slack),
                       threads_per_item=WARP)
                heavy(full_grid, (BLOCK,), head + (self._cand, self._front2, self._newval,
                                                   self._touched, tstamp, self._ctr, newcnt,
                                                   slack))
            else:
                launch(hindex, n, head + (cur, i64(n), self._newval, self._touched, tstamp,
                                          self._ctr, newcnt, slack), threads_per_item=BLOCK)
            launch(apply, n, (cur, i64(n), self._newval, truss, self._low, self._low_old, nxt,
                              self._mark, stamp, self._ctr, self._fell, fstamp, self._fallen,
                              newcnt) + kept[:2] + (kept[2], kept[3]))
            parts = _parts(n)
            launch(push, n * int(parts), (deg, ptr, t.keys, np.int32(t.shift), truss,
                                          self._low, self._low_old, i64(n), nxt, self._mark,
                                          stamp, self._ctr, parts) + kept,
                   threads_per_item=WARP)
            n = int(self._read()[C_NEXT])
            self._rounds += 1
            cur, nxt = nxt, cur
            if n and time.perf_counter() > deadline:
                return False
        return True

    def _insert_raise(self, slots) -> None:
        """Raise the numbers after an insertion batch (new edges in the table, ``slots``).

        1. The new edges go first in level 2. Rounds over a list (the new edges first): an
           edge with more than t - 2 triangles whose other edges come after it in the order
           (truss, rank) moves to the start of the lowest level t' where at most t' - 2
           triangles have both other edges at t' or above (``kr_raise_value``,
           ``kr_apply``); the edges it passed that share a triangle with it, the third edge
           after them, and the edges raised together form the next list (``kr_push``).
           Levels are handled together; an edge may move several levels in one step. When
           the list is empty every edge has at most t - 2 later triangles, so the order is
           a k-order of the new graph and its numbers are upper bounds of the truss numbers
           (the first edge of a k-truss in the order has k - 2 later triangles, hence a
           number of k or more, and so have the edges after it).
        2. The h-index descent (as after a deletion) from the raised edges lowers the
           numbers to the truss numbers (the unraised edges keep theirs: old numbers are
           lower bounds after an insertion); the edges it lowered go to the end of their
           level in peeling order, which keeps the k-order.
        """
        from hornet.core.cuda import BLOCK, i64, launch
        cp = self._cp
        t = self._table
        b = int(slots.shape[0])
        deadline, max_region, tstamp = self._new_edges_first(slots)
        truss, rank = t.columns["truss"], t.columns["rank"]
        cur, nxt = self._front, self._front2
        cur[:b] = slots.astype(cp.int32)
        deg, ptr = self._view()
        keys, shift = t.keys, np.int32(t.shift)
        state = self._state(tstamp)
        no_member, rstamp = self._tick(), self._tick()
        head = self._head
        count, value = _fn("ko_count"), _fn("kr_raise_value")
        apply, push = _fn("kr_apply"), _fn("kr_push")
        n = b
        while n:
            stamp = self._tick()
            parts = _parts(n)
            launch(count, n * int(parts), state + (cur, i64(n), parts, np.int32(-1),
                                                   self._member, no_member, np.int32(-1),
                                                   np.int32(1), self._cnt),
                   threads_per_item=WARP)
            launch(value, n, (deg, ptr, keys, shift, truss, cur, i64(n), self._cnt,
                              self._newval, self._touched, tstamp, self._ctr),
                   threads_per_item=BLOCK)
            launch(apply, n, (cur, i64(n), self._newval, truss, rank, i64(head), self._low,
                              self._low_old, self._rank_old, nxt, self._mark, stamp,
                              self._region, self._seen, rstamp, self._ctr))
            launch(push, n * int(parts), (deg, ptr, keys, shift, truss, rank, self._low,
                                          self._low_old, self._rank_old, i64(n), nxt,
                                          self._mark, stamp, self._ctr, parts),
                   threads_per_item=WARP)
            c = self._read()
            self._rounds += 1
            n, raised = int(c[C_NEXT]), int(c[C_RAISED])
            self._head = head - int(c[C_HEADN])
            cur, nxt = nxt, cur
            if n and (raised > max_region or time.perf_counter() > deadline):
                return self._fallback(int(c[C_TOUCHED]))
        raise_rounds = self._rounds
        fstamp = self._tick()
        self._la[:raised] = self._region[:raised]
        done = self._descend(raised, tstamp, fstamp, deadline)
        if done:
            # (the host's copy of the counters is current: every phase ends with its read)
            nf = int(self._ctr_host[C_FELL])
            done = self._peel(self._fallen, nf, self._fell, fstamp, tstamp, deadline,
                              to_empty=True) >= 0
        touched = int(self._ctr_host[C_TOUCHED])
        self._tail += int(self._ctr_host[C_TAIL])
        if not done:
            return self._fallback(touched)
        self.stats.update(region=touched, rounds=self._rounds, raise_rounds=raise_rounds,
                          raised=raised)

    def _scan_rounds(self, ns: int, tstamp, deadline, max_region, extras=None) -> bool:
        """The insertion scan from the seeds ``_la[:ns]`` at level 2 (with ``extras``,
        ``(slots, levels)`` int32 sorted by level: from those instead, each put in at its
        level, lowest first), one launch per phase and the host reading the counters between
        rounds. False: stopped early."""
        from hornet.core.cuda import BLOCK, _max_grid, i64, launch
        state = self._state(tstamp)
        count, decide = _fn("ko_count"), _fn("ko_decide")
        push, raise_ = _fn("ko_push"), _fn("ko_raise")
        full_grid = (int(_max_grid()),)
        seeds = self._la
        k = 2
        if extras is not None:
            ext, levels = extras[0], self._cp.asnumpy(extras[1])
            k = int(levels[0])
            ns = self._add_extras(ext, levels, k, 0)
        while ns:
            mstamp = self._tick()
            self._ctr[C_ALL] = 0
            self._ctr[C_NEWC] = 0
            cur, nxt, n, slot = seeds, self._front, ns, 0
            while n:                               # the scan of level k: candidates
                pstamp = self._tick()
                parts = _parts(n)
                launch(count, n * int(parts), state + (cur, i64(n), parts, np.int32(k),
                                                       self._member, mstamp, np.int32(-1),
                                                       np.int32(1), self._cnt),
                       threads_per_item=WARP)
                launch(decide, n, state + (cur, i64(n), np.int32(k), mstamp, self._cnt,
                                           self._cand, self._region, np.int32(slot)))
                push(full_grid, (BLOCK,), state + (self._cand, np.int32(slot), np.int32(k),
                                                   mstamp, pstamp, nxt,
                                                   np.int32(PUSH_PARTS)))
                c = self._read()
                self._rounds += 1
                n, slot = int(c[C_EVAL]), 1 - slot
                cur, nxt = nxt, (self._front2 if nxt is self._front else self._front)
                if int(c[C_ALL]) > max_region or time.perf_counter() > deadline:
                    return False
            nall = int(c[C_ALL])
            ns = self._peel(self._region, nall, self._member, mstamp, tstamp, deadline,
                            to_empty=False)
            if ns < 0:
                return False
            if ns:                                 # the survivors rise: next level's seeds
                launch(raise_, ns, state + (self._lb, i64(ns), np.int32(k),
                                            i64(self._head - ns + 1), seeds))
                self._head -= ns
            k_next = k + 1
            if extras is not None:                 # and that level's extras
                if ns == 0:                        # (none rose: the next level with extras)
                    e = int(np.searchsorted(levels, k + 1))
                    k_next = int(levels[e]) if e < levels.shape[0] else k + 1
                ns += self._add_extras(ext, levels, k_next, ns)
            k = k_next
            self._levels += 1
        self._tail += int(self._read()[C_TAIL])
        return True

    def _peel(self, members, n: int, member, mstamp, tstamp, deadline, *,
              to_empty: bool) -> int:
        """Peeling of ``members[:n]`` (distinct slots marked ``member == mstamp``, each at
        its level k = truss; not ``_lb``, ``_front``, ``_front2`` nor
        ``_cand``) from a worklist (``ko_peel.cuh``), one read of the counters a round: a
        round peels the listed members with fewer than k - 1 triangles whose other edges are
        above k or live members, ranks them at the end of their level (from ``tail``), and
        lists the live members that lost a triangle to them for the next round (the first
        round lists every member; a round that peeled at least as many as stay live, all of
        those). Ends when a round peels nothing: the survivors are left in
        ``_lb[:returned]``. Returns -1 when the deadline passed, or, with ``to_empty`` (the
        members' numbers are exact, so all must go), when edges survive."""
        import cupy
        from hornet.core.cuda import BLOCK, _max_grid, i64, launch
        if n == 0:
            return 0
        state = self._state(tstamp)
        gstamp, mstamp = self._tick(), np.int32(mstamp)
        pc, pch = self._ks, self._ks_host       # (ko_scan's words: unused by these rounds)
        cupy.cuda.runtime.memsetAsync(pc.data.ptr, 0, 8 * 8, cupy.cuda.get_current_stream().ptr)
        cur, nxt = members, self._front
        peel, after = _fn("ko_peel_round"), _fn("ko_peel_next")
        full_grid = (int(_max_grid()),)
        # (kept counts valid where _dvalid == gstamp: this peeling's)
        kept = ((self._dcnt, self._dvalid, gstamp) if PEEL_KEPT_COUNTS else
                (np.uint64(0), np.uint64(0), np.int32(0)))
        slack = np.int32(PEEL_SLACK if PEEL_KEPT_COUNTS else 0)
        m, parity = n, 0
        while True:
            launch(peel, m * int(_parts(m)), state + (cur, i64(m), member, mstamp, gstamp,
                                                      self._cnt, i64(self._tail), self._cand,
                                                      pc, np.int32(parity)) + kept + (slack,),
                   threads_per_item=WARP)
            after(full_grid, (BLOCK,), state + (members, i64(n), self._cand, member, mstamp,
                                                gstamp, self._tick(), nxt, pc,
                                                np.int32(parity)) + kept)
            self._read()
            self._rounds += 1
            self._peel_rounds += 1
            removed, peeled = int(pch[PC_REM + parity]), int(pch[PC_PEELED])
            m = int(pch[PC_NEXT + 1 - parity])
            if removed == 0 or peeled == n or m == 0:
                break
            if time.perf_counter() > deadline:
                return -1
            parity = 1 - parity
            cur, nxt = nxt, (self._front2 if nxt is self._front else self._front)
        left = n - peeled
        if to_empty or left == 0:
            return -1 if left else 0
        launch(_fn("ko_peel_live"), n, state + (members, i64(n), gstamp, self._lb, pc))
        return left

    def _add_extras(self, ext, levels: np.ndarray, k: int, at: int) -> int:
        """Copy the extra seeds of level ``k`` (``ext`` int32 on the device, ``levels`` their
        levels on the host, ascending) to ``_la[at:]``; returns how many."""
        lo, hi = (int(x) for x in np.searchsorted(levels, [k, k + 1]))
        if hi > lo:
            self._la[at:at + hi - lo] = ext[lo:hi]
        return hi - lo
