"""The block arrays ordered by address: the table that maps an edge pointer back to its array.

This is the role of Hornet's B+tree. The table holds one row per block array
(:meth:`hornet.memory.block_array.BlockArray.lookup_row`: base address, size class, column
bases, bit-tree location), sorted by base address, and the arrays in the same order.

Arrays come and go a few at a time: a batch that moves lists to a larger class may create
some, and a batch that empties arrays frees them. So the table is edited in place. The rows
of freed arrays are deleted and the rows of new arrays are inserted at their address. It is
not rebuilt from every array of every pool, which is hundreds of rows. The full rebuild cost
0.34 ms per insert of 10^5 edges into Kronecker 20 (690 arrays) on the 2-core VM, where every
such insert and delete changed a few arrays.
"""
from __future__ import annotations

import numpy as np


class ArrayTable:
    """Block arrays sorted by base address, with their lookup rows.

    ``arrays``: list of BlockArray, ascending ``base``; ``rows``: host int64 (A, W), row ``i``
    is ``arrays[i].lookup_row()``. Host only: the manager makes the device copies.
    """

    def __init__(self, arrays=(), width: int = 0):
        self.arrays: list = []
        self.rows = np.zeros((0, width), dtype=np.int64)
        self.insert(list(arrays))

    def insert(self, arrays: list) -> None:
        """Add ``arrays`` (not in the table yet) at their addresses."""
        if not arrays:
            return
        arrays = sorted(arrays, key=lambda a: a.base)
        new_rows = np.stack([a.lookup_row() for a in arrays])
        if self.rows.shape[0] and new_rows.shape[1] != self.rows.shape[1]:
            raise ValueError("lookup rows of different widths: rebuild the table")
        at = np.searchsorted(self.rows[:, 0], new_rows[:, 0]) if self.rows.shape[0] else \
            np.zeros(len(arrays), dtype=np.int64)
        self.rows = np.insert(self.rows, at, new_rows, axis=0) if self.rows.shape[0] \
            else new_rows
        for p, a in zip(reversed(at.tolist()), reversed(arrays)):   # back to front: the
            self.arrays.insert(p, a)                                # earlier places hold

    def delete(self, arrays: list) -> None:
        """Remove ``arrays`` (all in the table)."""
        if not arrays:
            return
        at = np.searchsorted(self.rows[:, 0], np.array([a.base for a in arrays],
                                                       dtype=np.int64))
        for p, a in zip(at.tolist(), arrays):
            if p >= len(self.arrays) or self.arrays[p] is not a:
                raise KeyError(f"{a!r} is not in the block-array table")
        gone = set(at.tolist())
        self.rows = np.delete(self.rows, at, axis=0)
        self.arrays = [a for i, a in enumerate(self.arrays) if i not in gone]

    def update(self, created: list, freed: list) -> None:
        """Apply a window of changes: ``created`` arrays added, ``freed`` arrays removed (an
        array both created and freed in the window never enters the table)."""
        born = {id(a) for a in created}
        died = {id(a) for a in freed}
        self.delete([a for a in freed if id(a) not in born])
        self.insert([a for a in created if id(a) not in died])
