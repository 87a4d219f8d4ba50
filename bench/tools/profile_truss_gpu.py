"""Where a small batch's time goes in the GPU DynamicTruss update.

    python3 -m bench.tools.profile_truss_gpu [--graphs email-Enron,soc-Epinions1,kron20]
        [--sizes 10,100] [--repeats 5] [--cprofile] [--timeline]

For every graph and batch size: b random existing edges deleted, then re-inserted (as
``bench/dynamic_truss.py`` does), and per kind:

- the median wall time of ``update`` (synchronized before and after);
- a stage profile: the update's steps (methods of the truss object, the triangle count's
  update and its count read, the edge-table calls, the batch adjacency) wrapped with a
  device synchronization before and after (inclusive times: a step's time holds the steps
  it calls), and the same steps with host clocks only (what the Python side costs);
- the update's statistics (rounds, region) and the device time of the cooperative
  launches (CUDA events around ``_scan``), and that time by kind of phase (ko_scan's own
  clock, between its grid barriers);
- with ``--cprofile``, the top host functions of the update by own time.

With ``--timeline``, only where each update's wall time goes (:func:`timeline`: host clocks
and CUDA events around the ``ko_scan`` launch and the host work queued behind it).

Fixed costs measured alone: one counter read, the triangle count read, a batch adjacency of
b edges, an empty cooperative launch.
"""
from __future__ import annotations

import argparse
import cProfile
import functools
import pstats
import statistics
import time
from collections import defaultdict

import numpy as np

import hornet

NEEDS_GPU = True


def _sync():
    import cupy
    cupy.cuda.Device().synchronize()


class Stages:
    """Wraps callables of objects/classes; accumulates seconds per label while enabled."""

    def __init__(self):
        self.totals = defaultdict(float)
        self.calls = defaultdict(int)
        self.enabled = False
        self.synced = False
        self._undo = []

    def wrap(self, owner, name, label=None):
        fn = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        label = label or name
        st = self
        if isinstance(fn, property):
            getter = fn.fget

            def g(obj):
                return st._timed(label, getter, (obj,), {})
            setattr(owner, name, property(g))
        else:
            @functools.wraps(fn)
            def timed(*a, **k):
                return st._timed(label, fn, a, k)
            setattr(owner, name, timed)
        self._undo.append((owner, name, fn))

    def _timed(self, label, fn, a, k):
        if not self.enabled:
            return fn(*a, **k)
        if self.synced:
            _sync()
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            if self.synced:
                _sync()
            self.totals[label] += time.perf_counter() - t
            self.calls[label] += 1

    def restore(self):
        for owner, name, fn in reversed(self._undo):
            setattr(owner, name, fn)
        self._undo = []


def wrap_all(st: Stages) -> None:
    from hornet.algos import edge_table as ET
    from hornet.algos.ktruss import dynamic_gpu as DG
    from hornet.algos.triangles import dynamic as TD
    cls = DG.GpuDynamicTruss
    for name in ("_delete", "_insert_raise", "_insert_raise_scan", "_insert_from_bounds", "_batch",
                 "_insert", "_begin", "_scan", "_descend",
                 "_peel", "_new_edges_first", "_budget", "_read", "_view", "_fallback",
                 "_finish_delete", "_finish_insert", "_seed_delete", "_top_insert",
                 "_top_delete"):
        if name in cls.__dict__:
            st.wrap(cls, name, f"truss.{name}")
    st.wrap(TD.DynamicTriangleCount, "update", "tc.update")
    if "apply_gpu_batch" in TD.DynamicTriangleCount.__dict__:
        st.wrap(TD.DynamicTriangleCount, "apply_gpu_batch", "tc.apply_gpu_batch")
    st.wrap(TD.DynamicTriangleCount, "_update_gpu", "tc._update_gpu")
    st.wrap(TD.DynamicTriangleCount, "count", "tc.count (read)")
    for name in ("insert_new", "delete_present"):
        st.wrap(ET.EdgeTable, name, f"table.{name}")
    st.wrap(DG, "batch_adjacency", "batch_adjacency (truss)")
    from hornet.algos.ktruss import top_levels_gpu as TL
    for name in ("top_count", "top_slots", "decompose_top"):
        st.wrap(TL, name, f"top.{name}")
    st.wrap(TD, "batch_adjacency", "batch_adjacency (tc)")


def load(name):
    """(title, src, dst) of a graph of the data folder or "kronNN" (as bench/dynamic_truss.py)."""
    from bench.dynamic_truss import load as bench_load
    return bench_load(name)


