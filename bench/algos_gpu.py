"""GPU SpMV, BFS and triangle counting: the dynamic graph versus the same kernels on a CSR, and cuSPARSE.

    python3 -m bench algos_gpu [--scales 20 22] [--repeats 5] [--fast-repeats 51]
    python3 -m bench algos_gpu --quick             # Kronecker 16, few repeats

Graph500-style Kronecker graphs (R-MAT a=0.57, b=c=0.19, edge factor 16) generated on the
device, undirected (both directions stored) with a float64 edge property "weight". Every
algorithm runs on ``hornet.Graph(device="gpu")`` and on ``hornet.AdjacencyView.from_csr`` of
the graph's own CSR (the same kernels, contiguous rows); SpMV also against cupyx.scipy.sparse
``A @ x`` (cuSPARSE). Whole calls timed with CUDA events in interleaved rounds.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import hornet
from bench.common import cuda_times, kronecker, require_gpu, write_table

NAME = "algos_gpu"
NEEDS_GPU = True
HEADER = ["scale", "algorithm", "graph ms", "CSR ms", "cuSPARSE ms", "graph rate", "CSR/graph",
          "cuSPARSE/graph", "note"]


def scale_rows(scale: int, args, rows: list[list]) -> str:
    """Append the rows of one Kronecker scale to ``rows``; return the graph's description."""
    import cupy
    import cupyx.scipy.sparse as cpx
    from hornet import algos

    n = 1 << scale
    src, dst = kronecker(scale, seed=1, xp=cupy)
    w = cupy.random.RandomState(2).random_sample(src.shape[0])
    t0 = time.perf_counter()
    g = hornet.Graph.from_edges(src, dst, num_vertices=n, directed=False, device="gpu",
                                weight=w)
    cupy.cuda.Device().synchronize()
    build = time.perf_counter() - t0
    del src, dst, w
    indptr, indices, data = g.to_csr("weight")
    csr = hornet.AdjacencyView.from_csr(indptr, indices, directed=False, sorted=True,
                                        weights=data)
    nnz = int(indices.shape[0])
    A1 = cpx.csr_matrix((cupy.ones(nnz), indices, indptr), shape=(n, n))
    Aw = cpx.csr_matrix((data, indices, indptr), shape=(n, n))
    about = (f"scale {scale}: {n:,} vertices, {g.num_edges:,} undirected edges ({nnz:,} stored "
             f"entries), max degree {int(g.degree().max()):,}; graph built in {build:.2f} s")
    print(about, flush=True)
    x = cupy.random.RandomState(3).standard_normal(n)

    for label, weight, A in (("unweighted (cuSPARSE: values 1.0)", None, A1),
                             ("float64 weights", "weight", Aw)):
        (tg, tc, ts), _ = cuda_times([lambda: algos.spmv(g, x, weight=weight),
                                      lambda: algos.spmv(csr, x, weight=weight),
                                      lambda: A @ x], args.fast_repeats)
        yg, yc, ys = algos.spmv(g, x, weight=weight), algos.spmv(csr, x, weight=weight), A @ x
        err = float(cupy.max(cupy.abs(yg - ys)) / max(float(cupy.max(cupy.abs(ys))), 1e-300))
        err_c = float(cupy.max(cupy.abs(yg - yc)))
        rows.append([scale, f"SpMV {label}", f"{tg * 1e3:.3f}", f"{tc * 1e3:.3f}",
                     f"{ts * 1e3:.3f}", f"{nnz / tg / 1e9:.2f} Gnnz/s", f"{tc / tg:.2f}",
                     f"{ts / tg:.2f}", f"max rel diff vs cuSPARSE {err:.1e}, vs CSR {err_c:.1e}"])
        print(rows[-1], flush=True)

    no_ids = cupy.empty(0, dtype=cupy.int64)

    def first_call_graph():
        g.insert_vertices(no_ids)        # an update that changes nothing: views are made anew
        algos.spmv(g, x, weight="weight")

    def first_call_csr():
        view = hornet.AdjacencyView.from_csr(indptr, indices, directed=False, sorted=True,
                                             weights=data)
        algos.spmv(view, x, weight="weight")

    (tg, tc), _ = cuda_times([first_call_graph, first_call_csr], args.fast_repeats)
    rows.append([scale, "SpMV float64 weights, first call on a new view (rows in id order)",
                 f"{tg * 1e3:.3f}", f"{tc * 1e3:.3f}", "", f"{nnz / tg / 1e9:.2f} Gnnz/s",
                 f"{tc / tg:.2f}", "", "includes making the view and its degree scan"])
    print(rows[-1], flush=True)

    deg = g.degree()
    cand = cupy.flatnonzero(deg > 0)
    source = int(cand[int(np.random.default_rng(scale).integers(0, cand.shape[0]))])
    for do in (True, False):
        lv = algos.bfs(g, source, direction_optimizing=do)
        assert bool(cupy.all(lv == algos.bfs(csr, source, direction_optimizing=do)))
        edges = int(deg[lv >= 0].sum(dtype=cupy.int64)) // 2
        (tg, tc), _ = cuda_times([lambda: algos.bfs(g, source, direction_optimizing=do),
                                  lambda: algos.bfs(csr, source, direction_optimizing=do)],
                                 args.fast_repeats)
        rows.append([scale, "BFS " + ("direction-optimizing" if do else "top-down only"),
                     f"{tg * 1e3:.3f}", f"{tc * 1e3:.3f}", "", f"{edges / tg / 1e9:.2f} GTEPS",
                     f"{tc / tg:.2f}", "", f"source {source}, {int((lv >= 0).sum()):,} reached, "
                     f"{int(lv.max()) + 1} levels, {edges:,} edges"])
        print(rows[-1], flush=True)

    tri = algos.triangle_count(g)
    assert algos.triangle_count(csr) == tri
    (tg, tc), _ = cuda_times([lambda: algos.triangle_count(g),
                              lambda: algos.triangle_count(csr)], args.repeats)
    rows.append([scale, "triangle count", f"{tg * 1e3:.3f}", f"{tc * 1e3:.3f}", "",
                 f"{tri / tg / 1e9:.3f} Gtriangles/s", f"{tc / tg:.2f}", "", f"{tri:,} triangles"])
    print(rows[-1], flush=True)
    return about


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench algos_gpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", type=int, nargs="+", default=[20, 22], help="Kronecker scales")
    ap.add_argument("--repeats", type=int, default=5, help="rounds of the triangle rows")
    ap.add_argument("--fast-repeats", type=int, default=51,
                    help="rounds of the sub-10 ms calls (SpMV and BFS rows)")
    ap.add_argument("--quick", action="store_true", help="Kronecker 16, 5 rounds")
    args = ap.parse_args(argv)
    require_gpu(NAME)
    import cupy
    if args.quick:
        args.scales, args.repeats, args.fast_repeats = [16], 3, 5
    rows, graphs = [], []
    for scale in args.scales:
        graphs.append(scale_rows(scale, args, rows))
        cupy.get_default_memory_pool().free_all_blocks()
    write_table(NAME, "GPU static algorithms: dynamic graph vs CSR view vs cuSPARSE", HEADER, rows,
                f"""Graphs (Kronecker, undirected, generated on the device):
{chr(10).join('- ' + s for s in graphs)}

Times: CUDA events around each whole call (allocation, scans and host syncs included), one
warm-up run each, then the median of {args.fast_repeats} runs for SpMV and BFS rows
({args.repeats} for triangle counting) timed in interleaved rounds (graph, CSR and cuSPARSE take
turns, the order rotating each round). "graph" = `hornet.Graph(device="gpu")` read through its
pointer view (lists in power-of-two blocks); "CSR" = the same kernels on
`AdjacencyView.from_csr(*g.to_csr())` (contiguous rows); "cuSPARSE" = cupyx.scipy.sparse
`A @ x` on the same CSR. SpMV visits rows in storage order (memoized per view: the graph's rows
by size class, then list address, from its second call on an unchanged graph; the CSR's in id
order); the "first call on a new view" row makes a fresh view each time, as after an update.
Ratios > 1 mean the hornet graph is faster: CSR/graph = time on the CSR view / time on the
graph; cuSPARSE/graph = cuSPARSE time / graph time. GTEPS: undirected edges of the reached
component / time.""", device="gpu")


if __name__ == "__main__":
    main()
