"""Triangle counting (global, per vertex, per edge) against networkx and brute force."""
from __future__ import annotations

import gzip

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given

import conftest
from conftest import scipy_matrix
from conftest import DATA_DIR, needs_data
from hornet.adjacency import AdjacencyView
from hornet.algos import (as_adjacency, edge_list, edge_support, to_table, triangle_count,
                          triangles_per_vertex)


# ---------------------------------------------------------------------------------------------
# helpers


def graphs(**kw):
    options = dict(max_n=20, pairs_per_vertex=4, clique_size=7, cliques=3)
    return conftest.graphs(**{**options, **kw})


def messy_csr(n, pairs, directed, seed=0):
    """CSR pair with unsorted rows and repeated entries (as_adjacency must clean it)."""
    pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    s, t = pairs[:, 0], pairs[:, 1]
    if not directed:
        s, t = np.concatenate([s, t]), np.concatenate([t, s])
    s, t = np.concatenate([s, s[: len(s) // 3]]), np.concatenate([t, t[: len(t) // 3]])
    rng = np.random.default_rng(seed)
    order = np.lexsort((rng.random(s.shape[0]), s))
    indptr = np.zeros(n + 1, np.int64)
    np.add.at(indptr, s + 1, 1)
    return np.cumsum(indptr), t[order]


def nx_graph(n, pairs, directed):
    """The underlying undirected simple graph."""
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from((u, v) for u, v in pairs if u != v)
    return G


def expected_edges(n, pairs, directed):
    if directed:
        return sorted(set(map(tuple, pairs)))
    return sorted({(min(u, v), max(u, v)) for u, v in pairs if u != v})


def read_pairs(name):
    """Tiny SNAP reader for the tests (comment lines skipped, two id columns)."""
    with gzip.open(DATA_DIR / name, "rt") as f:
        lines = [ln for ln in f if ln.strip() and ln[0] not in "#%"]
    a = np.loadtxt(lines, dtype=np.int64, usecols=(0, 1), ndmin=2)
    return a[:, 0], a[:, 1]


def real_graph(name, directed):
    s, t = read_pairs(name)
    n = int(max(s.max(), t.max())) + 1
    return n, np.stack([s, t], 1), directed


# ---------------------------------------------------------------------------------------------
# as_adjacency


@pytest.mark.parallel_kernels
@given(graphs())
def test_as_adjacency_cleans_every_input_kind(g):
    n, pairs, directed = g
    want = expected_edges(n, pairs, directed)
    for obj in (scipy_matrix(n, pairs, directed), messy_csr(n, pairs, directed)):
        view = as_adjacency(obj, directed=directed)
        assert view.sorted and view.directed == directed and view.num_vertices == n
        src, dst = edge_list(view)
        got = list(zip(src.tolist(), dst.tolist()))
        if directed:
            assert got == want
        else:   # self-loops stored but not listed
            assert got == want


def test_as_adjacency_detects_direction_and_rejects_junk():
    A = sp.csr_array(np.array([[0, 1], [1, 0]]))
    assert not as_adjacency(A).directed
    assert as_adjacency(sp.csr_array(np.array([[0, 1], [0, 0]]))).directed
    assert as_adjacency(A, directed=True).directed
    v = as_adjacency(A)
    assert as_adjacency(v) is v
    with pytest.raises(TypeError):
        as_adjacency("not a graph")
    with pytest.raises(ValueError):
        as_adjacency((np.array([0, 1]), np.array([5])))
    gpu = AdjacencyView(v.num_vertices, v.degree, v.edge_ptr, False, True, "gpu")
    with pytest.raises(NotImplementedError):
        triangle_count(gpu)


def test_graph_like_object_is_used_through_adjacency():
    class G:
        def __init__(self, view):
            self.view = view

        def adjacency(self):
            return self.view

    K4 = sp.csr_array(np.ones((4, 4)) - np.eye(4))
    assert triangle_count(G(as_adjacency(K4))) == 4


# ---------------------------------------------------------------------------------------------
# triangles


@given(graphs())
def test_triangles_match_networkx(g):
    n, pairs, directed = g
    G = nx_graph(n, pairs, directed)
    want_v = np.array([nx.triangles(G)[v] for v in range(n)])
    for obj in (as_adjacency(scipy_matrix(n, pairs, directed), directed=directed),
                as_adjacency(messy_csr(n, pairs, directed), directed=directed)):
        per_v = triangles_per_vertex(obj)
        assert per_v.dtype == np.int64 and per_v.shape == (n,)
        np.testing.assert_array_equal(per_v, want_v)
        assert triangle_count(obj) == want_v.sum() // 3


@given(graphs())
def test_edge_support_is_aligned_with_edges(g):
    n, pairs, directed = g
    G = nx_graph(n, pairs, directed)
    view = as_adjacency(scipy_matrix(n, pairs, directed), directed=directed)
    sup = edge_support(view)
    edges = expected_edges(n, pairs, directed)
    assert sup.shape == (len(edges),) and sup.dtype == np.int32
    want = [0 if u == v else len(set(G[u]) & set(G[v])) for u, v in edges]
    np.testing.assert_array_equal(sup, want)


def test_small_cases():
    empty = (np.zeros(1, np.int64), np.zeros(0, np.int32))          # no vertices
    assert triangle_count(empty) == 0
    assert triangles_per_vertex(empty).tolist() == []
    assert edge_support(empty).shape == (0,)
    edgeless = (np.zeros(4, np.int64), np.zeros(0, np.int32))       # 3 vertices, no edges
    assert triangle_count(edgeless) == 0
    assert triangles_per_vertex(edgeless).tolist() == [0, 0, 0]
    assert edge_support(edgeless).shape == (0,)
    K5 = sp.csr_array(np.ones((5, 5)) - np.eye(5))
    assert triangle_count(K5) == 10
    assert triangles_per_vertex(K5).tolist() == [6] * 5
    assert edge_support(K5).tolist() == [3] * 10
    # self-loops are ignored
    L = K5.tolil()
    L.setdiag(1)
    assert triangle_count(L.tocsr()) == 10


def test_to_table():
    pa = pytest.importorskip("pyarrow")
    K4 = sp.csr_array(np.ones((4, 4)) - np.eye(4))
    t = to_table(edge_support(K4), K4, name="support")
    assert t.column_names == ["src", "dst", "support"] and t.num_rows == 6
    t = to_table({"triangles": triangles_per_vertex(K4)})
    assert t.column_names == ["vertex", "triangles"]
    assert isinstance(t, pa.Table)


# ---------------------------------------------------------------------------------------------
# real graphs


@needs_data
@pytest.mark.parametrize("name, directed", [("ca-GrQc.txt.gz", False),
                                            ("facebook_combined.txt.gz", False),
                                            ("p2p-Gnutella08.txt.gz", True)])
def test_real_graphs_match_networkx(name, directed):
    n, pairs, d = real_graph(name, directed)
    G = nx_graph(n, pairs, d)
    A = scipy_matrix(n, pairs, d)
    want = nx.triangles(G)
    per_v = triangles_per_vertex(A)
    np.testing.assert_array_equal(per_v, [want[v] for v in range(n)])
    assert triangle_count(A) == sum(want.values()) // 3
    sup = edge_support(as_adjacency(A, directed=d))
    src, dst = edge_list(as_adjacency(A, directed=d))
    # support of an edge = its triangles; the per-vertex count is half the sum over its edges
    und = sup if not d else sup[src < dst]
    s_und = src if not d else src[src < dst]
    t_und = dst if not d else dst[src < dst]
    if not d:
        check = np.zeros(n, np.int64)
        np.add.at(check, s_und, und)
        np.add.at(check, t_und, und)
        np.testing.assert_array_equal(check // 2, per_v)
    rng = np.random.default_rng(0)
    for i in rng.choice(len(src), size=min(200, len(src)), replace=False):
        u, v = int(src[i]), int(dst[i])
        assert sup[i] == (0 if u == v else len(set(G[u]) & set(G[v])))
