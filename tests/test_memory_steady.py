"""Steady churn (``Graph.steady_churn``): updates that delete about as much as they insert
give memory back in a wider band. Checked against a host oracle of the edges and their
property values, the graph's invariants, the band itself, and the tight policy once the
block is left (both backends)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hornet
from hornet.memory.list_fit import LOOSE_SHARE, STEADY_LOOSE_SHARE, ListFit
from hornet.memory.manager import MemoryManager


def _to_host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def _edge_dict(g) -> dict:
    s, d, p = g.edges(properties=True)
    return dict(zip(zip(_to_host(s).tolist(), _to_host(d).tolist()), _to_host(p["t"]).tolist()))


def _list_slots(g) -> int:
    return sum(c["used_blocks"] * c["block_size"]
               for c in g.memory_stats()["size_classes"].values())


def _window_churn(g, rng, n, m, batches, keep, steady, after_batch=None):
    """A sliding window over random batches: each batch of ``m`` random undirected pairs
    (property ``t``: the event index) is inserted, then the edges the batch ``keep``
    batches back inserted are deleted, both inside ``g.steady_churn()`` when ``steady``.
    Returns the oracle (edge -> t); ``after_batch(oracle)`` runs after every batch."""
    oracle, queue = {}, []
    for b in range(batches):
        s, d = rng.integers(0, n, m), rng.integers(0, n, m)
        ok = s != d
        s, d = np.minimum(s, d)[ok], np.maximum(s, d)[ok]
        t = np.arange(b * m, b * m + s.size, dtype=np.int64)
        with g.steady_churn() if steady else _nothing():
            c = g.insert_edges(s, d, t=t)
            for u, v, x in zip(s.tolist(), d.tolist(), t.tolist()):
                oracle.setdefault((u, v), x)
            queue.append((_to_host(c.src), _to_host(c.dst)))
            if len(queue) > keep:
                os_, od = queue.pop(0)
                g.delete_edges(os_, od)
                for u, v in zip(os_.tolist(), od.tolist()):
                    del oracle[(u, v)]
        if after_batch is not None:
            after_batch(oracle)
    return oracle


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(20, 400), m=st.integers(1, 600),
       keep=st.integers(1, 4), block=st.sampled_from([1 << 6, 1 << 9, 1 << 12]))
def test_steady_window_matches_the_oracle_and_keeps_the_band(seed, n, m, keep, block):
    """Inside steady churn every batch leaves the graph equal to the oracle (edges and
    property values) with its invariants intact, and the lists within the steady band of
    the reference measured at the last full scan; after the block, one more delete brings
    the lists back within the tight band of that reference."""
    g = hornet.Graph(directed=False, device="cpu", edge_properties={"t": np.int64},
                     block_array_edges=block)
    fit = g._mm.list_fit
    rng = np.random.default_rng(seed)

    def check(oracle):
        assert _edge_dict(g) == oracle
        g.check()
        if fit.slots_per_entry is not None and g._entries:
            assert _list_slots(g) <= (1 + STEADY_LOOSE_SHARE) * fit.slots_per_entry \
                * g._entries + 1e-9
    oracle = _window_churn(g, rng, n, m, 10, keep, True, check)
    # out of the block: a delete runs the tight policy again
    es, ed = (_to_host(a) for a in g.edges())
    gone = rng.random(es.size) < 0.1
    g.delete_edges(es[gone], ed[gone])
    for u, v in zip(es[gone].tolist(), ed[gone].tolist()):
        del oracle[(u, v)]
    assert _edge_dict(g) == oracle
    g.check()
    if g._entries:
        assert _list_slots(g) <= (1 + LOOSE_SHARE) * fit.slots_per_entry * g._entries + 1e-9


def test_steady_churn_moves_fewer_lists_for_the_same_graph(device, monkeypatch):
    """The same window churn (batches of about a twelfth of the graph) with and without the
    steady block: equal edges and values; inside the block the lists are refitted at most
    once (the first scan), without it at most deletes, and compaction moves no more
    blocks."""
    moved = {True: [], False: []}
    compacted = {True: [], False: []}
    original_refit = ListFit.refit
    original_compact = MemoryManager.compact_touched
    mode = [False]

    def refit(self, *a, **k):
        r = original_refit(self, *a, **k)
        moved[mode[0]].append(r)
        return r

    def compact(self, rows=0):
        old, new = original_compact(self, rows)
        compacted[mode[0]].append(int(old.size))
        return old, new
    monkeypatch.setattr(ListFit, "refit", refit)
    monkeypatch.setattr(MemoryManager, "compact_touched", compact)
    graphs = {}
    for steady in (False, True):
        mode[0] = steady
        g = hornet.Graph(directed=False, device=device, edge_properties={"t": np.int64},
                         block_array_edges=1 << 10)
        graphs[steady] = g
        _window_churn(g, np.random.default_rng(21), 4000, 1500, 24, 8, steady)
        g.check()
    assert _edge_dict(graphs[True]) == _edge_dict(graphs[False])
    assert sum(1 for r in moved[True] if r) <= 1
    assert sum(1 for r in moved[False] if r) >= 8          # the test needs the contrast
    assert sum(compacted[True]) <= sum(compacted[False])
    # the steady graph's lists stay within the band of fitting blocks (its reference)
    assert _list_slots(graphs[True]) <= (1 + STEADY_LOOSE_SHARE) * 1.01 \
        * graphs[True]._mm.list_fit.slots_per_entry * graphs[True]._entries


def test_steady_churn_keeps_the_room_of_a_growth_array(device, monkeypatch):
    """Inside steady churn on a graph with an array growth floor (``set_array_growth``, as
    a windowed GPU replay of small batches sets it), a class is not compacted for the free
    room of one growth array: once the window is full, classes are not compacted into exact
    arrays that the next growth array follows, so block arrays are seldom freed (41 of them
    in this churn when that room counts as under-use). Edges and values equal the oracle
    after every batch; invariants hold."""
    freed, on = [], [False]
    original = MemoryManager._arrays_changed

    def counting(self, created=(), freed_arrays=(), **kw):
        freed_arrays = kw.pop("freed", freed_arrays)
        if on[0]:
            freed.extend(freed_arrays)
        return original(self, created, freed_arrays)
    monkeypatch.setattr(MemoryManager, "_arrays_changed", counting)
    g = hornet.Graph(directed=False, device=device, edge_properties={"t": np.int64})
    g.set_array_growth(1 << 12)
    batches = [0]

    def check(oracle):
        batches[0] += 1
        on[0] = batches[0] >= 12                  # (the window of 8 batches full)
        assert _edge_dict(g) == oracle
    _window_churn(g, np.random.default_rng(3), 20000, 3000, 60, 8, True, check)
    g.check()
    assert len(freed) <= 10


def test_steady_blocks_nest_and_end():
    g = hornet.Graph(directed=False, device="cpu")
    mm = g._mm
    with g.steady_churn():
        with g.steady_churn():
            assert mm.steady == 2
        assert mm.steady == 1
    assert mm.steady == 0
    with pytest.raises(RuntimeError):
        with g.steady_churn():
            raise RuntimeError("inside")
    assert mm.steady == 0


def test_windowed_replay_updates_in_steady_churn(monkeypatch):
    """A replay with a window runs each batch's graph calls inside ``steady_churn``, one
    without a window does not; both replays' final edge sets equal the brute force."""
    from streams.replay import replay
    calls = []
    original = MemoryManager.steady_churn

    def counting(self):
        calls.append(1)
        return original(self)
    monkeypatch.setattr(MemoryManager, "steady_churn", counting)
    rng = np.random.default_rng(3)
    src, dst = rng.integers(0, 50, 400), rng.integers(0, 50, 400)
    res = replay({"src": src, "dst": dst}, batch_size=40, window=100, directed=False,
                 algos="none", device="cpu", verify=True)
    # every batch (the replay's warm-up on a scratch graph may add its own)
    assert res.summary["batches"] == 10 and len(calls) >= 10
    calls.clear()
    replay({"src": src, "dst": dst}, batch_size=40, directed=False, algos="none",
           device="cpu", verify=True)
    assert calls == []


