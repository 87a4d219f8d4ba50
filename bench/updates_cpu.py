"""CPU insert / delete throughput versus batch size, against networkx and a scipy CSR rebuild.

    python3 -m bench updates_cpu [--graphs email-Enron soc-Epinions1 kron20] [--max-batch 1000000]
    python3 -m bench updates_cpu --quick        # email-Enron, batches up to 10^4
    python3 -m bench updates_cpu --tune         # hornet.tune_process() first

By default the process runs as a plain ``import hornet`` leaves it (no process-wide tuning:
batch temporaries come from the graph's workspace); ``--tune`` calls
:func:`hornet.tune_process` first (glibc's heap thresholds); ``python3 -m bench
process_tuning`` compares the settings.

Rate = edges passed by the user per second (undirected graphs: each pair once), median of
repeats; networkx (``add_edges_from`` / ``remove_edges_from``) and scipy (the batch merged into a
CSR) time the same batches in the same run. Between timed calls the graph is restored untimed,
so every batch sees the same graph.
"""
from __future__ import annotations

import argparse
import time

import networkx as nx
import numpy as np
import scipy.sparse as sp

import hornet
from bench.common import ForeignLoad, kronecker, real_graph_path, write_table

NAME = "updates_cpu"
DIRECTED = {"soc-Epinions1": True}          # real graphs read as directed (others: undirected)


def load(name: str):
    """(label, src, dst, directed) of ``kronN`` or a real graph of the data folder."""
    if name.startswith("kron") and name[4:].isdigit():
        scale = int(name[4:])
        s, d = kronecker(scale)
        return f"Kronecker scale {scale} (ef 16)", s, d, False
    s, d, _ = hornet.io.read_edges(real_graph_path(name))
    return name, s, d, DIRECTED.get(name, False)


def repeats_for(b: int) -> int:
    return 30 if b <= 100 else 10 if b <= 10_000 else 5 if b <= 100_000 else 3


class ScipyRebuild:
    """Baseline: the graph as a scipy CSR rebuilt (merged) for every batch."""

    def __init__(self, g: hornet.Graph):
        self.n, self.directed = g.num_vertices, g.directed
        self.A = g.to_scipy().astype(np.int8)

    def _batch(self, s, d):
        if not self.directed:
            s, d = np.r_[s, d], np.r_[d, s]
        B = sp.csr_matrix((np.ones(s.size, np.int8), (s, d)), shape=(self.n, self.n))
        B.data[:] = 1
        return B

    def insert(self, s, d):
        A = self.A + self._batch(s, d)
        A.data[:] = 1
        self.A = A

    def delete(self, s, d):
        A = self.A - self.A.multiply(self._batch(s, d))
        A.eliminate_zeros()
        self.A = A.tocsr()


