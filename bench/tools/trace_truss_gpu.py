"""Host round trips and device time of single GPU DynamicTruss updates, two trees in one
process.

    python3 -m bench.tools.trace_truss_gpu --base ../base [--graphs email-Enron,soc-Epinions1]
        [--sizes 10,100] [--repeats 5] [--cases soc-Epinions1:delete:1000,...]

For every graph, batch size and tree (base, new: each its own graph and ``DynamicTruss``),
``repeats`` batches of b random existing edges are deleted and re-inserted, and every update
prints one line (compile against steady state shows as a slow first repeat):

- ``wall``: the update alone, synchronized before and after;
- ``dev``: the device span of the update (CUDA events at its start and end: the GPU's busy
  time plus the gaps where it waited for the host), ``scan``: the device time of the
  cooperative ``ko_scan`` launches (events around ``_scan``, its read included);
- ``host>scan``: host seconds from the update's start to its first ``_scan`` call;
- ``path``, ``rounds``, the region, the seeds (a batch of GATE_MIN_BATCH or more), the
  static time the update's deadline was set from (the last one the object measured), the
  last ``ko_scan`` launch's own clock by kind of phase and its status, and ``compile``: kernel modules loaded (hornet's, from
  NVRTC or cubins) and CuPy NVRTC compiles during the update, with their seconds.

Then one cProfile'd update of each kind per tree: the calls that reach CuPy or the driver
from Python, by count (``get`` / ``synchronize`` / ``__int__`` are host round trips; a
launch or memset is a queued command), to count the host's part of an update.

``--cases graph:kind:b``: extra delete (or re-insert) series on the given graph, every
repeat printed with its path and its compile count (the first one shows a one-time
compile), for the slow large batches.
"""
from __future__ import annotations

import argparse
import cProfile
import importlib
import pstats
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


class Compiles:
    """Counts CuPy's NVRTC compiles (and their seconds) while installed."""

    def __init__(self):
        from cupy.cuda import compiler
        self.n, self.seconds = 0, 0.0
        self._mod = compiler
        self._orig = getattr(compiler, "compile_using_nvrtc", None)
        if self._orig is None:                      # (another CuPy: not counted)
            return

        def counted(*a, **k):
            t = time.perf_counter()
            try:
                return self._orig(*a, **k)
            finally:
                self.n += 1
                self.seconds += time.perf_counter() - t
        compiler.compile_using_nvrtc = counted

    def restore(self):
        if self._orig is not None:
            self._mod.compile_using_nvrtc = self._orig


class ScanClock:
    """Events around a tree's ``_scan`` (its device time) and the host time of its first
    call in an update."""

    def __init__(self, cls):
        import cupy as cp
        self.cls, self.orig = cls, cls.__dict__["_scan"]
        self.spans, self.first = [], None
        clock = self

        def timed(obj, *a, **k):
            if clock.first is None:
                clock.first = time.perf_counter()
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            e0.record()
            try:
                return clock.orig(obj, *a, **k)
            finally:
                e1.record()
                clock.spans.append((e0, e1))
        cls._scan = timed

    def reset(self):
        self.spans, self.first = [], None

    def device_ms(self) -> float:
        import cupy as cp
        return sum(cp.cuda.get_elapsed_time(a, b) for a, b in self.spans)

    def restore(self):
        self.cls._scan = self.orig


def _modules(pkg) -> int:
    return len(importlib.import_module(pkg.__name__ + ".core.cuda").loaded_modules)


