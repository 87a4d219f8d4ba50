"""GPU triangle counts and edge numbering (CuPy + CUDA C++, kernels in ``triangles.cu``).

Degree orientation (one warp per vertex, ballot compaction; for the keyed kernels in one
pass, each vertex's oriented list written where its undirected list starts in a buffer as
long as the undirected lists). Counts (total and per vertex):
every edge is handled at its key, the end with the longer oriented list, whose list is
hashed in shared memory once for all the edges keyed at it (a warp per short list, a block
per longer one); the shorter list's elements are probed into it (:func:`count_keyed`).
Per-edge support (k-truss): the same keyed kernels, each triangle adding one to its three
edges (:func:`support_keyed`), or one item per (oriented edge, element of its shorter list),
binary-searched in the longer list (:func:`count_oriented`). A hub key's neighbours are split
over several blocks (TC_SPLIT each), and a key list longer than half of the largest table
into value ranges (TC_RANGES). :class:`EdgeIndex` numbers the
undirected edges as ``g.edges()`` lists them, for per-edge results.
"""
from __future__ import annotations

from dataclasses import dataclass
import os

import numpy as np

from hornet.adjacency import AdjacencyView
from hornet.core.cuda import BLOCK, cupy, i64, launch, scan
from ..gpu_arrays import NULL, address, dummy, kernels, launch_tiles, tiles, view_arrays
from ..views_gpu import coo, symmetrized

_fn = kernels(os.path.join(os.path.dirname(os.path.abspath(__file__)), "triangles.cu"),
              ("orient_pass<0>", "orient_pass<1>", "tc_count<0>", "tc_count<1>", "tc_count<2>",
               "tc_keyed_warp<0>", "tc_keyed_warp<1>")
              + tuple(f"tc_keyed_block<{m}, {t}>" for m in (0, 1) for t in (32, 64, 4096, 8192))
              + tuple(f"tc_support_block<{t}>" for t in (64, 256, 2048, 4096)))


TC_IPT = 4                   # TC_IPT in triangles.cu
TC_WARP_LIST = 32            # keys with out-lists up to this long go to tc_keyed_warp ...
TC_WARP_DEGREE = 1024        # ... when their undirected lists are no longer than this
TC_MAX_OUT = 1 << 22         # tc_keyed_block sums 256 out-degrees in int32: longer -> tc_count
TC_SPREAD = 4                # a key's table has at least TC_SPREAD slots per list element
                             # (up to its cap): short probe runs for the many misses
TC_TABLES = (4096, 8192)     # tc_keyed_block's table sizes: lists up to half of the first take
                             # it, longer ones the second (beyond half of it: value ranges, or
                             # global search; 32 and 64 are compiled too, for tests of every
                             # path)
TC_SPLIT = 512               # a block item takes at most this many of its key's neighbours
#: tc_keyed_block cuts a key list longer than half of its table into value ranges of half a
#: table each (one block item per range and neighbour part, every probe in shared memory);
#: False: such lists are binary-searched in global memory
TC_RANGES = True
TC_SUPPORT_TABLES = (2048, 4096)   # the same for tc_support_block (a hit count per slot too;
                                   # 64 and 256 are compiled too, for tests of every path)
#: per-edge support by the keyed hash kernels (:func:`support_keyed`); False: by
#: :func:`count_oriented` (binary search, three global atomics per triangle)
SUPPORT_KEYED = True


