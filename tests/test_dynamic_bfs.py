"""DynamicBFS: levels equal to a from-scratch BFS after every change, parents valid, on every
backend. Oracles: networkx shortest path lengths on the reference model (state machine) and
the static ``hornet.algos.bfs`` on the graph (hand-made scenarios)."""
from __future__ import annotations

import importlib

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hornet
import hornet.generators
import hornet.testing as ht
from conftest import BACKENDS, HAS_GPU, one_instance
from hornet.algos import bfs
from hornet.algos.bfs.dynamic import DynamicBFS

SOURCE = 0


def nx_levels(ref: ht.ReferenceGraph, source: int = SOURCE) -> np.ndarray:
    """int32 (V,) hop distances by networkx on the reference model, -1 unreached (the source
    on level 0 as soon as it is in the id space)."""
    lv = np.full(ref.num_vertices, -1, np.int32)
    if source < ref.num_vertices:
        for v, d in nx.single_source_shortest_path_length(ref.to_networkx(), source).items():
            lv[v] = d
    return lv


def host(a) -> np.ndarray:
    return np.asarray(ht.to_host(a))


def parents_valid(levels, parents, edges: set, directed: bool) -> bool:
    """Every reached non-source vertex has a parent on the level above with an edge to it;
    the source and unreached vertices have -1."""
    levels, parents = host(levels), host(parents)
    if levels.shape != parents.shape:
        return False
    for v in range(levels.shape[0]):
        lv, p = int(levels[v]), int(parents[v])
        if lv <= 0:
            if p != -1:
                return False
            continue
        if p < 0 or levels[p] != lv - 1:
            return False
        if (p, v) not in edges and (directed or (v, p) not in edges):
            return False
    return True


def counts_consistent(bf: DynamicBFS) -> bool:
    """The maintained parent counts equal a recount over the graph (white-box)."""
    g = bf.graph
    n = g.num_vertices
    lv = host(bf.levels)
    s, d = (host(a) for a in g.edges())
    if not g.directed:
        s, d = np.concatenate([s, d]), np.concatenate([d, s])
    want = np.zeros(n, np.int64)
    ok = (lv[s] >= 0) & (lv[d] == lv[s] + 1)
    np.add.at(want, d[ok], 1)
    got = host(bf._state.counts()[:n]).astype(np.int64)
    reached = lv > 0
    return np.array_equal(got[reached], want[reached])


def _checks(directed: bool):
    level_check = ht.AlgorithmCheck(
        "dynamic bfs levels", create=lambda g: DynamicBFS(g, SOURCE, parents=True),
        result=lambda a: a.levels, oracle=nx_levels)
    parent_check = ht.AlgorithmCheck(
        "dynamic bfs parents", create=lambda g: DynamicBFS(g, SOURCE, parents=True),
        result=lambda a: (a.levels, a.parents, a),
        oracle=lambda ref: (set(ref.edges), ref.directed),
        equal=lambda got, want: parents_valid(got[0], got[1], want[0], want[1])
        and counts_consistent(got[2]))
    return one_instance([level_check, parent_check])      # one DynamicBFS, read by both


@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
@pytest.mark.parametrize("device", BACKENDS)
def test_state_machine(device, directed):
    Machine = ht.graph_state_machine(directed=directed, device=device, max_vertex=24,
                                     edge_properties={"w": np.float32},
                                     algorithms=_checks(directed))
    Machine.TestCase().runTest()


# ------------------------------------------------------------------ hand-made scenarios


def _graph(device, pairs, directed=False, n=None):
    pairs = np.asarray(pairs, np.int64).reshape(-1, 2)
    return hornet.Graph.from_edges(pairs[:, 0], pairs[:, 1], num_vertices=n, directed=directed,
                                   device=device)


def _check(bf: DynamicBFS):
    g = bf.graph
    want, _ = bfs(g, bf.source, return_parents=True) if bf.source < g.num_vertices else (
        np.full(g.num_vertices, -1, np.int32), None)
    assert np.array_equal(host(bf.levels), host(want))
    s, d = (host(a).tolist() for a in g.edges())
    assert parents_valid(bf.levels, bf.parents, set(zip(s, d)), g.directed)
    assert counts_consistent(bf)
    assert bf.last_update["batch"] >= 0       # the GPU kernel's error flag: raises if set


def _arr(device, xs):
    xp = np
    if device == "gpu":
        import cupy as xp
    return xp.asarray(xs, dtype=xp.int64)


def _kronecker_bfs(device, scale, seed, directed):
    """(graph, DynamicBFS with parents, from the first edge's source) of a Kronecker graph of
    ``2 ** scale`` vertices and 8 edges per vertex."""
    src, dst = hornet.generators.kronecker_edges(scale, edge_factor=8, seed=seed)
    g = hornet.Graph.from_edges(_arr(device, src), _arr(device, dst), num_vertices=1 << scale,
                                directed=directed, device=device)
    return g, DynamicBFS(g, int(host(src)[0]), parents=True)


def _some_edges(g, rng, size, device):
    """(src, dst) of ``size`` edges of ``g`` picked at random (all of them if fewer)."""
    s, d = g.edges()
    pick = _arr(device, rng.choice(s.shape[0], min(size, s.shape[0]), replace=False))
    return s[pick], d[pick]


