"""Which CUDA compiles a first GPU replay does, and in which thread.

    python3 -m bench.tools.replay_compiles_gpu [-- REPLAY ARGS...]

Runs ``hornet replay --device gpu`` (the shipped stream, or the replay arguments given after
``--``) with its background builds, as a first run after installing does, in a fresh process
with empty kernel caches, and lists every NVRTC compile CuPy does in it: start second, build
seconds, thread (``MainThread``: the replay's own; ``hornet-cuda-build``: hornet's modules,
``hornet-cupy-build``: CuPy's own kernels, built ahead), whose kernel (hornet's module or
CuPy's) and its kernel names. The compiles in the replay's thread are those the background
builds did not take off it. Prints the list and a summary per thread; writes nothing.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import ROOT

RECORDER = r'''
import json, re, sys, threading, time
from cupy.cuda import compiler
name = ("_compile_using_nvrtc_no_warning" if hasattr(compiler, "_compile_using_nvrtc_no_warning")
        else "compile_using_nvrtc")
compile_nvrtc, start, compiles = getattr(compiler, name), time.perf_counter(), []


def timed(source, *args, **kw):
    t = time.perf_counter()
    try:
        return compile_nvrtc(source, *args, **kw)
    finally:
        compiles.append([round(t - start, 2), round(time.perf_counter() - t, 2),
                         threading.current_thread().name,
                         "hornet" if "// hornet headers" in source else "cupy",
                         re.findall(r"__global__\s+void\s+(\w+)", source)[:2]])


setattr(compiler, name, timed)
from streams.cli import main
code = main(["replay", "--device", "gpu"] + json.loads(sys.argv[1]), precompile=True)
json.dump({"code": code, "wall": time.perf_counter() - start, "compiles": compiles},
          open(sys.argv[2], "w"))
'''


def record(replay_args: list[str]) -> dict:
    with tempfile.TemporaryDirectory(prefix="hornet-replay-compiles-") as tmp:
        out = Path(tmp) / "compiles.json"
        env = {k: v for k, v in os.environ.items() if k not in ("HORNET_CACHE_DIR",
                                                                 "CUPY_CACHE_DIR")}
        env.update(PYTHONPATH=str(ROOT), HORNET_CACHE_DIR=str(Path(tmp) / "cache"),
                   CUPY_CACHE_DIR=str(Path(tmp) / "cupy"))
        subprocess.run([sys.executable, "-c", RECORDER, json.dumps(replay_args), str(out)],
                       cwd=ROOT, env=env, check=True, capture_output=True, text=True)
        return json.loads(out.read_text())


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    result = record(argv[argv.index("--") + 1:] if "--" in argv else [])
    print(f"replay exit {result['code']}, {result['wall']:.1f} s from the start of main()")
    print("start s | seconds | thread | kind | kernels")
    for row in result["compiles"]:
        print(f"{row[0]:7.2f} | {row[1]:5.2f} | {row[2]} | {row[3]} | {' '.join(row[4])}")
    summary: dict = {}
    for _, seconds, thread, kind, _ in result["compiles"]:
        count, total = summary.get((thread, kind), (0, 0.0))
        summary[(thread, kind)] = (count + 1, total + seconds)
    for (thread, kind), (count, total) in sorted(summary.items()):
        print(f"{thread} {kind}: {count} compiles, {total:.1f} s")


if __name__ == "__main__":
    main()
