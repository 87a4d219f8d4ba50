"""Where a GPU stream replay's graph-update time goes, stage by stage.

    python3 -m bench.tools.profile_replay_gpu [--streams ...] [--batch-sizes 1000 10000]
        [--out DIR] [--cprofile]

For each real temporal stream (directed, no window, no analytics, as ``bench replay_devices``)
and batch size, the GPU replay runs once to warm up, then once per mode with the batch path's
stages wrapped (the names below, in every module that binds them):

- ``host``: wall clock around each stage, nothing added (what the Python side costs while the
  device runs behind, plus the waits the stage itself does);
- ``synced``: a device synchronization before and after each stage (host plus the device
  work the stage waits for);
- ``events``: CUDA events around each stage, read once the batch's last event completed (the
  span of device time between a stage's first and last queued work).

Per stage: calls per batch and microseconds per batch (inclusive: nested stages are counted
in their callers too). Explicit synchronizations (``Stream.synchronize``,
``Event.synchronize``, ``Device.synchronize``) are counted per batch; reads that CuPy does
inside its C code (``int(device scalar)``, ``get``) are not seen.

It also measures the floor of one small GPU batch on the replayed graph: a host batch of
1,000 pairs already present (nothing to write), its upload alone, and an empty launch with a
synchronization. With ``--cprofile`` the per-function profile of one replay per stream and
batch size goes to ``DIR/profile_replay_gpu_cprofile.txt``.
"""
from __future__ import annotations

import argparse
import cProfile
import importlib
import io
import os
import pstats
import statistics
import sys
import time
import traceback
from collections import defaultdict

import numpy as np

from bench.common import DATA
from streams.replay import replay

NEEDS_GPU = True
STREAMS = ["CollegeMsg", "sx-mathoverflow-a2q", "soc-sign-bitcoinotc", "soc-sign-bitcoinalpha",
           "out.radoslaw_email_email"]

#: (module, attribute) pairs: a dotted class name wraps a method
STAGES = [
    ("streams.replay", "_apply_batch"), ("streams.replay", "_changes"),
    ("streams.replay", "_keys"), ("streams.replay", "to_host"),
    ("streams.weighted_batch", "insert_latest"), ("streams.weighted_batch", "_without"),
    ("hornet.batch.found_update", "found_update"),
    ("hornet.batch.found_update", "_write_found"),
    ("hornet.graph", "Graph.insert_vertices"), ("hornet.graph", "Graph._insert_edges"),
    ("hornet.graph", "Graph._update_edges"), ("hornet.graph", "Graph._delete_edges"),
    ("hornet.graph", "Graph.upsert_edges"), ("hornet.graph", "Graph._reserve"),
    ("hornet.batch.scope", "batch_scope.__exit__"),
    ("hornet.batch.small_path", "small_pairs"), ("hornet.batch.small_path", "small_update"),
    ("hornet.batch.small_path", "small_upsert"),
    ("hornet.batch.gpu.small", "SmallBatches.prepare"),
    ("hornet.batch.gpu.small", "SmallBatches.rewrite"),
    ("hornet.batch.gpu.small", "SmallBatches.refresh_present"),
    ("hornet.memory.block_cache", "BlockCache.reserve"),
    ("hornet.memory.block_cache", "BlockCache.accepts"),
    ("hornet.memory.block_cache", "BlockCache.commit"),
    ("hornet.memory.block_cache", "BlockCache.top_up"),
    ("hornet.memory.block_cache", "BlockCache._take_into_rings"),
    ("hornet.memory.manager", "MemoryManager.release"),
    ("hornet.memory.manager", "MemoryManager.settle"),
    ("hornet.memory.manager", "MemoryManager.allocate_counts"),
    ("hornet.memory.manager", "MemoryManager.allocate_into_rings"),
    ("hornet.memory.manager", "MemoryManager.refresh"),
    ("hornet.memory.manager", "MemoryManager.lookup"),
    ("hornet.memory.manager", "MemoryManager.block_cache"),
    ("hornet.batch.planned", "planned_pairs"), ("hornet.batch.planned", "planned_update"),
    ("hornet.batch.planned", "_first_pairs"), ("hornet.batch.planned", "_commit"),
    ("hornet.batch.planned", "_change"),
    ("hornet.batch.gpu.plan", "plan_batch"), ("hornet.batch.gpu.plan", "place_moves"),
    ("hornet.batch.gpu.plan", "commit_plan"),
    ("hornet.batch.pipeline", "unique_pairs"), ("hornet.batch.pipeline", "edge_change"),
    ("hornet.batch.pipeline", "_field_columns"),
    ("hornet.batch.gpu.kernels", "merge_lists"), ("hornet.batch.gpu.kernels", "find_positions"),
    ("hornet.batch.gpu.kernels", "sorted_unique_pairs"),
    ("hornet.batch.gpu.kernels", "read_at"), ("hornet.batch.gpu.kernels", "write_at"),
    ("hornet.batch.validate", "edge_batch"), ("hornet.batch.validate", "property_values"),
    ("hornet.batch.gpu.pairs", "device_pairs"), ("hornet.core.cuda", "upload"),
    ("hornet.batch.deferred_path", "deferred_insert"),
    ("hornet.batch.deferred_path", "_queue"), ("hornet.batch.deferred_path", "_launch"),
    ("hornet.batch.deferred_path", "_settle_one"),
    ("hornet.batch.deferred_path", "_settle_ready"),
    ("hornet.batch.deferred_path", "_refill_step"),
    ("hornet.batch.deferred_path", "_run_again"), ("hornet.batch.deferred_path", "_limits"),
    ("hornet.batch.deferred_path", "settle"),
    ("hornet.batch.gpu.deferred", "DeferredBatches.launch"),
    ("hornet.batch.gpu.deferred", "DeferredBatches.header"),
    ("hornet.batch.gpu.deferred", "DeferredBatches.set_limits"),
    ("hornet.memory.block_cache", "BlockCache.grow_ahead"),
    ("streams.batch_rows", "BatchRows.add"),
]


