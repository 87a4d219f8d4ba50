"""SpMV y = A x (and A^T x) against scipy."""
from __future__ import annotations


import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import read_pairs
from conftest import needs_data
from hornet.adjacency import AdjacencyView
from hornet.algos import as_adjacency, spmv

try:
    from hornet import Graph
except Exception:           # pragma: no cover
    Graph = None


@st.composite
def weighted_graphs(draw, max_n=40):
    n = draw(st.integers(1, max_n))
    node = st.integers(0, n - 1)
    pairs = draw(st.lists(st.tuples(node, node), max_size=4 * n, unique=True))
    directed = draw(st.booleans())
    if not directed:
        pairs = list({(min(u, v), max(u, v)) for u, v in pairs})
    w = draw(st.lists(st.floats(-10, 10, allow_nan=False), min_size=len(pairs),
                      max_size=len(pairs)))
    return n, pairs, np.array(w, np.float64), directed


def matrix(n, pairs, w, directed):
    pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    s, t = pairs[:, 0], pairs[:, 1]
    if not directed:
        loop = s == t
        s, t, w = (np.concatenate([s, t[~loop]]), np.concatenate([t, s[~loop]]),
                   np.concatenate([w, w[~loop]]))
    return sp.coo_array((w, (s, t)), shape=(n, n)).tocsr()


X_DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint8, np.bool_]


@pytest.mark.parallel_kernels
@given(weighted_graphs(), st.sampled_from(X_DTYPES), st.integers(0, 2**32 - 1))
def test_matches_scipy(g, xdt, seed):
    n, pairs, w, directed = g
    A = matrix(n, pairs, w, directed)
    rng = np.random.default_rng(seed)
    x = (rng.random(n) * 20 - 10).astype(xdt) if xdt != np.bool_ else rng.random(n) < 0.5
    xf = x.astype(np.float64)
    P = A.copy()
    P.data[:] = 1.0
    view = as_adjacency(A, directed=directed)
    for transpose in (False, True):
        y = spmv(view, x, weight="weight", transpose=transpose)
        assert y.dtype == np.float64 and y.shape == (n,)
        np.testing.assert_allclose(y, (A.T if transpose else A) @ xf, rtol=1e-12, atol=1e-9)
        y1 = spmv(view, x, transpose=transpose)
        np.testing.assert_allclose(y1, (P.T if transpose else P) @ xf, rtol=1e-12, atol=1e-9)


@pytest.mark.skipif(Graph is None, reason="hornet.Graph not available")
@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(weighted_graphs(max_n=60), st.integers(0, 2**32 - 1))
def test_float32_result(device, g, seed):
    """``dtype=np.float32``: y in float32, each row the float64 sum rounded once (a long
    row summed in pieces on the GPU may add its pieces in float32); float32 weights and x
    (the float32 pipeline), float64 ones, and the transpose."""
    n, pairs, w, directed = g
    if not directed:                  # (an undirected hornet.Graph skips self-loops)
        keep = [i for i, (u, v) in enumerate(pairs) if u != v]
        pairs, w = [pairs[i] for i in keep], w[keep]
    A = matrix(n, pairs, w, directed)
    rng = np.random.default_rng(seed)
    x = rng.random(n) * 20 - 10
    src, dst = (np.array(pairs, dtype=np.int64).reshape(-1, 2).T if pairs
                else (np.zeros(0, np.int64), np.zeros(0, np.int64)))
    graph = Graph.from_edges(src, dst, num_vertices=n, directed=directed, device=device,
                             w=w, w32=w.astype(np.float32))
    xp = __import__("cupy") if device == "gpu" else np
    for weight, xs in ((None, x), ("w", x), ("w32", x.astype(np.float32))):
        M = A.copy()
        M.data = np.ones_like(M.data) if weight is None else \
            M.data.astype(np.float32 if weight == "w32" else np.float64).astype(np.float64)
        for transpose in (False, True):
            want = (M.T if transpose else M) @ xs.astype(np.float64)
            bound = (abs(M.T if transpose else M) @ np.abs(xs.astype(np.float64)))
            y = spmv(graph, xp.asarray(xs), weight=weight, transpose=transpose,
                     dtype=np.float32)
            y = y.get() if device == "gpu" else y
            assert y.dtype == np.float32 and y.shape == (n,)
            assert np.all(np.abs(y.astype(np.float64) - want) <= 1e-6 * bound + 1e-30)
    with pytest.raises(TypeError, match="dtype must be float64 or float32"):
        spmv(graph, xp.asarray(x), dtype=np.int32)


