"""DynamicTriangleCount against independent oracles after every batch (CPU and GPU).

Oracles: networkx (count, per vertex) and brute force (per-edge support) on the reference
model of the state machine; the static hornet functions on the same graph in the scripted
tests; a brute-force enumeration for the 6 / (m + 1) weighting itself.
"""
from __future__ import annotations

from itertools import combinations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hornet
import hornet.testing as ht
from hornet.algos import edge_support, triangle_count, triangles_per_vertex
from hornet.algos.triangles.dynamic import DynamicTriangleCount
from hornet.testing import to_host

from conftest import one_instance


# ------------------------------------------------------------------ oracles on the reference


def _simple_undirected(ref) -> nx.Graph:
    """The underlying undirected simple graph of the reference model (networkx)."""
    G = nx.Graph()
    G.add_nodes_from(range(ref.num_vertices))
    G.add_edges_from((u, v) for u, v in ref.edges if u != v)
    return G


def _oracle_count(ref) -> int:
    return sum(nx.triangles(_simple_undirected(ref)).values()) // 3


def _oracle_per_vertex(ref) -> np.ndarray:
    t = nx.triangles(_simple_undirected(ref))
    return np.array([t[v] for v in range(ref.num_vertices)], dtype=np.int64)


def _oracle_per_edge(ref) -> np.ndarray:
    """Brute force: common neighbours of each edge's endpoints, in ref.edge_list() order."""
    G = _simple_undirected(ref)
    nbr = {v: set(G[v]) for v in G}
    return np.array([0 if u == v else len(nbr[u] & nbr[v]) for u, v in ref.edge_list()],
                    dtype=np.int32)


def _checks():
    """Three checks reading one DynamicTriangleCount."""
    return one_instance([
        ht.AlgorithmCheck("triangle count", create=DynamicTriangleCount,
                          result=lambda a: a.count, oracle=_oracle_count),
        ht.AlgorithmCheck("triangles per vertex", create=DynamicTriangleCount,
                          result=lambda a: a.per_vertex, oracle=_oracle_per_vertex),
        ht.AlgorithmCheck("edge support", create=DynamicTriangleCount,
                          result=lambda a: a.per_edge(), oracle=_oracle_per_edge),
    ])


STATE_MACHINE_CONFIGS = {
    "undirected": dict(directed=False),
    "directed": dict(directed=True),
    "undirected_weighted": dict(directed=False, edge_properties={"w": np.float64}),
    "directed_weighted": dict(directed=True, edge_properties={"w": np.float32}),
}


@pytest.mark.parametrize("config", sorted(STATE_MACHINE_CONFIGS))
def test_state_machine(config, device):
    """Random insert / delete / update / vertex / refused / hub batches: dynamic == oracle
    after every step (small id space, so triangles appear and vanish often)."""
    Machine = ht.graph_state_machine(device=device, max_vertex=14, max_batch=24,
                                     algorithms=_checks(), **STATE_MACHINE_CONFIGS[config])
    Machine.TestCase.settings = settings(Machine.TestCase.settings, max_examples=20,
                                         stateful_step_count=20, deadline=None)
    Machine.TestCase().runTest()


# ------------------------------------------------------------------ scripted batches


def _assert_static(tc, g):
    assert tc.count == triangle_count(g)
    assert np.array_equal(to_host(tc.per_vertex), to_host(triangles_per_vertex(g)))
    assert np.array_equal(to_host(tc.per_edge()), to_host(edge_support(g)))


def _graph(device, directed=False, n=0):
    return hornet.Graph(directed=directed, device=device, num_vertices=n)


def _arr(device, a):
    a = np.asarray(a, dtype=np.int64)
    if device == "gpu":
        import cupy
        return cupy.asarray(a)
    return a


@pytest.mark.parametrize("directed", [False, True])
def test_whole_triangles_in_one_batch(device, directed):
    """A triangle (and a K5) whose edges all arrive in one batch counts once; deleting all of
    it in one batch removes it once."""
    g = _graph(device, directed)
    tc = DynamicTriangleCount(g)
    k5 = list(combinations(range(5), 2))
    s = [u for u, _ in k5] + [10, 11, 12]
    d = [v for _, v in k5] + [11, 12, 10]
    tc.update(g.insert_edges(_arr(device, s), _arr(device, d)))
    assert tc.count == 10 + 1
    _assert_static(tc, g)
    # a K5 edge lies in 3 triangles, a triangle's edge in 1, a non-edge in none
    assert to_host(tc.support_of(_arr(device, [1, 12, 0]), _arr(device, [0, 10, 12]))).tolist() \
        == [3, 1, 0]
    tc.update(g.delete_edges(_arr(device, s), _arr(device, d)))
    assert tc.count == 0
    _assert_static(tc, g)


