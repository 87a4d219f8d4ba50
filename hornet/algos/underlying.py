"""The underlying undirected simple graph of a directed graph, kept current from its changes.

Triangles and trusses of a directed graph are those of U: an edge u-v exists in U when u->v
or v->u does; self-loops are not edges. The dynamic triangle count and truss keep U as an
undirected graph of the input's own class and feed it each directed change.
"""
from __future__ import annotations

__all__ = ["undirected_copy", "undirected_change"]


def undirected_copy(g):
    """U of ``g``: an undirected graph of ``type(g)`` on ``g``'s device and id space."""
    s, d = g.edges(dense=True)
    u = type(g)(directed=False, device=g.device, num_vertices=g.num_vertices)
    u.insert_edges(s, d)
    return u


def undirected_change(g, und, kind: str, src, dst):
    """Apply a directed change of ``g`` (already applied to ``g``) to its U ``und``; returns
    the undirected edges that really changed, ``(src, dst)`` int32 on the device, src < dst.

    An inserted u->v adds {u, v} only when neither direction was there; a deleted u->v
    removes {u, v} only when v->u is gone too.
    """
    if kind == "insert":
        ch = und.insert_edges(src, dst)
    else:
        back = g.has_edges(dst, src, dense=True)
        ch = und.delete_edges(src[~back], dst[~back])
    return ch.src, ch.dst
