"""1,000-edge GPU batches in the two cases the plain latency loop does not show, each against
the behaviour it replaced, switched in the same run (H100; wall time from the Python call to
the result, synchronized; medians):

- a graph that grows: fresh random inserts that stay; and, as the check that the same
  setting does not cost the plain loop, the insert-then-delete cycle (each batch inserted,
  timed, then deleted, timed). Block-cache rings raised at a refill to ``demand_batches`` (8,
  the default) times their class's net drain per batch versus static goals only
  (``demand_batches`` 0); refills per batch counted;
- hub lists: batches of 1,000 edges sampled uniformly from the graph's edges (so both ends
  are mostly high-degree vertices), deleted and then inserted back. Long lists copied in
  pieces to a fresh block of their class (default) versus rewritten in place by one thread
  block (``COPY_MAX_CLASS`` -1). Also the rewrite kernel alone (CUDA events around its launch).

    PYTHONPATH=. python3 bench/bench_small_cases_gpu.py [--scales 20,24] [--name NAME]
        [--cases hubs,growth,cycle]
"""
from __future__ import annotations

import argparse
import statistics
import time

import cupy
import numpy as np

from common import write_table

import hornet
from hornet.batch import gpu_small
from hornet.generators import kronecker_edges
from hornet.memory import block_cache

sync = cupy.cuda.Device().synchronize
KERNEL_EVENTS: dict[str, list] = {}
REFILLS = [0]


def instrument() -> None:
    """Count block-cache refills; time every small-path kernel with CUDA events."""
    append = block_cache.BlockCache._append

    def counting(self, amount, pool):
        REFILLS[0] += 1
        return append(self, amount, pool)

    block_cache.BlockCache._append = counting
    function = gpu_small.function

    def timed(cu, name, names):
        kernel = function(cu, name, names)

        def call(*args):
            e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
            e0.record()
            kernel(*args)
            e1.record()
            KERNEL_EVENTS.setdefault(name.split("<")[0], []).append((e0, e1))
        return call

    gpu_small.function = timed


def kernel_us(name: str) -> float:
    events = KERNEL_EVENTS.get(name)
    return cupy.cuda.get_elapsed_time(*events[-1]) * 1e3 if events else float("nan")


def wall(fn):
    sync()
    t = time.perf_counter()
    r = fn()
    len(r)
    sync()
    return r, (time.perf_counter() - t) * 1e6


def ring_goals(g, demand: int) -> None:
    """Switch the block cache's traffic raises (``demand_batches``), forgetting past ones."""
    cache = g._mm.block_cache()
    cache.demand_batches, cache.boost = demand, [0] * block_cache.NUM_CLASSES
    cache.drained[:] = 0
    cache.served[:] = 0


def growing(g, rs, batches: int, demand: int):
    ring_goals(g, demand)
    n, r0, times = g.num_vertices, REFILLS[0], []
    for _ in range(batches):
        s, d = rs.randint(0, n, 1000, dtype=cupy.int64), rs.randint(0, n, 1000, dtype=cupy.int64)
        times.append(wall(lambda: g.insert_edges(s, d))[1])
    return statistics.median(times[10:]), (REFILLS[0] - r0) / batches


def cycle(g, rs, batches: int, demand: int):
    """Insert a batch of fresh random pairs, then delete what it inserted (both timed)."""
    ring_goals(g, demand)
    n, r0, rows = g.num_vertices, REFILLS[0], []
    for _ in range(batches):
        s, d = rs.randint(0, n, 1000, dtype=cupy.int64), rs.randint(0, n, 1000, dtype=cupy.int64)
        c, t_ins = wall(lambda: g.insert_edges(s, d))
        rows.append([wall(lambda: g.delete_edges(c.src, c.dst))[1], t_ins])
    t_del, t_ins = np.median(np.array(rows[10:]), axis=0)
    return t_del, t_ins, (REFILLS[0] - r0) / batches


