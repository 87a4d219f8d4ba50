"""CPU memory after building from a CSR, against the CSR and COO bytes, on every real graph.

    python3 -m bench memory_cpu [--graphs ca-GrQc email-Enron]   # default: every graph there is

Each graph is built with ``Graph.from_csr`` (default settings) and ``Graph.memory_stats()``
gives its reserved bytes, the bytes of a CSR (int64 indptr, int32 indices) and of a COO (int32
src and dst) of the same graph. *read s*: the best of two ``hornet.io.read_graph_file`` calls
on the compressed file (parsing included, the second call with the file in the page cache).
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp

import hornet
from bench.common import DATA, write_table

NAME = "memory_cpu"
UNDIRECTED = ("ca-", "email-Enron", "facebook_combined", "delaunay")


def csr_of(path, ef) -> tuple:
    """(directed, scipy CSR) of the data-folder graph ``path`` read as ``ef``: undirected
    graphs hold both directions and no self-loops; repeats summed, indices sorted."""
    directed = not path.name.startswith(UNDIRECTED)
    n = ef.num_vertices
    s, d = ef.src, ef.dst
    if not directed:
        keep = s != d
        s, d = np.r_[s[keep], d[keep]], np.r_[d[keep], s[keep]]
    A = sp.csr_matrix((np.ones(s.size, np.int8), (s, d)), shape=(n, n))
    A.sum_duplicates()
    A.sort_indices()
    return directed, A


def graph_row(path) -> list:
    """One table row: the graph of ``path`` built from its CSR, and its memory."""
    read_s = float("inf")
    for _ in range(2):
        t = time.perf_counter()
        ef = hornet.io.read_graph_file(path)
        read_s = min(read_s, time.perf_counter() - t)
    directed, A = csr_of(path, ef)
    g = hornet.Graph.from_csr(A.indptr, A.indices, directed=directed, device="cpu")
    m = g.memory_stats()
    return [path.name.split(".")[0], "directed" if directed else "undirected", ef.num_vertices, g.num_edges,
            m["csr_bytes"], m["coo_bytes"], m["reserved_bytes"], m["block_bytes"],
            m["vertex_table_bytes"], round(m["utilization"], 3),
            round(m["reserved_bytes"] / m["csr_bytes"], 3),
            round(m["reserved_bytes"] / m["coo_bytes"], 3), round(read_s, 3)]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench memory_cpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="*", default=[],
                    help="graph names (default: every *.gz in the data folder)")
    args = ap.parse_args(argv)
    paths = sorted(DATA.glob("*.gz"))
    if args.graphs:
        wanted = args.graphs
        paths = [p for p in paths if p.name.split(".")[0] in wanted]
        missing = set(wanted) - {p.name.split(".")[0] for p in paths}
        if missing:
            raise SystemExit(f"not in {DATA}: {', '.join(sorted(missing))}")
    if not paths:
        raise SystemExit(f"no graphs in {DATA} (set HORNET_DATA)")
    rows = [graph_row(p) for p in paths]
    mean = float(np.mean([r[10] for r in rows]))
    rows.append(["**mean**", "", "", "", "", "", "", "", "", "", round(mean, 3), "", ""])
    write_table(
        NAME, "Memory after building from CSR (CPU backend)",
        ["graph", "kind", "vertices", "edges", "CSR bytes", "COO bytes", "reserved bytes",
         "block bytes", "vertex table bytes", "utilization", "reserved/CSR", "reserved/COO",
         "read s"],
        rows,
        """Built with `Graph.from_csr` (default settings).
CSR = int64 indptr (V+1) + int32 indices; COO = int32 src + int32 dst; undirected graphs store
(and CSR/COO count) both directions. Reserved = block arrays (all slots) + bit trees + vertex
table (degree int32, size class int8, edge pointer int64 per vertex). Utilization = edge bytes /
reserved bytes.""")


if __name__ == "__main__":
    main()
