"""The Graph API on every backend, checked against scipy / networkx / brute force."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pyarrow as pa
import pytest
import scipy.sparse as sp

import hornet
from hornet import BatchError
from hornet.testing import to_host


def _random_edges(rng, n, m):
    return rng.integers(0, n, m), rng.integers(0, n, m)


def _scipy_simple(src, dst, n, directed):
    """The oracle: a scipy CSR of the simple graph (no repeats; undirected: symmetric, no
    self-loops), values 1."""
    src, dst = np.asarray(src), np.asarray(dst)
    if not directed:
        keep = src != dst
        src, dst = np.r_[src[keep], dst[keep]], np.r_[dst[keep], src[keep]]
    A = sp.csr_matrix((np.ones(src.size), (src, dst)), shape=(n, n))
    A.data[:] = 1.0
    A.sort_indices()
    return A


@pytest.mark.parametrize("directed", [False, True])
def test_build_paths_agree_with_scipy(device, directed):
    rng = np.random.default_rng(7)
    n = 300
    src, dst = _random_edges(rng, n, 2000)
    A = _scipy_simple(src, dst, n, directed)
    graphs = [
        hornet.Graph.from_edges(src, dst, num_vertices=n, directed=directed, device=device),
        hornet.Graph.from_csr(A.indptr, A.indices, directed=directed, device=device),
        hornet.Graph.from_scipy(A, directed=directed, device=device),
        hornet.Graph.from_edges(np.column_stack([src, dst]), num_vertices=n, directed=directed,
                                device=device),
        hornet.Graph.from_edges(pa.table({"src": src, "dst": dst}), num_vertices=n,
                                directed=directed, device=device),
    ]
    for g in graphs:
        g.check()
        indptr, indices = g.to_csr()
        assert np.array_equal(to_host(indptr), A.indptr)
        assert np.array_equal(to_host(indices), A.indices)
        assert g.num_edges == (A.nnz if directed else A.nnz // 2)
        assert (g.to_scipy() != A).nnz == 0
        assert np.array_equal(to_host(g.degree()), np.diff(A.indptr))


def test_networkx_round_trip(device):
    G = nx.gnm_random_graph(60, 200, seed=3)
    for u, v in G.edges:
        G[u][v]["weight"] = float(u * 100 + v)
    g = hornet.Graph.from_networkx(G, device=device, edge_attrs=("weight",))
    g.check()
    H = g.to_networkx()
    assert nx.utils.graphs_equal(G, H)
    D = nx.gnm_random_graph(40, 150, seed=4, directed=True)
    gd = hornet.Graph.from_networkx(D, device=device)
    assert gd.directed and sorted(gd.to_networkx().edges) == sorted(D.edges)


def test_insert_reports_only_new_edges_and_skips_self_loops(device):
    g = hornet.Graph(directed=False, device=device, edge_properties={"w": np.float32})
    c = g.insert_edges([0, 1, 2, 3, 1], [1, 0, 2, 4, 0], w=[1, 2, 3, 4, 5])
    assert list(zip(to_host(c.src), to_host(c.dst))) == [(0, 1), (3, 4)]
    assert to_host(c.properties["w"]).tolist() == [1.0, 4.0]   # first occurrence wins
    assert c.self_loops_skipped == 1
    c2 = g.insert_edges([1, 4], [0, 5], w=[9, 9])               # (1,0) exists already
    assert list(zip(to_host(c2.src), to_host(c2.dst))) == [(4, 5)]
    assert to_host(g.neighbors(0)[1]["w"]).tolist() == [1.0]    # never silently updated
    u = g.update_edges([1, 7], [0, 8], w=[6, 6])
    assert list(zip(to_host(u.src), to_host(u.dst))) == [(0, 1)]
    assert to_host(u.properties["w"]).tolist() == [6.0]
    assert to_host(u.previous["w"]).tolist() == [1.0]         # the value it replaced
    assert to_host(g.neighbors(1)[1]["w"]).tolist() == [6.0]
    assert to_host(g.has_edges([0, 1, 0, 3], [1, 0, 3, 4])).tolist() == [True, True, False, True]
    g.check()


def test_delete_returns_deleted_edges_with_their_values(device):
    g = hornet.Graph(directed=True, device=device, edge_properties={"w": np.int64})
    g.insert_edges([0, 0, 1, 2], [1, 2, 2, 0], w=[10, 20, 30, 40])
    c = g.delete_edges([2, 0, 5, 0], [0, 1, 6, 1])             # absent and repeated ignored
    assert list(zip(to_host(c.src), to_host(c.dst))) == [(0, 1), (2, 0)]
    assert to_host(c.properties["w"]).tolist() == [10, 40]
    assert g.num_edges == 2
    g.check()


@pytest.mark.parametrize("bad, error", [
    (dict(src=[0, -1], dst=[1, 2]), BatchError),
    (dict(src=[0.5], dst=[1]), TypeError),
    (dict(src=[0, 1], dst=[1]), BatchError),
    (dict(src=[0], dst=[2**31]), BatchError),
    (dict(src=[0], dst=[1], w=[np.nan]), BatchError),
    (dict(src=[0], dst=[1], w=["a"]), TypeError),
    (dict(src=[0], dst=[1], nope=[1.0]), BatchError),
    (dict(src=[0, 1], dst=[1, 2], w=[1.0]), BatchError),
    (dict(src=np.zeros((1, 3)), dst=None), BatchError),
])
def test_refused_batches_leave_the_graph_unchanged(device, bad, error):
    g = hornet.Graph(directed=False, device=device, edge_properties={"w": np.float64})
    g.insert_edges([0, 1, 2], [1, 2, 3], w=[1.0, 2.0, 3.0])
    before = g.edges(properties=True)
    stats = g.memory_stats()
    with pytest.raises(error) as info:
        g.insert_edges(bad.pop("src"), bad.pop("dst"), **bad)
    assert str(info.value)
    after = g.edges(properties=True)
    assert np.array_equal(to_host(before[0]), to_host(after[0]))
    assert np.array_equal(to_host(before[1]), to_host(after[1]))
    assert np.array_equal(to_host(before[2]["w"]), to_host(after[2]["w"]))
    assert g.num_vertices == 4 and g.memory_stats() == stats
    g.check()


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("bad_id, message", [(-3, "must be >= 0"), (2**31, "int32 ids"),
                                             (2**31 - 1, "int32 ids")])
def test_large_batches_with_bad_ids_are_refused(device, directed, bad_id, message):
    """Batches large enough for the CPU's bucket sort, which checks the ids on its way."""
    rng = np.random.default_rng(5)
    g = hornet.Graph(directed=directed, device=device)
    g.insert_edges(rng.integers(0, 5000, 3000), rng.integers(0, 5000, 3000))
    before, stats, n = g.edges(), g.memory_stats(), g.num_vertices
    s, d = rng.integers(0, 5000, 40_000), rng.integers(0, 5000, 40_000)
    d[31_337] = bad_id
    with pytest.raises(BatchError, match=rf"dst\[31337\] = {bad_id}: .*{message}"):
        g.insert_edges(s, d)
    after = g.edges()
    assert np.array_equal(to_host(before[0]), to_host(after[0]))
    assert np.array_equal(to_host(before[1]), to_host(after[1]))
    assert g.num_vertices == n and g.memory_stats() == stats
    g.check()


