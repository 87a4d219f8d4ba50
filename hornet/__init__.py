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

# Numba's OpenMP workers spin between kernels by default; on a machine with other work (CI, a
# notebook beside a browser) every parallel call then waits for a scheduler tick (~1 ms). Sleeping
# workers cost a few microseconds per call instead. A user's own setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from .adjacency import AdjacencyView
from .batch.validate import BatchError
from .graph import EdgeChange, Graph
from .memory.manager import DeviceMemoryError, InvariantError

__all__ = ["Graph", "EdgeChange", "AdjacencyView", "BatchError", "InvariantError",
           "DeviceMemoryError", "backend_available", "io", "algos", "testing", "generators"]
__version__ = "0.1.0"

_SUBMODULES = {"io", "algos", "testing", "generators"}


def backend_available(device: str) -> bool:
    """True when ``device`` ("cpu" or "gpu") can be used in this process."""
    if device == "cpu":
        return True
    if device == "gpu":
        try:
            import cupy
            return cupy.cuda.runtime.getDeviceCount() > 0
        except Exception:
            return False
    raise ValueError(f"unknown device {device!r}")


def __getattr__(name):
    if name in _SUBMODULES:
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'hornet' has no attribute {name!r}")
