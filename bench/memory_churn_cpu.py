"""Memory under churn on Kronecker 20 (CPU backend, default settings): the issue's two dynamic
memory criteria at scale (the tests check them on Kronecker 12 and 14).

- Ping-pong: insert a batch of 10^5 random pairs and delete what it inserted, 100 times; the
  largest deviation of the reserved bytes from the first round (criterion: within 10%).
- Shrinking: delete 90% of the edges at random in five batches; reserved bytes after against
  before (criterion: at most half).

    PYTHONPATH=. python3 bench/memory_churn_cpu.py
"""

from __future__ import annotations

import numpy as np

import hornet
from hornet.generators import kronecker_edges


def main() -> None:
    s, d = kronecker_edges(20, edge_factor=16, seed=1)
    g = hornet.Graph.from_edges(s, d, directed=False, device="cpu")
    n = g.num_vertices
    rng = np.random.default_rng(0)
    bs, bd = rng.integers(0, n, 100_000), rng.integers(0, n, 100_000)
    first, worst, reserved = None, 0.0, 0
    for _ in range(100):
        c = g.insert_edges(bs, bd)
        g.delete_edges(c.src, c.dst)
        reserved = g.memory_stats()["reserved_bytes"]
        first = first or reserved
        worst = max(worst, abs(reserved - first) / first)
    print(f"ping-pong, 100 rounds of 10^5: first {first / 2**20:.1f} MiB, last "
          f"{reserved / 2**20:.1f} MiB, largest deviation {100 * worst:.2f}%")
    g = hornet.Graph.from_edges(s, d, directed=False, device="cpu")
    before = g.memory_stats()["reserved_bytes"]
    es, ed = g.edges()
    doomed = rng.permutation(es.size)[: int(0.9 * es.size)]
    for chunk in np.array_split(doomed, 5):
        g.delete_edges(es[chunk], ed[chunk])
    after = g.memory_stats()["reserved_bytes"]
    g.check()
    print(f"90% deleted in 5 batches: {before / 2**20:.1f} -> {after / 2**20:.1f} MiB "
          f"({after / before:.3f} of before)")


if __name__ == "__main__":
    main()
