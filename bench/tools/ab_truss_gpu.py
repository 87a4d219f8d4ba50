"""Same-process A/B of the GPU DynamicTruss of two source trees, with the static decomposition
timed in the same process.

    python3 -m bench.tools.ab_truss_gpu --base ../base [--graphs email-Enron,soc-Epinions1]
        [--sizes 10,100] [--repeats 7] [--budget 60] [--set ASYNC_CAND=0 ...]
        [--variant NAME:ASYNC_FUSED=0,SCAN_BLOCKS_PER_SM=1 ...]

For every graph (a file of the data folder by name prefix, or "kronNN") both trees build the
graph and a ``DynamicTruss``; for every batch size, ``repeats`` batches of b random existing
edges are deleted and then re-inserted, each update timed alone (synchronized), the two trees
taking turns in alternating order on the same batches. After every update both trees' numbers
equal the static decomposition of its graph (checked untimed). Prints the medians (with
min and max), the path taken (dynamic or static fallbacks) and the speedup over the static
decomposition's median in the same process. ``--budget``: seconds after which no new batch
size starts. ``--variant``: the new tree again with other constants of its
``ktruss.dynamic_gpu`` (or ``module.NAME`` of another ``ktruss`` module; set while its
``DynamicTruss`` is built and around each of its updates, restored after), timed in turn
with the others; the new tree's rows add the device time of ko_scan's
phases (its own clock, KS_TIME words) per update. Every entry (base, new, each variant) keeps
its own graph and DynamicTruss, so each starts every batch from the same kind of state.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

import hornet
from bench.dynamic_truss import load
from bench.tools.ab_trees import load_base


def _sync():
    import cupy
    cupy.cuda.Device().synchronize()


def _timed(fn) -> float:
    _sync()
    t = time.perf_counter()
    fn()
    _sync()
    return time.perf_counter() - t


def _static_ms(package, g, repeats: int = 5) -> float:
    return statistics.median(_timed(lambda: package.algos.truss_numbers(g))
                             for _ in range(repeats)) * 1e3


def _fmt(xs) -> str:
    xs = [x * 1e3 for x in xs]
    return f"{statistics.median(xs):7.3f} ({min(xs):.3f}-{max(xs):.3f})"


def main(argv=None) -> None:
    import cupy as cp
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.ab_truss_gpu")
    ap.add_argument("--base", type=Path, required=True)
    ap.add_argument("--graphs", default="email-Enron,soc-Epinions1")
    ap.add_argument("--sizes", default="10,100")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--budget", type=float, default=1e9)
    ap.add_argument("--check", type=int, default=1,
                    help="check against the static decomposition every this many batches")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=INT",
                    help="set a constant of the new tree's ktruss.dynamic_gpu (repeatable)")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME:K=V,K=V",
                    help="the new tree with other dynamic_gpu constants (repeatable)")
    ap.add_argument("--prebuild", action="store_true",
                    help="compile the new tree's CUDA modules in background threads first "
                         "(the replay's list and the ktruss sources), while the graphs load")
    ap.add_argument("--each", action="store_true",
                    help="also print every repeat's time (ms) and the base's statistics")
    args = ap.parse_args(argv)
    from hornet.algos.ktruss import dynamic_gpu
    for item in args.set:
        key, value = item.split("=")
        mod, name = _owner(key)
        setattr(mod, name, type(getattr(mod, name))(int(value)))
        print(f"new: {mod.__name__}.{name} = {getattr(mod, name)}")
    variants = {"new": {}}
    for item in args.variant:
        vname, _, pairs = item.partition(":")
        variants[vname] = {k: int(v) for k, v in (p.split("=") for p in pairs.split(",") if p)}
        print(f"{vname}: new with {variants[vname]}")
    start = time.perf_counter()
    if args.prebuild:
        _prebuild()
    base = load_base(args.base)
    packages = {"base": base, "new": hornet}
    names = ["base"] + list(variants)
    print(f"device: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
    rng = np.random.default_rng(3)

    def configured(vname):
        """Set a variant's constants (the grid cache too); returns the undo."""
        where = {k: _owner(k) for k in variants.get(vname, {})}
        saved = {k: getattr(mod, name) for k, (mod, name) in where.items()}
        for k, v in variants.get(vname, {}).items():
            mod, name = where[k]
            setattr(mod, name, type(saved[k])(v))
        grid = dynamic_gpu.GpuDynamicTruss._grid_cache
        # (a fresh grid size only for a variant of the grid: its query is timed too)
        regrid = any(k.startswith("SCAN_") for k in saved)
        dynamic_gpu.GpuDynamicTruss._grid_cache = {} if regrid else grid

        def undo():
            for k, v in saved.items():
                mod, name = where[k]
                setattr(mod, name, v)
            dynamic_gpu.GpuDynamicTruss._grid_cache = grid
        return undo

    for name in args.graphs.split(","):
        title, s, d = load(name)
        su, du = cp.asarray(s), cp.asarray(d)
        # (every entry its own graph and state: a second update of one batch on a shared
        # state would start from the k-order the first one left, and cost less)
        pkg = {k: packages["base" if k == "base" else "new"] for k in names}
        graphs = {k: pkg[k].Graph.from_edges(su, du, device="gpu") for k in names}
        trusses = {}
        for k in names:                  # (a variant's constants hold while it is built too)
            undo = configured(k) if k != "base" else (lambda: None)
            try:
                trusses[k] = pkg[k].algos.DynamicTruss(graphs[k])
            finally:
                undo()
        gs, gd = (a.get() for a in graphs["new"].edges())
        static = _static_ms(hornet, graphs["new"])
        print(f"{title}: E={graphs['new'].num_edges} static {static:.2f} ms", flush=True)
        for b in (int(x) for x in args.sizes.split(",")):
            if time.perf_counter() - start > args.budget:
                print(f"  b={b}: skipped (budget)")
                continue
            times = {(k, op): [] for k in names for op in ("delete", "re-insert")}
            paths = {(k, op): [] for k in names for op in ("delete", "re-insert")}
            kernel = {(k, op): [] for k in names for op in ("delete", "re-insert")}
            phases = {(k, op): [] for k in names for op in ("delete", "re-insert")}
            busy = {(k, op): [] for k in names for op in ("delete", "re-insert")}
            stats = {k: [] for k in names}
            for r in range(args.repeats + 1):         # (the first batch: warm-up, untimed)
                pick = rng.choice(gs.shape[0], b, replace=False)
                bs, bd = cp.asarray(gs[pick]), cp.asarray(gd[pick])
                order = names[r % len(names):] + names[:r % len(names)]
                for k in (order if r % 2 else order[::-1]):
                    tree = "base" if k == "base" else "new"
                    g, kt = graphs[k], trusses[k]
                    undo = configured(k) if tree == "new" else (lambda: None)
                    try:
                        for op in ("delete", "re-insert"):
                            ch = g.delete_edges(bs, bd) if op == "delete" else \
                                g.insert_edges(bs, bd)
                            if tree == "new":
                                kt._words_host[:] = 0       # (ko_scan's times: this update's)
                            # (the trees' identical CUDA sources share one loaded module,
                            # and so its hub-row constant: the new tree's rows are switched
                            # on before its update and off after it, untimed, since the
                            # base's objects without rows never write it; the update then
                            # finds its rows active, as an object updated alone does)
                            rows = tree == "new" and getattr(kt, "_hubs", None) is not None
                            if rows:
                                kt._hubs.activate(dynamic_gpu.HUB_BITS)
                            dt = _timed(lambda: kt.update(ch))
                            if rows:
                                kt._hubs.activate(False)
                            if r:
                                times[(k, op)].append(dt)
                                paths[(k, op)].append(kt.stats.get("path"))
                                if tree == "new":
                                    kernel[(k, op)].append(_kernel_ms(kt))
                                    phases[(k, op)].append(_phase_ms(kt))
                                    busy[(k, op)].append(_busy(kt))
                                if tree == "new" or args.each:
                                    stats[k].append((op, kt.stats.get("rounds"),
                                                     kt.stats.get("peel_rounds"),
                                                     kt.stats.get("levels"),
                                                     kt.stats.get("units"),
                                                     kt.stats.get("depth"),
                                                     kt.stats.get("top"),
                                                     # (ko_scan's status, where it ran)
                                                     int(kt._ks_host[dynamic_gpu.KS_STATUS])
                                                     if "units" in kt.stats and
                                                     tree == "new" else None))
                            if r % args.check == 0:
                                want = pkg[k].algos.truss_numbers(g).get()
                                got = kt.truss_numbers.get()
                                if not np.array_equal(got, want):
                                    raise SystemExit(f"{title} b={b} {k} {op}: dynamic != "
                                                     "static")
                    finally:
                        undo()
            print(f"  b={b} ({args.repeats} batches, ms median (min-max), speedup over static)")
            for op in ("delete", "re-insert"):
                tb = times[("base", op)]
                mb = statistics.median(tb)
                fb = sum(p != "dynamic" for p in paths[("base", op)])
                print(f"    {op:9} base {_fmt(tb)} x{static / (mb * 1e3):5.1f} [{fb} static]",
                      flush=True)
                if args.each:
                    print(f"    {'':9} base  each: " + " ".join(f"{x * 1e3:.3f}" for x in tb))
                for k in variants:
                    tn = times[(k, op)]
                    mn = statistics.median(tn)
                    fn = sum(p != "dynamic" for p in paths[(k, op)])
                    ks = [x for x in kernel[(k, op)] if x is not None]
                    kms = f" ko_scan {statistics.median(ks):.3f}" if ks else ""
                    print(f"    {'':9} {k:5} {_fmt(tn)} x{static / (mn * 1e3):5.1f} [{fn} static]"
                          f"  /base {mn / mb:.3f}{kms}", flush=True)
                    if args.each:
                        print(f"    {'':9} {k:5} each: " + " ".join(f"{x * 1e3:.3f}" for x in tn))
            for k in variants:
                for op in ("delete", "re-insert"):
                    ph = [x for x in phases[(k, op)] if x is not None]
                    if ph:
                        med = np.median(np.array(ph), axis=0)
                        print(f"    {k} {op} ko_scan phases (ms, median): " + " ".join(
                            f"{n} {x:.2f}" for n, x in zip(PHASES, med) if x), flush=True)
            for k in variants:
                for op in ("delete", "re-insert"):
                    bs = [x for x in busy[(k, op)] if x is not None and x[0]]
                    if bs:
                        print(f"    {k} {op} asynchronous units served / their mean time (us): "
                              + " ".join(f"{n}/{us:.2f}" for n, us in bs), flush=True)
            for k in (names if args.each else variants):
                print(f"    {k} (op, rounds, peel rounds, levels, queue units, chain, top "
                      "levels' edges, ko_scan status): " +
                      " ".join(f"{o[0]}:{o[1]}/{o[2]}/{o[3]}/{o[4]}/{o[5]}/{o[6]}/{o[7]}"
                               for o in stats[k][:None if args.each else 8]))
        static2 = _static_ms(hornet, graphs["new"])
        print(f"  static again {static2:.2f} ms", flush=True)