@pytest.mark.parametrize("directed", [False, True])
def test_large_batches_growing_the_id_space(device, directed):
    """A batch whose ids pass a power of two above the graph's id space (the CPU's sort
    guessed the key width from the graph, and sorts again) against a set model."""
    rng = np.random.default_rng(6)
    g = hornet.Graph(directed=directed, device=device)
    want = set()
    for top in (1000, 1024, 1025, 70_000, 1 << 17):
        s, d = rng.integers(0, top, 40_000), rng.integers(0, top, 40_000)
        s[0] = top - 1
        c = g.insert_edges(s, d)
        pairs = set(zip(s.tolist(), d.tolist()))
        if not directed:
            pairs = {(min(u, v), max(u, v)) for u, v in pairs if u != v}
        assert set(zip(to_host(c.src).tolist(), to_host(c.dst).tolist())) == pairs - want
        want |= pairs
        assert g.num_vertices == top
    es, ed = g.edges()
    got = set(zip(to_host(es).tolist(), to_host(ed).tolist()))
    if not directed:
        got = {(u, v) for u, v in got if u < v}
    assert got == want
    g.check()


def test_out_of_memory_leaves_the_graph_unchanged(monkeypatch):
    g = hornet.Graph(directed=False, device="cpu", block_array_edges=64)
    g.insert_edges(np.arange(50), np.arange(1, 51))
    before = g.edges()
    real_init = hornet.memory.block_array.BlockArray.__init__

    def failing_init(self, size_class, num_blocks, dtypes, backend):
        if size_class >= 5:
            raise MemoryError("simulated")
        real_init(self, size_class, num_blocks, dtypes, backend)

    monkeypatch.setattr(hornet.memory.block_array.BlockArray, "__init__", failing_init)
    with pytest.raises(hornet.DeviceMemoryError) as info:
        g.insert_edges(np.zeros(40, dtype=np.int64), np.arange(60, 100))
    assert info.value.bytes_needed > 0 and "bytes" in str(info.value)
    monkeypatch.undo()
    g.check()
    assert all(np.array_equal(a, b) for a, b in zip(before, g.edges()))


