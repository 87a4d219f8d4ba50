"""The block-walk GPU SpMV (``spmv_blocks``: a graph's block arrays walked in storage order)
against scipy, and the storage layout it reads (``Graph.storage_blocks``) against the
vertex table."""
from __future__ import annotations

import ctypes
import re
import types

import numpy as np
import pytest
import scipy.sparse

from conftest import HAS_GPU
import hornet
from hornet import algos
from hornet.algos.spmv import gpu as spmv_gpu

if HAS_GPU:
    import cupy


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
                    # float32 y: each row rounded once, a hub's pieces (tasks of at least
                    # 32 slots) added in float32
                    got = host(algos.spmv(g, cupy.asarray(x), weight=weight, dtype=np.float32))
                    assert got.dtype == np.float32 and got.shape == (n,)
                    assert np.all(np.abs(got - want) <= float32_bound(bound, indptr) + 1e-30)
                walk = g.adjacency(properties=False).derived["block_walk"][1]
                shift = walk.task_shift()
                if task_shift is None:          # per graph: within the range
                    lo, hi = spmv_gpu.SPMV_TASK_SHIFTS
                    assert lo <= shift <= hi
                else:
                    assert shift == task_shift
                assert any(k[0] == weight and k[5] == shift     # the blocks were walked
                           for k in walk.plans)
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
        walks, walk = spmv_gpu._block_walk(g.adjacency(properties=False))
        deg_rows, vid_rows = (host(a) for a in walks.rows_of(walk))
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
        walk = g.adjacency(properties=False).derived["block_walk"][1]
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


# ---------------------------------------------------------------- graph states with new arrays
def new_array_update(g, rng):
    """Insert edges that give a vertex without edges a list of 300 to 500 entries, a size
    class no list of ``hub_graph`` holds: the graph gets a new block array. Returns the
    column addresses the update added (asserted non-empty)."""
    before = set(g.storage_blocks()["column"].tolist())
    deg = host(g.vertex_table()[0])[:g.num_vertices]
    v = int(np.flatnonzero(deg == 0)[0])
    others = rng.choice(np.flatnonzero(np.arange(g.num_vertices) != v),
                        int(rng.integers(300, 500)), replace=False)
    w = rng.random(others.shape[0])
    g.insert_edges(np.full(others.shape[0], v), others, weight=w, w32=w.astype(np.float32))
    added = set(g.storage_blocks()["column"].tolist()) - before
    assert added, "the update was meant to create a block array"
    return added


def graph_with_free_ids(device, rng, spare_ids=3000):
    """``hub_graph`` with ``spare_ids`` more vertex ids, none with edges yet."""
    g = hub_graph(device, False, rng)
    return hornet.Graph.from_edges(*(host(a) for a in g.edges()),
                                   num_vertices=g.num_vertices + spare_ids, directed=False,
                                   device=device, block_array_edges=1 << 12,
                                   **{k: host(v) for k, v in g.edges(properties=True)[2].items()})


def cpu_memory(at: int, count: int, dtype) -> np.ndarray:
    """``count`` items of ``dtype`` at host address ``at`` (a writable NumPy view)."""
    dtype = np.dtype(dtype)
    if count == 0:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer((ctypes.c_char * (count * dtype.itemsize)).from_address(at),
                         dtype=dtype)


_CTYPES = {"float": np.float32, "double": np.float64}


