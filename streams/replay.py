"""The replay engine: feed a recorded edge stream into a hornet graph, batch by batch, keep the
chosen analytics current, and report results and throughput.

    from streams.replay import replay
    res = replay("stream.arrow", batch_size=1000, window=5000, directed=False,
                 algos=("tc", "bfs"), verify=True)
    res.table              # pyarrow.Table, one row per batch
    res.summary            # dict: events, batches, self_loops, edges, analytics, throughput...
    res.write_report("report.csv")

Semantics:

* Batches: the stream's ``batch`` column (runs of equal ids) if it has one, else
  ``batch_size`` events per batch in file order (or ``batch_time`` time windows); the last
  batch may be partial.
* Event indices count every row of the stream, self-loops included. Self-loops are dropped
  (never inserted) and counted (``self_loops``).
* Insert-only streams only insert. Streams with an ``op`` column insert (+1) and delete (-1) as
  recorded; inside one batch the events of an edge are applied in file order, so the edge's
  *last* event in the batch decides whether it is present after the batch (an insert followed by
  a delete of the same edge in one batch leaves it absent, and vice versa).
* ``window=W``: after the batch ending at event index ``e`` (exclusive), every edge whose most
  recent event has index ``< e - W`` is deleted. :class:`streams.window.EventWindow` queues the
  events that set an edge's most recent event index, in index order, and finds the expired
  edges among the events that leave the window (work proportional to them, never a scan of the
  graph). Insert-only streams: the window keeps the latest refresh of each edge itself and the
  graph stores no event index, so a windowed batch's graph update is the same as without a
  window (:func:`streams.window_batch.insert_refresh`; with its expiry in one graph call, or
  on the GPU up to a medium batch's size an insert and then the expiry's delete, where no
  analytic is fed during the batch: ``insert_expire``). Streams with an ``op`` column: each
  edge carries its most recent insert event index as the edge property ``last_seen`` of the
  hornet graph (set on insert, refreshed with ``update_edges`` when the edge re-occurs), which
  the window looks up for the leaving events. A windowed batch's graph calls run inside
  ``Graph.steady_churn``: expiry gives back room the next batch takes again, so memory is given
  back in a wider band, and lists that expiry shrinks keep their blocks for the next inserts.
* Undirected replays (``directed=False``): (u, v) and (v, u) are the same edge, and an event of
  either refreshes it.
* The graph's id space covers every id seen so far (self-loop ids included).
* Weighted streams: an edge's ``weight`` is that of its most recent insert event.
* ``map_ids=True`` (``hornet replay --map-ids``): the stream's ids are taken as users have
  them (64-bit integers, strings) and a :class:`hornet.VertexMap` gives them dense ids in
  order of first appearance, event by event (``src`` before ``dst``); the analytics run on
  the dense ids and the report names vertices (the BFS source) by their original ids. A
  given ``bfs_source`` is an original id, mapped before the first event (dense id 0).
* Snapshots: ``from_snapshot`` starts from a graph saved by :meth:`hornet.Graph.save` (or by
  a replay) instead of an empty one; ``snapshot`` writes one after every ``snapshot_every``
  batches and at the end (written to a temporary name, then renamed). A snapshot of a
  replay holds its vertex map and its position (next event, batches, BFS source): a replay
  from it continues the uninterrupted one exactly, window included, reading either the rest
  of the stream or (``resume=True``) the whole stream, whose first events it skips
  (:mod:`streams.checkpoint`). Batch numbers and ``snapshot_every`` count from the
  snapshot's batches on.

Analytics, after every batch (one report column each): triangles, k_max, bfs_reached and
spmv_sum, as :mod:`streams.analytics` defines them.

The table :data:`streams.analytics.ANALYTICS` names each analytic's report column, its static
algorithm from ``hornet.algos`` (recomputed after each batch: :class:`StaticAnalytic`) and its
dynamic algorithm: an object of ``hornet.algos`` built on the graph and fed every
:class:`hornet.EdgeChange` with ``.update(change)`` (:class:`DynamicAnalytic`). Analytics are
dynamic by default; ``dynamic=False`` (``hornet replay --static``) recomputes them instead.
Each analytic's time per batch is reported (column ``<column>_seconds``). An analytic is any
object with ``name``, ``column``, ``kind``, ``start(graph, ctx)`` and ``update(graph,
changes) -> value``; custom analytics can be passed in ``algos`` too.

``verify=True`` checks after every batch (and raises :class:`VerificationError` on the first
mismatch): the graph's invariants (``g.check()``); its edge set (and ``weight`` / ``last_seen``
values; for insert-only streams ``last_seen`` is the window's own record) against
:class:`hornet.testing.ReferenceGraph`, a plain dict model that the stream's events are
applied to one by one (:class:`streams.verify.ReferenceReplay`, with none of the graph's code);
every dynamic analytic against its static algorithm recomputed from scratch on the graph; and
every analytic against its static algorithm run on a SciPy copy of that model.
"""
from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
import os
import sys
import time as _time
from typing import Any, Callable, Iterable