def test_storage_change_listeners(device):
    """``on_storage_change`` listeners run after each batch that created or freed block
    arrays (the storage layout then already rebuilt), not after other batches nor after a
    refused one."""
    g = hornet.Graph(directed=False, device=device, num_vertices=2000)
    seen = []
    g.on_storage_change(lambda: seen.append(g.storage_blocks()))
    layout = g.storage_blocks()
    g.insert_edges(np.zeros(600, np.int64), np.arange(1, 601))       # a new size class
    assert len(seen) == 1 and seen[0] is g.storage_blocks() and seen[0] is not layout
    assert int(seen[0]["num_blocks"].sum()) > int(layout["num_blocks"].sum())
    g.insert_edges([5], [6])                             # room in the existing blocks
    g.delete_edges([5], [6])
    kept = len(seen)
    with pytest.raises(BatchError):
        g.insert_edges([1, 2], [-1, 3])
    assert len(seen) == kept
    before = g.storage_blocks()
    g.delete_edges(np.zeros(600, np.int64), np.arange(1, 601))     # the hub's list goes
    after = g.storage_blocks()
    if after is before:                  # (the device's policy kept every array)
        assert len(seen) == kept
    else:
        assert len(seen) == kept + 1 and seen[-1] is after


def test_vertex_operations(device):
    g = hornet.Graph(directed=True, device=device, vertex_properties={"label": np.int32})
    g.insert_edges([0, 1, 2, 3, 3], [1, 2, 0, 1, 0])
    g.insert_vertices([7], label=[5])
    assert g.num_vertices == 8 and to_host(g.vertex_property("label"))[7] == 5
    c = g.delete_vertices([0])                       # in- and out-edges of 0
    assert sorted(zip(to_host(c.src).tolist(), to_host(c.dst).tolist())) == \
        [(0, 1), (2, 0), (3, 0)]
    assert sorted(zip(*map(lambda a: to_host(a).tolist(), g.edges()))) == [(1, 2), (3, 1)]
    g.update_vertices([1], label=[9])
    assert to_host(g.vertex_property("label")).tolist() == [0, 9, 0, 0, 0, 0, 0, 5]
    with pytest.raises(BatchError, match="outside the id space"):
        g.delete_vertices([8])
    with pytest.raises(KeyError):
        g.vertex_property("nope")
    g.check()


def test_added_edge_property_reaches_every_edge(device):
    g = hornet.Graph(directed=False, device=device)
    g.insert_edges([0, 1], [1, 2])
    g.add_edge_property("w", np.float32, fill=2.5)
    _, _, props = g.edges(properties=True)
    assert to_host(props["w"]).tolist() == [2.5, 2.5]
    g.insert_edges([2], [3], w=[1.0])
    assert to_host(g.neighbors(3)[1]["w"]).tolist() == [1.0]
    g.check()


def test_unsupported_edge_property_dtypes_are_refused_up_front(device):
    """Non-numeric edge properties, and float16 ones on the CPU (Numba has no float16), get a
    clear TypeError when declared, before any edge carries them; the GPU stores float16 edge
    properties, and float16 vertex properties work everywhere."""
    g = hornet.Graph(device=device, vertex_properties={"h": np.float16})
    g.insert_edges([0, 1], [1, 2])
    with pytest.raises(TypeError, match="numeric"):
        g.add_edge_property("c", np.complex64)
    if device == "cpu":
        with pytest.raises(TypeError, match="float16"):
            hornet.Graph(device=device, edge_properties={"h": np.float16})
        with pytest.raises(TypeError, match="float16"):
            g.add_edge_property("h2", np.float16)
        assert g.edge_properties == {}
    else:
        g.add_edge_property("h2", np.float16)
        g.insert_edges([2], [3], h2=np.array([0.5], dtype=np.float16))
        assert to_host(g.neighbors(3)[1]["h2"]).tolist() == [0.5]
    g.update_vertices([0, 2], h=np.array([1.5, -2.0], dtype=np.float16))
    assert to_host(g.vertex_property("h")).tolist()[:3] == [1.5, 0.0, -2.0]
    g.check()


