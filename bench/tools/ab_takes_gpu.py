"""Same-process A/B of the device's takes (``hornet.batch.planned.DEVICE_TAKES``) on one GPU
graph: insert and delete batches of several sizes, each round timed with the takes on and
off in alternating order (CUDA events, every call undone untimed, as the updates benchmark
does), the block arrays made per timed batch (growth that a batch and its undo leave) and,
with the takes on, how the timed batches took their blocks: before the read-back, after it
(a class short, or the device's free counts not current), and how often the device's free
counts were made again (hornet.memory.gpu_take.DeviceTakes).

    python3 -m bench.tools.ab_takes_gpu [--scale 24] [--sizes 10000 100000 1000000]
        [--repeats 7]
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter

import hornet
import hornet.batch.planned as planned
from bench.common import kronecker


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.ab_takes_gpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10**4, 10**5, 10**6])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args(argv)
    import cupy
    print(f"device: {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
    src, dst = kronecker(args.scale, seed=args.scale, xp=cupy)
    g = hornet.Graph.from_edges(src, dst, num_vertices=1 << args.scale, directed=False,
                                device="gpu")
    del src, dst
    n = g.num_vertices
    es, ed = g.edges()
    rs = cupy.random.RandomState(3)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    mm = g._mm
    counts = _count_takes()
    for b in args.sizes:
        for op in ("insert", "delete"):
            times = {True: [], False: []}
            made = {True: 0, False: 0}
            counts.clear()
            for r in range(args.repeats + 1):
                for on in ((True, False) if r % 2 else (False, True)):
                    planned.DEVICE_TAKES = on
                    if op == "insert":
                        s = rs.randint(0, n, b, dtype=cupy.int64)
                        d = rs.randint(0, n, b, dtype=cupy.int64)
                    else:
                        p = rs.randint(0, es.size, b, dtype=cupy.int64)
                        s, d = es[p], ed[p]
                    cupy.cuda.Device().synchronize()
                    before = mm.arrays_created
                    counts["on"] = (1 if on else 2) if r else 0
                    start.record()
                    c = g.insert_edges(s, d) if op == "insert" else g.delete_edges(s, d)
                    end.record()
                    end.synchronize()
                    counts["on"] = 0
                    if r:
                        times[on].append(cupy.cuda.get_elapsed_time(start, end) * 1e3)
                        made[on] += mm.arrays_created - before
                    if op == "insert":
                        g.delete_edges(c.src, c.dst)
                    else:
                        g.insert_edges(c.src, c.dst)
            on, off = (statistics.median(times[k]) for k in (True, False))
            print(f"kron{args.scale} {op} b={b}: takes on {on:.0f} us, off {off:.0f} us "
                  f"({on / off:.2f}); arrays made per batch on {made[True] / args.repeats:.1f}, "
                  f"off {made[False] / args.repeats:.1f}; {args.repeats} rounds; per batch, takes on: "
                  f"{_summary(counts, args.repeats)}", flush=True)
    planned.DEVICE_TAKES = True
    g.check()


def _count_takes() -> Counter:
    """Counters of the device's takes during the timed batches with the takes on
    (``counts["on"]`` 1), and of compactions and block arrays made or freed per class in
    every timed batch (1: on, 2: off)."""
    from hornet.memory import gpu_take
    counts = Counter()

    def counted(name, key):
        fn = getattr(gpu_take, name)

        def wrapper(*a, **k):
            t = time.perf_counter()
            out = fn(*a, **k)
            if counts["on"] == 1:
                counts[key(out) if callable(key) else key] += 1
                counts[f"{name} host us"] += (time.perf_counter() - t) * 1e6
            return out
        setattr(gpu_take, name, wrapper)

    counted("take_ahead", lambda out: "queued ahead" if out is not None else "not current")
    counted("took_ahead", "taken ahead")
    counted("allocate_on_device", "after read-back")
    init = gpu_take.DeviceTakes.__init__

    def made(self, *a):
        t = time.perf_counter()
        init(self, *a)
        if counts["on"] == 1:
            counts["free counts made"] += 1
            counts["free counts made host us"] += (time.perf_counter() - t) * 1e6
    gpu_take.DeviceTakes.__init__ = made
    from hornet.memory import manager
    compact = manager.MemoryManager.compact

    def compacted(self, *a, **k):
        old, new = compact(self, *a, **k)
        if counts["on"] and old.size:
            counts["compactions (takes " + ("on)" if counts["on"] == 1 else "off)")] += 1
        return old, new
    manager.MemoryManager.compact = compacted
    changed = manager.MemoryManager._arrays_changed

    def arrays_changed(self, created=(), freed=()):
        if counts["on"]:
            mode = "on" if counts["on"] == 1 else "off"
            for a in created:
                counts[f"class {a.size_class} grew (takes {mode})"] += 1
            for a in freed:
                counts[f"class {a.size_class} freed an array (takes {mode})"] += 1
        return changed(self, created, freed)
    manager.MemoryManager._arrays_changed = arrays_changed
    return counts


def _summary(counts: Counter, repeats: int) -> str:
    return ", ".join(f"{k} {v / repeats:.1f}" for k, v in sorted(counts.items()) if k != "on") \
        or "none"


if __name__ == "__main__":
    main()
