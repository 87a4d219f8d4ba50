"""The window's expiry path against the one before it, in one process (CPU): the planned
fused delete (plan_delete, allocation, remove_fused) against the plan-free one
(hornet.batch.cpu.remove_first), the window's expiry by get / remove_up_to against
LatestIndex.take_stale, and the allocation's lookup rows by np.stack against one
concatenation.

    NUMBA_NUM_THREADS=1 python3 -m bench.tools.ab_window_delete [--batches 100000 10000]
        [--rounds 3]        (results: bench/results, or $HORNET_BENCH_RESULTS)

The stream of ``bench window`` (10^7 uniform random insert events over 2^20 ids, seed 0,
window 2x10^6, undirected, no analytics) is replayed without a window, with the window and
the old path, with the window and the new path, the order rotated from round to round;
process CPU seconds and the replay's update seconds, medians. Both paths run the same
graph updates (the delete's storage is the same: tests/test_remove_first.py).
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

from bench.common import write_table
from bench.window import write_random_stream
from hornet.batch import pipeline
from hornet.memory import manager
from hornet.memory.bit_tree import FOREST_LEVELS, take_forest
from streams import window
from streams.replay import replay


def probe_expired(self, end, look_up=None):
    """EventWindow.expired of insert-only streams by a look-up and a removal of the keys."""
    pieces = self._pop_pieces(end - self.window)
    if not pieces:
        empty = np.empty(0, np.int64)
        return empty, empty
    idx, s, d = pieces[0] if len(pieces) == 1 else \
        tuple(np.concatenate(p) for p in zip(*pieces))
    if len(self._latest) == 0:
        return s, d
    keys = window.edge_keys(s, d)
    later = self._latest.get(keys)
    stale = later <= idx
    named = stale & (later >= 0)
    if named.any():
        self._latest.remove_up_to(keys[named], idx[named])
    return s[stale], d[stale]


def stacked_take(plans, num_fields: int) -> np.ndarray:
    """manager._cpu_take with the lookup rows gathered by np.stack."""
    reqs = [(arr, take, k + 2) for k, plan, _ in plans for arr, take in plan if take]
    if not reqs:
        return np.zeros(0, dtype=np.int64)
    rows = np.stack([arr.lookup_row() for arr, _, _ in reqs])
    counts = np.array([t for _, t, _ in reqs], dtype=np.int64)
    shifts = np.array([sh for _, _, sh in reqs], dtype=np.int64)
    w = 2 + num_fields
    c = np.ascontiguousarray
    return take_forest(c(rows[:, w]), c(rows[:, w + 1:w + 2 + FOREST_LEVELS]), counts,
                       c(rows[:, 0]), shifts)


NEW = (pipeline._delete_fused, window.EventWindow.expired, manager._cpu_take)
OLD = (pipeline._delete_planned, probe_expired, stacked_take)


def _use(path_fns) -> None:
    pipeline._delete_fused, window.EventWindow.expired, manager._cpu_take = path_fns


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.ab_window_delete",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--window", type=int, default=2_000_000)
    ap.add_argument("--batches", type=int, nargs="+", default=[100_000, 10_000])
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args(argv)
    rows = []
    modes = ["no window", "window, before", "window, now"]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "random.arrows")
        write_random_stream(path, a.events, 1 << 20)
        for batch in a.batches:
            for fns in (OLD, NEW):
                _use(fns)
                replay(path, batch_size=batch, window=a.window, directed=False, algos="none",
                       device="cpu", max_events=a.window + 5 * batch)
            replay(path, batch_size=batch, directed=False, algos="none", device="cpu",
                   max_events=5 * batch)
            res = {m: [] for m in modes}
            for r in range(a.rounds):
                for m in modes[r % 3:] + modes[:r % 3]:
                    _use(OLD if m == "window, before" else NEW)
                    c0 = time.process_time()
                    s = replay(path, batch_size=batch,
                               window=None if m == "no window" else a.window,
                               directed=False, algos="none", device="cpu").summary
                    res[m].append((time.process_time() - c0, s["update_seconds"]))
            _use(NEW)
            med = {m: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v))
                   for m, v in res.items()}
            for m in modes:
                c, u = med[m]
                rows.append([f"{batch:,}", m, f"{c:.3f}", f"{u:.3f}",
                             "" if m == "no window" else f"{c / med['no window'][0]:.2f}",
                             "" if m == "no window" else f"{u / med['no window'][1]:.2f}"])
    import numba
    write_table("window_delete_ab_cpu", "Window expiry path: before against now, one process (CPU)",
                ["batch", "replay", "process CPU s", "update s",
                 "window / no window (CPU)", "window / no window (update s)"], rows,
                f"""`bench window`'s stream ({a.events:,} uniform random insert events over 2^20
ids, seed 0), window {a.window:,}, undirected, no analytics, {numba.get_num_threads()} Numba
thread(s). In one process, per round: the replay without a window, with the window on the
path before (planned fused delete: a plan pass over every segment, the smaller blocks
allocated first; expiry by a hash look-up then a removal of the expiring keys; allocation
rows by np.stack) and with the window now (plan-free delete: lists shrunk in place in one
pass, the few lists under a quarter of their block moved after; expiry in one pass,
`LatestIndex.take_stale`; rows by one concatenation); the order rotated from round to round;
medians of {a.rounds} rounds. Process CPU s: the process's CPU time over the replay call
(less disturbed than the wall clock on a shared machine).""", device="cpu")


if __name__ == "__main__":
    main()
