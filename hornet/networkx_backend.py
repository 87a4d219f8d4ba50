"""hornet as a networkx backend: ``nx.triangles(G, backend="hornet")`` runs on a hornet graph.

networkx (>= 3.4) dispatches a function to a backend named by ``backend=``, by
``nx.config.backend_priority`` or by the type of the graph passed in (an object whose
``__networkx_backend__`` is ``"hornet"``). The package's entry points
(``networkx.backends``: :class:`BackendInterface`; ``networkx.backend_info``:
:func:`hornet_nx_info.get_info`) register this module once hornet-py is installed.

- :class:`HornetGraph` is the backend graph: a :class:`hornet.Graph` whose vertex ``i`` is
  the node ``node_labels[i]`` (networkx nodes are any hashables; they keep networkx's node
  order), plus the graph, node and edge attributes when networkx asks to keep them.
- :meth:`BackendInterface.convert_from_nx` / :meth:`~BackendInterface.convert_to_nx` convert
  both ways; ``can_run`` declines what the static algorithms do not cover (multigraphs,
  directed graphs where networkx's function is undirected-only, weights, unknown keyword
  arguments) so that networkx raises or falls back to its own implementation.
- The functions (``triangles``, ``transitivity``, ``clustering``, ``average_clustering``,
  ``k_truss``, ``single_source_shortest_path_length``,
  ``single_target_shortest_path_length`` (undirected), ``bfs_layers``,
  ``descendants_at_distance``, ``descendants``, ``node_connected_component``,
  ``is_connected``) run :mod:`hornet.algos` and return networkx's types: dicts
  keyed by the node labels, sets, generators where networkx yields, Python numbers.

The device: ``nx.config.backends.hornet.device`` ("auto" by default: the GPU when CuPy sees
one, else the CPU; "cpu" and "gpu" force one). Results always come back on the host.

    >>> import networkx as nx
    >>> G = HornetGraph.from_networkx(nx.complete_graph(["a", "b", "c", "d"]), device="cpu")
    >>> BackendInterface.triangles(G)
    {'a': 3, 'b': 3, 'c': 3, 'd': 3}
"""
from __future__ import annotations

import inspect
import math
import numbers
from itertools import chain
from typing import Iterable, Iterator

import networkx as nx
import numpy as np

import hornet
import hornet.algos as algos
from hornet_nx_info import FUNCTIONS, get_info

__all__ = ["BackendInterface", "HornetGraph", "get_info", "configured_device"]

BACKEND_NAME = "hornet"
# networkx refuses directed graphs for these (not_implemented_for("directed"))
_NX_UNDIRECTED_ONLY = {"triangles", "k_truss", "node_connected_component", "is_connected"}
# networkx runs these on directed graphs too, with a meaning hornet does not compute
# (directed clustering, transitivity over successors, lengths over in-edges)
_HORNET_UNDIRECTED_ONLY = {"transitivity", "clustering", "average_clustering",
                           "single_target_shortest_path_length"}
_UNDIRECTED_ONLY = _NX_UNDIRECTED_ONLY | _HORNET_UNDIRECTED_ONLY
_SELF_LOOP_MESSAGE = ("Input graph has self loops which is not permitted; "
                      "Consider using G.remove_edges_from(nx.selfloop_edges(G)).")
_MAX_K = 2**30          # k-truss orders above any support a graph of int32 ids can have


def configured_device() -> str:
    """The device conversions use: ``nx.config.backends.hornet.device``, "auto" if unset."""
    try:
        device = nx.config.backends[BACKEND_NAME].device
    except (AttributeError, KeyError, TypeError):
        device = None
    return device or "auto"


def _host(a) -> np.ndarray:
    """NumPy array of a NumPy or CuPy array."""
    if type(a).__module__.startswith("cupy"):
        return a.get()
    return np.asarray(a)


def _array_module(a):
    """numpy, or cupy for a CuPy array."""
    if type(a).__module__.startswith("cupy"):
        import cupy
        return cupy
    return np


