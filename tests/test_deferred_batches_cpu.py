"""The host logic of deferred inserts (hornet.batch.deferred_path) on the CPU backend, the
GPU's kernels emulated (:class:`CpuDeferred`, below): queueing, settling in order (headers
late or not), stalled batches run again, chunked batches and their merged changes, the
block cache's counters and the graph's entry count afterwards. Results against a CPU graph
without deferral."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.batch import deferred_path
from hornet.batch.cpu.small import CpuSmallBatches
from hornet.batch.small_layout import DEFERRED_READ_WORDS as READ_WORDS
from hornet.batch.small_layout import (H_ACCEPT, H_CLASS, H_FREED, H_PIECES, H_STALLED,
                                       MODE_INSERT, NUM_CLASSES, SMALL_ENTRIES)
from small_batch_checks import (PROPS, deferred_consistent, deferring_graph, same_change,
                                same_graph, step_batch, step_properties)


class CpuDeferred:
    """The device part of deferred batches (hornet.batch.gpu.deferred) emulated on the CPU
    backend, for the host logic's tests without a GPU: the CPU small path's kernels run at
    "launch", with the GPU kernels' stall and accept rules around them, and a header may be
    reported as not ready yet (``late``: the chance of it), as an unfinished GPU batch's is."""

    slots = 8
    late = 0.3
    limits_due = 0
    prefilled = False

    def __init__(self):
        self.work = [CpuSmallBatches() for _ in range(self.slots)]
        self.headers = np.zeros((self.slots, READ_WORDS), dtype=np.int64)
        self.stall = 0
        self.limits = np.zeros(NUM_CLASSES, dtype=np.int64)
        self.rng = np.random.default_rng(0)
        self.launches = 0

    @staticmethod
    def stage(slot, both, values=()):
        return both[0].copy(), both[1].copy(), list(values)

    def set_limits(self, limits):
        self.limits = np.asarray(limits, dtype=np.int64).copy()

    def clear_stall(self):
        self.stall = 0

    def launch(self, slot, s, d, mirror, degree, size_class, edge_ptr, min_class, cache,
               lookup, field_dtypes, values, outs, rows, found=None):
        assert found is None                # (upserts: GPU tests)
        self.launches += 1
        h = self.headers[slot]
        h[:] = 0
        if self.stall:
            h[H_STALLED] = 1
            return
        w = self.work[slot]
        header, r = w.prepare(np.ascontiguousarray(s, dtype=np.int64),
                              np.ascontiguousarray(d, dtype=np.int64), mirror, MODE_INSERT,
                              degree, size_class, edge_ptr, min_class)
        rows[:] = r
        need = header[H_CLASS:H_CLASS + NUM_CLASSES]
        freed = header[H_FREED:H_FREED + NUM_CLASSES]
        size = cache.state[NUM_CLASSES:] - cache.state[:NUM_CLASSES]
        accept = 0
        for k in np.flatnonzero(freed):
            f, n = freed[k], need[k]
            if size[k] + f <= cache.ring_slots and (f <= n or size[k] - n + f <= self.limits[k]):
                accept |= 1 << int(k)
        h[:] = header[:READ_WORDS]
        h[H_ACCEPT] = accept
        if (need > size).any():
            h[H_STALLED] = 1
            self.stall = 1
            return
        h[H_STALLED] = 0
        w.rewrite(MODE_INSERT, int(header[H_PIECES]), cache, accept, lookup, field_dtypes,
                  values, outs, degree, size_class, edge_ptr)

    def ready(self, slot):
        return self.rng.random() >= self.late

    def header(self, slot):
        return self.headers[slot].tolist()

    def spilled(self, slot, count):
        return self.work[slot].spilled(count)


@pytest.fixture(autouse=True)
def emulated(monkeypatch):
    monkeypatch.setitem(deferred_path.EMULATIONS, "cpu", CpuDeferred)


def _graphs(directed, props=True, tiny=False):
    kw = dict(directed=directed, edge_properties=PROPS if props else None,
              block_array_edges=1 << 10, device="cpu")
    return deferring_graph(tiny=tiny, **kw), hornet.Graph(**kw)