@dataclass
class EdgeIndex:
    """Numbering of the edges {u, v}, u < v, of an undirected sorted GPU view, as
    ``g.edges()``: edge ``eoff[u] + j - lo[u]`` is (u, row_u[j]) for ``j >= lo[u]``."""

    view: AdjacencyView
    deg: object
    ptr: object
    off: object          # int64 (V+1) entry offsets
    total: int           # stored entries
    lo: object           # int64 (V)
    eoff: object         # int64 (V+1)
    num_edges: int
    esrc: object         # int32 (E)
    edst: object         # int32 (E)
    src: object          # int32 (entries): row of every entry
    dst: object          # int32 (entries)

    @classmethod
    def build(cls, view: AdjacencyView) -> "EdgeIndex":
        deg, ptr = view_arrays(view)
        n = view.num_vertices
        off, total = scan(deg)
        lo = cupy.empty(n, dtype=cupy.int64)
        launch(_fn("first_above"), n, (deg, ptr, i64(n), lo))
        eoff, E = scan(deg.astype(cupy.int64) - lo)
        src, dst = coo(view, off=off, total=total)
        up = dst > src
        return cls(view, deg, ptr, off, total, lo, eoff, E, src[up], dst[up], src, dst)

    def entry_eids(self):
        """int64 edge id of every stored entry (row order; -1 for a self-loop)."""
        out = cupy.empty(self.total, dtype=cupy.int64)
        if self.total:
            tseg, nt = tiles(_fn, self.off, self.deg.shape[0], self.total)
            launch_tiles(_fn, "entry_eids", nt, (self.deg, self.ptr, self.off, tseg, i64(self.total),
                                             self.lo, self.eoff, out))
        return out

    def map_entries(self, view: AdjacencyView):
        """int64 per stored entry of another view: the id of its undirected edge (or -1)."""
        deg, ptr = view_arrays(view)
        off, total = scan(deg)
        out = cupy.empty(total, dtype=cupy.int64)
        if total:
            tseg, nt = tiles(_fn, off, deg.shape[0], total)
            launch_tiles(_fn, "map_entries", nt, (ptr, off, tseg, i64(total), self.deg, self.ptr,
                                              self.lo, self.eoff, out))
        return out


def orient(deg, ptr, n: int, eptr=None, state=None, sources: bool = True):
    """Oriented CSR of an undirected sorted graph given by (deg, ptr): each edge once, from
    lower to higher (degree, id), lists ascending. With ``eptr`` (per-vertex addresses of int64
    per-entry edge ids) the ids come along; with ``state`` only ALIVE edges are kept.
    Returns (osrc int32, oind int32, ooff int64 (n+1), oeid int64, m); ``sources=False``
    leaves osrc out (a one-element placeholder)."""
    use_eid = eptr is not None
    use_state = state is not None
    if use_state and not use_eid:
        raise ValueError("an edge state needs edge ids")
    eptr_a = eptr if use_eid else ptr
    state_a = state if use_state else dummy(cupy.uint8)
    flags = (np.int32(use_eid), np.int32(use_state), i64(n))
    ocnt = cupy.empty(max(n, 1), dtype=cupy.int64)
    di32, di64 = dummy(cupy.int32), dummy(cupy.int64)
    launch(_fn("orient_pass<0>"), n, (deg, ptr, eptr_a, state_a, *flags, ocnt, di64, di32, di64,
                                      di32), threads_per_item=32)
    ooff, m = scan(ocnt[:n])
    oind = cupy.empty(m, dtype=cupy.int32)
    osrc = cupy.empty(m if sources else 1, dtype=cupy.int32)
    oeid = cupy.empty(m if use_eid else 1, dtype=cupy.int64)
    if m:
        launch(_fn("orient_pass<1>"), n, (deg, ptr, eptr_a, state_a, *flags, NULL, ooff, oind,
                                          oeid, osrc if sources else NULL), threads_per_item=32)
    return osrc, oind, ooff, oeid, m


def orient_in_place(deg, ptr, n: int, eptr=None):
    """The oriented lists of the keyed kernels in one pass over the graph: vertex x's
    oriented entries (as in :func:`orient`, ascending) at ``ostart[x] .. ostart[x] +
    dplus[x]`` of buffers as long as the undirected lists (``ostart``: their offsets), so
    no counting pass and scan come first. With ``eptr`` the edge ids come along in ``oeid``
    at the same positions. Returns (oind int32 (total,), ostart int64 (n + 1,), dplus int32
    (n,), oeid int64 (total,) | one-element placeholder, total: undirected entries)."""
    use_eid = eptr is not None
    ostart, total = scan(deg)
    oind = cupy.empty(max(total, 1), dtype=cupy.int32)
    oeid = cupy.empty(total if use_eid and total else 1, dtype=cupy.int64)
    cnt = cupy.zeros(max(n, 1), dtype=cupy.int64)
    if total:
        launch(_fn("orient_pass<1>"), n, (deg, ptr, eptr if use_eid else ptr,
                                          dummy(cupy.uint8), np.int32(use_eid), np.int32(0),
                                          i64(n), cnt, ostart, oind, oeid, NULL),
               threads_per_item=32)
    return oind, ostart, cnt[:n].astype(cupy.int32), oeid, total


