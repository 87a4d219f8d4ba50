"""Where a small GPU batch (default 1,000 edges) spends its host time: median wall time of
insert and delete alone, then cProfile of each (syncs show as waits in .get / __int__).

    PYTHONPATH=. python3 bench/profile_small_gpu.py [scale] [batch]
"""
import cProfile
import pstats
import statistics
import sys
import time

import cupy

import hornet
from hornet.generators import kronecker_edges

scale = int(sys.argv[1]) if len(sys.argv) > 1 else 20
batch = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
src, dst = kronecker_edges(scale, seed=scale, xp=cupy)
g = hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False, device="gpu")
rs = cupy.random.RandomState(3)
n = g.num_vertices
batches = [(rs.randint(0, n, batch, dtype=cupy.int64), rs.randint(0, n, batch, dtype=cupy.int64))
           for _ in range(220)]
sync = cupy.cuda.Device().synchronize


def run(profile=None):
    ins, dels = [], []
    for s, d in batches:
        sync()
        t = time.perf_counter()
        if profile is not None and profile[0] == "insert":
            profile[1].enable()
        c = g.insert_edges(s, d)
        len(c)
        sync()
        if profile is not None:
            profile[1].disable()
        ins.append(time.perf_counter() - t)
        t = time.perf_counter()
        if profile is not None and profile[0] == "delete":
            profile[1].enable()
        g.delete_edges(c.src, c.dst)
        sync()
        if profile is not None:
            profile[1].disable()
        dels.append(time.perf_counter() - t)
    return statistics.median(ins[20:]), statistics.median(dels[20:])


run()
ti, td = run()
print(f"scale {scale}, batch {batch}: insert {ti * 1e6:.0f} us, delete {td * 1e6:.0f} us (medians)")


def stage_prepare():
    """The preparing kernel and its header read alone (it changes nothing)."""
    s, d = batches[0]
    times = []
    for _ in range(200):
        sync()
        t = time.perf_counter()
        g._small.prepare(s, d, True, 0, g._degree, g._size_class, g._edge_ptr,
                         g._mm.min_size_class)
        times.append(time.perf_counter() - t)
    return statistics.median(times[20:])


def accumulate():
    """Inserts of fresh random edges that stay (lists grow and move, old blocks go back)."""
    times = []
    for s, d in batches:
        sync()
        t = time.perf_counter()
        len(g.insert_edges(s[::-1].copy(), d))
        sync()
        times.append(time.perf_counter() - t)
    return statistics.median(times[20:])


def prepare_kernel(pairs):
    """GPU time of the preparing kernel alone (CUDA events), median of 100."""
    from hornet.batch.gpu_small import _CU, _ID_TYPES, _NAMES, COPY_MAX_CLASS, PREPARE_THREADS
    from hornet.memory.gpu_copy import function, i64
    import numpy as np
    s, d = rs.randint(0, n, pairs, dtype=cupy.int64), rs.randint(0, n, pairs, dtype=cupy.int64)
    rows = cupy.empty(8192, dtype=cupy.int32)
    fn = function(_CU, "small_prepare<long long>", _NAMES)
    args = (s, d, i64(pairs), np.int32(1), np.int32(0), g._degree, g._size_class, g._edge_ptr,
            i64(g._degree.shape[0]), i64(g._mm.min_size_class), i64(COPY_MAX_CLASS),
            g._small.workspace, rows)
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for _ in range(110):
        start.record()
        fn((1,), (PREPARE_THREADS,), args)
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop) * 1e3)
    return statistics.median(times[10:])


if g._small is not None:
    print(f"  prepare kernel + header read: {stage_prepare() * 1e6:.0f} us")
    print("  prepare kernel alone (us) by pairs: " + ", ".join(
        f"{p}: {prepare_kernel(p):.0f}" for p in (1, 100, 500, 1000, 2000)))
print(f"  inserts that stay (graph grows): {accumulate() * 1e6:.0f} us")
for what in ("insert", "delete"):
    pr = cProfile.Profile()
    run((what, pr))
    print(f"===== {what}: cProfile over {len(batches)} batches")
    pstats.Stats(pr).sort_stats("tottime").print_stats(45)
    pstats.Stats(pr).sort_stats("cumtime").print_stats(45)


def phase_clocks(pairs):
    """Cycles spent in each phase of small_prepare (a copy compiled with phase clocks)."""
    import numpy as np
    from hornet.batch import gpu_small
    from hornet.batch.gpu_small import COPY_MAX_CLASS
    from hornet.memory.gpu_copy import _HEADERS, i64
    code = "#define SMALL_BATCH_CLOCKS\n" + open(gpu_small._CU).read()
    mod = cupy.RawModule(code=code, options=("-std=c++17", f"-I{_HEADERS}"),
                         name_expressions=["small_prepare<long long>"])
    fn = mod.get_function("small_prepare<long long>")
    s, d = rs.randint(0, n, pairs, dtype=cupy.int64), rs.randint(0, n, pairs, dtype=cupy.int64)
    rows = cupy.empty(8192, dtype=cupy.int32)
    ws = g._small.workspace
    runs = []
    for _ in range(30):
        fn((1,), (gpu_small.PREPARE_THREADS,),
           (s, d, i64(pairs), np.int32(1), np.int32(0), g._degree, g._size_class, g._edge_ptr,
            i64(g._degree.shape[0]), i64(g._mm.min_size_class), i64(COPY_MAX_CLASS),
            ws, rows))
        runs.append(np.diff(ws[192:199].get()))
    names = ["load", "sort", "search", "compact", "segments", "per-segment"]
    med = np.median(np.array(runs[5:]), axis=0)
    return ", ".join(f"{a} {b / 1.7e3:.1f}" for a, b in zip(names, med))


if g._small is not None:
    for p in (100, 1000, 2000):
        print(f"  prepare phases (us at 1.7 GHz), {p} pairs: {phase_clocks(p)}")
