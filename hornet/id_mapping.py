"""The edge and vertex inputs of a graph with a :class:`~hornet.VertexMap`, in dense ids.

A graph built with ``vertex_map=`` takes the ids users have (64-bit integers, strings) in
every call that names vertices; these helpers turn such a batch into the graph's dense ids
(host int64 arrays, one vectorised map lookup per batch) before the batch pipeline sees it,
and the algorithms' vertex inputs (a BFS source, SpMV's ``x`` by vertex) into dense ids.
"""
from __future__ import annotations

import functools

import numpy as np

import pyarrow as pa

from .string_table import as_string_array, is_string_type
from .vertex_map import VertexMap, python_ints

__all__ = ["host_ids", "concat_ids", "edge_input", "dense_edges", "dense_vertices",
           "source_ids", "vertex_values", "values_by_vertex"]


def host_ids(x):
    """``x`` (list, NumPy, CuPy, Arrow, pandas) as a 1-D host array of original ids: an
    Arrow string array for Arrow strings (read in place, as the vertex map takes them), else
    a NumPy array."""
    if isinstance(x, (pa.Array, pa.ChunkedArray)) and is_string_type(x.type):
        return as_string_array(x)
    if isinstance(x, (list, tuple)) and len(x):
        if isinstance(x[0], str):
            return np.array(x, dtype=object)            # NumPy unicode drops trailing NULs
        if isinstance(x[0], (int, np.integer)) and not isinstance(x[0], (bool, np.bool_)):
            return python_ints(x)                       # exact beyond int64 (as uint64)
    if hasattr(x, "to_numpy") and not isinstance(x, np.ndarray):
        x = x.to_numpy(zero_copy_only=False) if "pyarrow" in type(x).__module__ else x.to_numpy()
    elif hasattr(x, "get") and not isinstance(x, np.ndarray) and not isinstance(x, dict):
        x = x.get()
    a = np.asarray(x)
    return a.reshape(1) if a.ndim == 0 else a


def concat_ids(s, d):
    """``s`` then ``d`` (two :func:`host_ids` results) in one array of their kind."""
    if isinstance(s, pa.Array) or isinstance(d, pa.Array):
        return pa.concat_arrays([as_string_array(s).cast(pa.large_string()),
                                 as_string_array(d).cast(pa.large_string())])
    return np.concatenate([s, d])


def _shape(a) -> tuple:
    return (len(a),) if isinstance(a, pa.Array) else a.shape


def edge_input(src, dst, props: dict):
    """``(src ids, dst ids, props)`` of an edge batch given as two arrays, an ``(E, 2)``
    array, or a table (Arrow, pandas) with columns src, dst and property columns."""
    if dst is not None:
        return host_ids(src), host_ids(dst), props
    if hasattr(src, "column_names") and hasattr(src, "column"):            # Arrow
        cols = {n: src.column(n) for n in src.column_names}
    elif hasattr(src, "columns") and hasattr(src, "__getitem__") and \
            not isinstance(src, np.ndarray):                              # pandas
        cols = {str(n): src[n].to_numpy() for n in src.columns}
    else:
        pairs = host_ids(src)
        if pairs.ndim != 2 or pairs.shape[1] != 2:
            raise ValueError("pass src and dst, or one (E, 2) array of pairs, got shape "
                             f"{tuple(pairs.shape)}")
        return pairs[:, 0], pairs[:, 1], props
    if "src" not in cols or "dst" not in cols:
        raise ValueError(f"an edge table needs columns 'src' and 'dst', got {sorted(cols)}")
    extra = {k: v for k, v in cols.items() if k not in ("src", "dst")}
    return host_ids(cols["src"]), host_ids(cols["dst"]), {**extra, **props}


