"""Stage profile of large GPU batches (10^5 - 10^7 edges) in the updates benchmark's pattern.

    python3 -m bench.tools.profile_large_gpu [--scales 20 24] [--sizes 100000 1000000 10000000]
        [--repeats 5]

For each Kronecker graph (undirected, as ``python3 -m bench updates_gpu`` builds it) and batch
size: random int64 pairs inserted (each insert undone untimed), existing edges sampled with
replacement and deleted (each delete undone untimed), as the benchmark does. Printed per size:

- the median time of the insert and of the delete between CUDA events (the benchmark's
  figure) and the median host time of the call (Python call to return, not synchronized);
- a stage profile: the batch paths' steps (:func:`wrap_large`) wrapped with a device
  synchronization before and after each (host plus the device work of the step), per batch.
  The stages nest: a step inside another is counted in both.
"""
from __future__ import annotations

import argparse
import statistics
import time

import hornet
from bench.common import kronecker, require_gpu
from bench.tools.profile_batch_gpu import StageClock


class NestedClock(StageClock):
    """A :class:`StageClock` whose stages nest: a wrapped step inside another is counted in
    both (the synchronizations around the inner one add to the outer one's time)."""

    def wrap(self, module, name: str, label=None) -> None:
        """``label``: the stage's name, or a callable making it from the call's positional
        arguments (one stage per kernel of a launch helper)."""
        fn = getattr(module, name, None)
        if fn is None or not callable(fn):
            return
        label = label or name
        clock = self

        def timed(*a, **k):
            if not clock.enabled:
                return fn(*a, **k)
            clock.sync()
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                clock.sync()
                stage = label(a) if callable(label) else label
                clock.totals[stage] += time.perf_counter() - t

        setattr(module, name, timed)
        self._undo.append((module, name, fn))


def wrap_large(clock: StageClock) -> None:
    """The steps of the planned path, of the general pipeline and of the memory policy."""
    import hornet.batch.gpu as K
    import hornet.batch.pipeline as P
    import hornet.batch.planned as PL
    import hornet.graph as G
    from hornet.batch.gpu import plan as PLAN
    from hornet.memory import list_fit, manager
    clock.wrap(G, "planned_pairs")
    clock.wrap(G, "edge_batch")
    for name in ("plan_batch", "place_moves", "_field_columns", "_commit", "_first_pairs",
                 "compact_memory", "edge_change", "_change"):
        clock.wrap(PL, name, f"planned: {name}")
    for name in ("unique_pairs", "allocate_for", "_field_columns", "_moved_field_columns",
                 "_retire", "compact_memory", "edge_change"):
        clock.wrap(P, name, f"general: {name}")
    for name in ("find_positions", "keep_entries", "plan_segments", "merge_lists",
                 "remove_lists", "read_at", "sorted_unique_pairs", "canonical_pairs"):
        clock.wrap(K, name, f"kernels: {name}")
    clock.wrap(PLAN, "plan_entries", "plan: entries (keys, sort, find, scan)")
    clock.wrap(PLAN, "_launch", lambda a: f"plan kernel: {a[0]}")
    clock.wrap(PLAN, "_launch_tiles", lambda a: f"plan kernel: {a[0]}")
    clock.wrap(PLAN, "_sort_keys", "plan: own sort")
    from hornet.batch.gpu import kernels as KM
    from hornet.memory import gpu_bit_tree
    clock.wrap(KM, "launch", lambda a: f"pipeline kernel: {_kernel_name(a[0])}")
    clock.wrap(gpu_bit_tree, "release_pointers_async", "memory: release kernel (async)")
    for name in ("allocate_counts", "allocate_classes", "release", "settle",
                 "compact_touched", "compact", "_take", "copy_slots", "lookup"):
        clock.wrap(manager.MemoryManager, name, f"memory: {name}")
    clock.wrap(list_fit.ListFit, "refit", "memory: list refit")
    from hornet.memory import gpu_take
    clock.wrap(gpu_take, "allocate_on_device", "memory: allocate_on_device")
    clock.wrap(gpu_take.DeviceTakes, "__init__", "memory: device takes made")


def _kernel_name(fn) -> str:
    for attr in ("name", "__name__", "kernel_name"):
        v = getattr(fn, attr, None)
        if isinstance(v, (str, bytes)):
            return v.decode() if isinstance(v, bytes) else v
    return repr(fn)[:40]


def profile(g, sizes, repeats: int, sync) -> None:
    import cupy
    n = g.num_vertices
    es, ed = g.edges()
    rs = cupy.random.RandomState(3)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    for b in sizes:
        ins = [(rs.randint(0, n, b, dtype=cupy.int64), rs.randint(0, n, b, dtype=cupy.int64))
               for _ in range(repeats + 1)]
        picks = [rs.randint(0, es.size, min(b, es.size), dtype=cupy.int64)
                 for _ in range(repeats + 1)]
        dels = [(es[p], ed[p]) for p in picks]
        for synced in (False, True):
            clock = NestedClock(sync)
            if synced:
                wrap_large(clock)
                clock.synced = True
            times = {"insert": [], "delete": []}
            host = {"insert": [], "delete": []}
            for i in range(repeats + 1):
                for op, (s, d) in (("insert", ins[i]), ("delete", dels[i])):
                    clock.enabled = synced and i > 0
                    sync()
                    t = time.perf_counter()
                    start.record()
                    c = g.insert_edges(s, d) if op == "insert" else g.delete_edges(s, d)
                    end.record()
                    h = time.perf_counter() - t
                    end.synchronize()
                    if i:
                        times[op].append(cupy.cuda.get_elapsed_time(start, end) * 1e3)
                        host[op].append(h * 1e6)
                    clock.enabled = False
                    if op == "insert":
                        g.delete_edges(c.src, c.dst)
                    else:
                        g.insert_edges(c.src, c.dst)
                    sync()
            clock.restore()
            med = {k: statistics.median(v) for k, v in times.items()}
            hmed = {k: statistics.median(v) for k, v in host.items()}
            label = "synced stages" if synced else "plain"
            print(f"  batch {b:>9} [{label}]: insert {med['insert']:8.0f} us (host "
                  f"{hmed['insert']:.0f}), delete {med['delete']:8.0f} us (host "
                  f"{hmed['delete']:.0f}); events, medians of {repeats}", flush=True)
            if synced:
                for k, v in sorted(clock.totals.items(), key=lambda kv: -kv[1]):
                    print(f"      {k:44} {v / repeats * 1e6:9.0f} us / (insert + delete)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.profile_large_gpu",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", type=int, nargs="+", default=[20, 24])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10**5, 10**6, 10**7])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    require_gpu("profile_large_gpu")
    import cupy
    sync = cupy.cuda.Device().synchronize
    print(f"device: {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
    for scale in args.scales:
        t = time.perf_counter()
        src, dst = kronecker(scale, seed=scale, xp=cupy)
        g = hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False,
                                    device="gpu")
        sync()
        del src, dst
        print(f"Kronecker {scale}: {g.num_edges} edges, generated and built in "
              f"{time.perf_counter() - t:.1f} s", flush=True)
        profile(g, args.sizes, args.repeats, sync)
        del g
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
