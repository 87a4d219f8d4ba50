"""jit.split_kernel and hornet.core.threads: a kernel run in parts on several threads gives
what one call over the whole input gives (oracle: NumPy), whatever the number of parts; a
part's exception reaches the caller; calls from several Python threads at once stay right."""
import threading

import numpy as np
import pytest

from hornet.core import jit, threads


def _squares_body(x, out, part, parts):
    total = 0
    for i in range(*jit.part_range(x.shape[0], part, parts)):
        out[i] = x[i] * x[i]
        total += x[i]
    return total


_squares = jit.SplitKernel(_squares_body, threshold=0, combine=sum, cache=False)


def _checked_body(x, part, parts):
    for i in range(*jit.part_range(x.shape[0], part, parts)):
        if x[i] < 0:
            raise ValueError("negative entry")
    return part


_checked = jit.SplitKernel(_checked_body, threshold=0, cache=False)


@pytest.mark.parametrize("n", [0, 1, 5, 1000])
@pytest.mark.parametrize("parts", [1, 2, 3, 7])
def test_parts_cover_the_input_once(n, parts):
    x = np.arange(n, dtype=np.int64) - 3
    out = np.full(n, -1, np.int64)
    results = threads.run_parts(_squares.kernel, (x, out), parts)
    assert len(results) == parts
    np.testing.assert_array_equal(out, x * x)
    assert sum(results) == x.sum()


def test_split_call_counts_and_combines(monkeypatch):
    monkeypatch.setattr(jit, "parallel_policy", "always")
    x = np.arange(10_000, dtype=np.int64)
    out = np.zeros_like(x)
    calls = jit.parallel_calls
    assert _squares(x, out) == x.sum()
    np.testing.assert_array_equal(out, x * x)
    assert jit.parallel_calls == calls + (threads.parts_for() > 1)
    monkeypatch.setattr(jit, "parallel_policy", "never")
    out[:] = 0
    assert _squares(x, out) == x.sum()                 # one thread
    np.testing.assert_array_equal(out, x * x)
    assert jit.parallel_calls == calls + (threads.parts_for() > 1)


def test_default_policy_keeps_small_calls_on_one_thread(monkeypatch):
    monkeypatch.setattr(jit, "parallel_policy", "tiered")
    x = np.arange(jit.SPLIT_MIN - 1, dtype=np.int64)
    calls = jit.parallel_calls
    _squares(x, np.zeros_like(x))
    assert jit.parallel_calls == calls


def test_a_part_that_raises_raises_in_the_caller():
    x = np.arange(100, dtype=np.int64)
    x[90] = -1                                           # in the last part
    for parts in (1, 2, 4):
        with pytest.raises(ValueError, match="negative entry"):
            threads.run_parts(_checked.kernel, (x,), parts)
    x[90] = 1
    assert threads.run_parts(_checked.kernel, (x,), 4) == [0, 1, 2, 3]   # the pool still works


def test_calls_from_several_threads_at_once():
    xs = [np.arange(50_000, dtype=np.int64) * (k + 1) for k in range(4)]
    outs = [np.zeros_like(x) for x in xs]
    totals = [None] * 4

    def run(k):
        for _ in range(20):
            totals[k] = sum(threads.run_parts(_squares.kernel, (xs[k], outs[k]), 3))

    workers = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    for x, out, total in zip(xs, outs, totals):
        np.testing.assert_array_equal(out, x * x)
        assert total == x.sum()


def test_split_kernels_inline_their_helpers():
    """A split kernel is a caller that jit.inline_when_parallel inlines into."""
    assert (_squares_body.__module__, _squares_body.__qualname__) in jit.parallel_kernels


def _sorted_copy_body(x, part, parts):
    return np.sort(x[part::parts])          # makes an array: needs Numba's runtime


def test_split_kernels_run_without_numbas_runtime_unless_asked():
    """Split kernels compile without Numba's runtime (no reference counts on the arrays they
    hand to helpers); a kernel that makes an array says ``nrt=True`` and then works."""
    assert _squares.kernel.targetoptions["_nrt"] is False
    x = np.array([3, 1, 2, 5, 4], dtype=np.int64)
    without = jit.SplitKernel(_sorted_copy_body, threshold=0, cache=False)
    with pytest.raises(Exception, match="array"):
        without.kernel(x, 0, 1)
    with_runtime = jit.SplitKernel(_sorted_copy_body, threshold=0, cache=False, nrt=True,
                                   combine=lambda parts: np.sort(np.concatenate(parts)))
    np.testing.assert_array_equal(with_runtime.split(x), np.sort(x))


