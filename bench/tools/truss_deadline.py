"""How far past a forced deadline the CPU DynamicTruss's insertion scan runs, for two source
trees in one process.

    PYTHONPATH=. python3 -m bench.tools.truss_deadline --base /tmp/base --graph kron16
        [--share 0.1] [--batch 0.01] [--repeats 2]

Per tree (``base``: loaded as ``hornet_base``, :func:`bench.tools.ab_trees.load_base`; ``new``:
this checkout): a ``DynamicTruss`` on the graph (as :mod:`bench.tools.truss_ab` builds it),
warm-up pairs (b = 100 and 1000 deleted and re-inserted) that teach its budget the unit costs,
then per repeat a batch (``--batch``: edges, or below 1 a share of them) deleted, and
re-inserted with the deadline forced to ``--share`` static decompositions (``low = high =
share``, gate off). Prints per re-insertion the scan's seconds, its work limit and work, the
static decomposition's seconds on the same graph state (``truss_numbers``, timed after the
deletion) and scan / static: a deadline on time keeps that near ``share``. The result must
equal ``truss_numbers``.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import hornet


def run(args) -> None:
    from bench.dynamic_truss import load
    from bench.tools.ab_trees import load_base
    packages = {"base": load_base(args.base), "new": hornet}
    title, s, d = load(args.graph)
    graphs = {k: p.Graph.from_edges(s, d, device="cpu") for k, p in packages.items()}
    kts = {k: packages[k].algos.DynamicTruss(graphs[k]) for k in packages}
    gs, gd = graphs["new"].edges(dense=True)
    m = gs.shape[0]
    rng = np.random.default_rng(args.seed)
    b = int(round(args.batch * m)) if args.batch < 1 else int(args.batch)
    for i, size in enumerate([100, 1000] + [b] * args.repeats):
        pick = rng.choice(m, size, replace=False)
        ds, dd = gs[pick], gd[pick]
        warm = i < 2
        for k in (("base", "new") if i % 2 == 0 else ("new", "base")):
            g, kt = graphs[k], kts[k]
            kt.update(g.delete_edges(ds, dd))
            if not warm:
                start = time.perf_counter()
                packages[k].algos.truss_numbers(g)
                static = time.perf_counter() - start
                bud = kt._budget
                saved = bud.gate, bud.low, bud.high
                bud.gate, bud.low, bud.high = np.inf, args.share, args.share
            start = time.perf_counter()
            kt.update(g.insert_edges(ds, dd))
            sec = time.perf_counter() - start
            if warm:
                continue
            bud.gate, bud.low, bud.high = saved
            st = kt.stats
            scan = st.get("seconds", {}).get("scan", float("nan"))
            assert np.array_equal(np.asarray(packages[k].algos.truss_numbers(g)),
                                  np.asarray(kt.truss_numbers)), k
            print(json.dumps(dict(graph=title, tree=k, batch=size, share=args.share,
                                  path=st["path"] + "/" + str(st.get("why")),
                                  limit=st.get("limit"), work=st.get("work"),
                                  update_s=round(sec, 3), scan_s=round(scan, 3),
                                  static_s=round(static, 3),
                                  scan_over_static=round(scan / static, 3))), flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True)
    ap.add_argument("--graph", default="kron16")
    ap.add_argument("--share", type=float, default=0.1)
    ap.add_argument("--batch", type=float, default=0.01)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--seed", type=int, default=11)
    run(ap.parse_args(argv))


if __name__ == "__main__":
    main()
