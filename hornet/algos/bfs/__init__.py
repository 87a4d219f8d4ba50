"""Breadth-first search (levels, parents), direction-optimizing, static (CPU and GPU).

- :mod:`.static`: the public function and the CPU (Numba) kernels; GPU inputs go to
- :mod:`.gpu`: the CUDA version (``bfs.cu``).
"""
from .static import bfs

__all__ = ["bfs"]
