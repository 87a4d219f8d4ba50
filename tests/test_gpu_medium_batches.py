"""The medium-batch GPU path (hornet.batch.medium_path): batches past the small path against
the CPU backend, the GPU's planned path and a host edge-set oracle, batch by batch; blocks
from a pool of the bit trees, the block cache's rings left alone; steady churn; long lists cut
into pieces; bad input refused with the planned path's messages and the graph unchanged."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from conftest import HAS_GPU
from hornet.batch.validate import BatchError
from hornet.testing import to_host
from small_batch_checks import PROPS, same_change, same_graph, step_properties

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]


def _graph(device, directed, medium=True, **kw):
    """A graph whose medium batches, inserts and deletes, take the medium path (``medium``)
    or the planned path."""
    g = hornet.Graph(directed=directed, device=device, block_array_edges=1 << 10, **kw)
    g._medium_batches = g.medium_deletes = medium
    return g


@pytest.fixture
def medium_calls(monkeypatch):
    """Counts the batches the medium path really took (``["taken"]``) and those that asked
    for a pool of blocks (``["pool"]``: the memory manager's, or the device's takes)."""
    import hornet.graph
    from hornet.memory.manager import MemoryManager
    counts = {"taken": 0, "pool": 0}
    original = hornet.graph.medium_update

    def counting(graph, *args):
        change = original(graph, *args)
        counts["taken"] += change is not None
        return change
    monkeypatch.setattr(hornet.graph, "medium_update", counting)
    allocate = MemoryManager.allocate_counts

    def pool(self, per_class):
        counts["pool"] += 1
        return allocate(self, per_class)
    monkeypatch.setattr(MemoryManager, "allocate_counts", pool)
    from hornet.memory import gpu_take           # (pools the device takes)
    for name in ("allocate_on_device", "took_ahead"):
        def device_pool(*args, _fn=getattr(gpu_take, name)):
            counts["pool"] += 1
            return _fn(*args)
        monkeypatch.setattr(gpu_take, name, device_pool)
    return counts


def _edge_set(graph, directed):
    s, d = (to_host(a) for a in graph.edges())
    pairs = set(zip(s.tolist(), d.tolist()))
    return pairs if directed else {(u, v) for u, v in pairs if u < v}


@pytest.mark.parametrize("props", [False, True])
@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("ids", [np.int64, np.int32])
def test_medium_batches_match_cpu_planned_and_an_edge_set(directed, ids, props, medium_calls):
    import cupy
    rng = np.random.default_rng(11)
    kw = dict(edge_properties=PROPS) if props else {}
    cpu, medium, planned = (_graph("cpu", directed, **kw), _graph("gpu", directed, **kw),
                            _graph("gpu", directed, medium=False, **kw))
    edges = set()
    steps = 16
    for step in range(steps):
        n = 4000 + 3000 * step                       # the id space grows with the batches
        m = int(rng.integers(4200 if directed else 2100, 14000))   # deletes: 2,000 more
        s, d = rng.integers(0, n, m), rng.integers(0, n, m)
        if step % 5 == 4:
            s[: m // 2] = 3                          # a hub outgrows its blocks
        if step % 4 == 1:
            s[:50] = d[:50]                          # self-loops
            s[m // 2:], d[m // 2:] = s[: m - m // 2], d[: m - m // 2]   # repeats
        if rng.random() < 0.6 or not edges:
            s, d = s.astype(ids), d.astype(ids)
            values = step_properties(rng, m) if props else {}
            changes = [g.insert_edges(cupy.asarray(s) if g.device == "gpu" else s,
                                      cupy.asarray(d) if g.device == "gpu" else d, **values)
                       for g in (cpu, medium, planned)]
            for u, v in zip(s.tolist(), d.tolist()):
                if directed:
                    edges.add((u, v))
                elif u != v:
                    edges.add((min(u, v), max(u, v)))
        else:
            es, ed = cpu.edges()
            pick = rng.choice(es.size, size=min(es.size, m), replace=False)
            s = np.r_[es[pick], s[:2000]].astype(ids)       # present edges and absent ones
            d = np.r_[ed[pick], d[:2000]].astype(ids)
            changes = [g.delete_edges(s, d) for g in (cpu, medium, planned)]
            for u, v in zip(s.tolist(), d.tolist()):
                edges.discard((u, v) if directed else (min(u, v), max(u, v)))
        same_change(changes[0], changes[1])
        same_change(changes[2], changes[1])
        same_graph(cpu, medium)
        same_graph(planned, medium)
        assert _edge_set(medium, directed) == edges
        if step % 4 == 3:
            medium.check()
    medium.check()
    assert medium_calls["taken"] == steps


def test_many_new_lists_take_a_pool_and_long_lists_take_pieces(medium_calls):
    """A batch creating tens of thousands of lists takes their blocks from one pool and leaves
    the block cache's rings as they were; hubs of tens of thousands of entries are rewritten
    in pieces (moving) and by whole blocks (in place); every change and graph equals the CPU
    backend's and the planned path's."""
    rng = np.random.default_rng(12)
    cpu, medium, planned = (_graph("cpu", False), _graph("gpu", False),
                            _graph("gpu", False, medium=False))
    graphs = (cpu, medium, planned)
    # 15,000 fresh vertices, most with one or two edges: thousands of new lists of one class
    s = rng.integers(0, 15000, 15000)
    d = rng.integers(0, 15000, 15000)
    cache = medium._mm.block_cache()
    rings = (list(cache.head), list(cache.tail))
    changes = [g.insert_edges(s, d) for g in graphs]
    same_change(changes[0], changes[1])
    same_change(changes[2], changes[1])
    assert medium_calls["pool"] >= 1 and (cache.head, cache.tail) == rings
    cache.check()
    # hubs 0 and 1 grow past 2 * PIECE_ITEMS (8,192) in a few batches (their lists move in
    # pieces), lose and regain entries
    for step in range(8):
        m = 16000
        s = np.repeat(np.arange(2), m // 2)
        d = rng.integers(10, 60000, m)
        if step % 3 == 2:
            es, ed = cpu.edges()
            hub = es < 2
            pick = rng.choice(np.flatnonzero(hub), size=min(int(hub.sum()), m), replace=False)
            changes = [g.delete_edges(es[pick], ed[pick]) for g in graphs]
        else:
            changes = [g.insert_edges(s, d) for g in graphs]
        same_change(changes[0], changes[1])
        same_change(changes[2], changes[1])
        same_graph(cpu, medium)
        same_graph(planned, medium)
    assert int(to_host(medium.degree())[:2].max()) > 2 * 8192
    medium.check()
    assert medium_calls["taken"] == 9


@pytest.mark.parametrize("directed", [False, True])
def test_deletes_inside_steady_churn_keep_blocks_as_the_planned_path(directed, medium_calls):
    rng = np.random.default_rng(13)
    medium, planned = _graph("gpu", directed), _graph("gpu", directed, medium=False)
    s, d = rng.integers(0, 3000, 15000), rng.integers(0, 3000, 15000)
    for g in (medium, planned):
        g.insert_edges(s, d)
    for step in range(4):
        es, ed = (to_host(a) for a in medium.edges())
        pick = rng.choice(es.size, size=min(es.size, 12000), replace=False)
        with medium.steady_churn(), planned.steady_churn():
            a = medium.delete_edges(es[pick], ed[pick])
            b = planned.delete_edges(es[pick], ed[pick])
            same_change(b, a)
            back = pick[: pick.size * 3 // 4]       # most come back
            a = medium.insert_edges(es[back], ed[back])
            b = planned.insert_edges(es[back], ed[back])
            same_change(b, a)
        same_graph(planned, medium, size_classes=True)
    medium.check()
    assert medium_calls["taken"] == 9


@pytest.mark.parametrize("bad", ["negative", "too large"])
def test_bad_ids_are_refused_with_the_planned_message_and_nothing_changes(bad, medium_calls):
    rng = np.random.default_rng(14)
    g, ref = _graph("gpu", False), _graph("gpu", False, medium=False)
    s, d = rng.integers(0, 5000, 15000), rng.integers(0, 5000, 15000)
    g.insert_edges(s, d)
    ref.insert_edges(s, d)
    d = d.copy()
    d[777] = -4 if bad == "negative" else np.iinfo(np.int32).max
    messages = []
    for graph in (g, ref):
        for op in (graph.insert_edges, graph.delete_edges):
            with pytest.raises(BatchError) as err:
                op(s, d)
            messages.append(str(err.value))
    assert messages[0] == messages[2] and messages[1] == messages[3]
    same_graph(g, ref)
    g.check()
    assert medium_calls["taken"] == 1


def test_medium_batch_bounds(medium_calls):
    """The path takes batches past SMALL_ENTRIES and up to MEDIUM_ENTRIES entries once
    mirrored; the largest against a host oracle."""
    from hornet.batch.gpu.medium import MEDIUM_ENTRIES
    from hornet.batch.small_layout import SMALL_ENTRIES
    rng = np.random.default_rng(15)
    g = _graph("gpu", False)
    g.insert_edges(rng.integers(0, 900, SMALL_ENTRIES // 2),
                   rng.integers(0, 900, SMALL_ENTRIES // 2))
    assert medium_calls["taken"] == 0                 # the small path
    m = MEDIUM_ENTRIES // 2
    s, d = rng.integers(0, 100_000, m), rng.integers(0, 100_000, m)
    before = _edge_set(g, False)
    change = g.insert_edges(s, d)
    assert medium_calls["taken"] == 1
    new = {(min(u, v), max(u, v)) for u, v in zip(s.tolist(), d.tolist()) if u != v} - before
    assert set(zip(to_host(change.src).tolist(), to_host(change.dst).tolist())) == new
    assert _edge_set(g, False) == before | new
    g.insert_edges(rng.integers(0, 1000, m + 1), rng.integers(0, 1000, m + 1))
    assert medium_calls["taken"] == 1                 # past the bound: the planned path
    plain = hornet.Graph(directed=False, device="gpu")
    c = plain.insert_edges(s, d)
    plain.delete_edges(c.src, c.dst)                  # deletes: the planned path by default
    assert medium_calls["taken"] == 2 and plain.num_edges == 0
    g.check()



def test_a_batch_refused_after_its_blocks_were_taken_gives_them_back(medium_calls):
    """A medium insert whose property column is refused once the device has taken its blocks
    (before the read-back, hornet.memory.gpu_take.take_ahead) gives them back: the graph is
    unchanged, the allocator's counts, per class and per array on the host and on the
    device, hold (Graph.check), and the same batch with a good column then goes in as on the
    CPU."""
    from hornet.memory import gpu_take
    given = []
    give_back = gpu_take.give_back_ahead

    def counted(*a):
        given.append(1)
        return give_back(*a)
    gpu_take.give_back_ahead = counted
    try:
        rng = np.random.default_rng(15)
        g = hornet.Graph(directed=False, device="gpu", edge_properties={"w": np.float32})
        g._medium_batches = True
        cpu = hornet.Graph(directed=False, device="cpu", edge_properties={"w": np.float32})
        for step in range(3):
            s, d = rng.integers(0, 20000, 12000), rng.integers(0, 20000, 12000)
            w = rng.random(12000).astype(np.float32)
            for graph in (g, cpu):
                graph.insert_edges(s, d, w=w)
        for k in range(12):                  # room in every class: the take is not short
            g._mm.add_room(k, 30000)
        before = [to_host(a) for a in g.edges()]
        s, d = rng.integers(0, 40000, 12000), rng.integers(0, 40000, 12000)
        taken = medium_calls["taken"]
        with pytest.raises(BatchError):
            g.insert_edges(s, d, w=np.full(12000, np.nan, dtype=np.float32))
        assert given == [1] and medium_calls["taken"] == taken
        assert all(np.array_equal(a, to_host(b)) for a, b in zip(before, g.edges()))
        g.check()
        w = rng.random(12000).astype(np.float32)
        same_change(g.insert_edges(s, d, w=w), cpu.insert_edges(s, d, w=w))
        same_graph(cpu, g)
        g.check()
    finally:
        gpu_take.give_back_ahead = give_back
