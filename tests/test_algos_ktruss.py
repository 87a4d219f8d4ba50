"""k-truss (one k, truss numbers, maximal truss): delta == iterative == networkx."""
from __future__ import annotations

from itertools import combinations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from conftest import graphs, read_pairs, scipy_matrix
from conftest import needs_data
from hornet.adjacency import AdjacencyView
from hornet.algos import as_adjacency, edge_list, k_truss, max_truss, truss_numbers

METHODS = ["delta", "iterative"]


# ---------------------------------------------------------------------------------------------
# helpers


def simple_graph(n, pairs):
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from((u, v) for u, v in pairs if u != v)
    return G


def nx_truss_numbers(G):
    """{(u, v) u < v: truss number} by repeated nx.k_truss."""
    t = {}
    k, H = 2, G
    while H.number_of_edges():
        for u, v in H.edges():
            t[(min(u, v), max(u, v))] = k
        k += 1
        H = nx.k_truss(H, k)
    return t


def edge_set(src, dst):
    return sorted(zip(np.asarray(src).tolist(), np.asarray(dst).tolist()))


def nx_edges(H):
    return sorted((min(u, v), max(u, v)) for u, v in H.edges())


class FakeGraph:
    """Stand-in for hornet.Graph with the parts the delta k-truss uses: adjacency(), edges(),
    copy(), batched delete_edges(), num_vertices/num_edges. Records every deletion batch."""

    def __init__(self, n, pairs, log=None):
        self.num_vertices = n
        self.directed = False
        self._set = {(min(u, v), max(u, v)) for u, v in pairs if u != v}
        self.log = [] if log is None else log
        self._view = None

    @property
    def num_edges(self):
        return len(self._set)

    def edges(self):
        e = sorted(self._set)
        a = np.array(e, dtype=np.int32).reshape(-1, 2)
        return a[:, 0].copy(), a[:, 1].copy()

    def adjacency(self):
        if self._view is None:
            s, d = self.edges()
            A = scipy_matrix(self.num_vertices, list(zip(s, d)), False)
            A.sort_indices()
            self._view = AdjacencyView.from_csr(A.indptr, A.indices, directed=False,
                                                sorted=True)
        return self._view

    def copy(self):
        g = FakeGraph(self.num_vertices, [], self.log)
        g._set = set(self._set)
        return g

    def delete_edges(self, src, dst):
        batch = {(min(u, v), max(u, v)) for u, v in zip(np.asarray(src).tolist(),
                                                        np.asarray(dst).tolist())}
        self.log.append(len(batch))
        self._set -= batch
        self._view = None


# ---------------------------------------------------------------------------------------------
# small graphs


@pytest.mark.parallel_kernels
@given(graphs(directed=False))
def test_truss_numbers_match_networkx(g):
    n, pairs, _ = g
    G = simple_graph(n, pairs)
    want = nx_truss_numbers(G)
    A = scipy_matrix(n, pairs, False)
    src, dst = edge_list(as_adjacency(A))
    expected = np.array([want[(u, v)] for u, v in zip(src.tolist(), dst.tolist())], np.int32)
    for method in METHODS:
        got = truss_numbers(A, method=method)
        assert got.dtype == np.int32 and got.shape == src.shape
        np.testing.assert_array_equal(got, expected)
    kmax, s, d = max_truss(A)
    if len(expected):
        assert kmax == expected.max()
        assert edge_set(s, d) == nx_edges(nx.k_truss(G, kmax))
    else:
        assert kmax == 0 and len(s) == 0


@given(graphs(directed=False), st.integers(0, 8))
def test_k_truss_matches_networkx(g, k):
    n, pairs, _ = g
    G = simple_graph(n, pairs)
    want = nx_edges(nx.k_truss(G, k))
    A = scipy_matrix(n, pairs, False)
    for method in METHODS:
        assert edge_set(*k_truss(A, k, method=method)) == want


@given(graphs(directed=False), st.sampled_from(METHODS))
def test_graph_path_peels_a_copy(g, method):
    n, pairs, _ = g
    fake = FakeGraph(n, pairs)
    before = fake.edges()
    A = scipy_matrix(n, pairs, False)
    t = truss_numbers(fake, method=method)
    np.testing.assert_array_equal(t, truss_numbers(A, method=method))
    for k in (3, 4, 5):
        assert edge_set(*k_truss(fake, k, method=method)) == edge_set(*k_truss(A, k))
    # the input graph itself is untouched; the copies were peeled by batched deletions
    assert edge_set(*fake.edges()) == edge_set(*before)
    if len(t) and t.min() < t.max():
        assert fake.log, "peeling should go through delete_edges on the Graph path"


