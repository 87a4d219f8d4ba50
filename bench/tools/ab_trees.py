"""Same-process A/B of two source trees: CPU insert or delete batches into Kronecker graphs.

The 2-core VM's speed drifts by 20-50% between runs and even between minutes, so comparing
two versions of the code in separate processes hides effects of 10-15%. This script loads
a second tree (``--base``: any checkout, e.g. made with ``git worktree add /tmp/base HEAD``)
as the package ``hornet_base`` next to the working tree's ``hornet``, builds the same graph
with both, and times the same batches on each in alternating order, round after round. It
checks that both return the same changes, and reports medians and the median of the
per-round ratios (new / base: under 1 is faster).

    PYTHONPATH=. python3 bench/ab_tree_cpu.py --base /tmp/base [--scale 20] [--batch 100000]
        [--rounds 21] [--op insert|delete] [--fresh 5]

``--fresh N`` rebuilds both graphs every N rounds, as the benchmark's batches meet a freshly
built graph (lists still exactly fitting their blocks); by default the graphs are built once
and warmed up by three batches first.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import hornet
from hornet.generators import kronecker_edges


def load_base(tree: Path):
    """The package ``hornet`` of checkout ``tree``, imported as ``hornet_base`` (copied to a
    temporary folder: its relative imports then resolve inside the copy)."""
    where = Path(tempfile.mkdtemp(prefix="hornet-ab-"))
    shutil.copytree(tree / "hornet", where / "hornet_base",
                    ignore=shutil.ignore_patterns("__pycache__"))
    sys.path.insert(0, str(where))
    import hornet_base
    return hornet_base


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", type=Path, required=True, help="checkout holding the base tree")
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--batch", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--op", choices=("insert", "delete"), default="insert")
    ap.add_argument("--fresh", type=int, default=0,
                    help="rebuild both graphs every this many rounds (0: never)")
    args = ap.parse_args()
    base = load_base(args.base)
    s, d = kronecker_edges(args.scale, edge_factor=16, seed=1)

    def build():
        return {"base": base.Graph.from_edges(s, d, directed=False, device="cpu"),
                "new": hornet.Graph.from_edges(s, d, directed=False, device="cpu")}

    graphs = build()
    n = graphs["new"].num_vertices
    es, ed = graphs["new"].edges()
    rng = np.random.default_rng(7)
    for g in graphs.values():                  # warm-up: compile or load every kernel
        for _ in range(3):
            c = g.insert_edges(rng.integers(0, n, args.batch), rng.integers(0, n, args.batch))
            g.delete_edges(c.src, c.dst)
    times = {"base": [], "new": []}
    for r in range(args.rounds):
        if args.fresh and r % args.fresh == 0:
            graphs = None
            graphs = build()
            for g in graphs.values():          # the benchmark's warm-up batch
                c = g.insert_edges(rng.integers(0, n, 1000), rng.integers(0, n, 1000))
                g.delete_edges(c.src, c.dst)
        if args.op == "insert":
            bs, bd = rng.integers(0, n, args.batch), rng.integers(0, n, args.batch)
        else:
            pick = rng.choice(es.size, size=args.batch, replace=False)
            bs, bd = es[pick].astype(np.int64), ed[pick].astype(np.int64)
        changes = {}
        for name in (("base", "new") if r % 2 else ("new", "base")):
            g = graphs[name]
            t = time.perf_counter()
            c = g.insert_edges(bs, bd) if args.op == "insert" else g.delete_edges(bs, bd)
            times[name].append(time.perf_counter() - t)
            changes[name] = (c.src.copy(), c.dst.copy())
            if args.op == "insert":           # restore (untimed)
                g.delete_edges(c.src, c.dst)
            else:
                g.insert_edges(c.src, c.dst)
        if not all(np.array_equal(a, b) for a, b in zip(changes["base"], changes["new"])):
            raise SystemExit(f"round {r}: the two trees returned different changes")
    graphs["new"].check()
    t_base, t_new = np.array(times["base"]), np.array(times["new"])
    print(f"Kronecker {args.scale}, {args.op} batches of {args.batch}, {args.rounds} rounds, "
          f"alternating order")
    print(f"  base: median {np.median(t_base) * 1e3:.2f} ms, min {t_base.min() * 1e3:.2f} ms")
    print(f"  new:  median {np.median(t_new) * 1e3:.2f} ms, min {t_new.min() * 1e3:.2f} ms")
    print(f"  new / base: per-round ratio median {np.median(t_new / t_base):.3f}, "
          f"ratio of medians {np.median(t_new) / np.median(t_base):.3f}")
    # the tree that runs second in a round may gain or lose from the first one's work, so
    # the rounds of each order are summed up apart and the two medians averaged
    ratio = t_new / t_base
    new_first, base_first = np.median(ratio[0::2]), np.median(ratio[1::2])
    print(f"  per order: new first {new_first:.3f}, base first {base_first:.3f}; "
          f"order-balanced ratio {np.sqrt(new_first * base_first):.3f}")


if __name__ == "__main__":
    main()
