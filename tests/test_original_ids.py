"""Every user-facing result of a graph with a vertex map, in the original ids (64-bit
integers beyond int32, strings): the changes of insert/delete, degrees, BFS levels and
parents, triangles per vertex, truss numbers per edge, SpMV. Oracle: a dict model of the
graph on the original ids (adjacency sets), with BFS, triangles, truss numbers and the
product computed from it by brute force."""
from __future__ import annotations

from collections import deque

import numpy as np
import pyarrow as pa
import pyarrow.csv  # noqa: F401  (pa.csv)
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import hornet
from hornet import algos

BIG = st.integers(-2**63, 2**63 - 1)
UBIG = st.integers(0, 2**64 - 1)
NAMES = st.text("abcdé", min_size=1, max_size=3)
POOLS = {"int64": BIG, "uint64": UBIG, "str": NAMES}
FIRST_ID = {"int64": 2**31 + 7, "uint64": 2**63 + 7}      # ids beyond int32 / int64 at least


DTYPES = {"int64": np.int64, "uint64": np.uint64, "str": str}
ARROW_TYPES = {"int64": pa.int64(), "uint64": pa.uint64(), "str": pa.string()}


def _host(a):
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)


class Model:
    """Adjacency sets on the original ids."""

    def __init__(self, directed):
        self.directed, self.out, self.nodes = directed, {}, []

    def _node(self, v):
        if v not in self.out:
            self.out[v] = set()
            self.nodes.append(v)

    def key(self, u, v):
        return (u, v) if self.directed else tuple(sorted((u, v), key=self.nodes.index))

    def insert(self, src, dst):
        """Insert a batch; a batch's new ids get dense ids in order of first appearance in
        its src column, then its dst column."""
        for v in list(src) + list(dst):
            self._node(v)
        new = set()
        for u, v in zip(src, dst):
            if u == v and not self.directed:
                continue
            if v not in self.out[u]:
                self.out[u].add(v)
                if not self.directed:
                    self.out[v].add(u)
                new.add(self.key(u, v))
        return new

    def delete(self, src, dst):
        gone = set()
        for u, v in zip(src, dst):
            if u in self.out and v in self.out[u]:
                self.out[u].discard(v)
                if not self.directed:
                    self.out[v].discard(u)
                gone.add(self.key(u, v))
        return gone

    def und(self):
        nb = {v: set() for v in self.out}
        for u, vs in self.out.items():
            for v in vs:
                if u != v:
                    nb[u].add(v)
                    nb[v].add(u)
        return nb

    def levels(self, s):
        lv, q = {s: 0}, deque([s])
        while q:
            u = q.popleft()
            for v in self.out[u]:
                if v not in lv:
                    lv[v] = lv[u] + 1
                    q.append(v)
        return lv

    def truss(self):
        """Truss number of each undirected edge, by peeling k = 3, 4, ... ."""
        nb = self.und()
        edges = {tuple(sorted((u, v), key=self.nodes.index)) for u in nb for v in nb[u]}
        out = {e: 2 for e in edges}
        alive, k = set(edges), 3
        while alive:
            adj = {v: set() for v in nb}
            for u, v in alive:
                adj[u].add(v)
                adj[v].add(u)
            changed = True
            while changed:
                changed = False
                for u, v in list(alive):
                    if len(adj[u] & adj[v]) < k - 2:
                        alive.discard((u, v))
                        adj[u].discard(v)
                        adj[v].discard(u)
                        changed = True
            for e in alive:
                out[e] = k
            k += 1
        return out


def _pairs(g, s, d):
    m = Model(g.directed)
    m.nodes = g.vertex_ids().tolist()
    return {m.key(a, b) for a, b in zip(_host(s).tolist(), _host(d).tolist())}


