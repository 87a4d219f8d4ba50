"""The sliding window's cost on the GPU, short form, for comparing trees in one run.

    PYTHONPATH=TREE python3 bench/tools/window_ab_gpu.py [--events 4000000]
        [--window 2000000] [--batches 100000 10000] [--repeats 3] [--mixed auto true false]

``bench window``'s stream (uniform random insert events over 2^20 ids, seed 0; fewer events
by default) replayed undirected without analytics, without and with the window, alternating,
after an untimed prefix of each; medians of the replays' ``update_seconds``. ``--mixed``: the
windowed replay once per setting of :data:`streams.window_batch.MIXED_CALL` (auto: None, by
size; true: every batch one mixed call; false: an insert and a delete), with a growth floor
or the mixed call's switches changed where the setting says (see its help). Run by path with the
tree to measure first on ``PYTHONPATH`` (only absolute imports), so that one script measures
two trees in one run, one process each.
"""
from __future__ import annotations

import argparse
import os
import sys
import statistics
import tempfile
import time


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=4_000_000)
    ap.add_argument("--window", type=int, default=2_000_000)
    ap.add_argument("--batches", type=int, nargs="+", default=[100_000, 10_000])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--mixed", nargs="+", default=["auto"],
                    help="windowed settings: auto|true|false, '+gN' sets a growth floor of "
                         "N slots for every batch size (g0: none; without: the replay's "
                         "default, streams.replay.WINDOW_GROWTH_SLOTS), '+m0' turns the "
                         "mixed call's takes ahead, addressed launches and compaction "
                         "bound off, '+c0' skips the memory policy's compaction "
                         "(compact_memory) altogether, '+cN' runs it once in N calls")
    ap.add_argument("--label", default="")
    ap.add_argument("--device", default="gpu", help="gpu (cpu: to check the tool itself)")
    a = ap.parse_args(argv)
    from bench.window import write_random_stream
    from streams import window_batch
    from streams.replay import replay
    from hornet.batch import planned_mixed
    from streams import replay as replay_module
    settings = {"auto": None, "true": True, "false": False}
    from hornet.batch import pipeline
    compact_fn = pipeline.compact_memory

    every = [0, 0]                       # (run compaction once in this many calls, calls)

    def some_compaction(g, *args, **kw) -> None:
        every[1] += 1
        if every[0] and every[1] % every[0] == 0:
            compact_fn(g, *args, **kw)

    def compaction(once_in: int) -> None:
        """compact_memory as the library has it (1), skipped (0) or run once in ``once_in``
        calls, wherever it is bound."""
        every[:] = [once_in, 0]
        for m in list(sys.modules.values()):
            if m is not None and getattr(m, "__name__", "").startswith("hornet") and \
                    getattr(m, "compact_memory", None) in (compact_fn, some_compaction):
                m.compact_memory = compact_fn if once_in == 1 else some_compaction
    growth = (getattr(replay_module, "WINDOW_GROWTH_SLOTS", 0),
              getattr(replay_module, "WINDOW_GROWTH_BATCH", None))

    def use(setting) -> None:
        """Switch the windowed replay to ``setting`` (see --mixed)."""
        call, *rest = setting.split("+") if setting else ["auto"]
        window_batch.MIXED_CALL = settings[call]
        replay_module.WINDOW_GROWTH_SLOTS, replay_module.WINDOW_GROWTH_BATCH = growth
        planned_mixed.TAKES_AHEAD = planned_mixed.ADDRESSED = True
        planned_mixed.COMPACTION_BOUND = True
        compaction(1)
        for r in rest:
            if r.startswith("g"):         # a floor for every batch size (g0: none)
                replay_module.WINDOW_GROWTH_SLOTS = int(r[1:])
                replay_module.WINDOW_GROWTH_BATCH = 1 << 62
            elif r == "m0":
                planned_mixed.TAKES_AHEAD = planned_mixed.ADDRESSED = False
                planned_mixed.COMPACTION_BOUND = False
            elif r.startswith("c"):       # c0: no compaction, cN: once in N deletes
                compaction(int(r[1:]))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "random.arrows")
        write_random_stream(path, a.events, 1 << 20)
        for batch in a.batches:
            modes = [("none", None, None)] + [(f"W {m}", a.window, m) for m in a.mixed]
            for _, window, mixed in modes:
                use(mixed)
                replay(path, batch_size=batch, window=window, directed=False, algos="none",
                       device=a.device, max_events=(window or 0) + 5 * batch)
            times = {m[0]: [] for m in modes}
            t = time.perf_counter()
            for r in range(a.repeats):
                order = modes if r % 2 == 0 else modes[::-1]
                for name, window, mixed in order:
                    use(mixed)
                    s = replay(path, batch_size=batch, window=window, directed=False,
                               algos="none", device=a.device).summary
                    times[name].append(s["update_seconds"])
            use(None)
            base = statistics.median(times["none"])
            cells = [f"none {base * 1e3:.1f} ms"]
            for name, _, _ in modes[1:]:
                w = statistics.median(times[name])
                cells.append(f"{name} {w * 1e3:.1f} ms ({w / base:.2f})")
            print(f"{a.label} batch {batch:,}: " + ", ".join(cells) +
                  f"  [{time.perf_counter() - t:.1f} s]", flush=True)


if __name__ == "__main__":
    main()
