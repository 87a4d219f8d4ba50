"""Property-based testing for dynamic graphs and the algorithms on them (Hypothesis).

- :func:`edge_batches`, :func:`graphs`, :func:`vertex_ids`: strategies.
- :class:`ReferenceGraph`: a dict-based model, the oracle for edges and properties.
- :func:`graph_state_machine`: a RuleBasedStateMachine driving a :class:`hornet.Graph` with
  random insert/delete/update/vertex batches and malformed ones, checking it after every step;
  attach your own dynamic algorithm with :class:`AlgorithmCheck`.
"""
from .reference import ReferenceGraph
from .state_machine import AlgorithmCheck, graph_state_machine, to_host
from .strategies import edge_batches, graphs, property_values, vertex_ids

__all__ = ["ReferenceGraph", "AlgorithmCheck", "graph_state_machine", "to_host",
           "edge_batches", "graphs", "property_values", "vertex_ids"]
