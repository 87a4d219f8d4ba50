"""The edge-stream format: one Arrow schema, its readers and writers, and batching.

A recorded stream is a table of *events*, one row each, in file order:

========  =====================  ==========================================================
column    type                   meaning
========  =====================  ==========================================================
src       integer (int32/int64)  source vertex id, >= 0 (hornet ids are int32)
dst       integer (int32/int64)  destination vertex id, >= 0
op        int8, optional         +1 insert, -1 delete; absent: every event is an insert
weight    float64, optional      edge weight (converters store SNAP ratings here)
time      int64 or float64, opt  event time (e.g. unix seconds)
batch     int64, optional        explicit batch id: consecutive rows with equal ids form one
                                 replay batch
========  =====================  ==========================================================

Readers accept any integer type for ``src``/``dst``/``op``/``batch`` and any integer or float
type for ``weight`` (read as float64) and ``time`` (read as int64 if integral, else float64).
Other columns are allowed and ignored. Writers use the canonical types above (ids int32 by
default, ``id_type="int64"`` for larger ids) and record ``hornet.stream = "1"`` and any user
metadata (``source``, ``description``...) in the schema metadata.

Containers (chosen from the file *content* when reading, from the extension when writing):

* Arrow IPC file (``.arrow``, ``.feather``, ``.ipc``): random access, memory-mapped;
* Arrow IPC stream (``.arrows``): sequential;
* Parquet (``.parquet``, ``.pq``).

Every container is read record batch by record batch (Parquet: ``block_rows`` rows at a time),
so memory stays bounded whatever the file size. :func:`open_stream` also reads the text formats
of ``shared/data`` on the fly (through :func:`hornet.io.iter_edge_blocks`): SNAP edge lists,
SNAP temporal (``time``), SNAP signed CSV (``rating`` -> ``weight``, ``time``), KONECT
(``weight``, ``time``) and Matrix Market (``weight`` for integer/real matrices).

Batching (:func:`iter_batches`): by the explicit ``batch`` column (runs of equal ids), by a fixed
event count, or by time windows (``batch_time``: events whose ``time`` falls into the same
interval ``[t0 + k*T, t0 + (k+1)*T)``, t0 the first event's time). The last batch may be
partial. Event indices count every row of the stream, self-loops included.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa

__all__ = [
    "StreamFormatError",
    "COLUMNS",
    "FORMAT_VERSION",
    "MAX_VERTEX_ID",
    "stream_schema",
    "validate_schema",
    "StreamColumns",
    "EventBlock",
    "Batch",
    "StreamReader",
    "StreamWriter",
    "open_stream",
    "read_stream",
    "write_stream",
    "detect_container",
    "container_for_path",
    "iter_batches",
]

#: The columns of the stream schema, in canonical order.
COLUMNS = ("src", "dst", "op", "weight", "time", "batch")
FORMAT_VERSION = "1"
#: Largest vertex id hornet accepts (ids are int32).
MAX_VERTEX_ID = np.iinfo(np.int32).max - 1

_ARROW_FILE_MAGIC = b"ARROW1"
_ARROW_STREAM_MAGIC = b"\xff\xff\xff\xff"
_PARQUET_MAGIC = b"PAR1"
_EXT_CONTAINER = {
    ".arrow": "ipc-file", ".feather": "ipc-file", ".ipc": "ipc-file",
    ".arrows": "ipc-stream",
    ".parquet": "parquet", ".pq": "parquet",
}
#: Containers that hold the Arrow stream format (as opposed to the text formats).
BINARY_CONTAINERS = ("ipc-file", "ipc-stream", "parquet")
_DEFAULT_BLOCK_ROWS = 1 << 20


class StreamFormatError(ValueError):
    """A stream that cannot be read or written: missing/corrupt file, bad schema (the message
    names the column and the type found), bad values (null or negative ids, op not +-1)."""


# ---------------------------------------------------------------------------------------------
# schema


def _id_type(id_type) -> pa.DataType:
    t = pa.from_numpy_dtype(np.dtype(id_type)) if not isinstance(id_type, pa.DataType) else id_type
    if t not in (pa.int32(), pa.int64()):
        raise ValueError(f"id_type must be int32 or int64, got {t}")
    return t


def stream_schema(*, op: bool = False, weight: bool = False, time: Any = None,
                  batch: bool = False, id_type: Any = "int32",
                  metadata: Mapping[str, Any] | None = None) -> pa.Schema:
    """The canonical Arrow schema of a stream with the given optional columns.

    Args:
        op, weight, batch: include the ``op`` (int8), ``weight`` (float64), ``batch`` (int64)
            columns.
        time: ``None`` (no time column), ``"int64"`` or ``"float64"`` (or a NumPy/Arrow type).
        id_type: ``"int32"`` (default, hornet's id type) or ``"int64"`` for src/dst.
        metadata: extra schema metadata (values are turned into strings).
    """
    idt = _id_type(id_type)
    fields = [pa.field("src", idt, nullable=False), pa.field("dst", idt, nullable=False)]
    if op:
        fields.append(pa.field("op", pa.int8(), nullable=False))
    if weight:
        fields.append(pa.field("weight", pa.float64()))
    if time is not None:
        tt = time if isinstance(time, pa.DataType) else pa.from_numpy_dtype(np.dtype(time))
        if pa.types.is_integer(tt):
            tt = pa.int64()
        elif pa.types.is_floating(tt):
            tt = pa.float64()
        else:
            raise ValueError(f"time must be int64 or float64, got {tt}")
        fields.append(pa.field("time", tt))
    if batch:
        fields.append(pa.field("batch", pa.int64(), nullable=False))
    meta = {"hornet.stream": FORMAT_VERSION}
    for k, v in (metadata or {}).items():
        meta[str(k)] = str(v)
    return pa.schema(fields, metadata=meta)


@dataclass(frozen=True)
class StreamColumns:
    """Which optional columns a (validated) stream has, and the NumPy types they are read as."""

    op: bool = False
    weight: bool = False
    time: str | None = None      # "int64", "float64" or None
    batch: bool = False
    ignored: tuple = ()          # further columns, ignored by readers

    def names(self) -> list[str]:
        out = ["src", "dst"]
        if self.op:
            out.append("op")
        if self.weight:
            out.append("weight")
        if self.time:
            out.append("time")
        if self.batch:
            out.append("batch")
        return out


def _where(path: str | None) -> str:
    return f"{path}: " if path else ""


def validate_schema(schema: pa.Schema, *, path: str | None = None) -> StreamColumns:
    """Check that ``schema`` holds a stream; returns its :class:`StreamColumns`.

    Raises :class:`StreamFormatError` naming the missing column or the column with a bad type.
    """
    names = list(schema.names)
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise StreamFormatError(f"{_where(path)}duplicate column {dup[0]!r} in the stream schema")
    for need in ("src", "dst"):
        if need not in names:
            raise StreamFormatError(
                f"{_where(path)}stream schema has no {need!r} column (columns: "
                f"{', '.join(names) or 'none'}; a stream needs integer src and dst)")

    def typ(name):
        return schema.field(name).type

    def bad(name, want):
        return StreamFormatError(f"{_where(path)}column {name!r} has type {typ(name)}; "
                                 f"expected {want}")

    for name in ("src", "dst"):
        if not pa.types.is_integer(typ(name)):
            raise bad(name, "an integer type (int32 or int64)")
    has_op = "op" in names
    if has_op and not pa.types.is_integer(typ("op")):
        raise bad("op", "int8 (+1 insert, -1 delete)")
    has_w = "weight" in names
    if has_w and not (pa.types.is_floating(typ("weight")) or pa.types.is_integer(typ("weight"))):
        raise bad("weight", "float64 (or another numeric type)")
    time = None
    if "time" in names:
        t = typ("time")
        if pa.types.is_integer(t):
            time = "int64"
        elif pa.types.is_floating(t):
            time = "float64"
        else:
            raise bad("time", "int64 or float64")
    has_b = "batch" in names
    if has_b and not pa.types.is_integer(typ("batch")):
        raise bad("batch", "int64")
    ignored = tuple(n for n in names if n not in COLUMNS)
    return StreamColumns(has_op, has_w, time, has_b, ignored)


# ---------------------------------------------------------------------------------------------
# event blocks (NumPy view of consecutive rows)


@dataclass
class EventBlock:
    """Consecutive events of a stream as NumPy arrays.

    ``start`` is the event index (row number in the stream, zero-based) of the first row;
    ``src``/``dst`` int64; ``op`` int8 (+1/-1) or None; ``weight`` float64 or None;
    ``time`` int64/float64 or None; ``batch`` int64 or None.
    """

    start: int
    src: np.ndarray
    dst: np.ndarray
    op: np.ndarray | None = None
    weight: np.ndarray | None = None
    time: np.ndarray | None = None
    batch: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.src.shape[0])

    @property
    def stop(self) -> int:
        """Event index one past the last row."""
        return self.start + len(self)

    def _cols(self):
        return ("src", "dst", "op", "weight", "time", "batch")

    def slice(self, a: int, b: int) -> "EventBlock":
        kw = {c: (None if getattr(self, c) is None else getattr(self, c)[a:b])
              for c in self._cols()}
        return EventBlock(self.start + a, **kw)

    @staticmethod
    def concat(blocks: Sequence["EventBlock"]) -> "EventBlock":
        if len(blocks) == 1:
            return blocks[0]
        first = blocks[0]
        kw = {}
        for c in first._cols():
            if getattr(first, c) is None:
                kw[c] = None
            else:
                kw[c] = np.concatenate([getattr(b, c) for b in blocks])
        return EventBlock(first.start, **kw)

    def to_table(self, *, id_type: Any = "int64") -> pa.Table:
        """The block as a table in the stream schema (optional columns where present)."""
        idt = _id_type(id_type)
        cols = {"src": pa.array(self.src).cast(idt), "dst": pa.array(self.dst).cast(idt)}
        for c in ("op", "weight", "time", "batch"):
            v = getattr(self, c)
            if v is not None:
                cols[c] = pa.array(v)
        return pa.table(cols)


def _column_numpy(rb: pa.RecordBatch, name: str, path: str | None, start: int,
                  allow_null: bool = False) -> np.ndarray:
    col = rb.column(name)
    if col.null_count and not allow_null:
        i = int(np.flatnonzero(np.asarray(col.is_null()))[0])
        raise StreamFormatError(f"{_where(path)}column {name!r}: null value at event {start + i}")
    return col.to_numpy(zero_copy_only=False)


def _check_ids(a: np.ndarray, name: str, path: str | None, start: int) -> np.ndarray:
    if a.dtype.kind == "u":
        if a.size and int(a.max()) > np.iinfo(np.int64).max:
            i = int(np.argmax(a > np.iinfo(np.int64).max))
            raise StreamFormatError(f"{_where(path)}column {name!r}: vertex id {int(a[i])} at "
                                    f"event {start + i} is too large")
    a = a.astype(np.int64, copy=False)
    if a.size and int(a.min()) < 0:
        i = int(np.argmax(a < 0))
        raise StreamFormatError(f"{_where(path)}column {name!r}: negative vertex id {int(a[i])} "
                                f"at event {start + i}")
    return a


def block_from_record_batch(rb: pa.RecordBatch, cols: StreamColumns, start: int,
                            path: str | None = None) -> EventBlock:
    """Validate the values of one record batch and turn it into an :class:`EventBlock`."""
    src = _check_ids(_column_numpy(rb, "src", path, start), "src", path, start)
    dst = _check_ids(_column_numpy(rb, "dst", path, start), "dst", path, start)
    op = weight = time = batch = None
    if cols.op:
        o = _column_numpy(rb, "op", path, start)
        okay = (o == 1) | (o == -1)
        if not okay.all():
            i = int(np.argmin(okay))
            raise StreamFormatError(f"{_where(path)}column 'op': value {int(o[i])} at event "
                                    f"{start + i}; expected +1 (insert) or -1 (delete)")
        op = o.astype(np.int8, copy=False)
    if cols.weight:
        weight = np.asarray(_column_numpy(rb, "weight", path, start, allow_null=True),
                            dtype=np.float64)
    if cols.time:
        t = _column_numpy(rb, "time", path, start, allow_null=cols.time == "float64")
        time = np.asarray(t, dtype=np.int64 if cols.time == "int64" else np.float64)
    if cols.batch:
        batch = _column_numpy(rb, "batch", path, start).astype(np.int64, copy=False)
    return EventBlock(start, src, dst, op, weight, time, batch)


# ---------------------------------------------------------------------------------------------
# containers


def container_for_path(path: str | os.PathLike, default: str | None = None) -> str:
    """``"ipc-file"``, ``"ipc-stream"`` or ``"parquet"`` from a file name's extension."""
    ext = os.path.splitext(os.fspath(path))[1].lower()
    if ext in _EXT_CONTAINER:
        return _EXT_CONTAINER[ext]
    if default is not None:
        return default
    raise StreamFormatError(
        f"{os.fspath(path)}: cannot tell the stream container from the extension "
        f"{ext or '(none)'!r}"
        f"; use .arrow (Arrow IPC file), .arrows (Arrow IPC stream) or .parquet")


def detect_container(path: str | os.PathLike) -> str:
    """What a file holds, from its first bytes: ``"ipc-file"``, ``"ipc-stream"``, ``"parquet"``
    or ``"text"`` (anything else: a gzip or plain text edge list).

    Raises FileNotFoundError for a missing file and :class:`StreamFormatError` for an empty one
    or for a file whose extension promises Arrow/Parquet but whose content is not.
    """
    p = os.fspath(path)
    if os.path.isdir(p):
        raise StreamFormatError(f"{p}: is a directory, not a stream file")
    with open(p, "rb") as f:  # FileNotFoundError / PermissionError propagate
        head = f.read(8)
    if not head:
        raise StreamFormatError(f"{p}: empty file")
    if head.startswith(_ARROW_FILE_MAGIC):
        return "ipc-file"
    if head.startswith(_PARQUET_MAGIC):
        return "parquet"
    if head.startswith(_ARROW_STREAM_MAGIC):
        return "ipc-stream"
    by_ext = _EXT_CONTAINER.get(os.path.splitext(p)[1].lower())
    if by_ext is not None:
        names = {"ipc-file": "Arrow IPC file", "ipc-stream": "Arrow IPC stream",
                 "parquet": "Parquet file"}
        raise StreamFormatError(f"{p}: not an {names[by_ext]} (bad magic bytes {head[:6]!r}); "
                                f"the file is corrupt or in another format")
    return "text"


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
    """

    def __init__(self, path: str, container: str, *, block_rows: int = _DEFAULT_BLOCK_ROWS,
                 text_format: str | None = None, text_block_bytes: int | None = None,
                 table: pa.Table | None = None):
        self.path = path
        self.container = container
        self.block_rows = max(int(block_rows), 1)
        self.text_format = text_format
        self._text_block_bytes = text_block_bytes
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
            blk = block_from_record_batch(rb, self.columns, start, self.path)
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


# ---------------------------------------------------------------------------------------------
# writing


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


# ---------------------------------------------------------------------------------------------
# batching


@dataclass
class Batch:
    """One replay batch: ``index`` (0-based), its events (``events.start`` is the event index
    of its first row, ``events.stop`` one past its last) and, for batch-column streams, the
    batch id (``label``); for time batching, the window number."""

    index: int
    events: EventBlock
    label: Any = None

    @property
    def start(self) -> int:
        return self.events.start

    @property
    def stop(self) -> int:
        return self.events.stop

    def __len__(self) -> int:
        return len(self.events)


def batching_mode(columns: StreamColumns, *, batch_size: int | None = None,
                  batch_time: float | None = None, use_batch_column: bool = True) -> str:
    """``"column"``, ``"time"`` or ``"count"``: how :func:`iter_batches` will cut a stream."""
    if columns.batch and use_batch_column:
        return "column"
    if batch_time is not None:
        if not columns.time:
            raise StreamFormatError("time-window batching needs a 'time' column, and the stream "
                                    "has none")
        return "time"
    return "count"


def iter_batches(blocks: Iterable[EventBlock], *, batch_size: int | None = None,
                 batch_time: float | None = None, use_batch_column: bool = True,
                 columns: StreamColumns | None = None) -> Iterator[Batch]:
    """Cut a stream of :class:`EventBlock` into replay batches, in file order.

    * the stream has a ``batch`` column (and ``use_batch_column``): each maximal run of
      consecutive rows with the same batch id is one batch;
    * else ``batch_time=T``: rows whose time falls into the same window
      ``floor((time - t0) / T)`` (t0: the first event's time) form a batch (runs, so unsorted
      times still give file-order batches);
    * else ``batch_size=N`` events per batch; the last batch may be shorter.

    ``blocks`` may be a :class:`StreamReader` (its ``blocks()`` are used and its columns decide
    the mode). Memory: one batch plus one block at a time.
    """
    if isinstance(blocks, StreamReader):
        columns = columns or blocks.columns
        blocks = blocks.blocks()
    if batch_size is not None:
        batch_size = int(batch_size)
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if batch_time is not None:
        batch_time = float(batch_time)
        if not (batch_time > 0 and math.isfinite(batch_time)):
            raise ValueError(f"batch_time must be a positive number, got {batch_time}")
    mode = None
    if columns is not None:
        mode = batching_mode(columns, batch_size=batch_size, batch_time=batch_time,
                             use_batch_column=use_batch_column)
    pending: list[EventBlock] = []
    pending_key = None
    index = 0
    t0 = None

    def flush():
        nonlocal pending, index
        ev = EventBlock.concat(pending)
        b = Batch(index, ev, _label(mode, pending_key))
        index += 1
        pending = []
        return b

    for blk in blocks:
        n = len(blk)
        if n == 0:
            continue
        if mode is None:
            mode = ("column" if blk.batch is not None and use_batch_column else
                    "time" if batch_time is not None else "count")
            if mode == "time" and blk.time is None:
                raise StreamFormatError("time-window batching needs a 'time' column, and the "
                                        "stream has none")
        if mode == "column":
            keys = blk.batch
        elif mode == "time":
            if t0 is None:
                t0 = blk.time[0]
            tt = np.asarray(blk.time, dtype=np.float64)
            if np.isnan(tt).any():
                i = int(np.argmax(np.isnan(tt)))
                raise StreamFormatError(f"time-window batching: event {blk.start + i} has no time")
            keys = np.floor((tt - float(t0)) / batch_time).astype(np.int64)
        else:
            if batch_size is None:
                raise ValueError("give batch_size (events per batch) or batch_time, or use a "
                                 "stream with a batch column")
            keys = (np.arange(blk.start, blk.stop, dtype=np.int64)) // batch_size
        # boundaries inside the block, and against the pending run
        cut = np.flatnonzero(keys[1:] != keys[:-1]) + 1
        starts = np.concatenate(([0], cut))
        ends = np.concatenate((cut, [n]))
        for a, b in zip(starts.tolist(), ends.tolist()):
            k = keys[a].item()
            if pending and k != pending_key:
                yield flush()
            pending.append(blk.slice(a, b) if (a, b) != (0, n) else blk)
            pending_key = k
    if pending:
        yield flush()


def _label(mode, key):
    if mode in ("column", "time"):
        return key
    return None


def with_batches(table: pa.Table, batch_ids) -> pa.Table:
    """``table`` with a ``batch`` column set (replaced if present)."""
    b = pa.array(np.asarray(batch_ids, dtype=np.int64))
    if "batch" in table.column_names:
        table = table.drop_columns(["batch"])
    return table.append_column("batch", b)



def _chain_first(first, gen):
    if first is not None:
        yield first
    yield from gen


def _sniff_text(path: str) -> tuple[str, dict]:
    """(text format, header hints) from the first 64 KiB of a (possibly gzip) text file."""
    import gzip
    import zlib

    from hornet.io import detect_format
    try:
        with open(path, "rb") as f:
            magic = f.read(2)
            f.seek(0)
            if magic == b"\x1f\x8b":
                with gzip.GzipFile(fileobj=f) as gz:
                    head = gz.read(1 << 16)
            else:
                head = f.read(1 << 16)
    except (OSError, EOFError, zlib.error) as e:
        raise StreamFormatError(f"{path}: corrupt or truncated gzip data ({e})") from None
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    cut = head.rfind(b"\n")
    if cut >= 0:
        head = head[:cut + 1]
    fmt = detect_format(head)
    hints: dict = {}
    first = head.lstrip().split(b"\n", 1)[0].strip().lower()
    if fmt == "mtx":
        words = first.split()
        if len(words) == 5 and words[4] in (b"symmetric", b"skew-symmetric"):
            hints["symmetric"] = "true"
    elif fmt == "konect":
        words = first.lstrip(b"%").split()
        if words and words[0] == b"sym":
            hints["symmetric"] = "true"
        elif words and words[0] in (b"asym", b"bip"):
            hints["directed"] = "true"
    return fmt, hints
