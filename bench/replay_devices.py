"""Graph-update throughput of a stream replay: the GPU backend against the CPU backend.

    python3 -m bench replay_devices [--streams ...] [--batch-sizes 1000 10000] [--repeats 3]

Each real temporal stream is replayed with no analytics (``algos="none"``), so the replay's
``update_seconds`` is the graph's own insert/delete work; on both backends of one machine, in
one process, the same batches. Rows give the median over repeats of each backend's update
events per second and the GPU's over the CPU's. Compile time is left out (the replay's
warm-up runs first).
"""
from __future__ import annotations

import argparse
import statistics

from bench.common import DATA, write_table
from hornet.core import jit
from streams.replay import replay

NEEDS_GPU = True
STREAMS = ["CollegeMsg", "sx-mathoverflow-a2q", "soc-sign-bitcoinotc", "soc-sign-bitcoinalpha",
           "out.radoslaw_email_email"]


def _path(name: str):
    hits = sorted(DATA.glob(name + "*"))
    if not hits:
        raise SystemExit(f"bench replay_devices: no stream {name!r} in {DATA}")
    return hits[0]


def _update_rate(path, device: str, batch_size: int, repeats: int) -> tuple[int, int, float]:
    """(events, batches, median update events/s) of ``repeats`` replays on ``device``."""
    rates, events, batches = [], 0, 0
    for _ in range(repeats):
        s = replay(path, batch_size=batch_size, device=device, algos="none").summary
        events, batches = s["events"], s["batches"]
        rates.append(events / s["update_seconds"])
    return events, batches, statistics.median(rates)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench replay_devices",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--streams", nargs="+", default=STREAMS)
    ap.add_argument("--batch-sizes", nargs="+", type=int, default=[1000, 10000])
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    # the library's default: serial kernels for small work (bench.common sets 'always')
    jit.parallel_policy = "tiered"
    rows = []
    for name in a.streams:
        path = _path(name)
        for b in a.batch_sizes:
            events, batches, cpu = _update_rate(path, "cpu", b, a.repeats)
            _, _, gpu = _update_rate(path, "gpu", b, a.repeats)
            rows.append([name, events, b, batches, f"{cpu:.3g}", f"{gpu:.3g}",
                         round(gpu / cpu, 2)])
    write_table("replay_devices", "Stream replay: GPU against CPU graph-update throughput",
                ["stream", "events", "batch", "batches", "CPU events/s", "GPU events/s",
                 "GPU / CPU"], rows,
                notes=(f"Directed graph, no window, no analytics; medians of {a.repeats} "
                       "replays per backend, same process; CPU kernels under the library's "
                       "default (tiered) compile policy. Events/s counts the replay's graph "
                       "update time only (inserts, deletes), compile time excluded.\n"),
                device="gpu")


if __name__ == "__main__":
    main()