def dense_edges(vmap: VertexMap, src, dst, props: dict, *, add: bool):
    """``(src int64, dst int64, props)`` in dense ids. ``add=True`` gives new ids the next
    dense ids; ``add=False`` drops the pairs (and their property values) that name an id the
    map does not hold: such edges cannot be in the graph."""
    s, d, props = edge_input(src, dst, props)
    if len(_shape(s)) != 1 or len(_shape(d)) != 1 or len(s) != len(d):
        raise ValueError(f"src and dst must be 1-D of one length, got shapes {_shape(s)} and "
                         f"{_shape(d)}")
    n = len(s)
    if n == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64), props
    if add:
        both = vmap.to_dense(concat_ids(s, d))
        return both[:n], both[n:], props
    both = vmap.lookup(concat_ids(s, d))
    ds, dd = both[:n], both[n:]
    known = (ds >= 0) & (dd >= 0)
    if known.all():
        return ds, dd, props
    kept = {}
    for k, v in props.items():
        a = host_ids(v)
        kept[k] = a[known] if a.ndim == 1 and a.shape[0] == n else v
    return ds[known], dd[known], kept


def dense_vertices(vmap: VertexMap, ids, *, add: bool) -> np.ndarray:
    """Dense ids (int64) of original vertex ids; ``add=False`` raises KeyError naming the
    first id the map does not hold."""
    v = host_ids(ids)
    if len(v) == 0:
        return np.empty(0, np.int64)
    if add:
        return vmap.to_dense(v)
    dense = vmap.lookup(v)
    if (dense < 0).any():
        first = v[int(np.argmax(dense < 0))]
        first = first.as_py() if isinstance(v, pa.Array) else \
            first.item() if isinstance(first, np.generic) else first
        raise KeyError(f"vertex {first!r} is not in the graph's vertex map")
    return dense


# ---------------------------------------------------------------------- algorithm inputs
def _scalar(x) -> bool:
    return isinstance(x, (str, bytes, int, np.integer)) or \
        (isinstance(x, np.ndarray) and x.ndim == 0)


def source_ids(g, source, *, dense: bool = False, single: bool = False):
    """The dense id(s) of ``source``, a vertex id or a 1-D array of them, given in the ids of
    ``g``: original ids when ``g`` has a vertex map (and ``dense`` is False), else dense ids
    (returned unchanged, checked by the algorithm). A scalar gives a Python int, an array a
    host int64 array. KeyError naming the first id the map does not hold; TypeError for an
    array when ``single``."""
    vmap = getattr(g, "vertex_map", None)
    if vmap is None or dense:
        return source
    if single and not _scalar(source):
        raise TypeError(f"source must be one vertex id, got {type(source).__name__}")
    ids = dense_vertices(vmap, source, add=False)
    return int(ids[0]) if _scalar(source) else ids


def checked_sources(source, num_vertices: int) -> np.ndarray:
    """Dense source ids (a host scalar or array) as a sorted, duplicate-free host int32 array
    of shape (k,). TypeError for ids that are not integers, ValueError for an id outside
    ``[0, num_vertices)``."""
    src = np.atleast_1d(np.asarray(source))
    if src.size and src.dtype.kind not in "iu":
        raise TypeError(f"source must be integer vertex ids, got dtype {src.dtype}")
    src = src.astype(np.int64).ravel()
    if src.size and (src.min() < 0 or src.max() >= num_vertices):
        raise ValueError(f"source out of range [0, {num_vertices})")
    return np.unique(src).astype(np.int32)


