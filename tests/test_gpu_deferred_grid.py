"""Deferred GPU batches of more entries than one small batch, prepared at once by a grid of
blocks (``grid_prepare``, hornet/batch/gpu/deferred_grid.cu): inserts against the graph that
waits (the medium path) and the CPU backend, upserts against the CPU graph's update then
insert; repeats across the whole batch (first occurrence wins), hubs, self-loops, int32 ids,
stalled batches run again, changes read at once or batches later."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from conftest import HAS_GPU
from hornet.batch.small_layout import SMALL_ENTRIES
from hornet.testing import to_host
from small_batch_checks import PROPS, same_change, same_graph, step_properties

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]


def _grid_entries():
    from hornet.batch.gpu.deferred import GRID_ENTRIES
    return GRID_ENTRIES


def _batch(rng, step: int, pairs: int):
    """``pairs`` random pairs whose ids grow with the step; some batches repeat pairs far
    apart (first and last chunk of the grid), give a hub a third of their pairs, or start
    with self-loops."""
    n = 300 + 400 * step
    s, d = rng.integers(0, n, pairs), rng.integers(0, n, pairs)
    if step % 3 == 1:
        s[-200:], d[-200:] = s[:200], d[:200]
    if step % 4 == 2:
        s[: pairs // 3] = 5
    if step % 5 == 4:
        d[:20] = s[:20]
    return s.astype(np.int64), d.astype(np.int64)


def _graphs(directed: bool, tiny: bool):
    kw = dict(directed=directed, edge_properties=PROPS, block_array_edges=1 << 10)
    gpu = hornet.Graph(device="gpu", **kw)
    gpu.defer_inserts()
    waiting = hornet.Graph(device="gpu", **kw)
    if tiny:        # rings of two blocks per class: deferred batches stall often
        target = gpu._mm.block_cache().target
        target[:] = np.minimum(target, 2)
    return gpu, waiting, hornet.Graph(device="cpu", **kw)


@pytest.mark.parametrize("tiny", [False, True])
@pytest.mark.parametrize("directed", [False, True])
def test_grid_inserts_match_waiting_and_cpu(directed, tiny):
    import cupy

    from hornet.batch.deferred_path import MergedChange
    rng = np.random.default_rng(61 + directed + 2 * tiny)
    gpu, waiting, cpu = _graphs(directed, tiny)
    per = _grid_entries() // (1 if directed else 2)
    late, grid = [], 0
    for step in range(16):
        m = int(rng.integers(SMALL_ENTRIES // (1 if directed else 2) + 1, per + 1))
        s, d = _batch(rng, step, m)
        if step % 4 == 3:
            s, d = s.astype(np.int32), d.astype(np.int32)
        props = step_properties(rng, m) if step % 3 else {}
        a = gpu.insert_edges(s, d, **props)
        grid += not isinstance(a, MergedChange)
        b = waiting.insert_edges(cupy.asarray(s), cupy.asarray(d), **props)
        c = cpu.insert_edges(s, d, **props)
        same_change(c, b)
        if step % 2:
            late.append((a, b))
        else:
            assert len(a) == len(b)
            same_change(a, b)
        if step % 5 == 2:                           # deletes and queries between them
            es, ed = cpu.edges()
            pick = rng.choice(es.size, size=min(es.size, 2000), replace=False)
            same_change(gpu.delete_edges(es[pick], ed[pick]),
                        waiting.delete_edges(es[pick], ed[pick]))
            cpu.delete_edges(es[pick], ed[pick])
            v = np.arange(min(cpu.num_vertices, 500))
            assert np.array_equal(to_host(gpu.degree(v)), to_host(cpu.degree(v)))
    for a, b in late:
        same_change(a, b)
    same_graph(gpu, waiting)
    same_graph(gpu, cpu)
    gpu.check()
    gpu._mm.block_cache().check()
    assert grid == 16
    if tiny:
        assert gpu._stalls > 0


@pytest.mark.parametrize("tiny", [False, True])
def test_grid_upserts_match_update_then_insert(tiny):
    rng = np.random.default_rng(71 + tiny)
    gpu, _, cpu = _graphs(True, tiny)
    late = []
    for step in range(14):
        m = int(rng.integers(SMALL_ENTRIES + 1, _grid_entries() + 1))
        s, d = _batch(rng, step, m)
        if step % 2 and cpu.num_edges:              # present edges in the batch
            es, ed = cpu.edges()
            k = min(es.size, m // 2)
            pick = rng.choice(es.size, size=k, replace=False)
            s[-k:], d[-k:] = es[pick], ed[pick]
        props = step_properties(rng, m)
        got = gpu.deferred_upsert(s, d, props)
        assert got is not None and not hasattr(got[0], "_parts")   # one batch
        b_upd = cpu.update_edges(s, d, **props)
        b_ins = cpu.insert_edges(s, d, **props)
        if step % 3 == 1:
            late.append((got, (b_ins, b_upd)))
        else:
            same_change(got[0], b_ins)
            same_change(got[1], b_upd)
            for name in b_upd.properties:
                assert np.array_equal(to_host(got[1].previous[name]),
                                      to_host(b_upd.previous[name])), name
    for (a_ins, a_upd), (b_ins, b_upd) in late:
        same_change(a_ins, b_ins)
        same_change(a_upd, b_upd)
    same_graph(gpu, cpu)
    gpu.check()
    gpu._mm.block_cache().check()
    if tiny:
        assert gpu._stalls > 0
