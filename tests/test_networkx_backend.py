"""hornet's networkx backend against networkx itself (the oracle), on every device.

The backend's functions are called directly on :class:`HornetGraph` conversions (no entry
points needed), and, where the package is installed with its entry points, also through
networkx's dispatch (``backend="hornet"`` and automatic dispatch on a HornetGraph).
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

nx = pytest.importorskip("networkx", minversion="3.4")       # the backend interface's floor

import hornet
from hornet.networkx_backend import BackendInterface as B, HornetGraph
from hornet_nx_info import FUNCTIONS, get_info

INSTALLED = "hornet" in nx.utils.backends.backends
needs_entry_points = pytest.mark.skipif(
    not INSTALLED, reason="hornet's networkx entry points are not installed (pip install -e .)")


# ---------------------------------------------------------------------------------------------
# Graphs: random graphs with several kinds of node labels, the karate club, corner cases


def _relabel(G, kind: str, seed: int):
    """G with node labels of the given kind, added in a shuffled order (so that the node
    order is not the label order)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(G.number_of_nodes()).tolist()
    label = {"int": lambda i: i, "bigint": lambda i: 2**40 + 7919 * i,
             "str": lambda i: f"v{i}", "tuple": lambda i: (i % 3, str(i))}[kind]
    H = G.__class__()
    H.add_nodes_from(label(order[i]) for i in range(len(order)))
    H.add_edges_from((label(u), label(v)) for u, v in G.edges())
    return H


def _random(seed: int, n: int = 40, p: float = 0.15, directed: bool = False):
    G = nx.gnp_random_graph(n, p, seed=seed, directed=directed)
    G.add_nodes_from(range(n, n + 3))           # isolated nodes
    return G


def _graphs():
    out = {"karate": nx.karate_club_graph(), "empty": nx.Graph(),
           "no_edges": nx.empty_graph(5), "k5_and_path": nx.disjoint_union(
               nx.complete_graph(5), nx.path_graph(4))}
    for seed, kind in [(1, "int"), (2, "str"), (3, "tuple"), (4, "bigint")]:
        out[f"gnp{seed}_{kind}"] = _relabel(_random(seed), kind, seed)
    return out


GRAPHS = _graphs()
NONEMPTY = [k for k in GRAPHS if k != "empty"]


@pytest.fixture(scope="module")
def converted():
    """(device, graph name) -> HornetGraph, converted once per module."""
    cache = {}

    def get(device: str, name: str, G=None) -> HornetGraph:
        key = (device, name)
        if key not in cache:
            cache[key] = HornetGraph.from_networkx(GRAPHS[name] if G is None else G, device,
                                                   node_attrs=True, edge_attrs=True)
        return cache[key]
    return get


def _some_nodes(G, count: int = 4) -> list:
    nodes = list(G)
    return nodes[:: max(1, len(nodes) // count)][:count]


# ---------------------------------------------------------------------------------------------
# Conversion


@pytest.mark.parametrize("name", list(GRAPHS))
def test_round_trip_keeps_nodes_edges_and_attributes(device, converted, name):
    G = GRAPHS[name].copy()
    G.graph["title"] = name
    for i, n in enumerate(G):
        G.nodes[n]["rank"] = i
    for i, (u, v) in enumerate(G.edges()):
        G.edges[u, v]["w"] = i
    H = HornetGraph.from_networkx(G, device, node_attrs=True, edge_attrs=True)
    assert H.device == device
    assert H.number_of_nodes() == G.number_of_nodes()
    assert H.number_of_edges() == G.number_of_edges()
    back = B.convert_to_nx(H)
    assert list(back) == list(G)                    # node order kept
    assert back.graph == G.graph
    assert dict(back.nodes(data=True)) == dict(G.nodes(data=True))
    assert back._adj == G._adj                     # edges and their attribute dicts


def test_conversion_refuses_multigraphs_and_directed_keeps_direction(device):
    with pytest.raises(NotImplementedError):
        HornetGraph.from_networkx(nx.MultiGraph([(0, 1)]), device)
    D = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "c")])
    H = HornetGraph.from_networkx(D, device)
    assert H.is_directed() and not H.is_multigraph()
    assert set(H.to_networkx().edges()) == set(D.edges())
    for fn in (B.triangles, B.is_connected):
        with pytest.raises(nx.NetworkXNotImplemented):       # as networkx on a DiGraph
            fn(H)
    with pytest.raises(nx.NetworkXNotImplemented):
        B.k_truss(H, 3)
    for fn in (B.clustering, B.transitivity, B.average_clustering):
        with pytest.raises(NotImplementedError):             # networkx's own run would answer
            fn(H)
    with pytest.raises(NotImplementedError):
        B.single_target_shortest_path_length(H, "a")


