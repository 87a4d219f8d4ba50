"""k-truss: truss numbers, one k-truss, the maximal truss, static and dynamic (CPU and GPU).

- :mod:`.static`: the public functions and the CPU (Numba) peeling; GPU inputs go to
- :mod:`.gpu`: the CUDA peeling (``ktruss.cu``);
- :mod:`.dynamic`: :class:`DynamicTruss`, kept current batch by batch (region kernels in
  :mod:`.region`; the GPU state in :mod:`.dynamic_gpu`).
"""
from .dynamic import DynamicTruss
from .static import k_truss, max_truss, truss_numbers

__all__ = ["k_truss", "truss_numbers", "max_truss", "DynamicTruss"]
