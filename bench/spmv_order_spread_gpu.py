"""How much the weighted SpMV ratio graph/CSR varies from one build of the same graph to the
next, with the graph's rows visited in id order, in plain address order, and in storage order
(size class by size class, smallest first, each in address order: what ``algos.spmv`` does).

Each build is a fresh ``hornet.Graph.from_edges`` of the same Kronecker graph (float64
weights), so only where its block arrays land in device memory changes (the last two builds
stay alive while the next is made). For every build: kernel-only warp SpMV on the CSR of the
graph and on the graph in each order, CUDA events, interleaved rounds, median.

    PYTHONPATH=. python3 bench/spmv_order_spread_gpu.py [--scales 21 22] [--builds 8]
"""
from __future__ import annotations

import argparse
import statistics

import cupy

import hornet
from hornet import algos
from hornet.adjacency import AdjacencyView

from hornet.algos import _gpu

from common import cuda_times, write_table
from spmv_tail_gpu import launcher


def address_order_launcher(view, x, y):
    """The warp SpMV over the graph's non-empty rows sorted by list address alone."""
    owners = cupy.flatnonzero(view.degree)
    visit = _gpu._rows_in_order(view, owners[cupy.argsort(view.edge_ptr[owners])])
    wptr = visit.property_ptr(view, "weight")
    y_rows = cupy.zeros(visit.count + 1)
    return lambda: _gpu._spmv_rows("warp", "double", True, False, visit, wptr, x, y, y_rows)


def median_times(runs: dict, repeats: int) -> dict:
    """Median milliseconds of each named contender (``common.cuda_times``)."""
    times, _ = cuda_times(list(runs.values()), repeats)
    return {k: t * 1e3 for k, t in zip(runs, times)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", type=int, nargs="+", default=[21, 22])
    ap.add_argument("--builds", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--name", default="spmv_order_spread_gpu")
    args = ap.parse_args()
    rows, summary = [], []
    for scale in args.scales:
        n = 1 << scale
        s, d = hornet.generators.kronecker_edges(scale, xp=cupy, seed=1)
        w = cupy.random.RandomState(2).random_sample(s.shape[0])
        x = cupy.random.RandomState(3).random_sample(n)
        alive, ratios = [], {"id": [], "address": [], "storage": []}
        for b in range(args.builds):
            g = hornet.Graph.from_edges(s, d, num_vertices=n, directed=False, device="gpu",
                                        weight=w)
            indptr, indices, data = g.to_csr("weight")
            csr = AdjacencyView.from_csr(indptr, indices, directed=False, sorted=True,
                                         weights=data)
            view = algos.as_adjacency(g, properties=True)
            runs = {"CSR": launcher(csr, x, cupy.zeros(n)),
                    "id": launcher(view, x, cupy.zeros(n), storage_order=False),
                    "address": address_order_launcher(view, x, cupy.zeros(n)),
                    "storage": launcher(view, x, cupy.zeros(n))}
            for fn in runs.values():
                fn()
            med = median_times(runs, args.repeats)
            for k in ratios:
                ratios[k].append(med["CSR"] / med[k])
            rows.append([scale, b, f"{med['CSR']:.3f}"]
                        + [f"{med[k]:.3f}" for k in ratios]
                        + [f"{ratios[k][-1]:.3f}" for k in ratios])
            print(rows[-1], flush=True)
            alive.append((g, csr, view))
            del alive[:-2]
        del alive
        for k, v in ratios.items():
            summary.append(f"- scale {scale}, {k} order: CSR/graph median "
                           f"{statistics.median(v):.3f}, min {min(v):.3f}, max {max(v):.3f}, "
                           "builds under 0.9: "
                           f"{sum(r < 0.9 for r in v)} of {len(v)}")
        cupy.get_default_memory_pool().free_all_blocks()
    dev = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    dev = dev.decode() if isinstance(dev, bytes) else str(dev)
    notes = f"""Device: {dev}. Kronecker graphs (edge factor 16, seed 1), undirected, float64
weights; {args.builds} builds per scale, kernel-only warp SpMV (as in `spmv_tail_gpu.md`),
{args.repeats} interleaved rounds, median. Produced by `bench/spmv_order_spread_gpu.py`.

{chr(10).join(summary)}"""
    write_table(args.name, "Weighted SpMV, graph vs CSR, build to build, by the order rows are "
                "visited in", ["scale", "build", "CSR ms", "graph id order ms",
                               "graph address order ms", "graph storage order ms",
                               "CSR/graph id order", "CSR/graph address order",
                               "CSR/graph storage order"], rows, notes)


if __name__ == "__main__":
    main()
