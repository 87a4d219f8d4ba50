"""What hornet's networkx backend offers: the ``networkx.backend_info`` entry point.

networkx calls :func:`get_info` while ``import networkx`` runs, in every process of an
environment where hornet-py is installed. This package therefore imports nothing (not
``hornet``, whose import loads Numba and the graph machinery); the backend itself,
:mod:`hornet.networkx_backend`, is loaded only when a call is dispatched to it.
"""
from __future__ import annotations

__all__ = ["get_info", "FUNCTIONS"]

_LAYERS = ("Nodes within a layer are listed in the graph's node order; networkx lists "
           "them in discovery order (same nodes, same layers).")

# name -> networkx's per-function backend information (shown in the function's docstring)
FUNCTIONS: dict[str, dict] = {
    "triangles": {
        "additional_docs": "Per-vertex counts with hornet.algos.triangles_per_vertex.",
    },
    "transitivity": {
        "additional_docs": "From per-vertex triangle counts and degrees.",
    },
    "clustering": {
        "additional_docs": "Unweighted graphs (weight=None), from per-vertex triangle counts "
                           "and degrees. Nodes without triangles get 0.0.",
    },
    "average_clustering": {
        "additional_docs": "Unweighted graphs (weight=None); nodes=None or a container of "
                           "nodes.",
    },
    "k_truss": {
        "additional_docs": "hornet.algos.k_truss. Returns a hornet backend graph "
                           "(HornetGraph; .to_networkx() gives the networkx graph).",
    },
    "single_source_shortest_path_length": {
        "additional_docs": "Levels of hornet.algos.bfs (direction-optimizing), cut at cutoff.",
    },
    "single_target_shortest_path_length": {
        "additional_docs": "Undirected graphs: the lengths from the target.",
    },
    "bfs_layers": {
        "additional_docs": "Levels of one multi-source hornet.algos.bfs. " + _LAYERS,
    },
    "descendants_at_distance": {
        "additional_docs": "Level `distance` of hornet.algos.bfs.",
    },
    "descendants": {
        "additional_docs": "The vertices one hornet.algos.bfs reaches.",
    },
    "node_connected_component": {
        "additional_docs": "The vertices one hornet.algos.bfs reaches.",
    },
    "is_connected": {
        "additional_docs": "One hornet.algos.bfs from the first node.",
    },
}


def get_info() -> dict:
    """networkx's backend information for hornet (names, summary, functions, config).

    Returns
    -------
    dict with ``backend_name``, ``project``, ``package``, ``url``, ``short_summary``,
    ``functions`` (name -> ``additional_docs``) and ``default_config`` (``device``:
    "auto" runs on the GPU when CuPy sees one, "cpu" or "gpu" force a device; read by
    ``nx.config.backends.hornet.device``).
    """
    return {
        "backend_name": "hornet",
        "project": "hornet-py",
        "package": "hornet",
        "url": None,                      # no public project page yet
        "short_summary": "Hornet graphs on the GPU (CuPy) or the CPU (Numba).",
        "functions": {name: dict(info) for name, info in FUNCTIONS.items()},
        "default_config": {"device": "auto"},
    }
