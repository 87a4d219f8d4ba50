"""hornet.core.cubins: the shipped cubins of hornet's CUDA modules, used only for the source,
headers, options and toolchain they were built from (a module whose key or toolchain differs
compiles with NVRTC as without them)."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import types
import zipfile
from pathlib import Path

import pytest

from conftest import HAS_GPU

ROOT = Path(__file__).resolve().parents[1]


def test_key_follows_what_decides_the_binary(monkeypatch, tmp_path):
    from hornet.core import cubins
    path = os.path.join(cubins.ROOT, "core", "gather.cu")
    options = ("-std=c++17", f"-I{cubins.ROOT}/core")
    code = "__global__ void k() {}\n// hornet headers 0123\n"
    base = cubins.key(path, code, options, ("k<int>",))
    assert len(base) == 32
    assert cubins.key(path, code, options, ("k<int>",)) == base
    assert cubins.key(path, code.replace("k()", "k2()"), options, ("k<int>",)) != base
    assert cubins.key(path, code.replace("0123", "0124"), options, ("k<int>",)) != base
    assert cubins.key(path, code, options, ("k<long>",)) != base
    assert cubins.key(path, code, options, ()) != base
    assert cubins.key(path, code, options + ("-DX",), ("k<int>",)) != base
    assert cubins.key(path + "x", code, options, ("k<int>",)) != base
    # another install folder of the same package: the same key
    other = str(tmp_path / "site" / "hornet")
    monkeypatch.setattr(cubins, "ROOT", other)
    assert cubins.key(os.path.join(other, "core", "gather.cu"), code,
                      ("-std=c++17", f"-I{other}/core"), ("k<int>",)) == base


TOOLCHAIN = {"arch": "90", "nvrtc": [13, 0], "cupy": "14.2"}


class _Raw:
    """Stand-in of ``cupy.RawModule``: records how it was made."""

    made: list = []
    fail_path = False

    def __init__(self, code=None, path=None, options=(), name_expressions=None):
        self.code, self.path = code, path
        _Raw.made.append("path" if path else "code")

    def compile(self):
        if self.path and _Raw.fail_path:
            raise RuntimeError("CUDA_ERROR_INVALID_IMAGE")

    def get_function(self, name):
        return name

    def get_global(self, name):
        return ("global", name)


class _Device:
    compute_capability = "90"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


FAKE_CUPY = types.SimpleNamespace(RawModule=_Raw, __version__="14.2.0",
                                  cuda=types.SimpleNamespace(Device=_Device))


def _archive(where: Path, modules: list, toolchain: dict = TOOLCHAIN) -> Path:
    """An archive holding ``modules``: ``(path, name_expressions, {name: lowered}, bytes)``,
    keyed by their sources as they are now."""
    from hornet.core import cubins, cuda
    index = {"format": cubins.FORMAT, "arch": toolchain["arch"],
             "nvrtc": toolchain["nvrtc"], "cupy": toolchain["cupy"] + ".0", "modules": {}}
    out = where / "cubins.zip"
    with zipfile.ZipFile(out, "w") as z:
        for path, names, lowered, data in modules:
            code, options = cuda.module_source(str(path))
            key = cubins.key(str(path), code, options, names)
            digest = hashlib.sha256(data).hexdigest()[:16]
            index["modules"][key] = {"path": "x", "names": lowered, "file": f"{key}.cubin",
                                     "sha256": digest, "bytes": len(data)}
            z.writestr(f"{key}.cubin", data)
        z.writestr("index.json", json.dumps(index))
    return out


@pytest.fixture
def fake_gpu(monkeypatch, tmp_path):
    """hornet.core.cuda with a stand-in CuPy, a fresh process state per ``new_process()``,
    and the toolchain of ``state["toolchain"]``."""
    from hornet.core import cubins, cuda
    state = {"toolchain": dict(TOOLCHAIN)}
    monkeypatch.setattr(cuda, "cupy", FAKE_CUPY)
    monkeypatch.setattr(cubins, "toolchain", lambda: state["toolchain"])
    monkeypatch.setenv("HORNET_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CUPY_CACHE_DIR", str(tmp_path / "cupy"))
    monkeypatch.setattr(_Raw, "fail_path", False)

    def new_process():
        for table in ("_MODULES", "_FUNCS", "_BUILD_KEYS"):
            monkeypatch.setattr(cuda, table, {})
        monkeypatch.setattr(cuda, "_MARKED", set())
        monkeypatch.setattr(cuda, "_HEADERS_DIGEST", [])
        monkeypatch.setattr(cubins, "_STATE", {})
        monkeypatch.setattr(cubins, "loaded", [])
        _Raw.made = []

    state["new_process"] = new_process
    return state


def test_cubin_used_only_for_its_source_headers_and_toolchain(fake_gpu, monkeypatch,
                                                              tmp_path):
    from hornet.core import cubins, cuda
    source = tmp_path / "k.cu"
    source.write_text("template <int N> __global__ void k() {}\n")
    other = tmp_path / "other.cu"
    other.write_text("__global__ void other() {}\n")
    names = ("k<3>",)
    archive = _archive(tmp_path, [(source, names, {"k<3>": "_Z1kILi3EEvv"},
                                   b"\x7fELF cubin of k")])
    monkeypatch.setenv("HORNET_CUBINS", str(archive))
    new_process = fake_gpu["new_process"]

    new_process()
    mod = cuda.load_module(str(source), names)
    assert isinstance(mod, cubins.CubinModule) and _Raw.made == []    # loaded on first use
    assert cuda.function(str(source), "k<3>", names) == "_Z1kILi3EEvv"   # the lowered name
    assert _Raw.made == ["path"]
    assert mod.get_global("g_table") == ("global", "g_table")   # a RawModule's variables too
    assert cuda._built((str(source), names))                  # nothing to prebuild
    extracted = Path(mod.raw.path)
    assert extracted.read_bytes() == b"\x7fELF cubin of k"
    assert extracted.parent == tmp_path / "cache" / "cuda" / "cubins"
    cuda.load_module(str(other))                             # not in the archive: compiled
    assert _Raw.made == ["path", "code"] and len(cubins.loaded) == 1

    new_process()                       # a second process: the extracted file again
    assert isinstance(cuda.load_module(str(source), names), cubins.CubinModule)

    new_process()                       # another instance list: compiled
    cuda.load_module(str(source), ("k<4>",))
    assert _Raw.made == ["code"]

    new_process()                       # another header digest: compiled
    cuda._HEADERS_DIGEST.append("f" * 16)
    cuda.load_module(str(source), names)
    assert _Raw.made == ["code"]

    for field, value in (("arch", "80"), ("nvrtc", [12, 8]), ("cupy", "14.3")):
        new_process()                   # another toolchain: compiled
        fake_gpu["toolchain"] = dict(TOOLCHAIN, **{field: value})
        cuda.load_module(str(source), names)
        assert _Raw.made == ["code"], field
    fake_gpu["toolchain"] = dict(TOOLCHAIN)

    new_process()                       # turned off
    monkeypatch.setenv("HORNET_CUBINS", "0")
    cuda.load_module(str(source), names)
    assert _Raw.made == ["code"]
    monkeypatch.setenv("HORNET_CUBINS", str(archive))

    new_process()                       # the source changed since the build: compiled
    source.write_text("template <int N> __global__ void k() { int x = N; }\n")
    mod = cuda.load_module(str(source), names)
    assert not isinstance(mod, cubins.CubinModule) and _Raw.made == ["code"]
    assert cubins.loaded == []


def test_cubin_that_fails_to_load_turns_cubins_off(fake_gpu, monkeypatch, tmp_path):
    from hornet.core import cubins, cuda
    a, b = tmp_path / "a.cu", tmp_path / "b.cu"
    a.write_text("__global__ void a() {}\n")
    b.write_text("__global__ void b() {}\n")
    archive = _archive(tmp_path, [(a, (), {}, b"\x7fELF a"), (b, (), {}, b"\x7fELF b")])
    monkeypatch.setenv("HORNET_CUBINS", str(archive))
    fake_gpu["new_process"]()
    _Raw.fail_path = True               # e.g. a driver older than the cubin
    assert cuda.function(str(a), "a") == "a"           # from the module compiled instead
    _Raw.fail_path = False
    assert not isinstance(cuda.load_module(str(b)), cubins.CubinModule)   # not tried again
    assert _Raw.made == ["path", "code", "code"] and cubins.loaded == []


def test_damaged_archive_member_is_not_loaded(fake_gpu, monkeypatch, tmp_path):
    from hornet.core import cubins, cuda
    a = tmp_path / "a.cu"
    a.write_text("__global__ void a() {}\n")
    archive = _archive(tmp_path, [(a, (), {}, b"\x7fELF a")])
    index = json.loads(zipfile.ZipFile(archive).read("index.json"))
    entry, = index["modules"].values()
    entry["sha256"] = "0" * 16
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr(entry["file"], b"\x7fELF a")
        z.writestr("index.json", json.dumps(index))
    monkeypatch.setenv("HORNET_CUBINS", str(archive))
    fake_gpu["new_process"]()
    assert cuda.function(str(a), "a") == "a"
    assert _Raw.made == ["code"] and cubins.loaded == []


def test_shipped_archive_holds_the_replay_modules():
    """The archive in the package: one well-formed sm_90 cubin per module of the GPU
    replay's list, keyed by the module's current source (rebuild it on a Hopper GPU with
    ``python3 -m bench.tools.build_cubins`` after changing a listed module or a header)."""
    from hornet.core import cubins
    from bench.tools import build_cubins
    with zipfile.ZipFile(cubins.ARCHIVE) as z:
        index = json.loads(z.read("index.json"))
        assert index["format"] == cubins.FORMAT and index["arch"] == "90"
        listed = {(m["path"], tuple(sorted(m["names"]))) for m in index["modules"].values()}
        for key, m in index["modules"].items():
            data = z.read(m["file"])
            assert data.startswith(b"\x7fELF") and len(data) == m["bytes"]
            assert hashlib.sha256(data).hexdigest()[:16] == m["sha256"]
            assert m["file"].startswith(key)
        for digest, m in index.get("cupy_kernels", {}).items():
            data = z.read(m["file"])
            assert data.startswith(b"\x7fELF") and len(data) == m["bytes"]
            assert hashlib.sha256(data).hexdigest()[:16] == m["sha256"]
    from streams.cli import REPLAY_CUPY_KERNELS
    recorded = json.loads(Path(REPLAY_CUPY_KERNELS).read_text())
    if recorded["cupy"] == index["cupy"]:     # CuPy's kernels of the replay, for that version
        assert set(index.get("cupy_kernels", {})) == {
            cubins.record_digest(r) for r in recorded["kernels"]}
    wanted = {(os.path.relpath(p, cubins.ROOT), tuple(sorted(names)))
              for p, names in build_cubins.replay_modules()}
    assert listed == wanted
    assert build_cubins.stale(Path(cubins.ARCHIVE)) == []
    assert os.path.getsize(cubins.ARCHIVE) < 2_000_000


def test_cupy_record_digest_follows_the_record(fake_gpu, monkeypatch, tmp_path):
    from hornet.core import cubins
    record = {"source": "k", "options": ["{cupy_option_0}", "-DX"], "extra_source":
              "{cupy_header_source}", "backend": "nvrtc", "jitify": False}
    digest = cubins.record_digest(record)
    assert cubins.record_digest({**record, "seconds": 2.5}) == digest
    for field, value in (("source", "k2"), ("options", ["{cupy_option_0}"]),
                         ("extra_source", "x"), ("backend", "nvcc"), ("jitify", True)):
        assert cubins.record_digest({**record, field: value}) != digest, field
    # an archive without CuPy kernels (or none at all) leaves every record to compile
    a = tmp_path / "a.cu"
    a.write_text("__global__ void a() {}\n")
    monkeypatch.setenv("HORNET_CUBINS", str(_archive(tmp_path, [(a, (), {}, b"\x7fELF")])))
    fake_gpu["new_process"]()
    assert cubins.seed_cupy_cache([record]) == [record]
    monkeypatch.setenv("HORNET_CUBINS", str(tmp_path / "none.zip"))
    fake_gpu["new_process"]()
    assert cubins.seed_cupy_cache([record]) == [record]


# on the device: build an archive of one module, load it in a fresh process with empty
# caches (nothing compiled), then change the module's source (compiled, the new code runs)
# and damage the cubin (compiled, silently)
GPU_MODULE = textwrap.dedent('''
    template <int N> __global__ void add(int* a, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) a[i] += N;
    }
    extern "C" __global__ void twice(int* a, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) a[i] *= 2;
    }
''')

GPU_RUN = textwrap.dedent('''
    import json, os, sys
    from pathlib import Path
    if sys.argv[1] == "build":
        from bench.tools import build_cubins
        built = build_cubins.compile_modules([(sys.argv[2], ("add<3>",))], workers=1)
        build_cubins.write_archive(Path(sys.argv[3]), built)
        sys.exit(0)
    import cupy as cp
    from hornet.core import cubins, cuda

    def compiled():
        """hornet's modules CuPy compiled (its cache keeps their sources)."""
        cache = Path(os.environ["CUPY_CACHE_DIR"])
        return sum("// hornet headers" in p.read_text() for p in cache.glob("*.cu"))

    if sys.argv[1] == "other-headers":
        cuda._HEADERS_DIGEST.append("f" * 16)
    a = cp.ones(100, dtype=cp.int32)
    cuda.function(sys.argv[2], "add<3>", ("add<3>",))((1,), (128,), (a, cp.int32(100)))
    cuda.function(sys.argv[2], "twice", ("add<3>",))((1,), (128,), (a, cp.int32(100)))
    print("RESULT " + json.dumps({"values": sorted(set(a.get().tolist())),
                                  "cubins": len(cubins.loaded), "compiled": compiled()}))
