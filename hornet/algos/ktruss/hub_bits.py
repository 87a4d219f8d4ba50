"""Hub bit rows of the GPU DynamicTruss (:mod:`.dynamic_gpu`): the neighbour sets of the
graph's highest-degree vertices as bit rows, so that the triangle enumeration of its kernels
(``warp_common`` in ``dynamic_gpu.cu``) tests an element of the shorter list against a hub's
long list with one load instead of a binary search of it.

On a Kronecker graph the levels below the top hold edges between hubs of tens of thousands of
neighbours; an update's scan, descent and peeling enumerate their triangles again and again,
each element of the shorter list a search of log2(degree) dependent loads in the longer one.

The rows: the vertices of degree :data:`MIN_DEGREE` or more when the object is built (on a
graph of fewer than :data:`MIN_EDGES` edges, :data:`SMALL_MIN_DEGREE` or more), at most
:data:`MAX_BYTES` of rows (the highest degrees first), a row of one bit per vertex id below
the vertex count then. On a small graph an update's asynchronous phases are chains of
dependent units whose list searches are most of each unit's dependent loads, and its rows
are short (a bit per vertex), so every list the kernels would search (``HUB_MIN_LIST`` in
``dynamic_gpu.cu``) gets one. They
stay exact: every update sets (insertion) or clears (deletion) its pairs' bits before any
truss kernel runs (ids past a row's range, or vertices of no row, are searched as before).
The kernels read the rows through one ``__constant__`` variable of their module
(``g_hubs``): :meth:`HubBits.activate` writes it when another object's rows, or none, were
written last.
"""
from __future__ import annotations

import weakref

import numpy as np

__all__ = ["MIN_DEGREE", "SMALL_MIN_DEGREE", "MAX_BYTES", "HubBits"]

#: vertices of at least this degree get a bit row (a search of a shorter list is a few loads)
MIN_DEGREE = 256
#: graphs of fewer edges give rows to the vertices of at least SMALL_MIN_DEGREE instead: the
#: lists that the kernels search rather than scan (HUB_MIN_LIST in dynamic_gpu.cu)
MIN_EDGES = 1 << 21
SMALL_MIN_DEGREE = 64
#: the rows' memory at most (the highest degrees first)
MAX_BYTES = 1 << 29

# a weak reference to the object whose rows the module's g_hubs holds (None: no rows, as
# the variable starts)
_ACTIVE: list = [None]


def _module():
    from hornet.core.cuda import load_module
    from .ko_launch import _CU, _fn
    _fn("hb_apply")                                # (the module built and loaded)
    return load_module(_CU)


class HubBits:
    """The hub bit rows of the graph read through ``deg`` (int32 degrees) and ``ptr`` (the
    lists' device addresses) of ``nv`` vertex ids; empty (``rows == 0``) when no vertex
    qualifies."""

    def __init__(self, deg, ptr, nv: int, edges: int):
        import cupy as cp
        from hornet.core.cuda import BLOCK, _max_grid
        from .ko_launch import _fn
        self.words = max(1, (int(nv) + 63) // 64)
        self.nrows = int(deg.shape[0])
        most = MAX_BYTES // (8 * self.words)
        least = MIN_DEGREE if edges >= MIN_EDGES else SMALL_MIN_DEGREE
        hubs = cp.flatnonzero(deg >= least).astype(cp.int32)
        if hubs.shape[0] > most:
            order = cp.argsort(-deg[hubs].astype(cp.int64), kind="stable")
            hubs = cp.sort(hubs[order[:most]])
        self.rows = int(hubs.shape[0])
        self.row = None
        self.bits = None
        if self.rows == 0:
            return
        self.row = cp.full(self.nrows, -1, dtype=cp.int32)
        self.row[hubs] = cp.arange(self.rows, dtype=cp.int32)
        self.bits = cp.zeros(self.rows * self.words, dtype=cp.uint64)
        _fn("hb_build")((min(self.rows, int(_max_grid())),), (BLOCK,),
                        (deg, ptr, hubs, np.int64(self.rows), self.bits,
                         np.int64(self.words)))

    def apply(self, src, dst, insert: bool) -> None:
        """Set (``insert``) or clear the bits of the pairs {src[i], dst[i]} (int32)."""
        if self.rows == 0 or src.shape[0] == 0:
            return
        from hornet.core.cuda import BLOCK
        from .ko_launch import _grid, _prepared
        n = int(src.shape[0])
        _prepared("hb_apply", 8)(_grid(2 * n), BLOCK, (
            src.data.ptr, dst.data.ptr, n, self.row.data.ptr, self.nrows, self.bits.data.ptr,
            self.words, int(insert)))

    def activate(self, on: bool = True) -> None:
        """The module's ``g_hubs`` set to these rows (``on`` and any rows), else to none."""
        import cupy as cp
        use = on and self.rows > 0
        owner = _ACTIVE[0]
        if (owner is not None and owner() is self) if use else owner is None:
            return
        vals = (np.array([self.row.data.ptr, self.bits.data.ptr, self.words, self.nrows],
                         dtype=np.int64) if use else np.zeros(4, dtype=np.int64))
        # (a copy in stream order: the kernels launched before it read the rows they had)
        _module().get_global("g_hubs").copy_from_host_async(
            vals.ctypes.data, vals.nbytes, cp.cuda.get_current_stream())
        _ACTIVE[0] = weakref.ref(self) if use else None
