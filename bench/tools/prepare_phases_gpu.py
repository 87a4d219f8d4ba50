"""Where the small path's prepare kernel spends a replay batch: its phases, in clock cycles.

    python3 -m bench.tools.prepare_phases_gpu [--streams ...] [--batch 1000] [--at 20]

``small_batch.cu`` compiled with ``SMALL_BATCH_CLOCKS`` (thread 0 of the block writes
``clock64()`` after each phase into header words from ``H_CLOCKS``). A stream's first ``--at``
batches are replayed into a GPU graph (as ``bench replay_devices`` does: directed, deferred
inserts); the next batch (reversed for a weighted stream, as its replay sends it) is then
prepared alone (insert, or upsert for a weighted stream; no rings, no rewrite, the graph
untouched), ``--reps`` times: per phase the median microseconds (cycles over the SM clock),
and the kernel's time by CUDA events.
"""
from __future__ import annotations

import argparse
import statistics

import numpy as np

import hornet
from bench.tools.ab_replay_gpu import STREAMS, _batches
from hornet.batch.gpu.small import _CU, _NAMES, PREPARE_ARGS, WORKSPACE_WORDS
from hornet.batch.small_layout import MODE_INSERT, MODE_UPSERT, SMALL_ENTRIES
from hornet.core.cuda import PreparedLaunch, module_source
from streams.replay import GROWTH_SLOTS, _apply_batch

H_CLOCKS = 192
PHASES = ["load keys", "sort", "lookup + scan", "compact (+ found)", "segments + rows",
          "pieces"]


def main(argv=None) -> None:
    import cupy
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.prepare_phases_gpu",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--streams", nargs="+", default=STREAMS)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--at", type=int, default=20)
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args(argv)
    code, options = module_source(_CU)
    mod = cupy.RawModule(code=code, options=options + ("-DSMALL_BATCH_CLOCKS",),
                         name_expressions=list(_NAMES))
    launches = {u: PreparedLaunch(mod.get_function(f"small_prepare<long long, {u}>"),
                                  PREPARE_ARGS) for u in ("false", "true")}
    mhz = cupy.cuda.Device().attributes["ClockRate"] / 1e3
    print("| stream | batch | pairs | kernel us (events) | " +
          " | ".join(PHASES) + " |")
    print("|---" * (4 + len(PHASES)) + "|")
    for name in a.streams:
        evs, weighted, has_op = _batches(name, a.batch)
        g = hornet.Graph(directed=True, device="gpu",
                         edge_properties={"weight": np.float64} if weighted else {})
        if not has_op:
            g.set_array_growth(GROWTH_SLOTS)
        g.defer_inserts(ready=True)
        at = min(a.at, len(evs) - 1)
        for ev in evs[:at]:
            _apply_batch(g, ev, True, None, weighted, "")
        g.num_edges                                   # settled
        ev = evs[at]
        keep = ev.src != ev.dst
        s, d = ev.src[keep].astype(np.int64), ev.dst[keep].astype(np.int64)
        if weighted:
            s, d = s[::-1].copy(), d[::-1].copy()
        s, d = cupy.asarray(s[:SMALL_ENTRIES]), cupy.asarray(d[:SMALL_ENTRIES])
        ws = cupy.zeros(WORKSPACE_WORDS + 8 * SMALL_ENTRIES, dtype=cupy.int64)
        rows = cupy.empty(4 * SMALL_ENTRIES, dtype=cupy.int32)
        g._reserve(max(g._n, int(max(s.max(), d.max())) + 1))
        args = [s.data.ptr, d.data.ptr, s.shape[0], 0, MODE_UPSERT if weighted else MODE_INSERT,
                g._degree.data.ptr, g._size_class.data.ptr, g._edge_ptr.data.ptr,
                g._degree.shape[0], g._mm.min_size_class, 0, ws.data.ptr, rows.data.ptr]
        args += [0] * (PREPARE_ARGS - len(args))
        args[24] = 1                                  # nf: dst only (no property written)
        phases, times = [], []
        for _ in range(a.reps + 1):
            e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
            e0.record()
            launches["true" if weighted else "false"](1, 1024, args)
            e1.record()
            e1.synchronize()
            c = ws[H_CLOCKS:H_CLOCKS + 7].get()
            phases.append(np.diff(c) / mhz)
            times.append(cupy.cuda.get_elapsed_time(e0, e1) * 1e3)
        ph = np.median(np.array(phases[1:]), axis=0)
        print(f"| {name} | {a.batch} | {int(s.shape[0])} | {statistics.median(times[1:]):.1f} | "
              + " | ".join(f"{x:.1f}" for x in ph) + " |", flush=True)


if __name__ == "__main__":
    main()
