"""DynamicTruss against independent oracles after every batch (CPU and GPU).

Oracles: the static truss decomposition recomputed from the state machine's reference model
(a scipy matrix built from its edge dict, not from the graph), networkx ``k_truss`` for k_max
and the k-truss edge lists; on real graphs, the static functions on the same graph state.
Every scenario runs twice where it matters: with the static fallback disabled (so the
dynamic region algorithms decide every batch) and with the default fallback.
"""
from __future__ import annotations

from itertools import combinations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import settings

import hornet
import hornet.testing as ht
from hornet.algos import k_truss, max_truss, truss_numbers
from hornet.algos.ktruss.dynamic import DynamicTruss
from hornet.testing import to_host

from conftest import DATA_DIR

#: a share no region reaches
NEVER = 1e9
#: "dynamic": every batch through the region algorithms; "default": the default thresholds;
#: "static": every batch through the whole-graph fallback
MODES = {"dynamic": dict(fallback_share=NEVER, batch_share=NEVER), "default": {},
         "static": dict(batch_share=0.0)}


# ------------------------------------------------------------------ oracles on the reference


def _nx_graph(ref) -> nx.Graph:
    """The reference's underlying undirected simple graph (directed: u-v when u->v or v->u;
    self-loops left out)."""
    G = nx.Graph()
    G.add_nodes_from(range(ref.num_vertices))
    G.add_edges_from((u, v) for u, v in ref.edges if u != v)
    return G


def _oracle_truss(ref) -> np.ndarray:
    """Static decomposition of the reference's underlying undirected graph (a scipy matrix
    built from its edge dict), one value per reference edge (0 for a self-loop)."""
    G = _nx_graph(ref)
    und = sorted((min(u, v), max(u, v)) for u, v in G.edges())
    n = ref.num_vertices
    rows = [u for u, v in und] + [v for u, v in und]
    cols = [v for u, v in und] + [u for u, v in und]
    A = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    value = dict(zip(und, np.asarray(truss_numbers(A)).tolist()))
    return np.array([value.get((min(u, v), max(u, v)), 0) for u, v in ref.edge_list()],
                    dtype=np.int32)


def _nx_k_max(ref) -> int:
    """networkx: the largest k with a non-empty k-truss (0 without edges)."""
    G = _nx_graph(ref)
    if G.number_of_edges() == 0:
        return 0
    k = 2
    while nx.k_truss(G, k + 1).number_of_edges():
        k += 1
    return k


def _nx_k_truss_edges(ref, k):
    """The reference's edges (as stored) whose undirected edge is in networkx's k-truss."""
    H = nx.k_truss(_nx_graph(ref), k)
    keep = {(min(u, v), max(u, v)) for u, v in H.edges()}
    return [(u, v) for u, v in ref.edge_list() if (min(u, v), max(u, v)) in keep]


def _pairs(src_dst):
    s, d = (to_host(a).tolist() for a in src_dst)
    return list(zip(s, d))


def _checks(mode):
    make = lambda g: DynamicTruss(g, **MODES[mode])
    return [
        ht.AlgorithmCheck("truss numbers", create=make, result=lambda a: a.truss_numbers,
                          oracle=_oracle_truss),
        ht.AlgorithmCheck("k_max", create=make, result=lambda a: a.k_max, oracle=_nx_k_max),
        ht.AlgorithmCheck("4-truss", create=make, result=lambda a: _pairs(a.k_truss(4)),
                          oracle=lambda ref: _nx_k_truss_edges(ref, 4)),
    ]


STATE_MACHINE_CONFIGS = {
    "undirected": dict(directed=False),
    "undirected_weighted": dict(directed=False, edge_properties={"w": np.float32}),
    "directed": dict(directed=True),
}


@pytest.mark.parametrize("mode", ["dynamic", "default", "static"])
@pytest.mark.parametrize("config", sorted(STATE_MACHINE_CONFIGS))
def test_state_machine(device, mode, config):
    """Random insert / delete / update / vertex / hub / refused batches and deleting
    everything: truss numbers, k_max and the 4-truss equal the oracles after every step.
    A small id space keeps the graphs dense, so cliques form and break all the time.
    Directed graphs: the underlying undirected graph's numbers on every stored edge."""
    Machine = ht.graph_state_machine(device=device, max_vertex=13, max_batch=20,
                                     algorithms=_checks(mode), **STATE_MACHINE_CONFIGS[config])
    Machine.TestCase.settings = settings(Machine.TestCase.settings,
                                         max_examples=20 if device == "cpu" else 6,
                                         stateful_step_count=25, deadline=None)
    Machine.TestCase().runTest()


