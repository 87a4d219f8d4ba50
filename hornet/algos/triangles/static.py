"""Static triangle counting: global count, per-vertex counts, per-edge support.

The algorithm (the CPU version of Hornet's TC, and the start of k-truss):

1. **Orientation.** Every undirected edge {u, v} is kept once, from the endpoint that is lower
   in the total order ``(degree, id)`` to the higher one. Each vertex's "out" list stays sorted
   by id (it is a filtered copy of its sorted adjacency), and no out list is longer than
   ``sqrt(2E)``, so hubs stop dominating.
2. **Intersection.** A triangle u < v < w (in that order) is found exactly once, on the oriented
   edge (u, v), as ``w`` in ``out(u) ∩ out(v)``. On the CPU the intersection is done with a
   per-thread marker array: out(u) is marked once, then each ``w`` of out(v) costs one byte
   read (faster than a sorted-list merge on social / R-MAT graphs, where the merge keeps
   walking the longer list). The k-truss update kernels, which intersect lists
   of different graphs, use the sorted merge.
3. **Load balance.** Vertices are cut into chunks of about equal work
   (``2 d+(u) + sum d+(v)``), many more chunks than threads, taken one at a time by the
   threads (a split kernel, :func:`hornet.core.jit.split_kernel`).

Per-vertex counts and per-edge support add each found triangle to its three vertices or three
edges with atomic adds.

GPU inputs (see :func:`hornet.algos.as_adjacency`) run the CUDA version
(:mod:`hornet.algos.triangles.gpu`): the same orientation; counts handle every edge at the end
with the longer out-list, hashed in shared memory once for all its edges, probing the shorter
list's elements; per-edge support takes one thread per (oriented edge, element of its shorter
out-list), binary-searched in the longer list; results are CuPy arrays.

Directed graphs: all three functions work on the **underlying undirected simple graph** (an
edge u-v exists when u->v or v->u does; self-loops ignored), like ``networkx.triangles`` on
``G.to_undirected()``. :func:`edge_support` then gives every stored directed edge the support of
its undirected edge (0 for a self-loop), aligned with ``g.edges()``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hornet.adjacency import AdjacencyView
from hornet.core.atomics import atomic_add
from hornet.core.chunking import chunk_bounds, num_chunks
from hornet.core.pointers import int32_view, view as ptr_view
from hornet.core.search import lower_bound
from ..views import as_adjacency, edge_list, entry_offsets, sized, symmetrized
from ...core.jit import njit, part_range, split_kernel, split_parts

__all__ = ["triangle_count", "triangles_per_vertex", "edge_support", "EdgeIndex"]

_I64 = np.empty(0, np.int64)

# eid modes of the orientation kernels
EID_NONE = 0      # edge ids not needed
EID_PROP = 1      # read from a per-entry int64 property (eid_ptr)
EID_LOOKUP = 2    # binary search in the original (indexed) adjacency
ALIVE = np.uint8(1)


# --------------------------------------------------------------------------------------------
# Edge numbering of an undirected sorted view


@dataclass
class EdgeIndex:
    """Numbering of the edges {u, v}, u < v, of an undirected sorted view, as ``g.edges()``.

    Attributes
    ----------
    view : AdjacencyView      the indexed view (undirected, sorted; self-loops are not edges)
    off : int64 (V+1)         entry offsets: entry ``j`` of vertex ``u`` is number ``off[u] + j``
    lo : int64 (V)            position of u's first neighbour greater than u
    eoff : int64 (V+1)        edge ``eoff[u] + j - lo[u]`` is (u, row_u[j]) for ``j >= lo[u]``
    entry_eid : int64 (off[-1])  edge id of every stored entry, both directions (-1: self-loop)
    eid_ptr : int64 (V)       address of each vertex's slice of ``entry_eid`` (a property column)
    """

    view: AdjacencyView
    off: np.ndarray
    lo: np.ndarray
    eoff: np.ndarray
    entry_eid: np.ndarray
    eid_ptr: np.ndarray
    _edges: tuple | None = field(default=None, repr=False)

    @property
    def num_edges(self) -> int:
        return int(self.eoff[-1])

    def edges(self):
        """(src, dst) int32 of every edge id, src < dst, lexicographic."""
        if self._edges is None:
            self._edges = edge_list(self.view)
        return self._edges

    @classmethod
    def build(cls, view: AdjacencyView) -> "EdgeIndex":
        if view.directed or not view.sorted:
            raise ValueError("EdgeIndex needs an undirected sorted view")
        deg = np.asarray(view.degree)
        ptr = np.asarray(view.edge_ptr)
        off = entry_offsets(deg)
        lo = np.empty(deg.shape[0], np.int64)
        _first_above(deg, ptr, lo)
        eoff = entry_offsets(deg - lo)
        eeid = np.empty(int(off[-1]), np.int64)
        _entry_eids(deg, ptr, off, lo, eoff, eeid)
        eid_ptr = (int(eeid.ctypes.data) if eeid.size else 0) + 8 * off[:-1]
        return cls(view, off, lo, eoff, eeid, eid_ptr)

    def lookup_args(self):
        """The arguments kernels take to find an edge id in this index (EID_LOOKUP)."""
        return (np.asarray(self.view.degree), np.asarray(self.view.edge_ptr), self.off,
                self.entry_eid)


@split_kernel(threshold=0)
def _first_above(deg, ptr, lo, part, parts):
    for u in range(*part_range(deg.shape[0], part, parts)):
        d = deg[u]
        if d == 0:
            lo[u] = 0
        else:
            lo[u] = lower_bound(int32_view(ptr[u], d), 0, d, u + 1)


@split_kernel(threshold=0)
def _entry_eids(deg, ptr, off, lo, eoff, out, part, parts):
    for u in range(*part_range(deg.shape[0], part, parts)):
        d = deg[u]
        if d == 0:
            continue
        row = int32_view(ptr[u], d)
        base = off[u]
        for j in range(d):
            w = row[j]
            if w > u:
                out[base + j] = eoff[u] + j - lo[u]
            elif w == u:
                out[base + j] = -1
            else:
                dw = deg[w]
                other = int32_view(ptr[w], dw)
                p = lower_bound(other, 0, dw, u)
                out[base + j] = eoff[w] + p - lo[w]


@njit
def lookup_eid(u, w, deg0, ptr0, off0, eeid0):
    """Edge id of (u, w) in an :class:`EdgeIndex` (``-1`` if absent)."""
    d = deg0[u]
    if d == 0:
        return -1
    row = int32_view(ptr0[u], d)
    p = lower_bound(row, 0, d, w)
    if p == d or row[p] != w:
        return -1
    return eeid0[off0[u] + p]


@split_kernel(threshold=0)
def _map_entries(deg, ptr, off, deg0, ptr0, off0, eeid0, out, part, parts):
    """Edge id (in the index) of every stored entry of another view (-1: not an edge)."""
    for u in range(*part_range(deg.shape[0], part, parts)):
        d = deg[u]
        if d == 0:
            continue
        row = int32_view(ptr[u], d)
        for j in range(d):
            w = row[j]
            if w == u:
                out[off[u] + j] = -1
            else:
                out[off[u] + j] = lookup_eid(u, w, deg0, ptr0, off0, eeid0)


def map_entries_to_index(view: AdjacencyView, index: EdgeIndex) -> np.ndarray:
    """int64 per stored entry of ``view`` (row order): the index's id of its undirected edge."""
    deg = np.asarray(view.degree)
    off = entry_offsets(deg)
    out = np.empty(int(off[-1]), np.int64)
    _map_entries(deg, np.asarray(view.edge_ptr), off, *index.lookup_args(), out)
    return out