@pytest.mark.parametrize("directed", [False, True])
def test_disconnect_and_reconnect(device, directed):
    # two paths 0-1-2-3-4 and 0-5-6, plus a far component 7-8-9
    g = _graph(device, [(0, 1), (1, 2), (2, 3), (3, 4), (0, 5), (5, 6), (7, 8), (8, 9)],
               directed)
    bf = DynamicBFS(g, 0, parents=True)
    _check(bf)
    bf.update(g.delete_edges(_arr(device, [1]), _arr(device, [2])))     # cut 2-3-4 off
    _check(bf)
    assert host(bf.levels)[[2, 3, 4]].tolist() == [-1, -1, -1]
    bf.update(g.insert_edges(_arr(device, [6, 4]), _arr(device, [2, 7])))   # back, deeper
    _check(bf)
    assert host(bf.levels)[[2, 3, 4, 7, 9]].tolist() == [3, 4, 5, 6, 8]
    bf.update(g.insert_edges(_arr(device, [0]), _arr(device, [9])))      # shortcut
    _check(bf)


@pytest.mark.parametrize("directed", [False, True])
def test_vertex_keeps_another_parent(device, directed):
    # diamond 0 -> {1, 2} -> 3 -> 4: deleting 1 -> 3 leaves 3 with parent 2
    g = _graph(device, [(0, 1), (0, 2), (1, 3), (2, 3), (3, 4)], directed)
    bf = DynamicBFS(g, 0, parents=True)
    bf.update(g.delete_edges(_arr(device, [1]), _arr(device, [3])))
    _check(bf)
    assert host(bf.parents)[3] == 2
    assert bf.last_update["marked_vertices"] == 0
    assert bf.last_update["changed_vertices"] == 0
    bf.update(g.delete_edges(_arr(device, [2]), _arr(device, [3])))
    _check(bf)
    assert host(bf.levels)[[3, 4]].tolist() == [-1, -1] if directed else [3, 4]


@pytest.mark.parametrize("directed", [False, True])
def test_hub_deletion(device, directed):
    rng = np.random.default_rng(7)
    n = 300
    hub_edges = [(0, 1)] + [(1, v) for v in range(2, n)]
    extra = rng.integers(2, n, size=(400, 2)).tolist()
    g = _graph(device, hub_edges + extra + [(0, 5)], directed)
    bf = DynamicBFS(g, 0, parents=True)
    _check(bf)
    bf.update(g.delete_vertices(_arr(device, [1])))
    _check(bf)
    bf.update(g.insert_edges(_arr(device, [0, 1]), _arr(device, [1, 2])))
    _check(bf)


@pytest.mark.parametrize("directed", [False, True])
def test_source_edges_deleted_and_source_deleted(device, directed):
    g = _graph(device, [(0, 1), (1, 2), (0, 3), (3, 4), (2, 0)], directed)
    bf = DynamicBFS(g, 0, parents=True)
    s, d = g.edges()
    mask = (host(s) == 0) | (host(d) == 0) if not directed else host(s) == 0
    bf.update(g.delete_edges(s[_arr(device, np.flatnonzero(mask))],
                             d[_arr(device, np.flatnonzero(mask))]))
    _check(bf)
    assert host(bf.levels).tolist() == [0, -1, -1, -1, -1]
    bf.update(g.insert_edges(_arr(device, [0]), _arr(device, [4])))
    _check(bf)
    bf.update(g.delete_vertices(_arr(device, [0])))
    _check(bf)
    assert host(bf.levels)[0] == 0


def test_empty_and_property_changes(device):
    g = hornet.Graph(directed=False, device=device, edge_properties={"w": np.float32})
    g.insert_edges(_arr(device, [0, 1]), _arr(device, [1, 2]), w=np.ones(2, np.float32))
    bf = DynamicBFS(g, 0, parents=True)
    before = host(bf.levels).copy()
    bf.update(g.insert_edges(_arr(device, [0]), _arr(device, [1])))     # already present
    bf.update(g.delete_edges(_arr(device, [5]), _arr(device, [6])))     # absent
    bf.update(g.update_edges(_arr(device, [1]), _arr(device, [2]), w=np.full(1, 2, np.float32)))
    bf.update([])
    assert np.array_equal(host(bf.levels), before)
    _check(bf)


def test_id_space_growth_and_source_outside(device):
    g = hornet.Graph(directed=True, device=device)
    bf = DynamicBFS(g, 3, parents=True)
    assert host(bf.levels).shape == (0,)
    bf.update(g.insert_edges(_arr(device, [0, 1]), _arr(device, [1, 2])))
    assert host(bf.levels).tolist() == [-1, -1, -1]
    g.insert_vertices(_arr(device, [5]))                 # no change to feed
    assert host(bf.levels).tolist() == [-1, -1, -1, 0, -1, -1]
    bf.update(g.insert_edges(_arr(device, [3, 2, 4000]), _arr(device, [0, 4000, 4001])))
    _check(bf)
    assert host(bf.levels)[[0, 1, 2, 4000, 4001]].tolist() == [1, 2, 3, 4, 5]


def test_mixed_sequence_is_one_batch(device):
    rng = np.random.default_rng(3)
    for directed in (False, True):
        g = _graph(device, rng.integers(0, 80, size=(300, 2)).tolist(), directed, n=80)
        bf = DynamicBFS(g, 0, parents=True)
        for _ in range(15):
            s, d = g.edges()
            pick = _arr(device, rng.integers(0, s.shape[0], 20))
            c1 = g.delete_edges(s[pick], d[pick])
            c2 = g.insert_edges(_arr(device, rng.integers(0, 80, 20)),
                                _arr(device, rng.integers(0, 80, 20)))
            c3 = g.delete_edges(c2.src[:5], c2.dst[:5])      # re-deleted in the same batch
            bf.update([c1, c2, c3])
            _check(bf)


