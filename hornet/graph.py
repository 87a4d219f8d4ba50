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


import numpy as np

from .adjacency import AdjacencyView
from .batch import pipeline
from .batch.scope import batch_length, batch_scope
from .change import EdgeChange, host_copy
from .batch.found_update import found_update
from .batch.planned import planned_pairs, planned_update
from .batch.medium_path import medium_pairs, medium_update
from .batch.small_path import MODE_DELETE, MODE_INSERT, small_pairs, small_update
from .batch.deferred_path import DeferredState, deferred_insert
from .batch.invariants import check_invariants
from .batch.validate import BatchError, MAX_VERTEX_ID, edge_batch, id_array, property_values
from .core.arrays import expand, rows_sorted_unique, scatter_last
from .core.device import backend_available, gpu_unavailable_reason
from . import id_mapping
from .vertex_map import VertexMap
from .graph_queries import GraphQueries
from .memory.manager import DeviceMemoryError, InvariantError, MemoryManager

__all__ = ["Graph", "EdgeChange", "BatchError", "InvariantError", "DeviceMemoryError"]

_VERTEX_BYTES = 4 + 1 + 8   # degree int32, size class int8, edge pointer int64
DEFAULT_BLOCK_ARRAY_EDGES = {"cpu": 1 << 18, "gpu": 1 << 22}


def _batch_kernels(device: str):
    if device == "gpu":
        from .batch import gpu
        return gpu
    from .batch import cpu
    return cpu


def _resolve_device(device: str) -> str:
    if device not in ("cpu", "gpu", "auto"):
        raise ValueError(f"device must be 'cpu', 'gpu' or 'auto', got {device!r}")
    if device == "auto":
        return "gpu" if backend_available("gpu") else "cpu"
    if device == "gpu":
        why = gpu_unavailable_reason()
        if why is not None:
            raise RuntimeError(f"device='gpu' needs CuPy and a CUDA GPU: {why} (or use "
                               "device='cpu' or 'auto')")
    return device


def _array_module(device: str):
    if device == "gpu":
        import cupy
        return cupy
    return np


def _device_array(xp, a, name):
    if xp is np:
        return host_copy(a) if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)
    return xp.asarray(a)