''')


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")
def test_cubin_runs_and_a_stale_one_compiles(tmp_path):
    source = tmp_path / "mod.cu"
    source.write_text(GPU_MODULE)
    archive = tmp_path / "cubins.zip"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HORNET_", "CUPY_"))}
    env.update(PYTHONPATH=str(ROOT), HORNET_CUBINS=str(archive),
               CUPY_CACHE_SAVE_CUDA_SOURCE="1")
    subprocess.run([sys.executable, "-c", GPU_RUN, "build", str(source), str(archive)],
                   env=env, cwd=ROOT, check=True, capture_output=True, timeout=600)
    runs = iter(range(100))

    def run(mode="run") -> dict:
        n = next(runs)
        env.update(HORNET_CACHE_DIR=str(tmp_path / f"cache{n}"),
                   CUPY_CACHE_DIR=str(tmp_path / f"cupy{n}"))
        out = subprocess.run([sys.executable, "-c", GPU_RUN, mode, str(source)], env=env,
                             cwd=ROOT, capture_output=True, text=True, timeout=600, check=True)
        return json.loads(out.stdout.split("RESULT ")[1])

    assert run() == {"values": [8], "cubins": 1, "compiled": 0}
    assert run("other-headers") == {"values": [8], "cubins": 0, "compiled": 1}
    source.write_text(GPU_MODULE.replace("a[i] += N", "a[i] += 2 * N"))
    assert run() == {"values": [14], "cubins": 0, "compiled": 1}
    source.write_text(GPU_MODULE)
    with zipfile.ZipFile(archive) as z:
        index = json.loads(z.read("index.json"))
    entry, = index["modules"].values()
    damaged = b"\x7fELF" + bytes(200)       # well stored, but no module the driver loads
    entry.update(sha256=hashlib.sha256(damaged).hexdigest()[:16], bytes=len(damaged))
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr(entry["file"], damaged)
        z.writestr("index.json", json.dumps(index))
    assert run() == {"values": [8], "cubins": 0, "compiled": 1}


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")
def test_shipped_cubins_serve_every_replay_module(tmp_path):
    """On the toolchain the shipped archive was built with, every module of the GPU replay
    loads from it, with every kernel, and nothing is compiled."""
    script = textwrap.dedent('''
        import json, os, zipfile
        from pathlib import Path
        from bench.tools import build_cubins
        from hornet.core import cubins, cuda
        with zipfile.ZipFile(cubins.archive_path()) as z:
            index = json.loads(z.read("index.json"))
        if not cubins.matches(index, cubins.toolchain()):
            print("RESULT " + json.dumps({"other toolchain": cubins.toolchain()}))
            raise SystemExit(0)
        modules = build_cubins.replay_modules()
        kernels = 0
        for path, names in modules:
            mod = cuda.load_module(path, names)
            mod.compile()
            for name in names:
                assert mod.get_function(name).kernel.ptr
                kernels += 1
        cache = Path(os.environ["CUPY_CACHE_DIR"])
        compiled = sum("// hornet headers" in p.read_text() for p in cache.glob("*.cu"))
        print("RESULT " + json.dumps({"modules": len(modules), "cubins": len(cubins.loaded),
                                      "kernels": kernels, "compiled": compiled}))
    ''')
    # $HORNET_CUBINS, where set, names the archive to check
    env = {k: v for k, v in os.environ.items() if k not in ("HORNET_CACHE_DIR",
                                                             "CUPY_CACHE_DIR")}
    env.update(PYTHONPATH=str(ROOT), HORNET_CACHE_DIR=str(tmp_path / "cache"),
               CUPY_CACHE_DIR=str(tmp_path / "cupy"), CUPY_CACHE_SAVE_CUDA_SOURCE="1")
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=600, check=True)
    result = json.loads(out.stdout.split("RESULT ")[1])
    if "other toolchain" in result:
        pytest.skip(f"the archive is for another toolchain than {result['other toolchain']}")
    assert result["cubins"] == result["modules"] >= 10 and result["compiled"] == 0
    assert result["kernels"] > 100


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")
def test_seeded_cupy_kernels_are_found_by_cupy(tmp_path):
    """On the toolchain the archive was built with, the GPU replay's CuPy kernels are written
    into an empty CuPy cache, where CuPy then finds each of them: no NVRTC compile."""
    script = textwrap.dedent('''
        import json, os, zipfile
        import cupy
        from cupy.cuda import compiler
        from hornet.core import cubins, cuda, cupy_records
        from streams.cli import REPLAY_CUPY_KERNELS
        listed = json.load(open(REPLAY_CUPY_KERNELS))
        with zipfile.ZipFile(cubins.archive_path()) as z:
            index = json.loads(z.read("index.json"))
        if (listed["cupy"] != cupy.__version__ or index.get("cupy") != cupy.__version__
                or not cubins.matches(index, cubins.toolchain())):
            print("RESULT " + json.dumps({"other toolchain": cubins.toolchain()}))
            raise SystemExit(0)
        records = listed["kernels"]
        threads = cuda.prebuild_cupy_kernels(records)
        cached = len(os.listdir(os.environ["CUPY_CACHE_DIR"]))
        compiles = []
        nvrtc = compiler._compile_using_nvrtc_no_warning
        compiler._compile_using_nvrtc_no_warning = lambda *a, **k: (
            compiles.append(1), nvrtc(*a, **k))[1]
        install = cupy_records.cupy_install()
        for record in records:
            source, options, extra, backend, jitify = cupy_records.cupy_compile_arguments(
                record, install)
            mod = compiler._compile_module_with_cache(
                source, options, extra_source=extra, backend=backend, jitify=jitify)
            assert mod.ptr
        again = cuda.prebuild_cupy_kernels(records)
        print("RESULT " + json.dumps({"records": len(records), "threads": len(threads),
                                      "cached": cached, "compiles": len(compiles),
                                      "again": len(again)}))
    ''')
    env = {k: v for k, v in os.environ.items() if k not in ("HORNET_CACHE_DIR",
                                                             "CUPY_CACHE_DIR")}
    env.update(PYTHONPATH=str(ROOT), HORNET_CACHE_DIR=str(tmp_path / "cache"),
               CUPY_CACHE_DIR=str(tmp_path / "cupy"))
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=600, check=True)
    result = json.loads(out.stdout.split("RESULT ")[1])
    if "other toolchain" in result:
        pytest.skip(f"the archive is for another toolchain than {result['other toolchain']}")
    assert result["threads"] == 0 and result["compiles"] == 0 and result["again"] == 0
    assert result["records"] >= result["cached"] >= 1
