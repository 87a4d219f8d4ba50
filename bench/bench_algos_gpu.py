"""GPU algorithm micro-benchmark: the dynamic hornet.Graph against the same kernels on a plain
CSR view of the same graph, and SpMV against cuSPARSE (cupyx.scipy.sparse ``A @ x``).

Graphs: Graph500-style Kronecker (R-MAT a=0.57, b=c=0.19, edge factor 16) generated on the
device, undirected (both directions stored; duplicates and self-loops dropped on insertion).
Timing: CUDA events around each call, median of ``--repeats`` runs after one warm-up run (host
syncs inside the calls included). Writes ``bench/results/algos_gpu.md`` (and ``.csv``).

    PYTHONPATH=. python bench/bench_algos_gpu.py [--scales 20 22] [--repeats 5]
"""
from __future__ import annotations

import argparse
import statistics
import time

from common import write_table

import cupy
import cupyx.scipy.sparse as cpx
import numpy as np

import hornet
from hornet import algos
from hornet.adjacency import AdjacencyView


def cuda_time(fn, repeats: int) -> tuple[float, float]:
    """(median seconds, warm-up seconds) of ``fn()`` timed with CUDA events."""
    t = time.perf_counter()
    fn()
    cupy.cuda.Device().synchronize()
    warm = time.perf_counter() - t
    if warm > 5.0:                 # very slow: one timed run is enough
        repeats = 1
    times = []
    for _ in range(repeats):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
    return statistics.median(times), warm


