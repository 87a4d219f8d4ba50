"""DynamicBFS on the GPU: where an update's time outside its kernel goes, in the benchmark's
pattern.

    PYTHONPATH=. python3 bench/tools/dbfs_outside.py [--scales 22 24]
        [--batches 1000 10000 100000] [--kinds delete] [--repeats 5]
        [--configs default "small_max=16" ...] [--name dynamic_bfs_gpu_outside]

As bench/dynamic_bfs.py: a Kronecker graph on the device (undirected, source the vertex of
largest degree); for every kind, batch size and repeat one batch (deletions: edges of the graph
picked uniformly; insertions: uniform random pairs) is applied to the graph untimed, the update
is timed by CUDA events around ``DynamicBFS.update`` (the kernel's span read from its timeline,
the call's host time by the host clock), and the batch is undone (with its update). Each
repeat applies the batch once per variant, the variants taking turns at going first:

- ``plain``: the update as the benchmark times it, once per configuration (``GPUState``
  settings as "name=value,..."; ``default``: the class defaults), with the static ``bfs``
  timed after it (``--static-samples`` calls);
- ``probe`` (first configuration): the driver's launch call wrapped: a CUDA event recorded
  right before it and the host clock after that record and after the call, which give the
  Python before the launch (the event's record included), the driver call, and on the device
  the time from the start event to the launch and from the launch to the end event less the
  kernel's span (the driver call, the launch latency and the kernel's first and last
  microseconds, outside its timeline);
- ``synced``: the device synchronised between the change and the start event (the host time of
  that synchronisation: the change's work still queued when ``update`` is called);
- ``warm``: the update's host path run once right before the timed call with the launch
  replaced by nothing (the state's counter-set parity restored), so that its code and data
  are in the caches: the host time of a warm call in the same pattern.

Levels are compared with the static ``bfs`` after the first repeat of every configuration.
Writes ``<results>/<name>.md``.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from bench.common import RESULTS, table_lines
from bench.dynamic_bfs import draw_batch
from bench.tools.dbfs_ab import apply_settings, kron_dynamic_bfs, parse_settings

HEADER = ["graph", "kind", "batch", "variant", "update us", "kernel us", "outside us",
          "host us", "python before launch us", "driver launch us", "start to launch us",
          "launch to end - kernel us", "sync before us", "static us", "speedup",
          "phases us (barriers)"]


def run_scale(scale: int, args, rows: list, graphs: list) -> None:
    import cupy
    import hornet.testing
    from hornet.algos import bfs

    g, bf, source, name_g = kron_dynamic_bfs(scale, args.seed, graphs)
    state = bf._state
    configs = {c: parse_settings(c) for c in args.configs}
    keys = {k for v in configs.values() for k in v}
    rng = np.random.default_rng(args.seed)
    drv = cupy.cuda.driver
    real = drv.launchKernel, drv.launchCooperativeKernel
    probe = {}

    def apply(settings):
        apply_settings(state, settings, keys)

    def wrapped(fn):
        def call(*a):
            probe["pre"].record()
            probe["t_launch"] = time.perf_counter()
            fn(*a)
            probe["t_launched"] = time.perf_counter()
        return call

    def batch(kind, size):
        return draw_batch(rng, g, kind, size, cupy)

    def ops(kind):
        return (g.insert_edges, g.delete_edges) if kind == "insert" else \
            (g.delete_edges, g.insert_edges)

    for settings in configs.values():            # warm-up: every configuration's kernel
        apply(settings)
        for kind in ("insert", "delete"):
            op, undo = ops(kind)
            ch = op(*batch(kind, 10))
            bf.update(ch)
            bf.update(undo(ch.src, ch.dst))
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    probe["pre"] = cupy.cuda.Event()
    first = args.configs[0]
    variants = [("plain", c) for c in args.configs] + \
        [(v, first) for v in ("probe", "synced", "warm")]
    for kind in args.kinds:
        op, undo = ops(kind)
        for size in args.batches:
            per = {v: {k: [] for k in HEADER[4:13]} for v in variants}
            phases = {v: [] for v in variants}
            static = []
            for r in range(args.repeats):
                bs, bd = batch(kind, size)
                order = variants[r % len(variants):] + variants[:r % len(variants)]
                for var in order:
                    vname, cname = var
                    apply(configs[cname])
                    ch = op(bs, bd)
                    m = per[var]
                    sync_us = float("nan")
                    if vname == "synced":
                        t = time.perf_counter()
                        cupy.cuda.Device().synchronize()
                        sync_us = (time.perf_counter() - t) * 1e6
                    if vname == "warm":
                        keep = (state.parity, getattr(state, "_set", 0), state._pending)
                        drv.launchKernel = drv.launchCooperativeKernel = lambda *a: None
                        try:
                            bf.update(ch)
                        finally:
                            drv.launchKernel, drv.launchCooperativeKernel = real
                        state.parity, state._set, state._pending = keep
                    if vname == "probe":
                        drv.launchKernel = wrapped(real[0])
                        drv.launchCooperativeKernel = wrapped(real[1])
                    try:
                        start.record()
                        t0 = time.perf_counter()
                        bf.update(ch)
                        t1 = time.perf_counter()
                        end.record()
                        end.synchronize()
                    finally:
                        drv.launchKernel, drv.launchCooperativeKernel = real
                    upd = cupy.cuda.get_elapsed_time(start, end) * 1e3
                    line = state.timeline()
                    kern = sum(us for _, us in line)
                    split, count = {}, {}
                    for ph, us in line:
                        split[ph] = split.get(ph, 0.0) + us
                        count[ph] = count.get(ph, 0) + 1
                    phases[var].append((split, count))
                    m["update us"].append(upd)
                    m["kernel us"].append(kern)
                    m["outside us"].append(upd - kern)
                    m["host us"].append((t1 - t0) * 1e6)
                    m["sync before us"].append(sync_us)
                    if vname == "probe":
                        m["python before launch us"].append((probe["t_launch"] - t0) * 1e6)
                        m["driver launch us"].append(
                            (probe["t_launched"] - probe["t_launch"]) * 1e6)
                        m["start to launch us"].append(
                            cupy.cuda.get_elapsed_time(start, probe["pre"]) * 1e3)
                        m["launch to end - kernel us"].append(
                            cupy.cuda.get_elapsed_time(probe["pre"], end) * 1e3 - kern)
                    if r == 0 and vname == "plain":
                        want = hornet.testing.to_host(bfs(g, source))
                        if not np.array_equal(hornet.testing.to_host(bf.levels), want):
                            raise AssertionError(f"levels differ from bfs: {cname}, {kind} "
                                                 f"{size}")
                    if var == variants[0]:
                        for _ in range(args.static_samples):
                            start.record()
                            bfs(g, source)
                            end.record()
                            end.synchronize()
                            static.append(cupy.cuda.get_elapsed_time(start, end) * 1e3)
                    bf.update(undo(ch.src, ch.dst))
            st = statistics.median(static)
            for (vname, cname), m in per.items():
                med = {k: (statistics.median(v) if v and not np.isnan(v).all() else "")
                       for k, v in m.items()}
                label = vname if len(args.configs) == 1 else f"{vname} ({cname})"
                ph = phases[(vname, cname)]
                names = list(dict.fromkeys(p for sp, _ in ph for p in sp))
                split = ", ".join(
                    f"{p} {statistics.median(sp.get(p, 0.0) for sp, _ in ph):.1f} "
                    f"({statistics.median(c.get(p, 0) for _, c in ph):g})" for p in names)
                rows.append([name_g, kind, size, label] +
                            [round(med[k], 1) if med[k] != "" else "" for k in HEADER[4:13]] +
                            [round(st, 1), round(st / med["update us"], 1), split])
                print(table_lines(HEADER, [rows[-1]])[-1], flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", type=int, nargs="+", default=[22, 24])
    ap.add_argument("--batches", type=int, nargs="+", default=[1000, 10_000, 100_000])
    ap.add_argument("--kinds", nargs="+", default=["delete"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--static-samples", type=int, default=3)
    ap.add_argument("--configs", nargs="+", default=["default"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--name", default="dynamic_bfs_gpu_outside")
    args = ap.parse_args(argv)
    import cupy
    rows, graphs = [], []
    for scale in args.scales:
        run_scale(scale, args, rows, graphs)
        cupy.get_default_memory_pool().free_all_blocks()
    props = cupy.cuda.runtime.getDeviceProperties(0)
    dev = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    parts = __doc__.split("\n\n")
    text = ["# DynamicBFS GPU: the update's time outside its kernel", "",
            " ".join(parts[2].split()), "", parts[3], "", " ".join(parts[4].split()), "",
            f"- GPU: {dev}",
            f"- command: `python bench/tools/dbfs_outside.py "
            f"{' '.join(sys.argv[1:] if argv is None else argv)}`",
            *[f"- graph {x}" for x in graphs],
            "- medians over the repeats; update us: CUDA events around the call; kernel us: "
            "the timeline's span; outside us: update - kernel; host us: the call by the host "
            "clock; static us: bfs(g, source) by CUDA events; speedup: static / update",
            "", *table_lines(HEADER, rows), ""]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text("\n".join(text))


if __name__ == "__main__":
    main()
