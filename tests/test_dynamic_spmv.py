"""DynamicSpMV against independent oracles after every batch and every change of x.

Oracles: a plain-Python sum over the reference model (state machine; rows summed in ascending
neighbour order, the order the default mode promises), the static ``hornet.algos.spmv`` on the
same graph (scripted tests, with values whose products and sums are exact, and on the CPU with
general floats too).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import rule

import hornet
import hornet.testing as ht
from hornet.algos import spmv
from hornet.algos.spmv.dynamic import DynamicSpMV
from hornet.testing import to_host


def _x0(v):
    """The x of vertex ids (dyadic: products with dyadic weights stay exact)."""
    v = np.asarray(v)
    return ((v * 7) % 11 - 5) * 0.5


class _Tracked:
    """A DynamicSpMV plus the ids whose x it has been given (new ids get _x0 on first sight)."""

    def __init__(self, g, weight, transpose, resum):
        self.graph = g
        self.known = g.num_vertices
        self.sp = DynamicSpMV(g, _on(g.device, _x0(np.arange(self.known))), weight=weight,
                              transpose=transpose, resum=resum)

    def sync_new_ids(self):
        n = self.graph.num_vertices
        if n > self.known:
            ids = np.arange(self.known, n)
            self.sp.set_x(_on(self.graph.device, ids), _on(self.graph.device, _x0(ids)))
            self.known = n

    def update(self, change):
        self.sp.update(change)
        self.sync_new_ids()

    def set_x(self, idx, vals):
        self.sync_new_ids()
        self.sp.set_x(_on(self.graph.device, np.asarray(idx, np.int64)),
                      _on(self.graph.device, np.asarray(vals, np.float64)))


def _on(device, a):
    if device == "gpu":
        import cupy
        return cupy.asarray(a)
    return np.asarray(a)


def _oracle(ref, weight, transpose):
    """y[r] = sum over r's terms (ascending column) of w * x[c], one float64 op at a time."""
    n = ref.num_vertices
    over = getattr(ref, "x_overrides", {})
    x = [over.get(v, float(_x0(v))) for v in range(n)]
    terms = [[] for _ in range(n)]
    for (u, v), p in ref.edges.items():
        w = float(p[weight]) if weight else None
        pairs = [(u, v)] if ref.directed else [(u, v), (v, u)]
        for a, b in pairs:
            r, c = (b, a) if transpose and ref.directed else (a, b)
            terms[r].append((c, w))
    y = np.zeros(n, dtype=np.float64)
    for r in range(n):
        acc = 0.0
        for c, w in sorted(terms[r]):
            acc += x[c] if w is None else w * x[c]
        y[r] = acc
    return y


def _machine(device, directed, weighted, checks):
    props = {"w": np.float64 if directed else np.float32} if weighted else {}
    Base = ht.graph_state_machine(device=device, directed=directed, edge_properties=props,
                                  max_vertex=16, max_batch=24, algorithms=checks)

    class Machine(Base):
        @rule(data=st.data())
        def set_x(self, data):
            n = self.graph.num_vertices
            if n == 0:
                return
            idx = data.draw(st.lists(st.integers(0, n - 1), max_size=6))
            vals = [0.25 * k for k in data.draw(st.lists(st.integers(-8, 8), min_size=len(idx),
                                                         max_size=len(idx)))]
            over = self.ref.__dict__.setdefault("x_overrides", {})
            for i, v in zip(idx, vals):
                over[i] = v                       # the last value of a repeated id wins
            for _, alg in self.algos:
                alg.set_x(idx, vals)

    Machine.TestCase.settings = settings(Machine.TestCase.settings, max_examples=20,
                                         stateful_step_count=20, deadline=None)
    return Machine


def _check(weight, transpose, resum):
    name = f"spmv weight={weight} transpose={transpose} resum={resum}"
    return ht.AlgorithmCheck(
        name, create=lambda g: _Tracked(g, weight, transpose, resum),
        result=lambda a: a.sp.y, oracle=lambda ref: _oracle(ref, weight, transpose))


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_state_machine(device, directed, weighted):
    """Random batches and x changes; general float weights: the default (re-sum) mode equals
    the oracle's sum bit for bit. Without weights (integer-valued terms) the delta mode is
    exact too and is checked alongside."""
    w = "w" if weighted else None
    checks = [_check(w, False, True), _check(w, True, True)]
    if not weighted:
        checks += [_check(None, False, False), _check(None, True, False)]
    _machine(device, directed, weighted, checks).TestCase().runTest()


