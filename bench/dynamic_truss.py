"""DynamicTruss update time versus a full truss decomposition of the same graph state.

    python3 bench/dynamic_truss.py [--device cpu|gpu] [--graphs ca-HepPh,soc-Epinions1,kron18]
                                   [--sizes 10,100,...] [--repeats 3] [--name dynamic_truss]

For every graph and batch size b, in one process: delete b random existing edges (timed
``update``), re-insert the same edges (timed: insertions into dense places), insert b uniform
random pairs (timed) and delete them again (untimed restore), so every batch sees about the
same graph. The static baseline is ``truss_numbers`` on the same graph state (median of
repeats). Reported: median update time, speedup over the static decomposition, the share of
edges the update examined (its region), how many of the repeats fell back to the static
decomposition, and the crossover batch size (the smallest b whose median is not faster than
the static). The dynamic result is checked against the static one at the end of each graph.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from bench.common import DATA, machine, table_lines, write_csv, RESULTS

import hornet
from hornet.algos import truss_numbers
from hornet.algos import DynamicTruss
from hornet.generators import kronecker_edges

KINDS = ("delete", "re-insert", "insert uniform")


def load(name: str):
    if name.startswith("kron"):
        scale = int(name[4:])
        s, d = kronecker_edges(scale, edge_factor=16, seed=1)
        return f"Kronecker {scale} (ef 16)", np.asarray(s), np.asarray(d)
    path = next(p for p in DATA.iterdir() if p.name.startswith(name))
    s, d, _ = hornet.io.read_edges(path)
    return path.name.split(".")[0], s, d


def _sync(device):
    if device == "gpu":
        import cupy
        cupy.cuda.Device().synchronize()


def _host(a):
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)


def _timed(device, fn):
    _sync(device)
    t = time.perf_counter()
    fn()
    _sync(device)
    return time.perf_counter() - t


def run_graph(name, device, sizes, repeats, rng):
    title, s, d = load(name)
    xp = np
    if device == "gpu":
        import cupy as xp
    g = hornet.Graph.from_edges(xp.asarray(s), xp.asarray(d), device=device)
    E = g.num_edges
    t = time.perf_counter()
    kt = DynamicTruss(g)
    build = time.perf_counter() - t
    static = statistics.median(_timed(device, lambda: truss_numbers(g))
                               for _ in range(max(1, min(repeats, 3))))
    print(f"{title}: V={g.num_vertices} E={E} k_max={kt.k_max} static {static:.3f}s "
          f"(build {build:.2f}s)", flush=True)
    rows = []
    for b in sizes:
        if 2 * b > E:
            continue
        reps = repeats if b <= 1000 else 1
        res = {k: [] for k in KINDS}
        for _ in range(reps):
            gs, gd = (_host(a) for a in g.edges())
            pick = rng.choice(gs.shape[0], b, replace=False)
            ds, dd = xp.asarray(gs[pick]), xp.asarray(gd[pick])
            ch = g.delete_edges(ds, dd)
            res["delete"].append((_timed(device, lambda: kt.update(ch)), dict(kt.stats)))
            ch = g.insert_edges(ds, dd)
            res["re-insert"].append((_timed(device, lambda: kt.update(ch)), dict(kt.stats)))
            n = g.num_vertices
            ch = g.insert_edges(xp.asarray(rng.integers(0, n, b)), xp.asarray(rng.integers(0, n, b)))
            res["insert uniform"].append((_timed(device, lambda: kt.update(ch)),
                                          dict(kt.stats)))
            kt.update(g.delete_edges(ch.src, ch.dst))
        for kind in KINDS:
            times = [x[0] for x in res[kind]]
            med = statistics.median(times)
            region = statistics.median(x[1]["region"] for x in res[kind])
            rounds = statistics.median(x[1].get("rounds", 0) for x in res[kind])
            levels = statistics.median(x[1].get("levels", 0) for x in res[kind])
            raised = statistics.median(x[1].get("raised", 0) for x in res[kind])
            raise_rounds = statistics.median(x[1].get("raise_rounds", 0) for x in res[kind])
            fell_back = sum(x[1]["path"] == "static" for x in res[kind])
            rows.append([title, E, kind, b, f"{b / E:.2e}", med * 1e3, static * 1e3,
                         static / med, f"{region / E:.2e}", f"{fell_back}/{reps}"])
            print(f"  {kind:15s} b={b:8d} {med * 1e3:10.2f} ms  x{static / med:9.1f}  "
                  f"region {region / E:.2e}  static path {fell_back}/{reps}  "
                  f"rounds {rounds:g} levels {levels:g} raised {raised:g} "
                  f"raise rounds {raise_rounds:g}", flush=True)
    want = _host(truss_numbers(g))
    assert np.array_equal(_host(kt.truss_numbers), want), f"{title}: dynamic != static"
    return title, E, static, rows


HEADER = ["graph", "edges", "batch kind", "batch size", "share of edges", "update ms (median)",
          "static ms (median)", "speedup", "region share (median)", "static fallbacks"]


def crossover(rows, title, kind):
    """Smallest batch size whose median update is not faster than the static decomposition."""
    for r in rows:
        if r[0] == title and r[2] == kind and r[7] <= 1.0:
            return r[3]
    return None


def _earlier_rows(name: str) -> list:
    """The rows of ``<results>/<name>.csv`` (none when it is missing), typed as
    :func:`run_graph` gives them."""
    import csv
    path = RESULTS / f"{name}.csv"
    if not path.exists():
        return []
    with open(path, newline="") as f:
        rows = list(csv.reader(f))[1:]
    return [[r[0], int(r[1]), r[2], int(r[3]), r[4], float(r[5]), float(r[6]), float(r[7]),
             r[8], r[9]] for r in rows]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu", choices=("cpu", "gpu"))
    ap.add_argument("--graphs", default="ca-HepPh,email-Enron,soc-Epinions1")
    ap.add_argument("--sizes", default="10,100,1000,10000,100000,1000000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--name", default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--note", default="", help="conditions of the run, printed under the machine")
    ap.add_argument("--replace", action="store_true",
                    help="keep the rows of the other graphs in the table's CSV (an earlier "
                         "run) and replace only those of --graphs; the table names both runs")
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    rng = np.random.default_rng(args.seed)
    name = args.name or ("dynamic_truss" if args.device == "cpu" else "dynamic_truss_gpu")
    all_rows, summary = [], []
    for gname in args.graphs.split(","):
        title, E, static, rows = run_graph(gname, args.device, sizes, args.repeats, rng)
        all_rows += rows
    now = {r[0] for r in all_rows}
    kept = [r for r in _earlier_rows(name) if r[0] not in now] if args.replace else []
    all_rows = kept + all_rows
    for title in dict.fromkeys(r[0] for r in all_rows):
        rows = [r for r in all_rows if r[0] == title]
        E = rows[0][1]
        for kind in KINDS:
            small = [r for r in rows if r[2] == kind and r[3] <= max(10, E // 1000)]
            summary.append([title, kind, crossover(rows, title, kind) or "none measured",
                            min((r[7] for r in small), default=float("nan"))])
    write_csv(name, HEADER, all_rows)
    device = machine()
    if args.device == "gpu":
        import cupy
        props = cupy.cuda.runtime.getDeviceProperties(0)
        device = f"{props['name'].decode()} (GPU), host: {device}"
    if kept:
        before = RESULTS / f"{name}.md"
        was = next((ln[len("Machine: "):].split(". Rows of")[0].rstrip(".")
                    for ln in before.read_text().splitlines() if ln.startswith("Machine: ")),
                   "not named") if before.exists() else "not named"
        device += (f". Rows of {', '.join(dict.fromkeys(r[0] for r in kept))}: an earlier run"
                   f" of this table (machine: {was}), kept (`--replace`); rows of "
                   f"{', '.join(sorted(now))}: this run")
    text = [f"# DynamicTruss ({args.device}) versus a full truss decomposition", "",
            f"Machine: {device}.", ""] + ([args.note, ""] if args.note else []) + [
            "Each row: median over repeats (`--repeats` for b <= 1000, 1 above: the last"
            " column's denominator) of `DynamicTruss.update`"
            " alone (the graph's own update is not timed). *delete*: b random existing edges;"
            " *re-insert*: the same edges put back; *insert uniform*: b uniform random pairs."
            " Static: `truss_numbers` of the same graph state, same process. *region share*:"
            " edges the update examined / edges (" + (
                "an insertion counts an edge once per level it examines it at, so the share"
                " can pass 1" if args.device == "cpu" else
                "distinct edges whose triangles it counted") + "). *static fallbacks*: repeats"
            " that the whole-graph static decomposition finished " + (
                "(CPU: batch over `batch_share`, or work over the limit of `DynamicTruss`)."
                if args.device == "cpu" else
                "(GPU: batch over `batch_share`, region over `fallback_share` of the edges, or"
                " update time over the static time)."), ""]
    text += table_lines(HEADER, all_rows)
    text += ["", "## Crossover and the criterion", "",
             "Crossover: the smallest batch size whose median update is not faster than the"
             " static decomposition. Worst speedup for b <= 0.1% of the edges (criterion:"
             " >= 10x).", ""]
    text += table_lines(["graph", "batch kind", "crossover batch size",
                         "worst speedup, b <= 0.1% of edges"], summary)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.md").write_text("\n".join(text) + "\n")
    print(f"wrote {RESULTS / (name + '.md')}")


if __name__ == "__main__":
    main()
