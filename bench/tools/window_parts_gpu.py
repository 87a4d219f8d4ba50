"""A windowed GPU replay's batch split into its parts: the insert, the expiry's delete and
the window's own work, each timed alone on the same steady-state graph.

    python3 -m bench.tools.window_parts_gpu [--events 4000000] [--window 2000000]
        [--batch 10000] [--cprofile N]

The stream of ``bench window`` (uniform random insert events over 2^20 ids, seed 0) is
replayed undirected without analytics, with the window and without one, with the stages of
:mod:`bench.tools.profile_window_gpu` (and the medium-batch path's) wrapped: ``host`` (wall
clock) and ``synced`` (the device synchronised around each stage). With ``--cprofile N`` the
N functions of most own time (``--sort cumulative``: most time with callees) in one
windowed replay follow (cProfile: its overhead inflates
Python-heavy code; for where the host time goes, not for absolute figures).
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import tempfile
import time

from bench.tools import profile_replay_gpu as prg
from bench.tools import profile_window_gpu as pwg
from bench.window import write_random_stream
from streams.replay import replay

EXTRA_STAGES = [
    ("hornet.batch.medium_path", "medium_pairs"), ("hornet.batch.medium_path", "medium_update"),
    ("hornet.batch.gpu.medium", "MediumBatches.prepare"),
    ("hornet.batch.gpu.medium", "MediumBatches.rewrite"),
    ("hornet.batch.gpu.medium", "MediumBatches.spilled"),
    ("hornet.batch.gpu.medium", "MediumBatches.sources"),
    ("hornet.batch.gpu.medium", "MediumBatches.kept_pairs"),
    ("hornet.memory.gpu_take", "prepare"), ("hornet.memory.gpu_take", "take_ahead"),
    ("hornet.memory.gpu_take", "took_ahead"), ("hornet.memory.gpu_take", "allocate_on_device"),
    ("hornet.batch.gpu.plan", "plan_entries"),
    ("hornet.batch.deferred_path", "deferred_insert"),
    ("hornet.batch.small_path", "small_pairs"),
    ("hornet.memory.manager", "MemoryManager.steady_churn"),
    ("hornet.memory.gpu_take", "DeviceTakes.__init__"),
    ("hornet.memory.manager", "MemoryManager._commit_plans"),
    ("hornet.memory.manager", "MemoryManager._drop_empty"),
    ("hornet.memory.gpu_repoint", "repoint_moved"),
    ("hornet.memory.block_cache", "BlockCache.flush"),
]


def _steady(stages, path, batch: int, window, mode, skip: int, profiler=None):
    """One replay with the stages timed in ``mode`` from its batch ``skip`` on (the window
    full: the steady state; the same batches without a window); returns (seconds per batch
    by stage, calls per batch by stage, syncs per batch, update us per batch)."""
    import streams.replay as rp
    inner = rp._apply_batch
    count = [0]

    def outer(*a, **k):
        count[0] += 1
        if count[0] == skip + 1:
            stages.reset(mode)
            if profiler is not None:
                profiler.enable()
        return inner(*a, **k)
    rp._apply_batch = outer
    stages.reset(None)
    try:
        replay(path, batch_size=batch, window=window, directed=False, algos="none",
               device="gpu")
    finally:
        rp._apply_batch = inner
        if profiler is not None:
            profiler.disable()
    nb = max(count[0] - skip, 1)
    sec = {k: v / nb * 1e6 for k, v in stages.seconds.items()}
    out = (sec, {k: v / nb for k, v in stages.calls.items()}, stages.syncs / nb,
           sec.get("_apply_batch", 0.0))
    stages.reset(None)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.window_parts_gpu",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=4_000_000)
    ap.add_argument("--window", type=int, default=2_000_000)
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--cprofile", type=int, default=0)
    ap.add_argument("--sort", default="tottime", help="the profile's order (tottime, cumulative)")
    ap.add_argument("--modes", nargs="+", default=["host", "synced"])
    ap.add_argument("--growth", type=int, default=None,
                    help="the windowed graph's growth floor (streams.replay.WINDOW_GROWTH_SLOTS)")
    ap.add_argument("--steady", action="store_true",
                    help="time the batches after the window is full only (both replays)")
    a = ap.parse_args(argv)
    from streams import replay as replay_module
    if a.growth is not None:
        replay_module.WINDOW_GROWTH_SLOTS = a.growth
    prg.STAGES.extend(s for s in pwg.WINDOW_STAGES + EXTRA_STAGES if s not in prg.STAGES)
    stages = prg.Stages()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "random.arrows")
        t = time.perf_counter()
        write_random_stream(path, a.events, 1 << 20)
        print(f"(stream written in {time.perf_counter() - t:.1f} s)", flush=True)
        rows = {}
        for window in (None, a.window):
            t = time.perf_counter()
            replay(path, batch_size=a.batch, window=window, directed=False, algos="none",
                   device="gpu", max_events=(window or 0) + 5 * a.batch)      # warm
            s = replay(path, batch_size=a.batch, window=window, directed=False, algos="none",
                       device="gpu").summary
            print(f"window {window}: unwrapped update us/batch "
                  f"{s['update_seconds'] / s['batches'] * 1e6:.0f} "
                  f"({time.perf_counter() - t:.1f} s)", flush=True)
            skip = a.window // a.batch + 5
            for mode in a.modes:
                rows[(window, mode)] = _steady(stages, path, a.batch, window, mode, skip) \
                    if a.steady else pwg._run(stages, path, a.batch, window, "gpu", mode)
        for (window, mode), (_, _, syncs, upd) in rows.items():
            print(f"- window {window}, {mode}: update us/batch {upd:.0f}, syncs/batch "
                  f"{syncs:.2f}")
        labels = set()
        for sec, _, _, _ in rows.values():
            labels |= set(sec)
        keys = list(rows)
        print("| stage | " + " | ".join(f"{'W' if w else 'none'} {m} us (calls)"
                                          for w, m in keys) + " |")
        print("|---|" + "---|" * len(keys))
        ref = (a.window, a.modes[-1])
        for label in sorted(labels, key=lambda k: -rows[ref][0].get(k, 0.0)):
            cells = [f"{rows[k][0].get(label, 0):.0f} ({rows[k][1].get(label, 0):.2f})"
                     for k in keys]
            if max(rows[k][0].get(label, 0) for k in keys) < 2:
                continue
            print(f"| {label} | " + " | ".join(cells) + " |")
        if a.cprofile:
            pr = cProfile.Profile()
            _steady(stages, path, a.batch, a.window, None,
                    a.window // a.batch + 5 if a.steady else 0, pr)
            out = io.StringIO()
            pstats.Stats(pr, stream=out).sort_stats(a.sort).print_stats(a.cprofile)
            print("\n".join(line[:150] for line in out.getvalue().splitlines()[:a.cprofile + 12]))


if __name__ == "__main__":
    main()
