"""hornet.core.jit: the kernel cache folder, the compile notice, the compile timer and the
optional paths (taken once compiled, cached or promoted)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from hornet.core import jit

ROOT = Path(__file__).resolve().parents[1]

# a module of kernels in its own file (Numba caches only functions backed by a file)
KERNELS = textwrap.dedent('''
    import numba
    import numpy as np
    from hornet.core.jit import njit, part_range, split_kernel

    @njit
    def total(a):
        return a.sum()

    @split_kernel(threshold=4)
    def doubled(a, out, part, parts):
        for i in range(*part_range(a.shape[0], part, parts)):
            out[i] = 2 * a[i]
''')

RUN = textwrap.dedent('''
    import sys, numpy as np
    sys.path.insert(0, sys.argv[1])
    from hornet.core import jit
    import cold_kernels as k
    with jit.compile_timer() as clock:
        t = k.total(np.arange(10))
    print("RESULT", t, clock.seconds > 0, k.total._cache.cache_path)
''')


def _run(tmp_path: Path, env_extra: dict) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "HORNET_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(env_extra)
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-c", RUN, str(tmp_path)], capture_output=True,
                          text=True, env=env, timeout=300, check=True)


@pytest.fixture
def kernel_dir(tmp_path: Path) -> Path:
    (tmp_path / "cold_kernels.py").write_text(KERNELS)
    return tmp_path


def test_cache_dir_follows_the_environment_without_writing_it(monkeypatch, tmp_path):
    before = dict(os.environ)
    monkeypatch.setenv("HORNET_CACHE_DIR", str(tmp_path / "h"))
    assert jit.cache_dir() == str(tmp_path / "h")
    monkeypatch.delenv("HORNET_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert jit.cache_dir() == str(tmp_path / "x" / "hornet")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert jit.cache_dir() == os.path.join(os.path.expanduser("~"), ".cache", "hornet")
    monkeypatch.undo()
    assert dict(os.environ) == before


def test_first_process_compiles_and_says_so_the_second_loads(kernel_dir, tmp_path):
    cache = tmp_path / "cache"
    first = _run(kernel_dir, {"HORNET_CACHE_DIR": str(cache)})
    assert "compiling kernels, first run only" in first.stderr
    assert first.stderr.count("compiling kernels") == 1
    result = first.stdout.split("RESULT ")[1].split()
    assert result[0] == "45" and result[1] == "True"
    assert result[2].startswith(str(cache / "numba"))
    assert list((cache / "numba").rglob("cold_kernels.total-*.nbi"))
    second = _run(kernel_dir, {"HORNET_CACHE_DIR": str(cache)})
    assert "compiling kernels" not in second.stderr
    assert second.stdout.split("RESULT ")[1].split()[:2] == ["45", "False"]


# a kernel calling a helper of another module of its package
HELPER = textwrap.dedent('''
    from hornet.core.jit import njit

    @njit(inline="always")
    def step(x):
        return x + {step}
''')
CALLER = textwrap.dedent('''
    from hornet.core.jit import njit
    from .helper import step

    @njit
    def stepped(x):
        return step(x) * 10
''')
RUN_CALLER = textwrap.dedent('''
    import sys
    sys.path.insert(0, sys.argv[1])
    from hornet.core import jit
    from stepkit.caller import stepped
    with jit.compile_timer() as clock:
        value = stepped(1)
    print("RESULT", value, clock.seconds > 0, sorted(jit.kernel_sources("stepkit.caller")))
''')


@pytest.mark.parametrize("folder", ["HORNET_CACHE_DIR", "NUMBA_CACHE_DIR"])
def test_a_cached_kernel_follows_a_changed_helper_in_another_file(tmp_path, folder):
    """Numba's cache checks a kernel's own file; a kernel whose helper (inlined from another
    module) changed must be compiled again, not loaded with the old helper."""
    package = tmp_path / "stepkit"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "caller.py").write_text(CALLER)
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "HORNET_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update({folder: str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)})

    def run(step: int) -> list:
        (package / "helper.py").write_text(HELPER.format(step=step))
        out = subprocess.run([sys.executable, "-c", RUN_CALLER, str(tmp_path)],
                             capture_output=True, text=True, env=env, timeout=300, check=True)
        return out.stdout.split("RESULT ")[1].split(maxsplit=2)

    first = run(1)
    assert first[:2] == ["20", "True"]
    assert "helper.py" in first[2] and "caller.py" in first[2]
    assert run(1)[:2] == ["20", "False"]            # unchanged: loaded from the cache
    assert run(5)[:2] == ["60", "True"]             # the helper changed: compiled again
    assert run(5)[:2] == ["60", "False"]


def test_unwritable_cache_folder_falls_back(kernel_dir, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    # a folder below a regular file can never be created (whoever runs the test)
    out = _run(kernel_dir, {"HORNET_CACHE_DIR": str(blocker / "cache"),
                            "XDG_CACHE_HOME": str(blocker / "xdg")})
    result = out.stdout.split("RESULT ")[1].split()
    assert result[0] == "45"
    assert not result[2].startswith(str(blocker))     # numba's next place: beside the source


def test_compile_timer_counts_outside_builds_once():
    with jit.compile_timer() as outer:
        with jit.compile_timer() as inner:
            jit.record_compile(0.25)
        jit.record_compile(0.5)
    assert inner.seconds == pytest.approx(0.25)
    assert outer.seconds == pytest.approx(0.75)
    jit.record_compile(1.0)                        # no timer active: nowhere to go
    assert outer.seconds == pytest.approx(0.75)


def _load(folder: Path, name: str):
    """cold_kernels.py of ``folder`` as a new module ``name`` (new dispatchers, same file)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, folder / "cold_kernels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_optional_path_opens_once_compiled_cached_or_promoted(kernel_dir, monkeypatch):
    monkeypatch.setenv("HORNET_CACHE_DIR", str(kernel_dir / "cache"))
    monkeypatch.setattr(jit, "optional_path_policy", "tiered")   # the default
    k = _load(kernel_dir, "optional_kernels_first")
    gate = jit.OptionalPath((k.total,), promote_calls=2)
    assert [gate.take() for _ in range(4)] == [False, False, True, True]   # promoted
    assert not k.total.overloads                   # the gate itself compiles nothing
    fresh = jit.OptionalPath((k.total,), promote_calls=100)
    assert not fresh.take()
    assert k.total(np.arange(10)) == 45            # compiled (and cached) by its caller
    assert fresh.take()                            # compiled in this process: open
    again = _load(kernel_dir, "optional_kernels_second")   # new dispatchers, same cache
    assert not again.total.overloads
    assert jit.OptionalPath((again.total,), promote_calls=100).take()   # cached: open
    monkeypatch.setattr(jit, "optional_path_policy", "never")
    assert not jit.OptionalPath((again.total,), promote_calls=0).take()
    monkeypatch.setattr(jit, "optional_path_policy", "always")
    assert jit.OptionalPath((again.doubled.kernel,), promote_calls=100).take()


