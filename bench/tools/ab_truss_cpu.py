"""Same-process A/B of DynamicTruss (CPU) in two source trees on real graphs.

    python3 -m bench.tools.ab_truss_cpu --base /tmp/base [--graphs ca-HepPh] [--sizes 10,100]
        [--rounds 9]

Loads ``--base`` as ``hornet_base`` (:func:`bench.tools.ab_trees.load_base`), builds the same
graph and a ``DynamicTruss`` with each tree, then per round picks b random edges, deletes them
from both (timed ``update``, the trees in alternating order) and re-inserts them (timed the
same way). Both states are checked against each other after every batch, and against the
static ``truss_numbers`` at the end. Reported per graph, size and kind: the median time of
each tree, its spread (min-max), the median per-round ratio new / base and the static paths.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import hornet
from bench.dynamic_truss import load
from bench.tools.ab_trees import load_base


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True)
    ap.add_argument("--graphs", default="ca-HepPh")
    ap.add_argument("--sizes", default="10,100")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    packages = {"base": load_base(args.base), "new": hornet}
    rng = np.random.default_rng(args.seed)
    for name in args.graphs.split(","):
        title, s, d = load(name)
        graphs = {k: p.Graph.from_edges(s, d, device="cpu") for k, p in packages.items()}
        kts = {k: packages[k].algos.DynamicTruss(graphs[k]) for k in packages}
        static = []
        for _ in range(3):                             # the first call may compile
            t = time.perf_counter()
            hornet.algos.truss_numbers(graphs["new"])
            static.append(time.perf_counter() - t)
        static = float(np.median(static[1:]))
        print(f"{title}: E={graphs['new'].num_edges} static {static * 1e3:.0f} ms", flush=True)
        for b in [int(x) for x in args.sizes.split(",")]:
            times = {(k, kind): [] for k in packages for kind in ("delete", "re-insert")}
            paths = {key: 0 for key in times}
            for r in range(args.rounds + 1):           # round 0 warms up (compiles)
                es, ed = graphs["new"].edges()
                pick = rng.choice(es.shape[0], b, replace=False)
                ds, dd = es[pick], ed[pick]
                for kind in ("delete", "re-insert"):
                    order = ("base", "new") if r % 2 else ("new", "base")
                    for k in order:
                        g = graphs[k]
                        ch = g.delete_edges(ds, dd) if kind == "delete" else \
                            g.insert_edges(ds, dd)
                        t = time.perf_counter()
                        kts[k].update(ch)
                        sec = time.perf_counter() - t
                        if r:
                            times[(k, kind)].append(sec)
                            paths[(k, kind)] += kts[k].stats["path"] == "static"
                    if not np.array_equal(np.asarray(kts["base"].truss_numbers),
                                          np.asarray(kts["new"].truss_numbers)):
                        raise SystemExit(f"{title} b={b} round {r} {kind}: trees differ")
            for kind in ("delete", "re-insert"):
                tb = np.array(times[("base", kind)])
                tn = np.array(times[("new", kind)])
                ratio = np.median(tn / tb)
                print(f"  b={b:5d} {kind:9s} base {np.median(tb) * 1e3:7.2f} ms "
                      f"[{tb.min() * 1e3:.1f}-{tb.max() * 1e3:.1f}]  new "
                      f"{np.median(tn) * 1e3:7.2f} ms [{tn.min() * 1e3:.1f}-"
                      f"{tn.max() * 1e3:.1f}]  new/base {ratio:.3f}  static x"
                      f"{static / np.median(tn):.1f}  static paths "
                      f"{paths[('base', kind)]}/{paths[('new', kind)]}", flush=True)
        want = hornet.algos.truss_numbers(graphs["new"])
        assert np.array_equal(np.asarray(kts["new"].truss_numbers), want), "new != static"


if __name__ == "__main__":
    main()
