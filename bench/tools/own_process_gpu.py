"""GPU update batches of two source trees, each in its own processes, alternating, with a probe
of the process's host speed next to every figure.

The update benchmark (``python3 -m bench updates_gpu``) times each tree in its own process.
Batches of about 10^5 edges are host-bound (the call's host time is its CUDA-event time: the
plan's read-back waits for the device, then the host queues the rest), so their figures
follow the host's speed, which on a shared machine moves between processes and within one
over seconds. This tool runs each tree ``--rounds`` times in fresh processes (order reversed
every other round) and prints, before each pass over a size, a probe: microseconds per queued
CuPy launch, per launch and synchronize, per 10^5 Python additions, and the CPU the process
runs on. Figures taken at one probe speed compare; a tree that is slower only where the probe
is slower is not slower.

    python3 -m bench.tools.own_process_gpu --base /tmp/base [--scales 20 24]
        [--sizes 100000] [--rounds 3] [--passes 2]

Each process: the updates benchmark's Kronecker graph (undirected), then per size and pass
random inserts (each undone untimed) and sampled existing edges deleted (each re-inserted
untimed), medians of 20 (10^5 and below) or 7 CUDA-event times, and the host time of the call.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _cpu_now() -> int:
    with open("/proc/self/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[36])


def probe(cupy) -> str:
    """Host and launch speed of this process, now."""
    sync = cupy.cuda.Device().synchronize
    x = cupy.zeros(1, dtype=cupy.int64)
    x += 1
    sync()
    t = time.perf_counter()
    for _ in range(1000):
        x += 1
    launch = (time.perf_counter() - t) * 1e3
    sync()
    t = time.perf_counter()
    for _ in range(300):
        x += 1
        sync()
    round_trip = (time.perf_counter() - t) / 300 * 1e6
    t = time.perf_counter()
    s = 0
    for i in range(100000):
        s += i
    py = (time.perf_counter() - t) * 1e6
    return (f"launch {launch:.1f} us, launch+sync {round_trip:.1f} us, py {py:.0f} us, "
            f"cpu {_cpu_now()}")


def worker(label: str, scales: list[int], sizes: list[int], passes: int) -> None:
    """The timings of the tree this process imports (its working directory)."""
    import cupy

    import hornet
    from bench.common import kronecker
    sync = cupy.cuda.Device().synchronize
    print(f"[{label}] hornet from {os.path.dirname(hornet.__file__)}", flush=True)
    for scale in scales:
        src, dst = kronecker(scale, seed=scale, xp=cupy)
        g = hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False,
                                    device="gpu")
        del src, dst
        sync()
        n = g.num_vertices
        es, ed = g.edges()
        rs = cupy.random.RandomState(1)
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        for p in range(passes):
            for b in sizes:
                speed = probe(cupy)
                reps = 20 if b <= 10**5 else 7
                ins = [(rs.randint(0, n, b, dtype=cupy.int64),
                        rs.randint(0, n, b, dtype=cupy.int64)) for _ in range(reps + 1)]
                picks = [rs.randint(0, es.size, b, dtype=cupy.int64) for _ in range(reps + 1)]
                dels = [(es[q], ed[q]) for q in picks]
                res = {}
                for op, batches in (("insert", ins), ("delete", dels)):
                    ev, host = [], []
                    for i, (s, d) in enumerate(batches):     # call 0: warm-up, untimed
                        t = time.perf_counter()
                        start.record()
                        c = g.insert_edges(s, d) if op == "insert" else g.delete_edges(s, d)
                        end.record()
                        h = time.perf_counter() - t
                        end.synchronize()
                        if i:
                            ev.append(cupy.cuda.get_elapsed_time(start, end) * 1e3)
                            host.append(h * 1e6)
                        if op == "insert":
                            g.delete_edges(c.src, c.dst)
                        else:
                            g.insert_edges(c.src, c.dst)
                        sync()
                    res[op] = (statistics.median(ev), statistics.median(host))
                print(f"[{label}] K{scale} b={b} pass {p}: insert {res['insert'][0]:.0f} us "
                      f"(host {res['insert'][1]:.0f}), delete {res['delete'][0]:.0f} us (host "
                      f"{res['delete'][1]:.0f}) | {speed}", flush=True)
        del g, es, ed
        cupy.get_default_memory_pool().free_all_blocks()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.own_process_gpu",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", type=Path, help="checkout holding the base tree")
    ap.add_argument("--scales", type=int, nargs="+", default=[20, 24])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10**5])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--worker", help=argparse.SUPPRESS)       # LABEL: time this process's tree
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.scales, args.sizes, args.passes)
        return
    if args.base is None:
        ap.error("--base is required")
    here = Path(__file__).resolve().parents[2]
    trees = {"base": args.base.resolve(), "new": here}
    script = str(Path(__file__).resolve())
    for r in range(1, args.rounds + 1):
        for name in (("base", "new") if r % 2 else ("new", "base")):
            tree = trees[name]
            env = dict(os.environ, PYTHONPATH=str(tree))
            cmd = [sys.executable, script, "--worker", f"{name}{r}", "--scales",
                   *map(str, args.scales), "--sizes", *map(str, args.sizes),
                   "--passes", str(args.passes)]
            subprocess.run(cmd, cwd=tree, env=env, check=False)


if __name__ == "__main__":
    main()