import numpy as np

from hornet.batch.validate import MAX_VERTEX_ID, BatchError
from hornet.core.jit import compile_timer

from . import checkpoint
from .analytics import (ANALYTIC_COLUMNS, ANALYTICS, AnalyticSpec, AnalyticUnavailable,
                        BatchChanges, DynamicAnalytic, ReplayContext, ReplayError,
                        StaticAnalytic, available_analytics, make_analytic, parse_algos,
                        spmv_vector, stream_source, to_host)
from .batch_rows import BatchRows
from .batching import batching_mode, iter_batches
from .format import EventBlock, StreamFormatError
from .reader import open_stream
from .result import REPORT_FORMATS, ReplayResult
from .verify import ReferenceReplay, VerificationError, edge_keys, original_id, verify_batch
from .window import EventWindow
from .weighted_batch import LatestPath, insert_latest
from .window_batch import insert_expire, insert_refresh, last_seen

__all__ = [
    "replay", "ReplayResult", "ReplayError", "VerificationError", "AnalyticUnavailable",
    "ANALYTICS", "ANALYTIC_COLUMNS", "AnalyticSpec", "DEFAULT_BATCH_SIZE", "StaticAnalytic",
    "DynamicAnalytic",
    "BatchChanges", "ReplayContext", "available_analytics", "make_analytic",
    "parse_algos", "REPORT_FORMATS", "spmv_vector",
]

DEFAULT_BATCH_SIZE = 5000
GROWTH_SLOTS = 1 << 16   # least slots of a block array an insert-only replay's graph adds
#: a replay without a window reserves the graph's room for the stream's first block of events
#: before its first batch (``Graph.reserve``; False: the graph grows batch by batch)
RESERVE = True
#: ... and then makes ready what its first deferred batch would make (``Graph.defer_inserts
#: (ready=True)`` again: the block cache's steps the reserve left due, the rings' limits)
PRIME = True
#: least slots of a block array that a windowed GPU replay's graph adds, for batches of at
#: most WINDOW_GROWTH_BATCH events (``Graph.set_array_growth``; 0: geometric growth alone).
#: Under a window's churn of small batches a graph grown from small arrays keeps emptying and
#: adding arrays of its small classes, each change a rebuild of the device's allocation
#: tables; 2^17 slots (twice the insert-only floor) keeps the arrays of such a graph's small
#: classes from emptying under the window's churn (steady churn leaves one growth array's
#: room of a class uncompacted: hornet.memory.manager.STEADY_GROWTH_ROOM; 2^16 and 2^19 were
#: slower, 2^18 about as fast: bench/results/window_growth_room_gpu_ab.md); with batches of 10^5
#: events the floor costs more than it saves (compaction keeps repacking the arrays it adds;
#: bench/tools/window_ab_gpu.py)
WINDOW_GROWTH_SLOTS = 1 << 17
WINDOW_GROWTH_BATCH = 1 << 15


# ---------------------------------------------------------------------------------------------
# the engine


def _check_params(batch_size, window, batch_time, device, bfs_source, max_events,
                  map_ids=False):
    if batch_size is not None:
        if isinstance(batch_size, bool) or int(batch_size) != batch_size or batch_size < 1:
            raise ReplayError(f"batch size must be a positive integer, got {batch_size!r}")
    if window is not None:
        if isinstance(window, bool) or int(window) != window or window < 0:
            raise ReplayError(f"window must be a non-negative integer (events), got {window!r}")
    if batch_time is not None and not (float(batch_time) > 0 and math.isfinite(batch_time)):
        raise ReplayError(f"batch time must be a positive number, got {batch_time!r}")
    if device not in ("cpu", "gpu", "auto"):
        raise ReplayError(f"device must be 'cpu', 'gpu' or 'auto', got {device!r}")
    if bfs_source is not None and not map_ids and (
            not isinstance(bfs_source, (int, np.integer)) or bfs_source < 0):
        raise ReplayError(f"bfs source must be a vertex id >= 0, got {bfs_source!r} (ids "
                          "as users have them need map_ids / --map-ids)")
    if max_events is not None and (int(max_events) != max_events or max_events < 0):
        raise ReplayError(f"max_events must be >= 0, got {max_events!r}")


