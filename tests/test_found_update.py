"""update_edges on the batch paths' lookups (hornet.batch.found_update) and the weighted
replay built on it (streams.weighted_batch): against a dictionary of the edges' values."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.testing import to_host


def _oracle(s, d, w, t):
    """{(u, v): [w, t]}, the first occurrence of a pair kept."""
    out = {}
    for u, v, a, b in zip(s.tolist(), d.tolist(), w.tolist(), t.tolist()):
        out.setdefault((u, v), [a, b])
    return out


@pytest.mark.parametrize("m", [1, 700, 4096, 4097, 30000])
def test_update_edges_matches_a_dictionary(device, m):
    rng = np.random.default_rng(m)
    n = 400 if m < 5000 else 3000
    g = hornet.Graph(directed=True, device=device,
                     edge_properties={"w": np.float64, "t": np.int64})
    s, d = rng.integers(0, n, 3 * m), rng.integers(0, n, 3 * m)
    w, t = rng.random(3 * m), rng.integers(0, 10**9, 3 * m)
    g.insert_edges(s, d, w=w, t=t)
    held = _oracle(s, d, w, t)
    # repeats, absent pairs and ids past the id space among the updated pairs
    us = np.r_[rng.choice(s, m - m // 3), rng.integers(0, n + 50, m // 3)]
    ud = np.r_[rng.choice(d, m - m // 3), rng.integers(0, n + 50, m // 3)]
    if m > 1:
        us[m // 2], ud[m // 2] = us[0], ud[0]
    uw = rng.random(m)
    change = g.update_edges(us, ud, w=uw)
    first = {}
    for i, key in enumerate(zip(us.tolist(), ud.tolist())):
        if key in held:
            first.setdefault(key, i)
    keys = sorted(first)
    assert change.kind == "update" and list(change.properties) == ["w"]
    assert to_host(change.src).tolist() == [k[0] for k in keys]
    assert to_host(change.dst).tolist() == [k[1] for k in keys]
    assert to_host(change.properties["w"]).tolist() == [float(uw[first[k]]) for k in keys]
    assert to_host(change.previous["w"]).tolist() == [held[k][0] for k in keys]
    for k in keys:
        held[k][0] = float(uw[first[k]])
    es, ed, props = g.edges(properties=True)
    got = {(u, v): [a, b] for u, v, a, b in zip(to_host(es).tolist(), to_host(ed).tolist(),
                                               to_host(props["w"]).tolist(),
                                               to_host(props["t"]).tolist())}
    assert got == held
    g.check()


def test_update_edges_takes_scalars_device_arrays_and_finds_nothing(device):
    g = hornet.Graph(directed=True, device=device, edge_properties={"w": np.float32})
    g.insert_edges(np.array([0, 1, 2], np.int32), np.array([1, 2, 0], np.int32),
                   w=np.ones(3, np.float32))
    xp = np
    if device == "gpu":
        import cupy as xp
    c = g.update_edges(xp.asarray([2, 1, 5], dtype=xp.int32), xp.asarray([0, 2, 5], dtype=xp.int32),
                       w=4)
    assert to_host(c.src).tolist() == [1, 2] and to_host(c.dst).tolist() == [2, 0]
    assert to_host(c.properties["w"]).tolist() == [4, 4]
    assert to_host(c.previous["w"]).tolist() == [1, 1]
    c = g.update_edges(np.array([0]), np.array([2]), w=np.array([9.0]))
    assert len(c) == 0 and to_host(c.previous["w"]).tolist() == []
    with pytest.raises(hornet.BatchError):
        g.update_edges(np.array([0, -1]), np.array([1, 1]), w=np.array([1.0, 2.0]))
    with pytest.raises(hornet.BatchError, match="NaN"):
        g.update_edges(np.array([0]), np.array([1]), w=np.array([np.nan]))
    assert to_host(g.edge_values(np.array([0]), np.array([1]))[1]["w"]).tolist() == [1]
    g.check()


@pytest.mark.parametrize("directed", [True, False])
def test_weighted_replay_keeps_each_edges_last_weight(device, directed):
    """Batches with repeats and edges present before them: the graph holds each edge's last
    weight, the changes name the new and the refreshed edges (verify=True checks the graph
    against the reference replay after every batch)."""
    from streams.replay import replay
    rng = np.random.default_rng(5)
    n = 3000
    src, dst = rng.integers(0, 40, n), rng.integers(0, 40, n)
    weight = rng.integers(1, 100, n).astype(np.float64)
    table = {"src": src, "dst": dst, "weight": weight}
    r = replay(table, batch_size=700, device=device, directed=directed, algos="none",
               verify=True)
    seen = set()
    for first, count, inserted in zip(r["first_event"], r["events"], r["inserted"]):
        keys = set()
        for u, v in zip(src[first:first + count].tolist(), dst[first:first + count].tolist()):
            if u != v:
                keys.add((u, v) if directed else (min(u, v), max(u, v)))
        assert inserted == len(keys - seen)
        seen |= keys
    assert r.summary["edges"] == len(seen)


def test_array_growth_floor_gives_larger_arrays_and_the_same_graph(device):
    """Graph.set_array_growth: block arrays added by growth hold at least the floor's slots
    (within block_array_edges); the graph and every change equal those grown without the
    floor. (The number of arrays may be larger: under the floor the block cache's rings hold
    up to their bytes budget, in arrays of at most block_array_edges slots here.)"""
    rng = np.random.default_rng(9)
    plain = hornet.Graph(directed=True, device=device, edge_properties={"w": np.float64},
                         block_array_edges=1 << 12)
    floored = hornet.Graph(directed=True, device=device, edge_properties={"w": np.float64},
                           block_array_edges=1 << 12)
    floored.set_array_growth(1 << 10)
    for step in range(30):
        m = 10 + 40 * step
        s, d, w = rng.integers(0, 300, m), rng.integers(0, 300, m), rng.random(m)
        a, b = plain.insert_edges(s, d, w=w), floored.insert_edges(s, d, w=w)
        assert to_host(a.src).tolist() == to_host(b.src).tolist()
        assert to_host(a.dst).tolist() == to_host(b.dst).tolist()
    ps, pd, pp = plain.edges(properties=True)
    fs, fd, fp = floored.edges(properties=True)
    assert to_host(ps).tolist() == to_host(fs).tolist()
    assert to_host(pd).tolist() == to_host(fd).tolist()
    assert to_host(pp["w"]).tolist() == to_host(fp["w"]).tolist()
    floored.check()
    mm = floored._mm
    for k, pool in mm.pools.items():
        for arr in pool:
            assert arr.num_blocks >= min(mm.blocks_per_array(k), (1 << 10) >> k)
    with pytest.raises(ValueError):
        floored.set_array_growth(-1)


def _host_change(c):
    if c is None:
        return None
    return (to_host(c.src).tolist(), to_host(c.dst).tolist(),
            {k: to_host(v).tolist() for k, v in c.properties.items()},
            {k: to_host(v).tolist() for k, v in c.previous.items()})


@pytest.mark.parametrize("directed", [True, False])
def test_weighted_batch_orders_give_the_same_changes(device, directed):
    """streams.weighted_batch.insert_latest: update first or insert first, the same changes
    and graphs; the changes match a dictionary replay of the batches."""
    from streams.analytics import BatchChanges
    from streams.weighted_batch import insert_latest
    rng = np.random.default_rng(21)
    graphs = [hornet.Graph(directed=directed, device=device,
                           edge_properties={"weight": np.float64}) for _ in range(2)]
    held = {}
    for step in range(12):
        m = [1, 300, 4000, 5000][step % 4]
        s, d = rng.integers(0, 60, m), rng.integers(0, 60, m)
        keep = s != d
        s, d = s[keep], d[keep]
        if not directed:
            s, d = np.minimum(s, d), np.maximum(s, d)
        w = rng.integers(1, 1000, s.shape[0]).astype(np.float64)
        last = {}
        for u, v, x in zip(s.tolist(), d.tolist(), w.tolist()):
            last[(u, v)] = x
        new = sorted(k for k in last if k not in held)
        old = sorted(k for k in last if k in held)
        got = []
        for g, first in zip(graphs, (False, True)):
            ch = BatchChanges()
            insert_latest(g, ch, s, d, w, lambda c: None, update_first=first)
            got.append((_host_change(ch.inserted), _host_change(ch.updated)))
        assert got[0] == got[1]
        ins, upd = got[0]
        assert ins[:3] == ([k[0] for k in new], [k[1] for k in new],
                           {"weight": [last[k] for k in new]})
        if old:
            assert upd == ([k[0] for k in old], [k[1] for k in old],
                           {"weight": [last[k] for k in old]},
                           {"weight": [held[k] for k in old]})
        else:
            assert upd is None
        held.update(last)
    for g in graphs:
        es, ed, props = g.edges(properties=True)
        got = {(u, v): x for u, v, x in zip(to_host(es).tolist(), to_host(ed).tolist(),
                                            to_host(props["weight"]).tolist())
               if directed or u < v}
        assert got == held
        g.check()
