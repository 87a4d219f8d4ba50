"""GPU batches of 1,000 edges end to end: insert-then-delete, a growing graph, and hub lists.

    python3 -m bench small_batches_gpu [--scales 20 24] [--batches 150] [--batch 1000]
    python3 -m bench small_batches_gpu --quick     # Kronecker 16, 30 batches

Wall time from the Python call to the result on the host (synchronized), median over the
batches after ten warm-up batches, for three cases on each Kronecker graph:

- cycle: fresh uniformly random pairs inserted, then the inserted edges deleted (both timed);
- growth: fresh uniformly random pairs inserted and kept (the graph grows);
- hubs: pairs sampled uniformly from the graph's edges (so both ends are mostly high-degree
  vertices) deleted, then inserted back (both timed).
"""
from __future__ import annotations

import argparse
import statistics
import time

import hornet
from bench.common import kronecker, require_gpu, write_table

NAME = "small_batches_gpu"
NEEDS_GPU = True
WARMUP = 10


def wall_us(fn):
    """(result, microseconds from the call to its result on the host, synchronized)."""
    import cupy
    sync = cupy.cuda.Device().synchronize
    sync()
    t = time.perf_counter()
    result = fn()
    len(result)
    sync()
    return result, (time.perf_counter() - t) * 1e6


def spikes(times: list[float]) -> int:
    """How many of ``times`` exceed twice their median."""
    med = statistics.median(times)
    return sum(t > 2 * med for t in times)


def memory_events(g: hornet.Graph) -> tuple:
    """(block-cache refills, block arrays created) so far: what a slow call may have done
    (None where this checkout does not count them)."""
    mm = g._mm
    cache = mm.cache
    return (getattr(cache, "refills", None) if cache is not None else 0,
            getattr(mm, "arrays_created", None))


def slow_calls(times: list[float], events: list[tuple]) -> str:
    """How many calls over twice the median refilled the block cache / created block arrays
    (``events``: per call, the change of :func:`memory_events`), and how many calls did."""
    med = statistics.median(times)
    if any(None in e for e in events):
        return "refills not counted"
    slow = [e for t, e in zip(times, events) if t > 2 * med]
    return (f"slow with a refill {sum(e[0] > 0 for e in slow)}, with new block arrays "
            f"{sum(e[1] > 0 for e in slow)}; refills in {sum(e[0] > 0 for e in events)} calls")


def _delta(after: tuple, before: tuple) -> tuple:
    return tuple(None if a is None or b is None else a - b for a, b in zip(after, before))


def cycle(g: hornet.Graph, rs, batches: int, size: int) -> tuple[float, float, str]:
    """Median (insert us, delete us) of random batches inserted, then deleted again, and how
    many calls took over twice the median."""
    import cupy
    n, ins, dels, events, del_events = g.num_vertices, [], [], [], []
    for _ in range(batches + WARMUP):
        s, d = rs.randint(0, n, size, dtype=cupy.int64), rs.randint(0, n, size, dtype=cupy.int64)
        before = memory_events(g)
        c, t_ins = wall_us(lambda: g.insert_edges(s, d))
        events.append(_delta(memory_events(g), before))
        ins.append(t_ins)
        before = memory_events(g)
        dels.append(wall_us(lambda: g.delete_edges(c.src, c.dst))[1])
        del_events.append(_delta(memory_events(g), before))
    ins, dels = ins[WARMUP:], dels[WARMUP:]
    events, del_events = events[WARMUP:], del_events[WARMUP:]
    return (statistics.median(ins), statistics.median(dels),
            f"over 2x median: {spikes(ins)}/{spikes(dels)} of {len(ins)} (insert/delete); "
            f"inserts {slow_calls(ins, events)}; deletes {slow_calls(dels, del_events)}")