def _in_file(path: str, e: Exception) -> str:
    """``e``'s message, starting with the input file's name."""
    msg = str(e)
    return msg if msg.startswith(f"{path}:") else f"{path}: {msg}"


def _named_errors(batches, path: str):
    """``batches``, with a StreamFormatError raised while reading them naming ``path``."""
    it = iter(batches)
    while True:
        try:
            b = next(it)
        except StopIteration:
            return
        except StreamFormatError as e:
            raise StreamFormatError(_in_file(path, e)) from None
        yield b


def _limited(blocks: Iterable[EventBlock], max_events: int | None):
    if max_events is None:
        yield from blocks
        return
    for blk in blocks:
        if blk.start >= max_events:
            break
        if blk.stop > max_events:
            yield blk.slice(0, max_events - blk.start)
            break
        yield blk


def replay(stream: Any = None, batch_size: int | None = DEFAULT_BATCH_SIZE,
           window: int | None = None, directed: bool = True, algos: Any = None,
           device: str = "auto", verify: bool = False, progress: bool = False, *,
           batch_time: float | None = None, use_batch_column: bool = True,
           bfs_source: int | None = None, dynamic: bool = True,
           text_format: str | None = None, max_events: int | None = None,
           strict_algos: bool | None = None, warmup: bool = True,
           on_batch: Callable[[dict], None] | None = None, map_ids: bool = False,
           from_snapshot: str | os.PathLike | None = None,
           snapshot: str | os.PathLike | None = None,
           snapshot_every: int | None = None, resume: bool = False) -> ReplayResult:
    """Replay an edge stream into a hornet graph; see the module docstring for the semantics.

    Args:
        stream: a path (Arrow IPC file/stream, Parquet, or any text format of shared/data), a
            ``pyarrow.Table``/dict of arrays in the stream schema, a :class:`StreamReader`, or
            None for the shipped default stream (SNAP CollegeMsg).
        batch_size: events per batch (ignored when the stream has a batch column, unless
            ``use_batch_column=False``).
        window: sliding window in events, or None (no expiry).
        directed: replay into a directed graph (default) or an undirected one.
        algos: analytic names (``"tc,ktruss,bfs,spmv"`` or a sequence; analytic objects are
            accepted too); None: every analytic this build has (missing ones are skipped and
            listed in ``summary["unavailable"]``).
        device: ``"cpu"``, ``"gpu"`` or ``"auto"``.
        verify: check the graph and every analytic after each batch (slow; see above).
        progress: show a tqdm progress bar on stderr.
        batch_time: cut batches by time windows of this length (needs a time column).
        use_batch_column: honour the stream's batch column (default).
        bfs_source: BFS source vertex (default: the first event's source).
        dynamic: keep analytics current with their dynamic algorithms (default); False
            recomputes each one from scratch after every batch.
        text_format: force the text format of a text input.
        max_events: replay only the first ``max_events`` rows.
        strict_algos: raise AnalyticUnavailable for a missing analytic (default: True when
            ``algos`` names them, False when ``algos`` is None).
        warmup: before the timed loop, run the code paths this stream takes once on a
            scratch graph, so that loading or compiling the kernels is not counted as update
            or analytics time (it is still in ``total_seconds``, and reported as
            ``warmup_seconds``). Kernels compiled inside the timed loop (Numba, CUDA) are
            timed apart and left out of the batches' times too (``compile_seconds`` counts
            every compile of the replay, warm-up included).
        on_batch: called with each report row (a dict) as it is produced.
        map_ids: map the stream's ids (64-bit integers, strings) to dense ids with a
            :class:`hornet.VertexMap`; the report names vertices by their original ids.
        from_snapshot: start from the graph in this snapshot file (``.arrow``/``.parquet``)
            instead of an empty graph; its directedness must match ``directed``. When a
            replay wrote it, the stream's events are numbered from the snapshot's position
            on (the stream continues the snapshot's) and the BFS source is the snapshot's.
        snapshot: write the graph (its vertex map, and the replay's position) to this
            ``.arrow``/``.parquet`` file at the end, and after every ``snapshot_every``
            batches when that is given.
        resume: the stream is the one the ``from_snapshot`` replay read: skip the events
            the snapshot holds, and continue (same settings give the uninterrupted replay's
            graph and analytics).

    Raises:
        FileNotFoundError, StreamFormatError, hornet.io.EdgeFileError: unreadable stream.
        ReplayError: bad parameters or ids; AnalyticUnavailable.
        VerificationError: ``verify=True`` found a mismatch.
    """
    t_wall = _time.perf_counter()
    _check_params(batch_size, window, batch_time, device, bfs_source, max_events, map_ids)
    checkpoint.check_params(from_snapshot, snapshot, snapshot_every, resume)
    names = parse_algos(algos)
    strict = (algos is not None) if strict_algos is None else strict_algos
    analytics, unavailable = [], {}
    for a in names:
        if not isinstance(a, str):
            analytics.append(a)
            continue
        try:
            analytics.append(make_analytic(a, dynamic=dynamic))
        except AnalyticUnavailable as e:
            if strict:
                raise AnalyticUnavailable(f"analytic {a!r} unavailable: {e}") from None
            unavailable[a] = str(e)

    description = None
    if stream is None:
        from . import default_stream_path
        stream = default_stream_path()
        description = "shipped default: SNAP CollegeMsg"
    reader = open_stream(stream, text_format=text_format)
    with reader, contextlib.ExitStack() as stack:
        cols = reader.columns
        try:
            mode = batching_mode(cols, batch_size=batch_size, batch_time=batch_time,
                                 use_batch_column=use_batch_column)
        except StreamFormatError as e:
            raise StreamFormatError(_in_file(reader.path, e)) from None
        if mode == "count" and batch_size is None:
            raise ReplayError("give a batch size (the stream has no batch column)")
        weighted = cols.weight
        import hornet
        eprops = {}
        if weighted:
            eprops["weight"] = np.float64
        if window is not None and cols.op:
            eprops["last_seen"] = np.int64
        position = None
        try:
            if from_snapshot is None:
                g, vmap = hornet.Graph(directed=directed, device=device,
                                       edge_properties=eprops), None
            else:
                g, vmap, position, seen = checkpoint.start(hornet, from_snapshot, directed,
                                                           device, eprops, window, resume)
        except (RuntimeError, NotImplementedError) as e:
            raise ReplayError(f"device {device!r}: {e}") from None
        if not cols.op and window is None:      # a graph that only grows
            g.set_array_growth(GROWTH_SLOTS)
        elif window is not None and WINDOW_GROWTH_SLOTS and g.device == "gpu" and \
                batch_size is not None and batch_size <= WINDOW_GROWTH_BATCH:
            g.set_array_growth(WINDOW_GROWTH_SLOTS)
        # (GPU: hornet.batch.deferred_path; its first batch's reserves made before the clock,
        # and what batches of the stream's size make on first use)
        g.defer_inserts(ready=True, batch_entries=batch_size * (1 if directed else 2)
                        if mode == "count" and batch_size else 0)
        if position is None:
            position = checkpoint.ReplayPosition()
        elif bfs_source is None and position.bfs_source is not None:
            bfs_source = position.bfs_source if vmap is None else \
                original_id(vmap, position.bfs_source)
        start_event, start_batch = position.next_event, position.batches
        position.window, position.stream = window, os.path.basename(reader.path)
        if cols.ids == "str" and not map_ids and vmap is None:
            raise ReplayError(f"{reader.path}: the stream's vertex ids are strings; replay "
                              "it with --map-ids (map_ids=True)")
        if vmap is None and map_ids:
            vmap = hornet.VertexMap(cols.ids)      # the stream's id type: int, uint or str
        reader.mapped_ids = vmap is not None       # any 64-bit id is an id of the map
        if vmap is not None and bfs_source is not None:
            bfs_source = int(vmap.to_dense([stream_source(bfs_source, cols.ids)])[0])
        ctx = ReplayContext(directed=bool(directed),
                            bfs_source=None if bfs_source is None else int(bfs_source),
                            weight="weight" if weighted else None)
        compiling = stack.enter_context(compile_timer())
        t_warm = _time.perf_counter()
        if warmup:
            _warm_up(hornet, directed, device, eprops, window, analytics, ctx, cols.op)
        t_warm = _time.perf_counter() - t_warm
        warmup_compile = compiling.seconds
        for an in analytics:
            an.start(g, ctx)
        expiry = EventWindow(window) if window is not None else None
        latest = LatestPath()        # (weighted batches on a GPU graph: see insert_latest)
        if expiry is not None and from_snapshot is not None:
            checkpoint.restore_window(seen, expiry, insert_only=not cols.op)
        ref = ReferenceReplay(bool(directed), weighted, window is not None) if verify else None
        if ref is not None and from_snapshot is not None:
            ref.seed(g, None if expiry is None else seen)

        out: dict[str, list] = {k: [] for k in
                                ("batch", "first_event", "events", "self_loops", "inserted",
                                 "deleted", "expired", "edges", "vertices", "seconds",
                                 "analytics_seconds")}
        if mode != "count":
            out["batch_id"] = []
        if cols.time:
            out["time_last"] = []
        for an in analytics:
            out[an.column] = []
            out[an.column + "_seconds"] = []
        totals = dict(events=0, self_loops=0, inserted=0, deleted=0, expired=0)
        rows = BatchRows(out, totals, g, lazy=not analytics and ref is None and
                         snapshot is None and on_batch is None)
        t_update = t_analytics = 0.0
        t_each = {an.column: 0.0 for an in analytics}
        bar = None
        if progress:
            from tqdm import tqdm
            total = reader.num_rows if max_events is None else (
                min(max_events, reader.num_rows) if reader.num_rows is not None else max_events)
            bar = tqdm(total=total, unit="ev", unit_scale=True, file=sys.stderr,
                       desc="replay", leave=False)
        try:
            blocks = _limited(reader.blocks(), max_events)
            if RESERVE and from_snapshot is None and vmap is None and window is None:
                blocks = _reserved(g, blocks, reader.path)
            blocks = checkpoint.skip_events(blocks, start_event) if resume else \
                checkpoint.shift_events(blocks, start_event)
            batches = iter_batches(blocks, batch_size=batch_size, batch_time=batch_time,
                                   use_batch_column=use_batch_column, columns=cols,
                                   t0=position.t0 if start_event else None)
            for b in _named_errors(batches, reader.path):
                b = dataclasses.replace(b, index=b.index + start_batch)
                ev = b.events
                if mode == "time" and position.t0 is None:
                    position.t0 = ev.time[0].item()
                if vmap is not None:
                    ev = _dense_events(ev, vmap, reader.path)
                if ctx.bfs_source is None:
                    ctx.bfs_source = int(ev.src[0])
                seconds = {an.column + "_seconds": 0.0 for an in analytics}
                c0 = compiling.seconds
                t0 = _time.perf_counter()
                try:
                    changes, loops = _apply_batch(g, ev, directed, expiry, weighted,
                                                  reader.path,
                                                  _feeder(analytics, seconds, compiling),
                                                  latest)
                except BatchError as e:     # what the stream checks did not catch
                    raise ReplayError(f"{reader.path}: batch {b.index} (events {ev.start} to "
                                      f"{ev.stop - 1}): {e}") from None
                t1 = _time.perf_counter()
                c1 = compiling.seconds
                fed = sum(seconds.values())
                values = {}
                for an in analytics:
                    ca = compiling.seconds
                    ta = _time.perf_counter()
                    values[an.column] = an.update(g, changes)
                    seconds[an.column + "_seconds"] += (_time.perf_counter() - ta
                                                        - (compiling.seconds - ca))
                    t_each[an.column] += seconds[an.column + "_seconds"]
                t2 = _time.perf_counter()
                c2 = compiling.seconds
                # one-time compiles are no batch's work; the dynamic updates fed during the
                # graph calls count as analytics time (their own compiles left out already)
                t2 -= c2 - c0
                t1 -= (c1 - c0) + fed
                t2 = max(t2, t1)
                if ref is not None:
                    ref.apply(ev)
                    if window is not None:
                        ref.expire(ev.stop - window)
                    verify_batch(g, ref, analytics, values, ctx, b.index, expiry, vmap)
                row = {"batch": b.index, "first_event": ev.start, "events": len(ev),
                       "self_loops": loops, "vertices": int(g.num_vertices),
                       "seconds": t1 - t0, "analytics_seconds": t2 - t1}
                if "batch_id" in out:
                    row["batch_id"] = b.label
                if "time_last" in out:
                    row["time_last"] = ev.time[-1].item()
                row.update(values)
                row.update(seconds)
                rows.add(row, changes)
                totals["events"] += len(ev)
                totals["self_loops"] += loops
                t_update += t1 - t0
                t_analytics += t2 - t1
                if bar is not None:
                    bar.update(len(ev))
                if on_batch is not None:
                    on_batch(row)
                position.next_event, position.batches = ev.stop, b.index + 1
                position.bfs_source = ctx.bfs_source
                if snapshot is not None and snapshot_every and \
                        position.batches % snapshot_every == 0:
                    checkpoint.write(g, snapshot, vmap, position, expiry)
            rows.close()
            t_update += rows.seconds     # reading the counts back may wait for the device
            if snapshot is not None and not (snapshot_every and out["batch"] and
                                             position.batches % snapshot_every == 0):
                checkpoint.write(g, snapshot, vmap, position, expiry)
        finally:
            if bar is not None:
                bar.close()
    total = _time.perf_counter() - t_wall
    if "batch_id" in out and all(v is None for v in out["batch_id"]):
        del out["batch_id"]
    summary = {
        "stream": reader.path,
        "stream_name": os.path.basename(reader.path),
        "description": description,
        "container": reader.container,
        "directed": bool(directed),
        "device": g.device,
        "batching": mode,
        "batch_size": batch_size if mode == "count" else None,
        "batch_time": batch_time if mode == "time" else None,
        "window": window,
        "algos": [an.name for an in analytics],
        "analytics_kind": {an.name: an.kind for an in analytics},
        "unavailable": unavailable,
        "bfs_source": original_id(vmap, ctx.bfs_source)
        if any(an.name == "bfs" for an in analytics) else None,
        "vertex_map": None if vmap is None else {"kind": vmap.kind, "ids": len(vmap)},
        "from_snapshot": None if from_snapshot is None else os.fspath(from_snapshot),
        "first_event": start_event,
        "first_batch": start_batch,
        "snapshot": None if snapshot is None else os.fspath(snapshot),
        "batches": len(out["batch"]),
        **totals,
        "edges": int(g.num_edges),
        "vertices": int(g.num_vertices),
        "analytics": {an.column: out[an.column][-1] for an in analytics if out[an.column]},
        "update_seconds": t_update,
        "analytics_seconds": t_analytics,
        "analytic_seconds": t_each,
        "warmup_seconds": t_warm,
        "compile_seconds": compiling.seconds,
        "one_time_seconds": t_warm + compiling.seconds - warmup_compile,
        "total_seconds": total,
        "events_per_second": totals["events"] / t_update if t_update > 0 else 0.0,
        "events_per_second_total": totals["events"] / total if total > 0 else 0.0,
        "verified": bool(verify),
    }
    return ReplayResult(out, summary)