class HornetGraph:
    """A :class:`hornet.Graph` with networkx node labels: the hornet backend's graph type.

    Parameters
    ----------
    graph : hornet.Graph
        Vertex ``i`` is node ``nodes[i]``; its vertex id space must equal ``len(nodes)``.
    nodes : iterable of hashables, optional
        Node labels, one per vertex, distinct. Default: ``graph.vertex_ids()``, the original
        ids of a graph with a vertex map, else ``range(graph.num_vertices)``.
    graph_attrs : dict, optional
        networkx graph attributes (``G.graph``).
    node_data : list of dict, optional
        Attribute dict of each node, aligned with ``nodes``.
    edge_data : (keys, list of dict), optional
        Attribute dicts of the edges, in ascending order of their int64 keys
        ``u * V + v`` (undirected: ``u < v``), ``u, v`` vertex ids.
    has_self_loops : bool
        The networkx graph it came from had self-loops (an undirected hornet graph holds none;
        networkx's ``k_truss`` refuses such graphs).

    Attributes
    ----------
    hornet_graph : hornet.Graph
    node_labels : list        ``node_labels[i]`` is the label of vertex ``i``
    graph : dict              graph attributes
    """

    __networkx_backend__ = BACKEND_NAME

    def __init__(self, graph: "hornet.Graph", nodes: Iterable | None = None, *,
                 graph_attrs: dict | None = None, node_data: list | None = None,
                 edge_data: tuple | None = None, has_self_loops: bool = False):
        n = graph.num_vertices
        labels = graph.vertex_ids().tolist() if nodes is None else list(nodes)
        if len(labels) != n:
            raise ValueError(f"{len(labels)} node labels for a graph of {n} vertices")
        index = dict(zip(labels, range(n)))
        if len(index) != n:
            raise ValueError("node labels must be distinct")
        if node_data is not None and len(node_data) != n:
            raise ValueError(f"{len(node_data)} node attribute dicts for {n} nodes")
        self.hornet_graph = graph
        self.node_labels = labels
        self.graph = dict(graph_attrs or {})
        self._index = index
        self._node_data = node_data
        self._edge_data = edge_data
        self.has_self_loops = bool(has_self_loops)
        self.__networkx_cache__ = {}

    # ------------------------------------------------------------------ conversion
    @classmethod
    def from_networkx(cls, G, device: str = "auto", *, node_attrs: bool = False,
                      edge_attrs: bool = False, graph_attrs: bool = True) -> "HornetGraph":
        """Convert a networkx ``Graph`` or ``DiGraph`` (any hashable nodes).

        Parameters
        ----------
        G : networkx.Graph or networkx.DiGraph (multigraphs raise NotImplementedError)
        device : "cpu", "gpu" or "auto"
        node_attrs, edge_attrs, graph_attrs : bool
            Keep the node / edge attribute dicts (shallow copies; needed only by functions
            that return graphs) and the graph attributes.

        Returns
        -------
        HornetGraph whose vertex ``i`` is the ``i``-th node of ``G`` (networkx's node order).
        Undirected self-loops are not stored (hornet's undirected graphs hold none).
        """
        if G.is_multigraph():
            raise NotImplementedError("hornet's networkx backend does not take multigraphs")
        directed = G.is_directed()
        nodes = list(G)
        n = len(nodes)
        adj = G._adj
        degree = np.fromiter(map(len, adj.values()), dtype=np.int64, count=n)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(degree, out=indptr[1:])
        neighbours = chain.from_iterable(adj.values())     # rows in networkx's order
        index = None
        if nodes == list(range(n)):
            indices = np.fromiter(neighbours, dtype=np.int64, count=int(indptr[-1]))
        else:
            index = dict(zip(nodes, range(n)))
            indices = np.fromiter(map(index.__getitem__, neighbours), dtype=np.int64,
                                  count=int(indptr[-1]))
        src = np.repeat(np.arange(n, dtype=np.int64), degree)
        loops = src == indices
        if directed:
            keep = np.ones(indices.shape[0], dtype=bool)
        else:
            keep = src < indices                           # each edge once, no self-loop
        hg = hornet.Graph.from_edges(src[keep].astype(np.int32),
                                     indices[keep].astype(np.int32), num_vertices=n,
                                     directed=directed, device=device)
        node_data = list(map(G._node.__getitem__, nodes)) if node_attrs else None
        edge_data = None
        if edge_attrs:
            index = index if index is not None else dict(zip(nodes, range(n)))
            edge_data = _edge_data_of(G, index, n, directed)
        return cls(hg, nodes, graph_attrs=G.graph if graph_attrs else None,
                   node_data=node_data, edge_data=edge_data,
                   has_self_loops=bool(loops.any()))

    def to_networkx(self):
        """The networkx ``Graph`` / ``DiGraph``: same nodes (order kept), edges and the
        attributes this graph keeps (copied)."""
        H = nx.DiGraph() if self.is_directed() else nx.Graph()
        H.graph.update(self.graph)
        labels = self.node_labels
        if self._node_data is not None:
            H.add_nodes_from(zip(labels, map(dict, self._node_data)))
        else:
            H.add_nodes_from(labels)
        src, dst = (_host(a).astype(np.int64) for a in self.hornet_graph.edges(dense=True))
        us = map(labels.__getitem__, src.tolist())
        vs = map(labels.__getitem__, dst.tolist())
        if self._edge_data is not None:
            data = self._edge_attributes(src, dst)
            H.add_edges_from(zip(us, vs, map(dict, data)))
        else:
            H.add_edges_from(zip(us, vs))
        return H

    def _edge_attributes(self, src: np.ndarray, dst: np.ndarray) -> list:
        """Attribute dicts of the edges (src[i], dst[i]) (int64 host arrays, undirected:
        src < dst); ``{}`` for an edge without a stored dict."""
        keys, data = self._edge_data
        n = len(self.node_labels)
        want = src * n + dst
        pos = np.searchsorted(keys, want)
        pos_in = np.minimum(pos, max(keys.shape[0] - 1, 0))
        found = (pos < keys.shape[0]) & (keys[pos_in] == want) if keys.shape[0] else \
            np.zeros(want.shape[0], dtype=bool)
        empty = {}
        return [data[p] if ok else empty for p, ok in zip(pos_in.tolist(), found.tolist())]

    # ------------------------------------------------------------------ networkx-like queries
    def is_directed(self) -> bool:
        return self.hornet_graph.directed

    def is_multigraph(self) -> bool:
        return False

    def number_of_nodes(self) -> int:
        return len(self.node_labels)

    def number_of_edges(self) -> int:
        """Edges of the hornet graph (undirected: each once; self-loops not stored)."""
        return self.hornet_graph.num_edges

    def __len__(self) -> int:
        return len(self.node_labels)

    def __iter__(self) -> Iterator:
        return iter(self.node_labels)

    def __contains__(self, n) -> bool:
        try:
            return n in self._index
        except TypeError:
            return False

    def nbunch_iter(self, nbunch=None) -> Iterator:
        """The nodes of ``nbunch`` that are in the graph, as ``networkx.Graph.nbunch_iter``
        (a single node, a container or iterator of nodes, or None for all; same errors)."""
        if nbunch is None:
            return iter(self.node_labels)
        if nbunch in self:
            return iter([nbunch])
        return _bunch_iter(nbunch, self._index)

    def ids_of(self, labels: list) -> np.ndarray:
        """int64 vertex ids of ``labels`` (all in the graph)."""
        return np.fromiter(map(self._index.__getitem__, labels), dtype=np.int64,
                           count=len(labels))

    def labels_of(self, ids) -> list:
        """Node labels of the vertex ids ``ids`` (host integer array)."""
        return list(map(self.node_labels.__getitem__, np.asarray(ids).tolist()))

    @property
    def device(self) -> str:
        return self.hornet_graph.device

    def __repr__(self) -> str:
        kind = "directed" if self.is_directed() else "undirected"
        return (f"HornetGraph({kind}, {self.number_of_nodes()} nodes, "
                f"{self.number_of_edges()} edges, device={self.device!r})")


