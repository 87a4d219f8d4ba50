"""Dynamic BFS from a fixed source: levels (and parents) kept equal to :func:`hornet.algos.bfs`.

    bf = DynamicBFS(g, source, parents=True)     # one BFS (small CPU graphs: one update)
    change = g.insert_edges(s, d)                # any insert / delete / update / vertex batch
    bf.update(change)                            # right after every change
    bf.levels, bf.parents                        # == bfs(g, source, return_parents=True)

State (per vertex of the id space): ``level[v]`` (-1 unreached) and ``cnt[v]``, the number of
in-neighbours of ``v`` on level ``level[v] - 1`` (its parents). An update works only where the
change reaches, in one level-synchronous pass over the whole batch (never edge by edge):

1. Counts: every deleted edge ``a -> b`` with ``level[a] + 1 == level[b]`` takes one parent from
   ``b``; every inserted one gives one. The counts now describe the new graph at the old levels.
2. Marking (deletions): a reached vertex left with no parent must move down; so must every vertex
   all of whose parents move. Candidates are processed level by level in increasing order:
   a marked ``w`` takes one parent from each child (out-neighbour on ``level[w] + 1``); a child
   left with none is marked in turn. The marked set ``M`` is exactly the set of vertices whose
   level can no longer stand.
3. Seeds: every vertex of ``M`` is reset to unreached and seeded with 1 + the lowest level among
   its in-neighbours outside ``M``; every inserted edge ``a -> b`` with ``level[a] + 1 <
   level[b]`` (or ``b`` unreached) seeds ``b`` with ``level[a] + 1``.
4. Relaxation: a BFS that starts from the seeds in increasing level order and continues only
   where a level strictly decreases. Every level is an upper bound on the distance before it and
   every edge whose end could improve is relaxed, so the result is exact; vertices of ``M`` it
   never reaches stay unreached.
5. Repair: vertices whose level was set in 3-4 recount their parents over their in-neighbours;
   their out-neighbours outside that set adjust their counts by the difference of old and new
   level (marked vertices' old contribution was already removed in 2). Parents that are no
   longer valid (deleted edge, or the parent moved) are replaced by the first in-neighbour on
   the level above.

Directed graphs need in-neighbours (steps 3 and 5): a reverse index, itself a directed
:class:`hornet.Graph` of the reversed edges on the graph's device, is updated from the same
changes (O(batch) per update). Undirected graphs use their own adjacency.

Work per update: the marked and re-levelled vertices and their adjacency lists, plus the batch;
no pass over all vertices. Per-vertex scratch (flags, old levels, lists) lives in arrays sized
to the id space's capacity, allocated when the id space grows (doubling), and only the entries an
update touched are reset. :attr:`DynamicBFS.last_update` reports the touched region.

GPU graphs run the same steps as the phases of one CUDA kernel per update whose blocks are all
resident (:mod:`hornet.algos.bfs.dynamic_gpu`): grid barriers between levels instead of host
round trips (block barriers once the work left is small enough for one block), preallocated
lists, long adjacency lists split over the whole device.
"""
from __future__ import annotations

import ctypes

import numpy as np

from hornet.change import EdgeChange
from hornet.core.pointers import int32_view, prefetch, prefetch_write
from ...core.jit import njit
from ...id_mapping import source_ids

__all__ = ["DynamicBFS"]

#: statistics of one update, in the order the kernels fill the int64 stats array
STAT_NAMES = ("changed_vertices", "marked_vertices", "seeds", "scanned_edges", "levels")
#: columns of the per-vertex int32 record
LEVEL, COUNT, OLD, FLAG = 0, 1, 2, 3

_FLAG_CHANGED = 1      # level set by a seed or the relaxation (old level in ``old``)
_FLAG_MARKED = 2       # marked in step 2 (level reset, old level in ``old``)
_FLAG_ORPHAN = 3       # level unchanged, parent no longer valid
#: graphs of at most this many edges are built by one update (:meth:`_CPUState._rebuild`)
#: rather than by the static BFS, whose kernels a short run then never compiles
BUILD_BY_UPDATE_MAX_EDGES = 1 << 20


