"""A plain-Python reference model of a dynamic graph: the oracle the state machine compares to.

It is deliberately simple (a dict of edges), so that it can be trusted by reading it.
"""
from __future__ import annotations

import numpy as np


class ReferenceGraph:
    """Edges as a dict ``(u, v) -> {property: value}``; undirected edges keyed with u < v."""

    def __init__(self, directed: bool, edge_properties: dict | None = None,
                 vertex_properties: dict | None = None, num_vertices: int = 0):
        self.directed = directed
        self.edge_properties = dict(edge_properties or {})
        self.vertex_properties = dict(vertex_properties or {})
        self.num_vertices = num_vertices
        self.edges: dict[tuple[int, int], dict] = {}
        self.vertex_values: dict[str, dict[int, float]] = {k: {} for k in self.vertex_properties}

    def key(self, u: int, v: int) -> tuple[int, int]:
        return (u, v) if self.directed or u < v else (v, u)

    def _cast(self, name: str, value):
        return np.asarray(value).astype(self.edge_properties[name]).item()

    def insert(self, src, dst, props: dict) -> dict:
        """Apply an insert batch; return the edges it really inserted with their values."""
        added = {}
        for i, (u, v) in enumerate(zip(list(map(int, src)), list(map(int, dst)))):
            self.num_vertices = max(self.num_vertices, u + 1, v + 1)
            if not self.directed and u == v:
                continue
            k = self.key(u, v)
            if k in self.edges or k in added:
                continue
            added[k] = {n: self._cast(n, props[n][i]) if n in props else
                        self._cast(n, 0) for n in self.edge_properties}
        self.edges.update(added)
        return added

    def delete(self, src, dst) -> dict:
        gone = {}
        for u, v in zip(list(map(int, src)), list(map(int, dst))):
            k = self.key(u, v)
            if k in self.edges:
                gone[k] = self.edges.pop(k)
        return gone

    def update(self, src, dst, props: dict) -> dict:
        done = {}
        for i, (u, v) in enumerate(zip(list(map(int, src)), list(map(int, dst)))):
            k = self.key(u, v)
            if k in self.edges and k not in done:
                done[k] = {n: self._cast(n, props[n][i]) for n in props}
        for k, vals in done.items():
            self.edges[k].update(vals)
        return done

    def delete_vertices(self, ids) -> dict:
        doomed = set(map(int, ids))
        gone = {k: self.edges[k] for k in self.edges if k[0] in doomed or k[1] in doomed}
        for k in gone:
            del self.edges[k]
        for values in self.vertex_values.values():
            for v in doomed:
                values.pop(v, None)
        return gone

    def insert_vertices(self, ids, props: dict) -> None:
        ids = list(map(int, ids))
        if ids:
            self.num_vertices = max(self.num_vertices, max(ids) + 1)
        for name, values in props.items():
            dt = self.vertex_properties[name]
            for v, x in zip(ids, values):
                self.vertex_values[name][v] = np.asarray(x).astype(dt).item()

    # ---------------------------------------------------------------- views for oracles
    def edge_list(self) -> list[tuple[int, int]]:
        return sorted(self.edges)

    def degree(self) -> np.ndarray:
        deg = np.zeros(self.num_vertices, dtype=np.int64)
        for u, v in self.edges:
            deg[u] += 1
            if not self.directed:
                deg[v] += 1
        return deg

    def to_networkx(self):
        import networkx as nx
        G = nx.DiGraph() if self.directed else nx.Graph()
        G.add_nodes_from(range(self.num_vertices))
        G.add_edges_from((u, v, dict(p)) for (u, v), p in self.edges.items())
        return G

    def to_scipy(self, weight: str | None = None):
        import scipy.sparse as sp
        n = self.num_vertices
        rows, cols, vals = [], [], []
        for (u, v), p in self.edges.items():
            w = p[weight] if weight else 1.0
            rows.append(u), cols.append(v), vals.append(w)
            if not self.directed:
                rows.append(v), cols.append(u), vals.append(w)
        return sp.csr_matrix((vals, (rows, cols)), shape=(n, n), dtype=np.float64)
