"""Per-batch times of a windowed replay against the same replay without a window: where the
window's extra time goes (every batch a little, or a few slow batches).

    python3 -m bench.tools.window_batches_gpu [--device gpu] [--events 10000000]
        [--window 2000000] [--batch 10000] [--rounds 3] [--knob MODULE:NAME=A,B]

The stream of ``bench window`` (uniform random insert events over 2^20 ids, seed 0),
replayed undirected without analytics, without the window and with it, in an order rotated
from round to round (one untimed replay of a prefix each first). ``--knob``: the windowed
replay once per value of a module constant (ints, None, True, False; same process, same rounds: an A/B).
Per mode: the replay's update seconds (median of the rounds, and each round's), the ratio
to the replay without a window, and over the batches after the window is first full, of
the median round: the per-batch seconds' median, 90th and 99th percentiles and maximum,
the batches over 3x the median (how many, their seconds and their excess over the median),
and the slowest batches' indices.
"""
from __future__ import annotations

import argparse
import importlib
import os
import statistics
import tempfile

import numpy as np

from bench.window import write_random_stream
from streams.replay import replay


def _value(text: str):
    """A knob's value: None, True, False or an int."""
    return {"None": None, "True": True, "False": False}.get(text, None) \
        if text in ("None", "True", "False") else int(text)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.window_batches_gpu",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="gpu")
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--window", type=int, default=2_000_000)
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--knob", default=None, help="MODULE:NAME=A,B (ints, None, True, False)")
    a = ap.parse_args(argv)
    module = name = None
    values = [None]
    if a.knob:
        where, vals = a.knob.split("=")
        mod, name = where.split(":")
        module = importlib.import_module(mod)
        values = [_value(v) for v in vals.split(",")]
    modes = ["none"] + [f"window{'' if v is None else f' {name}={v}'}" for v in values]
    setting = dict(zip(modes[1:], values))

    def use(mode: str) -> int | None:
        if module is not None and mode in setting:
            setattr(module, name, setting[mode])
        return None if mode == "none" else a.window
    runs = {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "random.arrows")
        write_random_stream(path, a.events, 1 << 20)
        for m in modes:
            w = use(m)
            replay(path, batch_size=a.batch, window=w, directed=False, algos="none",
                   device=a.device, max_events=a.window + 5 * a.batch)
        for r in range(a.rounds):
            for m in modes[r % len(modes):] + modes[:r % len(modes)]:
                w = use(m)
                res = replay(path, batch_size=a.batch, window=w, directed=False,
                             algos="none", device=a.device)
                sec = np.asarray(res.table.column("seconds").to_numpy())
                runs[m].append((res.summary["update_seconds"], sec))
    full = a.window // a.batch
    plain = statistics.median(u for u, _ in runs["none"])
    for m, rs in runs.items():
        upd = [u for u, _ in rs]
        med = sorted(rs, key=lambda x: x[0])[len(rs) // 2]
        steady = med[1][full:]
        mid = float(np.median(steady))
        slow = steady > 3 * mid
        print(f"{m}: update s {statistics.median(upd):.3f} (rounds "
              f"{' '.join(f'{u:.3f}' for u in upd)}), ratio "
              f"{statistics.median(upd) / plain:.2f}; steady batches {steady.size}: "
              f"median {mid * 1e6:.0f} us p90 {np.percentile(steady, 90) * 1e6:.0f} "
              f"p99 {np.percentile(steady, 99) * 1e6:.0f} max {steady.max() * 1e6:.0f}; "
              f"sum {steady.sum():.3f} s, first window {med[1][:full].sum():.3f} s; "
              f">3x median: {int(slow.sum())} batches, {steady[slow].sum():.3f} s "
              f"(excess {(steady[slow] - mid).sum():.3f} s)", flush=True)
        top = np.argsort(steady)[::-1][:12]
        print("   slowest (batch: us): " + " ".join(
            f"{full + i}:{steady[i] * 1e6:.0f}" for i in sorted(top)), flush=True)


if __name__ == "__main__":
    main()
