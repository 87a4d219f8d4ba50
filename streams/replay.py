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
  window (:func:`streams.window_batch.insert_refresh`; with its expiry in one graph call where
  no analytic is fed during the batch: ``insert_expire``). Streams with an ``op`` column: each
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
applied to one by one (:class:`_ReferenceReplay`, with none of the graph's code);
every dynamic analytic against its static algorithm recomputed from scratch on the graph; and
every analytic against its static algorithm run on a SciPy copy of that model.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import sys
import time as _time
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np
import pyarrow as pa

from hornet import algos
from hornet.batch.validate import MAX_VERTEX_ID, BatchError
from hornet.core.jit import compile_timer
from hornet.testing.reference import ReferenceGraph

from . import checkpoint
from .analytics import (ANALYTIC_COLUMNS, ANALYTICS, AnalyticSpec, AnalyticUnavailable,
                        BatchChanges, DynamicAnalytic, ReplayContext, ReplayError,
                        StaticAnalytic, available_analytics, make_analytic, parse_algos,
                        spmv_vector, stream_source, to_host)
from .batch_rows import BatchRows
from .batching import batching_mode, iter_batches
from .format import EventBlock, StreamFormatError
from .reader import open_stream
from .window import EventWindow
from .weighted_batch import insert_latest
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
REPORT_FORMATS = (".csv", ".json", ".arrow")


class VerificationError(RuntimeError):
    """``verify=True`` found the graph or an analytic disagreeing with the reference."""


# ---------------------------------------------------------------------------------------------
# the reference (verify=True)


def _keys(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.astype(np.int64) << 32) | b.astype(np.int64)


class _ReferenceReplay:
    """The replay's semantics applied event by event to a
    :class:`hornet.testing.ReferenceGraph` (edge properties ``weight`` when the stream is
    weighted, ``last_seen`` when the replay has a window): self-loops skipped, an insert
    refreshes a present edge's properties, a delete removes it, the window expires edges by
    their ``last_seen``."""

    def __init__(self, directed: bool, weighted: bool, window: bool):
        props = {}
        if weighted:
            props["weight"] = np.float64
        if window:
            props["last_seen"] = np.int64
        self.model = ReferenceGraph(directed, props)

    def seed(self, g, seen=None) -> None:
        """Start from the edges (and the properties the model tracks) of graph ``g``;
        ``seen``: (src, dst, last_seen) of every edge where the graph stores no
        ``last_seen`` (the window's own record)."""
        names = list(self.model.edge_properties)
        src, dst, props = g.edges(properties=True, dense=True)
        if seen is not None and "last_seen" in names and "last_seen" not in props:
            order = np.lexsort((seen[1], seen[0]))
            keys = _keys(seen[0][order], seen[1][order])
            at = np.searchsorted(keys, _keys(to_host(src), to_host(dst)))
            props = dict(props, last_seen=seen[2][order][at])
        values = {k: to_host(props[k]).tolist() for k in names}
        self.model.insert(to_host(src).tolist(), to_host(dst).tolist(), values)
        self.model.num_vertices = max(self.model.num_vertices, int(g.num_vertices))

    def apply(self, ev: EventBlock) -> None:
        """Apply the events of one batch in file order."""
        model = self.model
        model.num_vertices = max(model.num_vertices, int(max(ev.src.max(), ev.dst.max())) + 1)
        names = list(model.edge_properties)
        op = None if ev.op is None else ev.op.tolist()
        weight = None if ev.weight is None else ev.weight.tolist()
        for i, (u, v) in enumerate(zip(ev.src.tolist(), ev.dst.tolist())):
            if u == v:
                continue
            if op is not None and op[i] < 0:
                model.delete([u], [v])
                continue
            values = {}
            if "weight" in names:
                values["weight"] = [weight[i]]
            if "last_seen" in names:
                values["last_seen"] = [ev.start + i]
            if not model.update([u], [v], values):
                model.insert([u], [v], values)

    def expire(self, threshold: int) -> None:
        """Delete the edges whose last event came before event index ``threshold``."""
        stale = [k for k, p in self.model.edges.items() if p["last_seen"] < threshold]
        if stale:
            self.model.delete([u for u, _ in stale], [v for _, v in stale])

    def edges(self):
        """(keys int64 (E,): ``src << 32 | dst`` ascending, properties: name -> (E,) array)."""
        pairs = sorted(self.model.edges)
        src = np.array([u for u, _ in pairs], dtype=np.int64)
        dst = np.array([v for _, v in pairs], dtype=np.int64)
        props = {name: np.array([self.model.edges[k][name] for k in pairs], dtype=dt)
                 for name, dt in self.model.edge_properties.items()}
        return _keys(src, dst), props

    def graph(self, ctx: ReplayContext):
        """The model as an adjacency view of its SciPy matrix (weighted where the stream is)."""
        weight = "weight" if "weight" in self.model.edge_properties else None
        return algos.as_adjacency(self.model.to_scipy(weight), directed=ctx.directed)


def _verify_batch(g, ref: _ReferenceReplay, analytics, values: dict, ctx, batch_no: int,
                  window: EventWindow | None, vmap=None) -> None:
    """Raise :class:`VerificationError` where the graph or an analytic disagrees with the
    reference after batch ``batch_no``; ``window``: the replay's window, whose own record of
    each edge's ``last_seen`` is checked where the graph stores none; ``vmap``: the vertex map
    that names edges in errors by their original ids."""
    where = f"verify: batch {batch_no}"
    try:
        g.check()
    except Exception as e:
        raise VerificationError(f"{where}: graph invariant broken: {e}") from None
    ref_keys, ref_props = ref.edges()
    out = g.edges(properties=True) if ref_props else g.edges()
    gs, gd = to_host(out[0]), to_host(out[1])
    stored = out[2] if ref_props else {}
    gk = _keys(gs, gd)
    if not np.array_equal(gk, ref_keys):
        extra = np.setdiff1d(gk, ref_keys)
        missing = np.setdiff1d(ref_keys, gk)

        def ex(k):
            if k.size == 0:
                return ""
            a, b = k[:3] >> 32, k[:3] & 0xFFFFFFFF
            return " (e.g. " + ", ".join(f"{_original(vmap, int(x))}->{_original(vmap, int(y))}"
                                         for x, y in zip(a, b)) + ")"
        raise VerificationError(
            f"{where}: the graph has {gk.size} edges, the reference {ref_keys.size}: "
            f"{extra.size} extra{ex(extra)}, {missing.size} missing{ex(missing)}")
    if g.num_vertices != ref.model.num_vertices:
        raise VerificationError(f"{where}: graph id space {g.num_vertices}, reference "
                                f"{ref.model.num_vertices}")
    for name, want in ref_props.items():
        if name == "last_seen" and name not in stored:
            found, got = window.latest(gs, gd)
            if not found.all():
                i = int(np.argmin(found))
                raise VerificationError(f"{where}: the window has no event of edge "
                                        f"{int(gs[i])}->{int(gd[i])}")
        else:
            got = to_host(stored[name])
        if not np.array_equal(got, want):
            i = int(np.argmax(got != want))
            raise VerificationError(f"{where}: {name} of edge {_original(vmap, int(gs[i]))}->"
                                    f"{_original(vmap, int(gd[i]))} is "
                                    f"{got[i]}, reference {want[i]}")
    checked = [an for an in analytics if an.name in ANALYTICS]
    if not checked:
        return

    def same(name, got, want) -> bool:
        return (math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9) if name == "spmv"
                else got == want)
    for an in checked:
        if an.kind == "dynamic":
            want = ANALYTICS[an.name].static(g, ctx)
            if not same(an.name, values[an.column], want):
                raise VerificationError(
                    f"{where}: {an.column} = {values[an.column]} (dynamic {an.name}), but "
                    f"the static algorithm recomputed on the graph gives {want}")
    oracle = ref.graph(ctx)
    for an in checked:
        want = ANALYTICS[an.name].static(oracle, ctx)
        got = values[an.column]
        if not same(an.name, got, want):
            raise VerificationError(f"{where}: {an.column} = {got} ({an.kind} {an.name}), "
                                    f"but the static algorithm on the reference gives {want}")