def test_deferred_insert_changes(device):
    """A graph that defers inserts (GPU: host pairs queued without a wait) returns changes of
    a subclass of EdgeChange, read when first used: they update like any other."""
    rng = np.random.default_rng(5)
    g = hornet.Graph(directed=False, device=device)
    g.defer_inserts()
    bf = DynamicBFS(g, 0, parents=True)
    for _ in range(8):
        bf.update(g.insert_edges(rng.integers(0, 60, 15), rng.integers(0, 60, 15)))
        _check(bf)
    s, d = g.edges()
    bf.update([g.delete_edges(s[:10], d[:10]),
               g.insert_edges(rng.integers(0, 70, 15), rng.integers(0, 70, 15))])
    _check(bf)


def test_refused_batch_changes_nothing(device):
    g = _graph(device, [(0, 1), (1, 2)])
    bf = DynamicBFS(g, 0)
    with pytest.raises(Exception):
        g.insert_edges(np.array([0, -1]), np.array([1, 2]))
    assert host(bf.levels).tolist() == [0, 1, 2]
    with pytest.raises(TypeError):
        bf.update("not a change")
    assert host(bf.levels).tolist() == [0, 1, 2]


def test_bad_arguments(device):
    g = _graph(device, [(0, 1)])
    with pytest.raises(TypeError):
        DynamicBFS(g, 0.5)
    with pytest.raises(ValueError):
        DynamicBFS(g, -1)
    with pytest.raises(ValueError):
        DynamicBFS(g, 0).parents
    other = "gpu" if device == "cpu" else "cpu"
    change = hornet.EdgeChange("insert", np.zeros(1, np.int32), np.ones(1, np.int32))
    if other == "cpu":
        with pytest.raises(ValueError):
            DynamicBFS(g, 0).update(change)


# split kernels are CPU kernels: only the CPU case is marked
@pytest.mark.parametrize("device", [pytest.param("cpu", marks=pytest.mark.parallel_kernels),
                                    BACKENDS[1]])
def test_random_batches_against_static(device):
    """Larger random graphs, batches of several sizes, both kinds: levels equal the static
    BFS after every batch; small deletions touch a small region."""
    rng = np.random.default_rng(11)
    for directed in (False, True):
        n = 2048
        g, bf = _kronecker_bfs(device, 11, 5, directed)
        for size in (1, 10, 100, 1000, 10, 1):
            s, d = g.edges()
            pick = _arr(device, rng.choice(s.shape[0], size, replace=False))
            bf.update(g.delete_edges(s[pick], d[pick]))
            _check(bf)
            bf.update(g.insert_edges(_arr(device, rng.integers(0, n, size)),
                                     _arr(device, rng.integers(0, n, size))))
            _check(bf)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")
@pytest.mark.parametrize("pairs_per_block,min_blocks",
                         [(None, None), (1, None), (1 << 30, None), (1 << 30, 1), (512, 1)])
def test_gpu_grid_sized_by_batch(pairs_per_block, min_blocks, monkeypatch):
    """The GPU update's grid follows the batch (from ``min_blocks`` up to the resident
    grid): every size gives the static BFS's levels and parents, hubs (chunked lists) and
    vertex growth included, with the grid at both ends of its range (one block included)."""
    from hornet.algos.bfs.dynamic_gpu import GPUState
    monkeypatch.setattr(GPUState, "pairs_per_block", pairs_per_block)
    monkeypatch.setattr(GPUState, "min_blocks", min_blocks)
    rng = np.random.default_rng(3)
    n = 4096
    g, bf = _kronecker_bfs("gpu", 12, 7, False)
    grids = set()
    for size in (1, 50, 3000, 20000, 5):
        picked = _some_edges(g, rng, size, "gpu")
        bf.update(g.delete_edges(*picked))
        _check(bf)
        grids.add(bf._state.grid(2 * size))
        bf.update(g.insert_edges(_arr("gpu", rng.integers(0, n + 64, size)),
                                 _arr("gpu", rng.integers(0, n + 64, size))))
        _check(bf)
    if pairs_per_block == 1:
        assert len(grids) > 1                      # the grid did follow the batch


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")
@pytest.mark.parametrize("kernel_name", ["dbfs_update", "dbfs_update_r85", "async"])
@pytest.mark.parametrize("small_max", [0, 8, 255])
@pytest.mark.parametrize("directed", [False, True])
def test_gpu_thread_and_warp_lists(kernel_name, small_max, directed, monkeypatch):
    """Lists read by one thread (up to ``small_max`` entries), by a warp, or in chunks by the
    grid, with every kernel (the two level-synchronous ones and the work-queue one): every
    mix gives the static BFS's levels and valid parents; the timeline, when asked for,
    lists the phases of the update in order."""
    from hornet.algos.bfs.dynamic_gpu import GPUState
    monkeypatch.setattr(GPUState, "small_max", small_max)
    monkeypatch.setattr(GPUState, "async_queue", kernel_name == "async")
    if kernel_name != "async":
        monkeypatch.setattr(GPUState, "kernel_name", kernel_name)
    monkeypatch.setattr(GPUState, "record_timeline", True)
    rng = np.random.default_rng(11)
    n = 2048
    g, bf = _kronecker_bfs("gpu", 11, 3, directed)
    for size in (1, 30, 600, 4000, 3):
        picked = _some_edges(g, rng, size, "gpu")
        bf.update(g.delete_edges(*picked))
        _check(bf)
        phases = [p for p, _ in bf._state.timeline()]
        assert phases[0] == "counts" and phases[-1] == "end"
        assert all(us >= 0 for _, us in bf._state.timeline())
        bf.update(g.insert_edges(_arr("gpu", rng.integers(0, n + 16, size)),
                                 _arr("gpu", rng.integers(0, n + 16, size))))
        _check(bf)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")
