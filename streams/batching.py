"""Cutting an edge stream into replay batches: by its ``batch`` column, by event count, or
by time windows (see :mod:`streams.format`)."""
from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Any, Iterable, Iterator

import numpy as np
import pyarrow as pa

from .format import EventBlock, StreamColumns, StreamFormatError
from .reader import StreamReader

__all__ = ["Batch", "batching_mode", "iter_batches", "with_batches"]


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
                 columns: StreamColumns | None = None,
                 t0: float | int | None = None) -> Iterator[Batch]:
    """Cut a stream of :class:`EventBlock` into replay batches, in file order.

    * the stream has a ``batch`` column (and ``use_batch_column``): each maximal run of
      consecutive rows with the same batch id is one batch;
    * else ``batch_time=T``: rows whose time falls into the same window
      ``floor((time - t0) / T)`` (``t0``: given, or the first event's time) form a batch
      (runs, so unsorted times still give file-order batches);
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
