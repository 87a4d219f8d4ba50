"""DynamicTruss on scripted batches (CPU and GPU), equal to the static functions on the same
graph state after every batch: truss numbers, k_max, k-truss edge lists; on the CPU also the
k-order and level-count invariants, counted by brute force.

Every scenario runs twice where it matters: with the static fallback disabled (so the
dynamic region algorithms decide every batch) and with the default fallback. The state
machine is in test_dynamic_truss_machine.py, the real graphs in test_dynamic_truss_real.py.
"""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.algos.ktruss.dynamic import DynamicTruss
from hornet.testing import to_host

from truss_checks import MODES
from truss_checks import arr as _arr, assert_static as _assert_static, clique as _clique
from truss_checks import pairs as _pairs
from truss_checks import k_order_violations as _k_order_violations
from truss_checks import level_count_violations as _level_count_violations

# ------------------------------------------------------------------ scripted batches


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


def _use_driver(device, driver, monkeypatch) -> None:
    """The GPU version's insertion method and drivers: "raise" (certified raise and descent,
    one launch per phase), "raise-device" (the same in one cooperative launch per update,
    deletions likewise), "device" (the scan from the new edges' lower bounds over every level
    at once in one cooperative launch per update, deletions likewise), "device-from-2" (the
    level-by-level scan in one launch with every new edge started at level 2) or "rounds" (the scan from the lower bounds, one launch
    per phase); the CPU version runs once (as "device")."""
    if device == "cpu" and driver != "device":
        pytest.skip("the GPU version's insertion methods and drivers")
    if device == "gpu":
        from hornet.algos.ktruss import dynamic_gpu
        monkeypatch.setattr(dynamic_gpu, "INSERT_BY_RAISE", driver in ("raise", "raise-device"))
        monkeypatch.setattr(dynamic_gpu, "DEVICE_SCAN_INSERT",
                            driver in ("device", "device-from-2"))
        monkeypatch.setattr(dynamic_gpu, "START_AT_LOWER_BOUND", driver != "device-from-2")
        monkeypatch.setattr(dynamic_gpu, "LEVELS_AT_ONCE", driver == "device")
        monkeypatch.setattr(dynamic_gpu, "DEVICE_SCAN_RAISE", driver == "raise-device")
        monkeypatch.setattr(dynamic_gpu, "DEVICE_SCAN_DELETE",
                            driver in ("device", "device-from-2", "raise-device"))


@pytest.mark.parametrize("counts", ["pass", "lazy"])
@pytest.mark.parametrize("driver", ["raise", "raise-device", "device", "device-from-2",
                                    "rounds"])
