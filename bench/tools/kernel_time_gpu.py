"""Per-kernel GPU time of large batches (CUPTI through torch.profiler, which sees CuPy's
launches too): where an insert / delete of ``batch`` random pairs into a Kronecker graph spends
its device time, and how much of the wall time no kernel runs (host work and syncs).

    PYTHONPATH=. python3 bench/profile_kernels_gpu.py [scale] [batch] [reps]

EXISTING=1 profiles deletes of existing edges sampled at random (as bench_updates_gpu.py times
them; the deleted edges are put back untimed) instead of deleting what the insert added.
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
import os  # noqa: E402
existing = bool(os.environ.get("EXISTING"))
if existing:
    es, ed = g.edges()
    picks = [rs.randint(0, es.size, batch, dtype=cupy.int64) for _ in range(reps + 1)]
    old_batches = [(es[p], ed[p]) for p in picks]
    del es, ed


def delete_of(i, c):
    """Delete batch ``i``: existing edges (EXISTING=1) or what the insert ``c`` added; the
    second result undoes the delete (untimed)."""
    if existing:
        return old_batches[i], lambda r: g.insert_edges(r.src, r.dst)
    return (c.src, c.dst), lambda r: None


def insert_then_delete(i, profiled=None):
    """Insert batch ``i``, then the delete of :func:`delete_of`; ``profiled`` ("insert",
    "delete" or None) is run inside a CUDA profiler. Returns (insert ms, delete ms, profile)."""
    ev = [cupy.cuda.Event() for _ in range(4)]
    prof = None
    for label in ("insert", "delete"):
        cupy.cuda.Device().synchronize()
        ctx = profile(activities=PROFILED) if profiled == label else contextlib.nullcontext()
        with ctx as p:
            ev[0 if label == "insert" else 2].record()
            if label == "insert":
                c = g.insert_edges(*batches[i])
            else:
                r = g.delete_edges(ds, dd)
            ev[1 if label == "insert" else 3].record()
            cupy.cuda.Device().synchronize()
        prof = p if profiled == label else prof
        if label == "insert":
            if existing:
                g.delete_edges(c.src, c.dst)
            (ds, dd), undo = delete_of(i, c)
    undo(r)
    return (cupy.cuda.get_elapsed_time(ev[0], ev[1]), cupy.cuda.get_elapsed_time(ev[2], ev[3]),
            prof)


import contextlib  # noqa: E402

import torch                                   # noqa: E402  (CUPTI for CuPy kernels too)
from torch.profiler import ProfilerActivity, profile  # noqa: E402

PROFILED = [ProfilerActivity.CUDA]
insert_then_delete(0)
walls = [insert_then_delete(i)[:2] for i in range(1, reps + 1)]
for i, (a, b) in enumerate(walls):
    print(f"unprofiled run {i}: insert {a:.2f} ms ({batch / a / 1e3:.3g} edges/s), "
          f"delete {b:.2f} ms", flush=True)

for label in ("insert", "delete"):
    times = {}
    for i in range(1, reps + 1):
        prof = insert_then_delete(i, label)[2]
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
out = os.environ.get("TRACE_DIR")
if out:
    PROFILED = [ProfilerActivity.CUDA, ProfilerActivity.CPU]
    for label in ("insert", "delete"):
        insert_then_delete(1, label)[2].export_chrome_trace(
            os.path.join(out, f"trace_{label}.json"))

# host time: cProfile of one insert and one delete (device syncs show as waits)
if os.environ.get("CPROFILE"):
    import cProfile  # noqa: E402
    import pstats  # noqa: E402

    class CProfile(cProfile.Profile):
        def __init__(self, activities=None):
            super().__init__()

    profile = CProfile
    for label in ("insert", "delete"):
        pr = insert_then_delete(2, label)[2]
        print(f"\n===== {label}: cProfile")
        st = pstats.Stats(pr)
        st.sort_stats("cumulative").print_stats(30)
        st.sort_stats("tottime").print_stats(25)