# ------------------------------------------------------------------ scripted batches


def _arr(device, a):
    a = np.asarray(a, dtype=np.int64)
    if device == "gpu":
        import cupy
        return cupy.asarray(a)
    return a


def _assert_static(kt, g):
    want = to_host(truss_numbers(g))
    assert np.array_equal(to_host(kt.truss_numbers), want)
    k, _, _ = max_truss(g)
    assert kt.k_max == int(k)
    for kk in (3, int(k)):
        assert _pairs(kt.k_truss(kk)) == _pairs(k_truss(g, kk))


def _clique(vertices):
    pairs = list(combinations(vertices, 2))
    return [u for u, _ in pairs], [v for _, v in pairs]


@pytest.mark.parametrize("mode", ["dynamic", "default"])
def test_clique_raises_and_lowers_k_max(device, mode):
    """A sparse graph; a batch that completes a K7 raises k_max from 3 to 7 (edges rise by
    several levels in one batch); deleting one clique edge lowers it to 6, deleting a vertex
    of the clique lowers it again, re-inserting restores it."""
    rng = np.random.default_rng(3)
    g = hornet.Graph(directed=False, device=device)
    ring = np.arange(40)
    g.insert_edges(_arr(device, ring), _arr(device, (ring + 1) % 40))
    g.insert_edges(_arr(device, ring), _arr(device, (ring + 2) % 40))     # triangles
    g.insert_edges(_arr(device, rng.integers(0, 40, 30)), _arr(device, rng.integers(0, 40, 30)))
    kw = MODES[mode]
    kt = DynamicTruss(g, **kw)
    _assert_static(kt, g)
    s, d = _clique([3, 9, 17, 22, 28, 31, 35])
    kt.update(g.insert_edges(_arr(device, s), _arr(device, d)))
    _assert_static(kt, g)
    assert kt.k_max == 7
    kt.update(g.delete_edges(_arr(device, [9]), _arr(device, [22])))
    _assert_static(kt, g)
    assert kt.k_max == 6
    kt.update(g.delete_vertices(_arr(device, [17])))
    _assert_static(kt, g)
    kt.update(g.insert_edges(_arr(device, [9, 17, 17, 17, 17, 17, 17]),
                             _arr(device, [22, 3, 9, 22, 28, 31, 35])))
    _assert_static(kt, g)
    assert kt.k_max == 7
    kt.update(g.delete_edges(_arr(device, s), _arr(device, d)))        # the whole clique
    _assert_static(kt, g)


@pytest.mark.parametrize("mode", ["dynamic", "default"])
def test_delete_and_reinsert_same_edges(device, mode):
    """Delete and re-insert the same edges of a dense graph in consecutive batches; an
    insert batch with repeats and edges already present; an empty change."""
    g = hornet.Graph(directed=False, device=device)
    s, d = _clique(range(6))
    g.insert_edges(_arr(device, s), _arr(device, d))
    g.insert_edges(_arr(device, [5, 6, 6, 7]), _arr(device, [6, 0, 1, 0]))
    kw = MODES[mode]
    kt = DynamicTruss(g, **kw)
    _assert_static(kt, g)
    for batch in ([0, 1], [2, 3]), ([0, 0, 4], [1, 2, 5]):
        bs, bd = (_arr(device, x) for x in batch)
        kt.update(g.delete_edges(bs, bd))
        _assert_static(kt, g)
        change = g.insert_edges(_arr(device, list(batch[0]) * 2 + [0]),
                                _arr(device, list(batch[1]) * 2 + [5]))
        kt.update(change)
        _assert_static(kt, g)
    kt.update(g.delete_edges(_arr(device, [30]), _arr(device, [31])))   # empty change
    _assert_static(kt, g)
    kt.update(g.update_edges(_arr(device, [0]), _arr(device, [1])))     # properties only
    _assert_static(kt, g)


