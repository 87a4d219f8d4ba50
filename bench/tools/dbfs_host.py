"""DynamicBFS on the GPU: where the host's part of an update goes.

    PYTHONPATH=. python3 bench/tools/dbfs_host.py [--scale 20] [--batch 1000] [--calls 300]
        [--kind insert|delete]

Builds a Kronecker graph on the device, applies one batch (random pairs inserted, or edges of
the graph deleted) and updates once, then
times ``--calls`` back-to-back calls of ``DynamicBFS.update`` on that same change without
synchronising (the host's time per call while the device works through the queue; the counts
drift, the levels stay, and the state is thrown away after), the same calls with the driver's
launch replaced by a no-op (the Python part alone), bare driver launches of an empty kernel
(plain and cooperative, the same argument buffer size) and ``cupy.cuda.get_current_stream``,
and prints a cProfile of the update calls by own time.
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import numpy as np


def _per_call(fn, calls: int) -> float:
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t) / calls * 1e6


def main(argv=None) -> None:
    import cupy
    import hornet
    import hornet.generators
    import hornet.testing
    from hornet.algos.bfs.dynamic import DynamicBFS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--kind", choices=("insert", "delete"), default="insert")
    args = ap.parse_args(argv)
    s, d = hornet.generators.kronecker_edges(args.scale, seed=1, xp=cupy)
    g = hornet.Graph.from_edges(s, d, directed=False, device="gpu")
    source = int(hornet.testing.to_host(g.degree()).argmax())
    bf = DynamicBFS(g, source)
    rng = np.random.default_rng(1)
    if args.kind == "insert":
        ch = g.insert_edges(cupy.asarray(rng.integers(0, g.num_vertices, args.batch)),
                            cupy.asarray(rng.integers(0, g.num_vertices, args.batch)))
    else:
        es, ed = g.edges()
        pick = cupy.asarray(np.unique(rng.integers(0, es.shape[0], args.batch)))
        ch = g.delete_edges(es[pick].astype(cupy.int64), ed[pick].astype(cupy.int64))
        del es, ed
    bf.update(ch)
    cupy.cuda.Device().synchronize()
    drv = cupy.cuda.driver
    out = {}
    out["update"] = _per_call(lambda: bf.update(ch), args.calls)
    cupy.cuda.Device().synchronize()
    real = drv.launchKernel, drv.launchCooperativeKernel
    try:
        drv.launchKernel = lambda *a: None
        drv.launchCooperativeKernel = lambda *a: None
        out["update, no launch"] = _per_call(lambda: bf.update(ch), args.calls)
    finally:
        drv.launchKernel, drv.launchCooperativeKernel = real
    mod = cupy.RawModule(code='extern "C" __global__ void empty13(const void* a, const void* b,'
                              ' const void* c, const void* d, const void* e, const void* f,'
                              ' const void* g, const void* h, const void* i, long long j,'
                              ' long long k, long long l, int m) {}')
    ptr = mod.get_function("empty13").kernel.ptr
    buf = np.zeros(13, np.uint64)
    slots = np.arange(13, dtype=np.uint64) * 8 + np.uint64(buf.ctypes.data)
    addr = int(slots.ctypes.data)
    grid = bf._state.grid(2 * args.batch)
    stream = cupy.cuda.get_current_stream().ptr
    out["launchKernel, empty"] = _per_call(
        lambda: drv.launchKernel(ptr, grid, 1, 1, 256, 1, 1, 0, stream, addr, 0), args.calls)
    cupy.cuda.Device().synchronize()
    out["launchCooperativeKernel, empty"] = _per_call(
        lambda: drv.launchCooperativeKernel(ptr, grid, 1, 1, 256, 1, 1, 0, stream, addr),
        args.calls)
    cupy.cuda.Device().synchronize()
    out["get_current_stream"] = _per_call(lambda: cupy.cuda.get_current_stream().ptr,
                                          args.calls)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    idle = []
    for _ in range(20):
        cupy.cuda.Device().synchronize()
        start.record()
        t = time.perf_counter()
        bf.update(ch)
        h = time.perf_counter() - t
        end.record()
        end.synchronize()
        idle.append((h * 1e6, cupy.cuda.get_elapsed_time(start, end) * 1e3))
    out["update from idle: host"] = float(np.median([a for a, _ in idle]))
    out["update from idle: events"] = float(np.median([b for _, b in idle]))
    print(f"# kron{args.scale}, {args.kind} batch {args.batch} ({ch.src.dtype} ids), "
          f"grid {grid}, per call (us):")
    for k, v in out.items():
        print(f"{k}: {v:.1f}")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(args.calls):
        bf.update(ch)
    prof.disable()
    cupy.cuda.Device().synchronize()
    pstats.Stats(prof).sort_stats("tottime").print_stats(14)


if __name__ == "__main__":
    main()
