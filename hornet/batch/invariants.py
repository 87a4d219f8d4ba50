"""The invariants of a :class:`hornet.Graph`, verified by :meth:`hornet.Graph.check`.

Vertex table (degree <= capacity, a block exactly for the vertices with edges), the memory
manager (bit trees, one owner per block, counts), sorted duplicate-free in-range lists, the
edge count, and for undirected graphs symmetry and no self-loops. Each check reads the whole
graph: a test and debugging tool, not a hot path.
"""
from __future__ import annotations

import numpy as np

from ..change import host_copy
from ..memory.manager import InvariantError

__all__ = ["check_invariants"]


def check_invariants(g) -> None:
    """Raise :class:`~hornet.memory.manager.InvariantError` naming the first broken invariant
    of the graph ``g`` (either device)."""
    xp, n = g._xp, g._n
    deg = host_copy(g._degree[:n]).astype(np.int64)
    cls = host_copy(g._size_class[:n]).astype(np.int64)
    if bool((g._degree[n:] != 0).any()) or bool((g._size_class[n:] != -1).any()):
        raise InvariantError("vertex table rows past num_vertices are not empty")
    if (deg < 0).any():
        raise InvariantError(f"negative degree at vertex {int(np.argmax(deg < 0))}")
    owns = cls >= 0
    if (owns != (deg > 0)).any():
        v = int(np.flatnonzero(owns != (deg > 0))[0])
        raise InvariantError(f"vertex {v}: degree {deg[v]} but size class {cls[v]} "
                             "(a block must exist exactly when the degree is positive)")
    capacity = np.where(owns, np.left_shift(1, np.maximum(cls, 0)), 0)
    if (deg > capacity).any():
        v = int(np.flatnonzero(deg > capacity)[0])
        raise InvariantError(f"vertex {v}: degree {deg[v]} exceeds capacity {capacity[v]}")
    if (cls[owns] < g._mm.min_size_class).any():
        raise InvariantError("a block smaller than min_block_size")
    if int(deg.sum()) != g._entries:
        raise InvariantError(f"degrees sum to {int(deg.sum())}, edge count says "
                             f"{g._entries}")
    owners = np.flatnonzero(owns)
    g._mm.check(host_copy(g._edge_ptr[:n])[owners], cls[owners])
    bad = xp.empty(n, dtype=xp.int8)
    g._K.list_violations(g._edge_ptr[:n], g._degree[:n], n, bad)
    bad = host_copy(bad)
    if bad.any():
        v = int(np.flatnonzero(bad)[0])
        what = "is not sorted or has a duplicate" if bad[v] == 1 else \
            "holds a destination outside the id space"
        raise InvariantError(f"the adjacency list of vertex {v} {what}")
    if not g.directed and g._entries:
        _, src, dst, _ = g._coo()
        if bool((src == dst).any()):
            raise InvariantError("an undirected graph holds a self-loop")
        back = host_copy(g._K.find_positions(dst, src, g._degree, g._edge_ptr, n))
        if (back < 0).any():
            i = int(np.flatnonzero(back < 0)[0])
            raise InvariantError(f"edge ({src[i]}, {dst[i]}) is stored without its "
                                 "reverse")
    used = sum(c["used_blocks"] for c in g._mm.stats()["size_classes"].values())
    if used != owners.size:
        raise InvariantError(f"{used} blocks in use for {owners.size} vertices with edges")

