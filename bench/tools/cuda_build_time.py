"""Build seconds of one CUDA module (NVRTC through CuPy, as a first run pays) in an empty cache.

    python3 -m bench.tools.cuda_build_time [--trees . /tmp/base] [--module algos/bfs/dynamic.cu]
        [--instances "dbfs_update_kernel<3, false>" ...] [--repeats 1]

Each build is a fresh Python process with the package imported from the tree and
``CUPY_CACHE_DIR`` pointing at a new, empty folder (``--cache``: one folder for all, kept for
a later run that uses the modules), timing
:func:`hornet.core.cuda.build_module` of the module with the template instances (one module
per instance, as the replay builds them). The trees alternate, repeat after repeat, so a
shared machine's drift falls on both alike. Prints one line a build and the medians.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

SCRIPT = """
import os, sys, time
from hornet.core import cuda
import cupy
path = os.path.join(os.path.dirname(cuda.HEADERS), sys.argv[1])
cupy.zeros(1).sum()           # the CUDA context outside the timing
t = time.perf_counter()
cuda.build_module(path, tuple(sys.argv[2:]))
t = time.perf_counter() - t
try:
    version = ".".join(map(str, cupy.cuda.nvrtc.getVersion()))
except Exception:
    version = "?"
print(t, version)
"""


def build_seconds(tree: str, module: str, names: list, cache: str | None = None) -> tuple:
    """(seconds, NVRTC version) of one build in a fresh process and empty caches (``cache``:
    CuPy's cache folder, kept)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(tree), HORNET_CUBINS="0",
                   CUPY_CACHE_DIR=cache or os.path.join(tmp, "cupy"),
                   HORNET_CACHE_DIR=os.path.join(tmp, "hornet"))
        out = subprocess.run([sys.executable, "-c", SCRIPT, module, *names], env=env,
                             check=True, capture_output=True, text=True, cwd=tmp).stdout
    seconds, version = out.split(maxsplit=1)
    return float(seconds), version.strip()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", nargs="+", default=["."])
    ap.add_argument("--module", default="algos/bfs/dynamic.cu",
                    help="path inside the package")
    ap.add_argument("--instances", nargs="*", default=["dbfs_update_kernel<3, false>"],
                    help="one module each (none: the module without name expressions)")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--cache", default=None,
                    help="one CuPy cache folder for every build, kept for later runs (each "
                         "tree's module is built once there: --repeats 1)")
    a = ap.parse_args(argv)
    if a.cache and a.repeats != 1:
        ap.error("--cache needs --repeats 1")
    groups = [[name] for name in a.instances] or [[]]
    times = {}
    for _ in range(a.repeats):
        for names in groups:
            for tree in a.trees:
                s, version = build_seconds(tree, a.module, names, a.cache)
                times.setdefault((tree, tuple(names)), []).append(s)
                print(f"{tree}  {a.module} {names}: {s:.2f} s (NVRTC {version})", flush=True)
    for (tree, names), ts in times.items():
        print(f"median {tree}  {list(names)}: {statistics.median(ts):.2f} s "
              f"({', '.join(f'{t:.2f}' for t in ts)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
