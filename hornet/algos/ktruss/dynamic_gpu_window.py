"""The insertion scan by windows of the k-order (``ko_wscan`` in ``ko_window.cuh``), for
:class:`~hornet.algos.ktruss.dynamic_gpu.GpuDynamicTruss` on large graphs.

``ko_scan``'s mode 4 finds the whole candidate set of a level before it peels a candidate. In a
large flat level (Kronecker 22: 1.18 M edges at one level, most with exactly k - 2 triangles
after them in the order) the candidates then spread through most of the level and are peeled
back. The windowed scan takes the order a window at a time (the edges of one ``rank >> (32 +
WINDOW_SHIFT)``: rounds of the static peeling, or the start or the end of a level), every
level at once, and before each window peels the candidates with the triangles that the edges
of the windows it passed no longer hold: a candidate leaves as soon as the scan has passed
enough of the edges after it that did not become candidates (as in the sequential
order-based insertion of Zhang, Yu, Zhang and Qin, ICDE 2017), and the edges after it wait
for their window instead of being made candidates by it. The kernel's comment gives the
rules and why the order stays a k-order.

A candidate peeled before window R takes a rank at the end of window R - 1 (in its last
round, ``((R << WINDOW_SHIFT) - 1) << 32 | 2^31 + d``), d from a counter kept across updates
(``_wdrop``: the ranks after every edge of that window, the earlier drops included); once it
passes :data:`WINDOW_DROP_LIMIT` the ranks are made anew by the static decomposition. The
start of a level (``_head``, decreasing) begins at -2^31 - 1, so that its ranks fill the
lower half of window -1 and the candidates peeled before window 0 come after them; once it
nears -2^32 (the end of window -1) the ranks are made anew as well.

ko_scan's control words are :mod:`.ko_launch`'s; :class:`WindowScan` is a base of
:class:`~.dynamic_gpu.GpuDynamicTruss`, whose state it uses."""
from __future__ import annotations

import time

import numpy as np

from . import ko_launch as DG
from .ko_launch import C_EXTRA, C_PLACED, _fn, _prepared, _ptr

__all__ = ["WindowScan"]

#: True: an insertion on a graph of more than WINDOW_MIN_EDGES edges runs the scan by windows
#: (``ko_wscan``); False: ``ko_scan``'s mode 4 on every graph. (Kronecker 20, 15.7 M edges, is
#: faster with mode 4: 10.7 against 19.4 ms at b = 100, 64 against 74 ms at b = 1000;
#: bench/results/dynamic_truss_gpu_flat.md)
WINDOW_SCAN = True
WINDOW_MIN_EDGES = 1 << 25
#: True: a live candidate's peeling count keeps the first window that ends one of the
#: triangles it counted (``kexp``), and a window's peeling counts again only the new
#: candidates and those whose window it passed (and those beside a peeled one); False: every
#: live candidate is counted before every window
WINDOW_KEEP_EXPIRY = True
#: True: a push within a window lists an edge counted short of k - 1 in it again only when its
#: count plus the pushes since may reach k - 1 (mode 4's kept candidate bounds, ``KoBounds``);
#: False: after every push
WINDOW_KEPT_BOUNDS = True
#: a window is the ranks of 2^WINDOW_SHIFT rounds of the static peeling (rank >> (32 +
#: WINDOW_SHIFT)): fewer, larger windows cost fewer grid barriers, and let the candidates of a
#: window spread through it before its edges' triangles are taken from them (Kronecker 22:
#: 16 rounds a window is the fastest of 1, 4, 16 and 64)
WINDOW_SHIFT = 4
#: ranks given out at the ends of windows (``_wdrop``) after which the next insertion first
#: makes the ranks anew (static decomposition): they must stay below 2^31
WINDOW_DROP_LIMIT = 1 << 30
#: the lowest start of a level (``_head``) before the ranks are made anew: head ranks must stay
#: in window -1 (above -2^32), below the ranks of the candidates peeled before window 0
HEAD_LIMIT = -(1 << 32) + (1 << 30)
#: ko_wscan's words after ko_scan's (KW_* in ko_window.cuh)
KW_DROPS, KW_WINDOWS, KW_PCOUNT, KW_EVALS, KW_PEND, KW_RISEN = 38, 39, 40, 41, 42, 43
_INT_MAX = 0x7FFFFFFF


