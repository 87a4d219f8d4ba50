"""Stateful property tests: the graph against the reference model, on every backend."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import Phase, settings

import hornet.testing as ht
from conftest import BACKENDS

CONFIGS = {
    "undirected": dict(directed=False),
    "directed": dict(directed=True),
    "undirected_props": dict(directed=False, edge_properties={"w": np.float32, "n": np.int64},
                             vertex_properties={"label": np.int32}),
    "directed_props": dict(directed=True, edge_properties={"w": np.float64},
                           vertex_properties={"score": np.float32}),
    "min_block_4": dict(directed=False, min_block_size=4, block_array_edges=32),
}


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("device", BACKENDS)
def test_graph_state_machine(config, device):
    Machine = ht.graph_state_machine(device=device, **CONFIGS[config])
    Machine.TestCase().runTest()


class _CountEdges:
    """A toy dynamic algorithm, to show that the hook really checks (see the failing twin)."""

    def __init__(self, g):
        self.count = g.num_edges

    def update(self, change):
        sign = {"insert": 1, "delete": -1}.get(change.kind, 0)
        self.count += sign * len(change)


class _BrokenCount(_CountEdges):
    def update(self, change):
        if change.kind == "insert":
            self.count += len(change)   # forgets deletions


def _count_check(cls):
    return ht.AlgorithmCheck("edge count", create=cls, result=lambda a: a.count,
                             oracle=lambda ref: len(ref.edges))


def test_algorithm_hook_accepts_a_correct_algorithm():
    Machine = ht.graph_state_machine(directed=False, algorithms=[_count_check(_CountEdges)])
    Machine.TestCase().runTest()


def test_algorithm_hook_catches_a_wrong_algorithm():
    Machine = ht.graph_state_machine(directed=False, algorithms=[_count_check(_BrokenCount)])
    # the failure to catch is the first deletion; shrinking it to a minimal example would
    # only make the message shorter
    Machine.TestCase.settings = settings(Machine.TestCase.settings,
                                         phases=[Phase.explicit, Phase.reuse, Phase.generate])
    with pytest.raises(AssertionError, match="edge count"):
        Machine.TestCase().runTest()