@pytest.mark.parametrize("mode", ["dynamic", "default"])
def test_clique_edges_deleted_and_reinserted(device, mode):
    """Two cliques (K16 and K9, sharing a vertex) in a sparse ring graph: delete one clique
    edge (its whole clique falls one level), then several of both cliques in one batch
    (numbers fall by several levels), re-insert them in one batch (the inserted edges of
    each clique walk together; numbers rise by several levels), delete and re-insert a
    mixed batch of clique, ring and absent edges."""
    rng = np.random.default_rng(7)
    g = hornet.Graph(directed=False, device=device)
    ring = np.arange(60)
    g.insert_edges(_arr(device, ring), _arr(device, (ring + 1) % 60))
    g.insert_edges(_arr(device, ring), _arr(device, (ring + 3) % 60))
    big = list(range(0, 48, 3))                 # 16 vertices
    small = [45, 47, 49, 51, 53, 55, 57, 58, 59]
    for c in (big, small):
        s, d = _clique(c)
        g.insert_edges(_arr(device, s), _arr(device, d))
    kt = DynamicTruss(g, **MODES[mode])
    _assert_static(kt, g)
    assert kt.k_max == 16
    kt.update(g.delete_edges(_arr(device, [0]), _arr(device, [3])))
    _assert_static(kt, g)
    assert kt.k_max == 15
    kt.update(g.insert_edges(_arr(device, [0]), _arr(device, [3])))
    _assert_static(kt, g)
    assert kt.k_max == 16
    bs, bd = _clique(big)
    ss, sd = _clique(small)
    pick_b = rng.choice(len(bs), 12, replace=False)
    pick_s = rng.choice(len(ss), 5, replace=False)
    du = [bs[i] for i in pick_b] + [ss[i] for i in pick_s]
    dv = [bd[i] for i in pick_b] + [sd[i] for i in pick_s]
    kt.update(g.delete_edges(_arr(device, du), _arr(device, dv)))
    _assert_static(kt, g)
    assert kt.k_max < 15
    kt.update(g.insert_edges(_arr(device, du), _arr(device, dv)))
    _assert_static(kt, g)
    assert kt.k_max == 16
    mu = du[:6] + [1, 2, 100]
    mv = dv[:6] + [2, 5, 101]                  # clique edges, ring edges, an absent pair
    kt.update(g.delete_edges(_arr(device, mu), _arr(device, mv)))
    _assert_static(kt, g)
    kt.update(g.insert_edges(_arr(device, mu + [6]), _arr(device, mv + [12])))
    _assert_static(kt, g)


@pytest.mark.parametrize("mode", ["dynamic", "default"])
def test_mixed_random_batches_in_dense_graph(device, mode):
    """A dense random graph (60 vertices, 700 edges; k_max about 7): forty batches that
    insert, delete or re-insert 1 to 40 edges, equal to the static decomposition after
    each (numbers rise and fall by several levels in one batch)."""
    rng = np.random.default_rng(13)
    n = 60
    g = hornet.Graph(directed=False, device=device)
    g.insert_edges(_arr(device, rng.integers(0, n, 900)), _arr(device, rng.integers(0, n, 900)))
    kt = DynamicTruss(g, **MODES[mode])
    _assert_static(kt, g)
    gone = None
    for step in range(40):
        b = int(rng.integers(1, 41))
        kind = step % 3
        if kind == 0:
            kt.update(g.insert_edges(_arr(device, rng.integers(0, n, b)),
                                     _arr(device, rng.integers(0, n, b))))
        elif kind == 1:
            gs, gd = (to_host(a) for a in g.edges())
            pick = rng.choice(gs.shape[0], min(b, gs.shape[0]), replace=False)
            gone = gs[pick], gd[pick]
            kt.update(g.delete_edges(_arr(device, gone[0]), _arr(device, gone[1])))
        else:
            kt.update(g.insert_edges(_arr(device, gone[0]), _arr(device, gone[1])))
        _assert_static(kt, g)


def _k_order_violations(kt) -> int:
    """Edges of a DynamicTruss (CPU or GPU) that break the k-order invariant, counted from
    its definition by brute force: ordering the edges by (truss number, rank), an edge e may
    lie in at most t(e) - 2 triangles whose other two edges both come after it."""
    t = kt._table
    keys = to_host(t.keys)
    truss, rank = to_host(t.columns["truss"]), to_host(t.columns["rank"])
    live = np.flatnonzero(keys >= 0)
    key = {}
    for s in live.tolist():
        k = int(keys[s])
        key[(k >> 32, k & 0xFFFFFFFF)] = (int(truss[s]), int(rank[s]))
    adj = {}
    for u, v in key:
        adj.setdefault(u, set()).add(v)
        adj.setdefault(v, set()).add(u)
    bad = 0
    for (u, v), mine in key.items():
        later = sum(1 for w in adj[u] & adj[v]
                    if key[(min(u, w), max(u, w))] > mine and key[(min(v, w), max(v, w))] > mine)
        bad += later > mine[0] - 2
    return bad