def growth(g: hornet.Graph, rs, batches: int, size: int) -> tuple[float, int, str]:
    """Median insert us of random batches that stay in the graph, how many calls took
    over twice the median, and what those did (:func:`slow_calls`)."""
    import cupy
    n, times, events = g.num_vertices, [], []
    for _ in range(batches + WARMUP):
        s, d = rs.randint(0, n, size, dtype=cupy.int64), rs.randint(0, n, size, dtype=cupy.int64)
        before = memory_events(g)
        times.append(wall_us(lambda: g.insert_edges(s, d))[1])
        events.append(_delta(memory_events(g), before))
    times, events = times[WARMUP:], events[WARMUP:]
    return statistics.median(times), spikes(times), slow_calls(times, events)


def hubs(g: hornet.Graph, rs, batches: int, size: int) -> tuple[float, float, int]:
    """Median (insert us, delete us) of batches sampled from the edges, deleted then inserted
    back; and the largest degree a batch touched."""
    import cupy
    es, ed = g.edges()
    deg = g.degree()
    ins, dels, top = [], [], 0
    for _ in range(batches + WARMUP):
        p = rs.randint(0, es.size, size, dtype=cupy.int64)
        s, d = es[p], ed[p]
        top = max(top, int(deg[cupy.concatenate([s, d])].max()))
        c, t_del = wall_us(lambda: g.delete_edges(s, d))
        dels.append(t_del)
        ins.append(wall_us(lambda: g.insert_edges(c.src, c.dst))[1])
    return statistics.median(ins[WARMUP:]), statistics.median(dels[WARMUP:]), top


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench small_batches_gpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", type=int, nargs="+", default=[20, 24], help="Kronecker scales")
    ap.add_argument("--batches", type=int, default=150, help="timed batches per case")
    ap.add_argument("--batch", type=int, default=1000, help="pairs per batch")
    ap.add_argument("--quick", action="store_true", help="Kronecker 16, 30 batches")
    ap.add_argument("--cases", nargs="+", default=["cycle", "hubs", "growth"],
                    choices=["cycle", "hubs", "growth"], help="cases to run, in this order")
    args = ap.parse_args(argv)
    require_gpu(NAME)
    import cupy
    if args.quick:
        args.scales, args.batches = [16], 30
    rows = []
    for scale in args.scales:
        src, dst = kronecker(scale, seed=scale, xp=cupy)
        g = hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False,
                                    device="gpu")
        del src, dst
        label = f"kron{scale} ({g.num_edges:,} edges)"
        rs = cupy.random.RandomState(5)
        if "cycle" in args.cases:
            t_ins, t_del, note = cycle(g, rs, args.batches, args.batch)
            rows.append([label, "cycle: random pairs inserted, then deleted", f"{t_ins:.0f}",
                         f"{t_del:.0f}", note])
            print(rows[-1], flush=True)
        if "hubs" in args.cases:
            t_ins, t_del, top = hubs(g, rs, args.batches, args.batch)
            rows.append([label, "hubs: sampled edges deleted, then inserted back",
                         f"{t_ins:.0f}", f"{t_del:.0f}", f"largest degree touched {top:,}"])
            print(rows[-1], flush=True)
        if "growth" in args.cases:
            before = g.num_edges
            t_ins, over, what = growth(g, rs, args.batches, args.batch)
            rows.append([label, "growth: random pairs inserted and kept", f"{t_ins:.0f}", "",
                         f"{g.num_edges - before:,} edges added; over 2x median: {over} of "
                         f"{args.batches}; {what}"])
            print(rows[-1], flush=True)
        g.check()
        del g
        cupy.get_default_memory_pool().free_all_blocks()
    write_table(NAME, f"GPU batches of {args.batch:,} edges, end to end",
                ["graph", "case", "insert us", "delete us", "note"], rows,
                f"""Kronecker graphs (edge factor 16, seed = scale, undirected), built on the
device. Batches of {args.batch:,} pairs. Wall time from the Python call to the result on the host
(the change's length read, device synchronized), median of {args.batches} batches after
{WARMUP} warm-up batches. `Graph.check()` passes after the three cases.""", device="gpu")


if __name__ == "__main__":
    main()
