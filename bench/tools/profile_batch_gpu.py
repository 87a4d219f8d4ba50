"""Stage profile of GPU batches and a per-call trace of 1,000-edge batches.

    python3 -m bench.tools.profile_batch_gpu [--scales 22 24] [--sizes 1000 10000 100000 1000000]
        [--calls 15] [--trace 300]

For each Kronecker graph and batch size (random int64 pairs inserted, then deleted again):

- the median wall time of the insert and of the delete (Python call to result, synchronized);
- a stage profile: the pipeline's steps (the names of :mod:`hornet.batch.pipeline`, of the
  backend's kernels module and of :mod:`hornet.batch.small_path` that a batch calls) wrapped,
  once with host clocks only (``host``: what the Python side of a step costs, the GPU running
  behind) and once with a device synchronization before and after the step (``synced``: host
  plus the device work the step waits for);
- the calls that read device memory back per batch (CuPy's ``get``, ``tolist``, ``item``,
  ``asnumpy`` and explicit synchronizations, counted by cProfile; ``int(device scalar)`` reads
  inside CuPy's C code without a call cProfile sees, so the count is a lower bound).

``--trace`` runs that many 1,000-edge insert-then-delete cycles and prints every call slower
than twice the median with what happened during it: Python garbage collections, growth of
CuPy's memory pool, block-cache refills (``allocate_counts``), releases to the bit trees,
compactions.
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import statistics
import time
from collections import defaultdict

import hornet
from bench.common import kronecker, require_gpu

NEEDS_GPU = True
READS = ("get", "tolist", "item", "asnumpy", "synchronize", "__int__", "__bool__", "__index__")


class StageClock:
    """Wraps functions of modules; accumulates seconds per stage name while enabled."""

    def __init__(self, sync):
        self.sync, self.totals, self.enabled, self.synced = sync, defaultdict(float), False, False
        self._undo = []
        self._depth = 0

    def wrap(self, module, name: str, label: str | None = None) -> None:
        fn = getattr(module, name, None)
        if fn is None or not callable(fn):
            return
        label = label or name
        clock = self

        def timed(*a, **k):
            if not clock.enabled or clock._depth:
                return fn(*a, **k)
            clock._depth += 1
            if clock.synced:
                clock.sync()
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                if clock.synced:
                    clock.sync()
                clock.totals[label] += time.perf_counter() - t
                clock._depth -= 1

        setattr(module, name, timed)
        self._undo.append((module, name, fn))

    def restore(self) -> None:
        for module, name, fn in reversed(self._undo):
            setattr(module, name, fn)
        self._undo = []


def wrap_pipeline(clock: StageClock) -> None:
    import hornet.batch.gpu as K
    import hornet.batch.pipeline as P
    import hornet.batch.small_path as SP
    import hornet.graph as G
    from hornet.memory import block_cache, manager
    for name in ("edge_batch", "property_values", "small_pairs", "small_update"):
        clock.wrap(G, name, name if name != "small_update" else "small path (all)")
    clock.wrap(G, "medium_update", "medium path (all)")
    for name in ("unique_pairs", "allocate_for", "_field_columns", "_moved_field_columns",
                 "_retire", "compact_memory", "edge_change"):
        clock.wrap(P, name)
    for name in ("find_positions", "keep_entries", "plan_segments", "merge_lists",
                 "remove_lists", "read_at"):
        clock.wrap(K, name)
    clock.wrap(SP, "compact_memory", "small: compact_memory")
    import hornet.batch.planned as PL
    clock.wrap(G, "planned_pairs")
    for name in ("plan_batch", "_field_columns", "_moved_field_columns", "_retire",
                 "compact_memory", "edge_change", "_change"):
        clock.wrap(PL, name, name if name == "plan_batch" else f"planned: {name}")
    import hornet.batch.medium_path as MP
    from hornet.batch.gpu.medium import MediumBatches
    clock.wrap(G, "medium_pairs")
    clock.wrap(MP, "compact_memory", "medium: compact_memory")
    for name in ("prepare", "rewrite", "set_first_pairs", "kept_pairs"):
        clock.wrap(MediumBatches, name, f"medium: {name}")
    for name in ("reserve", "accepts", "commit", "grow_ahead"):
        clock.wrap(block_cache.BlockCache, name, f"cache: {name}")
    for name in ("allocate_counts", "release"):
        clock.wrap(manager.MemoryManager, name, f"memory: {name}")


def stage_profile(g, xp, sizes, calls, sync) -> None:
    n = g.num_vertices
    rs = xp.random.RandomState(11)
    for b in sizes:
        batches = [(rs.randint(0, n, b, dtype=xp.int64), rs.randint(0, n, b, dtype=xp.int64))
                   for _ in range(calls + 2)]
        for mode in ("none", "host", "synced"):
            clock = StageClock(sync)
            if mode != "none":
                wrap_pipeline(clock)
            clock.synced = mode == "synced"
            ins, dels = [], []
            for i, (s, d) in enumerate(batches):
                clock.enabled = i >= 2 and mode == "host" or i >= 2 and mode == "synced"
                sync()
                t = time.perf_counter()
                c = g.insert_edges(s, d)
                len(c)
                sync()
                t1 = time.perf_counter()
                r = g.delete_edges(c.src, c.dst)
                len(r)
                sync()
                t2 = time.perf_counter()
                if i >= 2:
                    ins.append(t1 - t)
                    dels.append(t2 - t1)
            clock.restore()
            print(f"  batch {b:>8} [{mode:6}] insert {statistics.median(ins) * 1e6:8.0f} us  "
                  f"delete {statistics.median(dels) * 1e6:8.0f} us (medians of {calls}; "
                  f"max {max(ins) * 1e6:.0f} / {max(dels) * 1e6:.0f})", flush=True)
            if mode != "none":
                for k, v in sorted(clock.totals.items(), key=lambda kv: -kv[1]):
                    print(f"      {k:28} {v / calls * 1e6:9.0f} us / batch (insert+delete)")
        # device reads per batch, by cProfile
        prof = cProfile.Profile()
        s, d = batches[0]
        prof.enable()
        c = g.insert_edges(s, d)
        prof.disable()
        ins_reads = _reads(prof)
        prof = cProfile.Profile()
        prof.enable()
        g.delete_edges(c.src, c.dst)
        prof.disable()
        print(f"      reads per insert: {ins_reads}; per delete: {_reads(prof)}", flush=True)
        if b in (10**4, 10**5, 10**6):
            prof = cProfile.Profile()
            s, d = batches[1]
            prof.enable()
            for _ in range(3):
                c = g.insert_edges(s, d)
                g.delete_edges(c.src, c.dst)
            sync()
            prof.disable()
            st = pstats.Stats(prof)
            print_top(st, 6, 18, "tottime")
            print_top(st, 6, 30, "cumtime")


def print_top(stats: pstats.Stats, calls: int, top: int, key: str) -> None:
    """The ``top`` functions of ``stats`` by own time (``key`` "tottime") or cumulative time
    ("cumtime"), in microseconds and calls per profiled call (``calls`` of them)."""
    rows = []
    for (filename, line, name), (_, nc, tt, ct, _callers) in stats.stats.items():
        short = filename.rsplit("/", 2)
        where = "/".join(short[-2:]) if filename.startswith("/") else filename
        rows.append((tt if key == "tottime" else ct, tt, ct, nc, f"{where}:{line}({name})"))
    rows.sort(reverse=True)
    print(f"      by {key}, per call: own us, cumulative us, calls")
    for _, tt, ct, nc, label in rows[:top]:
        print(f"      {tt / calls * 1e6:9.1f} {ct / calls * 1e6:9.1f} {nc / calls:7.1f}  {label}")


def _reads(prof) -> dict:
    """Calls of CuPy's read-back methods and functions recorded by ``prof``."""
    st = pstats.Stats(prof).stats
    out = defaultdict(int)
    for (filename, _, name), (_, nc, *_rest) in st.items():
        cupy_method = name.startswith("<method '") and "cupy" in name
        short = name.split("'")[1] if cupy_method else name
        if (cupy_method or "cupy" in filename) and short in READS:
            out[short] += nc
    return dict(out)