def _hub_graph(device):
    """Vertex 0 joined to 3,000 others, and 20,000 random edges among vertices 1-5,000."""
    g = hornet.Graph(directed=False, device=device, block_array_edges=1 << 10)
    rng = np.random.default_rng(8)
    s, d = rng.integers(1, 5001, 20000), rng.integers(1, 5001, 20000)
    g.insert_edges(np.concatenate([np.zeros(3000, np.int64), s]),
                   np.concatenate([np.arange(1, 3001), d]))
    g.delete_edges(s[:10], d[:10])            # the first delete measures the lists' reference
    return g


def test_steady_deletes_keep_shrinking_lists_in_their_blocks(device):
    """Inside steady churn a delete large enough for the fused CPU delete or the planned GPU
    delete leaves a list that falls under a quarter of its block in that block (no list
    changes size class: nothing crosses the steady band here); outside, the same delete moves
    it to a smaller block. Both leave the edges of the oracle, invariants intact."""
    classes = {}
    for steady in (True, False):
        g = _hub_graph(device)
        want = _edge_dict_plain(g)
        before = _to_host(g._size_class[:g.num_vertices]).copy()
        gone = np.arange(1, 2901)                 # the hub keeps 100 of its 3,000 edges
        with g.steady_churn() if steady else _nothing():
            change = g.delete_edges(np.zeros(gone.size, np.int64), gone)
        assert len(change) == gone.size
        for v in gone.tolist():
            want.discard((0, v))
        assert _edge_dict_plain(g) == want
        g.check()
        after = _to_host(g._size_class[:g.num_vertices])
        degree = _to_host(g.degree())
        if steady:
            live = degree > 0
            assert np.array_equal(after[live], before[live])
        classes[steady] = (int(before[0]), int(after[0]))
    assert classes[True][1] == classes[True][0]
    assert classes[False][1] < classes[False][0]          # the contrast the test needs


def _edge_dict_plain(g) -> set:
    s, d = g.edges()
    return set(zip(_to_host(s).tolist(), _to_host(d).tolist()))


def test_loose_list_scan_matches_the_vectorised_test():
    """The CPU's compiled scan of the vertex table (``list_fit._loose_lists``) names the
    same lists and fitting classes as the vectorised test on random degrees and classes."""
    from hornet.memory.list_fit import _loose_lists
    rng = np.random.default_rng(5)
    for min_class in (0, 2):
        n = 20_000
        degree = rng.integers(0, 3000, n).astype(np.int32)
        degree[rng.random(n) < 0.3] = 0
        size_class = rng.integers(-1, 13, n).astype(np.int8)
        fit = np.where(degree > 0, np.maximum(
            np.ceil(np.log2(np.maximum(degree, 1))).astype(np.int64), min_class), -1)
        want = np.flatnonzero((fit < size_class) & (degree > 0))
        movers, classes = _loose_lists(degree, size_class, n - 7, min_class)
        want = want[want < n - 7]
        assert movers.tolist() == want.tolist()
        assert classes.tolist() == fit[want].tolist()
