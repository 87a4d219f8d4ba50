"""Warm CPU speed of the working tree against a base tree, same process: update batches and
the static algorithms (:mod:`bench.tools.ab_trees` for each case), one table.

    python3 -m bench.tools.warm_ab_cpu --base /tmp/base [--rounds 7] [--only truss]

Cases: inserts and deletes of 2^16 edges, triangle count, SpMV, BFS and the maximal truss on
Kronecker 18; the maximal truss on Kronecker 16 and on two real graphs of the data folder
(``HORNET_DATA``). ``--only WORD`` keeps the cases whose operation or graph holds WORD.
Writes ``warm_speed_cpu_ab`` (``HORNET_BENCH_RESULTS`` or bench/results): medians of the
rounds (wall milliseconds), the ratios new / base (under 1: the working tree is faster) and
the machine's 1-minute load average before and after each case.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from bench.common import real_graph_path, set_command, write_table
from bench.tools import ab_trees

BATCH = 1 << 16
#: (operation, Kronecker scale or real graph name)
CASES = [("insert", 18), ("delete", 18), ("triangles", 18), ("spmv", 18), ("bfs", 18),
         ("truss", 16), ("truss", 18), ("truss", "ca-HepPh"), ("truss", "soc-Epinions1")]


def _commit(tree: Path) -> str:
    """The short commit of checkout ``tree`` (+ "with changes" when its files differ)."""
    def git(*a):
        return subprocess.run(["git", "-C", str(tree), *a], capture_output=True,
                              text=True).stdout.strip()
    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + (" with changes" if git("status", "--porcelain", "--untracked-files=no")
                   else "")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.warm_ab_cpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", type=Path, required=True, help="checkout holding the base tree")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", default="", help="keep the cases whose op or graph holds this")
    ap.add_argument("--notes", default="", help="a line on the machine's conditions")
    args = ap.parse_args(argv)
    set_command(" ".join(["python3 -m bench.tools.warm_ab_cpu", *(argv if argv is not None
                                                                   else sys.argv[1:])]))
    cases = [(op, graph) for op, graph in CASES if args.only in f"{op} {graph}"]
    for _, graph in cases:
        if isinstance(graph, str):
            real_graph_path(graph)           # a missing graph stops the run before it starts
    base = ab_trees.load_base(args.base)
    rows = []
    for op, graph in cases:
        where = ["--graph", graph] if isinstance(graph, str) else ["--scale", str(graph)]
        case = ab_trees.parser().parse_args(
            ["--base", str(args.base), "--op", op, "--batch", str(BATCH),
             "--rounds", str(args.rounds)] + where)
        load_before = os.getloadavg()[0]
        times = ab_trees.compare(base, case)
        s = ab_trees.summary(times)
        rows.append([times["what"], times["label"], args.rounds,
                     round(s["base_median"] * 1e3, 2), round(s["new_median"] * 1e3, 2),
                     round(s["ratio_median"], 3), round(s["ratio_of_medians"], 3),
                     round(s["balanced"], 3), f"{load_before:.1f} / {os.getloadavg()[0]:.1f}",
                     f"{times['launched']} / {times['split calls']}"])
        print(rows[-1], flush=True)
        _write(args, rows, echo=False)           # each case as it ends
    _write(args, rows, echo=True)


def _write(args, rows: list, echo: bool) -> None:
    notes = (f"Same process, alternating order each round (bench.tools.ab_trees): base = "
             f"commit {_commit(args.base)}, new = the working tree ({_commit(Path('.'))}); each "
             f"timed call after a pause of {ab_trees.SETTLE_MS:g} ms (the threads either "
             "tree left spinning are idle by then). "
             "Wall milliseconds, medians of the rounds; ratios new / base (under 1: new is faster): the median of the "
             "per-round ratios, the ratio of the medians, and the geometric mean of the "
             "medians of the rounds run new-first and base-first (order-balanced). Updates: "
             f"batches of {BATCH} random pairs (insert) or sampled edges (delete), each undone "
             "untimed. Load: the 1-minute load average before / after the case. Launched: "
             "the new tree's split calls (in parts) during the rounds (undoing included) that ran "
             "through their parfor launchers (hornet.core.launchers), of all of them; the others "
             "ran on hornet's threads.")
    if args.notes:
        notes += "\n\n" + args.notes
    write_table("warm_speed_cpu_ab", "Warm CPU speed, working tree vs base (same-process A/B)",
                ["operation", "graph", "rounds", "base ms", "new ms", "ratio (per round)",
                 "ratio of medians", "order-balanced", "load", "launched"], rows, notes,
                echo=echo)


if __name__ == "__main__":
    main()
