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

from hornet.core import cupy_records

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


def test_cupy_compile_record_round_trip():
    """A recorded CuPy compile holds on another install: the install's compiler options
    (its folders) and its headers' text become placeholders and come back as the other
    install's."""
    here = (("-I/site/a/cupy/_core/include/cub", "--std=c++17", "-I/site/a/cuda/include"),
            "// header a")
    there = (("-I/site/b/cupy/_core/include/cub", "--std=c++17", "-I/site/b/cuda/include"),
             "// header b")
    record = cupy_records.cupy_compile_record(
        'extern "C" __global__ void k() {}',
        ("-I/site/a/cupy/_core/include/cub", "-DFIRST_PASS=1", "--std=c++17",
         "-I/site/a/cuda/include"), "// header a", "nvrtc", False, here)
    assert json.loads(json.dumps(record)) == record
    assert "/site/" not in json.dumps(record) and "header a" not in json.dumps(record)
    source, options, extra, backend, jitify = cupy_records.cupy_compile_arguments(record, there)
    assert options == ("-I/site/b/cupy/_core/include/cub", "-DFIRST_PASS=1", "--std=c++17",
                       "-I/site/b/cuda/include")
    assert (source, extra, backend, jitify) == (record["source"], "// header b", "nvrtc", False)
    other = cupy_records.cupy_compile_record("s", (), "other text", "nvrtc", True, here)
    assert cupy_records.cupy_compile_arguments(other, there)[2:] == ("other text", "nvrtc", True)


def test_replay_cupy_kernel_list_form():
    """CuPy's kernels of the GPU replay: recorded for one CuPy version, with nothing of the
    install that recorded them (its folders are placeholders), and not hornet's modules."""
    from streams.cli import REPLAY_CUPY_KERNELS
    listed = json.loads(Path(REPLAY_CUPY_KERNELS).read_text())
    assert isinstance(listed["cupy"], str) and listed["kernels"]
    for record in listed["kernels"]:
        assert set(record) - {"seconds"} == {"source", "options", "extra_source", "backend",
                                             "jitify"}
        assert not any("/" in o for o in record["options"]), record["options"]
        assert "// hornet headers" not in record["source"]       # hornet's modules: the other list


def test_prebuild_cupy_kernels_builds_each_record_once_with_this_install(tmp_path,
                                                                        monkeypatch):
    """Without a GPU, against a stand-in for CuPy's compiler: every record is compiled once
    with this install's options and headers in place of the placeholders, a record that
    fails is skipped, and only a list built in full leaves the marker that makes the next
    process skip it."""
    import types
    from hornet.core import cuda
    calls = []

    def compile_module(source, options, *, extra_source, backend, jitify):
        if source == "bad":
            raise RuntimeError("does not compile here")
        calls.append((source, options, extra_source, backend, jitify))

    fake = types.ModuleType("cupy")
    fake.__version__ = "0.test"
    fake.cuda = types.ModuleType("cupy.cuda")
    fake.cuda.Device = _Device
    fake.cuda.compiler = types.SimpleNamespace(_compile_module_with_cache=compile_module)
    core = types.SimpleNamespace(
        assemble_cupy_compiler_options=lambda options: ("-I/here/cub", "--std=c++17"),
        _get_header_source=lambda: "// headers here")
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setitem(sys.modules, "cupy.cuda", fake.cuda)
    monkeypatch.setitem(sys.modules, "cupy.cuda.compiler", fake.cuda.compiler)
    monkeypatch.setitem(sys.modules, "cupy._core", types.SimpleNamespace(core=core))
    monkeypatch.setitem(sys.modules, "cupy._core.core", core)
    monkeypatch.setattr(cuda, "cupy", fake)
    monkeypatch.setenv("HORNET_CACHE_DIR", str(tmp_path / "hornet"))
    monkeypatch.setenv("CUPY_CACHE_DIR", str(tmp_path / "cupy"))
    there = ("-I/there/cub", "--std=c++17"), "// headers there"
    records = [cupy_records.cupy_compile_record(f"k{i}", ("-I/there/cub", f"-DK={i}", "--std=c++17"),
                                        "// headers there", "nvrtc", False, there)
               for i in range(5)]
    cuda.prebuild_cupy_kernels(records, workers=2)
    cuda.finish_prebuild()
    assert sorted(calls) == [(f"k{i}", ("-I/here/cub", f"-DK={i}", "--std=c++17"),
                              "// headers here", "nvrtc", False) for i in range(5)]
    assert cuda.prebuild_cupy_kernels(records) == []           # the marker: built already
    calls.clear()
    failing = records + [dict(records[0], source="bad")]
    cuda.prebuild_cupy_kernels(failing, workers=3)
    cuda.finish_prebuild()
    assert len(calls) == 5
    assert len(cuda.prebuild_cupy_kernels(failing, workers=3)) == 3   # no marker: again
    cuda.finish_prebuild()


