"""Reading an edge stream (:mod:`streams.format`) record batch by record batch: Arrow IPC
file or stream, Parquet, or a text edge list of ``shared/data`` converted on the fly."""
from __future__ import annotations

import os
from typing import Any, Iterator, Mapping

import numpy as np
import pyarrow as pa

from .format import (block_from_record_batch, detect_container, EventBlock, _sniff_text,
                     stream_schema, StreamFormatError, validate_schema)

__all__ = ["StreamReader", "open_stream", "read_stream"]


_DEFAULT_BLOCK_ROWS = 1 << 20
_TEXT_EXTRA = {"time": "time", "weight": "weight", "rating": "weight"}


class StreamReader:
    """An open stream: its schema, optional columns and an iterator over record batches.

    Use :func:`open_stream` to make one. Iterating (``record_batches()`` or ``blocks()``) reads
    the file once, batch by batch; a second iteration re-opens it (Arrow/Parquet) or re-reads it
    (text). Use as a context manager to close the file early.

    Attributes:
        path: the file (or ``"<table>"``).
        container: ``"ipc-file"``, ``"ipc-stream"``, ``"parquet"``, ``"text"`` or ``"table"``.
        schema: the Arrow schema (for text files: the schema the converter would write).
        columns: :class:`StreamColumns`.
        num_rows: number of events (IPC file, Parquet, table), else None; see the property.
        metadata: schema metadata as a str -> str dict.
        text_format: for text files, the detected format (``"snap"``, ``"csv"``...).
        mapped_ids: the ids are ones a vertex map translates (``hornet replay --map-ids``):
            :meth:`blocks` accepts negative integer ids and hands out unsigned ones as
            uint64 (ids of 2^63 and more included); False by default.
    """

    def __init__(self, path: str, container: str, *, block_rows: int = _DEFAULT_BLOCK_ROWS,
                 text_format: str | None = None, text_block_bytes: int | None = None,
                 table: pa.Table | None = None):
        self.path = path
        self.container = container
        self.block_rows = max(int(block_rows), 1)
        self.text_format = text_format
        self._text_block_bytes = text_block_bytes
        self.mapped_ids = False
        self._table = table
        self._closers: list = []
        self._held = None
        self._num_rows: int | None = None
        self.text_info: dict = {}
        if container == "table":
            schema = table.schema
            self._num_rows = table.num_rows
        elif container == "ipc-file":
            schema = self._open_ipc_file_schema()
        elif container == "ipc-stream":
            schema = self._guard(lambda: self._ipc_stream_reader().schema)
        elif container == "parquet":
            schema = self._open_parquet_schema()
        elif container == "text":
            schema = self._open_text_schema()
        else:
            raise ValueError(f"unknown container {container!r}")
        self.schema: pa.Schema = schema
        self.columns = validate_schema(schema, path=path)
        self.metadata = {(k.decode() if isinstance(k, bytes) else k):
                         (v.decode("utf-8", "replace") if isinstance(v, bytes) else v)
                         for k, v in (schema.metadata or {}).items()}

    @property
    def num_rows(self) -> int | None:
        """Number of events: from the metadata (Parquet, tables); for an Arrow IPC file counted
        on first use, one record batch at a time (a compressed file is decompressed once for
        this); None for IPC streams and text files (unknown until read)."""
        if self._num_rows is None and self.container == "ipc-file":
            def count():
                src = pa.memory_map(self.path, "r")
                try:
                    rd = pa.ipc.open_file(src)
                    return sum(rd.get_batch(i).num_rows for i in range(rd.num_record_batches))
                finally:
                    src.close()
            self._num_rows = self._guard(count)
        return self._num_rows

    # -- helpers
    def _guard(self, fn):
        try:
            return fn()
        except (pa.ArrowInvalid, pa.ArrowIOError, pa.ArrowNotImplementedError,
                pa.ArrowTypeError, pa.ArrowKeyError) as e:
            what = {"ipc-file": "Arrow IPC file", "ipc-stream": "Arrow IPC stream",
                    "parquet": "Parquet file"}.get(self.container, "stream")
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise StreamFormatError(f"{self.path}: corrupt or unreadable {what} ({msg})") from None

    def _open_ipc_file_schema(self):
        def go():
            src = pa.memory_map(self.path, "r")
            try:
                rd = pa.ipc.open_file(src)
                self.num_record_batches = rd.num_record_batches
                return rd.schema
            finally:
                src.close()
        return self._guard(go)

    def _ipc_stream_reader(self):
        src = pa.memory_map(self.path, "r")
        self._closers.append(src)
        return pa.ipc.open_stream(src)

    def _open_parquet_schema(self):
        import pyarrow.parquet as pq

        def go():
            pf = pq.ParquetFile(self.path)
            self._num_rows = pf.metadata.num_rows
            schema = pf.schema_arrow
            pf.close()
            return schema
        return self._guard(go)

    def _text_blocks(self):
        from hornet.io import iter_edge_blocks
        kw = {}
        if self._text_block_bytes:
            kw["block_bytes"] = self._text_block_bytes
        return iter_edge_blocks(self.path, self.text_format, **kw)

    def _open_text_schema(self):
        # The first block is parsed now (it tells the extra columns and their types) and kept
        # for the first iteration, so nothing is parsed twice.
        fmt, header = _sniff_text(self.path)
        if self.text_format is None:
            self.text_format = fmt
        gen = self._text_blocks()
        first = next(gen, None)
        self._held = (gen, first)
        extra = dict(first.extra) if first is not None else {}
        time_t = None
        weight = False
        for name, vals in extra.items():
            role = _TEXT_EXTRA.get(name)
            if role == "time":
                time_t = pa.float64() if np.asarray(vals).dtype.kind == "f" else pa.int64()
            elif role == "weight":
                weight = True
        meta = {"source": os.path.basename(self.path), "source_format": self.text_format}
        meta.update(header)
        if "rating" in extra:
            meta["weight_source"] = "rating"
        self.text_info = dict(meta)
        return stream_schema(weight=weight, time=time_t, id_type="int64", metadata=meta)

    # -- iteration
    def record_batches(self) -> Iterator[pa.RecordBatch]:
        """Record batches in file order (at most ``block_rows`` rows each for Parquet and text;
        Arrow IPC batches come as written, sliced to ``block_rows``)."""
        for rb in self._raw_batches():
            n = rb.num_rows
            if n <= self.block_rows:
                yield rb
            else:
                for a in range(0, n, self.block_rows):
                    yield rb.slice(a, self.block_rows)

    def _raw_batches(self) -> Iterator[pa.RecordBatch]:
        if self.container == "table":
            yield from self._table.to_batches(max_chunksize=self.block_rows)
        elif self.container == "ipc-file":
            src = self._guard(lambda: pa.memory_map(self.path, "r"))
            self._closers.append(src)
            try:
                rd = self._guard(lambda: pa.ipc.open_file(src))
                self._check_same_schema(rd.schema)
                for i in range(rd.num_record_batches):
                    yield self._guard(lambda: rd.get_batch(i))
            finally:
                src.close()
        elif self.container == "ipc-stream":
            rd = self._guard(self._ipc_stream_reader)
            self._check_same_schema(rd.schema)
            while True:
                try:
                    rb = self._guard(rd.read_next_batch)
                except StopIteration:
                    break
                yield rb
        elif self.container == "parquet":
            import pyarrow.parquet as pq
            pf = self._guard(lambda: pq.ParquetFile(self.path))
            try:
                it = pf.iter_batches(batch_size=self.block_rows)
                while True:
                    try:
                        rb = self._guard(lambda: next(it))
                    except StopIteration:
                        break
                    yield rb
            finally:
                pf.close()
        else:
            yield from self._text_record_batches()

    def _check_same_schema(self, schema):
        if not schema.equals(self.schema, check_metadata=False):
            raise StreamFormatError(f"{self.path}: file changed while being read")

    def _text_record_batches(self):
        time_t = self.schema.field("time").type if self.columns.time else None
        held, self._held = self._held, None
        if held is not None:
            gen, first = held
            self._closers.append(gen)
            source = _chain_first(first, gen)
        else:
            source = self._text_blocks()
            self._closers.append(source)
        for blk in source:
            cols = {"src": pa.array(blk.src, pa.int64()), "dst": pa.array(blk.dst, pa.int64())}
            for name, vals in blk.extra.items():
                role = _TEXT_EXTRA.get(name)
                if role == "weight" and self.columns.weight and "weight" not in cols:
                    cols["weight"] = pa.array(np.asarray(vals, dtype=np.float64))
                elif role == "time" and time_t is not None:
                    v = np.asarray(vals)
                    if time_t == pa.int64() and v.dtype.kind == "f":
                        if not np.all(np.isfinite(v)) or not np.all(v == np.floor(v)):
                            raise StreamFormatError(
                                f"{self.path}: fractional time values appear after line "
                                f"{blk.first_line}, but the stream's time column is int64")
                        v = v.astype(np.int64)
                    cols["time"] = pa.array(v, time_t)
            yield pa.record_batch(cols, schema=self.schema)

    def blocks(self) -> Iterator[EventBlock]:
        """The stream as validated :class:`EventBlock` objects, in file order."""
        start = 0
        for rb in self.record_batches():
            if rb.num_rows == 0:
                continue
            blk = block_from_record_batch(rb, self.columns, start, self.path, self.mapped_ids)
            start += len(blk)
            yield blk

    def read_all(self) -> pa.Table:
        """The whole stream as one table (stream columns only, canonical order)."""
        names = self.columns.names()
        batches = [rb.select(names) for rb in self.record_batches()]
        if not batches:
            return self.schema.empty_table().select(names)
        return pa.Table.from_batches(batches)

    def close(self) -> None:
        if self._held is not None:
            self._closers.append(self._held[0])
            self._held = None
        for c in self._closers:
            try:
                c.close()
            except Exception:
                pass
        self._closers.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        rows = "?" if self.num_rows is None else f"{self.num_rows}"
        return (f"StreamReader({self.path!r}, {self.container}, rows={rows}, "
                f"columns={self.columns.names()})")


