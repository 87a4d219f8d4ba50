"""The top truss levels that the GPU DynamicTruss keeps by a static decomposition of their own
subgraph (:mod:`hornet.algos.ktruss.top_levels_gpu`): edges by level at the top, the cap level
the gate picks, the subgraph's edges and vertices, and the time of its decomposition against
the whole graph's static decomposition (same process, synchronized, medians).

    python3 -m bench.tools.truss_top_gpu [--graphs kron20] [--repeats 3]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import hornet
from bench.dynamic_truss import load


def _timed(fn) -> float:
    import cupy
    cupy.cuda.Device().synchronize()
    t = time.perf_counter()
    fn()
    cupy.cuda.Device().synchronize()
    return time.perf_counter() - t


def main(argv=None) -> None:
    import cupy as cp
    from hornet.algos import DynamicTruss, truss_numbers
    from hornet.algos.ktruss import top_levels_gpu as T
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.truss_top_gpu")
    ap.add_argument("--graphs", default="kron20")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"device: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
    for name in args.graphs.split(","):
        title, s, d = load(name)
        g = hornet.Graph.from_edges(cp.asarray(s), cp.asarray(d), device="gpu")
        kt = DynamicTruss(g)
        t = kt.truss_numbers.get()
        hist = np.bincount(t)
        top = np.flatnonzero(hist)[-12:][::-1]
        print(f"{title}: E={t.shape[0]} k_max={int(t.max())} cap={kt._top}; edges by level "
              "(top): " + ", ".join(f"{k}:{hist[k]}" for k in top), flush=True)
        static = statistics.median(_timed(lambda: truss_numbers(g))
                                   for _ in range(args.repeats))
        if not kt._top:
            print(f"  static {static * 1e3:.2f} ms; no cap (gate not met)")
            continue
        table = kt._table
        slots = T.top_slots(table, kt._top)
        keys = table.keys[slots]
        nv = int(cp.unique(cp.concatenate([keys >> 32, keys & 0xFFFFFFFF])).shape[0])
        # (S is the cap-truss here: its decomposition gives every edge its number again)
        times = [_timed(lambda: T.decompose_top(table, slots, kt._top, kt._tail, kt._top))
                 for _ in range(args.repeats)]
        sel = _timed(lambda: T.top_slots(table, kt._top))
        from hornet.algos.ktruss.gpu import _DevicePeel
        from hornet.algos.triangles.gpu import EdgeIndex
        got = {}
        tv = _timed(lambda: got.update(vo=T.top_view(table, slots)))
        ti = _timed(lambda: got.update(ix=EdgeIndex.build(got["vo"][0])))
        ts = _timed(lambda: got.update(p=_DevicePeel(got["ix"])))
        tp = _timed(lambda: got["p"].decompose())
        print(f"  parts: view {tv * 1e3:.2f} ms, edge index {ti * 1e3:.2f} ms, support "
              f"{ts * 1e3:.2f} ms, peeling {tp * 1e3:.2f} ms", flush=True)
        rank = table.columns["rank"][slots]
        rounds = int(((rank - kt._tail) >> 32).max()) + 1
        levels = int(cp.unique(table.columns["truss"][slots]).shape[0])
        print(f"  top levels: {slots.shape[0]} edges among {nv} vertices; their static "
              f"decomposition {statistics.median(times) * 1e3:.2f} ms "
              f"({', '.join(f'{x * 1e3:.2f}' for x in times)}; {rounds} peeling rounds, "
              f"{levels} levels), selection {sel * 1e3:.3f} ms; "
              f"whole graph static {static * 1e3:.2f} ms", flush=True)
        assert np.array_equal(kt.truss_numbers.get(), truss_numbers(g).get())


if __name__ == "__main__":
    main()
