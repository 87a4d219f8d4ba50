"""jit.inline_when_parallel: a helper is inlined into split kernels and stays one called
function elsewhere; both give the same results (oracle: NumPy)."""
import numpy as np
import pytest

from hornet.core import jit
from hornet.core.jit import part_range


@jit.njit(inline=jit.inline_when_parallel, cache=False)
def _scaled_sum(x, i, factor):
    return x[i] * factor + x[i - 1] if i > 0 else x[i] * factor


def _body(x, factor, out, part, parts):
    for i in range(*part_range(x.shape[0], part, parts)):
        out[i] = _scaled_sum(x, i, factor)


_kernel = jit.SplitKernel(_body, threshold=0, cache=False)


@jit.njit(cache=False)
def _plain(x, factor, out):
    for i in range(x.shape[0]):
        out[i] = _scaled_sum(x, i, factor)


def _oracle(x, factor):
    expect = x * factor
    expect[1:] += x[:-1]
    return expect


@pytest.mark.parallel_kernels
def test_split_kernel_inlines_and_plain_kernel_calls():
    x = np.arange(1, 200, dtype=np.int64) ** 2
    out = np.zeros_like(x)
    _kernel.split(x, 3, out)
    assert np.array_equal(out, _oracle(x, 3))
    assert len(_scaled_sum.overloads) == 0          # inlined, never compiled on its own
    assert (_body.__module__, _body.__qualname__) in jit.parallel_kernels
    out[:] = 0
    _plain(x, 5, out)
    assert np.array_equal(out, _oracle(x, 5))
    assert len(_scaled_sum.overloads) == 1          # the plain kernel calls one compiled copy
