"""The outcome of a replay: per-batch report columns, the summary, and their report files,
plot and printed summary."""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from .analytics import ANALYTIC_COLUMNS, ReplayError

__all__ = ["ReplayResult", "REPORT_FORMATS", "require_matplotlib"]

REPORT_FORMATS = (".csv", ".json", ".arrow")


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
