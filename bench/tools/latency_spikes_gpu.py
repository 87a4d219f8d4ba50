"""What the slow calls of the GPU latency benchmark do: per-call host spans and events.

    python3 -m bench.tools.latency_spikes_gpu [--scales 24 20] [--sizes 1000 10000]
        [--repeats 41] [--show 8] [--ids int64]

Runs the pattern of ``python3 -m bench updates_gpu --latency`` (Kronecker graph built on the
device, undirected; per batch size: random pairs inserted, each call undone untimed by a
delete of its change; then existing edges sampled with replacement and deleted, each undone
by an insert; CUDA events around every timed call, a device synchronization after each undo)
and records per timed call:

- ``ev``: the CUDA-event time, ``host``: Python call to return, ``wait``: the part of
  ``host`` spent in explicit synchronizations;
- host seconds in every wrapped step of the batch paths (small, medium and planned paths,
  the block cache's steps, the memory manager's allocation, release, settling, compaction,
  lookup rebuilds, list refits);
- what happened: Python garbage collections, growth of CuPy's memory pool, block arrays
  made, lookups rebuilt, cache refills (ahead or short), compaction moves, refits, the path
  that took the batch.

Printed per size and operation: medians, the calls over twice the median with their
events and the steps whose host time exceeds their median by most, and the median host
time per step (where the median call's time goes).
"""
from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections import defaultdict

import numpy as np

import hornet
from bench.common import kronecker, require_gpu

NEEDS_GPU = True


class Spans:
    """Host seconds and calls per label for the call being traced (reset per call)."""

    def __init__(self):
        self.host = defaultdict(float)
        self.calls = defaultdict(int)
        self.events = defaultdict(int)
        self.notes = []
        self.on = False
        self._undo = []

    def reset(self):
        self.host.clear()
        self.calls.clear()
        self.events.clear()
        self.notes.clear()

    def wrap(self, owner, name: str, label: str | None = None, note=None) -> None:
        fn = getattr(owner, name, None)
        if fn is None or not callable(fn):
            print(f"  (no {owner.__name__}.{name})")
            return
        label = label or name
        spans = self

        def timed(*a, **k):
            if not spans.on:
                return fn(*a, **k)
            if note is not None:
                note(spans, a, k)
            t = time.perf_counter()
            try:
                r = fn(*a, **k)
            finally:
                spans.host[label] += time.perf_counter() - t
                spans.calls[label] += 1
            return r

        try:
            setattr(owner, name, timed)
        except TypeError:
            print(f"  (cannot wrap {owner.__name__}.{name})")
            return
        self._undo.append((owner, name, fn))

    def restore(self):
        for owner, name, fn in reversed(self._undo):
            setattr(owner, name, fn)
        self._undo = []


