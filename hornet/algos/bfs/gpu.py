"""GPU BFS (CuPy + CUDA C++, kernels in ``bfs.cu``).

Top-down steps with one thread per frontier edge (exclusive scan of the frontier's degrees,
binary search of each thread's vertex), bottom-up steps when the frontier is large (Beamer's
heuristic, the same switching rule as the CPU version). Per level only the frontier's size
and counters cross to the host.
"""
from __future__ import annotations

import os

import numpy as np

from hornet.adjacency import AdjacencyView
from hornet.core.cuda import cupy, i64, launch, scan
from hornet.id_mapping import checked_sources
from ..gpu_arrays import kernels, launch_tiles, tiles, to_host, view_arrays

_fn = kernels(os.path.join(os.path.dirname(os.path.abspath(__file__)), "bfs.cu"))


ALPHA = 15
BETA = 18


def bfs(view: AdjacencyView, source, *, return_parents=False, direction_optimizing=True,
        reverse=None, alpha=ALPHA, beta=BETA, graph=None):
    """Levels (int32 CuPy, -1 unreached) and optionally parents; see hornet.algos.bfs."""
    n = view.num_vertices
    src = checked_sources(to_host(source), n)
    deg, ptr = view_arrays(view)
    ideg, iptr, can_bu = deg, ptr, False
    if direction_optimizing:
        if not view.directed:
            can_bu = True
        else:
            rev = reverse
            if rev is None and graph is not None and hasattr(graph, "reverse_adjacency"):
                rev = graph.reverse_adjacency()
            if rev is not None:
                from ..views import as_adjacency
                rview = as_adjacency(rev, directed=True, sort=False)
                if rview.num_vertices != n:
                    raise ValueError("reverse graph has a different number of vertices")
                if rview.device != "gpu":
                    raise ValueError("the reverse graph of a GPU graph must be on the GPU too")
                ideg, iptr = view_arrays(rview)
                can_bu = True
    level = cupy.full(n, -1, dtype=cupy.int32)
    parent = cupy.full(n if return_parents else 1, -1, dtype=cupy.int32)
    if n and src.size:
        _bfs_driver(deg, ptr, ideg, iptr, can_bu, cupy.asarray(src), level, parent,
                    bool(return_parents), max(int(alpha), 1), max(int(beta), 1))
    if return_parents:
        return level, parent
    return level


def _bfs_driver(deg, ptr, ideg, iptr, can_bu, sources, level, parent, want_parent, alpha, beta):
    """Level-synchronous loop; the same switching rule as the CPU driver (Beamer's m_f > m_u /
    alpha with a growing frontier -> bottom-up; frontier < V / beta and shrinking -> top-down).
    Per level: one scan total and one counters read cross to the host."""
    n = deg.shape[0]
    nf = int(sources.shape[0])
    frontier = cupy.empty(n, dtype=cupy.int32)
    other = cupy.empty(n, dtype=cupy.int32)
    frontier[:nf] = sources
    level[sources] = 0
    m_u = int(ideg.sum(dtype=cupy.int64)) - int(ideg[sources].sum(dtype=cupy.int64))
    counters = cupy.zeros(2, dtype=cupy.uint64)
    wp = np.int32(1 if want_parent else 0)
    cur = 0
    bottom_up = False
    listed = True                 # frontier[:nf] holds the frontier (False after bottom-up)
    nf_prev = nf
    m_f = 0
    fpre = None
    while nf > 0:
        if bottom_up and nf < n // beta and nf < nf_prev:
            bottom_up = False
        if not bottom_up:
            if not listed:
                frontier[:nf] = cupy.flatnonzero(level == cur).astype(cupy.int32)
                listed = True
            fpre, m_f = scan(deg[frontier[:nf]])
            if can_bu and m_f > m_u // alpha and nf >= nf_prev:
                bottom_up = True
        nf_prev = nf
        counters.fill(0)
        if bottom_up:
            launch(_fn("bfs_bottom_up"), n, (ideg, iptr, i64(n), level, parent, wp,
                                              np.int32(cur), counters))
            c = counters.get()
            nf = int(c[0])
            m_u -= int(c[1])
            listed = False
        else:
            if m_f == 0:
                break
            tseg, nt = tiles(_fn, fpre, nf, m_f)
            launch_tiles(_fn, "bfs_top_down", nt, (ptr, ideg, frontier, fpre, tseg, i64(m_f), level,
                                               parent, wp, np.int32(cur + 1), other, counters))
            c = counters.get()
            nf = int(c[0])
            m_u -= int(c[1])
            frontier, other = other, frontier
        cur += 1
