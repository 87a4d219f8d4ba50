"""Same-process A/B of two source trees on GPU update batches of several sizes (CUDA events).

The update benchmark (``python3 -m bench updates_gpu``) times each batch size in its own
process, and host-bound latencies move by about 1.5x between processes. This tool loads a
second tree (``--base``, any checkout) as ``hornet_base`` next to the working tree's
``hornet`` (:func:`bench.tools.ab_trees.load_base`), builds the updates benchmark's Kronecker
graph with both, and times insert and delete batches of every size on each in alternating
order, as the benchmark does: random pairs inserted, existing edges sampled (with
replacement) and deleted, every call undone untimed, medians of CUDA-event times. Both
trees must return the same changes.

    python3 -m bench.tools.ab_batches_gpu --base /tmp/base [--scales 20 24]
        [--sizes 1000 10000 100000 1000000] [--repeats 15] [--profile 24:10000 ...]
        [--real soc-Epinions1 ...] [--no-check]

Each row also gives, per tree and operation, the slowest call over the median and (in
parentheses) the calls over twice the median (the latency benchmark's criterion), and per
tree the block arrays that its timed inserts and deletes made (the memory manager's
``arrays_created``: a batch that grows a size class pays for new arrays, their bit trees and
a lookup rebuild).

``--profile SCALE:SIZE``: after the timings, a cProfile of a few insert and delete batches
of that size on the working tree's graph (host time by function, cumulative and own).
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import hornet
from bench.common import kronecker, real_graph_path
from bench.tools.ab_trees import load_base


def _times(cupy, graphs, order, make_call, undo, repeats, made=None):
    """{name: [seconds]}: ``repeats`` rounds, each tree once per round in alternating order.
    ``made`` ({name: int}): the block arrays each tree's timed calls made are added to it."""
    out = {name: [] for name in graphs}
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    for r in range(repeats + 1):                      # round 0: warm-up, untimed
        results = {}
        for name in (order if r % 2 else order[::-1]):
            call = make_call(r, name)
            arrays = graphs[name]._mm.arrays_created
            cupy.cuda.Device().synchronize()
            start.record()
            change = call()
            end.record()
            end.synchronize()
            if r:
                out[name].append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
                if made is not None:
                    made[name] += graphs[name]._mm.arrays_created - arrays
            results[name] = (change.src.get(), change.dst.get())
            undo(name, change)
            cupy.cuda.Device().synchronize()
        a, b = results.values()
        if not (np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])):
            raise SystemExit(f"round {r}: the two trees returned different changes")
    return out


