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
        cols = {"src": host_copy(self.src), "dst": host_copy(self.dst)}
        cols.update({k: host_copy(v) for k, v in self.properties.items()})
        return pa.table(cols)


def host_copy(a):
    """NumPy copy of a NumPy or CuPy array (a NumPy array is returned as it is)."""
    return a if isinstance(a, np.ndarray) else a.get()