def install(spans: Spans, cupy) -> None:
    import hornet.batch.medium_path as MP
    import hornet.batch.planned as PL
    import hornet.batch.small_path as SP
    import hornet.graph as G
    from hornet.batch.gpu import plan as PLAN
    from hornet.batch.gpu.medium import MediumBatches
    from hornet.batch.gpu.small import SmallBatches
    from hornet.memory import block_cache, gpu_take, list_fit, manager
    for name in ("deferred_insert", "small_pairs", "small_update", "medium_pairs",
                 "medium_update", "planned_pairs", "planned_update", "edge_batch"):
        spans.wrap(G, name, f"G.{name}")
    spans.wrap(G.Graph, "_reserve", "G._reserve")
    for name in ("prepare", "rewrite"):
        spans.wrap(SmallBatches, name, f"small.{name}")
        spans.wrap(MediumBatches, name, f"medium.{name}")
    spans.wrap(SP, "compact_memory", "small: compact_memory")
    spans.wrap(SP, "property_values", "small: property_values")
    spans.wrap(MP, "compact_memory", "medium: compact_memory")
    for name in ("plan_batch", "_queue_removal", "_commit", "refit_plan", "_take_blocks",
                 "place_moves", "_change", "copy_lists", "compact_memory", "_may_refit",
                 "_refits", "_first_pairs", "merge_from_plan"):
        spans.wrap(PL, name, f"planned.{name}")
    spans.wrap(PLAN, "plan_entries", "plan.plan_entries")
    from hornet.batch.gpu import medium as M
    spans.wrap(M, "plan_entries", "medium: plan_entries")
    for name in ("prepare", "take_ahead", "took_ahead"):
        spans.wrap(gpu_take, name, f"take.{name}")

    def lookup_note(sp, a, k):
        if a[0]._lookup is None:
            sp.events["lookup rebuilt"] += 1

    def short_note(sp, a, k):
        cache, need = a[0], a[1]
        classes = a[2] if len(a) > 2 else k.get("classes")
        mm = cache.manager
        for c in block_cache._classes(need, classes):
            if need[c] > cache.tail[c] - cache.head[c]:
                sp.notes.append(("short", c, int(need[c]), cache.tail[c] - cache.head[c],
                                 cache._fill[c], cache._trigger(c), cache.peak[c],
                                 mm.free_blocks(c)))

    def grow_note(sp, a, k):
        mm, per_class = a[0], a[1]
        for c in np.flatnonzero(per_class).tolist():
            if mm._class_blocks.get(c, 0) - mm._class_used.get(c, 0) < per_class[c]:
                sp.notes.append(("grow", c, int(per_class[c])))

    spans.wrap(gpu_take, "allocate_on_device", "take.allocate_on_device", note=grow_note)
    spans.wrap(block_cache.BlockCache, "reserve", "cache.reserve", note=short_note)
    for name in ("top_up", "accepts", "commit", "grow_ahead", "_refill",
                 "_take_into_rings", "flush"):
        spans.wrap(block_cache.BlockCache, name, f"cache.{name}")
    from hornet.core import cuda as C
    from hornet.memory import array_table
    spans.wrap(C._Staging, "copy", "upload")
    spans.wrap(array_table.ArrayTable, "update", "table.update")
    spans.wrap(manager, "lookup_columns", "lookup_columns")
    spans.wrap(gpu_take.DeviceTakes, "__init__", "DeviceTakes()")
    spans.wrap(gpu_take.DeviceTakes, "take", "DeviceTakes.take")
    MM = manager.MemoryManager
    spans.wrap(MM, "lookup", "mm.lookup", note=lookup_note)
    for name in ("add_room", "release", "settle", "_settle_release", "compact_touched",
                 "compact", "_plan", "allocate_counts", "allocate_into_rings", "_drop_empty",
                 "_released"):
        spans.wrap(MM, name, f"mm.{name}")
    spans.wrap(list_fit.ListFit, "refit", "fit.refit")
    spans.wrap(list_fit.ListFit, "loose", "fit.loose")
    spans.wrap(manager, "BlockArray", "new BlockArray")
    from hornet.memory import gpu_repoint
    spans.wrap(gpu_repoint, "repoint_moved", "repoint_moved")
    cu = cupy.cuda
    for cls in (cu.Stream, cu.Event, cu.Device):
        spans.wrap(cls, "synchronize", "WAIT " + cls.__name__)


def _timed(spans: Spans, fn, label: str):
    def timed(*a, **k):
        if not spans.on:
            return fn(*a, **k)
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            spans.host[label] += time.perf_counter() - t
            spans.calls[label] += 1
    timed._traced = True
    return timed


def _ctx(g):
    mm = g._mm
    cache = mm.cache
    return (mm.arrays_created, cache.refills if cache else 0,
            cache.short_refills if cache else 0, cache.grow_steps if cache else 0)