@pytest.mark.parametrize("parts", [1, 16, 17, 64])
@pytest.mark.parametrize("n", [1, 40, 1 << 13, 50_000])
def test_id_bounds_in_more_parts_than_chunks(monkeypatch, parts, n):
    """A machine of many threads runs a call in more parts than the kernel's chunks: a part
    without chunks adds nothing to the bounds (oracle: NumPy's min and max)."""
    from hornet.batch.cpu import ids
    monkeypatch.setattr(jit, "parallel_policy", "always")
    monkeypatch.setattr(jit, "split_min_parts", parts)
    rng = np.random.default_rng(n + parts)
    a = rng.integers(0, 1 << 20, size=n, dtype=np.int64)
    b = rng.integers(-5, 7, size=n, dtype=np.int64)
    assert ids.id_bounds([a, b]) == [a.min(), a.max(), b.min(), b.max()]


def test_graph_batches_in_more_parts_than_chunks(monkeypatch):
    """Insert and delete batches on the CPU backend with every split call in 64 parts (more
    than any kernel's chunks) leave the edge set of a set oracle."""
    import hornet
    monkeypatch.setattr(jit, "parallel_policy", "always")
    monkeypatch.setattr(jit, "split_min_parts", 64)
    rng = np.random.default_rng(7)
    n = 3000                # batches past the kernels' thresholds, so that they split
    s, d = rng.integers(0, n, 40_000), rng.integers(0, n, 40_000)
    g = hornet.Graph.from_edges(s, d, num_vertices=n, directed=True, device="cpu")
    oracle = set(zip(s.tolist(), d.tolist()))
    for _ in range(3):
        s, d = rng.integers(0, n, 20_000), rng.integers(0, n, 20_000)
        g.insert_edges(s, d)
        oracle |= set(zip(s.tolist(), d.tolist()))
        gone = rng.choice(len(oracle), 12_000, replace=False)
        pairs = sorted(oracle)
        ds, dd = np.array([pairs[i] for i in gone]).T
        g.delete_edges(ds, dd)
        oracle -= set(zip(ds.tolist(), dd.tolist()))
        es, ed = g.edges()
        assert set(zip(np.asarray(es).tolist(), np.asarray(ed).tolist())) == oracle
        g.check()


def test_analytics_in_more_parts_than_chunks(monkeypatch):
    """The static analytics, and the dynamic ones through an insert and a delete batch, give
    in 64 parts what the static analytics give on one thread (a machine of many threads)."""
    import hornet
    from hornet import algos
    rng = np.random.default_rng(11)
    n = 2000
    s, d = rng.integers(0, n, 30_000), rng.integers(0, n, 30_000)
    ins_s, ins_d = rng.integers(0, n, 12_000), rng.integers(0, n, 12_000)
    x = rng.random(n)

    def static(g):
        return (algos.bfs(g, 0), algos.triangle_count(g), algos.truss_numbers(g),
                algos.spmv(g, x))

    def same(a, b):
        assert np.array_equal(np.asarray(a[0]), np.asarray(b[0])), int((np.asarray(a[0]) != np.asarray(b[0])).sum())
        assert a[1] == b[1]
        assert np.array_equal(np.asarray(a[2]), np.asarray(b[2]))
        np.testing.assert_allclose(np.asarray(a[3]), np.asarray(b[3]), rtol=1e-12)

    def graph():
        return hornet.Graph.from_edges(s, d, num_vertices=n, directed=False, device="cpu")

    monkeypatch.setattr(jit, "parallel_policy", "never")
    g1 = graph()
    before = static(g1)
    g1.insert_edges(ins_s, ins_d)
    es, ed = g1.edges()
    gone = rng.choice(np.asarray(es).shape[0], 9000, replace=False)
    del_s, del_d = np.asarray(es)[gone], np.asarray(ed)[gone]
    g1.delete_edges(del_s, del_d)
    after = static(g1)

    monkeypatch.setattr(jit, "parallel_policy", "always")
    monkeypatch.setattr(jit, "split_min_parts", 64)
    g = graph()
    same(static(g), before)
    dyn = (algos.DynamicBFS(g, 0), algos.DynamicTriangleCount(g), algos.DynamicTruss(g),
           algos.DynamicSpMV(g, x))
    for apply, batch in ((g.insert_edges, (ins_s, ins_d)), (g.delete_edges, (del_s, del_d))):
        change = apply(*batch)
        for a in dyn:
            a.update(change)
    same(static(g), after)
    same((dyn[0].levels, dyn[1].count, dyn[2].truss_numbers, dyn[3].y), after)
