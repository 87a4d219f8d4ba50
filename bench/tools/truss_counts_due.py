"""The deletions right after a static run of the CPU DynamicTruss: the whole-graph level-count
pass at the first one, against recounting the edges they meet until they have spent the
pass's time (:class:`hornet.algos.ktruss.level_counts.CountPass`), same process.

    PYTHONPATH=. python3 -m bench.tools.truss_counts_due [--graph kron18] [--sizes 10,100]
        [--rounds 3] [--follow 4]

One ``DynamicTruss`` on the graph (as :mod:`bench.dynamic_truss` builds it); two warm-up
delete / re-insert pairs compile the kernels and teach the budget. Then per batch size b and
round, for each policy in turn (the order alternates by round): the state is put back to
"after a static run" (no level count valid, the counts due), then ``--follow`` + 1 batches of
b random edges are deleted (each timed ``update``) and re-inserted (untimed). *pass*: the
pass's share of a static decomposition forced to 0 (the pass runs at the first deletion, as
a state that always counts); *lazy*: the default. Printed per b and policy: the median time
of the first deletion, the median of the deletions after it, the median total of the
sequence, and how many first deletions ran the pass. The numbers are checked against the
static ``truss_numbers`` at the end.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import hornet
from bench.dynamic_truss import load
from hornet.algos import DynamicTruss, truss_numbers
from hornet.algos.ktruss import level_counts as lc


def _pair(g, kt, rng, b: int) -> tuple[float, bool]:
    gs, gd = g.edges(dense=True)
    pick = rng.choice(gs.shape[0], b, replace=False)
    ds, dd = gs[pick], gd[pick]
    change = g.delete_edges(ds, dd)
    due = kt._pass.due
    start = time.perf_counter()
    kt.update(change)
    sec = time.perf_counter() - start
    counted = due and not kt._pass.due
    kt.update(g.insert_edges(ds, dd))
    return sec, counted


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", default="kron18")
    ap.add_argument("--sizes", default="10,100")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--follow", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    title, s, d = load(args.graph)
    g = hornet.Graph.from_edges(s, d, device="cpu")
    kt = DynamicTruss(g)
    print(f"{title}: E={g.num_edges} triangles={kt._triangles} "
          f"static {kt._static_seconds:.2f} s", flush=True)
    for b in (100, 1000):
        _pair(g, kt, rng, min(b, g.num_edges // 4))
    share = lc.LEVEL_PASS_SHARE
    print("| b | policy | first deletion ms | later deletions ms | sequence ms | "
          "first ran the pass |")
    print("|---|---|---|---|---|---|")
    for b in (int(x) for x in args.sizes.split(",")):
        got = {"pass": [], "lazy": []}
        for r in range(args.rounds):
            for policy in (("pass", "lazy") if r % 2 == 0 else ("lazy", "pass")):
                lc.LEVEL_PASS_SHARE = 0.0 if policy == "pass" else share
                kt._pass.rate = None if policy == "pass" else kt._pass.rate
                kt._pass.due, kt._pass.spent, kt._valid = True, 0.0, kt._tick()
                got[policy].append([_pair(g, kt, rng, b) for _ in range(args.follow + 1)])
        lc.LEVEL_PASS_SHARE = share
        for policy, runs in got.items():
            first = statistics.median(r[0][0] for r in runs) * 1e3
            later = statistics.median(x[0] for r in runs for x in r[1:]) * 1e3
            total = statistics.median(sum(x[0] for x in r) for r in runs) * 1e3
            passes = sum(r[0][1] for r in runs)
            print(f"| {b} | {policy} | {first:.1f} | {later:.1f} | {total:.1f} | "
                  f"{passes}/{len(runs)} |", flush=True)
    assert np.array_equal(kt.truss_numbers, truss_numbers(g)), "dynamic != static"
    print("dynamic == static")


if __name__ == "__main__":
    main()
