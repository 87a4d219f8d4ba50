"""Deferred small inserts on the GPU: the small-batch path's kernels, queued without a wait.

The small-batch path (:mod:`hornet.batch.gpu.small`) reads its prepare kernel's header before
it launches the rewrite: the host decides from it which rings of the block cache take the
blocks the batch gives back and whether a ring must be refilled first. A deferred batch
(:mod:`hornet.batch.deferred_path`) queues both kernels at once and reads its header later:

- ``small_prepare`` is given the rings' device counters, a per-class limit (the most a ring
  may keep: the host's ``BlockCache.accepts`` rule) and a stall word. It decides the accept
  mask itself and writes it to the header (``H_ACCEPT``); when a ring holds fewer blocks than
  the batch pops it sets the stall word and marks the batch stalled (``H_STALLED``), and every
  later deferred batch finds the word set and does nothing, until the host has filled the
  rings and queued them again in order (the graph is as if they had not been called);
- ``small_merge`` takes the accept mask from the header (bit 63 of its ``ring_accept``) and
  runs on a fixed grid, its blocks stepping through the pieces the header lists;
- the header goes to a pinned row by an asynchronous copy behind the prepare kernel, with an
  event the host polls;
- an upsert (directed: the new pairs inserted, the present ones' properties rewritten) runs
  ``small_prepare`` in ``MODE_UPSERT``, which also lists the present edges and, once the
  batch is known not to stall, reads their old values and writes the batch's in place (every
  list still where it found it: the rewrite comes after).

A batch of more than SMALL_ENTRIES entries, up to ``GRID_ENTRIES``, is prepared by
``grid_prepare`` (deferred_grid.cu): the same work and the same workspace layout, of capacity
GRID_ENTRIES, done by a grid of blocks in one launch (one block per CHUNK entries, phases
between grid-wide barriers), then rewritten by ``small_merge`` with that capacity: one batch,
one header, where three one-block prepares ran one after the other. Grid batches have
``GRID_SLOTS`` workspaces and pinned rows of their own (a grid batch in flight holds one
besides its slot), made on first use or ahead (:meth:`DeferredBatches.make_grid`).

Each batch in flight owns one of ``SLOTS`` workspaces (its spill list is read when the host
settles it, before the workspace is reused). Host property values (``host_values``) are put in
the slot's pinned row after the pairs; the prepare kernel copies them to the workspace's value
area (VALUE_OFFSET of small_batch.cu), which the rewrite kernels read: the row is free again
once the prepare has run, as it is for the pairs.
"""
from __future__ import annotations

import os
import time

import numpy as np

from ...core.cuda import PreparedLaunch, as_signed64, cupy, function
from ..small_layout import DEFERRED_READ_WORDS as READ_WORDS
from ..small_layout import (HEADER_WORDS, MAX_FIELDS, MODE_INSERT, MODE_UPSERT, NUM_CLASSES,
                            SMALL_ENTRIES)
from .small import (_CU, _ID_TYPES, _NAMES, PREPARE_ARGS, PREPARE_THREADS, REWRITE_THREADS,
                    SPILL_OFFSET, WORKSPACE_WORDS, COPY_MAX_CLASS, field_words)

__all__ = ["DeferredBatches", "SLOTS", "READ_WORDS", "GRID_ENTRIES"]

#: batches in flight at most (workspaces, pinned header rows, events)
SLOTS = 8
#: host pairs read by the prepare kernel from pinned memory (no copy to the device first);
#: environment HORNET_DEFERRED_ZERO_COPY=0: a staged device copy instead
ZERO_COPY = os.environ.get("HORNET_DEFERRED_ZERO_COPY", "1") != "0"
DEFERRED_ACCEPT = as_signed64(1 << 63)   # ring_accept bit: the mask is in the header
#: most entries of a batch prepared by the grid of blocks (deferred_grid.cu: MAX_BLOCKS *
#: CHUNK); 0: batches of more than SMALL_ENTRIES entries are not deferred as one
GRID_ENTRIES = 16384
GRID_CHUNK = 1024                          # entries per block of the grid (CHUNK)
#: grid batches in flight at most (their workspaces and pinned rows)
GRID_SLOTS = 3
_GRID_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "deferred_grid.cu")
_GRID_NAMES = tuple(f"grid_prepare<{t}, {u}>" for t in _ID_TYPES.values()
                    for u in ("false", "true"))
