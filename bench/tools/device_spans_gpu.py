"""Device time per kernel and per stage of GPU update batches, from CUDA events (no syncs).

    python3 -m bench.tools.device_spans_gpu [--scales 24] [--sizes 10000 100000 1000000]
        [--repeats 5] [--top 25]

:mod:`bench.tools.profile_large_gpu` synchronizes around every stage, which adds a wait and
a launch gap per stage and hides how much of a batch the device is busy. Here every kernel
launch of the update paths (prepared launches and CuPy-call launches of hornet's kernels) and
every wrapped stage (:func:`bench.tools.profile_large_gpu.wrap_large`, plus the medium path
and the memory manager's allocation and release steps) records a CUDA event before and after
itself, in stream order, without waiting; once the batch is done the elapsed times are summed
per label. A kernel's figure is its device time; a stage's is its device span (its kernels,
CuPy's own kernels inside it, and the device's idle gaps while the host queues them). Printed
per batch size and operation (random int64 pairs inserted, existing edges sampled and
deleted, each call undone untimed, as the updates benchmark does): the batch's event time,
its host time (call to return), the sum of hornet's kernel times (the device's busy share),
then the labels by device time per batch, with their host time per batch.
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

import hornet
from bench.common import kronecker, require_gpu

NEEDS_GPU = True


class EventClock:
    """Event pairs per label, recorded in stream order; :meth:`collect` sums them."""

    def __init__(self, cupy, pool: int = 1 << 14):
        self.cupy = cupy
        self.events = [cupy.cuda.Event() for _ in range(pool)]
        self.used = 0
        self.pairs = []                 # (label, start event, end event, host seconds)
        self.enabled = False
        self._undo = []

    def _event(self):
        if self.used >= len(self.events):
            self.events.append(self.cupy.cuda.Event())
        e = self.events[self.used]
        self.used += 1
        e.record()
        return e

    def span(self, label, fn, *a, **k):
        if not self.enabled:
            return fn(*a, **k)
        e0, t = self._event(), time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            self.pairs.append((label, e0, self._event(), time.perf_counter() - t))

    def wrap(self, owner, name: str, label=None) -> None:
        fn = getattr(owner, name, None)
        if fn is None or not callable(fn):
            return
        clock = self

        def timed(*a, **k):
            lab = label(a) if callable(label) else (label or name)
            return clock.span(lab, fn, *a, **k)

        setattr(owner, name, timed)
        self._undo.append((owner, name, fn))

    def restore(self) -> None:
        for owner, name, fn in reversed(self._undo):
            setattr(owner, name, fn)
        self._undo = []

    def collect(self) -> dict:
        """{label: [device seconds, host seconds, calls]} of the pairs since the last call
        (waits for the last event)."""
        out = defaultdict(lambda: [0.0, 0.0, 0])
        if self.pairs:
            self.pairs[-1][2].synchronize()
        for label, e0, e1, h in self.pairs:
            row = out[label]
            row[0] += self.cupy.cuda.get_elapsed_time(e0, e1) / 1e3
            row[1] += h
            row[2] += 1
        self.pairs = []
        self.used = 0
        return out


def _kernel_name(fn) -> str:
    for attr in ("name", "__name__", "kernel_name"):
        v = getattr(fn, attr, None)
        if isinstance(v, (str, bytes)):
            v = v.decode() if isinstance(v, bytes) else v
            return v[:60]
    kernel = getattr(fn, "kernel", None)
    if kernel is not None and kernel is not fn:
        return _kernel_name(kernel)
    return repr(fn)[:40]


def install(clock: EventClock) -> None:
    """Event pairs around hornet's kernel launches and the batch paths' stages."""
    import hornet.core.cuda as C
    from bench.tools.profile_large_gpu import wrap_large
    prepared_call = C.PreparedLaunch.__call__

    def launched(self, grid, block, values, *stream):
        return clock.span("kernel " + _kernel_name(self.fn), prepared_call, self, grid,
                          block, values, *stream)

    C.PreparedLaunch.__call__ = launched
    clock._undo.append((C.PreparedLaunch, "__call__", prepared_call))
    import importlib
    for mod_name in ("hornet.core.cuda", "hornet.batch.gpu.kernels", "hornet.memory.gpu_bit_tree",
                     "hornet.memory.gpu_copy", "hornet.memory.gpu_repoint",
                     "hornet.batch.gpu.medium"):
        mod = importlib.import_module(mod_name)
        if getattr(mod, "launch", None) is C.launch:
            clock.wrap(mod, "launch", lambda a: "kernel " + _kernel_name(a[0]))

    # the stages of profile_large_gpu, recorded by events instead of synchronizations
    class _Stages:
        @staticmethod
        def wrap(module, name, label=None):
            clock.wrap(module, name, (lambda a, lab=label: "stage " + lab(a)) if callable(label)
                       else "stage " + (label or name))

    wrap_large(_Stages())
    from hornet.batch import medium_path as MP
    from hornet.batch.gpu import medium as M
    from hornet.memory import gpu_bit_tree, manager
    for name in ("prepare", "rewrite"):
        clock.wrap(M.MediumBatches, name, f"stage medium: {name}")
    clock.wrap(MP, "medium_update", "stage medium_update")
    clock.wrap(MP, "compact_memory", "stage medium: compact_memory")
    for name in ("_plan", "_commit_plans", "_released", "_drop_empty"):
        clock.wrap(manager.MemoryManager, name, f"stage memory: {name}")
    for name in ("take_forest", "take_arrays", "take_rows", "new_tree", "_launch_release"):
        clock.wrap(gpu_bit_tree, name, f"stage bit trees: {name}")
    clock.wrap(manager, "BlockArray", "stage memory: new BlockArray")


def run(g, sizes, repeats: int, clock: EventClock, top: int) -> None:
    import cupy
    n = g.num_vertices
    es, ed = g.edges()
    rs = cupy.random.RandomState(5)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    for b in sizes:
        ins = [(rs.randint(0, n, b, dtype=cupy.int64), rs.randint(0, n, b, dtype=cupy.int64))
               for _ in range(repeats + 1)]
        dels = [(es[p], ed[p]) for p in (rs.randint(0, es.size, b, dtype=cupy.int64)
                                         for _ in range(repeats + 1))]
        for op, batches in (("insert", ins), ("delete", dels)):
            totals = defaultdict(lambda: [0.0, 0.0, 0])
            times, host = [], []
            for i, (s, d) in enumerate(batches):
                cupy.cuda.Device().synchronize()
                clock.enabled = i > 0
                t = time.perf_counter()
                start.record()
                c = g.insert_edges(s, d) if op == "insert" else g.delete_edges(s, d)
                end.record()
                h = time.perf_counter() - t
                clock.enabled = False
                end.synchronize()
                spans = clock.collect()
                if i:
                    times.append(cupy.cuda.get_elapsed_time(start, end) * 1e3)
                    host.append(h * 1e6)
                    for k, v in spans.items():
                        row = totals[k]
                        for j in range(3):
                            row[j] += v[j]
                if op == "insert":
                    g.delete_edges(c.src, c.dst)
                else:
                    g.insert_edges(c.src, c.dst)
            busy = sum(v[0] for k, v in totals.items() if k.startswith("kernel "))
            print(f"  {op} {b:>9}: events {statistics.median(times):8.0f} us (median of "
                  f"{repeats}; host {statistics.median(host):.0f}); hornet kernels "
                  f"{busy / repeats * 1e6:.0f} us of device time per batch", flush=True)
            for k, v in sorted(totals.items(), key=lambda kv: -kv[1][0])[:top]:
                print(f"      {k[:64]:64} dev {v[0] / repeats * 1e6:8.0f}  host "
                      f"{v[1] / repeats * 1e6:7.0f} us  x{v[2] / repeats:.1f}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.device_spans_gpu",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", type=int, nargs="+", default=[24])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10**4, 10**5, 10**6])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args(argv)
    require_gpu("device_spans_gpu")
    import cupy
    print(f"device: {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
    clock = EventClock(cupy)
    install(clock)
    for scale in args.scales:
        t = time.perf_counter()
        src, dst = kronecker(scale, seed=scale, xp=cupy)
        g = hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False,
                                    device="gpu")
        cupy.cuda.Device().synchronize()
        del src, dst
        print(f"Kronecker {scale}: {g.num_edges} edges, built in "
              f"{time.perf_counter() - t:.1f} s", flush=True)
        run(g, args.sizes, args.repeats, clock, args.top)
        del g
        cupy.get_default_memory_pool().free_all_blocks()
    clock.restore()


if __name__ == "__main__":
    main()
