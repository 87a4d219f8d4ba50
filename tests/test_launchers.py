"""hornet.core.launchers: a split kernel's parfor launcher gives, part by part, what its run
on hornet's threads gives, and combined what one serial call gives (for kernels returning
nothing, a scalar, a tuple and an array); a process never compiles a launcher itself: a
missing one sends the call to hornet's threads and is compiled at exit in the background,
and the next process loads it from the cache."""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numba
import numpy as np
import pytest

from hornet.core import jit, launchers, threads

ROOT = Path(__file__).resolve().parents[1]

# split kernels in a file of their own (Numba caches functions backed by a file only)
KERNELS = textwrap.dedent('''
    import numpy as np
    from hornet.core.jit import part_range, split_kernel

    @split_kernel(threshold=0)
    def squares(x, out, part, parts):
        for i in range(*part_range(x.shape[0], part, parts)):
            out[i] = x[i] * x[i]

    @split_kernel(threshold=0, combine=sum)
    def total(x, part, parts):
        s = 0
        for i in range(*part_range(x.shape[0], part, parts)):
            s += x[i]
        return s

    def _widest(results):
        return min(r[0] for r in results), max(r[1] for r in results)

    @split_kernel(threshold=0, combine=_widest)
    def bounds(x, part, parts):
        lo, hi = np.int64(2 ** 62), np.int64(-2 ** 62)
        for i in range(*part_range(x.shape[0], part, parts)):
            lo = min(lo, x[i])
            hi = max(hi, x[i])
        return lo, hi

    @split_kernel(threshold=0, nrt=True, combine=np.concatenate)
    def evens(x, part, parts):
        first, end = part_range(x.shape[0], part, parts)
        mine = x[first:end]
        return mine[mine % 2 == 0].copy()
''')