def test_cpu_small_batches_wait_for_their_kernels(monkeypatch):
    """Small CPU batches take the fused pipeline until the small-batch kernels are compiled
    or cached, or until the gate's promotion count; the graph is the same either way."""
    import hornet
    from hornet.batch import small_path
    from hornet.batch.cpu import small
    monkeypatch.setattr(jit, "optional_path_policy", "tiered")
    gate = jit.OptionalPath((jit.njit(lambda: 0),), promote_calls=3)   # never compiled
    monkeypatch.setattr(small_path, "small_path_gate", gate)
    taken = []
    original = small_path.small_update
    monkeypatch.setattr(hornet.graph, "small_update",
                        lambda g, *a: taken.append(1) or original(g, *a))
    rng = np.random.default_rng(5)
    g = hornet.Graph(directed=False, device="cpu")
    ref = hornet.Graph(directed=False, device="cpu")
    ref._small_batches = False
    for step in range(6):
        s, d = rng.integers(0, 50, 20), rng.integers(0, 50, 20)
        for graph in (g, ref):
            (graph.insert_edges if step % 3 else graph.delete_edges)(s, d)
    assert len(taken) == 3 and gate.calls == 4     # batches 4 to 6 took the small path
    assert sorted(zip(*g.edges())) == sorted(zip(*ref.edges()))
    assert small.small_path_gate.promote_calls == small.SMALL_PATH_PROMOTE


def test_cuda_module_build_says_so_once_per_cache(monkeypatch, tmp_path, capsys):
    """The first build of a CUDA module that hornet has not built before prints the compile
    notice; once its marker is in the cache folder, a later process builds silently. CuPy is
    replaced by a stand-in that records builds (the GPU itself is tested on the device)."""
    import types as pytypes
    from hornet.core import cuda
    built = []

    class RawModule:
        def __init__(self, code, options, name_expressions):
            self.code = code

        def get_function(self, name):
            built.append(name)
            return name

    fake = pytypes.SimpleNamespace(
        RawModule=RawModule, __version__="0",
        cuda=pytypes.SimpleNamespace(Device=lambda: pytypes.SimpleNamespace(
            compute_capability="90")))
    source = tmp_path / "k.cu"
    source.write_text("__global__ void k() {}\n")
    monkeypatch.setattr(cuda, "cupy", fake)
    monkeypatch.setenv("HORNET_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CUPY_CACHE_DIR", str(tmp_path / "cupy"))
    monkeypatch.setattr(jit, "announce_compiles", True)

    def new_process():
        for table in ("_MODULES", "_FUNCS", "_BUILD_KEYS"):
            monkeypatch.setattr(cuda, table, {})
        monkeypatch.setattr(cuda, "_MARKED", set())
        monkeypatch.setattr(jit, "_announced", False)

    new_process()
    capsys.readouterr()
    assert cuda.function(str(source), "k") == "k"
    assert cuda.function(str(source), "k") == "k" and built == ["k"]
    first = capsys.readouterr().err
    assert first.count("compiling kernels, first run only") == 1
    assert str(tmp_path / "cupy") in first
    new_process()
    assert cuda.function(str(source), "k") == "k" and built == ["k", "k"]
    assert "compiling kernels" not in capsys.readouterr().err
    new_process()
    source.write_text("__global__ void k2() {}\n")          # another source: built anew
    cuda.function(str(source), "k")
    assert "compiling kernels, first run only" in capsys.readouterr().err
