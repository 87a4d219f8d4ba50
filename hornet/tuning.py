"""Process-wide tuning of the CPU backend, applied only when asked: :func:`tune_process`.

Importing or using hornet changes nothing in the process it runs in. One setting makes the CPU
backend's batches faster but acts on the whole process, so a program that owns its process (a
script, the ``hornet replay`` command) opts in:

* glibc's mmap and trim thresholds (:mod:`hornet.memory.host_heap`): freed buffers of a batch
  stay in the C heap for the next one instead of going back to the kernel; the price is
  resident memory that the process keeps after the graph is gone.

Without it, each graph still reuses its own batch temporaries (its workspace), so most of the
gain remains; ``python3 -m bench process_tuning`` measures both. hornet's parallel CPU
kernels run on hornet's own threads (:mod:`hornet.core.threads`), not on OpenMP's, so no
OpenMP setting (``GOMP_SPINCOUNT``, ``OMP_WAIT_POLICY``) changes their speed.
"""
from __future__ import annotations

from .memory import host_heap

__all__ = ["tune_process"]


def tune_process(keep_freed_buffers: bool = True) -> dict:
    """Apply the CPU backend's process-wide tuning; call it first thing, before any CPU batch.

    Parameters
    ----------
    keep_freed_buffers : bool
        Raise glibc's mmap and trim thresholds so that freed batch buffers stay in the heap
        (Linux with glibc only; skipped when ``MALLOC_MMAP_THRESHOLD_`` or
        ``MALLOC_TRIM_THRESHOLD_`` is set).

    Returns
    -------
    dict
        ``{"keep_freed_buffers": bool}``: whether this call (or an earlier one) applied it.

    Example
    -------
    >>> import hornet
    >>> hornet.tune_process()          # doctest: +SKIP
    {'keep_freed_buffers': True}
    """
    applied = {"keep_freed_buffers": False}
    if keep_freed_buffers:
        applied["keep_freed_buffers"] = host_heap.keep_freed_buffers()
    return applied
