"""Snapshots: save/load in Arrow IPC and Parquet, and pickling, are exact on every backend."""
from __future__ import annotations

import pickle

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import hornet
from hornet.snapshot import SnapshotError
from hornet.testing import to_host

EDGE_DTYPES = [np.float32, np.float64, np.int64, np.int32, np.uint8]


def _state(g):
    """Everything a snapshot must keep, on the host."""
    src, dst, props = g.edges(properties=True)
    return (g.directed, g.num_vertices, g.num_edges, to_host(src).tolist(), to_host(dst).tolist(),
            {k: (np.dtype(v).str, to_host(props[k]).tolist()) for k, v in
             g.edge_properties.items()},
            {k: (np.dtype(v).str, to_host(g.vertex_property(k)).tolist()) for k, v in
             g.vertex_properties.items()},
            g.memory_settings())


@st.composite
def graphs_spec(draw):
    directed = draw(st.booleans())
    n = draw(st.integers(0, 30))
    m = draw(st.integers(0, 80)) if n else 0
    src = draw(st.lists(st.integers(0, max(n - 1, 0)), min_size=m, max_size=m))
    dst = draw(st.lists(st.integers(0, max(n - 1, 0)), min_size=m, max_size=m))
    edtypes = draw(st.lists(st.sampled_from(EDGE_DTYPES), max_size=2))
    vdtypes = draw(st.lists(st.sampled_from(EDGE_DTYPES), max_size=2))
    extra = draw(st.integers(0, 5))
    return directed, n + extra, src, dst, edtypes, vdtypes


def _build(spec, device):
    directed, n, src, dst, edtypes, vdtypes = spec
    rng = np.random.default_rng(len(src))
    g = hornet.Graph(directed=directed, device=device, num_vertices=n,
                     edge_properties={f"e{i}": dt for i, dt in enumerate(edtypes)},
                     vertex_properties={f"v{i}": dt for i, dt in enumerate(vdtypes)},
                     block_array_edges=1 << 12, min_block_size=2)
    props = {f"e{i}": (rng.integers(0, 200, len(src)) / 4).astype(dt)
             for i, dt in enumerate(edtypes)}
    if src:
        g.insert_edges(np.array(src), np.array(dst), **props)
    if n and vdtypes:
        g.update_vertices(np.arange(n), **{f"v{i}": (np.arange(n) % 7 + 0.5).astype(dt)
                                           for i, dt in enumerate(vdtypes)})
    return g


@pytest.mark.parametrize("ext", [".arrow", ".parquet"])
@given(spec=graphs_spec())
@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_save_load_round_trip(device, ext, spec, tmp_path_factory):
    g = _build(spec, device)
    path = tmp_path_factory.mktemp("snap") / f"g{ext}"
    g.save(path)
    h = hornet.Graph.load(path, device=device)
    assert h.device == g.device
    assert _state(h) == _state(g)
    h.check()


@given(spec=graphs_spec())
@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_pickle_round_trip(device, spec):
    g = _build(spec, device)
    h = pickle.loads(pickle.dumps(g))
    assert h.device == g.device
    assert _state(h) == _state(g)
    h.check()


def test_snapshot_is_a_plain_arrow_edge_table(tmp_path):
    g = hornet.Graph(directed=False, device="cpu", edge_properties={"w": np.float32})
    g.insert_edges([2, 0], [1, 1], w=[1.5, 2.5])
    g.save(tmp_path / "g.arrow")
    with pa.memory_map(str(tmp_path / "g.arrow")) as f:
        t = pa.ipc.open_file(f).read_all()
    assert t.column_names == ["src", "dst", "w"]
    assert t.column("src").to_pylist() == [0, 1] and t.column("dst").to_pylist() == [1, 2]
    assert t.schema.field("w").type == pa.float32()


def test_load_across_devices(tmp_path, device):
    g = hornet.Graph.from_edges([0, 1, 2], [1, 2, 0], directed=True, device="cpu")
    g.save(tmp_path / "g.parquet")
    h = hornet.Graph.load(tmp_path / "g.parquet", device=device)
    assert h.device == device
    assert to_host(h.edges()[0]).tolist() == [0, 1, 2]


def test_bad_snapshot_files(tmp_path):
    with pytest.raises(SnapshotError, match="ends in .arrow"):
        hornet.Graph.from_edges([0], [1], device="cpu").save(tmp_path / "g.csv")
    with pytest.raises(FileNotFoundError, match="no such snapshot"):
        hornet.Graph.load(tmp_path / "missing.arrow")
    plain = pa.table({"src": [0], "dst": [1]})
    with pa.OSFile(str(tmp_path / "plain.arrow"), "wb") as sink, \
            pa.ipc.new_file(sink, plain.schema) as w:
        w.write_table(plain)
    with pytest.raises(SnapshotError, match="not a hornet snapshot"):
        hornet.Graph.load(tmp_path / "plain.arrow")
    (tmp_path / "junk.arrow").write_bytes(b"not arrow at all")
    with pytest.raises(SnapshotError, match="not a readable arrow file"):
        hornet.Graph.load(tmp_path / "junk.arrow")


@st.composite
def mapped_specs(draw):
    """(directed, kind or None, pool of original ids, pairs, vertex-only ids)."""
    kind = draw(st.sampled_from(["int", "str", None]))
    ids = st.integers(-2**63, 2**63 - 1) if kind != "str" else st.text("xyzé ", max_size=4)
    pool = draw(st.lists(ids, min_size=1, max_size=20, unique=True)) if kind else []
    pick = st.sampled_from(pool) if pool else st.nothing()
    pairs = draw(st.lists(st.tuples(pick, pick), max_size=40)) if pool else []
    alone = draw(st.lists(pick, max_size=3)) if pool else []
    return draw(st.booleans()), kind, pool, pairs, alone


@pytest.mark.parametrize("how", [".arrow", ".parquet", "pickle"])
@given(spec=mapped_specs())
@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_round_trip_with_a_vertex_map(device, how, spec, tmp_path_factory):
    directed, kind, pool, pairs, alone = spec
    dtype = np.int64 if kind == "int" else str
    g = hornet.Graph(directed=directed, device=device, vertex_map=hornet.VertexMap(kind),
                     edge_properties={"w": np.float32}, vertex_properties={"c": np.int16})
    if pairs:
        g.insert_edges(np.array([p[0] for p in pairs], dtype=dtype),
                       np.array([p[1] for p in pairs], dtype=dtype),
                       w=np.arange(len(pairs), dtype=np.float32) / 4)
    if alone:
        g.insert_vertices(np.array(alone, dtype=dtype), c=np.arange(len(alone)) + 1)
    if how == "pickle":
        h = pickle.loads(pickle.dumps(g))
    else:
        path = tmp_path_factory.mktemp("snap") / f"g{how}"
        g.save(path)
        h = hornet.Graph.load(path, device=device)
    assert h.device == g.device and _state(h) == _state(g)
    assert h.vertex_map.kind == g.vertex_map.kind
    assert h.vertex_ids().tolist() == g.vertex_ids().tolist()
    h.check()
    # both maps go on numbering new ids the same way
    new = np.array([7, 2**40], dtype=np.int64) if kind != "str" else np.array(["new", "x"])
    for graph in (g, h):
        graph.insert_edges(new[:1], new[1:], w=[1.0])
    assert h.vertex_ids().tolist() == g.vertex_ids().tolist()
    assert _state(h) == _state(g)
