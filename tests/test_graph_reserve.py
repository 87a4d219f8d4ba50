"""``Graph.reserve``: room made ahead (vertex table rows, the block cache's rings filled) changes
no result: a reserved graph fed the same batches holds the same edges as one that grew batch
by batch (checked against the plain edge set of the batches), passes its invariant checks,
and keeps its id space; a replay that reserves equals one that does not, row by row, and
verifies against its reference model."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
import streams.replay as replay_module
from hornet.memory.block_cache import NUM_CLASSES


def _host(a):
    return a if isinstance(a, np.ndarray) else a.get()


def _batches(n_ids, batch, rounds, seed):
    rng = np.random.default_rng(seed)
    # skewed ids: a few lists grow through many size classes, most stay short
    ids = lambda k: np.minimum((rng.pareto(1.2, k) * 3).astype(np.int64), n_ids - 1)
    return [(ids(batch), rng.integers(0, n_ids, batch)) for _ in range(rounds)]


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("batch", [300, 5000])
def test_reserved_graph_equals_grown_graph(device, directed, batch):
    n_ids, rounds = 3000, 6
    batches = _batches(n_ids, batch, rounds, seed=batch + directed)
    plain = hornet.Graph(directed=directed, device=device)
    kept = hornet.Graph(directed=directed, device=device)
    kept.reserve(num_vertices=n_ids, num_edges=batch * rounds)
    assert kept.num_vertices == 0 and kept.num_edges == 0
    kept.check()
    if device == "gpu":
        plain.defer_inserts(ready=True)
        kept.defer_inserts(ready=True)
    expect = set()
    for s, d in batches:
        a, b = s, d
        if not directed:                     # (undirected graphs skip self-loops)
            keep = s != d
            a, b = np.minimum(s[keep], d[keep]), np.maximum(s[keep], d[keep])
        expect.update(zip(a.tolist(), b.tolist()))
        c1, c2 = plain.insert_edges(s, d), kept.insert_edges(s, d)
        assert len(c1) == len(c2)
    kept.check()
    plain.check()
    assert kept.num_vertices == plain.num_vertices
    assert kept.num_edges == plain.num_edges == len(expect)
    got = set(zip(*(_host(x).tolist() for x in kept.edges())))
    assert got == expect == set(zip(*(_host(x).tolist() for x in plain.edges())))


def test_reserve_fills_rings_within_their_ceilings(device):
    g = hornet.Graph(directed=True, device=device)
    g.set_array_growth(1 << 16)             # (a growing graph: rings up to their budgets)
    g.reserve(num_vertices=5000, num_edges=40000)
    cache = g._mm.block_cache()
    sizes = cache.sizes()
    # the lists' first blocks: as many as the vertices, within the ring's ceiling
    assert sizes[0] >= min(5000, int(cache.ceiling[0]))
    assert (sizes <= np.maximum(cache.ceiling, cache.target)).all()
    assert sizes[NUM_CLASSES - 1] == 0
    g.check()
    cache.check()
    s = np.arange(4000, dtype=np.int64)
    g.insert_edges(s, (s + 1) % 5000)
    g.check()
    assert g.num_edges == 4000


def test_reserve_checks_its_arguments():
    g = hornet.Graph(directed=True, device="cpu")
    with pytest.raises(ValueError):
        g.reserve(num_vertices=-1)
    with pytest.raises(ValueError, match="cannot exceed"):
        g.reserve(num_vertices=1 << 40)
    assert g.num_vertices == 0 and g.memory_stats()["vertex_table_bytes"] == 0
    g.reserve()                              # nothing asked, nothing made
    assert g.num_vertices == 0


@pytest.mark.parametrize("window", [None, 3000])
@pytest.mark.parametrize("batch", [700, 4000])
def test_replay_with_and_without_reserve(device, monkeypatch, window, batch):
    rng = np.random.default_rng(batch)
    n = 12000
    data = {"src": np.minimum((rng.pareto(1.2, n) * 3).astype(np.int64), 1999),
            "dst": rng.integers(0, 2000, n)}
    rows = {}
    for flag in (True, False):
        monkeypatch.setattr(replay_module, "RESERVE", flag)
        res = replay_module.replay(data, batch_size=batch, window=window, device=device,
                                   algos="tc", verify=flag)
        rows[flag] = res
    for col in ("inserted", "deleted", "expired", "edges", "vertices", "triangles"):
        assert list(rows[True][col]) == list(rows[False][col]), col
