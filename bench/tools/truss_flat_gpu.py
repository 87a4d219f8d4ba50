"""GPU DynamicTruss variants (constants of :mod:`hornet.algos.ktruss.dynamic_gpu`) fed the same
changes of one graph: batches of random existing edges deleted and put back (and, with
``--uniform``, batches of uniform random pairs inserted and deleted again), every variant its
own ``DynamicTruss`` with its constants set while it is built and around each of its updates,
each update timed alone (synchronized) and checked against the static decomposition of the
graph (computed once per change; ``--no-check``: not computed). Per update: ms, path (and
gate), region, the candidates (mode 4: those left at their level, its P at its end; the scan
by windows: those made, with its windows, counts and rises), rounds / peeling rounds, and the
scan's own time by kind of phase; then the medians per variant against the static
decomposition's median.

    python3 -m bench.tools.truss_flat_gpu [--graphs kron22] [--sizes 100,1000] [--repeats 2]
        [--variant NAME:K=V,K=V ...] [--fallback-share 0.5] [--warmup 1] [--uniform]
        [--static-repeats 3] [--budget SECONDS] [--device-edges] [--no-check]

``--device-edges``: Kronecker edges made on the GPU (``kronecker_edges(..., xp=cupy)``, seed 1:
another graph than the NumPy generator's of the same scale, made in a fraction of its time;
for Kronecker 24). The device memory in use is printed after the graph, the ``DynamicTruss``
and the first static decomposition.

``--variant``: ``K`` a constant of ``ktruss.dynamic_gpu`` (or ``module.K`` of another
``ktruss`` module), ``V`` a number; the variant ``new`` (the tree's defaults) always runs.
"""
from __future__ import annotations

import argparse
import importlib
import statistics
import time
from collections import defaultdict

import numpy as np

import hornet
from bench.dynamic_truss import load

#: ko_scan's kinds of phase (KS_PH_* in ko_scan_grid.cuh), for its clock's words
PHASES = ("cand", "push", "peel", "peelpush", "hindex", "dpush", "other")


def _timed(fn) -> float:
    import cupy
    cupy.cuda.Device().synchronize()
    t = time.perf_counter()
    fn()
    cupy.cuda.Device().synchronize()
    return time.perf_counter() - t


def _window_stats(st: dict) -> str:
    """The scan by windows' counters of an update's stats (empty for other paths)."""
    if st.get("scan") != "windows":
        return ""
    return (f" windows {st['windows']} counted {st['counted']} evaluated {st['evaluated']} "
            f"pending {st['pending']} risen {st['risen']}")


def _memory(what: str) -> None:
    """Prints the device memory in use (driver) and held by CuPy's pool after ``what``."""
    import cupy
    free, total = cupy.cuda.runtime.memGetInfo()
    pool = cupy.get_default_memory_pool()
    print(f"  memory after {what}: {(total - free) / 2**30:.1f} GiB in use of "
          f"{total / 2**30:.1f} (pool: {pool.used_bytes() / 2**30:.1f} GiB used, "
          f"{pool.free_bytes() / 2**30:.1f} free)", flush=True)


def _owner(key: str):
    mod, _, name = key.rpartition(".")
    return importlib.import_module("hornet.algos.ktruss." + (mod or "dynamic_gpu")), name


def _configured(values: dict):
    """Set the constants ``values``; returns the undo."""
    where = {k: _owner(k) for k in values}
    saved = {k: getattr(mod, name) for k, (mod, name) in where.items()}
    for k, v in values.items():
        mod, name = where[k]
        setattr(mod, name, type(saved[k])(v))

    def undo():
        for k, v in saved.items():
            mod, name = where[k]
            setattr(mod, name, v)
    return undo


