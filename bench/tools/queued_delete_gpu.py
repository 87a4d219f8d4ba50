"""Planned GPU deletes with and without the queued removal, same process, same graph (CUDA
events): where a queued delete spends its time.

    python3 -m bench.tools.queued_delete_gpu [--scales 20 24] [--sizes 10000 100000]
        [--repeats 9] [--variants plain queued guard fast side] [--inserts 0]

Each variant sets module flags of :mod:`hornet.batch.planned` (``plain``: QUEUED_REMOVAL
False; ``queued``: True, the moved lists copied by a removal of nothing, every delete
queued, launched through remove_lists; ``guard``: moved lists copied by one kernel, deletes
that may refit not queued; ``fast``: as guard, the removal launched from the plan's
addresses; ``side``: as fast, the short and medium lists' removals on side streams); the variants take turns on one graph (existing edges sampled with
replacement and deleted, every call undone untimed, as the updates benchmark does). Printed
per scale, size and variant: the median event time of a delete; then, from rounds with CUDA
events around the planned path's stages (which add host time), per stage its device span
and host time per batch, and per batch the plan's moves, whether it refitted and how many
entries it removed.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict

import hornet
import hornet.batch.planned as planned
from bench.common import kronecker, require_gpu
from bench.tools.device_spans_gpu import EventClock

NEEDS_GPU = True

VARIANTS = {
    "plain": {"QUEUED_REMOVAL": False},
    "queued": {"QUEUED_REMOVAL": True, "QUEUED_COPY": False, "QUEUED_UNLESS_REFIT": False,
               "QUEUED_LAUNCH": False},
    "guard": {"QUEUED_REMOVAL": True, "QUEUED_COPY": True, "QUEUED_UNLESS_REFIT": True,
              "QUEUED_LAUNCH": False},
    "fast": {"QUEUED_REMOVAL": True, "QUEUED_COPY": True, "QUEUED_UNLESS_REFIT": True,
             "QUEUED_LAUNCH": True, "SIDE_STREAMS": False},
    "side": {"QUEUED_REMOVAL": True, "QUEUED_COPY": True, "QUEUED_UNLESS_REFIT": True,
             "QUEUED_LAUNCH": True, "SIDE_STREAMS": True},
}


def _set(variant: str) -> None:
    from hornet.batch.gpu import side_streams
    for k, v in VARIANTS[variant].items():
        if k == "SIDE_STREAMS":
            side_streams.ENABLED = v
        else:
            setattr(planned, k, v)


def _install(clock: EventClock, seen: list) -> None:
    """Event pairs around the planned delete's stages; ``seen`` gets "queued" for every
    queued removal and (moves, refit, kept, segments) of every committed plan."""
    from hornet.batch import gpu as K
    _queued = planned._queue_removal

    def queue_removal(g, pending):
        seen.append("queued")
        return clock.span("_queue_removal", _queued, g, pending)

    planned._queue_removal = queue_removal
    clock._undo.append((planned, "_queue_removal", _queued))
    for name in ("plan_batch", "refit_plan", "_take_blocks", "place_moves",
                 "compact_memory", "_change", "copy_lists"):
        clock.wrap(planned, name)
    commit = planned._commit

    def _commit(g, p):
        seen.append((p.moves, bool(getattr(p, "refit", False)), p.kept, p.segments))
        return clock.span("_commit", commit, g, p)

    planned._commit = _commit
    clock._undo.append((planned, "_commit", commit))
    remove = K.remove_lists

    def remove_lists(*a, **k):
        label = "remove_lists (queued)" if k.get("counted") else "remove_lists"
        return clock.span(label, remove, *a, **k)

    fast = planned.queued_removal
    planned.queued_removal = lambda *a: clock.span("queued_removal", fast, *a)
    clock._undo.append((planned, "queued_removal", fast))

    K.remove_lists = remove_lists
    clock._undo.append((K, "remove_lists", remove))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.queued_delete_gpu",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", type=int, nargs="+", default=[20, 24])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10**4, 10**5])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--profiled", type=int, default=3, help="rounds with stage events")
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS))
    ap.add_argument("--inserts", type=int, default=0,
                    help="random inserts (each undone) of the size before its deletes, as "
                         "ab_batches_gpu runs them")
    ap.add_argument("--cprofile", type=int, default=0,
                    help="then that many deletes of each size profiled (cProfile, own time)")
    args = ap.parse_args(argv)
    require_gpu("queued_delete_gpu")
    import cupy
    print(f"device: {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    for scale in args.scales:
        src, dst = kronecker(scale, seed=scale, xp=cupy)
        g = hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False,
                                    device="gpu")
        del src, dst
        es, ed = g.edges()
        rs = cupy.random.RandomState(1)
        for b in args.sizes:
            rounds = args.repeats + args.profiled + 1
            for _ in range(args.inserts):
                c = g.insert_edges(rs.randint(0, g.num_vertices, b, dtype=cupy.int64),
                                   rs.randint(0, g.num_vertices, b, dtype=cupy.int64))
                g.delete_edges(c.src, c.dst)
            picks = [rs.randint(0, es.size, b, dtype=cupy.int64) for _ in range(rounds)]
            times = defaultdict(list)
            stages = {v: defaultdict(lambda: [0.0, 0.0, 0]) for v in args.variants}
            plans = defaultdict(list)
            clock = EventClock(cupy)
            for r in range(rounds):
                profiled = r > args.repeats
                order = args.variants if r % 2 else args.variants[::-1]
                for v in order:
                    _set(v)
                    seen = []
                    if profiled:
                        _install(clock, seen)
                        clock.enabled = True
                    cupy.cuda.Device().synchronize()
                    start.record()
                    c = g.delete_edges(es[picks[r]], ed[picks[r]])
                    end.record()
                    end.synchronize()
                    if profiled:
                        clock.enabled = False
                        clock.restore()
                        for label, row in clock.collect().items():
                            acc = stages[v][label]
                            for k in range(3):
                                acc[k] += row[k]
                        plans[v].extend(seen)
                    elif r:
                        times[v].append(cupy.cuda.get_elapsed_time(start, end) * 1e3)
                    g.insert_edges(c.src, c.dst)
                    cupy.cuda.Device().synchronize()
            _set("side")
            if args.cprofile:
                _cprofile(cupy, g, es, ed, rs, b, args.cprofile)
            for v in args.variants:
                t = times[v]
                print(f"kron{scale} b={b} {v}: delete median {statistics.median(t):.0f} us "
                      f"(min {min(t):.0f}, max {max(t):.0f}, {len(t)} rounds)", flush=True)
            for v in args.variants:
                print(f"  {v}: plans (moves, refit, kept, segments): {plans[v]}")
                for label, (dev, host, calls) in sorted(stages[v].items(),
                                                        key=lambda kv: -kv[1][1]):
                    n = args.profiled
                    print(f"    {label:<24} device {dev / n * 1e6:7.0f} us  host "
                          f"{host / n * 1e6:7.0f} us  calls {calls / n:.1f}")
            sys.stdout.flush()
        g.check()
        g = None
        cupy.get_default_memory_pool().free_all_blocks()


def _cprofile(cupy, g, es, ed, rs, b: int, calls: int) -> None:
    """Host time by function of ``calls`` deletes of ``b`` sampled edges and ``calls`` inserts
    of ``b`` random pairs (each undone)."""
    import cProfile
    import io
    import pstats
    n = g.num_vertices
    for kind in ("delete", "insert"):
        prof = cProfile.Profile()
        for _ in range(calls):
            if kind == "delete":
                p = rs.randint(0, es.size, b, dtype=cupy.int64)
                s, d, op, undo = es[p], ed[p], g.delete_edges, g.insert_edges
            else:
                s = rs.randint(0, n, b, dtype=cupy.int64)
                d = rs.randint(0, n, b, dtype=cupy.int64)
                op, undo = g.insert_edges, g.delete_edges
            cupy.cuda.Device().synchronize()
            prof.enable()
            c = op(s, d)
            cupy.cuda.Device().synchronize()
            prof.disable()
            undo(c.src, c.dst)
        stats = pstats.Stats(prof, stream=io.StringIO()).stats
        rows = sorted(stats.items(), key=lambda kv: -kv[1][2])[:28]
        print(f"  cProfile of {calls} {kind}s of {b} (side), per {kind}: own us, cumulative "
              f"us, calls")
        for (path, line, name), (_, nc, tt, ct, _) in rows:
            where = f"{path.rsplit('/', 1)[-1]}:{line}({name})" if line else name
            print(f"    {tt / calls * 1e6:7.1f} {ct / calls * 1e6:8.1f} {nc / calls:6.1f}  "
                  f"{where[:90]}")

if __name__ == "__main__":
    main()
