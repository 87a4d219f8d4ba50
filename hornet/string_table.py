"""Strings interned to dense ids ``0, 1, 2, ...``: the table behind a vertex map of string ids.

The strings are kept as Arrow keeps a string column: the UTF-8 bytes of all of them in one
byte array and an int64 offset per string (string ``i`` is ``data[offsets[i]:offsets[i+1]]``),
indexed by dense id, with each one's 64-bit hash. An open-addressing hash table (linear
probing, a power of two of slots, at most half full counting deleted slots) holds each
string's hash beside its dense id, so a probe reads one cache line per slot and compares the
bytes only on equal hashes: lookups are exact whatever the hashes.

A batch arrives as an Arrow string array (pyarrow turns NumPy unicode arrays, object arrays
and Python lists into one in C++, and Arrow columns are read in place), and one Numba kernel
walks it in order: new strings get the next ids in order of first appearance, with no
Python step per string. Arrays of original strings come back through Arrow (``take`` on the
stored column).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from .core.jit import njit
from .core.pointers import prefetch

__all__ = ["StringTable", "as_string_array", "is_string_type"]

# A slot is two uint64 words: the hash, and 0 (empty), 1 (deleted) or dense id + 2.
_EMPTY, _DELETED, _FIRST_ID = np.uint64(0), np.uint64(1), np.uint64(2)
_AHEAD = 16                                     # probes prefetched ahead of the current one
_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)
_MIX1 = np.uint64(0xff51afd7ed558ccd)
_MIX2 = np.uint64(0xc4ceb9fe1a85ec53)
_S33 = np.uint64(33)


@njit
def _hash(data, lo, hi):
    """FNV-1a over ``data[lo:hi]``, then MurmurHash3's finaliser (spreads the low bits,
    which pick the slot)."""
    h = _FNV_OFFSET
    for i in range(lo, hi):
        h = (h ^ np.uint64(data[i])) * _FNV_PRIME
    h ^= h >> _S33
    h *= _MIX1
    h ^= h >> _S33
    h *= _MIX2
    h ^= h >> _S33
    return h


@njit
def _hash_batch(bdata, boffs, out):
    for i in range(out.shape[0]):
        out[i] = _hash(bdata, boffs[i], boffs[i + 1])


@njit
def _intern(bdata, boffs, bhash, add, slots, slots_address, hashes, data, offs, count, out):
    """Dense id of every batch string ``i`` (bytes ``bdata[boffs[i]:boffs[i + 1]]``, hash
    ``bhash[i]``) in ``out[i]``. An unknown string gets the next id when ``add`` (its bytes,
    offset and hash appended, its slot filled; the caller made room for the whole batch),
    else -1. The slot of the string ``_AHEAD`` places on is prefetched (the table is far
    larger than the caches). Returns the new count."""
    mask = np.uint64(slots.shape[0] // 2 - 1)
    n = out.shape[0]
    for i in range(n):
        if i + _AHEAD < n:
            prefetch(slots_address + np.int64(bhash[i + _AHEAD] & mask) * 16)
        lo = boffs[i]
        length = boffs[i + 1] - lo
        h = bhash[i]
        s = np.int64(h & mask)
        found = -1
        while True:
            tag = slots[2 * s + 1]
            if tag == _EMPTY:
                break
            if tag >= _FIRST_ID and slots[2 * s] == h:
                d = np.int64(tag - _FIRST_ID)
                a = offs[d]
                if offs[d + 1] - a == length:
                    same = True
                    for j in range(length):
                        if data[a + j] != bdata[lo + j]:
                            same = False
                            break
                    if same:
                        found = d
                        break
            s = np.int64(np.uint64(s + 1) & mask)
        if found < 0 and add:
            found = count
            a = offs[count]
            for j in range(length):
                data[a + j] = bdata[lo + j]
            offs[count + 1] = a + length
            hashes[count] = h
            slots[2 * s] = h                     # the empty slot that ended the probe
            slots[2 * s + 1] = np.uint64(count) + _FIRST_ID
            count += 1
        out[i] = found
    return count


@njit
def _place_all(slots, hashes, count):
    """Fill empty ``slots`` with dense ids ``0 .. count - 1`` by their hashes."""
    mask = np.uint64(slots.shape[0] // 2 - 1)
    for d in range(count):
        s = np.int64(hashes[d] & mask)
        while slots[2 * s + 1] != _EMPTY:
            s = np.int64(np.uint64(s + 1) & mask)
        slots[2 * s] = hashes[d]
        slots[2 * s + 1] = np.uint64(d) + _FIRST_ID


@njit
def _forget(slots, hashes, first, count):
    """Mark the slots of dense ids ``first .. count - 1`` deleted."""
    mask = np.uint64(slots.shape[0] // 2 - 1)
    for d in range(first, count):
        s = np.int64(hashes[d] & mask)
        while slots[2 * s + 1] != np.uint64(d) + _FIRST_ID:
            s = np.int64(np.uint64(s + 1) & mask)
        slots[2 * s + 1] = _DELETED


def is_string_type(t: pa.DataType) -> bool:
    """Arrow string types a vertex map reads (dictionary-encoded strings included)."""
    if pa.types.is_dictionary(t):
        t = t.value_type
    return pa.types.is_string(t) or pa.types.is_large_string(t) or \
        (hasattr(pa.types, "is_string_view") and pa.types.is_string_view(t))


def as_string_array(ids) -> pa.Array:
    """``ids`` (Arrow string array or chunked array, NumPy unicode or object array, list of
    str) as one Arrow string or large_string array without nulls.

    Raises TypeError when not every id is a string, ValueError for nulls."""
    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks() if ids.num_chunks != 1 else ids.chunk(0)
    if not isinstance(ids, pa.Array):
        a = np.asarray(ids) if not isinstance(ids, (list, tuple)) else ids
        try:
            if isinstance(a, np.ndarray) and a.dtype.kind == "U":
                ids = pa.array(a)
            else:
                ids = pa.array(a.astype(object) if isinstance(a, np.ndarray) and
                               a.dtype.kind not in "OU" else a, type=pa.large_string())
        except (pa.ArrowTypeError, pa.ArrowInvalid):
            raise TypeError("vertex ids must be all integers or all strings") from None
        except UnicodeError:
            raise ValueError("string vertex ids must be valid Unicode (UTF-8 encodable; "
                             "no lone surrogates)") from None
    if pa.types.is_dictionary(ids.type):
        ids = ids.dictionary_decode()
    if not (pa.types.is_string(ids.type) or pa.types.is_large_string(ids.type)):
        if not is_string_type(ids.type):
            raise TypeError(f"vertex ids must be integers or strings, got Arrow type {ids.type}")
        ids = ids.cast(pa.large_string())
    if ids.null_count:
        raise ValueError("vertex ids must not be null")
    return ids


def _buffers(arr: pa.Array):
    """``(offsets int64 (len + 1,), data uint8)`` of a string or large_string array, read in
    place (the offsets of a 32-bit string array are widened)."""
    bufs = arr.buffers()
    width = np.int32 if pa.types.is_string(arr.type) else np.int64
    offs = np.frombuffer(bufs[1], dtype=width)[arr.offset:arr.offset + len(arr) + 1] \
        if len(arr) else np.zeros(1, width)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None and bufs[2].size \
        else np.zeros(1, np.uint8)
    # read-only always (an Arrow buffer usually is), so that the kernels are compiled once
    data = data.view()
    data.flags.writeable = False
    return offs.astype(np.int64), data


def _grown(a: np.ndarray, need: int, fill=None) -> np.ndarray:
    """``a`` with room for ``need`` items (doubling), contents kept."""
    if a.shape[0] >= need:
        return a
    out = np.empty(max(need, 2 * a.shape[0]), a.dtype) if fill is None else \
        np.full(max(need, 2 * a.shape[0]), fill, a.dtype)
    out[:a.shape[0]] = a
    return out


class StringTable:
    """Strings <-> dense ids ``0 .. len(self) - 1`` (see the module docstring)."""

    def __init__(self):
        self._count = 0
        self._data = np.empty(256, np.uint8)       # bytes of string i: offsets[i]:offsets[i+1]
        self._offs = np.zeros(33, np.int64)
        self._hashes = np.empty(32, np.uint64)
        self._slots = np.zeros(2 * 64, np.uint64)   # 64 slots of (hash, tag)
        self._deleted = 0                          # slots marked deleted by truncate

    def __len__(self) -> int:
        return self._count

    def ids(self, strings: pa.Array, add: bool) -> np.ndarray:
        """Dense ids (int64 (len,)) of the strings of ``strings`` (from
        :func:`as_string_array`); unknown ones get the next ids in order of first appearance
        when ``add``, else -1."""
        n = len(strings)
        out = np.empty(n, np.int64)
        if n == 0:
            return out
        offs, data = _buffers(strings)
        if add:
            self._make_room(n, int(offs[-1] - offs[0]))
        elif self._count == 0:
            out[:] = -1
            return out
        bhash = np.empty(n, np.uint64)
        _hash_batch(data, offs, bhash)
        self._count = int(_intern(data, offs, bhash, add, self._slots,
                                  self._slots.ctypes.data, self._hashes, self._data,
                                  self._offs, self._count, out))
        return out

    def _make_room(self, n: int, nbytes: int) -> None:
        need = self._count + n
        self._data = _grown(self._data, int(self._offs[self._count]) + nbytes)
        self._offs = _grown(self._offs, need + 1)
        self._hashes = _grown(self._hashes, need)
        if 2 * (need + self._deleted) > self._slots.shape[0] // 2:
            size = 1 << max(6, (2 * need - 1).bit_length())
            self._slots = np.zeros(2 * size, np.uint64)
            _place_all(self._slots, self._hashes, self._count)
            self._deleted = 0

    def truncate(self, count: int) -> None:
        """Forget the strings of dense ids ``count`` and above."""
        count = max(int(count), 0)
        if count >= self._count:
            return
        _forget(self._slots, self._hashes, count, self._count)
        self._deleted += self._count - count
        self._count = count

    def to_arrow(self, dense: np.ndarray | None = None) -> pa.LargeStringArray:
        """The strings of dense ids ``dense`` (int64, each in ``[0, len)`` or negative for a
        null), or all of them, as an Arrow large_string array of its own (``take`` copies the
        strings out of the table's arrays, which later batches write to)."""
        n = self._count
        whole = dense is None                  # the column itself leaves: a copy of the bytes
        offs, data = self._offs[:n + 1], self._data[:int(self._offs[n])]
        column = pa.LargeStringArray.from_buffers(
            n, pa.py_buffer(offs.copy() if whole else offs),
            pa.py_buffer(data.copy() if whole else data))
        if whole:
            return column
        absent = dense < 0
        index = pa.array(np.where(absent, 0, dense), mask=absent if absent.any() else None)
        return column.take(index)

    def copy(self) -> "StringTable":
        """An independent table with the same strings."""
        t = StringTable.__new__(StringTable)
        t._count, t._deleted = self._count, self._deleted
        t._data, t._offs = self._data.copy(), self._offs.copy()
        t._hashes, t._slots = self._hashes.copy(), self._slots.copy()
        return t
