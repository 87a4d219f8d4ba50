"""Same-process A/B of growth-array floors (:meth:`hornet.Graph.set_array_growth`) on large GPU
batches of the updates benchmark's Kronecker graph (CUDA events).

    python3 -m bench.tools.growth_floor_gpu [--scale 24] [--sizes 1000000 10000000]
        [--floors 0 2097152 4194304] [--repeats 15]

One graph per floor (slots that a block array made by growth holds at least; 0: the default,
arrays sized by the batch's need and geometric growth), each built as the updates benchmark
builds it, so that every graph keeps its own memory state (a setting that changes which
block arrays exist cannot be compared on one graph: the value timed second finds the arrays
the first one made). Round after round, the same batch on every graph in alternating order:
random pairs inserted, existing edges sampled (with replacement) and deleted, every call
undone untimed. Prints per size and operation each floor's median, its ratio to the first
floor's and the block arrays its timed calls made; then each graph's reserved bytes over
the CSR's.
"""
from __future__ import annotations

import argparse
import statistics

import hornet
from bench.common import kronecker, require_gpu

NEEDS_GPU = True


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.growth_floor_gpu",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10**6, 10**7])
    ap.add_argument("--floors", type=int, nargs="+", default=[0, 1 << 21, 1 << 22])
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args(argv)
    require_gpu("growth_floor_gpu")
    import cupy
    print(f"device: {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
    src, dst = kronecker(args.scale, seed=args.scale, xp=cupy)
    graphs = {}
    for f in args.floors:
        graphs[f] = hornet.Graph.from_edges(src, dst, num_vertices=1 << args.scale,
                                            directed=False, device="gpu")
        graphs[f].set_array_growth(f)
    del src, dst
    first = graphs[args.floors[0]]
    n = first.num_vertices
    es, ed = first.edges()
    rs = cupy.random.RandomState(1)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    for b in args.sizes:
        reps = args.repeats if b <= 10**5 else max(5, args.repeats // 2)
        for op in ("insert", "delete"):
            times = {f: [] for f in graphs}
            made = dict.fromkeys(graphs, 0)
            for r in range(reps + 1):                 # round 0: warm-up, untimed
                if op == "insert":
                    s = rs.randint(0, n, b, dtype=cupy.int64)
                    d = rs.randint(0, n, b, dtype=cupy.int64)
                else:
                    p = rs.randint(0, es.size, b, dtype=cupy.int64)
                    s, d = es[p], ed[p]
                for f in (args.floors if r % 2 else args.floors[::-1]):
                    g = graphs[f]
                    call, undo = ((g.insert_edges, g.delete_edges) if op == "insert"
                                  else (g.delete_edges, g.insert_edges))
                    arrays = g._mm.arrays_created
                    cupy.cuda.Device().synchronize()
                    start.record()
                    change = call(s, d)
                    end.record()
                    end.synchronize()
                    if r:
                        times[f].append(cupy.cuda.get_elapsed_time(start, end) * 1e3)
                        made[f] += g._mm.arrays_created - arrays
                    undo(change.src, change.dst)
                    cupy.cuda.Device().synchronize()
            med = {f: statistics.median(t) for f, t in times.items()}
            m0 = med[args.floors[0]]
            print(f"kron{args.scale} b={b} {op}: " + ", ".join(
                f"floor {f}: {m:.0f} us ({m / m0:.2f}), {made[f]} arrays made"
                for f, m in med.items()) + f"; {reps} rounds", flush=True)
    for f, g in graphs.items():
        stats = g.memory_stats()
        ratio = stats["reserved_bytes"] / stats["csr_bytes"]
        print(f"floor {f}: reserved / CSR bytes {ratio:.3f}")
        g.check()


if __name__ == "__main__":
    main()
