"""Numba primitives shared by the CPU algorithm kernels.

- :func:`atomic_add` / :func:`atomic_cas`: LLVM ``atomicrmw`` / ``cmpxchg`` on one element of a
  1-D array (integers; :func:`atomic_add` also float32/float64). Both return the OLD value, so a
  thread can tell whether its own update crossed a threshold or claimed an element.
- :func:`lower_bound`: binary search in a sorted slice (from :mod:`hornet.memory.search`).
- :func:`chunk_bounds`: split a prefix-sum range into chunks of (about) equal work, the CPU
  counterpart of the GPU's merge-path / binary-search load balancing.

Everything here is ``@njit(cache=True)``-compatible and meant to be called from jitted code.
"""
from __future__ import annotations

from contextlib import contextmanager

import numba
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ..memory.search import lower_bound

__all__ = ["atomic_add", "atomic_cas", "lower_bound", "chunk_bounds", "num_chunks",
           "threads_for", "SERIAL_WORK"]

#: below this much work (entries touched) a call runs on one thread: waking the thread pool
#: costs more than it saves, and much more on a loaded machine
SERIAL_WORK = 1 << 15


def _element_pointer(context, builder, arrty, arr, idx, idxty):
    ary = context.make_array(arrty)(context, builder, arr)
    i = context.cast(builder, idx, idxty, types.intp)
    return cgutils.get_item_pointer(context, builder, arrty, ary, [i], wraparound=False)


@intrinsic
def atomic_add(typingctx, arr, idx, val):
    """``old = arr[idx]; arr[idx] += val`` atomically (monotonic order); returns ``old``."""
    if not isinstance(arr, types.Array) or arr.ndim != 1:
        return None
    dt = arr.dtype
    if not isinstance(dt, (types.Integer, types.Float)):
        return None
    sig = dt(arr, idx, val)

    def codegen(context, builder, signature, args):
        arrty, idxty, valty = signature.args
        ptr = _element_pointer(context, builder, arrty, args[0], args[1], idxty)
        v = context.cast(builder, args[2], valty, arrty.dtype)
        op = "fadd" if isinstance(arrty.dtype, types.Float) else "add"
        return builder.atomic_rmw(op, ptr, v, "monotonic")

    return sig, codegen


@intrinsic
def atomic_cas(typingctx, arr, idx, expected, new):
    """If ``arr[idx] == expected`` store ``new``; atomically. Returns the old value."""
    if not isinstance(arr, types.Array) or arr.ndim != 1 or not isinstance(arr.dtype, types.Integer):
        return None
    dt = arr.dtype
    sig = dt(arr, idx, expected, new)

    def codegen(context, builder, signature, args):
        arrty, idxty, expty, newty = signature.args
        ptr = _element_pointer(context, builder, arrty, args[0], args[1], idxty)
        e = context.cast(builder, args[2], expty, arrty.dtype)
        n = context.cast(builder, args[3], newty, arrty.dtype)
        res = builder.cmpxchg(ptr, e, n, "monotonic", "monotonic")
        return builder.extract_value(res, 0)

    return sig, codegen


@numba.njit(cache=True)
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
