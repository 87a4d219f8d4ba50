"""Where a DynamicTruss (CPU) batch spends its time: stages and counts from ``stats``.

    python3 -m bench dynamic_truss_stages [--graphs ca-HepPh] [--sizes 100] [--repeats 7]

For every graph and batch size b, in one process: delete b random existing edges (timed
``update``), then re-insert them (timed), ``--repeats`` times (the first pair also compiles
nothing: one warm-up pair runs before). Reported per kind: the median update time, the median
seconds of each stage that :attr:`DynamicTruss.stats` reports (``seconds``: supports, dense
blocks, then descent and k-order placement for a deletion, the k-order scan for an
insertion) and the median counts (edges outside the dense blocks lowered or raised, edges
recounted or visited, triangles examined, block edges examined), next to the static
``truss_numbers`` of the same graph (median of 3).
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import hornet
from bench.common import RESULTS, machine, table_lines, write_csv
from bench.dynamic_truss import load
from hornet.algos import DynamicTruss, truss_numbers

STAGES = {"delete": ("supports", "dense", "descent", "order"),
          "re-insert": ("supports", "dense", "scan")}
COUNTS = {"delete": ("lowered", "recounted", "descent_work", "order_work", "dense"),
          "re-insert": ("raises", "visits", "work", "placed", "dense")}
HEADER = ["graph", "edges", "batch", "kind", "update ms", "static ms", "speedup",
          "stages ms", "counts", "static fallbacks"]


def run(name: str, sizes: list[int], repeats: int, rng) -> list[list]:
    title, s, d = load(name)
    g = hornet.Graph.from_edges(s, d, device="cpu")
    kt = DynamicTruss(g)
    static = statistics.median(_seconds(lambda: truss_numbers(g)) for _ in range(3))
    rows = []
    for b in sizes:
        got = {"delete": [], "re-insert": []}
        for rep in range(repeats + 1):
            gs, gd = g.edges()
            pick = rng.choice(gs.shape[0], b, replace=False)
            ds, dd = gs[pick], gd[pick]
            for kind in ("delete", "re-insert"):
                change = g.delete_edges(ds, dd) if kind == "delete" else g.insert_edges(ds, dd)
                sec = _seconds(lambda: kt.update(change))
                if rep:                                  # the first pair warms up
                    got[kind].append((sec, dict(kt.stats)))
        for kind, runs in got.items():
            med = statistics.median(r[0] for r in runs)
            dyn = [r[1] for r in runs if r[1]["path"] == "dynamic"]
            stages = " / ".join(
                f"{k} {statistics.median(x['seconds'][k] for x in dyn) * 1e3:.1f}"
                for k in STAGES[kind]) if dyn else "-"
            counts = ", ".join(f"{k} {statistics.median(x.get(k, 0) for x in dyn):g}"
                               for k in COUNTS[kind]) if dyn else "-"
            fell = sum(r[1]["path"] == "static" for r in runs)
            rows.append([title, g.num_edges, b, kind, med * 1e3, static * 1e3, static / med,
                         stages, counts, f"{fell}/{len(runs)}"])
            print(f"{title} b={b} {kind}: {med * 1e3:.1f} ms (x{static / med:.1f}); "
                  f"{stages}; {counts}; static path {fell}/{len(runs)}", flush=True)
    assert np.array_equal(kt.truss_numbers, truss_numbers(g)), f"{title}: dynamic != static"
    return rows


def _seconds(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default="ca-HepPh")
    ap.add_argument("--sizes", default="100")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--name", default="dynamic_truss_stages")
    ap.add_argument("--note", default="", help="conditions of the run, printed under the machine")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    sizes = [int(x) for x in args.sizes.split(",")]
    rows = []
    for name in args.graphs.split(","):
        rows += run(name, sizes, args.repeats, rng)
    write_csv(args.name, HEADER, rows)
    text = ["# DynamicTruss (cpu): where a batch spends its time", "",
            f"Machine: {machine()}.", ""] + ([args.note, ""] if args.note else []) + [
            f"Each row: median over {args.repeats} repeats (after one warm-up pair) of"
            " `DynamicTruss.update` for b random existing edges deleted, then the same edges"
            " re-inserted; the stages and counts are the medians of `DynamicTruss.stats`"
            " (module docstring of hornet.algos.ktruss.dynamic): *lowered* / *raises*: edges"
            " outside the dense blocks whose number fell / one-level raises; *recounted* /"
            " *visits*: edges whose triangles the descent / the k-order scan listed;"
            " *descent_work*, *order_work*, *work*: triangles examined (plus one per edge);"
            " *dense*: block edges examined. Static: `truss_numbers` of the same graph"
            " (median of 3).", ""]
    text += table_lines(HEADER, rows)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text("\n".join(text) + "\n")
    print(f"wrote {RESULTS / (args.name + '.md')}")


if __name__ == "__main__":
    main()
