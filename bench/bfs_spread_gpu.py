"""How much the BFS ratio graph/CSR varies from one build of the same graph to the next.

Each build is a fresh ``hornet.Graph.from_edges`` of the same Kronecker graph (the last two
builds stay alive while the next is made), so only where its block arrays land in device
memory changes. For every build: ``algos.bfs`` (direction-optimizing and top-down only) from
the same source on the graph and on its CSR view, whole calls timed with CUDA events,
interleaved rounds, median.

    PYTHONPATH=. python3 bench/bfs_spread_gpu.py [--scales 24] [--builds 6]
"""
from __future__ import annotations

import argparse
import statistics

import cupy
import numpy as np

import hornet
from hornet import algos
from hornet.adjacency import AdjacencyView

from common import write_table
from spmv_order_spread_gpu import median_times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", type=int, nargs="+", default=[24])
    ap.add_argument("--builds", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=31)
    ap.add_argument("--name", default="bfs_spread_gpu")
    args = ap.parse_args()
    rows, summary = [], []
    for scale in args.scales:
        n = 1 << scale
        s, d = hornet.generators.kronecker_edges(scale, xp=cupy, seed=1)
        alive, ratios = [], {True: [], False: []}
        source = None
        for b in range(args.builds):
            g = hornet.Graph.from_edges(s, d, num_vertices=n, directed=False, device="gpu")
            indptr, indices = g.to_csr()
            csr = AdjacencyView.from_csr(indptr, indices, directed=False, sorted=True)
            if source is None:                 # as bench_algos_gpu.py picks it
                cand = cupy.flatnonzero(g.degree() > 0)
                source = int(cand[int(np.random.default_rng(scale).integers(0, cand.shape[0]))])
            row = [scale, b]
            for do in (True, False):
                lv = algos.bfs(g, source, direction_optimizing=do)
                assert bool(cupy.all(lv == algos.bfs(csr, source, direction_optimizing=do)))
                med = median_times({
                    "graph": lambda: algos.bfs(g, source, direction_optimizing=do),
                    "CSR": lambda: algos.bfs(csr, source, direction_optimizing=do)},
                    args.repeats)
                ratios[do].append(med["CSR"] / med["graph"])
                row += [f"{med['graph']:.3f}", f"{med['CSR']:.3f}", f"{ratios[do][-1]:.3f}"]
            rows.append(row)
            print(row, flush=True)
            alive.append((g, csr))
            del alive[:-2]
        del alive
        for do, v in ratios.items():
            what = "direction-optimizing" if do else "top-down only"
            summary.append(f"- scale {scale}, {what}: CSR/graph median {statistics.median(v):.3f}"
                           f", min {min(v):.3f}, max {max(v):.3f}, builds under 0.9: "
                           f"{sum(r < 0.9 for r in v)} of {len(v)}")
        cupy.get_default_memory_pool().free_all_blocks()
    dev = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    dev = dev.decode() if isinstance(dev, bytes) else str(dev)
    notes = f"""Device: {dev}. Kronecker graphs (edge factor 16, seed 1), undirected;
{args.builds} builds per scale, whole `algos.bfs` calls (levels only), {args.repeats}
interleaved rounds, median. Produced by `bench/bfs_spread_gpu.py`.

{chr(10).join(summary)}"""
    write_table(args.name, "BFS, graph vs CSR, build to build",
                ["scale", "build", "DO graph ms", "DO CSR ms", "DO CSR/graph",
                 "top-down graph ms", "top-down CSR ms", "top-down CSR/graph"], rows, notes)


if __name__ == "__main__":
    main()
