"""Process-wide tuning of the CPU backend, applied only when asked: :func:`tune_process`.

Importing or using hornet changes nothing in the process it runs in. Two settings make the CPU
backend faster but act on the whole process, so a program that owns its process (a script, the
``hornet replay`` command) opts in:

* ``GOMP_SPINCOUNT``: Numba's OpenMP (libgomp) workers spin for a while after each parallel
  kernel before they sleep. libgomp's default spin holds a core for milliseconds after every
  kernel, which a busy machine pays as scheduler delays; sleeping at once costs a thread
  wake-up per kernel, and a batch runs some twenty kernels. A short spin keeps the workers
  awake across the kernels of one batch and lets them sleep soon after it. libgomp reads the
  variable when it starts, so it only acts when set before the first parallel CPU kernel.
* glibc's mmap and trim thresholds (:mod:`hornet.memory.host_heap`): freed buffers of a batch
  stay in the C heap for the next one instead of going back to the kernel; the price is
  resident memory that the process keeps after the graph is gone.

Without them, each graph still reuses its own batch temporaries (its workspace), so most of
the gain remains; ``python3 -m bench process_tuning`` measures both.
"""
from __future__ import annotations

import os
import warnings

from .memory import host_heap

__all__ = ["tune_process", "DEFAULT_SPIN_COUNT"]

DEFAULT_SPIN_COUNT = 30000


def _threads_started() -> bool:
    """Has Numba started its parallel workers (after which libgomp ignores the variable)?"""
    try:
        from numba.np.ufunc import parallel
    except ImportError:              # no Numba: no workers to tune
        return False
    return bool(getattr(parallel, "_is_initialized", False))


def tune_process(spin_count: int | None = DEFAULT_SPIN_COUNT,
                 keep_freed_buffers: bool = True) -> dict:
    """Apply the CPU backend's process-wide tuning; call it first thing, before any CPU batch.

    Parameters
    ----------
    spin_count : int or None
        Sets ``GOMP_SPINCOUNT`` in ``os.environ`` (the spin of Numba's OpenMP workers after a
        kernel) unless the process set ``GOMP_SPINCOUNT`` or ``OMP_WAIT_POLICY`` itself.
        None leaves it alone. It has no effect once Numba's workers have started (a warning
        says so).
    keep_freed_buffers : bool
        Raise glibc's mmap and trim thresholds so that freed batch buffers stay in the heap
        (Linux with glibc only; skipped when ``MALLOC_MMAP_THRESHOLD_`` or
        ``MALLOC_TRIM_THRESHOLD_`` is set).

    Returns
    -------
    dict
        ``{"spin_count": value in effect for hornet's setting or None, "keep_freed_buffers":
        bool}``: what this call (or an earlier one) applied.
    """
    applied = {"spin_count": None, "keep_freed_buffers": False}
    if spin_count is not None:
        spin_count = int(spin_count)
        if spin_count < 0:
            raise ValueError(f"spin_count must be >= 0, got {spin_count}")
        if "GOMP_SPINCOUNT" not in os.environ and "OMP_WAIT_POLICY" not in os.environ:
            if _threads_started():
                warnings.warn("hornet.tune_process: Numba's parallel workers have started; "
                              "GOMP_SPINCOUNT only acts when set before the first CPU batch",
                              RuntimeWarning, stacklevel=2)
            else:
                os.environ["GOMP_SPINCOUNT"] = str(spin_count)
                applied["spin_count"] = spin_count
    if keep_freed_buffers:
        applied["keep_freed_buffers"] = host_heap.keep_freed_buffers()
    return applied
