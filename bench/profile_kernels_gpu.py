"""Per-kernel GPU time of large batches (CUPTI through torch.profiler, which sees CuPy's
launches too): where an insert / delete of ``batch`` random pairs into a Kronecker graph spends
its device time, and how much of the wall time no kernel runs (host work and syncs).

    PYTHONPATH=. python3 bench/profile_kernels_gpu.py [scale] [batch] [reps]
"""
import sys
import time

import cupy

import hornet
from hornet.generators import kronecker_edges

scale = int(sys.argv[1]) if len(sys.argv) > 1 else 24
batch = int(sys.argv[2]) if len(sys.argv) > 2 else 10**7
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 3

src, dst = kronecker_edges(scale, seed=scale, xp=cupy)
g = hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False, device="gpu")
del src, dst
n = g.num_vertices
rs = cupy.random.RandomState(3)
batches = [(rs.randint(0, n, batch, dtype=cupy.int64), rs.randint(0, n, batch, dtype=cupy.int64))
           for _ in range(reps + 1)]
print(f"scale {scale}: {g.num_edges} edges; batch {batch}", flush=True)


def one(s, d):
    ev = [cupy.cuda.Event() for _ in range(3)]
    ev[0].record()
    c = g.insert_edges(s, d)
    ev[1].record()
    g.delete_edges(c.src, c.dst)
    ev[2].record()
    ev[2].synchronize()
    return (cupy.cuda.get_elapsed_time(ev[0], ev[1]), cupy.cuda.get_elapsed_time(ev[1], ev[2]))


one(*batches[0])
walls = [one(*b) for b in batches[1:]]
for i, (a, b) in enumerate(walls):
    print(f"unprofiled run {i}: insert {a:.2f} ms ({batch / a / 1e3:.3g} edges/s), "
          f"delete {b:.2f} ms", flush=True)

import torch                                   # noqa: E402  (CUPTI for CuPy kernels too)
from torch.profiler import ProfilerActivity, profile  # noqa: E402

for label in ("insert", "delete"):
    times = {}
    cupy.cuda.Device().synchronize()
    for s, d in batches[1:]:
        if label == "insert":
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                c = g.insert_edges(s, d)
                cupy.cuda.Device().synchronize()
            g.delete_edges(c.src, c.dst)
        else:
            c = g.insert_edges(s, d)
            cupy.cuda.Device().synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                g.delete_edges(c.src, c.dst)
                cupy.cuda.Device().synchronize()
        for e in prof.key_averages():
            t = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0)
            if t:
                k = e.key[:70]
                times[k] = times.get(k, 0.0) + t / 1e3
        cupy.cuda.Device().synchronize()
    total = sum(times.values()) / reps
    print(f"\n{label}: device time in kernels and copies {total:.2f} ms per batch")
    for k, v in sorted(times.items(), key=lambda kv: -kv[1])[:30]:
        print(f"  {v / reps:8.3f} ms  {k}")

# one insert and one delete as Chrome traces (kernel order, gaps = host work and syncs)
import os  # noqa: E402
out = os.environ.get("TRACE_DIR")
if out:
    s, d = batches[1]
    cupy.cuda.Device().synchronize()
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        c = g.insert_edges(s, d)
        cupy.cuda.Device().synchronize()
    prof.export_chrome_trace(os.path.join(out, "trace_insert.json"))
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        g.delete_edges(c.src, c.dst)
        cupy.cuda.Device().synchronize()
    prof.export_chrome_trace(os.path.join(out, "trace_delete.json"))

# host time: cProfile of one insert and one delete (device syncs show as waits)
if os.environ.get("CPROFILE"):
    import cProfile  # noqa: E402
    import pstats  # noqa: E402
    for label in ("insert", "delete"):
        s, d = batches[2]
        cupy.cuda.Device().synchronize()
        pr = cProfile.Profile()
        if label == "insert":
            pr.enable()
            c = g.insert_edges(s, d)
            cupy.cuda.Device().synchronize()
            pr.disable()
            g.delete_edges(c.src, c.dst)
        else:
            c = g.insert_edges(s, d)
            cupy.cuda.Device().synchronize()
            pr.enable()
            g.delete_edges(c.src, c.dst)
            cupy.cuda.Device().synchronize()
            pr.disable()
        print(f"\n===== {label}: cProfile")
        st = pstats.Stats(pr)
        st.sort_stats("cumulative").print_stats(30)
        st.sort_stats("tottime").print_stats(25)
