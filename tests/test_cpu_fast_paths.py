"""The CPU fast paths of the batch pipeline (the fused plan_insert / merge_insert of every CPU
graph's insert, and the planned delete plan_delete / remove_fused, the oracle of the graphs'
delete in hornet.batch.cpu.remove_first) against a Python set model, and against the general
pipeline (the GPU's)."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.batch import cpu as K


def _model(g):
    s, d = g.edges()
    edges = set(zip(s.tolist(), d.tolist()))
    if not g.directed:
        edges |= {(b, a) for a, b in edges}
    return edges


def _expected_insert(model, s, d, directed):
    """Apply a batch to the set model; return the change the graph must report."""
    new = []
    for a, b in zip(s.tolist(), d.tolist()):
        if not directed and a == b:
            continue
        if (a, b) in model:
            continue
        model.add((a, b))
        if not directed:
            model.add((b, a))
        new.append((min(a, b), max(a, b)) if not directed else (a, b))
    return sorted(new)


def _batch(rng, g, size, n_ids):
    """Random pairs, some already in the graph, some repeated inside the batch."""
    s = rng.integers(0, n_ids, size)
    d = rng.integers(0, n_ids, size)
    es, ed = g.edges()
    if es.size and size:
        p = rng.integers(0, es.size, max(1, size // 4))
        flip = rng.random(p.size) < 0.5           # undirected: either direction
        s = np.r_[s, np.where(flip, ed[p], es[p])]
        d = np.r_[d, np.where(flip, es[p], ed[p])]
        r = rng.integers(0, s.size, max(1, size // 8))
        s, d = np.r_[s, s[r]], np.r_[d, d[r]]
        perm = rng.permutation(s.size)
        s, d = s[perm], d[perm]
    return s, d


# Graph._defer_full_present settings: full lists always searched by the plan / never
SEARCH_FULL, DEFER_FULL = -1.0, 2.0


@pytest.mark.parametrize("directed", [False, True])
# the largest batches run the parallel twins (the sort kernels run them at any size)
@pytest.mark.parametrize("size", [1, 7, 300, pytest.param(20_000, marks=pytest.mark.parallel_kernels)])
@pytest.mark.parametrize("min_block", [1, 4])
@pytest.mark.parametrize("full_lists", [SEARCH_FULL, DEFER_FULL])
def test_fused_insert_matches_set_model(directed, size, min_block, full_lists, monkeypatch):
    monkeypatch.setattr(hornet.Graph, "_defer_full_present", full_lists)
    rng = np.random.default_rng(size * 7 + min_block + directed)
    n = 3000
    s0 = rng.integers(0, n, 6 * n)
    d0 = (s0 + rng.zipf(1.6, s0.size)) % n             # skewed degrees: hubs and leaves
    g = hornet.Graph.from_edges(s0, d0, directed=directed, device="cpu",
                                min_block_size=min_block)
    model = _model(g)
    for step in range(6):
        s, d = _batch(rng, g, size, n + 50 * step)      # ids past the graph's grow it
        want = _expected_insert(model, s, d, directed)
        change = g.insert_edges(s, d)
        got = list(zip(change.src.tolist(), change.dst.tolist()))
        assert got == want
        assert change.src.dtype == np.int32 and change.dst.dtype == np.int32
        if not directed:
            assert change.self_loops_skipped == int((s == d).sum())
        g.check()
        assert _model(g) == model
        assert g.num_edges == (len(model) if directed else len(model) // 2)
        if step % 2:                                    # shrink some lists again
            es, ed = g.edges()
            p = rng.choice(es.size, es.size // 3, replace=False)
            gone = g.delete_edges(es[p], ed[p])
            for a, b in zip(gone.src.tolist(), gone.dst.tolist()):
                model.discard((a, b))
                if not directed:
                    model.discard((b, a))
            g.check()
            assert _model(g) == model


@pytest.mark.parallel_kernels
@pytest.mark.parametrize("directed", [False, True])
def test_fused_insert_equals_general_pipeline(directed, monkeypatch):
    rng = np.random.default_rng(11 + directed)
    n = 20_000
    s0, d0 = rng.integers(0, n, 80_000), rng.integers(0, n, 80_000)
    fused = hornet.Graph.from_edges(s0, d0, directed=directed, device="cpu")
    general = fused.copy()
    for step in range(4):
        s, d = _batch(rng, fused, 30_000, n)
        a = fused.insert_edges(s, d)
        monkeypatch.setattr(hornet.Graph, "_fused_insert", False)
        b = general.insert_edges(s, d)
        monkeypatch.setattr(hornet.Graph, "_fused_insert", True)
        np.testing.assert_array_equal(a.src, b.src)
        np.testing.assert_array_equal(a.dst, b.dst)
        assert a.self_loops_skipped == b.self_loops_skipped and a.kind == b.kind == "insert"
        fused.check()
        for x, y in zip(fused.to_csr(), general.to_csr()):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(fused.degree(), general.degree())
        assert fused.memory_stats()["edge_bytes"] == general.memory_stats()["edge_bytes"]


def _used_blocks(g):
    return {k: c["used_blocks"] for k, c in g.memory_stats()["size_classes"].items()}


@pytest.mark.parametrize("full_lists", [SEARCH_FULL, DEFER_FULL])
def test_fused_insert_of_present_edges_changes_nothing(full_lists, monkeypatch):
    """Deferred full lists get blocks planned for every entry; they all stay and every such
    block goes back (the block arrays made for them may remain as spares)."""
    monkeypatch.setattr(hornet.Graph, "_defer_full_present", full_lists)
    rng = np.random.default_rng(3)
    g = hornet.Graph.from_edges(rng.integers(0, 500, 4000), rng.integers(0, 500, 4000),
                                directed=False, device="cpu")
    before = g.to_csr(), g.memory_stats(), _used_blocks(g)
    s, d = g.edges()
    change = g.insert_edges(np.r_[s, d], np.r_[d, s])       # every edge, both directions
    assert len(change) == 0
    g.check()
    for x, y in zip(before[0], g.to_csr()):
        np.testing.assert_array_equal(x, y)
    assert _used_blocks(g) == before[2]
    if full_lists == SEARCH_FULL:
        assert g.memory_stats()["reserved_bytes"] == before[1]["reserved_bytes"]


def test_full_lists_are_deferred_while_few_entries_are_present(monkeypatch):
    """A new graph's first fused insert searches its full lists; one that found few of its
    entries present lets the next defer them; one that found many turns deferral off."""
    seen = []
    plan = K.plan_insert

    def spy(*args, **kw):
        seen.append(kw["defer_full"])
        return plan(*args, **kw)

    monkeypatch.setattr(K, "plan_insert", spy)
    rng = np.random.default_rng(8)
    n = 5000
    g = hornet.Graph(directed=False, device="cpu")
    g.insert_edges(rng.integers(0, n, 20_000), rng.integers(0, n, 20_000))   # searched
    g.insert_edges(rng.integers(0, n, 3000), rng.integers(0, n, 3000))   # deferred
    s, d = g.edges()
    g.insert_edges(s[:3000], d[:3000])                  # deferred; all present
    g.insert_edges(rng.integers(0, n, 3000), rng.integers(0, n, 3000))   # searched again
    g.insert_edges(rng.integers(0, n, 3000), rng.integers(0, n, 3000))   # deferred
    assert seen == [False, True, True, False, True]
    g.check()


def test_fused_insert_with_a_property():
    g = hornet.Graph(directed=False, device="cpu", edge_properties={"w": np.float32})
    c = g.insert_edges([0, 1, 1, 2], [1, 2, 2, 2], w=[0.5, 1.5, 9.0, 3.0])
    assert list(zip(c.src.tolist(), c.dst.tolist())) == [(0, 1), (1, 2)]
    np.testing.assert_array_equal(c.properties["w"], np.array([0.5, 1.5], np.float32))
    c = g.insert_edges([2, 0, 3], [1, 3, 1], w=[7.0, 2.5, 4.0])   # (2, 1) is present
    assert list(zip(c.src.tolist(), c.dst.tolist())) == [(0, 3), (1, 3)]
    np.testing.assert_array_equal(c.properties["w"], np.array([2.5, 4.0], np.float32))
    nbrs, props = g.neighbors(1)
    assert nbrs.tolist() == [0, 2, 3] and props["w"].tolist() == [0.5, 1.5, 4.0]
    c = g.delete_edges([1, 3, 2], [0, 0, 0])                     # (2, 0) is absent
    assert list(zip(c.src.tolist(), c.dst.tolist())) == [(0, 1), (0, 3)]
    np.testing.assert_array_equal(c.properties["w"], np.array([0.5, 2.5], np.float32))
    assert g.neighbors(1)[1]["w"].tolist() == [1.5, 4.0]
    g.check()


PROPERTIES = {"w": np.float64, "t": np.int8, "h": np.int16, "u": np.uint16, "f": np.float32}


def _property_values(rng, m):
    return {"w": rng.random(m), "t": rng.integers(-100, 100, m).astype(np.int8),
            "h": rng.integers(-9000, 9000, m).astype(np.int16), "u": rng.integers(0, 60000, m).astype(np.uint16),
            "f": rng.random(m).astype(np.float32)}


@pytest.mark.parallel_kernels
@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("full_lists", [SEARCH_FULL, DEFER_FULL])
def test_fused_pipelines_with_properties_equal_general_pipeline(directed, full_lists,
                                                                monkeypatch):
    """Every edge field (itemsizes 8, 1, 2, 2, 4) is merged and compacted like the
    destinations, and the changes carry the inserted / deleted edges' values. Searching
    the full lists, the fused insert reserves exactly the general pipeline's memory;
    deferring them, a list that moves takes the class of its whole segment (larger when some
    of its entries were present)."""
    monkeypatch.setattr(hornet.Graph, "_defer_full_present", full_lists)
    rng = np.random.default_rng(31 + directed)
    n = 6000
    s0 = rng.integers(0, n, 40_000)
    d0 = (s0 + rng.zipf(1.5, s0.size)) % n
    fused = hornet.Graph.from_edges(s0, d0, directed=directed, device="cpu",
                                    **_property_values(rng, s0.size))
    general = fused.copy()

    def both(op, *args, **kw):
        a = getattr(fused, op)(*args, **kw)
        monkeypatch.setattr(hornet.Graph, "_fused_insert", False)
        monkeypatch.setattr(hornet.Graph, "_fused_delete", False)
        b = getattr(general, op)(*args, **kw)
        monkeypatch.setattr(hornet.Graph, "_fused_insert", True)
        monkeypatch.setattr(hornet.Graph, "_fused_delete", True)
        np.testing.assert_array_equal(a.src, b.src)
        np.testing.assert_array_equal(a.dst, b.dst)
        assert sorted(a.properties) == sorted(b.properties) == sorted(PROPERTIES)
        for name in PROPERTIES:
            assert a.properties[name].dtype == np.dtype(PROPERTIES[name])
            np.testing.assert_array_equal(a.properties[name], b.properties[name])
        return a

    for step in range(4):
        s, d = _batch(rng, fused, 15_000, n + 10 * step)
        assert len(both("insert_edges", s, d, **_property_values(rng, s.size)))
        s, d = _delete_batch(rng, fused, (0.1, 0.5, 0.85, 0.3)[step], n)
        assert len(both("delete_edges", s, d))
        fused.check()
        fe, ge = fused.edges(properties=True), general.edges(properties=True)
        np.testing.assert_array_equal(fe[0], ge[0])
        np.testing.assert_array_equal(fe[1], ge[1])
        for name in PROPERTIES:
            np.testing.assert_array_equal(fe[2][name], ge[2][name])
        stats = fused.memory_stats(), general.memory_stats()
        assert stats[0]["edge_bytes"] == stats[1]["edge_bytes"]
        if full_lists == SEARCH_FULL:
            assert stats[0]["reserved_bytes"] == stats[1]["reserved_bytes"]


def test_plan_and_merge_kernels_against_numpy():
    """plan_insert + merge_insert on hand-made lists: positions, new degrees, classes."""
    rng = np.random.default_rng(5)
    g = hornet.Graph.from_edges(rng.integers(0, 200, 3000), rng.integers(0, 200, 3000),
                                directed=True, device="cpu")
    s, d = rng.integers(0, 200, 5000), rng.integers(0, 200, 5000)
    _, ss, dd, _ = K.sorted_unique_pairs(s, d, 200, False, False)
    deg = g._degree.copy()
    plan = K.plan_insert(ss, dd, g._degree, g._size_class, g._edge_ptr, 200,
                         g._mm.min_size_class)
    sources, seg_start, old_deg, old_ptr, new_deg, new_class, pos, requests = plan
    for counted, recounted in zip(requests, K.block_requests(new_class, old_ptr)):
        np.testing.assert_array_equal(counted, recounted)
    assert requests[0].sum() == (new_class >= 0).sum() > 0
    seg_len = np.diff(seg_start)
    np.testing.assert_array_equal(sources, np.unique(ss))
    np.testing.assert_array_equal(old_deg, deg[sources])
    cap = np.where(g._size_class[sources] >= 0, 1 << g._size_class[sources].astype(np.int64), 0)
    unsearched = new_deg < 0
    fits = old_deg + seg_len <= cap
    np.testing.assert_array_equal(unsearched, (old_deg > 0) & fits)
    want_pos = K.find_positions(ss, dd, g._degree, g._edge_ptr, 200).copy()
    searched = np.repeat(~unsearched, seg_len)
    np.testing.assert_array_equal(pos[searched], want_pos[searched])
    absent = np.add.reduceat(want_pos < 0, seg_start[:-1])
    moves = old_deg + absent > cap
    np.testing.assert_array_equal(new_class >= 0, moves)
    np.testing.assert_array_equal(new_class[moves], _classes(old_deg + absent)[moves])

    # deferred full lists: unsearched, with a block planned for every entry of the segment
    deferred = K.plan_insert(ss, dd, g._degree, g._size_class, g._edge_ptr, 200,
                             g._mm.min_size_class, defer_full=True)
    d_new_deg, d_new_class, d_requests = deferred[4], deferred[5], deferred[7]
    np.testing.assert_array_equal(d_new_deg < 0, old_deg > 0)
    np.testing.assert_array_equal(d_new_deg[old_deg == 0], seg_len[old_deg == 0])
    full = (old_deg > 0) & ~fits
    assert full.any() and (moves & ~full).sum() == (moves & (old_deg == 0)).sum()
    np.testing.assert_array_equal(d_new_class >= 0, (old_deg == 0) | full)
    np.testing.assert_array_equal(d_new_class[full], _classes(old_deg + seg_len)[full])
    for counted, recounted in zip(d_requests, K.block_requests(d_new_class, old_ptr)):
        np.testing.assert_array_equal(counted, recounted)


def _classes(d):
    """Smallest size class holding ``d`` edges (min block size 1)."""
    return np.ceil(np.log2(np.maximum(d, 1))).astype(np.int64)


# ---------------------------------------------------------------------------- fused delete
def _expected_delete(model, s, d, directed):
    """Apply a delete batch to the set model; return the change the graph must report."""
    gone = set()
    for a, b in zip(s.tolist(), d.tolist()):
        if (a, b) not in model:
            continue
        model.discard((a, b))
        if not directed:
            model.discard((b, a))
        gone.add((min(a, b), max(a, b)) if not directed else (a, b))
    return sorted(gone)


def _delete_batch(rng, g, fraction, n_ids):
    """A ``fraction`` of the graph's edges (either direction), absent pairs, ids past the
    graph's, and repeats, shuffled."""
    es, ed = g.edges()
    p = rng.choice(es.size, int(es.size * fraction), replace=False) if es.size else []
    flip = rng.random(len(p)) < 0.5
    s = np.r_[np.where(flip, ed[p], es[p]), rng.integers(0, n_ids + 20, 50)]
    d = np.r_[np.where(flip, es[p], ed[p]), rng.integers(0, n_ids + 20, 50)]
    if s.size:
        r = rng.integers(0, s.size, max(1, s.size // 8))
        s, d = np.r_[s, s[r]], np.r_[d, d[r]]
    perm = rng.permutation(s.size)
    return s[perm], d[perm]


def _assert_no_oversized_block(g):
    """No list fills under a quarter of its block where a smaller class would hold it (the
    shrink rule of deletes; check() allows any block that holds the list)."""
    n = g.num_vertices
    deg = g._degree[:n].astype(np.int64)
    cls = g._size_class[:n].astype(np.int64)
    live = deg > 0
    smallest = np.maximum(np.ceil(np.log2(np.maximum(deg, 1))).astype(np.int64),
                          g._mm.min_size_class)
    loose = live & (4 * deg < (1 << np.maximum(cls, 0))) & (smallest < cls)
    assert not loose.any(), f"vertices {np.flatnonzero(loose)[:5]} kept oversized blocks"


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("fraction", [0.001, 0.2, 0.8])
@pytest.mark.parametrize("min_block", [1, 4])
def test_fused_delete_matches_set_model(directed, fraction, min_block):
    rng = np.random.default_rng(int(fraction * 1000) + min_block + directed)
    n = 3000
    s0 = rng.integers(0, n, 8 * n)
    d0 = (s0 + rng.zipf(1.6, s0.size)) % n             # skewed degrees: hubs and leaves
    g = hornet.Graph.from_edges(s0, d0, directed=directed, device="cpu",
                                min_block_size=min_block)
    model = _model(g)
    for step in range(5):
        s, d = _delete_batch(rng, g, fraction, n)
        want = _expected_delete(model, s, d, directed)
        change = g.delete_edges(s, d)
        got = list(zip(change.src.tolist(), change.dst.tolist()))
        assert got == want and change.kind == "delete"
        assert change.src.dtype == np.int32 and change.dst.dtype == np.int32
        g.check()
        _assert_no_oversized_block(g)
        assert _model(g) == model
        assert g.num_edges == (len(model) if directed else len(model) // 2)
        if step % 2:                                    # regrow some lists
            s, d = _batch(rng, g, 2000, n)
            want = _expected_insert(model, s, d, directed)
            assert len(g.insert_edges(s, d)) == len(want)
    s, d = g.edges()                                    # empty it: every block goes back
    m = g.num_edges
    assert len(g.delete_edges(s, d)) == m
    g.check()
    assert g.num_edges == 0 and g.memory_stats()["edge_bytes"] == 0


@pytest.mark.parallel_kernels
@pytest.mark.parametrize("directed", [False, True])
def test_fused_delete_equals_general_pipeline(directed, monkeypatch):
    rng = np.random.default_rng(21 + directed)
    n = 20_000
    s0 = rng.integers(0, n, 150_000)
    d0 = (s0 + rng.zipf(1.4, s0.size)) % n
    fused = hornet.Graph.from_edges(s0, d0, directed=directed, device="cpu")
    general = fused.copy()
    for step, fraction in enumerate((0.05, 0.3, 0.6, 0.9)):
        s, d = _delete_batch(rng, fused, fraction, n)
        a = fused.delete_edges(s, d)
        monkeypatch.setattr(hornet.Graph, "_fused_delete", False)
        b = general.delete_edges(s, d)
        monkeypatch.setattr(hornet.Graph, "_fused_delete", True)
        np.testing.assert_array_equal(a.src, b.src)
        np.testing.assert_array_equal(a.dst, b.dst)
        assert a.kind == b.kind == "delete" and not a.properties
        fused.check()
        for x, y in zip(fused.to_csr(), general.to_csr()):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(fused.degree(), general.degree())
        fs, gs = fused.memory_stats(), general.memory_stats()
        assert fs["edge_bytes"] == gs["edge_bytes"]
        assert fs["reserved_bytes"] == gs["reserved_bytes"]


def test_fused_delete_of_absent_edges_changes_nothing():
    rng = np.random.default_rng(4)
    g = hornet.Graph.from_edges(rng.integers(0, 500, 4000), rng.integers(0, 500, 4000),
                                directed=True, device="cpu")
    before = g.to_csr(), g.memory_stats()
    model = _model(g)
    s, d = rng.integers(0, 600, 20_000), rng.integers(0, 600, 20_000)
    absent = np.array([(a, b) not in model for a, b in zip(s.tolist(), d.tolist())])
    change = g.delete_edges(s[absent], d[absent])
    assert len(change) == 0
    g.check()
    for x, y in zip(before[0], g.to_csr()):
        np.testing.assert_array_equal(x, y)
    assert g.memory_stats() == before[1]


@pytest.mark.parametrize("small_path", ["always", "never"])
def test_delete_out_of_memory_keeps_the_list_in_its_block(monkeypatch, small_path):
    """A hub kept under a quarter of its block needs a smaller block; when that allocation
    fails the delete still goes through (on the small-batch path or not): the hub keeps its
    block, nothing is lost, and a later delete moves it once memory is there."""
    monkeypatch.setattr(hornet.core.jit, "optional_path_policy", small_path)
    g = hornet.Graph(directed=False, device="cpu", block_array_edges=64)
    g.insert_edges(np.zeros(60, dtype=np.int64), np.arange(1, 61))
    assert g._size_class[0] == 6
    real_init = hornet.memory.block_array.BlockArray.__init__
    refused = []

    def failing_init(self, size_class, num_blocks, dtypes, backend):
        if size_class == 4:
            refused.append(num_blocks)
            raise MemoryError("simulated")
        real_init(self, size_class, num_blocks, dtypes, backend)

    monkeypatch.setattr(hornet.memory.block_array.BlockArray, "__init__", failing_init)
    change = g.delete_edges(np.zeros(50, dtype=np.int64), np.arange(1, 51))
    monkeypatch.setattr(hornet.memory.block_array.BlockArray, "__init__", real_init)
    assert refused, "the delete never asked for the smaller block"
    assert len(change) == 50 and g._size_class[0] == 6 and g.degree(0) == 10
    g.check()
    src, dst = g.edges()
    np.testing.assert_array_equal(np.sort(dst[src == 0]), np.arange(51, 61))
    change = g.delete_edges([0], [51])
    assert len(change) == 1 and g._size_class[0] == 4 and g.degree(0) == 9
    g.check()


def test_plan_delete_kernel_against_numpy():
    """plan_delete on hand-made lists: which lists are searched, positions, moves."""
    rng = np.random.default_rng(6)
    g = hornet.Graph.from_edges(rng.integers(0, 200, 6000), rng.integers(0, 200, 6000),
                                directed=True, device="cpu")
    es, ed = g.edges()
    p = rng.choice(es.size, es.size // 2, replace=False)
    s, d = np.r_[es[p], rng.integers(0, 200, 300)], np.r_[ed[p], rng.integers(0, 200, 300)]
    _, ss, dd, _ = K.sorted_unique_pairs(s, d, 200, False, False)
    deg, cls = g._degree.copy(), g._size_class.astype(np.int64)
    sources, seg_start, old_deg, old_ptr, new_deg, new_class, pos = K.plan_delete(
        ss, dd, g._degree, g._size_class, g._edge_ptr, 200, g._mm.min_size_class)
    np.testing.assert_array_equal(g._degree, deg)       # nothing written
    seg_len = np.diff(seg_start)
    np.testing.assert_array_equal(sources, np.unique(ss))
    np.testing.assert_array_equal(old_deg, deg[sources])
    c = cls[sources]
    fewest = np.maximum(old_deg - seg_len, 1)
    smallest = np.maximum(np.ceil(np.log2(np.maximum(fewest, 1))).astype(np.int64), 0)
    may_move = (old_deg > 0) & (4 * fewest < (1 << np.maximum(c, 0))) & (smallest < c)
    np.testing.assert_array_equal(new_deg < 0, (old_deg > 0) & ~may_move)
    want_pos = K.find_positions(ss, dd, g._degree, g._edge_ptr, 200).copy()
    searched = np.repeat(may_move, seg_len)
    np.testing.assert_array_equal(pos[searched], want_pos[searched])
    present = np.add.reduceat((want_pos >= 0).astype(np.int64), seg_start[:-1])
    d1 = old_deg - present
    np.testing.assert_array_equal(new_deg[may_move], d1[may_move])
    fits = np.maximum(np.ceil(np.log2(np.maximum(d1, 1))).astype(np.int64), 0)
    moves = may_move & (d1 > 0) & (4 * d1 < (1 << np.maximum(c, 0))) & (fits < c)
    np.testing.assert_array_equal(new_class >= 0, moves)
    np.testing.assert_array_equal(new_class[moves], fits[moves])


@pytest.mark.parametrize("build", ["from_edges", "from_csr", "from_scipy", "from_networkx"])
def test_builders_take_memory_settings_not_as_properties(build):
    """min_block_size / block_array_edges reach the memory manager (they once became edge
    properties named after them, which also sent these tests down the general pipeline)."""
    import networkx as nx
    import scipy.sparse as sp
    s, d = np.array([0, 0, 1, 2]), np.array([1, 2, 2, 0])
    settings = dict(device="cpu", min_block_size=4, block_array_edges=64)
    if build == "from_edges":
        g = hornet.Graph.from_edges(s, d, directed=True, **settings)
    elif build == "from_csr":
        g = hornet.Graph.from_csr(np.array([0, 2, 3, 4]), d, directed=True, **settings)
    elif build == "from_scipy":
        g = hornet.Graph.from_scipy(sp.coo_matrix((np.ones(4), (s, d)), shape=(3, 3)),
                                    directed=True, **settings)
    else:
        g = hornet.Graph.from_networkx(nx.DiGraph(list(zip(s.tolist(), d.tolist()))),
                                       **settings)
    assert sorted(zip(*(a.tolist() for a in g.edges()))) == sorted(zip(s.tolist(),
                                                                        d.tolist()))
    assert g.edges(properties=True)[2] == {}
    assert g._mm.min_size_class == 2
    assert set(g._size_class[:3].tolist()) == {2}
    g.check()