# ------------------------------------------------------------------ scripted, against spmv


def _random_graph(device, directed, rng, n=40, m=160):
    g = hornet.Graph(directed=directed, device=device, edge_properties={"w": np.float64})
    g.insert_edges(_on(device, rng.integers(0, n, m)), _on(device, rng.integers(0, n, m)),
                   w=_on(device, rng.integers(-4, 5, m) * 0.5))
    return g


@pytest.mark.parallel_kernels
@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("weight", [None, "w"])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("resum", [True, False])
def test_equals_static_spmv_exact_values(device, directed, weight, transpose, resum):
    """Dyadic weights and x: every order sums exactly, so dynamic == static spmv bit for bit
    on both devices, in both modes, after insert / delete / update / vertex batches and x
    changes (repeated ids included)."""
    rng = np.random.default_rng(11)
    g = _random_graph(device, directed, rng)
    x = rng.integers(-3, 4, g.num_vertices) * 0.25
    sp = DynamicSpMV(g, _on(device, x), weight=weight, transpose=transpose, resum=resum)
    for step in range(15):
        k = 25
        r = step % 5
        if r in (0, 1):
            ch = g.insert_edges(_on(device, rng.integers(0, 45, k)),
                                _on(device, rng.integers(0, 45, k)),
                                w=_on(device, rng.integers(-4, 5, k) * 0.5))
        elif r == 2:
            s, d = map(to_host, g.edges())
            m = rng.random(s.shape[0]) < 0.3
            ch = g.delete_edges(_on(device, s[m]), _on(device, d[m]))
        elif r == 3:
            s, d = map(to_host, g.edges())
            m = rng.random(s.shape[0]) < 0.4
            ch = g.update_edges(_on(device, s[m]), _on(device, d[m]),
                                w=_on(device, rng.integers(-4, 5, int(m.sum())) * 0.5))
        else:
            ch = g.delete_vertices(_on(device, rng.integers(0, g.num_vertices, 2)))
        sp.update(ch)
        n = g.num_vertices
        x = np.concatenate([x, np.zeros(n - x.shape[0])])
        idx = np.concatenate([rng.integers(0, n, 4), [0, 0]])
        vals = np.concatenate([rng.integers(-3, 4, 4) * 0.25, [1.5, -2.0]])
        sp.set_x(_on(device, idx), _on(device, vals))
        x[idx] = vals                                  # (NumPy: the last of a repeat wins)
        want = to_host(spmv(g, _on(device, x), weight, transpose))
        assert np.array_equal(to_host(sp.y), want), (step, np.abs(to_host(sp.y) - want).max())
        assert np.array_equal(to_host(sp.x), x)


