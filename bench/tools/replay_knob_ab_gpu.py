"""Same-process A/B of module settings on stream replays' update throughput (the figure of
``bench replay_devices``).

    python3 -m bench.tools.replay_knob_ab_gpu --knob streams.weighted_batch:NAME=0,1
        [--streams ...] [--batch-sizes 1000 10000] [--rounds 5] [--device gpu] [--cpu]

Each stream is read once (``streams.reader.read_stream``) and replayed as ``bench
replay_devices`` replays it (directed, no window, no analytics: ``replay(..., algos="none")``),
once per value of the setting untimed, then ``--rounds`` times per value in alternating order.
Per stream and batch size: the median ``update_seconds`` per batch of each value, its ratio to
the first value's (median of the per-round ratios), and with ``--cpu`` the CPU backend's
serial figure on the same replay (median of three) and each value's GPU / CPU. Every value
must end with the same edge count.
"""
from __future__ import annotations

import argparse
import importlib
import statistics

from bench.replay_devices import STREAMS, _path
from streams.reader import read_stream
from streams.replay import replay


def _parse(knob: str):
    where, _, values = knob.partition("=")
    module, _, name = where.partition(":")
    mod = importlib.import_module(module)
    while "." in name:                       # a class attribute: Class.NAME
        owner, _, name = name.partition(".")
        mod = getattr(mod, owner)
    original = getattr(mod, name)
    kind = type(original)
    vals = [kind(int(v)) if kind in (bool, int) else kind(v) for v in values.split(",")]
    return mod, name, vals


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.replay_knob_ab_gpu",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--knob", required=True, action="append",
                    help="module:NAME=value,value,... (NAME may be Class.NAME); given "
                         "several times, the settings change together (their i-th values)")
    ap.add_argument("--streams", nargs="+", default=STREAMS)
    ap.add_argument("--batch-sizes", nargs="+", type=int, default=[1000, 10000])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--device", default="gpu")
    ap.add_argument("--cpu", action="store_true")
    a = ap.parse_args(argv)
    from hornet.core import jit
    knobs = [_parse(k) for k in a.knob]
    originals = [getattr(m, n) for m, n, _ in knobs]
    if len({len(v) for _, _, v in knobs}) != 1:
        raise SystemExit("every --knob needs as many values")
    name = "+".join(n for _, n, _ in knobs)
    vals = list(range(len(knobs[0][2]))) if len(knobs) > 1 else knobs[0][2]

    def apply(v) -> None:
        for (m, n, vs), orig in zip(knobs, originals):
            setattr(m, n, vs[v] if len(knobs) > 1 else v)

    print(f"| stream | batch | batches | {' | '.join(f'{name}={v} us/batch' for v in vals)} | "
          f"ratios to {vals[0]} | CPU us/batch | GPU/CPU |")
    print("|---" * (6 + len(vals)) + "|")
    try:
        for sname in a.streams:
            table = read_stream(_path(sname))
            for b in a.batch_sizes:
                times = {v: [] for v in vals}
                edges = {}
                ratios = {v: [] for v in vals}
                nb = 0
                for r in range(a.rounds + 1):
                    order = vals if r % 2 else vals[::-1]
                    got = {}
                    for v in order:
                        apply(v)
                        s = replay(table, batch_size=b, device=a.device, algos="none").summary
                        nb = s["batches"]
                        got[v] = s["update_seconds"] / nb * 1e6
                        edges[v] = s["edges"]
                    if r:
                        for v in vals:
                            times[v].append(got[v])
                            ratios[v].append(got[v] / got[vals[0]])
                if len(set(edges.values())) != 1:
                    raise SystemExit(f"{sname} {b}: edge counts differ {edges}")
                cpu = float("nan")
                if a.cpu:
                    for (m, n, _), orig in zip(knobs, originals):
                        setattr(m, n, orig)
                    jit.parallel_policy = "never"
                    cs = [replay(table, batch_size=b, device="cpu", algos="none").summary
                          for _ in range(4)][1:]
                    jit.parallel_policy = "tiered"
                    cpu = statistics.median(c["update_seconds"] / nb * 1e6 for c in cs)
                med = {v: statistics.median(t) for v, t in times.items()}
                cells = " | ".join(f"{med[v]:.0f} ({min(times[v]):.0f}-{max(times[v]):.0f})"
                                   for v in vals)
                rat = " ".join(f"{statistics.median(ratios[v]):.2f}" for v in vals[1:])
                gc = " ".join(f"{cpu / med[v]:.2f}" for v in vals)
                print(f"| {sname} | {b} | {nb} | {cells} | {rat} | {cpu:.0f} | {gc} |",
                      flush=True)
    finally:
        for (m, n, _), orig in zip(knobs, originals):
            setattr(m, n, orig)


if __name__ == "__main__":
    main()