# ---------------------------------------------------------------------------------------------
# result


@dataclass
class ReplayResult:
    """The outcome of :func:`replay`: per-batch rows and a summary.

    ``columns``: report column name -> list of values (one per batch); ``table`` gives them as a
    ``pyarrow.Table``. ``summary``: events, batches, self_loops, inserted, deleted, expired,
    edges (at the end), vertices, analytics (final values by column), update_seconds,
    analytics_seconds, total_seconds, events_per_second (graph updates only),
    events_per_second_total (wall clock, reading and analytics included), and the settings.
    """

    columns: dict
    summary: dict

    @property
    def table(self) -> pa.Table:
        return pa.table({k: pa.array(v, type=_COLUMN_TYPES.get(k)) for k, v in
                         self.columns.items()})

    @property
    def rows(self) -> list[dict]:
        names = list(self.columns)
        return [dict(zip(names, vals)) for vals in zip(*self.columns.values())]

    def __len__(self) -> int:
        return len(self.columns.get("batch", []))

    def __getitem__(self, column: str) -> np.ndarray:
        return np.asarray(self.columns[column])

    @property
    def final(self) -> dict:
        """Final analytic values, by report column."""
        return dict(self.summary.get("analytics", {}))

    def write_report(self, path: str | os.PathLike) -> str:
        """Write the per-batch rows to ``.csv``, ``.json`` (``{"summary": ..., "rows": [...]}``)
        or ``.arrow`` (Arrow IPC file; the summary as JSON in the schema metadata)."""
        p = os.fspath(path)
        ext = os.path.splitext(p)[1].lower()
        if ext not in REPORT_FORMATS:
            raise ReplayError(f"report file {p!r}: use a .csv, .json or .arrow extension")
        if ext == ".csv":
            import pyarrow.csv as pacsv
            pacsv.write_csv(self.table, p)
        elif ext == ".json":
            with open(p, "w") as f:
                json.dump({"summary": _jsonable(self.summary), "rows": _jsonable(self.rows)}, f,
                          indent=1, allow_nan=False)
                f.write("\n")
        else:
            t = self.table
            t = t.replace_schema_metadata({"hornet.replay.summary":
                                           json.dumps(_jsonable(self.summary))})
            with pa.OSFile(p, "wb") as sink, pa.ipc.new_file(sink, t.schema) as w:
                w.write_table(t)
        return p

    def plot(self, path: str | os.PathLike) -> str:
        """Plot edges, the analytics and per-batch throughput against the event index (needs
        matplotlib)."""
        plt = require_matplotlib()
        p = os.fspath(path)
        x = np.asarray(self.columns["first_event"]) + np.asarray(self.columns["events"])
        panels = [("edges", "edges in the graph")]
        panels += [(c, c) for c in ANALYTIC_COLUMNS.values() if c in self.columns]
        panels.append(("throughput", "events/s (updates)"))
        fig, axes = plt.subplots(len(panels), 1, sharex=True,
                                 figsize=(7, 1.8 * len(panels) + 0.8), squeeze=False)
        for ax, (col, label) in zip(axes[:, 0], panels):
            if col == "throughput":
                secs = np.maximum(np.asarray(self.columns["seconds"], dtype=float), 1e-12)
                y = np.asarray(self.columns["events"]) / secs
            else:
                y = np.asarray(self.columns[col], dtype=float)
            ax.plot(x, y, marker="." if len(x) < 200 else None, lw=1)
            ax.set_ylabel(label, fontsize=8)
            ax.grid(alpha=0.3)
        axes[-1, 0].set_xlabel("events replayed")
        s = self.summary
        fig.suptitle(f"{s.get('stream_name', '')}: {s.get('events', 0):,} events, "
                     f"{s.get('batches', 0)} batches"
                     + (f", window {s['window']:,}" if s.get("window") is not None else ""),
                     fontsize=9)
        fig.tight_layout()
        fig.savefig(p, dpi=110)
        plt.close(fig)
        return p

    def summary_text(self) -> str:
        """A short human summary (what ``hornet replay`` prints)."""
        s = self.summary
        lines = [f"hornet replay: {s['stream_name']}"
                 + (f" ({s['description']})" if s.get("description") else "")]
        mode = s["batching"]
        if mode == "count":
            how = f"{s['batch_size']:,} events per batch"
        elif mode == "column":
            how = "batches from the stream's batch column"
        else:
            how = f"time windows of {s.get('batch_time'):g}"
        win = f"sliding window of {s['window']:,} events" if s["window"] is not None \
            else "no window"
        lines.append(f"  graph       {'directed' if s['directed'] else 'undirected'}, "
                     f"device {s['device']}, {how}, {win}")
        lines.append(f"  events      {s['events']:,} in {s['batches']:,} batches; self-loops "
                     f"dropped: {s['self_loops']:,}")
        if s.get("from_snapshot"):
            lines.append(f"  start       snapshot {s['from_snapshot']}"
                         + (f": event {s['first_event']:,}, batch {s['first_batch']:,}"
                            if s.get("first_event") else ""))
        dels = f", deleted {s['deleted']:,}" + (f" (expired {s['expired']:,})"
                                                if s["window"] is not None else "")
        if s.get("vertex_map"):
            lines.append(f"  ids         mapped: {s['vertex_map']['ids']:,} original "
                         f"{'string' if s['vertex_map']['kind'] == 'str' else 'integer'} ids "
                         "-> dense ids")
        lines.append(f"  edges       {s['edges']:,} at end on {s['vertices']:,} vertex ids "
                     f"(inserted {s['inserted']:,}{dels})")
        if s["analytics"]:
            parts = []
            for col, v in s["analytics"].items():
                v = f"{v:,.6g}" if isinstance(v, float) else f"{v:,}"
                if col == "bfs_reached":
                    v += f" (from vertex {s['bfs_source']})"
                parts.append(f"{col} {v}")
            lines.append(f"  at end      {' | '.join(parts)}")
        if s.get("analytic_seconds"):
            batches = max(s["batches"], 1)
            parts = [f"{col} {_duration(sec / batches)} ({s['analytics_kind'].get(name, '?')})"
                     for (col, sec), name in zip(s["analytic_seconds"].items(), s["algos"])]
            lines.append(f"  per batch   {' | '.join(parts)}")
        for name, why in s.get("unavailable", {}).items():
            lines.append(f"  skipped     {name}: {why}")
        once = s.get("one_time_seconds", s.get("warmup_seconds", 0))
        lines.append(f"  throughput  {_rate(s['events_per_second'])} events/s in graph updates "
                     f"({s['update_seconds']:.3f} s); {_rate(s['events_per_second_total'])} "
                     f"events/s overall ({s['total_seconds']:.2f} s incl. reading"
                     + (" and analytics" if s["analytics"] else "")
                     + (f"; {once:.1f} s of it compiling and warming up, left out of the "
                        "per-batch figures" if once >= 0.05 else "") + ")")
        if s.get("verified"):
            lines.append("  verified    every batch: edge set and analytics match the reference")
        return "\n".join(lines)


