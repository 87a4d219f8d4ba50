"""hornet.core.cuda.prebuild: CUDA modules compiled in background threads before their first
use, and the GPU replay's module list."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import HAS_GPU

ROOT = Path(__file__).resolve().parents[1]

KERNEL = textwrap.dedent('''
    extern "C" __global__ void add_{n}(int* a, int n) {{
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) a[i] += {n};
    }}
''')

# build the listed modules in the background, then use them; report what was built and the
# results
RUN = textwrap.dedent('''
    import json, os, sys
    import cupy as cp
    from hornet.core import cuda
    paths = json.loads(sys.argv[1])
    threads = cuda.prebuild([(p, ()) for p in paths], workers=2)
    started = len(threads)
    # the third module waits for a free thread: queued, so "building" from the start
    queued = cuda.building(paths[2]) if started else None
    out = []
    for n, p in enumerate(paths, start=1):
        a = cp.zeros(5, dtype=cp.int32)
        cuda.function(p, f"add_{n}")((1,), (32,), (a, cp.int32(5)))
        out.append(int(a.sum()))
    cuda.finish_prebuild()
    done = not any(t.is_alive() for t in threads) and not any(map(cuda.building, paths))
    markers = sorted(os.listdir(os.path.join(os.environ["HORNET_CACHE_DIR"], "cuda")))
    print("RESULT " + json.dumps({"started": started, "sums": out, "markers": len(markers),
                                  "queued": queued, "done": done}))
''')


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")
def test_prebuild_compiles_in_the_background_once(tmp_path):
    paths = []
    for n in (1, 2, 3):
        p = tmp_path / f"mod{n}.cu"
        p.write_text(KERNEL.format(n=n))
        paths.append(str(p))
    env = {k: v for k, v in os.environ.items() if k not in ("HORNET_CACHE_DIR",
                                                             "CUPY_CACHE_DIR")}
    env.update(HORNET_CACHE_DIR=str(tmp_path / "cache"),
               CUPY_CACHE_DIR=str(tmp_path / "cupy"), PYTHONPATH=str(ROOT))

    def run() -> dict:
        out = subprocess.run([sys.executable, "-c", RUN, json.dumps(paths)], env=env,
                             capture_output=True, text=True, timeout=600, check=True)
        return json.loads(out.stdout.split("RESULT ")[1])

    first = run()
    # two threads for three modules; each kernel waits for its module's build
    assert first == {"started": 2, "sums": [5, 10, 15], "markers": 3, "queued": True,
                     "done": True}
    second = run()
    assert second == {"started": 0, "sums": [5, 10, 15], "markers": 3, "queued": None,
                      "done": True}


def test_replay_module_list_names_package_files():
    import hornet
    from streams.cli import REPLAY_MODULES
    root = Path(hornet.__file__).resolve().parent
    listed = json.loads(Path(REPLAY_MODULES).read_text())["modules"]
    assert len(listed) >= 5
    for path, names, *seconds in listed:
        assert (root / path).is_file() and path.endswith(".cu"), path
        assert all(isinstance(n, str) for n in names)
        assert all(isinstance(t, (int, float)) and t >= 0 for t in seconds)


@pytest.mark.skipif(HAS_GPU, reason="checks the message of a machine without a GPU")
def test_gpu_replay_without_a_gpu_fails_with_the_usual_message(capsys):
    from streams.cli import main
    assert main(["replay", "--device", "gpu"], precompile=True) == 1
    err = capsys.readouterr().err
    assert "device 'gpu'" in err and "CuPy" in err
