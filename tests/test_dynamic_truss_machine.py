"""DynamicTruss in the graph state machine (CPU and GPU): random insert / delete / update /
vertex / hub / refused batches, checked against independent oracles after every step.

Oracles, recomputed from the state machine's reference model (its edge dict, not the graph):
the static truss decomposition of a scipy matrix built from it, and networkx ``k_truss`` for
k_max and the 4-truss edge list. Every configuration runs with the static fallback disabled
(the dynamic region algorithms decide every batch), with the default thresholds and with
every batch through the whole-graph fallback.
"""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import settings

import hornet.testing as ht
from hornet.algos import truss_numbers
from hornet.algos.ktruss.dynamic import DynamicTruss

from truss_checks import MODES, pairs


def _nx_graph(ref) -> nx.Graph:
    """The reference's underlying undirected simple graph (directed: u-v when u->v or v->u;
    self-loops left out)."""
    G = nx.Graph()
    G.add_nodes_from(range(ref.num_vertices))
    G.add_edges_from((u, v) for u, v in ref.edges if u != v)
    return G


def _static_truss(ref, G: nx.Graph) -> np.ndarray:
    """Static decomposition of the reference's underlying undirected graph ``G`` (a scipy
    matrix built from its edges), one value per reference edge (0 for a self-loop)."""
    und = sorted((min(u, v), max(u, v)) for u, v in G.edges())
    n = ref.num_vertices
    rows = [u for u, v in und] + [v for u, v in und]
    cols = [v for u, v in und] + [u for u, v in und]
    A = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    value = dict(zip(und, np.asarray(truss_numbers(A)).tolist()))
    return np.array([value.get((min(u, v), max(u, v)), 0) for u, v in ref.edge_list()],
                    dtype=np.int32)


def _nx_k_max_and_4_truss(ref, G: nx.Graph) -> tuple[int, list[tuple[int, int]]]:
    """networkx: the largest k with a non-empty k-truss (0 without edges) and the reference's
    edges (as stored) whose undirected edge is in the 4-truss. The (k+1)-truss is taken from
    the k-truss (the (k+1)-truss of G lies in its k-truss and is the (k+1)-truss of it), so
    one chain of ``nx.k_truss`` calls gives every level."""
    if G.number_of_edges() == 0:
        return 0, []
    k, H, four = 2, G, None
    while True:
        nxt = nx.k_truss(H, k + 1)
        if k + 1 == 4:
            four = nxt
        if not nxt.number_of_edges():
            break
        k, H = k + 1, nxt
    if four is None:                        # the chain stopped before k = 4: empty 4-truss
        four = nx.Graph()
    keep = {(min(u, v), max(u, v)) for u, v in four.edges()}
    return k, [(u, v) for u, v in ref.edge_list() if (min(u, v), max(u, v)) in keep]


def _oracle(ref) -> tuple:
    """(truss numbers, k_max, 4-truss edges) of the reference model."""
    G = _nx_graph(ref)
    k_max, four = _nx_k_max_and_4_truss(ref, G)
    return _static_truss(ref, G), k_max, four


def _check(mode: str) -> ht.AlgorithmCheck:
    """One DynamicTruss per machine; after every step its truss numbers, k_max and 4-truss
    (all read from the same instance) equal the oracles."""
    return ht.AlgorithmCheck(
        "truss numbers, k_max, 4-truss", create=lambda g: DynamicTruss(g, **MODES[mode]),
        result=lambda a: (a.truss_numbers, a.k_max, pairs(a.k_truss(4))), oracle=_oracle)


STATE_MACHINE_CONFIGS = {
    "undirected": dict(directed=False),
    "undirected_weighted": dict(directed=False, edge_properties={"w": np.float32}),
    "directed": dict(directed=True),
}


@pytest.mark.parametrize("mode", ["dynamic", "default", "static", "rows", "core"])
@pytest.mark.parametrize("config", sorted(STATE_MACHINE_CONFIGS))
def test_state_machine(device, mode, config, monkeypatch):
    """Random insert / delete / update / vertex / hub / refused batches and deleting
    everything: truss numbers, k_max and the 4-truss equal the oracles after every step.
    A small id space keeps the graphs dense, so cliques form and break all the time.
    Directed graphs: the underlying undirected graph's numbers on every stored edge.
    "rows" (CPU): the "dynamic" thresholds with every insertion scan and deletion descent
    on level rows (hornet.algos.ktruss.order_rows and descend_rows, otherwise taken only on
    graphs with a large dense level), deletion rows at every vertex, the top level peeled
    whole as soon as the scan visits an edge there (hornet.algos.ktruss.top_level). "core"
    (CPU): "rows" with every deletion's high levels on bit rows (hornet.algos.ktruss.
    core_rows) over at most 10 vertices from level 3 (a part of the graph or all of it)."""
    if mode in ("rows", "core"):
        if device != "cpu":
            pytest.skip("the level-rows scan is the CPU's")
        from hornet.algos.ktruss import dynamic
        monkeypatch.setattr(dynamic, "LEVEL_ROWS_MIN_LEVEL", 0)
        monkeypatch.setattr(dynamic, "LEVEL_ROWS_MIN_EDGES", 0)
        monkeypatch.setattr(dynamic, "ROW_MIN_DEGREE", 1)
        monkeypatch.setattr(dynamic, "TOP_PEEL_MIN_VISITS", 0)
        monkeypatch.setattr(dynamic, "TOP_PEEL_SHARE", 1 << 62)
        if mode == "core":
            monkeypatch.setattr(dynamic, "CORE_MIN_BATCH", 1)
            monkeypatch.setattr(dynamic, "CORE_MIN_LEVEL", 3)
            monkeypatch.setattr(dynamic, "CORE_MAX_VERTICES", 10)
        mode = "dynamic"
    Machine = ht.graph_state_machine(device=device, max_vertex=13, max_batch=20,
                                     algorithms=[_check(mode)], **STATE_MACHINE_CONFIGS[config])
    Machine.TestCase.settings = settings(Machine.TestCase.settings,
                                         max_examples=20 if device == "cpu" else 6,
                                         stateful_step_count=25, deadline=None)
    Machine.TestCase().runTest()
