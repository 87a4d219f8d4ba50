"""Both backends' small-batch paths at their edges: bad input refused with the general
path's messages and the graph unchanged; batches too large or with too many properties left
to the general path, the most properties the small path takes written and reported alike."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from small_batch_checks import PROPS, same_change, same_graph, snapshot, without_small_path


def _limit(device: str) -> int:
    from hornet.batch.cpu.small import CPU_SMALL_ENTRIES
    from hornet.batch.small_layout import SMALL_ENTRIES
    return SMALL_ENTRIES if device == "gpu" else CPU_SMALL_ENTRIES


def _on(device: str, x):
    """``x`` as the backend's array (the small path takes NumPy or CuPy input)."""
    if device == "gpu":
        import cupy
        return cupy.asarray(x)
    return np.asarray(x)


@pytest.mark.parametrize("bad", [
    dict(src=[0, -1], dst=[1, 2]),
    dict(src=[0, 1], dst=[1, hornet.graph.MAX_VERTEX_ID + 1]),
    dict(src=[0, 1], dst=[1, 2], w=[0.5, float("nan")]),
    dict(src=[0, 1], dst=[1, 2], nope=[1, 2]),
    dict(src=[0, 1], dst=[1, 2], t=[0.5, 1.5]),           # floats into an int64 property
    dict(src=np.array([0, 2**63 + 5], dtype=np.uint64), dst=[1, 2]),
])
def test_bad_small_batches_are_refused_like_large_ones(device, bad, small_path_counter):
    kw = dict(directed=False, edge_properties=PROPS)
    small, general = hornet.Graph(device=device, **kw), without_small_path(device, **kw)
    for g in (small, general):
        g.insert_edges(np.arange(5), np.arange(1, 6))
    taken = small_path_counter[device]
    before = snapshot(small)
    bad = dict(bad)
    src, dst = np.asarray(bad.pop("src")), np.asarray(bad.pop("dst"))
    with pytest.raises(Exception) as on_general:
        general.insert_edges(src, dst, **bad)
    with pytest.raises(type(on_general.value)) as on_small:
        small.insert_edges(_on(device, src), _on(device, dst),
                           **{k: np.asarray(v) for k, v in bad.items()})
    assert str(on_small.value) == str(on_general.value)
    if not bad:
        with pytest.raises(type(on_general.value)):
            small.delete_edges(_on(device, src), _on(device, dst))
    after = snapshot(small)
    assert all(np.array_equal(x, y) for x, y in zip(before[:2], after[:2]))
    assert small_path_counter[device] == taken
    small.check()


def test_batches_too_large_or_with_many_properties_take_the_general_path(device,
                                                                         small_path_counter):
    many = {f"p{i}": np.int32 for i in range(8)}           # dst + 8 properties: 9 fields
    g = hornet.Graph(device=device, edge_properties=many)
    g.insert_edges(np.arange(10), np.arange(1, 11))
    assert small_path_counter[device] == 0
    most = {f"p{i}": np.dtype(t) for i, t in enumerate(
        [np.int8, np.int16, np.int32, np.int64, np.uint16, np.float32, np.float64])}
    g = hornet.Graph(device=device, edge_properties=most)
    general = without_small_path(device, edge_properties=most)
    vals = {k: (np.arange(10) * 7 - 20).astype(t) for k, t in most.items()}
    same_change(g.insert_edges(np.arange(10), np.arange(1, 11), **vals),
                general.insert_edges(np.arange(10), np.arange(1, 11), **vals))
    same_graph(g, general, size_classes=True)
    same_change(g.delete_edges(np.arange(0, 10, 2), np.arange(1, 11, 2)),
                general.delete_edges(np.arange(0, 10, 2), np.arange(1, 11, 2)))
    same_graph(g, general, size_classes=True)
    assert small_path_counter[device] == 2
    n = _limit(device) // 2 + 1                             # mirrored: one entry too many
    g.insert_edges(np.arange(n), np.arange(1, n + 1))
    g.insert_edges([0, 1], [5, 6])                          # lists, not arrays
    assert small_path_counter[device] == 2
    g.check()