@given(data=st.data())
@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture])
@pytest.mark.parametrize("ids", ["int64", "uint64", "str"])
def test_results_in_original_ids_match_a_dict_model(device, ids, data):
    directed = data.draw(st.booleans(), label="directed")
    pool = data.draw(st.lists(POOLS[ids], min_size=2, max_size=14, unique=True), label="pool")
    if ids in FIRST_ID and FIRST_ID[ids] not in pool:
        pool[0] = FIRST_ID[ids]
    vid = st.sampled_from(pool)
    g = hornet.Graph(directed=directed, device=device,
                     vertex_map=hornet.VertexMap("uint") if ids == "uint64" else True)
    m = Model(directed)
    batches = data.draw(st.lists(st.tuples(st.booleans(), st.lists(st.tuples(vid, vid),
                                                                   max_size=25)),
                                 min_size=1, max_size=5), label="batches")
    for delete, pairs in batches:
        src = np.array([p[0] for p in pairs], dtype=DTYPES[ids])
        dst = np.array([p[1] for p in pairs], dtype=src.dtype)
        s_in, d_in = src, dst
        if data.draw(st.booleans(), label="as Arrow"):
            s_in, d_in = pa.array(src), pa.array(dst)
        if delete:
            change, want = g.delete_edges(s_in, d_in), m.delete(src.tolist(), dst.tolist())
        else:
            change, want = g.insert_edges(s_in, d_in), m.insert(src.tolist(), dst.tolist())
        cs, cd = change.edges()
        assert isinstance(cs, np.ndarray) and _pairs(g, cs, cd) == want
        assert len(change) == len(want)
        table = change.to_arrow()
        assert list(zip(table.column("src").to_pylist(), table.column("dst").to_pylist())) \
            == list(zip(cs.tolist(), cd.tolist()))
        ds, dd = change.edges(dense=True)
        assert _host(ds).tolist() == _host(change.src).tolist()
    names = g.vertex_ids()
    assert names.tolist() == m.nodes                        # dense ids in order of appearance
    assert dict(zip(names.tolist(), _host(g.degree()).tolist())) == \
        {v: len(m.out[v]) for v in m.nodes}
    if not m.nodes:
        return
    # BFS from an original id: levels and parents named by original ids
    source = data.draw(st.sampled_from(m.nodes), label="source")
    lv, par = algos.bfs(g, source, return_parents=True)
    dense_source = int(g.vertex_map.lookup([source])[0])
    dlv = algos.bfs(g, dense_source, dense=True)
    assert _host(dlv).tolist() == _host(lv).tolist()
    rows = algos.to_table({"level": lv, "parent": par}, g, per="vertex",
                          vertex_valued=["parent"]).to_pylist()
    want = m.levels(source)
    assert {r["vertex"]: r["level"] for r in rows if r["level"] >= 0} == want
    for r in rows:
        if r["level"] > 0:
            assert want[r["parent"]] == r["level"] - 1 and r["vertex"] in m.out[r["parent"]]
        else:
            assert r["parent"] is None
    missing = {"int64": -1, "uint64": 2**64 - 1}.get(ids)
    assert g.vertex_map.to_original(par, missing=missing).tolist() == \
        [r["parent"] if r["parent"] is not None else missing for r in rows]
    # SpMV with x given by original id (a dict naming some vertices, the others 0; the same
    # as a table; an array aligned with vertex_ids()); y labelled by original id
    named = data.draw(st.lists(st.sampled_from(m.nodes), unique=True), label="x named")
    x_of = {v: float(i % 7 + 1) for i, v in enumerate(named)}
    want_y = {u: sum(x_of.get(v, 0.0) for v in m.out[u]) for u in m.nodes}
    aligned = np.array([x_of.get(v, 0.0) for v in g.vertex_ids().tolist()])
    as_table = pa.table({"vertex": pa.array(list(x_of), type=ARROW_TYPES[ids]),
                         "x": pa.array(list(x_of.values()), type=pa.float64())})
    for x in (x_of, as_table, aligned):
        y = algos.to_table(algos.spmv(g, x), g, name="y", per="vertex").to_pylist()
        assert {r["vertex"]: r["y"] for r in y} == want_y
    if directed:
        return
    tri = algos.to_table(algos.triangles_per_vertex(g), g, per="vertex").to_pylist()
    nb = m.und()
    assert {r["vertex"]: r["value"] for r in tri} == \
        {v: sum(len(nb[v] & nb[u]) for u in nb[v]) // 2 for v in m.nodes}
    if g.num_edges:
        truss = algos.to_table(algos.truss_numbers(g), g, per="edge").to_pylist()
        got = {tuple(sorted((r["src"], r["dst"]), key=m.nodes.index)): r["value"]
               for r in truss}
        assert got == m.truss()


def test_to_original_missing_and_errors():
    m = hornet.VertexMap.from_originals(np.array([2**40, -1, 7]))
    assert m.to_original(np.array([2, -1, 0]), missing=-2).tolist() == [7, -2, 2**40]
    with pytest.raises(KeyError, match=r"\[0, 3\)"):
        m.to_original(np.array([2, -1]))                   # no `missing`: -1 is an error
    with pytest.raises(KeyError, match=r"\[0, 3\)"):
        m.to_original(np.array([3, -1]), missing=0)
    with pytest.raises(TypeError, match="must be an integer"):
        m.to_original(np.array([-1]), missing=None)
    s = hornet.VertexMap.from_originals(["a", "bc"])
    assert s.to_original([1, -1], missing="").tolist() == ["bc", ""]
    assert s.to_original([-1, 0], missing=None).tolist() == [None, "a"]
    with pytest.raises(TypeError, match="string or None"):
        s.to_original([-1], missing=0)
    with pytest.raises(ValueError, match="exceeds the vertex map"):
        hornet.Graph(device="cpu", num_vertices=3, vertex_map=True)
    g = hornet.Graph(device="cpu")
    g.insert_edges([0, 4], [1, 2])
    assert g.vertex_ids().tolist() == [0, 1, 2, 3, 4]
    change = g.insert_edges([3], [0])
    assert change.vertex_map is None and change.edges()[0].tolist() == [0]
    with pytest.raises(ValueError, match="vertex_valued names no result column"):
        algos.to_table({"a": np.zeros(5)}, g, vertex_valued=["parent"])


def test_delete_vertices_change_names_original_ids(device):
    g = hornet.Graph(directed=True, device=device, vertex_map=True)
    g.insert_edges(["ann", "bob", "cid"], ["bob", "cid", "ann"])
    change = g.delete_vertices(["bob"])
    assert sorted(zip(*(a.tolist() for a in change.edges()))) == [("ann", "bob"),
                                                                  ("bob", "cid")]


@pytest.mark.parametrize("ids", ["uint64", "str"])
def test_dynamic_algorithms_take_original_ids(device, ids):
    """DynamicBFS from an original source and DynamicSpMV with x by original id, kept
    through batches that bring new ids, against the dict model; bad ids leave them as
    they were."""
    rng = np.random.default_rng(23)
    pool = [2**64 - 1 - int(x) for x in rng.integers(0, 2**40, 30)] if ids == "uint64" \
        else [f"user {x}" for x in rng.integers(0, 10**6, 30)]
    pool = list(dict.fromkeys(pool))
    dt = DTYPES[ids]
    g = hornet.Graph(directed=True, device=device, vertex_map=True)
    m = Model(True)

    def batch(k, lo, hi):
        s = [pool[i] for i in rng.integers(lo, hi, k)]
        d = [pool[i] for i in rng.integers(lo, hi, k)]
        return np.array(s, dtype=dt), np.array(d, dtype=dt)

    s, d = batch(40, 0, 15)
    g.insert_edges(s, d)
    m.insert(s.tolist(), d.tolist())
    source = s.tolist()[0]
    bf = algos.DynamicBFS(g, source, parents=True)
    x_of = {v: float(i + 1) for i, v in enumerate(m.nodes[::2])}
    sp = algos.DynamicSpMV(g, x_of)
    for step in range(4):
        s, d = batch(25, 0, 15 + 5 * step)                  # new ids arrive
        if step % 2:
            change = g.delete_edges(s, d)
            m.delete(s.tolist(), d.tolist())
        else:
            change = g.insert_edges(s, d)
            m.insert(s.tolist(), d.tolist())
        bf.update(change)
        sp.update(change)
        new = [v for v in m.nodes if v not in x_of][:2]
        for v in new:
            x_of[v] = float(len(x_of) + 1)
        sp.set_x(np.array(new, dtype=dt), [x_of[v] for v in new])
        rows = algos.to_table({"level": bf.levels, "parent": bf.parents}, g, per="vertex",
                              vertex_valued=["parent"]).to_pylist()
        want = m.levels(source)
        assert {r["vertex"]: r["level"] for r in rows if r["level"] >= 0} == want
        for r in rows:
            if r["level"] > 0:
                assert want[r["parent"]] == r["level"] - 1
        y = algos.to_table(sp.y, g, per="vertex").to_pylist()
        assert {r["vertex"]: r["value"] for r in y} == \
            {u: sum(x_of.get(v, 0.0) for v in m.out[u]) for u in m.nodes}
    unknown = 2**63 - 1 if ids == "uint64" else "nobody"
    before = _host(sp.y).tolist()
    with pytest.raises(KeyError, match="not in the graph's vertex map"):
        sp.set_x(np.array([pool[0], unknown], dtype=dt), [1.0, 2.0])
    assert _host(sp.y).tolist() == before
    with pytest.raises(KeyError, match="not in the graph's vertex map"):
        algos.DynamicBFS(g, unknown)
    with pytest.raises(TypeError, match="one vertex id"):
        algos.DynamicBFS(g, np.array([source], dtype=dt))


def test_algorithm_inputs_errors(device):
    g = hornet.Graph(device=device, vertex_map=True)
    g.insert_edges(["a", "b"], ["b", "c"])
    with pytest.raises(KeyError, match="'zz' is not in the graph's vertex map"):
        algos.bfs(g, "zz")
    with pytest.raises(KeyError, match="'zz' is not in the graph's vertex map"):
        algos.bfs(g, ["a", "zz"])
    with pytest.raises(TypeError, match="str ids; got int ids"):
        algos.bfs(g, 0)                                     # a dense id needs dense=True
    assert _host(algos.bfs(g, 0, dense=True)).tolist() == _host(algos.bfs(g, "a")).tolist()
    assert _host(algos.bfs(g, ["a", "c"])).tolist() == [0, 1, 0]
    with pytest.raises(KeyError, match="'q' is not in the graph's vertex map"):
        algos.spmv(g, {"a": 1.0, "q": 2.0})
    with pytest.raises(ValueError, match="'a' is given two values"):
        algos.spmv(g, pa.table({"vertex": ["a", "b", "a"], "x": [1.0, 2.0, 3.0]}))
    with pytest.raises(ValueError, match="a 'vertex' column and one value column"):
        algos.spmv(g, pa.table({"id": ["a"], "x": [1.0]}))
    with pytest.raises(TypeError, match="real numbers"):
        algos.spmv(g, pa.table({"vertex": ["a"], "x": ["one"]}))
    plain = hornet.Graph.from_edges([0, 1], [1, 2], device=device)
    assert _host(algos.spmv(plain, {2: 5.0})).tolist() == [0.0, 5.0, 0.0]
    with pytest.raises(KeyError, match="outside the id space"):
        algos.spmv(plain, {3: 1.0})
    with pytest.raises(KeyError, match="must be integers"):
        algos.spmv(plain, {"a": 1.0})


def test_replay_bfs_source_takes_the_streams_id_type(tmp_path, capsys):
    """``--bfs-source 0042`` under --map-ids names the string id "0042" in a stream of
    string ids and the integer 42 in one of integer ids; oracle: the same stream with the
    ids relabelled by hand (the source first), replayed without a map."""
    import pyarrow.parquet as pq
    from streams.cli import main
    from streams.replay import replay

    rng = np.random.default_rng(4)
    pool = np.array([42, 7, 3, 900, 11, 5, 60, 8])
    s, d = pool[rng.integers(0, 8, 400)], pool[rng.integers(0, 8, 400)]
    pq.write_table(pa.table({"src": [f"{x:04d}" for x in s], "dst": [f"{x:04d}" for x in d]}),
                   tmp_path / "names.parquet")
    pq.write_table(pa.table({"src": s, "dst": d}), tmp_path / "ints.parquet")
    ids = {42: 0}
    for a, b in zip(s.tolist(), d.tolist()):
        ids.setdefault(a, len(ids))
        ids.setdefault(b, len(ids))
    pq.write_table(pa.table({"src": [ids[x] for x in s.tolist()],
                             "dst": [ids[x] for x in d.tolist()]}), tmp_path / "hand.parquet")
    want = replay(tmp_path / "hand.parquet", batch_size=50, algos="bfs", device="cpu",
                  bfs_source=0).columns["bfs_reached"]
    for name in ("names.parquet", "ints.parquet"):
        report = tmp_path / f"{name}.csv"
        code = main(["replay", str(tmp_path / name), "--map-ids", "--algos", "bfs",
                     "--device", "cpu", "--batch-size", "50", "--bfs-source", "0042",
                     "--report", str(report)])
        out = capsys.readouterr().out
        label = "0042" if name == "names.parquet" else "42"
        assert code == 0 and f"(from vertex {label})" in out
        got = pa.csv.read_csv(report).column("bfs_reached").to_pylist()
        assert got == list(want)
    code = main(["replay", str(tmp_path / "ints.parquet"), "--map-ids", "--algos", "bfs",
                 "--device", "cpu", "--bfs-source", "alice"])
    assert code == 1 and "the stream's vertex ids are integers" in capsys.readouterr().err
