"""DynamicBFS on the GPU: launch kinds and the one-block continuation side by side, in the
benchmark's pattern, with the host's part of each update split into Python and the driver.

    PYTHONPATH=. python3 bench/tools/dbfs_ab.py [--scales 22] [--batches 1000 10000 100000]
        [--kinds delete insert] [--repeats 7] [--configs "cooperative=False,small_max=8" ...]
        [--name dynamic_bfs_gpu_ab]

For every scale, builds a Kronecker graph on the device (undirected, source: the vertex of
largest degree, as bench/dynamic_bfs.py). For every kind, batch size and repeat it draws one batch (deletions:
edges of the graph picked uniformly; insertions: uniform random pairs), and for every
configuration in turn applies it to the graph (untimed), times ``DynamicBFS.update`` by CUDA
events (the host's own time in the call and the driver launch's host time recorded too),
reads the kernel's span from the timeline, and undoes the batch (untimed, with its update).
Levels are compared with the static ``bfs`` after the first repeat of every configuration.
Configurations: ``GPUState`` settings (by default cooperative or plain launch and the
one-block continuation off or on, and one that synchronises the device before the timed call:
is the device still busy with the graph's change when the update is called?); a setting a
configuration leaves out is the class default. Static: ``bfs(g, source)`` timed the same way,
after each repeat. Last, the host's time of the same update called back to back 50 times on
a throw-away state (warm caches).
Writes ``<results>/<name>.md`` and ``.csv``.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from bench.common import RESULTS, table_lines, write_csv
from bench.dynamic_bfs import draw_batch

#: the configurations compared by default: GPUState settings as "name=value,..." (values
#: Python literals; "sync_first=1": the device synchronised before the timed call)
CONFIGS = ["cooperative=True,one_block_max=0", "cooperative=True,one_block_max=64",
           "cooperative=True,one_block_max=255", "cooperative=False,one_block_max=0",
           "cooperative=False,one_block_max=64", "cooperative=False,one_block_max=255",
           "cooperative=True,one_block_max=64,sync_first=1"]
HEADER = ["graph", "kind", "batch", "configuration", "update us", "kernel us", "host us",
          "driver launch us", "python us", "sync before us", "static us", "speedup"]


def parse_settings(config: str) -> dict:
    """The GPUState settings of a "name=value,..." configuration ("default": none)."""
    import ast
    if config == "default":
        return {}
    settings = {}
    for item in config.split(","):
        key, value = item.split("=", 1)
        settings[key.strip()] = ast.literal_eval(value.strip())
    return settings


def _parse(config: str) -> tuple[dict, bool]:
    """(GPUState settings, synchronise first) of a "name=value,..." configuration."""
    settings = parse_settings(config)
    return settings, bool(settings.pop("sync_first", False))


def apply_settings(state, settings: dict, keys: set) -> None:
    """The settings on ``state``, every other key of ``keys`` back to its class default."""
    for k in keys:
        if k in settings:
            setattr(state, k, settings[k])
        elif k in vars(state):
            delattr(state, k)


def kron_dynamic_bfs(scale: int, seed: int, graphs: list):
    """(graph, DynamicBFS recording its timeline, source, name) on an undirected Kronecker
    graph made on the device, the source its vertex of largest degree; ``graphs`` gets a
    line describing it."""
    import cupy
    import hornet
    import hornet.generators
    import hornet.testing
    from hornet.algos.bfs.dynamic import DynamicBFS

    s, d = hornet.generators.kronecker_edges(scale, seed=seed, xp=cupy)
    g = hornet.Graph.from_edges(s, d, directed=False, device="gpu")
    del s, d
    source = int(hornet.testing.to_host(g.degree()).argmax())
    name = f"kron{scale}"
    graphs.append(f"{name}: V={g.num_vertices}, E={g.num_edges}, source {source}")
    bf = DynamicBFS(g, source)
    bf._state.record_timeline = True
    return g, bf, source, name


def run_scale(scale: int, args, configs: dict, rows: list, warm: list, graphs: list) -> None:
    import cupy
    import hornet.testing
    from hornet.algos import bfs
    from hornet.algos.bfs.dynamic import DynamicBFS

    g, bf, source, name_g = kron_dynamic_bfs(scale, args.seed, graphs)
    state = bf._state
    keys = {k for settings, _ in configs.values() for k in settings}
    rng = np.random.default_rng(args.seed)
    drv = cupy.cuda.driver
    real = {"coop": drv.launchCooperativeKernel, "plain": drv.launchKernel}
    launch_times: list = []

    def coop(*a):
        t = time.perf_counter()
        real["coop"](*a)
        launch_times.append(time.perf_counter() - t)

    def plain(*a):
        t = time.perf_counter()
        real["plain"](*a)
        launch_times.append(time.perf_counter() - t)

    def batch(kind, size):
        return draw_batch(rng, g, kind, size, cupy)

    def ops(kind):
        return (g.insert_edges, g.delete_edges) if kind == "insert" else \
            (g.delete_edges, g.insert_edges)

    # warm-up: every configuration's kernel and launch path once
    for settings, _ in configs.values():
        apply_settings(state, settings, keys)
        for kind in ("insert", "delete"):
            op, undo = ops(kind)
            ch = op(*batch(kind, 10))
            bf.update(ch)
            bf.update(undo(ch.src, ch.dst))
    start, end = cupy.cuda.Event(), cupy.cuda.Event()

    def timed(fn):
        start.record()
        fn()
        end.record()
        end.synchronize()
        return cupy.cuda.get_elapsed_time(start, end) * 1e3

    timed(lambda: bfs(g, source))
    drv.launchCooperativeKernel, drv.launchKernel = coop, plain
    try:
        for kind in args.kinds:
            op, undo = ops(kind)
            for size in args.batches:
                per = {name: {"update": [], "kernel": [], "host": [], "launch": [], "sync": []}
                       for name in configs}
                static = []
                for r in range(args.repeats):
                    bs, bd = batch(kind, size)
                    # the configurations take turns at going first
                    names = list(configs)
                    names = names[r % len(names):] + names[:r % len(names)]
                    for name in names:
                        settings, sync_first = configs[name]
                        apply_settings(state, settings, keys)
                        ch = op(bs, bd)
                        sync_us = 0.0
                        if sync_first:
                            t = time.perf_counter()
                            cupy.cuda.Device().synchronize()
                            sync_us = (time.perf_counter() - t) * 1e6
                        host = []
                        launch_times.clear()

                        def call():
                            t = time.perf_counter()
                            bf.update(ch)
                            host.append(time.perf_counter() - t)
                        m = per[name]
                        m["update"].append(timed(call))
                        m["kernel"].append(sum(us for _, us in state.timeline()))
                        m["host"].append(host[0] * 1e6)
                        m["launch"].append(sum(launch_times) * 1e6)
                        m["sync"].append(sync_us)
                        if r == 0:
                            want = hornet.testing.to_host(bfs(g, source))
                            if not np.array_equal(hornet.testing.to_host(bf.levels), want):
                                raise AssertionError(f"levels differ from bfs: {name}, {kind} "
                                                     f"{size}")
                        bf.update(undo(ch.src, ch.dst))
                    static += [timed(lambda: bfs(g, source)) for _ in range(2)]
                st = statistics.median(static)
                for name, m in per.items():
                    med = {k: statistics.median(v) for k, v in m.items()}
                    rows.append([name_g, kind, size, name, round(med["update"], 1),
                                 round(med["kernel"], 1), round(med["host"], 1),
                                 round(med["launch"], 1),
                                 round(statistics.median(
                                     h - l for h, l in zip(m["host"], m["launch"])), 1),
                                 round(med["sync"], 1) if configs[name][1] else "",
                                 round(st, 1), round(st / med["update"], 1)])
                    print(table_lines(HEADER, [rows[-1]])[-1], flush=True)
    finally:
        drv.launchCooperativeKernel, drv.launchKernel = real["coop"], real["plain"]

    # the host's time warm: one change updated back to back (a throw-away state)
    for name, (settings, sync_first) in configs.items():
        if sync_first:
            continue
        scratch = DynamicBFS(g, source)
        apply_settings(scratch._state, settings, keys)
        ch = g.delete_edges(*batch("delete", 1000))
        scratch.update(ch)
        cupy.cuda.Device().synchronize()
        t = time.perf_counter()
        for _ in range(50):
            scratch.update(ch)
        warm.append(f"- {name_g}, {name}: {(time.perf_counter() - t) / 50 * 1e6:.1f} us a call")
        cupy.cuda.Device().synchronize()
        g.insert_edges(ch.src, ch.dst)
        del scratch


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", type=int, nargs="+", default=[22])
    ap.add_argument("--batches", type=int, nargs="+", default=[1000, 10_000, 100_000])
    ap.add_argument("--kinds", nargs="+", default=["delete", "insert"])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--configs", nargs="+", default=CONFIGS)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--name", default="dynamic_bfs_gpu_ab")
    args = ap.parse_args(argv)
    import cupy
    configs = {c: _parse(c) for c in args.configs}
    rows, warm, graphs = [], [], []
    for scale in args.scales:
        run_scale(scale, args, configs, rows, warm, graphs)
        cupy.get_default_memory_pool().free_all_blocks()
    props = cupy.cuda.runtime.getDeviceProperties(0)
    dev = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    text = ["# DynamicBFS GPU: update settings side by side", "",
            " ".join(__doc__.split("\n\n")[2].split()), "",
            f"- GPU: {dev}",
            f"- command: `python bench/tools/dbfs_ab.py {' '.join(sys.argv[1:] if argv is None else argv)}`",
            *[f"- graph {x}" for x in graphs],
            "- medians over the repeats; update us: CUDA events around the call; kernel us: the "
            "timeline's span (first to last stamp); host us: the call by the host clock; driver "
            "launch us: the driver call's own host time; python us: host - driver launch; sync "
            "before us: the device synchronisation before the call (its own configuration)",
            "", *table_lines(HEADER, rows), "",
            "Host time of one 1,000-edge delete updated 50 times back to back (warm caches, no "
            "synchronisation):", "", *warm, ""]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text("\n".join(text))
    write_csv(args.name, HEADER, rows)
    print("\n".join(text[-len(warm) - 2:]))


if __name__ == "__main__":
    main()
