"""The GPU version of :class:`~hornet.algos.ktruss.dynamic.DynamicTruss`.

State on the device: truss numbers in a GPU :class:`~hornet.algos.edge_table.EdgeTable`
keyed by the edge, and the per-edge support kept by a GPU
:class:`~hornet.algos.triangles.dynamic.DynamicTriangleCount` (its CUDA kernels update the
support and the triangle count by inclusion-exclusion over the batch).

What an update does: the triangle machinery updates the supports and the count. A batch that
closes or opens no triangle changes no truss number but its own edges' (inserted edges get
2, deleted ones leave): that is decided from the count alone, with no further kernel. Any
other batch recomputes the decomposition with the static GPU kernels (the delta peel of
:mod:`hornet.algos._gpu`) and scatters it into the table. The region algorithms of the CPU
version (level-by-level insertion and deletion) do not run on the GPU.
"""
from __future__ import annotations

import numpy as np

from ..edge_table import EdgeTable
from ..triangles import DynamicTriangleCount
from ..underlying import undirected_change, undirected_copy
from .static import truss_numbers

__all__ = ["GpuDynamicTruss"]


class GpuDynamicTruss:
    """Truss numbers of a GPU :class:`hornet.Graph`, kept current (see the module; directed
    graphs as in :mod:`hornet.algos.ktruss.dynamic`).

    Same interface as :class:`~hornet.algos.ktruss.dynamic.DynamicTruss` (which builds this
    class for a GPU graph): ``truss_numbers``, ``support``, ``k_max``, ``k_truss(k)``,
    ``update(change)``, ``stats``; results are CuPy arrays.
    """

    def __init__(self, g, **_thresholds):
        import cupy
        self._cp = cupy
        self.graph = g
        self._und = undirected_copy(g) if g.directed else g
        self.stats: dict = {"path": "build", "region": 0, "batch": 0}
        self._tc = DynamicTriangleCount(g)
        self._table = None
        self._recompute()

    def _recompute(self) -> None:
        """Static GPU decomposition of the whole graph, scattered into the table."""
        cp = self._cp
        src, dst = self._und.edges(dense=True)
        t = cp.asarray(truss_numbers(self._und)).astype(cp.int32)
        if self._table is None:
            self._table = EdgeTable("gpu", {"truss": np.int32},
                                    capacity=max(16, 2 * int(src.shape[0])))
            self._table.insert(src, dst, truss=t)
        else:
            self._table.columns["truss"][self._table.lookup(src, dst)] = t
        self._cache = None
        self._k_max = None

    # ------------------------------------------------------------------ results
    @property
    def truss_numbers(self):
        """int32 CuPy array (E,): truss numbers aligned with ``g.edges()``."""
        if self._cache is None:
            src, dst = self.graph.edges(dense=True)
            self._cache = (src, dst, self._table.get("truss", src, dst).astype(self._cp.int32))
        return self._cache[2]

    @property
    def support(self):
        """int32 CuPy array (E,): triangles through every edge, aligned with ``g.edges()``."""
        return self._tc.per_edge()

    @property
    def k_max(self) -> int:
        """The largest k with a non-empty k-truss (0 without edges, 2 without triangles)."""
        if self._k_max is None:
            t = self.truss_numbers
            self._k_max = int(t.max()) if t.shape[0] else 0
        return self._k_max

    def k_truss(self, k: int):
        """Edges of the k-truss: ``(src, dst)`` int32 CuPy arrays, listed like ``g.edges()``."""
        t = self.truss_numbers
        keep = t >= int(k)
        return self._cache[0][keep], self._cache[1][keep]

    # ------------------------------------------------------------------ updates
    def update(self, change) -> None:
        """Bring the state up to date with ``change`` (already applied to the graph).

        Raises ValueError (state unchanged) for a change of another kind or device.
        """
        kind = getattr(change, "kind", None)
        if kind not in ("insert", "delete", "update"):
            raise ValueError(f"expected an EdgeChange (kind insert/delete/update), got {change!r}")
        if isinstance(change.src, np.ndarray):
            raise ValueError("the change's arrays are NumPy arrays (a CPU graph's change?)")
        n = len(change)
        self.stats = {"path": "none", "region": 0, "batch": n}
        if n == 0 or kind == "update":
            return
        before = self._tc.count
        self._tc.update(change)
        closed = self._tc.count != before        # one scalar read back per batch
        self._cache = None
        self._k_max = None
        src, dst = change.src, change.dst
        if self.graph.directed:
            src, dst = undirected_change(self.graph, self._und, kind, src, dst)
        if kind == "insert":
            slots = self._table.insert_new(src, dst)
            self._table.columns["truss"][slots] = 2
        else:
            self._table.delete_present(src, dst)
        if closed:
            self._recompute()
            self.stats.update(path="static", region=int(self.graph.num_edges))
        else:
            self.stats.update(path="dynamic")