def count_oriented(oriented, mode: int, num_vertices: int = 0, num_edges: int = 0):
    """(total, per-vertex int64 | None, per-edge int32 | None) of an oriented graph."""
    osrc, oind, ooff, oeid, m = oriented
    total = cupy.zeros(1, dtype=cupy.uint64)
    tri = cupy.zeros(num_vertices if mode == 1 else 1, dtype=cupy.uint64)
    sup = cupy.zeros(num_edges if mode == 2 else 1, dtype=cupy.int32)
    if m:
        work = cupy.empty(m, dtype=cupy.int64)
        launch(_fn("tc_work"), m, (osrc, oind, ooff, i64(m), work))
        wpre, W = scan(work)
        if W:
            tseg, nt = tiles(_fn, wpre, m, W, tile=BLOCK * TC_IPT)
            launch_tiles(_fn, f"tc_count<{mode}>", nt, (osrc, oind, ooff, oeid, wpre, tseg, i64(W),
                                                    total, tri, sup))
    return (int(total.get()[0]),
            tri.view(cupy.int64) if mode == 1 else None,
            sup if mode == 2 else None)


def _key_parts(keys, deg, ranges=None, range_len: int = 0):
    """(item keys int32, first neighbour int32, first list element int32 | None) of the block
    kernels' items: key x's undirected list cut into parts of TC_SPLIT neighbours and, with
    ``ranges`` (int64 per key), its oriented list into that many value ranges of
    ``range_len`` elements; one item per (part, range)."""
    parts = (deg[keys].astype(cupy.int64) + TC_SPLIT - 1) // TC_SPLIT
    per = parts if ranges is None else parts * ranges
    total = int(per.sum())
    if total == keys.size:
        return keys, cupy.zeros(keys.size, dtype=cupy.int32), (
            None if ranges is None else cupy.zeros(keys.size, dtype=cupy.int32))
    ends = cupy.cumsum(per)
    item = cupy.arange(total, dtype=cupy.int64)
    owner = cupy.searchsorted(ends, item, side="right")
    local = item - (ends[owner] - per[owner])
    if ranges is None:
        return keys[owner], (local * TC_SPLIT).astype(cupy.int32), None
    r = ranges[owner]
    return (keys[owner], ((local // r) * TC_SPLIT).astype(cupy.int32),
            ((local % r) * range_len).astype(cupy.int32))


def _block_items(keys, deg, dplus, table: int):
    """The block kernel's items for ``keys`` in tables of ``table`` slots: (keys, jbeg,
    rbeg | None); with TC_RANGES, keys whose lists exceed half a table get one item per value
    range of ``table // 2`` elements too."""
    if not TC_RANGES:
        return _key_parts(keys, deg)
    half = table // 2
    ranges = (dplus[keys].astype(cupy.int64) + half - 1) // half
    return _key_parts(keys, deg, cupy.maximum(ranges, 1), half)


def count_keyed(deg, ptr, n: int, mode: int):
    """(total, per-vertex int64 | None) of the undirected sorted graph (deg int32 (n,), ptr
    int64 (n,), no self-loops), by the keyed hash kernels (triangles.cu): every edge is
    handled at the end with the longer oriented list, whose list is hashed in shared memory
    once for all its edges; the shorter list's elements are probed into it."""
    oind, ooff, dplus, _, m = orient_in_place(deg, ptr, n)
    total = cupy.zeros(1, dtype=cupy.uint64)
    tri = cupy.zeros(n if mode == 1 else 1, dtype=cupy.uint64)
    if m:
        if m > TC_MAX_OUT and int(dplus.max()) > TC_MAX_OUT:    # (dplus <= m)
            return count_oriented(orient(deg, ptr, n), mode, num_vertices=n)[:2]
        small = (dplus <= TC_WARP_LIST) & (deg <= TC_WARP_DEGREE)
        big = (dplus > 0) & ~small
        fits = dplus <= TC_TABLES[0] // 2
        spread = np.int32(max(2, TC_SPREAD))
        warp_keys = cupy.flatnonzero((dplus > 0) & small).astype(cupy.int32)
        if warp_keys.size:
            launch(_fn(f"tc_keyed_warp<{mode}>"), warp_keys.size,
                   (deg, ptr, oind, ooff, dplus, warp_keys, i64(warp_keys.size), spread, total,
                    tri), threads_per_item=32)
        for table, sel in zip(TC_TABLES, (big & fits, big & ~fits)):
            keys = cupy.flatnonzero(sel).astype(cupy.int32)
            if keys.size:
                keys, jbeg, rbeg = _block_items(keys, deg, dplus, table)
                launch(_fn(f"tc_keyed_block<{mode}, {table}>"), keys.size,
                       (deg, ptr, oind, ooff, dplus, keys, jbeg,
                        NULL if rbeg is None else rbeg, np.int32(TC_SPLIT), i64(keys.size),
                        spread, total, tri), threads_per_item=BLOCK)
    return int(total.get()[0]), (tri.view(cupy.int64) if mode == 1 else None)


def support_keyed(deg, ptr, eptr, n: int, num_edges: int):
    """int32 (num_edges,): triangles of every undirected edge of the sorted graph (deg int32
    (n,), ptr int64 (n,), no self-loops; eptr int64 (n,): per-vertex addresses of the int64
    edge ids of the lists' entries), by the keyed hash kernels (triangles.cu: every triangle
    found once, at the key of one of its edges). SUPPORT_KEYED False: :func:`count_oriented`."""
    if not SUPPORT_KEYED:
        return count_oriented(orient(deg, ptr, n, eptr=eptr), 2, num_edges=num_edges)[2]
    oind, ooff, dplus, oeid, m = orient_in_place(deg, ptr, n, eptr=eptr)
    sup = cupy.zeros(num_edges, dtype=cupy.int32)
    if m:
        if m > TC_MAX_OUT and int(dplus.max()) > TC_MAX_OUT:    # (dplus <= m)
            return count_oriented(orient(deg, ptr, n, eptr=eptr), 2, num_edges=num_edges)[2]
        small = (dplus <= TC_WARP_LIST) & (deg <= TC_WARP_DEGREE)
        big = (dplus > 0) & ~small
        fits = dplus <= TC_SUPPORT_TABLES[0] // 2
        spread = np.int32(max(2, TC_SPREAD))
        warp_keys = cupy.flatnonzero((dplus > 0) & small).astype(cupy.int32)
        if warp_keys.size:
            launch(_fn("tc_support_warp"), warp_keys.size,
                   (deg, ptr, eptr, oind, ooff, oeid, dplus, warp_keys, i64(warp_keys.size),
                    spread, sup), threads_per_item=32)
        for table, sel in zip(TC_SUPPORT_TABLES, (big & fits, big & ~fits)):
            keys = cupy.flatnonzero(sel).astype(cupy.int32)
            if keys.size:
                keys, jbeg, _ = _key_parts(keys, deg)
                launch(_fn(f"tc_support_block<{table}>"), keys.size,
                       (deg, ptr, eptr, oind, ooff, oeid, dplus, keys, jbeg, np.int32(TC_SPLIT),
                        i64(keys.size), spread, sup), threads_per_item=BLOCK)
    return sup


def triangle_count(view: AdjacencyView) -> int:
    und = symmetrized(view)
    deg, ptr = view_arrays(und)
    return count_keyed(deg, ptr, und.num_vertices, 0)[0]


def triangles_per_vertex(view: AdjacencyView):
    und = symmetrized(view)
    deg, ptr = view_arrays(und)
    return count_keyed(deg, ptr, und.num_vertices, 1)[1]


def _support(index: EdgeIndex):
    eids = index.entry_eids()
    eptr = address(eids) + 8 * index.off[:-1]
    return support_keyed(index.deg, index.ptr, eptr, index.view.num_vertices, index.num_edges)


def _per_input_edge(entry_map, values, fill=0):
    if entry_map is None:
        return values
    out = cupy.full(entry_map.shape[0], fill, dtype=values.dtype)
    ok = entry_map >= 0
    out[ok] = values[entry_map[ok]]
    return out


def edge_support(view: AdjacencyView):
    und = symmetrized(view)
    index = EdgeIndex.build(und)
    sup = _support(index)
    if not view.directed:
        return sup
    return _per_input_edge(index.map_entries(view), sup)