def _bunch_iter(nbunch, index: dict) -> Iterator:
    """networkx's nbunch iteration over a container of nodes, with its error messages."""
    n = None
    try:
        for n in nbunch:
            if n in index:
                yield n
    except TypeError as err:
        exc, message = err, err.args[0]
        if "iter" in message:
            exc = nx.NetworkXError("nbunch is not a node or a sequence of nodes.")
        if "object is not iterable" in message:
            exc = nx.NetworkXError(f"Node {nbunch} is not in the graph.")
        if "hashable" in message:
            exc = nx.NetworkXError(f"Node {n} in sequence nbunch is not a valid node.")
        raise exc


def _edge_data_of(G, index: dict, n: int, directed: bool) -> tuple:
    """(sorted int64 keys u * n + v, attribute dicts in key order) of the edges of ``G``."""
    m = G.number_of_edges()
    us, vs, data = [], [], []
    if m:
        us, vs, data = zip(*G.edges(data=True))
    u = np.fromiter(map(index.__getitem__, us), dtype=np.int64, count=m)
    v = np.fromiter(map(index.__getitem__, vs), dtype=np.int64, count=m)
    if not directed:
        u, v = np.minimum(u, v), np.maximum(u, v)
    keys = u * n + v
    order = np.argsort(keys, kind="stable")
    return keys[order], list(map(data.__getitem__, order.tolist()))