def test_undirected_self_loops_are_not_stored_but_remembered(device):
    G = nx.Graph([(0, 1), (1, 2), (2, 0), (2, 2)])
    H = HornetGraph.from_networkx(G, device)
    assert H.has_self_loops and H.number_of_edges() == 3
    assert B.triangles(H) == nx.triangles(G)
    assert B.clustering(H) == nx.clustering(G)
    with pytest.raises(nx.NetworkXNotImplemented):
        nx.k_truss(G, 3)
    with pytest.raises(nx.NetworkXNotImplemented):
        B.k_truss(H, 3)


def test_wrapping_a_hornet_graph(device):
    g = hornet.Graph.from_edges([0, 0, 1, 2, 3], [1, 2, 2, 3, 4], num_vertices=6, device=device)
    H = HornetGraph(g)
    G = g.to_networkx()
    assert list(H) == list(range(6))
    assert B.triangles(H) == nx.triangles(G)
    assert B.single_source_shortest_path_length(H, 4) == \
        nx.single_source_shortest_path_length(G, 4)
    with pytest.raises(ValueError):
        HornetGraph(g, nodes=["a", "b"])
    with pytest.raises(ValueError):
        HornetGraph(g, nodes=[0, 1, 2, 3, 4, 4])


@pytest.mark.parametrize("ids", [["ann", "bob", "cid", "dan", "eve"],
                                 [2**40, -7, 2**31, 0, 2**63 - 1]])
def test_wrapping_a_graph_with_a_vertex_map_names_nodes_by_original_ids(device, ids):
    src, dst = [ids[i] for i in (0, 0, 1, 2, 3)], [ids[i] for i in (1, 2, 2, 3, 4)]
    g = hornet.Graph.from_edges(src, dst, device=device, vertex_map=True)
    H = HornetGraph(g)
    G = nx.Graph(zip(src, dst))
    assert set(H) == set(ids)
    assert B.triangles(H) == nx.triangles(G)
    assert B.single_source_shortest_path_length(H, ids[4]) == \
        nx.single_source_shortest_path_length(G, ids[4])
    assert [set(layer) for layer in B.bfs_layers(H, [ids[0]])] == \
        [set(layer) for layer in nx.bfs_layers(G, [ids[0]])]
    assert nx.utils.graphs_equal(B.convert_to_nx(H), G)
    assert nx.utils.edges_equal(B.convert_to_nx(B.k_truss(H, 3)).edges, nx.k_truss(G, 3).edges)


# ---------------------------------------------------------------------------------------------
# Triangles, clustering, transitivity


@pytest.mark.parametrize("name", list(GRAPHS))
def test_triangles(device, converted, name):
    G, H = GRAPHS[name], converted(device, name)
    assert B.triangles(H) == nx.triangles(G)
    some = _some_nodes(G)
    for n in some:
        value = B.triangles(H, n)
        assert value == nx.triangles(G, n) and type(value) is int
    bunch = some + ["not a node"] + some[:1]          # missing nodes skipped, duplicates kept once
    assert B.triangles(H, bunch) == nx.triangles(G, bunch)
    assert B.triangles(H, iter(some)) == nx.triangles(G, iter(some))


