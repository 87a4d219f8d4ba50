"""What a batch really changed: the edges and their property values, on the graph's device.

The record that the graph's update calls return and that every dynamic algorithm consumes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["EdgeChange", "host_copy"]


@dataclass
class EdgeChange:
    """What a batch really changed.

    ``src``, ``dst``: int32 arrays on the graph's device, one entry per edge inserted, deleted
    or updated (undirected graphs: each edge once, ``src < dst``), sorted by (src, dst). They
    hold the graph's dense ids, what the dynamic algorithms take.
    ``properties``: the edges' property values (for deletions: the values they had; for
    updates: the new values).
    ``previous``: for updates, the values the updated properties held before the call
    (same names and alignment as ``properties``); empty for other kinds.
    ``self_loops_skipped``: self-loops dropped from the batch (undirected graphs only).
    ``vertex_map``: the graph's :class:`~hornet.VertexMap` when it has one (None otherwise):
    :meth:`edges` and :meth:`to_arrow` then name the edges by their original ids.

        >>> import hornet
        >>> g = hornet.Graph(device="cpu", vertex_map=True)
        >>> change = g.insert_edges(["bob", "ann"], ["ann", "cid"])
        >>> change.src.tolist(), [a.tolist() for a in change.edges()]
        ([0, 1], [['bob', 'ann'], ['ann', 'cid']])
    """

    kind: str
    src: Any
    dst: Any
    properties: dict = field(default_factory=dict)
    self_loops_skipped: int = 0
    previous: dict = field(default_factory=dict)
    vertex_map: Any = field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return int(self.src.shape[0])

    def __repr__(self) -> str:
        return f"EdgeChange({self.kind}, {len(self)} edges)"

    def edges(self, *, dense: bool = False):
        """``(src, dst)`` of the changed edges, aligned with ``properties``: original ids
        (host arrays, int64 or str) when the graph has a vertex map, unless ``dense=True``;
        else (or with ``dense=True``) the ``src`` and ``dst`` arrays themselves (int32, on the
        graph's device)."""
        if self.vertex_map is None or dense:
            return self.src, self.dst
        return (self.vertex_map.to_original(host_copy(self.src)),
                self.vertex_map.to_original(host_copy(self.dst)))

    def to_arrow(self, *, dense: bool = False):
        """The change as a pyarrow Table with columns src, dst (as :meth:`edges` gives them)
        and one per property."""
        import pyarrow as pa
        src, dst = self.edges(dense=dense)
        cols = {"src": host_copy(src), "dst": host_copy(dst)}
        cols.update({k: host_copy(v) for k, v in self.properties.items()})
        return pa.table(cols)


def host_copy(a):
    """NumPy copy of a NumPy or CuPy array (a NumPy array is returned as it is)."""
    return a if isinstance(a, np.ndarray) else a.get()
