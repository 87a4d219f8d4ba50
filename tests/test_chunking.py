"""Chunking of parallel CPU work: the NumPy splitter equals the kernel (hornet.core.chunking)."""
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from hornet.core.chunking import chunk_bounds, chunk_bounds_numpy


@given(st.lists(st.integers(0, 50), max_size=60), st.integers(1, 40))
def test_numpy_bounds_equal_the_kernel(items, nchunks):
    """Chunk starts of a prefix sum of item weights (zeros and heavy items included): the
    NumPy version and the Numba kernel agree, start at 0, end at n and never decrease."""
    prefix = np.zeros(len(items) + 1, np.int64)
    np.cumsum(np.asarray(items, np.int64), out=prefix[1:])
    want = chunk_bounds(prefix, nchunks)
    got = chunk_bounds_numpy(prefix, nchunks)
    assert np.array_equal(got, want)
    assert got[0] == 0 and got[-1] == len(items) and np.all(np.diff(got) >= 0)
