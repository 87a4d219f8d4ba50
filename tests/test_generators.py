"""hornet.generators: shapes, dtypes, id ranges, determinism, R-MAT quadrant statistics and
degree skew of the Kronecker generator; uniformity of the uniform generator."""
from __future__ import annotations

import numpy as np
import pytest

from hornet.generators import kronecker_edges, rmat_edges, uniform_random_edges

from conftest import HAS_GPU

A, B, C = 0.57, 0.19, 0.19
D = 1 - A - B - C


def quadrant_freqs(src, dst, bit):
    """Fractions of edges whose (row bit, column bit) at ``bit`` is (0,0), (0,1), (1,0), (1,1)."""
    r = (src >> bit) & 1
    c = (dst >> bit) & 1
    return np.array([np.mean((r == i) & (c == j)) for i in (0, 1) for j in (0, 1)])


@pytest.mark.parametrize("scale,ef", [(0, 16), (1, 3), (5, 16), (10, 8), (12, 1)])
def test_kronecker_shape_dtype_range(scale, ef):
    for permute in (True, False):
        s, d = kronecker_edges(scale, ef, seed=3, permute=permute)
        m = ef * 2**scale
        assert s.shape == d.shape == (m,)
        assert s.dtype == np.int32 and d.dtype == np.int32
        assert s.min(initial=0) >= 0 and d.min(initial=0) >= 0
        assert s.max(initial=0) < 2**scale and d.max(initial=0) < 2**scale


def test_kronecker_edge_factor_zero():
    s, d = kronecker_edges(6, 0)
    assert s.shape == d.shape == (0,) and s.dtype == np.int32


def test_kronecker_deterministic():
    s1, d1 = kronecker_edges(13, 16, seed=42)
    s2, d2 = kronecker_edges(13, 16, seed=42)
    np.testing.assert_array_equal(s1, s2)
    np.testing.assert_array_equal(d1, d2)
    s3, d3 = kronecker_edges(13, 16, seed=43)
    assert not np.array_equal(s1, s3)
    # several blocks of the NumPy generator (more than 2**20 edges) are deterministic too
    s4, d4 = kronecker_edges(17, 16, seed=5)
    s5, d5 = kronecker_edges(17, 16, seed=5)
    np.testing.assert_array_equal(s4, s5)
    np.testing.assert_array_equal(d4, d5)
    assert rmat_edges(8, seed=1)[0].tolist() == kronecker_edges(8, seed=1)[0].tolist()


def test_permutation_is_a_relabelling():
    """permute=True relabels the very same edges by one bijection of the vertex ids."""
    scale = 12
    s0, d0 = kronecker_edges(scale, 16, seed=9, permute=False)
    s1, d1 = kronecker_edges(scale, 16, seed=9, permute=True)
    old = np.concatenate([s0, d0])
    new = np.concatenate([s1, d1])
    label = np.full(2**scale, -1, dtype=np.int64)
    label[old] = new
    np.testing.assert_array_equal(label[old], new)  # a function: each old id has one new id
    used = label[label >= 0]
    assert np.unique(used).shape == used.shape  # injective
    # and it does move the hubs away from the small ids
    assert not np.array_equal(s0, s1)


def test_quadrant_frequencies_top_bit():
    scale, ef = 14, 16
    s, d = kronecker_edges(scale, ef, seed=11, permute=False)
    m = s.shape[0]
    want = np.array([A, B, C, D])
    sigma = np.sqrt(want * (1 - want) / m)
    got = quadrant_freqs(s, d, scale - 1)
    assert np.all(np.abs(got - want) < 6 * sigma + 1e-3), (got, want)
    # every bit level follows the same law (independent levels)
    for bit in range(scale):
        got = quadrant_freqs(s, d, bit)
        assert np.all(np.abs(got - want) < 6 * sigma + 1e-3), (bit, got)


def test_quadrant_frequencies_other_parameters():
    a, b, c = 0.45, 0.15, 0.25
    s, d = kronecker_edges(12, 32, a=a, b=b, c=c, seed=2, permute=False)
    got = quadrant_freqs(s, d, 11)
    np.testing.assert_allclose(got, [a, b, c, 1 - a - b - c], atol=0.01)
    # d = 0: the bottom-right quadrant is never chosen
    s, d = kronecker_edges(10, 8, a=0.5, b=0.25, c=0.25, seed=2, permute=False)
    assert not np.any((s & d & 1) == 1)
    # a = 1: everything lands on vertex 0
    s, d = kronecker_edges(6, 4, a=1.0, b=0.0, c=0.0, permute=False)
    assert not s.any() and not d.any()