class _Device:
    """A stand-in for ``cupy.cuda.Device()``."""
    id, compute_capability = 0, "90"

    def __init__(self, device: int = 0):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# record CuPy's compiles of a new elementwise kernel into one empty cache folder, or build
# them from such records into another with prebuild_cupy_kernels and then call the kernel;
# report the cache files, and whether the call wrote or replaced any
CUPY_RUN = textwrap.dedent('''
    import json, os, sys
    import cupy
    from cupy.cuda import compiler
    from hornet.core import cuda, cupy_records
    cache = os.environ["CUPY_CACHE_DIR"]
    kernel = cupy.ElementwiseKernel("T x", "T y", "y = x * %s + 7" % sys.argv[2],
                                    "hornet_prebuild_check")
    x = cupy.arange(5, dtype=cupy.int64)


    def files():
        return {n: (s.st_ino, s.st_mtime_ns) for n in os.listdir(cache)
                if n.endswith(".cubin") for s in [os.stat(os.path.join(cache, n))]}


    records, started = [], None
    if sys.argv[1] == "record":
        install, original = cupy_records.cupy_install(), compiler._compile_module_with_cache

        def recording(source, options=(), **kw):
            records.append(cupy_records.cupy_compile_record(
                source, options, kw.get("extra_source"), kw.get("backend", "nvrtc"),
                kw.get("jitify", False), install))
            return original(source, options, **kw)

        compiler._compile_module_with_cache = recording
    else:
        threads = cuda.prebuild_cupy_kernels(json.loads(sys.argv[3]))
        started = len(threads)
        cuda.finish_prebuild()
    before = files()
    y = kernel(x).get().tolist()
    print("RESULT " + json.dumps({"y": y, "records": records, "files": sorted(files()),
                                  "call_wrote": files() != before, "started": started}))
''')


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")
def test_cupy_kernel_prebuilt_into_the_file_its_first_call_reads(tmp_path):
    """An elementwise kernel's compile, recorded where CuPy compiles it (one process, one
    empty cache folder), built again by ``prebuild_cupy_kernels`` in another process into
    another empty folder, writes the very cache file (CuPy's key: source, options, headers,
    compiler) that the kernel's first call there reads: the call compiles nothing. A later
    process with that cache builds nothing again."""
    factor = str(os.getpid())

    def run(mode: str, folder: str, *extra: str) -> dict:
        env = {k: v for k, v in os.environ.items() if k not in ("CUPY_CACHE_DIR",
                                                                 "HORNET_CACHE_DIR")}
        env.update(CUPY_CACHE_DIR=str(tmp_path / folder), PYTHONPATH=str(ROOT),
                   HORNET_CACHE_DIR=str(tmp_path / f"hornet-{folder}"))
        out = subprocess.run([sys.executable, "-c", CUPY_RUN, mode, factor, *extra], env=env,
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-3000:]
        return json.loads(out.stdout.split("RESULT ")[1])

    expected = [x * int(factor) + 7 for x in range(5)]
    first = run("record", "first")
    assert first["y"] == expected and first["call_wrote"]
    assert len(first["records"]) == 1 and "hornet_prebuild_check" in first["records"][0]["source"]
    assert not any("/" in o for o in first["records"][0]["options"])
    second = run("prebuild", "second", json.dumps(first["records"]))
    assert second["y"] == expected and not second["call_wrote"] and second["started"] == 1
    assert second["files"] == first["files"]
    again = run("prebuild", "second", json.dumps(first["records"]))
    assert again["y"] == expected and not again["call_wrote"] and again["started"] == 0