@pytest.mark.parametrize("async_queue,relax_limit", [(False, None), (True, None), (True, 0),
                                                     (True, 7)])
def test_gpu_queue_modes(async_queue, relax_limit, monkeypatch):
    """Level-synchronous phases and the work-queue ones, the latter with the relaxation's
    queue as long as needed, empty (every lowered vertex is relaxed by the sweeps over the
    changed vertices) or of a few slots (part queue, part sweeps): levels, parents and counts
    equal the static BFS's after deletions, insertions and mixed batches, directed or not,
    on the batch-sized grid and a one-block one."""
    from hornet.algos.bfs.dynamic_gpu import GPUState
    monkeypatch.setattr(GPUState, "async_queue", async_queue)
    monkeypatch.setattr(GPUState, "relax_queue_limit", relax_limit)
    rng = np.random.default_rng(29)
    n = 4096
    batch_grid = GPUState.grid
    for directed in (False, True):
        for one_block in (False, True):
            monkeypatch.setattr(GPUState, "grid",
                                (lambda self, pairs=None: 1) if one_block else batch_grid)
            g, bf = _kronecker_bfs("gpu", 12, 13, directed)
            for size in (1, 60, 4000, 700):
                picked = _some_edges(g, rng, size, "gpu")
                deleted = g.delete_edges(*picked)
                bf.update(deleted)
                _check(bf)
                bf.update(g.insert_edges(_arr("gpu", rng.integers(0, n + 8, size)),
                                         _arr("gpu", rng.integers(0, n + 8, size))))
                _check(bf)
                picked = _some_edges(g, rng, size, "gpu")
                mixed = [g.delete_edges(*picked),
                         g.insert_edges(deleted.src, deleted.dst)]
                bf.update(mixed)
                _check(bf)


@pytest.mark.parametrize("queue", ["level_sync", "async", "async_no_relax_queue"])
@pytest.mark.parametrize("device", BACKENDS)
def test_marked_hub_keeps_a_parent_late_in_its_list(device, queue, monkeypatch):
    """A hub loses its source edge; its only neighbour left on level 1 comes after 700
    neighbours that lose their level with it (several chunks into its list): the hub moves
    to level 2 through that neighbour, also when the GPU's relaxation queue has no room
    (every chunk of the hub's list must still be read for its seed)."""
    if device == "cpu" and queue != "level_sync":
        pytest.skip("a GPU setting")
    if device == "gpu":
        from hornet.algos.bfs.dynamic_gpu import GPUState
        monkeypatch.setattr(GPUState, "async_queue", queue != "level_sync")
        monkeypatch.setattr(GPUState, "relax_queue_limit",
                            0 if queue == "async_no_relax_queue" else None)
    hub, far = 1, 5000
    leaves = list(range(1000, 1700))
    for directed in (False, True):
        pairs = [(0, hub), (0, far)] + [(hub, v) for v in leaves] + [(far, hub)]
        if directed:
            pairs += [(v, hub) for v in leaves]
        g = _graph(device, pairs, directed, n=far + 1)
        bf = DynamicBFS(g, 0, parents=True)
        _check(bf)
        bf.update(g.delete_edges(_arr(device, [0]), _arr(device, [hub])))
        _check(bf)
        assert host(bf.levels)[hub] == 2 and host(bf.levels)[leaves[0]] == 3
        bf.update(g.insert_edges(_arr(device, [0]), _arr(device, [hub])))
        _check(bf)


@pytest.mark.parametrize("directed", [False, True])
def test_long_lists(device, directed):
    """Hubs with lists longer than a GPU warp's pass (cut into chunks there) in every step:
    marking, seeds, relaxation, repair and orphans."""
    rng = np.random.default_rng(5)
    hub, hub2, a, b, c = 1, 2, 3, 4, 5
    leaves = np.arange(10, 1510)
    pairs = [(0, hub), (0, a), (a, b), (b, hub), (0, c), (c, hub2)]
    pairs += [(hub, int(x)) for x in leaves] + [(hub2, int(x)) for x in leaves[::2]]
    pairs += [(int(x), hub2) for x in leaves[1::3]]
    pairs += rng.integers(10, 1510, size=(300, 2)).tolist()
    g = _graph(device, pairs, directed)
    bf = DynamicBFS(g, 0, parents=True)
    _check(bf)
    bf.update(g.delete_edges(_arr(device, [0]), _arr(device, [hub])))     # hub: 1 -> 3
    _check(bf)
    assert host(bf.levels)[hub] == 3
    bf.update(g.insert_edges(_arr(device, [0]), _arr(device, [hub])))     # and back
    _check(bf)
    bf.update(g.delete_vertices(_arr(device, [hub2])))
    _check(bf)
    bf.update(g.delete_edges(_arr(device, [0, b]), _arr(device, [hub, hub])))
    _check(bf)
    assert host(bf.levels)[hub] == -1
    bf.update(g.insert_edges(_arr(device, [c, hub2]), _arr(device, [hub2, hub])))
    _check(bf)
    assert host(bf.levels)[hub] == 3


def _check_levels(bf: DynamicBFS):
    """Levels equal the static BFS and the parent counts a recount (parents when kept); on
    the GPU the per-update scratch state (flags, old levels, chase tags) is back at rest."""
    state = bf._state
    if hasattr(state, "qtag"):
        for name in ("flag", "old", "qtag"):
            assert not host(getattr(state, name)).any(), name
    if bf.want_parents:
        _check(bf)
        return
    assert np.array_equal(host(bf.levels), host(bfs(bf.graph, bf.source)))
    assert counts_consistent(bf)