class EmulatedKernel:
    """The SpMV module's ``blocks_rows`` and ``spmv_blocks`` on the host, reading and
    writing the memory their arguments address (a CPU graph's block arrays): what each
    kernel's comment in spmv.cu promises, task by task (each row's sum stored at its
    vertex or row, a free block's too unless it has no vertex; the rows of a block larger
    than a task added), so that the host
    side of the block walk (tables, per-state rows, buffers, plans) runs without a GPU.
    ``spmv_blocks`` also checks that the tasks cover every slot of every array once."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, grid, block, values) -> None:
        assert grid > 0 and block == spmv_gpu.BLOCK
        values = [int(v) for v in values]
        if self.name == "blocks_rows":
            return self.blocks_rows(*values)
        m = re.fullmatch(r"spmv_blocks<(\w+), (\w+), (\w+), (\d), \d, \d>", self.name)
        assert m, self.name
        return self.spmv_blocks(_CTYPES[m[1]], _CTYPES[m[2]], _CTYPES[m[3]], m[4] == "1",
                                *values)

    @staticmethod
    def blocks_rows(deg_at, ptr_at, n, by_addr, na, deg_rows_at, vid_rows_at, slot_at, nrows):
        deg, ptr = cpu_memory(deg_at, n, np.int32), cpu_memory(ptr_at, n, np.int64)
        base, first, size_class = cpu_memory(by_addr, 3 * na, np.int64).reshape(3, na)
        assert np.all(np.diff(base) > 0)                       # arrays by address
        held = np.flatnonzero(deg > 0)
        a = np.searchsorted(base, ptr[held], side="right") - 1
        r = first[a] + ((ptr[held] - base[a]) >> (size_class[a] + 2))
        cpu_memory(deg_rows_at, nrows, np.int32)[r] = deg[held]
        cpu_memory(vid_rows_at, nrows, np.int32)[r] = held
        if slot_at:
            slot = cpu_memory(slot_at, n, np.int32)
            slot[:] = nrows
            slot[held] = r

    @staticmethod
    def spmv_blocks(wtype, xtype, ytype, weighted, task_first_at, arrays_at, na, task_shift, w_col_at,
                    deg_at, vid_at, x_at, y_at, ahead_from, stream_rows):
        task_first = cpu_memory(task_first_at, na + 1, np.int64)
        first_row, shift, slots, dst_col = cpu_memory(arrays_at, 4 * na, np.int64).reshape(4, na)
        w_col = cpu_memory(w_col_at, na, np.int64) if weighted else None
        nrows = int(first_row[-1] + (slots[-1] >> shift[-1]))
        deg = cpu_memory(deg_at, nrows, np.int32)
        vid = cpu_memory(vid_at, nrows, np.int32) if vid_at else None
        covered = np.zeros(na, dtype=np.int64)
        for t in range(int(task_first[na])):
            a = int(np.searchsorted(task_first, t, side="right") - 1)
            s0 = (t - int(task_first[a])) << task_shift
            s1 = min(s0 + (1 << task_shift), int(slots[a]))
            assert s0 < s1
            covered[a] += s1 - s0
            sl = np.arange(s0, s1)
            row = first_row[a] + (sl >> shift[a])
            ok = (sl & ((1 << shift[a]) - 1)) < deg[row]
            v = np.zeros(sl.shape[0])
            if ok.any():
                col = cpu_memory(int(dst_col[a]), int(slots[a]), np.int32)[sl[ok]]
                v[ok] = cpu_memory(x_at, int(col.max()) + 1, xtype)[col].astype(np.float64)
                if weighted:
                    v[ok] *= cpu_memory(int(w_col[a]), int(slots[a]), wtype)[sl[ok]]
            rows, at = np.unique(row, return_inverse=True)      # the task's rows
            sums = np.bincount(at, weights=v, minlength=rows.shape[0])
            to = rows if vid is None else vid[rows].astype(np.int64)
            sums, to = sums[to >= 0], to[to >= 0]
            if not to.size:
                continue
            y = cpu_memory(y_at, int(to.max()) + 1, ytype)
            if shift[a] > task_shift:           # a block over several tasks: added in y's type
                y[to] += sums.astype(ytype)
            else:                               # each of the task's rows stored once, rounded
                y[to] = sums
        assert np.array_equal(covered, slots)


@pytest.fixture
def emulated_walk(monkeypatch):
    """The GPU block walk's host side on the CPU: CuPy's few calls there by NumPy, device
    addresses by host addresses, the kernels by :class:`EmulatedKernel`."""
    def empty(shape, dtype):                   # garbage, never zeros by luck
        dtype = np.dtype(dtype)
        fill = np.nan if dtype.kind == "f" else 0x5A if dtype.itemsize == 1 else 0x5A5A5A5A
        return np.full(shape, fill, dtype=dtype)

    shim = types.SimpleNamespace(empty=empty, zeros=np.zeros, take=np.take,
                                 float64=np.float64, int32=np.int32, uint8=np.uint8)
    monkeypatch.setattr(spmv_gpu, "cupy", shim)
    monkeypatch.setattr(spmv_gpu, "upload", lambda a: np.array(a, copy=True))
    monkeypatch.setattr(spmv_gpu, "address", lambda a: a.ctypes.data if a.size else 0)
    monkeypatch.setattr(spmv_gpu, "_memset", lambda at, value, n: ctypes.memset(at, value, n))
    monkeypatch.setattr(spmv_gpu, "_sm_count", lambda: 132)
    monkeypatch.setattr(spmv_gpu, "_prepared", lambda name, nargs: EmulatedKernel(name))
    monkeypatch.setattr(spmv_gpu, "_WALKS", type(spmv_gpu._WALKS)())


def float32_bound(bound, indptr):
    """The error allowed in a float32 y per row: a rounding (2**-24 of |A||x|, doubled) for
    the row's float64 sum and one for each piece of the row (tasks of at least 32 slots)
    added in float32."""
    return 2.0 ** -23 * bound * (2 + np.diff(indptr) // 32)


def walk_results(g, rng, device, weights=(None, "weight", "w32")):
    """(got, want, bound) of the block walk and scipy for each weight, float64 and float32
    x (and float32 y with the float32 x), on the current state of ``g`` (the first call on
    it first); ``bound``: the error allowed (1e-12 of |A||x|; float32 y: float32_bound)."""
    n = g.num_vertices
    x64 = rng.standard_normal(n)
    out = []
    for weight in weights:
        indptr, indices, *vals = (host(a) for a in g.to_csr(weight))
        vals = vals[0].astype(np.float64) if vals else np.ones(indices.shape[0])
        A = scipy.sparse.csr_matrix((vals, indices, indptr), shape=(n, n))
        for x, ydt in ((x64, np.float64), (x64.astype(np.float32), np.float64),
                       (x64.astype(np.float32), np.float32)):
            xd = x.astype(np.float64)
            if device == "gpu":
                got = host(algos.spmv(g, cupy.asarray(x), weight=weight, dtype=ydt))
            else:
                ctype = "float" if weight is None else spmv_gpu._WEIGHT_TYPES[
                    np.dtype(g.edge_properties[weight])]
                got = spmv_gpu._spmv_blocks(g.adjacency(properties=False), weight, ctype, x,
                                            ydt)
            assert got.dtype == ydt
            bound = abs(A) @ np.abs(xd)
            out.append((got.astype(np.float64), A @ xd,
                        1e-12 * bound if ydt == np.float64 else float32_bound(bound, indptr)))
    return out


def check_new_array_states(g, device, rng, monkeypatch, spare):
    """A state whose update adds a block array, then one that adds thousands of blocks
    (lists for vertices that had none), each first call against scipy (every weight, both x
    dtypes, y stored at vertices and gathered); with the default spare rows the new
    array's state keeps the row buffers, without spare rows every state with more blocks
    grows them."""
    if not spare:
        monkeypatch.setattr(spmv_gpu, "SPMV_BLOCKS_ROWS_SPARE", 0)
        monkeypatch.setattr(spmv_gpu, "SPMV_BLOCKS_ROWS_MIN_SPARE", 0)
    n = g.num_vertices
    for gather in (False, True):
        monkeypatch.setattr(spmv_gpu, "SPMV_BLOCKS_GATHER", gather)
        for got, want, bound in walk_results(g, rng, device):
            assert np.all(np.abs(got - want) <= bound + 1e-300)
    walks = spmv_gpu._WALKS[g]
    for step in ("new array", "many blocks"):
        rows, capacity, count = walks.rows, walks.capacity, walks.last[1].count
        if step == "new array":
            new_array_update(g, rng)
        else:
            deg = host(g.vertex_table()[0])[:n]
            free = np.flatnonzero(deg == 0)[:2000]
            assert free.shape[0] == 2000
            w = rng.random(1000)
            g.insert_edges(free[0::2], free[1::2], weight=w, w32=w.astype(np.float32))
        # the update renewed the walk for its new arrays (Graph.on_storage_change), with
        # the plans the previous walk had made
        assert walks.last[0] is g.storage_blocks() and walks.last[1].count > count
        assert walks.last[1].plans
        for gather in (False, True):               # the first call on the state: either
            monkeypatch.setattr(spmv_gpu, "SPMV_BLOCKS_GATHER", gather)
            for got, want, bound in walk_results(g, rng, device):
                assert np.all(np.abs(got - want) <= bound + 1e-300)
        walk = walks.last[1]
        assert walks.capacity >= walk.count
        rank, total = (host(a) if hasattr(a, "shape") else a for a in g.storage_ranks())
        assert walk.count == total == int(g.storage_blocks()["num_blocks"].sum())
        deg_rows, vid_rows = (host(a) for a in walks.rows_of(walk))   # the state's rows
        deg = host(g.vertex_table()[0])[:n]
        held = np.flatnonzero(deg > 0)
        want_deg, want_vid = np.zeros(total, np.int32), np.full(total, -1, np.int32)
        want_deg[rank[held]], want_vid[rank[held]] = deg[held], held
        assert np.array_equal(deg_rows, want_deg) and np.array_equal(vid_rows, want_vid)
        grew = walks.rows is not rows
        assert grew == (walks.capacity > capacity)
        if step == "new array":
            assert walk.count > count               # the new array's blocks
            assert grew != spare                    # spare rows: the same buffers
        elif not spare:
            assert grew == (walk.count > count)


def test_block_walk_first_call_after_new_block_array_emulated(emulated_walk, monkeypatch):
    """The block walk's host side on a CPU graph, the kernels emulated on the host
    (:class:`EmulatedKernel`): tables, per-state rows and plans give scipy's results on
    the first call after an update that adds a block array, and after one that outgrows
    the row buffers."""
    for spare in (True, False):
        rng = np.random.default_rng(21 + spare)
        check_new_array_states(graph_with_free_ids("cpu", rng), "cpu", rng, monkeypatch, spare)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")
@pytest.mark.parametrize("spare", [True, False])
def test_block_walk_first_call_after_new_block_array(spare, monkeypatch):
    """On the GPU: scipy's results on the first call after an update that adds a block
    array, and after one that outgrows the row buffers (see check_new_array_states)."""
    monkeypatch.setattr(spmv_gpu, "SPMV_BLOCKS_MIN_ENTRIES", 0)
    rng = np.random.default_rng(31 + spare)
    check_new_array_states(graph_with_free_ids("gpu", rng), "gpu", rng, monkeypatch, spare)
