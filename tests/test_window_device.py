"""The sliding window's expiry decided on the device that holds its entries' pairs
(:meth:`streams.window.EventWindow.record_all`, :mod:`streams.window_device`): the same edges as the host's entry-by-entry decision
(:meth:`EventWindow.expired_edges`), batch by batch, on the device's arrays (the CUDA kernels
on the GPU, their NumPy twin on the CPU); windowed replays that take that path verified
against the replay's reference model and row by row against the replay with two graph calls
per batch; the device classification of a weighted batch's few refreshes."""
from __future__ import annotations

import numpy as np
import pytest

from streams import window_batch, window_device
from streams.replay import replay
from streams.window import NULL, EventWindow
from streams.window_index import edge_keys


def _xp(device):
    if device == "gpu":
        import cupy
        return cupy
    return np


def _host(a):
    return a if isinstance(a, np.ndarray) else a.get()


@pytest.mark.parametrize("ids, batch, window", [(40, 30, 90), (40, 30, 100), (400, 50, 170),
                                               (12, 25, 60), (3000, 200, 600), (6, 25, 60),
                                               (30, 100, 1000), (1 << 20, 300, 900)])
def test_device_map_expires_what_the_host_decides(device, monkeypatch, ids, batch, window):
    """A window that queues every event with its pairs (:meth:`EventWindow.record_all`: the
    device map of each queued edge's latest entry, its table rebuilt every few batches
    here) expires, batch by batch, exactly the edges that the host's window expires
    (the batch's last event of each edge queued, refreshes marked): the leaving entries'
    pairs, each expiring edge once, every other one the null pair; the same from the
    host-array form (:meth:`EventWindow.expired`); batches recorded before the first
    device record are moved onto the device."""
    monkeypatch.setattr(window_device, "MAP_MIN_SLOTS", 64)
    xp = _xp(device)
    rng = np.random.default_rng(ids + batch + window)
    host, dev, dev2 = EventWindow(window), EventWindow(window), EventWindow(window)
    present = set()
    for b, start in enumerate(range(0, 40 * batch, batch)):
        end = start + batch
        s = rng.integers(0, ids, batch)
        d = rng.integers(0, ids, batch)
        s, d = np.minimum(s, d), np.maximum(s, d)
        idx = np.arange(start, end, dtype=np.int64)
        keys = edge_keys(s, d)
        _, first_rev = np.unique(keys[::-1], return_index=True)
        last = np.sort(batch - 1 - first_rev)           # each edge's last event
        refresh = np.array([e in present for e in zip(s[last].tolist(), d[last].tolist())],
                           dtype=bool)
        host.record(s[last], d[last], idx[last], refresh=refresh)
        pairs = (xp.asarray(s.astype(np.int32)), xp.asarray(d.astype(np.int32)))
        if b < 3:                   # (dev2: its first batches queued on the host)
            dev2.record(s[last], d[last], idx[last], refresh=refresh)
        else:
            dev2.record_all(s, d, idx, None if b == 3 else pairs)
        dev.record_all(s, d, idx, pairs)
        present |= set(zip(s[last].tolist(), d[last].tolist()))
        es, ed = host.expired(end)
        want = set(zip(es.tolist(), ed.tolist()))
        out = dev.expired_pairs(end)
        got = [] if out is None else list(zip(_host(out[0]).tolist(), _host(out[1]).tolist()))
        real = [p for p in got if p != NULL]
        assert len(real) == len(set(real)) and set(real) == want
        gs, gd = dev2.expired(end)
        assert sorted(zip(gs.tolist(), gd.tolist())) == sorted(want)
        present -= want
        assert len(dev) >= len(dev2) >= len(host)
    q = np.array(sorted(present), dtype=np.int64).reshape(-1, 2)
    for w in (dev, dev2):
        assert [a.tolist() for a in w.latest(q[:, 0], q[:, 1])] == \
            [a.tolist() for a in host.latest(q[:, 0], q[:, 1])]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ids, batch, window", [(150, 1500, 4500), (2700, 1000, 3700),
                                               (1 << 17, 3000, 9000)])
@pytest.mark.parametrize("mixed", [False, True], ids=["insert-then-expire", "mixed-call"])
def test_windowed_replay_from_device_pairs(device, monkeypatch, weighted, ids, batch, window,
                                           mixed):
    """A windowed replay whose batches keep their pairs with the window's records and expire
    from them (:func:`streams.window_batch._insert_expire_device`, on the CPU too; its
    expiry decided by the window's device map, or from the batch's classified events),
    verified
    against the reference model after every batch and row by row against the two-call
    replay; a small id space has edges that expire just as a batch refreshes them (the
    mixed call drops them from its delete, the insert first keeps them), a middling one
    about one refresh a batch (the one-extra classification), a wide one none."""
    monkeypatch.setattr(window_batch, "MIXED_CALL", mixed)
    from test_apply_edges import _stream
    mapped = []
    record_all = EventWindow.record_all

    def counted(self, *a):
        mapped.append(True)
        return record_all(self, *a)
    monkeypatch.setattr(EventWindow, "record_all", counted)

    def device_path(g, ch, s, d, idx, w, win, end):
        if not win.tracks_refreshes or idx[0] < end - win.window:
            return False
        return window_batch._insert_expire_device(g, ch, s, d, idx, w, win, end)
    data = _stream(30_000, ids, weighted, seed=5)
    kw = dict(batch_size=batch, window=window, directed=False, algos="none", device=device)
    monkeypatch.setattr("streams.replay.insert_expire", device_path)
    one = replay(data, verify=True, **kw)
    assert one.summary["verified"] and sum(one["expired"]) > 0
    assert mapped
    monkeypatch.setattr("streams.replay.insert_expire", lambda *a: False)
    two = replay(data, **kw)
    for column in ("inserted", "deleted", "expired", "edges", "vertices"):
        assert one[column].tolist() == two[column].tolist(), column


@pytest.mark.parametrize("directed", [False, True])
def test_few_extra_kind_classifies_like_the_host(device, directed):
    """:func:`streams.window_batch.few_extra_kind` (keys sorted on the device, the few
    events that inserted nothing or share their key classified on the host) gives the
    classes of :func:`streams.window_index.classify_events` for batches with repeats and
    present edges, inserted edges in either order."""
    from streams.window_index import classify_events
    xp = _xp(device)
    rng = np.random.default_rng(4)
    for _ in range(300):
        ids = int(rng.choice([3, 12, 200, 1 << 20]))
        s = rng.integers(0, ids, int(rng.integers(1, 80)))
        d = rng.integers(0, ids, s.shape[0])
        s, d = s[s != d], d[s != d]
        if not s.shape[0]:
            continue
        if not directed:
            s, d = np.minimum(s, d), np.maximum(s, d)
        keys = edge_keys(s, d)
        distinct = np.unique(keys)
        present = rng.random(distinct.shape[0]) < 0.3
        made = distinct[~present]
        a, b = made >> 32, made & 0xFFFFFFFF
        if not directed and rng.integers(0, 2):
            a, b = b, a
        got = window_batch.few_extra_kind(
            xp, (xp.asarray(s.astype(np.int32)), xp.asarray(d.astype(np.int32))),
            xp.asarray(a.astype(np.int32)), xp.asarray(b.astype(np.int32)), directed, s, d)
        assert got.tolist() == classify_events(keys, made).tolist()
