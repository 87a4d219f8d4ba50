"""The CPU delete without a plan pass (hornet.batch.cpu.remove_first, every CPU graph's
delete): the same graph, storage included, as the planned fused delete (plan_delete,
allocation, remove_fused), against a Python set model; and a delete whose smaller blocks
cannot be allocated keeps the lists in their blocks, the graph valid."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.batch import pipeline
from hornet.memory.manager import DeviceMemoryError


def _planned_delete(g, s, d):
    """The planned fused delete (plan first, the smaller blocks allocated before anything is
    written, then remove_fused): the oracle of the storage a delete leaves."""
    ss, dd, _, _, segments = pipeline.unique_pairs(g, np.asarray(s, np.int64),
                                                   np.asarray(d, np.int64), max(g._n, 1),
                                                   segments=True)
    pipeline._delete_planned(g, ss, dd, segments)


def _layout(g) -> list:
    """Each vertex's (degree, size class, block array's place in its class's pool, offset in
    it): the storage, independent of where the arrays happen to lie in memory."""
    out = []
    for v in range(g._n):
        k, p = int(g._size_class[v]), int(g._edge_ptr[v])
        place = None
        if k >= 0:
            pool = g._mm.pools[k]
            place = next((i, p - a.base) for i, a in enumerate(pool)
                         if a.base <= p < a.base + 4 * (a.num_blocks << k))
        out.append((int(g._degree[v]), k, place))
    return out


def _model(g) -> dict:
    s, d, props = g.edges(properties=True)
    return {(a, b): w for a, b, w in zip(s.tolist(), d.tolist(), props["w"].tolist())}


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("size", [300, pytest.param(20_000,
                                                    marks=pytest.mark.parallel_kernels)])
def test_delete_matches_the_planned_delete_and_a_set_model(directed, size):
    rng = np.random.default_rng(size + directed)
    n = 400
    # skewed degrees: lists of every size, so that deletes empty lists, shrink lists under a
    # quarter of their block (they move) and leave others in place
    s = (rng.pareto(1.2, 6 * size) * 3).astype(np.int64) % n
    d = rng.integers(0, n, 6 * size)
    w = rng.random(6 * size)
    a, b = (hornet.Graph(directed=directed, device="cpu", edge_properties={"w": np.float64})
            for _ in range(2))
    for g in (a, b):
        g._small_batches = False             # every batch through the fused pipeline
        g.insert_edges(s, d, w=w)
    assert _layout(a) == _layout(b)
    model = _model(a)
    for round_ in range(4):
        es, ed = a.edges()
        pick = rng.choice(es.shape[0], min(size, es.shape[0]), replace=False)
        # present edges (either direction when undirected), absent pairs, repeats
        ds = np.r_[es[pick], rng.integers(0, n, size // 4), es[pick[:size // 8]]]
        dd = np.r_[ed[pick], rng.integers(0, n, size // 4), ed[pick[:size // 8]]]
        if not directed:
            flip = rng.random(ds.shape[0]) < 0.5
            ds, dd = np.where(flip, dd, ds), np.where(flip, ds, dd)
        change = a.delete_edges(ds, dd)
        _planned_delete(b, ds, dd)
        want = {}
        for x, y in zip(ds.tolist(), dd.tolist()):
            key = (x, y) if directed else (min(x, y), max(x, y))
            if key in model:
                want[key] = model.pop(key)
        got = dict(zip(zip(change.src.tolist(), change.dst.tolist()),
                       change.properties["w"].tolist()))
        assert got == want, round_
        assert _model(a) == model, round_
        assert _layout(a) == _layout(b), round_
        assert a._entries == b._entries
        a.check()
    assert (np.asarray(a._size_class[:a._n]) >= 0).sum() < n      # some lists emptied


def test_lists_keep_their_blocks_when_no_smaller_block_can_be_allocated(monkeypatch):
    g = hornet.Graph(directed=True, device="cpu", edge_properties={"w": np.int32})
    g._small_batches = False                 # the fused pipeline's delete
    g.insert_edges(np.zeros(64, np.int64), np.arange(1, 65), w=np.arange(64, dtype=np.int32))
    g.insert_edges(np.ones(8, np.int64), np.arange(2, 10), w=np.full(8, 7, np.int32))
    cls0 = int(g._size_class[0])

    def no_memory(per_class):
        raise DeviceMemoryError("no memory (test)", 1)
    monkeypatch.setattr(g._mm, "allocate_counts", no_memory)
    change = g.delete_edges(np.zeros(60, np.int64), np.arange(1, 61))   # 4 of 64 left
    assert sorted(change.dst.tolist()) == list(range(1, 61))
    assert change.properties["w"].tolist() == list(range(60))
    assert int(g._size_class[0]) == cls0                  # it would have moved: it stays
    s, d, p = g.edges(properties=True)
    assert list(zip(s.tolist(), d.tolist(), p["w"].tolist())) == \
        [(0, 61, 60), (0, 62, 61), (0, 63, 62), (0, 64, 63)] + \
        [(1, v, 7) for v in range(2, 10)]
    g.check()
    monkeypatch.undo()
    g.insert_edges(np.zeros(2, np.int64), np.array([1, 2]), w=np.array([5, 6], np.int32))
    g.delete_edges(np.array([0]), np.array([61]))
    assert g.degree(np.array([0])).tolist() == [5]
    g.check()
