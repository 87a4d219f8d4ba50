"""Host (NumPy) inputs to GPU graphs: batches uploaded through the pinned staging buffers
(hornet.batch.gpu.pairs, hornet.core.cuda.upload) and vertex ids checked on the host give the
same graphs, changes and refusals as device inputs and as the CPU backend."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from conftest import HAS_GPU
from hornet.batch.validate import BatchError
from hornet.testing import to_host

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]


def test_uploads_in_flight_keep_their_own_bytes():
    """More uploads queued without a synchronization than there are staging buffers, of
    growing sizes (buffers replaced on the way): every device copy equals its host array."""
    import cupy
    from hornet.core.cuda import STAGING_BUFFERS, upload
    rng = np.random.default_rng(1)
    hosts, devs = [], []
    for k in range(3 * STAGING_BUFFERS + 1):
        a = rng.integers(-2**40, 2**40, size=1 + 97 * k * k, dtype=np.int64)
        hosts.append(a)
        devs.append(upload(a))
        a_copy = a.copy()
        a[:] = -1                         # the host array may change at once
        hosts[-1] = a_copy
    cupy.cuda.Device().synchronize()
    for h, d in zip(hosts, devs):
        assert d.dtype == h.dtype and np.array_equal(cupy.asnumpy(d), h)


@pytest.mark.parametrize("dtypes", [(np.int64, np.int64), (np.int32, np.int32),
                                    (np.uint32, np.uint32), (np.int32, np.int64),
                                    (np.int16, np.uint8)])
def test_device_pairs_keep_values_and_pick_one_dtype(dtypes):
    import cupy
    from hornet.batch.gpu.pairs import STAGED_PAIR_BYTES, device_pairs
    rng = np.random.default_rng(2)
    for n in (1, 1000, STAGED_PAIR_BYTES // 8 + 5):     # staged, and past the staging size
        s = rng.integers(0, 200, n).astype(dtypes[0])
        d = rng.integers(0, 200, n).astype(dtypes[1])
        for conv in (lambda x: x, cupy.asarray):
            a, b = device_pairs(conv(s), conv(d))
            want = dtypes[0] if dtypes[0] == dtypes[1] and \
                np.dtype(dtypes[0]) in (np.int32, np.int64) else np.int64
            assert isinstance(a, cupy.ndarray) and a.dtype == b.dtype == want
            assert a.flags.c_contiguous and b.flags.c_contiguous
            assert np.array_equal(cupy.asnumpy(a), s.astype(np.int64))
            assert np.array_equal(cupy.asnumpy(b), d.astype(np.int64))


@pytest.mark.parametrize("directed", [False, True])
def test_host_batches_on_the_small_and_planned_paths_match_the_cpu(directed):
    """Host batches of every size the GPU paths take (small path, planned path staged and
    not staged), with repeats and self-loops, insert and delete: the GPU graph equals the
    CPU graph and a set of edges kept by brute force after every batch (an undirected
    graph lists each edge once and drops self-loops; a directed graph keeps them)."""
    _host_batches_against_an_oracle(directed, "gpu")


def _host_batches_against_an_oracle(directed: bool, device: str):
    rng = np.random.default_rng(3)
    cpu = hornet.Graph(directed=directed, device="cpu")
    gpu = hornet.Graph(directed=directed, device=device)
    edges = set()                                     # undirected: (min, max) of each edge
    for step, m in enumerate([300, 1500, 20000, 90000, 700, 40000, 2000, 150000]):
        n = 4000 + 3000 * step
        s = rng.integers(0, n, m).astype(np.int32 if step % 2 else np.int64)
        d = rng.integers(0, n, m).astype(s.dtype)
        s[:20] = d[:20]                               # self-loops
        if step % 3 == 2:                             # delete present and absent edges
            es, ed = cpu.edges()
            k = min(es.size, m // 2)
            pick = rng.choice(es.size, size=k, replace=False)
            s = np.r_[es[pick], s[:m - k]].astype(s.dtype)
            d = np.r_[ed[pick], d[:m - k]].astype(d.dtype)
            a, b = cpu.delete_edges(s, d), gpu.delete_edges(s, d)
            for u, v in zip(s.tolist(), d.tolist()):
                edges.discard((u, v) if directed else (min(u, v), max(u, v)))
        else:
            a, b = cpu.insert_edges(s, d), gpu.insert_edges(s, d)
            for u, v in zip(s.tolist(), d.tolist()):
                if directed:
                    edges.add((u, v))
                elif u != v:
                    edges.add((min(u, v), max(u, v)))
        assert np.array_equal(to_host(a.src), to_host(b.src))
        assert np.array_equal(to_host(a.dst), to_host(b.dst))
        gs, gd = gpu.edges()
        pairs = list(zip(to_host(gs).tolist(), to_host(gd).tolist()))
        if not directed:
            pairs = [(min(u, v), max(u, v)) for u, v in pairs]
        assert len(pairs) == len(set(pairs)) and set(pairs) == edges
    gpu.check()


def test_host_vertex_ids_grow_the_id_space_and_are_refused_like_device_ids():
    import cupy
    cpu = hornet.Graph(directed=True, device="cpu", vertex_properties={"label": np.int32})
    gpu = hornet.Graph(directed=True, device="gpu", vertex_properties={"label": np.int32})
    for g in (cpu, gpu):
        g.insert_edges(np.array([0, 1]), np.array([1, 2]))
        g.insert_vertices(np.array([9], dtype=np.int64))
        g.insert_vertices(np.array([4, 12, 4], dtype=np.int32), label=np.array([1, 2, 3]))
        assert g.num_vertices == 13
    assert to_host(gpu.vertex_property("label")).tolist() == \
        to_host(cpu.vertex_property("label")).tolist() == [0, 0, 0, 0, 3] + [0] * 7 + [2]
    for bad in (np.array([3, -1]), np.array([2**31])):
        messages = []
        for g, conv in ((cpu, lambda x: x), (gpu, lambda x: x), (gpu, cupy.asarray)):
            with pytest.raises(BatchError) as e:
                g.insert_vertices(conv(bad))
            messages.append(str(e.value))
            assert g.num_vertices == 13
        assert len(set(messages)) == 1
    with pytest.raises(TypeError):
        gpu.insert_vertices(np.array([1.5]))
    gpu.check()