@pytest.mark.parametrize("kernel", ["warp", "thread"])
def test_general_floats_resum_matches_cpu_static_bits(device, kernel, monkeypatch):
    """Weights and x with full mantissas (float32 subnormal weights included) and hub rows
    longer than a warp: the default mode equals the CPU static kernel (A x) bit for bit on
    both devices (the GPU's rows follow the CPU kernel's order, with either GPU kernel)."""
    if device == "cpu" and kernel == "thread":
        pytest.skip("the GPU re-sum kernel choice does not apply to the CPU")
    from hornet.algos.spmv import dynamic as dynamic_spmv
    monkeypatch.setattr(dynamic_spmv, "GPU_RESUM_KERNEL", kernel)
    rng = np.random.default_rng(3)
    n = 150

    def weights(k):
        w = rng.standard_normal(k).astype(np.float32)
        w[::7] = np.float32(1e-40) * rng.integers(1, 9, w[::7].shape[0])   # subnormals
        return w

    def pairs(k):
        s, d = rng.integers(0, n, k), rng.integers(0, n, k)
        s[: k // 3] = rng.integers(0, 3, k // 3)         # three hubs (rows of 100+ entries)
        return s, d

    g = hornet.Graph(directed=True, device=device, edge_properties={"w": np.float32})
    s, d = pairs(900)
    g.insert_edges(_on(device, s), _on(device, d), w=_on(device, weights(900)))
    x = rng.standard_normal(g.num_vertices)
    sp = DynamicSpMV(g, _on(device, x), weight="w")
    for _ in range(6):
        s, d = pairs(60)
        sp.update(g.insert_edges(_on(device, s), _on(device, d), w=_on(device, weights(60))))
        es, ed = map(to_host, g.edges())
        m = rng.random(es.shape[0]) < 0.2
        sp.update(g.delete_edges(_on(device, es[m]), _on(device, ed[m])))
        m = rng.random(es.shape[0]) < 0.2
        sp.update(g.update_edges(_on(device, es[m]), _on(device, ed[m]),
                                 w=_on(device, weights(int(m.sum())))))
        idx = rng.integers(0, g.num_vertices, 5)
        vals = rng.standard_normal(5)
        sp.set_x(_on(device, idx), _on(device, vals))
        x = np.concatenate([x, np.zeros(g.num_vertices - x.shape[0])])
        x[idx] = vals
        indptr, indices, data = map(to_host, g.to_csr("w"))
        host = hornet.Graph.from_csr(indptr, indices, directed=True, device="cpu", w=data)
        assert np.array_equal(to_host(sp.y), spmv(host, x, "w"))


def test_delta_mode_drift_is_rounding_only():
    """General floats in delta mode: y drifts from a fresh sum only by rounding; drift()
    measures it and a re-summing object stays exact."""
    rng = np.random.default_rng(4)
    g = hornet.Graph(directed=False, device="cpu", edge_properties={"w": np.float64})
    g.insert_edges(rng.integers(0, 80, 600), rng.integers(0, 80, 600),
                   w=rng.standard_normal(600))
    x = rng.standard_normal(80)
    delta = DynamicSpMV(g, x, weight="w", resum=False)
    exact = DynamicSpMV(g, x, weight="w")
    for _ in range(30):
        ch = g.insert_edges(rng.integers(0, 80, 40), rng.integers(0, 80, 40),
                            w=rng.standard_normal(40))
        delta.update(ch)
        exact.update(ch)
        s, d = g.edges()
        m = rng.random(s.shape[0]) < 0.1
        ch = g.delete_edges(s[m], d[m])
        delta.update(ch)
        exact.update(ch)
    fresh = spmv(g, x, "w")
    assert np.array_equal(exact.y, fresh)
    scale = float(np.abs(fresh).max())
    assert delta.drift() == float(np.abs(delta.y - fresh).max())
    assert delta.drift() <= 1e-12 * scale * 60


def test_set_x_bad_input_leaves_state(device):
    rng = np.random.default_rng(5)
    g = _random_graph(device, True, rng)
    sp = DynamicSpMV(g, _on(device, np.ones(g.num_vertices)))
    before = to_host(sp.y)
    n = g.num_vertices
    with pytest.raises(ValueError):
        sp.set_x(_on(device, [0, n]), _on(device, [1.0, 2.0]))
    with pytest.raises(ValueError):
        sp.set_x(_on(device, [-1]), _on(device, [1.0]))
    with pytest.raises(TypeError):
        sp.set_x(_on(device, [0.5]), _on(device, [1.0]))
    with pytest.raises(TypeError):
        sp.set_x(_on(device, [0]), np.array(["a"]))
    with pytest.raises(ValueError):
        sp.update("not a change")
    assert np.array_equal(to_host(sp.y), before)
    assert np.array_equal(to_host(sp.x), np.ones(n))


def test_constructor_checks(device):
    rng = np.random.default_rng(6)
    g = _random_graph(device, False, rng)
    with pytest.raises(KeyError):
        DynamicSpMV(g, _on(device, np.ones(g.num_vertices)), weight="nope")
    with pytest.raises(ValueError):
        DynamicSpMV(g, _on(device, np.ones(g.num_vertices + 1)))
    with pytest.raises(TypeError):
        DynamicSpMV(object(), np.ones(3))


def test_id_space_grows(device):
    g = hornet.Graph(directed=True, device=device)
    g.insert_edges(_on(device, [0, 1]), _on(device, [1, 2]))
    sp = DynamicSpMV(g, _on(device, [1.0, 2.0, 4.0]), transpose=True)
    sp.update(g.insert_edges(_on(device, [2, 100]), _on(device, [100, 0])))
    g.insert_vertices(_on(device, [300]))
    sp.set_x(_on(device, [100, 300]), _on(device, [8.0, 16.0]))
    x = np.zeros(301)
    x[[0, 1, 2, 100, 300]] = [1.0, 2.0, 4.0, 8.0, 16.0]
    assert np.array_equal(to_host(sp.y), to_host(spmv(g, _on(device, x), transpose=True)))
