"""DynamicTruss deletions with and without level counts kept across updates (CPU, one process).

    PYTHONPATH=. python3 bench/dynamic_truss_counts.py [--scale 16] [--batch 100] [--repeats 6]

Builds ``DynamicTruss(g)`` on a Kronecker graph (edge factor 16, seed 1) and, on the same
graph, a second object whose level counts are valid only within their update. Each repeat
deletes ``--batch`` random edges (the same change given to both, in alternating order),
times both updates and the static ``truss_numbers`` of the changed graph, then re-inserts the
edges (both updated, untimed). Prints one line a repeat and the medians; at the end checks
both objects against the static decomposition. bench/results/dynamic_truss.md reports a run.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import hornet
from hornet.algos import truss_numbers
from hornet.algos.ktruss.dynamic import DynamicTruss
from hornet.generators import kronecker_edges


class CountsPerUpdate(DynamicTruss):
    """Level counts valid only within the update that computed them."""

    def _full_level_counts(self) -> None:
        self._valid = 1 << 62


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=16)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=6)
    args = ap.parse_args(argv)
    s, d = kronecker_edges(args.scale, edge_factor=16, seed=1)
    g = hornet.Graph.from_edges(np.asarray(s), np.asarray(d), device="cpu")
    kept, per = DynamicTruss(g), CountsPerUpdate(g)
    rng = np.random.default_rng(0)

    def cycle(b, timed):
        gs, gd = (np.asarray(a) for a in g.edges())
        pick = rng.choice(gs.shape[0], b, replace=False)
        ch = g.delete_edges(gs[pick], gd[pick])
        out = {}
        for o in ((kept, per) if timed % 2 == 0 else (per, kept)):
            t = time.perf_counter()
            o.update(ch)
            out[o is kept] = (time.perf_counter() - t, dict(o.stats))
            per._valid = 1 << 62
        t = time.perf_counter()
        truss_numbers(g)
        static = time.perf_counter() - t
        ch = g.insert_edges(gs[pick], gd[pick])
        kept.update(ch)
        per.update(ch)
        per._valid = 1 << 62
        return out, static

    cycle(10, 0)                                   # compiles every kernel of both paths
    rows = []
    for r in range(args.repeats):
        out, static = cycle(args.batch, r)
        rows.append((out[True][0], out[False][0], static))
        print(f"repeat {r}: kept {out[True][0] * 1e3:.1f} ms (work {out[True][1].get('work')}), "
              f"per update {out[False][0] * 1e3:.1f} ms (work {out[False][1].get('work')}), "
              f"static {static * 1e3:.0f} ms", flush=True)
    mk, mp, ms = (statistics.median(x[i] for x in rows) for i in range(3))
    print(f"medians: kept {mk * 1e3:.1f} ms (x{ms / mk:.1f}), per update {mp * 1e3:.1f} ms "
          f"(x{ms / mp:.1f}), static {ms * 1e3:.0f} ms")
    want = truss_numbers(g)
    assert np.array_equal(kept.truss_numbers, want) and np.array_equal(per.truss_numbers, want)


if __name__ == "__main__":
    main()