# --------------------------------------------------------------------------------------------
# Orientation


@njit
def _resolve(u, j, w, eidrow, mode, deg0, ptr0, off0, eeid0):
    if mode == EID_PROP:
        return eidrow[j]
    return lookup_eid(u, w, deg0, ptr0, off0, eeid0)


@split_kernel(threshold=0)
def _orient_count(deg, ptr, eid_ptr, mode, deg0, ptr0, off0, eeid0, state, use_state, ocnt,
                  part, parts):
    for u in range(*part_range(deg.shape[0], part, parts)):
        d = deg[u]
        c = 0
        if d:
            row = int32_view(ptr[u], d)
            eidrow = ptr_view(eid_ptr[u] if mode == EID_PROP else 0,
                              d if mode == EID_PROP else 0, eeid0)
            du = deg[u]
            for j in range(d):
                w = row[j]
                if w == u:
                    continue
                dw = deg[w]
                if dw < du or (dw == du and w < u):
                    continue
                if use_state:
                    e = _resolve(u, j, w, eidrow, mode, deg0, ptr0, off0, eeid0)
                    if e < 0 or state[e] != ALIVE:
                        continue
                c += 1
        ocnt[u] = c


@split_kernel(threshold=0)
def _orient_fill(deg, ptr, eid_ptr, mode, deg0, ptr0, off0, eeid0, state, use_state,
                 ooff, oind, oeid, part, parts):
    for u in range(*part_range(deg.shape[0], part, parts)):
        d = deg[u]
        if d == 0:
            continue
        row = int32_view(ptr[u], d)
        eidrow = ptr_view(eid_ptr[u] if mode == EID_PROP else 0,
                          d if mode == EID_PROP else 0, eeid0)
        q = ooff[u]
        du = deg[u]
        for j in range(d):
            w = row[j]
            if w == u:
                continue
            dw = deg[w]
            if dw < du or (dw == du and w < u):
                continue
            e = -1
            if mode != 0:
                e = _resolve(u, j, w, eidrow, mode, deg0, ptr0, off0, eeid0)
                if use_state and (e < 0 or state[e] != ALIVE):
                    continue
            oind[q] = w
            oeid[q] = e
            q += 1


