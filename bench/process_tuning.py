"""CPU update throughput and memory with and without hornet.tune_process (separate processes).

    python3 -m bench process_tuning [--graphs email-Enron soc-Epinions1]
                                    [--batches 10000 100000 1000000]

Each (graph, setting) runs in a fresh subprocess, because glibc's thresholds are
process-wide: "default" is a plain ``import hornet`` (no process-wide change: batch temporaries
come from the graph's own workspace), "tuned" calls ``hornet.tune_process()`` first thing.
The settings run in turn, twice, and the table keeps each setting's faster run of each cell
(the slower run mostly measures what else the machine was doing). Rates: edges passed
per second, median of repeats; batches of uniformly random pairs (insert) and of existing
edges (delete), the graph restored untimed after each timed call. Rows "memory": the process's
peak resident set (insert columns) and what stays resident after ``del graph`` and
``gc.collect()`` (delete columns).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

NAME = "process_tuning"
REPEATS = {10_000: 10, 100_000: 5, 1_000_000: 3}


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


SETTINGS = {"default": None, "tuned": {}}


def worker(graph: str, setting: str, batches: list[int]) -> dict:
    """Run in a fresh process: time insert and delete batches, measure memory."""
    import gc
    import resource

    import numpy as np

    import hornet
    kw = SETTINGS[setting]
    applied = None if kw is None else hornet.tune_process(**kw)
    from bench.updates_cpu import load
    label, src, dst, directed = load(graph)
    g = hornet.Graph.from_edges(src, dst, directed=directed, device="cpu")
    n = g.num_vertices
    es, ed = g.edges()
    rng = np.random.default_rng(7)
    c = g.insert_edges(rng.integers(0, n, 1000), rng.integers(0, n, 1000))   # compile / load
    g.delete_edges(c.src, c.dst)
    out = {"label": label, "edges": int(g.num_edges), "applied": applied, "rates": {}}
    for b in batches:
        reps = REPEATS.get(b, 3)
        ins_t, del_t = [], []
        for _ in range(reps):
            s, d = rng.integers(0, n, b), rng.integers(0, n, b)
            t = time.perf_counter()
            c = g.insert_edges(s, d)
            ins_t.append(time.perf_counter() - t)
            g.delete_edges(c.src, c.dst)
            p = rng.choice(es.size, size=min(b, es.size), replace=False)
            s, d = es[p].astype(np.int64), ed[p].astype(np.int64)
            t = time.perf_counter()
            c = g.delete_edges(s, d)
            del_t.append(time.perf_counter() - t)
            g.insert_edges(c.src, c.dst)
        out["rates"][b] = (b / float(np.median(ins_t)), b / float(np.median(del_t)))
    g.check()
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    del g, c, es, ed, src, dst
    gc.collect()
    out["after_del_mb"] = _rss_mb()
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench process_tuning", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", default=["email-Enron", "soc-Epinions1"])
    ap.add_argument("--batches", nargs="+", type=int, default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--rounds", type=int, default=2, help="runs of each setting (alternating)")
    ap.add_argument("--worker", nargs=2, metavar=("GRAPH", "SETTING"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        graph, setting = args.worker
        print(json.dumps(worker(graph, setting, args.batches)))
        return
    from bench.common import ForeignLoad, write_table
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    rows, loads = [], []
    for graph in args.graphs:
        load = ForeignLoad()
        best: dict[str, dict] = {}
        for _ in range(args.rounds):
            for setting in SETTINGS:
                cmd = [sys.executable, "-m", "bench.process_tuning", "--worker", graph, setting,
                       "--batches", *map(str, args.batches)]
                res = json.loads(subprocess.run(cmd, env=env, cwd=root, check=True,
                                                capture_output=True, text=True).stdout)
                print(graph, setting, res, flush=True)
                keep = best.setdefault(setting, res)
                for b, (ri, rd) in res["rates"].items():
                    ki, kd = keep["rates"][b]
                    keep["rates"][b] = (max(ki, ri), max(kd, rd))
                keep["peak_mb"] = min(keep["peak_mb"], res["peak_mb"])
                keep["after_del_mb"] = min(keep["after_del_mb"], res["after_del_mb"])
        loads.append((graph, load.share()))
        label = best["default"]["label"]
        for b in map(str, args.batches):
            rows.append([label, int(b)]
                        + [f"{best[k]['rates'][b][0]:.3g}" for k in SETTINGS]
                        + [f"{best[k]['rates'][b][1]:.3g}" for k in SETTINGS])
        rows.append([label, "memory"]
                    + [f"peak {best[k]['peak_mb']:.0f} MB" for k in SETTINGS]
                    + [f"after del {best[k]['after_del_mb']:.0f} MB" for k in SETTINGS])
    notes = (__doc__.split("\n\n", 2)[2].strip() + "\nOther processes' share of the machine's "
             "CPU time while each graph ran (0% = undisturbed): "
             + "; ".join(f"{g}: {100 * s:.0f}%" for g, s in loads) + ".")
    write_table(NAME, "CPU updates with and without hornet.tune_process",
                ["graph", "batch"] + [f"{k} insert/s" for k in SETTINGS]
                + [f"{k} delete/s" for k in SETTINGS], rows, notes)


if __name__ == "__main__":
    main()
