"""k-truss: one k, the maximal k, and the full truss decomposition.

The k-truss of an undirected graph is its largest subgraph in which every edge lies in at
least ``k - 2`` triangles of the subgraph (``networkx.k_truss``; Cohen 2005). The truss number
of an edge is the largest k whose k-truss contains it (>= 2 for every edge).

Two peeling algorithms, chosen with ``method=``:

``"delta"`` (default): Green et al., "Quickly Finding a Truss in a Haystack" (HPEC 2017). The
    support of every edge is counted once; each round removes the edges whose support is below
    ``k - 2`` and subtracts from the surviving edges exactly the triangles that disappeared.
    For a removed edge (u, v) every common neighbour w of u and v in the graph of the round
    closes a triangle, and the chapter's cases decide who updates what:

    - single edge-pair deletion ((u, w), (v, w) survive): support(u, w) and support(v, w)
      drop by one;
    - double edge-pair deletion ((u, w) removed in the same round too, (v, w) survives): the
      triangle is met from both removed edges, so only the one with the lower edge id
      subtracts, once, from (v, w) -- no triangle is subtracted twice;
    - triple deletion: nothing survives to update.

    The chapter finds the double deletions with a second intersection against the graph of
    removed edges; here both cases come out of the same intersection (removed-this-round
    edges are still visible, flagged GOING), which saves that second pass. The intersections
    of a round are grouped by the removed edges' higher-degree endpoint: its list is marked
    once in a per-thread marker array and the other endpoints' lists are scanned against it.
    Edges whose support crosses below ``k - 2`` during the subtraction (an atomic decrement
    that returns ``k - 2``) form the next round's removal set, so a round costs only the
    intersections of the removed edges, never a scan of the graph.
``"iterative"``: the baseline (Cohen; the Graph Challenge reference): after each round,
    recount the support of the whole remaining graph.

Both remove the peeled edges from a working graph, once per round:

- when the input is a ``hornet.Graph`` (it has ``copy`` and ``delete_edges``), a copy of it,
  from which each round's edges are deleted with one batched ``delete_edges`` call, as in the
  chapter (the dynamic graph is never rebuilt; the input graph is left untouched);
- otherwise a mask over the CSR (one state byte per edge), the CSR being compacted to the live
  edges whenever half of its edges are dead (so intersections never wade through mostly dead
  lists; total compaction work is O(E)).

GPU inputs (see :func:`hornet.algos.as_adjacency`) run the CUDA version
(:mod:`hornet.algos.ktruss.gpu`): the same two methods on a device CSR with an edge-state mask
(compacted when half of it is dead), results as CuPy arrays.

The truss decomposition jumps straight to the next k that removes something (``k = min
support + 3``), so graphs with a large ``k_max`` cost no empty rounds.

Directed graphs are handled on their underlying undirected simple graph (an edge u-v when u->v
or v->u); results are given per stored directed edge, listed like ``g.edges()``, each with the
value of its undirected edge. Self-loops are in no triangle and in no truss: their truss number
is 0 and they never appear in k-truss edge lists.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hornet.adjacency import AdjacencyView
from hornet.core.atomics import atomic_add
from hornet.core.chunking import num_chunks, threads_for
from hornet.core.pointers import int32_view, view as ptr_view
from hornet.core.search import lower_bound
from ..triangles.static import (EID_LOOKUP, EID_PROP, POS_MARKS_BYTES, EdgeIndex, count_oriented,
                                lookup_eid, map_entries_to_index, orient)
from ..views import as_adjacency, edge_list, entry_offsets, on_gpu, sized, symmetrized
from ...core.jit import njit, part_range, split_kernel, split_parts

__all__ = ["k_truss", "truss_numbers", "max_truss"]

METHODS = ("delta", "iterative")
# edge states: DEAD (peeled in an earlier round), ALIVE, GOING (peeled in this round)
DEAD = np.uint8(0)
ALIVE = np.uint8(1)
GOING = np.uint8(2)
DEAD_, ALIVE_, GOING_ = 0, 1, 2                  # the same, as Numba compile-time constants


# --------------------------------------------------------------------------------------------
# Problem setup


@dataclass
class _Problem:
    view: AdjacencyView          # the input's sorted view (directed or not)
    index: EdgeIndex             # numbering of the undirected simple graph's edges
    entry_map: np.ndarray | None  # directed inputs: undirected edge id of every stored entry
    graph: object | None         # a hornet.Graph whose copy can be peeled, else None


def _prepare(g) -> _Problem:
    graph = None
    if (not isinstance(g, AdjacencyView) and hasattr(g, "delete_edges")
            and hasattr(g, "copy") and hasattr(g, "adjacency")):
        gv = g.adjacency()
        view = as_adjacency(gv)
        # peel a copy of the Graph itself when its own (sorted, undirected) view is the one
        # indexed; otherwise fall back to the CSR mask
        if view is gv and not view.directed:
            graph = g
    else:
        view = as_adjacency(g)
    und = symmetrized(view) if view.directed else view
    index = EdgeIndex.build(und)
    entry_map = map_entries_to_index(view, index) if view.directed else None
    return _Problem(view, index, entry_map, graph)


def _per_input_edge(prob: _Problem, values: np.ndarray, fill=0) -> np.ndarray:
    """Per-undirected-edge values -> per input edge (directed: per stored entry)."""
    if prob.entry_map is None:
        return values
    ids = prob.entry_map
    out = np.full(ids.shape[0], fill, dtype=values.dtype)
    ok = ids >= 0
    out[ok] = values[ids[ok]]
    return out


def _input_edges(prob: _Problem):
    if prob.entry_map is None:
        return prob.index.edges()
    return edge_list(prob.view)


# --------------------------------------------------------------------------------------------
# Working graphs


class _MaskWork:
    """Peeling on a CSR + per-edge state; compacted when half its edges are dead."""

    def __init__(self, index: EdgeIndex, state: np.ndarray):
        self.index = index
        self.state = state
        self._view = index.view
        self._eid_ptr = index.eid_ptr
        self._keep = None
        self.stored = index.num_edges          # undirected edges in the current CSR
        self.alive = index.num_edges

    def current(self):
        return self._view, EID_PROP, self._eid_ptr

    def stored_entries(self) -> int:
        return 2 * self.stored

    def remove(self, rem: np.ndarray) -> None:
        self.alive -= rem.shape[0]
        if self.alive * 2 < self.stored:
            self._compact()

    def _compact(self):
        view = self._view
        deg = np.asarray(view.degree)
        cnt = np.empty(deg.shape[0], np.int64)
        _alive_degrees(deg, np.asarray(view.edge_ptr), self._eid_ptr, self.state, cnt)
        indptr = entry_offsets(cnt)
        ind = np.empty(int(indptr[-1]), np.int32)
        eid = np.empty(int(indptr[-1]), np.int64)
        _compact_alive(deg, np.asarray(view.edge_ptr), self._eid_ptr, self.state, indptr, ind, eid)
        new = AdjacencyView.from_csr(indptr, ind, directed=False, weights=eid,
                                     weight_name="eid", sorted=True)
        self._view = new
        self._eid_ptr = new.property_ptrs["eid"][0]
        self.stored = self.alive


class _GraphWork:
    """Peeling on a copy of a hornet.Graph: removed edges go out with batched delete_edges.

    The copy gets an int64 edge property holding each edge's id (both directions), so the
    kernels read edge ids next to the destinations, as on the CSR; if the graph cannot take
    one, ids are found by binary search in the input graph's (unchanged) lists instead.
    """

    EID = "__hornet_ktruss_eid"

    def __init__(self, g, index: EdgeIndex):
        self.index = index
        self.g = g.copy()
        if getattr(self.g, "vertex_map", None) is not None:
            self.g.vertex_map = None             # the work copy speaks dense ids
        self.src, self.dst = index.edges()
        self.has_eid = False
        if hasattr(self.g, "add_edge_property") and hasattr(self.g, "update_edges"):
            try:
                self.g.add_edge_property(self.EID, np.int64, fill=-1)
                ids = np.arange(index.num_edges, dtype=np.int64)
                self.g.update_edges(np.concatenate([self.src, self.dst]),
                                    np.concatenate([self.dst, self.src]),
                                    **{self.EID: np.concatenate([ids, ids])})
                self.has_eid = self.EID in self.g.adjacency().property_ptrs
            except (ValueError, TypeError, KeyError):
                self.has_eid = False

    def stored_entries(self) -> int:
        return 2 * int(self.g.num_edges)

    def current(self):
        v = self.g.adjacency()
        if not v.sorted:
            raise RuntimeError("the working copy of the graph lost its sorted adjacency")
        if self.has_eid:
            return v, EID_PROP, np.asarray(v.property_ptrs[self.EID][0])
        return v, EID_LOOKUP, None

    def remove(self, rem: np.ndarray) -> None:
        self.g.delete_edges(self.src[rem], self.dst[rem])


@split_kernel(nrt=True, threshold=0)
def _alive_degrees(deg, ptr, eid_ptr, state, cnt, part, parts):
    like = np.empty(0, np.int64)
    for u in range(*part_range(deg.shape[0], part, parts)):
        d = deg[u]
        c = 0
        if d:
            eids = ptr_view(eid_ptr[u], d, like)
            for j in range(d):
                e = eids[j]
                if e >= 0 and state[e] == 1:
                    c += 1
        cnt[u] = c


@split_kernel(nrt=True, threshold=0)
def _compact_alive(deg, ptr, eid_ptr, state, indptr, ind, eid, part, parts):
    like = np.empty(0, np.int64)
    for u in range(*part_range(deg.shape[0], part, parts)):
        d = deg[u]
        if d == 0:
            continue
        row = int32_view(ptr[u], d)
        eids = ptr_view(eid_ptr[u], d, like)
        q = indptr[u]
        for j in range(d):
            e = eids[j]
            if e >= 0 and state[e] == 1:
                ind[q] = row[j]
                eid[q] = e
                q += 1


# --------------------------------------------------------------------------------------------
# Kernels


@njit
def _next_common(A, pa, a_hi, B, pb, b_hi, skew):
    """Positions of the next common value of sorted A[pa:a_hi], B[pb:b_hi] (or a_hi, b_hi)."""
    while pa < a_hi and pb < b_hi:
        x = A[pa]
        y = B[pb]
        if x == y:
            return pa, pb
        if x < y:
            pa = lower_bound(A, pa + 1, a_hi, y) if skew else pa + 1
        else:
            pb = lower_bound(B, pb + 1, b_hi, x) if skew else pb + 1
    return a_hi, b_hi


# The helpers of _delta_update's innermost loop take no arrays: a Numba call or inlined
# helper given arrays increfs and decrefs each of them around the call, on every triangle met.
@njit(inline="always")
def _triangle_lost(e, e1, e2, s1, s2):
    """Removed edge ``e`` met the triangle {e, e1, e2} (states ``s1``, ``s2``): which of e1,
    e2 lose it (once)."""
    if s1 == DEAD_ or s2 == DEAD_:
        return False, False                      # not a triangle of this round's graph
    if s1 == ALIVE_ and s2 == ALIVE_:            # single edge-pair deletion
        return True, True
    if s2 == ALIVE_:                             # double: e and e1 go, lower id subtracts
        return False, e < e1
    if s1 == ALIVE_:                             # double: e and e2 go
        return e < e2, False
    return False, False                          # triple deletion: nothing survives


@split_kernel(nrt=True, threshold=0)
def _delta_update(deg, ptr, eid_ptr, mode, deg0, ptr0, off0, eeid0, state,
                  heads, tails, eids, pstart, marks, pos_marks, sup, thr, out, counter, taken,
                  part, parts):
    """Subtract the triangles destroyed by removing this round's edges (state GOING).

    For a removed edge e = (x, y), every w in N(x) ∩ N(y) with neither (x, w) nor (y, w) dead
    earlier is a triangle that existed before this round:

    - single edge-pair deletion, (x, w) and (y, w) both ALIVE: both lose one triangle;
    - double edge-pair deletion, one of them GOING too: the triangle is met from both removed
      edges, so only the one with the lower edge id subtracts, from the surviving edge;
    - triple deletion, both GOING: nothing survives to update.

    Removed edges come grouped by their higher-degree endpoint ``x`` (``heads``), in pieces
    ``pstart[i]:pstart[i+1]``, taken one at a time by the parts of a split call (``taken[0]``
    counts the pieces taken). A piece marks N(x) once in this part's marker row and scans
    the (shorter) N(y) of each of its edges against it: the cost is d(x) + sum d(y) instead
    of a merge's k d(x) + sum d(y). A piece whose lists are very uneven (a few short N(y)
    against a hub) binary-searches instead of marking.
    """
    like = np.empty(0, np.int64)
    mk = marks[part]
    npieces = pstart.shape[0] - 1
    piece = atomic_add(taken, 0, 1)
    while piece < npieces:
        i0 = pstart[piece]
        i1 = pstart[piece + 1]
        x = heads[i0]
        dx = deg[x]
        if dx == 0:
            piece = atomic_add(taken, 0, 1)
            continue
        X = int32_view(ptr[x], dx)
        ex = ptr_view(eid_ptr[x] if mode == EID_PROP else 0, dx if mode == EID_PROP else 0, like)
        scan = 0
        for i in range(i0, i1):
            scan += deg[tails[i]]
        lg = 1
        while (1 << lg) < dx:
            lg += 1
        use_marks = dx < 2 * lg * scan
        if use_marks:
            for p in range(dx):
                mk[X[p]] = (p + 1) if pos_marks else 1
        for i in range(i0, i1):
            y = tails[i]
            dy = deg[y]
            if dy == 0:
                continue
            Y = int32_view(ptr[y], dy)
            ey = ptr_view(eid_ptr[y] if mode == EID_PROP else 0, dy if mode == EID_PROP else 0,
                          like)
            e = eids[i]
            q = 0                                   # marker scan cursor over Y
            pa = 0                                  # merge cursors over Y and X
            pb = 0
            while True:
                # next w in N(x) ∩ N(y): qy = its position in Y, px in X (-1: not known)
                if use_marks:
                    while q < dy and mk[np.uint32(Y[q])] == 0:
                        q += 1
                    if q >= dy:
                        break
                    qy = q
                    w = Y[q]
                    px = (mk[w] - 1) if pos_marks else -1
                    q += 1
                else:
                    pa, pb = _next_common(Y, pa, dy, X, pb, dx, True)
                    if pa >= dy or pb >= dx:
                        break
                    qy = pa
                    w = Y[pa]
                    px = pb
                    pa += 1
                    pb += 1
                if mode == EID_PROP:
                    e2 = ey[qy]
                else:
                    e2 = lookup_eid(y, w, deg0, ptr0, off0, eeid0)
                if e2 < 0 or state[e2] == DEAD_:
                    continue
                if mode == EID_PROP:
                    e1 = ex[px if px >= 0 else lower_bound(X, 0, dx, w)]
                else:
                    e1 = lookup_eid(x, w, deg0, ptr0, off0, eeid0)
                if e1 < 0:
                    continue
                dec1, dec2 = _triangle_lost(e, e1, e2, state[e1], state[e2])
                # an edge whose support crosses below k - 2 (seen by one part) is peeled next
                if dec1 and atomic_add(sup, e1, -1) == thr:
                    out[atomic_add(counter, 0, 1)] = e1
                if dec2 and atomic_add(sup, e2, -1) == thr:
                    out[atomic_add(counter, 0, 1)] = e2
        if use_marks:
            for p in range(dx):
                mk[X[p]] = 0
        piece = atomic_add(taken, 0, 1)


#: removed edges per piece of a head's group in the single-deletion kernel
PIECE = 256


@njit
def _pieces(heads, piece):
    """Start of every run of equal ``heads``, runs cut every ``piece`` items (+ the end)."""
    n = heads.shape[0]
    out = np.empty(n + 1, np.int64)
    k = 0
    run = 0
    for i in range(n):
        if i == 0 or heads[i] != heads[i - 1] or run == piece:
            out[k] = i
            k += 1
            run = 0
        run += 1
    out[k] = n
    return out[: k + 1]


def _scan(alive, state, sup, thr, nchunks, out_alive, out_rem):
    """Compact ``alive`` to the edges still ALIVE and pick this round's removals.

    ``thr >= 0``: removals are the edges with ``sup < thr``. ``thr < 0``: the edges whose
    support is the minimum ``m`` over live edges. Returns ``(n_alive, n_rem, m)``. Two
    passes over ``nchunks`` chunks of ``alive`` (split kernels): count, then write.
    """
    c_alive = np.zeros(nchunks, np.int64)
    c_min = np.empty(nchunks, np.int32)
    c_rem = np.zeros(nchunks, np.int64)
    _scan_count(alive, state, sup, thr, c_alive, c_min, c_rem)
    a_off, r_off, m = _scan_offsets(thr, c_alive, c_min, c_rem)
    _scan_fill(alive, state, sup, thr, m, a_off, r_off, out_alive, out_rem)
    return a_off[nchunks], r_off[nchunks], m


@split_kernel(threshold=0)
def _scan_count(alive, state, sup, thr, c_alive, c_min, c_rem, part, parts):
    """Per chunk of ``alive``: live edges, their minimum support and the removals among
    them (``thr >= 0``: under ``thr``; else: at the chunk's minimum)."""
    n = alive.shape[0]
    nchunks = c_alive.shape[0]
    for c in range(*part_range(nchunks, part, parts)):
        lo = (n * c) // nchunks
        hi = (n * (c + 1)) // nchunks
        na = 0
        mn = np.iinfo(np.int32).max
        nr = 0
        for i in range(lo, hi):
            e = alive[i]
            if state[e] == 1:
                na += 1
                s = sup[e]
                if thr >= 0:
                    if s < thr:
                        nr += 1
                else:
                    if s < mn:
                        mn = s
                        nr = 1
                    elif s == mn:
                        nr += 1
        c_alive[c] = na
        c_min[c] = mn
        c_rem[c] = nr


@njit
def _scan_offsets(thr, c_alive, c_min, c_rem):
    """(where each chunk's live edges go, where its removals go, the minimum support)."""
    nchunks = c_alive.shape[0]
    m = np.iinfo(np.int32).max
    for c in range(nchunks):
        if c_alive[c] and c_min[c] < m:
            m = c_min[c]
    a_off = np.zeros(nchunks + 1, np.int64)
    r_off = np.zeros(nchunks + 1, np.int64)
    for c in range(nchunks):
        a_off[c + 1] = a_off[c] + c_alive[c]
        take = c_rem[c] if (thr >= 0 or c_min[c] == m) else 0
        r_off[c + 1] = r_off[c] + take
    return a_off, r_off, m


@split_kernel(threshold=0)
def _scan_fill(alive, state, sup, thr, m, a_off, r_off, out_alive, out_rem, part, parts):
    """Write the live edges and the removals at the offsets of :func:`_scan_offsets`."""
    n = alive.shape[0]
    nchunks = a_off.shape[0] - 1
    for c in range(*part_range(nchunks, part, parts)):
        lo = (n * c) // nchunks
        hi = (n * (c + 1)) // nchunks
        qa = a_off[c]
        qr = r_off[c]
        want = r_off[c + 1] > qr
        for i in range(lo, hi):
            e = alive[i]
            if state[e] == 1:
                out_alive[qa] = e
                qa += 1
                if want:
                    s = sup[e]
                    if (thr >= 0 and s < thr) or (thr < 0 and s == m):
                        out_rem[qr] = e
                        qr += 1


# --------------------------------------------------------------------------------------------
# Peeling driver


class _Peeler:
    def __init__(self, prob: _Problem, method: str):
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        self.prob = prob
        self.method = method
        index = prob.index
        self.E = index.num_edges
        self.V = index.view.num_vertices
        self.state = np.ones(self.E, np.uint8)
        self.esrc, self.edst = index.edges()
        if prob.graph is not None:
            self.work = _GraphWork(prob.graph, index)
        else:
            self.work = _MaskWork(index, self.state)
        self.sup = self._count()
        self._alive_base = np.arange(self.E, dtype=np.int64)
        self.alive = self._alive_base
        self._spare = np.empty(self.E, np.int64)
        self._buf_r = np.empty(self.E, np.int64)
        self._counter = np.zeros(1, np.int64)
        self._mark_rows = None
        self.rounds = 0

    # support of the whole current graph (initial count; every round of "iterative")
    def _count(self) -> np.ndarray:
        view, mode, eid_ptr = self.work.current()
        with threads_for(view.num_vertices + 2 * self.work.stored_entries()):
            o = orient(view, eid_mode=mode, eid_ptr=eid_ptr, index=self.prob.index,
                       state=self.state)
            _, _, sup = count_oriented(o, 2, num_edges=self.E)
        return sup

    def scan(self, thr: int):
        """Compact the live-edge list; return (removals, min support) for threshold ``thr``."""
        nch = num_chunks(self.alive.shape[0], grain=8192)
        out = self._spare
        with threads_for(self.alive.shape[0]):
            na, nr, m = _scan(self.alive, self.state, self.sup, thr, nch, out, self._buf_r)
        self._spare = self._alive_base          # the old list's buffer takes the next output
        self._alive_base = out
        self.alive = out[:na]
        return self._buf_r[:nr].copy(), int(m)

    def peel(self, rem: np.ndarray, thr: int) -> np.ndarray:
        """Remove ``rem``; return the next round's removals (edges now under ``thr``)."""
        self.rounds += 1
        if self.method == "iterative":
            self.state[rem] = DEAD
            with threads_for(2 * self.work.stored_entries()):
                self.work.remove(rem)
            self.sup = self._count()
            nxt, _ = self.scan(thr)
            return nxt
        self.state[rem] = GOING
        nxt = self._subtract(rem, thr)
        self.state[rem] = DEAD
        with threads_for(2 * self.work.stored_entries()):
            self.work.remove(rem)                # Graph: one batched delete_edges
        return nxt

    def _subtract(self, rem: np.ndarray, thr: int) -> np.ndarray:
        view, mode, eid_ptr = self.work.current()
        if eid_ptr is None:
            eid_ptr = np.zeros(view.num_vertices, np.int64)
        deg0, ptr0, off0, eeid0 = self.prob.index.lookup_args()
        deg = np.asarray(view.degree)
        ptr = np.asarray(view.edge_ptr)
        s = self.esrc[rem]
        d = self.edst[rem]
        ds = deg[s].astype(np.int64)
        dd = deg[d].astype(np.int64)
        # group the removed edges by their higher-degree endpoint
        s_is_head = (ds > dd) | ((ds == dd) & (s > d))
        heads = np.where(s_is_head, s, d)
        tails = np.where(s_is_head, d, s)
        order = np.argsort(heads, kind="stable")
        heads, tails, reids = heads[order], tails[order], rem[order]
        pstart = _pieces(heads, PIECE)
        self._counter[0] = 0
        marks = self._marks(split_parts())      # a row per part of the split kernel
        with threads_for(int(ds.sum() + dd.sum())):
            _delta_update(deg, ptr, eid_ptr, mode, deg0, ptr0, off0, eeid0, self.state,
                          heads, tails, reids, pstart, marks, marks.dtype == np.int32,
                          self.sup, thr, self._buf_r, self._counter, np.zeros(1, np.int64))
        return self._buf_r[: int(self._counter[0])].copy()

    def _marks(self, nt: int) -> np.ndarray:
        """Per-thread marker rows (int32 positions while affordable, else uint8 flags)."""
        m = self._mark_rows
        if m is None or m.shape[0] < nt:
            pos = nt * self.V * 4 <= POS_MARKS_BYTES
            m = np.zeros((nt, self.V), np.int32 if pos else np.uint8)
            self._mark_rows = m
        return m

    def decompose(self, round_of: np.ndarray | None = None) -> np.ndarray:
        """Truss number of every undirected edge (int32). With ``round_of`` (int64, (E,)):
        also the round in which each edge was peeled (rounds only grow, so (truss number,
        round) orders the edges as the peeling removed them)."""
        truss = np.zeros(self.E, np.int32)
        while True:
            rem, m = self.scan(-1)
            if self.alive.shape[0] == 0:
                break
            k = m + 3                        # the first k at which something is peeled
            thr = k - 2
            while rem.shape[0]:
                truss[rem] = k - 1
                if round_of is not None:
                    round_of[rem] = self.rounds
                rem = self.peel(rem, thr)
        return truss

    def one_k(self, k: int) -> np.ndarray:
        """State after peeling to the k-truss (uint8 per undirected edge, 1 = in the truss)."""
        thr = k - 2
        if thr <= 0:
            return self.state
        rem, _ = self.scan(thr)
        while rem.shape[0]:
            rem = self.peel(rem, thr)
        return self.state


# --------------------------------------------------------------------------------------------
# Public API


@sized
def truss_numbers(g, *, method: str = "delta") -> np.ndarray:
    """Truss number of every edge, aligned with ``g.edges()``.

    The truss number of an edge is the largest k such that the k-truss contains it; every edge
    of an undirected simple graph has one >= 2.

    Parameters
    ----------
    g : hornet.Graph, AdjacencyView, (indptr, indices) or scipy.sparse matrix
        Directed graphs: truss numbers of the underlying undirected graph, one per stored
        directed edge (0 for a self-loop).
    method : {"delta", "iterative"}
        Peeling algorithm (see the module docstring); results are identical.

    Returns
    -------
    int32 array, shape (E,)

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = np.ones((4, 4)) - np.eye(4)          # K4 plus a pendant edge 3-4
    >>> A = np.pad(A, (0, 1)); A[3, 4] = A[4, 3] = 1
    >>> truss_numbers(sp.csr_array(A)).tolist()
    [4, 4, 4, 4, 4, 4, 2]
    """
    if on_gpu(g):
        from . import gpu
        return gpu.truss_numbers(as_adjacency(g, properties=False), method)
    return _truss(g, method)[1]


def _truss(g, method):
    prob = _prepare(g)
    truss = _Peeler(prob, method).decompose()
    return prob, _per_input_edge(prob, truss)


def truss_numbers_and_rounds(g) -> tuple[np.ndarray, np.ndarray]:
    """Truss numbers of an undirected CPU ``g`` (int32, aligned with ``g.edges()``) and the
    peeling round of every edge (int64): in the order of (truss number, round), every edge
    lies in at most ``truss - 2`` triangles whose other two edges come later, ties in any
    order (an edge peeled in a round had at most that many live triangles when the round
    began). The dynamic truss keeps this order (its k-order)."""
    prob = _prepare(g)
    if prob.entry_map is not None:
        raise ValueError("truss_numbers_and_rounds expects an undirected graph")
    peeler = _Peeler(prob, "delta")
    rounds = np.zeros(peeler.E, np.int64)
    truss = peeler.decompose(rounds)
    return truss, rounds


@sized
def k_truss(g, k: int, *, method: str = "delta"):
    """Edges of the k-truss of ``g`` (networkx's ``k_truss`` definition).

    Parameters
    ----------
    g : graph-like (see :func:`truss_numbers`)
    k : int
        Every edge of the result lies in at least ``k - 2`` triangles of the result. ``k <= 2``
        gives every edge (self-loops excluded).
    method : {"delta", "iterative"}

    Returns
    -------
    (src, dst) : int32 arrays, shape (E_k,)
        Listed like ``g.edges()`` (undirected: once, src < dst, lexicographic).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = np.ones((4, 4)) - np.eye(4)
    >>> A = np.pad(A, (0, 1)); A[3, 4] = A[4, 3] = 1
    >>> src, dst = k_truss(sp.csr_array(A), 3)
    >>> list(zip(src.tolist(), dst.tolist()))
    [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    """
    k = int(k)
    if on_gpu(g):
        from . import gpu
        return gpu.k_truss(as_adjacency(g, properties=False), k, method)
    prob = _prepare(g)
    state = _Peeler(prob, method).one_k(k) if prob.index.num_edges else np.ones(0, np.uint8)
    keep = _per_input_edge(prob, state, fill=0).astype(bool)
    src, dst = _input_edges(prob)
    return src[keep], dst[keep]


@sized
def max_truss(g, *, method: str = "delta"):
    """The maximal truss: ``(k_max, src, dst)``.

    ``k_max`` is the largest k with a non-empty k-truss (0 for a graph without edges; 2 when
    there is no triangle); ``src, dst`` (int32) are the k_max-truss's edges, listed like
    ``g.edges()``.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> A = np.ones((4, 4)) - np.eye(4)
    >>> A = np.pad(A, (0, 1)); A[3, 4] = A[4, 3] = 1
    >>> k, src, dst = max_truss(sp.csr_array(A))
    >>> k, len(src)
    (4, 6)
    """
    if on_gpu(g):
        from . import gpu
        return gpu.max_truss(as_adjacency(g, properties=False), method)
    prob, t = _truss(g, method)
    if t.shape[0] == 0 or t.max() == 0:
        z = np.empty(0, np.int32)
        return 0, z, z.copy()
    kmax = int(t.max())
    keep = t == kmax
    src, dst = _input_edges(prob)
    return kmax, src[keep], dst[keep]