def kernel_rows(scale, g, csr, x, nnz, repeats, rows) -> None:
    """Kernel-only SpMV times (partition kernel + SpMV kernel into a preallocated y; no scan,
    allocation or host sync) of both GPU kernels on the graph and on the CSR view."""
    from hornet.algos import _gpu
    from hornet.memory.gpu_copy import as_i64, scan
    for weight in (None, "weight"):
        for kernel in ("warp", "merge"):
            times = []
            for view in (algos.as_adjacency(g, properties=weight is not None), csr):
                deg, ptr = _gpu._arrays(view)
                n = view.num_vertices
                off, m = scan(deg)
                wptr, ctype = ptr, "float"
                if weight:
                    wptr, ctype = as_i64(view.property_ptrs[weight][0]), "double"
                y = cupy.zeros(n)
                t, _ = cuda_time(lambda: _gpu._spmv_launch(kernel, ctype, weight is not None,
                                                           False, ptr, wptr, off, n, m, x, y),
                                 repeats)
                times.append(t)
            tg, tc = times
            rows.append([scale, f"SpMV kernel only: {kernel}, "
                         + ("float64 weights" if weight else "unweighted"),
                         f"{tg * 1e3:.3f}", f"{tc * 1e3:.3f}", "", f"{nnz / tg / 1e9:.2f} Gnnz/s",
                         f"{tc / tg:.2f}", "", "no scan, allocation or host sync"])
            print(rows[-1], flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--scales", type=int, nargs="+", default=[20, 22])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    dev = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    dev = dev.decode() if isinstance(dev, bytes) else str(dev)
    rows, sizes = [], []
    for scale in args.scales:
        n = 1 << scale
        src, dst = hornet.generators.kronecker_edges(scale, xp=cupy, seed=1)
        w = cupy.random.RandomState(2).random_sample(src.shape[0])
        t0 = time.perf_counter()
        g = hornet.Graph.from_edges(src, dst, num_vertices=n, directed=False, device="gpu",
                                    weight=w)
        cupy.cuda.Device().synchronize()
        build = time.perf_counter() - t0
        del src, dst, w
        indptr, indices, data = g.to_csr("weight")
        csr = AdjacencyView.from_csr(indptr, indices, directed=False, sorted=True, weights=data)
        nnz = int(indices.shape[0])
        A1 = cpx.csr_matrix((cupy.ones(nnz), indices, indptr), shape=(n, n))
        Aw = cpx.csr_matrix((data, indices, indptr), shape=(n, n))
        maxdeg = int(g.degree().max())
        sizes.append(f"scale {scale}: {n:,} vertices, {g.num_edges:,} undirected edges "
                     f"({nnz:,} stored entries), max degree {maxdeg:,}; graph built in "
                     f"{build:.2f} s")
        print(sizes[-1], flush=True)
        x = cupy.random.RandomState(3).standard_normal(n)

        def spmv_rows(label, weight, A):
            tg, _ = cuda_time(lambda: algos.spmv(g, x, weight=weight), args.repeats)
            tc, _ = cuda_time(lambda: algos.spmv(csr, x, weight=weight), args.repeats)
            ts, _ = cuda_time(lambda: A @ x, args.repeats)
            yg, yc, ys = algos.spmv(g, x, weight=weight), algos.spmv(csr, x, weight=weight), A @ x
            err = float(cupy.max(cupy.abs(yg - ys)) / max(float(cupy.max(cupy.abs(ys))), 1e-300))
            err_c = float(cupy.max(cupy.abs(yg - yc)))
            rate = lambda t: nnz / t / 1e9
            rows.append([scale, f"SpMV {label}", f"{tg * 1e3:.3f}", f"{tc * 1e3:.3f}",
                         f"{ts * 1e3:.3f}", f"{rate(tg):.2f} Gnnz/s", f"{tc / tg:.2f}",
                         f"{ts / tg:.2f}", f"max rel diff vs cuSPARSE {err:.1e}, vs CSR {err_c:.1e}"])
            print(rows[-1], flush=True)

        spmv_rows("unweighted (cuSPARSE: values 1.0)", None, A1)
        spmv_rows("float64 weights", "weight", Aw)
        kernel_rows(scale, g, csr, x, nnz, args.repeats, rows)

        deg = g.degree()
        cand = cupy.flatnonzero(deg > 0)
        source = int(cand[int(np.random.default_rng(scale).integers(0, cand.shape[0]))])
        for do in (True, False):
            lv = algos.bfs(g, source, direction_optimizing=do)
            assert bool(cupy.all(lv == algos.bfs(csr, source, direction_optimizing=do)))
            edges = int(deg[lv >= 0].sum(dtype=cupy.int64)) // 2
            tg, _ = cuda_time(lambda: algos.bfs(g, source, direction_optimizing=do), args.repeats)
            tc, _ = cuda_time(lambda: algos.bfs(csr, source, direction_optimizing=do),
                              args.repeats)
            rows.append([scale, "BFS " + ("direction-optimizing" if do else "top-down only"),
                         f"{tg * 1e3:.3f}", f"{tc * 1e3:.3f}", "",
                         f"{edges / tg / 1e9:.2f} GTEPS", f"{tc / tg:.2f}", "",
                         f"source {source}, {int((lv >= 0).sum()):,} reached, "
                         f"{int(lv.max()) + 1} levels, {edges:,} edges"])
            print(rows[-1], flush=True)

        tri = algos.triangle_count(g)
        assert algos.triangle_count(csr) == tri
        tg, _ = cuda_time(lambda: algos.triangle_count(g), args.repeats)
        tc, _ = cuda_time(lambda: algos.triangle_count(csr), args.repeats)
        rows.append([scale, "triangle count", f"{tg * 1e3:.3f}", f"{tc * 1e3:.3f}", "",
                     f"{tri / tg / 1e9:.3f} Gtriangles/s", f"{tc / tg:.2f}", "",
                     f"{tri:,} triangles"])
        print(rows[-1], flush=True)
        del g, csr, A1, Aw, indptr, indices, data
        cupy.get_default_memory_pool().free_all_blocks()

    notes = f"""
Device: {dev}. CuPy {cupy.__version__}. Produced by `bench/bench_algos_gpu.py`.

Graphs (Kronecker, undirected, generated on the device):
{chr(10).join('- ' + s for s in sizes)}

Times: CUDA events around each whole call (allocation, scans and host syncs included), median
of {args.repeats} runs after one warm-up run. "graph" = `hornet.Graph(device="gpu")` read through
its pointer view (lists in power-of-two blocks); "CSR" = the same kernels on
`AdjacencyView.from_csr(*g.to_csr())` (contiguous rows); "cuSPARSE" = cupyx.scipy.sparse
`A @ x` on the same CSR. SpMV rows use the default kernel (warp-segmented); "kernel only" rows
time just the launches of each kernel ("warp": warp-segmented rows; "merge": merge-path per
thread). Ratios > 1 mean the hornet graph is faster: CSR/graph = time on the
CSR view / time on the graph (target >= 0.9 for SpMV and BFS), cuSPARSE/graph = cuSPARSE time /
graph time (target >= 0.8 for SpMV). GTEPS: undirected edges of the reached component / time.
"""
    write_table("algos_gpu", "GPU static algorithms: dynamic graph vs CSR view vs cuSPARSE",
                ["scale", "algorithm", "graph ms", "CSR ms", "cuSPARSE ms", "graph rate",
                 "CSR/graph", "cuSPARSE/graph", "note"], rows, notes)


if __name__ == "__main__":
    main()
