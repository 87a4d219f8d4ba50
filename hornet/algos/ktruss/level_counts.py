"""Every edge's level count from one oriented triangle listing: :func:`level_counts`.

The level count of an edge e (:func:`~hornet.algos.ktruss.region.lower_after_deletion`) is
the number of its triangles whose two other edges have truss numbers >= ``truss[e]``: the
triangles in which e has the smallest number (ties included). So one pass over the
triangles, each listed once, gives every count: a triangle adds one to each of its edges
that attains its minimum. The listing is the static triangle count's
(:mod:`hornet.algos.triangles.static`): the graph oriented from lower to higher (degree,
id), out-lists marked in a per-thread row, one marker read per candidate triangle, instead
of a merge of both endpoints' whole lists for every edge (which on a graph with hubs reads
their long lists once per hub edge).
"""
from __future__ import annotations

import numpy as np

from hornet.core.atomics import atomic_add
from hornet.core.chunking import chunk_bounds, num_chunks
from hornet.core.jit import part_range, split_kernel, split_parts

from ..triangles.static import EID_PROP, _vertex_work, orient
from .budget import COST_RATIO_PRIOR
from ..views import entry_offsets
from .region import _row, _slot

__all__ = ["level_counts", "CountPass"]

#: the pass is expected to take this share of a static decomposition until one pass was
#: timed on the graph (Kronecker 18 and 20: about 0.2 and 0.25)
LEVEL_PASS_SHARE = 0.25
#: a deletion runs without the pass only where this many times its first wave's triangles,
#: at the descent's seconds per unit, cost less than the pass (recounting is dearer per
#: triangle than the descent with counts, and the pass then serves the later deletions)
LAZY_COST_FACTOR = 16


@split_kernel(threshold=0)
def _entry_slots(deg, ptr, keys, shift, rows, row_off, part, parts):
    """The table slot of every stored adjacency entry (row order, ``row_off`` offsets)."""
    for u in range(*part_range(deg.shape[0], part, parts)):
        A, da = _row(deg, ptr, u)
        at = row_off[u]
        for i in range(da):
            rows[at + i] = _slot(keys, shift, u, A[i])


@split_kernel(nrt=True, threshold=0)
def _minimum_edges(ooff, oind, otr, bounds, marks, acc, out, taken, part, parts):
    """For every triangle of the oriented graph (``otr``: the truss number of each oriented
    edge, aligned with ``oind``), one to ``out`` (aligned with ``oind`` too) of each of its
    edges whose number is the triangle's smallest.

    Chunks of vertices of about equal work are taken one at a time (``taken[0]``). For u,
    the positions + 1 of out(u) are marked in this part's row; each w in out(v), v in out(u),
    found marked closes the triangle (u, v, w). What lands on u's own edges is summed in the
    part's ``acc`` row by position and added once per u; the edge (v, w) takes an atomic.
    Every read is by position in the oriented lists (the numbers gathered once beside
    them), none at a scattered table slot."""
    nchunks = bounds.shape[0] - 1
    mk = marks[part]
    ac = acc[part]
    c = atomic_add(taken, 0, 1)
    while c < nchunks:
        for u in range(bounds[c], bounds[c + 1]):
            a = ooff[u]
            a_hi = ooff[u + 1]
            if a_hi - a < 2:
                continue
            for p in range(a, a_hi):
                mk[oind[p]] = p - a + 1
                ac[p - a] = 0
            for p in range(a, a_hi):
                v = oind[p]
                tuv = otr[p]
                for q in range(ooff[v], ooff[v + 1]):
                    m = mk[np.uint32(oind[q])]
                    if m == 0:
                        continue
                    tvw = otr[q]
                    tuw = otr[a + m - 1]
                    low = min(tuv, tvw, tuw)
                    if tuv == low:
                        ac[p - a] += 1
                    if tuw == low:
                        ac[m - 1] += 1
                    if tvw == low:
                        atomic_add(out, q, 1)
            for p in range(a, a_hi):
                mk[oind[p]] = 0
                if ac[p - a]:
                    atomic_add(out, p, ac[p - a])
        c = atomic_add(taken, 0, 1)