@pytest.mark.parametrize("name", list(GRAPHS))
def test_clustering_and_transitivity(device, converted, name):
    G, H = GRAPHS[name], converted(device, name)
    assert B.clustering(H) == nx.clustering(G)        # the same IEEE divisions: exact
    for n in _some_nodes(G):
        assert B.clustering(H, n) == nx.clustering(G, n)
    assert B.clustering(H, _some_nodes(G)) == nx.clustering(G, _some_nodes(G))
    assert B.transitivity(H) == nx.transitivity(G)
    if G.number_of_nodes() == 0:
        with pytest.raises(ZeroDivisionError):
            nx.average_clustering(G)
        with pytest.raises(ZeroDivisionError):
            B.average_clustering(H)
        return
    assert B.average_clustering(H) == nx.average_clustering(G)
    assert B.average_clustering(H, _some_nodes(G)) == nx.average_clustering(G, _some_nodes(G))
    if any(nx.triangles(G).values()):
        assert B.average_clustering(H, count_zeros=False) == \
            nx.average_clustering(G, count_zeros=False)


def test_nbunch_errors_match_networkx(device, converted):
    G, H = GRAPHS["karate"], converted(device, "karate")
    for bad in (7.5, [[0, 1]]):
        with pytest.raises(nx.NetworkXError) as ours:
            B.triangles(H, bad)
        with pytest.raises(nx.NetworkXError) as theirs:
            nx.triangles(G, bad)
        assert str(ours.value) == str(theirs.value)


# ---------------------------------------------------------------------------------------------
# k-truss


@pytest.mark.parametrize("name", NONEMPTY + ["empty"])
@pytest.mark.parametrize("k", [2, 3, 4, 5, 3.5, 100])
def test_k_truss(device, converted, name, k):
    G = GRAPHS[name].copy()
    G.graph["name"] = name
    for i, n in enumerate(G):
        G.nodes[n]["i"] = i
    for i, (u, v) in enumerate(G.edges()):
        G.edges[u, v]["e"] = i
    H = HornetGraph.from_networkx(G, device, node_attrs=True, edge_attrs=True)
    T = B.k_truss(H, k)
    assert isinstance(T, HornetGraph) and T.device == device
    expected, got = nx.k_truss(G, k), B.convert_to_nx(T)
    assert list(got) == list(expected)            # same nodes in the same order
    assert got.graph == expected.graph
    assert dict(got.nodes(data=True)) == dict(expected.nodes(data=True))
    assert got._adj == expected._adj


# ---------------------------------------------------------------------------------------------
# BFS: shortest path lengths, layers, descendants at a distance


@pytest.mark.parametrize("name", NONEMPTY)
@pytest.mark.parametrize("cutoff", [None, 0, 1, 2, 2.5, -1, float("inf")])
def test_single_source_shortest_path_length(device, converted, name, cutoff):
    G, H = GRAPHS[name], converted(device, name)
    for s in _some_nodes(G, 3):
        assert B.single_source_shortest_path_length(H, s, cutoff) == \
            nx.single_source_shortest_path_length(G, s, cutoff)
        assert B.single_target_shortest_path_length(H, s, cutoff) == \
            nx.single_target_shortest_path_length(G, s, cutoff)


@pytest.mark.parametrize("directed", [False, True])
def test_bfs_functions_on_directed_and_undirected_graphs(device, directed):
    G = _relabel(_random(7, n=50, p=0.05, directed=directed), "str", 7)
    H = HornetGraph.from_networkx(G, device)
    for s in _some_nodes(G, 5):
        assert B.single_source_shortest_path_length(H, s) == \
            nx.single_source_shortest_path_length(G, s)
        _check_layers(B.bfs_layers(H, s), nx.bfs_layers(G, s))
        for d in (0, 1, 2, 3, 2.0, -1, 0.5, 10**6):
            assert B.descendants_at_distance(H, s, d) == nx.descendants_at_distance(G, s, d)
        assert B.descendants(H, s) == nx.descendants(G, s)


