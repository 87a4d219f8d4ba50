"""The least memory any power-of-two block layout can reserve for each real graph, by the size
of its vertex-table row, against the CSR's bytes and the churn benchmark's measured figure.

    PYTHONPATH=. python3 -m bench.tools.memory_bound [--graphs ca-GrQc p2p-Gnutella08]

A list of degree d > 0 needs at least one block of 2^ceil(log2 d) slots (4 bytes each); a
layout of power-of-two blocks reserves at least the sum of those blocks (*packed blocks*:
every block array full, no bit trees, no cached blocks), plus one vertex-table row per vertex
id. The row sizes compared:

- 13 bytes: degree int32, size class int8, edge pointer int64 (the graph's vertex table);
- 12 bytes: the size class kept inside the pointer's unused high bits;
- 9 bytes: a 32-bit list offset into one slot arena in place of the 64-bit address.

*measured*: the largest reserved / CSR of ``bench memory_churn_cpu``'s current table (100
rounds of 10% churn). A bound over 1.5 says that the churn criterion (at most 1.5x the CSR's
bytes) cannot be met with that row size by any block policy, only by a smaller row.
"""
from __future__ import annotations

import argparse

import numpy as np

import hornet
from bench.common import DATA, read_table, set_command, write_table
from bench.memory_cpu import csr_of

NAME = "memory_bound_cpu"
ROW_BYTES = (13, 12, 9)
SLOT_BYTES = 4


def packed_block_bytes(degrees: np.ndarray) -> int:
    """Bytes of one power-of-two block per list of ``degrees`` (int (n,)), slots of 4 bytes."""
    d = degrees[degrees > 0].astype(np.int64)
    blocks = np.left_shift(1, np.ceil(np.log2(d)).astype(np.int64))
    return int(blocks.sum()) * SLOT_BYTES


def graph_row(path, measured: dict) -> list:
    """One table row for the data-folder graph at ``path``."""
    _, A = csr_of(path, hornet.io.read_graph_file(path))
    n, entries = A.shape[0], A.nnz
    csr = (n + 1) * 8 + entries * SLOT_BYTES
    blocks = packed_block_bytes(np.diff(A.indptr))
    name = path.name.split(".")[0]
    bounds = [f"{(blocks + n * row) / csr:.3f}" for row in ROW_BYTES]
    return [name, n, entries, csr, f"{blocks / (entries * SLOT_BYTES):.2f}", *bounds,
            measured.get(name, "")]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", nargs="*", help="data-folder graph names (default: all)")
    args = ap.parse_args(argv)
    set_command("python3 -m bench.tools.memory_bound")
    try:
        _, rows = read_table("memory_churn_cpu")
        measured = {r["graph"]: r["largest/CSR"] for r in rows}
    except FileNotFoundError:
        measured = {}
    paths = sorted(p for p in DATA.iterdir() if p.name.endswith(".gz"))
    if args.graphs:
        paths = [p for p in paths if p.name.split(".")[0] in args.graphs]
    header = ["graph", "vertices", "entries", "CSR bytes", "packed blocks / edge bytes",
              *[f"bound/CSR, {row}-byte rows" for row in ROW_BYTES], "measured largest/CSR"]
    write_table(NAME, "The least reserved memory of a power-of-two block layout, by "
                "vertex-table row size (CPU)", header,
                [graph_row(p, measured) for p in paths], notes=__doc__.split("\n\n", 2)[2])


if __name__ == "__main__":
    main()
