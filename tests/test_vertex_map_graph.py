"""Graphs with a vertex map take the ids users have (64-bit hashes, strings) and report them
back; checked against networkx graphs whose nodes are those very ids. Also: empty batches
given as lists, on every backend."""
from __future__ import annotations

import pickle

import networkx as nx
import numpy as np
import pytest

import hornet
from hornet import algos
from hornet.batch.validate import BatchError


def _host(a):
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)


def _edge_set(g: hornet.Graph) -> set:
    s, d = g.edges()
    assert isinstance(s, np.ndarray)
    return {(a, b) if g.directed else tuple(sorted((a, b)))
            for a, b in zip(s.tolist(), d.tolist())}


def _nx_edge_set(G) -> set:
    return {(a, b) if G.is_directed() else tuple(sorted((a, b))) for a, b in G.edges()}


def _ids(kind: str, rng, n: int):
    if kind == "hash":       # 64-bit hashes, most of them far beyond int32
        pool = rng.integers(-2**63, 2**63 - 1, size=n, dtype=np.int64)
        pool[:3] = [2**31, 2**31 - 1, 2**63 - 1]
        return pool
    if kind == "uhash":      # unsigned 64-bit hashes, half of them at 2**63 or above
        pool = rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64, endpoint=True)
        pool[:3] = [2**63, 2**64 - 1, 2**63 - 1]
        return pool
    return np.array([f"user-{x:x}" for x in rng.integers(0, 2**40, size=n)])


@pytest.mark.parametrize("kind", ["hash", "uhash", "str"])
@pytest.mark.parametrize("directed", [False, True])
def test_batches_in_original_ids_match_networkx(device, kind, directed):
    rng = np.random.default_rng(11)
    pool = _ids(kind, rng, 60)
    g = hornet.Graph(directed=directed, device=device, vertex_map=True,
                     edge_properties={"w": np.float64})
    G = nx.DiGraph() if directed else nx.Graph()
    for step in range(6):
        b = int(rng.integers(1, 150))
        s, d = pool[rng.integers(0, 60, b)], pool[rng.integers(0, 60, b)]
        w = rng.random(b)
        if step % 3 == 2:                                    # delete some present, some not
            es, ed = g.edges()
            pick = rng.integers(0, len(es), min(len(es), 20))
            ds = np.concatenate([es[pick], pool[:5]])
            dd = np.concatenate([ed[pick], pool[5:10]])
            change = g.delete_edges(ds, dd)
            gone = [(a, c) for a, c in zip(ds.tolist(), dd.tolist()) if G.has_edge(a, c)]
            G.remove_edges_from(gone)
            assert len(change) == len(set(gone if directed else map(frozenset, gone)))
        else:
            g.insert_edges(s, d, w=w)
            for a, c, x in zip(s.tolist(), d.tolist(), w.tolist()):
                if (a != c or directed) and not G.has_edge(a, c):
                    G.add_edge(a, c, w=x)
        assert _edge_set(g) == _nx_edge_set(G)
        v = s[0]
        nb, props = g.neighbors(v)
        want = set(G.successors(v) if directed else G.neighbors(v))
        assert set(nb.tolist()) == want
        assert all(G.edges[v, u]["w"] == x for u, x in zip(nb.tolist(), _host(props["w"]).tolist()))
        assert int(_host(g.degree([v]))[0]) == (G.out_degree(v) if directed else G.degree(v))
        q_src = np.concatenate([s[:5], pool[:2]])
        q_dst = np.concatenate([d[:5], pool[2:4]])
        assert g.has_edges(q_src, q_dst).tolist() == [G.has_edge(a, c) for a, c in
                                                      zip(q_src.tolist(), q_dst.tolist())]
    und = G.to_undirected() if directed else G
    assert int(algos.triangle_count(g)) == sum(nx.triangles(und).values()) // 3
    # per-vertex results are indexed by dense id; the map names them
    per = _host(algos.triangles_per_vertex(g)) if not directed else None
    if per is not None:
        names = g.vertex_map.to_original(np.arange(g.num_vertices))
        assert dict(zip(names.tolist(), per.tolist())) == nx.triangles(und)
    g.check()


def test_ids_beyond_int32_need_the_map(device):
    big = np.array([2**31, 2**40], dtype=np.int64)
    with pytest.raises(BatchError, match="vertex ids must be <="):
        hornet.Graph(device=device).insert_edges(big, big[::-1])
    g = hornet.Graph.from_edges(big, big[::-1] + 1, device=device, vertex_map=True)
    assert g.num_vertices == 4                    # the id space is the map's, not 2**40
    assert _edge_set(g) == {(2**31, 2**40 + 1), (2**31 + 1, 2**40)}