def open_stream(source: Any, *, text_format: str | None = None,
                block_rows: int = _DEFAULT_BLOCK_ROWS,
                text_block_bytes: int | None = None) -> StreamReader:
    """Open a stream for reading.

    Args:
        source: a path (Arrow IPC file/stream, Parquet, or any text edge-list format of
            ``shared/data``, gzip or plain; the container is detected from the content), a
            ``pyarrow.Table``/``RecordBatch`` in the stream schema, a dict of arrays
            (``{"src": ..., "dst": ..., ...}``), or an existing :class:`StreamReader`.
        text_format: force the text format (``"snap"``, ``"csv"``, ``"konect"``, ``"mtx"``).
        block_rows: rows per record batch handed out (bounds memory).
        text_block_bytes: decompressed bytes parsed at a time for text files.

    Raises:
        FileNotFoundError: missing file.
        StreamFormatError: empty/corrupt file, bad schema.
        hornet.io.EdgeFileError: malformed text file (names the file and line).
    """
    if isinstance(source, StreamReader):
        return source
    if isinstance(source, pa.RecordBatch):
        source = pa.Table.from_batches([source])
    if isinstance(source, Mapping):
        source = pa.table({k: (v if isinstance(v, (pa.Array, pa.ChunkedArray)) else np.asarray(v))
                           for k, v in source.items()})
    if isinstance(source, pa.Table):
        return StreamReader("<table>", "table", block_rows=block_rows, table=source)
    path = os.fspath(source)
    container = detect_container(path)
    if container != "text" and text_format is not None:
        raise StreamFormatError(f"{path}: a text format was given ({text_format!r}) but the "
                                f"file is an Arrow/Parquet stream ({container})")
    return StreamReader(path, container, block_rows=block_rows, text_format=text_format,
                        text_block_bytes=text_block_bytes)


def read_stream(source: Any, **kw) -> pa.Table:
    """The whole stream as a ``pyarrow.Table`` (convenience for small streams)."""
    with open_stream(source, **kw) as rd:
        return rd.read_all()


def _chain_first(first, gen):
    if first is not None:
        yield first
    yield from gen
