"""Sparse matrix-vector product ``A x`` / ``A^T x`` over a graph, static and dynamic (CPU, GPU).

- :mod:`.static`: the public function and the CPU (Numba) kernels; GPU inputs go to
- :mod:`.gpu`: the CUDA version (``spmv.cu``);
- :mod:`.dynamic`: :class:`DynamicSpMV`, ``y`` kept current under edge and ``x`` changes
  (``dynamic.cu`` on the GPU).
"""
from .dynamic import DynamicSpMV
from .static import spmv

__all__ = ["spmv", "DynamicSpMV"]
