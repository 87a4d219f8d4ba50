"""A windowed replay with one graph call per batch against two, in one process (CPU).

    NUMBA_NUM_THREADS=1 python3 -m bench.tools.ab_window_call [--batches 100000 10000]
        [--rounds 5]        (results: bench/results, or $HORNET_BENCH_RESULTS)

The stream of ``bench window`` (10^7 uniform random insert events over 2^20 ids, seed 0,
window 2x10^6, undirected, no analytics) is replayed without a window, with the window
through two graph calls per batch (``insert_edges``, then ``delete_edges`` of the expired
edges: the replay with :func:`streams.window_batch.insert_expire` switched off) and with one
(``Graph.apply_edges``, the expired edges kept in sorted form where a whole batch expires),
the order rotated from round to round; process CPU seconds and the replay's update seconds,
medians. Both give the same rows (tests/test_apply_edges.py).
"""
from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile

from bench.common import set_command, write_table
from bench.window import rotated_window_replays, write_random_stream
from streams import replay as replay_module

ONE_CALL = replay_module.insert_expire


def _two_calls(*args) -> bool:
    return False


def _use(one_call: bool) -> None:
    replay_module.insert_expire = ONE_CALL if one_call else _two_calls


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.ab_window_call",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--window", type=int, default=2_000_000)
    ap.add_argument("--batches", type=int, nargs="+", default=[100_000, 10_000])
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args(argv)
    rows = []
    modes = ["no window", "window, two calls", "window, one call"]
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "random.arrows")
        write_random_stream(path, a.events, 1 << 20)
        for batch in a.batches:
            med = rotated_window_replays(path, batch, a.window, modes,
                                         lambda m: _use(m == "window, one call"), a.rounds)
            two = med["window, two calls"]
            for m in modes:
                c, u = med[m]
                rows.append([f"{batch:,}", m, f"{c:.3f}", f"{u:.3f}",
                             "" if m == "no window" else f"{c / med['no window'][0]:.2f}",
                             "" if m == "no window" else f"{u / med['no window'][1]:.2f}",
                             f"{c / two[0]:.3f} / {u / two[1]:.3f}"
                             if m == "window, one call" else ""])
            load.append(os.getloadavg()[0])
    import numba
    set_command(shlex.join([f"NUMBA_NUM_THREADS={numba.get_num_threads()}", "python3", "-m",
                            "bench.tools.ab_window_call", *sys.argv[1:]]))
    write_table("window_call_ab_cpu",
                "Windowed replay: one graph call per batch against two, one process (CPU)",
                ["batch", "replay", "process CPU s", "update s", "window / no window (CPU)",
                 "window / no window (update s)", "one call / two calls (CPU / update s)"],
                rows,
                f"""`bench window`'s stream ({a.events:,} uniform random insert events over 2^20
ids, seed 0), window {a.window:,}, undirected, no analytics, {numba.get_num_threads()} Numba
thread(s). In one process, per round: the replay without a window, with the window through
two graph calls per batch (the batch's insert, then the delete of the expired edges) and
through one (`Graph.apply_edges`: one batch for both halves; the expired edges of a batch that
expires whole deleted from the sorted form kept since its insert); the order rotated from
round to round; medians of {a.rounds} rounds. Process CPU s: the process's CPU time over the
replay call (less disturbed than the wall clock on a shared machine). Machine load (1-minute
load average, start and after each batch size): {' / '.join(f'{x:.1f}' for x in load)} on
{os.cpu_count()} cores.""", device="cpu")


if __name__ == "__main__":
    main()