@njit(inline="always")
def _edge(src, dst, k, undirected):
    """The k-th directed pair of a change (undirected: each edge both ways)."""
    if undirected:
        i = k >> 1
        if k & 1:
            return dst[i], src[i]
        return src[i], dst[i]
    return src[k], dst[k]


_RADIX_BITS = 11


@njit
def _radix_order(keys, n, lo, span):
    """:func:`_order_by` for keys spread over ``span`` values from ``lo`` (LSD radix sort,
    stable)."""
    order = np.arange(n)
    spare = np.empty(n, np.int64)
    mask = (1 << _RADIX_BITS) - 1
    shift = 0
    while ((span - 1) >> shift) > 0:
        start = np.zeros((1 << _RADIX_BITS) + 1, np.int64)
        for i in range(n):
            start[((np.int64(keys[order[i]]) - lo) >> shift & mask) + 1] += 1
        for b in range(1 << _RADIX_BITS):
            start[b + 1] += start[b]
        for i in range(n):
            r = order[i]
            b = (np.int64(keys[r]) - lo) >> shift & mask
            spare[start[b]] = r
            start[b] += 1
        order, spare = spare, order
        shift += _RADIX_BITS
    return order


@njit
def _order_by(keys, n):
    """Indices sorting ``keys[:n]`` (small non-negative ints: levels) ascending, stable: a
    counting sort when their range is small (the usual case), else a radix sort by
    :data:`_RADIX_BITS`-bit digits (no NumPy sort compiled into the kernel: that doubled
    its compile time for a branch few batches take)."""
    order = np.empty(n, np.int64)
    if n == 0:
        return order
    lo = keys[0]
    hi = keys[0]
    for i in range(n):
        k = keys[i]
        if k < lo:
            lo = k
        if k > hi:
            hi = k
    span = hi - lo + 1
    if span > 4 * n + 64:
        return _radix_order(keys, n, lo, span)
    start = np.zeros(span + 1, np.int64)
    for i in range(n):
        start[keys[i] - lo + 1] += 1
    for b in range(span):
        start[b + 1] += start[b]
    for i in range(n):
        b = keys[i] - lo
        order[start[b]] = i
        start[b] += 1
    return order


@njit
def _initial_counts(deg, ptr, rec, n):
    """rec[v, COUNT] = in-neighbours on level[v] - 1, from the out-lists (one pass;
    construction only)."""
    for v in range(n):
        rec[v, COUNT] = 0
    for u in range(n):
        lu = rec[u, LEVEL]
        d = deg[u]
        if lu < 0 or d == 0:
            continue
        row = int32_view(ptr[u], d)
        for j in range(d):
            x = row[j]
            if rec[x, LEVEL] == lu + 1:
                rec[x, COUNT] += 1


