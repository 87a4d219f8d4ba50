"""Same-process A/B of the CPU small-batch path against the fused pipeline, by batch size.

One graph (Kronecker scale 20 by default, undirected); for each batch size, rounds of a fresh
random batch inserted then its inserted edges deleted, once through the small-batch path
(:mod:`hornet.batch.cpu_small`) and once through the fused pipeline (the graph's
``_small_pairs`` switched off), in alternating order. Both return the same changes (checked).
Sizes above the small path's limit (``CPU_SMALL_ENTRIES`` entries once mirrored) are raised
to it for the run, to show where the fused pipeline wins.

    PYTHONPATH=. python3 bench/ab_small_cpu.py [--scale 20] [--sizes 1,10,100,256,512,1024]
        [--rounds 41] [--name ab_small_cpu]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import hornet
import hornet.graph as graph_module
from hornet.generators import kronecker_edges

from common import machine, write_table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--sizes", default="1,10,100,256,512,1024")
    ap.add_argument("--rounds", type=int, default=41)
    ap.add_argument("--name", default="ab_small_cpu")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    graph_module.CPU_SMALL_ENTRIES = max(graph_module.CPU_SMALL_ENTRIES, 2 * max(sizes))
    s, d = kronecker_edges(args.scale, edge_factor=16, seed=1)
    g = hornet.Graph.from_edges(s, d, directed=False, device="cpu")
    n = g.num_vertices
    small_pairs = hornet.Graph._small_pairs
    paths = {"small": small_pairs, "fused": lambda self, src, dst: None}
    rng = np.random.default_rng(7)
    for _ in range(5):                          # warm-up: compile or load every kernel
        for path in paths.values():
            hornet.Graph._small_pairs = path
            c = g.insert_edges(rng.integers(0, n, 100), rng.integers(0, n, 100))
            g.delete_edges(c.src, c.dst)
    rows = []
    for b in sizes:
        times = {(p, op): [] for p in paths for op in ("insert", "delete")}
        for r in range(args.rounds):
            bs, bd = rng.integers(0, n, b), rng.integers(0, n, b)
            changes = []
            for p in (("small", "fused") if r % 2 else ("fused", "small")):
                hornet.Graph._small_pairs = paths[p]
                t = time.perf_counter()
                c = g.insert_edges(bs, bd)
                times[(p, "insert")].append(time.perf_counter() - t)
                t = time.perf_counter()
                gone = g.delete_edges(c.src, c.dst)
                times[(p, "delete")].append(time.perf_counter() - t)
                changes.append((c.src, c.dst, gone.src, gone.dst))
            if not all(np.array_equal(x, y) for x, y in zip(*changes)):
                raise AssertionError(f"the two paths changed different edges (batch {b})")
        med = {k: 1e6 * float(np.median(v)) for k, v in times.items()}
        rows.append([b, f"{med[('small', 'insert')]:.0f}", f"{med[('fused', 'insert')]:.0f}",
                     f"{med[('small', 'insert')] / med[('fused', 'insert')]:.2f}",
                     f"{med[('small', 'delete')]:.0f}", f"{med[('fused', 'delete')]:.0f}",
                     f"{med[('small', 'delete')] / med[('fused', 'delete')]:.2f}"])
        print(rows[-1], flush=True)
    hornet.Graph._small_pairs = small_pairs
    g.check()
    header = ["batch (pairs)", "small insert us", "fused insert us", "small / fused",
              "small delete us", "fused delete us", "small / fused"]
    notes = (f"Machine: {machine()}.\nGraph: Kronecker scale {args.scale} (edge factor 16), "
             f"undirected, {g.num_edges} edges. Per batch size, {args.rounds} rounds of a "
             "fresh uniformly random batch inserted, then the edges it inserted deleted, "
             "once through each path in alternating order (medians; identical changes "
             "checked). The small path serves batches of up to "
             f"{graph_module.CPU_SMALL_ENTRIES} entries once mirrored in this run (the "
             "library's limit is 1,024: 512 undirected pairs). Produced by "
             "`bench/ab_small_cpu.py`.")
    write_table(args.name, "CPU small-batch path against the fused pipeline", header, rows,
                notes)


if __name__ == "__main__":
    main()