def orient(view: AdjacencyView, *, eid_mode: int = EID_NONE, eid_ptr=None,
           index: EdgeIndex | None = None, state=None):
    """Oriented CSR ``(ooff int64 (V+1), oind int32, oeid int64)`` of a sorted
    undirected view: each edge once, from lower to higher ``(degree, id)``, lists sorted.

    ``eid_mode``: EID_NONE (``oeid`` left -1), EID_PROP (ids read from ``eid_ptr``, a per-vertex
    address of int64 per-entry ids), EID_LOOKUP (binary search in ``index``). With ``state``
    (uint8 per edge id), only entries whose edge is ALIVE are kept.
    """
    deg = np.asarray(view.degree)
    ptr = np.asarray(view.edge_ptr)
    V = deg.shape[0]
    if index is not None:
        deg0, ptr0, off0, eeid0 = index.lookup_args()
    else:
        deg0, ptr0, off0, eeid0 = deg, ptr, np.zeros(V + 1, np.int64), _I64
    if eid_ptr is None:
        eid_ptr = np.zeros(V, np.int64)
    use_state = state is not None
    if state is None:
        state = np.empty(0, np.uint8)
    if use_state and eid_mode == EID_NONE:
        raise ValueError("an edge state needs edge ids")
    ocnt = np.empty(V, np.int64)
    _orient_count(deg, ptr, eid_ptr, eid_mode, deg0, ptr0, off0, eeid0, state, use_state, ocnt)
    ooff = entry_offsets(ocnt)
    m = int(ooff[-1])
    oind = np.empty(m, np.int32)
    oeid = np.full(m, -1, np.int64) if eid_mode == EID_NONE else np.empty(m, np.int64)
    _orient_fill(deg, ptr, eid_ptr, eid_mode, deg0, ptr0, off0, eeid0, state, use_state,
                 ooff, oind, oeid)
    return ooff, oind, oeid


# --------------------------------------------------------------------------------------------
# Counting