def bench_graph(name, sizes, rng, nx_max_edges):
    label, src, dst, directed = load(name)
    t = time.perf_counter()
    g = hornet.Graph.from_edges(src, dst, directed=directed, device="cpu")
    build = time.perf_counter() - t
    n = g.num_vertices
    es, ed = g.edges()
    print(f"{label}: {n} vertices, {g.num_edges} edges, built in {build:.2f} s", flush=True)
    base = ScipyRebuild(g)
    G = None
    if g.num_edges <= nx_max_edges:
        G = nx.DiGraph() if directed else nx.Graph()
        G.add_nodes_from(range(n))
        G.add_edges_from(zip(es.tolist(), ed.tolist()))
    # warm-up (compiles or loads the Numba kernels)
    c = g.insert_edges(rng.integers(0, n, 1000), rng.integers(0, n, 1000))
    g.delete_edges(c.src, c.dst)
    rows = []
    for b in sizes:
        reps = repeats_for(b)
        ins = [(rng.integers(0, n, b), rng.integers(0, n, b)) for _ in range(reps)]
        picks = [rng.choice(es.size, size=min(b, es.size), replace=False) for _ in range(reps)]
        dels = [(es[p].astype(np.int64), ed[p].astype(np.int64)) for p in picks]
        it = iter(ins)
        dt = iter(dels)

        def h_ins():
            s, d = next(it)
            c = g.insert_edges(s, d)
            h_ins.undo = c

        def h_del():
            s, d = next(dt)
            h_del.undo = g.delete_edges(s, d)

        h = []
        for fn, undo in ((h_ins, lambda c: g.delete_edges(c.src, c.dst)),
                         (h_del, lambda c: g.insert_edges(c.src, c.dst))):
            times = []
            for _ in range(reps):
                t = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t)
                undo(fn.undo)
            h.append(float(np.median(times)))
        # scipy rebuild, same batches
        sc = []
        for op, batches in ((base.insert, ins), (base.delete, dels)):
            keep = base.A
            times = []
            for s, d in batches[: max(1, min(reps, 3))]:
                base.A = keep
                t = time.perf_counter()
                op(s, d)
                times.append(time.perf_counter() - t)
            base.A = keep
            sc.append(float(np.median(times)))
        # networkx, same batches
        nxt = [float("nan"), float("nan")]
        if G is not None:
            times = []
            for s, d in ins[: max(1, min(reps, 5))]:
                pairs = list(zip(s.tolist(), d.tolist()))
                new = [p for p in pairs if not G.has_edge(*p)]
                t = time.perf_counter()
                G.add_edges_from(pairs)
                times.append(time.perf_counter() - t)
                G.remove_edges_from(new)
            nxt[0] = float(np.median(times))
            times = []
            for s, d in dels[: max(1, min(reps, 5))]:
                pairs = list(zip(s.tolist(), d.tolist()))
                t = time.perf_counter()
                G.remove_edges_from(pairs)
                times.append(time.perf_counter() - t)
                G.add_edges_from(pairs)
            nxt[1] = float(np.median(times))
        rate = lambda t: b / t
        rows.append([label, b, f"{rate(h[0]):.3g}", f"{rate(h[1]):.3g}",
                     f"{rate(nxt[0]):.3g}", f"{rate(nxt[1]):.3g}",
                     f"{rate(sc[0]):.3g}", f"{rate(sc[1]):.3g}",
                     f"{nxt[0] / h[0]:.1f}", f"{nxt[1] / h[1]:.1f}",
                     f"{sc[0] / h[0]:.1f}", f"{sc[1] / h[1]:.1f}"])
        print(rows[-1], flush=True)
    g.check()
    return rows, (label, g.num_edges, build)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench updates_cpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", default=["email-Enron", "soc-Epinions1", "kron20"],
                    help="kronN or real graph names of the data folder")
    ap.add_argument("--max-batch", type=int, default=10**6)
    ap.add_argument("--nx-max-edges", type=int, default=20_000_000,
                    help="no networkx column for larger graphs")
    ap.add_argument("--quick", action="store_true",
                    help="email-Enron only, batches up to 10^4 (a smoke test)")
    ap.add_argument("--tune", action="store_true",
                    help="call hornet.tune_process() before the first batch")
    args = ap.parse_args(argv)
    tuning = "none (plain import hornet)"
    if args.tune:
        applied = hornet.tune_process()
        tuning = f"hornet.tune_process() applied {applied}"
    if args.quick:
        args.graphs, args.max_batch = ["email-Enron"], min(args.max_batch, 10**4)
    sizes = [b for b in (1, 10, 100, 1000, 10**4, 10**5, 10**6) if b <= args.max_batch]
    rng = np.random.default_rng(42)
    rows, builds, loads = [], [], []
    for name in args.graphs:
        load_share = ForeignLoad()
        r, info = bench_graph(name, sizes, rng, args.nx_max_edges)
        rows += r
        builds.append(info)
        loads.append(load_share.share())
    notes = f"""Rates in edges/s (edges as the user passes them; undirected: each pair once), median
of repeats (30 for batches <= 100, 10 <= 10^4, 5 for 10^5, 3 for 10^6; networkx and scipy at most
5 and 3). Insert batches: uniformly random pairs (mostly new edges); delete batches: existing
edges sampled at random. The graph is restored (untimed) after each timed call.
hornet: Graph.insert_edges / delete_edges (duplicate checks on, sorted adjacency kept, result
returned). networkx: add_edges_from / remove_edges_from. scipy rebuild: merge the batch into a
CSR (A + B, or A - A.multiply(B) + eliminate_zeros). 'x nx' and 'x scipy' = hornet speedup.
Graphs: {'; '.join(f'{l}: {e} edges, hornet build {b:.2f} s' for l, e, b in builds)}.
Process-wide tuning: {tuning}.
Other processes' share of the machine's CPU time while each graph ran (0% = undisturbed):
{'; '.join(f'{l}: {100 * s:.0f}%' for (l, _, _), s in zip(builds, loads))}."""
    write_table(NAME, "Update throughput versus batch size (CPU backend)",
                ["graph", "batch", "hornet insert/s", "hornet delete/s", "nx insert/s",
                 "nx delete/s", "scipy insert/s", "scipy delete/s", "insert x nx",
                 "delete x nx", "insert x scipy", "delete x scipy"], rows, notes)


if __name__ == "__main__":
    main()
