"""GPU insert / delete rate versus batch size, and the end-to-end time of a 1,000-edge batch.

    python3 -m bench updates_gpu [--scales 20 24] [--max-batch 10000000] [--real]
    python3 -m bench updates_gpu --quick           # Kronecker 16, batches up to 10^5
    python3 -m bench updates_gpu --latency [--scales 20 24] [--real]   # 10^3 and 10^4, spikes

Kronecker graphs (Graph500 R-MAT, edge factor 16) are generated on the device with a fixed
seed. Rates are edges as the user passes them per second (undirected: each pair once), median of
repeats, timed with CUDA events after warm-up; the graph is restored untimed between repeats.
"""
from __future__ import annotations

import argparse
import statistics
import time

import hornet
from bench.common import DATA, kronecker, require_gpu, write_table

NAME = "updates_gpu"
NAME_LATENCY = "updates_latency_gpu"
NEEDS_GPU = True


def cuda_times(fn, repeats: int, undo=None, warmup: int = 1) -> list[float]:
    """Seconds of each of ``repeats`` calls of fn() (CUDA events), undo(result) untimed
    after each."""
    import cupy
    for _ in range(warmup):
        r = fn()
        if undo:
            undo(r)
    times = []
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    for _ in range(repeats):
        start.record()
        r = fn()
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
        if undo:
            undo(r)
            cupy.cuda.Device().synchronize()     # the next call starts on an idle device
    return times


def cuda_time(fn, repeats: int, undo=None, warmup: int = 1) -> float:
    """Median seconds of fn() over repeats (CUDA events), undo(result) untimed after each."""
    return statistics.median(cuda_times(fn, repeats, undo, warmup))


def spikes(times: list[float]) -> int:
    """How many of ``times`` exceed twice their median."""
    med = statistics.median(times)
    return sum(t > 2 * med for t in times)


def rebuild_time(keys, b: int, n: int, rs, repeats: int) -> float:
    """Median seconds of the baseline: a sorted CuPy array of edge keys (``src << 32 | dst``,
    uint64, both directions) rebuilt with a batch of ``b`` random pairs (both directions
    appended, sorted, repeats dropped)."""
    import cupy

    def rebuild():
        s = rs.randint(0, n, b, dtype=cupy.int64).astype(cupy.uint64)
        d = rs.randint(0, n, b, dtype=cupy.int64).astype(cupy.uint64)
        new = cupy.concatenate([keys, (s << 32) | d, (d << 32) | s])
        return cupy.unique(new)
    return cuda_time(rebuild, repeats)


def repeats_for(b: int) -> int:
    return 50 if b <= 1000 else 20 if b <= 10**5 else 7 if b <= 10**6 else 5


def bench_updates(label: str, g: hornet.Graph, sizes: list[int], rng_seed: int = 1) -> list[list]:
    """Rows of insert and delete rates of ``g`` for each batch size."""
    import cupy
    rows = []
    n = g.num_vertices
    rs = cupy.random.RandomState(rng_seed)
    es, ed = g.edges()
    keys = cupy.unique((es.astype(cupy.uint64) << 32) | ed.astype(cupy.uint64))
    for b in sizes:
        reps = repeats_for(b)
        ins, dels = insert_delete_times(g, b, reps, rs, es, ed)
        t_ins, t_del = statistics.median(ins), statistics.median(dels)
        t_base = rebuild_time(keys, b, n, rs, 3 if b <= 10**6 else 2)
        rows.append([label, b, f"{b / t_ins:.3g}", f"{b / t_del:.3g}",
                     f"{t_ins * 1e6:.0f}", f"{t_del * 1e6:.0f}",
                     f"{spikes(ins)}/{spikes(dels)} of {reps}", f"{t_base * 1e6:.0f}"])
        print(rows[-1], flush=True)
    return rows


def insert_delete_times(g: hornet.Graph, b: int, reps: int, rs, es, ed) -> tuple[list, list]:
    """CUDA-event seconds of ``reps`` insert batches of ``b`` uniformly random pairs and of
    ``reps`` delete batches of ``b`` existing edges (``es``, ``ed``: the graph's edges, sampled
    with replacement; a repeat is dropped by the batch pipeline), each call undone untimed;
    the batches are drawn from ``rs`` (a CuPy RandomState) before their timing starts."""
    import cupy
    n = g.num_vertices
    batches = iter([(rs.randint(0, n, b, dtype=cupy.int64), rs.randint(0, n, b, dtype=cupy.int64))
                    for _ in range(reps + 1)])
    ins = cuda_times(lambda: g.insert_edges(*next(batches)), reps,
                     undo=lambda c: g.delete_edges(c.src, c.dst))
    picks = [rs.randint(0, es.size, min(b, es.size), dtype=cupy.int64) for _ in range(reps + 1)]
    dt = iter([(es[p], ed[p]) for p in picks])
    dels = cuda_times(lambda: g.delete_edges(*next(dt)), reps,
                      undo=lambda c: g.insert_edges(c.src, c.dst))
    return ins, dels


def bench_latency(label: str, g: hornet.Graph, sizes: list[int], repeats: int = 41,
                  rng_seed: int = 1) -> list[list]:
    """Rows of insert and delete latency of ``g`` for each batch size (as
    :func:`bench_updates`, with more repeats): medians, the slowest call over the median,
    calls over twice the median."""
    import cupy
    rows = []
    rs = cupy.random.RandomState(rng_seed)
    es, ed = g.edges()
    for b in sizes:
        ins, dels = insert_delete_times(g, b, repeats, rs, es, ed)
        t_ins, t_del = statistics.median(ins), statistics.median(dels)
        rows.append([label, g.num_edges, b, f"{t_ins * 1e6:.0f}", f"{max(ins) / t_ins:.2f}",
                     f"{t_del * 1e6:.0f}", f"{max(dels) / t_del:.2f}",
                     f"{spikes(ins)}/{spikes(dels)} of {repeats}"])
        print(rows[-1], flush=True)
    return rows