@pytest.mark.parametrize("name", list(GRAPHS))
def test_reachability(device, converted, name):
    G, H = GRAPHS[name], converted(device, name)
    for s in _some_nodes(G, 4):
        assert B.descendants(H, s) == nx.descendants(G, s)
        assert B.node_connected_component(H, s) == nx.node_connected_component(G, s)
    if len(G) == 0:
        with pytest.raises(nx.NetworkXPointlessConcept):
            B.is_connected(H)
    else:
        assert B.is_connected(H) == nx.is_connected(G)
    with pytest.raises(nx.NetworkXError):
        B.descendants(H, "not a node")
    with pytest.raises(KeyError):
        nx.node_connected_component(G, "not a node")
    with pytest.raises(KeyError):
        B.node_connected_component(H, "not a node")


def test_connected_graphs(device):
    for G in (nx.path_graph(7), nx.karate_club_graph(), nx.Graph([("a", "b")])):
        assert B.is_connected(HornetGraph.from_networkx(G, device)) is nx.is_connected(G) is True


def _check_layers(ours, theirs):
    """Same layers: layer 0 as networkx lists it, later layers as sets (hornet lists a
    layer in node order, networkx in discovery order)."""
    ours, theirs = list(ours), list(theirs)
    assert len(ours) == len(theirs)
    if ours:
        assert ours[0] == theirs[0]
    for a, b in zip(ours, theirs):
        assert isinstance(a, list) and len(a) == len(b) and set(a) == set(b)


@pytest.mark.parametrize("name", NONEMPTY)
def test_bfs_layers(device, converted, name):
    G, H = GRAPHS[name], converted(device, name)
    some = _some_nodes(G, 3)
    variants = [lambda: some[0], lambda: some, lambda: some + some[:1],
                lambda: iter(some[:2]), lambda: []]
    for sources in variants:                       # fresh sources for each call (iterators)
        _check_layers(B.bfs_layers(H, sources()), nx.bfs_layers(G, sources()))


def test_missing_sources_raise_as_networkx(device, converted):
    H = converted(device, "karate")
    with pytest.raises(nx.NodeNotFound):
        B.single_source_shortest_path_length(H, "abc")
    with pytest.raises(nx.NodeNotFound):
        B.single_source_shortest_path_length(H, [0])            # unhashable: not a node
    with pytest.raises(nx.NodeNotFound):
        B.single_target_shortest_path_length(H, "abc")
    for sources in ("abc", ["abc"], [0, "abc"]):
        layers = B.bfs_layers(H, sources)                        # a generator: raises on next
        with pytest.raises(nx.NetworkXError):
            next(layers)
    with pytest.raises(nx.NetworkXError):
        B.descendants_at_distance(H, "abc", 1)


# ---------------------------------------------------------------------------------------------
# can_run / should_run / backend information


def test_can_run_declines_what_hornet_does_not_cover():
    G, D, M = nx.karate_club_graph(), nx.DiGraph([(0, 1)]), nx.MultiGraph([(0, 1)])
    assert B.can_run("triangles", (G,), {}) is True
    assert B.can_run("clustering", (G,), {"nodes": [0, 1]}) is True
    assert B.can_run("bfs_layers", (D, 0), {}) is True
    assert B.can_run("descendants", (D, 0), {}) is True
    assert B.can_run("single_source_shortest_path_length", (D,), {"source": 0,
                                                                  "cutoff": 2}) is True
    declined = [
        ("triangles", (M,), {}),                                  # multigraph
        ("triangles", (D,), {}),                                  # undirected-only function
        ("k_truss", (D, 3), {}),
        ("clustering", (D,), {}),                                 # directed clustering
        ("clustering", (G,), {"weight": "weight"}),               # weighted
        ("average_clustering", (G, None, "weight"), {}),
        ("average_clustering", (G, 0), {}),                      # a single node
        ("triangles", (G,), {"unknown": 1}),                      # unsupported keyword
        ("k_truss", (G, "3"), {}),
        ("is_connected", (D,), {}),
        ("single_target_shortest_path_length", (D, 0), {}),      # would need in-edges
        ("node_connected_component", (D, 0), {}),
        ("square_clustering", (G,), {}),                          # not implemented
    ]
    for name, args, kwargs in declined:
        reason = B.can_run(name, args, kwargs)
        assert isinstance(reason, str) and reason, (name, args, kwargs)


