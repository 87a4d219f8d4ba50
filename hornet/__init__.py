"""hornet-py: dynamic graphs on a Hornet-style memory manager, for GPUs (CuPy) and CPUs (Numba).

    >>> import hornet
    >>> g = hornet.Graph(directed=False, device="cpu")
    >>> change = g.insert_edges([0, 1], [1, 2])
    >>> g.num_edges
    2

Submodules: ``hornet.io`` (file loaders), ``hornet.algos`` (triangles, k-truss, BFS, SpMV),
``hornet.testing`` (Hypothesis strategies and a state machine), ``hornet.generators``.
"""
from __future__ import annotations

import importlib
import os

# Numba's OpenMP (libgomp) workers spin for a while after each parallel kernel before they
# sleep. libgomp's default spin holds a core for milliseconds after every kernel, which a
# busy machine pays as scheduler delays; sleeping at once costs a thread wake-up per kernel,
# and a batch runs some twenty kernels. A short spin keeps the workers awake across the
# kernels of one batch and lets them sleep soon after it. A user's own setting of either
# variable wins.
if "OMP_WAIT_POLICY" not in os.environ:
    os.environ.setdefault("GOMP_SPINCOUNT", "30000")

from .adjacency import AdjacencyView
from .batch.validate import BatchError
from .core.device import backend_available
from .graph import EdgeChange, Graph
from .memory.manager import DeviceMemoryError, InvariantError
from .vertex_map import VertexMap

__all__ = ["Graph", "EdgeChange", "AdjacencyView", "BatchError", "InvariantError",
           "DeviceMemoryError", "VertexMap", "backend_available", "io", "algos", "testing",
           "generators"]
__version__ = "0.1.0"

_SUBMODULES = {"io", "algos", "testing", "generators"}


def __getattr__(name):
    if name in _SUBMODULES:
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'hornet' has no attribute {name!r}")