def hubs(g, rs, es, ed, batches: int, copy_max_class: int):
    gpu_small.COPY_MAX_CLASS = copy_max_class
    rows = []
    for _ in range(batches):
        p = rs.randint(0, es.size, 1000, dtype=cupy.int64)
        KERNEL_EVENTS.clear()
        c, t_del = wall(lambda: g.delete_edges(es[p], ed[p]))
        k_del = kernel_us("small_remove")
        KERNEL_EVENTS.clear()
        _, t_ins = wall(lambda: g.insert_edges(c.src, c.dst))
        rows.append([t_del, k_del, t_ins, kernel_us("small_merge")])
    gpu_small.COPY_MAX_CLASS = block_cache.SPARE_MAX_CLASS
    return np.median(np.array(rows[5:]), axis=0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scales", default="20,24")
    ap.add_argument("--name", default="updates_gpu_small_cases")
    ap.add_argument("--cases", default="hubs,growth,cycle")
    args = ap.parse_args()
    instrument()
    props = cupy.cuda.runtime.getDeviceProperties(0)
    device = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    rows = []
    for scale in [int(x) for x in args.scales.split(",")]:
        src, dst = kronecker_edges(scale, edge_factor=16, seed=scale, xp=cupy)
        g = hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False,
                                    device="gpu")
        del src, dst
        label = f"kron{scale} ({g.num_edges} entries)"
        rs = cupy.random.RandomState(5)
        es, ed = g.edges()
        deg = g.degree()
        touched = [int(deg[cupy.concatenate([es[p], ed[p]])].max()) for p in
                   [rs.randint(0, es.size, 1000, dtype=cupy.int64) for _ in range(5)]]
        cases = args.cases.split(",")
        if "hubs" in cases:
            hubs(g, rs, es, ed, 10, block_cache.SPARE_MAX_CLASS)    # warm-up, both ways
            hubs(g, rs, es, ed, 10, -1)
        for rnd in range(2 if "hubs" in cases else 0):               # alternated twice
            for copy_max, what in ((-1, "in place, one block (before)"),
                                   (block_cache.SPARE_MAX_CLASS, "copied in pieces (now)")):
                t_del, k_del, t_ins, k_ins = hubs(g, rs, es, ed, 45, copy_max)
                rows.append([label, f"hub lists, round {rnd + 1}: {what}",
                             f"{t_del:.0f}", f"{k_del:.0f}", f"{t_ins:.0f}", f"{k_ins:.0f}", ""])
                print(rows[-1], flush=True)
        settings = ((0, "static ring goals (demand_batches 0)"),
                    (block_cache.DEMAND_BATCHES,
                     f"goals from net drain (demand_batches {block_cache.DEMAND_BATCHES}, "
                     "default)"))
        if "cycle" in cases:
            cycle(g, rs, 20, block_cache.DEMAND_BATCHES)
        for rnd in range(2 if "cycle" in cases else 0):
            for demand, what in settings:
                t_del, t_ins, refills = cycle(g, rs, 160, demand)
                rows.append([label, f"insert then delete, round {rnd + 1}: {what}",
                             f"{t_del:.0f}", "", f"{t_ins:.0f}", "", f"{refills:.2f}"])
                print(rows[-1], flush=True)
        if "growth" in cases:
            growing(g, rs, 20, block_cache.DEMAND_BATCHES)
        for rnd in range(2 if "growth" in cases else 0):
            for demand, what in settings:
                t, refills = growing(g, rs, 160, demand)
                rows.append([label, f"graph grows, round {rnd + 1}: {what}", "", "",
                             f"{t:.0f}", "", f"{refills:.2f}"])
                print(rows[-1], flush=True)
        g.check()
        rows.append([label, f"largest degree in a hub batch (5 samples): {min(touched)}-"
                            f"{max(touched)}", "", "", "", "", ""])
        del g, es, ed, deg
        cupy.get_default_memory_pool().free_all_blocks()
    notes = f"""Device: {device}, CuPy {cupy.__version__}. Kronecker graphs (edge factor 16,
seed = scale, undirected), built on the device. Batches of 1,000 pairs (2,000 entries).
Wall: Python call to result, synchronized, median of 40 (hubs) or 150 (growth, cycle) batches;
kernel: CUDA events around the rewrite kernel's launch alone. Hub batches: pairs sampled
uniformly from the edges, deleted, then inserted back (the insert is timed too). Growth:
fresh uniformly random pairs inserted and kept. Cycle: fresh uniformly random pairs inserted,
then the inserted edges deleted (refills counted per pair of batches). "before" rows switch
the copy of hub lists off in the same process (COPY_MAX_CLASS = -1), alternated with "now";
growth and cycle rows compare demand_batches 0 (static goals) and the default
{block_cache.DEMAND_BATCHES} (goals raised by each class's net drain per batch since its last
refill), alternated."""
    write_table(args.name, "Small GPU batches: hub lists and a growing graph (1,000 edges)",
                ["graph", "case", "delete wall us", "remove kernel us", "insert wall us",
                 "merge kernel us", "refills per batch"], rows, notes)


if __name__ == "__main__":
    main()
