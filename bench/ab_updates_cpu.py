"""A/B helper: median wall time of CPU inserts (and the delete of what each inserted) of 10^5 and
10^6 random pairs into Kronecker 20; run it from two source trees in turn (PYTHONPATH=tree).

    PYTHONPATH=. python3 bench/ab_updates_cpu.py LABEL
"""
import sys, time, statistics, numpy as np
import hornet
from hornet.generators import kronecker_edges
s, d = kronecker_edges(20, seed=20)
g = hornet.Graph.from_edges(s, d, num_vertices=1 << 20, directed=False, device="cpu")
rng = np.random.default_rng(1)
out = []
for b in (10**5, 10**6):
    ti, td = [], []
    for r in range(9 if b == 10**5 else 5):
        u = rng.integers(0, 1 << 20, b); v = rng.integers(0, 1 << 20, b)
        t = time.perf_counter(); c = g.insert_edges(u, v); ti.append(time.perf_counter() - t)
        t = time.perf_counter(); g.delete_edges(c.src, c.dst); td.append(time.perf_counter() - t)
    out.append(f"{b}: insert {statistics.median(ti[1:])*1e3:.1f} ms, delete-own {statistics.median(td[1:])*1e3:.1f} ms")
print(sys.argv[1], "|", "; ".join(out), flush=True)
