"""Same-process A/B of the small path's delete settings (CUDA events, one graph).

A small GPU delete (:mod:`hornet.batch.gpu.small`) removes a list's edges in place from the
first removed one on. Where that moves more than a block's step of items, the list is either
removed in place in pieces run side by side (``SmallBatches.in_place_pieces``) or copied to
a fresh block of its own class in pieces; the medium path (medium-sized deletes with
``--medium-deletes``, ``Graph.medium_deletes``) removes such lists in the same pieces
(``MediumBatches.in_place_pieces``) or one block each. A small delete's two kernels are
queued back to back with the block cache's part decided on the device
(``SmallBatches.queued_deletes``), or the host decides it between them. Settings
(:data:`SETTINGS`): ``new`` both on, ``pieces`` / ``queued`` one of them, ``plain`` neither;
other deletes take the planned path in all. This tool builds one undirected graph per spec
(``kronN``: the updates benchmark's Graph500 Kronecker graph of scale N; any other name:
that real graph of the data folder, self-loops dropped) and times delete batches of
existing edges (sampled with replacement) in each setting, the order rotating, every call
undone untimed; all settings must return the same changes. It prints per setting the
median and the largest call over the median (the issue's "no call over twice the median"),
and for ``--inserts`` the same figures for random inserts.

    python3 -m bench.tools.delete_pieces_gpu [--graphs kron20 kron22 email-Enron]
        [--sizes 1000 10000] [--repeats 41] [--settings new pieces queued plain]
        [--medium-deletes] [--inserts] [--phases] [--profile N]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import hornet
from bench.common import kronecker, real_graph_path


def _graph(spec: str):
    import cupy
    if spec.startswith("kron"):
        scale = int(spec[4:])
        src, dst = kronecker(scale, seed=scale, xp=cupy)
        return hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False,
                                       device="gpu")
    s, d, _ = hornet.io.read_edges(real_graph_path(spec))
    keep = s != d
    n = int(max(s.max(), d.max())) + 1
    return hornet.Graph.from_edges(cupy.asarray(s[keep]), cupy.asarray(d[keep]),
                                   num_vertices=n, directed=False, device="gpu")


#: the settings compared: (long removals in place in pieces, queued small deletes)
SETTINGS = {"new": (True, True), "pieces": (True, False), "queued": (False, True),
            "plain": (False, False)}


def _set(name: str) -> None:
    """Setting ``name`` (:data:`SETTINGS`): the small and medium paths' long removals in
    place in pieces or not (the small path then copies such lists to fresh blocks, the
    medium path removes each with one block), small deletes queued or not."""
    from hornet.batch.gpu.medium import MediumBatches
    from hornet.batch.gpu.small import SmallBatches
    pieces, queued = SETTINGS[name]
    SmallBatches.in_place_pieces = MediumBatches.in_place_pieces = pieces
    SmallBatches.queued_deletes = queued


def _run(cupy, settings, calls, undo, check=True):
    """{setting: [seconds]}: per round, each setting once, the order rotating (round 0
    untimed)."""
    out = {k: [] for k in settings}
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    for r, call in enumerate(calls):
        got = {}
        for i in range(len(settings)):
            key = settings[(i + r) % len(settings)]
            _set(key)
            cupy.cuda.Device().synchronize()
            start.record()
            change = call()
            end.record()
            end.synchronize()
            if r:
                out[key].append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
            if check:
                got[key] = (change.src.get(), change.dst.get())
            undo(change)
        first = next(iter(got.values()), None)
        for a0, a1 in got.values():
            if not (np.array_equal(a0, first[0]) and np.array_equal(a1, first[1])):
                raise SystemExit(f"round {r}: the settings returned different changes")
    _set("new")
    return out


def _line(label, times):
    med = {k: statistics.median(v) * 1e6 for k, v in times.items()}
    worst = {k: max(v) * 1e6 for k, v in times.items()}
    keys = list(times)
    parts = [f"{k} {med[k]:.0f} us (max {worst[k] / med[k]:.2f}x)" for k in keys]
    ratios = [f"{k}/{keys[-1]} {med[k] / med[keys[-1]]:.2f}" for k in keys[:-1]]
    return f"{label}: " + ", ".join(parts) + ("; " + ", ".join(ratios) if ratios else "")


def _phases(cupy, g, es, ed, rs, b, reps=15):
    """The small path's prepare kernel alone (compiled with its phase clocks, delete mode,
    mirrored, the graph untouched) on deletes of ``b`` sampled edges: per phase the median
    microseconds (thread 0's clock64 over the SM clock), and the kernel's CUDA-event time."""
    from hornet.batch.gpu.small import _CU, _NAMES, PREPARE_ARGS, WORKSPACE_WORDS
    from hornet.batch.small_layout import MODE_DELETE, SMALL_ENTRIES
    from hornet.core.cuda import PreparedLaunch, module_source
    code, options = module_source(_CU)
    mod = cupy.RawModule(code=code, options=options + ("-DSMALL_BATCH_CLOCKS",),
                         name_expressions=list(_NAMES))
    launch = PreparedLaunch(mod.get_function("small_prepare<long long, false>"), PREPARE_ARGS)
    mhz = cupy.cuda.Device().attributes["ClockRate"] / 1e3
    ws = cupy.zeros(WORKSPACE_WORDS, dtype=cupy.int64)
    rows = cupy.empty(2 * SMALL_ENTRIES, dtype=cupy.int32)
    phases, times = [], []
    for _ in range(reps + 1):
        p = rs.randint(0, es.size, b, dtype=cupy.int64)
        s, d = es[p].astype(cupy.int64), ed[p].astype(cupy.int64)
        args = [s.data.ptr, d.data.ptr, b, 1, MODE_DELETE, g._degree.data.ptr,
                g._size_class.data.ptr, g._edge_ptr.data.ptr, g._degree.shape[0],
                g._mm.min_size_class, 20, ws.data.ptr, rows.data.ptr]
        args += [0] * (PREPARE_ARGS - len(args) - 1) + [1]
        e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
        cupy.cuda.Device().synchronize()
        e0.record()
        launch(1, 1024, args)
        e1.record()
        e1.synchronize()
        c = ws[192:199].get()
        phases.append(np.diff(c) / mhz)
        times.append(cupy.cuda.get_elapsed_time(e0, e1) * 1e3)
    ph = np.median(np.array(phases[1:]), axis=0)
    names = ["load keys", "sort", "lookup + scan", "compact", "segments + rows", "pieces"]
    print(f"prepare phases, deletes of {b} (us): kernel {statistics.median(times[1:]):.1f}; "
          + ", ".join(f"{n} {x:.1f}" for n, x in zip(names, ph)), flush=True)


def _profile(cupy, g, es, ed, rs, b, count):
    """Host time by function (cProfile, cumulative and own) of ``count`` deletes of ``b``
    sampled edges, each undone unprofiled."""
    import cProfile
    import io
    import pstats
    _set("new")
    prof = cProfile.Profile()
    for _ in range(count):
        p = rs.randint(0, es.size, b, dtype=cupy.int64)
        s, d = es[p], ed[p]
        cupy.cuda.Device().synchronize()
        prof.enable()
        c = g.delete_edges(s, d)
        cupy.cuda.Device().synchronize()
        prof.disable()
        g.insert_edges(c.src, c.dst)
    for order in ("cumulative", "tottime"):
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats(order).print_stats(18)
        lines = [x for x in out.getvalue().splitlines() if x.strip()]
        print(f"---- cProfile, {count} deletes of {b}, by {order}")
        print("\n".join(lines[3:24]), flush=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.delete_pieces_gpu",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", default=["kron20", "kron22"])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000])
    ap.add_argument("--repeats", type=int, default=41)
    ap.add_argument("--inserts", action="store_true", help="also random inserts (one setting)")
    ap.add_argument("--settings", nargs="+", default=["new", "plain"], choices=list(SETTINGS),
                    help="settings compared (ratios to the last)")
    ap.add_argument("--medium-deletes", action="store_true",
                    help="medium-sized deletes take the medium path (Graph.medium_deletes)")
    ap.add_argument("--phases", action="store_true",
                    help="then the prepare kernel's phases on deletes of the first size")
    ap.add_argument("--profile", type=int, default=0,
                    help="then a cProfile of this many deletes of the first size (pieces)")
    args = ap.parse_args(argv)
    import cupy
    print(f"device: {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
    rows = []
    for spec in args.graphs:
        t = time.perf_counter()
        g = _graph(spec)
        cupy.cuda.Device().synchronize()
        print(f"{spec}: {g.num_vertices} vertices, {g.num_edges} edges, build "
              f"{time.perf_counter() - t:.2f} s", flush=True)
        if args.medium_deletes:
            g.medium_deletes = True
        es, ed = g.edges()
        n = g.num_vertices
        rs = cupy.random.RandomState(1)
        for b in args.sizes:
            picks = [rs.randint(0, es.size, b, dtype=cupy.int64) for _ in range(args.repeats + 1)]
            calls = [(lambda p=p: g.delete_edges(es[p], ed[p])) for p in picks]
            times = _run(cupy, args.settings, calls,
                         lambda c: g.insert_edges(c.src, c.dst))
            rows.append(_line(f"{spec} delete b={b}", times))
            print(rows[-1], flush=True)
            if args.inserts:
                ins = [(rs.randint(0, n, b, dtype=cupy.int64), rs.randint(0, n, b, dtype=cupy.int64))
                       for _ in range(args.repeats + 1)]
                calls = [(lambda p=p: g.insert_edges(*p)) for p in ins]
                times = _run(cupy, args.settings[:1], calls,
                             lambda c: g.delete_edges(c.src, c.dst), check=False)
                rows.append(_line(f"{spec} insert b={b}", times))
                print(rows[-1], flush=True)
        if args.phases:
            _phases(cupy, g, es, ed, rs, args.sizes[0])
        if args.profile:
            _profile(cupy, g, es, ed, rs, args.sizes[0], args.profile)
        g.check()
        g = es = ed = None
        cupy.get_default_memory_pool().free_all_blocks()
    print("\n".join(rows), flush=True)


if __name__ == "__main__":
    main()
