"""Where GPU delete batches spend their time: per-call event times, then stage and kernel spans.

    python3 -m bench.tools.delete_spans_gpu [--scale 24] [--sizes 1000 10000 100000 1000000]
        [--repeats 9] [--top 22]

The updates benchmark's Kronecker graph (undirected, GPU); per batch size, existing edges
sampled with replacement and deleted, every call undone untimed (as ``ab_batches_gpu``
does). First the plain calls: median event time, the slowest call over the median, median
host time (call to return). Then the same number of calls with CUDA events around every
kernel launch and every stage of the small and planned paths
(:func:`bench.tools.device_spans_gpu.install`, plus the small path's and the block cache's
steps), side streams off (every kernel on the caller's stream, so that each kernel's span
is its own device time): per label its device span and host time per batch.
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

from bench.common import kronecker_graph_gpu, require_gpu

NEEDS_GPU = True


def _install_small(clock) -> None:
    """Event spans around the small path's steps and the block cache's."""
    from hornet.batch import small_path as SP
    from hornet.batch.gpu import small as S
    from hornet.memory import block_cache as BC
    from hornet.memory import list_fit
    for name in ("prepare", "rewrite"):
        clock.wrap(S.SmallBatches, name, f"stage small: {name}")
    for name in ("top_up", "reserve", "accepts", "commit", "grow_ahead"):
        clock.wrap(BC.BlockCache, name, f"stage cache: {name}")
    clock.wrap(SP, "small_update", "stage small_update")
    clock.wrap(SP, "small_pairs", "stage small_pairs")
    clock.wrap(SP, "compact_memory", "stage small: compact_memory")
    clock.wrap(SP, "_lost_entries", "stage small: _lost_entries")
    clock.wrap(list_fit.ListFit, "loose", "stage list_fit.loose")


def _batches(cupy, es, ed, b: int, count: int, rs):
    return [(es[p], ed[p]) for p in (rs.randint(0, es.size, b, dtype=cupy.int64)
                                     for _ in range(count))]


def _timed(cupy, g, batches):
    """Event and host seconds of each delete (the first untimed), each undone untimed."""
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    ev, host = [], []
    for i, (s, d) in enumerate(batches):
        cupy.cuda.Device().synchronize()
        t = time.perf_counter()
        start.record()
        c = g.delete_edges(s, d)
        end.record()
        h = time.perf_counter() - t
        end.synchronize()
        if i:
            ev.append(cupy.cuda.get_elapsed_time(start, end) * 1e3)
            host.append(h * 1e6)
        g.insert_edges(c.src, c.dst)
    return ev, host


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.delete_spans_gpu",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10**3, 10**4, 10**5, 10**6])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--top", type=int, default=22)
    ap.add_argument("--no-spans", action="store_true", help="the plain calls only")
    ap.add_argument("--plain", action="store_true",
                    help="long removals not in pieces (SmallBatches.in_place_pieces off)")
    args = ap.parse_args(argv)
    if args.plain:
        from hornet.batch.gpu.small import SmallBatches
        SmallBatches.in_place_pieces = False
    require_gpu("delete_spans_gpu")
    import cupy
    from hornet.batch.gpu import side_streams
    from bench.tools.device_spans_gpu import EventClock, install
    print(f"device: {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
    g, t = kronecker_graph_gpu(args.scale)
    print(f"Kronecker {args.scale}: {g.num_edges} edges, built in {t:.1f} s", flush=True)
    es, ed = g.edges()
    rs = cupy.random.RandomState(11)
    clock = EventClock(cupy)
    for b in args.sizes:
        ev, host = _timed(cupy, g, _batches(cupy, es, ed, b, args.repeats + 1, rs))
        med = statistics.median(ev)
        print(f"delete {b:>8}: events median {med:7.0f} us, max/median {max(ev) / med:.2f}, "
              f"host median {statistics.median(host):6.0f} us  "
              f"[{' '.join(f'{x:.0f}' for x in ev)}]", flush=True)
    if args.no_spans:
        return
    install(clock)
    _install_small(clock)
    sides = side_streams.ENABLED
    side_streams.ENABLED = False
    try:
        for b in args.sizes:
            totals = defaultdict(lambda: [0.0, 0.0, 0])
            batches = _batches(cupy, es, ed, b, args.repeats + 1, rs)
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            times = []
            for i, (s, d) in enumerate(batches):
                cupy.cuda.Device().synchronize()
                clock.enabled = i > 0
                start.record()
                c = g.delete_edges(s, d)
                end.record()
                clock.enabled = False
                end.synchronize()
                spans = clock.collect()
                if i:
                    times.append(cupy.cuda.get_elapsed_time(start, end) * 1e3)
                    for k, v in spans.items():
                        row = totals[k]
                        for j in range(3):
                            row[j] += v[j]
                g.insert_edges(c.src, c.dst)
            n = args.repeats
            print(f"-- delete {b}, spans (side streams off; events {statistics.median(times):.0f}"
                  f" us with the clock)")
            for k, v in sorted(totals.items(), key=lambda kv: -kv[1][0])[:args.top]:
                print(f"   {k[:60]:60} dev {v[0] / n * 1e6:7.0f}  host {v[1] / n * 1e6:6.0f} us"
                      f"  x{v[2] / n:.1f}", flush=True)
    finally:
        side_streams.ENABLED = sides
        clock.restore()


if __name__ == "__main__":
    main()
