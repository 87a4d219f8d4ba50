"""The GPU k-truss's device peeling (truss_peel) and keyed per-edge support, in each of their
configurations, against the CPU results (exact): truss numbers, k-trusses, the maximal truss
and the supports, on random graphs with planted cliques, a Kronecker graph with hubs and
real graphs with deep trusses."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

import conftest
from conftest import DATA_DIR, HAS_GPU

import hornet
from hornet import algos

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]

if HAS_GPU:
    import cupy
    from hornet.algos.ktruss import gpu as truss_gpu
    from hornet.algos.triangles import gpu as tri_gpu

# (max_truss search, per-edge support by the keyed kernels, resident blocks per SM)
CONFIGS = [("bisect", True, None), ("decompose", True, None), ("bisect", False, 1),
           ("decompose", False, 1), ("bisect_decompose", True, None),
           ("bisect_decompose", False, 1)]


@pytest.fixture(params=CONFIGS, ids=lambda c: f"{c[0]}-{'keyed' if c[1] else 'search'}-{c[2]}")
def config(request, monkeypatch):
    search, keyed, per_sm = request.param
    monkeypatch.setattr(truss_gpu, "DEVICE_PEEL", True)
    monkeypatch.setattr(truss_gpu, "MAX_TRUSS_SEARCH", search)
    monkeypatch.setattr(truss_gpu, "PEEL_BLOCKS_PER_SM", per_sm)
    monkeypatch.setattr(tri_gpu, "SUPPORT_KEYED", keyed)
    return request.param


def undirected_pair(n, src, dst):
    gc = hornet.Graph.from_edges(src, dst, num_vertices=n, directed=False, device="cpu")
    gg = hornet.Graph.from_edges(cupy.asarray(src), cupy.asarray(dst), num_vertices=n,
                                 directed=False, device="gpu")
    return gc, gg


def cpu_results(gc):
    """(supports, truss numbers, max truss, edges) of the CPU graph: the oracle."""
    return (algos.edge_support(gc), algos.truss_numbers(gc), algos.max_truss(gc), gc.edges())


_ORACLE: dict = {}


def cached_cpu_results(key, gc):
    """cpu_results of a graph that several configurations check (computed once)."""
    if key not in _ORACLE:
        _ORACLE[key] = cpu_results(gc)
    return _ORACLE[key]


def check_same(gc, gg, ks=(3, 4, 6), oracle=None):
    """Supports, truss numbers, max truss and k-trusses of the GPU graph equal the CPU's."""
    want_sup, want, (k, s, d), (es, ed) = oracle or cpu_results(gc)
    assert np.array_equal(algos.edge_support(gg).get(), want_sup)
    got = algos.truss_numbers(gg)
    assert got.dtype == cupy.int32 and np.array_equal(got.get(), want)
    kg, sg, dg = algos.max_truss(gg)
    assert kg == k and np.array_equal(sg.get(), s) and np.array_equal(dg.get(), d)
    for kk in ks + (k, k + 1):
        keep = want >= kk
        sg, dg = algos.k_truss(gg, kk)
        assert np.array_equal(sg.get(), es[keep]) and np.array_equal(dg.get(), ed[keep]), kk
    return want


@settings(max_examples=10, deadline=None)
@given(conftest.graphs(max_n=40, directed=False, pairs_per_vertex=4, clique_size=12, cliques=4))
def test_random_graphs(g):
    n, pairs, _ = g
    pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    gc, gg = undirected_pair(n, pairs[:, 0], pairs[:, 1])
    oracle = cpu_results(gc)
    for cfg in CONFIGS:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(truss_gpu, "MAX_TRUSS_SEARCH", cfg[0])
            mp.setattr(tri_gpu, "SUPPORT_KEYED", cfg[1])
            mp.setattr(truss_gpu, "PEEL_BLOCKS_PER_SM", cfg[2])
            check_same(gc, gg, oracle=oracle)


def test_kronecker_with_hubs(config):
    """Hubs of thousands of entries (long intersections, lists over the block tables), a
    decomposition long enough to compact the CSR between launches, a bisection whose first
    removals are most of the graph (recounted, not subtracted)."""
    src, dst = hornet.generators.kronecker_edges(13, edge_factor=16, seed=3)
    gc, gg = undirected_pair(1 << 13, src, dst)
    assert int(gc.degree().max()) > 1000
    check_same(gc, gg, ks=(3, 5, 9, 17), oracle=cached_cpu_results("kron13", gc))
    algos.max_truss(gg)
    stats = truss_gpu.PEEL_STATS
    if config[0] == "bisect":
        assert stats["recounts"] > 0 and stats["tests"] > 2
    elif config[0] == "bisect_decompose":
        assert stats["tests"] >= 1 and stats["levels"] > 1
    else:
        assert stats["compactions"] > 0 and stats["launches"] == stats["compactions"] + 1


