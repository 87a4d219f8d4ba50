"""Breadth-first search: levels (and parents) from one or many sources.

Top-down steps expand the frontier with the work balanced over the frontier's *edges*: the
frontier's degrees are prefix-summed and the edge range is cut into equal chunks, so one hub
in the frontier is shared by many threads (the CPU form of Hornet's load-balanced advance).
A vertex is claimed by an atomic compare-and-swap on its level (-1 -> level + 1), so each
vertex enters the next frontier exactly once and gets exactly one parent.

Direction-optimizing (Beamer, Asanović, Patterson, SC 2012): when the frontier's edges exceed
1/``alpha`` of the edges still unexplored, a bottom-up step has every unvisited vertex look for
a parent among its in-neighbours and stop at the first one found; the search returns to
top-down once the frontier holds fewer than V/``beta`` vertices. Bottom-up reads in-edges:
undirected graphs use the same adjacency; directed graphs use it only when a reverse view is
given (``reverse=`` or a ``g.reverse_adjacency()`` method), and run top-down only otherwise.
"""
from __future__ import annotations

import numba
import numpy as np

from hornet.core.atomics import atomic_cas
from hornet.core.chunking import threads_for
from hornet.core.pointers import int32_view
from hornet.core.search import lower_bound
from ..views import as_adjacency, sized
from ...id_mapping import checked_sources, source_ids
from ...core.jit import part_range, split_kernel

__all__ = ["bfs"]

ALPHA = 15     # top-down -> bottom-up when frontier edges > unexplored edges / ALPHA
BETA = 18      # bottom-up -> top-down when frontier vertices < V / BETA


def _frontier_prefix(deg, frontier, nf, fprefix):
    """``fprefix[:nf + 1]``: the running sum of the frontier's degrees, from 0."""
    _frontier_degrees(nf, deg, frontier, fprefix)
    fprefix[0] = 0
    np.cumsum(fprefix[:nf + 1], out=fprefix[:nf + 1])


@split_kernel(threshold=0)
def _frontier_degrees(nf, deg, frontier, fprefix, part, parts):
    for i in range(*part_range(nf, part, parts)):
        fprefix[i + 1] = deg[frontier[i]]


@split_kernel(threshold=0)
def _top_down(deg, ptr, frontier, nf, fprefix, nchunks, level, parent, want_parent, nxt_level,
              buf, ccount, part, parts):
    total = fprefix[nf]
    for c in range(*part_range(nchunks, part, parts)):
        lo = (total * c) // nchunks
        hi = (total * (c + 1)) // nchunks
        cnt = 0
        if lo < hi:
            i = lower_bound(fprefix, 0, nf + 1, lo + 1) - 1     # frontier slot holding edge lo
            pos = lo
            while pos < hi:
                u = frontier[i]
                start = fprefix[i]
                end = fprefix[i + 1]
                if end > hi:
                    end = hi
                if pos < end:
                    row = int32_view(ptr[u], deg[u])
                    for p in range(pos - start, end - start):
                        v = row[p]
                        if level[v] == -1 and atomic_cas(level, v, -1, nxt_level) == -1:
                            if want_parent:
                                parent[v] = u
                            buf[lo + cnt] = v
                            cnt += 1
                    pos = end
                i += 1
        ccount[c] = cnt


@split_kernel(nrt=True, threshold=0, combine=sum)
def _gather_chunks(buf, los, ccount, coff, out, ideg, part, parts):
    """Concatenate the chunks' vertices (chunk c: ``buf[los[c]:los[c] + ccount[c]]``) into
    ``out``; return the sum of their in-degrees."""
    dsum = np.zeros(los.shape[0], np.int64)
    for c in range(*part_range(los.shape[0], part, parts)):
        lo = los[c]
        base = coff[c]
        local = 0
        for j in range(ccount[c]):
            v = buf[lo + j]
            out[base + j] = v
            local += ideg[v]
        dsum[c] = local
    return dsum.sum()


