"""networkx with and without hornet's backend: what converting costs and what it buys.

For random graphs (G(n, m), average degree 10) of growing size, times (median of a few runs)
the conversion of the networkx graph to a HornetGraph, each backend function on the
converted graph, and networkx's own function; "hornet total" is conversion plus run (one call
with ``backend="hornet"`` and no cached conversion). The table backs the thresholds of
``BackendInterface.should_run``.

    python3 bench/nx_backend.py --device cpu
    python3 bench/nx_backend.py --device gpu --sizes 20000 200000 2000000
"""
from __future__ import annotations

import argparse
import time

from bench.common import machine, median_time, write_table

import networkx as nx

from hornet.networkx_backend import BackendInterface as B, HornetGraph

CASES = {
    "triangles": (lambda G: nx.triangles(G), lambda H: B.triangles(H)),
    "average_clustering": (lambda G: nx.average_clustering(G),
                           lambda H: B.average_clustering(H)),
    "single_source_shortest_path_length": (
        lambda G: nx.single_source_shortest_path_length(G, 0),
        lambda H: B.single_source_shortest_path_length(H, 0)),
    "k_truss(4)": (lambda G: nx.k_truss(G, 4), lambda H: B.k_truss(H, 4)),
}


def _time(fn, repeats: int) -> float:
    """Median seconds of ``fn()`` after an untimed warm-up (which compiles kernels on a
    first call); a single timed run when one takes over 2 s."""
    fn()
    t = time.perf_counter()
    fn()
    once = time.perf_counter() - t
    return once if once > 2.0 else median_time(fn, repeats)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2_000, 20_000, 200_000],
                        help="edge counts")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--name", default=None, help="result file name (bench/results/)")
    args = parser.parse_args(argv)
    sync = (lambda: None)
    if args.device == "gpu":
        import cupy
        sync = cupy.cuda.Device().synchronize
    rows = []
    for m in args.sizes:
        G = nx.gnm_random_graph(m // 5, m, seed=m)
        convert = _time(lambda: (HornetGraph.from_networkx(G, args.device), sync()),
                        args.repeats)
        H = HornetGraph.from_networkx(G, args.device)
        for name, (nx_fn, hornet_fn) in CASES.items():
            ours = _time(lambda: (hornet_fn(H), sync()), args.repeats)
            theirs = _time(lambda: nx_fn(G), args.repeats)
            rows.append([m, name, round(convert * 1e3, 2), round(ours * 1e3, 2),
                         round((convert + ours) * 1e3, 2), round(theirs * 1e3, 2),
                         round(theirs / (convert + ours), 2)])
    notes = (f"Device: {args.device}. Machine: {machine()}. G(n, m) random graphs, "
             f"n = m / 5, median of {args.repeats} runs after one untimed warm-up (one run when a "
             "call takes over 2 s). Times in ms; speedup = networkx / (conversion + hornet).")
    write_table(args.name or f"nx_backend_{args.device}", "networkx backend: conversion and "
                "functions against networkx", ["edges", "function", "convert ms", "hornet ms",
                                               "hornet total ms", "networkx ms", "speedup"],
                rows, notes)


if __name__ == "__main__":
    main()
