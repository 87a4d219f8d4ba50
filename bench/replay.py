"""Replaying real temporal streams: dynamic analytics against recomputing them after each batch.

    python3 -m bench replay [--device cpu] [--streams CollegeMsg sx-mathoverflow-a2q]
                            [--batch-size 100] [--window W] [--name replay_cpu]

Each stream is replayed twice on one device, with the same batches and window: once with every
analytic kept current by its dynamic algorithm (``hornet replay``'s default), once recomputing
every analytic from scratch after each batch (``hornet replay --static``). Both replays must
report the same values after every batch (checked). Compilation happens in the replay's
warm-up and is not counted. Times are totals over the whole stream: ``updates`` is the graph's
own insert/delete/expiry work, each analytic's column its time (dynamic: the updates it was
fed; static: the recomputations).
"""
from __future__ import annotations

import argparse

import numpy as np

from bench.common import DATA, write_table
from streams.replay import replay

NAME = "replay"
STREAMS = ["CollegeMsg", "sx-mathoverflow-a2q", "soc-sign-bitcoinotc", "out.radoslaw_email_email"]
COLUMNS = ["triangles", "k_max", "bfs_reached", "spmv_sum"]


def _path(name: str):
    hits = sorted(DATA.glob(name + "*"))
    if not hits:
        raise SystemExit(f"bench replay: no stream {name!r} in {DATA}")
    return hits[0]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench replay", description=__doc__.split("\n")[0])
    ap.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--streams", nargs="+", default=STREAMS)
    ap.add_argument("--batch-size", type=int, default=100)
    ap.add_argument("--window", type=int, default=None, help="sliding window (default: none)")
    ap.add_argument("--name", default=None, help="table name (default: replay_<device>)")
    a = ap.parse_args(argv)
    rows = []
    for name in a.streams:
        path = _path(name)
        runs = {}
        for mode in ("dynamic", "static"):
            runs[mode] = replay(path, batch_size=a.batch_size, window=a.window,
                                device=a.device, dynamic=mode == "dynamic")
        dyn, sta = runs["dynamic"], runs["static"]
        for c in COLUMNS:
            if not np.array_equal(dyn[c], sta[c]):
                raise SystemExit(f"bench replay: {name}: {c} differs between the dynamic and "
                                 "the static replay")
        for mode, res in runs.items():
            s = res.summary
            each = s["analytic_seconds"]
            total = sum(each.values())
            rows.append([name, s["events"], s["batches"], mode, round(s["update_seconds"], 3)]
                        + [round(each[c], 3) for c in COLUMNS]
                        + [round(total, 3),
                           round(sum(sta.summary["analytic_seconds"].values()) / total, 1)
                           if total else ""])
    write_table(a.name or f"{NAME}_{a.device}",
                "Replaying temporal streams: dynamic analytics versus recomputation",
                ["stream", "events", "batches", "analytics", "updates s"]
                + [f"{c} s" for c in COLUMNS] + ["analytics s", "static / this"], rows,
                notes=(f"Batches of {a.batch_size:,} events, "
                       + (f"sliding window of {a.window:,} events" if a.window else "no window")
                       + ", directed graph, every analytic (tc, ktruss, bfs, spmv). Times "
                       "are totals over the stream (seconds); compile time excluded. Both "
                       "replays report the same values after every batch.\n"),
                device=a.device)


if __name__ == "__main__":
    main()