def timed_update(pkg, kt, ch, clock: ScanClock, comp: Compiles) -> dict:
    import cupy as cp
    clock.reset()
    m0, c0, s0 = _modules(pkg), comp.n, comp.seconds
    basis = getattr(kt, "_static_seconds", float("nan")) * 1e3
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    _sync()
    t = time.perf_counter()
    e0.record()
    kt.update(ch)
    e1.record()
    _sync()
    wall = time.perf_counter() - t
    st = kt.stats
    ks = getattr(kt, "_ks_host", None)
    phases = ""
    if ks is not None and clock.spans:
        # ko_scan's own clock by kind of phase (KS_TIME words) and its status, last launch
        from_ = importlib.import_module(pkg.__name__ + ".algos.ktruss.dynamic_gpu")
        ms = ks[from_.KS_TIME:from_.KS_TIME + len(PHASES)].astype(np.float64) / 1e6
        phases = " ".join(f"{n} {x:.2f}" for n, x in zip(PHASES, ms) if x) + \
            f" status {int(ks[from_.KS_STATUS])}"
    return dict(wall=wall * 1e3, dev=cp.cuda.get_elapsed_time(e0, e1), scan=clock.device_ms(),
                host_before=(clock.first - t) * 1e3 if clock.first else float("nan"),
                path=st.get("path"), rounds=st.get("rounds"), region=st.get("region"),
                seeds=st.get("seeds"), basis=basis, modules=_modules(pkg) - m0,
                nvrtc=comp.n - c0, nvrtc_s=comp.seconds - s0, phases=phases)


def _line(tree, op, r, x) -> str:
    return (f"    {tree:4} {op:9} #{r} wall {x['wall']:8.3f} dev {x['dev']:8.3f} scan "
            f"{x['scan']:8.3f} host>scan {x['host_before']:6.3f} ms  {x['path']:7} rounds "
            f"{x['rounds']} region {x['region']} seeds {x['seeds']} deadline basis "
            f"{x['basis']:.2f} ms  compile {x['modules']} mod / {x['nvrtc']} nvrtc "
            f"{x['nvrtc_s']:.2f} s" + (f"  [ko_scan {x['phases']}]" if x["phases"] else ""))


#: ko_scan's kinds of phase (KS_PH_* in ko_scan_grid.cuh), for its clock's words
PHASES = ("cand", "push", "peel", "peelpush", "hindex", "dpush", "other")

#: calls from Python into CuPy / the driver that a trace counts, by what they cost the host
ROUND_TRIP = ("get", "synchronize", "__int__", "__bool__", "__float__", "item", "tolist",
              "asnumpy", "__index__")


def profile_update(kt, ch) -> list:
    """(name, calls, own us) of the update's calls into compiled code, most calls first."""
    prof = cProfile.Profile()
    _sync()
    prof.enable()
    kt.update(ch)
    _sync()
    prof.disable()
    rows = []
    for (fn, line, name), (_, nc, tt, ct, _c) in pstats.Stats(prof).stats.items():
        if fn == "~" and "disable" not in name:
            rows.append((name, nc, tt * 1e6))
        elif "cupy" in fn:
            rows.append((f"{fn.rsplit('/', 2)[-1]}:{line}({name})", nc, tt * 1e6))
    rows.sort(key=lambda r: (-r[1], -r[2]))
    return rows


def _trips(rows) -> int:
    """Calls that wait for the device: a CuPy array's read-back or conversion, a
    synchronize (the profile's own closing synchronize excluded)."""
    n = 0
    for name, nc, _ in rows:
        short = name.split("'")[1] if "'" in name else name
        if short in ROUND_TRIP and "cupy" in name:
            n += nc - (short == "synchronize" and "Device" in name)
    return n


