"""CPU inserts of random batches round after round on one freshly built graph: time, lists
that get a new block, and the batch pipeline's stages per round.

    PYTHONPATH=. python3 bench/insert_rounds_cpu.py [--scale 20] [--batch 100000] [--rounds 10]

After each timed insert the inserted edges are deleted again (untimed), as
``bench_updates_cpu.py`` restores its graph. ``moved``: the segments of the batch that get a
fresh block (lists that had none, and full lists that outgrow theirs). Stage timers as in
``profile_stages_cpu.py`` (each stage's time includes its Python glue). Prints a markdown
table.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import hornet
from hornet.batch import cpu_kernels as K
from hornet.generators import kronecker_edges

import profile_stages_cpu as stages

STAGES = ("merge_insert", "plan_insert", "mm.release", "sorted_unique_pairs",
          "mm.allocate_counts")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--batch", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    s, d = kronecker_edges(args.scale, edge_factor=16, seed=1)
    g = hornet.Graph.from_edges(s, d, directed=False, device="cpu")
    n = g.num_vertices
    rng = np.random.default_rng(7)
    c = g.insert_edges(rng.integers(0, n, 1000), rng.integers(0, n, 1000))   # compile / load
    g.delete_edges(c.src, c.dst)
    plan = K.plan_insert
    seen = {}

    def counted(*a, **k):
        out = plan(*a, **k)
        seen["moved"] = int(out[-1][0].sum())    # the blocks the plan requests
        return out

    K.plan_insert = counted
    stages.instrument(g)
    print(f"| round | insert ms | lists moved | {' | '.join(STAGES)} |")
    print("|---" * (3 + len(STAGES)) + "|")
    for r in range(1, args.rounds + 1):
        bs, bd = rng.integers(0, n, args.batch), rng.integers(0, n, args.batch)
        stages.ACC.clear()
        t = time.perf_counter()
        c = g.insert_edges(bs, bd)
        total = time.perf_counter() - t
        moved, acc = seen.get("moved", 0), dict(stages.ACC)
        g.delete_edges(c.src, c.dst)
        print(f"| {r} | {1e3 * total:.2f} | {moved} | " +
              " | ".join(f"{1e3 * acc.get(k, 0.0):.2f}" for k in STAGES) + " |", flush=True)
    g.check()


if __name__ == "__main__":
    main()