def _as_hornet(G, name: str) -> HornetGraph:
    """``G`` itself; raises for other types and for directed graphs where the function is
    undirected-only: NetworkXNotImplemented where networkx refuses them too (its own check,
    for direct calls), NotImplementedError where only hornet does (networkx falls back)."""
    if not isinstance(G, HornetGraph):
        raise TypeError(f"{name} of hornet's networkx backend takes a HornetGraph, got "
                        f"{type(G).__name__} (networkx converts graphs when dispatching)")
    if G.is_directed():
        if name in _NX_UNDIRECTED_ONLY:
            raise nx.NetworkXNotImplemented("not implemented for directed type")
        if name in _HORNET_UNDIRECTED_ONLY:
            raise NotImplementedError(f"hornet runs {name} on undirected graphs only")
    return G


# ---------------------------------------------------------------------------------------------
# Shared pieces of the algorithms


def _triangles_and_degrees(G: HornetGraph) -> tuple[np.ndarray, np.ndarray]:
    """int64 triangles per vertex and int64 degree (self-loops excluded), on the host."""
    hg = G.hornet_graph
    tri = _host(algos.triangles_per_vertex(hg)).astype(np.int64, copy=False)
    deg = _host(hg.degree()).astype(np.int64)
    return tri, deg


def _per_node(G: HornetGraph, values: np.ndarray, nodes):
    """networkx's result shape for a per-vertex array: all nodes (``nodes=None``), one
    value (``nodes`` is a node), or a dict over ``G.nbunch_iter(nodes)``."""
    if nodes is None:
        return dict(zip(G.node_labels, values.tolist()))
    if nodes in G:
        return values[G._index[nodes]].item()
    labels = list(G.nbunch_iter(nodes))
    return dict(zip(labels, values[G.ids_of(labels)].tolist()))


def _clustering_values(G: HornetGraph) -> np.ndarray:
    """float64 clustering coefficient of every vertex: 2 T / (d (d - 1)), 0 without
    triangles (the same IEEE division of the same integers as networkx)."""
    tri, deg = _triangles_and_degrees(G)
    c = np.zeros(tri.shape[0], dtype=np.float64)
    has = tri > 0
    c[has] = (2 * tri[has]).astype(np.float64) / (deg[has] * (deg[has] - 1)).astype(np.float64)
    return c


def _levels(G: HornetGraph, source_labels: list) -> np.ndarray:
    """int32 BFS level of every vertex from the given nodes (-1: unreached), on the host."""
    ids = G.ids_of(source_labels)
    source = int(ids[0]) if ids.shape[0] == 1 else ids.astype(np.int32)
    return _host(algos.bfs(G.hornet_graph, source, dense=True))