def _path(name: str):
    hits = sorted(DATA.glob(name + "*"))
    if not hits:
        raise SystemExit(f"profile_replay_gpu: no stream {name!r} in {DATA}")
    return hits[0]


class Stages:
    """Wraps the STAGES; accumulates per label seconds and calls while ``mode`` is set."""

    def __init__(self):
        import cupy
        self.cupy = cupy
        self.mode = None                   # None, "host", "synced" or "events"
        self.seconds = defaultdict(float)
        self.calls = defaultdict(int)
        self.syncs = 0
        self.pending = []                  # events mode: (label, start, end) of this batch
        self._undo = []
        for module, attr in STAGES:
            self._wrap(module, attr)
        self._count_syncs()

    def _wrap(self, module_name: str, attr: str) -> None:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            return
        owner, name = module, attr
        if "." in attr:
            cls, name = attr.split(".")
            owner = getattr(module, cls, None)
            if owner is None:
                return
        fn = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
        if fn is None or not callable(fn):
            return
        label = attr
        wrapped = self._timed(fn, label, outer=attr == "_apply_batch")
        targets = [owner]
        if not isinstance(owner, type):        # every module that binds the same function
            targets = [m for m in list(sys.modules.values())
                       if m is not None and getattr(m, "__name__", "").split(".")[0]
                       in ("hornet", "streams", "bench") and getattr(m, name, None) is fn]
        for t in targets:
            setattr(t, name, wrapped)
            self._undo.append((t, name, fn))

    def _timed(self, fn, label: str, outer: bool):
        st, cupy = self, self.cupy

        def timed(*a, **k):
            mode = st.mode
            if mode is None:
                return fn(*a, **k)
            stream = cupy.cuda.get_current_stream()
            if mode == "synced":
                stream.synchronize()
            elif mode == "events":
                e0 = cupy.cuda.Event()
                e0.record(stream)
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                if mode == "synced":
                    stream.synchronize()
                st.seconds[label] += time.perf_counter() - t
                st.calls[label] += 1
                if mode == "events":
                    e1 = cupy.cuda.Event()
                    e1.record(stream)
                    st.pending.append((label, e0, e1))
                    if outer:
                        e1.synchronize()
                        for lab, x, y in st.pending:
                            st.seconds["gpu:" + lab] += cupy.cuda.get_elapsed_time(x, y) / 1e3
                        st.pending.clear()
        return timed

    def _count_syncs(self) -> None:
        cuda = self.cupy.cuda
        st = self
        for cls in (cuda.Stream, cuda.Event, cuda.Device):
            fn = getattr(cls, "synchronize", None)
            if fn is None:
                continue

            def counted(obj, _fn=fn):
                if st.mode is not None:
                    st.syncs += 1
                return _fn(obj)
            try:
                setattr(cls, "synchronize", counted)
                self._undo.append((cls, "synchronize", fn))
            except TypeError:
                pass

    def reset(self, mode) -> None:
        self.mode = mode
        self.seconds.clear()
        self.calls.clear()
        self.syncs = 0


