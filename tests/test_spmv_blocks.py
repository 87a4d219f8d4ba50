"""The block-walk GPU SpMV (``spmv_blocks``: a graph's block arrays walked in storage order)
against scipy, and the storage layout it reads (``Graph.storage_blocks``) against the
vertex table."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

from conftest import HAS_GPU
import hornet
from hornet import algos

if HAS_GPU:
    import cupy
    from hornet.algos.spmv import gpu as spmv_gpu


def host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def hub_graph(device, directed, rng, n=6000, block_array_edges=1 << 12):
    """Rows of every small length, two hubs of thousands of entries, ids left empty; then
    deletions (free blocks, lists moved to smaller blocks) and insertions."""
    lo = rng.integers(0, n // 3, (6000, 2))
    hubs = np.stack([np.repeat([17, n // 2], 2500), rng.integers(0, n, 5000)], 1)
    pairs = np.concatenate([lo, hubs])
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    w = rng.random(pairs.shape[0])
    g = hornet.Graph.from_edges(pairs[:, 0], pairs[:, 1], num_vertices=n, directed=directed,
                                device=device, block_array_edges=block_array_edges,
                                weight=w, w32=w.astype(np.float32))
    s, d = (host(a) for a in g.edges())
    drop = rng.random(s.shape[0]) < 0.35
    g.delete_edges(s[drop], d[drop])
    add = rng.integers(0, n, (2000, 2))
    add = add[add[:, 0] != add[:, 1]]
    aw = rng.random(add.shape[0])
    g.insert_edges(add[:, 0], add[:, 1], weight=aw, w32=aw.astype(np.float32))
    return g


def test_storage_blocks_locate_every_list(device):
    """Each vertex's list (and each property's values) lies in the array holding its storage
    rank, at block ``rank - first_rank``: the addresses the vertex table and
    ``property_pointers`` give."""
    g = hub_graph(device, False, np.random.default_rng(3))
    rank, total = g.storage_ranks()
    rank = host(rank)
    deg, ptr = (host(a)[:g.num_vertices] for a in g.vertex_table())
    layout = g.storage_blocks()
    assert int(layout["num_blocks"].sum()) == total
    assert np.array_equal(layout["first_rank"],
                          np.cumsum(layout["num_blocks"]) - layout["num_blocks"])
    assert np.all(np.diff(layout["size_class"]) >= 0)       # classes ascending
    held = np.flatnonzero(deg > 0)
    a = np.searchsorted(layout["first_rank"], rank[held], side="right") - 1
    block = rank[held] - layout["first_rank"][a]
    assert np.all(block < layout["num_blocks"][a])
    assert np.all(deg[held] <= 1 << layout["size_class"][a])
    slot = block << layout["size_class"][a]
    assert np.array_equal(layout["column"][a] + 4 * slot, ptr[held])
    for name, size in (("weight", 8), ("w32", 4)):
        col = g.storage_blocks(name)["column"]
        on_device = cupy.asarray(held) if device == "gpu" else held
        assert np.array_equal(col[a] + size * slot,
                              host(g.property_pointers(on_device, name)))
    # and back: the array holding an edge pointer (the last base at or below it, arrays
    # by address) and the block there give the storage rank
    order = np.argsort(layout["column"])
    base = layout["column"][order]
    b = np.searchsorted(base, ptr[held], side="right") - 1
    back = layout["first_rank"][order][b] + ((ptr[held] - base[b])
                                             >> (layout["size_class"][order][b] + 2))
    assert np.array_equal(back, rank[held])
    with pytest.raises(KeyError):
        g.storage_blocks("nope")


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")
@pytest.mark.parametrize("variant", spmv_gpu.SPMV_BLOCKS_VARIANTS if HAS_GPU else [])
@pytest.mark.parametrize("task_shift", [5, 6, 9, 13, None])
def test_block_walk_matches_scipy(variant, task_shift, monkeypatch):
    """Every (U, B) variant and task size (tasks of 32 slots up: hub blocks spread over
    many tasks and summed atomically, blocks smaller than a task, free blocks, many block
    arrays; None: chosen per graph): scipy's results for no, float64 and float32 weights
    and float64 and float32 x, on every call (the first on a graph state prepares the
    walk), also after updates that keep the block arrays (their device tables kept)."""
    monkeypatch.setattr(spmv_gpu, "_fn", spmv_gpu._fn)      # restored after the test
    spmv_gpu.use_warp_variants((spmv_gpu.SPMV_WARP,), spmv_gpu.SPMV_BLOCKS_VARIANTS)
    monkeypatch.setattr(spmv_gpu, "SPMV_BLOCKS_WARP", variant)
    monkeypatch.setattr(spmv_gpu, "SPMV_TASK_SHIFT", task_shift)
    monkeypatch.setattr(spmv_gpu, "SPMV_BLOCKS_MIN_ENTRIES", 0)
    rng = np.random.default_rng(task_shift or 0)
    for directed in (False, True):
        g = hub_graph("gpu", directed, rng)
        n = g.num_vertices
        x64 = rng.standard_normal(n)
        for weight in (None, "weight", "w32"):
            indptr, indices, *vals = (host(a) for a in g.to_csr(weight))
            vals = vals[0].astype(np.float64) if vals else np.ones(indices.shape[0])
            A = scipy.sparse.csr_matrix((vals, indices, indptr), shape=(n, n))
            for x in (x64, x64.astype(np.float32)):
                xd = x.astype(np.float64)
                want, bound = A @ xd, abs(A) @ np.abs(xd)
                for call in range(2):
                    got = host(algos.spmv(g, cupy.asarray(x), weight=weight))
                    assert got.dtype == np.float64 and got.shape == (n,)
                    assert np.all(np.abs(got - want) <= 1e-12 * bound + 1e-300)
                walk = g.adjacency(properties=False).derived["block_walk"]
                shift = walk.task_shift()
                if task_shift is None:          # per graph: within the range
                    lo, hi = spmv_gpu.SPMV_TASK_SHIFTS
                    assert lo <= shift <= hi
                else:
                    assert shift == task_shift
                assert (weight, shift) in walk.tables            # the blocks were walked
                # transpose: the same pull where A is symmetric, else the atomic push
                want_t = A.T @ xd
                got = host(algos.spmv(g, cupy.asarray(x), weight=weight, transpose=True))
                assert np.all(np.abs(got - want_t) <= 1e-12 * (abs(A).T @ np.abs(xd)) + 1e-300)
        # one-edge updates (the block arrays stay, so do their device tables): new states
        for a, b in ((3, n - 5), (n // 2, 7)):
            if bool(host(g.has_edges(np.array([a]), np.array([b])))[0]):
                g.delete_edges(np.array([a]), np.array([b]))
            else:
                g.insert_edges(np.array([a]), np.array([b]), weight=np.array([0.5]),
                               w32=np.array([0.5], np.float32))
            indptr, indices, vals = (host(t) for t in g.to_csr("weight"))
            A = scipy.sparse.csr_matrix((vals, indices, indptr), shape=(n, n))
            got = host(algos.spmv(g, cupy.asarray(x64), weight="weight"))
            assert np.all(np.abs(got - A @ x64) <= 1e-12 * (abs(A) @ np.abs(x64)) + 1e-300)
    empty = hornet.Graph(directed=True, device="gpu", num_vertices=7,
                         edge_properties={"weight": np.float64})
    for weight in (None, "weight"):
        assert host(algos.spmv(empty, cupy.ones(7), weight=weight)).tolist() == [0.0] * 7
    with pytest.raises(KeyError):
        algos.spmv(empty, cupy.ones(7), weight="nope")


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")
def test_block_walk_rows_follow_the_vertex_table():
    """The per-state rows of the block walk: visited row ``rank[v]`` (the vertex's storage
    rank) has v's degree and v as its vertex; every other row (a free block) has degree 0
    and no vertex (-1); again on the next graph state."""
    g = hub_graph("gpu", False, np.random.default_rng(11))
    for _ in range(2):
        rank, total = (host(a) if hasattr(a, "shape") else a for a in g.storage_ranks())
        walk = spmv_gpu._block_walk(g.adjacency(properties=False))
        deg_rows, vid_rows = host(walk.deg), host(walk.vid)
        assert walk.count == total == deg_rows.shape[0] == vid_rows.shape[0]
        deg = host(g.vertex_table()[0])[:g.num_vertices]
        held = np.flatnonzero(deg > 0)
        assert np.array_equal(deg_rows[rank[held]], deg[held])
        assert np.array_equal(vid_rows[rank[held]], held)
        free = np.ones(total, dtype=bool)
        free[rank[held]] = False
        assert np.all(deg_rows[free] == 0) and np.all(vid_rows[free] == -1)
        g.insert_edges(np.array([5]), np.array([g.num_vertices - 2]), weight=np.array([1.0]),
                       w32=np.array([1.0], np.float32))


def layout_content(g):
    """The block arrays of ``g`` as values: classes, sizes, every column's addresses."""
    return [g.storage_blocks()["size_class"].tolist(), g.storage_blocks()["num_blocks"].tolist()] \
        + [g.storage_blocks(name)["column"].tolist() for name in (None, "weight", "w32")]


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")
def test_block_walk_kept_for_the_same_block_arrays(monkeypatch):
    """A graph state whose block arrays are those of an earlier state (a one-edge insertion
    and its deletion) reuses that state's walk (its tables and device buffers), and a state
    with other block arrays gets another; results match scipy on every state."""
    monkeypatch.setattr(spmv_gpu, "SPMV_BLOCKS_MIN_ENTRIES", 0)
    rng = np.random.default_rng(5)
    g = hub_graph("gpu", False, rng)
    n = g.num_vertices
    x = rng.standard_normal(n)
    before = None                               # (layout content, walk) of the last state
    b = 0
    for step in range(6):
        got = host(algos.spmv(g, cupy.asarray(x), weight="weight"))
        indptr, indices, vals = (host(t) for t in g.to_csr("weight"))
        A = scipy.sparse.csr_matrix((vals, indices, indptr), shape=(n, n))
        assert np.all(np.abs(got - A @ x) <= 1e-12 * (abs(A) @ np.abs(x)) + 1e-300)
        walk = g.adjacency(properties=False).derived["block_walk"]
        if before is not None:
            assert (before[1] is walk) == (before[0] == layout_content(g))
        before = (layout_content(g), walk)
        # the hub's list: a one-edge insertion may move it to a larger block, its deletion back
        if step % 2 == 0:
            b = int(rng.integers(n // 3, n))
            g.insert_edges(np.array([17]), np.array([b]), weight=np.array([2.0]),
                           w32=np.array([2.0], np.float32))
        else:
            g.delete_edges(np.array([17]), np.array([b]))


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")
@pytest.mark.parametrize("ahead_from, stream_rows, gather",
                         [(64, True, False), (5, False, False), (5, True, True),
                          (64, False, True)])
@pytest.mark.parametrize("task_shift", [6, 13])
def test_block_walk_choices_match_scipy(ahead_from, stream_rows, gather, task_shift,
                                        monkeypatch):
    """The block walk's load and store choices (degrees read ahead only in tasks of at most
    32 rows, plain row loads and stores, per-row sums gathered into y): scipy's results
    for no, float64 and float32 weights, on two graph states, whichever choice the first
    call on a state was made with."""
    monkeypatch.setattr(spmv_gpu, "SPMV_BLOCKS_MIN_ENTRIES", 0)
    monkeypatch.setattr(spmv_gpu, "SPMV_TASK_SHIFT", task_shift)
    monkeypatch.setattr(spmv_gpu, "SPMV_BLOCKS_AHEAD_FROM", ahead_from)
    monkeypatch.setattr(spmv_gpu, "SPMV_BLOCKS_STREAM_ROWS", stream_rows)
    rng = np.random.default_rng(task_shift + ahead_from)
    g = hub_graph("gpu", True, rng)
    n = g.num_vertices
    x = rng.standard_normal(n)
    for state in range(2):
        for first_gather in (not gather, gather):       # the state prepared either way first
            monkeypatch.setattr(spmv_gpu, "SPMV_BLOCKS_GATHER", first_gather)
            for weight in (None, "weight", "w32"):
                indptr, indices, *vals = (host(a) for a in g.to_csr(weight))
                vals = vals[0].astype(np.float64) if vals else np.ones(indices.shape[0])
                A = scipy.sparse.csr_matrix((vals, indices, indptr), shape=(n, n))
                got = host(algos.spmv(g, cupy.asarray(x), weight=weight))
                assert np.all(np.abs(got - A @ x) <= 1e-12 * (abs(A) @ np.abs(x)) + 1e-300)
        g.insert_edges(np.array([3]), np.array([n - 5]), weight=np.array([0.5]),
                       w32=np.array([0.5], np.float32))
