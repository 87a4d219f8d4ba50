"""Edge streams: the Arrow stream format, converters, and the replay tool.

    import streams
    streams.default_stream_path()                  # the shipped stream (SNAP CollegeMsg)
    rd = streams.open_stream(path)                 # Arrow IPC file/stream, Parquet or text
    for batch in streams.iter_batches(rd, batch_size=1000): ...
    from streams.convert import convert
    convert("CollegeMsg.txt.gz", "collegemsg.arrow")
    from streams.replay import replay
    result = replay(path, batch_size=1000, window=None, directed=True,
                            algos=("tc", "ktruss", "bfs", "spmv"), verify=False)
    result.table                                   # one row per batch (pyarrow.Table)
    print(result.summary_text())

The console command is ``hornet`` (``streams.cli:main``); ``python -m streams`` does the same.
"""
from __future__ import annotations

import os

from .batching import Batch, iter_batches
from .format import (COLUMNS, FORMAT_VERSION, EventBlock, StreamColumns, StreamFormatError,
                     detect_container, stream_schema, validate_schema)
from .reader import StreamReader, open_stream, read_stream
from .writer import StreamWriter, write_stream

__all__ = [
    "COLUMNS", "FORMAT_VERSION", "Batch", "EventBlock", "StreamColumns", "StreamFormatError",
    "StreamReader", "StreamWriter", "detect_container", "iter_batches", "open_stream",
    "read_stream", "stream_schema", "validate_schema", "write_stream",
    "ConvertResult", "ReplayResult", "ReplayError", "VerificationError",
    "default_stream_path", "shipped_streams", "DATA_DIR",
]

#: Folder of the streams shipped with the package.
DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
DEFAULT_STREAM = "collegemsg.arrow"


def shipped_streams() -> dict:
    """name -> path of every stream shipped in ``streams/data``."""
    if not os.path.isdir(DATA_DIR):
        return {}
    return {os.path.splitext(f)[0]: os.path.join(DATA_DIR, f)
            for f in sorted(os.listdir(DATA_DIR)) if f.endswith(".arrow")}


def default_stream_path() -> str:
    """Path of the embedded default stream: SNAP CollegeMsg (59,835 timed message events
    between 1,899 users; see ``streams/data/README.md``)."""
    path = os.path.join(DATA_DIR, DEFAULT_STREAM)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"the shipped default stream is missing ({path}); reinstall "
                                f"the package")
    return path


def __getattr__(name):
    # the converter and the replay engine pull in hornet (Numba); load them on first use.
    # ``streams.convert`` and ``streams.replay`` are the modules (``streams.replay.replay``).
    import importlib
    if name in ("convert", "replay", "cli"):
        return importlib.import_module(f".{name}", __name__)
    if name == "ConvertResult":
        return importlib.import_module(".convert", __name__).ConvertResult
    if name in ("ReplayResult", "ReplayError", "VerificationError"):
        return getattr(importlib.import_module(".replay", __name__), name)
    raise AttributeError(f"module 'streams' has no attribute {name!r}")
