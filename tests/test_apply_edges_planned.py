"""``Graph.apply_edges`` on batches past the small-batch path, both halves with edges in
common: present edges that the insert names again and the delete removes, lists the delete
empties and the insert refills, a hub's long list losing and gaining entries, repeats, both
directions, ids past the id space. On the GPU these take one plan for both halves
(:mod:`hornet.batch.planned_mixed`, counted); checked against a host oracle (a dict of the
edges and their values), against ``insert_edges`` followed by ``delete_edges`` on a second
graph (the same changes, row by row), and the graph's invariants."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.batch import mixed

from test_apply_edges import _Nothing, _graph_dict, taken_paths, _oracle_apply, _same_change


def _counted(monkeypatch) -> list:
    """The mixed batches the GPU's planned path took (one entry per call it finished)."""
    return taken_paths(monkeypatch, mixed, "planned_apply")


def _batch(rng, oracle: dict, n: int, m: int, hub: int):
    """Inserts (new pairs, present edges, edges of the hub) and deletes (present edges in
    both directions, present edges the insert names too, absent pairs, pairs past the id
    space, repeats, a few whole lists, the hub's edges), none of them an edge that only the
    insert adds."""
    present = np.array(list(oracle), dtype=np.int64).reshape(-1, 2)
    pick = present[rng.integers(0, present.shape[0], m // 2)]
    s = np.concatenate([rng.integers(0, n + 40, m), pick[:m // 4, 0],
                        np.full(m // 8, hub), rng.integers(0, n, m // 8)])
    d = np.concatenate([rng.integers(0, n + 40, m), pick[:m // 4, 1],
                        rng.integers(0, n + 40, m // 8), np.full(m // 8, hub)])
    # whole lists: every present edge of a few vertices (the insert may refill them)
    whole = rng.integers(0, n, 8)
    lists = present[np.isin(present[:, 0], whole) | np.isin(present[:, 1], whole)]
    hubs = present[(present[:, 0] == hub) | (present[:, 1] == hub)]
    hubs = hubs[rng.random(hubs.shape[0]) < 0.3]
    es = np.concatenate([pick[:, 1], pick[:m // 4, 0], rng.integers(0, n + 200, m // 2),
                         pick[:m // 8, 0], lists[:, 0], hubs[:, 1]])
    ed = np.concatenate([pick[:, 0], pick[:m // 4, 1], rng.integers(0, n + 200, m // 2),
                         pick[:m // 8, 1], lists[:, 1], hubs[:, 0]])
    return s, d, es, ed


def _without_new(oracle: dict, directed: bool, s, d, es, ed):
    """The deletes less the pairs that name an edge the insert adds (absent before it)."""
    ins = {(u, v) if directed else (min(u, v), max(u, v))
           for u, v in zip(s.tolist(), d.tolist()) if directed or u != v}
    new = ins - set(oracle)
    keep = np.array([((u, v) if directed else (min(u, v), max(u, v))) not in new
                     for u, v in zip(es.tolist(), ed.tolist())], dtype=bool)
    return es[keep], ed[keep]


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("steady", [False, True])
def test_mixed_batches_equal_insert_then_delete(device, monkeypatch, directed, steady):
    taken = _counted(monkeypatch)
    rng = np.random.default_rng(21 + directed + 2 * steady)
    kw = dict(directed=directed, device=device, edge_properties={"w": np.float64})
    a, b = hornet.Graph(**kw), hornet.Graph(**kw)
    n, m, hub = 700, 3000, 5
    base_s = np.concatenate([rng.integers(0, n, 4 * m), np.full(3000, hub)])
    base_d = np.concatenate([rng.integers(0, n, 4 * m), rng.integers(0, n, 3000)])
    base_w = rng.random(base_s.shape[0])
    oracle = {}
    for g in (a, b):
        g.insert_edges(base_s, base_d, w=base_w)
    _oracle_apply(oracle, directed, (base_s, base_d), base_w, (np.empty(0, int),) * 2)
    for r in range(5):
        s, d, es, ed = _batch(rng, oracle, n + 30 * r, m, hub)
        es, ed = _without_new(oracle, directed, s, d, es, ed)
        w = rng.random(s.shape[0])
        with a.steady_churn() if steady else _Nothing(), \
                b.steady_churn() if steady else _Nothing():
            ins_a, del_a = a.apply_edges((s, d), (es, ed), w=w)
            ins_b = b.insert_edges(s, d, w=w)
            del_b = b.delete_edges(es, ed)
        _oracle_apply(oracle, directed, (s, d), w, (es, ed))
        _same_change(ins_a, ins_b)
        _same_change(del_a, del_b)
        assert len(del_a) > 0 and len(ins_a) > 0
        assert _graph_dict(a, directed) == oracle
        assert a.num_edges == b.num_edges and a.num_vertices == b.num_vertices
        a.check()
        assert (a.degree().tolist() if device == "cpu" else a.degree().get().tolist()) == \
            (b.degree().tolist() if device == "cpu" else b.degree().get().tolist())
    assert taken == ([True] * 5 if device == "gpu" else [])


@pytest.mark.parametrize("directed", [False, True])
def test_mixed_batches_without_properties(device, monkeypatch, directed):
    """No edge property: the changes carry no values; the insert's new edges that the delete
    names go through the two calls (not planned together), with the same result."""
    taken = _counted(monkeypatch)
    rng = np.random.default_rng(5 + directed)
    kw = dict(directed=directed, device=device)
    a, b = hornet.Graph(**kw), hornet.Graph(**kw)
    n, m = 2000, 5000                           # past the small path, directed too
    s0, d0 = rng.integers(0, n, 5 * m), rng.integers(0, n, 5 * m)
    for g in (a, b):
        g.insert_edges(s0, d0)
    for r in range(3):
        s, d = rng.integers(0, n + 100, m), rng.integers(0, n + 100, m)
        ps, pd = a.edges()[:2]
        ps, pd = np.asarray(ps.get() if hasattr(ps, "get") else ps), \
            np.asarray(pd.get() if hasattr(pd, "get") else pd)
        pick = rng.integers(0, ps.shape[0], m)
        es, ed = ps[pick], pd[pick]
        if r == 2:                              # new edges of the insert deleted too
            es, ed = np.concatenate([es, s[:50]]), np.concatenate([ed, d[:50]])
        ins_a, del_a = a.apply_edges((s, d), (es, ed))
        ins_b, del_b = b.insert_edges(s, d), b.delete_edges(es, ed)
        _same_change(ins_a, ins_b)
        _same_change(del_a, del_b)
        assert _edges_plain(a) == _edges_plain(b)
        a.check()
    assert taken == ([True, True, False] if device == "gpu" else [])


def _edges_plain(g) -> set:
    s, d = g.edges()[:2]
    s, d = (x.get() if hasattr(x, "get") else np.asarray(x) for x in (s, d))
    return set(zip(s.tolist(), d.tolist()))


@pytest.mark.parametrize("weighted", [False, True])
def test_windowed_replay_planned_together(device, monkeypatch, weighted):
    """A windowed replay whose batches and expiry go through one graph call each (on the GPU
    planned together), verified against the replay's reference model after every batch and
    row by row against the replay that makes two graph calls per batch; a small id space,
    so that edges reoccur and some just as their last event leaves the window."""
    from streams.replay import replay
    from test_apply_edges import _stream
    taken = _counted(monkeypatch)
    # batches of this size take two graph calls by default (streams.window_batch): here
    # every windowed batch goes as one mixed call
    monkeypatch.setattr("streams.window_batch.MIXED_CALL", True)
    data = _stream(36_000, 1 << 12, weighted, seed=3)
    kw = dict(batch_size=3000, window=9000, directed=False, algos="none", device=device)
    one = replay(data, verify=True, **kw)
    assert one.summary["verified"]
    assert sum(one["expired"]) > 0
    if device == "gpu":
        assert sum(taken) >= 6
    monkeypatch.setattr("streams.replay.insert_expire", lambda *a: False)
    two = replay(data, **kw)
    for column in ("inserted", "deleted", "expired", "edges", "vertices"):
        assert one[column].tolist() == two[column].tolist(), column
