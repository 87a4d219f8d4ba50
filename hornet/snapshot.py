"""Snapshots of a graph: exact save and load in Arrow IPC or Parquet, and pickling.

A snapshot is one Arrow table. Its rows are the edges, listed as :meth:`Graph.edges` lists
them (undirected: each edge once, ``src < dst``), with columns ``src`` and ``dst`` (int32) and
one column per edge property, in the property's own dtype. Vertex properties, when the graph
has any, are columns ``vertex:<name>`` holding one value per vertex id in their first
``num_vertices`` rows; the table then has ``max(num_edges, num_vertices)`` rows and the
shorter columns are padded with nulls. A graph with a :class:`~hornet.VertexMap` adds the
column ``vertex_map:original``: the original id (int64, uint64 or string, the map's kind) of
each dense id, in its first ``len(vertex_map)`` rows; ``src`` and ``dst`` stay dense. The schema's metadata (key
``hornet.snapshot``, JSON)
records what the rows cannot: directedness, the id space, the edge and vertex counts, the
property dtypes in declaration order, the memory manager's settings and, when the writer
passed one, an ``extra`` dict (a replay's position: :mod:`streams.checkpoint`). Per-edge
values a writer keeps beside the graph (a replay window's last event per edge) are columns
``edge_extra:<name>``, not edge properties. Any Arrow reader can read the edges back; :func:`load` rebuilds the same graph, on any device.

    >>> import numpy as np, hornet, tempfile, os
    >>> g = hornet.Graph(directed=False, device="cpu", edge_properties={"w": np.float32})
    >>> _ = g.insert_edges([0, 1], [1, 2], w=[0.5, 2.0])
    >>> path = os.path.join(tempfile.mkdtemp(), "g.arrow")
    >>> g.save(path)
    >>> h = hornet.Graph.load(path, device="cpu")
    >>> h.num_edges, h.edges(properties=True)[2]["w"].tolist()
    (2, [0.5, 2.0])
"""
from __future__ import annotations

import io
import json
import os
from typing import Callable

import numpy as np
import pyarrow as pa

__all__ = ["save", "load", "to_table", "from_table", "to_bytes", "from_bytes",
           "SNAPSHOT_FORMATS", "SnapshotError"]

SNAPSHOT_FORMATS = (".arrow", ".parquet")
_META_KEY = b"hornet.snapshot"
_VERSION = 1
_VERTEX_PREFIX = "vertex:"
_EDGE_EXTRA_PREFIX = "edge_extra:"
_MAP_COLUMN = "vertex_map:original"


class SnapshotError(ValueError):
    """A file that is not a hornet snapshot, or an unsupported path."""


def _host(a) -> np.ndarray:
    return a if isinstance(a, np.ndarray) else a.get()


def _padded(values, rows: int) -> pa.Array:
    """An Arrow array of ``rows`` entries: ``values`` (NumPy or Arrow) then nulls."""
    arr = values if isinstance(values, pa.Array) else pa.array(values)
    if rows == len(arr):
        return arr
    return pa.concat_arrays([arr, pa.nulls(rows - len(arr), type=arr.type)])


_OWN = object()


