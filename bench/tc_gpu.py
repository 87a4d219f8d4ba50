"""GPU triangle counting on large Kronecker graphs (edges per second, every call).

    python3 -m bench tc_gpu [--scales 22 24 26] [--repeats 5] [--splits 256 512 1024]

The rows of ``bench algos_gpu --tc-scales`` (the same graphs, timing and notes: triangle
counting, and the first calls on one graph state of unweighted SpMV, BFS and triangle
counting), so the largest scales can be rerun alone.
``--splits``: the rows once per TC_SPLIT (hub keys' neighbours per block item,
``hornet.algos.triangles.gpu.TC_SPLIT``), labelled with it, into the table tc_gpu_splits
(tc_gpu keeps the library's setting).
"""
from __future__ import annotations

import argparse
import importlib

from bench.algos_gpu import HEADER, tc_only_rows
from bench.common import require_gpu, write_table

NAME = "tc_gpu"
NEEDS_GPU = True


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench tc_gpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", type=int, nargs="+", default=[22, 24, 26],
                    help="Kronecker scales")
    ap.add_argument("--repeats", type=int, default=5, help="timed calls per graph")
    ap.add_argument("--splits", type=int, nargs="*", default=[],
                    help="TC_SPLIT values to compare (default: the library's)")
    args = ap.parse_args(argv)
    require_gpu(NAME)
    import cupy
    tri = importlib.import_module("hornet.algos.triangles.gpu")
    default = tri.TC_SPLIT
    rows, graphs = [], []
    for scale in args.scales:
        for split in args.splits or [default]:
            tri.TC_SPLIT = split
            part = []
            about = tc_only_rows(scale, args, part)
            if args.splits:
                for row in part:
                    row[1] += f" (TC_SPLIT {split})"
            rows += part
            cupy.get_default_memory_pool().free_all_blocks()
        graphs.append(about)
    tri.TC_SPLIT = default
    write_table(NAME + "_splits" if args.splits else NAME,
                "GPU triangle counting on large Kronecker graphs", HEADER, rows,
                f"""Graphs (Graph500 Kronecker, R-MAT a=0.57, b=c=0.19, edge factor 16, seed 1,
generated on the device, undirected, no properties):
{chr(10).join('- ' + s for s in graphs)}

Times: CUDA events around each whole `hornet.algos.triangle_count(g)` call on
`hornet.Graph(device="gpu")` (orientation, key lists, scans and host syncs included; no state
kept between calls), one warm-up call, then the median of {args.repeats} calls. Rate:
undirected edges / time. "calls 1..k on one graph state": right after an update (one edge
inserted and deleted), each of the first k calls of unweighted `hornet.algos.spmv(g, x)`
(x float64), direction-optimizing `hornet.algos.bfs(g, source)` (a random vertex with edges)
and triangle counting timed alone, each algorithm warmed up on the graph first; the note gives
the slowest over the median. Only the "graph" column applies (no CSR copy, no cuSPARSE). Hub keys' neighbours are split
over block items of TC_SPLIT = {default} each unless a row names another.""", device="gpu")


if __name__ == "__main__":
    main()
