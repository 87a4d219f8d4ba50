"""A block array: ``num_blocks`` blocks of ``2**size_class`` edge slots, one column per field."""
from __future__ import annotations

import numpy as np

from .bit_tree import FOREST_LEVELS, _fill_free, tree_offsets
from ..core.jit import OptionalPath, njit


@njit
def _cpu_storage(size_class, num_blocks, num_fields):
    """A CPU block array's destination column (int32, zeros), its bit tree with every block
    free (words uint64, level offsets int64, as :func:`hornet.memory.bit_tree.new_tree`
    makes them) and its lookup row (see :meth:`BlockArray.lookup_row`; the columns of fields
    after the first left 0), in one compiled call: each NumPy call costs microseconds when a
    batch's kernels have just filled the caches, and a batch may make several arrays."""
    offsets = tree_offsets(num_blocks)
    levels = offsets.shape[0] - 1
    tree = np.zeros(offsets[levels], dtype=np.uint64)
    _fill_free(tree, offsets, num_blocks)
    column = np.zeros(np.int64(num_blocks) << size_class, dtype=np.int32)
    row = np.zeros(num_fields + 3 + FOREST_LEVELS + 1, dtype=np.int64)
    row[0] = column.ctypes.data
    row[1] = size_class
    row[2] = column.ctypes.data
    row[2 + num_fields] = tree.ctypes.data
    for k in range(FOREST_LEVELS + 1):
        row[3 + num_fields + k] = offsets[min(k, levels)]
    return column, tree, offsets, row


# a run that makes few block arrays makes them with NumPy calls instead of compiling
# _cpu_storage (about a second of a cold start for microseconds per array)
_storage_gate = OptionalPath((_cpu_storage,), promote_calls=1 << 14)


class BlockArray:
    """Fixed-size storage for blocks of one size class, structure-of-arrays.

    ``columns[f]`` holds field ``f`` (field 0 is the int32 destination) for every slot;
    block ``b`` occupies slots ``[b << size_class, (b + 1) << size_class)``. ``words`` and
    ``level_offsets`` are the bit tree that marks free blocks (on the backend's device).
    ``base`` is the address of the destination column, the value edge pointers are relative to.
    ``free`` (a host int) counts free blocks.
    """

    __slots__ = ("size_class", "num_blocks", "columns", "words", "level_offsets", "free", "base",
                 "column_bases", "backend", "_row")

    def __init__(self, size_class: int, num_blocks: int, dtypes: list[np.dtype], backend):
        self.size_class = size_class
        self.num_blocks = num_blocks
        self.backend = backend
        slots = num_blocks << size_class
        xp = backend.xp
        self.free = num_blocks
        self._row = None
        if backend.device == "cpu" and np.dtype(dtypes[0]) == np.int32 and \
                _storage_gate.take():
            column, self.words, self.level_offsets, row = _cpu_storage(size_class, num_blocks,
                                                                       len(dtypes))
            self.columns = [column] + [np.zeros(slots, dtype=dt) for dt in dtypes[1:]]
            self.column_bases = [int(row[0])] + [backend.address(c) for c in self.columns[1:]]
            if len(dtypes) > 1:
                row[2:2 + len(dtypes)] = self.column_bases
            self._row = row
        else:
            self.columns = [xp.zeros(slots, dtype=dt) for dt in dtypes]
            self.words, self.level_offsets = backend.new_tree(num_blocks)
            self.column_bases = [backend.address(c) for c in self.columns]
        self.base = self.column_bases[0]

    @property
    def used(self) -> int:
        return self.num_blocks - self.free

    @property
    def nbytes(self) -> int:
        """Bytes reserved: every column plus the bit tree."""
        return sum(int(c.nbytes) for c in self.columns) + int(self.words.nbytes)

    def add_column(self, dtype, fill) -> None:
        self.columns.append(self.backend.xp.full(self.num_blocks << self.size_class, fill,
                                                 dtype=dtype))
        self.column_bases.append(self.backend.address(self.columns[-1]))
        self._row = None

    def lookup_row(self) -> np.ndarray:
        """This array's row of the manager's lookup tables (host int64, made once): base, size
        class, every column's base, then the bit tree's word address and level offsets padded
        to ``FOREST_LEVELS + 1`` (the row :func:`hornet.memory.bit_tree.forest_table` makes)."""
        if self._row is None:
            from .bit_tree import FOREST_LEVELS
            off = [int(x) for x in self.level_offsets]
            if len(off) > FOREST_LEVELS + 1:
                raise ValueError("bit tree deeper than FOREST_LEVELS")
            self._row = np.array([self.base, self.size_class, *self.column_bases,
                                  self.backend.address(self.words), *off,
                                  *off[-1:] * (FOREST_LEVELS + 1 - len(off))], dtype=np.int64)
        return self._row

    def used_blocks(self):
        return self.backend.used_blocks(self.words, self.level_offsets, self.num_blocks)

    def __repr__(self) -> str:
        return (f"BlockArray(size_class={self.size_class}, blocks={self.num_blocks}, "
                f"used={self.used})")