def to_table(g, vertex_map=_OWN, extra: dict | None = None,
             edge_columns: Callable | None = None) -> pa.Table:
    """The graph as a snapshot table (host memory; see the module docstring for the layout).
    ``vertex_map``: the map to store with it (default: the graph's own, if any), for a caller
    that keeps the graph in dense ids and the map beside it. ``extra``: a JSON-serialisable
    dict the caller wants kept with the graph (the replay's position), read back by
    :func:`load` with ``with_extra=True``. ``edge_columns(src, dst) -> {name: values}``:
    per-edge values the caller keeps beside the graph (not edge properties), given the
    edges' dense ids (host arrays) and returning host arrays aligned with them; stored as
    columns ``edge_extra:<name>`` and read back by :func:`load` with ``with_extra=True``."""
    src, dst, props = g.edges(properties=True, dense=True)
    src, dst = _host(src), _host(dst)
    n_edges, n_vertices = int(src.shape[0]), int(g.num_vertices)
    vertex_schema = g.vertex_properties
    vmap = getattr(g, "vertex_map", None) if vertex_map is _OWN else vertex_map
    rows = max(n_edges, n_vertices) if vertex_schema else n_edges
    if vmap is not None:
        rows = max(rows, len(vmap))
    cols = {"src": _padded(src, rows), "dst": _padded(dst, rows)}
    for name in g.edge_properties:
        cols[name] = _padded(_host(props[name]), rows)
    for name in vertex_schema:
        cols[_VERTEX_PREFIX + name] = _padded(_host(g.vertex_property(name)), rows)
    extra_schema = {}
    for name, values in (edge_columns(src, dst) if edge_columns is not None else {}).items():
        values = np.asarray(values)
        if values.shape != src.shape:
            raise ValueError(f"edge column {name!r}: shape {values.shape}, the graph has "
                             f"{n_edges} edges")
        cols[_EDGE_EXTRA_PREFIX + name] = _padded(values, rows)
        extra_schema[name] = values.dtype.str
    if vmap is not None:
        cols[_MAP_COLUMN] = _padded(vmap.to_arrow(), rows)
    meta = {
        "version": _VERSION,
        "directed": bool(g.directed),
        "num_vertices": n_vertices,
        "num_edges": n_edges,
        "edge_properties": {k: np.dtype(v).str for k, v in g.edge_properties.items()},
        "vertex_properties": {k: np.dtype(v).str for k, v in vertex_schema.items()},
        **g.memory_settings(),
    }
    if vmap is not None:
        meta["vertex_map"] = {"kind": vmap.kind, "size": len(vmap)}
    if extra is not None:
        meta["extra"] = extra
    if extra_schema:
        meta["edge_extra"] = extra_schema
    table = pa.table(cols)
    return table.replace_schema_metadata({_META_KEY: json.dumps(meta).encode()})


def _column(table: pa.Table, name: str, count: int, dtype: np.dtype, where: str) -> np.ndarray:
    if name not in table.column_names:
        raise SnapshotError(f"{where}: snapshot column {name!r} is missing")
    col = table.column(name).slice(0, count)
    if col.null_count:
        raise SnapshotError(f"{where}: column {name!r} has nulls in its first {count} rows")
    return np.ascontiguousarray(col.to_numpy(zero_copy_only=False)).astype(dtype, copy=False)


def from_table(table: pa.Table, graph_class, device: str = "auto", *,
               where: str = "snapshot"):
    """Rebuild the graph a snapshot table describes, as a ``graph_class`` (hornet.Graph) on
    ``device``."""
    raw = (table.schema.metadata or {}).get(_META_KEY)
    if raw is None:
        raise SnapshotError(f"{where}: not a hornet snapshot (no {_META_KEY.decode()!r} "
                            "schema metadata)")
    meta = json.loads(raw)
    if meta.get("version") != _VERSION:
        raise SnapshotError(f"{where}: snapshot version {meta.get('version')!r} is not "
                            f"supported (this build reads version {_VERSION})")
    edge_schema = {k: np.dtype(v) for k, v in meta["edge_properties"].items()}
    vertex_schema = {k: np.dtype(v) for k, v in meta["vertex_properties"].items()}
    n_edges, n_vertices = int(meta["num_edges"]), int(meta["num_vertices"])
    if table.num_rows < n_edges or (vertex_schema and table.num_rows < n_vertices):
        raise SnapshotError(f"{where}: {table.num_rows} rows, the metadata promises "
                            f"{n_edges} edges and {n_vertices} vertices")
    g = graph_class(directed=meta["directed"], device=device, num_vertices=n_vertices,
              edge_properties=edge_schema, vertex_properties=vertex_schema,
              block_array_edges=meta["block_array_edges"],
              min_block_size=meta["min_block_size"])
    src = _column(table, "src", n_edges, np.int32, where)
    dst = _column(table, "dst", n_edges, np.int32, where)
    props = {k: _column(table, k, n_edges, dt, where) for k, dt in edge_schema.items()}
    if n_edges:
        change = g.insert_edges(src, dst, **props)
        if len(change) != n_edges:
            raise SnapshotError(f"{where}: {n_edges - len(change)} of its {n_edges} edges are "
                                "repeats or self-loops of an undirected graph")
    if vertex_schema:
        ids = np.arange(n_vertices, dtype=np.int64)
        values = {k: _column(table, _VERTEX_PREFIX + k, n_vertices, dt, where)
                  for k, dt in vertex_schema.items()}
        if n_vertices:
            g.update_vertices(ids, **values)
    if "vertex_map" in meta:
        from .vertex_map import VertexMap
        size = int(meta["vertex_map"]["size"])
        if _MAP_COLUMN not in table.column_names or table.num_rows < size:
            raise SnapshotError(f"{where}: the metadata promises a vertex map of {size} ids, "
                                f"but column {_MAP_COLUMN!r} does not hold them")
        col = table.column(_MAP_COLUMN).slice(0, size)
        if col.null_count:
            raise SnapshotError(f"{where}: column {_MAP_COLUMN!r} has nulls in its first "
                                f"{size} rows")
        kind = meta["vertex_map"]["kind"]
        if kind not in (None, "int", "uint", "str"):
            raise SnapshotError(f"{where}: vertex map kind {kind!r} is not 'int', 'uint' or "
                                "'str'")
        try:
            g.vertex_map = VertexMap.from_originals(col, kind)
        except (ValueError, TypeError) as e:
            raise SnapshotError(f"{where}: column {_MAP_COLUMN!r}: {e}") from None
        if size > g.num_vertices:
            g._grow_id_space(size)
    return g


