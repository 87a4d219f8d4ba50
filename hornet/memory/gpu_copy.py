"""Load-balanced copies of slot ranges and size classes on the GPU (CuPy + CUDA C++).

GPU twin of :mod:`hornet.memory.copy_kernels` and ``manager._size_classes``. The CUDA source
``memory_kernels.cu`` (also used by :mod:`hornet.memory.gpu_bit_tree`) is compiled once per
process, on first use, by ``cupy.RawModule``.

Also home of the small launch helpers shared by the GPU modules: :func:`launch` (block size
256, grid capped for grid-stride loops), :func:`scan` (exclusive scan with the total last) and
:func:`load_module` (a ``.cu`` file compiled once per process).
"""
from __future__ import annotations

import os
import threading

import numpy as np

try:  # importable without CuPy; every function needs it when called
    import cupy
except ImportError:  # pragma: no cover - CPU-only machines
    cupy = None

BLOCK = 256
_HEADERS = os.path.dirname(os.path.abspath(__file__))   # segmented.cuh, shared device helpers
_MODULES: dict = {}
_FUNCS: dict = {}
_LOCK = threading.Lock()
_MAX_GRID: list = []

# itemsize -> C++ type moved by the byte-size-generic kernels
ITEM_TYPES = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int",
              8: "unsigned long long"}


def load_module(path: str, name_expressions: tuple = ()):
    """The ``cupy.RawModule`` of one ``.cu`` file, compiled once per process."""
    mod = _MODULES.get(path)
    if mod is None:
        with _LOCK:
            mod = _MODULES.get(path)
            if mod is None:
                with open(path, encoding="utf-8") as f:
                    code = f.read()
                mod = cupy.RawModule(code=code, options=("-std=c++17", f"-I{_HEADERS}"),
                                     name_expressions=list(name_expressions) or None)
                _MODULES[path] = mod
    return mod


def function(path: str, name: str, name_expressions: tuple = ()):
    """Kernel ``name`` (a plain name or a template instance listed in name_expressions)."""
    key = (path, name)
    fn = _FUNCS.get(key)
    if fn is None:
        fn = load_module(path, name_expressions).get_function(name)
        _FUNCS[key] = fn
    return fn


def _max_grid() -> int:
    if not _MAX_GRID:
        sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
        _MAX_GRID.append(int(sms) * 32)
    return _MAX_GRID[0]


def launch(fn, n: int, args: tuple, threads_per_item: int = 1) -> None:
    """Run ``fn`` over ``n`` items (grid-stride kernels): 256 threads a block; no-op if n == 0."""
    n = int(n) * threads_per_item
    if n <= 0:
        return
    grid = min((n + BLOCK - 1) // BLOCK, _max_grid())
    fn((grid,), (BLOCK,), args)


def i64(x: int) -> np.int64:
    return np.int64(x)


def as_i64(a):
    """A contiguous int64 CuPy array (no copy when it already is one)."""
    return cupy.ascontiguousarray(cupy.asarray(a).astype(cupy.int64, copy=False))


def scan(lengths) -> tuple:
    """(off int64 of length n + 1: exclusive scan of ``lengths`` with the total last, total).

    The total crosses to the host (one count, never per-item data).
    """
    n = lengths.shape[0]
    off = cupy.zeros(n + 1, dtype=cupy.int64)
    if n:
        off[1:] = cupy.cumsum(lengths, dtype=cupy.int64)
    return off, int(off[-1]) if n else 0


class _Staging:
    """A pinned host buffer reused by :func:`upload`; an event tells when the device has
    finished reading it."""

    def __init__(self):
        self.buffer = None
        self.done = None

    def copy(self, host: np.ndarray):
        nbytes = host.nbytes
        if self.buffer is None or self.buffer.nbytes < nbytes:
            import cupyx
            self.buffer = cupyx.empty_pinned(max(nbytes, 1 << 12), dtype=np.uint8)
            self.done = cupy.cuda.Event(block=False, disable_timing=True)
        else:
            self.done.synchronize()        # the previous copy has left the buffer
        staged = self.buffer[:nbytes]
        staged[...] = np.ascontiguousarray(host).reshape(-1).view(np.uint8)
        out = cupy.empty(host.shape, dtype=host.dtype)
        out.data.copy_from_host_async(staged.ctypes.data, nbytes)
        self.done.record()
        return out


_STAGING = _Staging()


def upload(host: np.ndarray):
    """A device copy of a small host array, without waiting for the device's queue (the copy
    goes through a reused pinned buffer, in stream order). Thread-unsafe, like the launches."""
    if host.nbytes == 0:
        return cupy.empty(host.shape, dtype=host.dtype)
    return _STAGING.copy(host)


def item_type(dtype) -> str:
    """The C++ type of the byte-size-generic kernels for ``dtype``'s itemsize."""
    size = np.dtype(dtype).itemsize
    if size not in ITEM_TYPES:
        raise TypeError(f"no GPU kernel for items of {size} bytes ({np.dtype(dtype)})")
    return ITEM_TYPES[size]


# ---------------------------------------------------------------------------- this module
_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "memory_kernels.cu")
_NAMES = tuple(f"copy_ranges<{t}>" for t in ITEM_TYPES.values())


