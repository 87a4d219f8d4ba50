"""Keep the CPU backend's freed buffers in the C heap for the next batch.

A batch of 10^6 edges allocates some 100-200 MB of short-lived arrays (sort keys, positions,
segment plans). With glibc's default thresholds, freed blocks of more than a few MB go back to
the kernel at once (``munmap``, or a trim of the heap top), so the next batch faults every page
in again: about 1-2 microseconds per 4 KiB page on a virtual machine, 30-60 ms per batch, a
third of its time. Raising the mmap and trim thresholds keeps these buffers in the heap, where
the next batch reuses them. The price is resident memory: up to ``TRIM_BYTES`` of free heap is
kept instead of being returned.

This is a setting of the whole process, so hornet never applies it by itself: only
:func:`hornet.tune_process` calls :func:`keep_freed_buffers`. It acts only with glibc, and is
skipped when the process set its own thresholds (``MALLOC_MMAP_THRESHOLD_`` /
``MALLOC_TRIM_THRESHOLD_``).
"""
from __future__ import annotations

import ctypes
import os
import sys

MMAP_BYTES = 1 << 30      # blocks below this come from the heap (glibc default: 128 KiB, adaptive)
TRIM_BYTES = 1 << 30      # free heap kept at the top (glibc default: 128 KiB, adaptive)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

_applied: bool | None = None


def keep_freed_buffers() -> bool:
    """Raise glibc's mmap and trim thresholds (once per process). True if they are set."""
    global _applied
    if _applied is not None:
        return _applied
    _applied = False
    if not sys.platform.startswith("linux"):
        return False
    if "MALLOC_MMAP_THRESHOLD_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):         # not glibc (musl, ...)
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    _applied = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_BYTES)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, TRIM_BYTES))
    return _applied