def _spikes(times: list) -> str:
    """The slowest of ``times`` over their median and how many exceed twice the median."""
    med = statistics.median(times)
    return f"{max(times) / med:.2f} ({sum(t > 2 * med for t in times)})"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.ab_batches_gpu",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", type=Path, required=True, help="checkout holding the base tree")
    ap.add_argument("--scales", type=int, nargs="*", default=[20, 24])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10**4, 10**5, 10**6])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--real", nargs="*", default=[],
                    help="real graphs of the data folder (names), directed, as the latency "
                         "benchmark's --real")
    ap.add_argument("--profile", nargs="*", default=[], help="SCALE:SIZE to profile")
    ap.add_argument("--no-check", action="store_true",
                    help="skip the graphs' invariant checks after the timings")
    args = ap.parse_args(argv)
    import cupy
    base = load_base(args.base)
    packages = {"base": base, "new": hornet}
    print(f"device: {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
    rows = []
    for scale in args.scales + args.real:
        if isinstance(scale, int):
            label, directed, n_ = f"kron{scale}", False, 1 << scale
            src, dst = kronecker(scale, seed=scale, xp=cupy)
        else:                       # a real graph of the data folder, directed (as --real)
            hs, hd, _ = hornet.io.read_edges(real_graph_path(scale))
            label, directed, n_ = scale, True, int(max(hs.max(), hd.max())) + 1
            src, dst = cupy.asarray(hs), cupy.asarray(hd)
        graphs = {}
        for name, p in packages.items():
            t = time.perf_counter()
            graphs[name] = p.Graph.from_edges(src, dst, num_vertices=n_,
                                              directed=directed, device="gpu")
            cupy.cuda.Device().synchronize()
            print(f"{label} {name}: build {time.perf_counter() - t:.2f} s", flush=True)
        del src, dst
        g = graphs["new"]
        n = g.num_vertices
        es, ed = g.edges()
        rs = cupy.random.RandomState(1)
        for b in (b for b in args.sizes if b <= g.num_edges):
            reps = args.repeats if b <= 10**5 else max(5, args.repeats // 3)
            ins = [(rs.randint(0, n, b, dtype=cupy.int64), rs.randint(0, n, b, dtype=cupy.int64))
                   for _ in range(reps + 1)]
            picks = [rs.randint(0, es.size, b, dtype=cupy.int64) for _ in range(reps + 1)]
            dels = [(es[p], ed[p]) for p in picks]
            made = {"ins": dict.fromkeys(graphs, 0), "del": dict.fromkeys(graphs, 0)}
            t_ins = _times(cupy, graphs, ("base", "new"),
                           lambda r, name: (lambda: graphs[name].insert_edges(*ins[r])),
                           lambda name, c: graphs[name].delete_edges(c.src, c.dst), reps,
                           made["ins"])
            t_del = _times(cupy, graphs, ("base", "new"),
                           lambda r, name: (lambda: graphs[name].delete_edges(*dels[r])),
                           lambda name, c: graphs[name].insert_edges(c.src, c.dst), reps,
                           made["del"])
            med = {k: statistics.median(v) * 1e6 for k, v in
                   (("ins base", t_ins["base"]), ("ins new", t_ins["new"]),
                    ("del base", t_del["base"]), ("del new", t_del["new"]))}
            over = {k: _spikes(v) for k, v in
                    (("ins base", t_ins["base"]), ("ins new", t_ins["new"]),
                     ("del base", t_del["base"]), ("del new", t_del["new"]))}
            row = (f"{label} b={b}: insert base {med['ins base']:.0f} us, new "
                   f"{med['ins new']:.0f} us ({med['ins new'] / med['ins base']:.2f}); delete "
                   f"base {med['del base']:.0f} us, new {med['del new']:.0f} us "
                   f"({med['del new'] / med['del base']:.2f}); {reps} rounds; max/median, "
                   f"calls over 2x: " + ", ".join(f"{k} {v}" for k, v in over.items())
                   + "; block arrays made by the timed calls (insert, delete): " + ", ".join(
                       f"{name} {made['ins'][name]}, {made['del'][name]}" for name in graphs))
            rows.append(row)
            print(row, flush=True)
        for g_ in graphs.values():
            if not args.no_check:
                g_.check()
        for spec in args.profile:
            s_, b_ = (int(x) for x in spec.split(":"))
            if s_ != scale:
                continue
            prof = cProfile.Profile()
            for _ in range(3):
                bs = rs.randint(0, n, b_, dtype=cupy.int64)
                bd = rs.randint(0, n, b_, dtype=cupy.int64)
                p = rs.randint(0, es.size, b_, dtype=cupy.int64)
                ds, dd = es[p], ed[p]
                cupy.cuda.Device().synchronize()
                prof.enable()
                c = g.insert_edges(bs, bd)
                cupy.cuda.Device().synchronize()
                prof.disable()
                g.delete_edges(c.src, c.dst)
                cupy.cuda.Device().synchronize()
                prof.enable()
                c = g.delete_edges(ds, dd)
                cupy.cuda.Device().synchronize()
                prof.disable()
                g.insert_edges(c.src, c.dst)
            for order in ("cumulative", "tottime"):
                out = io.StringIO()
                pstats.Stats(prof, stream=out).sort_stats(order).print_stats(30)
                print(f"---- cProfile kron{scale} b={b_}, 3 inserts + 3 deletes (new tree), "
                      f"by {order}")
                print("\n".join(out.getvalue().splitlines()[:60]))
        graphs = g = None
        cupy.get_default_memory_pool().free_all_blocks()
    print("\n".join(rows))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