@pytest.mark.parametrize("directed", [False, True])
def test_delete_and_reinsert_same_edge(device, directed):
    g = _graph(device, directed)
    s, d = [0, 1, 2, 0, 3], [1, 2, 0, 3, 1]
    g.insert_edges(_arr(device, s), _arr(device, d))
    tc = DynamicTriangleCount(g)
    _assert_static(tc, g)
    for _ in range(3):
        tc.update(g.delete_edges(_arr(device, [0]), _arr(device, [1])))
        _assert_static(tc, g)
        tc.update(g.insert_edges(_arr(device, [0]), _arr(device, [1])))
        _assert_static(tc, g)
    assert tc.count == 2


@pytest.mark.parametrize("directed", [False, True])
def test_insert_with_repeats_and_existing_edges(device, directed):
    g = _graph(device, directed)
    g.insert_edges(_arr(device, [0, 1]), _arr(device, [1, 2]))
    tc = DynamicTriangleCount(g)
    # repeats, both directions, self-loops and an edge already present
    ch = g.insert_edges(_arr(device, [0, 2, 2, 0, 1, 3, 3]), _arr(device, [2, 0, 0, 1, 1, 0, 2]))
    tc.update(ch)
    _assert_static(tc, g)
    assert tc.count == 2


def test_directed_reverse_edges(device):
    """u->v and v->u are one undirected edge: the triangle stays while either direction is
    there, and a batch holding both directions counts once."""
    g = _graph(device, directed=True)
    g.insert_edges(_arr(device, [0, 1]), _arr(device, [1, 2]))
    tc = DynamicTriangleCount(g)
    tc.update(g.insert_edges(_arr(device, [2, 0]), _arr(device, [0, 2])))   # both directions
    assert tc.count == 1
    _assert_static(tc, g)
    tc.update(g.insert_edges(_arr(device, [1]), _arr(device, [0])))         # reverse of 0->1
    assert tc.count == 1
    _assert_static(tc, g)
    tc.update(g.delete_edges(_arr(device, [0]), _arr(device, [1])))         # 1->0 remains
    assert tc.count == 1
    _assert_static(tc, g)
    tc.update(g.delete_edges(_arr(device, [1, 2]), _arr(device, [0, 0])))   # 0->2 remains
    assert tc.count == 0                                                   # {0, 1} gone
    _assert_static(tc, g)


@pytest.mark.parametrize("directed", [False, True])
def test_hub_deletion_and_empty_change(device, directed):
    rng = np.random.default_rng(7)
    g = _graph(device, directed)
    s = np.concatenate([np.zeros(40, np.int64), rng.integers(1, 41, 120)])
    d = np.concatenate([np.arange(1, 41), rng.integers(1, 41, 120)])
    g.insert_edges(_arr(device, s), _arr(device, d))
    tc = DynamicTriangleCount(g)
    tc.update(g.insert_edges(_arr(device, []), _arr(device, [])))
    tc.update(g.delete_edges(_arr(device, [50]), _arr(device, [51])))      # nothing deleted
    _assert_static(tc, g)
    tc.update(g.delete_vertices(_arr(device, [0])))
    _assert_static(tc, g)
    assert to_host(tc.per_vertex)[0] == 0


def test_id_space_grows(device):
    g = _graph(device)
    g.insert_edges(_arr(device, [0, 1, 2]), _arr(device, [1, 2, 0]))
    tc = DynamicTriangleCount(g)
    tc.update(g.insert_edges(_arr(device, [1000, 1001, 1002, 0]),
                             _arr(device, [1001, 1002, 1000, 1000])))
    g.insert_vertices(_arr(device, [5000]))
    assert to_host(tc.per_vertex).shape == (5001,)
    _assert_static(tc, g)


@pytest.mark.parallel_kernels
@pytest.mark.parametrize("directed", [False, True])
def test_random_batches_on_a_real_sized_graph(device, directed):
    """Kronecker graph: insertions, then deletions of the same edges, then vertex deletions."""
    src, dst = hornet.generators.kronecker_edges(9, edge_factor=8, seed=3)
    g = hornet.Graph.from_edges(src, dst, directed=directed, device=device)
    tc = DynamicTriangleCount(g)
    rng = np.random.default_rng(5)
    for size in (1, 10, 300):
        s, d = rng.integers(0, 512, size), rng.integers(0, 512, size)
        ins = g.insert_edges(_arr(device, s), _arr(device, d))
        tc.update(ins)
        _assert_static(tc, g)
        tc.update(g.delete_edges(ins.src, ins.dst))
        _assert_static(tc, g)
    tc.update(g.delete_vertices(_arr(device, rng.integers(0, 512, 20))))
    _assert_static(tc, g)
    tc.update(g.update_edges(_arr(device, [0]), _arr(device, [1])))        # no-op kind
    _assert_static(tc, g)


def test_without_edge_tracking(device):
    g = _graph(device)
    g.insert_edges(_arr(device, [0, 1]), _arr(device, [1, 2]))
    tc = DynamicTriangleCount(g, track_edges=False)
    tc.update(g.insert_edges(_arr(device, [2]), _arr(device, [0])))
    assert tc.count == 1
    with pytest.raises(RuntimeError):
        tc.per_edge()


