"""Graph-update throughput of a stream replay: the GPU backend against the CPU backend.

    python3 -m bench replay_devices [--streams ...] [--batch-sizes 1000 10000] [--repeats 3]

Each real temporal stream is replayed with no analytics (``algos="none"``), so the replay's
``update_seconds`` is the graph's own insert/delete work; on both backends of one machine, in
one process, the same batches. Rows give the median over repeats of each backend's update
events per second and the GPU's over the CPU's. The CPU is measured under the library's
default kernel policy and with every kernel on one thread, and compared at the faster of the
two: on a machine of many cores a replay's batches are too small for many threads, whose
hand-off then costs more than the work it shares.

Both backends are measured warm: each stream is replayed at every batch size once on each
before it is timed (compiles, first-call setup), the CPU's split kernels then get the parfor
launchers that a process after the first finds cached (:mod:`hornet.core.launchers`,
compiled here: a fresh machine has none, and its first process would run those calls on
hornet's own threads), and the timed replays alternate CPU and GPU, repeat after repeat.
The replay reserves the graph's room for the stream before its first batch on both devices
(``Graph.reserve``).
"""
from __future__ import annotations

import argparse
import statistics
import time

import numba

from bench.common import DATA, write_table
from hornet.core import jit, launchers
from streams.reader import read_stream
from streams.replay import replay

NEEDS_GPU = True
STREAMS = ["CollegeMsg", "sx-mathoverflow-a2q", "soc-sign-bitcoinotc", "soc-sign-bitcoinalpha",
           "out.radoslaw_email_email"]


def _path(name: str):
    hits = sorted(DATA.glob(name + "*"))
    if not hits:
        raise SystemExit(f"bench replay_devices: no stream {name!r} in {DATA}")
    return hits[0]


#: the CPU's kernel policies a row measures (hornet.core.jit.parallel_policy): the library's
#: default, and every kernel on one thread
CPU_POLICIES = ("tiered", "never")


def _update_rates(path, batch_size: int, repeats: int) -> tuple[int, int, dict]:
    """(events, batches, {mode: median update events/s}) of ``repeats`` replays in each
    mode (the CPU under each of :data:`CPU_POLICIES`, the GPU), alternating."""
    rates = {**{"cpu " + p: [] for p in CPU_POLICIES}, "gpu": []}
    events = batches = 0
    for _ in range(repeats):
        for mode in rates:
            device, _, policy = mode.partition(" ")
            jit.parallel_policy = policy or "tiered"
            s = replay(path, batch_size=batch_size, device=device, algos="none").summary
            events, batches = s["events"], s["batches"]
            rates[mode].append(events / s["update_seconds"])
    jit.parallel_policy = "tiered"
    return events, batches, {m: statistics.median(r) for m, r in rates.items()}


def warm_up(path, batch_sizes) -> int:
    """Replay the stream at every batch size once on each device and CPU policy (untimed),
    then compile the CPU's missing parfor launchers here; returns how many were compiled."""
    from bench.tools.ab_trees import with_launchers
    for b in batch_sizes:
        for policy in CPU_POLICIES:
            jit.parallel_policy = policy
            replay(path, batch_size=b, device="cpu", algos="none")
        jit.parallel_policy = "tiered"
        replay(path, batch_size=b, device="gpu", algos="none")
    return with_launchers()


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
    # each stream read once (the replay of a table skips the text parsing; its batches and
    # update time are the same)
    paths = {name: read_stream(_path(name)) for name in a.streams}
    compiled, calls = 0, launchers.calls
    for name, path in paths.items():
        t = time.perf_counter()
        compiled += warm_up(path, a.batch_sizes)
        print(f"({name}: warm-up {time.perf_counter() - t:.1f} s)", flush=True)
        for b in a.batch_sizes:
            events, batches, rate = _update_rates(path, b, a.repeats)
            best = max(CPU_POLICIES, key=lambda p: rate["cpu " + p])
            cpu, gpu = rate["cpu " + best], rate["gpu"]
            rows.append([name, events, b, batches, f"{rate['cpu tiered']:.3g}",
                         f"{rate['cpu never']:.3g}", f"{cpu:.3g}", f"{gpu:.3g}",
                         round(gpu / cpu, 2)])
            print("|", " | ".join(map(str, rows[-1])), "|", flush=True)
    write_table("replay_devices", "Stream replay: GPU against CPU graph-update throughput",
                ["stream", "events", "batch", "batches", "CPU tiered events/s",
                 "CPU serial events/s", "CPU events/s (best)", "GPU events/s",
                 "GPU / CPU (best)"], rows,
                notes=(f"Directed graph, no window, no analytics; medians of {a.repeats} "
                       "replays per backend, CPU and GPU alternating in one process, after "
                       "an untimed replay of the stream at every batch size on each. The CPU "
                       "runs under the library's default kernel policy (tiered: large calls "
                       f"split over {numba.get_num_threads()} Numba threads, through the "
                       "parfor launchers a later process finds cached where the machine's "
                       f"load leaves them their cores: {compiled} compiled after the "
                       f"warm-up, {launchers.calls - calls} split calls ran through them) "
                       "and with every kernel on one thread (serial); the ratio takes the "
                       "faster of the two. "
                       "The replay reserves the graph's room for the stream before its "
                       "first batch on both (`Graph.reserve`). Events/s counts the replay's "
                       "graph update time only (inserts, deletes), compile time "
                       "excluded.\n"),
                device="gpu")


if __name__ == "__main__":
    main()