def _prebuild() -> None:
    """Start compiling the CUDA modules of a GPU replay (its recorded list) and the ktruss
    sources that it lacks, in background threads (a first kernel waits for its module)."""
    import glob
    import json
    import os
    from hornet.core import cuda
    from streams.cli import REPLAY_MODULES
    root = os.path.dirname(os.path.abspath(hornet.__file__))
    with open(REPLAY_MODULES, encoding="utf-8") as f:
        mods = [(os.path.join(root, p), tuple(n)) for p, n, *_ in json.load(f)["modules"]]
    have = {m[0] for m in mods if not m[1]}
    mods += [(p, ()) for p in sorted(glob.glob(os.path.join(root, "algos", "ktruss", "*.cu")))
             if p not in have]
    cuda.prebuild(mods, workers=max(1, min(15, (os.cpu_count() or 2) - 1)))


#: ko_scan's kinds of phase (KS_PH_* in ko_scan_grid.cuh), for its clock's words
PHASES = ("cand", "push", "peel", "peelpush", "hindex", "dpush", "other")


def _phase_ms(kt):
    """ko_scan's own time of the last update by kind of phase (ms), or None."""
    from hornet.algos.ktruss.dynamic_gpu import GpuDynamicTruss
    from hornet.algos.ktruss.ko_launch import KS_TIME
    if not isinstance(kt, GpuDynamicTruss):
        return None
    return kt._ks_host[KS_TIME:KS_TIME + len(PHASES)].astype(np.float64) / 1e6