def _profile(stages: Stages, path, batch: int, out_dir, use_cprofile: bool,
             device: str = "gpu") -> list[str]:
    lines = []
    replay(path, batch_size=batch, device=device, algos="none")          # warm
    rows = {}
    for mode in ("host", "synced", "events"):
        stages.reset(mode)
        s = replay(path, batch_size=batch, device=device, algos="none").summary
        nb = s["batches"]
        rows[mode] = ({k: v / nb * 1e6 for k, v in stages.seconds.items()},
                      {k: v / nb for k, v in stages.calls.items()}, stages.syncs / nb,
                      s["update_seconds"] / nb * 1e6)
        stages.reset(None)
    plain = [replay(path, batch_size=batch, device=device, algos="none").summary
             for _ in range(3)]
    nb = plain[0]["batches"]
    us = statistics.median(p["update_seconds"] for p in plain) / nb * 1e6
    lines.append(f"\n## {path.name}, batch {batch}: {nb} batches, {plain[0]['events']} events, "
                 f"{plain[0]['inserted']} inserted; update time per batch {us:.0f} us "
                 f"(unwrapped, median of 3)")
    for mode, (_, _, syncs, upd) in rows.items():
        lines.append(f"- {mode}: update time per batch {upd:.0f} us, explicit "
                     f"synchronizations per batch {syncs:.2f}")
    host, calls, _, _ = rows["host"]
    synced, _, _, _ = rows["synced"]
    ev, _, _, _ = rows["events"]
    lines.append("\n| stage | calls/batch | host us | synced us | gpu span us |")
    lines.append("|---|---|---|---|---|")
    for label in sorted(host, key=lambda k: -synced.get(k, 0.0)):
        lines.append(f"| {label} | {calls[label]:.2f} | {host[label]:.0f} | "
                     f"{synced.get(label, 0.0):.0f} | {ev.get('gpu:' + label, 0.0):.0f} |")
    if use_cprofile and out_dir:
        prof = cProfile.Profile()
        prof.enable()
        replay(path, batch_size=batch, device=device, algos="none")
        prof.disable()
        buf = io.StringIO()
        ps = pstats.Stats(prof, stream=buf)
        ps.sort_stats("tottime").print_stats(45)
        ps.sort_stats("cumulative").print_stats(60)
        with open(os.path.join(out_dir, "profile_replay_gpu_cprofile.txt"), "a") as f:
            f.write(f"\n\n######## {path.name}, batch {batch}\n" + buf.getvalue())
    return lines


def _floor(path, batch: int) -> list[str]:
    """Per-batch floor of a small GPU batch on the replayed graph of ``path``."""
    import cupy

    import hornet
    from hornet.core.cuda import upload
    r = replay(path, batch_size=batch, device="gpu", algos="none")
    g = hornet.Graph(directed=True, device="gpu")
    src, dst = None, None
    # the stream's first 1,000 distinct edges, inserted, then inserted again (all present)
    from streams.reader import open_stream
    with open_stream(path) as rd:
        blocks = list(rd.blocks())
    s = np.concatenate([b.src for b in blocks]).astype(np.int64)
    d = np.concatenate([b.dst for b in blocks]).astype(np.int64)
    key = np.unique(s * (1 << 32) + d)[:1000]
    src, dst = key >> 32, key & 0xFFFFFFFF
    g.insert_edges(src, dst)
    stream = cupy.cuda.get_current_stream()

    def timed(fn, n=50):
        fn()
        stream.synchronize()
        ts = []
        for _ in range(n):
            t = time.perf_counter()
            fn()
            stream.synchronize()
            ts.append(time.perf_counter() - t)
        return statistics.median(ts) * 1e6

    both = np.stack([src, dst])
    k = cupy.ElementwiseKernel("int64 x", "int64 y", "y = x", "floor_copy")
    one = cupy.zeros(1, dtype=cupy.int64)
    out = [f"\n## floor on {path.name} (replayed graph: {r.summary['edges']} edges; "
           f"1,000 present pairs)",
           f"- insert_edges of 1,000 present pairs (host int64): "
           f"{timed(lambda: g.insert_edges(src, dst)):.0f} us",
           f"- upload of the pairs alone: {timed(lambda: upload(both)):.0f} us",
           f"- one elementwise launch + synchronization: {timed(lambda: k(one, one)):.0f} us",
           f"- synchronization alone: {timed(lambda: None):.0f} us"]
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.profile_replay_gpu",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--streams", nargs="+", default=STREAMS)
    ap.add_argument("--batch-sizes", nargs="+", type=int, default=[1000, 10000])
    ap.add_argument("--out", default=os.environ.get("OUT"))
    ap.add_argument("--cprofile", action="store_true")
    ap.add_argument("--device", default="gpu", help="gpu (cpu: to check the tool itself)")
    ap.add_argument("--no-floor", action="store_true")
    a = ap.parse_args(argv)
    from hornet.core import jit
    jit.parallel_policy = "tiered"
    stages = Stages()
    lines = ["# Stage profile of GPU stream replays (bench/tools/profile_replay_gpu.py)"]
    for name in a.streams:
        path = _path(name)
        for b in a.batch_sizes:
            try:
                lines += _profile(stages, path, b, a.out, a.cprofile, a.device)
            except Exception:                   # the other streams' profiles still come
                lines.append(f"\n## {name}, batch {b}: failed\n" + traceback.format_exc())
    if not a.no_floor:
        try:
            lines += _floor(_path(a.streams[0]), 1000)
        except Exception:
            lines.append("\n## floor: failed\n" + traceback.format_exc())
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(os.path.join(a.out, "profile_replay_gpu.md"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
