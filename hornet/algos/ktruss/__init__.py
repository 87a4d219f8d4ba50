"""k-truss: truss numbers, one k-truss, the maximal truss, static (CPU and GPU).

- :mod:`.static`: the public functions and the CPU (Numba) peeling; GPU inputs go to
- :mod:`.gpu`: the CUDA peeling (``ktruss.cu``).
"""
from .static import k_truss, max_truss, truss_numbers

__all__ = ["k_truss", "truss_numbers", "max_truss"]
