"""The kernel list of a CPU replay: ``streams/data/replay_kernels.json``; with ``--device gpu``
the CUDA module list of a GPU replay: ``streams/data/replay_modules_gpu.json``.

    python3 -m bench.tools.kernel_list [--check] [--device gpu] [-- REPLAY ARGS...]

Runs ``hornet replay --device cpu`` (the shipped stream, or the replay arguments given after
``--``) in a fresh process with an empty kernel cache and no helper, recording every hornet
kernel it compiles (module, qualified name, argument types, nesting depth, compile CPU
seconds) in the order the compiles start (:func:`hornet.core.precompile.record_kernels`).
``hornet replay`` hands the list to its compile helper (:mod:`hornet.core.precompile`),
which shares out the compiles by their seconds. ``--device gpu`` (on a GPU machine) records
the CUDA modules a GPU replay loads (path inside the package, template instances, build
seconds in an empty CuPy cache), in order, and CuPy's own kernels it compiles
with their build seconds (``replay_cupy_kernels_gpu.json``, for that CuPy version);
``hornet replay --device gpu`` builds both in background threads, the longest first
(:func:`hornet.core.cuda.prebuild`, :func:`hornet.core.cuda.prebuild_cupy_kernels`). Rerun
after changing which kernels the replay compiles or their argument types, on a quiet machine;
``--check`` only says whether the list in the package names the same kernels in the same
order (exit status 1 if not).
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
MODULE_LIST = ROOT / "streams" / "data" / "replay_modules_gpu.json"
CUPY_LIST = ROOT / "streams" / "data" / "replay_cupy_kernels_gpu.json"

RECORDER = r'''
import json, sys
from hornet.core import precompile
from streams.cli import main
with precompile.record_kernels() as found:
    code = main(["replay", "--device", "cpu"] + json.loads(sys.argv[1]), tune=True,
                precompile=False)
json.dump({"code": code, "kernels": found}, open(sys.argv[2], "w"))
'''


MODULE_RECORDER = r'''
import json, os, sys, tempfile, time
os.environ["CUPY_CACHE_DIR"] = tempfile.mkdtemp(prefix="hornet-module-list-cupy-")
import hornet
from hornet.core import cuda, cupy_records

# each module's build seconds (its first kernel's look-up compiles it, in a cold cache)
seconds = {}
load_module = cuda.load_module


class Timed:
    def __init__(self, key, module):
        self.key, self.module = key, module

    def get_function(self, name):
        t = time.perf_counter()
        try:
            return self.module.get_function(name)
        finally:
            seconds[self.key] = seconds.get(self.key, 0.0) + time.perf_counter() - t

    def __getattr__(self, name):                 # get_global and the rest: the module's own
        return getattr(self.module, name)


cuda.load_module = lambda path, names=(): Timed((path, tuple(names)), load_module(path, names))

# CuPy's own kernels (elementwise, reductions) the replay compiles, in order, with their
# build seconds
from cupy.cuda import compiler
cupy_kernels, recorded = [], []
compile_module = compiler._compile_module_with_cache
install = cupy_records.cupy_install()


def recording(source, options=(), **kw):
    plain = kw.get("arch") is None and not kw.get("name_expressions") \
        and not kw.get("enable_cooperative_groups") and not kw.get("to_ltoir")
    t = time.perf_counter()
    try:
        return compile_module(source, options, **kw)
    finally:
        if plain and "// hornet headers" not in source:
            record = cupy_records.cupy_compile_record(source, options, kw.get("extra_source"),
                                              kw.get("backend", "nvrtc"),
                                              kw.get("jitify", False), install)
            if record not in recorded:
                recorded.append(record)
                cupy_kernels.append({**record, "seconds": round(time.perf_counter() - t, 2)})


compiler._compile_module_with_cache = recording
from streams.cli import main
code = main(["replay", "--device", "gpu"] + json.loads(sys.argv[1]), precompile=False)
root = os.path.dirname(os.path.abspath(hornet.__file__))
modules = [[os.path.relpath(path, root), list(names), round(seconds.get((path, names), 0.0), 2)]
           for path, names in cuda.loaded_modules]
json.dump({"code": code, "modules": modules, "cupy_kernels": cupy_kernels},
          open(sys.argv[2], "w"))
'''


def _replay(recorder: str, replay_args: list[str], out: Path, env: dict) -> dict:
    """Run one recording replay in a fresh process; its JSON result, or exit with the
    replay's own error output when it fails."""
    proc = subprocess.run([sys.executable, "-c", recorder, json.dumps(replay_args), str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    result = json.loads(out.read_text()) if proc.returncode == 0 and out.exists() else None
    if result is None or result["code"] != 0:
        code = proc.returncode if result is None else result["code"]
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-20:])
        raise SystemExit(f"bench.tools.kernel_list: the replay failed ({code})\n{tail}")
    return result


def record_modules(replay_args: list[str]) -> list:
    """The CUDA modules one GPU replay (fresh process, empty CuPy kernel cache) loads, in
    order: ``[path inside the package, template instances, build seconds]``; and CuPy's own
    kernels it compiles, in order (:func:`hornet.core.cupy_records.cupy_compile_record`)."""
    with tempfile.TemporaryDirectory(prefix="hornet-module-list-") as tmp:
        out = Path(tmp) / "modules.json"
        # every module compiled (not read from the shipped cubins), so that its seconds count
        env = {**os.environ, "PYTHONPATH": str(ROOT), "HORNET_CUBINS": "0"}
        result = _replay(MODULE_RECORDER, replay_args, out, env)
        return result["modules"], result["cupy_kernels"]


def record(replay_args: list[str]) -> list:
    """The kernels one cold CPU replay (fresh process, empty cache) compiles, in order."""
    with tempfile.TemporaryDirectory(prefix="hornet-kernel-list-") as tmp:
        out = Path(tmp) / "kernels.json"
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        env.update(PYTHONPATH=str(ROOT), HORNET_CACHE_DIR=str(Path(tmp) / "cache"),
                   HORNET_LAUNCHERS="never")          # no launcher compile left behind
        return _replay(RECORDER, replay_args, out, env)["kernels"]


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    replay_args = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.kernel_list",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="compare with the list in the package instead of writing it")
    ap.add_argument("--device", choices=["cpu", "gpu"], default="cpu",
                    help="gpu: the CUDA modules of a GPU replay (on a GPU machine)")
    a = ap.parse_args(argv)
    if a.device == "gpu":
        modules, cupy_kernels = record_modules(replay_args)
        command = " ".join(["hornet", "replay", "--device", "gpu"] + replay_args)
        text = ('{"command": ' + json.dumps(command) + ',\n "modules": [\n'
                + ",\n".join("  " + json.dumps(m) for m in modules) + "\n]}\n")
        if a.check:
            try:
                listed = json.loads(MODULE_LIST.read_text())["modules"]
            except (OSError, ValueError, KeyError):
                listed = None
            same = listed is not None and [m[:2] for m in listed] == [m[:2] for m in modules]
            print(f"{MODULE_LIST}: {'current' if same else 'out of date'} "
                  f"({len(modules)} modules)")
            raise SystemExit(0 if same else 1)
        MODULE_LIST.write_text(text)
        import cupy
        CUPY_LIST.write_text(json.dumps({"command": command, "cupy": cupy.__version__,
                                         "kernels": cupy_kernels}, indent=0) + "\n")
        print(f"{MODULE_LIST}: {len(modules)} modules; {CUPY_LIST}: {len(cupy_kernels)} "
              "CuPy kernels")
        return
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
