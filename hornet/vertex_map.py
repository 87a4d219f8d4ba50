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

How it stays fast: the known ids are kept as sorted runs (``numpy`` arrays of original ids with
their dense ids): one large run and a small one that each batch's new ids are merged into; the
small run is merged into the large one when it reaches an eighth of its size, so each id is
copied O(log) times overall and a batch costs O(b log V) plus its share of the merges. All work
is vectorised (``np.unique``, ``np.searchsorted``); strings use NumPy's unicode arrays.
"""
from __future__ import annotations

import numpy as np

__all__ = ["VertexMap", "MAX_DENSE_ID"]

MAX_DENSE_ID = 2**31 - 2      # the largest id a hornet graph accepts
_RAISE = object()             # to_original's default for ``missing``: negative ids raise


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
    kind : "int", "str" or None
        The original ids' kind: 64-bit integers or strings. None: taken from the first batch.
    """

    def __init__(self, kind: str | None = None):
        if kind not in (None, "int", "str"):
            raise ValueError(f"kind must be 'int', 'str' or None, got {kind!r}")
        self.kind = kind
        self._large = self._small = None
        self._originals = None       # dense id -> original id (grown geometrically)
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __repr__(self) -> str:
        return f"<hornet.VertexMap {self.kind or 'empty'}, {self._count} ids>"

    # ------------------------------------------------------------------ conversions
    def _keys(self, ids) -> np.ndarray:
        """``ids`` as a 1-D array of this map's key dtype; fixes ``kind`` on first use."""
        if hasattr(ids, "to_numpy") and not isinstance(ids, np.ndarray):   # Arrow, pandas
            ids = ids.to_numpy(zero_copy_only=False) if "pyarrow" in type(ids).__module__ \
                else ids.to_numpy()
        if hasattr(ids, "get") and not isinstance(ids, np.ndarray):          # CuPy
            ids = ids.get()
        a = np.asarray(ids)
        if a.ndim != 1:
            raise ValueError(f"vertex ids must be 1-D, got shape {a.shape}")
        if a.dtype.kind in "iu" or (a.size == 0 and a.dtype.kind == "f"):
            kind = "int"
            if a.dtype.kind == "u" and a.size and int(a.max()) > np.iinfo(np.int64).max:
                raise ValueError("vertex ids above 2**63 - 1 do not fit a 64-bit id")
            a = a.astype(np.int64, copy=False)
        elif a.dtype.kind in "UO":
            kind = "str"
            if a.dtype.kind == "O":
                if not all(isinstance(x, str) for x in a.tolist()):
                    raise TypeError("vertex ids must be all integers or all strings")
                a = a.astype(str)
        else:
            raise TypeError(f"vertex ids must be integers or strings, got dtype {a.dtype}")
        if self.kind is None:
            self.kind = kind
        elif kind != self.kind and a.size:
            raise TypeError(f"this map holds {self.kind} ids; got {kind} ids")
        if self._large is None:
            empty = np.empty(0, dtype=np.int64 if self.kind == "int" else "<U1")
            self._large = _Run(empty, np.empty(0, np.int64))
            self._small = _Run(empty, np.empty(0, np.int64))
        return a

    def _find(self, keys: np.ndarray) -> np.ndarray:
        dense = self._large.find(keys)
        miss = dense < 0
        if miss.any() and self._small.keys.shape[0]:
            dense[miss] = self._small.find(keys[miss])
        return dense

    def to_dense(self, ids, add: bool = True) -> np.ndarray:
        """Dense ids (int64, shape of ``ids``) of original ``ids``.

        ``add=True`` gives unknown ids the next dense ids in order of first appearance;
        ``add=False`` raises KeyError naming the first unknown id.
        """
        keys = self._keys(ids)
        if keys.size == 0:
            return np.empty(0, np.int64)
        uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        dense = self._find(uniq)
        new = dense < 0
        if new.any():
            if not add:
                raise KeyError(f"vertex id {uniq[new][0]!r} is not in the map")
            k = int(new.sum())
            if self._count + k - 1 > MAX_DENSE_ID:
                raise ValueError(f"the map would hold {self._count + k} ids; a graph takes "
                                 f"at most {MAX_DENSE_ID + 1}")
            new_keys = uniq[new]
            by_appearance = np.argsort(first[new], kind="stable")
            ids_new = np.empty(k, np.int64)
            ids_new[by_appearance] = np.arange(self._count, self._count + k, dtype=np.int64)
            dense[new] = ids_new
            self._remember(new_keys, ids_new)
        return dense[inverse.reshape(-1)]

    def lookup(self, ids) -> np.ndarray:
        """Dense ids (int64, shape of ``ids``) of original ``ids``, -1 where an id is unknown;
        the map does not change."""
        keys = self._keys(ids)
        if keys.size == 0 or self._count == 0:
            return np.full(keys.shape[0], -1, np.int64)
        uniq, inverse = np.unique(keys, return_inverse=True)
        return self._find(uniq)[inverse.reshape(-1)]

    def truncate(self, count: int) -> None:
        """Forget every id whose dense id is ``count`` or more (undoes the additions of a
        batch that was then refused)."""
        count = int(count)
        if count >= self._count:
            return
        for run in (self._large, self._small):
            keep = run.dense < count
            run.keys, run.dense = run.keys[keep], run.dense[keep]
        self._count = max(count, 0)

    def copy(self) -> "VertexMap":
        """An independent map with the same ids."""
        m = VertexMap.from_originals(self.originals()) if self._count else VertexMap(self.kind)
        m.kind = self.kind
        return m

    def _remember(self, keys: np.ndarray, dense: np.ndarray) -> None:
        """Add sorted new ``keys`` with their dense ids (the next ones, in some order)."""
        self._small = self._small.merged(keys, dense)
        if self._small.keys.shape[0] * 8 > self._large.keys.shape[0]:
            self._large = self._large.merged(self._small.keys, self._small.dense)
            self._small = _Run(self._small.keys[:0], self._small.dense[:0])
        need = self._count + keys.shape[0]
        if self._originals is None or self._originals.shape[0] < need:
            grown = np.empty(max(need, 2 * (0 if self._originals is None
                                            else self._originals.shape[0]), 16),
                             dtype=keys.dtype if self.kind == "int" else object)
            if self._originals is not None:
                grown[:self._count] = self._originals[:self._count]
            self._originals = grown
        self._originals[dense] = keys
        self._count = need

    def to_original(self, dense, missing=_RAISE) -> np.ndarray:
        """Original ids of dense ids: an array of the shape of ``dense`` (NumPy or CuPy,
        any integer dtype), int64 for integer ids, str for string ids; host memory.

        ``missing``: what a negative dense id (``-1``, "no vertex", as in BFS parents)
        becomes; by default it raises KeyError like any id outside ``[0, len(self))``. For
        integer ids ``missing`` must be an integer (note that -1 may also be a real original
        id); for string ids a string, or None for an object array holding None there.

            >>> m = VertexMap.from_originals(["a", "b"])
            >>> m.to_original([1, -1, 0], missing=None).tolist()
            ['b', None, 'a']
        """
        d = np.asarray(dense.get() if hasattr(dense, "get") and not isinstance(dense, np.ndarray)
                       else dense)
        if d.size and d.dtype.kind not in "iu":
            raise KeyError(f"dense ids must be integers, got dtype {d.dtype}")
        d = d.astype(np.int64, copy=False)
        absent = None
        if missing is not _RAISE and d.size and (d < 0).any():
            absent = d < 0
        present = d if absent is None else d[~absent]
        if present.size and (int(present.min()) < 0 or int(present.max()) >= self._count):
            raise KeyError(f"dense ids must lie in [0, {self._count})")
        if self._originals is None:
            out = np.empty(d.shape, np.int64 if self.kind != "str" else str)
        else:
            out = self._originals[d if absent is None else np.where(absent, 0, d)]
            if self.kind == "str" and not (absent is not None and missing is None):
                out = out.astype(str)
        if absent is None:
            return out
        if self.kind == "str":
            if missing is not None and not isinstance(missing, str):
                raise TypeError(f"missing must be a string or None for string ids, got "
                                f"{missing!r}")
            if missing is None:
                out = out.astype(object)
            else:
                out = out.astype(np.result_type(out.dtype, np.array(missing).dtype))
        elif isinstance(missing, (bool, np.bool_)) or not isinstance(missing, (int, np.integer)):
            raise TypeError(f"missing must be an integer for integer ids, got {missing!r}")
        out[absent] = missing
        return out

    def originals(self) -> np.ndarray:
        """Every original id, indexed by dense id."""
        return self.to_original(np.arange(self._count, dtype=np.int64))

    @classmethod
    def from_originals(cls, originals) -> "VertexMap":
        """The map whose dense id ``i`` is ``originals[i]`` (ids distinct)."""
        m = cls()
        keys = m._keys(originals)
        if np.unique(keys).shape[0] != keys.shape[0]:
            raise ValueError("original ids must be distinct")
        dense = m.to_dense(keys)
        assert np.array_equal(dense, np.arange(keys.shape[0]))
        return m
