"""Host time against device time of a GPU stream replay's batches, batch by batch.

    python3 -m bench.tools.replay_split_gpu [--streams ...] [--batch-sizes 1000 10000]

The replay's graph calls (``streams.replay._apply_batch``: directed, no window, no analytics,
deferred inserts, as ``bench replay_devices`` makes them) run with the device drained before
each batch: per batch the host's time to queue it (the call's wall clock), the device's span
of its work (CUDA events before and after the call, the device idle at the first) and the
batch's total until the device is done. Medians over the batches after the first. Where the
device span exceeds the host time, the replay is bound by the device.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import hornet
from bench.tools.ab_replay_gpu import STREAMS, _batches
from streams.replay import GROWTH_SLOTS, _apply_batch


def split(name: str, batch: int) -> str:
    import cupy
    evs, weighted, has_op = _batches(name, batch)
    out = []
    for _ in range(2):                               # the first replay warms up
        g = hornet.Graph(directed=True, device="gpu",
                         edge_properties={"weight": np.float64} if weighted else {})
        if not has_op:
            g.set_array_growth(GROWTH_SLOTS)
        g.defer_inserts(ready=True)
        stream = cupy.cuda.get_current_stream()
        host, dev, total = [], [], []
        for ev in evs:
            stream.synchronize()
            e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
            t0 = time.perf_counter()
            e0.record(stream)
            changes, _ = _apply_batch(g, ev, True, None, weighted, "")
            t1 = time.perf_counter()
            e1.record(stream)
            e1.synchronize()
            len(changes.inserted)
            t2 = time.perf_counter()
            host.append(t1 - t0)
            dev.append(cupy.cuda.get_elapsed_time(e0, e1) / 1e3)
            total.append(t2 - t0)
        out = [statistics.median(x[1:] or x) * 1e6 for x in (host, dev, total)]
    return (f"| {name} | {batch} | {len(evs)} | {out[0]:.0f} | {out[1]:.0f} | {out[2]:.0f} |")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.replay_split_gpu",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--streams", nargs="+", default=STREAMS)
    ap.add_argument("--batch-sizes", nargs="+", type=int, default=[1000, 10000])
    a = ap.parse_args(argv)
    print("| stream | batch | batches | host us | device span us | total us |")
    print("|---|---|---|---|---|---|")
    for name in a.streams:
        for b in a.batch_sizes:
            print(split(name, b), flush=True)


if __name__ == "__main__":
    main()
