"""Per-batch update times of GPU and CPU stream replays: where a short stream's time goes
(first batches against the steady state).

    python3 -m bench.tools.replay_batch_times [--streams CollegeMsg ...] [--batch-sizes 1000]
        [--devices gpu cpu] [--repeats 2]

Per stream, batch size and device (directed, no window, no analytics, as ``bench
replay_devices``): the replay's update time per batch, its first five batches' times, the
median and the 90th percentile of the others, and the total against the total of the
batches from the sixth on (us).
"""
from __future__ import annotations

import argparse

import numpy as np

from bench.common import DATA
from streams.replay import replay


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.replay_batch_times",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--streams", nargs="+", default=["CollegeMsg"])
    ap.add_argument("--batch-sizes", nargs="+", type=int, default=[1000])
    ap.add_argument("--devices", nargs="+", default=["gpu", "cpu"])
    ap.add_argument("--repeats", type=int, default=2)
    a = ap.parse_args(argv)
    from hornet.core import jit
    jit.parallel_policy = "tiered"
    for name in a.streams:
        path = sorted(DATA.glob(name + "*"))[0]
        for b in a.batch_sizes:
            for dev in a.devices:
                for _ in range(a.repeats):
                    r = replay(path, batch_size=b, device=dev, algos="none")
                    sec = np.asarray(r["seconds"]) * 1e6
                    upd = r.summary["update_seconds"] * 1e6
                    rest = sec[5:]
                    print(f"{name} b={b} {dev}: {len(sec)} batches, update {upd / len(sec):.0f}"
                          f" us/batch; first {np.round(sec[:5]).astype(int).tolist()}; rest "
                          f"median {np.median(rest) if rest.size else 0:.0f} p90 "
                          f"{np.percentile(rest, 90) if rest.size else 0:.0f}; total "
                          f"{upd:.0f}, of it batches 6+ {rest.sum():.0f}", flush=True)


if __name__ == "__main__":
    main()
