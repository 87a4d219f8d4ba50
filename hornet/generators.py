"""Synthetic graph generators: Graph500 Kronecker (R-MAT) and uniform random edge lists.

Both work on NumPy (the default) and on CuPy (pass ``xp=cupy``): the arrays are generated on the
array module's device, with work vectorised over all edges; the only Python loop is over the
``scale`` bits of the vertex ids. Results are deterministic for a given ``seed`` and ``xp`` (NumPy
and CuPy use different random generators, so their outputs differ from each other).
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["kronecker_edges", "rmat_edges", "uniform_random_edges"]

# edges per independently seeded block of the NumPy Kronecker generator (part of the output's
# definition: changing it changes the graphs a seed gives)
_BLOCK_EDGES = 1 << 20


def _module(xp: ModuleType | None) -> ModuleType:
    return np if xp is None else xp


def _rng(xp: ModuleType, seed: int) -> Any:
    """A seeded generator of ``xp`` (``default_rng`` where it exists, else ``RandomState``)."""
    rand = xp.random
    if hasattr(rand, "default_rng"):
        return rand.default_rng(seed)
    return rand.RandomState(seed)


def _uniform(rng: Any, xp: ModuleType, n: int, dtype: Any) -> Any:
    """``n`` uniform floats in [0, 1) of ``dtype`` (float32 or float64) on xp's device."""
    if hasattr(rng, "random"):
        try:
            return rng.random(n, dtype=dtype)
        except TypeError:  # generators without a dtype argument
            return rng.random(n).astype(dtype, copy=False)
    return rng.random_sample(n).astype(dtype, copy=False)


def _permutation(rng: Any, xp: ModuleType, n: int, dtype: Any) -> Any:
    """A random permutation of ``range(n)`` as ``dtype``."""
    if xp is np:
        return rng.permutation(n).astype(dtype, copy=False)
    # portable: sort random keys (CuPy's generators differ in what they offer)
    keys = _uniform(rng, xp, n, xp.float64)
    return xp.argsort(keys).astype(dtype, copy=False)


def _id_dtype(xp: ModuleType, num_vertices: int) -> Any:
    return xp.int32 if num_vertices <= np.iinfo(np.int32).max + 1 else xp.int64


