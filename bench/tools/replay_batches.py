"""Per-batch update times of stream replays, to see where a short replay's time goes.

    python3 -m bench.tools.replay_batches [--streams ...] [--batch-sizes 10000]
        [--devices gpu cpu] [--repeats 3] [--reserve on|off|both]

Each real stream of ``bench replay_devices`` is replayed directed without analytics (one
untimed replay first, so that compiles are done), then ``--repeats`` times; printed per
stream, batch size and device: the median ``update_seconds`` and events/s, the median of
each batch's own time (the replay's ``seconds`` column, milliseconds), and the rest of the
update time that no batch holds (counts read back at the end: a wait for the device), and
of the last replay's graph the deferred batches that stalled and the block arrays it holds.
``--reserve both`` replays with and without the replay's reserve (``streams.replay.RESERVE``:
``Graph.reserve`` before the first batch) in alternation, in one process, a line for each.
"""
from __future__ import annotations

import argparse
import statistics

import numpy as np

import hornet
import streams.replay as replay_module
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
    ap.add_argument("--reserve", choices=("on", "off", "both"), default="on")
    a = ap.parse_args(argv)
    modes = {"on": [True], "off": [False], "both": [False, True]}[a.reserve]
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
                for m in modes:
                    replay_module.RESERVE = m
                    replay(path, batch_size=b, device=dev, algos="none")
                upd = {m: [] for m in modes}
                per = {m: [] for m in modes}
                last = {}
                for _ in range(a.repeats):
                    for m in modes:
                        replay_module.RESERVE = m
                        graphs.clear()
                        res = replay(path, batch_size=b, device=dev, algos="none")
                        upd[m].append(res.summary["update_seconds"])
                        per[m].append(np.asarray(res["seconds"], dtype=float))
                        events = res.summary["events"]
                        last[m] = graphs[-1]
                for m in modes:
                    p = np.median(np.stack(per[m]), axis=0)
                    u = statistics.median(upd[m])
                    tag = "" if len(modes) == 1 else (" reserve" if m else " grow   ")
                    print(f"{name} b={b} {dev}{tag}: update {u * 1e3:.2f} ms ({events / u:.3g} "
                          f"ev/s, spread {min(upd[m]) * 1e3:.2f}-{max(upd[m]) * 1e3:.2f}), "
                          f"tail {(u - p.sum()) * 1e3:.2f} ms; batches ms: "
                          + " ".join(f"{x * 1e3:.2f}" for x in p[:12])
                          + (" ..." if p.shape[0] > 12 else "")
                          + f"; stalls {getattr(last[m], '_stalls', 0)}, block arrays "
                          f"{last[m].memory_stats()['block_arrays']}", flush=True)
    replay_module.RESERVE = True

if __name__ == "__main__":
    main()