# a workspace of capacity GRID_ENTRIES (Layout of small_rewrite.cuh, then small_batch.cu's
# found edges and values, then deferred_grid.cu's Scratch: the sorted keys and entries twice,
# the blocks' partial counts, the barrier)
_GE = 16384
GRID_SPILL_OFFSET = HEADER_WORDS + 14 * _GE
GRID_VALUE_OFFSET = HEADER_WORDS + 17 * _GE
GRID_WORKSPACE_WORDS = HEADER_WORDS + 24 * _GE + 3 * _GE + 8 * 16 + 2


def _device_address(pinned: np.ndarray) -> int:
    """The device's address of pinned host memory (mapped: unified addressing), 0 if none."""
    try:
        return int(cupy.cuda.runtime.pointerGetAttributes(pinned.ctypes.data).devicePointer)
    except Exception:                   # (a CUDA error: the memory is not mapped)
        return 0


class _HostRow:
    """A row of host pairs in pinned memory, as :meth:`DeferredBatches.launch` reads a
    device array (``data.ptr``, ``shape``, ``dtype``)."""

    __slots__ = ("data", "ptr", "shape", "dtype")

    def __init__(self, ptr: int, n: int, dtype):
        self.data = self
        self.ptr = ptr
        self.shape = (n,)
        self.dtype = dtype


def _same(a, b) -> bool:
    """Whether tuples ``a`` (or None) and ``b`` hold the same objects (arrays: identity;
    flags and dtypes: equality)."""
    if a is None:
        return False
    return (a[0] is b[0] and a[1] is b[1] and a[2] is b[2] and a[3] is b[3] and
            a[4] is b[4] and a[5:] == b[5:])


#: the workspace's value area (int64 words from WORKSPACE_WORDS): every edge property's
#: column of a batch, each from a word boundary
VALUE_WORDS = (MAX_FIELDS - 1) * SMALL_ENTRIES
GRID_VALUE_WORDS = (MAX_FIELDS - 1) * _GE


