"""Graph algorithms over any graph-like input (hornet.Graph, AdjacencyView, CSR pair, scipy).

Static versions (CPU: Numba; GPU: CUDA kernels through CuPy, chosen when the input lives on
the GPU, results as CuPy arrays); one package per algorithm, its ``static`` module (CPU,
and the entry points) beside its ``gpu`` module and CUDA source:

- :func:`triangle_count`, :func:`triangles_per_vertex`, :func:`edge_support`
- :func:`k_truss`, :func:`truss_numbers`, :func:`max_truss` (``method="delta"`` or
  ``"iterative"``)
- :func:`bfs`
- :func:`spmv`

Dynamic versions, beside the static ones in each package (``dynamic`` module): objects built
once on a :class:`hornet.Graph`, then ``update(change)`` with every EdgeChange the graph
returns; at any moment each result equals the static function on the graph as it is now:

- :class:`DynamicTriangleCount` (``.count``, ``.per_vertex``, ``.per_edge()``)
- :class:`DynamicTruss` (``.truss_numbers``, ``.k_max``, ``.k_truss(k)``)
- :class:`DynamicBFS` (``.levels``, ``.parents``)
- :class:`DynamicSpMV` (``.y``, ``.set_x(index, values)``)

Every algorithm has one implementation over :class:`hornet.adjacency.AdjacencyView`;
:func:`as_adjacency` turns the other inputs into one. Per-edge results are aligned with
``g.edges()`` (undirected: each edge once, src < dst, lexicographic).
"""
from __future__ import annotations

import numpy as np

from .bfs import DynamicBFS, bfs
from .ktruss import DynamicTruss, k_truss, max_truss, truss_numbers
from .spmv import DynamicSpMV, spmv
from .triangles import DynamicTriangleCount, edge_support, triangle_count, triangles_per_vertex
from .views import as_adjacency, edge_list

__all__ = [
    "as_adjacency", "edge_list",
    "triangle_count", "triangles_per_vertex", "edge_support",
    "k_truss", "truss_numbers", "max_truss",
    "bfs", "spmv",
    "DynamicTriangleCount", "DynamicTruss", "DynamicBFS", "DynamicSpMV",
    "to_table",
]


def to_table(result, g=None, *, name: str = "value", per: str | None = None):
    """A pyarrow Table of a per-vertex or per-edge result.

    Parameters
    ----------
    result : array (V,) or (E,), or a dict ``{column: array}`` of equal-length arrays
    g : graph-like, optional
        Needed for per-edge results (gives the ``src``/``dst`` columns, as ``g.edges()``).
    name : str
        Column name for a single array.
    per : {"vertex", "edge"}, optional
        Default: "edge" when ``g`` is given and the length equals its edge count, else
        "vertex".

    Returns
    -------
    pyarrow.Table with columns ``vertex, <name>...`` or ``src, dst, <name>...``

    Examples
    --------
    >>> import numpy as np
    >>> to_table(np.array([2, 0, 1]), name="level").column_names
    ['vertex', 'level']
    """
    import pyarrow as pa

    cols = dict(result) if isinstance(result, dict) else {name: result}
    cols = {k: _host(v) for k, v in cols.items()}
    lengths = {v.shape[0] for v in cols.values()}
    if len(lengths) != 1:
        raise ValueError("all result columns must have the same length")
    n = lengths.pop()
    src = dst = None
    if g is not None and per != "vertex":
        src, dst = (g.edges() if hasattr(g, "edges") and callable(g.edges)
                    else edge_list(as_adjacency(g)))
        src, dst = _host(src), _host(dst)
        if per is None and src.shape[0] != n:
            src = dst = None
    if per == "edge" and src is None:
        raise ValueError("per-edge tables need the graph (and one value per edge)")
    if src is not None:
        if src.shape[0] != n:
            raise ValueError(f"{n} values for {src.shape[0]} edges")
        head = {"src": _host(src), "dst": _host(dst)}
    else:
        head = {"vertex": np.arange(n, dtype=np.int64)}
    return pa.table({**head, **cols})


def _host(a) -> np.ndarray:
    """NumPy array of a NumPy or CuPy array."""
    if type(a).__module__.startswith("cupy"):
        return a.get()
    return np.asarray(a)