def _by_level(levels: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Vertex ids where ``mask`` holds, ordered by (level, id)."""
    ids = np.flatnonzero(mask)
    return ids[np.argsort(levels[ids], kind="stable")]


# ---------------------------------------------------------------------------------------------
# The dispatched functions (networkx's signatures and results)


def triangles(G: HornetGraph, nodes=None) -> dict | int:
    """``networkx.triangles``: triangles through each node (int), or through ``nodes``."""
    G = _as_hornet(G, "triangles")
    tri = _host(algos.triangles_per_vertex(G.hornet_graph)).astype(np.int64, copy=False)
    return _per_node(G, tri, nodes)


def transitivity(G: HornetGraph) -> float | int:
    """``networkx.transitivity``: 3 * triangles / triads (0 for a graph without triangles)."""
    G = _as_hornet(G, "transitivity")
    if len(G) == 0:
        return 0
    tri, deg = _triangles_and_degrees(G)
    triangles_twice = 2 * int(tri.sum())
    triads_twice = int((deg * (deg - 1)).sum())
    return 0 if triangles_twice == 0 else triangles_twice / triads_twice


def clustering(G: HornetGraph, nodes=None, weight=None) -> dict | float:
    """``networkx.clustering`` of an undirected, unweighted graph (float per node)."""
    G = _as_hornet(G, "clustering")
    if weight is not None:
        raise NotImplementedError("hornet computes unweighted clustering only")
    return _per_node(G, _clustering_values(G), nodes)


def average_clustering(G: HornetGraph, nodes=None, weight=None,
                       count_zeros: bool = True) -> float:
    """``networkx.average_clustering`` of an undirected, unweighted graph.

    Sums the coefficients in networkx's order, so the float equals networkx's.
    """
    G = _as_hornet(G, "average_clustering")
    if weight is not None:
        raise NotImplementedError("hornet computes unweighted clustering only")
    c = _clustering_values(G)
    if nodes is not None:
        if nodes in G:
            raise NotImplementedError("average_clustering of a single node")
        c = c[G.ids_of(list(dict.fromkeys(G.nbunch_iter(nodes))))]
    if not count_zeros:
        c = c[c != 0]
    return sum(c.tolist()) / c.shape[0]


def k_truss(G: HornetGraph, k) -> HornetGraph:
    """``networkx.k_truss``: the subgraph whose edges lie in at least ``k - 2`` triangles of
    it, without isolated nodes; a :class:`HornetGraph` on the input's device, keeping the
    attributes the input keeps."""
    G = _as_hornet(G, "k_truss")
    if G.has_self_loops:
        raise nx.NetworkXNotImplemented(_SELF_LOOP_MESSAGE)
    # an edge stays when its support s (an integer) satisfies s >= k - 2, i.e. s >= ceil(k) - 2
    order = _MAX_K if k > _MAX_K else math.ceil(k)
    src, dst = algos.k_truss(G.hornet_graph, max(order, 2))
    xp = _array_module(src)
    src, dst = src.astype(xp.int64), dst.astype(xp.int64)
    kept = xp.unique(xp.concatenate([src, dst]))      # ascending ids: networkx's node order
    new_src = xp.searchsorted(kept, src)
    new_dst = xp.searchsorted(kept, dst)
    m = int(kept.shape[0])
    H = hornet.Graph.from_edges(new_src.astype(xp.int32), new_dst.astype(xp.int32),
                                num_vertices=m, directed=False, device=G.device)
    kept_host = _host(kept)
    node_data = None
    if G._node_data is not None:
        node_data = list(map(G._node_data.__getitem__, kept_host.tolist()))
    edge_data = None
    if G._edge_data is not None:
        data = G._edge_attributes(_host(src), _host(dst))
        edge_data = (_host(new_src) * m + _host(new_dst), data)   # (src, dst) ascending
    return HornetGraph(H, G.labels_of(kept_host), graph_attrs=G.graph, node_data=node_data,
                       edge_data=edge_data)


def single_source_shortest_path_length(G: HornetGraph, source, cutoff=None) -> dict:
    """``networkx.single_source_shortest_path_length``: {node: hops} of the nodes at most
    ``cutoff`` hops from ``source`` (in order of distance, then node order)."""
    G = _as_hornet(G, "single_source_shortest_path_length")
    if source not in G:
        raise nx.NodeNotFound(f"Source {source} is not in G")
    return _lengths_from(G, source, cutoff)


def single_target_shortest_path_length(G: HornetGraph, target, cutoff=None) -> dict:
    """``networkx.single_target_shortest_path_length`` of an undirected graph: {node: hops}
    of the nodes at most ``cutoff`` hops from ``target``."""
    G = _as_hornet(G, "single_target_shortest_path_length")
    if target not in G:
        raise nx.NodeNotFound(f"Target {target} is not in G")
    return _lengths_from(G, target, cutoff)


def _lengths_from(G: HornetGraph, node, cutoff) -> dict:
    """{label: level} of one BFS from ``node``, cut as networkx cuts it."""
    levels = _levels(G, [node])
    mask = levels >= 0
    # networkx goes one level deeper while cutoff > level: levels below cutoff + 1 stay
    if cutoff is not None and not cutoff >= 2**31:
        limit = cutoff + 1
        mask &= (levels == 0) | (levels < limit) if limit == limit else levels == 0
    ids = _by_level(levels, mask)
    return dict(zip(G.labels_of(ids), levels[ids].tolist()))


def bfs_layers(G: HornetGraph, sources) -> Iterator[list]:
    """``networkx.bfs_layers``: a generator of the BFS layers (lists of nodes) from
    ``sources`` (a node or an iterable of nodes).

    Layer 0 is ``list(set(sources))`` as in networkx; later layers list their nodes in the
    graph's node order (networkx: discovery order).
    """
    G = _as_hornet(G, "bfs_layers")
    if sources in G:
        sources = [sources]
    visited = set(sources)
    current = list(visited)
    for source in current:
        if source not in G:
            raise nx.NetworkXError(f"The node {source} is not in the graph.")
    if not current:
        return
    yield current
    levels = _levels(G, current)
    ids = _by_level(levels, levels > 0)
    if ids.shape[0] == 0:
        return
    cuts = np.flatnonzero(np.diff(levels[ids])) + 1
    labels = G.labels_of(ids)
    start = 0
    for stop in chain(cuts.tolist(), [ids.shape[0]]):
        yield labels[start:stop]
        start = stop


def descendants_at_distance(G: HornetGraph, source, distance) -> set:
    """``networkx.descendants_at_distance``: the set of nodes exactly ``distance`` hops from
    ``source``."""
    G = _as_hornet(G, "descendants_at_distance")
    if source not in G:
        raise nx.NetworkXError(f"The node {source} is not in the graph.")
    if not (isinstance(distance, numbers.Real) and math.isfinite(distance)
            and distance >= 0 and distance == int(distance)):
        return set()
    levels = _levels(G, [source])
    return set(G.labels_of(np.flatnonzero(levels == int(distance))))


def descendants(G: HornetGraph, source) -> set:
    """``networkx.descendants``: the set of nodes reachable from ``source`` (itself
    excluded)."""
    G = _as_hornet(G, "descendants")
    if source not in G:
        raise nx.NetworkXError(f"The node {source} is not in the graph.")
    levels = _levels(G, [source])
    return set(G.labels_of(np.flatnonzero(levels > 0)))


def node_connected_component(G: HornetGraph, n) -> set:
    """``networkx.node_connected_component``: the set of nodes in ``n``'s component
    (undirected graphs)."""
    G = _as_hornet(G, "node_connected_component")
    if n not in G:
        raise KeyError(n)                      # what networkx's own BFS raises
    levels = _levels(G, [n])
    return set(G.labels_of(np.flatnonzero(levels >= 0)))


def is_connected(G: HornetGraph) -> bool:
    """``networkx.is_connected`` (undirected graphs): one BFS reaches every node."""
    G = _as_hornet(G, "is_connected")
    if len(G) == 0:
        raise nx.NetworkXPointlessConcept("Connectivity is undefined for the null graph.")
    levels = _levels(G, [G.node_labels[0]])
    return bool((levels >= 0).all())


_IMPLEMENTATIONS = {
    "triangles": triangles,
    "transitivity": transitivity,
    "clustering": clustering,
    "average_clustering": average_clustering,
    "k_truss": k_truss,
    "single_source_shortest_path_length": single_source_shortest_path_length,
    "single_target_shortest_path_length": single_target_shortest_path_length,
    "bfs_layers": bfs_layers,
    "descendants_at_distance": descendants_at_distance,
    "descendants": descendants,
    "node_connected_component": node_connected_component,
    "is_connected": is_connected,
}
assert set(_IMPLEMENTATIONS) == set(FUNCTIONS), "hornet_nx_info.FUNCTIONS is out of date"
_SIGNATURES = {name: inspect.signature(f) for name, f in _IMPLEMENTATIONS.items()}


# ---------------------------------------------------------------------------------------------
# The interface networkx loads


def _decline_reason(name: str, args: tuple, kwargs: dict) -> str | None:
    """Why hornet cannot run ``name(*args, **kwargs)``, or None when it can."""
    if name not in _IMPLEMENTATIONS:
        return f"hornet does not implement {name}"
    try:
        bound = _SIGNATURES[name].bind(*args, **kwargs)
    except TypeError as exc:
        return f"unsupported arguments ({exc})"
    arguments = bound.arguments
    G = arguments["G"]
    if not (isinstance(G, HornetGraph) or hasattr(G, "_adj")):
        return f"not a networkx or hornet graph: {type(G).__name__}"
    if G.is_multigraph():
        return "multigraphs are not supported"
    if name in _UNDIRECTED_ONLY and G.is_directed():
        return f"{name} runs on undirected graphs only"
    if arguments.get("weight") is not None:
        return "weighted clustering is not supported"
    if name == "average_clustering" and arguments.get("nodes") is not None \
            and arguments["nodes"] in G:
        return "average_clustering of a single node"
    if name == "k_truss" and not isinstance(arguments["k"], numbers.Real):
        return f"k must be a real number, got {type(arguments['k']).__name__}"
    if name == "descendants_at_distance" and not isinstance(arguments["distance"],
                                                            numbers.Real):
        return "distance must be a real number"
    return None


class BackendInterface:
    """What networkx loads from the ``networkx.backends`` entry point ``hornet``."""

    triangles = staticmethod(triangles)
    transitivity = staticmethod(transitivity)
    clustering = staticmethod(clustering)
    average_clustering = staticmethod(average_clustering)
    k_truss = staticmethod(k_truss)
    single_source_shortest_path_length = staticmethod(single_source_shortest_path_length)
    single_target_shortest_path_length = staticmethod(single_target_shortest_path_length)
    bfs_layers = staticmethod(bfs_layers)
    descendants_at_distance = staticmethod(descendants_at_distance)
    descendants = staticmethod(descendants)
    node_connected_component = staticmethod(node_connected_component)
    is_connected = staticmethod(is_connected)

    # Automatic dispatch (networkx's backend priority) asks should_run. Converting a networkx
    # graph costs a pass over its dicts plus building the hornet graph (tens of ms even for a
    # small graph on the CPU); the triangle-based functions win it back on larger graphs
    # only, and a single BFS does not unless the converted graph is already in networkx's
    # cache (bench/nx_backend.py, bench/results/nx_backend_cpu.md: the break-even of the
    # triangle-based functions lies between its 2*10^4- and 2*10^5-edge rows).
    min_edges_for_automatic = 50_000
    _CONVERSION_BOUND = {"single_source_shortest_path_length",
                         "single_target_shortest_path_length", "bfs_layers",
                         "descendants_at_distance", "descendants", "node_connected_component",
                         "is_connected"}

    @staticmethod
    def convert_from_nx(graph, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False,
                        preserve_node_attrs=False, preserve_graph_attrs=False, name=None,
                        graph_name=None) -> HornetGraph:
        """A networkx graph as a :class:`HornetGraph` on :func:`configured_device`.

        Node and edge attribute dicts are kept when networkx asks to preserve them (functions
        that return graphs); single named attributes (weights) are not carried.
        """
        if isinstance(graph, HornetGraph):
            return graph
        return HornetGraph.from_networkx(
            graph, configured_device(), node_attrs=preserve_node_attrs is True,
            edge_attrs=preserve_edge_attrs is True, graph_attrs=bool(preserve_graph_attrs))

    @staticmethod
    def convert_to_nx(obj, *, name=None):
        """A :class:`HornetGraph` as a networkx graph; any other result unchanged."""
        if isinstance(obj, HornetGraph):
            return obj.to_networkx()
        return obj

    @staticmethod
    def can_run(name: str, args: tuple, kwargs: dict):
        """True, or a string saying why hornet declines this call."""
        reason = _decline_reason(name, args, kwargs)
        return True if reason is None else reason

    @staticmethod
    def should_run(name: str, args: tuple, kwargs: dict):
        """True, or a string saying why networkx's own run is the better choice (used only
        when networkx picks a backend by priority; ``backend="hornet"`` always runs here)."""
        G = args[0] if args else kwargs.get("G")
        if isinstance(G, HornetGraph) or _cached_conversion(G):
            return True
        if name in BackendInterface._CONVERSION_BOUND:
            return "one BFS costs less on networkx than converting the graph to hornet"
        threshold = BackendInterface.min_edges_for_automatic
        if G.number_of_edges() < threshold:
            return (f"fewer than {threshold} edges: converting to hornet costs more than "
                    "networkx's own run")
        return True


def _cached_conversion(G) -> bool:
    """Does networkx's conversion cache of ``G`` hold a hornet graph already?"""
    cache = getattr(G, "__networkx_cache__", None)
    if not isinstance(cache, dict):
        return False
    found = cache.get("backends", {}).get(BACKEND_NAME, {})
    return any(isinstance(g, HornetGraph) for g in found.values())
