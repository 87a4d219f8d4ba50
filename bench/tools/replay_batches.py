"""Per-batch update times of stream replays, to see where a short replay's time goes.

    python3 -m bench.tools.replay_batches [--streams ...] [--batch-sizes 10000]
        [--devices gpu cpu] [--repeats 3]

Each real stream of ``bench replay_devices`` is replayed directed without analytics (one
untimed replay first, so that compiles are done), then ``--repeats`` times; printed per
stream, batch size and device: the median ``update_seconds`` and events/s, the median of
each batch's own time (the replay's ``seconds`` column, milliseconds), and the rest of the
update time that no batch holds (counts read back at the end: a wait for the device), and
of the last replay's graph the deferred batches that stalled and the block arrays it holds.
"""
from __future__ import annotations

import argparse
import statistics

import numpy as np

import hornet
from bench.replay_devices import STREAMS, _path
from hornet.core import jit
from streams.replay import replay


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.replay_batches",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--streams", nargs="+", default=STREAMS)
    ap.add_argument("--batch-sizes", nargs="+", type=int, default=[10000])
    ap.add_argument("--devices", nargs="+", default=["gpu", "cpu"])
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    jit.parallel_policy = "tiered"
    graphs = []
    defer = hornet.Graph.defer_inserts

    def kept(self, *args, **kwargs):         # the replay's own graph (made ready), not scratch
        if kwargs.get("ready"):
            graphs.append(self)
        return defer(self, *args, **kwargs)
    hornet.Graph.defer_inserts = kept
    for name in a.streams:
        path = _path(name)
        for b in a.batch_sizes:
            for dev in a.devices:
                replay(path, batch_size=b, device=dev, algos="none")
                upd, per = [], []
                graphs.clear()
                for _ in range(a.repeats):
                    res = replay(path, batch_size=b, device=dev, algos="none")
                    upd.append(res.summary["update_seconds"])
                    per.append(np.asarray(res["seconds"], dtype=float))
                    events = res.summary["events"]
                per = np.median(np.stack(per), axis=0)
                u = statistics.median(upd)
                print(f"{name} b={b} {dev}: update {u * 1e3:.2f} ms ({events / u:.3g} ev/s), "
                      f"tail {(u - per.sum()) * 1e3:.2f} ms; batches ms: "
                      + " ".join(f"{x * 1e3:.2f}" for x in per)
                      + f"; stalls {getattr(graphs[-1], '_stalls', 0)}, block arrays "
                      f"{graphs[-1].memory_stats()['block_arrays']}", flush=True)


if __name__ == "__main__":
    main()
