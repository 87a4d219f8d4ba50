"""``Graph.apply_edges``: inserts then deletes in one call (both backends). Checked against a
host oracle of the edges and their property values (a dict), against ``insert_edges``
followed by ``delete_edges`` on a second graph (the same changes), the graph's invariants,
and batches refused with the graph unchanged; then the windowed replay that uses it, against
the replay's reference model and the same replay through two graph calls per batch."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.batch.validate import BatchError
from streams import window_batch
from streams.replay import replay


def _host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def _edges(g) -> dict:
    s, d, p = g.edges(properties=True)
    return dict(zip(zip(_host(s).tolist(), _host(d).tolist()), _host(p["w"]).tolist()))


def _same_change(a, b) -> None:
    assert a.kind == b.kind
    assert _host(a.src).tolist() == _host(b.src).tolist()
    assert _host(a.dst).tolist() == _host(b.dst).tolist()
    assert a.self_loops_skipped == b.self_loops_skipped
    assert sorted(a.properties) == sorted(b.properties)
    for k in a.properties:
        assert _host(a.properties[k]).tolist() == _host(b.properties[k]).tolist(), k


def _oracle_apply(oracle: dict, directed: bool, ins, w, dele) -> None:
    """Insert (first occurrence wins, present edges keep their value, no self-loops when
    undirected), then delete."""
    def key(u, v):
        return (u, v) if directed else (min(u, v), max(u, v))
    for u, v, x in zip(*[a.tolist() for a in ins], w.tolist()):
        if u == v and not directed:
            continue
        oracle.setdefault(key(u, v), x)
    for u, v in zip(*[a.tolist() for a in dele]):
        oracle.pop(key(u, v), None)


def _graph_dict(g, directed: bool) -> dict:
    e = _edges(g)
    return e if directed else {k: x for k, x in e.items() if k[0] < k[1]}


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("steady", [False, True])
@pytest.mark.parametrize("m", [3000, 40], ids=["fused", "small"])
def test_apply_edges_equals_insert_then_delete(device, directed, steady, m):
    rng = np.random.default_rng(7 + m + directed)
    kw = dict(directed=directed, device=device, edge_properties={"w": np.float64})
    a, b = hornet.Graph(**kw), hornet.Graph(**kw)
    oracle = {}
    n = 300
    base_s, base_d = rng.integers(0, n, 4 * m), rng.integers(0, n, 4 * m)
    base_w = rng.random(4 * m)
    for g in (a, b):
        g.insert_edges(base_s, base_d, w=base_w)
    _oracle_apply(oracle, directed, (base_s, base_d), base_w, (np.empty(0, int),) * 2)
    for r in range(6):
        hi = n + 20 * (r + 1)                  # inserts and deletes reach new ids too
        s, d = rng.integers(0, hi, m), rng.integers(0, hi, m)
        w = rng.random(m)
        present = np.array(list(oracle), dtype=np.int64).reshape(-1, 2)
        pick = present[rng.integers(0, present.shape[0], m // 2)]
        # deletes: present edges, absent pairs, pairs of this batch's insert (new ones too),
        # ids past the id space, repeats and both directions
        es = np.concatenate([pick[:, 1], rng.integers(0, hi + 50, m // 2), s[:m // 4],
                             pick[:m // 8, 1]])
        ed = np.concatenate([pick[:, 0], rng.integers(0, hi + 50, m // 2), d[:m // 4],
                             pick[:m // 8, 0]])
        with a.steady_churn() if steady else _Nothing(), \
                b.steady_churn() if steady else _Nothing():
            ins_a, del_a = a.apply_edges((s, d), (es, ed), w=w)
            ins_b = b.insert_edges(s, d, w=w)
            del_b = b.delete_edges(es, ed)
        _oracle_apply(oracle, directed, (s, d), w, (es, ed))
        _same_change(ins_a, ins_b)
        _same_change(del_a, del_b)
        assert _graph_dict(a, directed) == oracle
        assert a.num_edges == b.num_edges and a.num_vertices == b.num_vertices
        a.check()


class _Nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("directed", [False, True])
def test_kept_sorted_edges_delete_like_their_pairs(device, directed):
    """``keep_sorted``: an insert of new edges comes back in sorted form, and a later call
    deleting that form deletes the same edges as deleting their pairs (graphs a and b),
    next to an insert; ``delete=None`` deletes nothing."""
    rng = np.random.default_rng(11)
    kw = dict(directed=directed, device=device, edge_properties={"w": np.float64})
    a, b = hornet.Graph(**kw), hornet.Graph(**kw)
    s0, d0 = rng.integers(0, 400, 6000), rng.integers(0, 400, 6000)
    for g in (a, b):
        g.insert_edges(s0, d0, w=np.ones(6000))
    s, d = rng.integers(400, 2000, 3000), rng.integers(400, 2000, 3000)
    s, d = s[s != d], d[s != d]
    ins_a, none, kept = a.apply_edges((s, d), None, keep_sorted=True, w=np.full(s.size, 2.0))
    ins_b = b.insert_edges(s, d, w=np.full(s.size, 2.0))
    assert none is None
    _same_change(ins_a, ins_b)
    # new ids only: every entry is new, so the CPU's fused insert keeps them
    assert (kept is not None) == (device == "cpu")
    if kept is not None:
        assert kept.src.shape[0] == _entries(s, d, directed)
    s2, d2 = rng.integers(0, 2000, 3000), rng.integers(0, 2000, 3000)
    if kept is not None:
        out_a = a.apply_edges((s2, d2), kept, w=np.full(3000, 3.0))
    else:
        out_a = a.apply_edges((s2, d2), (ins_a.src, ins_a.dst), w=np.full(3000, 3.0))
    out_b = (b.insert_edges(s2, d2, w=np.full(3000, 3.0)), b.delete_edges(ins_b.src, ins_b.dst))
    for x, y in zip(out_a, out_b):
        _same_change(x, y)
    assert _edges(a) == _edges(b)
    a.check()


def _entries(s, d, directed: bool) -> int:
    """Stored entries of the distinct pairs (s, d) (both directions when undirected)."""
    if directed:
        return len(set(zip(s.tolist(), d.tolist())))
    return 2 * len({(min(u, v), max(u, v)) for u, v in zip(s.tolist(), d.tolist())})


@pytest.mark.parametrize("n", [3000, 5000])
@pytest.mark.parametrize("bad", ["insert", "delete", "big", "property"])
def test_refused_apply_leaves_the_graph_unchanged(device, bad, n):
    """A bad id or property in either half refuses the call before anything changes; 5,000
    entries a half are past the small-batch path (on the GPU one plan for both halves)."""
    g = hornet.Graph(directed=False, device=device, edge_properties={"w": np.float32})
    rng = np.random.default_rng(n)
    g.insert_edges(rng.integers(0, 900, 3 * n), rng.integers(0, 900, 3 * n))
    before = _edges(g)
    s, d = rng.integers(0, 1000, n), rng.integers(0, 1000, n)
    es, ed = rng.integers(0, 900, n), rng.integers(0, 900, n)
    if bad == "insert":
        s[n // 2] = -5
    elif bad == "delete":
        ed[n - 7] = -1
    elif bad == "big":
        es[17] = 1 << 40
    with pytest.raises(BatchError):
        if bad == "property":
            g.apply_edges((s, d), (es, ed), w=np.ones(n), nope=np.ones(n))
        else:
            g.apply_edges((s, d), (es, ed), w=np.ones(n))
    assert _edges(g) == before
    g.check()


def _stream(events: int, vertices: int, weighted: bool, seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    out = {"src": rng.integers(0, vertices, events).astype(np.int64),
           "dst": rng.integers(0, vertices, events).astype(np.int64)}
    if weighted:
        out["weight"] = rng.random(events)
    return out


def taken_paths(monkeypatch, module, name: str) -> list:
    """Replace ``module.name`` (a path that returns None where it declines a call) by a
    wrapper that appends, per call, whether the path took it; returns that list."""
    taken = []
    original = getattr(module, name)

    def counted(*args):
        out = original(*args)
        taken.append(out is not None)
        return out
    monkeypatch.setattr(module, name, counted)
    return taken


def _count_put_back(monkeypatch) -> list:
    """Edges the windowed replay put back per expiry (expired, but refreshed inside the
    window), appended as the replay runs."""
    put_back = []
    original = window_batch._put_back

    def counted(g, expired, refreshed):
        out = original(g, expired, refreshed)
        put_back.append(len(expired) - len(out))
        return out
    monkeypatch.setattr(window_batch, "_put_back", counted)
    return put_back


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("batch, window", [(1500, 4500), (1000, 3700), (40, 130)])
def test_windowed_replay_in_one_call_per_batch(monkeypatch, weighted, batch, window):
    """A small id space: edges reoccur, and some just as their last event leaves the
    window (the edge is put back). Verified against the replay's reference model after
    every batch, and row by row against the replay that makes two graph calls per
    batch."""
    data = _stream(30_000, 150, weighted)
    put_back = _count_put_back(monkeypatch)
    kw = dict(batch_size=batch, window=window, directed=False, algos="none", device="cpu")
    one = replay(data, verify=True, **kw)
    assert one.summary["verified"]
    assert sum(put_back) > 0                   # the rare case happened
    monkeypatch.setattr(window_batch, "insert_expire", lambda *a: False)
    monkeypatch.setattr("streams.replay.insert_expire", lambda *a: False)
    two = replay(data, **kw)
    for column in ("inserted", "deleted", "expired", "edges", "vertices"):
        assert one[column].tolist() == two[column].tolist(), column
    assert sum(one["expired"]) > 0


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("batch, window", [(1500, 4500), (1000, 3700)])
def test_windowed_replay_deletes_kept_batches(monkeypatch, weighted, batch, window):
    """A wide id space: most batches insert an edge per event, and expire as a whole (when
    the window is a multiple of the batch), in the sorted form kept since their insert
    (counted); the rest take the pairs. Verified
    against the reference model and row by row against the two-call replay."""
    from hornet.batch import mixed
    data = _stream(40_000, 1 << 17, weighted, seed=4)
    used = []
    original = mixed._inside

    def counted(edges, n):
        used.append(edges.src.shape[0])
        return original(edges, n)
    monkeypatch.setattr(mixed, "_inside", counted)
    kw = dict(batch_size=batch, window=window, directed=False, algos="none", device="cpu")
    one = replay(data, verify=True, **kw)
    assert one.summary["verified"]
    # a window that is no multiple of the batch cuts every record in two: pairs then
    assert (len(used) > 0) == (window % batch == 0)
    monkeypatch.setattr("streams.replay.insert_expire", lambda *a: False)
    two = replay(data, **kw)
    for column in ("inserted", "deleted", "expired", "edges", "vertices"):
        assert one[column].tolist() == two[column].tolist(), column
