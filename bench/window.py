"""The sliding window's cost: a generated stream replayed with a window and without one.

    python3 -m bench window [--device cpu] [--events 10000000] [--batches 100000 10000]
                            [--window 2000000] [--repeats 1]
    python3 -m bench window --quick         # 10^6 events, window 2x10^5

A stream of random insert events (uniform pairs over ``--vertices`` ids, seed 0, no op, weight
or time column) is written with :class:`streams.writer.StreamWriter` to a temporary Arrow IPC
stream file, then replayed without analytics (``algos="none"``) into an undirected graph, batch
size by batch size, once without a window and once with one, the order swapped from repeat to
repeat. Time: the replay's ``update_seconds`` (the graph's inserts and refreshes, the window's
queue and the expiry deletes; reading the file and the warm-up not counted), median of the
repeats. The criterion of the window is at most 1.5x the time without it.

Column "of which compaction": the seconds a windowed replay spends in
:func:`hornet.batch.pipeline.compact_memory` (list refits, class compaction and re-pointing
after each expiry delete; timed by wrapping it, the GPU synchronised before and after, in one
more windowed replay than the timed ones: the synchronisations would change their times),
and the ratio the window would have without them (subtracted, not measured on its own): the
share of the window's cost that belongs to the memory policy.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import tempfile
import time

import numpy as np

from bench.common import write_table
from hornet.core.jit import compile_timer
from streams.replay import replay
from streams.writer import StreamWriter


def write_random_stream(path: str, events: int, vertices: int, seed: int = 0) -> None:
    """``events`` uniform random (src, dst) insert events over ``vertices`` ids, written to
    ``path`` (Arrow IPC, int32 ids) in chunks of 10^6."""
    rng = np.random.default_rng(seed)
    with StreamWriter(path, compression=None, chunk_rows=1 << 20) as w:
        for start in range(0, events, 1_000_000):
            m = min(1_000_000, events - start)
            w.write(rng.integers(0, vertices, m, dtype=np.int32),
                    rng.integers(0, vertices, m, dtype=np.int32))


def rotated_window_replays(path: str, batch: int, window: int, modes: list, use,
                           rounds: int) -> dict:
    """Median (process CPU s, update s) per mode of undirected CPU replays of the stream at
    ``path`` without analytics, in one process: ``modes[0]`` without a window, the others
    with ``window`` after ``use(mode)`` switches the code to that mode; one warm-up replay
    each, then ``rounds`` rounds with the order rotated from round to round. ``use`` is left
    on the last mode."""
    for m in modes[1:]:
        use(m)
        replay(path, batch_size=batch, window=window, directed=False, algos="none",
               device="cpu", max_events=window + 5 * batch)
    replay(path, batch_size=batch, directed=False, algos="none", device="cpu",
           max_events=5 * batch)
    res = {m: [] for m in modes}
    n = len(modes)
    for r in range(rounds):
        for m in modes[r % n:] + modes[:r % n]:
            use(m)
            c0 = time.process_time()
            s = replay(path, batch_size=batch, window=None if m == modes[0] else window,
                       directed=False, algos="none", device="cpu").summary
            res[m].append((time.process_time() - c0, s["update_seconds"]))
    use(modes[-1])
    return {m: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v))
            for m, v in res.items()}


@contextlib.contextmanager
def timed_compaction(device: str):
    """Inside the block, :func:`hornet.batch.pipeline.compact_memory` (and the bindings of it
    that the planned, mixed, medium and small-batch paths hold) add their wall-clock seconds (less their
    compiles) to the yielded list's first item; the GPU is synchronised before and after
    each call. The replay's warm-up on its scratch graph counts too: a few edges, no
    measurable time once compiled."""
    from hornet.batch import medium_path, pipeline, planned, planned_mixed, small_path
    original = pipeline.compact_memory
    spent = [0.0]
    if device == "gpu":
        import cupy
        sync = cupy.cuda.runtime.deviceSynchronize
    else:
        def sync():
            pass

    def timed(*args, **kw):
        sync()
        t = time.perf_counter()
        try:
            with compile_timer() as compiling:      # one-time compiles are not counted
                return original(*args, **kw)
        finally:
            sync()
            spent[0] += time.perf_counter() - t - compiling.seconds
    modules = (pipeline, planned, planned_mixed, medium_path, small_path)
    for m in modules:
        m.compact_memory = timed
    try:
        yield spent
    finally:
        for m in modules:
            m.compact_memory = original


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench window", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--vertices", type=int, default=1 << 20)
    ap.add_argument("--batches", type=int, nargs="+", default=[100_000, 10_000])
    ap.add_argument("--window", type=int, default=2_000_000)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="10^6 events, window 2x10^5")
    ap.add_argument("--no-warm-up", dest="warm_up", action="store_false",
                    help="skip the untimed replay of a prefix (window + 5 batches) per batch "
                         "size and mode")
    ap.add_argument("--name", default=None, help="table name (default: window_<device>)")
    a = ap.parse_args(argv)
    if a.quick:
        a.events, a.window = 1_000_000, 200_000
    rows = []
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "random.arrows")
        write_random_stream(path, a.events, a.vertices)
        for batch in a.batches:
            if a.warm_up:
                # the paths a long replay reaches (compaction moving blocks, CuPy kernels
                # compiled on first use) run once before anything is timed
                for window, prefix in ((None, 5 * batch), (a.window, a.window + 5 * batch)):
                    replay(path, batch_size=batch, window=window, directed=False,
                           algos="none", device=a.device, max_events=min(prefix, a.events))
            times = {None: [], a.window: []}
            cpu = {None: [], a.window: []}
            compaction = []
            edges = {}
            for r in range(a.repeats):
                order = (None, a.window) if r % 2 == 0 else (a.window, None)
                for window in order:
                    c0 = time.process_time()
                    res = replay(path, batch_size=batch, window=window, directed=False,
                                 algos="none", device=a.device)
                    cpu[window].append(time.process_time() - c0)
                    s = res.summary
                    if s["events"] != a.events:
                        raise SystemExit(f"bench window: replayed {s['events']} events, "
                                         f"not {a.events}")
                    times[window].append(s["update_seconds"])
                    edges[window] = (s["edges"], s["expired"])
            # the compaction's seconds from one more windowed replay, timed apart: the
            # synchronisations around each call would change the replays timed above
            with timed_compaction(a.device) as spent:
                replay(path, batch_size=batch, window=a.window, directed=False, algos="none",
                       device=a.device)
            compaction.append(spent[0])
            plain = statistics.median(times[None])
            windowed = statistics.median(times[a.window])
            compact = statistics.median(compaction)
            cpu_plain = statistics.median(cpu[None])
            cpu_windowed = statistics.median(cpu[a.window])
            for window, sec in ((None, plain), (a.window, windowed)):
                rows.append([f"{batch:,}", "none" if window is None else f"{window:,}",
                             f"{sec:.3f}", f"{a.events / sec / 1e6:.2f}",
                             f"{edges[window][0]:,}", f"{edges[window][1]:,}",
                             "" if window is None else f"{windowed / plain:.2f}",
                             "" if window is None else
                             f"{compact:.3f} ({(windowed - compact) / plain:.2f})",
                             f"{statistics.median(cpu[window]):.3f}",
                             "" if window is None else f"{cpu_windowed / cpu_plain:.2f}"])
    warm = ", after an untimed replay of a prefix (window + 5 batches) in each mode" \
        if a.warm_up else ""
    load = f"{load_before:.1f} / {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    write_table(a.name or f"window_{a.device}", f"Sliding-window cost ({a.device.upper()})",
                ["batch", "window (events)", "update seconds", "M events/s", "edges at end",
                 "expired", "window / no window",
                 "of which compaction s (ratio without it)", "process CPU s",
                 "window / no window (CPU)"], rows,
                f"""{a.events:,} random insert events (uniform pairs over {a.vertices:,} ids, seed
0) written to an Arrow IPC stream file, replayed undirected without analytics. Seconds: the
replay's `update_seconds` (graph updates, refreshes, window queue and expiry), median of
{a.repeats} repeat(s), window and no window alternating{warm}. Criterion: window / no window at
most 1.5. Compaction: seconds inside `compact_memory` (list refits, class compaction,
re-pointing after each expiry delete; the memory policy's work) of one more windowed replay,
timed by wrapping it (GPU synchronised around it; that replay is not among the timed ones),
and in brackets the windowed ratio with them subtracted (an estimate, not a run without
compaction). Process CPU s: the process's CPU time over the
whole replay call (reading included; on a machine shared with other jobs less disturbed than
the wall clock, with one Numba thread). Windowed batches run inside `Graph.steady_churn`
(memory given back in a wider band). Machine load (1-minute load average, start / end): {load}.""",
                device=a.device)


if __name__ == "__main__":
    main()