def _kron(scale, seed=0):
    from hornet.generators import kronecker_edges
    return kronecker_edges(scale, edge_factor=8, seed=seed)


def test_ping_pong_keeps_memory_steady(device):
    """Insert a batch, delete it, 100 times: memory stays within 10% of the first round."""
    src, dst = _kron(12)
    g = hornet.Graph.from_edges(src, dst, directed=False, device=device)
    rng = np.random.default_rng(0)
    bs, bd = rng.integers(0, 1 << 12, 5000), rng.integers(0, 1 << 12, 5000)
    first = None
    for round_ in range(100):
        ins = g.insert_edges(bs, bd)
        g.delete_edges(ins.src, ins.dst)
        reserved = g.memory_stats()["reserved_bytes"]
        if first is None:
            first = reserved
        assert abs(reserved - first) <= 0.10 * first, (round_, reserved, first)
    g.check()


def test_deleting_90_percent_gives_back_half_the_memory(device):
    src, dst = _kron(14)
    g = hornet.Graph.from_edges(src, dst, directed=False, device=device)
    before = g.memory_stats()["reserved_bytes"]
    s, d = (to_host(a) for a in g.edges())
    rng = np.random.default_rng(1)
    doomed = rng.permutation(s.size)[: int(0.9 * s.size)]
    for chunk in np.array_split(doomed, 5):          # in a few batches, as a stream would
        g.delete_edges(s[chunk], d[chunk])
    g.check()
    after = g.memory_stats()["reserved_bytes"]
    assert after <= 0.5 * before, (after, before)


def test_memory_stats_report_csr_and_coo(device):
    g = hornet.Graph.from_edges([0, 1, 2], [1, 2, 0], directed=True, device=device,
                                w=np.ones(3, np.float32))
    s = g.memory_stats()
    for key in ("reserved_bytes", "edge_bytes", "csr_bytes", "coo_bytes", "utilization",
                "size_classes"):
        assert key in s
    assert s["edge_bytes"] == 3 * (4 + 4)
    assert s["csr_bytes"] == 4 * 8 + 3 * 8 and s["coo_bytes"] == 3 * 12
    assert s["reserved_bytes"] >= s["edge_bytes"]


def test_block_array_size_is_a_runtime_setting(device):
    src, dst = _kron(10)
    for bae in (16, 256, 1 << 16):
        g = hornet.Graph.from_edges(src, dst, directed=False, device=device)
        h = hornet.Graph(directed=False, device=device, block_array_edges=bae)
        h.insert_edges(src, dst)
        h.check()
        assert all(np.array_equal(to_host(a), to_host(b)) for a, b in zip(g.edges(), h.edges()))
        per_array = [c["blocks"] * c["block_size"] / c["block_arrays"]
                     for c in h.memory_stats()["size_classes"].values()]
        assert max(per_array) <= max(bae, max(c["block_size"] for c in
                                              h.memory_stats()["size_classes"].values()))


@pytest.mark.parametrize("block_array_edges", [64, 1 << 16])
def test_vertices_in_storage_order_groups_lists_by_class_then_address(device,
                                                                     block_array_edges):
    """Oracle: a comparison sort of (block size, list address), the block size read back from
    the memory statistics' classes; through growth (lists move up size classes, large ones get
    dedicated arrays), shrinking and vertex deletion."""
    rng = np.random.default_rng(3)
    n = 600
    g = hornet.Graph(directed=False, device=device, num_vertices=n,
                     block_array_edges=block_array_edges)
    reordered = False
    for step in range(6):
        if step < 4:
            hub = rng.integers(0, n, 400) % 7        # a few long lists among short ones
            g.insert_edges(np.r_[rng.integers(0, n, 900), hub], rng.integers(0, n, 1300))
        else:
            s, d = (to_host(a) for a in g.edges())
            drop = rng.random(s.size) < 0.5
            g.delete_edges(s[drop], d[drop])
            g.delete_vertices([int(s[0])])
        view = g.adjacency(properties=False)
        deg, ptr = to_host(view.degree), to_host(view.edge_ptr)
        nonempty = np.flatnonzero(deg)
        # each list's block size: the class of the block array whose column holds it
        arrays = [(a.base, a.num_blocks << a.size_class, a.size_class)
                  for pool in g._mm.pools.values() for a in pool]
        block = np.full(n, -1)
        for base, slots, cls in arrays:
            inside = (ptr >= base) & (ptr < base + 4 * slots) & (deg > 0)
            block[inside] = cls
        assert (block[nonempty] >= 0).all()
        want = nonempty[np.lexsort((ptr[nonempty], block[nonempty]))]
        got = to_host(g.vertices_in_storage_order())
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, want)
        reordered |= not np.array_equal(want, nonempty)
    assert reordered                                # (the id order would not have passed)


