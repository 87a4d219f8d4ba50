"""Where GPU delete batches spend their time: per-call event times, then stage and kernel spans.

    python3 -m bench.tools.delete_spans_gpu [--scale 24] [--sizes 1000 10000 100000 1000000]
        [--repeats 9] [--top 22] [--no-spans] [--phases] [--graph NAME]

The updates benchmark's Kronecker graph (undirected, GPU; ``--graph``: a real graph of the
data folder, directed, as ``bench updates_gpu --real`` builds it); per batch size, existing edges
sampled with replacement and deleted, every call undone untimed (as ``ab_batches_gpu``
does). First the plain calls: median event time, the slowest call over the median, median
host time (call to return). Then the same number of calls with CUDA events around every
kernel launch and every stage of the small and planned paths
(:func:`bench.tools.device_spans_gpu.install`, plus the small path's and the block cache's
steps), side streams off (every kernel on the caller's stream, so that each kernel's span
is its own device time): per label its device span and host time per batch. ``--phases``:
then the small path's prepare kernel alone, by phase (its phase clocks compiled in), on
deletes of the first size.
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

import numpy as np

from bench.common import kronecker_graph_gpu, real_graph_path, require_gpu

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


def _real_graph(name: str):
    """(graph, build seconds): real graph ``name`` of the data folder on the GPU, directed."""
    import cupy
    import hornet
    s, d, _ = hornet.io.read_edges(real_graph_path(name))
    t = time.perf_counter()
    g = hornet.Graph.from_edges(cupy.asarray(s), cupy.asarray(d),
                                num_vertices=int(max(s.max(), d.max())) + 1, directed=True,
                                device="gpu")
    cupy.cuda.Device().synchronize()
    return g, time.perf_counter() - t


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


def _phases(cupy, g, es, ed, rs, b, reps=15):
    """The small path's prepare kernel alone (compiled with its phase clocks, delete mode,
    mirrored, the graph untouched) on deletes of ``b`` sampled edges (b <= 2,048): per phase
    the median microseconds (thread 0's clock64 over the SM clock), and the kernel's
    CUDA-event time."""
    from hornet.batch.gpu.small import (_CU, _NAMES, COPY_MAX_CLASS, PREPARE_ARGS,
                                        WORKSPACE_WORDS)
    from hornet.batch.small_layout import MODE_DELETE, SMALL_ENTRIES
    from hornet.core.cuda import PreparedLaunch, module_source
    code, options = module_source(_CU)
    mod = cupy.RawModule(code=code, options=options + ("-DSMALL_BATCH_CLOCKS",),
                         name_expressions=list(_NAMES))
    launch = PreparedLaunch(mod.get_function("small_prepare<long long, false>"), PREPARE_ARGS)
    mhz = cupy.cuda.Device().attributes["ClockRate"] / 1e3
    ws = cupy.zeros(WORKSPACE_WORDS, dtype=cupy.int64)
    rows = cupy.empty(2 * SMALL_ENTRIES, dtype=cupy.int32)
    phases, times = [], []
    for _ in range(reps + 1):
        p = rs.randint(0, es.size, b, dtype=cupy.int64)
        s, d = es[p].astype(cupy.int64), ed[p].astype(cupy.int64)
        args = [s.data.ptr, d.data.ptr, b, 1, MODE_DELETE, g._degree.data.ptr,
                g._size_class.data.ptr, g._edge_ptr.data.ptr, g._degree.shape[0],
                g._mm.min_size_class, COPY_MAX_CLASS, ws.data.ptr, rows.data.ptr]
        args += [0] * (PREPARE_ARGS - len(args))
        e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
        cupy.cuda.Device().synchronize()
        e0.record()
        launch(1, 1024, args)
        e1.record()
        e1.synchronize()
        c = ws[192:199].get()
        phases.append(np.diff(c) / mhz)
        times.append(cupy.cuda.get_elapsed_time(e0, e1) * 1e3)
    ph = np.median(np.array(phases[1:]), axis=0)
    names = ["load keys", "sort", "lookup + scan", "compact", "segments + rows", "pieces"]
    print(f"prepare phases, deletes of {b} (us): kernel {statistics.median(times[1:]):.1f}; "
          + ", ".join(f"{n} {x:.1f}" for n, x in zip(names, ph)), flush=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.delete_spans_gpu",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--graph", default=None,
                    help="a real graph of the data folder instead (directed, as bench "
                         "updates_gpu --real builds it)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[10**3, 10**4, 10**5, 10**6])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--top", type=int, default=22)
    ap.add_argument("--no-spans", action="store_true", help="the plain calls only")
    ap.add_argument("--phases", action="store_true",
                    help="then the small path's prepare kernel by phase, on deletes of the "
                         "first size")
    args = ap.parse_args(argv)
    require_gpu("delete_spans_gpu")
    import cupy
    from hornet.batch.gpu import side_streams
    from bench.tools.device_spans_gpu import EventClock, install
    print(f"device: {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
    if args.graph:
        g, t = _real_graph(args.graph)
        print(f"{args.graph} (directed): {g.num_edges} edges, built in {t:.1f} s", flush=True)
    else:
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
    if args.phases:
        _phases(cupy, g, es, ed, rs, args.sizes[0])


if __name__ == "__main__":
    main()