@pytest.mark.parametrize("parents", [False, True], ids=["levels", "parents"])
@pytest.mark.parametrize("directed", [False, True])
def test_level_one_hubs_lose_the_source(device, directed, parents):
    """Deletions of source edges whose level-1 ends are hubs (lists longer than a GPU chunk):
    ends with an unmarked level-1 neighbour (level 2 at once, their seed list not read), ends
    whose level-1 neighbours all lost the source too, a hub cut off entirely, and a batch
    with an insertion beside the deletions (the general path)."""
    rng = np.random.default_rng(17)
    hubs = np.arange(1, 9)
    leaves = np.arange(20, 1220)
    pairs = [(0, int(h)) for h in hubs]
    pairs += [(int(h), int(hubs[(i + 1) % len(hubs)])) for i, h in enumerate(hubs)]  # a ring
    for h in hubs:
        for x in rng.choice(leaves, 500, replace=False):
            pairs.append((int(h), int(x)))
    pairs += [(9, 10), (10, 11), (0, 12), (12, 13)]        # 9-11 reachable through hub 8 only
    pairs += [(8, 9), (0, 14), (0, 15), (14, 15), (15, 14), (14, 16)]   # 14: a short list
    pairs += rng.choice(leaves, size=(200, 2)).tolist()
    if directed:                                            # the ring both ways
        pairs += [(int(hubs[(i + 1) % len(hubs)]), int(h)) for i, h in enumerate(hubs)]
    g = _graph(device, pairs, directed)
    bf = DynamicBFS(g, 0, parents=parents)
    _check_levels(bf)
    # hubs 1, 2, 3 lose the source: 1 and 3 keep an unmarked level-1 neighbour (8, 4), 2 not
    bf.update(g.delete_edges(_arr(device, [0, 0, 0]), _arr(device, [1, 2, 3])))
    _check_levels(bf)
    assert host(bf.levels)[2] == 3 and host(bf.levels)[1] == 2
    # every hub but 5 loses the source, and hub 8 its link to 9's tail
    bf.update(g.delete_edges(_arr(device, [0, 0, 0, 0, 0, 8, 0]),
                             _arr(device, [4, 6, 7, 8, 12, 9, 14])))
    _check_levels(bf)
    assert host(bf.levels)[9] == -1 and host(bf.levels)[14] == 2
    # a mixed batch: the last source edge of a hub goes, a leaf joins the source
    bf.update([g.delete_edges(_arr(device, [0]), _arr(device, [5])),
               g.insert_edges(_arr(device, [0]), _arr(device, [int(leaves[0])]))])
    _check_levels(bf)
    # everything back, then two adjacent level-1 vertices with short lists lose the source
    # in one batch (neither may take the other, marked in the same step, as a level-1 link)
    bf.update(g.insert_edges(_arr(device, [0] * 9 + [8]), _arr(device, list(hubs) + [14, 9])))
    _check_levels(bf)
    bf.update(g.delete_edges(_arr(device, [0, 0]), _arr(device, [14, 15])))
    _check_levels(bf)
    assert host(bf.levels)[14] == -1 and host(bf.levels)[15] == -1
    bf.update(g.insert_edges(_arr(device, [0, 0]), _arr(device, [14, 15])))
    _check_levels(bf)
    # the hubs' ring edges go too (no level-1 neighbour left)
    ring_s = [int(h) for h in hubs]
    ring_d = [int(hubs[(i + 1) % len(hubs)]) for i in range(len(hubs))]
    bf.update(g.delete_edges(_arr(device, ring_s + [0, 0]), _arr(device, ring_d + [1, 2])))
    _check_levels(bf)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")
@pytest.mark.parametrize("cooperative", [False, True], ids=["plain", "cooperative"])
def test_gpu_launch_kinds(cooperative, monkeypatch):
    """Cooperative and plain launches of the update kernel give the static BFS's levels and
    parents, on the largest grid and batch-sized ones."""
    from hornet.algos.bfs.dynamic_gpu import GPUState
    monkeypatch.setattr(GPUState, "cooperative", cooperative)
    rng = np.random.default_rng(23)
    n = 4096
    for directed in (False, True):
        g, bf = _kronecker_bfs("gpu", 12, 9, directed)
        for size in (2, 40, 5000, 300):
            picked = _some_edges(g, rng, size, "gpu")
            bf.update(g.delete_edges(*picked))
            _check(bf)
            bf.update(g.insert_edges(_arr("gpu", rng.integers(0, n, size)),
                                     _arr("gpu", rng.integers(0, n, size))))
            _check(bf)
        assert bf.last_update["batch"] > 0


# ------------------------------------------------------------------ many level-1 deletions


def _one_block_grid(monkeypatch):
    """GPU updates run on one block of threads: a batch of more pairs than the block has
    threads is then read in order by each thread (item e, then e + threads, ...)."""
    from hornet.algos.bfs.dynamic_gpu import GPUState
    monkeypatch.setattr(GPUState, "grid", lambda self, pairs=None: 1)