def level_counts(view, keys, shift, truss, cnt, counted, stamp, skip) -> None:
    """Exact level counts of every edge of the undirected sorted adjacency ``view`` (the
    graph the edge table ``keys`` / ``shift`` holds): ``cnt[s]`` = the triangles of edge slot
    s whose two other edges have ``truss`` >= ``truss[s]``; ``counted[s]`` = ``stamp``. Edges
    with ``skip[s] >= 0`` (dense-block edges, which deletions never count) are left alone;
    other slots of the table (edges not in ``view``) too."""
    deg = np.asarray(view.degree)
    ptr = np.asarray(view.edge_ptr)
    n = deg.shape[0]
    row_off = entry_offsets(deg)
    rows = np.empty(int(row_off[-1]), np.int64)
    _entry_slots(deg, ptr, keys, shift, rows, row_off)
    eid_ptr = (int(rows.ctypes.data) if rows.size else 0) + 8 * row_off[:-1]
    ooff, oind, oeid = orient(view, eid_mode=EID_PROP, eid_ptr=eid_ptr)
    if oind.shape[0] == 0:
        return
    work = np.zeros(n + 1, np.int64)
    _vertex_work(ooff, oind, work)
    np.cumsum(work, out=work)
    bounds = chunk_bounds(work, num_chunks(int(work[-1]), grain=1 << 14))
    nt = split_parts()
    marks = np.zeros((nt, n), np.int32)
    acc = np.zeros((nt, int(np.max(np.diff(ooff)))), np.int32)
    otr = truss[oeid]
    out = np.zeros(oind.shape[0], np.int32)
    _minimum_edges(ooff, oind, otr, bounds, marks, acc, out, np.zeros(1, np.int64))
    mine = skip[oeid] < 0
    own = oeid[mine]
    cnt[own] = out[mine]
    counted[own] = stamp


class CountPass:
    """When a :class:`~hornet.algos.ktruss.dynamic.DynamicTruss` (CPU) lists every triangle
    for the level counts its deletions keep (:func:`level_counts`).

    A static run leaves no valid count (``due``). A deletion then either runs the pass
    first, or goes without it (:meth:`lazily`): its descent recounts every edge it meets
    that has no count, and keeps those (exact) counts, so a small batch after a static run
    costs its region, not a listing of every triangle. The pass runs once the descents
    since the static run have spent (``spent``, seconds) as long as it would take (a ski
    rental: at most about twice the better of the two), or at once where
    :data:`LAZY_COST_FACTOR` times the batch's first wave, at the descent's seconds per
    unit, would take longer (a small graph, where the pass costs a few small batches:
    counts from the first deletion on spare every later one its recounts). The pass's
    seconds are measured per triangle (``rate``) once it ran on the graph;
    :data:`LEVEL_PASS_SHARE` of a static decomposition before.
    """

    def __init__(self):
        self.due = True
        self.spent = 0.0
        self.rate: float | None = None

    def fall_due(self) -> None:
        """A static run: no count holds, nothing spent since."""
        self.due, self.spent = True, 0.0

    def lazily(self, first: int, unit: float | None, static_rate: float | None,
               triangles: int, static_work: int) -> tuple[bool, float]:
        """``(lazy, seconds)``: whether a deletion whose first wave holds ``first``
        triangles goes without the pass, and the pass's expected seconds. ``unit``: seconds
        per unit of descent work (None before one was learned), ``static_rate``: seconds per
        unit of static work (edges + 3 x triangles; None: no static run timed, then the
        pass runs)."""
        if static_rate is None:
            return False, 0.0
        unit = COST_RATIO_PRIOR * static_rate if unit is None else unit
        full = (LEVEL_PASS_SHARE * static_rate * static_work if self.rate is None
                else self.rate * triangles)
        return self.spent + LAZY_COST_FACTOR * unit * first < full, float(full)