@split_kernel(threshold=0)
def _vertex_work(ooff, oind, work, part, parts):
    """Work of vertex u in the marker kernel: 2 d+(u) + sum of d+(v), v in out(u)."""
    for u in range(*part_range(ooff.shape[0] - 1, part, parts)):
        w = 2 * (ooff[u + 1] - ooff[u])
        for p in range(ooff[u], ooff[u + 1]):
            v = oind[p]
            w += ooff[v + 1] - ooff[v]
        work[u + 1] = w


@split_kernel(nrt=True, threshold=0, combine=sum)
def _tc_kernel(ooff, oind, oeid, bounds, marks, pos_marks, acc, mode, tri_v, sup, taken, part,
               parts):
    """Triangles on the oriented graph; mode 0: count, 1: + per vertex, 2: + per edge.

    For each u (chunks of vertices of about equal work, taken one at a time by the parts of
    a split call: ``taken[0]`` counts the chunks taken), mark out(u) in this part's marker
    row, then for every v in out(u) test each w in out(v) against the
    marks: each test is one byte (or int32) read, with no second list to walk.

    Modes 1 and 2: a triangle (u, v, w) adds to u, v, w (or to edges uv, uw, vw). What lands
    on u's own out-entries (v, w or uv, uw) is summed in the thread's ``acc`` row by position
    in out(u) and flushed once per u; only the vw increment of mode 2 is an atomic per
    triangle. With ``pos_marks`` (int32 markers) a mark holds the position + 1 of w in out(u);
    otherwise (uint8 markers) the position is found by binary search.
    """
    nchunks = bounds.shape[0] - 1
    total = np.zeros(nchunks, np.int64)
    mk = marks[part]
    ac = acc[part]
    c = atomic_add(taken, 0, 1)
    while c < nchunks:
        local = 0
        for u in range(bounds[c], bounds[c + 1]):
            a = ooff[u]
            a_hi = ooff[u + 1]
            if a_hi - a < 2:
                continue
            for p in range(a, a_hi):
                mk[oind[p]] = (p - a + 1) if pos_marks else 1
            if mode != 0:
                for p in range(a_hi - a):
                    ac[p] = 0
            cu = 0
            for p in range(a, a_hi):
                v = oind[p]
                cv = 0
                for q in range(ooff[v], ooff[v + 1]):
                    w = oind[q]
                    m = mk[np.uint32(w)]            # (unsigned: no wraparound check)
                    if m:
                        cv += 1
                        if mode != 0:
                            r = (m - 1) if pos_marks else lower_bound(oind, a, a_hi, w) - a
                            ac[r] += 1                                  # w, or edge (u, w)
                            if mode == 2:
                                atomic_add(sup, oeid[q], 1)             # edge (v, w)
                if cv:
                    if mode != 0:
                        ac[p - a] += cv                                 # v, or edge (u, v)
                    cu += cv
            for p in range(a, a_hi):
                mk[oind[p]] = 0
            if mode == 1:
                if cu:
                    atomic_add(tri_v, u, cu)
                    for p in range(a_hi - a):
                        if ac[p]:
                            atomic_add(tri_v, oind[a + p], ac[p])
            elif mode == 2:
                if cu:
                    for p in range(a_hi - a):
                        if ac[p]:
                            atomic_add(sup, oeid[a + p], ac[p])
            local += cu
        total[c] = local
        c = atomic_add(taken, 0, 1)
    return total.sum()


#: int32 position markers (no binary search per triangle) while they take at most this much
POS_MARKS_BYTES = 1 << 29