class DeferredBatches:
    """The device state of one graph's deferred small inserts."""

    slots = SLOTS
    #: most entries of one deferred batch prepared by a grid of blocks (see GRID_ENTRIES),
    #: and how many such batches may be in flight
    grid_entries = GRID_ENTRIES
    grid_slots = GRID_SLOTS
    limits_due = 0          # the graph's deferred batch count at which limits are refreshed
    prefilled = False       # the rings of small classes filled (at the first batch)

    def __init__(self):
        import cupyx
        self.workspaces = [cupy.empty(WORKSPACE_WORDS + VALUE_WORDS, dtype=cupy.int64)
                           for _ in range(SLOTS)]
        # per slot: the header's words, then the ticket of the batch that wrote them
        self.headers = cupyx.empty_pinned((SLOTS, READ_WORDS + 1), dtype=np.int64)
        self.headers[:, READ_WORDS] = -1
        self.tickets = [0] * SLOTS
        self._ticket = 0
        self.events = [cupy.cuda.Event(block=False, disable_timing=True) for _ in range(SLOTS)]
        # per slot: the pairs (2 * SMALL_ENTRIES words), then the property values
        self.pinned = cupyx.empty_pinned((SLOTS, 2 * SMALL_ENTRIES + VALUE_WORDS),
                                         dtype=np.int64)
        self._bytes = [self.pinned[k].view(np.uint8) for k in range(SLOTS)]
        # their device addresses (0: pairs copied, headers copied back after an event)
        self._pinned_device = self._headers_device = 0
        if ZERO_COPY:
            self._pinned_device = _device_address(self.pinned)
            self._headers_device = _device_address(self.headers)
        #: the deferred path hands host property values to :meth:`stage` (else device arrays)
        self.host_values = bool(self._pinned_device)
        self.stall = cupy.zeros(1, dtype=cupy.int64)
        self.limits = cupy.zeros(NUM_CLASSES, dtype=cupy.int64)
        self.host_limits = np.full(NUM_CLASSES, -1, dtype=np.int64)
        self._launches: dict = {}
        self._value_copy = (0, 0)       # (device address, words) of the values staged last
        self._rows: dict = {}           # (slot, dtype) -> the slot's pinned row as that dtype
        # what the prepared launches' buffers were filled from, and those launches
        self._fills: dict = {}          # capacity -> (held, prepare, merge)
        self._pairs: dict = {}          # (id dtype, insert, capacity) -> (prepare, merge)
        # grid batches (made on first use): per grid slot a workspace, pinned rows of pairs
        # and values and their device address
        self.grid_workspaces = [None] * GRID_SLOTS
        self.grid_pinned = None
        self._grid_pinned_device = 0
        self._grid_bytes = None
        dev = cupy.cuda.Device()
        self.grid = 2 * int(dev.attributes["MultiProcessorCount"])

    def _launch(self, name: str, nargs: int, key: str | None = None, cu: str = _CU,
                names: tuple = _NAMES) -> PreparedLaunch:
        """The prepared launch ``key`` (default: ``name``) of kernel ``name`` of ``cu``
        (launches of one kernel under two keys keep two argument buffers)."""
        launch = self._launches.get(key or name)
        if launch is None:
            launch = self._launches[key or name] = PreparedLaunch(function(cu, name, names),
                                                                  nargs)
        return launch

    def make_grid(self) -> None:
        """Make now what grid batches make on first use: every grid slot's workspace, the
        pinned rows, the kernels loaded."""
        for k in range(GRID_SLOTS):
            self._grid_workspace(k)
        self._grid_rows()
        for u in ("false", "true"):
            for t in _ID_TYPES.values():
                launch = self._launch(f"grid_prepare<{t}, {u}>", PREPARE_ARGS + 1,
                                      cu=_GRID_CU, names=_GRID_NAMES)
                if launch._ptr is None:
                    launch._ptr = launch.fn.kernel.ptr
        merge = self._launch("small_merge", 30, key="small_merge/grid")
        if merge._ptr is None:
            merge._ptr = merge.fn.kernel.ptr

    def _grid_workspace(self, slot: int):
        """Grid workspace ``slot`` of capacity GRID_ENTRIES (int64 device, zero when made:
        the grid's barrier words start at zero)."""
        ws = self.grid_workspaces[slot]
        if ws is None:
            ws = self.grid_workspaces[slot] = cupy.zeros(GRID_WORKSPACE_WORDS, dtype=cupy.int64)
        return ws

    def _grid_rows(self):
        """The pinned rows of grid batches' pairs and values, (GRID_SLOTS, 2 * GRID_ENTRIES
        + GRID_VALUE_WORDS) int64, made on first use (with their device address)."""
        if self.grid_pinned is None:
            import cupyx
            self.grid_pinned = cupyx.empty_pinned((GRID_SLOTS, 2 * _GE + GRID_VALUE_WORDS),
                                                  dtype=np.int64)
            self._grid_bytes = [self.grid_pinned[k].view(np.uint8) for k in range(GRID_SLOTS)]
            self._grid_pinned_device = _device_address(self.grid_pinned)
        return self.grid_pinned

    def _row(self, slot: int, dtype, cap: int) -> np.ndarray:
        """The pinned row of workspace ``slot`` (a grid slot where ``cap`` is a grid
        batch's) as ``dtype``."""
        row = self._rows.get((slot, dtype, cap))
        if row is None:
            rows = self._grid_rows() if cap != SMALL_ENTRIES else self.pinned
            row = self._rows[(slot, dtype, cap)] = rows[slot].view(dtype)
        return row

    def pairs_row(self, slot: int, n: int, dtype, cap: int = SMALL_ENTRIES, grid: int = -1):
        """A (n,) pair row's place in the pinned row that :meth:`stage` would copy them to
        (``cap``, ``grid`` as there): a (2, n) host view of ``dtype`` that the caller fills
        and hands to :meth:`stage` with ``staged`` (no copy), the row held by its batch
        until settled; None without zero copy."""
        if not self._pinned_device:
            return None
        row = self._row(grid if cap != SMALL_ENTRIES else slot, dtype, cap)
        return row[:2 * n].reshape(2, n)

    def stage(self, slot: int, both: np.ndarray, values=(), cap: int = SMALL_ENTRIES,
              grid: int = -1, staged: bool = False):
        """Host pairs ``both`` (2, m) for the batch of workspace ``slot``, as its prepare
        kernel reads them: with ``ZERO_COPY``, the slot's own pinned buffer (the kernel reads
        host memory through its address; the slot is reused once the batch is settled, after
        its prepare ran), else a device copy (staged, in stream order). ``values``: per
        property a device array, or (``host_values``) a contiguous host array of (m,),
        copied to the workspace's value area. ``cap``: the batch's workspace capacity
        (GRID_ENTRIES: a grid batch, whose rows and workspace are grid slot ``grid``'s).
        ``staged``: ``both`` is the row's own view (:meth:`pairs_row`), nothing to copy.
        Returns (src, dst, values as the kernels take them: device addresses)."""
        if not self._pinned_device:
            from ...core.cuda import upload
            dev = upload(both)
            return dev[0], dev[1], [v.data.ptr for v in values]
        m = both.shape[1]
        dtype = both.dtype
        if cap != SMALL_ENTRIES:
            slot = grid                                  # (the grid slot's row, workspace)
        if not staged:
            row = self._row(slot, dtype, cap)
            row[:m] = both[0]
            row[m:2 * m] = both[1]
        if cap != SMALL_ENTRIES:
            base = self._grid_pinned_device + slot * self.grid_pinned.strides[0]
        else:
            base = self._pinned_device + slot * self.pinned.strides[0]
        ptrs = []
        self._value_copy = (0, 0)
        if values:
            if cap != SMALL_ENTRIES:
                ws = self._grid_workspace(slot).data.ptr + GRID_VALUE_OFFSET * 8
                raw = self._grid_bytes[slot]
            else:
                ws = self.workspaces[slot].data.ptr + WORKSPACE_WORDS * 8
                raw = self._bytes[slot]
            first = at = 2 * cap * 8                     # bytes: where the values start
            for v in values:
                if isinstance(v, np.ndarray):
                    raw[at:at + v.nbytes] = v.view(np.uint8)
                    ptrs.append(ws + at - first)
                    at += (v.nbytes + 7) & ~7
                else:
                    ptrs.append(v.data.ptr)
            if at > first:                   # (the prepare kernel copies them: launch)
                self._value_copy = (base + first, (at - first) // 8)
        return _HostRow(base, m, dtype), _HostRow(base + m * dtype.itemsize, m, dtype), ptrs

    def set_limits(self, limits: np.ndarray) -> None:
        """Upload the rings' limits (host int64 (NUM_CLASSES,)) when they changed; in stream
        order: batches queued before keep the old ones."""
        if not np.array_equal(limits, self.host_limits):
            from ...core.cuda import upload
            self.host_limits = limits.copy()
            self.limits[:] = upload(self.host_limits)

    def clear_stall(self) -> None:
        """Reset the stall word, in stream order (after every batch queued so far)."""
        self.stall.fill(0)

    def launch(self, slot: int, s, d, mirror: bool, degree, size_class, edge_ptr,
               min_class: int, cache, lookup, field_dtypes, values, outs, rows,
               found=None, cap: int = SMALL_ENTRIES, grid: int = -1) -> None:
        """Queue batch ``s``, ``d`` (int32 or int64 device pairs of one dtype, (n,), n *
        (2 if mirror else 1) <= SMALL_ENTRIES) as an insert in workspace ``slot``: prepare,
        the header's copy to pinned row ``slot`` and its event, the rewrite. ``values``: per
        property the device address of its (n,) values; ``outs``: per property the result's device array of
        at least n entries; ``rows``: int32 device (2 * SMALL_ENTRIES,) for the result's
        src and dst (an upsert's: (4 * SMALL_ENTRIES,), the found edges' from
        2 * SMALL_ENTRIES on); ``found``: an upsert's per property (new values, old values),
        device arrays of at least n entries (None: an insert).

        ``cap``: GRID_ENTRIES for a batch of more than SMALL_ENTRIES entries (at most that
        many): prepared by ``grid_prepare`` in the workspace of grid slot ``grid``,
        ``rows``, ``outs`` and ``found`` of that capacity (rows: (2 * cap,), an upsert's
        (4 * cap,)).

        The kernels' argument buffers keep what stays from batch to batch (the vertex
        table, the block cache and the lookup, rebuilt when one of them changes); a batch
        writes its own words only."""
        ws = self._grid_workspace(grid) if cap != SMALL_ENTRIES else self.workspaces[slot]
        wp = ws.data.ptr
        n = s.shape[0]
        entries = n * (2 if mirror else 1)
        self._ticket += 1
        self.tickets[slot] = self._ticket
        mapped = self._headers_device
        host_row = mapped + slot * (READ_WORDS + 1) * 8 if mapped else 0
        pair = self._pairs.get((s.dtype, found is None, cap))
        if pair is None:
            pair = self._pairs[(s.dtype, found is None, cap)] = self._kernels(s.dtype, found,
                                                                                cap)
        prepare, merge = pair
        # the objects the buffers were filled from (held, so that identity means the same
        # arrays): the vertex table, the block cache, the lookup, the batch's shape
        held = (degree, size_class, edge_ptr, cache, lookup, bool(mirror), int(min_class),
                tuple(field_dtypes))
        fill = self._fills.get(cap)
        if fill is None or not _same(fill[0], held) or prepare is not fill[1] or \
                merge is not fill[2]:
            self._fill_buffers(prepare, merge, held, cap)
        a = prepare.args
        a[0] = s.data.ptr
        a[1] = d.data.ptr
        a[2] = n
        a[4] = MODE_INSERT if found is None else MODE_UPSERT
        a[11] = wp
        a[12] = rows.data.ptr
        a[17] = host_row
        a[18] = self._ticket
        a[19], a[20] = self._value_copy      # host values staged for this batch, if any
        self._value_copy = (0, 0)
        if found is not None:                # the found edges' values: v, o (new), p (old)
            for f, (val, (new, prev)) in enumerate(zip(values, found)):
                a[26 + f] = val
                a[33 + f] = new.data.ptr
                a[40 + f] = prev.data.ptr
        if cap != SMALL_ENTRIES:
            prepare.again(-(-entries // GRID_CHUNK), GRID_CHUNK)
        else:
            prepare.again(1, PREPARE_THREADS)
        if not mapped:
            stream = cupy.cuda.get_current_stream()
            cupy.cuda.runtime.memcpyAsync(self.headers[slot].ctypes.data, wp, READ_WORDS * 8,
                                          cupy.cuda.runtime.memcpyDeviceToHost, stream.ptr)
            self.events[slot].record(stream)
        a = merge.args
        a[0] = wp
        for f, (val, out) in enumerate(zip(values, outs)):
            a[16 + f] = val
            a[16 + MAX_FIELDS - 1 + f] = out.data.ptr
        merge.again(min(entries, self.grid), REWRITE_THREADS)

    def _kernels(self, dtype, found, cap: int):
        """The prepared launches (prepare, merge) of a batch of ids of ``dtype``, an insert
        (``found`` None) or an upsert, of workspace capacity ``cap``."""
        kind = f"<{_ID_TYPES[dtype]}, {'false' if found is None else 'true'}>"
        if cap != SMALL_ENTRIES:
            return (self._launch("grid_prepare" + kind, PREPARE_ARGS + 1, cu=_GRID_CU,
                                 names=_GRID_NAMES),
                    self._launch("small_merge", 30, key="small_merge/grid"))
        return self._launch("small_prepare" + kind, PREPARE_ARGS), self._launch("small_merge", 30)

    def _fill_buffers(self, prepare, merge, held, cap: int = SMALL_ENTRIES) -> None:
        """Write the words that stay between batches into the two launches' buffers (of
        batches of workspace capacity ``cap``)."""
        degree, size_class, edge_ptr, cache, lookup, mirror, min_class, fields = held
        table = (degree.data.ptr, size_class.data.ptr, edge_ptr.data.ptr)
        ring = (cache.rings.data.ptr, cache.state.data.ptr, cache.ring_slots)
        prepare.args[:] = [
            0, 0, 0, int(mirror), MODE_INSERT, *table, degree.shape[0], min_class,
            COPY_MAX_CLASS, 0, 0, self.stall.data.ptr, ring[1], self.limits.data.ptr,
            ring[2], 0, 0, 0, 0] + [0] * (PREPARE_ARGS - 21) + \
            [cap] * (prepare.args.shape[0] - PREPARE_ARGS)     # (grid_prepare: capacity)
        nf, sizes, _, _ = field_words(fields, [], [])
        prepare.args[21:26] = [lookup.dev_bases.data.ptr, lookup.dev_field_bases.data.ptr,
                               lookup.bases.shape[0], nf, sizes]
        merge.args[:] = [
            0, cap, 0, *ring, DEFERRED_ACCEPT, 0, *table, lookup.dev_bases.data.ptr,
            lookup.dev_field_bases.data.ptr, lookup.bases.shape[0], nf,
            sizes] + [0] * (2 * (MAX_FIELDS - 1))
        self._fills[cap] = (held, prepare, merge)

    def ready(self, slot: int) -> bool:
        if self._headers_device:
            return int(self.headers[slot, READ_WORDS]) == self.tickets[slot]
        return self.events[slot].done

    def header(self, slot: int) -> list:
        """The header of the batch in ``slot`` (Python ints), once it has come (waits)."""
        if self._headers_device:
            row, ticket, spins = self.headers[slot], self.tickets[slot], 0
            while int(row[READ_WORDS]) != ticket:
                spins += 1
                if spins > 64:
                    time.sleep(0)
            return row[:READ_WORDS].tolist()
        self.events[slot].synchronize()
        return self.headers[slot, :READ_WORDS].tolist()

    def spilled(self, slot: int, count: int, cap: int = SMALL_ENTRIES, grid: int = -1):
        """The old blocks the batch in ``slot`` (of workspace capacity ``cap``: a grid
        batch's in grid slot ``grid``) put on its spill list (int64 device view)."""
        if cap != SMALL_ENTRIES:
            return self.grid_workspaces[grid][GRID_SPILL_OFFSET:GRID_SPILL_OFFSET + int(count)]
        return self.workspaces[slot][SPILL_OFFSET:SPILL_OFFSET + int(count)]
