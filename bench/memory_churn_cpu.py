"""Memory under churn on every real graph: rounds of inserting 10% of the edges at random and
deleting them, reserved bytes against the CSR's.

    python3 -m bench memory_churn_cpu [--device cpu] [--rounds 100] [--graphs ca-GrQc ...]
    python3 -m bench memory_churn_cpu --kronecker 20     # also Kronecker ping-pong and shrink

Every graph of the data folder is built with ``Graph.from_csr`` (as in ``bench memory_cpu``:
undirected graphs store both directions, self-loops dropped). A round inserts ``num_edges //
10`` uniform random pairs and deletes the edges that went in; after every round the reserved
bytes (``Graph.memory_stats()``: block arrays, bit trees, vertex table) are read. Reported
against the CSR's bytes (int64 indptr + int32 indices): after the build, after the first round,
after the last, the largest, and the largest deviation from the first round. Criterion: at most
1.5x the CSR and within 10% of the first round. ``Graph.check()`` and the edge set (equal to
the built graph's) are verified after the last round.

``--kronecker S`` adds a second table (``memory_churn_kron_<device>``): ping-pong batches of
10^5 random pairs on Kronecker scale S, and deleting 90% of its edges in five batches.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

import hornet
from bench.common import DATA, kronecker, write_table
from bench.memory_cpu import csr_of

MIB = 2**20


def _host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def build(path, device: str):
    """(graph, directed, CSR matrix) of a data-folder graph built from its CSR."""
    directed, A = csr_of(path, hornet.io.read_graph_file(path))
    return hornet.Graph.from_csr(A.indptr, A.indices, directed=directed, device=device), \
        directed, A


def churn_row(path, device: str, rounds: int) -> list:
    """One table row: ``rounds`` rounds of 10% churn on the graph of ``path``."""
    g, directed, A = build(path, device)
    stats = g.memory_stats()
    csr, built = stats["csr_bytes"], stats["reserved_bytes"]
    rng = np.random.default_rng(0)
    n, k = g.num_vertices, max(1, g.num_edges // 10)
    reserved = []
    t0 = time.perf_counter()
    for _ in range(rounds):
        c = g.insert_edges(rng.integers(0, n, k), rng.integers(0, n, k))
        g.delete_edges(c.src, c.dst)
        reserved.append(g.memory_stats()["reserved_bytes"])
    seconds = time.perf_counter() - t0
    g.check()
    indptr, indices = g.to_csr()
    if not (np.array_equal(_host(indptr), A.indptr) and
            np.array_equal(_host(indices), A.indices)):
        raise SystemExit(f"bench memory_churn: {path.name}: the graph differs from its CSR")
    r = np.array(reserved, dtype=np.float64)
    deviation = float(np.abs(r / r[0] - 1).max())
    ok = r.max() <= 1.5 * csr and deviation <= 0.10
    return [path.name.split(".")[0], "directed" if directed else "undirected", n, g.num_edges,
            csr, round(built / csr, 3), round(r[0] / csr, 3), round(r[-1] / csr, 3),
            round(r.max() / csr, 3), f"{100 * deviation:.1f}%", "yes" if ok else "no",
            round(seconds, 1)]


def kronecker_rows(scale: int, device: str) -> list:
    """Ping-pong of 10^5 random pairs (100 rounds) and a 90% shrink on Kronecker ``scale``."""
    s, d = kronecker(scale)
    g = hornet.Graph.from_edges(s, d, directed=False, device=device)
    n = g.num_vertices
    built = g.memory_stats()["reserved_bytes"]
    rng = np.random.default_rng(0)
    bs, bd = rng.integers(0, n, 100_000), rng.integers(0, n, 100_000)
    first, worst, reserved = None, 0.0, 0
    for _ in range(100):
        c = g.insert_edges(bs, bd)
        g.delete_edges(c.src, c.dst)
        reserved = g.memory_stats()["reserved_bytes"]
        first = first or reserved
        worst = max(worst, abs(reserved - first) / first)
    g.check()
    rows = [["ping-pong: 100 rounds of 100000 random pairs inserted, then deleted",
             f"{built / MIB:.1f}", f"{first / MIB:.1f} (first round)",
             f"{reserved / MIB:.1f} (last round)",
             f"{100 * worst:.2f}% largest deviation from the first round"]]
    g = hornet.Graph.from_edges(s, d, directed=False, device=device)
    before = g.memory_stats()["reserved_bytes"]
    es, ed = (_host(a) for a in g.edges())
    doomed = rng.permutation(es.size)[: int(0.9 * es.size)]
    for chunk in np.array_split(doomed, 5):
        g.delete_edges(es[chunk], ed[chunk])
    after = g.memory_stats()["reserved_bytes"]
    g.check()
    rows.append(["shrink: 90% of the edges deleted at random in 5 batches", f"{before / MIB:.1f}",
                 f"{before / MIB:.1f}", f"{after / MIB:.1f}",
                 f"{after / before:.3f} of the memory before"])
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench memory_churn_cpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--rounds", type=int, default=100, help="churn rounds per graph")
    ap.add_argument("--graphs", nargs="*", default=[],
                    help="graph names (default: every *.gz in the data folder)")
    ap.add_argument("--kronecker", type=int, default=0, metavar="S",
                    help="also the Kronecker scale-S ping-pong and shrink table")
    args = ap.parse_args(argv)
    paths = sorted(DATA.glob("*.gz"))
    if args.graphs:
        paths = [p for p in paths if p.name.split(".")[0] in args.graphs]
    if not paths:
        raise SystemExit(f"no graphs in {DATA} (set HORNET_DATA)")
    load_before = os.getloadavg()[0]
    rows = [churn_row(p, args.device, args.rounds) for p in paths]
    load = f"{load_before:.1f} / {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    passed = sum(r[10] == "yes" for r in rows)
    write_table(
        f"memory_churn_{args.device}", f"Memory under churn ({args.device.upper()} backend)",
        ["graph", "kind", "vertices", "edges", "CSR bytes", "built/CSR", "first round/CSR",
         "last round/CSR", "largest/CSR", "largest deviation from the first round",
         "criterion met", "churn seconds"], rows,
        f"""{args.rounds} rounds per graph: `num_edges // 10` uniform random pairs inserted, then the
inserted edges deleted (seed 0); reserved bytes (`Graph.memory_stats()`: block arrays, bit
trees, vertex table) after every round, against the CSR's bytes (int64 indptr + int32
indices, both directions of undirected graphs). Built with `Graph.from_csr`, default settings.
Criterion: largest <= 1.5x CSR and within 10% of the first round: met on {passed} of
{len(rows)} graphs. `Graph.check()` passes and the edges equal the CSR's after the last
round. Machine load (1-minute load average, start / end): {load}.""", device=args.device)
    if args.kronecker:
        write_table(f"memory_churn_kron_{args.device}",
                    f"Kronecker memory under churn ({args.device.upper()} backend)",
                    ["scenario", "built MiB", "reference MiB", "after MiB", "result"],
                    kronecker_rows(args.kronecker, args.device),
                    f"""Kronecker scale {args.kronecker} (edge factor 16, seed 1), undirected; default
settings. Reserved bytes from `Graph.memory_stats()`; `Graph.check()` passes after each
scenario.""", device=args.device)


if __name__ == "__main__":
    main()
