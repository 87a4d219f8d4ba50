"""The bit rows of the high truss levels (hornet.algos.ktruss.core_rows) against brute force:
the core is the least level whose vertices fit the bound, every triangle whose other two
edges are at the level asked for or above is listed with their slots and numbers, none
with an edge of the deleted batch, and numbers set during a descent are seen by the next
listing. The descent on them against the static decomposition: test_dynamic_truss_level_rows
.py (Kronecker batches) and test_dynamic_truss_machine.py (the state machine)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from hornet.algos.edge_table import EdgeTable
from hornet.algos.ktruss.core_rows import build_core, core_room, core_set, core_triangles


def _state(seed, n, m, top):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, n, m)
    d = rng.integers(0, n, m)
    keep = s != d
    pairs = np.unique(np.stack([np.minimum(s, d), np.maximum(s, d)])[:, keep], axis=1)
    src, dst = pairs[0], pairs[1]
    t = EdgeTable("cpu", {"truss": np.int32}, capacity=4 * max(src.shape[0], 4))
    truss0 = rng.integers(2, top + 1, src.shape[0]).astype(np.int32)
    slots = t.insert(src, dst, truss=truss0)
    return rng, t, src, dst, np.asarray(slots)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 31), n=st.integers(3, 40), m=st.integers(1, 400),
       top=st.integers(3, 12), cap=st.integers(1, 45), low=st.integers(2, 6))
def test_core_lists_every_triangle_above_the_level(seed, n, m, top, cap, low):
    rng, t, src, dst, slots = _state(seed, n, m, top)
    truss = t.columns["truss"]
    stamp = 7
    batch = np.zeros(t.capacity, np.int64)
    gone = slots[rng.random(slots.shape[0]) < 0.2]          # the deleted batch: left out
    batch[gone] = stamp
    core = build_core(t.keys, truss, n, batch, stamp, cap, low)
    loc, prm = core[0], core[1]
    live = {(int(a), int(b)): int(x) for a, b, x in zip(src, dst, slots) if batch[x] != stamp}
    vmax = np.zeros(n, np.int64)
    for (a, b), x in live.items():
        vmax[a] = max(vmax[a], truss[x])
        vmax[b] = max(vmax[b], truss[x])
    # T: the least level >= low whose vertices (an edge at T or above) are at most cap
    fits = [k for k in range(low, int(vmax.max(initial=0)) + 1)
            if (vmax >= k).sum() <= cap]
    if not fits:
        assert prm[0] > vmax.max(initial=0) and (loc < 0).all()
        return
    T = fits[0]
    assert prm[0] == T
    assert ((loc >= 0) == (vmax >= T)).all()
    adj = {}
    for (a, b), x in live.items():
        adj.setdefault(a, {})[b] = x
        adj.setdefault(b, {})[a] = x
    # lower some numbers, as a descent does (set through core_set), then list
    for x in rng.choice(slots, min(5, slots.shape[0]), replace=False):
        if batch[x] != stamp and truss[x] > 2:
            truss[x] -= 1
            core_set(t.keys[x], truss[x], core)
    for (a, b), x in live.items():
        room = core_room(a, b, core)
        tp, tq = np.empty(room + 1, np.int64), np.empty(room + 1, np.int64)
        vp, vq = np.empty(room + 1, np.int64), np.empty(room + 1, np.int64)
        for L in range(2, top + 2):
            c = core_triangles(a, b, L, core, tp, tq, vp, vq)
            if L < T or vmax[a] < T or vmax[b] < T:
                assert c == -1
                continue
            got = {(int(tp[j]), int(tq[j])) for j in range(c)}
            assert len(got) == c
            for j in range(c):
                assert (vp[j], vq[j]) == (truss[tp[j]], truss[tq[j]])
            want = {(adj[a][w], adj[b][w]) for w in set(adj[a]) & set(adj[b])
                    if truss[adj[a][w]] >= L and truss[adj[b][w]] >= L}
            assert got == want


@pytest.mark.parametrize("seed", [0, 1])
def test_no_core_above_every_level(seed):
    """A bound of no vertex, or a lowest level above every number: an empty core that
    covers no listing."""
    _, t, src, dst, _ = _state(seed, 20, 100, 5)
    batch = np.zeros(t.capacity, np.int64)
    for cap, low in ((0, 2), (100, 9)):
        core = build_core(t.keys, t.columns["truss"], 20, batch, 1, cap, low)
        tp = np.empty(4, np.int64)
        assert core_triangles(int(src[0]), int(dst[0]), 9, core, tp, tp, tp, tp) == -1
        assert core_room(int(src[0]), int(dst[0]), core) == 0
