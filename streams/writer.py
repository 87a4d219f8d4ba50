"""Writing an edge stream (:mod:`streams.format`) as Arrow IPC file or stream, or Parquet."""
from __future__ import annotations

import os
from typing import Any, Mapping

import numpy as np
import pyarrow as pa

from .format import (BINARY_CONTAINERS, container_for_path, EventBlock, stream_schema,
                     StreamFormatError, validate_schema)

__all__ = ["StreamWriter", "write_stream"]


class StreamWriter:
    """Writes a stream, batch by batch, to an Arrow IPC file/stream or Parquet file.

    >>> with StreamWriter("out.arrow", time="int64") as w:            # doctest: +SKIP
    ...     w.write(src, dst, time=t)

    Args:
        path: output file.
        schema: a schema from :func:`stream_schema`; or give the columns with ``op``, ``weight``,
            ``time``, ``batch``, ``id_type`` and ``metadata`` (same meaning as there).
        container: ``"ipc-file"``, ``"ipc-stream"`` or ``"parquet"``; from the extension if None.
        compression: ``"zstd"`` (default), ``"lz4"`` or ``None``.
        chunk_rows: rows per record batch written (larger inputs are split).
    """

    def __init__(self, path: str | os.PathLike, schema: pa.Schema | None = None, *,
                 container: str | None = None, compression: str | None = "zstd",
                 chunk_rows: int = 1 << 16, op: bool = False, weight: bool = False,
                 time: Any = None, batch: bool = False, id_type: Any = "int32",
                 metadata: Mapping[str, Any] | None = None, display_name: str | None = None):
        self.path = os.fspath(path)
        self.name = display_name or self.path   # used in messages
        self.container = container or container_for_path(self.path)
        if self.container not in BINARY_CONTAINERS:
            raise ValueError(f"container must be one of {BINARY_CONTAINERS}, got {container!r}")
        if compression in ("none", "None", ""):
            compression = None
        if compression not in (None, "zstd", "lz4"):
            raise ValueError(f"compression must be 'zstd', 'lz4' or None, got {compression!r}")
        if schema is None:
            schema = stream_schema(op=op, weight=weight, time=time, batch=batch,
                                   id_type=id_type, metadata=metadata)
        else:
            validate_schema(schema, path=self.path)
            if metadata:
                meta = dict(schema.metadata or {})
                meta.update({str(k).encode(): str(v).encode() for k, v in metadata.items()})
                schema = schema.with_metadata(meta)
        self.schema = schema
        self.columns = validate_schema(schema, path=self.path)
        self.compression = compression
        self.chunk_rows = max(int(chunk_rows), 1)
        self.rows = 0
        self._closed = False
        if self.container == "parquet":
            import pyarrow.parquet as pq
            self._w = pq.ParquetWriter(self.path, schema, compression=compression or "none")
        else:
            opts = pa.ipc.IpcWriteOptions(compression=compression)
            self._sink = pa.OSFile(self.path, "wb")
            try:
                self._w = (pa.ipc.new_file if self.container == "ipc-file" else
                           pa.ipc.new_stream)(self._sink, schema, options=opts)
            except BaseException:
                self._sink.close()
                raise

    def _conform(self, table: pa.Table) -> pa.Table:
        cols = []
        for f in self.schema:
            if f.name not in table.column_names:
                raise StreamFormatError(f"{self.name}: data has no {f.name!r} column")
            col = table.column(f.name)
            if f.name in ("src", "dst"):
                arr = col.to_numpy() if col.null_count == 0 else None
                if arr is None:
                    raise StreamFormatError(f"{self.name}: column {f.name!r} has null ids")
                if arr.dtype.kind not in "iu":
                    raise StreamFormatError(f"{self.name}: column {f.name!r} has type "
                                            f"{col.type}; expected integer vertex ids")
                if arr.size:
                    lo, hi = int(arr.min()), int(arr.max())
                    if lo < 0:
                        raise StreamFormatError(f"{self.name}: column {f.name!r}: negative "
                                                f"vertex id {lo}")
                    if hi > np.iinfo(f.type.to_pandas_dtype()).max:
                        raise StreamFormatError(
                            f"{self.name}: column {f.name!r}: vertex id {hi} does not fit "
                            f"{f.type} (write with id_type='int64', or 'hornet convert "
                            f"--id-type int64')")
            if f.name == "op":
                o = col.to_numpy()
                if o.size and not np.all((o == 1) | (o == -1)):
                    raise StreamFormatError(f"{self.name}: column 'op' holds values other "
                                            f"than +1/-1")
            if f.name == "time" and f.type == pa.int64() and pa.types.is_floating(col.type):
                v = col.to_numpy()
                if v.size and not np.all(v == np.floor(v)):
                    raise StreamFormatError(f"{self.name}: column 'time' has fractional values "
                                            f"but the stream's time type is int64")
            try:
                cols.append(col.cast(f.type, safe=True))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise StreamFormatError(f"{self.name}: column {f.name!r} cannot be stored as "
                                        f"{f.type} ({e})") from None
        return pa.Table.from_arrays(cols, schema=self.schema)

    def write_table(self, table: pa.Table | pa.RecordBatch) -> None:
        """Append rows (a table or record batch holding at least the schema's columns)."""
        if isinstance(table, pa.RecordBatch):
            table = pa.Table.from_batches([table])
        t = self._conform(table)
        if self.container == "parquet":
            self._w.write_table(t, row_group_size=self.chunk_rows)
        else:
            for rb in t.to_batches(max_chunksize=self.chunk_rows):
                self._w.write_batch(rb)
        self.rows += t.num_rows

    def write(self, src, dst, *, op=None, weight=None, time=None, batch=None) -> None:
        """Append events given as arrays (the schema's optional columns must be given)."""
        cols = {"src": np.asarray(src), "dst": np.asarray(dst)}
        for name, v in (("op", op), ("weight", weight), ("time", time), ("batch", batch)):
            if v is not None:
                cols[name] = np.asarray(v)
        for name in self.columns.names():
            if name not in cols:
                raise StreamFormatError(f"{self.name}: the stream schema has a {name!r} column;"
                                        f" pass {name}=...")
        n = cols["src"].shape[0]
        for k, v in cols.items():
            if v.shape != (n,):
                raise ValueError(f"column {k!r} has shape {v.shape}, expected ({n},)")
        self.write_table(pa.table({k: cols[k] for k in self.columns.names()}))

    def write_block(self, block: EventBlock) -> None:
        """Append an :class:`EventBlock` (extra columns of the block are dropped)."""
        kw = {c: getattr(block, c) for c in ("op", "weight", "time", "batch")
              if c in self.columns.names()}
        self.write(block.src, block.dst, **kw)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._w.close()
        finally:
            if self.container != "parquet":
                self._sink.close()

    def abort(self) -> None:
        """Close and remove the partial output."""
        try:
            self.close()
        except Exception:
            pass
        try:
            os.remove(self.path)
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self.abort()


