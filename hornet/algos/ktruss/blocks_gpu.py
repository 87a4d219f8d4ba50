"""Dense truss blocks of the GPU :class:`~hornet.algos.ktruss.dynamic_gpu.GpuDynamicTruss`
(kernels in ``blocks_gpu.cu``): the truss numbers of dense, high-level parts of the graph (a
collaboration graph's cliques) kept in int16 matrices on the device, as the CPU's
:mod:`hornet.algos.ktruss.dense` keeps them on the host.

The blocks are those of :func:`~hornet.algos.ktruss.dense.find_blocks` (chosen once, from the
first static decomposition; the prefix of those with at most :data:`MAX_ROWS` rows): per block
a vertex set D, its edges B, and the rows of its matrix (D and its ghosts). Why a block can be
updated alone (dense.py): while every block's lowest number (its floor) is above the highest
number of its boundary (the other edges at its vertices, those of higher blocks excepted), the
numbers of B are the truss numbers of B and of the higher blocks' edges among its rows, the
latter counted as present at every level; every other edge sees a block edge as a triangle
alive above its own level, so the sparse kernels never need a block edge's rank.

A deletion (:meth:`GpuBlocks.delete`): the deleted entries go from the matrices (``bk_delete``)
and the blocks descend from their old values by the h-index (``bk_descend``: rounds in one
cooperative launch, a grid barrier between them); the block edges never enter the sparse
descent's worklist (``bk_mark``). An insertion (:meth:`GpuBlocks.insert`): an edge that was a
block entry takes its place again at its triangles in the block plus 2 (``bk_newbound``), the
block's values below the highest of those rise to upper bounds (one insertion raises a number
by at most one: value plus entries gained, at most the rows; ``bk_raise``) and descend; the
edges outside the blocks go first in the list the k-order scan starts from (their lower bounds
and places), the block edges last (only their triangle partners become seeds, at the blocks'
exact values). After the scan, :meth:`GpuBlocks.check` compares every floor with the boundary's
highest number (``bk_boundary``; a new edge at a block's vertices that was no entry of it, both
ends there or not, is a boundary edge). A floor at its boundary reports failure, and the caller
finishes the batch with the static decomposition, after which :meth:`GpuBlocks.refresh` takes
the matrices from its numbers (a block that lost its separation is dropped with the lower ones).
"""
from __future__ import annotations

import os

import numpy as np

from .dense import HIGH, MIN_BLOCK_LEVEL, find_blocks

__all__ = ["GpuBlocks", "blocks_after_static"]

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "blocks_gpu.cu")
#: the most rows of a block (BK_MAXN in blocks_gpu.cu: one warp's histogram)
MAX_ROWS = 1280
#: graphs with more edges get no blocks (the host's block search runs once, at the start)
MAX_EDGES = 1 << 21
#: boundary keys an insertion may append (new edges at a block's vertices) before a refresh
EXTRA_KEYS = 1 << 16
#: the most descent rounds of one update
MAX_ROUNDS = 4096
#: control words (BK_* in blocks_gpu.cu)
BK_FAIL, BK_TOUCH, BK_NSPARSE, BK_NBLOCK, BK_NEXTRA, BK_ROUNDS, BK_WORDS = 0, 1, 2, 3, 4, 5, 12
#: the grid barrier's three words of bk_descend (cleared with the control words)
BK_BAR = 9
BLOCK = 256


def _fn(name: str):
    from hornet.core.cuda import function
    return function(_CU, name)


_PREPARED: dict = {}


def _launch(name: str, grid: int, values) -> None:
    """Kernel ``name`` on ``grid`` blocks with ``values`` (one int per parameter) through a
    reused prepared launch."""
    from hornet.core.cuda import PreparedLaunch
    p = _PREPARED.get(name)
    if p is None:
        p = _PREPARED[name] = PreparedLaunch(_fn(name), len(values))
    p(max(1, int(grid)), BLOCK, values)


def _descend_launch(grid_cache={}):
    """(prepared cooperative launch of ``bk_descend``, its grid: every multiprocessor's
    resident blocks)."""
    import cupy
    from hornet.core.cuda import CooperativeLaunch
    dev = cupy.cuda.Device().id
    if dev not in grid_cache:
        launch = CooperativeLaunch(_fn("bk_descend"), 17)
        kernel = launch.fn.kernel
        sms = int(cupy.cuda.Device().attributes["MultiProcessorCount"])
        fit = int(cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            kernel.ptr, BLOCK, 0))
        grid_cache[dev] = (launch, max(1, fit) * sms)
    return grid_cache[dev]


