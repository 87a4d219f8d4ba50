"""The workspace slots' result buffers of deferred inserts (hornet.batch.deferred_path,
REUSE_BUFFERS): a change still held and unread when its slot takes another batch reads its
own edges and values (copied then), slots are taken in turn, and a read change owns its
arrays. The GPU's kernels emulated on the CPU (tests/test_deferred_batches_cpu.py); results
against a CPU graph without deferral."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.batch import deferred_path
from small_batch_checks import PROPS, same_change, same_graph, step_properties
from test_deferred_batches_cpu import CpuDeferred


@pytest.fixture(autouse=True)
def emulated(monkeypatch):
    monkeypatch.setitem(deferred_path.EMULATIONS, "cpu", CpuDeferred)


def test_held_changes_keep_their_values_when_slots_are_reused():
    rng = np.random.default_rng(3)
    kw = dict(directed=True, edge_properties=PROPS, block_array_edges=1 << 10, device="cpu")
    deferred, plain = hornet.Graph(**kw), hornet.Graph(**kw)
    deferred.defer_inserts()
    got, want, slots = [], [], []
    for i in range(3 * CpuDeferred.slots):
        s, d = rng.integers(0, 300, 500), rng.integers(0, 300, 500)
        props = step_properties(rng, s.shape[0])
        got.append(deferred.insert_edges(s, d, **props))
        want.append(plain.insert_edges(s, d, **props))
        slots.append(deferred._deferred_queue[-1].slot)
    assert slots == [i % CpuDeferred.slots for i in range(len(slots))]
    # the batches whose slots took a later batch were read then (copies of their own)
    assert all(not isinstance(c._done, tuple) for c in got[:-CpuDeferred.slots])
    for a, b in zip(got, want):
        assert len(a) == len(b)
        same_change(a, b)
    # a read change's arrays are its own: later batches leave them as they are
    first = {k: v.copy() for k, v in got[0].properties.items()}
    src = got[0].src.copy()
    for _ in range(2 * CpuDeferred.slots):
        s, d = rng.integers(0, 300, 500), rng.integers(0, 300, 500)
        props = step_properties(rng, s.shape[0])
        same_change(deferred.insert_edges(s, d, **props), plain.insert_edges(s, d, **props))
    assert np.array_equal(got[0].src, src)
    for k, v in first.items():
        assert np.array_equal(got[0].properties[k], v)
    same_graph(deferred, plain)
