"""Small CuPy helpers shared by the GPU algorithms (and the GPU input views).

- :func:`kernels`: the kernel getter of one ``.cu`` file (compiled once per process, on first
  use, by :func:`hornet.core.cuda.function`);
- :func:`tiles` / :func:`launch_tiles`: tile bounds and launches of the kernels built on
  ``tiled_items`` (``hornet/core/tiles.cuh``), which balance lists of any length;
- contiguous int32 / int64 device arrays of a view (:func:`view_arrays`, :func:`i32`),
  addresses (:func:`address`, :data:`NULL`), CSR row offsets (:func:`row_offsets`) and host
  copies (:func:`to_host`).
"""
from __future__ import annotations

import numpy as np

from hornet.adjacency import AdjacencyView
from hornet.core.cuda import BLOCK, as_i64, cupy, function, i64, launch, scan

__all__ = ["kernels", "tiles", "launch_tiles", "view_arrays", "i32", "address", "NULL",
           "dummy", "row_offsets", "to_host"]

NULL = np.uint64(0)          # a null pointer argument


def kernels(cu_path: str, templates: tuple = ()):
    """``get(name)``: kernel ``name`` of the CUDA source ``cu_path`` (a plain name, or a
    template instance listed in ``templates``)."""
    if BLOCK != 256:         # the kernels' shared tiles assume 256-thread blocks
        raise RuntimeError("hornet.algos GPU kernels need BLOCK == 256")

    def get(name: str):
        return function(cu_path, name, templates)
    return get


def i32(a):
    """A contiguous int32 CuPy array (no copy when it already is one)."""
    return cupy.ascontiguousarray(cupy.asarray(a).astype(cupy.int32, copy=False))


def address(a) -> int:
    """The device address of a CuPy array's first element (0 when it is empty)."""
    return int(a.data.ptr) if a.size else 0


def dummy(dtype):
    """A one-element device array for a kernel argument that a launch does not read."""
    return cupy.zeros(1, dtype=dtype)


def view_arrays(view: AdjacencyView):
    """(degree int32, edge_ptr int64) of a view, contiguous on the device."""
    return i32(view.degree), as_i64(view.edge_ptr)


def tiles(get, off, nseg: int, total: int, tile: int = BLOCK):
    """Tile bounds for the ``tiled_items`` kernels (tiles of ``tile`` items): the list of each
    tile's first item, then ``nseg - 1``; returns (tseg int64 (ntiles + 1), ntiles).
    ``get``: the kernel getter (:func:`kernels`) of a ``.cu`` file that includes tiles.cuh."""
    ntiles = -(-int(total) // tile)
    tseg = cupy.empty(ntiles + 1, dtype=cupy.int64)
    launch(get("tile_segments"), ntiles + 1, (off, i64(nseg), i64(tile), i64(ntiles), tseg))
    return tseg, ntiles


def launch_tiles(get, name: str, ntiles: int, args: tuple) -> None:
    """Launch ``tiled_items`` kernel ``name`` (from getter ``get``) over ``ntiles`` tiles."""
    launch(get(name), ntiles, args, threads_per_item=BLOCK)


def row_offsets(rows, n: int):
    """int64 (n + 1) row offsets of ascending int32 row ids."""
    if rows.size == 0:
        return cupy.zeros(n + 1, dtype=cupy.int64)
    counts = cupy.bincount(rows, minlength=n)
    return scan(counts)[0]


def to_host(a):
    """NumPy copy of a CuPy array (NumPy arrays and scalars pass through)."""
    if isinstance(a, cupy.ndarray):
        return a.get()
    return a
