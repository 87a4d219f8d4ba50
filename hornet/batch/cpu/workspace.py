"""Host buffers that one graph's batches reuse (CPU backend).

A batch of 10^6 edges needs some 100 MB of short-lived arrays: positions, insertion points,
the per-list plan, sort keys. Allocated afresh for every batch, they come from wherever the C
heap has room, often new pages that the kernel must fault in and zero (in a process whose heap
is fragmented by other work, thousands of faults per batch). A :class:`Workspace`
keeps one buffer per named temporary and hands out views of it, so that a stream of batches
touches the same memory again and again.

Only temporaries that die with the batch may come from here: a view stays valid until the
next ``take`` of the same name.
"""
from __future__ import annotations

import numpy as np

GROWTH = 1.25   # a buffer that is too small is replaced by one this much larger than asked


class Workspace:
    """Named, growable host buffers. ``take(name, n, dtype)`` returns a length-``n`` view."""

    def __init__(self):
        self._buffers: dict[str, np.ndarray] = {}

    def take(self, name: str, n: int, dtype) -> np.ndarray:
        """A contiguous ``dtype`` array of length ``n`` (contents undefined), a view of the
        buffer ``name``; valid until the next ``take`` of ``name``."""
        dt = np.dtype(dtype)
        n = int(n)
        buf = self._buffers.get(name)
        if buf is None or buf.dtype != dt or buf.shape[0] < n:
            buf = np.empty(max(n, int(GROWTH * n)), dtype=dt)
            self._buffers[name] = buf
        return buf[:n]

    @property
    def nbytes(self) -> int:
        """Bytes held."""
        return sum(int(b.nbytes) for b in self._buffers.values())

    def clear(self) -> None:
        """Drop every buffer."""
        self._buffers.clear()


def take(ws: Workspace | None, name: str, n: int, dtype) -> np.ndarray:
    """``ws.take(...)``, or a fresh array without a workspace."""
    return np.empty(int(n), dtype=dtype) if ws is None else ws.take(name, n, dtype)
