"""The dynamic graph: a Hornet vertex table over the block-array memory manager.

Every vertex ``v`` has a degree, a size class (its block holds ``2**size_class`` edges; -1 when
it owns no block) and an edge pointer (the address of its block's first destination). Edge
properties live in further columns of the same block arrays, so each vertex's destinations and
property values are aligned slot by slot. Adjacency lists are kept sorted by destination and
free of duplicates through every update.

Example
-------
>>> import numpy as np, hornet
>>> g = hornet.Graph(directed=False, device="cpu", edge_properties={"weight": np.float32})
>>> change = g.insert_edges([0, 1, 1], [1, 2, 2], weight=[0.5, 1.0, 2.0])
>>> len(change), g.num_edges          # the duplicate (1, 2) inside the batch is dropped
(2, 2)
>>> g.neighbors(1)[0].tolist()
[0, 2]
>>> len(g.delete_edges([2], [1])), g.num_edges
(1, 1)
"""
from __future__ import annotations

import re
from itertools import compress
from operator import or_
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .adjacency import AdjacencyView
from .batch.validate import BatchError, MAX_VERTEX_ID, edge_batch, id_array, property_values
from .batch.gpu_small import (H_CLASS, H_FREED, H_KEPT, H_LOOPS, H_MAX_ID, H_MIN_ID,
                              H_MOVES, H_PIECES, H_RESULTS, MAX_FIELDS, MODE_DELETE,
                              MODE_INSERT, NUM_CLASSES, SMALL_ENTRIES, SmallBatches)
from .batch.cpu_small import CPU_SMALL_ENTRIES, CpuSmallBatches
from .memory.manager import DeviceMemoryError, InvariantError, MemoryManager

__all__ = ["Graph", "EdgeChange", "BatchError", "InvariantError", "DeviceMemoryError"]

_VERTEX_BYTES = 4 + 1 + 8   # degree int32, size class int8, edge pointer int64
DEFAULT_BLOCK_ARRAY_EDGES = {"cpu": 1 << 18, "gpu": 1 << 22}


@dataclass
class EdgeChange:
    """What a batch really changed.

    ``src``, ``dst``: int32 arrays on the graph's device, one entry per edge inserted, deleted
    or updated (undirected graphs: each edge once, ``src < dst``), sorted by (src, dst).
    ``properties``: the edges' property values (for deletions: the values they had; for
    updates: the new values).
    ``previous``: for updates, the values the updated properties held before the call
    (same names and alignment as ``properties``); empty for other kinds.
    ``self_loops_skipped``: self-loops dropped from the batch (undirected graphs only).
    """

    kind: str
    src: Any
    dst: Any
    properties: dict = field(default_factory=dict)
    self_loops_skipped: int = 0
    previous: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.src.shape[0])

    def __repr__(self) -> str:
        return f"EdgeChange({self.kind}, {len(self)} edges)"

    def to_arrow(self):
        """The change as a pyarrow Table with columns src, dst and one per property."""
        import pyarrow as pa
        cols = {"src": _host(self.src), "dst": _host(self.dst)}
        cols.update({k: _host(v) for k, v in self.properties.items()})
        return pa.table(cols)


def _host(a):
    """NumPy copy of a NumPy or CuPy array."""
    return a if isinstance(a, np.ndarray) else a.get()


def _batch_kernels(device: str):
    if device == "gpu":
        from .batch import gpu_kernels
        return gpu_kernels
    from .batch import cpu_kernels
    return cpu_kernels


def _resolve_device(device: str) -> str:
    if device not in ("cpu", "gpu", "auto"):
        raise ValueError(f"device must be 'cpu', 'gpu' or 'auto', got {device!r}")
    if device == "auto":
        from . import backend_available
        return "gpu" if backend_available("gpu") else "cpu"
    if device == "gpu":
        from . import backend_available
        if not backend_available("gpu"):
            raise RuntimeError("device='gpu' needs CuPy and a CUDA GPU; none was found "
                               "(use device='cpu' or 'auto')")
    return device


def _array_module(device: str):
    if device == "gpu":
        import cupy
        return cupy
    return np


def _device_array(xp, a, name):
    if xp is np:
        return _host(a) if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)
    return xp.asarray(a)


def _rows_sorted_unique(xp, indptr, indices) -> bool:
    """Every CSR row strictly ascending (so sorted and duplicate-free)."""
    if indices.shape[0] < 2:
        return True
    rising = indices[1:] > indices[:-1]
    starts = indptr[1:-1]
    starts = starts[(starts > 0) & (starts < indices.shape[0])]
    ok = rising.copy()
    ok[starts - 1] = True            # the step into a new row may fall
    return bool(ok.all())


def _expand(xp, counts, offsets=None):
    """``repeat(arange(len(counts)), counts)`` as int32 (CuPy's repeat takes no array counts)."""
    if xp is np:
        return np.repeat(np.arange(counts.shape[0], dtype=np.int32), counts)
    if offsets is None:
        offsets = xp.cumsum(counts)
    else:
        offsets = offsets[1:]
    total = int(offsets[-1]) if offsets.shape[0] else 0
    return xp.searchsorted(offsets, xp.arange(total), side="right").astype(xp.int32)


class _out_of_memory_as_device_error:
    """Context: out-of-memory while a batch is prepared (nothing changed yet) ->
    DeviceMemoryError. A class rather than a ``@contextmanager`` generator: it wraps every
    batch, and entering a generator-based context costs a few microseconds a call."""

    __slots__ = ("entries",)

    def __init__(self, entries: int):
        self.entries = entries

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, traceback) -> bool:
        if kind is None or not issubclass(kind, MemoryError) or \
                issubclass(kind, DeviceMemoryError):
            return False                    # nothing raised, or passed on as it is
        entries = self.entries
        found = re.search(r"allocating ([0-9,]+) bytes", str(exc))
        need = int(found.group(1).replace(",", "")) if found else 48 * max(entries, 1)
        raise DeviceMemoryError(f"out of memory preparing a batch of {entries} edges "
                                f"(an allocation of {need} bytes failed); the graph is unchanged",
                                need) from exc


def _scatter_last(xp, target, ids, values) -> None:
    """``target[ids] = values`` where a repeated id takes its last value, on every device
    (a GPU scatter leaves the winner of repeated indices undefined)."""
    if ids.shape[0] > 1:
        _, first_in_reversed = xp.unique(ids[::-1], return_index=True)
        keep = ids.shape[0] - 1 - first_in_reversed
        ids, values = ids[keep], values[keep]
    target[ids] = values


def _batch_length(src) -> int:
    try:
        return len(src)
    except TypeError:
        return 0


def _segments(xp, sorted_ids):
    """Runs of equal values in a sorted array: (values, run starts, run lengths)."""
    n = sorted_ids.shape[0]
    if n == 0:
        e = xp.empty(0, dtype=xp.int64)
        return sorted_ids, e, e
    head = xp.empty(n, dtype=bool)
    head[0] = True
    xp.not_equal(sorted_ids[1:], sorted_ids[:-1], out=head[1:])
    starts = xp.flatnonzero(head)
    lengths = xp.diff(starts, append=n)
    return sorted_ids[starts], starts.astype(xp.int64), lengths.astype(xp.int64)


