"""Breadth-first search (levels, parents), direction-optimizing, static and dynamic (CPU, GPU).

- :mod:`.static`: the public function and the CPU (Numba) kernels; GPU inputs go to
- :mod:`.gpu`: the CUDA version (``bfs.cu``);
- :mod:`.dynamic`: :class:`DynamicBFS`, kept current batch by batch (the GPU driver in
  :mod:`.dynamic_gpu`, kernels in ``dynamic.cu``).
"""
from .dynamic import DynamicBFS
from .static import bfs

__all__ = ["bfs", "DynamicBFS"]