def kronecker_edges(scale: int, edge_factor: int = 16, a: float = 0.57, b: float = 0.19,
                    c: float = 0.19, seed: int = 0, permute: bool = True,
                    xp: ModuleType | None = None) -> tuple[Any, Any]:
    """Graph500-style Kronecker (R-MAT) edge list.

    Each of the ``m = edge_factor * 2**scale`` edges picks, for every one of the ``scale`` bits
    (most significant first), one quadrant of the adjacency matrix: top-left with probability
    ``a``, top-right ``b``, bottom-left ``c``, bottom-right ``d = 1 - a - b - c``; the row bit is
    set for the bottom quadrants, the column bit for the right ones. As in Graph500, the result may
    hold duplicate edges and self-loops; with ``permute=True`` the vertex labels are relabelled by
    one random permutation of ``range(2**scale)`` (so the high degrees are not all at small ids).

    Args:
        scale: log2 of the number of vertices (0 <= scale <= 31).
        edge_factor: edges per vertex.
        a, b, c: quadrant probabilities (d = 1 - a - b - c must be >= 0).
        seed: random seed; the output is a deterministic function of all arguments and ``xp``.
        permute: relabel the vertices randomly.
        xp: array module (``numpy`` by default, or ``cupy``).

    Returns:
        ``(src, dst)``: int32 arrays of shape ``(edge_factor * 2**scale,)`` of ``xp`` with values
        in ``[0, 2**scale)``.
    """
    xp = _module(xp)
    scale = int(scale)
    if not 0 <= scale <= 31:
        raise ValueError(f"scale must be in 0..31, got {scale}")
    if edge_factor < 0:
        raise ValueError(f"edge_factor must be >= 0, got {edge_factor}")
    d = 1.0 - a - b - c
    if min(a, b, c) < 0 or d < -1e-12:
        raise ValueError(f"quadrant probabilities must be >= 0 and sum to <= 1 (a={a}, b={b}, c={c})")
    n = 1 << scale
    m = int(edge_factor) * n
    # thresholds on one uniform u per edge and bit:
    #   u < a: (0,0); a <= u < a+b: (0,1); a+b <= u < a+b+c: (1,0); u >= a+b+c: (1,1)
    # so the row bit is [u >= a+b] and the column bit is [u >= a] ^ [u >= a+b] ^ [u >= a+b+c].
    # NumPy draws 16-bit integers (half the cost of float32 draws, which dominate the run time;
    # the thresholds are then multiples of 2**-16, within 8e-6 of a, a+b, a+b+c); other array
    # modules draw float32 uniforms.
    thresholds = (np.float32(a), np.float32(a + b), np.float32(a + b + c))
    # (None: the threshold is 1, i.e. never reached)
    thresholds16 = tuple(None if round(t * 65536.0) >= 65536 else np.uint16(round(t * 65536.0))
                         for t in (a, a + b, a + b + c))
    if xp is np:
        # fixed-size blocks of edges, each with its own child generator, so that the output does
        # not depend on how many threads fill the blocks; two or more threads share the work
        # (NumPy releases the GIL in its random fills and ufuncs)
        nblocks = max(1, -(-m // _BLOCK_EDGES))
        children = np.random.SeedSequence(int(seed)).spawn(nblocks + 1)
        src = np.empty(m, dtype=np.int32)
        dst = np.empty(m, dtype=np.int32)

        def fill(k: int) -> None:
            lo = k * _BLOCK_EDGES
            hi = min(m, lo + _BLOCK_EDGES)
            _rmat_bits(np, np.random.default_rng(children[k]), scale, thresholds16,
                       src[lo:hi], dst[lo:hi])

        workers = min(nblocks, os.cpu_count() or 1)
        if workers > 1:
            with ThreadPoolExecutor(workers) as ex:
                list(ex.map(fill, range(nblocks)))
        else:
            for k in range(nblocks):
                fill(k)
        perm_rng = np.random.default_rng(children[nblocks])
    else:
        rng = _rng(xp, seed)
        src = xp.empty(m, dtype=xp.int32)
        dst = xp.empty(m, dtype=xp.int32)
        _rmat_bits(xp, rng, scale, thresholds, src, dst)
        perm_rng = rng
    if permute and n > 1:
        perm = _permutation(perm_rng, xp, n, xp.int32)
        src = perm[src]
        dst = perm[dst]
    return src, dst


def _ge(xp: ModuleType, u: Any, t: Any, out: Any) -> None:
    """out[:] = u >= t, where t None means a threshold no draw reaches."""
    if t is None:
        out[...] = False
    else:
        xp.greater_equal(u, t, out=out)


def _rmat_bits(xp: ModuleType, rng: Any, scale: int, thresholds: tuple[Any, Any, Any],
               src: Any, dst: Any) -> None:
    """Fill ``src``/``dst`` (int32, same shape ``(k,)``) with R-MAT ids of ``scale`` bits, most
    significant bit first: one uniform draw per edge and bit, in-place ufuncs only.
    ``thresholds``: (a, a+b, a+b+c) as uint16 multiples of 2**-16 for NumPy (uint16 draws; None
    stands for 1), as float32 for other modules (float32 draws in [0, 1))."""
    t_a, t_ab, t_abc = thresholds
    k = src.shape[0]
    src[...] = 0
    dst[...] = 0
    if k == 0:
        return
    row = xp.empty(k, dtype=xp.bool_)
    col = xp.empty(k, dtype=xp.bool_)
    tmp = xp.empty(k, dtype=xp.bool_)
    for _ in range(scale):
        if xp is np:
            # uint16 draws compared with uint16 thresholds
            u = rng.integers(0, 65536, size=k, dtype=np.uint16)
        else:
            u = _uniform(rng, xp, k, xp.float32)
        _ge(xp, u, t_ab, row)
        _ge(xp, u, t_a, col)
        xp.logical_xor(col, row, out=col)
        _ge(xp, u, t_abc, tmp)
        xp.logical_xor(col, tmp, out=col)
        xp.left_shift(src, 1, out=src)
        xp.bitwise_or(src, row.view(xp.uint8), out=src)
        xp.left_shift(dst, 1, out=dst)
        xp.bitwise_or(dst, col.view(xp.uint8), out=dst)


def rmat_edges(scale: int, edge_factor: int = 16, a: float = 0.57, b: float = 0.19,
               c: float = 0.19, seed: int = 0, permute: bool = True,
               xp: ModuleType | None = None) -> tuple[Any, Any]:
    """Alias of :func:`kronecker_edges`."""
    return kronecker_edges(scale, edge_factor, a, b, c, seed=seed, permute=permute, xp=xp)


def uniform_random_edges(num_vertices: int, num_edges: int, seed: int = 0,
                         xp: ModuleType | None = None) -> tuple[Any, Any]:
    """Uniform random (Erdos-Renyi G(n, m)-style, with replacement) edge list.

    Every endpoint is drawn independently and uniformly from ``[0, num_vertices)``; the result may
    hold duplicate edges and self-loops.

    Args:
        num_vertices: size of the id space (> 0 unless ``num_edges`` is 0).
        num_edges: number of edges ``m``.
        seed: random seed; deterministic for a given seed and ``xp``.
        xp: array module (``numpy`` by default, or ``cupy``).

    Returns:
        ``(src, dst)``: arrays of shape ``(m,)`` of ``xp``; int32 (int64 when ``num_vertices``
        exceeds 2**31).
    """
    xp = _module(xp)
    n = int(num_vertices)
    m = int(num_edges)
    if m < 0:
        raise ValueError(f"num_edges must be >= 0, got {m}")
    if n <= 0 and m > 0:
        raise ValueError(f"num_vertices must be > 0 to draw edges, got {n}")
    dt = _id_dtype(xp, n)
    rng = _rng(xp, seed)
    if xp is np:
        src = rng.integers(0, n, size=m, dtype=dt) if m else np.zeros(0, dtype=dt)
        dst = rng.integers(0, n, size=m, dtype=dt) if m else np.zeros(0, dtype=dt)
        return src, dst

    def draw() -> Any:
        u = _uniform(rng, xp, m, xp.float64)
        v = xp.floor(u * n).astype(dt)
        return xp.minimum(v, dt(n - 1)) if m else v

    src = draw()
    dst = draw()
    return src, dst