class Graph(GraphQueries, DeferredState):
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
    vertex_map : VertexMap, True or None
        Take vertex ids as users have them (64-bit integers such as hashes, or strings):
        every method that names vertices takes and returns original ids, which the map turns
        into dense ids ``0 .. num_vertices - 1`` as new ids arrive (True: a new map).
        Arrays over all vertices (``degree()``, vertex properties, per-vertex algorithm
        results) are indexed by dense id: :meth:`vertex_ids` names each position;
        ``hornet.algos.to_table(result, g)`` labels a result with original ids; an
        :class:`EdgeChange` keeps dense ``src``/``dst`` (what the dynamic algorithms take)
        and gives original ids through ``change.edges()`` / ``change.to_arrow()``;
        ``g.vertex_map.to_original(ids, missing=...)`` translates vertex-valued results such
        as BFS parents, ``g.vertex_map.lookup`` the other way. None (default): dense ids.
    """

    # CPU graphs insert and delete through the fused pipelines (plan_insert / merge_insert,
    # remove_in_place / move_down); False takes the general one (find / keep / plan / merge or
    # remove, the GPU's), e.g. to compare the two
    _fused_insert = True
    _fused_delete = True
    # A fused CPU insert plans the full lists it reaches without searching them (a block
    # for every entry of the segment; the merge gives it back when enough were present)
    # while the last fused insert found at most this share of its entries present already:
    # searching a list that mostly gains new entries costs more than a block given back.
    # A graph starts searching (no history): inserting present edges then reserves nothing.
    _defer_full_present = 0.25
    # batches of a few thousand entries take the small-batch path (hornet.batch.small_path);
    # False sends every batch through the pipelines above
    _small_batches = True
    # GPU inserts past the small-batch path and up to a few tens of thousands of entries take
    # the medium-batch path (hornet.batch.medium_path); False sends them to the planned path
    _medium_batches = True
    #: GPU deletes of a medium batch's size take the medium-batch path too when True (a
    #: setting of each graph, False by default): right for deletes spread over many short
    #: lists, such as a sliding window's expiry of its oldest edges (the replay sets it on its
    #: windowed graphs); random deletes mostly hit long lists, which the medium path rewrites
    #: in place one block each, where the planned path cuts them into pieces run side by side
    medium_deletes = False
    # GPU batches past the small-batch path are planned on the device with one read-back
    # (hornet.batch.planned); False sends them through the general pipeline
    _planned_batches = True

    def __init__(self, directed: bool = False, device: str = "auto", *, num_vertices: int = 0,
                 edge_properties: dict | None = None, vertex_properties: dict | None = None,
                 block_array_edges: int | None = None, min_block_size: int = 1,
                 vertex_map: VertexMap | bool | None = None):
        if vertex_map is True:
            vertex_map = VertexMap()
        elif vertex_map is False:
            vertex_map = None
        elif vertex_map is not None and not isinstance(vertex_map, VertexMap):
            raise TypeError(f"vertex_map must be a hornet.VertexMap, True or None, got "
                            f"{type(vertex_map).__name__}")
        self.vertex_map = vertex_map
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
        self._medium = None         # medium-batch workspace (GPU), made on first use
        self._storage_listeners = []    # see on_storage_change
        if vertex_map is not None:      # the id space is the map's ids, each one named
            if int(num_vertices) > len(vertex_map):
                raise ValueError(f"num_vertices {num_vertices} exceeds the vertex map's "
                                 f"{len(vertex_map)} ids; with a map, ids come from the map")
            num_vertices = len(vertex_map)
        if num_vertices:
            self._reserve(int(num_vertices))
            self._n = int(num_vertices)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_edges(cls, src, dst=None, num_vertices: int | None = None, directed: bool = False,
                   device: str = "auto", *, block_array_edges: int | None = None,
                   min_block_size: int = 1, vertex_map: VertexMap | bool | None = None,
                   **edge_props) -> "Graph":
        """Build from COO arrays (see :meth:`insert_edges` for accepted inputs).

        Property dtypes are taken from the arrays passed in ``edge_props``;
        ``block_array_edges``, ``min_block_size`` and ``vertex_map`` (ids as users have them,
        e.g. ``vertex_map=True``) are the settings of the constructor.
        """
        schema = {k: np.asarray(v).dtype if not hasattr(v, "dtype") else v.dtype
                  for k, v in edge_props.items()}
        g = cls(directed=directed, device=device, num_vertices=num_vertices or 0,
                edge_properties=schema, block_array_edges=block_array_edges,
                min_block_size=min_block_size, vertex_map=vertex_map)
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
        if directed and indices.size and rows_sorted_unique(xp, indptr, indices) and \
                int(indices.min()) >= 0 and int(indices.max()) < n:
            values = property_values(edge_props, g._edge_schema, indices.shape[0], xp)
            with batch_scope(g, int(indices.shape[0])):
                g._bulk_load(counts, indptr, indices.astype(xp.int32, copy=False), values)
            return g
        src = expand(xp, counts, indptr)
        g.insert_edges(src, indices, **edge_props)
        return g

    def _bulk_load(self, counts, indptr, indices, values) -> None:
        """Fill an empty graph from sorted, duplicate-free CSR rows (directed)."""
        xp = self._xp
        rows = xp.flatnonzero(counts)
        deg = counts[rows]
        ptrs, classes = pipeline.allocate_for(self, rows, deg)
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
        """A deep copy (same settings, edges, properties, vertex map)."""
        g = Graph(self.directed, self.device, num_vertices=self._n,
                  edge_properties=dict(self._edge_schema),
                  vertex_properties=dict(self._vertex_schema),
                  block_array_edges=self._mm.block_array_edges,
                  min_block_size=1 << self._mm.min_size_class)
        src, dst, props = self.edges(properties=True, dense=True)
        g.insert_edges(src, dst, **props)
        if self.vertex_map is not None:
            g.vertex_map = self.vertex_map.copy()
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
        """Make room in the vertex table for ids < n (new rows empty; deferred batches stay)."""
        cap = self._degree_.shape[0]
        if n <= cap:
            return
        if n > MAX_VERTEX_ID + 1:
            raise BatchError(f"the id space cannot exceed {MAX_VERTEX_ID + 1} vertices")
        new_cap = n if cap == 0 else min(MAX_VERTEX_ID + 1, max(n, 2 * cap))

        def grown(a, fill=0):
            b = self._xp.full(new_cap, fill, dtype=a.dtype)
            b[:cap] = a
            return b

        # every array is made before any is replaced: an allocation that fails (a device out
        # of memory) leaves the table as it was, every column of one capacity
        degree, size_class = grown(self._degree_), grown(self._size_class_, -1)
        edge_ptr = grown(self._edge_ptr_)
        vprops = {k: grown(a) for k, a in self._vprops.items()}
        self._views.clear()
        self._degree, self._size_class, self._edge_ptr = degree, size_class, edge_ptr
        self._vprops = vprops

    # ------------------------------------------------------------------ edge updates
    def insert_edges(self, src, dst=None, **edge_props) -> EdgeChange:
        """Insert a batch of edges; return the edges really inserted.

        Parameters
        ----------
        src, dst : integer arrays of equal length E (NumPy, CuPy, lists, Arrow), or ``src`` an
            (E, 2) array / an Arrow table or DataFrame with columns src, dst[, properties] and
            ``dst=None``. Ids are >= 0; the id space grows to cover them.
        **edge_props : arrays of length E (or scalars) for declared edge properties (else 0).

        Edges already in the graph and repeats inside the batch (first occurrence wins) are
        not inserted; an existing edge's properties change only through
        :meth:`update_edges`. Undirected graphs skip self-loops and report how many.
        A refused batch raises and leaves the graph unchanged. With a vertex map, ``src`` and
        ``dst`` hold original ids (new ones are added to the map).
        """
        if self.vertex_map is not None:
            return self._mapped_update(self._insert_edges, src, dst, edge_props, add=True)
        return self._insert_edges(src, dst, edge_props)

    def _mapped_update(self, update, src, dst, edge_props, *, add: bool) -> EdgeChange:
        """``update`` (an edge method on dense ids) applied to a batch in original ids; ids
        the batch added to the map are forgotten again when the graph refuses it."""
        before = len(self.vertex_map)
        try:
            s, d, props = id_mapping.dense_edges(self.vertex_map, src, dst, edge_props,
                                                  add=add)
            change = update(s, d, props)
            if len(self.vertex_map) > self._n:       # ids of skipped self-loops
                self._grow_id_space(len(self.vertex_map))
        except BaseException:
            self.vertex_map.truncate(before)
            raise
        change.vertex_map = self.vertex_map
        return change

    def _grow_id_space(self, n: int) -> None:
        self._reserve(n)
        self._views.clear()
        self._n = n

    def _insert_edges(self, src, dst, edge_props) -> EdgeChange:
        with batch_scope(self, batch_length(src)):
            change = self._fast_update(MODE_INSERT, src, dst, edge_props)
            if change is not None:
                return change
            late = self.device == "cpu" and self._fused_insert   # its sort checks the ids
            s, d, props, top = edge_batch(src, dst, edge_props, self._xp, check=not late)
            values = property_values(props, self._edge_schema, s.shape[0], self._xp)
            return pipeline.insert_prepared(self, s, d, values, None if late else max(self._n, top))

    def _fast_update(self, mode: int, src, dst, edge_props) -> EdgeChange | None:
        """The batch through the first path that takes it: deferred or small, medium, planned
        (GPU); None when none does (the general pipeline then takes it, or refuses it)."""
        insert = mode == MODE_INSERT
        if insert and self._small_batches:      # (host pairs: hornet.batch.deferred_path)
            change = deferred_insert(self, src, dst, edge_props)
            if change is not None:
                return change
        pairs = small_pairs(self, src, dst) if self._small_batches else None
        change = small_update(self, mode, *pairs, edge_props) if pairs is not None else None
        if change is None and self._medium_batches and (insert or self.medium_deletes):
            pairs = medium_pairs(self, src, dst)
            change = medium_update(self, mode, *pairs, edge_props) if pairs is not None \
                else None
        if change is None and self._planned_batches:
            pairs = planned_pairs(self, src, dst, edge_props, insert)
            change = planned_update(self, insert, *pairs) if pairs is not None else None
        return change

    def delete_edges(self, src, dst=None) -> EdgeChange:
        """Delete a batch of edges; return the edges really deleted (absent ones are ignored).

        Accepts the same inputs as :meth:`insert_edges` (property columns are refused).
        Lists shrink to a smaller block when their degree falls under a quarter of capacity;
        empty block arrays are freed and under-used size classes compacted. With a vertex
        map, ids the map does not hold name no edge and are ignored.
        """
        if self.vertex_map is not None:
            return self._mapped_update(lambda s, d, p: self._delete_edges(s, d, p), src, dst,
                                       {}, add=False)
        return self._delete_edges(src, dst, {})

    def _delete_edges(self, src, dst, extra) -> EdgeChange:
        with batch_scope(self, batch_length(src)):
            change = self._fast_update(MODE_DELETE, src, dst, {})
            if change is not None:
                return change
            s, d, props, top = edge_batch(src, dst, {}, self._xp)
            props = {**props, **extra}
            if props:
                raise BatchError(f"delete_edges takes no properties, got {sorted(props)}")
            return pipeline.delete_prepared(self, s, d, top)

    def apply_edges(self, insert, delete, *, keep_sorted: bool = False, **edge_props):
        """Insert the edges ``insert`` = (src, dst) (with ``edge_props``), then delete the
        edges ``delete`` = (src, dst), in one call: the result and the two changes returned
        are those of :meth:`insert_edges` followed by :meth:`delete_edges` (an edge in both
        ends up deleted), for a caller that has both at once (a sliding window's batch and
        expiry). On the CPU the two share one batch, on the GPU one plan and read-back
        (batches past the small-batch path); ``keep_sorted`` adds the insert's distinct
        edges in sorted form, which a later call deletes without sorting them again
        (:class:`hornet.batch.mixed.SortedEdges`). A refused call (bad ids or properties
        in either half) raises and leaves the graph unchanged (with a vertex map: a
        refused insert)."""
        from .batch.mixed import apply_edges
        return apply_edges(self, insert, delete, edge_props, keep_sorted)

    def update_edges(self, src, dst=None, **edge_props) -> EdgeChange:
        """Set property values of edges already present; absent edges are ignored.

        Returns the edges updated with their new values (first occurrence wins on repeats)
        in ``properties`` and the values they replaced in ``previous``.
        """
        if self.vertex_map is not None:
            return self._mapped_update(self._update_edges, src, dst, edge_props, add=False)
        return self._update_edges(src, dst, edge_props)

    def _update_edges(self, src, dst, edge_props) -> EdgeChange:
        if self.device == "gpu":
            change = found_update(self, src, dst, edge_props)
            if change is not None:
                return change
        xp, K = self._xp, self._K
        s, d, props, top = edge_batch(src, dst, edge_props, xp)
        values = property_values(props, self._edge_schema, s.shape[0], xp, fill_missing=False)
        if top > self._n:                # pairs naming ids past the id space are absent
            inside = xp.flatnonzero((s < self._n) & (d < self._n))
            s, d = s[inside], d[inside]
            values = {k: v[inside] for k, v in values.items()}
        ss, dd, values, _ = pipeline.unique_pairs(self, s, d, max(self._n, 1), values)
        pos = K.find_positions(ss, dd, self._degree, self._edge_ptr, self._n)
        # (one index of the present pairs for every array: one count reaches the host)
        found = xp.flatnonzero(pos >= 0)
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
        return pipeline.edge_change(self, "update", ss, dd, ordered, previous=previous)

    # ------------------------------------------------------------------ vertex updates
    def insert_vertices(self, ids, **vertex_props) -> None:
        """Make sure ``ids`` exist in the id space and set their properties (given ones only)."""
        if self.vertex_map is not None:
            before = len(self.vertex_map)
            try:
                ids = id_mapping.dense_vertices(self.vertex_map, ids, add=True)
                self._insert_vertices(ids, vertex_props)
            except BaseException:
                self.vertex_map.truncate(before)
                raise
            return
        self._insert_vertices(ids, vertex_props)

    def _insert_vertices(self, ids, vertex_props) -> None:
        # host ids for a GPU graph are checked on the host and uploaded only when properties
        # are set: growing the id space then needs no device read
        on_host = isinstance(ids, np.ndarray) and self._xp is not np
        v = id_array(ids, "ids", np if on_host else self._xp)
        values = property_values(vertex_props, self._vertex_schema, v.shape[0], self._xp,
                                 what="vertex", fill_missing=False)
        n = max(self._n, int(v.max()) + 1) if v.size else self._n
        if on_host and values:
            v = self._xp.asarray(v)
        if self.vertex_map is not None:
            n = max(n, len(self.vertex_map))
        self._grow_id_space(n)
        for k, vals in values.items():
            scatter_last(self._xp, self._vprops[k], v, vals)

    def update_vertices(self, ids, **vertex_props) -> None:
        """Set vertex properties of existing ids."""
        v = self._existing_ids(ids)
        values = property_values(vertex_props, self._vertex_schema, v.shape[0], self._xp,
                                 what="vertex", fill_missing=False)
        for k, vals in values.items():
            scatter_last(self._xp, self._vprops[k], v, vals)

    def delete_vertices(self, ids) -> EdgeChange:
        """Delete every edge touching ``ids`` (both directions) and reset their properties.

        The id space keeps its size: ids are not renumbered. Returns the deleted edges.
        """
        xp = self._xp
        v = self._existing_ids(ids)
        doomed = xp.zeros(self._n, dtype=bool)
        doomed[v] = True
        if self.directed:
            src, dst = self.edges(dense=True)
            hit = doomed[src] | doomed[dst]
            change = self._delete_edges(src[hit], dst[hit], {})
        else:
            v = xp.flatnonzero(doomed)            # each vertex once
            deg = self._degree[v].astype(xp.int64)
            offsets = xp.zeros(v.shape[0] + 1, dtype=xp.int64)
            xp.cumsum(deg, out=offsets[1:])
            out = xp.empty(int(offsets[-1]), dtype=xp.int32)
            self._K.gather_lists(self._edge_ptr[v], deg, offsets[:-1], out)
            change = self._delete_edges(v[expand(xp, deg, offsets)], out, {})
        for a in self._vprops.values():
            a[v] = 0
        change.vertex_map = self.vertex_map
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
        if self.vertex_map is not None:
            try:
                ids = id_mapping.dense_vertices(self.vertex_map, ids, add=False)
            except KeyError as e:
                raise BatchError(e.args[0]) from None
        v = id_array(ids, "ids", self._xp)
        if v.size and int(v.max()) >= self._n:
            raise BatchError(f"vertex id {int(v.max())} is outside the id space "
                             f"(num_vertices = {self._n})")
        return v

    # ------------------------------------------------------------------ kernel views
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

    def vertex_table(self) -> tuple:
        """The vertex table's own (degree int32 (capacity,), edge_ptr int64 (capacity,))
        arrays, on the graph's device, capacity >= ``num_vertices``: rows below
        ``num_vertices`` are what :meth:`adjacency` views, the others have degree 0. Every
        change updates them in place; they are replaced only when the id space outgrows the
        capacity. So, unlike a view, their addresses stay valid across updates for as long as
        they are the same objects (compare with ``is``): a kernel launched after every
        update reads the graph through them without a new view. Read-only for callers."""
        return self._degree, self._edge_ptr

    def property_pointers(self, vertices, name: str):
        """int64 addresses (on the graph's device, shape of ``vertices``) of the first value
        of edge property ``name`` in each listed vertex's list: what
        ``adjacency().property_ptrs[name]`` holds for these vertices alone, valid until the
        next update (meaningless where the degree is 0)."""
        if name not in self._edge_schema:
            raise KeyError(f"unknown edge property {name!r} (known: "
                           f"{', '.join(self._edge_schema) or 'none'})")
        heads = self._edge_ptr[vertices]
        return self._mm.field_addresses(heads, list(self._edge_schema).index(name) + 1)

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

    def steady_churn(self):
        """Context manager for updates that delete about as much as they insert (a sliding
        window's expiry after each batch): the room a delete gives back is taken again by
        the inserts that follow, so inside the block memory is given back only past a wider
        band (:meth:`hornet.memory.manager.MemoryManager.steady_churn`), not after every
        delete, and a delete batch of the general pipeline leaves a list that shrinks in its
        block (lists are refitted only past the band:
        :data:`hornet.memory.list_fit.STEADY_LOOSE_SHARE`; the small-batch path, batches of
        a few thousand entries, moves lists as it does outside). Results are the same; only
        where lists sit and when memory is given back differ."""
        return self._mm.steady_churn()

    def set_array_growth(self, slots: int) -> None:
        """Make every block array that growth adds from now on hold at least ``slots`` slots
        (an int >= 0, within ``block_array_edges``; 0, the default: arrays sized by geometric
        growth alone). A graph filled from empty in many small batches (a stream
        replay) otherwise adds small arrays in many classes batch after batch, each a few
        allocations, a bit tree and a rebuild of the arrays' lookup; with a floor it adds
        one per class now and then, for at most ``slots`` slots of spare room per class.
        While the floor is set, the block cache's rings (the free blocks small batches take
        without the host) may also hold up to their bytes budget whatever the graph's lists,
        so that a growing graph refills them once in several batches instead of nearly every
        batch. Compaction still packs into arrays of exact size. Results are the same."""
        slots = int(slots)
        if slots < 0:
            raise ValueError(f"slots must be >= 0, got {slots}")
        self._mm.growth_floor_slots = slots

    def reserve(self, num_vertices: int = 0, num_edges: int = 0) -> None:
        """Make room ahead for a graph that inserts are expected to grow to ids below
        ``num_vertices`` and ``num_edges`` edges (the role of Hornet's and cuGraph's reserve
        calls): rows of the vertex table, and free blocks held ready for the lists' first
        blocks and their moves to larger ones (the block cache's rings, which small batches
        take from without the host: bounded by their bytes budget and by what lists of
        ``num_edges`` edges could take; see
        :meth:`hornet.memory.block_cache.BlockCache.fill_for`), so that the batches that
        follow do not stop to grow them. The id space, the edges and every result stay as
        they are; only memory is taken (and kept: ``memory_stats`` counts the rings' blocks
        as reserved, unused)."""
        num_vertices, num_edges = int(num_vertices), int(num_edges)
        if num_vertices < 0 or num_edges < 0:
            raise ValueError(f"reserve takes counts >= 0, got {num_vertices}, {num_edges}")
        if num_vertices > MAX_VERTEX_ID + 1:
            raise ValueError(f"reserve: the id space cannot exceed {MAX_VERTEX_ID + 1} "
                             f"vertices, got num_vertices={num_vertices}")
        self._reserve(num_vertices)
        if num_edges:
            mm = self._mm
            entries = num_edges * (1 if self.directed else 2)
            mm.block_cache().fill_for(num_vertices or entries, entries)
            mm.lookup()

    def release_spare_memory(self) -> None:
        """Free the spare (empty) block arrays kept for reuse."""
        self._mm.release_spares()

    def check(self) -> None:
        """Verify every invariant; raise :class:`InvariantError` naming the first broken one.

        Vertex table (degree <= capacity, blocks exactly for vertices with edges), the memory
        manager (bit trees, one owner per block, counts), sorted duplicate-free in-range lists,
        edge count, and for undirected graphs symmetry and no self-loops.
        """
        check_invariants(self)

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
