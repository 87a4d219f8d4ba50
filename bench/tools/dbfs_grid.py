"""DynamicBFS on the GPU: update time per launch policy, the host's part of it, and (with
``--timeline``) the kernel's time per phase.

    PYTHONPATH=. python3 bench/tools/dbfs_grid.py --scale 24 --sizes 10 10000 100000 \
        [--policies full,none 8,none 2,none full,8 full,128,dbfs_update_r85,16] [--repeats 5]
        [--timeline]

A policy is ``blocks_per_sm,pairs_per_block[,kernel_name[,small_max[,barrier_backoff_ns
[,coop|plain[,min_blocks|sm]]]]]]`` of
:class:`hornet.algos.bfs.dynamic_gpu.GPUState` (``full``/``none``: the resident grid
whatever the batch; the fields a policy leaves out take the class's defaults). The policies
take turns at going first within a repeat. For every batch size and kind
(insertions of random pairs, deletions of edges of the graph), each repeat draws one batch,
applies it, and for every policy times ``DynamicBFS.update`` (CUDA events from before the
call to after the kernel) and its host part (from the call to its return, the device idle
before it), then undoes the batch and updates again (untimed) so that every policy sees the
same graph and batch. Medians over the repeats; the static ``bfs`` of the changed graph is
timed alongside. Runs against whatever ``hornet`` is on the path, so the same file times a
baseline checkout (policies it does not know fall back to its own grid).
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _policy(text: str) -> dict:
    """The GPUState attributes a policy sets."""
    parts = text.split(",")
    out = {"blocks_per_sm": None if parts[0] == "full" else int(parts[0]),
           "pairs_per_block": None if parts[1] == "none" else int(parts[1])}
    if len(parts) > 2:
        out["kernel_name"] = parts[2]
    if len(parts) > 3:
        out["small_max"] = int(parts[3])
    if len(parts) > 4:
        out["barrier_backoff_ns"] = int(parts[4])
    if len(parts) > 5:
        out["cooperative"] = parts[5] == "coop"
    if len(parts) > 6:
        out["min_blocks"] = None if parts[6] == "sm" else int(parts[6])
    return out


_FIELDS = ("blocks_per_sm", "pairs_per_block", "kernel_name", "small_max",
           "barrier_backoff_ns", "cooperative", "min_blocks")


def _apply(state, attrs: dict) -> None:
    """Set a policy's attributes, the fields it does not name back to the class's defaults
    (so that no policy inherits another's); the resident grid is measured again only when
    its per-multiprocessor limit changed (measuring it takes driver queries, which would
    otherwise count in the next update's host part)."""
    cls = type(state)
    want = {k: attrs.get(k, getattr(cls, k)) for k in _FIELDS if hasattr(cls, k)}
    if want.get("blocks_per_sm") != getattr(state, "blocks_per_sm", None):
        state._grid = None
    for k, v in want.items():
        setattr(state, k, v)


def main(argv=None) -> None:
    import cupy
    import hornet
    import hornet.generators
    import hornet.testing
    from hornet.algos import bfs
    from hornet.algos.bfs.dynamic import DynamicBFS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 1000, 10000, 100000])
    ap.add_argument("--kinds", nargs="+", default=["insert", "delete"])
    ap.add_argument("--policies", nargs="+", default=["full,none"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--label", default="")
    ap.add_argument("--timeline", action="store_true",
                    help="also print the kernel's microseconds per phase (medians)")
    args = ap.parse_args(argv)
    policies = [(p, _policy(p)) for p in args.policies]
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    s, d = hornet.generators.kronecker_edges(args.scale, seed=1, xp=cupy)
    g = hornet.Graph.from_edges(s, d, directed=False, device="gpu")
    del s, d
    source = int(hornet.testing.to_host(g.degree()).argmax())
    bf = DynamicBFS(g, source)
    state = bf._state
    rng = np.random.default_rng(1)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()

    def timed_update(ch):
        cupy.cuda.Device().synchronize()
        start.record()
        t = time.perf_counter()
        bf.update(ch)
        host = time.perf_counter() - t
        end.record()
        end.synchronize()
        return cupy.cuda.get_elapsed_time(start, end) * 1e3, host * 1e6

    def static_us():
        cupy.cuda.Device().synchronize()
        start.record()
        bfs(g, source)
        end.record()
        end.synchronize()
        return cupy.cuda.get_elapsed_time(start, end) * 1e3

    if args.timeline:
        state.record_timeline = True
    for kind in ("insert", "delete"):          # warm-up: kernels loaded, grids measured
        for _, attrs in policies:
            _apply(state, attrs)
            x, y = (cupy.asarray(rng.integers(0, g.num_vertices, 10)) for _ in range(2))
            ch = g.insert_edges(x, y)
            bf.update(ch)
            bf.update(g.delete_edges(ch.src, ch.dst))
    print(f"# {args.label} {name} kron{args.scale} V={g.num_vertices} E={g.num_edges}",
          flush=True)
    print("label,kind,batch,policy,grid,update_us,host_us,static_us,speedup", flush=True)
    for kind in args.kinds:
        for size in args.sizes:
            times = {p: [] for p, _ in policies}
            hosts = {p: [] for p, _ in policies}
            grids = {}
            phases = {p: {} for p, _ in policies}
            stat = []
            for rep in range(args.repeats):
                if kind == "insert":
                    x = cupy.asarray(rng.integers(0, g.num_vertices, size))
                    y = cupy.asarray(rng.integers(0, g.num_vertices, size))
                else:
                    es, ed = g.edges()
                    pick = cupy.asarray(np.unique(rng.integers(0, es.shape[0], size)))
                    x, y = es[pick].astype(cupy.int64), ed[pick].astype(cupy.int64)
                    del es, ed
                op, undo = (g.insert_edges, g.delete_edges) if kind == "insert" else \
                    (g.delete_edges, g.insert_edges)
                # the policies take turns at going first (the first update after a new
                # batch is drawn pays for the drawing's effects on the caches)
                for p, attrs in policies[rep % len(policies):] + policies[:rep % len(policies)]:
                    _apply(state, attrs)
                    ch = op(x, y)
                    t, h = timed_update(ch)
                    times[p].append(t)
                    hosts[p].append(h)
                    if args.timeline:
                        per = {}
                        for ph, us in state.timeline():
                            per[ph] = per.get(ph, 0.0) + us
                        for ph, us in per.items():
                            phases[p].setdefault(ph, []).append(us)
                    n_pairs = 2 * len(ch)
                    try:
                        grids[p] = state.grid(n_pairs)
                    except TypeError:                  # a checkout without batch-sized grids
                        grids[p] = state.grid()
                    if len(stat) < args.repeats:
                        stat.append(static_us())
                    bf.update(undo(ch.src, ch.dst))
            ms = statistics.median(stat)
            for p, _ in policies:
                mt = statistics.median(times[p])
                print(f"{args.label},{kind},{size},{p.replace(',', '/')},{grids[p]},{mt:.1f},"
                      f"{statistics.median(hosts[p]):.1f},{ms:.1f},{ms / mt:.1f}", flush=True)
                if args.timeline:
                    print("  phases us: " + " ".join(
                        f"{ph}={statistics.median(v):.1f}" for ph, v in phases[p].items()),
                        flush=True)
    levels = hornet.testing.to_host(bf.levels)
    want = hornet.testing.to_host(bfs(g, source))
    assert np.array_equal(levels, want), "dynamic levels differ from the static bfs"


if __name__ == "__main__":
    main()
