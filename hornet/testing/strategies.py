"""Hypothesis strategies for edge batches and graphs.

    >>> from hypothesis import given
    >>> from hornet.testing import edge_batches
    >>> @given(edge_batches(max_vertex=50, properties={"w": "float32"}))
    ... def test_insert(batch):
    ...     ...

A batch is a dict ``{"src": int64 array, "dst": int64 array, "props": {name: array}}``.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

__all__ = ["vertex_ids", "edge_batches", "graphs", "property_values"]


def vertex_ids(max_vertex: int = 64, *, min_size: int = 0, max_size: int = 64):
    """int64 arrays of vertex ids in [0, max_vertex)."""
    return st.lists(st.integers(0, max_vertex - 1), min_size=min_size,
                    max_size=max_size).map(lambda xs: np.asarray(xs, dtype=np.int64))


def property_values(dtype, n: int):
    """``n`` finite values of ``dtype`` (no NaN)."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        elem = st.floats(-1e6, 1e6, allow_nan=False, width=min(64, 8 * dt.itemsize))
    elif dt.kind == "b":
        elem = st.booleans()
    else:
        info = np.iinfo(dt)
        elem = st.integers(max(info.min, -10**6), min(info.max, 10**6))
    return st.lists(elem, min_size=n, max_size=n).map(lambda xs: np.asarray(xs, dtype=dt))


@st.composite
def edge_batches(draw, max_vertex: int = 64, *, min_size: int = 0, max_size: int = 64,
                 properties: dict | None = None, hubs: bool = True):
    """An edge batch with repeats, self-loops and (``hubs``) skewed sources, as real ones have.

    With ``hubs`` a few vertices get many edges, so lists grow past several block sizes.
    """
    n = draw(st.integers(min_size, max_size))
    ids = st.integers(0, max_vertex - 1)
    if hubs and n and draw(st.booleans()):
        hub = draw(ids)
        src = draw(st.lists(st.one_of(st.just(hub), ids), min_size=n, max_size=n))
    else:
        src = draw(st.lists(ids, min_size=n, max_size=n))
    dst = draw(st.lists(ids, min_size=n, max_size=n))
    props = {name: draw(property_values(dt, n)) for name, dt in (properties or {}).items()}
    return {"src": np.asarray(src, dtype=np.int64), "dst": np.asarray(dst, dtype=np.int64),
            "props": props}


@st.composite
def graphs(draw, directed: bool | None = None, max_vertex: int = 48, max_edges: int = 200,
           properties: dict | None = None, device: str = "cpu", **graph_options):
    """A :class:`hornet.Graph` built from a drawn edge list, with its reference model."""
    from ..graph import Graph
    from .reference import ReferenceGraph
    if directed is None:
        directed = draw(st.booleans())
    batch = draw(edge_batches(max_vertex, max_size=max_edges, properties=properties))
    g = Graph(directed=directed, device=device, edge_properties=properties, **graph_options)
    ref = ReferenceGraph(directed, properties)
    g.insert_edges(batch["src"], batch["dst"], **batch["props"])
    ref.insert(batch["src"], batch["dst"], batch["props"])
    return g, ref
