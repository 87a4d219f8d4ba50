"""The edge and vertex inputs of a graph with a :class:`~hornet.VertexMap`, in dense ids.

A graph built with ``vertex_map=`` takes the ids users have (64-bit integers, strings) in
every call that names vertices; these helpers turn such a batch into the graph's dense ids
(host int64 arrays, one vectorised map lookup per batch) before the batch pipeline sees it.
"""
from __future__ import annotations

import numpy as np

from .vertex_map import VertexMap

__all__ = ["host_ids", "edge_input", "dense_edges", "dense_vertices"]


def host_ids(x) -> np.ndarray:
    """``x`` (list, NumPy, CuPy, Arrow, pandas) as a 1-D host array of original ids."""
    if hasattr(x, "to_numpy") and not isinstance(x, np.ndarray):
        x = x.to_numpy(zero_copy_only=False) if "pyarrow" in type(x).__module__ else x.to_numpy()
    elif hasattr(x, "get") and not isinstance(x, np.ndarray) and not isinstance(x, dict):
        x = x.get()
    a = np.asarray(x)
    return a.reshape(1) if a.ndim == 0 else a


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
    if s.ndim != 1 or d.ndim != 1 or s.shape[0] != d.shape[0]:
        raise ValueError(f"src and dst must be 1-D of one length, got shapes {s.shape} and "
                         f"{d.shape}")
    if s.size == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64), props
    if add:
        both = vmap.to_dense(np.concatenate([s, d]))
        return both[:s.shape[0]], both[s.shape[0]:], props
    both = vmap.lookup(np.concatenate([s, d]))
    ds, dd = both[:s.shape[0]], both[s.shape[0]:]
    known = (ds >= 0) & (dd >= 0)
    if known.all():
        return ds, dd, props
    kept = {}
    for k, v in props.items():
        a = host_ids(v)
        kept[k] = a[known] if a.ndim == 1 and a.shape[0] == s.shape[0] else v
    return ds[known], dd[known], kept


def dense_vertices(vmap: VertexMap, ids, *, add: bool) -> np.ndarray:
    """Dense ids (int64) of original vertex ids; ``add=False`` raises KeyError naming the
    first id the map does not hold."""
    v = host_ids(ids)
    if v.size == 0:
        return np.empty(0, np.int64)
    if add:
        return vmap.to_dense(v)
    dense = vmap.lookup(v)
    if (dense < 0).any():
        raise KeyError(f"vertex {v[int(np.argmax(dense < 0))]!r} is not in the graph's "
                       "vertex map")
    return dense
