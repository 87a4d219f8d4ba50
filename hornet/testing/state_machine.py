"""A Hypothesis state machine that drives a graph and checks it after every step.

It applies random insert / delete / update / vertex batches (and refused, malformed ones) to a
:class:`hornet.Graph` and to a :class:`ReferenceGraph`, then compares edges, properties,
degrees and invariants. Users attach their own dynamic algorithm with an oracle:

    >>> import hornet.testing as ht
    >>> class CountEdges:                     # a toy dynamic algorithm
    ...     def __init__(self, g): self.count = g.num_edges
    ...     def update(self, change):
    ...         self.count += len(change) if change.kind == "insert" else -len(change)
    >>> check = ht.AlgorithmCheck("edges", create=CountEdges, result=lambda a: a.count,
    ...                           oracle=lambda ref: len(ref.edges))
    >>> Machine = ht.graph_state_machine(directed=False, algorithms=[check])
    >>> TestCountEdges = Machine.TestCase      # collected by pytest

After every step, for every check, ``result(alg)`` must equal ``oracle(reference)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from .reference import ReferenceGraph
from .strategies import edge_batches, property_values, vertex_ids

__all__ = ["AlgorithmCheck", "graph_state_machine", "to_host", "BAD_BATCHES"]


def to_host(x):
    """NumPy view of a NumPy or CuPy array (scalars pass through)."""
    if hasattr(x, "get") and not isinstance(x, np.ndarray):
        return x.get()
    return x


def _exactly_equal(a, b) -> bool:
    a, b = to_host(a), to_host(b)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_exactly_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    return a == b


@dataclass
class AlgorithmCheck:
    """A dynamic algorithm under test and the oracle it must match after every step.

    ``create(graph)`` builds it; ``update(alg, change)`` feeds it each
    :class:`~hornet.EdgeChange` (default: ``alg.update(change)``); ``result(alg)`` reads it;
    ``oracle(reference)`` recomputes the expected value from the :class:`ReferenceGraph`;
    ``equal`` compares (default: exact, arrays element-wise).
    """

    name: str
    create: Callable[[Any], Any]
    oracle: Callable[[ReferenceGraph], Any]
    result: Callable[[Any], Any]
    update: Callable[[Any, Any], None] = lambda alg, change: alg.update(change)
    equal: Callable[[Any, Any], bool] = _exactly_equal


def _bad_batches(schema: dict):
    """Malformed inputs, each with the exception types it may raise."""
    from ..batch.validate import BatchError
    bad = [
        ("negative id", lambda: ((np.array([0, -1]), np.array([1, 2])), {}), BatchError),
        ("float ids", lambda: ((np.array([0.0, 1.0]), np.array([1.0, 2.0])), {}), TypeError),
        ("length mismatch", lambda: ((np.array([0, 1, 2]), np.array([1, 2])), {}), BatchError),
        ("id beyond int32", lambda: ((np.array([0, 2**31 + 5]), np.array([1, 2])), {}),
         BatchError),
        ("2-D ids", lambda: ((np.zeros((2, 2), np.int64), np.zeros((2, 2), np.int64)), {}),
         BatchError),
        ("unknown property", lambda: ((np.array([0]), np.array([1])), {"no_such_prop": [1.0]}),
         BatchError),
    ]
    for name, dt in schema.items():
        if np.dtype(dt).kind == "f":
            bad.append((f"NaN {name}", lambda name=name: ((np.array([0, 1]), np.array([1, 2])),
                                                          {name: np.array([1.0, np.nan])}),
                        BatchError))
        bad.append((f"string {name}", lambda name=name: ((np.array([0]), np.array([1])),
                                                         {name: np.array(["x"])}), TypeError))
        bad.append((f"short {name}", lambda name=name: ((np.array([0, 1]), np.array([1, 2])),
                                                        {name: np.ones(3)}), BatchError))
        if np.dtype(dt).kind in "iu":
            bad.append((f"float into int {name}", lambda name=name: (
                (np.array([0]), np.array([1])), {name: np.array([0.5])}), TypeError))
    return bad


BAD_BATCHES = _bad_batches


def graph_state_machine(*, directed: bool = False, device: str = "cpu",
                        edge_properties: dict | None = None,
                        vertex_properties: dict | None = None, max_vertex: int = 40,
                        max_batch: int = 48, block_array_edges: int = 16,
                        min_block_size: int = 1,
                        algorithms: list[AlgorithmCheck] | tuple = ()):
    """A RuleBasedStateMachine class checking a :class:`hornet.Graph` against the reference.

    Small ``block_array_edges`` (default 16) makes hubs outgrow block arrays quickly, so
    dedicated arrays, growth across many size classes, release and compaction all happen
    within a few steps. Use ``Machine.TestCase`` as a pytest/unittest test.
    """
    from ..batch.validate import BatchError
    from ..graph import Graph

    eprops = {k: np.dtype(v) for k, v in (edge_properties or {}).items()}
    vprops = {k: np.dtype(v) for k, v in (vertex_properties or {}).items()}
    bad_inputs = _bad_batches(eprops)
    ids = st.integers(0, max_vertex - 1)

    class GraphMachine(RuleBasedStateMachine):
        def __init__(self):
            super().__init__()
            self.graph = Graph(directed=directed, device=device, edge_properties=eprops,
                               vertex_properties=vprops, block_array_edges=block_array_edges,
                               min_block_size=min_block_size)
            self.ref = ReferenceGraph(directed, eprops, vprops)
            self.algos = [(c, c.create(self.graph)) for c in algorithms]

        # ------------------------------------------------------------ helpers
        def _feed(self, change):
            for check, alg in self.algos:
                check.update(alg, change)

        def _assert_change(self, change, expected: dict, with_props: bool = True):
            src, dst = to_host(change.src).tolist(), to_host(change.dst).tolist()
            got = list(zip(src, dst))
            assert got == sorted(expected), f"{change.kind}: got {got}, expected " \
                                            f"{sorted(expected)}"
            if with_props:
                for name in eprops:
                    vals = to_host(change.properties[name]).tolist()
                    want = [expected[k][name] for k in sorted(expected)]
                    assert vals == want, f"{change.kind} {name}: {vals} != {want}"

        def _existing(self, data, max_size):
            edges = self.ref.edge_list()
            if not edges:
                return np.empty(0, np.int64), np.empty(0, np.int64)
            picks = data.draw(st.lists(st.integers(0, len(edges) - 1), max_size=max_size))
            pairs = np.asarray([edges[i] for i in picks], dtype=np.int64).reshape(-1, 2)
            flip = data.draw(st.booleans())
            if flip and not directed:   # undirected deletes may name either direction
                pairs = pairs[:, ::-1]
            return pairs[:, 0].copy(), pairs[:, 1].copy()

        # ------------------------------------------------------------ rules
        @rule(batch=edge_batches(max_vertex, max_size=max_batch, properties=eprops))
        def insert(self, batch):
            change = self.graph.insert_edges(batch["src"], batch["dst"], **batch["props"])
            expected = self.ref.insert(batch["src"], batch["dst"], batch["props"])
            self._assert_change(change, expected)
            loops = int((batch["src"] == batch["dst"]).sum()) if not directed else 0
            assert change.self_loops_skipped == loops
            self._feed(change)

        @rule(hub=ids, data=st.data())
        def grow_hub(self, hub, data):
            """Connect one vertex to many others: its list crosses several size classes."""
            others = np.arange(max_vertex, dtype=np.int64)
            props = {n: data.draw(property_values(dt, max_vertex)) for n, dt in eprops.items()}
            src = np.full(max_vertex, hub, dtype=np.int64)
            change = self.graph.insert_edges(src, others, **props)
            self._assert_change(change, self.ref.insert(src, others, props))
            self._feed(change)

        @rule(data=st.data())
        def delete_existing(self, data):
            s, d = self._existing(data, max_batch)
            extra = data.draw(edge_batches(max_vertex, max_size=8))
            s = np.concatenate([s, extra["src"]])
            d = np.concatenate([d, extra["dst"]])
            change = self.graph.delete_edges(s, d)
            self._assert_change(change, self.ref.delete(s, d))
            self._feed(change)

        @rule(batch=edge_batches(max_vertex, max_size=max_batch))
        def delete_random(self, batch):
            change = self.graph.delete_edges(batch["src"], batch["dst"])
            self._assert_change(change, self.ref.delete(batch["src"], batch["dst"]))
            self._feed(change)

        @precondition(lambda self: bool(eprops))
        @rule(data=st.data())
        def update(self, data):
            s, d = self._existing(data, max_batch)
            extra = data.draw(edge_batches(max_vertex, max_size=4))
            s = np.concatenate([s, extra["src"]])
            d = np.concatenate([d, extra["dst"]])
            names = data.draw(st.sets(st.sampled_from(sorted(eprops)), min_size=1))
            props = {n: data.draw(property_values(eprops[n], s.shape[0])) for n in names}
            change = self.graph.update_edges(s, d, **props)
            expected = self.ref.update(s, d, props)
            self._assert_change(change, {k: v for k, v in expected.items()}, with_props=False)
            for n in names:
                want = [expected[k][n] for k in sorted(expected)]
                assert to_host(change.properties[n]).tolist() == want
            self._feed(change)

        @rule(data=st.data())
        def insert_vertices(self, data):
            v = data.draw(vertex_ids(max_vertex + 8, max_size=6))
            props = {n: data.draw(property_values(dt, v.shape[0])) for n, dt in vprops.items()}
            # repeated ids: the last value wins in both (plain assignment)
            self.graph.insert_vertices(v, **props)
            self.ref.insert_vertices(v, props)

        @precondition(lambda self: self.ref.num_vertices > 0)
        @rule(data=st.data())
        def delete_vertices(self, data):
            v = data.draw(vertex_ids(self.ref.num_vertices, max_size=3))
            change = self.graph.delete_vertices(v)
            self._assert_change(change, self.ref.delete_vertices(v))
            self._feed(change)

        @rule()
        def delete_everything(self):
            """Shrink back to empty: every block is released and memory follows."""
            s, d = self.graph.edges()
            change = self.graph.delete_edges(s, d)
            self._assert_change(change, self.ref.delete(to_host(s), to_host(d)))
            self._feed(change)
            stats = self.graph.memory_stats()
            assert stats["block_bytes"] == 0, f"empty graph still holds {stats['block_bytes']}" \
                                              " bytes of blocks"

        @rule(which=st.integers(0, len(bad_inputs) - 1))
        def refused_batch(self, which):
            name, make, error = bad_inputs[which]
            (src, dst), props = make()
            before = self.graph.edges(properties=True)
            n_before = self.graph.num_vertices
            mem_before = self.graph.memory_stats()["reserved_bytes"]
            op = [self.graph.insert_edges, self.graph.delete_edges,
                  self.graph.update_edges][which % 3] if not props else self.graph.insert_edges
            try:
                op(src, dst, **props)
            except (BatchError, TypeError, ValueError) as exc:
                assert isinstance(exc, error) or op is not self.graph.insert_edges, \
                    f"{name}: raised {type(exc).__name__}, expected {error.__name__}"
                assert str(exc), f"{name}: empty error message"
            else:
                raise AssertionError(f"{name}: the batch was accepted")
            after = self.graph.edges(properties=True)
            assert _exactly_equal(before[:2], after[:2]), f"{name} changed the edges"
            assert all(_exactly_equal(before[2][k], after[2][k]) for k in before[2])
            assert self.graph.num_vertices == n_before
            assert self.graph.memory_stats()["reserved_bytes"] == mem_before

        # ------------------------------------------------------------ invariants
        @invariant()
        def matches_reference(self):
            g, ref = self.graph, self.ref
            g.check()
            assert g.num_vertices == ref.num_vertices, (g.num_vertices, ref.num_vertices)
            assert g.num_edges == len(ref.edges)
            src, dst, props = g.edges(properties=True)
            pairs = list(zip(to_host(src).tolist(), to_host(dst).tolist()))
            want = ref.edge_list()
            assert pairs == want, "edge sets differ"
            for name in eprops:
                assert to_host(props[name]).tolist() == [ref.edges[k][name] for k in want], name
            assert np.array_equal(to_host(g.degree()), ref.degree())
            for name, dt in vprops.items():
                col = to_host(g.vertex_property(name))
                expect = np.zeros(ref.num_vertices, dtype=dt)
                for v, x in ref.vertex_values[name].items():
                    expect[v] = x
                assert np.array_equal(col, expect), f"vertex property {name}"
            stats = g.memory_stats()
            assert stats["edge_bytes"] <= stats["reserved_bytes"]

        @invariant()
        def algorithms_match_oracles(self):
            for check, alg in self.algos:
                got, want = check.result(alg), check.oracle(self.ref)
                assert check.equal(got, want), f"{check.name}: {got!r} != oracle {want!r}"

    GraphMachine.__name__ = f"GraphMachine_{'directed' if directed else 'undirected'}_{device}"
    return GraphMachine
