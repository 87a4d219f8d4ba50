"""The CPU fast paths of the insert pipeline (fused plan_insert / merge_insert, used by graphs
without edge properties) against a Python set model, and against the general pipeline."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.batch import cpu_kernels as K


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


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("size", [1, 7, 300, 20_000])
@pytest.mark.parametrize("min_block", [1, 4])
def test_fused_insert_matches_set_model(directed, size, min_block):
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


def test_fused_insert_of_present_edges_changes_nothing():
    rng = np.random.default_rng(3)
    g = hornet.Graph.from_edges(rng.integers(0, 500, 4000), rng.integers(0, 500, 4000),
                                directed=False, device="cpu")
    before = g.to_csr(), g.memory_stats()
    s, d = g.edges()
    change = g.insert_edges(np.r_[s, d], np.r_[d, s])       # every edge, both directions
    assert len(change) == 0
    g.check()
    for x, y in zip(before[0], g.to_csr()):
        np.testing.assert_array_equal(x, y)
    assert g.memory_stats()["reserved_bytes"] == before[1]["reserved_bytes"]


def test_graph_with_edge_properties_keeps_general_path():
    g = hornet.Graph(directed=False, device="cpu", edge_properties={"w": np.float32})
    c = g.insert_edges([0, 1, 1, 2], [1, 2, 2, 2], w=[0.5, 1.5, 9.0, 3.0])
    assert list(zip(c.src.tolist(), c.dst.tolist())) == [(0, 1), (1, 2)]
    np.testing.assert_array_equal(c.properties["w"], np.array([0.5, 1.5], np.float32))
    g.check()


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
    sources, seg_start, old_deg, old_ptr, new_deg, new_class, pos = plan
    seg_len = np.diff(seg_start)
    np.testing.assert_array_equal(sources, np.unique(ss))
    np.testing.assert_array_equal(old_deg, deg[sources])
    cap = np.where(g._size_class[sources] >= 0, 1 << g._size_class[sources].astype(np.int64), 0)
    unsearched = new_deg < 0
    np.testing.assert_array_equal(unsearched, (old_deg > 0) & (old_deg + seg_len <= cap))
    want_pos = K.find_positions(ss, dd, g._degree, g._edge_ptr, 200).copy()
    searched = np.repeat(~unsearched, seg_len)
    np.testing.assert_array_equal(pos[searched], want_pos[searched])
