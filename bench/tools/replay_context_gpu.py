"""A GPU stream replay's update time back to back, and alternating with CPU replays as
``bench replay_devices`` runs them: whether the CPU replays between two GPU ones move the
GPU's figure.

    python3 -m bench.tools.replay_context_gpu [--streams ...] [--batch-sizes 1000]
        [--repeats 5]

Per stream and batch size (directed, no window, no analytics; one untimed replay on each
device and CPU policy first): ``--repeats`` GPU replays in a row, then ``--repeats`` rounds
of a CPU replay under each of ``bench.replay_devices.CPU_POLICIES`` and a GPU replay. Per
mode: the median update microseconds per batch (the replay's ``update_seconds``), and of
the GPU's replays the median of the first batch's and of the other batches' seconds (the
report's ``seconds`` column, rows read lazily: a batch's time is its graph calls').
"""
from __future__ import annotations

import argparse
import statistics

import numpy as np

from bench.replay_devices import CPU_POLICIES, STREAMS, _path
from hornet.core import jit
from streams.reader import read_stream
from streams.replay import replay

DEVICE = "gpu"   # (cpu: to check the tool itself)


def _run(path, batch: int, device: str, policy: str = "tiered"):
    device = DEVICE if device == "gpu" else device
    jit.parallel_policy = policy
    res = replay(path, batch_size=batch, device=device, algos="none")
    jit.parallel_policy = "tiered"
    sec = np.asarray(res.table.column("seconds").to_numpy())
    return res.summary["update_seconds"] / res.summary["batches"], sec


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.replay_context_gpu",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--streams", nargs="+", default=STREAMS)
    ap.add_argument("--batch-sizes", nargs="+", type=int, default=[1000])
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args(argv)
    for name in a.streams:
        path = read_stream(_path(name))
        for b in a.batch_sizes:
            for p in CPU_POLICIES:
                _run(path, b, "cpu", p)
            _run(path, b, "gpu")
            alone = [_run(path, b, "gpu") for _ in range(a.repeats)]
            cpu = {p: [] for p in CPU_POLICIES}
            mixed = []
            for _ in range(a.repeats):
                for p in CPU_POLICIES:
                    cpu[p].append(_run(path, b, "cpu", p)[0])
                mixed.append(_run(path, b, "gpu"))
            best = min(statistics.median(v) for v in cpu.values())

            def fmt(runs):
                per = statistics.median(r[0] for r in runs)
                first = statistics.median(r[1][0] for r in runs)
                rest = statistics.median(float(np.median(r[1][1:])) for r in runs)
                return (f"{per * 1e6:.0f} us/batch (x{best / per:.2f} of CPU; first batch "
                        f"{first * 1e6:.0f}, rest median {rest * 1e6:.0f})")
            print(f"{name} b={b}: CPU best {best * 1e6:.0f} us/batch; GPU in a row "
                  f"{fmt(alone)}; GPU after CPU replays {fmt(mixed)}", flush=True)


if __name__ == "__main__":
    main()
