"""jit.inline_when_parallel: a helper is inlined into parallel compilations and stays one called
function elsewhere; both give the same results (oracle: NumPy)."""
import numba
import numpy as np
import pytest

from hornet.core import jit


@jit.njit(inline=jit.inline_when_parallel, cache=False)
def _scaled_sum(x, i, factor):
    return x[i] * factor + x[i - 1] if i > 0 else x[i] * factor


def _body(x, factor, out):
    for i in numba.prange(x.shape[0]):
        out[i] = _scaled_sum(x, i, factor)


_kernel = jit.TieredKernel(_body, threshold=0, cache=False)


def _oracle(x, factor):
    expect = x * factor
    expect[1:] += x[:-1]
    return expect


@pytest.mark.parallel_kernels
def test_parallel_twin_inlines_and_serial_twin_calls():
    x = np.arange(1, 200, dtype=np.int64) ** 2
    out = np.zeros_like(x)
    _kernel.parallel(x, 3, out)
    assert np.array_equal(out, _oracle(x, 3))
    assert len(_scaled_sum.overloads) == 0          # inlined, never compiled on its own
    assert (_body.__module__, _body.__qualname__) in jit.parallel_kernels
    out[:] = 0
    _kernel.serial(x, 5, out)
    assert np.array_equal(out, _oracle(x, 5))
    assert len(_scaled_sum.overloads) == 1          # the serial twin calls one compiled copy
    _kernel(x, 2, out)                              # the tiered call: either twin, same result
    assert np.array_equal(out, _oracle(x, 2))