@pytest.mark.parametrize("first", [0.05, 0.3, 1.0])
def test_max_truss_from_any_first_test(first, monkeypatch):
    """max_truss by one test and the decomposition of the truss it leaves equals the CPU's
    whether the first test keeps most of the graph, a little of it or nothing (then the
    state is restored and bisection goes on below)."""
    monkeypatch.setattr(truss_gpu, "DEVICE_PEEL", True)
    monkeypatch.setattr(truss_gpu, "MAX_TRUSS_SEARCH", "bisect_decompose")
    monkeypatch.setattr(truss_gpu, "TRUSS_FIRST_TEST", first)
    src, dst = hornet.generators.kronecker_edges(13, edge_factor=16, seed=3)
    gc, gg = undirected_pair(1 << 13, src, dst)
    _, _, (k, s, d), _ = cached_cpu_results("kron13", gc)
    kg, sg, dg = algos.max_truss(gg)
    assert kg == k and np.array_equal(sg.get(), s) and np.array_equal(dg.get(), d)
    if first == 1.0:             # a test at the bound itself: empty unless k_max is the bound
        tests = truss_gpu.PEEL_STATS["tests"]
        assert tests >= 2 or kg == truss_gpu._truss_bound(algos.edge_support(gg))


@pytest.mark.parametrize("name, kmax", [("facebook_combined.txt.gz", 97),
                                        ("ca-GrQc.txt.gz", 44)])
def test_real_graphs(config, name, kmax):
    path = DATA_DIR / name
    if not path.exists():
        pytest.skip(f"no {path}")
    src, dst, _ = hornet.io.read_edges(path)
    n = int(max(src.max(), dst.max())) + 1
    gc, gg = undirected_pair(n, src, dst)
    want = check_same(gc, gg, ks=(5, 20, kmax - 1), oracle=cached_cpu_results(name, gc))
    assert want.max() == kmax


@pytest.mark.parametrize("tables", [(2048, 4096), (64, 256)])
def test_keyed_support_on_a_cupy_csr(tables, monkeypatch):
    """The keyed kernels on a plain CuPy CSR equal the CPU supports and the binary-search
    count; with the small tables every path runs: the warp kernel, hub keys with short
    out-lists in the first table, longer ones hashed in the second, the longest searched
    in global memory."""
    monkeypatch.setattr(tri_gpu, "TC_SUPPORT_TABLES", tables)
    src, dst = hornet.generators.kronecker_edges(13, edge_factor=16, seed=4)
    gc, gg = undirected_pair(1 << 13, src, dst)
    indptr, indices = gg.to_csr()
    keyed = algos.edge_support((indptr, indices))
    assert np.array_equal(keyed.get(), algos.edge_support(gc))
    monkeypatch.setattr(tri_gpu, "SUPPORT_KEYED", False)
    assert np.array_equal(algos.edge_support((indptr, indices)).get(), keyed.get())


@pytest.mark.parametrize("tables, ranges", [((32, 64), True), ((32, 64), False),
                                            ((4096, 8192), True)])
def test_keyed_count_with_lists_cut_into_value_ranges(tables, ranges, monkeypatch):
    """Triangle counts and per-vertex counts of the keyed kernels equal the CPU's when key
    lists longer than half of the second table are cut into value ranges (one block item per
    range) or binary-searched in global memory; the small tables make many keys take both
    paths."""
    monkeypatch.setattr(tri_gpu, "TC_TABLES", tables)
    monkeypatch.setattr(tri_gpu, "TC_RANGES", ranges)
    src, dst = hornet.generators.kronecker_edges(13, edge_factor=16, seed=5)
    gc, gg = undirected_pair(1 << 13, src, dst)
    deg, ptr = tri_gpu.view_arrays(gg.adjacency())
    ooff = tri_gpu.orient(deg, ptr, 1 << 13, sources=False)[2]
    assert tables[0] > 32 or int((ooff[1:] - ooff[:-1]).max()) > tables[1]
    assert algos.triangle_count(gg) == algos.triangle_count(gc)
    assert np.array_equal(algos.triangles_per_vertex(gg).get(), algos.triangles_per_vertex(gc))


@pytest.mark.parametrize("split", [100, 256, 4096])
def test_keyed_kernels_with_hub_lists_split_over_blocks(split, monkeypatch):
    """Triangle counts, per-vertex counts and supports of the keyed kernels when every key's
    neighbours are cut into parts of ``split`` (taken by different blocks) equal the CPU's."""
    monkeypatch.setattr(tri_gpu, "TC_SPLIT", split)
    src, dst = hornet.generators.kronecker_edges(13, edge_factor=16, seed=6)
    gc, gg = undirected_pair(1 << 13, src, dst)
    assert int(gc.degree().max()) > 2 * split or split == 4096
    assert algos.triangle_count(gg) == algos.triangle_count(gc)
    assert np.array_equal(algos.triangles_per_vertex(gg).get(), algos.triangles_per_vertex(gc))
    assert np.array_equal(algos.edge_support(gg).get(), algos.edge_support(gc))


@pytest.mark.parametrize("share", [1e-6, 1e-9])
def test_frontier_items_of_many_chunks(share, monkeypatch):
    """A frontier budget too small for one item per TRUSS_CHUNK elements makes truss_peel's
    items span several chunks (up to the largest span): supports, truss numbers, k-trusses
    and the maximal truss still equal the CPU's."""
    from hornet.algos.views import as_adjacency
    monkeypatch.setattr(truss_gpu, "DEVICE_PEEL", True)
    monkeypatch.setattr(truss_gpu, "FRONTIER_MEMORY_SHARE", share)
    src, dst = hornet.generators.kronecker_edges(13, edge_factor=16, seed=3)
    gc, gg = undirected_pair(1 << 13, src, dst)
    index, _ = truss_gpu._truss_problem(as_adjacency(gg, properties=False))
    assert truss_gpu._DevicePeel(index).span > truss_gpu.TRUSS_CHUNK
    check_same(gc, gg, ks=(3, 5, 9, 17), oracle=cached_cpu_results("kron13", gc))
