"""Deferred GPU batches of more entries than one small batch, prepared at once by a grid of
blocks (``grid_prepare``, hornet/batch/gpu/deferred_grid.cu): inserts and upserts against
:class:`hornet.testing.ReferenceGraph` (a dict of edges fed the same calls) and against a GPU
graph that waits (the medium path); repeats across the whole batch (first occurrence wins),
hubs, self-loops, int32 ids, stalled batches run again, changes read at once or batches
later."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from conftest import HAS_GPU
from hornet.batch.small_layout import SMALL_ENTRIES
from hornet.testing import ReferenceGraph, to_host
from small_batch_checks import (PROPS, deferred_consistent, deferring_graph, same_change,
                                same_graph, step_properties)

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


def _as_dict(change, values: bool = True) -> dict:
    """A change as ``{(src, dst): {property: value}}`` (``values``: its new values, else its
    previous ones)."""
    if change is None:
        return {}
    props = change.properties if values else change.previous
    cols = {k: to_host(v).tolist() for k, v in props.items()}
    keys = zip(to_host(change.src).tolist(), to_host(change.dst).tolist())
    return {k: {n: c[i] for n, c in cols.items()} for i, k in enumerate(keys)}


def _copied(edges: dict) -> dict:
    """A copy of ``edges`` (a ReferenceGraph's dict of edges, or what one of its calls
    returned): the reference keeps the value dicts it returns and updates them in place
    later."""
    return {k: dict(v) for k, v in edges.items()}


def _same(got: dict, want: dict, what: str) -> None:
    """``got == want`` (dicts of edges), or an AssertionError naming a few differences."""
    if got == want:
        return
    only_got = [k for k in got if k not in want][:3]
    only_want = [k for k in want if k not in got][:3]
    differ = [(k, got[k], want[k]) for k in got if k in want and got[k] != want[k]][:3]
    raise AssertionError(f"{what}: {len(got)} edges, {len(want)} expected; only got "
                         f"{only_got}; only expected {only_want}; values differ {differ}")


def _same_as_reference(g, ref: ReferenceGraph) -> None:
    s, d, p = g.edges(properties=True)
    cols = {k: to_host(v).tolist() for k, v in p.items()}
    got = {k: {n: c[i] for n, c in cols.items()}
           for i, k in enumerate(zip(to_host(s).tolist(), to_host(d).tolist()))}
    _same(got, ref.edges, "graph")


def _graphs(directed: bool, tiny: bool):
    kw = dict(directed=directed, edge_properties=PROPS, block_array_edges=1 << 10)
    return (deferring_graph("gpu", tiny, **kw), hornet.Graph(device="gpu", **kw),
            ReferenceGraph(directed, PROPS))


@pytest.mark.parametrize("tiny", [False, True])
@pytest.mark.parametrize("directed", [False, True])
def test_grid_inserts_match_the_reference(directed, tiny):
    import cupy

    from hornet.batch.deferred_path import MergedChange
    rng = np.random.default_rng(61 + directed + 2 * tiny)
    gpu, waiting, ref = _graphs(directed, tiny)
    per = _grid_entries() // (1 if directed else 2)
    late, grid = [], 0
    for step in range(12):
        m = int(rng.integers(SMALL_ENTRIES // (1 if directed else 2) + 1, per + 1))
        s, d = _batch(rng, step, m)
        if step % 4 == 3:
            s, d = s.astype(np.int32), d.astype(np.int32)
        props = step_properties(rng, m) if step % 3 else {}
        a = gpu.insert_edges(s, d, **props)
        grid += not isinstance(a, MergedChange)
        b = waiting.insert_edges(cupy.asarray(s), cupy.asarray(d), **props)
        want = _copied(ref.insert(s, d, props))
        if step % 2:
            late.append((step, a, b, want))
        else:
            assert len(a) == len(want)
            _same(_as_dict(a), want, f"insert {step}")
            same_change(a, b)
        if step % 5 == 2:                           # deletes and queries between them
            es, ed = to_host(waiting.edges()[0]), to_host(waiting.edges()[1])
            pick = rng.choice(es.size, size=min(es.size, 2000), replace=False)
            same_change(gpu.delete_edges(es[pick], ed[pick]),
                        waiting.delete_edges(es[pick], ed[pick]))
            ref.delete(es[pick], ed[pick])
            v = np.arange(min(waiting.num_vertices, 500))
            assert np.array_equal(to_host(gpu.degree(v)), to_host(waiting.degree(v)))
    for step, a, b, want in late:
        _same(_as_dict(a), want, f"insert {step}")
        same_change(a, b)
    _same_as_reference(gpu, ref)
    same_graph(gpu, waiting)
    deferred_consistent(gpu, tiny)
    assert grid == 12


def _same_upsert(step: int, got, want) -> None:
    _same(_as_dict(got[0]), want[0], f"upsert {step} inserted")
    _same(_as_dict(got[1]), want[1], f"upsert {step} updated")
    _same(_as_dict(got[1], False), want[2], f"upsert {step} previous")


@pytest.mark.parametrize("tiny", [False, True])
def test_grid_upserts_match_update_then_insert(tiny):
    rng = np.random.default_rng(71 + tiny)
    gpu, _, ref = _graphs(True, tiny)
    late = []
    for step in range(12):
        m = int(rng.integers(SMALL_ENTRIES + 1, _grid_entries() + 1))
        s, d = _batch(rng, step, m)
        if step % 2 and ref.edges:                   # present edges in the batch
            present = np.array(list(ref.edges), dtype=np.int64)
            k = min(present.shape[0], m // 2)
            pick = rng.choice(present.shape[0], size=k, replace=False)
            s[-k:], d[-k:] = present[pick, 0], present[pick, 1]
        props = step_properties(rng, m)
        got = gpu.deferred_upsert(s, d, props)
        assert got is not None and not hasattr(got[0], "_parts")   # one batch
        before = _copied(ref.edges)
        upd = _copied(ref.update(s, d, props))
        want = (_copied(ref.insert(s, d, props)), upd, {k: before[k] for k in upd})
        if step % 3 == 1:
            late.append((step, got, want))
        else:
            _same_upsert(step, got, want)
    for step, got, want in late:
        _same_upsert(step, got, want)
    _same_as_reference(gpu, ref)
    deferred_consistent(gpu, tiny)