@pytest.fixture
def kernels(tmp_path, monkeypatch):
    """The module of split kernels above, with a kernel cache of its own."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "launched_kernels.py").write_text(KERNELS)
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    monkeypatch.setenv("HORNET_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(launchers, "policy", "cached")
    monkeypatch.setattr(launchers, "BUSY_LOAD_MARGIN", float("inf"))   # whatever the load
    monkeypatch.setattr(launchers, "_load_seen", [-1.0, 0.0, 0.0, False])
    sys.modules.pop("launched_kernels", None)
    module = importlib.import_module("launched_kernels")
    yield module
    sys.modules.pop("launched_kernels", None)


def _cases(k):
    x = np.array([7, -3, 12, 5, 8, 0, 21, 4, -6, 9, 2], dtype=np.int64)
    return [(k.squares, (x, np.zeros_like(x))), (k.total, (x,)), (k.bounds, (x,)),
            (k.evens, (x,))]


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    return a == b


def test_a_busy_machine_runs_split_calls_on_hornets_threads(kernels, monkeypatch):
    monkeypatch.setattr(launchers, "BUSY_LOAD_MARGIN", -1e9)
    monkeypatch.setattr(launchers, "_load_seen", [-1.0, 0.0, 0.0, False])
    assert launchers._machine_busy()
    x = np.arange(10, dtype=np.int64)
    launchers.compile_launcher("launched_kernels", "total", (numba.typeof(x),))
    assert launchers.run(kernels.total, (x,), 2) is None
    assert kernels.total._launcher                       # found, not used


def test_launcher_source_names_the_kernel_and_its_arguments(kernels):
    text = launchers.launcher_source(kernels.squares)
    assert "from launched_kernels import squares as _split" in text
    assert "def launch(x, out, _launch_parts):" in text
    assert "_kernel(x, out, _launch_part, _launch_parts)" in text


def test_launcher_parts_equal_the_thread_split_and_the_serial_call(kernels, monkeypatch):
    monkeypatch.setattr(jit, "parallel_policy", "always")
    for kernel, args in _cases(kernels):
        launchers.compile_launcher("launched_kernels", kernel.__qualname__,
                                   tuple(numba.typeof(a) for a in args))
        for parts in (2, 3):
            serial_out = [a.copy() for a in args]
            serial = kernel.kernel(*serial_out, 0, 1)
            thread_out = [a.copy() for a in args]
            by_threads = threads.run_parts(kernel.kernel, tuple(thread_out), parts)
            launched_out = [a.copy() for a in args]
            kernel._launcher = None                    # looked up again
            by_launcher = launchers.run(kernel, tuple(launched_out), parts)
            assert kernel._launcher not in (None, False)
            assert len(by_launcher) == parts
            assert all(_same(a, b) for a, b in zip(by_launcher, by_threads)), kernel
            for a, b, c in zip(serial_out, thread_out, launched_out):
                np.testing.assert_array_equal(a, c)
                np.testing.assert_array_equal(b, c)
            if kernel.combine is not None:
                assert _same(kernel.combine(by_launcher), serial)
        # the kernel's own call takes the launcher (in parts: jit.split_min_parts)
        monkeypatch.setattr(jit, "split_min_parts", 3)
        called = [a.copy() for a in args]
        result = kernel(*called)
        launcher = kernel._launcher
        assert launcher.overloads, "the split call ran through the launcher"
        if kernel.combine is not None:
            assert _same(result, kernel.combine([kernel.kernel(*args, 0, 1)]))
        monkeypatch.setattr(jit, "split_min_parts", 1)


def test_without_a_cached_launcher_calls_run_on_threads_and_are_noted(kernels, monkeypatch):
    monkeypatch.setattr(launchers, "policy", "background")
    monkeypatch.setattr(launchers, "_exit_hook", True)        # no compile at this test's exit
    monkeypatch.setattr(launchers, "wanted", {})
    monkeypatch.setattr(jit, "parallel_policy", "always")
    monkeypatch.setattr(jit, "split_min_parts", 2)
    x = np.arange(1000, dtype=np.int64)
    assert kernels.total(x) == x.sum()
    assert kernels.total._launcher is False
    assert list(launchers.wanted.values()) == [
        ("launched_kernels", "total", ["array(int64, 1d, C)"])]
    assert not os.path.exists(launchers._names(kernels.total)[0])   # nothing compiled here


RUN = textwrap.dedent('''
    import json, sys
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    from hornet.core import jit, launchers
    import launched_kernels as k
    jit.parallel_policy = "always"
    jit.split_min_parts = 2
    launchers.BUSY_LOAD_MARGIN = float("inf")
    x = np.arange(-500, 1500, dtype=np.int64)
    found = k.evens(x)
    launcher = k.evens._launcher
    print(json.dumps({"right": bool(np.array_equal(found, x[x % 2 == 0])),
                      "launcher": bool(launcher),
                      "hits": sum(launcher.stats.cache_hits.values()) if launcher else 0,
                      "misses": sum(launcher.stats.cache_misses.values()) if launcher else 0}))
''')


def test_a_launcher_missing_at_exit_is_compiled_for_the_next_process(tmp_path):
    import json
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "launched_kernels.py").write_text(KERNELS)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(HORNET_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT),
               HORNET_LAUNCHERS="background")

    def run() -> dict:
        done = subprocess.run([sys.executable, "-c", RUN, str(tmp_path / "src")], env=env,
                              capture_output=True, text=True, timeout=300, check=True)
        return json.loads(done.stdout.strip().splitlines()[-1])

    first = run()
    assert first == {"right": True, "launcher": False, "hits": 0, "misses": 0}
    # the first process's exit started the compile of its launcher in the background
    folder = tmp_path / "cache" / "numba"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not any(
            p.name.startswith("launched_kernels.evens.launch") and p.suffix == ".nbi"
            for p in folder.rglob("*.nbi")):
        time.sleep(0.5)
    deadline = time.monotonic() + 60                   # the compile's claim is gone
    while time.monotonic() < deadline and list((tmp_path / "cache").rglob("*.claim")):
        time.sleep(0.2)
    assert run() == {"right": True, "launcher": True, "hits": 1, "misses": 0}


def test_cache_stamps_kernels_leave_launchers_out_launchers_cover_their_kernel(kernels):
    """A change to launchers.py recompiles the launchers, not the kernels; a change to a
    kernel's file recompiles its launcher too."""
    from hornet.batch.cpu import ids
    here = os.path.join("hornet", "core", "launchers.py")
    assert not any(f.endswith(here) for f in jit.kernel_sources(ids.__name__))
    name = launchers._names(ids._id_bounds)[1]
    launchers._load(ids._id_bounds, write=True)          # its module, not compiled
    try:
        files = jit.kernel_sources(name)
    finally:
        sys.modules.pop(name, None)
    assert any(f.endswith(here) for f in files)
    assert ids.__file__ in files and jit.__file__ in files


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_forked_child_runs_split_calls_on_hornets_threads(kernels, monkeypatch):
    """OpenMP's threads do not survive a fork: a child of a process that used a launcher runs
    its split calls on hornet's threads."""
    monkeypatch.setattr(jit, "parallel_policy", "always")
    monkeypatch.setattr(jit, "split_min_parts", 2)
    x = np.arange(5000, dtype=np.int64)
    launchers.compile_launcher("launched_kernels", "total", (numba.typeof(x),))
    kernels.total._launcher = None
    used = launchers.calls
    assert kernels.total(x) == x.sum() and launchers.calls == used + 1
    pid = os.fork()
    if pid == 0:                                     # the child: exit status says it all
        right = kernels.total(x) == x.sum() and launchers.calls == used + 1
        os._exit(0 if right else 1)
    assert os.waitpid(pid, 0)[1] == 0


def test_a_launcher_written_for_another_signature_is_not_used(kernels):
    """A launcher file left in the cache by an earlier version of the kernel (other
    arguments) is not loaded: the call runs on hornet's threads (a stale launcher would
    call the kernel with the old arguments), and the next compile rewrites the file."""
    x = np.arange(10, dtype=np.int64)
    launchers.compile_launcher("launched_kernels", "total", (numba.typeof(x),))
    path = launchers._names(kernels.total)[0]
    current = Path(path).read_text()
    Path(path).write_text(current.replace("def launch(x, ", "def launch(x, y, ")
                          .replace("(x, _launch_part", "(x, y, _launch_part"))
    assert Path(path).read_text() != current
    assert launchers._find(kernels.total) is False
    kernels.total._launcher = None
    assert launchers.run(kernels.total, (x,), 2) is None
    assert kernels.total._launcher is False
    launchers.compile_launcher("launched_kernels", "total", (numba.typeof(x),))
    assert Path(path).read_text() == current
    assert launchers._find(kernels.total)
