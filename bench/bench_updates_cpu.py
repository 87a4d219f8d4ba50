"""Insert / delete throughput of the dynamic graph versus batch size (CPU backend), against
networkx (add_edges_from / remove_edges_from) and against rebuilding a scipy CSR, on the same
batches in the same run.

    python3 bench/bench_updates_cpu.py [--graphs enron,epinions,kron20] [--max-batch 1000000]

Rate = edges passed by the user per second (undirected graphs: each pair once), median of
repeats. Between timed calls the graph is restored untimed, so every batch sees the same graph.
"""
from __future__ import annotations

import argparse
import time

import networkx as nx
import numpy as np
import scipy.sparse as sp

from common import DATA, machine, write_table

import hornet
from hornet.generators import kronecker_edges


def load(name):
    if name == "enron":
        s, d, _ = hornet.io.read_edges(DATA / "email-Enron.txt.gz")
        return "email-Enron", s, d, False
    if name == "epinions":
        s, d, _ = hornet.io.read_edges(DATA / "soc-Epinions1.txt.gz")
        return "soc-Epinions1", s, d, True
    if name.startswith("kron"):
        scale = int(name[4:])
        s, d = kronecker_edges(scale, edge_factor=16, seed=1)
        return f"Kronecker scale {scale} (ef 16)", s, d, False
    raise ValueError(name)


class ForeignLoad:
    """Share of the machine's CPU time spent by other processes since creation (Linux
    /proc/stat minus this process's own time): a disturbed run shows here."""

    def __init__(self):
        self.start = self._now()

    @staticmethod
    def _now():
        try:
            cpu = [int(x) for x in open("/proc/stat").readline().split()[1:]]
            mine = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return sum(cpu) - cpu[3] - cpu[4], sum(cpu), int(mine[11]) + int(mine[12])

    def share(self) -> float:
        now = self._now()
        if now is None or self.start is None:
            return float("nan")
        busy, total, mine = (b - a for a, b in zip(self.start, now))
        return max(0.0, (busy - mine) / max(total, 1))


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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphs", default="enron,epinions,kron20")
    ap.add_argument("--max-batch", type=int, default=10**6)
    ap.add_argument("--nx-max-edges", type=int, default=20_000_000)
    ap.add_argument("--name", default="updates_cpu")
    args = ap.parse_args()
    sizes = [b for b in (1, 10, 100, 1000, 10**4, 10**5, 10**6) if b <= args.max_batch]
    rng = np.random.default_rng(42)
    rows, builds, loads = [], [], []
    for name in args.graphs.split(","):
        load = ForeignLoad()
        r, info = bench_graph(name, sizes, rng, args.nx_max_edges)
        rows += r
        builds.append(info)
        loads.append(load.share())
    notes = f"""Machine: {machine()}.
Rates in edges/s (edges as the user passes them; undirected: each pair once), median of
repeats (30 for batches <= 100, 10 <= 10^4, 5 for 10^5, 3 for 10^6; networkx and scipy at most
5 and 3). Insert batches: uniformly random pairs (mostly new edges); delete batches: existing
edges sampled at random. The graph is restored (untimed) after each timed call.
hornet: Graph.insert_edges / delete_edges (duplicate checks on, sorted adjacency kept, result
returned). networkx: add_edges_from / remove_edges_from. scipy rebuild: merge the batch into a
CSR (A + B, or A - A.multiply(B) + eliminate_zeros). 'x nx' and 'x scipy' = hornet speedup.
Graphs: {'; '.join(f'{l}: {e} edges, hornet build {b:.2f} s' for l, e, b in builds)}.
Other processes' share of the machine's CPU time while each graph ran (0% = undisturbed):
{'; '.join(f'{l}: {100 * s:.0f}%' for (l, _, _), s in zip(builds, loads))}."""
    write_table(args.name, "Update throughput versus batch size (CPU backend)",
                ["graph", "batch", "hornet insert/s", "hornet delete/s", "nx insert/s",
                 "nx delete/s", "scipy insert/s", "scipy delete/s", "insert x nx",
                 "delete x nx", "insert x scipy", "delete x scipy"], rows, notes)


if __name__ == "__main__":
    main()