def batches(g, b, rng, count):
    gs, gd = (a.get() for a in g.edges())
    out = []
    for _ in range(count):
        pick = rng.choice(gs.shape[0], b, replace=False)
        out.append((gs[pick], gd[pick]))
    return out


def cycle(g, kt, ds, dd, st=None):
    """Delete then re-insert (ds, dd); returns (delete s, insert s, stats of each). With a
    Stages ``st``: its totals per kind (``st.by_kind``)."""
    import cupy as cp
    ds, dd = cp.asarray(ds), cp.asarray(dd)
    ch = g.delete_edges(ds, dd)
    if st is not None:
        st.totals, st.calls = st.by_kind["delete"]
    _sync()
    t = time.perf_counter()
    kt.update(ch)
    _sync()
    t1 = time.perf_counter()
    sd = dict(kt.stats)
    ch = g.insert_edges(ds, dd)
    if st is not None:
        st.totals, st.calls = st.by_kind["re-insert"]
    _sync()
    t2 = time.perf_counter()
    kt.update(ch)
    _sync()
    t3 = time.perf_counter()
    return t1 - t, t3 - t2, sd, dict(kt.stats)


def fixed_costs(g, kt, b):
    import cupy as cp
    from hornet.algos.batch_adjacency import batch_adjacency

    def med(fn, n=50):
        xs = []
        for _ in range(n):
            _sync()
            t = time.perf_counter()
            fn()
            _sync()
            xs.append(time.perf_counter() - t)
        return statistics.median(xs) * 1e6
    s = cp.arange(b, dtype=cp.int32)
    d = s + 1
    print(f"    fixed: counter read {med(kt._read):.0f} us; tc.count {med(lambda: kt._tc.count):.0f} us;"
          f" batch_adjacency({b}) {med(lambda: batch_adjacency(s, d)):.0f} us;"
          f" cp.sort(2b int64) {med(lambda: cp.sort(cp.arange(2 * b, dtype=cp.int64))):.0f} us;"
          f" view {med(kt._view):.0f} us", flush=True)
    try:
        def empty_scan():
            kt._begin(0)
            kt._scan(2, 0, 0, kt._fallen, kt._tick(), kt._tick(), time.perf_counter() + 1.0,
                     1 << 40)
        print(f"    fixed: empty ko_scan (mode 2, nothing to do) {med(empty_scan):.0f} us",
              flush=True)
    except Exception as exc:   # noqa: BLE001 - a profile, not a test
        print(f"    empty ko_scan failed: {exc!r}")


#: ko_scan's phase kinds (KS_PH_* in ko_scan_grid.cuh), in the order of its time words
PHASES = ("cand", "push", "peel", "peel-push", "hindex", "d-push", "other")


def scan_events(kt_cls):
    """Wrap _scan with CUDA events; returns the list of device milliseconds and the list of
    the launch's milliseconds by phase kind (ko_scan's KS_TIME words)."""
    import cupy as cp
    from hornet.algos.ktruss.ko_launch import KS_TIME
    times, phases = [], []
    orig = kt_cls.__dict__["_scan"]

    def timed(self, *a, **k):
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        e0.record()
        r = orig(self, *a, **k)
        e1.record()
        e1.synchronize()
        times.append(cp.cuda.get_elapsed_time(e0, e1))
        phases.append(self._ks_host[KS_TIME:KS_TIME + len(PHASES)] / 1e6)
        return r
    kt_cls._scan = timed
    return times, phases, lambda: setattr(kt_cls, "_scan", orig)


#: the timeline's marks, in the order an update passes them
MARKS = ("start", "launch", "launched", "queued", "end")


