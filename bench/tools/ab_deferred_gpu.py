"""Same-process A/B of deferred GPU inserts (hornet.batch.deferred_path) on the updates
benchmark's pattern: random host pairs inserted into a Kronecker graph, timed with CUDA
events (``bench.updates_gpu.cuda_times``: the graph restored untimed after each call), the
graph's ``defer_inserts`` off and on in alternating rounds (``--device-pairs``: device pairs
too, which are not deferred: the same path twice).

    python3 bench/tools/ab_deferred_gpu.py [--scales 20] [--sizes 1000 10000] [--reps 30]

Run as a file with ``PYTHONPATH`` at the tree under test.
"""
from __future__ import annotations

import argparse
import statistics


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scales", nargs="+", type=int, default=[20])
    ap.add_argument("--sizes", nargs="+", type=int, default=[1000, 10000])
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--device-pairs", action="store_true")
    a = ap.parse_args(argv)
    import cupy

    import hornet
    from bench.common import kronecker
    from bench.updates_gpu import cuda_times, spikes
    for scale in a.scales:
        src, dst = kronecker(scale, seed=scale, xp=cupy)
        g = hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False,
                                    device="gpu")
        del src, dst
        n = g.num_vertices
        rs = cupy.random.RandomState(scale)
        for b in a.sizes:
            for host in ((False, True) if a.device_pairs else (True,)):
                times = {False: [], True: []}
                for r in range(a.rounds):
                    for deferred in ((False, True) if r % 2 == 0 else (True, False)):
                        g.defer_inserts(deferred)
                        batches = [(rs.randint(0, n, b, dtype=cupy.int64),
                                    rs.randint(0, n, b, dtype=cupy.int64))
                                   for _ in range(a.reps + 1)]
                        if host:
                            batches = [(s.get(), d.get()) for s, d in batches]
                        it = iter(batches)
                        times[deferred] += cuda_times(
                            lambda: g.insert_edges(*next(it)), a.reps,
                            undo=lambda c: g.delete_edges(c.src, c.dst))
                med = {k: statistics.median(v) * 1e6 for k, v in times.items()}
                print(f"kron{scale} insert {b} {'host' if host else 'device'} pairs: "
                      f"waiting {med[False]:.0f} us (over 2x median {spikes(times[False])} "
                      f"of {len(times[False])}), deferred {med[True]:.0f} us (over 2x "
                      f"{spikes(times[True])}), stalls {g._stalls}", flush=True)
        g.defer_inserts(False)
        g.check()
        g = None
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