def _owner(key: str):
    """(module, name) of a constant: ``NAME`` of ``ktruss.dynamic_gpu`` or ``module.NAME`` of
    another module of ``hornet.algos.ktruss``."""
    import importlib
    mod, _, name = key.rpartition(".")
    return importlib.import_module("hornet.algos.ktruss." + (mod or "dynamic_gpu")), name


def _busy(kt):
    """(units served by ko_scan's asynchronous phases in the last update, their mean running
    time in us: KS_BUSY, SM cycles at the device's clock rate), or None where the tree's
    ko_scan does not count them."""
    import cupy
    from hornet.algos.ktruss import dynamic_gpu
    if not isinstance(kt, dynamic_gpu.GpuDynamicTruss):
        return None
    w = int(kt._ks_host[21])
    units, cycles = w >> 44, w & ((1 << 44) - 1)
    khz = int(cupy.cuda.Device().attributes["ClockRate"])
    return units, (cycles / units / (khz / 1e3)) if units else 0.0


def _kernel_ms(kt):
    """ko_scan's own time of the last update (ms: the sum of its KS_TIME words), or None."""
    from hornet.algos.ktruss.dynamic_gpu import GpuDynamicTruss
    from hornet.algos.ktruss.ko_launch import KS_TIME
    if not isinstance(kt, GpuDynamicTruss):
        return None
    return float(kt._ks_host[KS_TIME:KS_TIME + 7].sum()) / 1e6


if __name__ == "__main__":
    main()