def _grid(n: int) -> int:
    return min(max(1, -(-int(n) // BLOCK)), 1 << 16)


def _keys(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """int64 edge-table keys (min << 32 | max) of the pairs (et_key)."""
    u = np.asarray(u, np.int64)
    v = np.asarray(v, np.int64)
    return (np.minimum(u, v) << 32) | np.maximum(u, v)


class GpuBlocks:
    """The dense blocks of one GPU dynamic truss (see the module). Device arrays: the
    matrices ``F`` (int16, concatenated), per block ``foff`` (int64), ``nd``, ``roff``,
    ``xfail`` (int32: the boundary's highest number known), per entry (sorted by key)
    ``ekey`` (int64), ``e_blk``, ``e_i``, ``e_j``, ``e_slot`` (int32; -1: deleted), the high
    pairs ``hkey``, ``h_blk``, ``h_i``, ``h_j``, the boundary keys ``bkey``, ``bblk`` and the
    appended ones ``xkey``, ``xblk``, and ``vmask`` (int64 per vertex: a bit per block of
    which it is a vertex)."""

    def __init__(self, cp, blocks, src, dst, truss, slots, n: int):
        self._cp = cp
        nb = len(blocks)
        owner = np.full(src.shape[0], -1, np.int64)
        for b, (_, edges, _, _) in enumerate(blocks):
            owner[edges] = b
        vmask = np.zeros(max(n, 1), np.int64)
        mats, foff, nds, roff = [], [], [], []
        ek, eb, ei, ej, es = [], [], [], [], []
        hk, hb, hi, hj = [], [], [], []
        bk, bb = [], []
        off = rows = 0
        for b, (real, edges, xmax, ghosts) in enumerate(blocks):
            vertices = np.union1d(real, ghosts).astype(np.int64)
            nd = vertices.shape[0]
            i = np.searchsorted(vertices, src[edges])
            j = np.searchsorted(vertices, dst[edges])
            li, lj = np.minimum(i, j), np.maximum(i, j)
            F = np.zeros((nd, nd), np.int16)
            F[li, lj] = F[lj, li] = truss[edges]
            # the higher blocks' edges among its rows
            pos = np.full(max(n, 1), -1, np.int64)
            pos[vertices] = np.arange(nd)
            high = np.flatnonzero((owner >= 0) & (owner < b))
            high = high[(pos[src[high]] >= 0) & (pos[dst[high]] >= 0)]
            a, c = pos[src[high]], pos[dst[high]]
            F[a, c] = F[c, a] = HIGH
            hk.append(_keys(src[high], dst[high]))
            hb.append(np.full(high.shape[0], b, np.int32))
            hi.append(np.minimum(a, c).astype(np.int32))
            hj.append(np.maximum(a, c).astype(np.int32))
            ek.append(_keys(src[edges], dst[edges]))
            eb.append(np.full(edges.shape[0], b, np.int32))
            ei.append(li.astype(np.int32))
            ej.append(lj.astype(np.int32))
            es.append(slots[edges].astype(np.int32))
            # the boundary: other edges at its vertices, not of it or of a higher block
            vmask[real] |= np.int64(1) << b
            inside = np.zeros(max(n, 1), bool)
            inside[real] = True
            bnd = np.flatnonzero((inside[src] | inside[dst]) & ~((owner >= 0) & (owner <= b)))
            bk.append(_keys(src[bnd], dst[bnd]))
            bb.append(np.full(bnd.shape[0], b, np.int32))
            mats.append(F.ravel())
            foff.append(off)
            nds.append(nd)
            roff.append(rows)
            off += nd * nd
            rows += nd
        ekey = np.concatenate(ek)
        order = np.argsort(ekey, kind="stable")
        hkey = np.concatenate(hk) if hk else np.zeros(0, np.int64)
        horder = np.argsort(hkey, kind="stable")
        up = cp.asarray
        self.nblocks, self.rows = nb, rows
        self._slots = nb                          # (blocks the control words have room for)
        self.m, self.nh = int(ekey.shape[0]), int(hkey.shape[0])
        self.F = up(np.concatenate(mats))
        self.foff = up(np.asarray(foff, np.int64))
        self.nd = up(np.asarray(nds, np.int32))
        self.roff = up(np.asarray(roff, np.int32))
        self.xfail = up(np.asarray([x for _, _, x, _ in blocks], np.int32))
        self.ekey = up(ekey[order])
        self.e_blk = up(np.concatenate(eb)[order])
        self.e_i = up(np.concatenate(ei)[order])
        self.e_j = up(np.concatenate(ej)[order])
        self.e_slot = up(np.concatenate(es)[order])
        self.hkey = up(hkey[horder])
        self.h_blk = up(np.concatenate(hb)[horder]) if hb else up(np.zeros(0, np.int32))
        self.h_i = up(np.concatenate(hi)[horder]) if hi else up(np.zeros(0, np.int32))
        self.h_j = up(np.concatenate(hj)[horder]) if hj else up(np.zeros(0, np.int32))
        self.bkey = up(np.concatenate(bk))
        self.bblk = up(np.concatenate(bb))
        self.xkey = cp.zeros(EXTRA_KEYS, dtype=cp.int64)
        self.xblk = cp.zeros(EXTRA_KEYS, dtype=cp.int32)
        self.nextra = 0
        self.vmask = up(vmask)
        # control words, then per block: active, gained, BK_HIGH - floor, boundary maximum,
        # the highest value a new entry may reach
        import cupyx
        self._ctl = cp.zeros(BK_WORDS + 5 * nb, dtype=cp.int32)
        self._ctl_host = cupyx.empty_pinned(BK_WORDS + 5 * nb, dtype=np.int32)
        self.active, self.gained, self.floorinv, self.bmax, self.top = (
            self._ctl[BK_WORDS + x * nb:BK_WORDS + (x + 1) * nb] for x in range(5))
        self.efirst = cp.zeros(self.m, dtype=cp.int32)     # (entries of a descent's 1st round)
        self._stamp = 0
        self._none = cp.zeros(nb, dtype=cp.int32)
        self._ranges = cp.zeros((3, 2 * rows), dtype=cp.int32)
        self._out = None
        self._keys_ptr = None
        self.rounds = 0
        self.touched = 0

    # ------------------------------------------------------------------ helpers
    def _clear(self) -> None:
        import cupy
        s = cupy.cuda.get_current_stream().ptr
        cupy.cuda.runtime.memsetAsync(self._ctl.data.ptr, 0, self._ctl.nbytes, s)
        cupy.cuda.runtime.memsetAsync(self._ranges.data.ptr, 0, self._ranges.nbytes, s)

    def _read(self) -> np.ndarray:
        self._ctl.get(out=self._ctl_host)
        return self._ctl_host

    def _relocate(self, table) -> None:
        """The table was rehashed: the present entries' slots looked up again."""
        ptr = table.keys.data.ptr
        if ptr == self._keys_ptr:
            return
        self._keys_ptr = ptr
        cp = self._cp
        k = self.ekey
        found = table.lookup((k >> 32).astype(cp.int32), (k & 0xFFFFFFFF).astype(cp.int32))
        self.e_slot[...] = cp.where(self.e_slot >= 0, found, -1).astype(cp.int32)

    def _descend(self, first: int, xfail) -> None:
        """The descent (``bk_descend``, one cooperative launch) from the rows opened in the
        first range buffer (and, ``first`` > 0, every entry with ``efirst == first`` in the
        first round); a value falling to its block's bound (``xfail``) sets ``BK_FAIL``."""
        P = _ptr
        launch, grid = _descend_launch()
        launch(grid, BLOCK, (
            P(self.e_blk), P(self.e_i), P(self.e_j), P(self.e_slot), self.m, P(self.F),
            P(self.foff), P(self.nd), P(self.roff), P(xfail), P(self.efirst), int(first),
            P(self._ranges), self.rows, MAX_ROUNDS, P(self._ctl), P(self._ctl) + 4 * BK_BAR))

    def _outcome(self) -> bool:
        """Whether the last descent ended without ``BK_FAIL`` (from the host copy of the
        control words, current after a read); sets ``rounds`` and ``touched``."""
        w = self._ctl_host
        self.rounds, self.touched = int(w[BK_ROUNDS]), int(w[BK_TOUCH])
        if w[BK_BAR + 2]:
            raise RuntimeError("bk_descend: a grid barrier timed out")
        return not w[BK_FAIL]

    def _write(self, truss) -> None:
        P = _ptr
        _launch("bk_write", _grid(self.m), (
            P(self.e_blk), P(self.e_i), P(self.e_j), P(self.e_slot), self.m, P(self.F),
            P(self.foff), P(self.nd), P(self.active), P(self.gained), P(truss),
            P(self.floorinv)))

    # ------------------------------------------------------------------ updates
    def mark(self, mark, stamp) -> None:
        """``mark[slot] = stamp`` for every block edge (the deletion's seeds skip them)."""
        P = _ptr
        _launch("bk_mark", _grid(self.m), (P(self.e_slot), self.m, P(mark), int(stamp)))

    def delete(self, table, src, dst, mark, stamp) -> None:
        """The blocks' part of a deletion batch (``src, dst`` int32 CuPy, the edges still in
        the table): deleted entries out, descent, new values into the table's truss column,
        then ``mark[slot] = stamp`` for every block edge (:meth:`mark`). Nothing is read back
        here: :meth:`deleted` tells the outcome after the caller's next read."""
        self._relocate(table)
        self._clear()
        P = _ptr
        nb = int(src.shape[0])
        _launch("bk_delete", _grid(nb), (
            P(src), P(dst), nb, P(self.ekey), self.m, P(self.e_blk), P(self.e_i),
            P(self.e_j), P(self.e_slot), P(self.hkey), self.nh, P(self.h_blk), P(self.h_i),
            P(self.h_j), P(self.F), P(self.foff), P(self.nd), P(self.roff),
            P(self._ranges), P(self.active), P(self._ctl)))
        self._descend(0, self.xfail)
        self._ctl.get(out=self._ctl_host, blocking=False)
        self._write(table.columns["truss"])
        self.mark(mark, stamp)

    def deleted(self) -> bool:
        """After :meth:`delete` and a synchronizing read of the caller: False when a block
        fell to its boundary's number (the caller falls back)."""
        return self._outcome()

    def insert(self, table, slots, low, mark, stamp):
        """The blocks' part of an insertion batch (``slots`` int64 CuPy: the new edges' table
        slots, their truss numbers 0). Returns ``(listed, sparse, ok)``: ``listed`` (int64,
        the same slots) with the edges outside the blocks first (``sparse`` of them) and those
        that joined a block after, their exact numbers in the table and in ``low[sparse:]``;
        ``sparse`` -1 when the batch needs the static decomposition. Every block edge gets
        ``mark[slot] = stamp`` (the seeds of the scan, listed once by that mark, skip them)."""
        cp = self._cp
        self._relocate(table)
        self._clear()
        P = _ptr
        nb = int(slots.shape[0])
        if self._out is None or self._out[0].shape[0] < nb:
            self._out = (cp.empty(max(nb, 1024), dtype=cp.int64),
                         cp.empty(max(nb, 1024), dtype=cp.int32))
        out, out_q = self._out[0][:nb], self._out[1][:nb]
        room = EXTRA_KEYS - self.nextra
        _launch("bk_insert", _grid(nb), (
            P(table.keys), P(slots), nb, P(self.ekey), self.m, P(self.e_blk), P(self.e_i),
            P(self.e_j), P(self.e_slot), P(self.hkey), self.nh, P(self.h_blk), P(self.h_i),
            P(self.h_j), P(self.F), P(self.foff), P(self.nd), P(self.gained), P(self.top),
            P(self.vmask),
            int(self.vmask.shape[0]), P(self.xkey[self.nextra:]), P(self.xblk[self.nextra:]),
            room, P(out), P(out_q), P(self._ctl)))
        w = self._read()
        fail = int(w[BK_FAIL])
        sparse, joined = int(w[BK_NSPARSE]), int(w[BK_NBLOCK])
        self.touched = int(w[BK_TOUCH])
        self.nextra += min(int(w[BK_NEXTRA]), room)
        if fail:
            return out, -1
        if self.touched:
            self._stamp += 1
            if joined:
                _launch("bk_newbound", _grid(joined * 32), (
                    P(out_q), nb, joined, P(self.e_blk), P(self.e_i), P(self.e_j), P(self.F),
                    P(self.foff), P(self.nd), P(self.top), P(self.efirst), self._stamp))
            _launch("bk_raise", _grid(self.m), (
                P(self.e_blk), P(self.e_i), P(self.e_j), P(self.e_slot), self.m, P(self.F),
                P(self.foff), P(self.nd), P(self.gained), P(self.top), P(self.efirst),
                self._stamp))
            # (no bound: the boundary may rise too; check() compares them after the scan)
            self._descend(self._stamp, self._none)       # (its outcome: read by check())
            self._write(table.columns["truss"])
            if joined:
                _launch("bk_joined", _grid(joined), (
                    P(out_q), nb, joined, P(self.e_blk), P(self.e_i), P(self.e_j), P(self.F),
                    P(self.foff), P(self.nd), P(low)))
        self.mark(mark, stamp)
        return out, sparse

    def check(self, table) -> bool:
        """Whether every block's floor is above its boundary's highest number (after an
        insertion's scan) and the insertion's descent ended; keeps that number as the bound
        of later deletions."""
        cp = self._cp
        P = _ptr
        cp.cuda.runtime.memsetAsync(self.floorinv.data.ptr, 0, 2 * 4 * self._slots,
                                    cp.cuda.get_current_stream().ptr)
        self._write(table.columns["truss"])
        for keys, blk, n in ((self.bkey, self.bblk, int(self.bkey.shape[0])),
                             (self.xkey, self.xblk, self.nextra)):
            if n:
                _launch("bk_boundary", _grid(n), (
                    P(keys), P(blk), n, P(table.keys), table.shift,
                    P(table.columns["truss"]), P(self.bmax)))
        w = self._read()
        nb = self._slots
        floor = HIGH - w[BK_WORDS + 2 * nb:BK_WORDS + 3 * nb].astype(np.int64)
        bmax = w[BK_WORDS + 3 * nb:BK_WORDS + 4 * nb].astype(np.int64)
        self.xfail[...] = self.bmax
        self.separated = int(np.argmin(floor > bmax)) if (floor <= bmax).any() else nb
        return self._outcome() and self.separated == nb

    def keep(self, nb: int) -> None:
        """Keep the first ``nb`` blocks (those above a block that lost its separation: a
        lower block's edges are on their boundaries, so they hold without it)."""
        if nb >= self.nblocks:
            return
        cp = self._cp
        e = cp.flatnonzero(self.e_blk < nb)
        for name in ("ekey", "e_blk", "e_i", "e_j", "e_slot"):
            setattr(self, name, getattr(self, name)[e])
        h = cp.flatnonzero(self.h_blk < nb)
        for name in ("hkey", "h_blk", "h_i", "h_j"):
            setattr(self, name, getattr(self, name)[h])
        k = cp.flatnonzero(self.bblk < nb)
        self.bkey, self.bblk = self.bkey[k], self.bblk[k]
        self.vmask &= (1 << nb) - 1
        self.m, self.nh, self.nblocks = int(e.shape[0]), int(h.shape[0]), nb
        self.efirst = cp.zeros(self.m, dtype=cp.int32)
        self.nextra = 0

    def _boundary(self, src, dst) -> None:
        """The boundary keys of every block from the graph's edges ``src, dst`` (CuPy): the
        edges at its vertices that are no entry of it or of a higher block; the appended
        keys are dropped."""
        cp = self._cp
        s, d = src.astype(cp.int64), dst.astype(cp.int64)
        keys = (cp.minimum(s, d) << 32) | cp.maximum(s, d)
        at = cp.minimum(cp.searchsorted(self.ekey, keys), max(self.m - 1, 0))
        owner = cp.where(self.ekey[at] == keys, self.e_blk[at], self.nblocks).astype(cp.int64)
        # the blocks at an end, less the edge's own block and the higher ones (bits >= owner)
        bits = (self.vmask[s] | self.vmask[d]) & ((cp.int64(1) << owner) - 1)
        b = cp.arange(self.nblocks, dtype=cp.int64)[:, None]
        blk, at = cp.nonzero((bits[None, :] >> b) & 1)
        self.bkey, self.bblk = keys[at], blk.astype(cp.int32)
        self.nextra = 0

    def refresh(self, table, src, dst) -> bool:
        """After a static decomposition of the graph with edges ``src, dst``: every entry's
        presence and value (and the high pairs') from the table, the boundary from the
        edges. False when a block is no longer separated."""
        cp = self._cp
        self._boundary(src, dst)
        self._keys_ptr = None
        self._clear()
        k = self.ekey
        slot = table.lookup((k >> 32).astype(cp.int32), (k & 0xFFFFFFFF).astype(cp.int32))
        self.e_slot[...] = slot.astype(cp.int32)
        truss = table.columns["truss"]
        val = cp.where(slot >= 0, truss[cp.maximum(slot, 0)], 0).astype(cp.int16)
        nd = self.nd[self.e_blk].astype(cp.int64)
        base = self.foff[self.e_blk]
        ei, ej = self.e_i.astype(cp.int64), self.e_j.astype(cp.int64)
        self.F[base + ei * nd + ej] = val
        self.F[base + ej * nd + ei] = val
        if self.nh:
            h = self.hkey
            hs = table.lookup((h >> 32).astype(cp.int32), (h & 0xFFFFFFFF).astype(cp.int32))
            hv = cp.where(hs >= 0, HIGH, 0).astype(cp.int16)
            nd = self.nd[self.h_blk].astype(cp.int64)
            base = self.foff[self.h_blk]
            hi, hj = self.h_i.astype(cp.int64), self.h_j.astype(cp.int64)
            self.F[base + hi * nd + hj] = hv
            self.F[base + hj * nd + hi] = hv
        return self.check(table)

    @property
    def eblock(self) -> np.ndarray:
        """(host, for checks) int32 per table slot: the block of that edge, -1 none."""
        slot = self.e_slot.get()
        out = np.full(int(slot.max()) + 1 if slot.shape[0] else 0, -1, np.int32)
        keep = slot >= 0
        out[slot[keep]] = self.e_blk.get()[keep]
        return _Padded(out)


class _Padded:
    """An int32 per-slot array that reads -1 past its end (a slot or an array of slots)."""

    def __init__(self, a: np.ndarray):
        self.a = a

    def __getitem__(self, s):
        idx = np.asarray(s, dtype=np.int64)
        inside = idx < self.a.shape[0]
        out = np.full(idx.shape, -1, np.int32)
        out[inside] = self.a[idx[inside]]
        return int(out) if out.ndim == 0 else out


def _ptr(a) -> int:
    return a.data.ptr



def blocks_after_static(kt, src, dst, truss):
    """The blocks of the GPU dynamic truss ``kt`` after its static decomposition (``src,
    dst``: the undirected edges, ``truss`` their numbers, CuPy): on the first one, chosen by
    :func:`~hornet.algos.ktruss.dense.find_blocks` (None without any, on a directed graph or
    one of more than :data:`MAX_EDGES` edges); later, the existing blocks refreshed from the
    table (None when one lost its separation)."""
    cp = kt._cp
    blocks = getattr(kt, "_blocks", None)
    if blocks is not None:
        if not blocks.refresh(kt._table, src, dst):
            blocks.keep(blocks.separated)        # (those above the first unseparated one)
            if blocks.nblocks == 0 or not blocks.refresh(kt._table, src, dst):
                return None
        return blocks
    if getattr(kt, "_blocks_tried", False):
        return None
    kt._blocks_tried = True
    m = int(truss.shape[0])
    if kt.graph.directed or m == 0 or m > MAX_EDGES or int(truss.max()) < MIN_BLOCK_LEVEL:
        return None
    hs, hd, ht = src.get().astype(np.int64), dst.get().astype(np.int64), truss.get()
    n = int(max(hs.max(), hd.max())) + 1
    found = find_blocks(hs, hd, ht.astype(np.int64), n)
    keep = []
    for real, edges, xmax, ghosts in found:
        if np.union1d(real, ghosts).shape[0] > MAX_ROWS or len(keep) >= 63:
            break
        keep.append((real, edges, xmax, ghosts))
    if not keep:
        return None
    slots = kt._table.lookup(src, dst).get()
    out = GpuBlocks(cp, keep, hs, hd, ht, slots, n)
    return out if out.check(kt._table) else None
