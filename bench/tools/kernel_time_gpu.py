"""Per-kernel GPU time of large update batches (CUPTI through torch.profiler, which sees CuPy's launches).

    python3 -m bench.tools.kernel_time_gpu [--scale 24] [--batch 10000000] [--reps 3] [--existing]
        [--trace-dir DIR]

Where an insert / delete of ``--batch`` random pairs into a Kronecker graph spends its device
time, kernel by kernel, and how much of the wall time no kernel runs (host work and syncs).
``--existing`` profiles deletes of existing edges sampled at random (as the updates_gpu
benchmark times them; put back untimed) instead of deleting what the insert added.
``--trace-dir`` also writes one insert and one delete as Chrome traces. Needs PyTorch with CUDA.
"""
from __future__ import annotations

import argparse
import contextlib
import os

import hornet
from bench.common import kronecker, require_gpu

NEEDS_GPU = True


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.kernel_time_gpu",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--batch", type=int, default=10**7)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--existing", action="store_true",
                    help="delete existing edges sampled at random")
    ap.add_argument("--trace-dir", default="", help="write Chrome traces here")
    args = ap.parse_args(argv)
    require_gpu("kernel_time_gpu")
    import cupy
    from torch.profiler import ProfilerActivity, profile

    src, dst = kronecker(args.scale, seed=args.scale, xp=cupy)
    g = hornet.Graph.from_edges(src, dst, num_vertices=1 << args.scale, directed=False,
                                device="gpu")
    del src, dst
    n = g.num_vertices
    rs = cupy.random.RandomState(3)
    batches = [(rs.randint(0, n, args.batch, dtype=cupy.int64),
                rs.randint(0, n, args.batch, dtype=cupy.int64)) for _ in range(args.reps + 1)]
    print(f"scale {args.scale}: {g.num_edges} edges; batch {args.batch}", flush=True)
    old_batches = None
    if args.existing:
        es, ed = g.edges()
        picks = [rs.randint(0, es.size, args.batch, dtype=cupy.int64)
                 for _ in range(args.reps + 1)]
        old_batches = [(es[p], ed[p]) for p in picks]
        del es, ed

    def insert_then_delete(i: int, profiled: str | None = None, activities=None):
        """Insert batch ``i``, then delete (existing edges, or what the insert added);
        ``profiled`` ("insert", "delete" or None) runs inside the profiler.
        Returns (insert ms, delete ms, profile)."""
        ev = [cupy.cuda.Event() for _ in range(4)]
        prof = None
        ds = dd = None                 # the delete's pairs: set by the insert before it
        for label in ("insert", "delete"):
            cupy.cuda.Device().synchronize()
            ctx = (profile(activities=activities or [ProfilerActivity.CUDA])
                   if profiled == label else contextlib.nullcontext())
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
                if old_batches is not None:
                    g.delete_edges(c.src, c.dst)
                    ds, dd = old_batches[i]
                else:
                    ds, dd = c.src, c.dst
        if old_batches is not None:
            g.insert_edges(r.src, r.dst)
        return (cupy.cuda.get_elapsed_time(ev[0], ev[1]),
                cupy.cuda.get_elapsed_time(ev[2], ev[3]), prof)

    insert_then_delete(0)
    for i in range(1, args.reps + 1):
        a, b = insert_then_delete(i)[:2]
        print(f"unprofiled run {i}: insert {a:.2f} ms ({args.batch / (a / 1e3):.3g} edges/s), "
              f"delete {b:.2f} ms", flush=True)
    for label in ("insert", "delete"):
        times: dict[str, float] = {}
        for i in range(1, args.reps + 1):
            prof = insert_then_delete(i, label)[2]
            for e in prof.key_averages():
                t = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0)
                if t:
                    times[e.key[:70]] = times.get(e.key[:70], 0.0) + t / 1e3
        total = sum(times.values()) / args.reps
        print(f"\n{label}: device time in kernels and copies {total:.2f} ms per batch")
        for k, v in sorted(times.items(), key=lambda kv: -kv[1])[:30]:
            print(f"  {v / args.reps:8.3f} ms  {k}")
    if args.trace_dir:
        for label in ("insert", "delete"):
            prof = insert_then_delete(1, label, [ProfilerActivity.CUDA, ProfilerActivity.CPU])[2]
            prof.export_chrome_trace(os.path.join(args.trace_dir, f"trace_{label}.json"))


if __name__ == "__main__":
    main()
