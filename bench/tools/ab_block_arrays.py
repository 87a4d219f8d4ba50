"""Same-process A/B of two block-array sizes: the update benchmark's sequence on Kronecker graphs.

Two graphs are built from the same edges, differing only in ``block_array_edges``. Each then
meets the batches of the updates_cpu benchmark (random inserts and sampled deletes of 1 to 10^5
edges, each undone untimed), the two graphs taking turns batch size by batch size, the order
swapped from trial to trial. Reported: every timed 10^5-edge insert, their medians, and the
memory each graph holds after a trial (reserved MiB, utilization), so that a speed gain is
weighed against the memory it costs.

    python3 -m bench.tools.ab_block_arrays 65536 262144 [--trials 4] [--scale 20]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import hornet

from bench.common import kronecker

SIZES = ((1, 30), (10, 30), (100, 30), (1000, 10), (10**4, 10), (10**5, 5))   # batch, repeats


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.ab_block_arrays", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sizes", type=int, nargs=2, help="the two block_array_edges settings")
    ap.add_argument("--trials", type=int, default=4)
    ap.add_argument("--scale", type=int, default=20)
    args = ap.parse_args(argv)
    a, b = args.sizes
    s, d = kronecker(args.scale)
    inserts = {a: [], b: []}
    for trial in range(args.trials):
        graphs = {k: hornet.Graph.from_edges(s, d, directed=False, device="cpu",
                                             block_array_edges=k) for k in (a, b)}
        n = graphs[a].num_vertices
        es, ed = graphs[a].edges()
        rng = np.random.default_rng(42 + trial)
        for g in graphs.values():                # the benchmark's warm-up batch
            c = g.insert_edges(rng.integers(0, n, 1000), rng.integers(0, n, 1000))
            g.delete_edges(c.src, c.dst)
        for size, reps in SIZES:
            ins = [(rng.integers(0, n, size), rng.integers(0, n, size)) for _ in range(reps)]
            picks = [rng.choice(es.size, size=size, replace=False) for _ in range(reps)]
            dels = [(es[p].astype(np.int64), ed[p].astype(np.int64)) for p in picks]
            for k in ((a, b) if trial % 2 == 0 else (b, a)):
                g = graphs[k]
                for x, y in ins:
                    t = time.perf_counter()
                    c = g.insert_edges(x, y)
                    elapsed = time.perf_counter() - t
                    g.delete_edges(c.src, c.dst)
                    if size == SIZES[-1][0]:
                        inserts[k].append(elapsed)
                for x, y in dels:
                    c = g.delete_edges(x, y)
                    g.insert_edges(c.src, c.dst)
        for k in (a, b):
            m = graphs[k].memory_stats()
            print(f"trial {trial}, block_array_edges {k}: reserved "
                  f"{m['reserved_bytes'] / 2**20:.1f} MiB, utilization {m['utilization']:.3f}, "
                  f"{m['block_arrays']} block arrays", flush=True)
    print(f"Kronecker {args.scale}, {SIZES[-1][0]}-edge inserts, {args.trials} trials")
    for k in (a, b):
        t = np.array(inserts[k]) * 1e3
        print(f"  block_array_edges {k}: median {np.median(t):.2f} ms; "
              + " ".join(f"{x:.2f}" for x in t))
    print(f"  ratio of medians {np.median(inserts[b]) / np.median(inserts[a]):.3f}")


if __name__ == "__main__":
    main()
