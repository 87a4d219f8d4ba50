"""Two side streams for the list rewrites of a batch, beside the caller's stream.

A merge or removal sorts its lists into short ones (one thread each), medium ones (one warp
each) and huge ones (one or many blocks each) and runs one kernel per kind. The kernels
rewrite disjoint lists and only read the move plan, but on one stream each waits for the
previous one, whose tail (a few long lists, or a few thousand short ones) leaves most of the
device idle. :func:`fork` lets two of them run on streams of their own (non-blocking, so
that the legacy default stream does not serialize them), :func:`join` makes the caller's
stream wait for both. ``ENABLED`` False: every kernel on the caller's stream. Streams and events belong to one
device, so each device gets its own pair, made on its first fork.
"""
from __future__ import annotations

import os

from ...core.cuda import cupy

__all__ = ["ENABLED", "fork", "join"]

#: run the short and medium lists' kernels on side streams (False, or the environment
#: variable HORNET_SIDE_STREAMS=0: on the caller's stream)
ENABLED = os.environ.get("HORNET_SIDE_STREAMS", "1") != "0"

_SIDE: dict = {}     # device id -> [stream, stream, event of the fork, event, event]


def _side_of_current_device() -> list:
    """The current device's side streams and events (made on first use)."""
    device = cupy.cuda.runtime.getDevice()
    side = _SIDE.get(device)
    if side is None:
        side = _SIDE[device] = ([cupy.cuda.Stream(non_blocking=True) for _ in range(2)] +
                                [cupy.cuda.Event(disable_timing=True) for _ in range(3)])
    return side


def fork():
    """(stream, stream) that start after the work queued so far on the current stream, or
    None when disabled. Every fork is followed by a :func:`join` before the caller's stream
    goes on with work that depends on the side streams' kernels."""
    if not ENABLED:
        return None
    side = _side_of_current_device()
    a, b, forked = side[0], side[1], side[2]
    forked.record()
    a.wait_event(forked)
    b.wait_event(forked)
    return a, b


def join(sides) -> None:
    """The current stream waits for the work queued on ``sides`` (from :func:`fork`)."""
    if sides is None:
        return
    a, b = sides
    side = _side_of_current_device()
    done_a, done_b = side[3], side[4]
    done_a.record(a)
    done_b.record(b)
    current = cupy.cuda.get_current_stream()
    current.wait_event(done_a)
    current.wait_event(done_b)
