"""GPU (CuPy/CUDA) algorithms against the CPU ones: the same hornet.Graph built on
device="cpu" and device="gpu" (and CSR inputs given as CuPy arrays) must give the same
results -- exactly for triangles, supports, trusses and BFS levels, within 1e-9 (relative to
sum |A||x|) for SpMV, whose split rows are summed with atomics on the GPU."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import conftest
from conftest import DATA_DIR, HAS_GPU

import hornet
from hornet import algos
from hornet.adjacency import AdjacencyView

if HAS_GPU:
    from hornet.algos.spmv import gpu as spmv_gpu

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]

if HAS_GPU:
    import cupy
else:  # pragma: no cover
    cupy = None

EXAMPLES = settings(max_examples=25, deadline=None)


# ---------------------------------------------------------------------------------------------
# helpers


def host(a):
    if cupy is not None and isinstance(a, cupy.ndarray):
        return a.get()
    return np.asarray(a)


def on_device(a):
    assert isinstance(a, cupy.ndarray), f"expected a CuPy result, got {type(a).__name__}"
    return a.get()


def canonical(n, pairs, directed, seed=0):
    """(src, dst, weight): distinct pairs (undirected: once, self-loops dropped) and weights."""
    pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    if not directed:
        pairs = np.sort(pairs, axis=1)
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    pairs = np.unique(pairs, axis=0) if pairs.size else pairs
    rng = np.random.default_rng(seed)
    w = rng.integers(-5, 6, pairs.shape[0]).astype(np.float64) + rng.random(pairs.shape[0])
    return pairs[:, 0], pairs[:, 1], w


def both(n, src, dst, directed, **props):
    gc = hornet.Graph.from_edges(src, dst, num_vertices=n, directed=directed, device="cpu",
                                 **props)
    gg = hornet.Graph.from_edges(src, dst, num_vertices=n, directed=directed, device="gpu",
                                 **props)
    return gc, gg


def gpu_csr_view(gg):
    indptr, indices = gg.to_csr()
    return AdjacencyView.from_csr(indptr, indices, directed=gg.directed, sorted=True)


def check_parents(levels, parents, csr, sources):
    indptr, indices = csr
    for v in range(len(levels)):
        if levels[v] <= 0:
            assert parents[v] == -1
        else:
            p = parents[v]
            assert levels[p] == levels[v] - 1
            row = indices[indptr[p]:indptr[p + 1]]
            assert v in row
    for s in sources:
        assert levels[s] == 0


def assert_spmv_close(got, want, absA_absx):
    """|got - want| <= 1e-9 sum_j |A_ij x_j| (exact where a row sums nothing)."""
    got = on_device(got)
    assert got.dtype == np.float64 and got.shape == want.shape
    assert np.all(np.abs(got - want) <= 1e-9 * absA_absx), np.max(np.abs(got - want))


class spmv_kernel:
    """Context: run hornet.algos.spmv on the GPU with the given kernel ("warp" / "merge")."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.old = spmv_gpu.SPMV_KERNEL
        spmv_gpu.SPMV_KERNEL = self.name

    def __exit__(self, *exc):
        spmv_gpu.SPMV_KERNEL = self.old


