"""Where a GPU batch spends its time (cProfile of the host side; syncs show as waits).

    PYTHONPATH=. python3 bench/profile_gpu.py [scale] [batch]
"""
import cProfile
import pstats
import sys

import cupy

import hornet
from hornet.generators import kronecker_edges

scale = int(sys.argv[1]) if len(sys.argv) > 1 else 20
batch = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
src, dst = kronecker_edges(scale, seed=scale, xp=cupy)
g = hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False, device="gpu")
rs = cupy.random.RandomState(3)
n = g.num_vertices


def one():
    c = g.insert_edges(rs.randint(0, n, batch, dtype=cupy.int64),
                       rs.randint(0, n, batch, dtype=cupy.int64))
    d = g.delete_edges(c.src, c.dst)
    cupy.cuda.Device().synchronize()
    return c, d


for _ in range(10):
    one()
reps = 20 if batch <= 10**5 else 3
pr = cProfile.Profile()
pr.enable()
for _ in range(reps):
    one()
pr.disable()
print(f"scale {scale}, batch {batch}: insert+delete, {reps} reps")
pstats.Stats(pr).sort_stats("tottime").print_stats(40)
pstats.Stats(pr).sort_stats("cumtime").print_stats(25)