@pytest.mark.parametrize("parents", [True, False], ids=["parents", "levels"])
@pytest.mark.parametrize("grid", ["batch", "one_block"])
@pytest.mark.parametrize("device", BACKENDS)
def test_level_one_neighbours_marked_in_one_batch(device, grid, parents, monkeypatch):
    """Level-1 vertices with short lists, linked to level-1 vertices 256 and 1 ids away, lose
    the source in one batch (all but a few). In the GPU counts step a vertex's deletion is
    read before (same thread, one block: deterministically) its linked neighbour's, so a
    level-1 neighbour that the same step marks later must not count as one that keeps
    level 1 (nor settle a level-1 vertex on level 2, without parents). Levels, parents and
    counts equal the static BFS's."""
    if grid == "one_block":
        if device == "cpu":
            pytest.skip("the grid is a GPU setting")
        _one_block_grid(monkeypatch)
    k = 1200                                    # level-1 vertices 1..k
    ones = np.arange(1, k + 1)
    pairs = [(0, int(v)) for v in ones]
    pairs += [(int(v), int(v) + 256) for v in ones[ones + 256 <= k]]
    pairs += [(int(v), int(v) + 1) for v in ones[(ones % 7 == 0) & (ones < k)]]
    pairs += [(int(v), k + int(v)) for v in ones]                # a level-2 child each
    pairs += [(k + int(v), k + int(v) + 3) for v in ones[ones + 3 <= k][::5]]
    for directed in (False, True):
        g = _graph(device, pairs, directed)
        bf = DynamicBFS(g, 0, parents=parents)
        _check_levels(bf)
        kept = {1, 300, 599, k}                 # these keep the source edge
        lose = [int(v) for v in ones if int(v) not in kept]
        bf.update(g.delete_edges(_arr(device, [0] * len(lose)), _arr(device, lose)))
        _check_levels(bf)
        lv = host(bf.levels)[1:k + 1]           # the batch leaves both kinds of vertex
        assert (lv == 2).any() and ((lv == -1) | (lv > 2)).any()
        bf.update(g.insert_edges(_arr(device, [0] * len(lose)), _arr(device, lose)))
        _check_levels(bf)
        assert (host(bf.levels)[1:k + 1] == 1).all()


@st.composite
def _star_graphs(draw):
    """(n, pairs, deleted): a source joined to most vertices, random links among them (so
    level-1 vertices neighbour each other), and a batch deleting many source edges (and a
    few others)."""
    n = draw(st.integers(4, 120))
    seed = draw(st.integers(0, 2 ** 31))
    rng = np.random.default_rng(seed)
    ones = np.flatnonzero(rng.random(n - 1) < draw(st.floats(0.3, 1.0))) + 1
    links = rng.integers(1, n, size=(draw(st.integers(0, 3 * n)), 2))
    pairs = [(0, int(v)) for v in ones] + links.tolist()
    lose = ones[rng.random(ones.shape[0]) < draw(st.floats(0.2, 1.0))]
    deleted = [(0, int(v)) for v in lose]
    if links.shape[0]:
        deleted += links[rng.random(links.shape[0]) < 0.1].tolist()
    return n, pairs, deleted


@pytest.mark.parametrize("parents", [True, False], ids=["parents", "levels"])
@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("device", BACKENDS)
@given(case=_star_graphs())
def test_many_level_one_deletions_property(device, directed, parents, case):
    """Random graphs where most vertices are level-1 and many lose the source in one batch
    (deletions alone), then get it back: levels, parents and counts equal the static BFS's
    after each batch."""
    n, pairs, deleted = case
    g = _graph(device, pairs, directed, n=n)
    bf = DynamicBFS(g, 0, parents=parents)
    d = np.asarray(deleted, np.int64).reshape(-1, 2)
    change = g.delete_edges(_arr(device, d[:, 0]), _arr(device, d[:, 1]))
    bf.update(change)
    _check_levels(bf)
    bf.update(g.insert_edges(change.src, change.dst))
    _check_levels(bf)


#: GPU deletion modes without parents: (GPUState.settle, GPUState.chase)
_DELETION_MODES = {"chase": (True, True), "settle": (True, False), "rounds": (False, False)}


def _deletion_mode(device, grid, mode, monkeypatch):
    """The GPU grid and deletion mode of a test (the CPU runs one case)."""
    if device == "cpu" and (grid != "batch" or mode != "chase"):
        pytest.skip("the grid and the deletion mode are GPU settings")
    if device == "gpu":
        from hornet.algos.bfs.dynamic_gpu import GPUState
        settle, chase = _DELETION_MODES[mode]
        monkeypatch.setattr(GPUState, "settle", settle)
        monkeypatch.setattr(GPUState, "chase", chase)
    if grid == "one_block":
        _one_block_grid(monkeypatch)


@pytest.mark.parametrize("mode", list(_DELETION_MODES))
@pytest.mark.parametrize("grid", ["batch", "one_block"])
@pytest.mark.parametrize("device", BACKENDS)
def test_source_hub_deletions_levels(device, grid, mode, monkeypatch):
    """The benchmark's pattern without parents: an undirected Kronecker graph, the source its
    vertex of largest degree. Random edges, then many of the source's edges (level-1 ends
    with lists longer than a GPU chunk among them, most keeping a level-1 neighbour: level 2
    at once on the GPU), then all of them, are deleted and put back: levels equal the
    static BFS's and the parent counts a recount after every batch."""
    _deletion_mode(device, grid, mode, monkeypatch)
    src, dst = hornet.generators.kronecker_edges(12, edge_factor=16, seed=29)
    g = hornet.Graph.from_edges(_arr(device, src), _arr(device, dst), num_vertices=1 << 12,
                                directed=False, device=device)
    deg = host(g.degree())
    source = int(deg.argmax())
    bf = DynamicBFS(g, source)
    _check_levels(bf)
    rng = np.random.default_rng(31)
    nbrs = host(g.neighbors(source)[0]).astype(np.int64)
    assert (deg[nbrs] > 256).sum() >= 4                   # hubs on level 1
    batches = [_some_edges(g, rng, size, device) for size in (1, 10, 100, 1000)]
    for share in (0.5, 1.0):
        lose = nbrs[rng.random(nbrs.shape[0]) < share]
        s, d = _some_edges(g, rng, 50, device)
        batches.append((_arr(device, np.concatenate([np.full(lose.shape[0], source),
                                                     host(s)])),
                        _arr(device, np.concatenate([lose, host(d)]))))
    for s, d in batches:
        change = g.delete_edges(s, d)
        bf.update(change)
        _check_levels(bf)
        bf.update(g.insert_edges(change.src, change.dst))
        _check_levels(bf)


