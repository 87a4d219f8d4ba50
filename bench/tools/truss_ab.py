"""Same-process A/B of the CPU DynamicTruss of two source trees, against the static
decomposition of the same graph state.

    PYTHONPATH=. python3 -m bench.tools.truss_ab --base /tmp/base --graph kron18
        [--sizes 100,1000,0.001,0.005] [--repeats 2] [--out rows.jsonl]
    PYTHONPATH=. python3 -m bench.tools.truss_ab --table rows.jsonl [more.jsonl ...]

Loads the base tree as ``hornet_base`` (:func:`bench.tools.ab_trees.load_base`), builds the
graph (``kronS``: Kronecker scale S, edge factor 16, seed 1; else a real graph of the data
folder, ``HORNET_DATA``) and a ``DynamicTruss`` with each tree. A warm-up pair (b = 100 or
1% of the edges, untimed) compiles the update kernels; then per batch size (an integer: edges;
below 1: share of the edges) and repeat: b random existing edges are deleted from both
graphs and each object updated (timed, the trees in alternating order, a pause before each
call), the static ``truss_numbers`` of the graph after it timed (the oracle: both objects
must equal it), then the edges are re-inserted the same way (both must equal the numbers
before). One JSON row per batch and kind: seconds of base, new and static, each tree's
path (``static/why`` when the static decomposition finished the batch) and the 1-minute
load average. ``--table`` prints the medians per graph, kind and size as a markdown table.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

import hornet
from hornet.algos import truss_numbers

#: seconds of pause before each timed call (threads of the other tree's last call stop
#: spinning)
SETTLE = 0.02


def _timed_update(kt, change) -> tuple[float, str]:
    time.sleep(SETTLE)
    start = time.perf_counter()
    kt.update(change)
    sec = time.perf_counter() - start
    st = kt.stats
    return sec, st["path"] + ("/" + st["why"] if st.get("why") else "")


def run(args) -> None:
    from bench.dynamic_truss import load
    from bench.tools.ab_trees import load_base
    packages = {"base": load_base(args.base), "new": hornet}
    title, s, d = load(args.graph)
    graphs = {k: p.Graph.from_edges(s, d, device="cpu") for k, p in packages.items()}
    kts = {}
    for k in ("base", "new"):
        start = time.perf_counter()
        kts[k] = packages[k].algos.DynamicTruss(graphs[k])
        print(f"# {title}: {k} built in {time.perf_counter() - start:.1f} s", flush=True)
    gs, gd = graphs["new"].edges(dense=True)
    m = gs.shape[0]
    rng = np.random.default_rng(args.seed)
    plan = [(min(100, m // 100), 1, True)] + [
        (int(round(x * m)) if x < 1 else int(x), args.repeats, False) for x in args.sizes]
    turn = 0
    for b, repeats, warm in plan:
        for _ in range(repeats):
            pick = rng.choice(m, b, replace=False)
            ds, dd = gs[pick], gd[pick]
            got = {}
            for kind in ("delete", "re-insert"):
                for k in (("base", "new") if turn % 2 == 0 else ("new", "base")):
                    g = graphs[k]
                    ch = g.delete_edges(ds, dd) if kind == "delete" else g.insert_edges(ds, dd)
                    got[kind, k] = _timed_update(kts[k], ch)
                turn += 1
                if warm:
                    continue
                start = time.perf_counter()
                want = np.asarray(truss_numbers(graphs["new"]))
                if kind == "delete":
                    static = time.perf_counter() - start
                for k in ("base", "new"):
                    assert np.array_equal(np.asarray(kts[k].truss_numbers), want), (k, kind)
            if warm:
                continue
            for kind in ("delete", "re-insert"):
                row = dict(graph=title, batch=b, kind=kind, base=got[kind, "base"][0],
                           new=got[kind, "new"][0], static=static,
                           base_path=got[kind, "base"][1], new_path=got[kind, "new"][1],
                           load=os.getloadavg()[0])
                print(json.dumps(row), flush=True)
                if args.out:
                    with open(args.out, "a") as f:
                        f.write(json.dumps(row) + "\n")


def table(files) -> None:
    rows = defaultdict(list)
    for name in files:
        for line in open(name):
            if line.startswith("{"):
                r = json.loads(line)
                rows[r["graph"], r["kind"], r["batch"]].append(r)
    print("| graph | kind | batch | n | base s | new s | static s | base / static | "
          "new / static | new / base (min-max) | base paths | new paths | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (graph, kind, b), rs in rows.items():
        med = lambda f: statistics.median(f(r) for r in rs)          # noqa: E731
        ratio = [r["new"] / r["base"] for r in rs]
        paths = lambda key: ", ".join(sorted({r[key] for r in rs}))  # noqa: E731
        print(f"| {graph} | {kind} | {b} | {len(rs)} | {med(lambda r: r['base']):.3g} | "
              f"{med(lambda r: r['new']):.3g} | {med(lambda r: r['static']):.3g} | "
              f"{med(lambda r: r['base'] / r['static']):.3g} | "
              f"{med(lambda r: r['new'] / r['static']):.3g} | "
              f"{statistics.median(ratio):.3g} ({min(ratio):.2f}-{max(ratio):.2f}) | "
              f"{paths('base_path')} | {paths('new_path')} | {med(lambda r: r['load']):.1f} |")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path)
    ap.add_argument("--graph", default="kron18")
    ap.add_argument("--sizes", type=lambda t: [float(x) for x in t.split(",")],
                    default=[100, 1000, 0.001, 0.005])
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--out", default=None)
    ap.add_argument("--table", nargs="+", default=None)
    args = ap.parse_args(argv)
    if args.table:
        return table(args.table)
    if args.base is None:
        sys.exit("--base is needed to run (or --table to print rows)")
    run(args)


if __name__ == "__main__":
    main()
