"""The edge-stream format: its Arrow schema, event blocks and containers.

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

Readers accept any integer type for ``src``/``dst``/``op``/``batch`` (``src``/``dst`` may
also both be strings: user names, replayed with ``hornet replay --map-ids``) and any integer
or float type for ``weight`` (read as float64) and ``time`` (read as int64 if integral, else
float64). Integer ids are read as int64, except that a reader whose ids a vertex map
translates (``--map-ids``) keeps ``src``/``dst`` of unsigned types (both) as uint64, so that
ids of 2^63 and more (hashes) reach the map unchanged.
Other columns are allowed and ignored. Writers use the canonical types above (ids int32 by
default, ``id_type="int64"`` for larger ids) and record ``hornet.stream = "1"`` and any user
metadata (``source``, ``description``...) in the schema metadata.

Containers (chosen from the file *content* when reading, from the extension when writing):

* Arrow IPC file (``.arrow``, ``.feather``, ``.ipc``): random access, memory-mapped;
* Arrow IPC stream (``.arrows``): sequential;
* Parquet (``.parquet``, ``.pq``).

Every container is read record batch by record batch (:mod:`streams.reader`; Parquet:
``block_rows`` rows at a time), so memory stays bounded whatever the file size;
:mod:`streams.writer` writes them. :func:`~streams.reader.open_stream` also reads the text formats
of ``shared/data`` on the fly (through :func:`hornet.io.iter_edge_blocks`): SNAP edge lists,
SNAP temporal (``time``), SNAP signed CSV (``rating`` -> ``weight``, ``time``), KONECT
(``weight``, ``time``) and Matrix Market (``weight`` for integer/real matrices).

Batching (:func:`streams.batching.iter_batches`): by the explicit ``batch`` column (runs of equal ids), by a fixed
event count, or by time windows (``batch_time``: events whose ``time`` falls into the same
interval ``[t0 + k*T, t0 + (k+1)*T)``, t0 the first event's time). The last batch may be
partial. Event indices count every row of the stream, self-loops included.
"""
from __future__ import annotations

from dataclasses import dataclass
import os
from typing import Any, Mapping, Sequence

import numpy as np
import pyarrow as pa

__all__ = ["StreamFormatError", "COLUMNS", "FORMAT_VERSION", "BINARY_CONTAINERS", "stream_schema",
           "validate_schema", "StreamColumns", "EventBlock", "block_from_record_batch",
           "detect_container", "container_for_path"]


#: The columns of the stream schema, in canonical order.
COLUMNS = ("src", "dst", "op", "weight", "time", "batch")
FORMAT_VERSION = "1"
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


class StreamFormatError(ValueError):
    """A stream that cannot be read or written: missing/corrupt file, bad schema (the message
    names the column and the type found), bad values (null or negative ids, op not +-1)."""


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
    # the type of src and dst: "int" (integers), "uint" (unsigned integers in both) or "str"
    ids: str = "int"

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

    def is_text(t):
        return pa.types.is_string(t) or pa.types.is_large_string(t)

    ids = "str" if is_text(typ("src")) and is_text(typ("dst")) else \
        "uint" if all(pa.types.is_unsigned_integer(typ(n)) for n in ("src", "dst")) else "int"
    for name in ("src", "dst"):
        if ids != "str" and not pa.types.is_integer(typ(name)):
            raise bad(name, "an integer type (int32 or int64), or strings in both src and dst")
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
    return StreamColumns(has_op, has_w, time, has_b, ignored, ids)


@dataclass
class EventBlock:
    """Consecutive events of a stream as NumPy arrays.

    ``start`` is the event index (row number in the stream, zero-based) of the first row;
    ``src``/``dst`` int64 (uint64 for the unsigned ids of a stream read for a vertex map, str
    arrays for a stream of string ids); ``op`` int8 (+1/-1) or
    None; ``weight`` float64 or None; ``time`` int64/float64 or None; ``batch`` int64 or None.
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


def _check_ids(a: np.ndarray, name: str, path: str | None, start: int,
               mapped: bool = False, unsigned: bool = False) -> np.ndarray:
    """Integer ids of column ``name`` as int64, or as uint64 when ``mapped and unsigned`` (a
    vertex map takes every unsigned 64-bit id). Ids a vertex map translates (``mapped``) may
    be negative; others must be >= 0. Ids beyond int64 are refused unless kept as uint64."""
    if mapped and unsigned:
        return a.astype(np.uint64, copy=False)
    if a.dtype.kind == "u":
        top = np.iinfo(np.int64).max
        if a.size and int(a.max()) > top:
            i = int(np.argmax(a > top))
            fix = "the other id column holds signed ids" if mapped else \
                "replay or convert with --map-ids (map_ids=True) to map such ids to dense ones"
            raise StreamFormatError(f"{_where(path)}column {name!r}: vertex id {int(a[i])} at "
                                    f"event {start + i} is beyond the signed 64-bit range; {fix}")
    a = a.astype(np.int64, copy=False)
    if not mapped and a.size and int(a.min()) < 0:
        i = int(np.argmax(a < 0))
        raise StreamFormatError(f"{_where(path)}column {name!r}: negative vertex id {int(a[i])} "
                                f"at event {start + i}")
    return a


def block_from_record_batch(rb: pa.RecordBatch, cols: StreamColumns, start: int,
                            path: str | None = None, mapped_ids: bool = False) -> EventBlock:
    """Validate the values of one record batch and turn it into an :class:`EventBlock`.
    ``mapped_ids``: the ids are ones a vertex map will translate: negative integer ids are
    accepted, and unsigned ids (``cols.ids == "uint"``) stay uint64, all 64 bits."""
    if cols.ids == "str":
        src = _column_numpy(rb, "src", path, start).astype(str)
        dst = _column_numpy(rb, "dst", path, start).astype(str)
    else:
        unsigned = cols.ids == "uint"
        src = _check_ids(_column_numpy(rb, "src", path, start), "src", path, start, mapped_ids,
                         unsigned)
        dst = _check_ids(_column_numpy(rb, "dst", path, start), "dst", path, start, mapped_ids,
                         unsigned)
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