def _format(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext not in SNAPSHOT_FORMATS:
        raise SnapshotError(f"{path}: a snapshot file ends in .arrow (Arrow IPC) or .parquet")
    return ext


def save(g, path: str | os.PathLike, vertex_map=_OWN, extra: dict | None = None,
         edge_columns: Callable | None = None) -> None:
    """Write ``g`` to ``path``: Arrow IPC file for ``.arrow``, Parquet for ``.parquet``
    (``vertex_map``, ``extra`` and ``edge_columns`` as in :func:`to_table`)."""
    path = os.fspath(path)
    ext = _format(path)
    table = to_table(g, vertex_map, extra, edge_columns)
    if ext == ".arrow":
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
    else:
        import pyarrow.parquet as pq
        pq.write_table(table, path)


def load(path: str | os.PathLike, graph_class, device: str = "auto", *,
         with_extra: bool = False):
    """The graph saved at ``path`` (by :func:`save`), rebuilt as a ``graph_class`` on
    ``device``; with ``with_extra=True``, ``(graph, extra)``: the ``extra`` dict saved with
    it, or None; where :func:`save` was given ``edge_columns``, ``extra["edge_columns"]``
    holds them as host arrays with the edges' dense ``src`` and ``dst``."""
    path = os.fspath(path)
    ext = _format(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such snapshot file")
    try:
        if ext == ".arrow":
            with pa.memory_map(path) as source:
                table = pa.ipc.open_file(source).read_all()
        else:
            import pyarrow.parquet as pq
            table = pq.read_table(path)
    except pa.ArrowInvalid as e:
        raise SnapshotError(f"{path}: not a readable {ext[1:]} file ({e})") from None
    g = from_table(table, graph_class, device, where=path)
    if with_extra:
        meta = json.loads(table.schema.metadata[_META_KEY])
        extra = meta.get("extra")
        if meta.get("edge_extra"):
            n_edges = int(meta["num_edges"])
            columns = {"src": _column(table, "src", n_edges, np.int32, path),
                       "dst": _column(table, "dst", n_edges, np.int32, path)}
            for name, dt in meta["edge_extra"].items():
                columns[name] = _column(table, _EDGE_EXTRA_PREFIX + name, n_edges,
                                        np.dtype(dt), path)
            extra = dict(extra or {}, edge_columns=columns)
        return g, extra
    return g


def to_bytes(g) -> bytes:
    """The snapshot as Arrow IPC bytes (what pickling a graph stores)."""
    table = to_table(g)
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def from_bytes(data: bytes, graph_class, device: str):
    """The graph of :func:`to_bytes`' output, as a ``graph_class`` on ``device``."""
    table = pa.ipc.open_stream(pa.BufferReader(data)).read_all()
    return from_table(table, graph_class, device, where="pickled graph")
