"""The sliding window's expiry taken from the pairs its records were inserted with
(:meth:`streams.window.EventWindow.expired_pairs`, :mod:`streams.window_device`): the same
edges as the host's entry-by-entry decision (:meth:`EventWindow.expired_edges`) and the same
map of refreshes after it, batch by batch, on the device's arrays (the CUDA kernel on the
GPU, its NumPy twin on the CPU); and windowed replays that take that path verified against
the replay's reference model and row by row against the replay with two graph calls per
batch."""
from __future__ import annotations

import numpy as np
import pytest

import streams.window as window_module
from streams import window_batch, window_device
from streams.replay import replay
from streams.window import NULL, EventWindow
from streams.window_device import LIVE_LIMIT
from streams.window_index import edge_keys


def _xp(device):
    if device == "gpu":
        import cupy
        return cupy
    return np


def _host(a):
    return a if isinstance(a, np.ndarray) else a.get()


def _pair_set(out) -> set:
    if out is None:
        return set()
    return set(zip(_host(out[0]).tolist(), _host(out[1]).tolist()))


def _taken(monkeypatch) -> list:
    """Per expired_pairs call that reached the device path: whether it decided there."""
    from test_apply_edges import taken_paths
    return taken_paths(monkeypatch, window_module, "expiring_pairs")


@pytest.mark.parametrize("ids, batch, window", [(40, 30, 90), (40, 30, 100), (400, 50, 170),
                                               (12, 25, 60), (3000, 200, 600), (6, 25, 60),
                                               (30, 100, 1000)])
def test_expired_pairs_match_the_host_decision(device, monkeypatch, ids, batch, window):
    """Insert-only batches over few or many ids (few or many live refreshes, beyond
    LIVE_LIMIT too: the host decides then), windows that are multiples of the batch or cut
    records in two, leaving entries that all stay (a tiny id space): each
    batch's expiry from the device pairs names the edges that the host's decision names,
    and leaves the same refreshes in the map."""
    xp = _xp(device)
    taken = _taken(monkeypatch)
    rng = np.random.default_rng(ids + batch + window)
    host, dev = EventWindow(window), EventWindow(window)
    present = set()
    full = 0
    for start in range(0, 40 * batch, batch):
        end = start + batch
        es, ed = host.expired(end)
        want = set(zip(es.tolist(), ed.tolist()))
        full += len(dev._latest) > LIVE_LIMIT
        assert _pair_set(dev.expired_pairs(end)) == want
        assert sorted(zip(*host._latest.items())) == sorted(zip(*dev._latest.items()))
        present -= want
        s = rng.integers(0, ids, batch)
        d = rng.integers(0, ids, batch)
        s, d = np.minimum(s, d), np.maximum(s, d)
        idx = np.arange(start, end, dtype=np.int64)
        keys = edge_keys(s, d)
        _, first_rev = np.unique(keys[::-1], return_index=True)
        last = np.sort(batch - 1 - first_rev)           # each edge's last event
        refresh = np.array([e in present for e in zip(s[last].tolist(), d[last].tolist())],
                           dtype=bool)
        pairs = (xp.asarray(s[last].astype(np.int32)), xp.asarray(d[last].astype(np.int32)))
        for w, p in ((host, None), (dev, pairs)):
            w.record(s[last], d[last], idx[last], refresh=refresh, pairs=p)
        present |= set(zip(s[last].tolist(), d[last].tolist()))
    if ids == 30:
        assert full > 0                         # more live refreshes than the device takes
    else:
        assert taken and all(taken)


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
@pytest.mark.parametrize("mapped", [True, False], ids=["device-map", "classified"])
def test_windowed_replay_from_device_pairs(device, monkeypatch, weighted, ids, batch, window,
                                           mixed, mapped):
    """A windowed replay whose batches keep their pairs with the window's records and expire
    from them (:func:`streams.window_batch._insert_expire_device`, on the CPU too; its
    expiry decided by the window's device map, or from the batch's classified events),
    verified
    against the reference model after every batch and row by row against the two-call
    replay; a small id space has edges that expire just as a batch refreshes them (the
    mixed call drops them from its delete, the insert first keeps them), a middling one
    about one refresh a batch (the one-extra classification), a wide one none."""
    monkeypatch.setattr(window_batch, "MIXED_CALL", mixed)
    monkeypatch.setattr(window_batch, "DEVICE_MAP", mapped)
    from test_apply_edges import _stream
    taken = _taken(monkeypatch)
    dropped = _count_dropped(monkeypatch)

    def device_path(g, ch, s, d, idx, w, win, end):
        if not win.tracks_refreshes or idx[0] < end - win.window:
            return False
        return window_batch._insert_expire_device(g, ch, s, d, idx, w, win, end)
    data = _stream(30_000, ids, weighted, seed=5)
    kw = dict(batch_size=batch, window=window, directed=False, algos="none", device=device)
    monkeypatch.setattr("streams.replay.insert_expire", device_path)
    one = replay(data, verify=True, **kw)
    assert one.summary["verified"] and sum(one["expired"]) > 0
    if mapped:                                      # (the classified path's steps unused)
        assert not taken and not dropped
    else:
        # a small id space keeps more refreshes in the window than the device path takes
        assert (sum(taken) > 0) == (ids > 150)
        if ids == 150:
            assert (sum(dropped) > 0) == mixed         # the rare case happened
    monkeypatch.setattr("streams.replay.insert_expire", lambda *a: False)
    two = replay(data, **kw)
    for column in ("inserted", "deleted", "expired", "edges", "vertices"):
        assert one[column].tolist() == two[column].tolist(), column


def _count_dropped(monkeypatch) -> list:
    """Expiring pairs that the mixed call's batches named (dropped from its delete), per
    batch, appended as the replay runs."""
    dropped = []
    original = window_batch.drop_named

    def counted(pairs, named, null):
        original(pairs, named, null)
        a, b = (_host(x) for x in pairs)
        dropped.append(int(((a == null[0]) & (b == null[1])).sum()))
    monkeypatch.setattr(window_batch, "drop_named", counted)
    return dropped


def test_drop_named_nulls_the_pairs_a_batch_names(device):
    """:func:`streams.window_device.drop_named` against a set difference on the host."""
    from streams.window_device import drop_named
    xp = _xp(device)
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 50, 3000).astype(np.int32), rng.integers(0, 50, 3000).astype(np.int32)
    na, nb = rng.integers(0, 50, 700).astype(np.int32), rng.integers(0, 50, 700).astype(np.int32)
    pairs = (xp.array(a), xp.array(b))                 # (copies)
    drop_named(pairs, (xp.asarray(na), xp.asarray(nb)), (1 << 30, 7))
    hit = np.isin(edge_keys(a, b), edge_keys(na, nb))
    assert 0 < hit.sum() < hit.size
    assert np.array_equal(_host(pairs[0]), np.where(hit, 1 << 30, a))
    assert np.array_equal(_host(pairs[1]), np.where(hit, 7, b))


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
