"""Same-process A/B of two trees' GPU stream replays, with the CPU backend as the reference.

    python3 -m bench.tools.ab_replay_gpu --base ../base [--streams CollegeMsg ...]
        [--batch-sizes 1000 10000] [--rounds 5] [--cpu]

The replay's graph calls (``streams.replay._apply_batch`` and the lazy report rows of
``streams.batch_rows``, as ``replay`` makes them: directed graph, no window, no analytics,
deferred inserts, array growth of an insert-only stream) run on a graph of the working
tree's ``hornet`` and on one of the base tree's (loaded as ``hornet_base``,
:func:`bench.tools.ab_trees.load_base`), in alternating order round after round, each
round on fresh graphs (the first round untimed). Per stream and batch size: the median
update time per batch of each tree (wall clock of the graph calls and the rows' count
reads, as the replay's ``update_seconds``), the new / base ratio and, with ``--cpu``, the
working tree's CPU backend on the same batches (its 16-core default policy) and each GPU
tree's events/s over the CPU's. Both trees must end with the same edge count.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

import hornet
from bench.common import DATA
from bench.tools.ab_trees import load_base
from streams.batch_rows import BatchRows
from streams.batching import iter_batches
from streams.reader import open_stream
from streams.replay import GROWTH_SLOTS, _apply_batch

STREAMS = ["CollegeMsg", "sx-mathoverflow-a2q", "soc-sign-bitcoinotc", "soc-sign-bitcoinalpha",
           "out.radoslaw_email_email"]


def _batches(name: str, batch: int):
    path = sorted(DATA.glob(name + "*"))[0]
    with open_stream(path) as rd:
        cols = rd.columns
        blocks = list(rd.blocks())
    evs = [b.events for b in iter_batches(iter(blocks), batch_size=batch, batch_time=None,
                                          use_batch_column=False, columns=cols, t0=None)]
    return evs, bool(cols.weight), bool(cols.op)


def _replay(pkg, device: str, evs, weighted: bool, has_op: bool):
    """(seconds of the graph calls, final edge keys sorted) of one replay on ``pkg``."""
    eprops = {"weight": np.float64} if weighted else {}
    g = pkg.Graph(directed=True, device=device, edge_properties=eprops)
    if not has_op:
        g.set_array_growth(GROWTH_SLOTS)
    # (as the tree's replay sets a graph up; a tree without the keywords: as far as it has)
    for kw in ({"ready": True, "batch_entries": max(len(e) for e in evs)}, {"ready": True}, {}):
        try:
            g.defer_inserts(**kw)
            break
        except TypeError:
            continue
    out = {k: [] for k in ("batch", "inserted", "deleted", "expired", "edges")}
    totals = dict(inserted=0, deleted=0, expired=0)
    rows = BatchRows(out, totals, g, lazy=True)
    spent = 0.0
    for i, ev in enumerate(evs):
        t = time.perf_counter()
        changes, _ = _apply_batch(g, ev, True, None, weighted, "")
        spent += time.perf_counter() - t
        rows.add({"batch": i}, changes)
    rows.close()
    spent += rows.seconds
    _replay.last = g
    return spent, int(g.num_edges)


def _counters(g) -> str:
    """The deferred path's and the block cache's event counts of a replayed graph."""
    mm = g._mm
    cache = mm.cache
    parts = [f"deferred {getattr(g, '_deferred_count', 0)}", f"stalls {getattr(g, '_stalls', 0)}"]
    if cache is not None:
        parts += [f"refills {cache.refills}", f"short refills {cache.short_refills}",
                  f"grow steps {cache.grow_steps}"]
    parts.append(f"block arrays {sum(len(p) for p in mm.pools.values())}")
    return ", ".join(parts)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.ab_replay_gpu",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--base", type=Path, required=True)
    ap.add_argument("--streams", nargs="+", default=STREAMS)
    ap.add_argument("--batch-sizes", nargs="+", type=int, default=[1000, 10000])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cpu", action="store_true", help="the CPU backend as a reference")
    a = ap.parse_args(argv)
    from hornet.core import jit
    jit.parallel_policy = "tiered"
    base = load_base(a.base)
    trees = {"base": base, "new": hornet}
    print("| stream | batch | batches | base us/batch | new us/batch | new/base | "
          "CPU us/batch | base GPU/CPU | new GPU/CPU |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in a.streams:
        for b in a.batch_sizes:
            evs, weighted, has_op = _batches(name, b)
            nb = len(evs)
            times = {k: [] for k in trees}
            ratios = []
            final = {}
            for r in range(a.rounds + 1):
                order = list(trees) if r % 2 else list(trees)[::-1]
                got = {}
                for k in order:
                    spent, edges = _replay(trees[k], "gpu", evs, weighted, has_op)
                    got[k] = spent
                    final[k] = edges
                if r:
                    for k in trees:
                        times[k].append(got[k] / nb * 1e6)
                    ratios.append(got["new"] / got["base"])
            if final["base"] != final["new"]:
                raise SystemExit(f"{name} {b}: edge counts differ {final}")
            cpu = float("nan")
            if a.cpu:
                ct = [_replay(hornet, "cpu", evs, weighted, has_op)[0] / nb * 1e6
                      for _ in range(3)]
                cpu = statistics.median(ct)
            mb, mn = statistics.median(times["base"]), statistics.median(times["new"])
            print(f"| {name} | {b} | {nb} | {mb:.0f} ({min(times['base']):.0f}-"
                  f"{max(times['base']):.0f}) | {mn:.0f} ({min(times['new']):.0f}-"
                  f"{max(times['new']):.0f}) | {statistics.median(ratios):.2f} | {cpu:.0f} | "
                  f"{cpu / mb:.2f} | {cpu / mn:.2f} |", flush=True)
            _replay(base, "gpu", evs, weighted, has_op)
            counts = _counters(_replay.last)
            _replay(hornet, "gpu", evs, weighted, has_op)
            print(f"  (base: {counts}; new: {_counters(_replay.last)})", flush=True)


if __name__ == "__main__":
    main()
