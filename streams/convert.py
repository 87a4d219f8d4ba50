"""Converters: any edge file of ``shared/data`` (or another stream) -> the Arrow stream format.

Text inputs are parsed block by block with :func:`hornet.io.iter_edge_blocks` and written record
batch by record batch, so memory stays bounded whatever the input size. Columns carried over:

=====================  ============================================================
input                  stream columns
=====================  ============================================================
SNAP edge list         src, dst
SNAP temporal          src, dst, time (int64 unix seconds)
SNAP signed CSV        src, dst, weight (the rating, -10..10), time (float64)
KONECT                 src, dst, weight, time (ids stay one-based, as in the file)
Matrix Market          src, dst (zero-based), weight for integer/real matrices
Arrow / Parquet        the stream columns as they are (re-encoded, e.g. to Parquet)
=====================  ============================================================

Ids are written as int32 (hornet's id type) unless ``id_type="int64"``. With ``map_ids=True``
(``hornet convert --map-ids``) the input's ids, 64-bit integers or strings, are mapped to dense
ids in order of first appearance (event by event, src before dst; as ``hornet replay
--map-ids`` numbers them), written as ``src``/``dst``, and kept in two further columns,
``src_original`` and ``dst_original`` (int64 or string), which stream readers ignore. The
schema metadata
records ``source`` (the input's file name), ``source_format`` and, where the input says so,
``symmetric`` (each entry stands for both directions: Matrix Market symmetric, KONECT sym) and
``weight_source = rating``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pyarrow as pa

from .format import (StreamFormatError, block_from_record_batch, container_for_path,
                     stream_schema)
from .reader import open_stream
from .writer import StreamWriter

__all__ = ["ConvertResult", "convert"]


@dataclass
class ConvertResult:
    """What :func:`convert` wrote."""

    input: str
    output: str
    container: str
    compression: str | None
    rows: int
    columns: list
    bytes: int
    source_format: str

    def summary(self) -> str:
        comp = self.compression or "uncompressed"
        return (f"wrote {self.output}: {self.rows:,} events, columns {','.join(self.columns)} "
                f"({self.container}, {comp}, {self.bytes / 1024:,.1f} KiB) from {self.input} "
                f"({self.source_format})")


def convert(input: Any, output: str | os.PathLike, *, text_format: str | None = None,
            container: str | None = None, compression: str | None = "zstd",
            id_type: Any = "int32", chunk_rows: int = 1 << 16,
            metadata: Mapping[str, Any] | None = None,
            text_block_bytes: int | None = None, map_ids: bool = False) -> ConvertResult:
    """Convert ``input`` to a stream file ``output``; returns a :class:`ConvertResult`.

    Args:
        input: a text edge file (SNAP, SNAP temporal, CSV, KONECT, Matrix Market; gzip or
            plain), an Arrow/Parquet stream, or anything :func:`streams.open_stream` takes.
        output: ``.arrow`` (Arrow IPC file), ``.arrows`` (IPC stream) or ``.parquet``;
            ``container`` overrides the extension.
        text_format: force the text format (``"snap"``, ``"csv"``, ``"konect"``, ``"mtx"``).
        compression: ``"zstd"`` (default), ``"lz4"`` or ``None``.
        id_type: ``"int32"`` (default) or ``"int64"`` for src/dst.
        chunk_rows: rows per record batch (or Parquet row group) written.
        metadata: extra schema metadata.
        map_ids: write dense ids and keep the input's ids in ``src_original``/``dst_original``.

    The output is written to a temporary name next to ``output`` and renamed at the end, so a
    failed conversion never leaves a partial file behind.
    """
    out = os.fspath(output)
    cont = container or container_for_path(out)
    rd = open_stream(input, text_format=text_format, block_rows=chunk_rows,
                     text_block_bytes=text_block_bytes)
    with rd:
        cols = rd.columns
        meta = {k: v for k, v in rd.metadata.items() if k != "hornet.stream"}
        if rd.container != "text":
            meta.setdefault("source", os.path.basename(rd.path))
            meta.setdefault("source_format", rd.container)
        meta.update({str(k): str(v) for k, v in (metadata or {}).items()})
        if map_ids:
            meta["vertex_map"] = ("src/dst: dense ids in order of first appearance; "
                                  "src_original/dst_original: the input's ids")
        elif cols.ids == "str":
            raise StreamFormatError(f"{rd.path}: the vertex ids are strings; convert with "
                                    "--map-ids (map_ids=True)")
        schema = stream_schema(op=cols.op, weight=cols.weight, time=cols.time, batch=cols.batch,
                               id_type=id_type, metadata=meta)
        vmap = None
        if map_ids:
            from hornet import VertexMap
            vmap = VertexMap(cols.ids)
            original = {"str": pa.string(), "uint": pa.uint64()}.get(cols.ids, pa.int64())
            schema = schema.append(pa.field("src_original", original, nullable=False))
            schema = schema.append(pa.field("dst_original", original, nullable=False))
        if os.path.abspath(out) == os.path.abspath(rd.path):
            raise StreamFormatError(f"{out}: output would overwrite the input")
        tmp = out + ".partial"
        w = StreamWriter(tmp, schema, container=cont, compression=compression,
                         chunk_rows=chunk_rows, display_name=out)
        try:
            start = 0
            for rb in rd.record_batches():
                if vmap is not None:
                    rb = _mapped(rb, cols, start, rd.path, vmap)
                else:
                    _check_input(rb, cols, start, rd.path, schema)
                start += rb.num_rows
                w.write_table(rb)
            w.close()
        except BaseException:
            w.abort()
            raise
    os.replace(tmp, out)
    return ConvertResult(input=rd.path, output=out, container=cont, compression=compression,
                         rows=w.rows, columns=cols.names(), bytes=os.path.getsize(out),
                         source_format=meta.get("source_format", rd.container))


def _check_input(rb, cols, start: int, path: str, schema) -> None:
    """Refuse a record batch of the input whose values the output cannot hold, naming the
    input file and the event (row) index: null, negative or too large ids, op values other
    than +-1 (the writer checks again, but it knows only the output's name)."""
    blk = block_from_record_batch(rb, cols, start, path)
    top = np.iinfo(schema.field("src").type.to_pandas_dtype()).max
    for name, ids in (("src", blk.src), ("dst", blk.dst)):
        if ids.size and int(ids.max()) > top:
            i = int(np.argmax(ids > top))
            raise StreamFormatError(
                f"{path}: column {name!r}: vertex id {int(ids[i])} at event {start + i} does not "
                f"fit {schema.field(name).type} (convert with id_type='int64', or 'hornet "
                f"convert --id-type int64')")


def _mapped(rb, cols, start: int, path: str, vmap) -> pa.Table:
    """A record batch of the input with dense ``src``/``dst`` and the input's ids in
    ``src_original``/``dst_original``."""
    blk = block_from_record_batch(rb, cols, start, path, mapped_ids=True)   # nulls, ids, op
    pairs = np.empty(2 * len(blk), dtype=blk.src.dtype)
    pairs[0::2], pairs[1::2] = blk.src, blk.dst
    try:
        dense = vmap.to_dense(pairs)
    except (TypeError, ValueError) as e:
        raise StreamFormatError(f"{path}: events {start} to {start + len(blk) - 1}: {e}") \
            from None
    t = pa.Table.from_batches([rb]).drop_columns(["src", "dst"])
    return t.append_column("src", pa.array(dense[0::2])).append_column(
        "dst", pa.array(dense[1::2])).append_column(
        "src_original", pa.array(blk.src)).append_column("dst_original", pa.array(blk.dst))
