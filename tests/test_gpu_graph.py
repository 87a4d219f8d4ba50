"""GPU backend: the same batches on CPU and GPU give identical graphs; out-of-memory safety."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from conftest import HAS_GPU
from hornet.testing import to_host

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]


def _snapshot(g):
    s, d, p = g.edges(properties=True)
    return to_host(s), to_host(d), {k: to_host(v) for k, v in p.items()}, to_host(g.degree())


@pytest.mark.parametrize("directed", [False, True])
def test_cpu_and_gpu_agree_batch_by_batch(directed):
    rng = np.random.default_rng(11)
    props = {"w": np.float32, "t": np.int64}
    cpu = hornet.Graph(directed=directed, device="cpu", edge_properties=props,
                       block_array_edges=256)
    gpu = hornet.Graph(directed=directed, device="gpu", edge_properties=props,
                       block_array_edges=256)
    n = 3000
    for step in range(40):
        m = int(rng.integers(1, 20000))
        s, d = rng.integers(0, n, m), rng.integers(0, n, m)
        if step % 8 == 7:                       # a hub: lists outgrow block arrays
            s[: m // 2] = 7
        kind = rng.random()
        if kind < 0.55:
            w = rng.random(m).astype(np.float32)
            t = rng.integers(0, 10**9, m)
            a, b = cpu.insert_edges(s, d, w=w, t=t), gpu.insert_edges(s, d, w=w, t=t)
        elif kind < 0.9:
            es, ed = cpu.edges()
            pick = rng.choice(es.size, size=min(es.size, m), replace=False) if es.size else []
            s, d = np.r_[es[pick], s[:100]], np.r_[ed[pick], d[:100]]
            a, b = cpu.delete_edges(s, d), gpu.delete_edges(s, d)
        else:
            w = rng.random(m).astype(np.float32)
            a, b = cpu.update_edges(s, d, w=w), gpu.update_edges(s, d, w=w)
        assert np.array_equal(to_host(a.src), to_host(b.src))
        assert np.array_equal(to_host(a.dst), to_host(b.dst))
        for k in a.properties:
            assert np.array_equal(to_host(a.properties[k]), to_host(b.properties[k]))
        cs, gs = _snapshot(cpu), _snapshot(gpu)
        assert np.array_equal(cs[0], gs[0]) and np.array_equal(cs[1], gs[1])
        for k in props:
            assert np.array_equal(cs[2][k], gs[2][k])
        assert np.array_equal(cs[3], gs[3])
        if step % 10 == 0:
            gpu.check()
    gpu.check()
    assert cpu.memory_stats()["stored_entries"] == gpu.memory_stats()["stored_entries"]


def test_results_live_on_the_device_and_inputs_may_be_cupy():
    import cupy
    g = hornet.Graph(directed=False, device="gpu")
    c = g.insert_edges(cupy.asarray([0, 1, 2]), cupy.asarray([1, 2, 3]))
    assert isinstance(c.src, cupy.ndarray) and isinstance(g.degree(), cupy.ndarray)
    g.insert_edges(np.array([3]), np.array([4]))                # NumPy input too
    s, d = g.edges()
    assert isinstance(s, cupy.ndarray) and to_host(s).tolist() == [0, 1, 2, 3]
    g.check()


def test_out_of_device_memory_leaves_the_graph_unchanged():
    import cupy
    pool = cupy.get_default_memory_pool()
    g = hornet.Graph(directed=False, device="gpu")
    rng = np.random.default_rng(0)
    g.insert_edges(rng.integers(0, 1 << 16, 100_000), rng.integers(0, 1 << 16, 100_000))
    before = _snapshot(g)
    cupy.cuda.Device().synchronize()
    limit = pool.total_bytes() + (8 << 20)        # room for temporaries, not for new blocks
    pool.set_limit(size=limit)
    try:
        hub = np.zeros(20_000_000, dtype=np.int64)
        with pytest.raises(MemoryError) as info:
            g.insert_edges(hub, np.arange(1, 20_000_001))
        assert isinstance(info.value, hornet.DeviceMemoryError)
        assert info.value.bytes_needed > 0 and "bytes" in str(info.value)
    finally:
        pool.set_limit(size=0)
    g.check()
    after = _snapshot(g)
    assert all(np.array_equal(a, b) for a, b in zip(before[:2], after[:2]))