@split_kernel(threshold=0)
def _bottom_up(ideg, iptr, level, parent, want_parent, cur, nchunks, buf, ccount, vdeg,
               part, parts):
    """Every unvisited vertex looks for an in-neighbour at level ``cur``; chunk c (a range of
    vertex ids) writes the vertices it found to ``buf[lo_c:]``."""
    n = level.shape[0]
    nxt = cur + 1
    for c in range(*part_range(nchunks, part, parts)):
        lo = (n * c) // nchunks
        hi = (n * (c + 1)) // nchunks
        found = 0
        found_deg = 0
        for v in range(lo, hi):
            if level[v] != -1:
                continue
            d = ideg[v]
            if d == 0:
                continue
            row = int32_view(iptr[v], d)
            for j in range(d):
                u = row[j]
                if level[u] == cur:
                    level[v] = nxt
                    if want_parent:
                        parent[v] = u
                    buf[lo + found] = v
                    found += 1
                    found_deg += d
                    break
        ccount[c] = found
        vdeg[c] = found_deg


def _bfs_driver(deg, ptr, ideg, iptr, can_bottom_up, sources, level, parent, want_parent,
                alpha, beta):
    """Level-synchronous loop (Python: a few kernel calls per level, each level run on one
    thread when its work is small). Top-down levels: frontier prefix, expand, gather.
    Bottom-up levels: one sweep; the frontier list is only rebuilt when going back to
    top-down (bottom-up tests membership as ``level == cur``)."""
    n = deg.shape[0]
    nthreads = numba.get_num_threads()
    frontier = np.empty(n, np.int32)
    nf = sources.shape[0]
    frontier[:nf] = sources
    level[sources] = 0
    m_u = int(ideg.sum()) - int(ideg[sources].sum())   # Beamer's m_u: unexplored edges
    fprefix = np.empty(n + 1, np.int64)
    buf = np.empty(max(int(deg.sum()), n, 1), np.int32)  # per-chunk output slices
    nch_max = 64 * nthreads
    ccount = np.empty(nch_max, np.int64)
    vdeg = np.empty(nch_max, np.int64)
    los = None                     # chunk starts in buf when the frontier lives there
    cur = 0
    bottom_up = False
    nf_prev = nf
    while nf > 0:
        if bottom_up and nf < n // beta and nf < nf_prev:
            bottom_up = False
        if not bottom_up:
            with threads_for(nf):
                if los is not None:            # back from bottom-up: list the frontier
                    nch = los.shape[0]
                    coff = np.zeros(nch + 1, np.int64)
                    np.cumsum(ccount[:nch], out=coff[1:])
                    _gather_chunks(buf, los, ccount[:nch], coff, frontier, ideg)
                    los = None
                _frontier_prefix(deg, frontier, nf, fprefix)
            m_f = int(fprefix[nf])
            if can_bottom_up and m_f > m_u // alpha and nf >= nf_prev:
                bottom_up = True
        nf_prev = nf
        if bottom_up:
            nch = min(nch_max, max(1, n // 4096))
            with threads_for(n + m_u):
                _bottom_up(ideg, iptr, level, parent, want_parent, cur, nch, buf, ccount, vdeg)
            nf = int(ccount[:nch].sum())
            m_u -= int(vdeg[:nch].sum())
            los = (n * np.arange(nch, dtype=np.int64)) // nch
        else:
            if m_f == 0:
                break
            nch = min(nch_max, max(1, m_f // 1024))
            with threads_for(m_f):
                _top_down(deg, ptr, frontier, nf, fprefix, nch, level, parent, want_parent,
                          cur + 1, buf, ccount)
                coff = np.zeros(nch + 1, np.int64)
                np.cumsum(ccount[:nch], out=coff[1:])
                nf = int(coff[nch])
                tl = (m_f * np.arange(nch, dtype=np.int64)) // nch
                m_u -= int(_gather_chunks(buf, tl, ccount[:nch], coff, frontier, ideg))
        cur += 1


@sized
def bfs(g, source, *, return_parents: bool = False, direction_optimizing: bool = True,
        reverse=None, alpha: int = ALPHA, beta: int = BETA, dense: bool = False):
    """Breadth-first levels from ``source``.

    Parameters
    ----------
    g : hornet.Graph, AdjacencyView, (indptr, indices) or scipy.sparse matrix
        Edges are followed from src to dst (both ways for undirected graphs).
    source : vertex id or array of them
        Start vertex, or several, all at level 0. For a hornet.Graph with a vertex map these
        are original ids (int or str, as the graph takes them; KeyError for an id not in the
        map), unless ``dense=True``; otherwise dense ids in ``[0, V)``.
    return_parents : bool, default False
        Also return a BFS tree: ``parents[v]`` is a vertex at level ``levels[v] - 1`` with an
        edge ``parents[v] -> v``; -1 for the sources and for unreached vertices.
    direction_optimizing : bool, default True
        Allow bottom-up steps (Beamer's heuristic). Results are identical either way.
    reverse : graph-like, optional
        The transpose of a directed ``g`` (in-edges), enabling bottom-up steps on directed
        graphs. If not given, ``g.reverse_adjacency()`` is used when ``g`` has one; directed
        graphs without either run top-down only.
    alpha, beta : int
        Beamer's switching thresholds: go bottom-up when the frontier's edges exceed
        1/alpha of the unexplored edges (and the frontier grows), back to top-down when the
        frontier holds fewer than V/beta vertices (and shrinks).
    dense : bool, default False
        ``source`` holds dense ids (positions in ``g.vertex_ids()``) also when ``g`` has a
        vertex map.

    Returns
    -------
    levels : int32 array, shape (V,), -1 where unreached
    parents : int32 array, shape (V,)  (only with ``return_parents=True``)

    Both are indexed by dense id, and parents hold dense ids: ``hornet.algos.to_table(
    {"level": levels, "parent": parents}, g, vertex_valued=["parent"])`` names them by the
    graph's original ids.

    For a graph on the GPU both are CuPy arrays (levels equal the CPU's; parents may be other
    valid ones).

    Examples
    --------
    >>> import numpy as np
    >>> indptr, indices = np.array([0, 1, 3, 4, 4]), np.array([1, 0, 2, 1])   # path 0-1-2, 3 alone
    >>> bfs((indptr, indices), 0).tolist()
    [0, 1, 2, -1]
    >>> import hornet                                     # a source by original id
    >>> g = hornet.Graph.from_edges([2**63, 5], [5, 2**64 - 1], vertex_map=True, device="cpu")
    >>> bfs(g, 2**64 - 1).tolist(), g.vertex_ids().tolist()
    ([2, 1, 0], [9223372036854775808, 5, 18446744073709551615])
    """
    source = source_ids(g, source, dense=dense)
    view = as_adjacency(g, sort=False, properties=False)
    if view.device == "gpu":
        from .gpu import bfs as gpu_bfs
        return gpu_bfs(view, source, return_parents=return_parents,
                       direction_optimizing=direction_optimizing, reverse=reverse,
                       alpha=alpha, beta=beta, graph=g)
    n = view.num_vertices
    src = checked_sources(source, n)
    deg = np.asarray(view.degree)
    ptr = np.asarray(view.edge_ptr)
    ideg, iptr, can_bu = deg, ptr, False
    if direction_optimizing:
        if not view.directed:
            can_bu = True
        else:
            rev = reverse
            if rev is None and hasattr(g, "reverse_adjacency"):
                rev = g.reverse_adjacency()
            if rev is not None:
                rview = as_adjacency(rev, directed=True, sort=False)
                if rview.num_vertices != n:
                    raise ValueError("reverse graph has a different number of vertices")
                ideg, iptr, can_bu = np.asarray(rview.degree), np.asarray(rview.edge_ptr), True
    level = np.full(n, -1, np.int32)
    parent = np.full(n if return_parents else 0, -1, np.int32)
    if n and src.size:
        _bfs_driver(deg, ptr, ideg, iptr, can_bu, src, level, parent, return_parents,
                    max(int(alpha), 1), max(int(beta), 1))
    if return_parents:
        return level, parent
    return level
