"""Splitting parallel CPU work (Numba) into balanced chunks, and running small work serially.

- :func:`chunk_bounds`: split a prefix-sum range into chunks of (about) equal work, the CPU
  counterpart of the GPU's merge-path / binary-search load balancing
  (:func:`chunk_bounds_numpy`: the same in NumPy, for small lists);
- :func:`num_chunks`: how many chunks a given amount of work gets;
- :func:`threads_for`: one thread for small work, where waking the thread pool costs more
  than it saves.
"""
from __future__ import annotations

from contextlib import contextmanager

import numba
import numpy as np

from .search import lower_bound
from .jit import njit

__all__ = ["chunk_bounds", "chunk_bounds_numpy", "num_chunks", "threads_for", "SERIAL_WORK"]

#: below this much work (entries touched) a call runs on one thread: waking the thread pool
#: costs more than it saves, and much more on a loaded machine
SERIAL_WORK = 1 << 15


@njit
def chunk_bounds(prefix, nchunks):
    """Split ``[0, prefix[-1])`` work units over ``prefix`` (n+1 ascending) into ``nchunks``.

    Returns int64 ``starts`` of length ``nchunks + 1``: chunk ``c`` owns items (rows)
    ``starts[c] .. starts[c+1]`` whose work adds up to about ``prefix[-1] / nchunks``. Items
    heavier than a chunk make their chunk heavier; whole items are never split.
    """
    n = prefix.shape[0] - 1
    total = prefix[n]
    starts = np.empty(nchunks + 1, np.int64)
    starts[0] = 0
    for c in range(1, nchunks):
        target = (total * c) // nchunks
        i = lower_bound(prefix, 0, n + 1, target)
        if i > n:
            i = n
        if i < starts[c - 1]:
            i = starts[c - 1]
        starts[c] = i
    starts[nchunks] = n
    return starts


def chunk_bounds_numpy(prefix: np.ndarray, nchunks: int) -> np.ndarray:
    """:func:`chunk_bounds` in NumPy (the same starts; no kernel to compile), for callers
    whose lists are small enough that one vectorised search costs nothing."""
    n = prefix.shape[0] - 1
    starts = np.empty(nchunks + 1, np.int64)
    starts[0] = 0
    starts[nchunks] = n
    if nchunks > 1:
        targets = (int(prefix[n]) * np.arange(1, nchunks, dtype=np.int64)) // nchunks
        starts[1:nchunks] = np.minimum(np.searchsorted(prefix, targets, side="left"), n)
    return starts


def num_chunks(work: int, grain: int = 2048) -> int:
    """Chunks for ``work`` units: enough to balance the threads, none smaller than ``grain``."""
    threads = numba.get_num_threads()
    return int(max(1, min(64 * threads, work // grain + 1)))


@contextmanager
def threads_for(work: int, serial_below: int = SERIAL_WORK):
    """Run the enclosed kernels on one thread when ``work`` is small (thread-local setting)."""
    if work >= serial_below:
        yield
        return
    old = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(old)