def _level_count_violations(kt, exact: bool = False) -> int:
    """Edges of a CPU DynamicTruss whose kept level count is not a lower bound (``exact``:
    not equal, or missing) of the true one, counted by brute force: the triangles whose two
    other edges have truss numbers at least the edge's own."""
    t = kt._table
    live = np.flatnonzero(t.keys >= 0)
    truss = {}
    for s in live.tolist():
        k = int(t.keys[s])
        truss[(k >> 32, k & 0xFFFFFFFF)] = int(t.columns["truss"][s])
    adj = {}
    for u, v in truss:
        adj.setdefault(u, set()).add(v)
        adj.setdefault(v, set()).add(u)
    bad = 0
    for s in live.tolist():
        k = int(t.keys[s])
        u, v = k >> 32, k & 0xFFFFFFFF
        mine = truss[(u, v)]
        true = sum(1 for w in adj[u] & adj[v]
                   if truss[(min(u, w), max(u, w))] >= mine
                   and truss[(min(v, w), max(v, w))] >= mine)
        valid = kt._counted[s] > kt._valid
        if exact:
            bad += not valid or int(kt._count[s]) != true
        elif valid:
            bad += int(kt._count[s]) > true
    return bad


@pytest.mark.parametrize("driver", ["device", "rounds"])
@pytest.mark.parametrize("seed", [1, 2])
def test_k_order_kept(device, seed, driver, monkeypatch):
    """After every batch (inserts, deletes, re-inserts of 1 to 30 edges in a dense random
    graph, so numbers rise and fall by several levels and inserted edges share triangles),
    the numbers equal the static decomposition, every batch goes through the region
    algorithms, the k-order that insertions scan still satisfies its invariant, and (CPU)
    the level counts that deletions keep are lower bounds of the true ones (exact after the
    build). GPU: with the scan in one cooperative launch per update ("device") and with one
    launch per phase ("rounds")."""
    if device == "cpu" and driver == "rounds":
        pytest.skip("the GPU version's two drivers")
    if device == "gpu":
        from hornet.algos.ktruss import dynamic_gpu
        monkeypatch.setattr(dynamic_gpu, "DEVICE_SCAN", driver == "device")
    rng = np.random.default_rng(seed)
    n = 40
    cpu = device == "cpu"
    g = hornet.Graph(directed=False, device=device)
    g.insert_edges(_arr(device, rng.integers(0, n, 400)), _arr(device, rng.integers(0, n, 400)))
    kt = DynamicTruss(g, **MODES["dynamic"])
    assert _k_order_violations(kt) == 0
    assert not cpu or _level_count_violations(kt, exact=True) == 0
    gone = None
    for step in range(45):
        b = int(rng.integers(1, 31))
        kind = step % 3
        if kind == 0:
            kt.update(g.insert_edges(_arr(device, rng.integers(0, n, b)),
                                     _arr(device, rng.integers(0, n, b))))
        elif kind == 1:
            gs, gd = g.edges()
            pick = _arr(device, rng.choice(gs.shape[0], min(b, gs.shape[0]), replace=False))
            gone = gs[pick], gd[pick]
            kt.update(g.delete_edges(*gone))
        else:
            kt.update(g.insert_edges(*gone))
        assert kt.stats["path"] in ("dynamic", "none")
        _assert_static(kt, g)
        assert _k_order_violations(kt) == 0, step
        assert not cpu or _level_count_violations(kt) == 0, step
    # a K16 completed in one batch on 16 vertices of the graph: k_max rises by several levels
    before = kt.k_max
    s, d = _clique(range(0, 32, 2))
    kt.update(g.insert_edges(_arr(device, s), _arr(device, d)))
    _assert_static(kt, g)
    assert before <= 14 and kt.k_max >= 16 and _k_order_violations(kt) == 0


def test_triangle_free_and_empty_graphs(device):
    """Truss number 2 without triangles, k_max 0 without edges, both kept through batches."""
    g = hornet.Graph(directed=False, device=device)
    kt = DynamicTruss(g, **MODES["dynamic"])
    assert kt.k_max == 0 and len(to_host(kt.truss_numbers)) == 0
    kt.update(g.insert_edges(_arr(device, [0, 1, 2]), _arr(device, [1, 2, 3])))
    assert kt.k_max == 2
    _assert_static(kt, g)
    kt.update(g.insert_edges(_arr(device, [0]), _arr(device, [2])))
    assert kt.k_max == 3
    _assert_static(kt, g)
    s, e = g.edges()
    kt.update(g.delete_edges(s, e))
    assert kt.k_max == 0
    assert _pairs(kt.k_truss(2)) == []