def main(argv=None) -> None:
    import cupy as cp
    from hornet.algos import DynamicTruss, truss_numbers
    from hornet.algos.ktruss.ko_launch import KS_TIME
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.truss_flat_gpu")
    ap.add_argument("--graphs", default="kron22")
    ap.add_argument("--sizes", default="100")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=1, help="untimed batches first")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME:K=V,K=V")
    ap.add_argument("--fallback-share", type=float, default=0.5)
    ap.add_argument("--uniform", action="store_true",
                    help="also insert batches of uniform random pairs (deleted again after)")
    ap.add_argument("--budget", type=float, default=1e9,
                    help="seconds after which no new batch starts")
    ap.add_argument("--static-repeats", type=int, default=3)
    ap.add_argument("--device-edges", action="store_true",
                    help="Kronecker edges made on the GPU (seed 1)")
    ap.add_argument("--no-check", action="store_true",
                    help="no static decomposition after each change (no check)")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    print(f"device: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
    variants = {"new": {}}
    for item in args.variant:
        name, _, pairs = item.partition(":")
        variants[name] = {k: float(v) for k, v in (p.split("=") for p in pairs.split(",") if p)}
        print(f"{name}: {variants[name]}", flush=True)
    rng = np.random.default_rng(5)
    for gname in args.graphs.split(","):
        t0 = time.perf_counter()
        if args.device_edges and gname.startswith("kron"):
            scale = int(gname[4:])
            title = f"Kronecker {scale} (ef 16, made on the GPU)"
            s, d = hornet.generators.kronecker_edges(scale, edge_factor=16, seed=1, xp=cp)
        else:
            title, s, d = load(gname)
        t1 = time.perf_counter()
        g = hornet.Graph.from_edges(cp.asarray(s), cp.asarray(d), device="gpu")
        del s, d
        cp.cuda.Device().synchronize()
        t2 = time.perf_counter()
        _memory("graph")
        nv = int(g.num_vertices)
        trusses, built = {}, []
        for name, values in variants.items():
            undo = _configured(values)
            try:
                built.append(_timed(lambda: trusses.update(
                    {name: DynamicTruss(g, fallback_share=args.fallback_share)})))
            finally:
                undo()
        _memory("DynamicTruss")
        from hornet.algos.ktruss.gpu import FRONTIER
        print(f"  static frontier: span {FRONTIER.get('span')}, items "
              f"{FRONTIER.get('items')} ({2 * 8 * FRONTIER.get('items', 0) / 2**30:.1f} GiB "
              f"for both buffers)", flush=True)
        static = statistics.median(_timed(lambda: truss_numbers(g))
                                   for _ in range(args.static_repeats))
        _memory("static decomposition")
        print(f"{title}: E={g.num_edges} static {static * 1e3:.1f} ms (edges made "
              f"{t1 - t0:.1f} s, graph {t2 - t1:.1f} s, DynamicTruss built "
              f"{', '.join(f'{x:.1f}' for x in built)} s)", flush=True)
        ops = ["delete", "re-insert"] + (["insert uniform", "delete uniform"]
                                         if args.uniform else [])
        for b in (int(x) for x in args.sizes.split(",")):
            times = defaultdict(list)
            for r in range(args.repeats + args.warmup):
                if time.perf_counter() - start > args.budget:
                    print(f"  b={b}: stopped (budget)", flush=True)
                    break
                gs, gd = (a.get() for a in g.edges())
                pick = rng.choice(gs.shape[0], b, replace=False)
                bs, bd = cp.asarray(gs[pick]), cp.asarray(gd[pick])
                us = cp.asarray(rng.integers(0, nv, b).astype(np.int32))
                ud = cp.asarray(rng.integers(0, nv, b).astype(np.int32))
                for op in ops:
                    if op == "delete":
                        ch = g.delete_edges(bs, bd)
                    elif op == "re-insert":
                        ch = g.insert_edges(bs, bd)
                    elif op == "insert uniform":
                        ch = g.insert_edges(us, ud)
                    else:
                        ch = g.delete_edges(ch.src, ch.dst)
                    want = None if args.no_check else truss_numbers(g).get()
                    for name, kt in trusses.items():
                        kt._words_host[:] = 0          # (ko_scan's clock: this update's)
                        undo = _configured(variants[name])
                        try:
                            dt = _timed(lambda: kt.update(ch))
                        finally:
                            undo()
                        if want is not None and \
                                not np.array_equal(kt.truss_numbers.get(), want):
                            raise SystemExit(f"{title} b={b} {name} {op}: dynamic != static")
                        if r < args.warmup or op == "delete uniform":
                            continue
                        times[(name, op)].append(dt)
                        st = kt.stats
                        clock = kt._ks_host[KS_TIME:KS_TIME + len(PHASES)] / 1e6
                        phases = " ".join(f"{n} {x:.1f}" for n, x in zip(PHASES, clock) if x)
                        print(f"    b={b} {op:14} {name:8} {dt * 1e3:9.2f} ms "
                              f"{st.get('path')}{'/' + st['gate'] if 'gate' in st else ''} "
                              f"region {st.get('region')} candidates {st.get('candidates')} "
                              f"rounds {st.get('rounds')}/{st.get('peel_rounds')} levels "
                              f"{st.get('levels')}{_window_stats(st)}; ko_scan ms: {phases}",
                              flush=True)
            for (name, op), xs in sorted(times.items(), key=lambda kv: (kv[0][1], kv[0][0])):
                m = statistics.median(xs)
                print(f"  b={b} {op:14} {name:8}: median {m * 1e3:9.2f} ms "
                      f"({', '.join(f'{x * 1e3:.1f}' for x in xs)}) x{static / m:.2f}",
                      flush=True)


if __name__ == "__main__":
    main()