def _reserved(g, blocks, path: str):
    """``blocks`` (EventBlocks), once the graph has reserved room for what the first of them
    holds (``Graph.reserve``: its ids, as many edges as its events): the stream's size known
    ahead (a file is read a large block at a time), so that the first batches of a replay
    without a window (a graph that grows with the stream) do not stop to grow the graph's
    memory."""
    blocks = iter(blocks)
    try:
        first = next(blocks, None)
    except StreamFormatError as e:
        raise StreamFormatError(_in_file(path, e)) from None
    if first is None:
        return blocks
    if len(first):
        hi = int(max(first.src.max(), first.dst.max()))
        if 0 <= hi <= MAX_VERTEX_ID:
            g.reserve(num_vertices=hi + 1, num_edges=len(first))
            if PRIME:
                g.defer_inserts(ready=True)      # (what the reserve left to the first batch)
            if g.device == "gpu":                # (its kernels done before the clock starts)
                g._xp.cuda.get_current_stream().synchronize()
    return itertools.chain([first], blocks)


def _dense_events(ev: EventBlock, vmap, path: str) -> EventBlock:
    """``ev`` with its ids replaced by dense ids (new ids numbered in event order, src before
    dst)."""
    import dataclasses
    pairs = np.empty(2 * len(ev), dtype=ev.src.dtype)
    pairs[0::2], pairs[1::2] = ev.src, ev.dst
    try:
        dense = vmap.to_dense(pairs)
    except (TypeError, ValueError) as e:
        raise ReplayError(f"{path}: events {ev.start} to {ev.stop - 1}: {e}") from None
    return dataclasses.replace(ev, src=dense[0::2], dst=dense[1::2])