def trace_small(g, xp, calls, sync, dtype) -> None:
    """Per call of 1,000-edge insert-then-delete: wall us and what happened inside."""
    from hornet.memory import manager as M
    mm = g._mm
    events = defaultdict(int)
    orig = {}

    def count(obj, name, label):
        fn = getattr(obj, name)
        orig[(obj, name)] = fn

        def counted(*a, **k):
            r = fn(*a, **k)
            if label == "compact" and isinstance(r, tuple) and getattr(r[0], "size", 0) == 0:
                return r
            events[label] += 1
            return r
        setattr(obj, name, counted)

    count(mm, "allocate_counts", "refill/alloc")
    count(mm, "allocate_into_rings", "refill/rings")
    cache = mm.block_cache()
    spent = defaultdict(float)

    def timed(obj, name):
        fn = getattr(obj, name)
        orig[(obj, name)] = fn

        def run(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[name] += time.perf_counter() - t
        setattr(obj, name, run)

    for name in ("reserve", "_append"):
        timed(cache, name)
    for name in ("_plan", "_take"):
        timed(mm, name)
    count(mm, "release", "release")
    count(mm, "compact_touched", "compact")

    def on_gc(phase, info):
        if phase == "start":
            events[f"gc{info['generation']}"] += 1
    gc.callbacks.append(on_gc)
    pool = xp.get_default_memory_pool()
    n = g.num_vertices
    rs = xp.random.RandomState(5)
    rows = []
    slow_stats = {"insert": None, "delete": None}
    fast_stats = {"insert": None, "delete": None}
    medians = {"insert": [], "delete": []}
    profiled = {("slow", "insert"): 0, ("slow", "delete"): 0, ("other", "insert"): 0,
                ("other", "delete"): 0}
    for i in range(calls + 10):
        s = rs.randint(0, n, 1000, dtype=xp.int64).astype(dtype)
        d = rs.randint(0, n, 1000, dtype=xp.int64).astype(dtype)
        for op in ("insert", "delete"):
            events.clear()
            spent.clear()
            before = pool.total_bytes()
            sync()
            prof = cProfile.Profile() if i >= 10 else None
            t = time.perf_counter()
            if prof is not None:
                prof.enable()
            c = g.insert_edges(s, d) if op == "insert" else g.delete_edges(s, d)
            len(c)
            sync()
            if prof is not None:
                prof.disable()
            us = (time.perf_counter() - t) * 1e6
            if prof is not None:
                # profiles of the calls over twice the running median, and of the others
                med_now = statistics.median(medians[op]) if medians[op] else us
                medians[op].append(us)
                slow_call = us > 2 * med_now and len(medians[op]) > 5
                bucket = slow_stats if slow_call else fast_stats
                profiled[("slow" if slow_call else "other", op)] += 1
                if bucket[op] is None:
                    bucket[op] = pstats.Stats(prof)
                else:
                    bucket[op].add(prof)
            grew = pool.total_bytes() - before
            if grew:
                events["pool+"] += 1
            if i >= 10:
                detail = dict(events)
                if events.get("refill/alloc") or events.get("refill/rings"):
                    detail.update({f"{k} us": round(v * 1e6) for k, v in spent.items()})
                rows.append((i, op, us, detail))
            if op == "insert":
                s, d = c.src, c.dst
                if dtype != xp.int32:
                    s, d = s.astype(dtype), d.astype(dtype)
    gc.callbacks.remove(on_gc)
    for (obj, name), fn in orig.items():
        setattr(obj, name, fn)
    del M
    for op in ("insert", "delete"):
        times = [r[2] for r in rows if r[1] == op]
        med = statistics.median(times)
        slow = [r for r in rows if r[1] == op and r[2] > 2 * med]
        print(f"  trace {op} ids {xp.dtype(dtype).name}: median {med:.0f} us, "
              f"p90 {sorted(times)[int(0.9 * len(times))]:.0f}, max {max(times):.0f}, "
              f"{len(slow)} of {len(times)} over twice the median", flush=True)
        tally = defaultdict(int)
        for r in rows:
            if r[1] == op:
                for k in r[3]:
                    tally[k] += 1
        print(f"    calls with each event (all calls): {dict(tally)}")
        for r in slow[:12]:
            print(f"    call {r[0]}: {r[2]:.0f} us  events {r[3]}")
        for label, bucket in (("slow", slow_stats), ("other", fast_stats)):
            if bucket[op] is not None:
                print(f"    cProfile of the {label} {op} calls (sum over them), by own time:")
                calls_in = profiled[(label, op)]
                print_top(bucket[op], max(1, calls_in), 14, "tottime")
                if label == "slow":
                    print_top(bucket[op], max(1, calls_in), 22, "cumtime")


def trace_events(g, xp, calls) -> None:
    """The updates benchmark's pattern at 1,000 edges: random int64 inserts timed with CUDA
    events, each undone (deleted through the change's int32 arrays) untimed, no sync between;
    prints the slow calls and the pool growth / collections inside them."""
    n = g.num_vertices
    rs = xp.random.RandomState(1)
    pool = xp.get_default_memory_pool()
    counts = defaultdict(int)

    def on_gc(phase, info):
        if phase == "start":
            counts[f"gc{info['generation']}"] += 1
    gc.callbacks.append(on_gc)
    start, end = xp.cuda.Event(), xp.cuda.Event()
    rows = []
    for i in range(calls + 5):
        s, d = rs.randint(0, n, 1000, dtype=xp.int64), rs.randint(0, n, 1000, dtype=xp.int64)
        counts.clear()
        before = pool.total_bytes()
        t = time.perf_counter()
        start.record()
        c = g.insert_edges(s, d)
        end.record()
        host = time.perf_counter() - t
        end.synchronize()
        ev = xp.cuda.get_elapsed_time(start, end) * 1e3
        if pool.total_bytes() != before:
            counts["pool+"] += 1
        rows.append((i, ev, host * 1e6, dict(counts)))
        g.delete_edges(c.src, c.dst)
    gc.callbacks.remove(on_gc)
    rows = rows[5:]
    med = statistics.median(r[1] for r in rows)
    slow = [r for r in rows if r[1] > 2 * med]
    print(f"  events pattern (updates_gpu): median {med:.0f} us, host median "
          f"{statistics.median(r[2] for r in rows):.0f} us, {len(slow)} of {len(rows)} over "
          f"twice the median", flush=True)
    for r in slow[:12]:
        print(f"    call {r[0]}: events {r[1]:.0f} us host {r[2]:.0f} us {r[3]}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.profile_batch_gpu",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", type=int, nargs="+", default=[22, 24])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10**4, 10**5, 10**6])
    ap.add_argument("--calls", type=int, default=15)
    ap.add_argument("--trace", type=int, default=300)
    args = ap.parse_args(argv)
    require_gpu("profile_batch_gpu")
    import cupy
    sync = cupy.cuda.Device().synchronize
    for scale in args.scales:
        src, dst = kronecker(scale, seed=scale, xp=cupy)
        g = hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False,
                                    device="gpu")
        del src, dst
        print(f"Kronecker {scale}: {g.num_edges} edges", flush=True)
        if args.trace:
            trace_events(g, cupy, args.trace)
            for dt in (cupy.int64, cupy.int32):
                trace_small(g, cupy, args.trace, sync, dt)
        stage_profile(g, cupy, args.sizes, args.calls, sync)
        del g
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