@pytest.mark.parallel_kernels
@given(graphs(directed=True))
def test_directed_inputs_use_the_underlying_undirected_graph(g):
    n, pairs, _ = g
    A = as_adjacency(scipy_matrix(n, pairs, True), directed=True)
    U = as_adjacency(scipy_matrix(n, pairs, False), directed=False)
    tu = dict(zip(edge_set(*edge_list(U)), truss_numbers(U).tolist()))
    src, dst = edge_list(A)
    got = truss_numbers(A)
    want = [0 if u == v else tu[(min(u, v), max(u, v))]
            for u, v in zip(src.tolist(), dst.tolist())]
    np.testing.assert_array_equal(got, want)
    kmax, s, d = max_truss(A)
    if any(want):
        assert kmax == max(want)
        assert edge_set(s, d) == sorted((u, v) for u, v, t in zip(src.tolist(), dst.tolist(),
                                                                 want) if t == kmax)
    s3, d3 = k_truss(A, 3)
    assert edge_set(s3, d3) == sorted((u, v) for u, v, t in zip(src.tolist(), dst.tolist(),
                                                               want) if t >= 3)


def test_small_cases():
    K5 = sp.csr_array(np.ones((5, 5)) - np.eye(5))
    for method in METHODS:
        assert truss_numbers(K5, method=method).tolist() == [5] * 10
        k, s, d = max_truss(K5, method=method)
        assert k == 5 and len(s) == 10
        assert len(k_truss(K5, 6, method=method)[0]) == 0
    path = (np.array([0, 1, 3, 4]), np.array([1, 0, 2, 1]))
    assert truss_numbers(path).tolist() == [2, 2]
    assert max_truss(path)[0] == 2
    empty = (np.zeros(4, np.int64), np.zeros(0, np.int32))
    assert truss_numbers(empty).shape == (0,)
    assert max_truss(empty)[0] == 0
    assert len(k_truss(empty, 3)[0]) == 0
    with pytest.raises(ValueError):
        truss_numbers(K5, method="bogus")


def test_double_and_triple_deletions_are_not_double_counted():
    """Two triangles sharing an edge, peeled in one round: the shared edge loses 2, not 4."""
    # K4 minus nothing plus tails: vertices 0-1-2-3 form K4 (truss 4); 4 hangs on 0 and 1
    pairs = list(combinations(range(4), 2)) + [(0, 4), (1, 4), (2, 5), (3, 5), (4, 5)]
    A = scipy_matrix(6, pairs, False)
    G = simple_graph(6, pairs)
    want = nx_truss_numbers(G)
    src, dst = edge_list(as_adjacency(A))
    for method in METHODS:
        got = truss_numbers(A, method=method)
        assert got.tolist() == [want[(u, v)] for u, v in zip(src.tolist(), dst.tolist())]


# ---------------------------------------------------------------------------------------------
# real graphs


def read_undirected(name):
    a = np.column_stack(read_pairs(name))
    return int(a.max()) + 1, a


@needs_data
@pytest.mark.parametrize("name, kmax", [("ca-GrQc.txt.gz", 44), ("p2p-Gnutella08.txt.gz", 5)])
def test_real_graphs(name, kmax):
    n, pairs = read_undirected(name)
    A = scipy_matrix(n, pairs, False)
    t_delta = truss_numbers(A, method="delta")
    t_iter = truss_numbers(A, method="iterative")
    np.testing.assert_array_equal(t_delta, t_iter)
    assert t_delta.max() == kmax
    k, s, d = max_truss(A)
    assert k == kmax
    G = simple_graph(n, pairs.tolist())
    assert edge_set(s, d) == nx_edges(nx.k_truss(G, kmax))
    src, dst = edge_list(as_adjacency(A))
    keep = t_delta >= 5
    assert edge_set(src[keep], dst[keep]) == nx_edges(nx.k_truss(G, 5))
    for method in ("delta", "iterative"):
        assert edge_set(*k_truss(A, 5, method=method)) == edge_set(src[keep], dst[keep])


@needs_data
def test_facebook_deep_truss():
    """k_max = 97: a long peel (hundreds of rounds); networkx is too slow here, so the
    decomposition is checked against the single-k peel and the published k_max."""
    n, pairs = read_undirected("facebook_combined.txt.gz")
    A = scipy_matrix(n, pairs, False)
    t = truss_numbers(A)
    k, s, d = max_truss(A)
    assert k == t.max() == 97
    src, dst = edge_list(as_adjacency(A))
    for kk in (20, 97):
        assert edge_set(*k_truss(A, kk)) == edge_set(src[t >= kk], dst[t >= kk])


@pytest.mark.parallel_kernels
def test_hornet_graph_if_available():
    hornet = pytest.importorskip("hornet")
    Graph = getattr(hornet, "Graph", None)
    if Graph is None:
        pytest.skip("hornet.Graph not available yet")
    pairs = list(combinations(range(6), 2)) + [(5, 6), (6, 7), (7, 5), (7, 8)]
    s = np.array([p[0] for p in pairs])
    d = np.array([p[1] for p in pairs])
    g = Graph.from_edges(s, d, directed=False, device="cpu")
    ref = scipy_matrix(9, pairs, False)
    np.testing.assert_array_equal(truss_numbers(g), truss_numbers(ref))
    k, ks, kd = max_truss(g)
    assert k == 6 and edge_set(ks, kd) == sorted(combinations(range(6), 2))
    assert g.num_edges == len(pairs)                # untouched