def test_a_refused_batch_leaves_graph_and_map_unchanged(device):
    g = hornet.Graph(device=device, vertex_map=True, edge_properties={"w": np.float32})
    g.insert_edges(["a", "b"], ["b", "c"], w=[1.0, 2.0])
    with pytest.raises(BatchError, match="NaN"):
        g.insert_edges(["x", "a"], ["y", "z"], w=[1.0, np.nan])
    assert len(g.vertex_map) == 3 and g.num_vertices == 3
    assert _edge_set(g) == {("a", "b"), ("b", "c")}
    with pytest.raises(TypeError, match="str ids"):
        g.insert_edges([1], [2])
    assert len(g.vertex_map) == 3
    with pytest.raises(BatchError, match="not in the graph's vertex map"):
        g.degree(["nobody"])
    g.insert_edges(["x"], ["y"], w=[3.0])           # the next ids follow the kept ones
    assert g.vertex_map.to_original(np.array([3, 4])).tolist() == ["x", "y"]


def test_vertex_calls_and_copy_take_original_ids(device):
    g = hornet.Graph(directed=True, device=device, vertex_map=True,
                     vertex_properties={"score": np.int32})
    g.insert_vertices([2**50, 2**51], score=[5, 6])
    g.insert_edges([2**50, 2**52], [2**51, 2**50])
    g.update_vertices([2**52], score=[7])
    names = g.vertex_map.originals().tolist()
    assert dict(zip(names, _host(g.vertex_property("score")).tolist())) == \
        {2**50: 5, 2**51: 6, 2**52: 7}
    h = g.copy()
    change = g.delete_vertices([2**50])
    assert len(change) == 2 and g.num_edges == 0
    assert _edge_set(h) == {(2**50, 2**51), (2**52, 2**50)}
    h.insert_edges([2**53], [2**50])                 # the copy's map is its own
    assert len(h.vertex_map) == 4 and len(g.vertex_map) == 3


@pytest.mark.parametrize("fmt", [".arrow", ".parquet", "pickle"])
@pytest.mark.parametrize("kind", ["hash", "uhash", "str"])
def test_snapshot_keeps_the_vertex_map(device, tmp_path, fmt, kind):
    rng = np.random.default_rng(5)
    pool = _ids(kind, rng, 30)
    g = hornet.Graph(device=device, vertex_map=True, edge_properties={"w": np.float32},
                     vertex_properties={"x": np.int64})
    g.insert_edges(pool[rng.integers(0, 30, 80)], pool[rng.integers(0, 30, 80)],
                   w=rng.random(80).astype(np.float32))
    g.insert_vertices([pool[29]])                    # an id without edges
    g.update_vertices(pool[:4], x=[1, 2, 3, 4])
    if fmt == "pickle":
        h = pickle.loads(pickle.dumps(g))
    else:
        g.save(tmp_path / f"g{fmt}")
        h = hornet.Graph.load(tmp_path / f"g{fmt}", device=device)
    assert h.device == g.device
    assert h.vertex_map.originals().tolist() == g.vertex_map.originals().tolist()
    gs, gd, gp = g.edges(properties=True)
    hs, hd, hp = h.edges(properties=True)
    assert hs.tolist() == gs.tolist() and hd.tolist() == gd.tolist()
    assert _host(hp["w"]).tolist() == _host(gp["w"]).tolist()
    assert _host(h.vertex_property("x")).tolist() == _host(g.vertex_property("x")).tolist()
    h.insert_edges([pool[0]], [pool[29]], w=[9.0])   # the loaded map keeps mapping
    assert h.num_vertices == g.num_vertices
    assert h.has_edges([pool[29]], [pool[0]]).tolist() == [True]


def test_empty_list_batches(device):
    g = hornet.Graph(device=device, edge_properties={"w": np.int32},
                     vertex_properties={"x": np.int16})
    g.insert_edges([0, 1], [1, 2], w=[4, 5])
    before = g.edges(properties=True)
    for change in (g.insert_edges([], []), g.insert_edges([], [], w=[]),
                   g.delete_edges([], []), g.update_edges([], [], w=[]),
                   g.delete_vertices([])):
        assert len(change) == 0
        assert change.src.dtype == np.int32 and change.dst.dtype == np.int32
    g.insert_vertices([])
    g.insert_vertices([], x=[])
    g.update_vertices([], x=[])
    assert _host(g.has_edges([], [])).shape == (0,)
    assert _host(g.degree([])).shape == (0,)
    after = g.edges(properties=True)
    assert g.num_vertices == 3
    for a, b in zip(before[:2], after[:2]):
        assert _host(a).tolist() == _host(b).tolist()
    assert _host(before[2]["w"]).tolist() == _host(after[2]["w"]).tolist()
    m = hornet.Graph(device=device, vertex_map=True)
    assert len(m.insert_edges([], [])) == 0 and len(m.delete_edges([], [])) == 0
    assert len(m.vertex_map) == 0 and m.num_vertices == 0
