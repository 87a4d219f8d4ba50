"""Compiling the CPU kernels.

- :func:`dual_kernel`: kernels compiled twice, parallel for large inputs, serial for small
  ones. Waking Numba's worker threads costs tens of microseconds per call; a batch of a few
  edges runs a dozen kernels, so small inputs take the serial twin (well under a microsecond
  to enter).
- :func:`ix`: an index that Numba need not wrap. Numba indexes like NumPy: a signed index
  ``i`` reads ``a[i + len(a)]`` when negative, a compare and a select on every access that
  also keep LLVM from vectorizing a loop. Hot loops index with ``a[ix(i)]`` where ``i >= 0``
  is known (Cython's ``wraparound=False``, one access at a time). A negative ``i`` there
  reads out of bounds: use it only on indices the kernel has just bounded.
"""
from __future__ import annotations

import types

import numba
import numpy as np

PARALLEL_MIN = 1 << 13   # items of work below which the serial twin runs


class DualKernel:
    """Callable picking the parallel or the serial compilation of one kernel body.

    The size of the work is the length of the first argument (an array). The serial twin gets
    its own qualified name so that Numba's on-disk caches of the two never collide.
    """

    def __init__(self, py_func, threshold: int = PARALLEL_MIN):
        self.py_func = py_func
        self.threshold = threshold
        self.parallel = numba.njit(parallel=True, cache=True)(py_func)
        twin = types.FunctionType(py_func.__code__, py_func.__globals__,
                                  py_func.__name__ + "_serial", py_func.__defaults__,
                                  py_func.__closure__)
        twin.__qualname__ = py_func.__qualname__ + "_serial"
        twin.__module__ = py_func.__module__
        twin.__doc__ = py_func.__doc__
        self.serial = numba.njit(cache=True)(twin)
        self.__doc__ = py_func.__doc__
        self.__name__ = py_func.__name__

    def __call__(self, *args):
        first = args[0]
        n = first.shape[0] if hasattr(first, "shape") else int(first)
        return (self.parallel if n >= self.threshold else self.serial)(*args)


@numba.njit(inline="always", cache=True)
def ix(i):
    """``i`` (>= 0) as an index without NumPy's negative wraparound (see the module notes)."""
    return np.uint64(i)


def dual_kernel(py_func=None, *, threshold: int = PARALLEL_MIN):
    """Decorator: ``@dual_kernel`` on a function written with ``numba.prange``."""
    if py_func is None:
        return lambda f: DualKernel(f, threshold)
    return DualKernel(py_func, threshold)