@pytest.mark.parametrize("seed", [1, 2])
def test_k_order_kept(device, seed, driver, counts, monkeypatch):
    """After every batch (inserts, deletes, re-inserts of 1 to 30 edges in a dense random
    graph, so numbers rise and fall by several levels and inserted edges share triangles),
    the numbers equal the static decomposition, every batch goes through the region
    algorithms, the k-order that insertions scan still satisfies its invariant, and (CPU)
    the level counts that deletions keep are lower bounds of the true ones (exact when
    counted). The CPU object counts them at its first deletion (none after the build, so that
    a graph that only grows never counts them; ``counts`` "pass") or never, its deletions
    recounting the edges they meet without a count ("lazy": the whole-graph pass priced
    out); a second CPU object counted right after the build checks the counting pass itself. GPU: insertions by the certified raise and descent
    ("raise"), and by the level scan in one cooperative launch per update ("device") or one
    launch per phase ("rounds")."""
    cpu = device == "cpu"
    if not cpu and counts == "lazy":
        pytest.skip("level counts are the CPU object's")
    _use_driver(device, driver, monkeypatch)
    monkeypatch.setattr("hornet.algos.ktruss.level_counts.LEVEL_PASS_SHARE",
                        0.0 if counts == "pass" else 1e30)
    rng = np.random.default_rng(seed)
    n = 40
    g = hornet.Graph(directed=False, device=device)
    g.insert_edges(_arr(device, rng.integers(0, n, 400)), _arr(device, rng.integers(0, n, 400)))
    kt = DynamicTruss(g, **MODES["dynamic"])
    assert _k_order_violations(kt) == 0
    counted = []
    if cpu:
        assert kt._pass.due
        counted = [DynamicTruss(g, **MODES["dynamic"])]
        counted[0]._full_level_counts()
        assert _level_count_violations(counted[0], exact=True) == 0
    gone = None
    for step in range(45):
        b = int(rng.integers(1, 31))
        kind = step % 3
        if kind == 0:
            change = g.insert_edges(_arr(device, rng.integers(0, n, b)),
                                    _arr(device, rng.integers(0, n, b)))
        elif kind == 1:
            gs, gd = g.edges()
            pick = _arr(device, rng.choice(gs.shape[0], min(b, gs.shape[0]), replace=False))
            gone = gs[pick], gd[pick]
            change = g.delete_edges(*gone)
        else:
            change = g.insert_edges(*gone)
        for obj in [kt] + counted:
            obj.update(change)
            assert obj.stats["path"] in ("dynamic", "none")
            _assert_static(obj, g)
            assert _k_order_violations(obj) == 0, step
            assert not cpu or _level_count_violations(obj) == 0, step
        # counted at the first deletion, or never
        assert not cpu or kt._pass.due == (step == 0 or counts == "lazy")
    # a K16 completed in one batch on 16 vertices of the graph: k_max rises by several levels
    before = kt.k_max
    s, d = _clique(range(0, 32, 2))
    kt.update(g.insert_edges(_arr(device, s), _arr(device, d)))
    _assert_static(kt, g)
    assert before <= 14 and kt.k_max >= 16 and _k_order_violations(kt) == 0


@pytest.mark.parametrize("driver", ["raise", "raise-device", "device", "device-from-2",
                                    "rounds"])
def test_hub_edges_climb_many_levels(device, driver, monkeypatch):
    """Two hubs adjacent to each other and to 618 vertices (a dense core among 60 of them):
    the hub edge lies in 618 triangles (a list that several warps share on the GPU) and
    climbs many levels when re-inserted with hub edges of the core.
    After every batch (deletions and re-insertions of hub and core edges, a clique on core
    vertices) the numbers equal the static decomposition and the k-order invariant holds,
    every batch through the region algorithms. GPU: insertions by the certified raise and
    descent (one launch per phase, "raise", or one cooperative launch, "raise-device"), and by
    the level scan in one cooperative launch per update ("device") or one launch per phase
    ("rounds")."""
    _use_driver(device, driver, monkeypatch)
    rng = np.random.default_rng(7)
    n = 620
    src = [0] + [0] * (n - 2) + [1] * (n - 2)
    dst = [1] + list(range(2, n)) * 2
    core = [(u, v) for u in range(2, 62) for v in range(u + 1, 62) if rng.random() < 0.5]
    src += [u for u, _ in core]
    dst += [v for _, v in core]
    src += rng.integers(2, n, 1500).tolist()
    dst += rng.integers(2, n, 1500).tolist()
    g = hornet.Graph(directed=False, device=device)
    g.insert_edges(_arr(device, src), _arr(device, dst))
    kt = DynamicTruss(g, **MODES["dynamic"])
    hub = [(0, 1)] + [(h, int(w)) for h, w in zip(rng.integers(0, 2, 20),
                                                   rng.integers(2, 62, 20))]
    picked = [core[i] for i in rng.choice(len(core), 25, replace=False)]
    for batch in (hub, picked, hub + picked[:10]):
        s, d = _arr(device, [u for u, _ in batch]), _arr(device, [v for _, v in batch])
        kt.update(g.delete_edges(s, d))
        _assert_static(kt, g)
        kt.update(g.insert_edges(s, d))
        assert kt.stats["path"] == "dynamic"
        _assert_static(kt, g)
        assert _k_order_violations(kt) == 0
    s, d = _clique(range(2, 62, 5))
    kt.update(g.insert_edges(_arr(device, s), _arr(device, d)))
    _assert_static(kt, g)
    assert _k_order_violations(kt) == 0


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