class WindowScan:
    """The windowed insertion scan (a base of ``GpuDynamicTruss``: its state, scratch and
    ``_scan_grid``)."""

    _wdrop = 0
    _cmin = None

    def _windowed(self) -> bool:
        """Whether this insertion runs the scan by windows (:data:`WINDOW_SCAN`, a graph of
        more than :data:`WINDOW_MIN_EDGES` edges)."""
        return WINDOW_SCAN and len(self._table) > WINDOW_MIN_EDGES

    def _insert_windowed(self, tstamp, deadline: float, max_region: float, queued) -> None:
        """The scan by windows from the seeds ``_low_old[:ctr[C_EXTRA]]`` (placed by
        ``is_place`` / ``is_partners``; counted on the device): one cooperative ``ko_wscan``
        launch, ``queued()`` (the support update) issued behind it, then one read of the
        counters. Falls back to the static decomposition when it stops early (deadline,
        candidates past ``max_region``, stamps). ``stats``: ``region`` (distinct edges
        examined), ``candidates`` (made, peeled ones included), ``windows``, ``levels`` (its
        iterations), ``rounds`` / ``peel_rounds``, ``counted`` (candidates the peelings'
        first rounds counted), ``evaluated`` (edges the candidate rounds counted),
        ``pending`` (edges that waited for their window), ``risen`` (rises), ``seeds``,
        ``placed``."""
        from hornet.core.cuda import BLOCK
        if self._window_ranks_due():          # (the static decomposition makes them anew)
            queued()
            return self._fallback(0)
        cp = self._cp
        t = self._table
        n = self._list_size
        if self._cmin is None or self._cmin.shape[0] != n:
            self._cmin = cp.full(n, _INT_MAX, dtype=cp.int32)
        base = int(self._tick(DG.SCAN_STAMPS)) - DG.SCAN_STAMPS
        left = (deadline - time.perf_counter()) * 1e9
        deg, ptr = self._view()
        P = _ptr
        keep = WINDOW_KEEP_EXPIRY
        vals = [P(deg), P(ptr), P(t.keys), t.shift, P(t.columns["truss"]),
                P(t.columns["rank"]), P(self._member), P(self._gone), P(self._seen),
                P(self._touched), int(tstamp), P(self._ctr),
                P(self._low_old), P(self._la), P(self._lb), P(self._cand), P(self._region),
                P(self._fallen), P(self._front), P(self._front2), P(self._low),
                P(self._newval), P(self._newcnt), P(self._cnt),
                P(self._cmin) if keep else 0, P(self._dcnt) if keep else 0,
                *((P(self._kpush), P(self._kbase)) if WINDOW_KEPT_BOUNDS else (0, 0)),
                P(self._ks), P(self._bar), base, DG.SCAN_STAMPS,
                int(self._tail), int(self._head), int(self._wdrop),
                int(min(max_region, 2 ** 62)), int(min(max(left, 0.0), 2.0 ** 62)),
                int(self._top), WINDOW_SHIFT]
        launch = _prepared("ko_wscan", len(vals), cooperative=True)
        launch(self._scan_grid(_fn("ko_scan").kernel), BLOCK, vals)
        queued()
        self._words.get(out=self._words_host)
        c, w = self._ks_host, self._words_host
        if int(c[DG.KS_SPUN]):
            raise RuntimeError("ko_wscan: a grid barrier timed out")
        self._touched_count = int(c[DG.KS_TOUCHED])
        self._head = int(c[DG.KS_HEAD].view(np.int64))
        self._tail += int(c[DG.KS_TAIL])
        self._wdrop += int(c[KW_DROPS])
        if int(c[DG.KS_STATUS]) != DG.KS_DONE:
            self._cnt.fill(0)                 # (a phase may have stopped before its reader)
            self._cmin.fill(_INT_MAX)
            return self._fallback(self._touched_count)
        if self._top:
            self._top_insert()
        self.stats.update(region=self._touched_count, rounds=int(c[DG.KS_ROUNDS]),
                          peel_rounds=int(c[DG.KS_PEEL_ROUNDS]), levels=int(c[DG.KS_LEVELS]),
                          placed=int(w[C_PLACED]), seeds=int(w[C_EXTRA]),
                          candidates=int(c[DG.KS_ALL]), windows=int(c[KW_WINDOWS]),
                          counted=int(c[KW_PCOUNT]), evaluated=int(c[KW_EVALS]),
                          pending=int(c[KW_PEND]), risen=int(c[KW_RISEN]), scan="windows")

    def _window_ranks_due(self) -> bool:
        """Whether the ranks given out at the ends of windows reached
        :data:`WINDOW_DROP_LIMIT`, or the start of a level reached :data:`HEAD_LIMIT` (the
        ranks are then made anew by the update's static decomposition; the counter starts
        over)."""
        if self._wdrop < WINDOW_DROP_LIMIT and self._head > HEAD_LIMIT:
            return False
        self._wdrop = 0
        return True
