"""Per-batch time of a stream replay's graph calls, pipelined and drained, with the host's
per-function profile: where a GPU replay batch's time goes.

    python3 -m bench.tools.replay_steps_gpu [--streams ...] [--batch-sizes 1000 10000]
        [--rounds 3] [--profile CollegeMsg:1000 ...] [--top 25] [--device gpu]

The replay's graph calls (``streams.replay._apply_batch`` and the lazy report rows of
``streams.batch_rows``, as ``bench replay_devices`` makes them: directed, no window, no
analytics, the replay's array growth, reserve, deferred inserts and weighted path) on fresh
graphs, one
untimed replay first. Per stream and batch size:

- pipelined: each batch's wall clock (graph calls and the row's count read), median over
  ``--rounds`` replays, and the final count read (a wait for the device);
- drained: the device synchronized before each batch; the host's time to queue the batch
  and the time until the device is done (medians over the batches after the first);
- the graph's counters (deferred batches, stalls, refills, block arrays).

``--profile STREAM:BATCH``: a cProfile of one pipelined replay, its top functions by own
time in microseconds per batch.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import time

import numpy as np

import hornet
from bench.tools.ab_replay_gpu import STREAMS, _batches, _counters
from streams.batch_rows import BatchRows
from streams.replay import GROWTH_SLOTS, _apply_batch
from streams.weighted_batch import LatestPath


def _graph(device: str, evs, weighted: bool, has_op: bool):
    g = hornet.Graph(directed=True, device=device,
                     edge_properties={"weight": np.float64} if weighted else {})
    if not has_op:
        g.set_array_growth(GROWTH_SLOTS)
    g.defer_inserts(ready=True, batch_entries=max(len(e) for e in evs))
    hi = max(int(max(e.src.max(), e.dst.max())) for e in evs)
    g.reserve(num_vertices=hi + 1, num_edges=sum(len(e) for e in evs))
    _sync(g)
    return g


def _sync(g) -> None:
    if g.device == "gpu":
        import cupy
        cupy.cuda.get_current_stream().synchronize()


def pipelined(device: str, evs, weighted: bool, has_op: bool, prof=None):
    """(per-batch seconds, final read seconds, graph) of one replay of ``evs``; ``prof``: a
    cProfile.Profile enabled around the batches."""
    g = _graph(device, evs, weighted, has_op)
    if prof is not None:
        prof.enable()
    out = {k: [] for k in ("batch", "inserted", "deleted", "expired", "edges")}
    rows = BatchRows(out, dict(inserted=0, deleted=0, expired=0), g, lazy=True)
    times = []
    latest = LatestPath()
    for i, ev in enumerate(evs):
        t = time.perf_counter()
        changes, _ = _apply_batch(g, ev, True, None, weighted, "", latest=latest)
        rows.add({"batch": i}, changes)
        times.append(time.perf_counter() - t)
    t = time.perf_counter()
    rows.close()
    if prof is not None:
        prof.disable()
    return times, time.perf_counter() - t, g


def drained(device: str, evs, weighted: bool, has_op: bool):
    """(host seconds per batch, total seconds per batch) with the device idle before each."""
    g = _graph(device, evs, weighted, has_op)
    host, total = [], []
    latest = LatestPath()
    for ev in evs:
        _sync(g)
        t0 = time.perf_counter()
        changes, _ = _apply_batch(g, ev, True, None, weighted, "", latest=latest)
        t1 = time.perf_counter()
        len(changes.inserted)
        if changes.updated is not None:
            len(changes.updated)
        _sync(g)
        host.append(t1 - t0)
        total.append(time.perf_counter() - t0)
    return host, total


def _fmt(xs) -> str:
    return "[" + " ".join(f"{x * 1e6:.0f}" for x in xs) + "]"


def measure(device: str, name: str, batch: int, rounds: int) -> None:
    evs, weighted, has_op = _batches(name, batch)
    nb = len(evs)
    pipelined(device, evs, weighted, has_op)                  # warm
    runs = [pipelined(device, evs, weighted, has_op) for _ in range(rounds)]
    per = np.median(np.array([r[0] for r in runs]), axis=0)
    fin = statistics.median(r[1] for r in runs)
    tot = statistics.median(sum(r[0]) + r[1] for r in runs)
    host, total = drained(device, evs, weighted, has_op)
    head = per if nb <= 12 else per[:6]
    rest = per[6:] if nb > 12 else per[1:]
    print(f"{name} b={batch} {device}: {nb} batches, {tot / nb * 1e6:.0f} us/batch "
          f"(final read {fin * 1e6:.0f}); per batch {_fmt(head)}"
          + (f" rest median {np.median(rest) * 1e6:.0f} p90 "
             f"{np.percentile(rest, 90) * 1e6:.0f} max {rest.max() * 1e6:.0f}" if nb > 12
             else "")
          + f"; drained host {statistics.median(host[1:] or host) * 1e6:.0f} total "
          f"{statistics.median(total[1:] or total) * 1e6:.0f} first {host[0] * 1e6:.0f}/"
          f"{total[0] * 1e6:.0f}", flush=True)
    if device == "gpu":
        print(f"   ({_counters(runs[-1][2])})", flush=True)


def profile(device: str, name: str, batch: int, top: int) -> None:
    evs, weighted, has_op = _batches(name, batch)
    pipelined(device, evs, weighted, has_op)
    pr = cProfile.Profile()
    times, fin, _ = pipelined(device, evs, weighted, has_op, pr)
    nb = len(evs)
    s = io.StringIO()
    st = pstats.Stats(pr, stream=s)
    rows = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[:top]
    print(f"-- profile {name} b={batch}: {nb} batches, {(sum(times) + fin) / nb * 1e6:.0f} "
          "us/batch under cProfile; own us/batch, cumulative us/batch, calls/batch, function")
    for (file, line, fn), (cc, nc, tt, ct, _) in rows:
        short = "/".join(file.split("/")[-2:])
        print(f"   {tt / nb * 1e6:7.1f} {ct / nb * 1e6:7.1f} {nc / nb:5.1f}  {short}:{line} {fn}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.replay_steps_gpu",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--streams", nargs="*", default=STREAMS)
    ap.add_argument("--batch-sizes", nargs="+", type=int, default=[1000, 10000])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profile", nargs="*", default=[])
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--device", default="gpu")
    a = ap.parse_args(argv)
    from hornet.core import jit
    jit.parallel_policy = "never"
    for name in a.streams:
        for b in a.batch_sizes:
            measure(a.device, name, b, a.rounds)
    for spec in a.profile:
        name, _, b = spec.partition(":")
        profile(a.device, name, int(b), a.top)


if __name__ == "__main__":
    main()