@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
@pytest.mark.parametrize("by_update", [True, False], ids=["by-update", "static"])
def test_construction_paths(monkeypatch, directed, by_update):
    """Both CPU constructions (one update from the all-unreached state on small graphs, the
    static BFS on large ones) give networkx's levels, valid parents and exact parent counts,
    also when the source has no edges or lies beyond the id space; updates then go on."""
    dyn = importlib.import_module("hornet.algos.bfs.dynamic")
    monkeypatch.setattr(dyn, "BUILD_BY_UPDATE_MAX_EDGES", (1 << 40) if by_update else -1)
    rng = np.random.default_rng(7 + directed)
    for source, n in ((0, 60), (3, 60), (59, 60), (75, 60)):
        s = rng.integers(0, n, 150)
        d = rng.integers(0, n, 150)
        s[:4] = 59          # some of the tests' sources with and without edges
        g = hornet.Graph.from_edges(s, d, num_vertices=n, directed=directed, device="cpu")
        if source == 59:
            g.delete_vertices(np.array([59]))
        ref = ht.ReferenceGraph(directed=directed, num_vertices=g.num_vertices)
        hs, hd = (host(a) for a in g.edges())
        ref.insert(hs.tolist(), hd.tolist(), {})
        bf = DynamicBFS(g, source, parents=True)
        assert np.array_equal(host(bf.levels), nx_levels(ref, source))
        assert parents_valid(bf.levels, bf.parents, set(zip(hs.tolist(), hd.tolist())), directed)
        assert counts_consistent(bf)
        bf.update(g.insert_edges(rng.integers(0, n, 20), rng.integers(0, n, 20)))
        if source < g.num_vertices:
            _check(bf)


# ------------------------------------------------------------------ one-block continuation


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")
@pytest.mark.parametrize("one_block_max", [0, 64, 255])
@pytest.mark.parametrize("directed", [False, True])
def test_gpu_one_block_continuation(one_block_max, directed, monkeypatch):
    """On a grid of many blocks, an update whose counts step leaves at most
    ``one_block_max`` work goes on in block 0 alone, any other on the whole grid: deletions,
    insertions and mixed batches of every size (hubs with chunked lists included) give the
    static BFS's levels, valid parents and exact counts either way, and with a limit both
    paths are taken (never without one)."""
    from hornet.algos.bfs.dynamic_gpu import GPUState
    monkeypatch.setattr(GPUState, "one_block_max", one_block_max)
    monkeypatch.setattr(GPUState, "pairs_per_block", 1)     # a block per pair, at least one per SM
    rng = np.random.default_rng(41 + directed)
    n = 4096
    g, bf = _kronecker_bfs("gpu", 12, 17, directed)
    assert bf._state.grid(2) > 1
    used = []
    for size in (1, 3, 20, 200, 3000, 2):
        picked = _some_edges(g, rng, size, "gpu")
        deleted = g.delete_edges(*picked)
        bf.update(deleted)
        _check(bf)
        used.append(bf._state.one_block_used)
        bf.update(g.insert_edges(_arr("gpu", rng.integers(0, n, size)),
                                 _arr("gpu", rng.integers(0, n, size))))
        _check(bf)
        used.append(bf._state.one_block_used)
        picked = _some_edges(g, rng, size, "gpu")
        bf.update([g.delete_edges(*picked), g.insert_edges(deleted.src, deleted.dst)])
        _check(bf)
        used.append(bf._state.one_block_used)
    if one_block_max == 0:
        assert not any(used)
    else:
        assert any(used) and not all(used)


def _broom(directed: bool):
    """(pairs, n): the source 0 -> 1 -> 100 children -> 20 grandchildren each, the first
    grandchild a hub of 600 leaves, and a path 0 -> 2702 -> ... -> 2706 -> 1 around the
    source edge."""
    children = np.arange(2, 102)
    pairs = [(0, 1)] + [(1, int(c)) for c in children]
    grand = 102
    for c in children:
        pairs += [(int(c), grand + j) for j in range(20)]
        grand += 20
    pairs += [(102, leaf) for leaf in range(2102, 2702)]
    path = [0, 2702, 2703, 2704, 2705, 2706, 1]
    pairs += list(zip(path[:-1], path[1:]))
    return pairs, 2707


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("device", BACKENDS)
def test_one_deletion_cascades(device, directed, monkeypatch):
    """One deleted source edge takes the last parent of one vertex, whose loss cascades
    through thousands (a hub's chunked list among them) that all move down along a longer
    path; re-inserting it lifts them back. Exact levels, parents and counts after both; on
    the GPU the counts step leaves one marked vertex, so the cascade runs in one block."""
    if device == "gpu":
        from hornet.algos.bfs.dynamic_gpu import GPUState
        monkeypatch.setattr(GPUState, "one_block_max", 64)
    pairs, n = _broom(directed)
    g = _graph(device, pairs, directed, n=n)
    bf = DynamicBFS(g, 0, parents=True)
    _check(bf)
    before = host(bf.levels).copy()
    bf.update(g.delete_edges(_arr(device, [0]), _arr(device, [1])))
    _check(bf)
    assert bf.last_update["changed_vertices"] > 2000
    assert (host(bf.levels)[102:2702] > before[102:2702]).all()
    if device == "gpu":
        assert bf._state.one_block_used
    bf.update(g.insert_edges(_arr(device, [0]), _arr(device, [1])))
    _check(bf)
    assert np.array_equal(host(bf.levels), before)
    if device == "gpu":
        assert bf._state.one_block_used


