"""Where the compile time of a cold start goes: Numba's compile seconds per kernel.

    python3 -m bench.tools.compile_profile [--top 20] [--name cold_start_kernels_cpu]
        [--baseline REV] [-- REPLAY ARGS...]

Runs ``hornet replay --device cpu`` (the shipped stream, or the replay arguments given after
``--``) in a fresh process with an empty kernel cache, listening to Numba's ``numba:compile``
events. Per kernel (Python function): its own compile CPU seconds (the kernels it calls, which
Numba compiles inside its compile, left out: they have rows of their own), the seconds with
them, how many type specializations the run compiled, and the argument positions where
those specializations differ. Writes the ``--top`` rows to ``bench/results/<name>.md``.
``--baseline REV`` profiles that revision too (``git archive``, as ``python3 -m bench
cold_start`` does), in the same run, and adds its seconds per kernel as columns.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import ROOT, write_table

PROFILER = r'''
import json, sys, time
from collections import defaultdict
from numba.core import event

stack, own, total, sigs = [], defaultdict(float), defaultdict(float), defaultdict(set)


class Listener(event.Listener):
    def on_start(self, ev):
        f = ev.data["dispatcher"].py_func
        stack.append([f"{f.__module__}.{f.__qualname__}", time.process_time(), 0.0,
                      tuple(str(a) for a in ev.data["args"])])

    def on_end(self, ev):
        name, t0, inner, args = stack.pop()
        dt = time.process_time() - t0
        own[name] += dt - inner
        total[name] += dt
        sigs[name].add(args)
        if stack:
            stack[-1][2] += dt


event.register("numba:compile", Listener())
t0 = time.process_time()
from streams.cli import main
sys.argv = ["hornet", "replay", "--device", "cpu"] + json.loads(sys.argv[1])
try:
    main()
except SystemExit:
    pass
json.dump({"cpu": time.process_time() - t0,
           "kernels": {n: [own[n], total[n], sorted(sigs[n])] for n in own}},
          open(OUT, "w"))
'''


def profile(replay_args: list[str], tree: Path = ROOT) -> dict:
    """Per-kernel compile seconds of one cold replay (a fresh process, an empty cache) of the
    package in ``tree`` (default: this checkout)."""
    with tempfile.TemporaryDirectory(prefix="hornet-compile-") as tmp:
        out = Path(tmp) / "profile.json"
        env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR",)}
        env.update(PYTHONPATH=str(tree), HORNET_CACHE_DIR=str(Path(tmp) / "cache"),
                   NUMBA_CACHE_DIR=str(Path(tmp) / "cache" / "numba-own"))
        code = PROFILER.replace("OUT", repr(str(out)))
        args = replay_args + ["--report", str(Path(tmp) / "report.json")]
        subprocess.run([sys.executable, "-c", code, json.dumps(args)], cwd=tree, env=env,
                       check=True, capture_output=True, text=True)
        return json.loads(out.read_text())


def _differing(sigs: list) -> str:
    """The argument positions (0-based) whose types differ between the specializations."""
    if len(sigs) < 2 or len({len(s) for s in sigs}) != 1:
        return ""
    return ", ".join(f"{i}: {' / '.join(sorted(set(col)))}" for i, col in enumerate(zip(*sigs))
                     if len(set(col)) > 1)


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    replay_args = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.compile_profile",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--name", default="cold_start_kernels_cpu")
    ap.add_argument("--baseline", metavar="REV", default=None,
                    help="also profile this git revision, in the same run")
    a = ap.parse_args(argv)
    base = None
    if a.baseline:
        from bench.cold_start import _checkout
        with tempfile.TemporaryDirectory(prefix="hornet-compile-base-") as tmp:
            base = profile(replay_args, _checkout(a.baseline, Path(tmp)))
    result = profile(replay_args)
    kernels = result["kernels"]
    names = set(kernels) | (set(base["kernels"]) if base else set())
    ranked = sorted(names, key=lambda n: -max(kernels.get(n, [0])[0],
                                              base["kernels"].get(n, [0])[0] if base else 0))
    header = ["kernel", "own s", "with callees s", "specializations", "differing arguments"]
    rows = []
    for name in ranked[:a.top]:
        own, whole, sigs = kernels.get(name, [0.0, 0.0, []])
        row = [name.removeprefix("hornet."), round(own, 2), round(whole, 2), len(sigs),
               _differing(sigs)]
        if base:
            b_own, b_whole, _ = base["kernels"].get(name, [0.0, 0.0, []])
            row[1:1] = [round(b_own, 2), round(b_whole, 2)]
        rows.append(row)
    if base:
        header[1:1] = [f"{a.baseline} own s", f"{a.baseline} with callees s"]

    def summary(r: dict, label: str) -> str:
        own_sum = sum(v[0] for v in r["kernels"].values())
        return (f"{label}: {r['cpu']:.1f} CPU s in all, {own_sum:.1f} s of it compiling "
                f"{len(r['kernels'])} kernels")
    lines = ([summary(base, a.baseline)] if base else []) + [summary(result, "this checkout")]
    write_table(a.name, "Compile CPU seconds per kernel of a cold `hornet replay --device cpu`",
                header, rows,
                notes=(f"One cold replay (empty kernel cache) of "
                       f"{' '.join(replay_args) or 'the shipped stream'} per checkout. "
                       + "; ".join(lines) + " (Numba's own helpers included; 0: not compiled "
                       "by that checkout). Own s: the kernel's compile without the kernels "
                       "compiled inside it; with callees s: with them. Top "
                       f"{a.top} by own seconds. CPU seconds of the process (a shared machine "
                       "stretches wall time, not these much).\n"))


if __name__ == "__main__":
    main()
