"""The kernel list of a CPU replay: ``streams/data/replay_kernels.json``.

    python3 -m bench.tools.kernel_list [--check] [-- REPLAY ARGS...]

Runs ``hornet replay --device cpu`` (the shipped stream, or the replay arguments given after
``--``) in a fresh process with an empty kernel cache and no helper, recording every hornet
kernel it compiles (module, qualified name, argument types, nesting depth, compile CPU
seconds) in the order the compiles start (:func:`hornet.core.precompile.record_kernels`).
``hornet replay`` hands the list to its compile helper (:mod:`hornet.core.precompile`),
which shares out the compiles by their seconds. Rerun after changing which kernels the
replay compiles or their argument types, on a quiet machine; ``--check`` only says whether
the list in the package names the same kernels in the same order (exit status 1 if not).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import ROOT

LIST = ROOT / "streams" / "data" / "replay_kernels.json"

RECORDER = r'''
import json, sys
from hornet.core import precompile
from streams.cli import main
with precompile.record_kernels() as found:
    code = main(["replay", "--device", "cpu"] + json.loads(sys.argv[1]), tune=True,
                precompile=False)
json.dump({"code": code, "kernels": found}, open(sys.argv[2], "w"))
'''


def record(replay_args: list[str]) -> list:
    """The kernels one cold CPU replay (fresh process, empty cache) compiles, in order."""
    with tempfile.TemporaryDirectory(prefix="hornet-kernel-list-") as tmp:
        out = Path(tmp) / "kernels.json"
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        env.update(PYTHONPATH=str(ROOT), HORNET_CACHE_DIR=str(Path(tmp) / "cache"))
        subprocess.run([sys.executable, "-c", RECORDER, json.dumps(replay_args), str(out)],
                       cwd=ROOT, env=env, check=True, capture_output=True, text=True)
        result = json.loads(out.read_text())
        if result["code"] != 0:
            raise SystemExit(f"bench.tools.kernel_list: the replay failed ({result['code']})")
        return result["kernels"]


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    replay_args = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.kernel_list",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="compare with the list in the package instead of writing it")
    a = ap.parse_args(argv)
    kernels = record(replay_args)
    command = " ".join(["hornet", "replay", "--device", "cpu"] + replay_args)
    text = ('{"command": ' + json.dumps(command) + ',\n "kernels": [\n'
            + ",\n".join("  " + json.dumps(k) for k in kernels) + "\n]}\n")
    if a.check:
        try:
            current = [e[:4] for e in json.loads(LIST.read_text())["kernels"]]
        except (OSError, ValueError, KeyError, TypeError):
            current = None
        same = current == [k[:4] for k in kernels]
        print(f"{LIST}: {'current' if same else 'out of date'} ({len(kernels)} kernels)")
        raise SystemExit(0 if same else 1)
    LIST.write_text(text)
    print(f"{LIST}: {len(kernels)} kernels, "
          f"{sum(1 for k in kernels if k[3] == 1)} compiled from Python")


if __name__ == "__main__":
    main()
