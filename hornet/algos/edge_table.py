"""Per-edge state of dynamic algorithms, keyed by the edge: an open-addressing hash table.

A dynamic algorithm that keeps a value per edge (triangle support, truss numbers) cannot key it
by position in ``g.edges()``: positions shift with every insertion. :class:`EdgeTable` maps an
undirected edge ``{u, v}`` (key ``(min << 32) | max``, int64) to a slot, and keeps one array per
value column indexed by slot, so kernels reach an edge's values with one probe sequence.

Layout: ``keys`` (int64, capacity a power of two) holds :data:`EMPTY`, :data:`TOMB` (a
deleted key; probes continue past it) or a key. The home slot of ``k`` is
``(k * 0x9E3779B97F4A7C15) >> (64 - log2(capacity))`` (Fibonacci hashing), collisions probe
linearly. Inserts claim empty slots with a compare-and-swap (Numba ``atomic_cas`` on the CPU,
``atomicCAS`` on the GPU), so a batch is inserted in parallel; tombstones are never reused
(two threads inserting one key could otherwise claim two slots) and are cleared by the next
rehash. A batch that would take the table past :attr:`EdgeTable.MAX_LOAD` (live keys plus
tombstones) first rehashes every live key into a table at most half full: amortised O(1) per
insertion, never a pass per update.

Kernels that probe the table themselves (the dynamic triangle kernels) use :func:`table_find`
(Numba) or ``et_find`` of ``edge_table.cuh`` (CUDA) with ``(keys, shift)``.

    >>> import numpy as np
    >>> t = EdgeTable("cpu", {"support": np.int64})
    >>> slots = t.insert(np.array([3, 1]), np.array([1, 2]), support=np.array([5, 7]))
    >>> t.get("support", np.array([1, 2]), np.array([3, 1])).tolist()   # either direction
    [5, 7]
    >>> t.delete(np.array([1]), np.array([3])), len(t)
    (1, 1)
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from hornet.core.atomics import atomic_cas
from hornet.core.chunking import threads_for
from ..core.jit import njit, part_range, split_kernel

#: work units per key for threads_for (a probe costs about a list entry's worth 16 times)
_KEY_WORK = 16

__all__ = ["EdgeTable", "table_find", "table_insert", "edge_key", "EMPTY", "TOMB",
           "CUDA_HEADER"]

EMPTY = np.int64(-1)
TOMB = np.int64(-2)
_MULT = np.uint64(0x9E3779B97F4A7C15)
_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "edge_table.cu")
#: the device functions et_key / et_find / et_insert (included by other .cu files)
CUDA_HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "edge_table.cuh")
_NULL = np.uint64(0)         # a null pointer argument
_PREPARED: dict = {}


def _fast(name: str, n: int, values: tuple) -> None:
    """Kernel ``name`` of edge_table.cu over ``n`` items (grid-stride) through a reused
    prepared launch (``values``: ints, one per parameter): the per-update fast paths, where
    CuPy's conversion of every argument would cost more than the kernel."""
    from hornet.core.cuda import BLOCK, PreparedLaunch, _max_grid, function
    p = _PREPARED.get(name)
    if p is None:
        fn = function(_CU, name, _NAMES)
        p = _PREPARED[name] = PreparedLaunch(fn, len(values))
    p(min(-(-n // BLOCK), _max_grid()), BLOCK, values)
_NAMES = ()                 # (extern "C" kernels only)


# --------------------------------------------------------------------------------------------
# Numba probes


@njit(inline="always")
def edge_key(u, v):
    """int64 key of the undirected edge {u, v}: ``(min << 32) | max``."""
    a = min(u, v)
    b = max(u, v)
    return (np.int64(a) << 32) | np.int64(b)


@njit(inline="always")
def _home(k, shift):
    return np.int64((np.uint64(k) * _MULT) >> np.uint64(shift))


@njit
def table_find(keys, shift, k):
    """Slot of key ``k`` in ``keys`` (capacity ``2 ** (64 - shift)``), or -1."""
    mask = keys.shape[0] - 1
    s = _home(k, shift)
    while True:
        c = keys[s]
        if c == k:
            return s
        if c == EMPTY:
            return -1
        s = (s + 1) & mask


@njit
def table_insert(keys, shift, k):
    """Slot of key ``k``, claimed with a compare-and-swap when absent: ``(slot, fresh)``."""
    mask = keys.shape[0] - 1
    s = _home(k, shift)
    while True:
        c = keys[s]
        if c == EMPTY:
            c = atomic_cas(keys, s, EMPTY, k)
            if c == EMPTY:
                return s, True
        if c == k:
            return s, False
        s = (s + 1) & mask


@split_kernel(threshold=0)
def _insert_keys(keys, shift, qkeys, slots, fresh, part, parts):
    for i in range(*part_range(qkeys.shape[0], part, parts)):
        s, f = table_insert(keys, shift, qkeys[i])
        slots[i] = s
        fresh[i] = f


@split_kernel(threshold=0)
def _find_keys(keys, shift, qkeys, slots, part, parts):
    for i in range(*part_range(qkeys.shape[0], part, parts)):
        slots[i] = table_find(keys, shift, qkeys[i])


@split_kernel(threshold=0)
def _delete_keys(keys, shift, qkeys, gone, part, parts):
    for i in range(*part_range(qkeys.shape[0], part, parts)):
        s = table_find(keys, shift, qkeys[i])
        gone[i] = False
        if s >= 0:
            gone[i] = atomic_cas(keys, s, qkeys[i], TOMB) == qkeys[i]


# --------------------------------------------------------------------------------------------
# The table


def _xp(device: str):
    if device == "gpu":
        import cupy
        return cupy
    return np


def _capacity_for(n: int, load: float) -> int:
    cap = 16
    while cap * load < n:
        cap *= 2
    return cap


class EdgeTable:
    """Hash table from undirected edges to slots with value columns (CPU or GPU).

    Parameters
    ----------
    device : "cpu" or "gpu"
        Where the arrays live (NumPy or CuPy).
    columns : dict name -> dtype
        Value columns, one value per slot (0 for a fresh key unless given).
    capacity : int
        Initial number of slots (rounded up to a power of two, at least 16).

    Attributes
    ----------
    keys : int64 (capacity,)       EMPTY, TOMB or ``(min << 32) | max``
    shift : int                    ``64 - log2(capacity)`` (the probes' hash shift)
    columns : dict name -> array (capacity,)
    """

    #: rehash before live keys plus tombstones exceed this share of the slots
    MAX_LOAD = 0.7
    #: after a rehash, live keys take at most this share
    REHASH_LOAD = 0.4

    def __init__(self, device: str, columns: dict, capacity: int = 16):
        if device not in ("cpu", "gpu"):
            raise ValueError(f"device must be 'cpu' or 'gpu', got {device!r}")
        self.device = device
        self.xp = _xp(device)
        self._dtypes = {str(k): np.dtype(v) for k, v in columns.items()}
        self._alloc(_capacity_for(capacity, 1.0))
        self._live = 0
        self._used = 0              # live keys + tombstones

    # ------------------------------------------------------------------ layout
    def _alloc(self, cap: int) -> None:
        xp = self.xp
        self.keys = xp.full(cap, EMPTY, dtype=xp.int64)
        self.columns = {k: xp.zeros(cap, dtype=dt) for k, dt in self._dtypes.items()}
        self.shift = 64 - (cap.bit_length() - 1)

    @property
    def capacity(self) -> int:
        return int(self.keys.shape[0])

    def __len__(self) -> int:
        return self._live

    def _reserve(self, extra: int) -> None:
        """Make room for ``extra`` more keys (rehash into a larger table when needed)."""
        if self._used + extra <= self.MAX_LOAD * self.capacity:
            return
        xp = self.xp
        live = xp.flatnonzero(self.keys >= 0)
        old_keys = self.keys[live]
        old_vals = {k: c[live] for k, c in self.columns.items()}
        self._alloc(_capacity_for(self._live + extra, self.REHASH_LOAD))
        slots = self._insert_keys(old_keys)[0]
        for k, v in old_vals.items():
            self.columns[k][slots] = v
        self._used = self._live = int(old_keys.shape[0])

    # ------------------------------------------------------------------ batched kernels
    def _pairs(self, u, v):
        xp = self.xp
        if not (type(u) is xp.ndarray and u.dtype == np.int32 and u.flags.c_contiguous):
            u = xp.ascontiguousarray(xp.asarray(u).astype(xp.int32, copy=False))
        if not (type(v) is xp.ndarray and v.dtype == np.int32 and v.flags.c_contiguous):
            v = xp.ascontiguousarray(xp.asarray(v).astype(xp.int32, copy=False))
        if u.shape != v.shape or u.ndim != 1:
            raise ValueError("u and v must be 1-D arrays of one length")
        return u, v

    def _keys_of(self, u, v):
        xp = self.xp
        a = xp.minimum(u, v).astype(xp.int64)
        b = xp.maximum(u, v).astype(xp.int64)
        return (a << 32) | b

    def _insert_keys(self, qkeys):
        """(slots, number of fresh keys) of inserting int64 keys (room already reserved)."""
        xp = self.xp
        n = int(qkeys.shape[0])
        slots = xp.empty(n, dtype=xp.int64)
        if self.device == "cpu":
            fresh = np.empty(n, dtype=np.bool_)
            with threads_for(_KEY_WORK * n):
                _insert_keys(self.keys, self.shift, qkeys, slots, fresh)
            return slots, int(fresh.sum())
        from hornet.core.cuda import function, i64, launch
        launch(function(_CU, "et_insert_keys", _NAMES), n,
               (self.keys, np.int32(self.shift), xp.ascontiguousarray(qkeys), i64(n), slots))
        return slots, None

    def insert(self, u, v, **values) -> Any:
        """Insert the edges ``{u[i], v[i]}`` (int arrays (n,) on the table's device).

        Keys already present keep their slot and values; fresh keys get ``values`` (arrays
        (n,) per column) or 0 (a key repeated in one call takes one of its values: pass
        distinct keys). Returns the int64 slot of every pair.
        """
        u, v = self._pairs(u, v)
        unknown = set(values) - set(self.columns)
        if unknown:
            raise KeyError(f"no column {sorted(unknown)}; the table has {sorted(self.columns)}")
        n = int(u.shape[0])
        self._reserve(n)
        xp = self.xp
        if self.device == "cpu":
            slots = np.empty(n, dtype=np.int64)
            fresh = np.empty(n, dtype=np.bool_)
            with threads_for(_KEY_WORK * n):
                _insert_keys(self.keys, self.shift, self._keys_of(u, v), slots, fresh)
            added = int(fresh.sum())
            for name, vals in values.items():
                self.columns[name][slots[fresh]] = np.asarray(vals)[fresh]
        else:
            from hornet.core.cuda import function, i64, launch
            slots = xp.empty(n, dtype=xp.int64)
            fresh = xp.empty(n, dtype=xp.uint8)
            counter = xp.zeros(1, dtype=xp.uint64)
            launch(function(_CU, "et_insert_pairs", _NAMES), n,
                   (self.keys, np.int32(self.shift), u, v, i64(n), slots, fresh, counter))
            added = int(counter.get()[0])
            fresh = fresh.astype(bool)
            for name, vals in values.items():
                self.columns[name][slots[fresh]] = xp.asarray(vals)[fresh]
        self._live += added
        self._used += added
        return slots

    def insert_new(self, u, v):
        """Insert edges known to be absent and distinct (their columns stay 0); returns slots.

        The fast path of a dynamic algorithm whose change lists only really inserted edges:
        no value writes, one kernel (plus the count of fresh keys read back on the GPU).
        """
        u, v = self._pairs(u, v)
        n = int(u.shape[0])
        self._reserve(n)
        if self.device == "cpu":
            slots, added = self._insert_keys(self._keys_of(u, v))
        else:
            xp = self.xp
            slots = xp.empty(n, dtype=xp.int64)
            if n:
                _fast("et_insert_pairs", n, (self.keys.data.ptr, self.shift, u.data.ptr,
                                             v.data.ptr, n, slots.data.ptr, 0,
                                             self._unread_counter().data.ptr))
            added = n          # absent and distinct by contract: no read-back
        self._live += added
        self._used += added
        return slots

    def _unread_counter(self):
        """A device word the kernels may count into when the count is not read (the fast
        paths): kept by the table, so that those calls allocate and clear nothing."""
        c = getattr(self, "_spare_counter", None)
        if c is None:
            c = self._spare_counter = self.xp.zeros(1, dtype=self.xp.uint64)
        return c

    def lookup(self, u, v):
        """int64 slot of every edge ``{u[i], v[i]}``, -1 where absent."""
        u, v = self._pairs(u, v)
        n = int(u.shape[0])
        xp = self.xp
        slots = xp.empty(n, dtype=xp.int64)
        if self.device == "cpu":
            with threads_for(_KEY_WORK * n):
                _find_keys(self.keys, self.shift, self._keys_of(u, v), slots)
        else:
            from hornet.core.cuda import function, i64, launch
            launch(function(_CU, "et_find_pairs", _NAMES), n,
                   (self.keys, np.int32(self.shift), u, v, i64(n), slots))
        return slots

    def get(self, name: str, u, v, missing=0):
        """Column ``name`` of every edge ``{u[i], v[i]}`` (``missing`` where absent)."""
        slots = self.lookup(u, v)
        col = self.columns[name]
        xp = self.xp
        return xp.where(slots >= 0, col[xp.maximum(slots, 0)], col.dtype.type(missing))

    def delete(self, u, v) -> int:
        """Delete the edges ``{u[i], v[i]}`` that are present; returns how many were."""
        u, v = self._pairs(u, v)
        n = int(u.shape[0])
        if n == 0:
            return 0
        if self.device == "cpu":
            gone = np.empty(n, dtype=np.bool_)
            with threads_for(_KEY_WORK * n):
                _delete_keys(self.keys, self.shift, self._keys_of(u, v), gone)
            removed = int(gone.sum())
        else:
            from hornet.core.cuda import function, i64, launch
            counter = self.xp.zeros(1, dtype=self.xp.uint64)
            launch(function(_CU, "et_delete_pairs", _NAMES), n,
                   (self.keys, np.int32(self.shift), u, v, i64(n), counter))
            removed = int(counter.get()[0])
        self._live -= removed
        return removed

    def delete_present(self, u, v) -> None:
        """Delete edges known to be present and distinct (no count read back on the GPU)."""
        u, v = self._pairs(u, v)
        n = int(u.shape[0])
        if n == 0:
            return
        if self.device == "cpu":
            self.delete(u, v)
            return
        _fast("et_delete_pairs", n, (self.keys.data.ptr, self.shift, u.data.ptr, v.data.ptr, n,
                                     self._unread_counter().data.ptr))
        self._live -= n

    def items(self):
        """``(u int32, v int32, {column: values})`` of every live edge (u < v), in slot order."""
        xp = self.xp
        live = xp.flatnonzero(self.keys >= 0)
        k = self.keys[live]
        return ((k >> 32).astype(xp.int32), (k & 0xFFFFFFFF).astype(xp.int32),
                {name: c[live] for name, c in self.columns.items()})