@pytest.mark.skipif(Graph is None, reason="hornet.Graph not available")
@given(weighted_graphs())
def test_on_the_dynamic_graph(g):
    n, pairs, w, directed = g
    keep = [i for i, (u, v) in enumerate(pairs) if directed or u != v]
    pairs = [pairs[i] for i in keep]
    w = w[keep]
    src = np.array([p[0] for p in pairs], np.int64)
    dst = np.array([p[1] for p in pairs], np.int64)
    graph = Graph.from_edges(src, dst, num_vertices=n, directed=directed, device="cpu", w=w)
    A = matrix(n, pairs, w, directed)
    P = A.copy()
    P.data[:] = 1.0
    x = np.linspace(-1, 1, n)
    # the first call visits rows in id order, later ones in the graph's storage order
    for _ in range(3):
        np.testing.assert_allclose(spmv(graph, x, weight="w"), A @ x, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(spmv(graph, x, weight="w", transpose=True), A.T @ x,
                                   rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(spmv(graph, x), P @ x, rtol=1e-12, atol=1e-9)


@pytest.mark.skipif(Graph is None, reason="hornet.Graph not available")
def test_storage_order_visits_after_updates():
    """Repeated SpMVs on a graph whose lists moved between blocks (scipy oracle), and on an
    edgeless graph (nothing visited: y all zero)."""
    rng = np.random.default_rng(4)
    n = 3000
    g = Graph(directed=False, device="cpu", num_vertices=n, edge_properties={"w": np.float32})
    for step in range(4):
        s, t = rng.integers(0, n // 2, 6000), (rng.pareto(1.0, 6000) * 20).astype(np.int64) % n
        g.insert_edges(s, t, w=rng.random(6000).astype(np.float32))
        if step % 2:
            cs, ct = g.edges()
            drop = rng.random(cs.shape[0]) < 0.4
            g.delete_edges(cs[drop], ct[drop])
        A = g.to_scipy("w").astype(np.float64)
        x = rng.standard_normal(n)
        for _ in range(3):
            np.testing.assert_allclose(spmv(g, x, weight="w"), A @ x, rtol=1e-6, atol=1e-9)
            np.testing.assert_allclose(spmv(g, x, weight="w", transpose=True), A.T @ x,
                                       rtol=1e-6, atol=1e-9)
    empty = Graph(directed=True, device="cpu", num_vertices=5)
    for _ in range(3):
        assert spmv(empty, np.ones(5)).tolist() == [0.0] * 5


def test_errors():
    A = sp.csr_array(np.array([[0.0, 2.0], [3.0, 0.0]]))
    assert spmv(A, [1, 1], weight="weight").tolist() == [2.0, 3.0]
    assert spmv(A, [1, 1]).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError):
        spmv(A, np.ones(3))
    with pytest.raises(ValueError):
        spmv(A, np.ones((2, 1)))
    with pytest.raises(TypeError):
        spmv(A, np.ones(2, np.complex128))
    with pytest.raises(TypeError):
        spmv(A, np.array(["a", "b"]))
    with pytest.raises(KeyError):
        spmv(A, np.ones(2), weight="nope")
    # weights of any real dtype
    v = as_adjacency(A)
    iw = AdjacencyView.from_csr(A.indptr, A.indices, directed=True,
                                weights=np.array([2, 3], np.int16), weight_name="w")
    assert spmv(iw, np.array([1.0, 10.0]), weight="w").tolist() == [20.0, 3.0]
    assert spmv(v, np.zeros(2)).tolist() == [0.0, 0.0]
    empty = (np.zeros(1, np.int64), np.zeros(0, np.int32))
    assert spmv(empty, np.zeros(0)).shape == (0,)


@needs_data
def test_real_graph():
    a = np.column_stack(read_pairs("p2p-Gnutella08.txt.gz"))
    n = int(a.max()) + 1
    rng = np.random.default_rng(1)
    A = sp.coo_array((rng.random(len(a)), (a[:, 0], a[:, 1])), shape=(n, n)).tocsr()
    x = rng.random(n)
    np.testing.assert_allclose(spmv(A, x, weight="weight"), A @ x, rtol=1e-12)
    np.testing.assert_allclose(spmv(A, x, weight="weight", transpose=True), A.T @ x, rtol=1e-12)
