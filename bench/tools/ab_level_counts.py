"""Same-process A/B of the whole-graph level-count pass (:func:`hornet.algos.ktruss.level_counts.
level_counts`) in two source trees, on one DynamicTruss's table.

    PYTHONPATH=. python3 -m bench.tools.ab_level_counts --base /tmp/base [--graph kron18]
        [--repeats 3]

Loads ``--base`` as ``hornet_base`` (:func:`bench.tools.ab_trees.load_base`), builds a
``DynamicTruss`` on the graph with this checkout, then runs each tree's ``level_counts`` on
its table (same view, keys, numbers), alternating the order by repeat; the first repeat's
times include compiles and are left out of the medians. Prints the seconds per tree and
whether the counts are identical.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

import hornet
from bench.dynamic_truss import load
from bench.tools.ab_trees import load_base
from hornet.algos import DynamicTruss
from hornet.algos.ktruss.level_counts import level_counts


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True)
    ap.add_argument("--graph", default="kron18")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    funcs = {"base": load_base(args.base).algos.ktruss.level_counts.level_counts,
             "new": level_counts}
    title, s, d = load(args.graph)
    kt = DynamicTruss(hornet.Graph.from_edges(s, d, device="cpu"))
    t = kt._table
    view = kt._und.adjacency(properties=False)
    got = {k: [] for k in funcs}
    for r in range(args.repeats):
        for k in (("base", "new") if r % 2 == 0 else ("new", "base")):
            cnt, counted = np.zeros_like(kt._count), np.zeros_like(kt._counted)
            start = time.perf_counter()
            funcs[k](view, t.keys, t.shift, t.columns["truss"], cnt, counted, 5,
                     kt._blocks.eblock)
            got[k].append((time.perf_counter() - start, cnt, counted))
    same = all(np.array_equal(a[1], b[1]) and np.array_equal(a[2], b[2])
               for a, b in zip(got["base"], got["new"]))
    print(f"{title}: triangles {kt._triangles}")
    for k, runs in got.items():
        times = [x[0] for x in runs]
        med = statistics.median(times[1:] if len(times) > 1 else times)
        print(f"  {k}: {med:.3f} s (all: {', '.join(f'{x:.3f}' for x in times)})")
    print(f"  counts identical: {same}")


if __name__ == "__main__":
    main()
