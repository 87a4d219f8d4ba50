"""Grid-stride kernel launches for the per-batch GPU paths, through prepared argument buffers.

A batch of the update pipeline launches a dozen kernels (planning, merging, committing,
taking and giving back blocks). CuPy's kernel call inspects and converts every argument on
each launch; for a batch of 10^4 edges, whose kernels run for microseconds, that host work is
a large part of the batch. :func:`launch` has the contract of :func:`hornet.core.cuda.launch`
(256 threads a block, grid capped for grid-stride loops, nothing for ``n == 0``) but writes
the arguments into a :class:`~hornet.core.cuda.PreparedLaunch` buffer made once per kernel
and calls the driver directly.

Arguments may be CuPy arrays (their data pointer), Python or NumPy integers and booleans, and
NumPy floats (their bits, as the kernel's ``float`` or ``double`` parameter reads them). A
launch with any other argument goes through CuPy's call. ``PREPARED`` (default on; the
environment variable ``HORNET_PREPARED_LAUNCH=0`` turns it off) selects the path.
"""
from __future__ import annotations

import os

import numpy as np

from ..core.cuda import BLOCK, PreparedLaunch, _max_grid, as_signed64, cupy
from ..core.cuda import launch as cupy_launch

__all__ = ["launch", "PREPARED"]

#: launch through prepared argument buffers (False: CuPy's kernel call, the same kernels)
PREPARED = os.environ.get("HORNET_PREPARED_LAUNCH", "1") != "0"

_PREPARED: dict = {}          # id(kernel) -> (PreparedLaunch, kernel): the kernel kept alive


def _word(a) -> int:
    """One kernel argument as the int64 whose low bytes the driver reads for it."""
    t = type(a)
    if t is int:                       # the common types first, by exact type
        return as_signed64(a) if a >= 1 << 63 else a
    if t is np.int64 or t is np.int32:
        return int(a)
    if cupy is not None and isinstance(a, cupy.ndarray):
        return a.data.ptr
    if isinstance(a, (bool, np.bool_)):
        return int(a)
    if isinstance(a, int):
        return as_signed64(a) if a >= 1 << 63 else a
    if isinstance(a, np.integer):
        return as_signed64(int(a)) if isinstance(a, np.unsignedinteger) else int(a)
    if isinstance(a, np.float64):
        return int(np.array(a, dtype=np.float64).view(np.int64))
    if isinstance(a, np.float32):
        return int(np.array(a, dtype=np.float32).view(np.int32))
    raise TypeError(f"no prepared launch for an argument of type {type(a).__name__}")


def launch(fn, n: int, args: tuple, threads_per_item: int = 1) -> None:
    """Run kernel ``fn`` over ``n`` items (grid-stride: 256 threads a block, grid capped) with
    ``args``, one per kernel parameter in order; no-op if ``n == 0``. See the module
    docstring for the arguments taken; the launch is on the current stream, like CuPy's."""
    if not PREPARED:
        cupy_launch(fn, n, args, threads_per_item)
        return
    total = int(n) * threads_per_item
    if total <= 0:
        return
    try:
        words = [_word(a) for a in args]
    except TypeError:
        cupy_launch(fn, n, args, threads_per_item)
        return
    entry = _PREPARED.get(id(fn))
    if entry is None or entry[1] is not fn:
        entry = _PREPARED[id(fn)] = (PreparedLaunch(fn, len(words)), fn)
    prepared = entry[0]
    if prepared.args.shape[0] != len(words):
        raise TypeError(f"kernel launched with {len(words)} arguments, prepared for "
                        f"{prepared.args.shape[0]}")
    prepared(min((total + BLOCK - 1) // BLOCK, _max_grid()), BLOCK, words)
