"""hornet-py: dynamic graphs on a Hornet-style memory manager, for GPUs (CuPy) and CPUs (Numba).

    >>> import hornet
    >>> g = hornet.Graph(directed=False, device="cpu")
    >>> change = g.insert_edges([0, 1], [1, 2])
    >>> g.num_edges
    2

Submodules: ``hornet.io`` (file loaders), ``hornet.algos`` (triangles, k-truss, BFS, SpMV),
``hornet.testing`` (Hypothesis strategies and a state machine), ``hornet.generators``.

Importing or using hornet changes no environment variable and no allocator setting of the
process; :func:`hornet.tune_process` applies the CPU backend's process-wide tuning on request.
"""
from __future__ import annotations

import importlib

from .adjacency import AdjacencyView
from .batch.validate import BatchError
from .core.device import backend_available
from .graph import EdgeChange, Graph
from .memory.manager import DeviceMemoryError, InvariantError
from .tuning import tune_process
from .vertex_map import VertexMap

__all__ = ["Graph", "EdgeChange", "AdjacencyView", "BatchError", "InvariantError",
           "DeviceMemoryError", "VertexMap", "backend_available", "tune_process", "io", "algos",
           "testing", "generators"]
__version__ = "0.1.0"

_SUBMODULES = {"io", "algos", "testing", "generators"}


def __getattr__(name):
    if name in _SUBMODULES:
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'hornet' has no attribute {name!r}")
