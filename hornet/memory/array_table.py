"""The block arrays ordered by address: the table that maps an edge pointer back to its array.

This is the role of Hornet's B+tree. The table holds one row per block array
(:meth:`hornet.memory.block_array.BlockArray.lookup_row`: base address, size class, column
bases, bit-tree location), sorted by base address, and the arrays themselves by address.

Arrays come and go a few at a time: a batch that moves lists to a larger class may create
some, and a batch that empties arrays frees them. So the table is edited in place: the rows
of freed arrays are deleted and the rows of new arrays are inserted at their address. It is
not rebuilt from every array of every pool, which is hundreds of rows, while a large batch
changes a few arrays.

An edit copies integer rows only. The arrays are found by address (a dict), not kept in an
object array aligned with the rows: copying an object array touches every array object's
reference count, cold after a batch's kernels, which would be most of an edit's cost.
"""
from __future__ import annotations

import numpy as np
from ..core.jit import njit


@njit
def _edit_rows(rows, gone, added):
    """``rows`` (A, W) ascending by column 0, without the rows whose column 0 is in ``gone``
    (ascending, each present) and with ``added`` (K, W, ascending by column 0) inserted: a
    new (A - G + K, W) array, ascending. One pass instead of a dozen NumPy calls (each one
    slow when the batch's kernels have just filled the caches). The caller sorts ``added``
    (a few rows): a sort in here would compile NumPy's sort into the kernel."""
    na, w = rows.shape
    k = added.shape[0]
    out = np.empty((na - gone.shape[0] + k, w), dtype=np.int64)
    i = 0
    j = 0
    g = 0
    o = 0
    while i < na or j < k:
        if i < na and g < gone.shape[0] and rows[i, 0] == gone[g]:
            i += 1
            g += 1
            continue
        # rows copied item by item: a row assignment would compile Numba's shape check
        if j < k and (i >= na or added[j, 0] < rows[i, 0]):
            for c in range(w):
                out[o, c] = added[j, c]
            j += 1
        else:
            for c in range(w):
                out[o, c] = rows[i, c]
            i += 1
        o += 1
    return out


class ArrayTable:
    """Block arrays sorted by base address, with their lookup rows.

    ``rows``: host int64 (A, W), ascending by column 0 (the base); row ``i`` is the
    ``lookup_row()`` of the array whose base it holds (:meth:`array_with_base`). ``arrays``:
    list of the A arrays in the same order (made on demand). Host only: the manager makes the
    device copies.
    """

    def __init__(self, arrays=(), width: int = 0):
        self._by_base: dict = {}
        self.rows = np.zeros((0, width), dtype=np.int64)
        self.insert(list(arrays))

    def __len__(self) -> int:
        return self.rows.shape[0]

    def array_with_base(self, base: int):
        """The array whose base address is ``base`` (KeyError when none)."""
        return self._by_base[base]

    def arrays_with_bases(self, bases: list) -> list:
        """The arrays whose base addresses are ``bases`` (ints), in that order."""
        by_base = self._by_base
        return [by_base[b] for b in bases]

    @property
    def arrays(self) -> list:
        return [self._by_base[b] for b in self.rows[:, 0].tolist()]

    def insert(self, arrays: list) -> None:
        """Add ``arrays`` (not in the table yet) at their addresses."""
        self.update(arrays, [])

    def delete(self, arrays: list) -> None:
        """Remove ``arrays`` (all in the table)."""
        self.update([], arrays)

    def update(self, created: list, freed: list) -> None:
        """Apply a window of changes: ``created`` arrays added, ``freed`` arrays removed (an
        array both created and freed in the window never enters the table). Raises KeyError
        (table unchanged) for a freed array that is not in it."""
        born = {id(a) for a in created}
        died = {id(a) for a in freed}
        gone = [a for a in freed if id(a) not in born]
        new = sorted((a for a in created if id(a) not in died), key=lambda a: a.base)
        for a in gone:
            if self._by_base.get(a.base) is not a:
                raise KeyError(f"{a!r} is not in the block-array table")
        if not gone and not new:
            return
        width = self.rows.shape[1]
        added = np.stack([a.lookup_row() for a in new]) if new else \
            np.zeros((0, width), dtype=np.int64)
        if self.rows.shape[0] == 0:
            width = added.shape[1]
        elif added.shape[1] != width:
            raise ValueError("lookup rows of different widths: rebuild the table")
        rows = _edit_rows(self.rows.reshape(-1, width),
                          np.array(sorted({a.base for a in gone}), dtype=np.int64), added)
        for a in gone:
            del self._by_base[a.base]
        for a in new:
            self._by_base[a.base] = a
        self.rows = rows