@pytest.mark.parametrize("mixed", [False, True], ids=["delete", "delete+insert"])
@pytest.mark.parametrize("directed", [False, True])
def test_marked_neighbour_keeps_no_stale_level(device, directed, mixed):
    """Deleting 1 - 2 marks 2 and its only child 3 (both with short lists, read as they
    are marked on the GPU): 2's one neighbour left is 3, and the inserted pair (3, 8) starts
    at 3, so a seed taken from 3's level before the update would put 2 (and 8) on level 4;
    the long way round 0 - 4 - 5 - 6 - 7 - 3 puts 3 on 5, 2 on 6 (and 8 on 6)."""
    pairs = [(0, 1), (1, 2), (2, 3), (0, 4), (4, 5), (5, 6), (6, 7), (7, 3)]
    if directed:
        pairs.append((3, 2))
    g = _graph(device, pairs, directed, n=9)
    bf = DynamicBFS(g, 0, parents=True)
    _check(bf)
    change = [g.delete_edges(_arr(device, [1]), _arr(device, [2]))]
    if mixed:
        change.append(g.insert_edges(_arr(device, [3]), _arr(device, [8])))
    bf.update(change if mixed else change[0])
    _check(bf)
    assert host(bf.levels)[[2, 3]].tolist() == [6, 5]
    if mixed:
        assert host(bf.levels)[8] == 6


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")
@pytest.mark.parametrize("directed", [False, True])
def test_gpu_updates_while_the_update_kernel_builds(directed, monkeypatch):
    """While the update kernel's module is being built in the background (a first run's
    prebuild), updates recompute the levels from scratch: exact, every level reported set;
    once the build is done the kernel takes over from that state, exact too."""
    from hornet.algos.bfs import dynamic_gpu
    pending = {"updates": 3}
    asked = []

    def building(path, names=()):
        asked.append(names)
        return pending["updates"] > 0

    monkeypatch.setattr(dynamic_gpu, "building", building)
    rng = np.random.default_rng(5 + directed)
    n = 2048
    g, bf = _kronecker_bfs("gpu", 11, 3, directed)
    for step in range(6):
        s, d = g.edges()
        pick = _arr("gpu", rng.choice(s.shape[0], 40, replace=False))
        bf.update([g.delete_edges(s[pick], d[pick]),
                   g.insert_edges(_arr("gpu", rng.integers(0, n, 40)),
                                  _arr("gpu", rng.integers(0, n, 40)))])
        _check(bf)
        from_scratch = bf.last_update["changed_vertices"] == g.num_vertices
        assert from_scratch == (pending["updates"] > 0)
        pending["updates"] -= 1
    assert asked and all(names == (dynamic_gpu.UPDATE_KERNELS[bf._state.kernel()],)
                         for names in asked)
    assert len(asked) == 4           # no more checks once the module is there


@pytest.mark.parametrize("mode", list(_DELETION_MODES))
@pytest.mark.parametrize("grid", ["batch", "one_block"])
@pytest.mark.parametrize("device", BACKENDS)
def test_deep_chains_levels(device, grid, mode, monkeypatch):
    """Deletions that push long chains of vertices down by many levels (without parents):
    a path of 300 vertices from the source with shortcuts from the source, deep vertices
    with 20 and 400 leaves (lists read by a warp, longer than a GPU chunk), links between
    leaves; the shortcuts and some path edges are deleted (the chains' levels rise by tens,
    some vertices are cut off) and put back: levels equal the static BFS's and the parent
    counts a recount after every batch."""
    _deletion_mode(device, grid, mode, monkeypatch)
    k = 300
    pairs = [(i, i + 1) for i in range(k)]
    pairs += [(0, 50), (0, 120), (0, 200), (150, 260)]
    nxt = k + 1
    leaves = {}
    for hub, m in ((60, 400), (130, 20), (210, 400), (280, 9)):
        leaves[hub] = list(range(nxt, nxt + m))
        pairs += [(hub, x) for x in leaves[hub]]
        nxt += m
    rng = np.random.default_rng(37)
    pairs += [(int(a), int(b)) for a, b in zip(rng.choice(leaves[60], 30),
                                                rng.choice(leaves[210], 30))]
    pairs += [(int(x), int(x) + 1) for x in leaves[130][:-1:2]]
    g = _graph(device, pairs)
    bf = DynamicBFS(g, 0)
    _check_levels(bf)
    for batch in ([(0, 50)], [(0, 120), (0, 200)],
                  [(0, 50), (0, 120), (0, 200), (100, 101)],
                  [(0, 200), (59, 60), (61, 62), (150, 260)],
                  [(i, i + 1) for i in range(40, 290, 7)]):
        b = np.asarray(batch, np.int64)
        change = g.delete_edges(_arr(device, b[:, 0]), _arr(device, b[:, 1]))
        bf.update(change)
        _check_levels(bf)
        bf.update(g.insert_edges(change.src, change.dst))
        _check_levels(bf)
