"""CPU memory under churn: ping-pong batches, then deleting 90% of a Kronecker graph.

    python3 -m bench memory_churn_cpu [--scale 20] [--rounds 100] [--batch 100000]
    python3 -m bench memory_churn_cpu --quick      # scale 16, 20 rounds of 10^4

- Ping-pong: insert a batch of random pairs and delete what it inserted, round after round;
  the largest deviation of the reserved bytes from the first round.
- Shrinking: delete 90% of the edges of a fresh graph at random in five batches; reserved
  bytes after against before.
"""
from __future__ import annotations

import argparse

import numpy as np

import hornet
from bench.common import kronecker, write_table

NAME = "memory_churn_cpu"
MIB = 2**20


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench memory_churn_cpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=20, help="Kronecker scale")
    ap.add_argument("--rounds", type=int, default=100, help="ping-pong rounds")
    ap.add_argument("--batch", type=int, default=100_000, help="ping-pong batch size")
    ap.add_argument("--quick", action="store_true", help="scale 16, 20 rounds of 10^4")
    args = ap.parse_args(argv)
    if args.quick:
        args.scale, args.rounds, args.batch = 16, 20, 10_000
    s, d = kronecker(args.scale)
    g = hornet.Graph.from_edges(s, d, directed=False, device="cpu")
    n, edges = g.num_vertices, g.num_edges
    built = g.memory_stats()["reserved_bytes"]
    rng = np.random.default_rng(0)
    bs, bd = rng.integers(0, n, args.batch), rng.integers(0, n, args.batch)
    first, worst, reserved = None, 0.0, 0
    for _ in range(args.rounds):
        c = g.insert_edges(bs, bd)
        g.delete_edges(c.src, c.dst)
        reserved = g.memory_stats()["reserved_bytes"]
        first = first or reserved
        worst = max(worst, abs(reserved - first) / first)
    g.check()
    rows = [[f"ping-pong: {args.rounds} rounds of {args.batch} random pairs inserted, then "
             "deleted", f"{built / MIB:.1f}", f"{first / MIB:.1f} (first round)",
             f"{reserved / MIB:.1f} (last round)", f"{100 * worst:.2f}% largest deviation "
             "from the first round"]]

    g = hornet.Graph.from_edges(s, d, directed=False, device="cpu")
    before = g.memory_stats()["reserved_bytes"]
    es, ed = g.edges()
    doomed = rng.permutation(es.size)[: int(0.9 * es.size)]
    for chunk in np.array_split(doomed, 5):
        g.delete_edges(es[chunk], ed[chunk])
    after = g.memory_stats()["reserved_bytes"]
    g.check()
    rows.append(["shrink: 90% of the edges deleted at random in 5 batches", f"{before / MIB:.1f}",
                 f"{before / MIB:.1f}", f"{after / MIB:.1f}",
                 f"{after / before:.3f} of the memory before"])
    write_table(NAME, "Memory under churn (CPU backend)",
                ["scenario", "built MiB", "reference MiB", "after MiB", "result"], rows,
                f"""Kronecker scale {args.scale} (edge factor 16, seed 1), undirected: {n} vertices,
{edges} edges; default settings. Reserved bytes from `Graph.memory_stats()` (block arrays, bit
trees, vertex table); `Graph.check()` passes after each scenario.""")


if __name__ == "__main__":
    main()