def test_should_run():
    small, large = nx.karate_club_graph(), nx.gnm_random_graph(20_000, 100_000, seed=3)
    H = HornetGraph.from_networkx(small, "cpu")
    assert B.should_run("triangles", (H,), {}) is True          # already a hornet graph
    assert B.should_run("bfs_layers", (H, 0), {}) is True
    assert isinstance(B.should_run("triangles", (small,), {}), str)
    assert B.should_run("triangles", (large,), {}) is True
    assert isinstance(B.should_run("bfs_layers", (large, 0), {}), str)


@needs_entry_points
def test_should_run_after_networkx_cached_a_conversion():
    G = nx.karate_club_graph()
    assert isinstance(B.should_run("single_source_shortest_path_length", (G, 0), {}), str)
    nx.triangles(G, backend="hornet")                          # caches the conversion on G
    assert B.should_run("single_source_shortest_path_length", (G, 0), {}) is True


def test_backend_info_lists_exactly_the_implemented_dispatchable_functions():
    info = get_info()
    for key in ("backend_name", "project", "package", "url", "short_summary", "functions"):
        assert key in info
    assert info["backend_name"] == "hornet" and info["package"] == "hornet"
    registered = nx.utils.backends._registered_algorithms
    for name in info["functions"]:
        assert name in registered, f"{name} is not a dispatchable networkx function"
        assert callable(getattr(B, name))
    assert set(info["functions"]) == set(FUNCTIONS)


def test_backend_info_module_does_not_import_hornet():
    code = "import sys, hornet_nx_info; hornet_nx_info.get_info(); " \
           "sys.exit('hornet' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


# ---------------------------------------------------------------------------------------------
# Through networkx's dispatch (needs the installed entry points)


@needs_entry_points
def test_dispatch_with_backend_keyword():
    G = _relabel(_random(11), "tuple", 11)
    assert nx.triangles(G, backend="hornet") == nx.triangles(G)
    assert nx.clustering(G, backend="hornet") == nx.clustering(G)
    assert nx.transitivity(G, backend="hornet") == nx.transitivity(G)
    assert nx.average_clustering(G, backend="hornet") == nx.average_clustering(G)
    s = next(iter(G))
    assert nx.single_source_shortest_path_length(G, s, 2, backend="hornet") == \
        nx.single_source_shortest_path_length(G, s, 2)
    _check_layers(nx.bfs_layers(G, s, backend="hornet"), nx.bfs_layers(G, s))
    T = nx.k_truss(G, 3, backend="hornet")
    assert isinstance(T, HornetGraph)
    assert nx.utils.graphs_equal(T.to_networkx(), nx.k_truss(G, 3))


@needs_entry_points
def test_dispatch_on_a_hornet_graph_and_declined_calls():
    G = nx.karate_club_graph()
    H = HornetGraph.from_networkx(G, "cpu")
    assert nx.triangles(H) == nx.triangles(G)                   # dispatched by graph type
    with pytest.raises(NotImplementedError):
        nx.clustering(G, weight="weight", backend="hornet")      # declined by can_run
    with pytest.raises(nx.NetworkXNotImplemented):
        nx.triangles(nx.DiGraph([(0, 1)]), backend="hornet")    # networkx's own check