def timeline(g, kt, work) -> None:
    """Where one update's wall time goes: host clocks and CUDA events at its start, right
    before and after the cooperative ``ko_scan`` launch, after the host work queued behind it
    (the supports, the table change: ``_scan``'s ``overlap``) and at its end, for every
    batch of ``work`` deleted and re-inserted; prints the medians per kind (ms). Host
    segments: before the launch, the launch call, the queued work, the wait for the read and
    what follows it. Device segments (the event gaps): up to the launch (small kernels and
    idle time waiting for the host), the launch to ko_scan's end (its launch latency
    included), the queued kernels, and the read with the host's end. The host's part before
    the launch is split by host clocks alone at the entry of the update's path
    (``_delete`` or ``_insert_from_bounds``) and of ``_scan``."""
    import cupy as cp
    from hornet.algos.ktruss import dynamic_gpu as DG, ko_launch
    cls = DG.GpuDynamicTruss
    marks = {}

    def mark(name):
        e = cp.cuda.Event()
        e.record()
        marks[name] = (time.perf_counter(), e)

    class Proxy:                       # (the prepared ko_scan launch, marked around)
        def __init__(self, inner):
            self.inner = inner

        def __call__(self, *a, **k):
            mark("launch")
            self.inner(*a, **k)
            mark("launched")

    scan, update = cls.__dict__["_scan"], cls.__dict__["update"]
    starts = {name: cls.__dict__[name] for name in ("_delete", "_insert_from_bounds")}
    host = {}                          # (host clocks alone: where the update's path begins)

    def started(name, fn):
        def run(self, *a, **k):
            host["path"] = time.perf_counter()
            return fn(self, *a, **k)
        return run

    def scan_marked(self, *a, **k):
        host["scan"] = time.perf_counter()
        a = list(a)
        inner = k.pop("overlap", None) if "overlap" in k else (a[8] if len(a) > 8 else None)

        def overlap():
            if inner is not None:
                inner()
            mark("queued")
        if len(a) > 8:
            a[8] = overlap
        else:
            k["overlap"] = overlap
        return scan(self, *a, **k)

    def update_marked(self, change):
        mark("start")
        update(self, change)
        mark("end")

    saved = ko_launch._PREPARED["ko_scan"]
    ko_launch._PREPARED["ko_scan"] = Proxy(saved)
    cls._scan, cls.update = scan_marked, update_marked
    for name, fn in starts.items():
        setattr(cls, name, started(name, fn))
    rows = {"delete": [], "re-insert": []}
    try:
        for ds, dd in work:
            for kind in ("delete", "re-insert"):
                ch = (g.delete_edges if kind == "delete" else g.insert_edges)(
                    cp.asarray(ds), cp.asarray(dd))
                _sync()
                marks.clear()
                host.clear()
                kt.update(ch)
                marks["end"][1].synchronize()
                if any(m not in marks for m in MARKS) or len(host) < 2:
                    continue                        # (no ko_scan launch: another path)
                t = [marks[m][0] for m in MARKS]
                e = [marks[m][1] for m in MARKS]
                segs = [(t[i + 1] - t[i]) * 1e3 for i in range(len(MARKS) - 1)]
                dev = [cp.cuda.get_elapsed_time(e[i], e[i + 1]) for i in range(len(MARKS) - 1)]
                split = [(host["path"] - t[0]) * 1e3, (host["scan"] - host["path"]) * 1e3,
                         (t[1] - host["scan"]) * 1e3]
                rows[kind].append(segs + dev + [(t[-1] - t[0]) * 1e3] + split)
    finally:
        cls._scan, cls.update = scan, update
        for name, fn in starts.items():
            setattr(cls, name, fn)
        ko_launch._PREPARED["ko_scan"] = saved
    for kind, rs in rows.items():
        if not rs:
            continue
        med = np.median(np.array(rs), axis=0)
        print(f"    timeline {kind} (ms, median of {len(rs)}; wall {med[8]:.3f}): host "
              f"before launch {med[0]:.3f}, launch call {med[1]:.3f}, queued work "
              f"{med[2]:.3f}, read wait and end {med[3]:.3f} | device to launch {med[4]:.3f}, "
              f"ko_scan {med[5]:.3f}, queued kernels {med[6]:.3f}, read and end {med[7]:.3f} | "
              f"host before launch: update {med[9]:.3f}, path to _scan {med[10]:.3f}, "
              f"_scan to launch {med[11]:.3f}", flush=True)