def main(argv=None) -> None:
    import cupy as cp
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.trace_truss_gpu")
    ap.add_argument("--base", type=Path, required=True)
    ap.add_argument("--graphs", default="email-Enron,soc-Epinions1")
    ap.add_argument("--sizes", default="10,100")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--cases", default="")
    ap.add_argument("--trace-rows", type=int, default=28)
    ap.add_argument("--only", default="", help="trees to run (base,new)")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="a constant of the new tree's ktruss.dynamic_gpu (or module.NAME of "
                    "another ktruss module), for the whole run (repeatable)")
    args = ap.parse_args(argv)
    for item in args.set:
        key, value = item.split("=")
        mod, _, name = key.rpartition(".")
        owner = importlib.import_module("hornet.algos.ktruss." + (mod or "dynamic_gpu"))
        setattr(owner, name, type(getattr(owner, name))(float(value)))
        print(f"new: {owner.__name__}.{name} = {getattr(owner, name)}")
    base = load_base(args.base)
    trees = {"base": base, "new": hornet}
    if args.only:
        trees = {k: v for k, v in trees.items() if k in args.only.split(",")}
    print(f"device: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
    comp = Compiles()
    clocks = {k: ScanClock(importlib.import_module(
        pkg.__name__ + ".algos.ktruss.dynamic_gpu").GpuDynamicTruss) for k, pkg in trees.items()}
    cases: dict = {}
    for item in filter(None, args.cases.split(",")):
        gname, kind, b = item.split(":")
        cases.setdefault(gname, []).append((kind, int(b)))
    plain = [x for x in args.graphs.split(",") if x]
    sizes = [int(x) for x in args.sizes.split(",") if x]
    graphs = list(dict.fromkeys(plain + list(cases)))
    rng = np.random.default_rng(5)
    try:
        for gname in graphs:
            title, s, d = load(gname)
            su, du = cp.asarray(s), cp.asarray(d)
            gs_ = {k: pkg.Graph.from_edges(su, du, device="gpu") for k, pkg in trees.items()}
            kts = {}
            for k, pkg in trees.items():
                _sync()
                t = time.perf_counter()
                kts[k] = pkg.algos.DynamicTruss(gs_[k])
                _sync()
                print(f"{title} {k}: build {(time.perf_counter() - t) * 1e3:.1f} ms", flush=True)
            any_g = next(iter(gs_.values()))
            es, ed = (a.get() for a in any_g.edges())
            xs = []
            for _ in range(5):
                _sync()
                t = time.perf_counter()
                hornet.algos.truss_numbers(any_g)
                _sync()
                xs.append(time.perf_counter() - t)
            print(f"{title}: E={any_g.num_edges} static {statistics.median(xs) * 1e3:.2f} ms "
                  f"(5: {' '.join(f'{x * 1e3:.2f}' for x in xs)})", flush=True)
            series = [("both", b) for b in sizes if gname in plain]
            series += cases.get(gname, [])
            for kind, b in series:
                print(f"  b={b} {kind}", flush=True)
                trips = {}
                for r in range(args.repeats + 1):
                    pick = rng.choice(es.shape[0], b, replace=False)
                    bs, bd = cp.asarray(es[pick]), cp.asarray(ed[pick])
                    for k in (list(trees) if r % 2 else list(trees)[::-1]):
                        pkg, g, kt = trees[k], gs_[k], kts[k]
                        last = r == args.repeats
                        for op in ("delete", "re-insert"):
                            ch = g.delete_edges(bs, bd) if op == "delete" else \
                                g.insert_edges(bs, bd)
                            if last and kind == "both":
                                trips[(k, op)] = profile_update(kt, ch)
                            else:
                                x = timed_update(pkg, kt, ch, clocks[k], comp)
                                if kind == "both" or op == kind:
                                    print(_line(k, op, r, x), flush=True)
                        if r == 0 or last:
                            want = pkg.algos.truss_numbers(g).get()
                            if not np.array_equal(kt.truss_numbers.get(), want):
                                raise SystemExit(f"{title} b={b} {k}: dynamic != static")
                for (k, op), rows in trips.items():
                    print(f"    trace {k} {op}: round trips {_trips(rows)}; calls into "
                          "compiled code (calls, own us):")
                    for name, nc, us in rows[:args.trace_rows]:
                        print(f"      {nc:4d} {us:8.1f}  {name}")
            print(f"  {title}: dynamic == static checked", flush=True)
    finally:
        comp.restore()
        for c in clocks.values():
            c.restore()


if __name__ == "__main__":
    main()
