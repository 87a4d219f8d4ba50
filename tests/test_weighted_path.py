"""A weighted replay's batches on a graph that defers inserts (:class:`streams.weighted_batch.
LatestPath`): inserts alone while the batches hold distinct new edges, deferred upserts once
one did not; the graph (edges and weights) and every batch's changes equal those of the
plain path (insert, then update of the rest) on a graph without deferral. On the CPU the
GPU's deferred kernels are emulated (tests/test_deferred_batches_cpu.py)."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.batch import deferred_path
from streams.analytics import BatchChanges
from streams.weighted_batch import LatestPath, insert_latest
from test_deferred_batches_cpu import CpuDeferred


def _host(a):
    return a if isinstance(a, np.ndarray) else a.get()


def _pairs(change) -> dict:
    if change is None:
        return {}
    return dict(zip(zip(_host(change.src).tolist(), _host(change.dst).tolist()),
                    _host(change.properties["weight"]).tolist()))


def _ignore(change):
    pass


def _batches(rng, repeat_from: int, low: int, high: int):
    """Batches of ``low`` to ``high`` events: distinct new edges, then (from batch
    ``repeat_from`` on) with repeats and edges present before."""
    out, seen = [], 0
    for k in range(6):
        n = int(rng.integers(low, high))
        if k < repeat_from:
            key = np.arange(seen, seen + n)          # never met before
            seen += n
            s, d = key // 97, key % 97 + 100
        else:
            s, d = rng.integers(0, 40, n), rng.integers(100, 140, n)
        out.append((s.astype(np.int64), d.astype(np.int64), rng.random(n)))
    return out


@pytest.mark.parametrize("repeat_from", [0, 3, 6])
@pytest.mark.parametrize("small", [False, True])
def test_latest_path_equals_plain_path(device, monkeypatch, repeat_from, small):
    if device == "cpu":
        monkeypatch.setitem(deferred_path.EMULATIONS, "cpu", CpuDeferred)
        monkeypatch.setattr(CpuDeferred, "late", 0.0)
    rng = np.random.default_rng(repeat_from)
    kw = dict(directed=True, device=device, edge_properties={"weight": np.float64})
    deferred, plain = hornet.Graph(**kw), hornet.Graph(**kw)
    deferred.defer_inserts()
    path = LatestPath()
    # (batches of one deferred batch's pairs at most go as upserts whatever came before)
    limit = deferred_path.upsert_pairs(deferred)
    low, high = (200, limit + 1) if small else (limit + 1, 3 * limit)
    for k, (s, d, w) in enumerate(_batches(rng, repeat_from, low, high)):
        a, b = BatchChanges(), BatchChanges()
        insert_latest(deferred, a, s, d, w, _ignore, update_first=True, path=path)
        insert_latest(plain, b, s, d, w, _ignore)
        assert _pairs(a.inserted) == _pairs(b.inserted)
        assert _pairs(a.updated) == _pairs(b.updated)
        assert path.upserts == (not small and k >= repeat_from)
    assert deferred.num_edges == plain.num_edges
    got, want = deferred.edges(properties=True), plain.edges(properties=True)
    for x, y in zip(got[:2], want[:2]):
        assert np.array_equal(_host(x), _host(y))
    assert np.array_equal(_host(got[2]["weight"]), _host(want[2]["weight"]))
    deferred.check()
