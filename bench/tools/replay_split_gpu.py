"""Host time against device time of a GPU stream replay's batches.

    python3 -m bench.tools.replay_split_gpu [--streams ...] [--batch-sizes 1000 10000]

The replay's graph calls (``streams.replay._apply_batch``: directed, no window, no analytics,
deferred inserts, as ``bench replay_devices`` makes them, and the lazy rows of
``streams.batch_rows``), per stream and batch size, the second of two replays:

- drained: the device idle before each batch; per batch the host's time to queue it (the
  call's wall clock), the total until the device is done, and per kernel of the deferred
  path (and the staged copy of the batch's values) its device time (CUDA events around each
  launch);
- pipelined: as a replay runs (no drain); per batch the total, and of it the host's waits
  for a header (``DeferredBatches.header`` on a batch not done), the refill steps
  (``_refill_step``: they settle every queued batch first) and the rows' count reads.

Medians over the batches after the first (per-kernel figures: means per batch).
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

import numpy as np

import hornet
from bench.tools.ab_replay_gpu import STREAMS, _batches
from hornet.batch import deferred_path
from hornet.batch.gpu import deferred as gpu_deferred
from hornet.core import cuda as core_cuda
from streams.batch_rows import BatchRows
from streams.replay import GROWTH_SLOTS, _apply_batch

_kernel = defaultdict(float)     # label -> device seconds (drained mode)
_wait = defaultdict(float)       # label -> host seconds (pipelined mode)
_state = {"events": False}


def _wrap_launches(cupy) -> None:
    """CUDA events around every PreparedLaunch launch and DeferredBatches.stage."""
    def timed(fn, label_of):
        def run(self, *a, **k):
            if not _state["events"]:
                return fn(self, *a, **k)
            stream = cupy.cuda.get_current_stream()
            e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
            e0.record(stream)
            out = fn(self, *a, **k)
            e1.record(stream)
            e1.synchronize()
            _kernel[label_of(self)] += cupy.cuda.get_elapsed_time(e0, e1) / 1e3
            return out
        return run
    label = (lambda self: getattr(self, "_label", "other launch"))
    core_cuda.PreparedLaunch.again = timed(core_cuda.PreparedLaunch.again, label)
    core_cuda.PreparedLaunch.__call__ = timed(core_cuda.PreparedLaunch.__call__, label)
    gpu_deferred.DeferredBatches.stage = timed(gpu_deferred.DeferredBatches.stage,
                                               lambda self: "stage (values copy)")


def _wrap_waits() -> None:
    header = gpu_deferred.DeferredBatches.header

    def timed_header(self, slot):
        if self.ready(slot):
            return header(self, slot)
        t = time.perf_counter()
        out = header(self, slot)
        _wait["header waits"] += time.perf_counter() - t
        return out
    gpu_deferred.DeferredBatches.header = timed_header
    refill = deferred_path._refill_step

    def timed_refill(g, mm, cache):
        t = time.perf_counter()
        refill(g, mm, cache)
        _wait["refill steps"] += time.perf_counter() - t
    deferred_path._refill_step = timed_refill


def _graph(weighted, has_op, batch: int):
    g = hornet.Graph(directed=True, device="gpu",
                     edge_properties={"weight": np.float64} if weighted else {})
    if not has_op:
        g.set_array_growth(GROWTH_SLOTS)
    g.defer_inserts(ready=True, batch_entries=batch)
    return g


def split(name: str, batch: int) -> list[str]:
    import cupy
    evs, weighted, has_op = _batches(name, batch)
    nb = len(evs)
    stream = cupy.cuda.get_current_stream()
    for _ in range(2):                               # drained; the first replay warms up
        g = _graph(weighted, has_op, batch)
        _kernel.clear()
        host, total = [], []
        for i, ev in enumerate(evs):
            stream.synchronize()
            if i == 1:
                for k, launch in g._deferred._launches.items():
                    launch._label = k
                _state["events"] = True
            t0 = time.perf_counter()
            changes, _ = _apply_batch(g, ev, True, None, weighted, "")
            t1 = time.perf_counter()
            stream.synchronize()
            len(changes.inserted)
            total.append(time.perf_counter() - t0)
            host.append(t1 - t0)
        _state["events"] = False
    kern = ", ".join(f"{k} {v / max(nb - 1, 1) * 1e6:.0f}" for k, v in
                     sorted(_kernel.items(), key=lambda kv: -kv[1]))
    med = [statistics.median(x[1:] or x) * 1e6 for x in (host, total)]
    lines = [f"| {name} | {batch} | drained | host {med[0]:.0f} | total {med[1]:.0f} | "
             f"device per batch (events around launches, host time included): {kern} |"]
    for _ in range(2):                               # pipelined
        g = _graph(weighted, has_op, batch)
        _wait.clear()
        out = {k: [] for k in ("batch", "inserted", "deleted", "expired", "edges")}
        rows = BatchRows(out, dict(inserted=0, deleted=0, expired=0), g, lazy=True)
        t_all = time.perf_counter()
        for i, ev in enumerate(evs):
            changes, _ = _apply_batch(g, ev, True, None, weighted, "")
            t = time.perf_counter()
            rows.add({"batch": i}, changes)
            _wait["rows"] += time.perf_counter() - t
        rows.close()
        t_all = time.perf_counter() - t_all
    waits = ", ".join(f"{k} {v / nb * 1e6:.0f}" for k, v in _wait.items())
    lines.append(f"| {name} | {batch} | pipelined | total {t_all / nb * 1e6:.0f} | "
                 f"of it per batch: {waits} | |")
    return lines


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.replay_split_gpu",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--streams", nargs="+", default=STREAMS)
    ap.add_argument("--batch-sizes", nargs="+", type=int, default=[1000, 10000])
    a = ap.parse_args(argv)
    import cupy
    _wrap_launches(cupy)
    _wrap_waits()
    print("| stream | batch | mode | us per batch | | |")
    print("|---|---|---|---|---|---|")
    for name in a.streams:
        for b in a.batch_sizes:
            for line in split(name, b):
                print(line, flush=True)


if __name__ == "__main__":
    main()