def test_degree_distribution_is_skewed():
    scale = 14
    s, d = kronecker_edges(scale, 16, seed=1)
    deg = np.bincount(np.concatenate([s, d]), minlength=2**scale)
    mean = deg.mean()
    assert deg.max() > 30 * mean, (deg.max(), mean)
    assert np.mean(deg == 0) > 0.1  # many isolated vertices, as in Graph500
    # a uniform graph of the same size is not skewed
    us, ud = uniform_random_edges(2**scale, 16 * 2**scale, seed=1)
    udeg = np.bincount(np.concatenate([us, ud]), minlength=2**scale)
    assert udeg.max() < 2 * udeg.mean()


def test_kronecker_invalid_arguments():
    with pytest.raises(ValueError):
        kronecker_edges(-1)
    with pytest.raises(ValueError):
        kronecker_edges(32)
    with pytest.raises(ValueError):
        kronecker_edges(5, a=0.6, b=0.3, c=0.3)
    with pytest.raises(ValueError):
        kronecker_edges(5, a=-0.1)


def test_uniform_shape_dtype_range_determinism():
    s, d = uniform_random_edges(1000, 50000, seed=4)
    assert s.shape == d.shape == (50000,)
    assert s.dtype == np.int32 and d.dtype == np.int32
    assert s.min() >= 0 and s.max() < 1000 and d.min() >= 0 and d.max() < 1000
    s2, d2 = uniform_random_edges(1000, 50000, seed=4)
    np.testing.assert_array_equal(s, s2)
    np.testing.assert_array_equal(d, d2)
    assert not np.array_equal(s, uniform_random_edges(1000, 50000, seed=5)[0])
    e, f = uniform_random_edges(10, 0)
    assert e.shape == f.shape == (0,)
    big, _ = uniform_random_edges(2**33, 10, seed=0)
    assert big.dtype == np.int64 and big.max() < 2**33
    with pytest.raises(ValueError):
        uniform_random_edges(0, 5)
    with pytest.raises(ValueError):
        uniform_random_edges(5, -1)


def test_uniform_is_uniform():
    n, m = 64, 200_000
    s, d = uniform_random_edges(n, m, seed=8)
    for x in (s, d):
        counts = np.bincount(x, minlength=n)
        expected = m / n
        chi2 = np.sum((counts - expected) ** 2 / expected)
        # chi-square with 63 degrees of freedom: mean 63, sd ~11.2; a generous bound
        assert chi2 < 63 + 8 * 11.2, chi2
    assert abs(np.corrcoef(s, d)[0, 1]) < 0.02  # endpoints independent


@pytest.mark.slow
def test_kronecker_scale20_size():
    s, d = kronecker_edges(20)
    assert s.shape == d.shape == (16 * 2**20,)
    assert s.max() < 2**20 and d.max() < 2**20


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")
def test_generators_on_cupy():
    import cupy as cp

    s, d = kronecker_edges(14, 16, seed=3, xp=cp)
    assert isinstance(s, cp.ndarray) and s.dtype == cp.int32 and s.shape == (16 * 2**14,)
    assert int(s.min()) >= 0 and int(s.max()) < 2**14
    s2, d2 = kronecker_edges(14, 16, seed=3, xp=cp)
    assert bool((s == s2).all()) and bool((d == d2).all())
    s0, d0 = kronecker_edges(14, 16, seed=3, xp=cp, permute=False)
    got = quadrant_freqs(cp.asnumpy(s0), cp.asnumpy(d0), 13)
    np.testing.assert_allclose(got, [A, B, C, D], atol=0.01)
    deg = np.bincount(cp.asnumpy(cp.concatenate([s, d])), minlength=2**14)
    assert deg.max() > 30 * deg.mean()
    u, v = uniform_random_edges(1000, 10000, seed=2, xp=cp)
    assert isinstance(u, cp.ndarray) and u.dtype == cp.int32
    assert int(u.min()) >= 0 and int(u.max()) < 1000
    u2, _ = uniform_random_edges(1000, 10000, seed=2, xp=cp)
    assert bool((u == u2).all())