def write_stream(path: str | os.PathLike, data: Any, *, container: str | None = None,
                 compression: str | None = "zstd", id_type: Any = "int32",
                 chunk_rows: int = 1 << 16, metadata: Mapping[str, Any] | None = None) -> str:
    """Write a stream in one call; returns the path.

    ``data``: a ``pyarrow.Table``/``RecordBatch`` or a dict of arrays with ``src``, ``dst`` and
    any of ``op``, ``weight``, ``time``, ``batch`` (other columns are dropped), or an iterable of
    :class:`EventBlock` (all with the same optional columns). The container comes from the
    extension unless given.
    """
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    if isinstance(data, Mapping):
        data = pa.table({k: (v if isinstance(v, (pa.Array, pa.ChunkedArray)) else np.asarray(v))
                         for k, v in data.items()})
    if isinstance(data, EventBlock):
        data = [data]
    if isinstance(data, pa.Table):
        cols = validate_schema(data.schema)
        schema = stream_schema(op=cols.op, weight=cols.weight, time=cols.time, batch=cols.batch,
                               id_type=id_type, metadata=_merge_meta(data.schema, metadata))
        with StreamWriter(path, schema, container=container, compression=compression,
                          chunk_rows=chunk_rows) as w:
            w.write_table(data)
        return os.fspath(path)
    it = iter(data)
    first = next(it, None)
    if first is None:
        raise ValueError("write_stream: no data (an empty iterable of blocks)")
    schema = stream_schema(op=first.op is not None, weight=first.weight is not None,
                           time=None if first.time is None else first.time.dtype,
                           batch=first.batch is not None, id_type=id_type, metadata=metadata)
    with StreamWriter(path, schema, container=container, compression=compression,
                      chunk_rows=chunk_rows) as w:
        w.write_block(first)
        for blk in it:
            w.write_block(blk)
    return os.fspath(path)


def _merge_meta(schema: pa.Schema, metadata):
    meta = {(k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
            for k, v in (schema.metadata or {}).items()}
    meta.pop("hornet.stream", None)
    meta.update({str(k): str(v) for k, v in (metadata or {}).items()})
    return meta
