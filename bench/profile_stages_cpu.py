"""Where a CPU batch spends its time: per-stage medians for inserts and deletes of random
batches into Kronecker scale 20 (or another scale), the graph restored after each batch.

    PYTHONPATH=. python3 bench/profile_stages_cpu.py [--scale 20] [--sizes 100000,1000000] [--reps 7]

Stages are the kernel-module functions and memory-manager methods that Graph's batch path
calls, wrapped with timers (so each stage's time includes its Python glue); 'total' is the
whole insert_edges / delete_edges call; 'other' is total minus the stages.
"""
from __future__ import annotations

import argparse
import functools
import time
from collections import defaultdict

import numpy as np

import hornet
import hornet.graph as G
from hornet.batch import cpu_kernels as K
from hornet.generators import kronecker_edges

ACC = defaultdict(float)
_DEPTH = [0]


def timed(name, fn):
    @functools.wraps(fn)
    def run(*a, **k):
        if _DEPTH[0]:
            return fn(*a, **k)
        _DEPTH[0] += 1
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            ACC[name] += time.perf_counter() - t
            _DEPTH[0] -= 1
    return run


def instrument(g):
    for name in ("sorted_unique_pairs", "find_positions", "keep_entries", "plan_segments",
                 "merge_lists", "remove_lists", "commit_segments", "canonical_pairs",
                 "read_at", "plan_insert", "block_requests", "place_blocks", "merge_insert",
                 "changed_pairs", "plan_delete", "remove_fused"):
        setattr(K, name, timed(name, getattr(K, name)))
    G.edge_batch = timed("edge_batch", G.edge_batch)
    G.property_values = timed("property_values", G.property_values)
    mm = g._mm
    for name in ("allocate_classes", "allocate_counts", "release", "compact_touched",
                 "size_class_for"):
        setattr(mm, name, timed("mm." + name, getattr(mm, name)))
    cls = type(g)
    cls._compact_memory = timed("compact_memory", cls._compact_memory)
    cls._columns = timed("columns", cls._columns)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--ops", default="insert,delete")
    args = ap.parse_args()
    s, d = kronecker_edges(args.scale, edge_factor=16, seed=1)
    t = time.perf_counter()
    g = hornet.Graph.from_edges(s, d, directed=False, device="cpu")
    print(f"built {g.num_edges} edges in {time.perf_counter() - t:.1f} s", flush=True)
    n = g.num_vertices
    es, ed = g.edges()
    rng = np.random.default_rng(7)
    for _ in range(3):   # warm-up: compile / load every kernel
        c = g.insert_edges(rng.integers(0, n, 100_000), rng.integers(0, n, 100_000))
        g.delete_edges(c.src, c.dst)
    instrument(g)
    for b in [int(x) for x in args.sizes.split(",")]:
        for op in args.ops.split(","):
            rows = defaultdict(list)
            for _ in range(args.reps):
                if op == "insert":
                    bs, bd = rng.integers(0, n, b), rng.integers(0, n, b)
                else:
                    p = rng.choice(es.size, size=b, replace=False)
                    bs, bd = es[p].astype(np.int64), ed[p].astype(np.int64)
                ACC.clear()
                t = time.perf_counter()
                c = (g.insert_edges if op == "insert" else g.delete_edges)(bs, bd)
                total = time.perf_counter() - t
                stages = dict(ACC)
                (g.delete_edges if op == "insert" else g.insert_edges)(c.src, c.dst)
                rows["total"].append(total)
                for k, v in stages.items():
                    rows[k].append(v)
                rows["other"].append(total - sum(stages.values()))
            med = {k: 1e3 * float(np.median(v + [0.0] * (args.reps - len(v))))
                   for k, v in rows.items()}
            print(f"{op} {b}: total {med.pop('total'):.2f} ms  (min "
                  f"{1e3 * min(rows['total']):.2f}) | " +
                  ", ".join(f"{k} {v:.2f}" for k, v in sorted(med.items(), key=lambda x: -x[1])),
                  flush=True)
    g.check()


if __name__ == "__main__":
    main()
