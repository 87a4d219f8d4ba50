"""Triangles: counts (total, per vertex) and edge support, static and dynamic (CPU and GPU).

- :mod:`.static`: the public functions and the CPU (Numba) kernels; GPU inputs go to
- :mod:`.gpu`: the CUDA versions (``triangles.cu``);
- :mod:`.dynamic`: :class:`DynamicTriangleCount`, kept current batch by batch
  (``dynamic.cu`` on the GPU).
"""
from .dynamic import DynamicTriangleCount
from .static import EdgeIndex, edge_support, triangle_count, triangles_per_vertex

__all__ = ["triangle_count", "triangles_per_vertex", "edge_support", "EdgeIndex",
           "DynamicTriangleCount"]