def _warm_up(hornet, directed, device, eprops, window, analytics, ctx, with_op: bool) -> None:
    """Run the batch pipeline (the path of streams with an ``op`` column only if
    ``with_op``) and the analytics once on a scratch graph."""
    try:
        g = hornet.Graph(directed=directed, device=device, edge_properties=eprops)
        g.defer_inserts()
        s, d = np.array([0, 1, 2, 0, 3], np.int64), np.array([1, 2, 0, 1, 3], np.int64)
        w = np.ones(5) if "weight" in eprops else None
        win = None if window is None else EventWindow(1)
        sctx = ReplayContext(ctx.directed, 0, ctx.weight)
        dyn = [make_analytic(an.name) for an in analytics if isinstance(an, DynamicAnalytic)]
        for an in dyn:
            an.start(g, sctx)
            an.update(g, BatchChanges())
        # the general path (streams with an op column: insert, refresh, delete), then the
        # plain one (window expiry on both); the dynamic analytics see them all. A path the
        # stream never takes is not warmed: its kernels would be compiled for nothing.
        # the plain path twice: a first insertion, then one that outgrows vertex 0's block
        # (its list moves to a larger block and the old block is given back), as a stream's
        # second batch does to the lists of its first
        grow_d = np.arange(4, 36, dtype=np.int64)
        grow_w = None if w is None else np.ones(grow_d.shape[0])
        blocks = [EventBlock(5, s, d, None, w),
                  EventBlock(10, np.zeros_like(grow_d), grow_d, None, grow_w)]
        if with_op:
            blocks.insert(0, EventBlock(0, s, d, np.array([1, 1, 1, 1, -1], np.int8), w))
        latest = LatestPath()         # (the insert, then the upsert once a repeat is met)
        for ev in blocks:
            changes, _ = _apply_batch(g, ev, directed, win, "weight" in eprops, "",
                                      _feeder(dyn, {an.column + "_seconds": 0.0 for an in dyn},
                                              None), latest)
            for an in dyn:
                an.update(g, changes)
        for an in analytics:
            if isinstance(an, StaticAnalytic):
                an.compute(g, sctx)
    except Exception:
        pass  # warming up is best effort; the real run reports any problem


