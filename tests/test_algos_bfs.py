"""BFS levels and parents against networkx shortest-path lengths."""
from __future__ import annotations


import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

import conftest
from conftest import needs_data
from hornet.algos import as_adjacency, bfs

try:
    from hornet import Graph
except Exception:           # pragma: no cover - the dynamic graph is optional here
    Graph = None


@st.composite
def graphs(draw, max_n=40):
    n = draw(st.integers(1, max_n))
    node = st.integers(0, n - 1)
    pairs = draw(st.lists(st.tuples(node, node), max_size=3 * n))
    directed = draw(st.booleans())
    return n, pairs, directed


def matrix(n, pairs, directed):
    pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    s, t = pairs[:, 0], pairs[:, 1]
    if not directed:
        s, t = np.concatenate([s, t]), np.concatenate([t, s])
    return sp.coo_array((np.ones(s.shape[0]), (s, t)), shape=(n, n)).tocsr()


def nx_levels(n, pairs, directed, sources):
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from(pairs)
    lv = np.full(n, -1)
    if len(sources):
        for v, d in nx.multi_source_dijkstra_path_length(G, set(sources)).items():
            lv[v] = d
    return lv, G


def check_parents(levels, parents, G, sources):
    for v in range(len(levels)):
        if levels[v] <= 0:
            assert parents[v] == -1
        else:
            p = parents[v]
            assert levels[p] == levels[v] - 1 and G.has_edge(p, v)
    for s in sources:
        assert levels[s] == 0


# (direction_optimizing, alpha, beta): top-down only, Beamer's defaults, always bottom-up
MODES = [(False, 15, 18), (True, 15, 18), (True, 1 << 40, 1 << 40)]


@pytest.mark.parallel_kernels
@given(graphs(), st.data())
def test_levels_and_parents_match_networkx(g, data):
    n, pairs, directed = g
    sources = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3))
    want, G = nx_levels(n, pairs, directed, sources)
    A = matrix(n, pairs, directed)
    view = as_adjacency(A, directed=directed)
    rev = A.T.tocsr() if directed else None
    for do, alpha, beta in MODES:
        lv, par = bfs(view, sources, return_parents=True, direction_optimizing=do,
                      reverse=rev, alpha=alpha, beta=beta)
        assert lv.dtype == np.int32 and par.dtype == np.int32 and lv.shape == (n,)
        np.testing.assert_array_equal(lv, want)
        check_parents(lv, par, G, sources)
    # a directed graph without a reverse view runs top-down only, same answer
    np.testing.assert_array_equal(bfs(view, sources, alpha=1 << 40, beta=1 << 40), want)


@pytest.mark.skipif(Graph is None, reason="hornet.Graph not available")
@given(graphs())
def test_on_the_dynamic_graph(g):
    n, pairs, directed = g
    pairs = [(u, v) for u, v in pairs if directed or u != v]
    src = np.array([p[0] for p in pairs], np.int64)
    dst = np.array([p[1] for p in pairs], np.int64)
    graph = Graph.from_edges(src, dst, num_vertices=n, directed=directed, device="cpu")
    want, G = nx_levels(n, pairs, directed, [0])
    lv, par = bfs(graph, 0, return_parents=True)
    np.testing.assert_array_equal(lv, want)
    check_parents(lv, par, G, [0])


def test_small_cases_and_errors():
    path = (np.array([0, 1, 3, 4, 4]), np.array([1, 0, 2, 1]))
    assert bfs(path, 0).tolist() == [0, 1, 2, -1]
    assert bfs(path, np.array([2, 3])).tolist() == [2, 1, 0, 0]
    assert bfs(path, []).tolist() == [-1, -1, -1, -1]
    with pytest.raises(ValueError):
        bfs(path, 4)
    with pytest.raises(ValueError):
        bfs(path, -1)
    with pytest.raises(TypeError):
        bfs(path, 1.5)
    assert bfs((np.zeros(1, np.int64), np.zeros(0, np.int32)), []).shape == (0,)


def read_pairs(name):
    s, d = conftest.read_pairs(name)
    a = np.column_stack([s, d])
    return int(a.max()) + 1, a


@needs_data
@pytest.mark.parametrize("name, directed", [("facebook_combined.txt.gz", False),
                                            ("ca-GrQc.txt.gz", False),
                                            ("p2p-Gnutella08.txt.gz", True)])
def test_real_graphs(name, directed):
    n, pairs = read_pairs(name)
    A = matrix(n, pairs, directed)
    view = as_adjacency(A, directed=directed)
    want, G = nx_levels(n, pairs.tolist(), directed, [0])
    for do in (False, True):
        lv, par = bfs(view, 0, return_parents=True, direction_optimizing=do,
                      reverse=A.T.tocsr() if directed else None)
        np.testing.assert_array_equal(lv, want)
        check_parents(lv, par, G, [0])


@pytest.mark.parametrize("indptr, indices, error", [
    ([0, 1], [5], ValueError),            # index outside [0, n)
    ([0, 2, 1], [0, 1], ValueError),      # indptr falls
    ([1, 2], [0], ValueError),            # indptr does not start at 0
    ([0, 1.0], [0], TypeError),           # not integers
    ([[0, 1]], [0], ValueError),          # not 1-D
])
def test_bad_csr_pairs_are_refused(indptr, indices, error):
    with pytest.raises(error):
        bfs((np.array(indptr), np.array(indices)), 0)