def vertex_values(x, num_vertices: int, vmap: VertexMap | None):
    """A per-vertex input ``x`` as an array aligned with the dense ids.

    ``x`` is either an array of ``num_vertices`` values (already aligned, returned
    unchanged), or values by vertex id: a dict ``{id: value}``, or a table (Arrow, pandas)
    with a ``vertex`` column and one value column (what :func:`hornet.algos.to_table` makes).
    Ids are original ids when ``vmap`` is given, else dense ids in ``[0, num_vertices)``;
    vertices not named get 0. Returns a host array (num_vertices,) of the values' dtype.

    Raises KeyError for an id the map does not hold (or outside the id space), ValueError for
    an id named twice or a table without the right columns.
    """
    if not _by_vertex(x):
        return x
    if isinstance(x, dict):
        ids = host_ids(list(x.keys())) if x else np.empty(0, np.int64)
        values = np.asarray(list(x.values()))
    elif hasattr(x, "column_names"):                                          # Arrow table
        ids, values = _id_value_columns(list(x.column_names), x.column)
        values = host_ids(values)
    else:                                                                     # pandas
        ids, values = _id_value_columns([str(c) for c in x.columns], x.__getitem__)
        values = host_ids(values)
    if isinstance(values, pa.Array):
        raise TypeError(f"values by vertex must be real numbers, got Arrow type {values.type}")
    if values.ndim != 1:
        raise ValueError(f"values by vertex must be scalars, got shape {values.shape}")
    n = int(num_vertices)
    if vmap is not None:
        dense = dense_vertices(vmap, ids, add=False)
    else:
        dense = host_ids(ids)
        if isinstance(dense, pa.Array) or (dense.size and dense.dtype.kind not in "iu"):
            raise KeyError("vertex ids must be integers for a graph without a vertex map, "
                           f"got {getattr(dense, 'dtype', None) or dense.type}")
        dense = dense.astype(np.int64)
        outside = (dense < 0) | (dense >= n)
        if outside.any():
            raise KeyError(f"vertex {int(dense[np.argmax(outside)])} is outside the id space "
                           f"[0, {n})")
    if dense.size and np.unique(dense).shape[0] != dense.shape[0]:
        seen = np.zeros(n, np.int64)
        np.add.at(seen, dense, 1)
        twice = dense[seen[dense] > 1][0]
        name = vmap.to_original(np.array([twice])).tolist()[0] if vmap is not None \
            else int(twice)
        raise ValueError(f"vertex {name!r} is given two values")
    out = np.zeros(n, dtype=values.dtype if values.size else np.float64)
    out[dense] = values
    return out


def _by_vertex(x) -> bool:
    """Whether ``x`` gives values by vertex id (a dict or a table), not an aligned array."""
    return isinstance(x, dict) or (hasattr(x, "column_names") and hasattr(x, "column")) or \
        (hasattr(x, "columns") and hasattr(x, "__getitem__") and not isinstance(x, np.ndarray))


def _vertex_count(g) -> int:
    """Vertex count of a graph-like input: hornet.Graph or AdjacencyView, a (SciPy, CuPy)
    sparse matrix, or an ``(indptr, indices)`` pair."""
    n = getattr(g, "num_vertices", None)
    if n is not None:
        return int(n)
    if hasattr(g, "shape"):
        return int(g.shape[0])
    return len(g[0]) - 1


def values_by_vertex(fn):
    """Decorator for an algorithm ``fn(g, x, ...)`` taking a per-vertex input ``x``: an
    ``x`` given by vertex id (a dict or a table, see :func:`vertex_values`) reaches ``fn`` as
    a host array aligned with the dense ids of ``g``; arrays pass unchanged."""
    @functools.wraps(fn)
    def wrapper(g, *args, **kwargs):
        if "x" in kwargs and _by_vertex(kwargs["x"]):
            kwargs["x"] = vertex_values(kwargs["x"], _vertex_count(g),
                                        getattr(g, "vertex_map", None))
        elif args and _by_vertex(args[0]):
            args = (vertex_values(args[0], _vertex_count(g), getattr(g, "vertex_map", None)),
                    *args[1:])
        return fn(g, *args, **kwargs)
    return wrapper


def _id_value_columns(names: list, column):
    """``(ids, values)`` of a table with a ``vertex`` column and one value column."""
    others = [c for c in names if c != "vertex"]
    if "vertex" not in names or len(others) != 1:
        raise ValueError(f"values by vertex need a table with a 'vertex' column and one value "
                         f"column, got columns {names}")
    return column("vertex"), column(others[0])