def test_bad_change_leaves_state(device):
    g = _graph(device)
    g.insert_edges(_arr(device, [0, 1, 2]), _arr(device, [1, 2, 0]))
    tc = DynamicTriangleCount(g)
    with pytest.raises(ValueError):
        tc.update("not a change")
    with pytest.raises(TypeError):
        DynamicTriangleCount(object())
    _assert_static(tc, g)


# ------------------------------------------------------------------ the weighting itself


def _weighted_sum(after: set, batch: set) -> int:
    """sum over batch edges (u, v) and common neighbours w in ``after`` of 6 / (m + 1)."""
    adj = {}
    for u, v in after:
        adj.setdefault(u, set()).add(v)
        adj.setdefault(v, set()).add(u)
    total = 0
    for u, v in batch:
        for w in adj.get(u, set()) & adj.get(v, set()):
            m = (tuple(sorted((u, w))) in batch) + (tuple(sorted((v, w))) in batch)
            total += 6 // (m + 1)
    return total


def _brute_triangles(edges: set) -> int:
    nodes = sorted({x for e in edges for x in e})
    return sum(1 for a, b, c in combinations(nodes, 3)
               if {(a, b), (a, c), (b, c)} <= edges)


@given(st.sets(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=24),
       st.sets(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=16))
@settings(max_examples=200, deadline=None)
def test_inclusion_exclusion_weighting_brute_force(old, new):
    """The batch's weighted sum / 6 equals the change in the brute-force triangle count (read
    backwards, the same sum on G_before = ``after`` is what deleting the batch loses)."""
    old = {tuple(sorted(e)) for e in old if e[0] != e[1]}
    batch = {tuple(sorted(e)) for e in new if e[0] != e[1]} - old
    after = old | batch
    s = _weighted_sum(after, batch)
    assert s % 6 == 0
    assert s // 6 == _brute_triangles(after) - _brute_triangles(old)


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=30),
       st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=20),
       st.booleans())
@settings(max_examples=40, deadline=None)
def test_batches_against_brute_force_on_cpu(old, new, delete):
    """The implementation's count after one batch against brute-force enumeration."""
    g = hornet.Graph(device="cpu", num_vertices=10)
    if old:
        g.insert_edges(*map(np.array, zip(*old)))
    tc = DynamicTriangleCount(g)
    if new:
        s, d = map(np.array, zip(*new))
        tc.update(g.delete_edges(s, d) if delete else g.insert_edges(s, d))
    src, dst = g.edges()
    assert tc.count == _brute_triangles(set(zip(src.tolist(), dst.tolist())))


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("by_update", [True, False], ids=["by-update", "static"])
def test_construction_paths(monkeypatch, directed, by_update):
    """Both CPU constructions (the graph's edges counted as one inserted batch on small
    graphs, the static count on large ones) equal the static functions, with and without
    per-edge tracking, and later batches go on from either."""
    import hornet.algos.triangles.dynamic as dyn
    monkeypatch.setattr(dyn, "BUILD_BY_UPDATE_MAX_EDGES", (1 << 40) if by_update else -1)
    src, dst = hornet.generators.kronecker_edges(8, edge_factor=6, seed=11)
    for track in (True, False):
        g = hornet.Graph.from_edges(src, dst, directed=directed, device="cpu")
        tc = DynamicTriangleCount(g, track_edges=track)
        assert tc.count == triangle_count(g) > 0
        assert np.array_equal(tc.per_vertex, triangles_per_vertex(g))
        if track:
            assert np.array_equal(tc.per_edge(), edge_support(g))
        rng = np.random.default_rng(2)
        tc.update(g.insert_edges(rng.integers(0, 256, 200), rng.integers(0, 256, 200)))
        assert tc.count == triangle_count(g)
    empty = DynamicTriangleCount(hornet.Graph(directed=directed, device="cpu"))
    assert empty.count == 0


@pytest.mark.parametrize("chunking", ["numpy", "kernels"])
def test_batch_chunking_paths(monkeypatch, chunking):
    """Insert and delete batches cut into chunks in NumPy (small batches) and by the parallel
    kernels (large ones) give the static functions' results."""
    import hornet.algos.triangles.dynamic as dyn
    monkeypatch.setattr(dyn, "NUMPY_CHUNKING_MAX_BATCH", (1 << 40) if chunking == "numpy" else -1)
    src, dst = hornet.generators.kronecker_edges(9, edge_factor=8, seed=4)
    g = hornet.Graph.from_edges(src[:1500], dst[:1500], directed=False, device="cpu")
    tc = DynamicTriangleCount(g)
    ins = g.insert_edges(src[1500:], dst[1500:])
    tc.update(ins)
    _assert_static(tc, g)
    tc.update(g.delete_edges(ins.src[::2], ins.dst[::2]))
    _assert_static(tc, g)