@njit
def _update(deg, ptr, ideg, iptr, undirected, del_src, del_dst, ins_src, ins_dst,
            rec, parent, want_parent, lists, stats):
    """One batch (steps 1-5 of the module docstring).

    ``rec``: int32 (capacity, 4), per vertex [level, parent count, old level, flag] (one
    cache line holds all a vertex needs); flags all zero on entry and exit. ``parent``: int32
    (capacity,) when ``want_parent``. ``lists``: int32 (3, capacity) scratch (changed
    vertices, relaxation queue, orphans). ``stats`` (int64, len(STAT_NAMES)) receives the
    touched region."""
    changed = lists[0]
    queue = lists[1]
    orphans = lists[2]
    mult = 2 if undirected else 1
    nd = del_src.shape[0] * mult
    ni = ins_src.shape[0] * mult
    scanned = 0
    # the batch's records and list heads, requested all at once (their misses overlap)
    rec_base = rec.ctypes.data
    deg_base = deg.ctypes.data
    ptr_base = ptr.ctypes.data
    for k in range(del_src.shape[0]):
        prefetch_write(rec_base + 16 * np.int64(del_src[k]))
        prefetch_write(rec_base + 16 * np.int64(del_dst[k]))
    for k in range(ins_src.shape[0]):
        a = np.int64(ins_src[k])
        b = np.int64(ins_dst[k])
        prefetch_write(rec_base + 16 * a)
        prefetch_write(rec_base + 16 * b)
        prefetch(deg_base + 4 * b)
        prefetch(ptr_base + 8 * b)
        if undirected:
            prefetch(deg_base + 4 * a)
            prefetch(ptr_base + 8 * a)
    # ---- 1. counts at the old levels
    for k in range(nd):
        a, b = _edge(del_src, del_dst, k, undirected)
        la = rec[a, LEVEL]
        if la >= 0 and la + 1 == rec[b, LEVEL]:
            rec[b, COUNT] -= 1
    for k in range(ni):
        a, b = _edge(ins_src, ins_dst, k, undirected)
        la = rec[a, LEVEL]
        if la >= 0 and la + 1 == rec[b, LEVEL]:
            rec[b, COUNT] += 1
    # ---- 2. marking, level by level (levels untouched until it ends)
    cand = np.empty(nd, np.int32)
    cand_level = np.empty(nd, np.int32)
    nc = 0
    for k in range(nd):
        a, b = _edge(del_src, del_dst, k, undirected)
        if rec[b, LEVEL] > 0 and rec[b, COUNT] == 0 and rec[b, FLAG] == 0:
            rec[b, FLAG] = _FLAG_MARKED
            rec[b, OLD] = rec[b, LEVEL]
            cand[nc] = b
            cand_level[nc] = rec[b, LEVEL]
            nc += 1
    order = _order_by(cand_level, nc)
    nm = 0           # changed[:nm]: the marked vertices, in level order
    head = 0
    ci = 0
    cur = 0
    while True:
        if head == nm:
            if ci == nc:
                break
            cur = cand_level[order[ci]]
        while ci < nc and cand_level[order[ci]] == cur:
            changed[nm] = cand[order[ci]]
            nm += 1
            ci += 1
        end = nm
        while head < end:
            w = changed[head]
            head += 1
            d = deg[w]
            if d == 0:
                continue
            scanned += d
            row = int32_view(ptr[w], d)
            for j in range(d):
                x = row[j]
                if rec[x, LEVEL] == cur + 1 and rec[x, FLAG] != _FLAG_MARKED:
                    rec[x, COUNT] -= 1
                    if rec[x, COUNT] == 0:
                        rec[x, FLAG] = _FLAG_MARKED
                        rec[x, OLD] = cur + 1
                        changed[nm] = x
                        nm += 1
        cur += 1
    # ---- 3. seeds
    for i in range(nm):
        v = changed[i]
        rec[v, LEVEL] = -1
        rec[v, COUNT] = 0
        if want_parent:
            parent[v] = -1
    ns_max = nm + ni
    seed_v = np.empty(ns_max, np.int32)
    seed_t = np.empty(ns_max, np.int32)
    seed_p = np.empty(ns_max, np.int32)
    ns = 0
    for i in range(nm):
        v = changed[i]
        d = ideg[v]
        if d == 0:
            continue
        scanned += d
        row = int32_view(iptr[v], d)
        best = -1
        bp = -1
        for j in range(d):
            u = row[j]
            lu = rec[u, LEVEL]
            if lu >= 0 and (best < 0 or lu < best):
                best = lu
                bp = u
        if best >= 0:
            seed_v[ns] = v
            seed_t[ns] = best + 1
            seed_p[ns] = bp
            ns += 1
    for k in range(ni):
        a, b = _edge(ins_src, ins_dst, k, undirected)
        la = rec[a, LEVEL]
        if la >= 0:
            lb = rec[b, LEVEL]
            if lb < 0 or la + 1 < lb:
                seed_v[ns] = b
                seed_t[ns] = la + 1
                seed_p[ns] = a
                ns += 1
    order = _order_by(seed_t, ns)
    nchanged = nm
    nseeds = 0
    for i in range(ns):          # ascending: a vertex keeps its best seed only
        s = order[i]
        v = seed_v[s]
        t = seed_t[s]
        lv = rec[v, LEVEL]
        if lv < 0 or t < lv:
            if rec[v, FLAG] == 0:
                rec[v, FLAG] = _FLAG_CHANGED
                rec[v, OLD] = lv
                changed[nchanged] = v
                nchanged += 1
            rec[v, LEVEL] = t
            if want_parent:
                parent[v] = seed_p[s]
            order[nseeds] = s
            nseeds += 1
    # ---- 4. relaxation from the seeds, in increasing level order
    head = 0
    tail = 0
    si = 0
    levels_run = 0
    while True:
        if head == tail:
            if si == nseeds:
                break
            cur = seed_t[order[si]]
        while si < nseeds and seed_t[order[si]] == cur:
            v = seed_v[order[si]]
            si += 1
            if rec[v, LEVEL] == cur:
                queue[tail] = v
                tail += 1
        end = tail
        levels_run += 1
        while head < end:
            w = queue[head]
            head += 1
            d = deg[w]
            if d == 0:
                continue
            scanned += d
            row = int32_view(ptr[w], d)
            for j in range(d):
                x = row[j]
                lx = rec[x, LEVEL]
                if lx < 0 or lx > cur + 1:
                    if rec[x, FLAG] == 0:
                        rec[x, FLAG] = _FLAG_CHANGED
                        rec[x, OLD] = lx
                        changed[nchanged] = x
                        nchanged += 1
                    rec[x, LEVEL] = cur + 1
                    if want_parent:
                        parent[x] = w
                    queue[tail] = x
                    tail += 1
        cur += 1
    # ---- 5. repair counts and parents
    norph = 0
    if want_parent:
        for k in range(nd):
            a, b = _edge(del_src, del_dst, k, undirected)
            if rec[b, FLAG] == 0 and parent[b] == a and rec[b, LEVEL] > 0:
                rec[b, FLAG] = _FLAG_ORPHAN
                orphans[norph] = b
                norph += 1
    for i in range(nchanged):
        v = changed[i]
        lv = rec[v, LEVEL]
        c = 0
        if lv > 0 and not undirected:
            d = ideg[v]
            if d > 0:
                scanned += d
                row = int32_view(iptr[v], d)
                for j in range(d):
                    if rec[row[j], LEVEL] == lv - 1:
                        c += 1
        d = deg[v]
        if d > 0:
            scanned += d
            ov = rec[v, OLD] if rec[v, FLAG] != _FLAG_MARKED else -1    # marked: removed in step 2
            row = int32_view(ptr[v], d)
            for j in range(d):
                x = row[j]
                lx = rec[x, LEVEL]
                if undirected and lv > 0 and lx == lv - 1:
                    c += 1                                   # in-list == out-list
                fx = rec[x, FLAG]
                if (fx != 0 and fx != _FLAG_ORPHAN) or lx <= 0:
                    continue
                now = lv >= 0 and lv + 1 == lx
                before = ov >= 0 and ov + 1 == lx
                if now != before:
                    rec[x, COUNT] += 1 if now else -1
                if want_parent and not now and fx == 0 and parent[x] == v:
                    rec[x, FLAG] = _FLAG_ORPHAN
                    orphans[norph] = x
                    norph += 1
        rec[v, COUNT] = c
    for i in range(norph):
        x = orphans[i]
        lx = rec[x, LEVEL]
        d = ideg[x]
        scanned += d
        row = int32_view(iptr[x], d)
        for j in range(d):
            if rec[row[j], LEVEL] == lx - 1:
                parent[x] = row[j]
                break
        rec[x, FLAG] = 0
    for i in range(nchanged):
        rec[changed[i], FLAG] = 0
    stats[0] = nchanged
    stats[1] = nm
    stats[2] = nseeds
    stats[3] = scanned
    stats[4] = levels_run


