"""Prepared kernel launches (hornet.memory.gpu_launch) against CuPy's kernel call: the same
kernel, every argument kind the batch paths pass, the same result."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import HAS_GPU

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]

_SOURCE = r"""
extern "C" __global__ void mix(const long long* a, long long n, int k, unsigned long long u,
                               float f, double g, unsigned char b, long long* out,
                               double* real) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)blockDim.x * gridDim.x) {
        out[i] = a[i] * k + (long long)(u >> 60) + b;
        real[i] = (double)f * g + (double)i;
    }
}
"""


@pytest.mark.parametrize("n", [1, 1000, 300_001])
def test_prepared_launch_matches_cupy_call(n):
    import cupy

    from hornet.core.cuda import launch as cupy_launch
    from hornet.memory import gpu_launch
    fn = cupy.RawModule(code=_SOURCE).get_function("mix")
    a = cupy.arange(n, dtype=cupy.int64) - 7
    results = []
    for path in (cupy_launch, gpu_launch.launch):
        out = cupy.full(n, -1, dtype=cupy.int64)
        real = cupy.zeros(n, dtype=cupy.float64)
        path(fn, n, (a, np.int64(n), np.int32(-3), np.uint64(0xF000000000000000),
                     np.float32(1.5), np.float64(-2.25), np.uint8(9), out, real))
        results.append((out.get(), real.get()))
    expected = (np.arange(n, dtype=np.int64) - 7) * -3 + 15 + 9
    np.testing.assert_array_equal(results[0][0], expected)
    for got, ref in zip(results[1], results[0]):
        np.testing.assert_array_equal(got, ref)
    gpu_launch.launch(fn, 0, ())                       # nothing to run: no launch
