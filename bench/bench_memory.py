"""Memory held by the dynamic graph after building from CSR, against CSR and COO, on every real
graph in shared/data (CPU backend).

    python3 bench/bench_memory.py
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from common import DATA, machine, write_table

import hornet

UNDIRECTED = ("ca-", "email-Enron", "facebook_combined", "delaunay")


def main() -> None:
    rows = []
    ratios = []
    for path in sorted(DATA.glob("*.gz")):
        ef = hornet.io.read_graph_file(path)
        directed = not path.name.startswith(UNDIRECTED)
        n = ef.num_vertices
        s, d = ef.src, ef.dst
        if not directed:
            keep = s != d
            s, d = np.r_[s[keep], d[keep]], np.r_[d[keep], s[keep]]
        A = sp.csr_matrix((np.ones(s.size, np.int8), (s, d)), shape=(n, n))
        A.sum_duplicates()
        A.sort_indices()
        g = hornet.Graph.from_csr(A.indptr, A.indices, directed=directed, device="cpu")
        m = g.memory_stats()
        ratio = m["reserved_bytes"] / m["csr_bytes"]
        ratios.append(ratio)
        rows.append([path.name.split(".")[0], "directed" if directed else "undirected", n,
                     g.num_edges, m["csr_bytes"], m["coo_bytes"], m["reserved_bytes"],
                     m["block_bytes"], m["vertex_table_bytes"], round(m["utilization"], 3),
                     round(ratio, 3), round(m["reserved_bytes"] / m["coo_bytes"], 3)])
    rows.append(["**mean**", "", "", "", "", "", "", "", "", "", round(float(np.mean(ratios)), 3),
                 ""])
    write_table(
        "memory_cpu", "Memory after building from CSR (CPU backend)",
        ["graph", "kind", "vertices", "edges", "CSR bytes", "COO bytes", "reserved bytes",
         "block bytes", "vertex table bytes", "utilization", "reserved/CSR", "reserved/COO"],
        rows,
        f"""Machine: {machine()}.
Built with `Graph.from_csr` (default settings: block_array_edges={hornet.graph.DEFAULT_BLOCK_ARRAY_EDGES['cpu']}, min_block_size=1).
CSR = int64 indptr (V+1) + int32 indices; COO = int32 src + int32 dst; undirected graphs store
(and CSR/COO count) both directions. Reserved = block arrays (all slots) + bit trees + vertex
table (degree int32, size class int8, edge pointer int64 per vertex). Utilization = edge bytes /
reserved bytes. Target: mean reserved/CSR <= 1.5.""")


if __name__ == "__main__":
    main()