class DynamicBFS:
    """BFS levels (and parents) from ``source``, kept equal to :func:`hornet.algos.bfs` on a
    changing :class:`hornet.Graph`.

    Parameters
    ----------
    g : hornet.Graph
        CPU or GPU graph, directed or undirected. Call :meth:`update` with every change the
        graph returns, right after that call.
    source : int, or an original id
        Start vertex (>= 0). It may lie beyond the current id space: until the graph grows to
        include it every vertex is unreached; from then on it is on level 0, also when it has
        no edges (as the static ``bfs``). For a graph with a vertex map: an original id the
        map holds (KeyError otherwise; ``g.insert_vertices([id])`` adds one without edges),
        kept as its dense id in ``self.source``.
    parents : bool, default False
        Also keep a BFS tree (:attr:`parents`).

    Attributes
    ----------
    levels : int32 array, shape (g.num_vertices,), on the graph's device
        Hop distance from ``source`` along out-edges (both ways when undirected); -1 where
        unreached. Equal to ``bfs(g, source)`` after every update. A view of the internal
        state (on the CPU a strided view of the per-vertex records): read it, do not write it;
        ``np.array(levels)`` makes a compact copy.
    parents : int32 array, shape (g.num_vertices,), on the graph's device (``parents=True``)
        A valid BFS parent of every reached vertex (an in-neighbour on the level above); -1 for
        the source and unreached vertices. Where several are valid the choice may differ from
        the static ``bfs``'s.
    last_update : dict
        Touched region of the last update: ``changed_vertices`` (levels set), ``marked_vertices``
        (lost every parent), ``seeds``, ``scanned_edges`` (adjacency entries read),
        ``levels`` (relaxation levels run; the GPU's chase passes for deletions: the levels
        between the lowest and the highest one set), ``batch`` (directed edge changes).

    Examples
    --------
    >>> import numpy as np, hornet
    >>> g = hornet.Graph.from_edges(np.array([0, 1]), np.array([1, 2]), device="cpu")
    >>> bf = DynamicBFS(g, 0)
    >>> bf.update(g.insert_edges(np.array([0]), np.array([2])))
    >>> bf.levels.tolist()
    [0, 1, 1]
    >>> bf.update(g.delete_edges(np.array([0, 0]), np.array([1, 2])))
    >>> bf.levels.tolist()
    [0, -1, -1]
    """

    def __init__(self, g, source, parents: bool = False):
        source = source_ids(g, source, single=True)      # original ids with a vertex map
        if isinstance(source, (bool, np.bool_)) or not isinstance(source, (int, np.integer)):
            raise TypeError(f"source must be an integer vertex id, got {type(source).__name__}")
        if source < 0:
            raise ValueError(f"source must be >= 0, got {source}")
        self.graph = g
        self.source = int(source)
        self.device = g.device
        self.directed = bool(g.directed)
        self.want_parents = bool(parents)
        self._batch = 0
        n = g.num_vertices
        self._reverse = None
        if self.directed:
            s, d = g.edges(dense=True)
            # the graph's own class (algorithms do not import the graph module)
            self._reverse = type(g).from_edges(d, s, num_vertices=n, directed=True,
                                               device=g.device)
        if self.device == "gpu":
            from .dynamic_gpu import GPUState, cupy
            self._array_type = cupy.ndarray          # the device check's quick case
            self._state = GPUState(self, n)
        else:
            self._array_type = np.ndarray
            self._state = _CPUState(self, n)

    # ------------------------------------------------------------------ results
    @property
    def levels(self):
        """int32 (num_vertices,), -1 unreached (see the class docstring)."""
        n = self.graph.num_vertices
        if n > self._state.n:
            self._state.cover(n)
        return self._state.level[:n]

    @property
    def parents(self):
        """int32 (num_vertices,): a BFS parent per reached vertex, -1 elsewhere."""
        if not self.want_parents:
            raise ValueError("DynamicBFS was built without parents=True")
        n = self.graph.num_vertices
        if n > self._state.n:
            self._state.cover(n)
        return self._state.parent[:n]

    @property
    def last_update(self) -> dict:
        """The touched region of the last update (see the class docstring)."""
        st = dict(zip(STAT_NAMES, self._state.stats.tolist()))
        st["batch"] = self._batch
        return st

    # ------------------------------------------------------------------ updates
    def update(self, change) -> None:
        """Bring levels (and parents) up to date with ``change``.

        ``change``: the :class:`hornet.EdgeChange` a graph call returned (insert, delete or
        update; updates only change properties and cost nothing), or a sequence of them, all
        applied to the graph since the last update; a sequence is processed as one batch
        (deletions and insertions together, one relaxation).
        Raises TypeError / ValueError (state unchanged) for anything else.
        """
        if isinstance(change, EdgeChange):    # the common case, kept short (a deferred
            # insert's change is a subclass: hornet.batch.deferred_path.PendingChange)
            kind = change.kind
            if kind == "delete":
                dels, ins = (change.src, change.dst), None
            elif kind == "insert":
                dels, ins = None, (change.src, change.dst)
            elif kind == "update":
                dels = ins = None
            else:
                raise TypeError(f"unknown change kind {kind!r}")
            src = change.src
            if type(src) is not self._array_type and _device_of(src) != self.device:
                raise ValueError(f"a {_device_of(src)} change for a {self.device} graph")
            changes = (change,)
        else:
            changes, dels, ins = self._sequence(change)
        n = self.graph.num_vertices
        if self._reverse is not None:
            self._update_reverse(changes, n)
        state = self._state
        if n > state.n:
            state.cover(n)
        nd = 0 if dels is None else dels[0].shape[0]
        ni = 0 if ins is None else ins[0].shape[0]
        self._batch = (nd + ni) * (1 if self.directed else 2)
        if nd + ni == 0:
            state.clear_stats()
            return
        state.run(dels if nd else None, ins if ni else None)

    def _sequence(self, changes):
        """(changes, deletions, insertions) of a sequence of changes, netted (see _net)."""
        if isinstance(changes, (str, bytes)) or not hasattr(changes, "__iter__"):
            raise TypeError(f"update() takes EdgeChange objects, got {changes!r}")
        changes = tuple(changes)
        dels, ins = [], []
        for c in changes:
            if not isinstance(c, EdgeChange) or c.kind not in ("insert", "delete", "update"):
                raise TypeError(f"update() takes EdgeChange objects, got {c!r}")
            if _device_of(c.src) != self.device:
                raise ValueError(f"a {_device_of(c.src)} change for a {self.device} graph")
            if c.kind == "insert":
                ins.append(c)
            elif c.kind == "delete":
                dels.append(c)
        if dels and ins:
            dels, ins = _net(dels, ins)
        return changes, _joined(dels), _joined(ins)

    def _update_reverse(self, changes, n: int) -> None:
        """Apply the changes, reversed, to the reverse index (in the order the graph did)."""
        rev = self._reverse
        for c in changes:
            if c.kind == "insert" and len(c):
                rev.insert_edges(c.dst, c.src)
            elif c.kind == "delete" and len(c):
                rev.delete_edges(c.dst, c.src)
        if rev.num_vertices < n:
            rev.insert_vertices([n - 1])

    def __repr__(self) -> str:
        return (f"<DynamicBFS source={self.source} on {self.graph!r}, "
                f"parents={self.want_parents}>")


