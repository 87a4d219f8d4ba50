"""Dense vertex ids for the ids users have: 64-bit integers (hashes, user ids) or strings.

A graph's vertex ids index its vertex table, so they must be small and dense. A
:class:`VertexMap` gives every new original id the next dense id, batch by batch, in order of
first appearance, and translates both ways:

    >>> import numpy as np
    >>> m = VertexMap()
    >>> m.to_dense(np.array([2**40, 7, 2**40, -5])).tolist()
    [0, 1, 0, 2]
    >>> m.to_dense(np.array([7, 99])).tolist()
    [1, 3]
    >>> m.to_original(np.array([3, 0])).tolist()
    [99, 1099511627776]
    >>> s = VertexMap()
    >>> s.to_dense(["alice", "bob", "alice"]).tolist()
    [0, 1, 0]
    >>> u = VertexMap()
    >>> u.to_dense(np.array([2**64 - 1, 3], dtype=np.uint64)).tolist()
    [0, 1]
    >>> u.to_original([0]).tolist()
    [18446744073709551615]

Three kinds of ids, each reported back in its own type: ``"int"`` (signed 64-bit), ``"uint"``
(unsigned 64-bit, all 64 bits) and ``"str"``. The first batch with ids fixes the kind
(unsigned NumPy/Arrow integers give ``"uint"``, other integers ``"int"``, strings ``"str"``);
later integer batches of the other signedness are accepted where their values fit.

How it stays fast: integer ids are kept as sorted runs (``numpy`` arrays of original ids with
their dense ids): one large run and a small one that each batch's new ids are merged into; the
small run is merged into the large one when it reaches an eighth of its size, so each id is
copied O(log) times overall and a batch costs O(b log V) plus its share of the merges, all of
it vectorised (``np.unique``, ``np.searchsorted``). Strings are interned in a
:class:`hornet.string_table.StringTable` (UTF-8 bytes as in an Arrow column, a Numba hash
table); batches of strings travel as Arrow arrays.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from .string_table import StringTable, as_string_array, is_string_type

__all__ = ["VertexMap", "MAX_DENSE_ID"]

MAX_DENSE_ID = 2**31 - 2      # the largest id a hornet graph accepts
_RAISE = object()             # to_original's default for ``missing``: negative ids raise
_KINDS = (None, "int", "uint", "str")
_INT_DTYPE = {"int": np.dtype(np.int64), "uint": np.dtype(np.uint64)}
_INT64_MAX = np.iinfo(np.int64).max


def python_ints(ids) -> np.ndarray:
    """A list of integers as int64, else (values beyond int64, none negative) uint64;
    NumPy integer scalars keep their own type."""
    if isinstance(ids[0], np.integer):
        return np.asarray(ids)
    try:
        return np.array(ids, dtype=np.int64)
    except OverflowError:
        pass
    try:
        return np.array(ids, dtype=np.uint64)
    except OverflowError:
        raise ValueError("vertex ids must fit one 64-bit integer type (signed or "
                         "unsigned)") from None


def _classify(ids):
    """``(kind, keys)`` of a batch of ids: ``("str", Arrow string array)``, ``("int" or
    "uint", 1-D int64 / uint64 array)``, or ``(None, empty array)`` for an empty batch (which
    fixes no kind)."""
    if isinstance(ids, (pa.Array, pa.ChunkedArray)):
        if len(ids) == 0:
            return None, np.empty(0, np.int64)
        if is_string_type(ids.type):
            return "str", as_string_array(ids)
        if not pa.types.is_integer(ids.type):
            raise TypeError(f"vertex ids must be integers or strings, got Arrow type {ids.type}")
        if ids.null_count:
            raise ValueError("vertex ids must not be null")
        ids = ids.to_numpy() if isinstance(ids, pa.Array) else \
            ids.to_numpy().astype(ids.type.to_pandas_dtype(), copy=False)
    elif hasattr(ids, "to_numpy") and not isinstance(ids, np.ndarray):              # pandas
        ids = ids.to_numpy()
    elif hasattr(ids, "get") and not isinstance(ids, (np.ndarray, dict)):           # CuPy
        ids = ids.get()
    if isinstance(ids, (list, tuple)) and len(ids) and isinstance(ids[0], str):
        return "str", as_string_array(ids)
    if isinstance(ids, (list, tuple)) and len(ids) and isinstance(ids[0], (int, np.integer)) \
            and not isinstance(ids[0], (bool, np.bool_)):
        ids = python_ints(ids)              # NumPy would take int64 and uint64 as float64
    a = np.asarray(ids)
    if a.ndim != 1:
        raise ValueError(f"vertex ids must be 1-D, got shape {a.shape}")
    if a.size == 0:                          # says nothing of the kind
        return None, np.empty(0, np.int64)
    if a.dtype.kind in "iu":
        return ("uint", a.astype(np.uint64, copy=False)) if a.dtype.kind == "u" else \
            ("int", a.astype(np.int64, copy=False))
    if a.dtype.kind == "U" and not isinstance(ids, (list, tuple)):
        return "str", as_string_array(a)
    if a.dtype.kind == "O" and a.size and isinstance(a[0], str):     # Arrow checks the rest
        return "str", as_string_array(a)
    if a.dtype.kind in "OU":
        raise TypeError("vertex ids must be all integers or all strings")
    raise TypeError(f"vertex ids must be integers or strings, got dtype {a.dtype}")


class _Run:
    """Original ids sorted ascending, with the dense id of each."""

    def __init__(self, keys: np.ndarray, dense: np.ndarray):
        self.keys, self.dense = keys, dense

    def find(self, keys: np.ndarray) -> np.ndarray:
        """Dense id of each key, -1 where the run lacks it."""
        out = np.full(keys.shape[0], -1, dtype=np.int64)
        if self.keys.shape[0] == 0 or keys.shape[0] == 0:
            return out
        pos = np.searchsorted(self.keys, keys)
        pos = np.minimum(pos, self.keys.shape[0] - 1)
        hit = self.keys[pos] == keys
        out[hit] = self.dense[pos[hit]]
        return out

    def merged(self, keys: np.ndarray, dense: np.ndarray) -> "_Run":
        """A run holding both (``keys`` sorted, absent from this run)."""
        if self.keys.shape[0] == 0:
            return _Run(keys, dense)
        all_keys = np.concatenate([self.keys, keys])
        order = np.argsort(all_keys, kind="stable")
        return _Run(all_keys[order], np.concatenate([self.dense, dense])[order])


class VertexMap:
    """Original vertex ids <-> dense ids ``0 .. len(self) - 1``.

    Parameters
    ----------
    kind : "int", "uint", "str" or None
        The original ids' kind: signed or unsigned 64-bit integers, or strings. None: taken
        from the first batch with ids (see the module docstring).
    """

    def __init__(self, kind: str | None = None):
        if kind not in _KINDS:
            raise ValueError(f"kind must be 'int', 'uint', 'str' or None, got {kind!r}")
        self.kind = kind
        self._large = self._small = None
        self._originals = None       # integer kinds: dense id -> original id (grown geometrically)
        self._strings = None         # "str": the interned strings
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __repr__(self) -> str:
        return f"<hornet.VertexMap {self.kind or 'empty'}, {self._count} ids>"

    # ------------------------------------------------------------------ conversions
    def _keys(self, ids):
        """``ids`` as keys of this map (Arrow string array, or int64 / uint64 array); fixes
        ``kind`` on first use. Raises TypeError / ValueError for ids this map cannot hold."""
        kind, keys = _classify(ids)
        if kind is None:                       # an empty batch: any kind
            return keys
        if self.kind is None:
            self.kind = kind
        elif (kind == "str") != (self.kind == "str"):
            raise TypeError(f"this map holds {self.kind} ids; got {kind} ids")
        elif kind != self.kind and keys.size:
            if self.kind == "int" and int(keys.max()) > _INT64_MAX:
                raise ValueError(f"vertex id {int(keys.max())} does not fit this map's "
                                 "signed 64-bit ids (unsigned ids: VertexMap('uint'))")
            if self.kind == "uint" and int(keys.min()) < 0:
                raise ValueError(f"vertex id {int(keys.min())} is negative; this map holds "
                                 "unsigned 64-bit ids")
        if self.kind != "str":
            keys = keys.astype(_INT_DTYPE[self.kind], copy=False)
        if self.kind == "str":
            if self._strings is None:
                self._strings = StringTable()
        elif self._large is None:
            empty = np.empty(0, _INT_DTYPE[self.kind])
            self._large = _Run(empty, np.empty(0, np.int64))
            self._small = _Run(empty, np.empty(0, np.int64))
        return keys

    def _find(self, keys: np.ndarray) -> np.ndarray:
        dense = self._large.find(keys)
        miss = dense < 0
        if miss.any() and self._small.keys.shape[0]:
            dense[miss] = self._small.find(keys[miss])
        return dense

    def to_dense(self, ids, add: bool = True) -> np.ndarray:
        """Dense ids (int64, shape of ``ids``) of original ``ids`` (NumPy, CuPy, Arrow,
        pandas, list).

        ``add=True`` gives unknown ids the next dense ids in order of first appearance;
        ``add=False`` raises KeyError naming the first unknown id. A batch that is refused
        (bad ids, more ids than a graph takes) leaves the map unchanged.
        """
        keys = self._keys(ids)
        if len(keys) == 0:
            return np.empty(0, np.int64)
        if self.kind == "str":
            return self._strings_to_dense(keys, add)
        uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        dense = self._find(uniq)
        new = dense < 0
        if new.any():
            if not add:
                raise KeyError(f"vertex id {uniq[new][0].item()!r} is not in the map")
            k = int(new.sum())
            self._check_room(self._count + k)
            new_keys = uniq[new]
            by_appearance = np.argsort(first[new], kind="stable")
            ids_new = np.empty(k, np.int64)
            ids_new[by_appearance] = np.arange(self._count, self._count + k, dtype=np.int64)
            dense[new] = ids_new
            self._remember(new_keys, ids_new)
        return dense[inverse.reshape(-1)]

    def _strings_to_dense(self, keys, add: bool) -> np.ndarray:
        before = self._count
        dense = self._strings.ids(keys, add)
        self._count = len(self._strings)
        if add:
            try:
                self._check_room(self._count)
            except ValueError:
                self.truncate(before)
                raise
        elif (dense < 0).any():
            raise KeyError(f"vertex id {keys[int(np.argmax(dense < 0))].as_py()!r} is not in "
                           "the map")
        return dense

    @staticmethod
    def _check_room(count: int) -> None:
        if count - 1 > MAX_DENSE_ID:
            raise ValueError(f"the map would hold {count} ids; a graph takes at most "
                             f"{MAX_DENSE_ID + 1}")

    def lookup(self, ids) -> np.ndarray:
        """Dense ids (int64, shape of ``ids``) of original ``ids``, -1 where an id is unknown;
        the map does not change (apart from taking its kind from ``ids`` when it has none)."""
        keys = self._keys(ids)
        if len(keys) == 0 or self._count == 0:
            return np.full(len(keys), -1, np.int64)
        if self.kind == "str":
            return self._strings.ids(keys, add=False)
        uniq, inverse = np.unique(keys, return_inverse=True)
        return self._find(uniq)[inverse.reshape(-1)]

    def truncate(self, count: int) -> None:
        """Forget every id whose dense id is ``count`` or more (undoes the additions of a
        batch that was then refused)."""
        count = max(int(count), 0)
        if count >= self._count:
            return
        if self._strings is not None:
            self._strings.truncate(count)
        else:
            for run in (self._large, self._small):
                keep = run.dense < count
                run.keys, run.dense = run.keys[keep], run.dense[keep]
        self._count = count

    def copy(self) -> "VertexMap":
        """An independent map with the same ids."""
        m = VertexMap(self.kind)
        if self._strings is not None:
            m._strings, m._count = self._strings.copy(), self._count
        elif self._count:
            m.to_dense(self.originals())
        return m

    def _remember(self, keys: np.ndarray, dense: np.ndarray) -> None:
        """Add sorted new integer ``keys`` with their dense ids (the next ones, in some
        order)."""
        self._small = self._small.merged(keys, dense)
        if self._small.keys.shape[0] * 8 > self._large.keys.shape[0]:
            self._large = self._large.merged(self._small.keys, self._small.dense)
            self._small = _Run(self._small.keys[:0], self._small.dense[:0])
        need = self._count + keys.shape[0]
        if self._originals is None or self._originals.shape[0] < need:
            grown = np.empty(max(need, 2 * (0 if self._originals is None
                                            else self._originals.shape[0]), 16),
                             dtype=keys.dtype)
            if self._originals is not None:
                grown[:self._count] = self._originals[:self._count]
            self._originals = grown
        self._originals[dense] = keys
        self._count = need

    def _dense_ids(self, dense, allow_negative: bool) -> np.ndarray:
        """``dense`` (NumPy or CuPy, integers) as a host int64 array; KeyError for ids
        outside ``[0, len(self))`` (negative ones allowed when ``allow_negative``)."""
        d = np.asarray(dense.get() if hasattr(dense, "get") and
                       not isinstance(dense, np.ndarray) else dense)
        if d.size and d.dtype.kind not in "iu":
            raise KeyError(f"dense ids must be integers, got dtype {d.dtype}")
        d = d.astype(np.int64, copy=False)
        if d.size and (int(d.max()) >= self._count or
                       (not allow_negative and int(d.min()) < 0)):
            raise KeyError(f"dense ids must lie in [0, {self._count})")
        return d

    def _check_missing(self, missing) -> None:
        if self.kind == "str":
            if missing is not None and not isinstance(missing, str):
                raise TypeError(f"missing must be a string or None for string ids, got "
                                f"{missing!r}")
        elif isinstance(missing, (bool, np.bool_)) or not isinstance(missing, (int, np.integer)):
            raise TypeError(f"missing must be an integer for integer ids, got {missing!r}")
        elif self.kind == "uint" and missing < 0:
            raise TypeError(f"missing must be an integer >= 0 for unsigned ids, got {missing!r}")

    def to_original(self, dense, missing=_RAISE) -> np.ndarray:
        """Original ids of dense ids: an array of the shape of ``dense`` (NumPy or CuPy,
        any integer dtype) in host memory: int64 for ``"int"`` ids, uint64 for ``"uint"``,
        str for strings.

        ``missing``: what a negative dense id (``-1``, "no vertex", as in BFS parents)
        becomes; by default it raises KeyError like any id outside ``[0, len(self))``. For
        integer ids ``missing`` must be an integer of the ids' type (note that -1 may also
        be a real original id); for string ids a string, or None for an object array holding
        None there. :meth:`to_arrow` gives nulls instead (and keeps trailing NUL characters,
        which NumPy unicode arrays drop).

            >>> m = VertexMap.from_originals(["a", "b"])
            >>> m.to_original([1, -1, 0], missing=None).tolist()
            ['b', None, 'a']
        """
        d = self._dense_ids(dense, allow_negative=missing is not _RAISE)
        absent = None
        if missing is not _RAISE and d.size and int(d.min()) < 0:
            self._check_missing(missing)
            absent = d < 0
        if self.kind == "str":
            out = self._strings.to_arrow(d).to_numpy(zero_copy_only=False) if self._count \
                else np.empty(d.shape, object)
            if absent is not None:
                if missing is None:
                    return out
                out[absent] = missing
            return out.astype(str)
        dtype = _INT_DTYPE.get(self.kind, np.dtype(np.int64))
        if self._originals is None:
            return np.empty(d.shape, dtype)
        out = self._originals[d if absent is None else np.where(absent, 0, d)]
        if absent is not None:
            out[absent] = missing
        return out

    def to_arrow(self, dense=None) -> pa.Array:
        """Original ids of dense ids (default: all of them, in dense order) as an Arrow
        array: int64, uint64 or large_string, null where a dense id is negative."""
        d = np.arange(self._count, dtype=np.int64) if dense is None else \
            self._dense_ids(dense, allow_negative=True)
        absent = d < 0
        if self.kind == "str":
            if self._count:
                return self._strings.to_arrow(d)
            return pa.nulls(d.shape[0], type=pa.large_string())
        dtype = _INT_DTYPE.get(self.kind, np.dtype(np.int64))
        values = self._originals[np.where(absent, 0, d)] if self._count \
            else np.zeros(d.shape[0], dtype)
        return pa.array(values, type=pa.from_numpy_dtype(dtype),
                        mask=absent if absent.any() else None)

    def originals(self) -> np.ndarray:
        """Every original id, indexed by dense id."""
        return self.to_original(np.arange(self._count, dtype=np.int64))

    @classmethod
    def from_originals(cls, originals, kind: str | None = None) -> "VertexMap":
        """The map whose dense id ``i`` is ``originals[i]`` (distinct ids; NumPy, Arrow,
        list); ``kind`` as in the constructor."""
        m = cls(kind)
        keys = m._keys(originals)
        m.to_dense(keys)
        if len(m) != len(keys):
            raise ValueError("original ids must be distinct")
        return m