def _feeder(analytics, seconds: dict, compiling) -> Callable:
    """``feed(change)``: hand a change to every analytic that takes changes as they happen
    (:meth:`DynamicAnalytic.feed`), timing each into ``seconds[column + "_seconds"]``, less
    the compiling that ``compiling`` (a :class:`hornet.core.jit.CompileTimer`, or None) saw."""
    takers = [an for an in analytics if callable(getattr(an, "feed", None))]
    if not takers:                          # (a batch path may then order its calls freely)
        return _ignore

    def feed(change) -> None:
        for an in takers:
            c = compiling.seconds if compiling is not None else 0.0
            t = _time.perf_counter()
            an.feed(change)
            spent = _time.perf_counter() - t
            if compiling is not None:
                spent -= compiling.seconds - c
            seconds[an.column + "_seconds"] += spent
    return feed


def _ignore(change) -> None:
    pass


def _apply_batch(g, ev: EventBlock, directed: bool, window: EventWindow | None,
                 weighted: bool, path: str, feed: Callable = _ignore,
                 latest: LatestPath | None = None):
    """Apply one batch to the graph, and the window's expiry after it, calling ``feed`` with
    each EdgeChange right after the graph call that made it; returns (BatchChanges, self-loops
    dropped)."""
    s, d = ev.src, ev.dst
    loop = s == d
    loops = int(np.count_nonzero(loop))
    if not loops and directed and ev.op is None and not weighted and window is None:
        # a plain insert of the batch as it is: the graph checks its ids (a refused batch
        # changes nothing), the replay words the refusal of an id past the id space
        try:
            return _changes(g, s, d, None, None, None, ev, window, weighted, feed,
                            latest), 0
        except BatchError:
            _check_id_space(s, d, ev, path)
            raise
    hi = _check_id_space(s, d, ev, path)
    if weighted:
        nan = np.isnan(ev.weight)
        if nan.any():
            used = ~loop if ev.op is None else ~loop & (ev.op > 0)     # weights that get stored
            bad = nan & used
            if bad.any():
                i = int(np.argmax(bad))
                raise ReplayError(f"{path}: event {ev.start + i}: weight is NaN or missing")
    # (a batch without self-loops, op or window inserts all its pairs: that grows the id space)
    if hi >= g.num_vertices and (loops or ev.op is not None or window is not None):
        g.insert_vertices(np.array([hi], dtype=np.int64))
    idx = None
    op, w = ev.op, ev.weight
    if loops:
        keep = ~loop
        s, d = s[keep], d[keep]
        if op is not None or window is not None:         # (the event indices they use)
            idx = ev.start + np.flatnonzero(keep)
        op = None if op is None else op[keep]
        w = None if w is None else w[keep]
    if not directed:
        s, d = np.minimum(s, d), np.maximum(s, d)
    if window is None:
        return _changes(g, s, d, idx, op, w, ev, window, weighted, feed, latest), loops
    # a full window expires about as many edges as a batch brings: the graph keeps the room
    # that expiry gives back for the next batch (Graph.steady_churn)
    with g.steady_churn():
        return _changes(g, s, d, idx, op, w, ev, window, weighted, feed, latest), loops