def _device_of(a) -> str:
    return "gpu" if type(a).__module__.startswith("cupy") else "cpu"


def _joined(changes):
    """(src, dst) of one kind of change: the arrays themselves for one change, else joined;
    None when there is no edge."""
    changes = [c for c in changes if len(c)]
    if not changes:
        return None
    if len(changes) == 1:
        return changes[0].src, changes[0].dst
    xp = _xp(changes[0].src)
    return (xp.concatenate([c.src for c in changes]), xp.concatenate([c.dst for c in changes]))


def _xp(a):
    if _device_of(a) == "gpu":
        import cupy
        return cupy
    return np


def _net(dels, ins):
    """The net effect of deletions and insertions of a sequence of changes: an edge both
    inserted and deleted (in either order) is present before and after, or absent before and
    after, so it drops out of both lists."""
    xp = _xp(dels[0].src)
    src = xp.concatenate([c.src for c in dels] + [c.src for c in ins]).astype(xp.int64)
    dst = xp.concatenate([c.dst for c in dels] + [c.dst for c in ins]).astype(xp.int64)
    nd = sum(len(c) for c in dels)
    sign = xp.ones(src.shape[0], xp.int64)
    sign[:nd] = -1
    keys, inverse = xp.unique((src << 32) | dst, return_inverse=True)
    net = xp.bincount(inverse.ravel(), weights=sign, minlength=keys.shape[0])   # -1, 0, 1
    out = []
    for want in (-1, 1):
        k = keys[net == want]
        out.append([EdgeChange("net", (k >> 32).astype(xp.int32),
                                (k & 0xFFFFFFFF).astype(xp.int32))])
    return out[0], out[1]


