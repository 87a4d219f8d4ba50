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


def to_table(result, g=None, *, name: str = "value", per: str | None = None,
             vertex_valued=()):
    """A pyarrow Table of a per-vertex or per-edge result, vertices named as the user knows
    them.

    Parameters
    ----------
    result : array (V,) or (E,), or a dict ``{column: array}`` of equal-length arrays
    g : graph-like, optional
        Needed for per-edge results (gives the ``src``/``dst`` columns, as ``g.edges()``). A
        :class:`hornet.Graph` with a vertex map gives original ids: in ``src``/``dst``, in
        the ``vertex`` column (``g.vertex_ids()``) and in the ``vertex_valued`` columns.
    name : str
        Column name for a single array.
    per : {"vertex", "edge"}, optional
        Default: "edge" when ``g`` is given and the length equals its edge count, else
        "vertex".
    vertex_valued : sequence of str
        Columns whose values are dense vertex ids (such as BFS parents; -1: none), given as
        the graph's ids (original ids with a vertex map), null where -1.

    Returns
    -------
    pyarrow.Table with columns ``vertex, <name>...`` or ``src, dst, <name>...``

    Examples
    --------
    >>> import numpy as np
    >>> to_table(np.array([2, 0, 1]), name="level").column_names
    ['vertex', 'level']
    >>> import hornet
    >>> g = hornet.Graph.from_edges(["a", "b"], ["b", "c"], vertex_map=True, device="cpu")
    >>> lv, par = bfs(g, "a", return_parents=True)
    >>> to_table({"level": lv, "parent": par}, g, vertex_valued=["parent"]).to_pylist()[1]
    {'vertex': 'b', 'level': 1, 'parent': 'a'}
    """
    import pyarrow as pa

    cols = dict(result) if isinstance(result, dict) else {name: result}
    cols = {k: _host(v) for k, v in cols.items()}
    lengths = {v.shape[0] for v in cols.values()}
    if len(lengths) != 1:
        raise ValueError("all result columns must have the same length")
    unknown = sorted(set(vertex_valued) - set(cols))
    if unknown:
        raise ValueError(f"vertex_valued names no result column: {unknown}")
    n = lengths.pop()
    vmap = getattr(g, "vertex_map", None)
    out = {k: _vertex_column(v, vmap) if k in vertex_valued else v for k, v in cols.items()}
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
    elif vmap is not None:
        if n != g.num_vertices:
            raise ValueError(f"{n} values for {g.num_vertices} vertices")
        head = {"vertex": g.vertex_ids()}
    else:
        head = {"vertex": np.arange(n, dtype=np.int64)}
    return pa.table({**head, **out})


def _vertex_column(ids, vmap):
    """A pyarrow array of vertex ids (-1: none, null in the array), original ids when
    ``vmap`` is a vertex map."""
    import pyarrow as pa

    ids = np.asarray(ids).astype(np.int64, copy=False)
    none = ids < 0
    if vmap is None:
        return pa.array(ids, mask=none)
    return vmap.to_arrow(ids)


def _host(a) -> np.ndarray:
    """NumPy array of a NumPy or CuPy array."""
    if type(a).__module__.startswith("cupy"):
        return a.get()
    return np.asarray(a)