def _fn(name: str):
    return function(_CU, name, _NAMES)


def copy_ranges(src, dst, counts, dtype) -> None:
    """Copy ``counts[i]`` items of ``dtype`` from device address ``src[i]`` to ``dst[i]``.

    ``src``, ``dst``: int64 device addresses, shape (n,); ``counts``: integer, shape (n,)
    (<= 0: nothing). Every item gets its own thread (ranges located by binary search over the
    scan of the counts), so one huge range spreads over the whole GPU. Ranges must not overlap.
    """
    n = int(src.shape[0])
    if n == 0:
        return
    counts = cupy.maximum(as_i64(counts), 0)
    off, total = scan(counts)
    if total == 0:
        return
    fn = _fn(f"copy_ranges<{item_type(dtype)}>")
    launch(fn, total, (as_i64(src), as_i64(dst), off, i64(n), i64(total)))


def place_by_class(classes, class_start, pool):
    """``out[i]`` = a distinct entry of ``pool`` from class ``classes[i]``'s range, which starts
    at ``class_start[k]`` (int64 device arrays; entries of one class in any order)."""
    classes = as_i64(classes)
    n = int(classes.shape[0])
    out = cupy.empty(n, dtype=cupy.int64)
    next_slot = cupy.array(class_start, dtype=cupy.uint64)
    launch(_fn("place_by_class"), n, (classes, i64(n), next_slot, as_i64(pool), out))
    return out


def field_addresses(pointers, bases, field_bases, itemsize: int):
    """Addresses in another field of the slots whose destination addresses are ``pointers``
    (int64 device (n,); 0 = no block, kept 0): block arrays start at ``bases`` (int64 device
    (A,), ascending; A >= 1), their column of that field at ``field_bases`` (int64 device
    (A,)), items of ``itemsize`` bytes. One kernel; returns int64 device (n,)."""
    pointers = as_i64(pointers)
    out = cupy.empty(pointers.shape[0], dtype=cupy.int64)
    if pointers.shape[0]:
        launch(_fn("field_addresses"), pointers.shape[0],
               (pointers, i64(pointers.shape[0]), as_i64(bases), i64(bases.shape[0]),
                as_i64(field_bases), i64(itemsize), out))
    return out


def class_counts(classes) -> np.ndarray:
    """Host int64 array of 64: how many of ``classes`` (int64 device array) are each size class
    (other values, such as -1, are not counted). One kernel and one read."""
    classes = as_i64(classes)
    counts = cupy.zeros(64, dtype=cupy.uint64)
    launch(_fn("class_counts"), classes.shape[0], (classes, i64(classes.shape[0]), counts))
    return counts.get().astype(np.int64)


def size_classes(degree, min_class: int):
    """Per vertex ceil(log2(degree)), at least ``min_class``; -1 where degree <= 0.

    ``degree``: integer device array, shape (n,). Returns int64 device array, shape (n,).
    """
    degree = as_i64(degree)
    out = cupy.empty(degree.shape[0], dtype=cupy.int64)
    launch(_fn("size_classes"), degree.shape[0],
           (degree, i64(degree.shape[0]), i64(min_class), out))
    return out
