"""The GPU DynamicTruss's dense blocks (hornet.algos.ktruss.blocks_gpu) on a real graph.

    python3 -m bench.tools.truss_blocks_gpu [--graph ca-HepPh] [--sizes 10,118] [--repeats 5]

Per batch size b: b random existing edges deleted, then re-inserted (as bench/dynamic_truss.py
does), each update timed (synchronized before and after) and printed with its statistics and
the blocks' state (blocks kept, batch edges that were block entries, descent rounds); the
medians against the static decomposition of the same graph (median of 5). Then the same
batches with every step of the update wrapped in a device synchronization (inclusive times per
step: where the time goes, not the update's time). The numbers are checked against the static
decomposition at the end.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

NEEDS_GPU = True

STEPS = (("GpuBlocks", "delete"), ("GpuBlocks", "insert"), ("GpuBlocks", "check"),
         ("GpuBlocks", "_descend"), ("GpuBlocks", "_write"), ("GpuBlocks", "_relocate"),
         ("GpuDynamicTruss", "_scan"), ("GpuDynamicTruss", "update"))


def _timed(cp, fn) -> float:
    cp.cuda.Device().synchronize()
    t = time.perf_counter()
    fn()
    cp.cuda.Device().synchronize()
    return time.perf_counter() - t


def _state(kt):
    b = kt._blocks
    return None if b is None else (b.nblocks, b.touched, b.rounds)


def _batches(cp, g, rng, b):
    gs, gd = (a.get() for a in g.edges())
    pick = rng.choice(gs.shape[0], b, replace=False)
    return cp.asarray(gs[pick]), cp.asarray(gd[pick])


def _wrap_steps(spans: dict) -> None:
    import cupy as cp
    from hornet.algos.ktruss import blocks_gpu, dynamic_gpu
    owners = {"GpuBlocks": blocks_gpu.GpuBlocks, "GpuDynamicTruss": dynamic_gpu.GpuDynamicTruss}
    for owner, name in STEPS:
        cls = owners[owner]
        fn = getattr(cls, name)

        def inner(*a, _fn=fn, _name=name, **k):
            cp.cuda.Device().synchronize()
            t = time.perf_counter()
            r = _fn(*a, **k)
            cp.cuda.Device().synchronize()
            spans[_name] = spans.get(_name, 0.0) + time.perf_counter() - t
            return r
        setattr(cls, name, inner)


def main(argv=None) -> None:
    import cupy as cp
    import hornet
    from hornet.algos import DynamicTruss, truss_numbers
    from bench.dynamic_truss import load
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", default="ca-HepPh")
    ap.add_argument("--sizes", default="10,118")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    _, s, d = load(args.graph)
    g = hornet.Graph.from_edges(cp.asarray(s), cp.asarray(d), device="gpu")
    start = time.perf_counter()
    kt = DynamicTruss(g)
    bl = kt._blocks
    print(f"{args.graph}: build {time.perf_counter() - start:.3f} s, blocks "
          f"{None if bl is None else (bl.nblocks, bl.m, bl.rows)}, top levels {kt._top}")
    static = statistics.median(_timed(cp, lambda: truss_numbers(g)) for _ in range(5))
    print(f"static {static * 1e3:.2f} ms")
    rng = np.random.default_rng(0)
    keys = ("path", "gate", "region", "units", "depth")
    for b in sizes:
        res = {"delete": [], "re-insert": []}
        for _ in range(args.repeats):
            ds, dd = _batches(cp, g, rng, b)
            for kind, op in (("delete", g.delete_edges), ("re-insert", g.insert_edges)):
                ch = op(ds, dd)
                res[kind].append(_timed(cp, lambda: kt.update(ch)))
                print(f"  b={b} {kind} {res[kind][-1] * 1e3:.2f} ms",
                      {k: kt.stats.get(k) for k in keys}, "blocks", _state(kt))
        for kind, v in res.items():
            med = statistics.median(v)
            print(f"b={b} {kind}: median {med * 1e3:.3f} ms, {static / med:.2f}x static")
    spans: dict = {}
    _wrap_steps(spans)
    for b in sizes:
        tot = {"delete": {}, "re-insert": {}}
        for _ in range(3):
            ds, dd = _batches(cp, g, rng, b)
            for kind, op in (("delete", g.delete_edges), ("re-insert", g.insert_edges)):
                ch = op(ds, dd)
                spans.clear()
                kt.update(ch)
                for k, v in spans.items():
                    tot[kind][k] = tot[kind].get(k, 0.0) + v / 3
        for kind, steps in tot.items():
            print(f"b={b} {kind} steps (ms, synchronized):",
                  {k: round(v * 1e3, 3) for k, v in steps.items()})
    same = np.array_equal(kt.truss_numbers.get(), truss_numbers(g).get())
    print("equal to the static decomposition:", same)


if __name__ == "__main__":
    main()
