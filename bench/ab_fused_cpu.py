"""Fused CPU pipelines versus the general one, same process, same batches.

Kronecker graph (undirected), with no edge property and with a float64 weight: batches of
random pairs inserted, then the edges they inserted deleted again; each batch runs on two
copies of the graph, one through the fused pipelines (``Graph._fused_insert`` /
``_fused_delete``, the CPU default) and one through the general find / keep / plan / merge
pipeline (the GPU's), alternating which goes first. Medians in ms.

    PYTHONPATH=. python bench/ab_fused_cpu.py [--scale 20] [--sizes 100000,1000000]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import hornet
from hornet.generators import kronecker_edges

from common import machine, write_table


def run(g: hornet.Graph, fused: bool, s, d, props):
    """(insert seconds, delete seconds) of one batch on ``g`` through the chosen pipeline."""
    hornet.Graph._fused_insert = hornet.Graph._fused_delete = fused
    try:
        t = time.perf_counter()
        c = g.insert_edges(s, d, **props)
        t_insert = time.perf_counter() - t
        t = time.perf_counter()
        g.delete_edges(c.src, c.dst)
        return t_insert, time.perf_counter() - t
    finally:
        hornet.Graph._fused_insert = hornet.Graph._fused_delete = True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--name", default="ab_fused_cpu")
    args = ap.parse_args()
    src, dst = kronecker_edges(args.scale, edge_factor=16, seed=1)
    rng = np.random.default_rng(9)
    rows = []
    for weighted in (False, True):
        props = {"weight": rng.random(src.size)} if weighted else {}
        fused = hornet.Graph.from_edges(src, dst, directed=False, device="cpu", **props)
        general = fused.copy()
        n = fused.num_vertices
        for b in (int(x) for x in args.sizes.split(",")):
            reps = 11 if b <= 100_000 else 5
            times = {True: ([], []), False: ([], [])}
            for r in range(reps + 1):
                s, d = rng.integers(0, n, b), rng.integers(0, n, b)
                batch = {"weight": rng.random(b)} if weighted else {}
                for f in ((True, False) if r % 2 else (False, True)):
                    ti, td = run(fused if f else general, f, s, d, batch)
                    if r:                               # round 0 warms up
                        times[f][0].append(ti)
                        times[f][1].append(td)
            med = {f: [statistics.median(x) * 1e3 for x in times[f]] for f in times}
            rows.append([f"Kronecker {args.scale}", "float64 weight" if weighted else "none", b,
                         f"{med[True][0]:.1f}", f"{med[False][0]:.1f}",
                         f"{med[False][0] / med[True][0]:.2f}", f"{med[True][1]:.1f}",
                         f"{med[False][1]:.1f}", f"{med[False][1] / med[True][1]:.2f}"])
            print(rows[-1], flush=True)
        fused.check()
        general.check()
    notes = f"""Machine: {machine()}.
Undirected Kronecker scale {args.scale} graph (edge factor 16, seed 1); batches of uniformly
random pairs (both directions stored); each insert is followed by the delete of the edges it
inserted. The same batches run on two copies of the graph, fused and general pipelines
alternating first; medians of 11 batches of up to 10^5 pairs, 5 above (after one warm-up).
Produced by `bench/ab_fused_cpu.py`."""
    write_table(args.name, "CPU updates: fused pipelines vs the general pipeline",
                ["graph", "edge properties", "batch", "fused insert ms", "general insert ms",
                 "general/fused", "fused delete ms", "general delete ms", "general/fused"],
                rows, notes)


if __name__ == "__main__":
    main()
