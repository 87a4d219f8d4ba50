"""The manager's lookup: its block arrays sorted by address, the tables kernels take to map an
edge pointer back to its array (the role of Hornet's B+tree), made from the arrays' lookup
rows (:meth:`hornet.memory.block_array.BlockArray.lookup_row`)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..core.jit import njit
from .array_table import ArrayTable
from .bit_tree import FOREST_LEVELS

__all__ = ["Lookup", "lookup_columns"]


@dataclass
class Lookup:
    """Block arrays sorted by address, to map an edge pointer back to its array (the role of
    Hornet's B+tree). Host arrays, with device copies for the kernels' side."""
    bases: np.ndarray          # host int64, ascending dst-column addresses
    table: ArrayTable          # the BlockArrays by address
    field_bases: np.ndarray    # host int64 (n_arrays, n_fields)
    size_class: np.ndarray     # host int64 (n_arrays,)
    dev_bases: object          # the same on the backend's device
    dev_field_bases: object
    dev_block_shift: object    # device int64 (n_arrays,): log2 of a block's bytes
    forest: object             # the arrays' bit trees, as backend.forest made them

    @cached_property
    def arrays(self) -> list:
        """Every BlockArray, aligned with ``bases`` (made on first use)."""
        return [self.table.array_with_base(b) for b in self.bases.tolist()]


@njit
def lookup_columns(rows, nf):
    """The columns of the lookup rows ``rows`` (A, W; see BlockArray.lookup_row), each
    contiguous: bases (A,), size classes (A,), field bases (A, nf), bit-tree word addresses
    (A,), padded level offsets (A, FOREST_LEVELS + 1), log2 of a block's bytes (A,). One
    compiled call instead of a NumPy call per column."""
    na = rows.shape[0]
    bases = np.empty(na, dtype=np.int64)
    classes = np.empty(na, dtype=np.int64)
    field_bases = np.empty((na, nf), dtype=np.int64)
    words = np.empty(na, dtype=np.int64)
    levels = np.empty((na, FOREST_LEVELS + 1), dtype=np.int64)
    shifts = np.empty(na, dtype=np.int64)
    for a in range(na):
        bases[a] = rows[a, 0]
        classes[a] = rows[a, 1]
        shifts[a] = rows[a, 1] + 2
        for f in range(nf):
            field_bases[a, f] = rows[a, 2 + f]
        words[a] = rows[a, 2 + nf]
        for k in range(FOREST_LEVELS + 1):
            levels[a, k] = rows[a, 3 + nf + k]
    return bases, classes, field_bases, words, levels, shifts