def compare_all(gc, gg, *, truss=True, bfs_sources=None, spmv_weight=None):
    """Every algorithm on the CPU graph and the GPU graph (and the GPU CSR view of it)."""
    n = gc.num_vertices
    assert gg.num_vertices == n
    es, ed = gc.edges()
    gs, gd = gg.edges()
    assert np.array_equal(es, host(gs)) and np.array_equal(ed, host(gd))
    full, bare = gg.adjacency(), algos.as_adjacency(gg, properties=False)
    assert bare.property_ptrs == {} and bare.num_vertices == full.num_vertices
    assert bool(cupy.all(bare.degree == full.degree))
    assert bool(cupy.all(bare.edge_ptr == full.edge_ptr))
    targets = [gg, gpu_csr_view(gg)]
    # triangles
    tc = algos.triangle_count(gc)
    tv = algos.triangles_per_vertex(gc)
    sup = algos.edge_support(gc)
    for t in targets:
        assert algos.triangle_count(t) == tc
        got = on_device(algos.triangles_per_vertex(t))
        assert got.dtype == np.int64 and np.array_equal(got, tv)
        got = on_device(algos.edge_support(t))
        assert got.dtype == np.int32 and np.array_equal(got, sup)
    # BFS
    rng = np.random.default_rng(n)
    if bfs_sources is None:
        bfs_sources = [int(rng.integers(0, n))] if n else []
    csr = gc.to_csr()
    for s in bfs_sources:
        want = algos.bfs(gc, s)
        for t in targets:
            for do in (True, False):
                lv, par = algos.bfs(t, s, return_parents=True, direction_optimizing=do)
                lv, par = on_device(lv), on_device(par)
                assert lv.dtype == np.int32 and par.dtype == np.int32
                assert np.array_equal(lv, want)
                check_parents(lv, par, csr, [s])
    if gc.directed and bfs_sources:        # bottom-up steps through a reverse CSR on the GPU
        R = gc.to_scipy().T.tocsr()
        R.sort_indices()
        rev = (cupy.asarray(R.indptr), cupy.asarray(R.indices))
        for s in bfs_sources:
            lv, par = algos.bfs(gg, s, return_parents=True, reverse=rev)
            lv, par = on_device(lv), on_device(par)
            assert np.array_equal(lv, algos.bfs(gc, s))
            check_parents(lv, par, csr, [s])
    if n >= 3:
        many = np.unique(rng.integers(0, n, 3))
        want = algos.bfs(gc, many)
        assert np.array_equal(on_device(algos.bfs(gg, cupy.asarray(many))), want)
        assert np.array_equal(on_device(algos.bfs(gg, many.tolist())), want)
    # SpMV, with each of the two kernels
    x = rng.standard_normal(n)
    A = gc.to_scipy(spmv_weight)
    absAx = abs(A) @ np.abs(x)
    absATx = abs(A).T @ np.abs(x)
    for kernel in ("warp", "merge"):
        with spmv_kernel(kernel):
            for t in [gg, gpu_csr_view(gg)] if spmv_weight is None else [gg]:
                for tr, bound in ((False, absAx), (True, absATx)):
                    want = algos.spmv(gc, x, weight=spmv_weight, transpose=tr)
                    got = algos.spmv(t, cupy.asarray(x), weight=spmv_weight, transpose=tr)
                    assert_spmv_close(got, want, bound)
    # trusses
    if truss:
        # (the CPU's methods agree with each other and with networkx: tests/test_algos_ktruss)
        want = algos.truss_numbers(gc)
        for method in ("delta", "iterative"):
            got = on_device(algos.truss_numbers(gg, method=method))
            assert got.dtype == np.int32 and np.array_equal(got, want)
        assert np.array_equal(on_device(algos.truss_numbers(gpu_csr_view(gg))), want)
        k, s, d = algos.max_truss(gc)
        kg, sg, dg = algos.max_truss(gg)
        assert kg == k and np.array_equal(on_device(sg), s) and np.array_equal(on_device(dg), d)
        for k in (2, 3, 4, 5):
            if k == 4:
                s, d = algos.k_truss(gc, k)
            else:                 # the k-truss: the edges of truss number >= k
                keep = want >= max(k, 2)
                s, d = es[keep], ed[keep]
            for method in ("delta", "iterative"):
                sg, dg = algos.k_truss(gg, k, method=method)
                assert np.array_equal(on_device(sg), s) and np.array_equal(on_device(dg), d)


# ---------------------------------------------------------------------------------------------
# Hypothesis graphs


@EXAMPLES
@given(conftest.graphs(max_n=30, pairs_per_vertex=4, clique_size=8, cliques=3))
def test_gpu_matches_cpu_on_random_graphs(g):
    n, pairs, directed = g
    src, dst, w = canonical(n, pairs, directed)
    gc, gg = both(n, src, dst, directed, weight=w)
    compare_all(gc, gg, spmv_weight=None)
    compare_all(gc, gg, truss=False, spmv_weight="weight")


@settings(max_examples=15, deadline=None)
@given(conftest.graphs(max_n=30, pairs_per_vertex=4, clique_size=8, cliques=3),
       st.sampled_from(["int8", "uint16", "int32", "int64", "float32", "bool", "float16"]))