def main(argv=None):
    import cupy as cp
    from hornet.algos import DynamicTruss, truss_numbers
    from hornet.algos.ktruss import dynamic_gpu as DG
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphs", default="email-Enron,soc-Epinions1")
    ap.add_argument("--sizes", default="10,100")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--cprofile", action="store_true")
    ap.add_argument("--timeline", action="store_true",
                    help="only the timeline of each update (host clocks and CUDA events)")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    props = cp.cuda.runtime.getDeviceProperties(0)
    print(f"device: {props['name'].decode()}")
    for gname in args.graphs.split(","):
        title, s, d = load(gname)
        g = hornet.Graph.from_edges(cp.asarray(s), cp.asarray(d), device="gpu")
        kt = DynamicTruss(g)
        xs = []
        for _ in range(3):
            _sync()
            t = time.perf_counter()
            truss_numbers(g)
            _sync()
            xs.append(time.perf_counter() - t)
        static = statistics.median(xs)
        print(f"{title}: E={g.num_edges} static {static * 1e3:.2f} ms", flush=True)
        for b in [int(x) for x in args.sizes.split(",")]:
            work = batches(g, b, rng, 2 + 4 * args.repeats)
            for ds, dd in work[:2]:                          # warm-up (compiles)
                cycle(g, kt, ds, dd)
            it = iter(work[2:])
            print(f"  b={b}", flush=True)
            if args.timeline:
                timeline(g, kt, work[2:])
                continue
            dels, ins, sdel, sins = [], [], [], []
            for _ in range(args.repeats):
                a, c, x, y = cycle(g, kt, *next(it))
                dels.append(a)
                ins.append(c)
                sdel.append(x)
                sins.append(y)
            print(f"    plain: delete {statistics.median(dels) * 1e3:.3f} ms  re-insert "
                  f"{statistics.median(ins) * 1e3:.3f} ms  (static x{static / statistics.median(dels):.1f}"
                  f" / x{static / statistics.median(ins):.1f})", flush=True)
            for kind, sts in (("delete", sdel), ("re-insert", sins)):
                print(f"    stats {kind}: " + "; ".join(
                    ", ".join(f"{k}={v}" for k, v in x.items()) for x in sts))
            for synced in (False, True):
                st = Stages()
                wrap_all(st)
                st.synced = synced
                st.enabled = True
                st.by_kind = {k: (defaultdict(float), defaultdict(int))
                              for k in ("delete", "re-insert")}
                tot = {"delete": [], "re-insert": []}
                for _ in range(args.repeats):
                    ds, dd = next(it)
                    a, c, _, _ = cycle(g, kt, ds, dd, st)
                    tot["delete"].append(a)
                    tot["re-insert"].append(c)
                st.restore()
                label = "synced" if synced else "host"
                for kind in ("delete", "re-insert"):
                    totals, calls = st.by_kind[kind]
                    print(f"    [{label}] {kind} {statistics.median(tot[kind]) * 1e3:.3f} ms;"
                          f" stages per update (us, calls):", flush=True)
                    for k, v in sorted(totals.items(), key=lambda kv: -kv[1]):
                        print(f"      {k:28} {v / args.repeats * 1e6:9.0f} "
                              f"{calls[k] / args.repeats:5.1f}")
            times, phases, undo = scan_events(DG.GpuDynamicTruss)
            for _ in range(args.repeats):
                cycle(g, kt, *next(it))
            undo()
            if times:
                print(f"    ko_scan device ms (events, incl. its set/get): "
                      f"{', '.join(f'{x:.3f}' for x in times)}")
                for ph in phases:
                    print("    ko_scan phases ms: " + ", ".join(
                        f"{name} {x:.3f}" for name, x in zip(PHASES, ph) if x > 0))
            if args.cprofile:
                for kind_i, kind in enumerate(("delete", "re-insert")):
                    prof = cProfile.Profile()
                    for _ in range(3):
                        ds, dd = batches(g, b, rng, 1)[0]
                        ds, dd = cp.asarray(ds), cp.asarray(dd)
                        ch = g.delete_edges(ds, dd)
                        if kind_i == 0:
                            prof.enable()
                        kt.update(ch)
                        _sync()
                        prof.disable()
                        ch = g.insert_edges(ds, dd)
                        if kind_i == 1:
                            prof.enable()
                        kt.update(ch)
                        _sync()
                        prof.disable()
                    stats = pstats.Stats(prof)
                    rows = []
                    for (fn, line, name), (_, nc, tt, ct, _c) in stats.stats.items():
                        where = "/".join(fn.rsplit("/", 2)[-2:]) if fn.startswith("/") else fn
                        rows.append((tt, ct, nc, f"{where}:{line}({name})"))
                    rows.sort(reverse=True)
                    print(f"    cProfile {kind} (per update: own us, cum us, calls):")
                    for tt, ct, nc, lab in rows[:22]:
                        print(f"      {tt / 3 * 1e6:8.1f} {ct / 3 * 1e6:8.1f} {nc / 3:6.1f}  {lab}")
            fixed_costs(g, kt, b)
        want = truss_numbers(g).get()
        assert np.array_equal(kt.truss_numbers.get(), want), f"{title}: dynamic != static"
        print(f"  {title}: dynamic == static after the profile", flush=True)


if __name__ == "__main__":
    main()
