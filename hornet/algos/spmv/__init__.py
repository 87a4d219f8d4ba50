"""Sparse matrix-vector product ``A x`` / ``A^T x`` over a graph, static (CPU and GPU).

- :mod:`.static`: the public function and the CPU (Numba) kernels; GPU inputs go to
- :mod:`.gpu`: the CUDA version (``spmv.cu``).
"""
from .static import spmv

__all__ = ["spmv"]
