"""Edge tables in Arrow IPC (file or stream) and Parquet files: the containers of the
project's stream format, read for :func:`hornet.io.read_edges`.

The stream format itself (schema, event semantics, batching) belongs to the ``streams``
package, which sits above hornet; this module knows only what reading the edges needs: a
table with integer columns ``src`` and ``dst`` and any further columns (``op``, ``weight``,
``time``, ``batch``...), recognised by the container's magic bytes whatever the file name.
"""
from __future__ import annotations

import os

import numpy as np
import pyarrow as pa

__all__ = ["ARROW_CONTAINERS", "container_of", "read_edge_table"]

ARROW_CONTAINERS = ("ipc-file", "ipc-stream", "parquet")
_MAGIC = ((b"ARROW1", "ipc-file"), (b"PAR1", "parquet"), (b"\xff\xff\xff\xff", "ipc-stream"))
_NAMES = {"ipc-file": "Arrow IPC file", "ipc-stream": "Arrow IPC stream",
          "parquet": "Parquet file"}


def container_of(head: bytes) -> str | None:
    """``"ipc-file"``, ``"ipc-stream"`` or ``"parquet"`` from a file's first bytes, else None."""
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    return None


def _read_table(path: str, container: str) -> pa.Table:
    try:
        if container == "ipc-file":
            with pa.memory_map(path, "r") as source:
                return pa.ipc.open_file(source).read_all()
        if container == "ipc-stream":
            with pa.memory_map(path, "r") as source:
                return pa.ipc.open_stream(source).read_all()
        import pyarrow.parquet as pq
        return pq.read_table(path)
    except (pa.ArrowInvalid, pa.ArrowIOError, pa.ArrowNotImplementedError,
            pa.ArrowTypeError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError(f"{path}: corrupt or unreadable {_NAMES[container]} ({first})") from None


def read_edge_table(path: str | os.PathLike, container: str
                    ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """``src, dst, extra`` of an edge table file (``container`` from :func:`container_of`).

    ``src``/``dst``: int64 arrays of shape ``(m,)``, ids as in the file; ``extra``: every other
    column, shape ``(m,)``, in its own NumPy dtype. Raises ValueError naming the file (and the
    row, for a null or negative id) when the content is not an edge table.
    """
    p = os.fspath(path)
    table = _read_table(p, container)
    names = table.column_names
    for need in ("src", "dst"):
        if need not in names:
            raise ValueError(f"{p}: no {need!r} column (columns: {', '.join(names) or 'none'}); "
                             "an edge table needs integer src and dst")
    cols = {}
    for name in names:
        col = table.column(name)
        if name in ("src", "dst"):
            if not pa.types.is_integer(col.type):
                raise ValueError(f"{p}: column {name!r} has type {col.type}; expected integers")
            if col.null_count:
                i = int(np.flatnonzero(np.asarray(col.is_null()))[0])
                raise ValueError(f"{p}: column {name!r}: null vertex id at row {i}")
            a = col.to_numpy()
            if a.dtype.kind == "u" and a.size and int(a.max()) > np.iinfo(np.int64).max:
                i = int(np.argmax(a > np.iinfo(np.int64).max))
                raise ValueError(f"{p}: column {name!r}: vertex id {int(a[i])} at row {i} does "
                                 "not fit 64 bits")
            a = a.astype(np.int64, copy=False)
            if a.size and int(a.min()) < 0:
                i = int(np.argmax(a < 0))
                raise ValueError(f"{p}: column {name!r}: negative vertex id {int(a[i])} at "
                                 f"row {i}")
            cols[name] = a
        else:
            cols[name] = col.to_numpy(zero_copy_only=False)
    src, dst = cols.pop("src"), cols.pop("dst")
    return src, dst, cols
