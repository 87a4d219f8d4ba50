"""Micro-benchmark of the GPU batch kernels (CUDA events, median after a warm-up run).

    PYTHONPATH=. python3 bench/bench_gpu_kernels.py [--vertices-log2 24] [--entries 2.7e8]
        [--batch 2e7] [--out bench/results/gpu_kernels.md]

* sorted_unique_pairs on 2*10^7 random pairs (mirror), with and without the entry order;
* find_positions and merge_lists (destinations, then with one float32 column) on a skewed
  (Kronecker-like) graph of 2^24 vertices and ~2.7*10^8 list entries: Pareto degrees
  (alpha 1.5, hubs of 10^5+ entries), sorted duplicate-free random lists, each vertex in a
  power-of-two block as in Hornet, and a batch of 2*10^7 new (src, dst) pairs whose sources
  are drawn in proportion to degree.

Timed regions include the host syncs a kernel needs (output sizes), as callers see them.
After the merge the lists are checked (sorted, duplicate-free).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import cupy as cp
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from hornet.batch import gpu_kernels as G  # noqa: E402


def timed(fn, reps=5, setup=None):
    """(median ms, min ms) over ``reps`` runs after one warm-up run; setup runs untimed."""
    times = []
    for r in range(reps + 1):
        if setup is not None:
            setup()
        cp.cuda.Device().synchronize()
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        if r:
            times.append(cp.cuda.get_elapsed_time(start, end))
    return float(np.median(times)), float(np.min(times))


def build_graph(V, entries, rng_seed=1):
    """Skewed sorted lists: (degree int32, values by owner, owner, deg_off) on the device."""
    rs = cp.random.RandomState(rng_seed)
    u = rs.random_sample(V)
    alpha = 1.5
    raw = (1.0 - u) ** (-1.0 / alpha)                    # Pareto, x_m = 1
    want = cp.minimum(cp.floor(raw * (entries / float(raw.sum())) + 0.5), 1 << 20).astype(cp.int64)
    E = int(want.sum())
    incl = cp.cumsum(want)
    owner = cp.searchsorted(incl, cp.arange(E, dtype=cp.int64), side="right")
    del incl
    keys = (owner.astype(cp.uint64) << np.uint64(32)) | \
        rs.randint(0, V, E, dtype=cp.int64).astype(cp.uint64)
    del owner
    keys = cp.sort(keys)
    keep = cp.ones(E, dtype=cp.bool_)
    keep[1:] = keys[1:] != keys[:-1]
    keys = keys[keep]
    del keep
    owner = (keys >> np.uint64(32)).astype(cp.int64)
    vals = (keys & np.uint64(0xFFFFFFFF)).astype(cp.int32)
    del keys
    degree = cp.bincount(owner, minlength=V).astype(cp.int64)
    return degree, owner, vals


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--vertices-log2", type=int, default=24)
    ap.add_argument("--entries", type=float, default=2.7e8)
    ap.add_argument("--batch", type=float, default=2e7)
    ap.add_argument("--pairs", type=float, default=2e7)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "results", "gpu_kernels.md"))
    args = ap.parse_args(argv)
    V = 1 << args.vertices_log2
    dev = cp.cuda.runtime.getDeviceProperties(0)
    name = dev["name"].decode() if isinstance(dev["name"], bytes) else str(dev["name"])
    rows = []

    def row(what, size, ms, note=""):
        med, best = ms
        rate = size / (med * 1e-3) / 1e6
        rows.append((what, f"{size:,}", f"{med:.2f}", f"{best:.2f}", f"{rate:,.0f}", note))
        print(f"{what:58s} {size:>13,} {med:9.2f} ms (min {best:.2f})  {rate:10,.0f} M/s  {note}",
              flush=True)

    # -- sorted_unique_pairs ------------------------------------------------------------
    rs = cp.random.RandomState(7)
    P = int(args.pairs)
    s = rs.randint(0, V, P, dtype=cp.int64)
    d = rs.randint(0, V, P, dtype=cp.int64)
    for nv, need in ((V, True), (V, False), (1 << 16, True)):
        ss, dd = (s, d) if nv == V else (s % nv, d % nv)
        bits = max(1, (nv - 1).bit_length())
        ib = max(1, (2 * P - 1).bit_length()) if need else 0
        path = "packed keys" if 2 * bits + ib <= 63 else "argsort fallback"
        ms = timed(lambda: G.sorted_unique_pairs(ss, dd, nv, True, need), args.reps)
        row(f"sorted_unique_pairs mirror, V=2^{bits}, order={need}", P, ms,
            f"pairs/s; {path}")
    del s, d, ss, dd
    cp.get_default_memory_pool().free_all_blocks()

    # -- graph ---------------------------------------------------------------------------
    t0 = time.perf_counter()
    degree, owner, vals = build_graph(V, args.entries)
    E = int(vals.shape[0])
    B = int(args.batch)
    rs = cp.random.RandomState(11)
    pick = rs.randint(0, E, B, dtype=cp.int64)
    cand_s = owner[pick]
    cand_d = rs.randint(0, V, B, dtype=cp.int64)
    hit_s, hit_d = owner[pick[::-1]].astype(cp.int32), vals[pick[::-1]]
    del pick
    _, bs, bd, _ = G.sorted_unique_pairs(cand_s, cand_d, V, False, need_order=False)
    del cand_s, cand_d
    deg_off = cp.zeros(V, dtype=cp.int64)
    deg_off[1:] = cp.cumsum(degree)[:-1]
    # place the old lists in power-of-two blocks with room for the batch
    # (new entries per source: counted after the find_positions filter below; bound by all)
    add_all = cp.bincount(bs.astype(cp.int64), minlength=V)
    need_cap = cp.maximum(degree + add_all, 1)
    cap = cp.left_shift(1, cp.ceil(cp.log2(need_cap.astype(cp.float64))).astype(cp.int64))
    cap = cp.where(cap < need_cap, cap * 2, cap)
    cap_off = cp.zeros(V, dtype=cp.int64)
    cap_off[1:] = cp.cumsum(cap)[:-1]
    slots = int(cap.sum())
    buf = cp.zeros(slots, dtype=cp.int32)
    rank = cp.arange(E, dtype=cp.int64) - deg_off[owner]
    buf[cap_off[owner] + rank] = vals
    del rank, deg_off, owner, vals, add_all, need_cap
    edge_ptr = buf.data.ptr + 4 * cap_off
    degree32 = degree.astype(cp.int32)
    cp.cuda.Device().synchronize()
    print(f"graph: {V:,} vertices, {E:,} entries, max degree {int(degree.max()):,}, "
          f"{slots:,} slots; built in {time.perf_counter() - t0:.1f} s", flush=True)

    # -- find_positions ------------------------------------------------------------------
    nb = int(bs.shape[0])
    ms = timed(lambda: G.find_positions(bs, bd, degree32, edge_ptr, V), args.reps)
    row("find_positions, batch pairs (mostly absent)", nb, ms, "queries/s")
    ms = timed(lambda: G.find_positions(hit_s, hit_d, degree32, edge_ptr, V), args.reps)
    row("find_positions, existing entries", int(hit_s.shape[0]), ms, "queries/s")
    pos = G.find_positions(hit_s, hit_d, degree32, edge_ptr, V)
    assert bool((pos >= 0).all()), "existing entries not found"
    del hit_s, hit_d, pos

    # -- merge_lists (in place: every block has room) ---------------------------------------
    pos = G.find_positions(bs, bd, degree32, edge_ptr, V)
    fresh = pos < 0
    ns_, nd_, insert_at = bs[fresh], bd[fresh], -1 - pos[fresh]
    del fresh, bs, bd, pos
    M = int(ns_.shape[0])
    starts = cp.flatnonzero(cp.concatenate([cp.ones(1, cp.bool_), ns_[1:] != ns_[:-1]]))
    sources = ns_[starts].astype(cp.int64)
    seg_start = starts.astype(cp.int64)
    seg_len = cp.diff(cp.concatenate([seg_start, cp.asarray([M], cp.int64)]))
    old_degree = degree[sources]
    heads = edge_ptr[sources]
    pristine = buf.copy()
    ms = timed(lambda: G.merge_lists([heads], [heads], old_degree, seg_start, seg_len,
                                     insert_at, [nd_]),
               args.reps, setup=lambda: buf.__setitem__(Ellipsis, pristine))
    row("merge_lists, destinations", M, ms,
        f"new entries/s; {int(sources.shape[0]):,} lists, "
        f"{int(old_degree.sum()):,} old entries in them, hub {int(old_degree.max()):,}")
    # check the result of the last run
    new_deg = degree.copy()
    new_deg[sources] += seg_len
    bad = cp.empty(V, dtype=cp.int8)
    G.list_violations(edge_ptr, new_deg, V, bad)
    assert int(bad.astype(cp.int64).sum()) == 0, "merged lists not sorted"
    del bad

    # -- merge_lists, destinations + float32 weights -------------------------------------
    wbuf = cp.zeros(slots, dtype=cp.float32)
    wvals = cp.random.random(M, dtype=cp.float32)
    wheads = (wbuf.data.ptr + 4 * cap_off)[sources]

    def restore():
        buf[...] = pristine
        wbuf[...] = 0
    ms = timed(lambda: G.merge_lists([heads, wheads], [heads, wheads], old_degree, seg_start,
                                     seg_len, insert_at, [nd_, wvals]),
               args.reps, setup=restore)
    row("merge_lists, destinations + float32 column", M, ms, "new entries/s")

    with open(args.out, "w", encoding="utf-8") as f:
        f.write(f"# GPU batch kernels: micro-benchmark\n\n"
                f"Device: {name}. CUDA events around each call, median (and min) of "
                f"{args.reps} runs after one warm-up run; host syncs inside the calls "
                f"included. Produced by `bench/bench_gpu_kernels.py`.\n\n"
                f"Graph: {V:,} vertices, {E:,} sorted duplicate-free list entries (Pareto "
                f"degrees, alpha 1.5, max {int(degree.max()):,}), power-of-two blocks "
                f"({slots:,} slots); batch of {B:,} (src, dst) pairs with degree-proportional "
                f"sources, {M:,} of them new.\n\n"
                "| kernel | items | median ms | min ms | M items/s | note |\n"
                "| --- | ---: | ---: | ---: | ---: | --- |\n")
        for r in rows:
            f.write("| " + " | ".join(r) + " |\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