@pytest.mark.parametrize("b", [1, 7, 300, 1024, 1025])
def test_small_batch_keys_equal_the_sorted_batch(device, b):
    """GPU: the batch adjacency that the truss object builds for a batch (one block up to
    SMALL_BATCH pairs, the sort above) has the keys of :func:`batch_adjacency` (a sort), for
    distinct random pairs with ids up to 2**31 - 1."""
    if device != "gpu":
        pytest.skip("the GPU version's batch keys")
    import cupy as cp
    from hornet.algos.batch_adjacency import batch_adjacency
    rng = np.random.default_rng(b)
    u = rng.integers(0, 2**31 - 1, 3 * b, dtype=np.int64)
    v = rng.integers(0, 2**31 - 1, 3 * b, dtype=np.int64)
    keep = u != v
    lo, hi = np.minimum(u, v)[keep], np.maximum(u, v)[keep]
    pairs = np.unique(np.stack([lo, hi], axis=1), axis=0)[:b]
    rng.shuffle(pairs)
    src, dst = (cp.asarray(pairs[:, i].astype(np.int32)) for i in (0, 1))
    g = hornet.Graph(directed=False, device=device)
    g.insert_edges(_arr(device, [0, 1, 2]), _arr(device, [1, 2, 0]))
    kt = DynamicTruss(g)
    got = kt._batch(src, dst)
    want = batch_adjacency(src, dst)
    assert np.array_equal(cp.asnumpy(got.keys), cp.asnumpy(want.keys))


def test_supports_after_updates_without_checks_between(device):
    """GPU: a dense random graph loses and gets back random edges, some updates following
    each other without a check between (the supports' update is queued behind the truss
    kernels, never waited for); after the checked ones the supports equal
    :func:`edge_support` (a static count) and the numbers the static decomposition."""
    if device != "gpu":
        pytest.skip("the GPU version's queued supports")
    from hornet.algos import edge_support
    rng = np.random.default_rng(9)
    n = 60
    iu = np.triu_indices(n, 1)
    keep = rng.random(iu[0].shape[0]) < 0.4
    s, d = iu[0][keep], iu[1][keep]
    g = hornet.Graph(directed=False, device=device)
    g.insert_edges(_arr(device, s), _arr(device, d))
    kt = DynamicTruss(g, **MODES["dynamic"])

    def check():
        assert np.array_equal(to_host(kt.support), to_host(edge_support(g)))
        _assert_static(kt, g)

    check()
    for step in range(6):
        pick = rng.choice(s.shape[0], int(rng.integers(1, 80)), replace=False)
        kt.update(g.delete_edges(_arr(device, s[pick]), _arr(device, d[pick])))
        if step % 2:
            check()
        kt.update(g.insert_edges(_arr(device, s[pick]), _arr(device, d[pick])))
        check()