_COLUMN_TYPES = {"batch": pa.int64(), "first_event": pa.int64(), "events": pa.int64(),
                 "self_loops": pa.int64(), "inserted": pa.int64(), "deleted": pa.int64(),
                 "expired": pa.int64(), "edges": pa.int64(), "vertices": pa.int64(),
                 "seconds": pa.float64(), "analytics_seconds": pa.float64(),
                 "triangles": pa.int64(), "k_max": pa.int64(), "bfs_reached": pa.int64(),
                 "spmv_sum": pa.float64()}


def _duration(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.0f} us"


def _rate(r: float) -> str:
    if r >= 1e6:
        return f"{r / 1e6:.2f}M"
    if r >= 1e3:
        return f"{r / 1e3:.1f}k"
    return f"{r:.0f}"


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def require_matplotlib():
    """``matplotlib.pyplot`` with the Agg backend, or ReplayError saying it is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ReplayError("plotting needs matplotlib, which is not installed: "
                          "pip install hornet-py[plot]") from None
    return plt


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
        # (GPU: hornet.batch.deferred_path; its first batch's reserves made before the clock)
        g.defer_inserts(ready=True)
        if position is None:
            position = checkpoint.ReplayPosition()
        elif bfs_source is None and position.bfs_source is not None:
            bfs_source = position.bfs_source if vmap is None else \
                _original(vmap, position.bfs_source)
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
        if expiry is not None and from_snapshot is not None:
            checkpoint.restore_window(seen, expiry, insert_only=not cols.op)
        ref = _ReferenceReplay(bool(directed), weighted, window is not None) if verify else None
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
                                                  _feeder(analytics, seconds, compiling))
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
                    _verify_batch(g, ref, analytics, values, ctx, b.index, expiry, vmap)
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
        "bfs_source": _original(vmap, ctx.bfs_source)
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


def _original(vmap, v):
    """The original id of dense id ``v`` (``v`` itself without a map)."""
    if vmap is None or v is None or v >= len(vmap):
        return v
    return vmap.to_original(np.array([v])).tolist()[0]


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
        for ev in blocks:
            changes, _ = _apply_batch(g, ev, directed, win, "weight" in eprops, "",
                                      _feeder(dyn, {an.column + "_seconds": 0.0 for an in dyn},
                                              None))
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
                 weighted: bool, path: str, feed: Callable = _ignore):
    """Apply one batch to the graph, and the window's expiry after it, calling ``feed`` with
    each EdgeChange right after the graph call that made it; returns (BatchChanges, self-loops
    dropped)."""
    s, d = ev.src, ev.dst
    hi = int(max(s.max(), d.max()))
    if hi > MAX_VERTEX_ID:
        i = int(np.argmax((s > MAX_VERTEX_ID) | (d > MAX_VERTEX_ID)))
        raise ReplayError(f"{path}: event {ev.start + i}: vertex id {hi} is beyond hornet's "
                          f"int32 id space (max {MAX_VERTEX_ID}); replay with --map-ids "
                          "(map_ids=True) to map such ids to dense ones")
    loop = s == d
    if weighted:
        used = ~loop if ev.op is None else ~loop & (ev.op > 0)     # weights that get stored
        bad = np.isnan(ev.weight) & used
        if bad.any():
            i = int(np.argmax(bad))
            raise ReplayError(f"{path}: event {ev.start + i}: weight is NaN or missing")
    loops = int(np.count_nonzero(loop))
    # (a batch without self-loops, op or window inserts all its pairs: that grows the id space)
    if hi >= g.num_vertices and (loops or ev.op is not None or window is not None):
        g.insert_vertices(np.array([hi], dtype=np.int64))
    idx = None
    op, w = ev.op, ev.weight
    if loops:
        keep = ~loop
        s, d = s[keep], d[keep]
        idx = ev.start + np.flatnonzero(keep)
        op = None if op is None else op[keep]
        w = None if w is None else w[keep]
    if not directed:
        s, d = np.minimum(s, d), np.maximum(s, d)
    if window is None:
        return _changes(g, s, d, idx, op, w, ev, window, weighted, feed), loops
    # a full window expires about as many edges as a batch brings: the graph keeps the room
    # that expiry gives back for the next batch (Graph.steady_churn)
    with g.steady_churn():
        return _changes(g, s, d, idx, op, w, ev, window, weighted, feed), loops


def _changes(g, s, d, idx, op, w, ev: EventBlock, window: EventWindow | None,
             weighted: bool, feed: Callable) -> BatchChanges:
    """The graph calls of one batch (self-loops dropped: ``s``, ``d``, and ``idx`` their
    event indices or None when the batch had no self-loop; ``op``, ``w`` aligned), the
    window's expiry after them; returns the BatchChanges."""
    n = len(ev)
    ch = BatchChanges()
    if op is None and not weighted and window is None:
        # plain insert-only stream: the graph drops repeats and existing edges itself
        if s.size:
            ch.inserted = g.insert_edges(s, d)
            feed(ch.inserted)
    elif op is None and window is None and s.size:
        insert_latest(g, ch, s, d, w, feed, update_first=feed is _ignore and g.device == "gpu")
    elif op is None and window is not None and s.size:
        if idx is None:
            idx = np.arange(ev.start, ev.start + n, dtype=np.int64)
        wb = w if weighted else None      # the batch and its expiry in one call where it can
        if feed is not _ignore or not insert_expire(g, ch, s, d, idx, wb, window, ev.stop):
            insert_refresh(g, ch, s, d, idx, wb, window, feed)
    elif s.size:
        if idx is None:
            idx = np.arange(ev.start, ev.start + n, dtype=np.int64)
        key = _keys(s, d)
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
                new = np.isin(_keys(a_in, b_in),
                              _keys(to_host(ch.inserted.src), to_host(ch.inserted.dst)))
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