def test_directed_graph(device):
    """Directed: a pair stored in both directions is one undirected edge; deleting one
    direction keeps it, deleting both removes it; self-loops get 0 and stay out of k-trusses."""
    g = hornet.Graph(directed=True, device=device)
    s, d = _clique(range(5))
    g.insert_edges(_arr(device, s + d + [2]), _arr(device, d + s + [2]))   # K5 both ways + loop
    kt = DynamicTruss(g, **MODES["dynamic"])
    _assert_static(kt, g)
    assert kt.k_max == 5
    kt.update(g.delete_edges(_arr(device, [0]), _arr(device, [1])))     # 1->0 remains
    _assert_static(kt, g)
    assert kt.k_max == 5
    kt.update(g.delete_edges(_arr(device, [1]), _arr(device, [0])))     # now {0, 1} is gone
    _assert_static(kt, g)
    assert kt.k_max == 4
    kt.update(g.insert_edges(_arr(device, [1, 5, 5, 5]), _arr(device, [0, 0, 1, 2])))
    _assert_static(kt, g)
    assert 0 in to_host(kt.truss_numbers).tolist()                     # the self-loop


def test_bad_changes_refused(device):
    """Not an EdgeChange, or one of another device: ValueError, state unchanged."""
    g = hornet.Graph(directed=False, device=device)
    s, d = _clique(range(4))
    g.insert_edges(_arr(device, s), _arr(device, d))
    kt = DynamicTruss(g)
    other = hornet.Graph(directed=False, device="cpu" if device == "gpu" else device)
    foreign = other.insert_edges(np.array([0]), np.array([1]))
    with pytest.raises(ValueError):
        kt.update("not a change")
    if device == "gpu":
        with pytest.raises(ValueError):
            kt.update(foreign)
    _assert_static(kt, g)


def test_dynamic_path_is_taken():
    """CPU, default thresholds: small batches on a real graph much larger than them go
    through the region algorithms, never the static fallback (even deletions inside its
    44-clique, which lower the numbers of all its edges), and equal the static result."""
    s, d = _real_graph("ca-GrQc.txt.gz")
    rng = np.random.default_rng(11)
    g = hornet.Graph.from_edges(np.asarray(s), np.asarray(d), device="cpu")
    n = g.num_vertices
    kt = DynamicTruss(g)
    paths = []
    for step in range(12):
        if step % 2 == 0:
            change = g.insert_edges(np.asarray(rng.integers(0, n, 5)),
                                    np.asarray(rng.integers(0, n, 5)))
        else:
            gs, gd = g.edges()
            pick = np.asarray(rng.integers(0, len(to_host(gs)), 5))
            change = g.delete_edges(gs[pick], gd[pick])
        kt.update(change)
        paths.append(kt.stats["path"])
        _assert_static(kt, g)
    assert paths.count("dynamic") == 12, paths


def _real_graph(name):
    path = DATA_DIR / name
    if not path.exists():
        pytest.skip(f"{name} not in {DATA_DIR}")
    from hornet.io import read_edges
    s, d, _ = read_edges(path)
    return s, d


@pytest.mark.parallel_kernels
@pytest.mark.parametrize("mode", ["dynamic", "default"])
def test_real_graph_batches(device, mode):
    """ca-GrQc: random insertion and deletion batches (10 to 300 edges), equal to the static
    decomposition after each; then deleting the vertices of the max truss lowers k_max."""
    s, d = _real_graph("ca-GrQc.txt.gz")
    rng = np.random.default_rng(5)
    g = hornet.Graph.from_edges(_arr(device, s), _arr(device, d), device=device)
    kw = MODES[mode]
    kt = DynamicTruss(g, **kw)
    _assert_static(kt, g)
    n = g.num_vertices
    for size in (10, 100, 300):
        gs, gd = g.edges()
        # new edges inside dense neighbourhoods: endpoints of existing edges, rewired
        a = rng.integers(0, len(to_host(gs)), size)
        b = rng.integers(0, len(to_host(gs)), size)
        kt.update(g.insert_edges(gs[_arr(device, a)], gd[_arr(device, b)]))
        _assert_static(kt, g)
        kt.update(g.insert_edges(_arr(device, rng.integers(0, n, size)),
                                 _arr(device, rng.integers(0, n, size))))
        _assert_static(kt, g)
        gs, gd = g.edges()
        pick = _arr(device, rng.integers(0, len(to_host(gs)), size))
        kt.update(g.delete_edges(gs[pick], gd[pick]))
        _assert_static(kt, g)
    k_before = kt.k_max
    _, ts, td = max_truss(g)
    kt.update(g.delete_vertices(_arr(device, np.unique(to_host(ts))[:3])))
    _assert_static(kt, g)
    assert kt.k_max <= k_before
