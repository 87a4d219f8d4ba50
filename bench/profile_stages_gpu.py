"""Where a large GPU batch spends its time: each stage of insert / delete timed on its own
(device synchronized around every wrapped call; times are inclusive, so a stage called inside
another (mm.allocate inside _allocate_for) counts in both; totals exceed the unwrapped batch
time by the syncs).

    PYTHONPATH=. python3 bench/profile_stages_gpu.py [scale] [batch] [reps]
"""
import collections
import functools
import sys
import time

import cupy

import hornet
from hornet import graph as graph_mod
from hornet.batch import gpu_kernels
from hornet.generators import kronecker_edges
from hornet.memory import manager

scale = int(sys.argv[1]) if len(sys.argv) > 1 else 24
batch = int(sys.argv[2]) if len(sys.argv) > 2 else 10**7
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
TIMES = collections.defaultdict(float)
CALLS = collections.Counter()


def timed(owner, name, label):
    fn = getattr(owner, name)

    @functools.wraps(fn)
    def wrapper(*a, **k):
        cupy.cuda.Device().synchronize()
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            cupy.cuda.Device().synchronize()
            TIMES[label] += time.perf_counter() - t
            CALLS[label] += 1
    setattr(owner, name, wrapper)


G = graph_mod.Graph
for name in ("_unique_pairs", "_allocate_for", "_retire", "_compact_memory", "_change",
             "_reserve"):
    timed(G, name, name)
for name in ("find_positions", "merge_lists", "remove_lists", "read_at"):
    timed(gpu_kernels, name, name)
for name in ("allocate", "release", "compact", "field_addresses"):
    timed(manager.MemoryManager, name, "mm." + name)
timed(graph_mod, "_segments", "_segments")
timed(graph_mod, "edge_batch", "edge_batch (validate)")

if "SMALL_MOVE" in __import__("os").environ:        # experiment: list-rewrite thresholds
    gpu_kernels.SMALL_MOVE = int(__import__("os").environ["SMALL_MOVE"])
    gpu_kernels.WARP_MOVE = int(__import__("os").environ.get("WARP_MOVE", gpu_kernels.WARP_MOVE))
    print(f"SMALL_MOVE {gpu_kernels.SMALL_MOVE}, WARP_MOVE {gpu_kernels.WARP_MOVE}")
src, dst = kronecker_edges(scale, seed=scale, xp=cupy)
g = hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False, device="gpu")
n = g.num_vertices
rs = cupy.random.RandomState(3)
print(f"scale {scale}: {g.num_edges} edges; batch {batch}", flush=True)
INS = collections.defaultdict(float)
DEL = collections.defaultdict(float)


def add_since(mark, into):
    for k, v in TIMES.items():
        into[k] += v - mark.get(k, 0.0)


for phase in ("warm", "timed"):
    INS.clear()
    DEL.clear()
    tot = collections.defaultdict(float)
    for _ in range(1 if phase == "warm" else reps):
        s = rs.randint(0, n, batch, dtype=cupy.int64)
        d = rs.randint(0, n, batch, dtype=cupy.int64)
        cupy.cuda.Device().synchronize()
        mark = dict(TIMES)
        t = time.perf_counter()
        c = g.insert_edges(s, d)
        cupy.cuda.Device().synchronize()
        tot["insert"] += time.perf_counter() - t
        add_since(mark, INS)
        mark = dict(TIMES)
        t = time.perf_counter()
        g.delete_edges(c.src, c.dst)
        cupy.cuda.Device().synchronize()
        tot["delete"] += time.perf_counter() - t
        add_since(mark, DEL)
    if phase == "timed":
        print(f"insert total {tot['insert'] / reps * 1e3:.2f} ms, delete total "
              f"{tot['delete'] / reps * 1e3:.2f} ms (per batch, with stage syncs)")
        for label, acc in (("insert", INS), ("delete", DEL)):
            print(f"{label} stages (ms per batch):")
            for k, v in sorted(acc.items(), key=lambda kv: -kv[1]):
                if v:
                    print(f"  {k:28s} {v / reps * 1e3:8.2f}")