_EMPTY = np.empty(0, np.int32)


def _host_row(degree: np.ndarray, edge_ptr: np.ndarray, v: int) -> np.ndarray:
    """A copy (int32 (degree[v],), host) of vertex ``v``'s adjacency list of a CPU graph's
    adjacency view, read in Python (no kernel)."""
    d = int(degree[v])
    if d == 0:
        return np.empty(0, np.int32)
    return np.ctypeslib.as_array((ctypes.c_int32 * d).from_address(int(edge_ptr[v]))).copy()


class _CPUState:
    """Host arrays of the state, sized to the id space's capacity: per-vertex records
    (LEVEL, COUNT, OLD, FLAG), parents, scratch lists."""

    def __init__(self, owner: DynamicBFS, n: int):
        self.owner = owner
        self.n = 0
        self.cap = 0
        self.rec = np.empty((0, 4), np.int32)
        self.parent = np.full(1, -1, np.int32)
        self.lists = np.empty((3, 0), np.int32)
        self.stats = np.zeros(len(STAT_NAMES), np.int64)
        self._grow(max(n, 1))
        self.n = n
        self._rebuild(n)

    def _grow(self, cap: int) -> None:
        rec = np.zeros((cap, 4), np.int32)
        rec[:self.cap] = self.rec
        rec[self.cap:, LEVEL] = -1
        if self.owner.want_parents:
            parent = np.full(cap, -1, np.int32)
            parent[:self.cap] = self.parent[:self.cap]
            self.parent = parent
        self.rec, self.cap = rec, cap
        self.lists = np.empty((3, cap), np.int32)
        self.level = rec[:, LEVEL]           # a strided view

    def cover(self, n: int) -> None:
        """Extend the state to ids < n (new vertices unreached; the source on level 0)."""
        if n <= self.n:
            return
        if n > self.cap:
            self._grow(max(n, 2 * self.cap))
        src = self.owner.source
        if self.n <= src < n:
            self.rec[src, LEVEL] = 0
        self.n = n

    def counts(self):
        """Parent counts (int32 (capacity,), a strided view; for checks)."""
        return self.rec[:, COUNT]

    def clear_stats(self) -> None:
        """The statistics of an update that changed nothing."""
        self.stats[:] = 0

    def _rebuild(self, n: int) -> None:
        """Levels, parents and parent counts of the whole graph (construction): a graph of
        at most :data:`BUILD_BY_UPDATE_MAX_EDGES` edges by one update that inserts the
        source's out-edges into the all-unreached state (steps 3-5 of the module docstring are
        then a BFS from the source that also counts the parents), so that a short run
        compiles the update kernel only; a larger one by the static BFS (parallel,
        direction-optimizing) and one counting pass."""
        owner = self.owner
        g = owner.graph
        if g.num_edges <= BUILD_BY_UPDATE_MAX_EDGES:
            if owner.source < n:
                self.rec[owner.source, LEVEL] = 0
                view = g.adjacency(properties=False)
                out = _host_row(view.degree, view.edge_ptr, owner.source)
                if out.shape[0]:
                    self.run(None, (np.full(out.shape[0], owner.source, np.int32), out))
                    self.stats[:] = 0
            return
        from .static import bfs
        if owner.source < n:
            out = bfs(g, owner.source, return_parents=owner.want_parents,
                      reverse=owner._reverse, dense=True)
            lv, par = out if owner.want_parents else (out, None)
            self.rec[:n, LEVEL] = lv
            if par is not None:
                self.parent[:n] = par
        view = g.adjacency(properties=False)
        _initial_counts(np.asarray(view.degree), np.asarray(view.edge_ptr), self.rec, n)

    def run(self, dels, ins) -> None:
        owner = self.owner
        view = owner.graph.adjacency(properties=False)
        iview = view if owner._reverse is None else owner._reverse.adjacency(properties=False)
        ds, dd = dels if dels is not None else (_EMPTY, _EMPTY)
        is_, id_ = ins if ins is not None else (_EMPTY, _EMPTY)
        _update(view.degree, view.edge_ptr, iview.degree, iview.edge_ptr, not owner.directed,
                ds, dd, is_, id_, self.rec, self.parent, owner.want_parents, self.lists,
                self.stats)
