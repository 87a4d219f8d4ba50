"""Same-process A/B of module settings on GPU update batches (CUDA events), one graph for
every value or a graph each.

    python3 -m bench.tools.knob_ab_gpu --knob hornet.batch.gpu.kernels:MERGE_PIECES=16,0
        [--scale 24] [--sizes 100000 1000000] [--repeats 7] [--ops insert delete] [--no-check]
        [--graph-each]

``--knob graph:NAME=...`` sets an attribute of the graph itself (``graph:medium_deletes=0,1``);
``--knob`` may be given several times (one graph for all), each with its own sizes after an
``@`` (``...=0,1@1000,10000``; else ``--sizes``).

Builds the updates benchmark's Kronecker graph once and times, round after round, every
value of the setting in turn (alternating order), as :mod:`bench.tools.ab_batches_gpu` times
two trees: random pairs inserted, existing edges sampled (with replacement) and deleted,
every call undone untimed; each round's batch is the same for every value. Prints per size
and operation the median of each value and its ratio to the first value's.

Every value runs on the one graph, whose memory state (which block arrays exist, which
lists are loose, when a delete compacts) each call leaves to the next value's call, so the
values are not compared fairly: two values that do the same (``WARP_MOVE`` 4096 and 4097)
read 0.70 on Kronecker 20 10^6 deletes, and device takes for 10^6-edge inserts
(``planned:PLANNED_INSERT_TAKES`` 2^20 -> 2^22) 0.82-0.85 here against 1.18 (Kronecker 24)
and 1.37 (Kronecker 20) with a graph per setting (bench/results/large_batches_split_gpu.md).
Compare with a graph each: ``--graph-each`` (one graph per value, built alike, the value
set around that graph's calls), :mod:`bench.tools.ab_batches_gpu` (two trees) or
:mod:`bench.tools.growth_floor_gpu`.
"""
from __future__ import annotations

import argparse
import importlib
import statistics

from bench.common import kronecker_graph_gpu, require_gpu

NEEDS_GPU = True


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.knob_ab_gpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--knob", required=True, action="append",
                    help="module:NAME=value,value,...[@size,size] (repeatable)")
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10**5, 10**6])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--ops", nargs="+", default=["insert", "delete"])
    ap.add_argument("--no-check", action="store_true",
                    help="skip the graph's invariant check after the timings")
    ap.add_argument("--graph-each", action="store_true",
                    help="a graph per value (each keeps its own memory state), the value set "
                         "around that graph's calls")
    args = ap.parse_args(argv)
    require_gpu("knob_ab_gpu")
    import cupy
    print(f"device: {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
    g, seconds = kronecker_graph_gpu(args.scale)
    print(f"kron{args.scale}: build {seconds:.2f} s", flush=True)
    es, ed = g.edges()
    n = g.num_vertices
    rs = cupy.random.RandomState(11)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    for knob in args.knob:
        knob, _, sizes = knob.partition("@")
        sizes = [int(x) for x in sizes.split(",")] if sizes else args.sizes
        where, values = knob.split("=")
        module, name = where.split(":")
        values = [int(v) for v in values.split(",")]
        # --graph-each: a graph per value, each with its own memory state; else one graph
        graphs = ({v: kronecker_graph_gpu(args.scale)[0] for v in values} if args.graph_each
                  else dict.fromkeys(values, g))
        # graph:NAME is an attribute of the graph itself
        where_set = ({v: graphs[v] for v in values} if module == "graph" else
                     dict.fromkeys(values, importlib.import_module(module)))
        original = {v: getattr(where_set[v], name) for v in values}
        for b in sizes:
            for op in args.ops:
                times = {v: [] for v in values}
                for r in range(args.repeats + 1):
                    order = values if r % 2 else values[::-1]
                    if op == "insert":                  # one batch a round, for every value
                        s = rs.randint(0, n, b, dtype=cupy.int64)
                        d = rs.randint(0, n, b, dtype=cupy.int64)
                    else:
                        p = rs.randint(0, es.size, b, dtype=cupy.int64)
                        s, d = es[p], ed[p]
                    for v in order:
                        gv = graphs[v]
                        call, undo = ((gv.insert_edges, gv.delete_edges) if op == "insert"
                                      else (gv.delete_edges, gv.insert_edges))
                        setattr(where_set[v], name, v)
                        cupy.cuda.Device().synchronize()
                        start.record()
                        change = call(s, d)
                        end.record()
                        end.synchronize()
                        if r:
                            times[v].append(cupy.cuda.get_elapsed_time(start, end) * 1e3)
                        undo(change.src, change.dst)
                        cupy.cuda.Device().synchronize()
                med = {v: statistics.median(x) for v, x in times.items()}
                first = med[values[0]]
                print(f"kron{args.scale} b={b} {op}: " + ", ".join(
                    f"{name}={v} {m:.0f} us ({m / first:.2f})" for v, m in med.items())
                    + f"; {args.repeats} rounds" + (", a graph each" if args.graph_each
                                                     else ""), flush=True)
        for v in values:
            setattr(where_set[v], name, original[v])
        if args.graph_each:
            for gv in graphs.values():
                if not args.no_check:
                    gv.check()
            graphs = where_set = None
            cupy.get_default_memory_pool().free_all_blocks()
    if not args.no_check:
        g.check()


if __name__ == "__main__":
    main()