def count_oriented(oriented, mode: int, num_vertices: int = 0, num_edges: int = 0):
    """Run the counting kernel; returns ``(total, per_vertex int64 | None, support int32 | None)``.

    Memory: one marker per vertex per thread (int32 up to :data:`POS_MARKS_BYTES` in all, else
    uint8 plus a binary search per triangle in modes 1-2).
    """
    ooff, oind, oeid = oriented
    V = ooff.shape[0] - 1
    tri_v = np.zeros(num_vertices if mode == 1 else 0, np.int64)
    sup = np.zeros(num_edges if mode == 2 else 0, np.int32)
    if oind.shape[0] == 0:
        return 0, (tri_v if mode == 1 else None), (sup if mode == 2 else None)
    nt = split_parts()                        # the parts of a split _tc_kernel call
    work = np.zeros(V + 1, np.int64)
    _vertex_work(ooff, oind, work)
    np.cumsum(work, out=work)
    bounds = chunk_bounds(work, num_chunks(int(work[-1]), grain=1 << 14))
    pos_marks = nt * V * 4 <= POS_MARKS_BYTES     # (one compiled variant in the usual case)
    marks = np.zeros((nt, V), np.int32 if pos_marks else np.uint8)
    maxout = int(np.max(np.diff(ooff))) if mode != 0 else 0
    acc = np.zeros((nt, maxout), np.int32)
    total = _tc_kernel(ooff, oind, oeid, bounds, marks, pos_marks, acc, mode, tri_v, sup,
                       np.zeros(1, np.int64))
    return int(total), (tri_v if mode == 1 else None), (sup if mode == 2 else None)


def _undirected_view(g) -> tuple[AdjacencyView, AdjacencyView]:
    """(the input's sorted view, its underlying undirected simple graph's view)."""
    view = as_adjacency(g)
    return view, (symmetrized(view) if view.directed else view)


# --------------------------------------------------------------------------------------------
# Public API


@sized
def triangle_count(g) -> int:
    """Number of triangles in ``g``.

    Parameters
    ----------
    g : hornet.Graph, AdjacencyView, (indptr, indices) or scipy.sparse matrix
        Directed graphs are counted on their underlying undirected simple graph; self-loops
        are ignored.

    Returns
    -------
    int

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_array(np.ones((4, 4)) - np.eye(4))      # K4
    >>> triangle_count(A)
    4
    """
    view = as_adjacency(g, properties=False)
    if view.device == "gpu":
        from . import gpu
        return gpu.triangle_count(view)
    _, und = _undirected_view(view)
    total, _, _ = count_oriented(orient(und), 0)
    return total


@sized
def triangles_per_vertex(g) -> np.ndarray:
    """Triangles through each vertex (``networkx.triangles``).

    Returns
    -------
    int64 array, shape (V,)

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_array(np.ones((4, 4)) - np.eye(4))      # K4
    >>> triangles_per_vertex(A).tolist()
    [3, 3, 3, 3]
    """
    view = as_adjacency(g, properties=False)
    if view.device == "gpu":
        from . import gpu
        return gpu.triangles_per_vertex(view)
    _, und = _undirected_view(view)
    _, tri_v, _ = count_oriented(orient(und), 1, num_vertices=und.num_vertices)
    return tri_v


def support_on_index(index: EdgeIndex) -> np.ndarray:
    """int32 support of every edge id of ``index``."""
    o = orient(index.view, eid_mode=EID_PROP, eid_ptr=index.eid_ptr, index=index)
    _, _, sup = count_oriented(o, 2, num_edges=index.num_edges)
    return sup


@sized
def edge_support(g) -> np.ndarray:
    """Triangles through each edge, aligned with ``g.edges()``.

    Undirected: one value per edge (src < dst) in lexicographic order. Directed: one value per
    stored directed edge (lexicographic), the support of its undirected edge in the underlying
    undirected simple graph (0 for a self-loop).

    Returns
    -------
    int32 array, shape (E,) (support never exceeds the maximum degree)

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = sp.csr_array(np.ones((4, 4)) - np.eye(4))      # K4: every edge in 2 triangles
    >>> edge_support(A).tolist()
    [2, 2, 2, 2, 2, 2]
    """
    view = as_adjacency(g, properties=False)
    if view.device == "gpu":
        from . import gpu
        return gpu.edge_support(view)
    view, und = _undirected_view(view)
    index = EdgeIndex.build(und)
    sup = support_on_index(index)
    if not view.directed:
        return sup
    ids = map_entries_to_index(view, index)
    out = np.zeros(ids.shape[0], np.int32)
    ok = ids >= 0
    out[ok] = sup[ids[ok]]
    return out
