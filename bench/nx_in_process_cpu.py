"""Does a large networkx graph in the same process slow hornet's CPU batches down? Times 10^5
random inserts into Kronecker scale 20 (median of 7, each batch deleted again untimed) without
networkx, with the networkx copy of the graph built, with the garbage collector off and frozen,
and after one networkx add_edges_from of 10^5 pairs (timed too).

    python3 bench/nx_in_process_cpu.py
"""
import gc, time, statistics, sys
import numpy as np
import hornet
from hornet.generators import kronecker_edges
src, dst = kronecker_edges(20, edge_factor=16, seed=20)
g = hornet.Graph.from_edges(src, dst, num_vertices=1 << 20, directed=False, device="cpu")
rng = np.random.default_rng(1)
n = 1 << 20
def timeit(label, reps=7):
    ts = []
    for _ in range(reps):
        s = rng.integers(0, n, 10**5); d = rng.integers(0, n, 10**5)
        t = time.perf_counter(); c = g.insert_edges(s, d); ts.append(time.perf_counter() - t)
        g.delete_edges(c.src, c.dst)
    print(label, "median ms", round(statistics.median(ts) * 1e3, 1), [round(x*1e3,1) for x in ts], flush=True)
timeit("warm"); timeit("no nx")
import networkx as nx
G = nx.Graph(); G.add_edges_from(zip(src.tolist(), dst.tolist()))
print("nx built", G.number_of_edges(), flush=True)
timeit("with nx")
gc.disable(); timeit("with nx, gc off"); gc.enable()
gc.freeze(); timeit("with nx, gc frozen")
s = rng.integers(0, n, 10**5); d = rng.integers(0, n, 10**5)
t = time.perf_counter(); G.add_edges_from(zip(s.tolist(), d.tolist())); print("nx add ms", (time.perf_counter()-t)*1e3)
timeit("after nx op")