def _check_id_space(s, d, ev: EventBlock, path: str) -> int:
    """The batch's largest vertex id; ReplayError naming the first event whose id is past
    hornet's id space."""
    hi = int(max(s.max(), d.max()))
    if hi > MAX_VERTEX_ID:
        i = int(np.argmax((s > MAX_VERTEX_ID) | (d > MAX_VERTEX_ID)))
        raise ReplayError(f"{path}: event {ev.start + i}: vertex id {hi} is beyond hornet's "
                          f"int32 id space (max {MAX_VERTEX_ID}); replay with --map-ids "
                          "(map_ids=True) to map such ids to dense ones")
    return hi


def _changes(g, s, d, idx, op, w, ev: EventBlock, window: EventWindow | None,
             weighted: bool, feed: Callable, latest: LatestPath | None = None) -> BatchChanges:
    """The graph calls of one batch (self-loops dropped: ``s``, ``d``, and ``idx`` their
    event indices, or None when the batch had no self-loop or has neither an ``op`` column
    nor a window, which use them; ``op``, ``w`` aligned), the window's expiry after them;
    returns the BatchChanges."""
    n = len(ev)
    ch = BatchChanges()
    if op is None and not weighted and window is None:
        # plain insert-only stream: the graph drops repeats and existing edges itself
        if s.size:
            ch.inserted = g.insert_edges(s, d)
            feed(ch.inserted)
    elif op is None and window is None and s.size:
        insert_latest(g, ch, s, d, w, feed, update_first=feed is _ignore and g.device == "gpu",
                      path=latest)
    elif op is None and window is not None and s.size:
        if idx is None:
            idx = np.arange(ev.start, ev.start + n, dtype=np.int64)
        wb = w if weighted else None      # the batch and its expiry in one call where it can
        if feed is _ignore and insert_expire(g, ch, s, d, idx, wb, window, ev.stop):
            return ch                     # (the window's expiry included)
        insert_refresh(g, ch, s, d, idx, wb, window, feed)
    elif s.size:
        if idx is None:
            idx = np.arange(ev.start, ev.start + n, dtype=np.int64)
        key = edge_keys(s, d)
        m = key.shape[0]
        # last event of every distinct edge of the batch (unique on the reversed batch)
        _, first_rev = np.unique(key[::-1], return_index=True)
        last = (m - 1) - first_rev
        a, b = s[last], d[last]
        props = {}
        if weighted:
            props["weight"] = w[last]
        if window is not None:
            props["last_seen"] = idx[last]
        ins = np.ones(last.shape[0], bool) if op is None else op[last] > 0
        if ins.any():
            a_in, b_in = a[ins], b[ins]
            pa_ = {k: v[ins] for k, v in props.items()}
            ch.inserted = g.insert_edges(a_in, b_in, **pa_)
            feed(ch.inserted)
            if props and len(ch.inserted) < a_in.shape[0]:
                # the edges that were present already: refresh their last_seen / weight
                new = np.isin(edge_keys(a_in, b_in),
                              edge_keys(to_host(ch.inserted.src), to_host(ch.inserted.dst)))
                ch.updated = g.update_edges(a_in[~new], b_in[~new],
                                            **{k: v[~new] for k, v in pa_.items()})
                feed(ch.updated)
            if window is not None:
                window.record(a_in, b_in, idx[last][ins])
        if not ins.all():
            ch.deleted = g.delete_edges(a[~ins], b[~ins])
            feed(ch.deleted)
    if window is not None:
        es, ed = window.expired(ev.stop, lambda s_, d_: last_seen(g, s_, d_))
        if es.size:
            ch.expired = g.delete_edges(es, ed)
            feed(ch.expired)
    return ch
