"""Reading a graph: lookups (degrees, neighbours, edge existence and values), exports (COO,
CSR, SciPy, networkx) and the storage order of its adjacency lists.

:class:`GraphQueries` is a base of :class:`hornet.Graph`: these methods read the vertex table
and the block arrays and change nothing.
"""
from __future__ import annotations

import numpy as np

from . import id_mapping
from .batch.validate import edge_batch
from .change import host_copy
from .core.arrays import expand


class GraphQueries:
    """The read-only half of :class:`hornet.Graph` (see there for the attributes used)."""
    def vertex_ids(self):
        """The id of every vertex as the user knows it, indexed by dense id: host array
        (num_vertices,), the original ids (int64 or str) with a vertex map, else ``arange``
        (int64). Names the positions of ``degree()``, vertex properties and per-vertex
        algorithm results."""
        if self.vertex_map is None:
            return np.arange(self._n, dtype=np.int64)
        return self.vertex_map.to_original(np.arange(self._n, dtype=np.int64))

    def degree(self, vertices=None):
        """Out-degree (int32) of every vertex (indexed by dense id, see :meth:`vertex_ids`),
        or of ``vertices`` (original ids with a vertex map); undirected: the degree."""
        if vertices is None:
            return self._degree[:self._n].copy()
        return self._degree[self._existing_ids(vertices)]

    def neighbors(self, v):
        """(destinations int32, {property: values}) of vertex ``v``, ascending by dense id.
        With a vertex map, ``v`` and the destinations are original ids (host arrays)."""
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
        if self.vertex_map is not None:
            dst = self.vertex_map.to_original(host_copy(dst))
        return dst, props

    def vertices_in_storage_order(self):
        """The vertices that have edges, in the order their adjacency lists are stored.

        Returns an int32 array (on the graph's device) of length ``count_nonzero(degree())``:
        the lists grouped by size class, smallest blocks first, and in address order within
        a class (each class's block arrays one after another). A kernel that streams every
        list in this order reads each block array front to back, where the id order would
        jump between size classes at almost every vertex. Valid until the next update.
        The vertices scattered to their :meth:`storage_ranks`, empty ranks dropped: no sort.

        Examples
        --------
        >>> import hornet
        >>> g = hornet.Graph.from_edges([0, 0, 0, 2], [1, 2, 3, 3], num_vertices=5)
        >>> g.vertices_in_storage_order().tolist()     # blocks of 1, 2, 2 and 4 slots
        [1, 2, 3, 0]
        """
        xp = self._xp
        rank, total = self.storage_ranks()
        slots = xp.full(total + 1, -1, dtype=xp.int32)
        slots[xp.where(rank >= 0, rank, total)] = xp.arange(self._n, dtype=xp.int32)
        slots = slots[:total]
        return slots[slots >= 0]

    def storage_ranks(self):
        """Where each vertex's list lies in storage order: ``(rank, total)``.

        ``rank``: int64 (V,) on the graph's device, the position of the vertex's block among
        all ``total`` blocks of the graph's block arrays taken in storage order (size class by
        size class, smallest blocks first, each class's arrays by address, each array front
        to back); distinct for the vertices with edges, -1 for a vertex without. Valid until
        the next update. Found from the block's array (a binary search among the array
        bases) and its slot there: a few vectorized operations, no sort, no host sync.
        """
        xp = self._xp
        lookup = self._mm.lookup()
        if lookup.bases.shape[0] == 0 or self._n == 0:
            return xp.full(self._n, -1, dtype=xp.int64), 0
        memo = getattr(self, "_rank_memo", None)
        if memo is None or memo[0] is not lookup:
            # per block array: its first rank (arrays in storage order, a host sort of the
            # few arrays), kept while the arrays stay
            blocks = np.array([a.num_blocks for a in lookup.arrays], dtype=np.int64)
            ranked = np.lexsort((lookup.bases, lookup.size_class))
            first = np.empty_like(blocks)
            first[ranked] = np.cumsum(blocks[ranked]) - blocks[ranked]
            memo = self._rank_memo = (lookup, xp.asarray(first), int(blocks.sum()))
        _, first, total = memo
        heads = self._edge_ptr[:self._n]
        array_of = xp.maximum(xp.searchsorted(lookup.dev_bases, heads, side="right") - 1, 0)
        rank = first[array_of] + ((heads - lookup.dev_bases[array_of])
                                  >> lookup.dev_block_shift[array_of])
        return xp.where(self._degree[:self._n] > 0, rank, -1), total

    def on_storage_change(self, listener) -> None:
        """Call ``listener()`` after every insert or delete batch that created or freed
        block arrays, once the batch is complete (``storage_blocks`` is then already
        rebuilt for the columns read before): what an algorithm derives from the block
        arrays (such as SpMV's block-walk tables) is kept current by the updates instead of
        being rebuilt at its first call on the new state. ``listener`` must not raise (the
        batch is committed when it runs) and should hold the graph weakly."""
        self._storage_listeners.append(listener)

    def storage_blocks(self, name: str | None = None) -> dict:
        """The block arrays in :meth:`storage_ranks` order (``column``: of the destinations, or
        of edge property ``name``): see ``MemoryManager.storage_layout``."""
        if name is not None and name not in self._edge_schema:
            raise KeyError(f"unknown edge property {name!r}")
        field = 0 if name is None else list(self._edge_schema).index(name) + 1
        return self._mm.storage_layout(field)

    def _dense_query(self, src, dst):
        """``(known, src, dst)`` in dense ids for a query naming original ids: ``known``
        (bool, host) marks the pairs whose ids the map holds, src and dst are those pairs."""
        s, d, _ = id_mapping.edge_input(src, dst, {})
        both = self.vertex_map.lookup(id_mapping.concat_ids(s, d))
        ds, dd = both[:len(s)], both[len(s):]
        known = (ds >= 0) & (dd >= 0)
        return known, ds[known], dd[known]

    def has_edges(self, src, dst=None, *, dense: bool = False):
        """Boolean array: does each (src[i], dst[i]) exist? (With a vertex map: original ids,
        host array, unless ``dense=True``.)"""
        if self.vertex_map is not None and not dense:
            known, s, d = self._dense_query(src, dst)
            out = np.zeros(known.shape[0], dtype=bool)
            out[known] = host_copy(self._has_dense(s, d))
            return out
        return self._has_dense(src, dst)

    def _has_dense(self, src, dst):
        s, d, _, _ = edge_batch(src, dst, {}, self._xp)
        return self._K.find_positions(s, d, self._degree, self._edge_ptr, self._n) >= 0

    def edge_values(self, src, dst=None, names=None):
        """Property values of the edges ``(src[i], dst[i])`` (inputs as for
        :meth:`has_edges`): ``(found, {name: values})`` on the graph's device, ``found`` bool
        (E,), each ``values`` (E,) in its property's dtype, 0 where the edge is absent.
        ``names``: the properties to read (default: every edge property). With a vertex map:
        original ids, host arrays."""
        if self.vertex_map is not None:
            known, s, d = self._dense_query(src, dst)
            found, vals = self._values_dense(s, d, names)
            out_found = np.zeros(known.shape[0], dtype=bool)
            out_found[known] = host_copy(found)
            out = {}
            for k, v in vals.items():
                out[k] = np.zeros(known.shape[0], dtype=v.dtype)
                out[k][known] = host_copy(v)
            return out_found, out
        return self._values_dense(src, dst, names)

    def _values_dense(self, src, dst, names):
        xp = self._xp
        s, d, _, _ = edge_batch(src, dst, {}, xp)
        pos = self._K.find_positions(s, d, self._degree, self._edge_ptr, self._n)
        found = pos >= 0
        names = list(self._edge_schema) if names is None else list(names)
        schema = list(self._edge_schema)
        slots = self._edge_ptr[s[found]] + 4 * pos[found]
        out = {}
        for name in names:
            if name not in self._edge_schema:
                raise KeyError(f"unknown edge property {name!r} (known: "
                               f"{', '.join(schema) or 'none'})")
            hit = xp.empty(slots.shape[0], dtype=self._edge_schema[name])
            self._K.read_at(self._mm.field_addresses(slots, schema.index(name) + 1), hit)
            out[name] = xp.zeros(s.shape[0], dtype=self._edge_schema[name])
            out[name][found] = hit
        return found, out

    def _coo(self, fields=()):
        xp = self._xp
        deg = self._degree[:self._n]
        offsets = xp.zeros(self._n + 1, dtype=xp.int64)
        xp.cumsum(deg, out=offsets[1:])
        total = int(offsets[-1])
        src = expand(xp, deg, offsets)
        dst = xp.empty(total, dtype=xp.int32)
        heads = self._edge_ptr[:self._n]
        self._K.gather_lists(heads, deg, offsets[:-1], dst)
        cols = {}
        for name in fields:
            f = list(self._edge_schema).index(name) + 1
            cols[name] = xp.empty(total, dtype=self._edge_schema[name])
            self._K.gather_lists(self._mm.field_addresses(heads, f), deg, offsets[:-1], cols[name])
        return offsets, src, dst, cols

    def edges(self, properties: bool = False, *, dense: bool = False):
        """COO export sorted by (src, dst): ``(src, dst)`` int32 arrays.

        Undirected graphs list each edge once with ``src < dst``. With ``properties=True``
        returns ``(src, dst, {name: values})``. With a vertex map, ``src`` and ``dst`` hold
        the original ids (host arrays, int64 or str; same order, sorted by dense id) unless
        ``dense=True``.
        """
        _, src, dst, cols = self._coo(self._edge_schema if properties else ())
        if not self.directed:
            once = self._K.canonical_entries(src, dst)
            src, dst = src[once], dst[once]
            cols = {k: v[once] for k, v in cols.items()}
        if self.vertex_map is not None and not dense:
            src = self.vertex_map.to_original(host_copy(src))
            dst = self.vertex_map.to_original(host_copy(dst))
        return (src, dst, cols) if properties else (src, dst)

    def to_csr(self, weight: str | None = None):
        """``(indptr int64 (V+1,), indices int32)`` (plus ``data`` if ``weight`` names a
        property); undirected graphs hold both directions. Rows are sorted."""
        offsets, _, dst, cols = self._coo((weight,) if weight else ())
        return (offsets, dst, cols[weight]) if weight else (offsets, dst)

    def to_scipy(self, weight: str | None = None):
        """scipy.sparse.csr_matrix of shape (V, V); values: the ``weight`` property or 1.0."""
        import scipy.sparse as sp
        indptr, indices, *data = (host_copy(a) for a in self.to_csr(weight))
        values = data[0] if data else np.ones(indices.shape[0], dtype=np.float64)
        return sp.csr_matrix((values, indices, indptr), shape=(self._n, self._n))

    def to_networkx(self):
        """networkx Graph/DiGraph with nodes 0..V-1 (with a vertex map: the original ids) and
        edge properties as attributes."""
        try:
            import networkx as nx
        except ImportError:
            raise ImportError("to_networkx needs networkx: pip install hornet-py[networkx]") \
                from None
        G = nx.DiGraph() if self.directed else nx.Graph()
        G.add_nodes_from(range(self._n) if self.vertex_map is None
                         else self.vertex_map.originals().tolist())
        src, dst, props = self.edges(properties=True)
        src, dst = host_copy(src), host_copy(dst)
        props = {k: host_copy(v) for k, v in props.items()}
        names = list(props)
        if names:
            rows = zip(src.tolist(), dst.tolist(), *(props[k].tolist() for k in names))
            G.add_edges_from((u, v, dict(zip(names, vals))) for u, v, *vals in rows)
        else:
            G.add_edges_from(zip(src.tolist(), dst.tolist()))
        return G
