"""Where a windowed GPU replay's update time goes, stage by stage, against the same replay
without a window.

    python3 -m bench.tools.profile_window_gpu [--events 6000000] [--window 2000000]
        [--batch-sizes 100000 10000] [--out DIR] [--device gpu]

The stream of ``bench window`` (uniform random insert events over 2^20 ids, seed 0; fewer
events by default) is replayed undirected without analytics, with and without the window,
once to warm up and once per mode with the stages of
:mod:`bench.tools.profile_replay_gpu` wrapped, plus the window's own (its queue, expiry,
the expiry delete's compaction): ``host`` (wall clock, nothing added) and ``synced`` (a
device synchronization before and after each stage). Per stage: calls and microseconds per
batch, inclusive; the first lines give the replays' own update time per batch.
"""
from __future__ import annotations

import argparse
import os
import tempfile

from bench.tools import profile_replay_gpu as prg
from bench.window import write_random_stream
from streams.replay import replay

WINDOW_STAGES = [
    ("streams.window_batch", "insert_refresh"), ("streams.window_batch", "insert_expire"),
    ("streams.window", "EventWindow.expired"), ("streams.window", "EventWindow.record"),
    ("streams.window", "EventWindow.expired_edges"),
    ("streams.window", "EventWindow.expired_pairs"),
    ("streams.window_batch", "_insert_expire_device"), ("streams.window_batch", "_uploaded"),
    ("streams.window", "EventWindow.record_all"),
    ("streams.window_device", "LatestMap.record"), ("streams.window_device", "LatestMap.expire"),
    ("streams.window_device", "LatestMap.rebuild"),
    ("streams.window_batch", "_classify"), ("streams.window_batch", "_classify_uploaded"),
    ("streams.window_batch", "_put_back"), ("streams.window_batch", "_refresh_record"),
    ("hornet.batch.mixed", "apply_edges"), ("hornet.batch.planned_mixed", "planned_apply"),
    ("hornet.batch.planned_mixed", "_read_back"),
    ("hornet.batch.gpu.plan", "shift_for_removal"),
    ("hornet.batch.pipeline", "compact_memory"),      # wrapped where every path binds it
    ("hornet.memory.manager", "MemoryManager.compact_touched"),
    ("hornet.memory.manager", "MemoryManager.compact"),
    ("hornet.memory.list_fit", "ListFit.refit"),
    ("hornet.batch.gpu.kernels", "remove_lists"),
    ("hornet.batch.gpu.plan", "commit_plan"),
    ("hornet.graph", "Graph.steady_churn"),
]


def _run(stages, path, batch: int, window, device: str, mode):
    stages.reset(mode)
    s = replay(path, batch_size=batch, window=window, directed=False, algos="none",
               device=device).summary
    nb = s["batches"]
    out = ({k: v / nb * 1e6 for k, v in stages.seconds.items()},
           {k: v / nb for k, v in stages.calls.items()}, stages.syncs / nb,
           s["update_seconds"] / nb * 1e6)
    stages.reset(None)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.profile_window_gpu",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=6_000_000)
    ap.add_argument("--window", type=int, default=2_000_000)
    ap.add_argument("--batch-sizes", nargs="+", type=int, default=[100_000, 10_000])
    ap.add_argument("--out", default=os.environ.get("OUT"))
    ap.add_argument("--device", default="gpu", help="gpu (cpu: to check the tool itself)")
    a = ap.parse_args(argv)
    prg.STAGES.extend(s for s in WINDOW_STAGES if s not in prg.STAGES)
    stages = prg.Stages()
    lines = ["# Stage profile of windowed GPU replays (bench/tools/profile_window_gpu.py)",
             "", f"{a.events:,} uniform random insert events over 2^20 ids (seed 0), "
             f"undirected, no analytics; window {a.window:,} events against none. "
             "Microseconds per batch (all batches of the replay, the first window's worth "
             "without expiry included)."]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "random.arrows")
        write_random_stream(path, a.events, 1 << 20)
        for batch in a.batch_sizes:
            rows = {}
            for window in (None, a.window):
                replay(path, batch_size=batch, window=window, directed=False, algos="none",
                       device=a.device, max_events=(window or 0) + 5 * batch)      # warm
                for mode in ("host", "synced"):
                    rows[(window, mode)] = _run(stages, path, batch, window, a.device, mode)
            lines.append(f"\n## batch {batch:,}")
            for (window, mode), (_, _, syncs, upd) in rows.items():
                lines.append(f"- {'window' if window else 'no window'}, {mode}: update time "
                             f"per batch {upd:.0f} us, explicit synchronizations per batch "
                             f"{syncs:.2f}")
            wh, wc, _, _ = rows[(a.window, "host")]
            ws, _, _, _ = rows[(a.window, "synced")]
            ph, pc, _, _ = rows[(None, "host")]
            ps, _, _, _ = rows[(None, "synced")]
            lines.append("\n| stage | calls/batch (window / none) | window host us | "
                         "window synced us | no window host us | no window synced us |")
            lines.append("|---|---|---|---|---|---|")
            for label in sorted(set(wh) | set(ph), key=lambda k: -ws.get(k, ps.get(k, 0.0))):
                lines.append(f"| {label} | {wc.get(label, 0):.2f} / {pc.get(label, 0):.2f} | "
                             f"{wh.get(label, 0):.0f} | {ws.get(label, 0):.0f} | "
                             f"{ph.get(label, 0):.0f} | {ps.get(label, 0):.0f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(os.path.join(a.out, "profile_window_gpu.md"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