class Graph:
    """A dynamic graph with batched edge updates, on the CPU (Numba) or the GPU (CuPy).

    Parameters
    ----------
    directed : bool
        Undirected graphs store both directions of every edge and hold no self-loops.
    device : "cpu", "gpu" or "auto"
        "auto" picks the GPU when CuPy sees one.
    num_vertices : int
        Initial size of the vertex id space; it grows on demand as edges name larger ids.
    edge_properties, vertex_properties : dict name -> dtype
        Numeric properties carried by every edge / vertex (0 unless set).
    block_array_edges : int
        Edge slots per block array (power of two): a runtime setting of the memory manager.
        Default: 2**18 on the CPU, 2**22 on the GPU (fewer, larger arrays mean fewer kernel
        launches per batch on the GPU, less per-array bookkeeping on the CPU; arrays are
        still sized to fit when the graph is small).
    min_block_size : int
        Smallest block (power of two).
    """

    # CPU graphs insert and delete through the fused pipelines (plan_insert / merge_insert,
    # plan_delete / remove_fused); False takes the general one (find / keep / plan / merge or
    # remove, the GPU's), e.g. for A/B runs
    _fused_insert = True
    _fused_delete = True
    # A fused CPU insert plans the full lists it reaches without searching them (a block
    # for every entry of the segment; the merge gives it back when enough were present)
    # while the last fused insert found at most this share of its entries present already.
    # Same-process A/B, Kronecker 20, 10^5 random inserts: 0.942 per-round ratio (41 rounds).
    # A graph starts searching (no history): inserting present edges then reserves nothing.
    _defer_full_present = 0.25

    def __init__(self, directed: bool = False, device: str = "auto", *, num_vertices: int = 0,
                 edge_properties: dict | None = None, vertex_properties: dict | None = None,
                 block_array_edges: int | None = None, min_block_size: int = 1):
        self.directed = bool(directed)
        self.device = _resolve_device(device)
        self._K = _batch_kernels(self.device)
        self._edge_schema = {str(k): _numeric_dtype(v, k, edge_on=self.device) for k, v in
                             (edge_properties or {}).items()}
        self._vertex_schema = {str(k): _numeric_dtype(v, k) for k, v in
                               (vertex_properties or {}).items()}
        if "dst" in self._edge_schema or "src" in self._edge_schema:
            raise ValueError("'src' and 'dst' are reserved names")
        if block_array_edges is None:
            block_array_edges = DEFAULT_BLOCK_ARRAY_EDGES[self.device]
        self._mm = MemoryManager([("dst", np.int32), *self._edge_schema.items()],
                                 block_array_edges=block_array_edges,
                                 min_block_size=min_block_size, device=self.device)
        xp = self._xp = self._mm.xp
        self._n = 0
        self._degree = xp.zeros(0, dtype=xp.int32)
        self._size_class = xp.zeros(0, dtype=xp.int8)
        self._edge_ptr = xp.zeros(0, dtype=xp.int64)
        self._vprops = {k: xp.zeros(0, dtype=dt) for k, dt in self._vertex_schema.items()}
        self._entries = 0
        self._views = {}            # adjacency views, valid until the next change
        self._present_share = 1.0   # of the last fused insert's entries (1: no history)
        self._small = None          # small-batch workspace, made on first use
        if num_vertices:
            self._reserve(int(num_vertices))
            self._n = int(num_vertices)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_edges(cls, src, dst=None, num_vertices: int | None = None, directed: bool = False,
                   device: str = "auto", *, block_array_edges: int | None = None,
                   min_block_size: int = 1, **edge_props) -> "Graph":
        """Build from COO arrays (see :meth:`insert_edges` for accepted inputs).

        Property dtypes are taken from the arrays passed in ``edge_props``;
        ``block_array_edges`` and ``min_block_size`` are the memory settings of the
        constructor.
        """
        schema = {k: np.asarray(v).dtype if not hasattr(v, "dtype") else v.dtype
                  for k, v in edge_props.items()}
        g = cls(directed=directed, device=device, num_vertices=num_vertices or 0,
                edge_properties=schema, block_array_edges=block_array_edges,
                min_block_size=min_block_size)
        g.insert_edges(src, dst, **edge_props)
        return g

    @classmethod
    def from_csr(cls, indptr, indices, directed: bool = False, device: str = "auto",
                 num_vertices: int | None = None, *, block_array_edges: int | None = None,
                 min_block_size: int = 1, **edge_props) -> "Graph":
        """Build from CSR arrays: row ``u`` holds ``indices[indptr[u]:indptr[u+1]]``.

        NumPy or CuPy arrays. For an undirected graph each stored entry is an edge; a
        symmetric CSR (both directions) and a triangular one give the same graph. A directed
        CSR whose rows are sorted and duplicate-free is loaded without sorting: one batched
        allocation per size class and one copy of the rows. ``edge_props``: one array per
        entry and property; ``block_array_edges``, ``min_block_size``: as in the constructor.
        """
        device = _resolve_device(device)
        xp = _array_module(device)
        indptr = _device_array(xp, indptr, "indptr")
        indices = _device_array(xp, indices, "indices")
        if indptr.ndim != 1 or indptr.shape[0] < 1 or indptr.dtype.kind not in "iu":
            raise BatchError("indptr must be a 1-D integer array of length num_vertices + 1")
        if indices.ndim != 1 or (indices.size and indices.dtype.kind not in "iu"):
            raise TypeError(f"indices must be a 1-D integer array, got {indices.dtype}")
        indptr = indptr.astype(xp.int64, copy=False)
        counts = xp.diff(indptr)
        if int(indptr[0]) != 0 or bool((counts < 0).any()):
            raise BatchError("indptr must start at 0 and never decrease")
        if int(indptr[-1]) != indices.shape[0]:
            raise BatchError(f"indptr[-1] = {int(indptr[-1])} but indices has "
                             f"{indices.shape[0]} entries")
        n = max(indptr.shape[0] - 1, num_vertices or 0)
        schema = {k: np.dtype(v.dtype if hasattr(v, "dtype") else np.asarray(v).dtype)
                  for k, v in edge_props.items()}
        g = cls(directed=directed, device=device, num_vertices=n, edge_properties=schema,
                block_array_edges=block_array_edges, min_block_size=min_block_size)
        if directed and indices.size and _rows_sorted_unique(xp, indptr, indices) and \
                int(indices.min()) >= 0 and int(indices.max()) < n:
            values = property_values(edge_props, g._edge_schema, indices.shape[0], xp)
            with _out_of_memory_as_device_error(int(indices.shape[0])):
                g._bulk_load(counts, indptr, indices.astype(xp.int32, copy=False), values)
            return g
        src = _expand(xp, counts, indptr)
        g.insert_edges(src, indices, **edge_props)
        return g

    def _bulk_load(self, counts, indptr, indices, values) -> None:
        """Fill an empty graph from sorted, duplicate-free CSR rows (directed)."""
        xp = self._xp
        rows = xp.flatnonzero(counts)
        deg = counts[rows]
        ptrs, classes = self._allocate_for(rows, deg)
        src = self._mm.backend.address(indices) + 4 * indptr[rows]
        self._mm.backend.copy_ranges(src, ptrs, deg, np.dtype(np.int32))
        for f, (name, dt) in enumerate(self._edge_schema.items(), start=1):
            col = xp.ascontiguousarray(values[name])
            src = self._mm.backend.address(col) + dt.itemsize * indptr[rows]
            self._mm.backend.copy_ranges(src, self._mm.field_addresses(ptrs, f), deg, dt)
        self._edge_ptr[rows] = ptrs
        self._size_class[rows] = classes
        self._degree[rows] = deg.astype(xp.int32)
        self._entries = int(indices.shape[0])
        self._views.clear()

    @classmethod
    def from_scipy(cls, matrix, directed: bool = False, device: str = "auto",
                   weight: str | None = None, *, block_array_edges: int | None = None,
                   min_block_size: int = 1) -> "Graph":
        """Build from a scipy.sparse matrix; ``weight`` names a property holding its values;
        ``block_array_edges``, ``min_block_size``: as in the constructor."""
        coo = matrix.tocoo()
        if coo.shape[0] != coo.shape[1]:
            raise BatchError(f"an adjacency matrix must be square, got shape {coo.shape}")
        props = {weight: coo.data} if weight else {}
        return cls.from_edges(coo.row, coo.col, num_vertices=coo.shape[0], directed=directed,
                              device=device, block_array_edges=block_array_edges,
                              min_block_size=min_block_size, **props)

    @classmethod
    def from_networkx(cls, nx_graph, device: str = "auto", edge_attrs=(), default=0, *,
                      block_array_edges: int | None = None,
                      min_block_size: int = 1) -> "Graph":
        """Build from a networkx graph with integer nodes >= 0.

        ``edge_attrs``: numeric edge attributes to carry over as float64 properties;
        ``block_array_edges``, ``min_block_size``: as in the constructor.
        """
        nodes = np.fromiter(nx_graph.nodes, dtype=np.int64, count=nx_graph.number_of_nodes()) \
            if all(isinstance(x, (int, np.integer)) for x in nx_graph.nodes) else None
        if nodes is None:
            raise BatchError("nodes must be integers >= 0 (see "
                             "networkx.convert_node_labels_to_integers)")
        m = nx_graph.number_of_edges()
        pairs = np.array([(u, v) for u, v in nx_graph.edges()], dtype=np.int64).reshape(m, 2)
        props = {a: np.array([d.get(a, default) for _, _, d in nx_graph.edges(data=True)],
                             dtype=np.float64) for a in edge_attrs}
        n = int(nodes.max()) + 1 if nodes.size else 0
        return cls.from_edges(pairs[:, 0], pairs[:, 1], num_vertices=n,
                              directed=nx_graph.is_directed(), device=device,
                              block_array_edges=block_array_edges,
                              min_block_size=min_block_size, **props)

    def copy(self) -> "Graph":
        """A deep copy (same settings, edges, properties)."""
        g = Graph(self.directed, self.device, num_vertices=self._n,
                  edge_properties=dict(self._edge_schema),
                  vertex_properties=dict(self._vertex_schema),
                  block_array_edges=self._mm.block_array_edges,
                  min_block_size=1 << self._mm.min_size_class)
        src, dst, props = self.edges(properties=True)
        g.insert_edges(src, dst, **props)
        for k, a in self._vprops.items():
            g._vprops[k][:self._n] = a[:self._n]
        return g

    def memory_settings(self) -> dict:
        """The memory manager's settings: ``block_array_edges`` and ``min_block_size``."""
        return {"block_array_edges": int(self._mm.block_array_edges),
                "min_block_size": 1 << int(self._mm.min_size_class)}

    # ------------------------------------------------------------------ snapshots
    def save(self, path) -> None:
        """Write an exact snapshot: Arrow IPC for ``.arrow``, Parquet for ``.parquet``
        (edges, edge and vertex properties with their dtypes, directedness, id space, memory
        settings; layout in :mod:`hornet.snapshot`)."""
        from . import snapshot
        snapshot.save(self, path)

    @classmethod
    def load(cls, path, device: str = "auto") -> "Graph":
        """The graph saved by :meth:`save` at ``path``, rebuilt on ``device``."""
        from . import snapshot
        return snapshot.load(path, cls, device)

    @classmethod
    def _from_snapshot_bytes(cls, data: bytes, device: str) -> "Graph":
        from . import snapshot
        return snapshot.from_bytes(data, cls, device)

    def __reduce__(self):
        """Pickle as a snapshot; a GPU graph unpickles on the GPU."""
        from . import snapshot
        return (type(self)._from_snapshot_bytes, (snapshot.to_bytes(self), self.device))

    # ------------------------------------------------------------------ sizes
    @property
    def num_vertices(self) -> int:
        """Size of the vertex id space (ids 0 .. num_vertices - 1)."""
        return self._n

    @property
    def num_edges(self) -> int:
        """Edges in the graph (undirected: each edge once)."""
        return self._entries if self.directed else self._entries // 2

    @property
    def edge_properties(self) -> dict:
        return dict(self._edge_schema)

    @property
    def vertex_properties(self) -> dict:
        return dict(self._vertex_schema)

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return (f"<hornet.Graph {kind}, {self.num_vertices} vertices, {self.num_edges} edges, "
                f"device={self.device}>")

    # ------------------------------------------------------------------ vertex table
    def _reserve(self, n: int) -> None:
        """Make room in the vertex table for ids < n (contents of new rows: empty)."""
        cap = self._degree.shape[0]
        if n <= cap:
            return
        if n > MAX_VERTEX_ID + 1:
            raise BatchError(f"the id space cannot exceed {MAX_VERTEX_ID + 1} vertices")
        new_cap = n if cap == 0 else min(MAX_VERTEX_ID + 1, max(n, 2 * cap))

        def grown(a, fill=0):
            b = self._xp.full(new_cap, fill, dtype=a.dtype)
            b[:cap] = a
            return b

        self._views.clear()
        self._degree = grown(self._degree)
        self._size_class = grown(self._size_class, -1)
        self._edge_ptr = grown(self._edge_ptr)
        self._vprops = {k: grown(a) for k, a in self._vprops.items()}

    def _unique_pairs(self, s, d, n, values=None, segments: bool = False,
                      check_ids: bool = False):
        """Sort a batch by (src, dst), mirror it for undirected graphs, drop repeats (first
        wins). Returns (src int32, dst int32, values reordered to match, self-loops dropped);
        with ``segments`` (CPU) a fifth item, the segments found on the way or None; with
        ``check_ids`` (CPU) the ids are checked on the way and a last item is the id space
        they need (see :func:`hornet.batch.cpu_kernels.sorted_unique_pairs`)."""
        mirror = not self.directed
        extra = {"segments": True} if segments else {}
        if check_ids:
            extra["check_ids"] = True
        order, ss, dd, loops, *rest = self._K.sorted_unique_pairs(
            s, d, n, mirror, need_order=bool(values), ws=self._scratch(), **extra)
        if values:
            pair = order >> 1 if mirror else order
            values = {k: v[pair] for k, v in values.items()}
        return (ss, dd, values or {}, int(loops)) + tuple(rest)

    def _scratch(self):
        """The backend's reusable buffers for this graph's batch temporaries (CPU:
        :class:`hornet.batch.workspace.Workspace`, made on first use; GPU: None)."""
        ws = self.__dict__.get("_ws", False)
        if ws is False:
            ws = self._ws = self._K.workspace()
        return ws

    def _change(self, kind, ss, dd, values, skipped=0, previous=None) -> EdgeChange:
        previous = previous or {}
        if not self.directed:
            # a batch changes both directions of an undirected edge: symmetric entries
            once, ss, dd = self._K.canonical_pairs(ss, dd, ws=self._scratch(), symmetric=True)
            values = {k: v[once] for k, v in values.items()}
            previous = {k: v[once] for k, v in previous.items()}
        return EdgeChange(kind, ss.astype(np.int32, copy=False), dd.astype(np.int32, copy=False),
                          values, skipped, previous)

    def _allocate_for(self, vertices, degrees):
        """New blocks for ``vertices`` holding ``degrees`` edges: (pointers, size classes).

        One batched allocation per size class (only per-class counts reach the host); all or
        nothing.
        """
        classes = self._mm.size_class_for(degrees)
        return self._mm.allocate_classes(classes), classes

    def _retire(self, sources, new_deg, old_ptrs, moved, new_ptrs, new_classes,
                emptied=None) -> None:
        """Write a planned batch into the vertex table (its lists already rewritten) and free
        the blocks it left.

        ``sources`` (int32 (S,), distinct) get degrees ``new_deg`` (int64 (S,)); the segments
        ``moved`` (int64 indices, (G,)) now live in blocks ``new_ptrs`` of ``new_classes``
        (int64 (G,)); ``old_ptrs`` (int64 (S,)) are the pointers before the batch (0: no
        block); ``emptied`` (bool (S,), optional): segments left without edges.
        """
        xp = self._xp
        self._K.commit_segments(sources, new_deg, moved, new_ptrs, new_classes, self._degree,
                                self._size_class, self._edge_ptr)
        freed = old_ptrs[moved]
        if emptied is not None:
            freed = xp.concatenate([freed, xp.where(emptied, old_ptrs, 0)])
        self._mm.release(freed)            # pointers 0 (no block before) are skipped

    def _columns(self, ptrs):
        """Per edge field, the addresses of the blocks whose destination addresses are given."""
        return [self._mm.field_addresses(ptrs, f) for f in range(len(self._mm.field_dtypes))]

    def _moved_columns(self, columns, moved, new_ptrs):
        """``columns`` (from :meth:`_columns`) with the segments ``moved`` (int64 (G,))
        re-pointed to their new blocks ``new_ptrs``: only the moved lists are looked up."""
        out = []
        for f, col in enumerate(columns):
            col = col.copy()
            col[moved] = self._mm.field_addresses(new_ptrs, f)
            out.append(col)
        return out

    def _compact_memory(self) -> None:
        old, new = self._mm.compact_touched()
        if old.size == 0:
            return
        xp = self._xp
        order = xp.argsort(old)
        old, new = old[order], new[order]
        # only vertices of the compacted classes can own a moved block
        compacted = np.zeros(65, dtype=bool)            # indexed by size class + 1
        compacted[np.asarray(self._mm.last_compacted, dtype=np.int64) + 1] = True
        table = xp.asarray(compacted)
        owners = xp.flatnonzero(table[self._size_class[:self._n].astype(xp.int16) + 1])
        ptr = self._edge_ptr[owners]
        at = xp.searchsorted(old, ptr)
        at[at == old.size] = 0
        moved = old[at] == ptr
        self._edge_ptr[owners[moved]] = new[at[moved]]

    # ------------------------------------------------------------------ edge updates
    def insert_edges(self, src, dst=None, **edge_props) -> EdgeChange:
        """Insert a batch of edges; return the edges really inserted.

        Parameters
        ----------
        src, dst : integer arrays of equal length E (NumPy, CuPy, lists, Arrow), or ``src`` an
            (E, 2) array / an Arrow table or DataFrame with columns src, dst[, properties] and
            ``dst=None``. Ids are >= 0; the id space grows to cover them.
        **edge_props : arrays of length E (or scalars) for declared edge properties; missing
            ones are 0.

        Edges already in the graph and repeats inside the batch (first occurrence wins) are
        not inserted; an existing edge's properties change only through
        :meth:`update_edges`. Undirected graphs skip self-loops and report how many.
        A refused batch raises and leaves the graph unchanged.
        """
        with _out_of_memory_as_device_error(_batch_length(src)):
            pairs = self._small_pairs(src, dst)
            if pairs is not None:
                change = self._small_update(MODE_INSERT, *pairs, edge_props)
                if change is not None:
                    return change
            late = self.device == "cpu" and self._fused_insert   # its sort checks the ids
            s, d, props, top = edge_batch(src, dst, edge_props, self._xp, check=not late)
            values = property_values(props, self._edge_schema, s.shape[0], self._xp)
            return self._insert_prepared(s, d, values, None if late else max(self._n, top))

    def _insert_prepared(self, s, d, values, n) -> EdgeChange:
        """Insert a batch normalised by :func:`edge_batch`; ``n``: the id space it needs, or
        None when its ids are not checked yet (the CPU's fused insert, whose sort checks them
        on its way)."""
        xp, K = self._xp, self._K
        if self.device == "cpu" and self._fused_insert:
            ss, dd, values, skipped, segments, *top = self._unique_pairs(
                s, d, self._n if n is None else n, values, segments=True, check_ids=n is None)
            n = max(self._n, top[0]) if n is None else n
            self._reserve(n)
            return self._insert_fused(ss, dd, values, skipped, segments, n)
        self._reserve(n)
        ws = self._scratch()
        ss, dd, values, skipped = self._unique_pairs(s, d, n, values)
        pos = K.find_positions(ss, dd, self._degree, self._edge_ptr, self._n, ws=ws)
        kept, ss, dd, insert_at = K.keep_entries(pos, ss, dd, True, bool(values), ws=ws)
        if kept is not None:
            values = {k: v[kept] for k, v in values.items()}
        sources, seg_start, seg_len, old_deg, new_deg, old_ptrs, grow = K.plan_segments(
            ss, self._degree, self._size_class, self._edge_ptr, True, self._mm.min_size_class,
            ws=ws)
        grown = xp.flatnonzero(grow)
        new_ptrs, new_classes = self._allocate_for(sources[grown], new_deg[grown])
        # ---- nothing above changed the graph; from here on the batch is committed ----
        self._views.clear()
        self._n = n
        columns = self._columns(old_ptrs)      # growing lists merge straight into new blocks
        K.merge_lists(columns, self._moved_columns(columns, grown, new_ptrs), old_deg,
                      seg_start, seg_len, insert_at,
                      [dd] + [values[name] for name in self._edge_schema])
        self._retire(sources, new_deg, old_ptrs, grown, new_ptrs, new_classes)
        self._entries += int(dd.shape[0])
        if grown.size:
            self._compact_memory()
        return self._change("insert", ss, dd, values, skipped)

    def _fused_targets(self, new_class, old_ptr, ws):
        """The blocks of a fused delete plan: target int64 (S,), a fresh block of class
        ``new_class`` for the segments that move, read only there (remove_fused lists the
        blocks the lists leave). The allocation is the only step of a fused batch that can
        fail; it runs before anything is written."""
        K = self._K
        per_class, counts, _ = K.block_requests(new_class, old_ptr)
        if not per_class.any():
            return old_ptr
        return K.place_blocks(new_class, counts, self._mm.allocate_counts(per_class), ws=ws)

    def _fields(self, dst, columns: dict):
        """The edge fields of a fused CPU batch (:class:`hornet.batch.cpu_kernels.EdgeFields`):
        the block arrays' columns, and the batch columns ``dst`` then ``columns[name]`` per
        property (contiguous host arrays of the property's dtype, aligned with the batch's
        entries; the kernels read or write them in place)."""
        if not self._edge_schema:
            return None
        batch = [dst] + [columns[name] for name in self._edge_schema]
        lookup = self._mm.lookup()
        return self._K.EdgeFields.of(lookup.bases, lookup.field_bases, batch)

    def _insert_fused(self, ss, dd, values, skipped, segments, n) -> EdgeChange:
        """CPU insert (see the fused-insert section of :mod:`hornet.batch.cpu_kernels`):
        plan (searching only the lists that may outgrow their block, and none of those
        while few entries turn out present: see ``_defer_full_present``), allocate, then
        search-and-merge every list, every edge field, in one pass."""
        K, mm, ws = self._K, self._mm, self._scratch()
        values = {name: np.ascontiguousarray(values[name], dtype=dt)
                  for name, dt in self._edge_schema.items()}
        sources, seg_start, old_deg, old_ptr, new_deg, new_class, pos, requests = \
            K.plan_insert(ss, dd, self._degree, self._size_class, self._edge_ptr, n,
                          mm.min_size_class, ws=ws, segments=segments,
                          defer_full=self._present_share <= self._defer_full_present)
        moving = int(requests[0].sum())
        # the allocation is the only step of a fused batch that can fail: before any write
        pool = mm.allocate_counts(requests[0]) if moving else None
        fields = self._fields(dd, values)      # after the allocation: new arrays included
        # ---- nothing above changed the graph; from here on the batch is committed ----
        self._views.clear()
        self._n = n
        inserted, freed = K.merge_insert(sources, seg_start, old_deg, old_ptr, new_deg,
                                         new_class, dd, pos, n, self._degree,
                                         self._size_class, self._edge_ptr,
                                         requests if moving else None, pool, fields, ws=ws)
        self._entries += inserted
        self._present_share = 1.0 - inserted / max(ss.shape[0], 1)
        if moving:
            mm.release(freed)
            self._compact_memory()
        s_out, d_out, *index = K.changed_pairs(pos, ss, dd, self.directed, False,
                                               with_index=bool(values))
        props = {name: v[index[0]] for name, v in values.items()}
        return EdgeChange("insert", s_out, d_out, props, skipped)

    def delete_edges(self, src, dst=None) -> EdgeChange:
        """Delete a batch of edges; return the edges really deleted (absent ones are ignored).

        Accepts the same inputs as :meth:`insert_edges` (property columns are refused).
        Lists shrink to a smaller block when their degree falls under a quarter of capacity;
        empty block arrays are freed and under-used size classes compacted.
        """
        with _out_of_memory_as_device_error(_batch_length(src)):
            pairs = self._small_pairs(src, dst)
            if pairs is not None:
                change = self._small_update(MODE_DELETE, *pairs, {})
                if change is not None:
                    return change
            s, d, props, top = edge_batch(src, dst, {}, self._xp)
            if props:
                raise BatchError(f"delete_edges takes no properties, got {sorted(props)}")
            return self._delete_prepared(s, d, top)

    def _delete_prepared(self, s, d, top: int) -> EdgeChange:
        """``top``: the batch's largest id + 1 (pairs with ids past the graph's are absent)."""
        xp, K = self._xp, self._K
        if top > self._n:
            inside = (s < self._n) & (d < self._n)
            s, d = s[inside], d[inside]
        ws = self._scratch()
        if self.device == "cpu" and self._fused_delete:
            ss, dd, _, _, segments = self._unique_pairs(s, d, max(self._n, 1), segments=True)
            return self._delete_fused(ss, dd, segments)
        ss, dd, _, _ = self._unique_pairs(s, d, max(self._n, 1))
        pos = K.find_positions(ss, dd, self._degree, self._edge_ptr, self._n, ws=ws)
        _, ss, dd, pos = K.keep_entries(pos, ss, dd, False, ws=ws)
        sources, seg_start, seg_len, old_deg, new_deg, old_ptrs, shrink = K.plan_segments(
            ss, self._degree, self._size_class, self._edge_ptr, False, self._mm.min_size_class,
            ws=ws)
        shrunk = xp.flatnonzero(shrink)
        new_ptrs, new_classes = self._allocate_for(sources[shrunk], new_deg[shrunk])
        # ---- committed from here on ----
        self._views.clear()
        columns = self._columns(old_ptrs)
        gone = {}
        for f, (name, dt) in enumerate(self._edge_schema.items(), start=1):
            gone[name] = xp.empty(ss.shape[0], dtype=dt)
            slots = xp.repeat(columns[f], seg_len) + dt.itemsize * pos
            K.read_at(slots, gone[name])
        # shrinking lists move straight to new blocks
        K.remove_lists(columns, self._moved_columns(columns, shrunk, new_ptrs), old_deg,
                       seg_start, seg_len, pos, self._mm.field_dtypes, items=self._entries)
        self._entries -= int(ss.shape[0])
        self._retire(sources, new_deg, old_ptrs, shrunk, new_ptrs, new_classes,
                     emptied=new_deg == 0)
        self._compact_memory()
        return self._change("delete", ss, dd, gone)

    def _delete_fused(self, ss, dd, segments=None) -> EdgeChange:
        """CPU delete (see the fused-delete section of :mod:`hornet.batch.cpu_kernels`):
        plan (searching only the lists that may move to a smaller block), allocate, then
        search-and-remove every list, every edge field, in one pass."""
        K, mm, ws = self._K, self._mm, self._scratch()
        sources, seg_start, old_deg, old_ptr, new_deg, new_class, pos = K.plan_delete(
            ss, dd, self._degree, self._size_class, self._edge_ptr, self._n, mm.min_size_class,
            ws=ws, segments=segments)
        target = self._fused_targets(new_class, old_ptr, ws)
        # the removed entries' property values land here (aligned with the batch)
        gone = {name: np.empty(ss.shape[0], dtype=dt) for name, dt in self._edge_schema.items()}
        fields = self._fields(dd, gone)
        # ---- nothing above changed the graph; from here on the batch is committed ----
        self._views.clear()
        removed, freed = K.remove_fused(sources, seg_start, old_deg, old_ptr, new_deg,
                                        new_class, target, dd, pos, self._n, self._degree,
                                        self._size_class, self._edge_ptr, fields, ws=ws)
        self._entries -= int(removed.sum())
        mm.release(freed)                      # pointers 0 (list kept its block) are skipped
        self._compact_memory()
        s_out, d_out, *index = K.changed_pairs(pos, ss, dd, self.directed, True,
                                               with_index=bool(gone))
        props = {name: v[index[0]] for name, v in gone.items()}
        return EdgeChange("delete", s_out, d_out, props, 0)

    # ------------------------------------------------------------------ small batches
    def _small_pairs(self, src, dst):
        """(src, dst) as contiguous int32 or int64 device arrays of one dtype when the batch
        can take the small-batch path (:mod:`hornet.batch.gpu_small`,
        :mod:`hornet.batch.cpu_small`): two 1-D integer NumPy or CuPy arrays of one length, at
        most SMALL_ENTRIES (GPU) or CPU_SMALL_ENTRIES (CPU) entries once mirrored, at most
        MAX_FIELDS - 1 edge properties. None otherwise (the general pipeline takes it)."""
        if dst is None or len(self._edge_schema) >= MAX_FIELDS:
            return None
        xp = self._xp
        arrays = (np.ndarray, xp.ndarray)
        if not (isinstance(src, arrays) and isinstance(dst, arrays)):
            return None
        if src.ndim != 1 or src.shape != dst.shape or not src.shape[0]:
            return None
        if src.dtype.kind not in "iu" or dst.dtype.kind not in "iu":
            return None
        limit = SMALL_ENTRIES if self.device == "gpu" else CPU_SMALL_ENTRIES
        if src.shape[0] * (1 if self.directed else 2) > limit:
            return None
        src, dst = xp.asarray(src), xp.asarray(dst)
        if src.dtype != dst.dtype or src.dtype not in (np.int32, np.int64):
            src, dst = src.astype(xp.int64), dst.astype(xp.int64)
        return xp.ascontiguousarray(src), xp.ascontiguousarray(dst)

    def _small_update(self, mode, s, d, edge_props) -> EdgeChange | None:
        """Insert (MODE_INSERT) or delete (MODE_DELETE) a small batch with two kernels and
        the block cache (GPU: one read-back of counts; see :mod:`hornet.batch.gpu_small` and
        :mod:`hornet.batch.cpu_small`). Returns None,
        with nothing changed, when an id is out of range: the general pipeline then refuses
        the batch with its usual message."""
        xp, mm = self._xp, self._mm
        if self._small is None:
            self._small = SmallBatches() if self.device == "gpu" else CpuSmallBatches()
        header, rows = self._small.prepare(s, d, not self.directed, mode, self._degree,
                                           self._size_class, self._edge_ptr,
                                           mm.min_size_class)
        header = header[:H_PIECES + 1].tolist()   # Python ints: cheaper to read one by one
        if header[H_MIN_ID] < 0 or header[H_MAX_ID] > MAX_VERTEX_ID:
            return None
        kind = "insert" if mode == MODE_INSERT else "delete"
        if mode == MODE_INSERT:
            values = property_values(edge_props, self._edge_schema, s.shape[0], xp)
            n = max(self._n, int(header[H_MAX_ID]) + 1)
            self._reserve(n)
        kept, nres = header[H_KEPT], header[H_RESULTS]
        outs = {name: xp.empty(nres, dtype=dt) for name, dt in self._edge_schema.items()}
        need = header[H_CLASS:H_CLASS + NUM_CLASSES]
        freed = header[H_FREED:H_FREED + NUM_CLASSES]
        # the few classes the batch takes blocks from or gives blocks to (counts are >= 0)
        touched = list(compress(range(NUM_CLASSES), map(or_, need, freed)))
        cache = mm.block_cache()
        if kept and header[H_MOVES]:
            cache.reserve(need, touched)    # a ring short of blocks takes them from the trees
        accept = cache.accepts(need, freed, touched)
        # ---- nothing above changed the graph; from here on the batch is committed ----
        self._views.clear()
        if mode == MODE_INSERT:
            self._n = n
        if kept:
            self._small.rewrite(mode, header[H_PIECES], cache, accept, mm.lookup(),
                                mm.field_dtypes,
                                [values[k] for k in self._edge_schema] if mode == MODE_INSERT
                                else [None] * len(self._edge_schema),
                                list(outs.values()), self._degree, self._size_class,
                                self._edge_ptr)
            spills = cache.commit(need, freed, accept, touched)
            self._entries += kept if mode == MODE_INSERT else -kept
            if spills:
                mm.release(self._small.spilled(spills))
            if header[H_MOVES] or any(freed[k] for k in touched):
                self._compact_memory()
        return EdgeChange(kind, rows[:nres], rows[SMALL_ENTRIES:SMALL_ENTRIES + nres], outs,
                          int(header[H_LOOPS]) if mode == MODE_INSERT else 0)

    def update_edges(self, src, dst=None, **edge_props) -> EdgeChange:
        """Set property values of edges already present; absent edges are ignored.

        Returns the edges updated with their new values (first occurrence wins on repeats)
        in ``properties`` and the values they replaced in ``previous``.
        """
        xp, K = self._xp, self._K
        s, d, props, _ = edge_batch(src, dst, edge_props, xp)
        values = property_values(props, self._edge_schema, s.shape[0], xp, fill_missing=False)
        inside = (s < self._n) & (d < self._n)
        s, d = s[inside], d[inside]
        values = {k: v[inside] for k, v in values.items()}
        ss, dd, values, _ = self._unique_pairs(s, d, max(self._n, 1), values)
        pos = K.find_positions(ss, dd, self._degree, self._edge_ptr, self._n)
        found = pos >= 0
        ss, dd, pos = ss[found], dd[found], pos[found]
        slots = self._edge_ptr[ss] + 4 * pos
        ordered = {k: v[found] for k, v in values.items()}
        names = list(self._edge_schema)
        previous = {}
        for name, vals in ordered.items():
            addresses = self._mm.field_addresses(slots, names.index(name) + 1)
            previous[name] = xp.empty(vals.shape[0], dtype=self._edge_schema[name])
            K.read_at(addresses, previous[name])
            K.write_at(addresses, vals)
        return self._change("update", ss, dd, ordered, previous=previous)

    # ------------------------------------------------------------------ vertex updates
    def insert_vertices(self, ids, **vertex_props) -> None:
        """Make sure ``ids`` exist in the id space and set their properties (given ones only)."""
        v = id_array(ids, "ids", self._xp)
        values = property_values(vertex_props, self._vertex_schema, v.shape[0], self._xp,
                                 what="vertex", fill_missing=False)
        n = max(self._n, int(v.max()) + 1) if v.size else self._n
        self._reserve(n)
        self._views.clear()
        self._n = n
        for k, vals in values.items():
            _scatter_last(self._xp, self._vprops[k], v, vals)

    def update_vertices(self, ids, **vertex_props) -> None:
        """Set vertex properties of existing ids."""
        v = self._existing_ids(ids)
        values = property_values(vertex_props, self._vertex_schema, v.shape[0], self._xp,
                                 what="vertex", fill_missing=False)
        for k, vals in values.items():
            _scatter_last(self._xp, self._vprops[k], v, vals)

    def delete_vertices(self, ids) -> EdgeChange:
        """Delete every edge touching ``ids`` (both directions) and reset their properties.

        The id space keeps its size: ids are not renumbered. Returns the deleted edges.
        """
        xp = self._xp
        v = self._existing_ids(ids)
        doomed = xp.zeros(self._n, dtype=bool)
        doomed[v] = True
        if self.directed:
            src, dst = self.edges()
            hit = doomed[src] | doomed[dst]
            change = self.delete_edges(src[hit], dst[hit])
        else:
            v = xp.flatnonzero(doomed)            # each vertex once
            deg = self._degree[v].astype(xp.int64)
            offsets = xp.zeros(v.shape[0] + 1, dtype=xp.int64)
            xp.cumsum(deg, out=offsets[1:])
            out = xp.empty(int(offsets[-1]), dtype=xp.int32)
            self._K.gather_lists(self._edge_ptr[v], deg, offsets[:-1], out)
            change = self.delete_edges(v[_expand(xp, deg, offsets)], out)
        for a in self._vprops.values():
            a[v] = 0
        return change

    def vertex_property(self, name: str):
        """Writable view (shape (num_vertices,)) of a vertex property."""
        if name not in self._vprops:
            raise KeyError(f"unknown vertex property {name!r} (known: "
                           f"{', '.join(self._vprops) or 'none'})")
        return self._vprops[name][:self._n]

    def add_edge_property(self, name: str, dtype, fill=0) -> None:
        """Declare a new edge property; every existing edge gets ``fill``."""
        if name in self._edge_schema or name in ("src", "dst"):
            raise ValueError(f"edge property {name!r} already exists or is reserved")
        self._edge_schema[name] = _numeric_dtype(dtype, name, edge_on=self.device)
        self._mm.add_field(name, dtype, fill)
        self._views.clear()

    def add_vertex_property(self, name: str, dtype, fill=0) -> None:
        if name in self._vertex_schema:
            raise ValueError(f"vertex property {name!r} already exists")
        self._vertex_schema[name] = _numeric_dtype(dtype, name)
        self._vprops[name] = self._xp.full(self._degree.shape[0], fill, dtype=dtype)

    def _existing_ids(self, ids):
        v = id_array(ids, "ids", self._xp)
        if v.size and int(v.max()) >= self._n:
            raise BatchError(f"vertex id {int(v.max())} is outside the id space "
                             f"(num_vertices = {self._n})")
        return v

    # ------------------------------------------------------------------ queries
    def degree(self, vertices=None):
        """Out-degree (int32) of every vertex, or of ``vertices``; undirected: the degree."""
        if vertices is None:
            return self._degree[:self._n].copy()
        return self._degree[self._existing_ids(vertices)]

    def neighbors(self, v: int):
        """(destinations int32, {property: values}) of vertex ``v``, ascending."""
        xp = self._xp
        v = int(self._existing_ids([v])[0])
        d = int(self._degree[v])
        ptr = self._edge_ptr[v:v + 1]
        deg = self._degree[v:v + 1]
        offsets = xp.zeros(1, dtype=xp.int64)
        dst = xp.empty(d, dtype=xp.int32)
        props = {name: xp.empty(d, dtype=dt) for name, dt in self._edge_schema.items()}
        if d:
            self._K.gather_lists(ptr, deg, offsets, dst)
            for f, name in enumerate(self._edge_schema, start=1):
                self._K.gather_lists(self._mm.field_addresses(ptr, f), deg, offsets, props[name])
        return dst, props

    def vertices_in_storage_order(self):
        """The vertices that have edges, in the order their adjacency lists are stored.

        Returns an int32 array (on the graph's device) of length ``count_nonzero(degree())``:
        the lists grouped by size class, smallest blocks first, and in address order within
        a class (each class's block arrays one after another). A kernel that streams every
        list in this order reads each block array front to back, where the id order would
        jump between size classes at almost every vertex. Valid until the next update. One
        sort of the list addresses (a radix sort on the GPU).

        Examples
        --------
        >>> import hornet
        >>> g = hornet.Graph.from_edges([0, 0, 0, 2], [1, 2, 3, 3], num_vertices=5)
        >>> g.vertices_in_storage_order().tolist()     # blocks of 1, 2, 2 and 4 slots
        [1, 2, 3, 0]
        """
        xp = self._xp
        owners = xp.flatnonzero(self._degree[:self._n])
        # one int64 key: size class above the address (addresses stay below 2**56)
        key = (self._size_class[owners].astype(xp.int64) << 56) | self._edge_ptr[owners]
        return owners[xp.argsort(key, kind="stable")].astype(xp.int32)

    def has_edges(self, src, dst=None):
        """Boolean array: does each (src[i], dst[i]) exist?"""
        s, d, _, _ = edge_batch(src, dst, {}, self._xp)
        return self._K.find_positions(s, d, self._degree, self._edge_ptr, self._n) >= 0

    def _coo(self, fields=()):
        xp = self._xp
        deg = self._degree[:self._n]
        offsets = xp.zeros(self._n + 1, dtype=xp.int64)
        xp.cumsum(deg, out=offsets[1:])
        total = int(offsets[-1])
        src = _expand(xp, deg, offsets)
        dst = xp.empty(total, dtype=xp.int32)
        heads = self._edge_ptr[:self._n]
        self._K.gather_lists(heads, deg, offsets[:-1], dst)
        cols = {}
        for name in fields:
            f = list(self._edge_schema).index(name) + 1
            cols[name] = xp.empty(total, dtype=self._edge_schema[name])
            self._K.gather_lists(self._mm.field_addresses(heads, f), deg, offsets[:-1], cols[name])
        return offsets, src, dst, cols

    def edges(self, properties: bool = False):
        """COO export sorted by (src, dst): ``(src, dst)`` int32 arrays.

        Undirected graphs list each edge once with ``src < dst``. With ``properties=True``
        returns ``(src, dst, {name: values})``.
        """
        _, src, dst, cols = self._coo(self._edge_schema if properties else ())
        if not self.directed:
            once = self._K.canonical_entries(src, dst)
            src, dst = src[once], dst[once]
            cols = {k: v[once] for k, v in cols.items()}
        return (src, dst, cols) if properties else (src, dst)

    def to_csr(self, weight: str | None = None):
        """``(indptr int64 (V+1,), indices int32)`` (plus ``data`` if ``weight`` names a
        property); undirected graphs hold both directions. Rows are sorted."""
        offsets, _, dst, cols = self._coo((weight,) if weight else ())
        return (offsets, dst, cols[weight]) if weight else (offsets, dst)

    def to_scipy(self, weight: str | None = None):
        """scipy.sparse.csr_matrix of shape (V, V); values: the ``weight`` property or 1.0."""
        import scipy.sparse as sp
        indptr, indices, *data = (_host(a) for a in self.to_csr(weight))
        values = data[0] if data else np.ones(indices.shape[0], dtype=np.float64)
        return sp.csr_matrix((values, indices, indptr), shape=(self._n, self._n))

    def to_networkx(self):
        """networkx Graph/DiGraph with nodes 0..V-1 and edge properties as attributes."""
        import networkx as nx
        G = nx.DiGraph() if self.directed else nx.Graph()
        G.add_nodes_from(range(self._n))
        src, dst, props = self.edges(properties=True)
        src, dst = _host(src), _host(dst)
        props = {k: _host(v) for k, v in props.items()}
        names = list(props)
        if names:
            rows = zip(src.tolist(), dst.tolist(), *(props[k].tolist() for k in names))
            G.add_edges_from((u, v, dict(zip(names, vals))) for u, v, *vals in rows)
        else:
            G.add_edges_from(zip(src.tolist(), dst.tolist()))
        return G

    def adjacency(self, properties: bool = True) -> AdjacencyView:
        """The (edge pointer, degree) view that algorithm kernels read; valid until the next
        update of the graph (the same view is returned until then, so what an algorithm
        derives from it, such as degree scans, is computed once).

        ``properties=False``: a view without the edge-property addresses (cheaper to make;
        for traversals that read no property).
        """
        view = self._views.get(properties)
        if view is None:
            heads = self._edge_ptr[:self._n]
            props = {}
            if properties:
                props = {name: (self._mm.field_addresses(heads, f), dt)
                         for f, (name, dt) in enumerate(self._edge_schema.items(), start=1)}
            view = AdjacencyView(self._n, self._degree[:self._n], heads, self.directed, True,
                                 self.device, props, self)
            self._views[properties] = view
        return view

    # ------------------------------------------------------------------ memory and checks
    def memory_stats(self) -> dict:
        """Memory held, and what a CSR and a COO of the same graph would take.

        ``reserved_bytes``: block arrays (all edge fields) + bit trees + vertex table (+ vertex
        properties). ``edge_bytes``: bytes of the stored edges themselves. ``csr_bytes``: int64
        indptr + int32 indices + property columns; ``coo_bytes``: int32 src and dst + property
        columns. Undirected graphs store (and CSR/COO count) both directions.
        """
        mm = self._mm.stats()
        slot = self._mm.bytes_per_slot
        cap = self._degree.shape[0]
        vprop_bytes = sum(int(a.nbytes) for a in self._vprops.values())
        vertex_bytes = cap * _VERTEX_BYTES + vprop_bytes
        reserved = mm["block_bytes"] + vertex_bytes
        edge_bytes = self._entries * slot
        return {
            "reserved_bytes": reserved,
            "edge_bytes": edge_bytes,
            "block_bytes": mm["block_bytes"],
            "vertex_table_bytes": vertex_bytes,
            "utilization": edge_bytes / reserved if reserved else 1.0,
            "block_arrays": mm["block_arrays"],
            "size_classes": mm["size_classes"],
            "csr_bytes": (self._n + 1) * 8 + edge_bytes + vprop_bytes,
            "coo_bytes": self._entries * (4 + slot) + vprop_bytes,
            "num_vertices": self._n,
            "stored_entries": self._entries,
        }

    def release_spare_memory(self) -> None:
        """Free the spare (empty) block arrays kept for reuse."""
        self._mm.release_spares()

    def check(self) -> None:
        """Verify every invariant; raise :class:`InvariantError` naming the first broken one.

        Vertex table (degree <= capacity, blocks exactly for vertices with edges), the memory
        manager (bit trees, one owner per block, counts), sorted duplicate-free in-range lists,
        edge count, and for undirected graphs symmetry and no self-loops.
        """
        xp, n = self._xp, self._n
        deg = _host(self._degree[:n]).astype(np.int64)
        cls = _host(self._size_class[:n]).astype(np.int64)
        if bool((self._degree[n:] != 0).any()) or bool((self._size_class[n:] != -1).any()):
            raise InvariantError("vertex table rows past num_vertices are not empty")
        if (deg < 0).any():
            raise InvariantError(f"negative degree at vertex {int(np.argmax(deg < 0))}")
        owns = cls >= 0
        if (owns != (deg > 0)).any():
            v = int(np.flatnonzero(owns != (deg > 0))[0])
            raise InvariantError(f"vertex {v}: degree {deg[v]} but size class {cls[v]} "
                                 "(a block must exist exactly when the degree is positive)")
        capacity = np.where(owns, np.left_shift(1, np.maximum(cls, 0)), 0)
        if (deg > capacity).any():
            v = int(np.flatnonzero(deg > capacity)[0])
            raise InvariantError(f"vertex {v}: degree {deg[v]} exceeds capacity {capacity[v]}")
        if (cls[owns] < self._mm.min_size_class).any():
            raise InvariantError("a block smaller than min_block_size")
        if int(deg.sum()) != self._entries:
            raise InvariantError(f"degrees sum to {int(deg.sum())}, edge count says "
                                 f"{self._entries}")
        owners = np.flatnonzero(owns)
        self._mm.check(_host(self._edge_ptr[:n])[owners], cls[owners])
        bad = xp.empty(n, dtype=xp.int8)
        self._K.list_violations(self._edge_ptr[:n], self._degree[:n], n, bad)
        bad = _host(bad)
        if bad.any():
            v = int(np.flatnonzero(bad)[0])
            what = "is not sorted or has a duplicate" if bad[v] == 1 else \
                "holds a destination outside the id space"
            raise InvariantError(f"the adjacency list of vertex {v} {what}")
        if not self.directed and self._entries:
            _, src, dst, _ = self._coo()
            if bool((src == dst).any()):
                raise InvariantError("an undirected graph holds a self-loop")
            back = _host(self._K.find_positions(dst, src, self._degree, self._edge_ptr, n))
            if (back < 0).any():
                i = int(np.flatnonzero(back < 0)[0])
                raise InvariantError(f"edge ({src[i]}, {dst[i]}) is stored without its "
                                     "reverse")
        used = sum(c["used_blocks"] for c in self._mm.stats()["size_classes"].values())
        if used != owners.size:
            raise InvariantError(f"{used} blocks in use for {owners.size} vertices with edges")


def _numeric_dtype(dtype, name, edge_on: str | None = None) -> np.dtype:
    """``dtype`` checked for a property (``edge_on``: the device of an edge property)."""
    dt = np.dtype(dtype)
    if dt.kind not in "biuf":
        raise TypeError(f"property {name!r} must have a numeric dtype, got {dt}")
    if edge_on == "cpu" and dt == np.float16:
        # Numba has no float16: the CPU kernels that move edge columns cannot take it
        raise TypeError(f"edge property {name!r}: float16 edge properties need the GPU "
                        "backend; use float32 on the CPU")
    return dt
