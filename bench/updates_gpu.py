"""GPU update rate versus batch size, build time versus cupyx, memory versus CSR/COO.

    PYTHONPATH=. python3 bench/bench_updates_gpu.py [--scales 20,24] [--real] [--out DIR]

Kronecker graphs (Graph500 R-MAT, edge factor 16) are generated on the device with a fixed
seed. Rates are edges as the user passes them per second (undirected: each pair once), median of
repeats, timed with CUDA events after warm-up; the graph is restored untimed between repeats.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import cupy
import cupyx.scipy.sparse as csp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import hornet  # noqa: E402
from hornet.generators import kronecker_edges  # noqa: E402
from common import DATA, write_table  # noqa: E402


def device_name() -> str:
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    return f"{name}, {props['totalGlobalMem'] / 2**30:.0f} GiB, CuPy {cupy.__version__}"


def cuda_time(fn, repeats, undo=None, warmup=1):
    """Median seconds of fn() over repeats (CUDA events), undo(result) untimed after each."""
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
    return statistics.median(times)


def repeats_for(b):
    return 50 if b <= 1000 else 20 if b <= 10**5 else 7 if b <= 10**6 else 5


def bench_updates(label, g, sizes, rng_seed=1):
    rows = []
    n = g.num_vertices
    rs = cupy.random.RandomState(rng_seed)
    es, ed = g.edges()
    for b in sizes:
        reps = repeats_for(b)
        batches = [(rs.randint(0, n, b, dtype=cupy.int64), rs.randint(0, n, b, dtype=cupy.int64))
                   for _ in range(reps + 1)]
        it = iter(batches)
        t_ins = cuda_time(lambda: g.insert_edges(*next(it)), reps,
                          undo=lambda c: g.delete_edges(c.src, c.dst))
        # existing edges sampled with replacement (a repeat is dropped by the batch pipeline)
        picks = [rs.randint(0, es.size, min(b, es.size), dtype=cupy.int64)
                 for _ in range(reps + 1)]
        dt = iter(picks)
        t_del = cuda_time(lambda: g.delete_edges(es[(p := next(dt))], ed[p]), reps,
                          undo=lambda c: g.insert_edges(c.src, c.dst))
        rows.append([label, b, f"{b / t_ins:.3g}", f"{b / t_del:.3g}",
                     f"{t_ins * 1e6:.0f}", f"{t_del * 1e6:.0f}"])
        print(rows[-1], flush=True)
    return rows


def latency_1000(g, repeats=200):
    """End-to-end wall time (Python call to result, synchronized) of 1,000-edge batches."""
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


def bench_build(label, src, dst, n):
    """hornet from_edges / from_csr versus cupyx sparse builds from the same arrays."""
    ones = cupy.ones(src.shape[0], dtype=cupy.float32)
    t_cupyx_coo = cuda_time(lambda: csp.coo_matrix((ones, (src, dst)), shape=(n, n)).tocsr(), 3)
    A = csp.coo_matrix((ones, (src, dst)), shape=(n, n)).tocsr()
    A.sum_duplicates()
    A.sort_indices()
    t_cupyx_csr = cuda_time(lambda: csp.csr_matrix((A.data, A.indices, A.indptr),
                                                   shape=(n, n)).copy(), 3)
    t_from_edges = cuda_time(lambda: hornet.Graph.from_edges(src, dst, num_vertices=n,
                                                             directed=True, device="gpu"), 3)
    t_from_csr = cuda_time(lambda: hornet.Graph.from_csr(A.indptr, A.indices, directed=True,
                                                         device="gpu"), 3)
    g = hornet.Graph.from_csr(A.indptr, A.indices, directed=True, device="gpu")
    m = g.memory_stats()
    return [label, n, A.nnz, f"{t_from_edges:.4f}", f"{t_cupyx_coo:.4f}",
            f"{t_from_edges / t_cupyx_coo:.2f}", f"{t_from_csr:.4f}", f"{t_cupyx_csr:.4f}",
            f"{t_from_csr / t_cupyx_coo:.2f}", m["reserved_bytes"], m["csr_bytes"],
            m["coo_bytes"], f"{m['reserved_bytes'] / m['csr_bytes']:.3f}"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scales", default="20,24")
    ap.add_argument("--max-batch", type=int, default=10**7)
    ap.add_argument("--real", action="store_true", help="also the real graphs in shared/data")
    ap.add_argument("--name", default="updates_gpu")
    args = ap.parse_args()
    sizes = [b for b in (1, 10, 100, 1000, 10**4, 10**5, 10**6, 10**7) if b <= args.max_batch]
    rows, builds, latencies = [], [], []
    for scale in map(int, args.scales.split(",")):
        src, dst = kronecker_edges(scale, edge_factor=16, seed=scale, xp=cupy)
        n = 1 << scale
        builds.append(bench_build(f"kron{scale}", src, dst, n))
        t = time.perf_counter()
        g = hornet.Graph.from_edges(src, dst, num_vertices=n, directed=False, device="gpu")
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
            builds.append(bench_build(path.name.split(".")[0], cupy.asarray(s), cupy.asarray(d), n))
            g = hornet.Graph.from_edges(cupy.asarray(s), cupy.asarray(d), num_vertices=n,
                                        directed=True, device="gpu")
            rows += bench_updates(path.name.split(".")[0], g,
                                  [b for b in (10, 1000, 10**5) if b <= g.num_edges])
    dev = device_name()
    write_table(args.name, "GPU update rate versus batch size",
                ["graph", "batch", "insert edges/s", "delete edges/s", "insert us", "delete us"],
                rows, f"""Device: {dev}.
Insert batches: uniformly random pairs (duplicate checks on, sorted adjacency kept, result
returned); delete batches: existing edges sampled at random. Median of repeats with CUDA
events after warm-up; the graph is restored untimed after each timed call.
End-to-end latency of a 1,000-edge insert (Python call to result, synchronized), median of 200:
{'; '.join(f'{k}: {v * 1e6:.0f} us' for k, v in latencies)}.""")
    write_table(args.name + "_build", "GPU build time and memory versus cupyx CSR",
                ["graph", "vertices", "CSR entries", "hornet from_edges s", "cupyx COO->CSR s",
                 "ratio", "hornet from_csr s", "cupyx CSR copy s", "from_csr / COO->CSR",
                 "reserved bytes", "CSR bytes", "COO bytes", "reserved/CSR"], builds,
                f"""Device: {dev}. Directed builds from the same device arrays; cupyx COO->CSR sorts
and converts (duplicates kept until sum_duplicates, which hornet's dedup corresponds to).
Medians of 3 with CUDA events.""")


if __name__ == "__main__":
    main()