def test_gpu_spmv_weight_dtypes(g, dtype):
    n, pairs, directed = g
    src, dst, w = canonical(n, pairs, directed)
    w = np.abs(w).astype(dtype) if dtype != "bool" else (w > 0)
    if dtype == "float16":        # (the CPU graph has no float16 columns: same values as f64)
        gc = hornet.Graph.from_edges(src, dst, num_vertices=n, directed=directed, device="cpu",
                                     weight=w.astype(np.float64))
        gg = hornet.Graph.from_edges(src, dst, num_vertices=n, directed=directed, device="gpu",
                                     weight=w)
    else:
        gc, gg = both(n, src, dst, directed, weight=w)
    x = np.random.default_rng(1).standard_normal(n)
    A = gc.to_scipy("weight")
    for kernel in ("warp", "merge"):
        with spmv_kernel(kernel):
            for tr in (False, True):
                want = algos.spmv(gc, x, weight="weight", transpose=tr)
                bound = (abs(A).T if tr else abs(A)) @ np.abs(x)
                assert_spmv_close(algos.spmv(gg, x, weight="weight", transpose=tr), want, bound)


@st.composite
def messy_csr(draw, max_n=25):
    n = draw(st.integers(1, max_n))
    node = st.integers(0, n - 1)
    pairs = draw(st.lists(st.tuples(node, node), max_size=4 * n))
    directed = draw(st.booleans())
    shuffle = draw(st.randoms(use_true_random=False))
    pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    s, t = pairs[:, 0], pairs[:, 1]
    if not directed:
        s, t = np.concatenate([s, t]), np.concatenate([t, s])
    s, t = np.concatenate([s, s[: len(s) // 3]]), np.concatenate([t, t[: len(t) // 3]])
    keys = [shuffle.random() for _ in range(len(s))]
    order = np.lexsort((np.array(keys), s)) if len(s) else np.zeros(0, np.int64)
    indptr = np.zeros(n + 1, np.int64)
    np.add.at(indptr, s + 1, 1)
    return np.cumsum(indptr), t[order].astype(np.int32), directed


@EXAMPLES
@given(messy_csr())
def test_cupy_csr_inputs_match_numpy_csr_inputs(case):
    """Unsorted rows, repeated entries, self-loops: cleaned on the device like on the host."""
    indptr, indices, directed = case
    n = indptr.shape[0] - 1
    cpu = (indptr, indices)
    gpu = (cupy.asarray(indptr), cupy.asarray(indices))
    for d in (None, directed):
        vc = algos.as_adjacency(cpu, directed=d)
        vg = algos.as_adjacency(gpu, directed=d)
        assert vg.device == "gpu" and vg.sorted and vg.directed == vc.directed
        sc, dc = algos.edge_list(vc)
        sg, dg = algos.edge_list(vg)
        assert np.array_equal(on_device(sg), sc) and np.array_equal(on_device(dg), dc)
    assert algos.triangle_count(gpu) == algos.triangle_count(cpu)
    assert np.array_equal(on_device(algos.triangles_per_vertex(gpu)),
                          algos.triangles_per_vertex(cpu))
    assert np.array_equal(on_device(algos.edge_support(gpu)), algos.edge_support(cpu))
    assert np.array_equal(on_device(algos.truss_numbers(gpu)), algos.truss_numbers(cpu))
    k, s, t = algos.max_truss(cpu)
    kg, sg, tg = algos.max_truss(gpu)
    assert kg == k and np.array_equal(on_device(sg), s) and np.array_equal(on_device(tg), t)
    s, t = algos.k_truss(cpu, 3)
    sg, tg = algos.k_truss(gpu, 3)
    assert np.array_equal(on_device(sg), s) and np.array_equal(on_device(tg), t)
    assert np.array_equal(on_device(algos.bfs(gpu, 0)), algos.bfs(cpu, 0))
    x = np.arange(n, dtype=np.float64) - n / 3
    for tr in (False, True):
        want = algos.spmv(cpu, x, transpose=tr)
        np.testing.assert_allclose(on_device(algos.spmv(gpu, cupy.asarray(x), transpose=tr)),
                                   want, rtol=1e-12, atol=1e-9)


def test_cupy_inputs_are_validated_like_host_inputs():
    with pytest.raises(ValueError):
        algos.as_adjacency((cupy.array([0, 1]), cupy.array([5])))
    with pytest.raises(ValueError):
        algos.as_adjacency((cupy.array([0, 2, 1]), cupy.array([0, 1])))
    with pytest.raises(TypeError):
        algos.as_adjacency((cupy.array([0, 1.0]), cupy.array([0])))
    gc, gg = both(4, np.array([0, 1, 2]), np.array([1, 2, 3]), False)
    with pytest.raises(ValueError):
        algos.spmv(gg, cupy.ones(3))
    with pytest.raises(TypeError):
        algos.spmv(gg, cupy.ones(4, dtype=cupy.complex128))
    with pytest.raises(KeyError):
        algos.spmv(gg, cupy.ones(4), weight="nope")
    with pytest.raises(ValueError):
        algos.bfs(gg, 7)
    with pytest.raises(ValueError):
        algos.truss_numbers(gg, method="nope")


def test_cupyx_sparse_matrix_input():
    cpx = pytest.importorskip("cupyx.scipy.sparse")
    import scipy.sparse as sp
    rng = np.random.default_rng(3)
    n = 60
    A = sp.random(n, n, density=0.1, random_state=4, format="csr")
    A = (A + A.T).tocsr()
    Ag = cpx.csr_matrix(A)
    x = rng.standard_normal(n)
    for w in (None, "weight"):
        want = algos.spmv(A, x, weight=w)
        np.testing.assert_allclose(on_device(algos.spmv(Ag, cupy.asarray(x), weight=w)), want,
                                   rtol=1e-9, atol=1e-12)
    assert algos.triangle_count(Ag) == algos.triangle_count(A)
    assert np.array_equal(on_device(algos.truss_numbers(Ag)), algos.truss_numbers(A))


def test_empty_and_edgeless_graphs():
    for n in (0, 1, 5):
        gc, gg = both(n, np.zeros(0, np.int64), np.zeros(0, np.int64), False)
        assert algos.triangle_count(gg) == 0
        assert on_device(algos.triangles_per_vertex(gg)).shape == (n,)
        assert on_device(algos.edge_support(gg)).shape == (0,)
        assert on_device(algos.truss_numbers(gg)).shape == (0,)
        k, s, d = algos.max_truss(gg)
        assert k == 0 and on_device(s).shape == (0,)
        assert on_device(algos.spmv(gg, cupy.ones(n))).tolist() == [0.0] * n
        if n:
            lv = on_device(algos.bfs(gg, 0))
            assert lv.tolist() == [0] + [-1] * (n - 1)


# ---------------------------------------------------------------------------------------------
# larger and real graphs


def test_kronecker_graph_with_hubs():
    """Scale-13 R-MAT: hubs of thousands of entries (SpMV rows over many tiles, BFS frontier
    edges over many blocks, long intersections), before and after update batches."""
    src, dst = hornet.generators.kronecker_edges(13, edge_factor=8, seed=5)
    n = 1 << 13
    gc, gg = both(n, src, dst, False)
    deg = host(gc.degree())
    hub = int(np.argmax(deg))
    assert deg[hub] > 1000
    compare_all(gc, gg, bfs_sources=[hub, int(np.argmin(np.where(deg > 0, deg, 1 << 30)))])
    rng = np.random.default_rng(7)
    for step in range(2):
        es, ed = gc.edges()
        pick = rng.choice(es.size, es.size // 5, replace=False)
        gc.delete_edges(es[pick], ed[pick])
        gg.delete_edges(es[pick], ed[pick])
        s, d = rng.integers(0, n, 5000), rng.integers(0, n, 5000)
        gc.insert_edges(s, d)
        gg.insert_edges(s, d)
        compare_all(gc, gg, truss=(step == 1), bfs_sources=[hub])


@pytest.mark.parametrize("kernel", ["warp", "merge"])
def test_spmv_long_runs_of_empty_rows(kernel):
    """Edges only at the two ends of a large id space (the warp kernel jumps the empty rows),
    a row of 5000 entries (carried over chunks and ranges), rows of every small length."""
    n = 300_000
    rng = np.random.default_rng(11)
    lo = rng.integers(0, 40, (400, 2))
    hi = n - 1 - rng.integers(0, 40, (400, 2))
    mid = np.stack([np.full(5000, 150_000), rng.integers(0, n, 5000)], 1)
    pairs = np.concatenate([lo, hi, mid, rng.integers(0, n, (2000, 2))])
    for directed in (False, True):
        src, dst, ww = canonical(n, pairs, directed)
        gc, gg = both(n, src, dst, directed, weight=ww)
        x = rng.standard_normal(n)
        with spmv_kernel(kernel):
            for weight in (None, "weight"):
                A = gc.to_scipy(weight)
                for tr in (False, True):
                    want = algos.spmv(gc, x, weight=weight, transpose=tr)
                    bound = (abs(A).T if tr else abs(A)) @ np.abs(x)
                    for t in (gg, gpu_csr_view(gg)) if weight is None else (gg,):
                        assert_spmv_close(algos.spmv(t, x, weight=weight, transpose=tr), want,
                                          bound)


@pytest.mark.parametrize("variant", spmv_gpu.SPMV_WARP_VARIANTS if HAS_GPU else [])
@pytest.mark.parametrize("ranges", [(32, None), (64, None), (512, None), (512, 32)])
def test_spmv_warp_variants(variant, ranges, monkeypatch):
    """Every (U, B) variant of the warp kernel with ranges of 32 entries up (rows crossing
    many ranges, long runs of empty rows): scipy's results for float64 and float32 weights
    and x (a float32 x is read as float32), in id and in storage order, pull and transpose."""
    monkeypatch.setattr(spmv_gpu, "_fn", spmv_gpu._fn)      # restored after the test
    spmv_gpu.use_warp_variants(spmv_gpu.SPMV_WARP_VARIANTS)
    monkeypatch.setattr(spmv_gpu, "SPMV_WARP", variant)
    monkeypatch.setattr(spmv_gpu, "SPMV_RANGE", ranges[0])
    monkeypatch.setattr(spmv_gpu, "SPMV_RANGE_WARPS", ranges[1])
    monkeypatch.setattr(spmv_gpu, "SPMV_ORDER_MIN_ENTRIES", 0)
    monkeypatch.setattr(spmv_gpu, "SPMV_BLOCKS", False)       # the warp kernel in storage order
    n = 40_000
    rng = np.random.default_rng(13)
    lo = rng.integers(0, 40, (300, 2))
    hi = n - 1 - rng.integers(0, 40, (300, 2))
    hub = np.stack([np.full(3000, 20_000), rng.integers(0, n, 3000)], 1)
    pairs = np.concatenate([lo, hi, hub, rng.integers(0, n, (1500, 2))])
    for directed in (False, True):
        src, dst, w = canonical(n, pairs, directed)
        gc, gg = both(n, src, dst, directed, weight=w, w32=w.astype(np.float32))
        x64 = rng.standard_normal(n)
        x32 = x64.astype(np.float32)
        for weight in (None, "weight", "w32"):
            A = gc.to_scipy(weight).astype(np.float64)
            for x in (x64, x32):
                xd = x.astype(np.float64)
                for tr in (False, True):
                    want = (A.T if tr else A) @ xd
                    bound = (abs(A).T if tr else abs(A)) @ np.abs(xd)
                    for call in range(2):      # (the second call: storage order)
                        got = algos.spmv(gg, cupy.asarray(x), weight=weight, transpose=tr)
                        assert_spmv_close(got, want, bound)


@pytest.mark.parametrize("kernel", ["warp", "merge"])
def test_spmv_visits_a_graph_in_storage_order(kernel, monkeypatch):
    """The GPU SpMV visits a graph's non-empty rows in storage order (size classes live in
    separate block arrays), a CSR's rows in id order; results stay those of scipy, also after
    updates have moved lists between blocks, and with weights it gathers (float16)."""
    monkeypatch.setattr(spmv_gpu, "SPMV_ORDER_MIN_ENTRIES", 0)    # (a small graph here)
    n = 5000
    rng = np.random.default_rng(12)
    src = rng.integers(0, n, 40_000) % (n // 2)                # half the ids stay empty
    dst = (rng.pareto(1.2, 40_000) * 50).astype(np.int64) % (n // 2)
    s0, d0, w0 = canonical(n, np.stack([src, dst], 1), False)
    gg = hornet.Graph.from_edges(s0, d0, num_vertices=n, directed=False, device="gpu",
                                 weight=w0, w16=w0.astype(np.float16))
    for step in range(3):
        view = gg.adjacency()
        visit = spmv_gpu._visit_rows(view)
        deg, ptr = host(view.degree), host(view.edge_ptr)
        # visited rows: the graph's blocks in storage order, a free block being an empty row
        vid, rows_deg = host(visit.vid), host(visit.deg)
        held = rows_deg > 0
        assert visit.vid is not None and np.count_nonzero(held) == np.count_nonzero(deg)
        assert np.array_equal(np.sort(vid[held]), np.flatnonzero(deg))
        assert np.array_equal(vid[held], host(gg.vertices_in_storage_order()))
        assert np.array_equal(rows_deg[held], deg[vid[held]])
        assert np.array_equal(host(visit.ptr)[held], ptr[vid[held]])
        assert spmv_gpu._visit_rows(gpu_csr_view(gg)).vid is None
        x = rng.standard_normal(n)
        with spmv_kernel(kernel):
            for weight in (None, "weight", "w16"):
                indptr, indices, *vals = (host(a) for a in gg.to_csr(weight))
                vals = vals[0].astype(np.float64) if vals else np.ones(indices.shape[0])
                A = scipy.sparse.csr_matrix((vals, indices, indptr), shape=(n, n))
                for tr in (False, True):
                    want = (A.T if tr else A) @ x
                    bound = (abs(A).T if tr else abs(A)) @ np.abs(x)
                    assert_spmv_close(algos.spmv(gg, x, weight=weight, transpose=tr), want,
                                      bound)
        # move lists: grow some past their blocks, shrink others, add rows at the empty ids
        k = 3000
        a, b = rng.integers(0, n, k), rng.integers(0, n, k)
        ins = canonical(n, np.stack([a, b], 1), False, seed=step)
        gg.insert_edges(ins[0], ins[1], weight=ins[2], w16=ins[2].astype(np.float16))
        cur = host(gg.edges()[0]), host(gg.edges()[1])
        drop = rng.random(cur[0].shape[0]) < 0.3
        gg.delete_edges(cur[0][drop], cur[1][drop])


def test_long_path_and_star():
    """A path (hundreds of BFS levels) joined to a star (one huge row)."""
    n = 20000
    path = np.arange(600)
    star = np.full(n - 600, 599)
    src = np.concatenate([path[:-1], star])
    dst = np.concatenate([path[1:], np.arange(600, n)])
    for directed in (False, True):
        gc, gg = both(n, src, dst, directed)
        compare_all(gc, gg, truss=not directed, bfs_sources=[0, 599, n - 1])


REAL = [("ca-GrQc.txt.gz", False), ("facebook_combined.txt.gz", False),
        ("email-Eu-core.txt.gz", True), ("wiki-Vote.txt.gz", True),
        ("p2p-Gnutella08.txt.gz", True), ("delaunay_n12.mtx.gz", False)]


@pytest.mark.parametrize("name,directed", REAL)
def test_real_graphs(name, directed):
    path = DATA_DIR / name
    if not path.exists():
        pytest.skip(f"no {path}")
    src, dst, _ = hornet.io.read_edges(path)
    n = int(max(src.max(), dst.max())) + 1
    gc, gg = both(n, src, dst, directed)
    deg = host(gc.degree())
    compare_all(gc, gg, bfs_sources=[int(np.argmax(deg)), int(src[0])])
    # CSR given as CuPy arrays, and the same for the directed graph as undirected
    indptr, indices = gg.to_csr()
    pair = (indptr, indices)
    assert algos.triangle_count(pair) == algos.triangle_count(gc)
    assert np.array_equal(on_device(algos.bfs(pair, int(src[0]))), algos.bfs(gc, int(src[0])))