@pytest.mark.parametrize("build", ["by-update", "static", "by-update-over-limit"])
def test_construction_paths(monkeypatch, build):
    """The CPU builds: all edges inserted into the empty state (graphs up to
    BUILD_BY_UPDATE_MAX_EDGES), the static decomposition, and an insertion that passes its
    work limit and falls back to the static decomposition. Each gives the static numbers
    and supports, a valid k-order, and goes on through dynamic batches (a large batch
    rebuilds the same way)."""
    from hornet.algos import edge_support
    from hornet.algos.ktruss import dynamic as dyn
    monkeypatch.setattr(dyn, "BUILD_BY_UPDATE_MAX_EDGES", -1 if build == "static" else 1 << 40)
    if build == "by-update-over-limit":
        monkeypatch.setattr(dyn, "BUILD_WORK_FACTOR", 0)
        monkeypatch.setattr(dyn, "STATIC_OVERHEAD", 10)
    rng = np.random.default_rng(4)
    n = 45
    g = hornet.Graph(directed=False, device="cpu")
    g.insert_edges(rng.integers(0, n, 500), rng.integers(0, n, 500))
    s, d = _clique(range(0, 27, 3))
    g.insert_edges(np.array(s), np.array(d))
    kt = DynamicTruss(g, **MODES["dynamic"])
    assert kt.stats["path"] == "build"
    _assert_static(kt, g)
    assert kt.k_max >= 9
    assert np.array_equal(kt.support, edge_support(g))
    assert _k_order_violations(kt) == 0
    for step in range(8):
        if step % 2 == 0:
            change = g.insert_edges(rng.integers(0, n, 12), rng.integers(0, n, 12))
        else:
            gs, gd = g.edges()
            pick = rng.choice(gs.shape[0], 12, replace=False)
            change = g.delete_edges(gs[pick], gd[pick])
        kt.update(change)
        assert kt.stats["path"] in ("dynamic", "none")
        _assert_static(kt, g)
        assert np.array_equal(kt.support, edge_support(g))
        assert _k_order_violations(kt) == 0
    kt.batch_share = 0.1
    kt.update(g.insert_edges(rng.integers(0, 2 * n, 400), rng.integers(0, 2 * n, 400)))
    assert kt.stats["path"] == "static"           # a large batch: the whole graph again
    _assert_static(kt, g)
    assert _k_order_violations(kt) == 0


@pytest.mark.parametrize("scan_large", [True, False])
def test_large_insert_batches_by_default(monkeypatch, scan_large):
    """batch_share None (CPU default): a batch as large as the graph takes the k-order scan
    on a graph up to SCAN_LARGE_BATCHES_MAX_EDGES edges, a rebuild above; both exact."""
    from hornet.algos.ktruss import dynamic as dyn
    monkeypatch.setattr(dyn, "SCAN_LARGE_BATCHES_MAX_EDGES", 1 << 40 if scan_large else -1)
    rng = np.random.default_rng(9)
    g = hornet.Graph(directed=False, device="cpu")
    g.insert_edges(rng.integers(0, 40, 300), rng.integers(0, 40, 300))
    kt = DynamicTruss(g, fallback_share=1e9)   # no time-based fallback: the path is the rule's
    for _ in range(3):
        kt.update(g.insert_edges(rng.integers(0, 60, 300), rng.integers(0, 60, 300)))
        assert kt.stats["path"] == ("dynamic" if scan_large else "static")
        _assert_static(kt, g)
        assert _k_order_violations(kt) == 0


def test_an_update_that_compiles_teaches_no_work_rate(monkeypatch):
    """The seconds a unit of work costs (what decides a static fallback) are learned from
    updates that compiled nothing: a first run's kernel compile inside an update would make
    the following updates fall back to the static decomposition."""
    from hornet.algos.ktruss import budget
    from hornet.core import jit
    monkeypatch.setattr(budget, "LEARN_MIN_WORK", 1)
    monkeypatch.setattr(budget, "RATE_MIN_SHARE", 0)
    src, dst = hornet.generators.kronecker_edges(9, edge_factor=8, seed=1)
    g = hornet.Graph.from_edges(src, dst, directed=False, device="cpu")
    kt = DynamicTruss(g)
    rng = np.random.default_rng(0)

    def delete_some():
        s, d = g.edges()
        pick = rng.choice(s.shape[0], 20, replace=False)
        kt.update(g.delete_edges(s[pick], d[pick]))
        assert kt.stats["path"] != "static"
        _assert_static(kt, g)

    delete_some()
    learned = len(kt._budget.rates["delete"])
    assert learned == 1
    plain = DynamicTruss._delete

    def compiling(self, u, v):
        jit.record_compile(0.25)           # as a kernel's first compile inside the update
        return plain(self, u, v)

    monkeypatch.setattr(DynamicTruss, "_delete", compiling)
    delete_some()
    assert len(kt._budget.rates["delete"]) == learned
    monkeypatch.setattr(DynamicTruss, "_delete", plain)
    delete_some()
    assert len(kt._budget.rates["delete"]) == learned + 1