def latency_main(args) -> None:
    """``--latency``: the latency table (``updates_latency_gpu``) of the Kronecker scales and
    the real graphs of the data folder."""
    import cupy
    rows = []
    for scale in args.scales:
        src, dst = kronecker(scale, seed=scale, xp=cupy)
        g = hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False,
                                    device="gpu")
        del src, dst
        rows += bench_latency(f"Kronecker {scale} (undirected)", g, [10**3, 10**4])
        del g
        cupy.get_default_memory_pool().free_all_blocks()
    for path in sorted(DATA.glob("*.gz")) if args.real else []:
        s, d, _ = hornet.io.read_edges(path)
        n = int(max(s.max(), d.max())) + 1
        g = hornet.Graph.from_edges(cupy.asarray(s), cupy.asarray(d), num_vertices=n,
                                    directed=True, device="gpu")
        rows += bench_latency(path.name.split(".")[0], g,
                              [b for b in (10**3, 10**4) if b <= g.num_edges])
    write_table(NAME_LATENCY, "GPU update latency of small batches",
                ["graph", "edges", "batch", "insert us", "insert max/median", "delete us",
                 "delete max/median", "calls over 2x median (insert/delete)"],
                rows, """Insert batches: uniformly random pairs (duplicate checks on, sorted
adjacency kept, result returned); delete batches: existing edges sampled at random (with
replacement). Kronecker graphs undirected, the real graphs of the data folder directed (as
`--real`). Median of 41 calls with CUDA events after a warm-up call, the graph restored
untimed after each; "max/median": the slowest of the 41 over the median (the criterion: no
call over twice the median).""", device="gpu")


def latency_1000(g: hornet.Graph, repeats: int = 200) -> float:
    """End-to-end wall seconds (Python call to result, synchronized) of 1,000-edge inserts."""
    import cupy
    n = g.num_vertices
    rs = cupy.random.RandomState(7)
    batches = [(rs.randint(0, n, 1000, dtype=cupy.int64), rs.randint(0, n, 1000, dtype=cupy.int64))
               for _ in range(repeats + 10)]
    times = []
    for i, (s, d) in enumerate(batches):
        cupy.cuda.Device().synchronize()
        t = time.perf_counter()
        c = g.insert_edges(s, d)
        len(c)                                  # the result, on the host side
        cupy.cuda.Device().synchronize()
        if i >= 10:
            times.append(time.perf_counter() - t)
        g.delete_edges(c.src, c.dst)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench updates_gpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", type=int, nargs="+", default=[20, 24], help="Kronecker scales")
    ap.add_argument("--max-batch", type=int, default=10**7)
    ap.add_argument("--real", action="store_true", help="also the real graphs in the data folder")
    ap.add_argument("--quick", action="store_true", help="Kronecker 16, batches up to 10^5")
    ap.add_argument("--latency", action="store_true",
                    help="instead: batches of 10^3 and 10^4, 41 calls each, the slowest call "
                         "over the median (table updates_latency_gpu)")
    args = ap.parse_args(argv)
    require_gpu(NAME)
    import cupy
    if args.latency:
        latency_main(args)
        return
    if args.quick:
        args.scales, args.max_batch = [16], min(args.max_batch, 10**5)
    sizes = [b for b in (1, 10, 100, 1000, 10**4, 10**5, 10**6, 10**7) if b <= args.max_batch]
    rows, latencies = [], []
    for scale in args.scales:
        src, dst = kronecker(scale, seed=scale, xp=cupy)
        t = time.perf_counter()
        g = hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False,
                                    device="gpu")
        cupy.cuda.Device().synchronize()
        print(f"kron{scale}: {g.num_edges} edges, undirected build {time.perf_counter() - t:.2f} s",
              flush=True)
        del src, dst
        rows += bench_updates(f"Kronecker {scale} (undirected)", g, sizes)
        latencies.append((f"kron{scale}", latency_1000(g)))
        del g
        cupy.get_default_memory_pool().free_all_blocks()
    if args.real:
        for path in sorted(DATA.glob("*.gz")):
            s, d, _ = hornet.io.read_edges(path)
            n = int(max(s.max(), d.max())) + 1
            g = hornet.Graph.from_edges(cupy.asarray(s), cupy.asarray(d), num_vertices=n,
                                        directed=True, device="gpu")
            rows += bench_updates(path.name.split(".")[0], g,
                                  [b for b in (10**3, 10**4, 10**5, 10**6) if b <= g.num_edges])
    write_table(NAME, "GPU update rate versus batch size",
                ["graph", "batch", "insert edges/s", "delete edges/s", "insert us", "delete us",
                 "calls over 2x median (insert/delete)", "rebuild baseline us"],
                rows, f"""Insert batches: uniformly random pairs (duplicate checks on, sorted
adjacency kept, result returned); delete batches: existing edges sampled at random. Median of
repeats with CUDA events after warm-up; the graph is restored untimed after each timed call.
Baseline in the same run: a sorted CuPy array of the graph's edge keys (src << 32 | dst, both
directions) rebuilt with each batch (concatenate, cupy.unique), median of 2-3.
End-to-end latency of a 1,000-edge insert (Python call to result, synchronized), median of 200:
{'; '.join(f'{k}: {v * 1e6:.0f} us' for k, v in latencies)}.""", device="gpu")


if __name__ == "__main__":
    main()
