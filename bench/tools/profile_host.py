"""Where the host time of a batch or an algorithm call goes: cProfile of repeated calls.

    python3 -m bench.tools.profile_host [--device cpu] [--op insert] [--scale 20] [--batch 100000]
        [--calls 10] [--top 30]

Builds a Kronecker graph, makes a few untimed warm-up calls (kernels compiled or loaded), then
profiles ``--calls`` calls of ``--op``: insert or delete (random pairs inserted, then deleted
again; only the named operation is profiled), or triangles, spmv, bfs, truss (the ``algos``
function on the whole graph). Prints the functions by own time and by cumulative time. On a
GPU each call ends with a device synchronization, so time spent waiting for kernels shows in
the calls that wait (a read-back, ``synchronize``).
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys

import numpy as np

import hornet
from bench.common import kronecker

OPS = ("insert", "delete", "triangles", "spmv", "bfs", "truss")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.profile_host", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--op", choices=OPS, default="insert")
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--batch", type=int, default=100_000)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--top", type=int, default=30, help="functions listed per ordering")
    args = ap.parse_args(argv)
    xp = np
    if args.device == "gpu":
        import cupy as xp
    sync = (lambda: None) if args.device == "cpu" else xp.cuda.Device().synchronize
    s, d = kronecker(args.scale, xp=None if args.device == "cpu" else xp)
    g = hornet.Graph.from_edges(s, d, num_vertices=1 << args.scale, directed=False,
                                device=args.device)
    n = g.num_vertices
    rng = np.random.default_rng(3)
    x = xp.asarray(rng.random(n))
    source = int(np.argmax(g.degree().get() if args.device == "gpu" else g.degree()))
    algos = hornet.algos
    calls = {"triangles": lambda: algos.triangle_count(g), "spmv": lambda: algos.spmv(g, x),
             "bfs": lambda: algos.bfs(g, source), "truss": lambda: algos.max_truss(g)}
    prof = cProfile.Profile()

    def one(profiled: bool) -> None:
        if args.op in calls:
            if profiled:
                prof.enable()
            calls[args.op]()
            sync()
            prof.disable()
            return
        u = xp.asarray(rng.integers(0, n, args.batch))
        v = xp.asarray(rng.integers(0, n, args.batch))
        sync()
        if profiled and args.op == "insert":
            prof.enable()
        c = g.insert_edges(u, v)
        sync()
        prof.disable()
        if profiled and args.op == "delete":
            prof.enable()
        g.delete_edges(c.src, c.dst)
        sync()
        prof.disable()

    for _ in range(3):
        one(False)
    for _ in range(args.calls):
        one(True)
    print(f"Kronecker {args.scale} ({args.device}), {args.calls} calls of {args.op}"
          + (f" ({args.batch} pairs)" if args.op in ("insert", "delete") else ""))
    stats = pstats.Stats(prof, stream=sys.stdout)
    stats.sort_stats("tottime").print_stats(args.top)
    stats.sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