def test_from_csr_bulk_load_and_fallback_agree(device):
    """Sorted rows take the no-sort bulk path, unsorted rows the batch pipeline: same graph."""
    rng = np.random.default_rng(5)
    n = 500
    A = sp.random(n, n, density=0.02, format="csr", random_state=3)
    A.sort_indices()
    w = rng.random(A.nnz)
    bulk = hornet.Graph.from_csr(A.indptr, A.indices, directed=True, device=device, w=w)
    perm = np.concatenate([rng.permutation(np.arange(a, b)) for a, b in
                           zip(A.indptr[:-1], A.indptr[1:])])
    shuffled = hornet.Graph.from_csr(A.indptr, A.indices[perm], directed=True, device=device,
                                     w=w[perm])
    for g in (bulk, shuffled):
        g.check()
        indptr, indices, data = (to_host(a) for a in g.to_csr("w"))
        assert np.array_equal(indptr, A.indptr) and np.array_equal(indices, A.indices)
        assert np.array_equal(data, w)
    with pytest.raises(BatchError, match="indptr"):
        hornet.Graph.from_csr(np.array([0, 3, 2]), np.array([1, 2, 0]), device=device)


def test_edge_values_reads_properties_of_listed_edges(device):
    g = hornet.Graph(directed=False, device=device,
                     edge_properties={"w": np.float32, "t": np.int64})
    g.insert_edges([0, 1, 2], [1, 2, 3], w=[0.5, 1.5, 2.5], t=[7, 8, 9])
    found, vals = g.edge_values([1, 3, 0, 5, 2], [0, 2, 2, 6, 1])
    assert to_host(found).tolist() == [True, True, False, False, True]
    assert to_host(vals["w"]).tolist() == [0.5, 2.5, 0.0, 0.0, 1.5]
    assert to_host(vals["t"]).tolist() == [7, 9, 0, 0, 8]
    found, vals = g.edge_values([2], [3], names=["t"])
    assert list(vals) == ["t"] and to_host(vals["t"]).tolist() == [9]
    with pytest.raises(KeyError, match="unknown edge property"):
        g.edge_values([0], [1], names=["nope"])


@pytest.mark.parametrize("size", [20, 30000])
def test_read_only_and_strided_id_arrays_take_the_writable_kernels(size):
    """Arrow-backed (read-only) and strided id arrays give the same graph as plain ones, and
    no CPU kernel is compiled for them (a read-only or strided int64 signature would be a
    second compile of each kernel, seconds apiece)."""
    from hornet.core import jit
    rng = np.random.default_rng(size)
    pairs = rng.integers(0, 500, (size, 2))
    plain = hornet.Graph.from_edges(pairs[:, 0].copy(), pairs[:, 1].copy(), device="cpu",
                                    directed=False)
    table = pa.table({"src": pairs[:, 0], "dst": pairs[:, 1]})
    read_only = table.column("src").to_numpy(), table.column("dst").to_numpy()
    assert not read_only[0].flags.writeable
    before = {key: set(d.signatures) for key, d in jit.kernels.items()}
    for src, dst in (read_only, (pairs[:, 0], pairs[:, 1]), (pairs, None)):
        g = hornet.Graph(num_vertices=0, device="cpu", directed=False)
        g.insert_edges(src, dst)
        assert sorted(zip(*g.edges())) == sorted(zip(*plain.edges()))
        g.delete_edges(src, dst)
        assert g.num_edges == 0
    for key, dispatcher in jit.kernels.items():
        for signature in set(dispatcher.signatures) - before.get(key, set()):
            for t in map(str, signature):
                assert not ("int64" in t and ("readonly" in t or ", A)" in t)), \
                    (dispatcher.py_func.__qualname__, signature)
