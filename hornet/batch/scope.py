"""The scope of one batch of a graph: errors and what follows a batch that went through."""
from __future__ import annotations

import re

from ..memory.manager import DeviceMemoryError

__all__ = ["batch_scope", "batch_length"]


class batch_scope:
    """Context around one insert or delete batch of ``graph`` (a hornet.Graph): out-of-memory while the batch is prepared
    (nothing changed yet) -> DeviceMemoryError; after a batch that went through, the memory
    manager's tables that readers between batches use are brought up to date
    (``MemoryManager.refresh``: the next batch would rebuild them anyway, an algorithm's
    first call on the new state finds them ready). A class rather than a
    ``@contextmanager`` generator: it wraps every batch, and entering a generator-based
    context costs a few microseconds a call."""

    __slots__ = ("graph", "entries")

    def __init__(self, graph, entries: int):
        self.graph = graph
        self.entries = entries

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, traceback) -> bool:
        if kind is None:
            graph = self.graph
            # (the manager as it stands: deferred batches stay pending, see
            # hornet.batch.deferred_path; block arrays are host bookkeeping)
            if graph._mm_.refresh():
                for listener in graph._storage_listeners:
                    listener()
            return False
        if not issubclass(kind, MemoryError) or issubclass(kind, DeviceMemoryError):
            return False                    # passed on as it is
        entries = self.entries
        found = re.search(r"allocating ([0-9,]+) bytes", str(exc))
        need = int(found.group(1).replace(",", "")) if found else 48 * max(entries, 1)
        raise DeviceMemoryError(f"out of memory preparing a batch of {entries} edges "
                                f"(an allocation of {need} bytes failed); the graph is unchanged",
                                need) from exc


def batch_length(src) -> int:
    """The length of a batch's ``src`` (0 when it has none: a table, say)."""
    try:
        return len(src)
    except TypeError:
        return 0
