"""The top truss levels that the GPU DynamicTruss keeps by a static decomposition of their own
subgraph (:mod:`hornet.algos.ktruss.top_levels_gpu`): the graph's levels (edges and vertices
at or above a level), the time of that decomposition (bit rows and the general static's
parts) against the whole graph's, and batches of random edges deleted and put back with the
gate at several sizes (``--min-edges``; 0: no top levels), every variant its own
``DynamicTruss`` fed the same changes of one graph, timed alone (synchronized) and checked
against the static decomposition: update ms, path, region, the region's edges by level (in
buckets, and its busiest levels against their size when the graph was built) and ko_scan's
own time by kind of phase.

    python3 -m bench.tools.truss_top_gpu [--graphs kron20] [--sizes 1000] [--repeats 3]
        [--min-edges 65536,600000,0] [--no-fallback] [--warmup 1]
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

import numpy as np

import hornet
from bench.dynamic_truss import load

#: level buckets of the region histogram (with the graph's caps and top levels added)
BUCKETS = [0, 32, 64, 100, 150, 200, 250]
#: ko_scan's kinds of phase (KS_PH_* in ko_scan_grid.cuh), for its clock's words
PHASES = ("cand", "push", "peel", "peelpush", "hindex", "dpush", "other")


def _timed(fn) -> float:
    import cupy
    cupy.cuda.Device().synchronize()
    t = time.perf_counter()
    fn()
    cupy.cuda.Device().synchronize()
    return time.perf_counter() - t


def _buckets(t, caps) -> list:
    kmax = int(t.max())
    tops = {kmax - 12, kmax - 3, kmax} | {c for c in caps if c}
    return sorted({b for b in BUCKETS if b < kmax} | {c for c in tops if c > 0}) + [1 << 30]


def _busiest(hit, sizes, n: int = 4) -> str:
    """The n levels holding most of the region ``hit`` (its edges' levels), each as
    level:region edges at it/edges at it in ``sizes`` (the graph's count by level)."""
    lv, cnt = np.unique(hit, return_counts=True)
    top = np.argsort(-cnt, kind="stable")[:n]
    return ", ".join(f"{int(lv[i])}:{int(cnt[i])}/{int(sizes[lv[i]]) if lv[i] < len(sizes) else 0}"
                     for i in top)


def _levels(gs, gd, t, caps=()) -> None:
    kmax = int(t.max())
    out = []
    for k in sorted({kmax, kmax - 3, kmax - 12, 280, 250, 200, 150, 100, 64, 32} |
                    {c for c in caps if c}, reverse=True):
        if k < 3 or k > kmax:
            continue
        at = t >= k
        if int(at.sum()) > 1 << 22:                # (too many to count vertices quickly)
            out.append(f">={k}: {int(at.sum())} edges")
            continue
        nv = np.unique(np.concatenate([gs[at], gd[at]])).shape[0]
        out.append(f">={k}: {int(at.sum())} edges / {nv} vertices")
    print("  levels: " + "; ".join(out), flush=True)


def _decompose_parts(kt) -> None:
    import cupy as cp
    from hornet.algos.ktruss import top_levels_gpu as T
    from hornet.algos.ktruss.gpu import _DevicePeel
    from hornet.algos.triangles.gpu import EdgeIndex
    table = kt._table
    slots = T.top_slots(table, kt._top)
    a, b, nv = T._local(table, slots)
    # (S is the cap-truss here: decomposing it gives every edge its number again)
    if nv > T.DENSE_MAX_VERTICES:
        print(f"  cap {kt._top}: {slots.shape[0]} edges, {nv} vertices (no bit rows)")
        return
    dense = [_timed(lambda: T.dense_decompose(a, b, nv)) for _ in range(3)]
    got = {}
    tv = _timed(lambda: got.update(vo=T.top_view(table, slots)))
    ti = _timed(lambda: got.update(ix=EdgeIndex.build(got["vo"][0])))
    ts = _timed(lambda: got.update(p=_DevicePeel(got["ix"])))
    tp = _timed(lambda: got["p"].decompose())
    t_d, r_d = T.dense_decompose(a, b, nv)
    want = table.columns["truss"][slots]
    print(f"  cap {kt._top}: {slots.shape[0]} edges, {nv} vertices; bit rows "
          f"{', '.join(f'{x * 1e3:.2f}' for x in dense)} ms ({int(r_d.max()) + 1} rounds, "
          f"same numbers: {bool(cp.array_equal(t_d, want))}); general static: view "
          f"{tv * 1e3:.2f}, edge index {ti * 1e3:.2f}, support {ts * 1e3:.2f}, peeling "
          f"{tp * 1e3:.2f} ms", flush=True)


def main(argv=None) -> None:
    import cupy as cp
    from hornet.algos import DynamicTruss, truss_numbers
    from hornet.algos.ktruss import dynamic_gpu as DG
    from hornet.algos.ktruss.ko_launch import KS_TIME
    from hornet.algos.ktruss import top_levels_gpu as T
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.truss_top_gpu")
    ap.add_argument("--graphs", default="kron20")
    ap.add_argument("--sizes", default="1000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--min-edges", default="65536,600000,0")
    ap.add_argument("--warmup", type=int, default=1, help="untimed batches first")
    ap.add_argument("--no-fallback", action="store_true",
                    help="no static fallback for a slow update or a large region")
    args = ap.parse_args(argv)
    print(f"device: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
    cls = DG.GpuDynamicTruss
    orig_begin, orig_dec = cls._begin, T.decompose_top
    spent = defaultdict(float)

    def begin(self, extra):
        self._probe_tstamp = orig_begin(self, extra)
        return self._probe_tstamp

    def decompose(*a, **k):
        cp.cuda.Device().synchronize()
        t0 = time.perf_counter()
        out = orig_dec(*a, **k)
        cp.cuda.Device().synchronize()
        spent["decompose"] += time.perf_counter() - t0
        return out
    cls._begin, T.decompose_top = begin, decompose
    rng = np.random.default_rng(5)
    for name in args.graphs.split(","):
        title, s, d = load(name)
        g = hornet.Graph.from_edges(cp.asarray(s), cp.asarray(d), device="gpu")
        static = statistics.median(_timed(lambda: truss_numbers(g)) for _ in range(3))
        gs, gd = (a.get() for a in g.edges())
        variants = {}
        for me in (int(x) for x in args.min_edges.split(",")):
            T.TOP_MIN_EDGES = me if me else 1 << 62
            variants[me] = DynamicTruss(g, **({"fallback_share": 1e9} if args.no_fallback
                                               else {}))
        T.TOP_MIN_EDGES = 1 << 16
        kt0 = next(iter(variants.values()))
        t = kt0.truss_numbers.get()
        print(f"{title}: E={t.shape[0]} k_max={int(t.max())} static {static * 1e3:.2f} ms; "
              "caps " + ", ".join(f"{me}: {kt._top}" for me, kt in variants.items()),
              flush=True)
        caps = [kt._top for kt in variants.values()]
        buckets = _buckets(t, caps)
        sizes = np.bincount(t)
        _levels(gs, gd, t, caps)
        for kt in variants.values():
            if kt._top and not args.no_fallback:
                _decompose_parts(kt)
        for b in (int(x) for x in args.sizes.split(",")):
            times = defaultdict(list)
            for r in range(args.repeats + args.warmup):
                gs, gd = (a.get() for a in g.edges())
                pick = rng.choice(gs.shape[0], b, replace=False)
                bs, bd = cp.asarray(gs[pick]), cp.asarray(gd[pick])
                for op in ("delete", "re-insert"):
                    ch = g.delete_edges(bs, bd) if op == "delete" else g.insert_edges(bs, bd)
                    want = truss_numbers(g).get()
                    for me, kt in variants.items():
                        spent.clear()
                        kt._words_host[:] = 0       # (ko_scan's clock: this update's)
                        # (a fallback's static decomposition sets the cap again: this
                        # variant's gate then too)
                        T.TOP_MIN_EDGES = me if me else 1 << 62
                        try:
                            dt = _timed(lambda: kt.update(ch))
                        finally:
                            T.TOP_MIN_EDGES = 1 << 16
                        if not np.array_equal(kt.truss_numbers.get(), want):
                            raise SystemExit(f"{title} b={b} {me} {op}: dynamic != static")
                        if r < args.warmup:
                            continue
                        times[(me, op)].append(dt)
                        st = kt.stats
                        tr = kt._table.columns["truss"]
                        hit = tr[kt._touched == kt._probe_tstamp].get() \
                            if st.get("path") == "dynamic" else np.zeros(0, np.int32)
                        h, _ = np.histogram(hit, buckets)
                        where = ", ".join(f"{buckets[i]}+:{c}" for i, c in enumerate(h) if c)
                        busy = _busiest(hit, sizes)
                        clock = kt._ks_host[KS_TIME:KS_TIME + len(PHASES)] / 1e6
                        phases = " ".join(f"{n} {x:.1f}" for n, x in zip(PHASES, clock) if x)
                        print(f"    b={b} {op:9} gate {me}: {dt * 1e3:8.2f} ms {st.get('path')}"
                              f" region {st.get('region')} rounds {st.get('rounds')}/"
                              f"{st.get('peel_rounds')} levels {st.get('levels')} top "
                              f"{st.get('top')} decompose {spent['decompose'] * 1e3:.2f} ms;"
                              f" region by level: {where}; busiest levels (level: region"
                              f"/edges at it first): {busy}; ko_scan ms: {phases}", flush=True)
            for (me, op), xs in sorted(times.items(), key=lambda kv: (kv[0][1], kv[0][0])):
                m = statistics.median(xs)
                print(f"  b={b} {op:9} gate {me}: median {m * 1e3:.2f} ms "
                      f"({', '.join(f'{x * 1e3:.1f}' for x in xs)}) x{static / m:.1f}",
                      flush=True)
        again = statistics.median(_timed(lambda: truss_numbers(g)) for _ in range(3))
        print(f"  static again {again * 1e3:.2f} ms")
    cls._begin, T.decompose_top = orig_begin, orig_dec


if __name__ == "__main__":
    main()
