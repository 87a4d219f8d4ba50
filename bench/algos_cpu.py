"""CPU static algorithms: the dynamic graph versus the same kernels on a CSR, and scipy / networkx.

    python3 -m bench algos_cpu [--graphs ca-HepPh email-Enron soc-Epinions1 kron18] [--repeats 21]
    python3 -m bench algos_cpu --quick             # ca-HepPh, 5 rounds

Every algorithm has one implementation over an AdjacencyView; "CSR" below is that same code on
``AdjacencyView.from_csr`` of the graph's own CSR, so the ratio isolates the data structure.
Times in seconds: SpMV and BFS medians of interleaved rounds (graph, CSR and baseline taking
turns); the others medians of repeats after a warm-up call (Numba compiled).
"""
from __future__ import annotations

import argparse

import networkx as nx
import numpy as np
import scipy.sparse.csgraph as csgraph

import hornet
from bench.common import (interleaved, kronecker, ktruss_ref, median_time, real_graph_path,
                          write_table)

NAME = "algos_cpu"


def timed(fn, repeats: int = 5) -> float:
    """Median wall seconds of ``fn`` over ``repeats`` calls after one warm-up call."""
    fn()
    return median_time(fn, repeats)


def load(name: str) -> hornet.Graph:
    """``kronN`` or a real graph of the data folder, undirected, with a float64 "weight"."""
    if name.startswith("kron") and name[4:].isdigit():
        s, d = kronecker(int(name[4:]))
    else:
        s, d, _ = hornet.io.read_edges(real_graph_path(name))
    w = np.random.default_rng(2).random(s.shape[0])
    return hornet.Graph.from_edges(s, d, directed=False, device="cpu", weight=w)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench algos_cpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+",
                    default=["ca-HepPh", "email-Enron", "soc-Epinions1", "kron18"],
                    help="kronN or real graph names of the data folder")
    ap.add_argument("--nx-max-edges", type=int, default=300_000)
    ap.add_argument("--repeats", type=int, default=21,
                    help="interleaved rounds of the SpMV and BFS rows")
    ap.add_argument("--quick", action="store_true", help="ca-HepPh only, 5 rounds")
    args = ap.parse_args(argv)
    if args.quick:
        args.graphs, args.repeats = ["ca-HepPh"], 5
    rows = []
    for name in args.graphs:
        g = load(name)
        indptr, indices, weights = g.to_csr("weight")
        csr = hornet.AdjacencyView.from_csr(indptr, indices, directed=False, weights=weights)
        A, Aw = g.to_scipy(), g.to_scipy("weight")
        n, m = g.num_vertices, g.num_edges
        x = np.random.default_rng(0).random(n)
        src = int(np.argmax(g.degree()))
        small = m <= args.nx_max_edges
        G = g.to_networkx() if small else None
        print(f"{name}: {n} vertices, {m} edges", flush=True)

        for label, weight, mat in (("SpMV", None, A), ("SpMV float64 weights", "weight", Aw)):
            t_g, t_c, t_s = interleaved([lambda: hornet.algos.spmv(g, x, weight=weight),
                                         lambda: hornet.algos.spmv(csr, x, weight=weight),
                                         lambda: mat @ x], args.repeats)
            rows.append([name, label, m, f"{t_g:.2e}", f"{t_c:.2e}", f"{t_c / t_g:.2f}",
                         "scipy A@x", f"{t_s:.2e}", f"{t_s / t_g:.2f}", ""])

        t_g, t_c, t_s = interleaved([
            lambda: hornet.algos.bfs(g, src), lambda: hornet.algos.bfs(csr, src),
            lambda: csgraph.breadth_first_order(A, src, directed=False,
                                                return_predecessors=False)], args.repeats)
        reached = int((hornet.algos.bfs(g, src) >= 0).sum())
        rows.append([name, "BFS", m, f"{t_g:.2e}", f"{t_c:.2e}", f"{t_c / t_g:.2f}",
                     "scipy csgraph BFS", f"{t_s:.2e}", f"{t_s / t_g:.2f}",
                     f"{2 * m / t_g / 1e6:.0f} M TEPS, {reached} reached"])

        tri = hornet.algos.triangle_count(g)
        t_g = timed(lambda: hornet.algos.triangle_count(g), 3)
        t_c = timed(lambda: hornet.algos.triangle_count(csr), 3)
        if small:
            t_s = timed(lambda: sum(nx.triangles(G).values()) // 3, 1)
            base, ratio = f"{t_s:.2e}", f"{t_s / t_g:.1f}"
        else:
            base, ratio = "-", "-"
        rows.append([name, "triangles", m, f"{t_g:.2e}", f"{t_c:.2e}", f"{t_c / t_g:.2f}",
                     "networkx", base, ratio, f"{tri} triangles, {tri / t_g / 1e6:.0f} M/s"])

        kmax, _, _ = hornet.algos.max_truss(g)
        t_g = timed(lambda: hornet.algos.max_truss(g), 1)
        t_c = timed(lambda: hornet.algos.max_truss(csr), 1)
        ref = ktruss_ref(name)       # Table 19.2: (k_max, cuSTINGER-Delta P100 s)
        rows.append([name, "max k-truss (delta)", m, f"{t_g:.2e}", f"{t_c:.2e}",
                     f"{t_c / t_g:.2f}", "cuSTINGER-Delta P100 (Table 19.2)",
                     f"{ref[1]:.2e}" if ref else "-", f"{ref[1] / t_g:.2f}" if ref else "-",
                     f"k_max {kmax}" + (f" (paper {ref[0]})" if ref else "")])
        print(rows[-5:], flush=True)
    write_table(NAME, "Static algorithms on the CPU: dynamic graph vs CSR vs baselines",
                ["graph", "algorithm", "edges", "hornet graph s", "same code on CSR s",
                 "graph speed / CSR speed", "baseline", "baseline s", "baseline s / graph s",
                 "notes"], rows,
                f"""Undirected graphs (Kronecker: Graph500 R-MAT, edge factor 16, seed 1), a float64
edge property "weight". "graph speed / CSR speed" = CSR time / graph time (above 1: the graph
is faster). SpMV and BFS rows: {args.repeats} interleaved rounds (graph, CSR and baseline take
turns), median, after two untimed calls each (so the graph's SpMV visits its rows in storage
order, as from the second call on an unchanged graph); other rows: median of a few repeats
after a warm-up call. Baselines: scipy `A @ x`,
`scipy.sparse.csgraph.breadth_first_order` from the highest-degree vertex, networkx
`triangles` (graphs up to 300K edges), and the cuSTINGER-Delta P100 times of the k-truss
chapter's Table 19.2 (a GPU; for scale only). max_truss on the dynamic graph peels a copy of
it with batched deletions (the chapter's scheme); on the CSR it peels a mask.""")


if __name__ == "__main__":
    main()
