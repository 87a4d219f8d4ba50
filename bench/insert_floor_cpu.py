"""How fast could a CPU insert of random edges be? The memory a batch must touch, touched once.

For each random batch (uniform pairs, as in ``bench_updates_cpu.py``) into the Kronecker graph,
this lists the cache lines that any insert keeping sorted adjacency lists must read and write:

- the vertex-table entries of every source (degree, size class, edge pointer);
- for a list that keeps its block, its lines from the first insertion point to its end (the
  entries there shift up);
- for a list that moves to a larger block, its whole old list (read once to be copied).

The writes of new blocks are left out (they are sequential), so the figure is a lower bound.
A Numba kernel then reads and writes one word of each line, two threads, independent loads,
in the order an insert visits them ("touch floor"). In the same run: ``Graph.insert_edges`` on
the same batch (then deleted again) and networkx ``add_edges_from``; the table states what 50x
networkx would need.

    PYTHONPATH=. python bench/insert_floor_cpu.py [--scale 20] [--batch 100000] [--repeats 5]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numba
import numpy as np

import hornet
from hornet.batch import cpu_kernels as K
from hornet.generators import kronecker_edges
from hornet.memory.pointers import address_of, int32_view

from common import machine, write_table


@numba.njit(parallel=True, cache=True)
def touch_lines(lines, delta):
    """Add ``delta`` to the first int32 of every line address (read and write each line)."""
    n = lines.shape[0]
    for c in numba.prange(2):
        for i in range(n * c // 2, n * (c + 1) // 2):
            w = int32_view(lines[i], 1)
            w[0] += delta


def batch_lines(g: hornet.Graph, s: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, dict]:
    """Line addresses (int64, visiting order) a sorted insert of the pairs must touch."""
    n = g.num_vertices
    _, ss, dd, _ = K.sorted_unique_pairs(s, d, n, not g.directed, False)
    pos = K.find_positions(ss, dd, g._degree, g._edge_ptr, n).copy()
    head = np.r_[True, ss[1:] != ss[:-1]]
    sources = ss[head].astype(np.int64)
    starts = np.flatnonzero(head)
    absent = pos < 0
    new = np.add.reduceat(absent.astype(np.int64), starts)
    first_at = np.where(absent, -1 - pos, pos)[starts]        # first entry's place in its list
    deg = g._degree[sources].astype(np.int64)
    cls = g._size_class[sources].astype(np.int64)
    cap = np.where(cls >= 0, 1 << np.maximum(cls, 0), 0)
    moves = deg + new > cap
    lo = np.where(moves, 0, np.minimum(first_at, deg))
    ptr = g._edge_ptr[sources]
    first_line = (ptr + 4 * lo) >> 6
    last_line = (ptr + 4 * deg - 1) >> 6
    count = np.where((deg > lo) & (new > 0), last_line - first_line + 1, 0)
    seg = np.repeat(np.arange(sources.size), count)
    step = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
    list_lines = (first_line[seg] + step) << 6
    table = [address_of(a) + a.itemsize * sources for a in (g._degree, g._size_class,
                                                             g._edge_ptr)]
    vertex_lines = np.unique(np.concatenate(table) >> 6) << 6
    stats = dict(entries=int(ss.size), segments=int(sources.size),
                 no_block=int((deg == 0).sum()), moves=int(((deg > 0) & moves).sum()),
                 keep=int(((deg > 0) & ~moves).sum()), list_lines=int(list_lines.size),
                 vertex_lines=int(vertex_lines.size))
    # vertex rows come in ascending order, interleaved with the lists: visit them first
    return np.concatenate([vertex_lines, list_lines]).astype(np.int64), stats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--batch", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-networkx", action="store_true")
    ap.add_argument("--name", default="insert_floor_cpu")
    args = ap.parse_args()
    src, dst = kronecker_edges(args.scale, edge_factor=16, seed=1)
    g = hornet.Graph.from_edges(src, dst, directed=False, device="cpu")
    n = g.num_vertices
    rng = np.random.default_rng(42)
    G = None
    if not args.no_networkx:
        import networkx as nx
        es, ed = g.edges()
        G = nx.Graph()
        G.add_nodes_from(range(n))
        G.add_edges_from(zip(es.tolist(), ed.tolist()))
    warm = rng.integers(0, n, (2, 1000))
    c = g.insert_edges(*warm)
    g.delete_edges(c.src, c.dst)
    touch_lines(np.zeros(0, np.int64), 1)
    floor, insert, nxt, info = [], [], [], None
    for r in range(args.repeats + 1):
        s, d = rng.integers(0, n, args.batch), rng.integers(0, n, args.batch)
        lines, info = batch_lines(g, s, d)
        t = time.perf_counter()
        touch_lines(lines, 1)
        t_touch = time.perf_counter() - t
        touch_lines(lines, -1)                    # undo (not timed)
        t = time.perf_counter()
        change = g.insert_edges(s, d)
        t_insert = time.perf_counter() - t
        g.delete_edges(change.src, change.dst)
        t_nx = float("nan")
        if G is not None:
            pairs = list(zip(s.tolist(), d.tolist()))
            fresh = [p for p in pairs if not G.has_edge(*p)]
            t = time.perf_counter()
            G.add_edges_from(pairs)
            t_nx = time.perf_counter() - t
            G.remove_edges_from(fresh)
        if r:                                     # the first round warms caches and pages
            floor.append(t_touch)
            insert.append(t_insert)
            nxt.append(t_nx)
        print(f"round {r}: touch {t_touch * 1e3:.2f} ms, insert {t_insert * 1e3:.2f} ms, "
              f"networkx {t_nx * 1e3:.1f} ms", flush=True)
    g.check()
    m = lambda xs: statistics.median(xs) * 1e3
    rows = [[f"Kronecker {args.scale}", args.batch, info["segments"], info["no_block"],
             info["keep"], info["moves"], info["vertex_lines"] + info["list_lines"],
             f"{m(floor):.2f}",
             f"{m(insert):.2f}", f"{m(nxt):.1f}", f"{m(nxt) / 50:.2f}",
             f"{m(nxt) / m(floor):.0f}", f"{m(nxt) / m(insert):.1f}"]]
    notes = f"""Machine: {machine()}.
Graph: Kronecker scale {args.scale} (edge factor 16, seed 1), undirected, {g.num_edges} edges.
Batches: {args.batch} uniformly random pairs (both directions stored), median of
{args.repeats} after one warm-up round; the graph is restored after each insert.
"lists": lists the batch reaches ("no block": empty before; "keep block": room for the new
entries; "move": outgrow their block); "lines": cache lines a sorted insert must touch (vertex-table entries of the sources, each
list from its first insertion point to its end, whole lists that move; last round's batch);
"touch floor": reading and writing one word of each of those lines, 2 threads, independent
loads (no search, no sort, no allocation: a lower bound for any insert of this batch);
"50x nx needs": networkx time / 50. Produced by `bench/insert_floor_cpu.py`."""
    write_table(args.name, "CPU insert: the touch floor of a random batch",
                ["graph", "batch", "lists", "no block", "keep block", "move", "lines",
                 "touch floor ms",
                 "insert ms", "networkx ms", "50x nx needs ms", "nx / floor", "nx / insert"],
                rows, notes)


if __name__ == "__main__":
    main()