def trace(g, cupy, spans: Spans, b: int, repeats: int, op: str, batches, show: int,
          dtype) -> None:
    pool = cupy.get_default_memory_pool()
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    gcs = defaultdict(int)

    def on_gc(phase, info):
        if phase == "start" and spans.on:
            gcs[f"gc{info['generation']}"] += 1
    gc.callbacks.append(on_gc)
    rows = []
    for i, (s, d) in enumerate(batches):
        spans.reset()
        gcs.clear()
        c0 = _ctx(g)
        before = pool.total_bytes()
        spans.on = i > 0
        t = time.perf_counter()
        start.record()
        c = g.insert_edges(s, d) if op == "insert" else g.delete_edges(s, d)
        end.record()
        host = time.perf_counter() - t
        spans.on = False
        end.synchronize()
        ev = cupy.cuda.get_elapsed_time(start, end) * 1e3
        c1 = _ctx(g)
        events = dict(spans.events)
        events.update(gcs)
        for k, name in enumerate(("arrays made", "refills", "short refills", "grow steps")):
            if c1[k] != c0[k]:
                events[name] = c1[k] - c0[k]
        if pool.total_bytes() != before:
            events["pool MB"] = round((pool.total_bytes() - before) / 2**20, 1)
        cache = g._mm.cache
        if cache is not None and cache.last_step:
            events["step"] = cache.last_step
        for lab in ("G.small_update", "G.medium_update", "G.planned_update"):
            if spans.calls.get(lab):
                events.setdefault("path", lab[2:].split("_")[0])
        if spans.notes:
            events["notes"] = list(spans.notes)
        if spans.calls.get("mm.compact"):
            events["compact"] = spans.calls["mm.compact"]
        if spans.calls.get("fit.refit"):
            events["refit"] = spans.calls["fit.refit"]
        wait = sum(v for k, v in spans.host.items() if k.startswith("WAIT"))
        if i:
            rows.append((i, ev, host * 1e6, wait * 1e6, events, dict(spans.host)))
        u0 = time.perf_counter()
        if op == "insert":
            g.delete_edges(c.src, c.dst)
        else:
            g.insert_edges(c.src, c.dst)
        cupy.cuda.Device().synchronize()
        undo_us = (time.perf_counter() - u0) * 1e6
        if i and undo_us > 3000:
            rows[-1][4]["slow undo us"] = round(undo_us)
    gc.callbacks.remove(on_gc)
    evs = [r[1] for r in rows]
    med = statistics.median(evs)
    slow = [r for r in rows if r[1] > 2 * med]
    print(f"  {op} b={b} ids {dtype}: events median {med:.0f} us, host median "
          f"{statistics.median(r[2] for r in rows):.0f}, wait median "
          f"{statistics.median(r[3] for r in rows):.0f}, max {max(evs):.0f} "
          f"({max(evs) / med:.2f}x), {len(slow)} of {len(rows)} over 2x", flush=True)
    tally = defaultdict(int)
    for r in rows:
        for k in r[4]:
            tally[k] += 1
    print(f"    calls with each event: {dict(tally)}")
    notes = defaultdict(int)
    for r in rows:
        for nt in r[4].get("notes", []):
            notes[(nt[0], nt[1])] += 1
    if notes:
        print("    (kind, class): calls " + ", ".join(f"{k}: {v}" for k, v in sorted(notes.items())))
    labels = sorted({k for r in rows for k in r[5]})
    med_host = {k: statistics.median(r[5].get(k, 0.0) for r in rows) * 1e6 for k in labels}
    order = sorted(labels, key=lambda k: -med_host[k])
    print("    median host us per step: " + ", ".join(
        f"{k} {med_host[k]:.0f}" for k in order if med_host[k] >= 2))
    over = sorted(rows, key=lambda r: -r[1])[:show]
    for r in over:
        extra = sorted(((v * 1e6 - med_host.get(k, 0.0), k, v * 1e6) for k, v in r[5].items()),
                       reverse=True)[:7]
        flag = "SLOW" if r[1] > 2 * med else "    "
        print(f"    {flag} call {r[0]}: ev {r[1]:.0f} host {r[2]:.0f} wait {r[3]:.0f} "
              f"{r[4]} | " + ", ".join(f"{k} {v:.0f}(+{x:.0f})" for x, k, v in extra
                                       if x >= 5))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.latency_spikes_gpu",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", type=int, nargs="+", default=[24, 20])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--repeats", type=int, default=41)
    ap.add_argument("--show", type=int, default=8)
    ap.add_argument("--ids", nargs="+", default=["bench"],
                    help="id dtypes of the batches: int32, int64, or bench (as the latency "
                         "benchmark: inserts int64, deletes the graph's edge arrays)")
    args = ap.parse_args(argv)
    require_gpu("latency_spikes_gpu")
    import cupy
    print(f"device: {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
    spans = Spans()
    install(spans, cupy)
    for scale in args.scales:
        t = time.perf_counter()
        src, dst = kronecker(scale, seed=scale, xp=cupy)
        g = hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False,
                                    device="gpu")
        cupy.cuda.Device().synchronize()
        del src, dst
        print(f"Kronecker {scale}: {g.num_edges} edges, built in "
              f"{time.perf_counter() - t:.1f} s", flush=True)
        be = g._mm.backend
        for name in ("new_tree", "forest_from_table", "take_into_rings", "take_arrays"):
            fn = getattr(be, name, None)
            if fn is not None and not getattr(fn, "_traced", False):
                object.__setattr__(be, name, _timed(spans, fn, f"backend.{name}"))
        n = g.num_vertices
        es, ed = g.edges()
        rs = cupy.random.RandomState(1)
        for b in args.sizes:
            for ids in args.ids:
                dt = cupy.int64 if ids == "bench" else getattr(cupy, ids)
                dd = es.dtype if ids == "bench" else dt
                ins = [(rs.randint(0, n, b, dtype=cupy.int64).astype(dt),
                        rs.randint(0, n, b, dtype=cupy.int64).astype(dt))
                       for _ in range(args.repeats + 1)]
                trace(g, cupy, spans, b, args.repeats, "insert", ins, args.show, ids)
                picks = [rs.randint(0, es.size, b, dtype=cupy.int64)
                         for _ in range(args.repeats + 1)]
                dels = [(es[p].astype(dd), ed[p].astype(dd)) for p in picks]
                trace(g, cupy, spans, b, args.repeats, "delete", dels, args.show, ids)
        del g, es, ed
        cupy.get_default_memory_pool().free_all_blocks()
    spans.restore()


if __name__ == "__main__":
    main()