@pytest.mark.parametrize("tiny", [False, True])
@pytest.mark.parametrize("directed", [False, True])
def test_deferred_inserts_match_a_plain_graph(directed, tiny):
    rng = np.random.default_rng(5 + directed + 2 * tiny)
    deferred, plain = _graphs(directed, tiny=tiny)
    max_pairs = SMALL_ENTRIES // (1 if directed else 2)
    late, queued = [], 0
    for step in range(40):
        s, d = step_batch(rng, step, max_pairs // 4 if step % 2 else max_pairs)
        m = s.shape[0]
        if step % 5 == 3:
            s, d = s.astype(np.int32), d.astype(np.int32)
        if rng.random() < 0.75:
            props = step_properties(rng, m) if step % 3 else {}
            before = deferred._deferred_count
            a = deferred.insert_edges(s, d, **props)
            queued += deferred._deferred_count > before
            b = plain.insert_edges(s, d, **props)
            if step % 2:
                late.append((a, b))
            else:
                assert len(a) == len(b)
                same_change(a, b)
        else:
            es, ed = plain.edges()
            k = min(es.size, m)
            pick = rng.choice(es.size, size=k, replace=False) if es.size else np.empty(0, int)
            s, d = np.r_[es[pick], s[: m - k]], np.r_[ed[pick], d[: m - k]]
            same_change(deferred.delete_edges(s, d), plain.delete_edges(s, d))
        if step % 7 == 6:
            v = np.arange(plain.num_vertices)
            assert np.array_equal(deferred.degree(v), plain.degree(v))
    for a, b in late:
        same_change(a, b)
    same_graph(deferred, plain)
    deferred_consistent(deferred, tiny)
    assert queued > 10


@pytest.mark.parametrize("directed", [False, True])
def test_chunked_inserts_merge_their_changes(directed, monkeypatch):
    monkeypatch.setattr(deferred_path, "CHUNKS", 8)
    rng = np.random.default_rng(9 + directed)
    deferred, plain = _graphs(directed)
    per = SMALL_ENTRIES // (1 if directed else 2)
    merged = 0
    for step in range(10):
        m = int(rng.integers(per + 1, deferred_path.CHUNKS * per + 1))
        s, d = rng.integers(0, 300 + 300 * step, m), rng.integers(0, 300 + 300 * step, m)
        s[m // 2: m // 2 + 50], d[m // 2: m // 2 + 50] = s[:50], d[:50]
        if step % 3 == 0:
            s[:m // 3] = 7
        props = step_properties(rng, m)
        a = deferred.insert_edges(s, d, **props)
        merged += isinstance(a, deferred_path.MergedChange)
        b = plain.insert_edges(s, d, **props)
        assert len(a) == len(b)
        same_change(a, b)
    same_graph(deferred, plain)
    deferred_consistent(deferred)
    assert merged > 5


def test_nothing_read_until_the_end():
    rng = np.random.default_rng(2)
    deferred, plain = _graphs(True, props=False)
    pairs = [(rng.integers(0, 100 * i + 50, 700), rng.integers(0, 100 * i + 50, 700))
             for i in range(30)]
    got, want = [], []
    for i, (s, d) in enumerate(pairs):
        got.append(deferred.insert_edges(s, d))
        want.append(plain.insert_edges(s, d))
        for g in (deferred, plain):          # the id space grows without settling anything
            g.insert_vertices(np.array([100 * i + 70]))
        assert got[-1].pending
    assert deferred.num_vertices == plain.num_vertices
    assert deferred.num_edges == plain.num_edges
    assert not any(c.pending for c in got)
    for a, b in zip(got, want):
        same_change(a, b)
    same_graph(deferred, plain)


def test_refused_batches_are_refused_at_the_call():
    g, _ = _graphs(True, props=False)
    g.insert_edges(np.array([0, 1]), np.array([1, 2]))
    g.insert_edges(np.array([2, 3]), np.array([3, 4]))
    with pytest.raises(hornet.BatchError):
        g.insert_edges(np.array([0, -1]), np.array([1, 2]))
    with pytest.raises(hornet.BatchError):
        g.insert_edges(np.array([0, 1]), np.array([1, 2]), nope=np.ones(2))
    assert g.num_edges == 4
    g.check()


@pytest.mark.parametrize("directed", [False, True])
def test_ready_graph_matches_a_plain_graph(directed):
    """defer_inserts(ready=True): the state of the first batch made up front (rings filled,
    vertex table rows made without growing the id space); results unchanged."""
    rng = np.random.default_rng(11 + directed)
    deferred, plain = _graphs(directed)
    deferred.defer_inserts(ready=True)
    assert deferred._deferred is not None and deferred._deferred.prefilled
    assert deferred.num_vertices == 0 and deferred._degree.shape[0] >= deferred_path.READY_ROWS
    deferred._mm.block_cache().check()
    for step in range(12):
        s, d = step_batch(rng, step, 300)
        props = step_properties(rng, s.shape[0])
        a = deferred.insert_edges(s, d, **props)
        b = plain.insert_edges(s, d, **props)
        if step % 4 == 3:
            es, ed = plain.edges()
            k = min(es.size, 50)
            same_change(deferred.delete_edges(es[:k], ed[:k]), plain.delete_edges(es[:k], ed[:k]))
        same_change(a, b)
    assert deferred.num_vertices == plain.num_vertices
    same_graph(deferred, plain)
    deferred_consistent(deferred)


def test_settled_pending_changes_cut_their_buffers():
    """A settled deferred insert / upsert update reads its edges from the batch's row
    buffer (src at 0, dst at the capacity, SMALL_ENTRIES here; the update's pairs after
    twice the capacity), cut to the batch's length on first read."""
    from hornet.batch.deferred_path import PendingChange, PendingUpdate
    from hornet.batch.small_layout import SMALL_ENTRIES
    rows = np.arange(4 * SMALL_ENTRIES, dtype=np.int32)
    ins = PendingChange(graph=None)
    assert ins.pending and repr(ins) == "EdgeChange(insert, pending)"
    ins._resolve((rows, {"w": np.arange(SMALL_ENTRIES, dtype=np.float64)}, 3, 1, SMALL_ENTRIES))
    assert not ins.pending and len(ins) == 3 and ins.kind == "insert"
    assert ins.src.tolist() == [0, 1, 2]
    assert ins.dst.tolist() == [SMALL_ENTRIES, SMALL_ENTRIES + 1, SMALL_ENTRIES + 2]
    assert ins.properties["w"].tolist() == [0.0, 1.0, 2.0]
    assert ins.self_loops_skipped == 1 and ins.previous == {}
    upd = PendingUpdate(graph=None)
    assert repr(upd) == "EdgeChange(update, pending)"
    new, old = np.full(SMALL_ENTRIES, 7.0), np.full(SMALL_ENTRIES, 5.0)
    upd._resolve((rows, {"w": (new, old)}, 2, SMALL_ENTRIES))
    assert len(upd) == 2 and upd.kind == "update"
    at = 2 * SMALL_ENTRIES
    assert upd.src.tolist() == [at, at + 1]
    assert upd.dst.tolist() == [at + SMALL_ENTRIES, at + SMALL_ENTRIES + 1]
    assert upd.properties["w"].tolist() == [7.0, 7.0]
    assert upd.previous["w"].tolist() == [5.0, 5.0]


@pytest.mark.parametrize("late", [0.3, 0.95])
def test_replay_rows_of_late_batches(monkeypatch, late):
    """A replay of deferred batches whose headers come late (rows finished once their
    batches settle, at most streams.batch_rows.DEPTH rows behind) gives the rows and graph
    of a replay without deferral."""
    from streams.replay import replay
    monkeypatch.setattr(CpuDeferred, "late", late)
    rng = np.random.default_rng(5)
    n = 6000
    stream = {"src": rng.integers(0, 900, n), "dst": rng.integers(0, 900, n)}
    got = replay(stream, batch_size=250, device="cpu", algos="none")
    monkeypatch.delitem(deferred_path.EMULATIONS, "cpu")
    want = replay(stream, batch_size=250, device="cpu", algos="none")
    for k in ("batch", "inserted", "deleted", "edges", "vertices"):
        assert got.table[k].to_pylist() == want.table[k].to_pylist(), k
    assert got.summary["edges"] == want.summary["edges"]


def test_own_host_values_equal_the_checked_ones():
    """The deferred path's own copies of host property values (every property given, of its
    dtype and length, no NaN) equal property_values' result and are copies; anything else
    is left to property_values (None)."""
    from hornet.batch.deferred_path import _own_host_values
    from hornet.batch.validate import property_values
    schema = {"w": np.float64, "t": np.int64}
    w, t = np.arange(6.0)[::-1], np.arange(6, dtype=np.int64)
    got = _own_host_values({"w": w, "t": t}, schema, 6)
    want = property_values({"w": w, "t": t}, schema, 6, np)
    assert sorted(got) == sorted(want)
    for k in want:
        assert got[k].dtype == want[k].dtype and np.array_equal(got[k], want[k])
        assert got[k].flags.c_contiguous
    assert not np.shares_memory(got["w"], w) and not np.shares_memory(got["t"], t)
    nan = w.copy()
    nan[2] = np.nan
    for props, n in (({"w": w}, 6), ({"w": w, "t": t.astype(np.int32)}, 6),
                     ({"w": w, "t": t}, 5), ({"w": nan, "t": t}, 6),
                     ({"w": list(w), "t": t}, 6), ({"w": w, "x": t}, 6)):
        assert _own_host_values(props, schema, n) is None
