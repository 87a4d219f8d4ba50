"""cProfile of one GPU max_truss call on Kronecker 18 (host time; syncs show as waits)."""
import cProfile, pstats, time, cupy, hornet
from hornet import algos
from hornet.generators import kronecker_edges
s, d = kronecker_edges(18, seed=1, xp=cupy)
g = hornet.Graph.from_edges(s, d, num_vertices=1 << 18, directed=False, device="gpu")
algos.max_truss(g); cupy.cuda.Device().synchronize()
t = time.perf_counter(); algos.max_truss(g); cupy.cuda.Device().synchronize(); print("plain", time.perf_counter() - t)
pr = cProfile.Profile(); pr.enable(); algos.max_truss(g); cupy.cuda.Device().synchronize(); pr.disable()
pstats.Stats(pr).sort_stats("tottime").print_stats(18)
pstats.Stats(pr).sort_stats("cumtime").print_stats(22)
