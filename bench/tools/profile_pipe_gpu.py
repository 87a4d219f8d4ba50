"""Where a small GPU batch's time goes: host work, waits on the device, kernel time.

    python3 bench/tools/profile_pipe_gpu.py [--scale 20] [--sizes 1000 10000] [--calls 40]
        [--stream CollegeMsg] [--stream-batches 1000 10000] [--cprofile]

Run as a file (not ``-m``) so that ``PYTHONPATH`` picks the tree under test: the tool only
imports ``hornet``, ``streams`` and ``bench.common`` from it. Per call of
``insert_edges`` / ``delete_edges`` (random pairs inserted, then the same pairs deleted, on a
Kronecker graph built on the device; host int64 pairs as a stream replay passes them):

- ``wall``: Python call to return plus a final device synchronization;
- ``host``: Python call to return, nothing added;
- ``wait``: the part of ``host`` spent in explicit synchronizations
  (``Stream.synchronize``, ``Event.synchronize``, ``Device.synchronize``) and how many;
- ``kernels``: CUDA events around every launch through
  :class:`hornet.core.cuda.PreparedLaunch`, summed per kernel.

For a replay of a real stream (directed, no analytics, as ``bench replay_devices``): the
replay's update time per batch, the same split of it, and the replay's own host work
(``_apply_batch`` less the graph's calls). Medians over calls (replays: per-batch means).
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
from collections import defaultdict

import numpy as np


class Probe:
    """Counts and times explicit synchronizations; times PreparedLaunch kernels with events."""

    def __init__(self):
        import cupy

        from hornet.core import cuda as hc
        self.cupy = cupy
        self.on = False
        self.wait = 0.0
        self.syncs = 0
        self.kernel_events = []
        cu = cupy.cuda
        probe = self
        for cls in (cu.Stream, cu.Event, cu.Device):
            fn = cls.synchronize

            def counted(obj, _fn=fn):
                if not probe.on:
                    return _fn(obj)
                t = time.perf_counter()
                try:
                    return _fn(obj)
                finally:
                    probe.wait += time.perf_counter() - t
                    probe.syncs += 1
            try:
                setattr(cls, "synchronize", counted)
            except TypeError:
                print(f"(cannot wrap {cls.__name__}.synchronize)")
        launch = hc.PreparedLaunch.__call__

        def timed_launch(obj, grid, block, values, _fn=launch):
            if not probe.on:
                return _fn(obj, grid, block, values)
            e0, e1 = cu.Event(), cu.Event()
            e0.record()
            _fn(obj, grid, block, values)
            e1.record()
            name = getattr(obj.fn, "name", None) or getattr(obj.fn, "__name__", None) or \
                str(getattr(getattr(obj.fn, "kernel", None), "name", "kernel"))
            probe.kernel_events.append((name, e0, e1))
        hc.PreparedLaunch.__call__ = timed_launch

    def start(self):
        self.wait, self.syncs, self.kernel_events = 0.0, 0, []
        self.on = True

    def stop(self):
        self.on = False
        self.cupy.cuda.Device().synchronize()
        k = defaultdict(float)
        for name, e0, e1 in self.kernel_events:
            k[name] += self.cupy.cuda.get_elapsed_time(e0, e1) * 1e3
        return self.wait * 1e6, self.syncs, dict(k)


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def fmt_kernels(ks: list[dict]) -> str:
    names = sorted({n for k in ks for n in k})
    return ", ".join(f"{n} {med([k.get(n, 0.0) for k in ks]):.0f}" for n in names)


def graph_calls(probe, scale: int, sizes, calls: int, use_cprofile: bool,
                deferred: bool = False):
    import cupy

    import hornet
    from bench.common import kronecker
    src, dst = kronecker(scale, seed=scale, xp=cupy)
    g = hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False,
                                device="gpu")
    del src, dst
    g._deferred_batches = deferred
    rng = np.random.default_rng(scale)
    n = 1 << scale
    print(f"\n## Kronecker {scale}: {g.num_edges} edges (undirected), host int64 pairs, "
          f"deferred inserts {'on' if deferred else 'off'}")
    for b in sizes:
        for warm in (True, False):
            rows = {"insert": defaultdict(list), "delete": defaultdict(list)}
            for _ in range(5 if warm else calls):
                s = rng.integers(0, n, b, dtype=np.int64)
                d = rng.integers(0, n, b, dtype=np.int64)
                for op, fn in (("insert", g.insert_edges), ("delete", g.delete_edges)):
                    cupy.cuda.Device().synchronize()
                    probe.start()
                    t0 = time.perf_counter()
                    ch = fn(s, d)
                    t1 = time.perf_counter()
                    cupy.cuda.Device().synchronize()
                    t2 = time.perf_counter()
                    wait, syncs, ks = probe.stop()
                    r = rows[op]
                    r["host"].append((t1 - t0) * 1e6)
                    r["wall"].append((t2 - t0) * 1e6)
                    r["wait"].append(wait)
                    r["syncs"].append(syncs)
                    r["kernels"].append(ks)
                    r["len"].append(len(ch))
        for op, r in rows.items():
            print(f"- {b} {op}: wall {med(r['wall']):.0f} us (max {max(r['wall']):.0f}), "
                  f"host {med(r['host']):.0f}, wait {med(r['wait']):.0f} in "
                  f"{med(r['syncs']):.0f} syncs; kernels us: {fmt_kernels(r['kernels'])}; "
                  f"edges {med(r['len']):.0f}")
    if use_cprofile:
        b = sizes[0]
        prof = cProfile.Profile()
        for _ in range(calls):
            s = rng.integers(0, n, b, dtype=np.int64)
            d = rng.integers(0, n, b, dtype=np.int64)
            prof.enable()
            g.insert_edges(s, d)
            g.delete_edges(s, d)
            prof.disable()
        cupy.cuda.Device().synchronize()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(28)
        print(f"\n### cProfile, {calls} insert + delete pairs of {b}, by own time\n```")
        print("\n".join(out.getvalue().splitlines()[6:]))
        print("```")
    g.check()
    print(f"- deferred batches {getattr(g, '_deferred_count', 0)}, stalled "
          f"{getattr(g, '_stalls', 0)}")
    del g


def stream_replay(probe, name: str, batches, use_cprofile: bool):
    import cupy

    import streams.replay as sr
    from bench.common import DATA
    path = sorted(DATA.glob(name + "*"))[0]
    graph_time = [0.0]
    own = sr._apply_batch
    from hornet.graph import Graph
    wrapped = {}
    for attr in ("insert_edges", "delete_edges", "update_edges", "insert_vertices"):
        fn = getattr(Graph, attr)

        def timed(self, *a, _fn=fn, **k):
            t = time.perf_counter()
            try:
                return _fn(self, *a, **k)
            finally:
                graph_time[0] += time.perf_counter() - t
        wrapped[attr] = fn
        setattr(Graph, attr, timed)
    apply_time = [0.0]

    def apply_batch(*a, **k):
        t = time.perf_counter()
        try:
            return own(*a, **k)
        finally:
            apply_time[0] += time.perf_counter() - t
    sr._apply_batch = apply_batch
    stalls = [0]
    try:
        import hornet.batch.deferred_path as dp
        run_again = dp._run_again

        def counted_run_again(*args, _fn=run_again):
            stalls[0] += 1
            return _fn(*args)
        dp._run_again = counted_run_again
    except ImportError:
        dp = None
    try:
        for b in batches:
            sr.replay(path, batch_size=b, device="gpu", algos="none")            # warm
            upd, walls = [], []
            for _ in range(3):
                t = time.perf_counter()
                s = sr.replay(path, batch_size=b, device="gpu", algos="none").summary
                cupy.cuda.Device().synchronize()
                walls.append(time.perf_counter() - t)
                upd.append(s["update_seconds"] / s["batches"] * 1e6)
            nb = s["batches"]
            graph_time[0] = apply_time[0] = 0.0
            stalls[0] = 0
            probe.start()
            s = sr.replay(path, batch_size=b, device="gpu", algos="none").summary
            wait, syncs, ks = probe.stop()
            print(f"- {name} batch {b}: {nb} batches, {s['events']} events, {s['inserted']} "
                  f"inserted; update us/batch {med(upd):.0f} (runs {min(upd):.0f}-"
                  f"{max(upd):.0f}); replay wall per batch {med(walls) / nb * 1e6:.0f} us "
                  f"(with reading and setup); probed run: _apply_batch "
                  f"{apply_time[0] / nb * 1e6:.0f} us/batch, graph calls "
                  f"{graph_time[0] / nb * 1e6:.0f}, waits {wait / nb:.0f} us in "
                  f"{syncs / nb:.1f} syncs, stalls {stalls[0]}; kernels us/batch: "
                  + ", ".join(f"{k} {v / nb:.0f}" for k, v in sorted(ks.items())))
            if use_cprofile and b == batches[0]:
                prof = cProfile.Profile()
                prof.enable()
                sr.replay(path, batch_size=b, device="gpu", algos="none")
                prof.disable()
                out = io.StringIO()
                pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(30)
                print(f"\n### cProfile, replay of {name} at {b}, by own time\n```")
                print("\n".join(out.getvalue().splitlines()[6:]))
                print("```")
    finally:
        sr._apply_batch = own
        if dp is not None:
            dp._run_again = run_again
        for attr, fn in wrapped.items():
            setattr(Graph, attr, fn)


def floor(probe):
    import cupy

    from hornet.core.cuda import upload
    k = cupy.ElementwiseKernel("int64 x", "int64 y", "y = x", "floor_copy")
    one = cupy.zeros(1, dtype=cupy.int64)
    both = np.zeros((2, 1000), dtype=np.int64)
    stream = cupy.cuda.get_current_stream()

    def timed(fn, n=200):
        fn()
        stream.synchronize()
        ts = []
        for _ in range(n):
            t = time.perf_counter()
            fn()
            stream.synchronize()
            ts.append(time.perf_counter() - t)
        return med(ts) * 1e6
    print(f"- floor: sync alone {timed(lambda: None):.1f} us; elementwise launch + sync "
          f"{timed(lambda: k(one, one)):.1f}; upload of 2 x 1000 int64 + sync "
          f"{timed(lambda: upload(both)):.1f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--sizes", nargs="+", type=int, default=[1000, 10000])
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--stream", default="CollegeMsg")
    ap.add_argument("--stream-batches", nargs="+", type=int, default=[1000, 10000])
    ap.add_argument("--cprofile", action="store_true")
    ap.add_argument("--skip-graph", action="store_true")
    ap.add_argument("--deferred", action="store_true",
                    help="the Kronecker graph's host-pair inserts deferred")
    a = ap.parse_args(argv)
    import hornet
    print(f"# profile_pipe_gpu: hornet from {hornet.__file__}")
    import traceback
    probe = Probe()
    steps = [lambda: floor(probe)]
    if a.stream:
        steps.append(lambda: stream_replay(probe, a.stream, a.stream_batches, a.cprofile))
    if not a.skip_graph:
        steps.append(lambda: graph_calls(probe, a.scale, a.sizes, a.calls, a.cprofile,
                                         a.deferred))
    for step in steps:
        try:
            step()
        except Exception:            # the other parts still run
            traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
