"""hornet.core.precompile: the helper process compiling a cold start's kernels beside the
main one, the claims the two share, and the replay's kernel list."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from hornet.core import jit, precompile

ROOT = Path(__file__).resolve().parents[1]

KERNELS = textwrap.dedent('''
    import numpy as np
    from hornet.core.jit import njit

    @njit
    def inner(a, i):
        return a[i] * 3

    @njit
    def outer(a):
        s = 0
        for i in range(a.shape[0]):
            s += inner(a, i)
        return s

    @njit
    def scale(a, f):
        return a * f
''')

# main process: start the helper on the kernel list, optionally wait for it to finish, then
# call the kernels and report the results and whether this process compiled anything
RUN = textwrap.dedent('''
    import json, sys, numpy as np
    sys.path.insert(0, sys.argv[1])
    from hornet.core import jit, precompile
    import helper_kernels as k
    started = precompile.start(sys.argv[2])
    if started and sys.argv[3] == "wait":
        precompile._helper.wait()
    with jit.compile_timer() as clock:
        a = k.outer(np.arange(5, dtype=np.int64))
        b = k.scale(np.ones(3), 2.0).tolist()
    precompile.stop()
    print("RESULT " + json.dumps({"started": started, "outer": int(a), "scale": b,
                                  "compiled": clock.seconds > 0}))
''')


def _write_list(path: Path) -> None:
    kernels = [["helper_kernels", "outer", ["array(int64, 1d, C)"], 1],
               ["helper_kernels", "inner", ["array(int64, 1d, C)", "int64"], 2],
               ["helper_kernels", "scale", ["array(float64, 1d, C)", "float64"], 1]]
    path.write_text(json.dumps({"kernels": kernels}))


def _run(tmp_path: Path, cache: Path, mode: str) -> tuple[dict, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "HORNET_CACHE_DIR", "XDG_CACHE_HOME")}
    env["HORNET_CACHE_DIR"] = str(cache)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(tmp_path)])
    out = subprocess.run([sys.executable, "-c", RUN, str(tmp_path),
                          str(tmp_path / "kernels.json"), mode],
                         capture_output=True, text=True, env=env, timeout=600, check=True)
    return json.loads(out.stdout.split("RESULT ")[1]), out.stderr


@pytest.fixture
def kernel_dir(tmp_path: Path) -> Path:
    (tmp_path / "helper_kernels.py").write_text(KERNELS)
    _write_list(tmp_path / "kernels.json")
    return tmp_path


def test_helper_fills_the_cache_and_a_warm_start_needs_none(kernel_dir, tmp_path):
    cache = tmp_path / "cache"
    first, err = _run(kernel_dir, cache, "wait")
    assert first == {"started": True, "outer": 30, "scale": [2.0, 2.0, 2.0],
                     "compiled": False}       # the helper compiled every listed kernel
    assert err.count("compiling kernels, first run only") == 1
    second, err = _run(kernel_dir, cache, "wait")
    assert second == {**first, "started": False}
    assert "compiling kernels" not in err


def test_a_run_that_finds_most_of_the_list_cached_starts_no_helper(kernel_dir, tmp_path):
    """A listed kernel that runs never compile (a path only a cold run's timing takes) does not
    start a helper on every later run: the run finds the rest cached and starts none."""
    cache = tmp_path / "cache"
    _run(kernel_dir, cache, "wait")
    kernels = json.loads((kernel_dir / "kernels.json").read_text())["kernels"]
    kernels.append(["helper_kernels", "scale", ["array(int64, 1d, C)", "int64"], 1])
    (kernel_dir / "kernels.json").write_text(json.dumps({"kernels": kernels}))
    again, err = _run(kernel_dir, cache, "wait")
    assert again == {"started": False, "outer": 30, "scale": [2.0, 2.0, 2.0], "compiled": False}
    assert "compiling kernels" not in err


def test_main_and_helper_compile_side_by_side(kernel_dir, tmp_path):
    cache = tmp_path / "cache"
    first, err = _run(kernel_dir, cache, "go")
    assert first["started"] and first["outer"] == 30 and first["scale"] == [2.0, 2.0, 2.0]
    assert err.count("compiling kernels, first run only") == 1
    # whichever process compiled them, every listed kernel is in the cache now
    second, err = _run(kernel_dir, cache, "wait")
    assert second == {**first, "started": False, "compiled": False}
    assert "compiling kernels" not in err


def test_claims_main_waits_for_the_helper_never_the_reverse(tmp_path):
    main = precompile.Claims(str(tmp_path), "main")
    helper = precompile.Claims(str(tmp_path), "helper")
    assert main.claim("k1") is False and main.owner("k1") == "main"
    t = time.perf_counter()
    assert helper.claim("k1") is False               # compiles it again, no wait
    assert time.perf_counter() - t < 1.0
    assert helper.claim("k2") is False and helper.owner("k2") == "helper"
    threading.Timer(0.3, helper.done, ("k2",)).start()
    t = time.perf_counter()
    with jit.compile_timer() as clock:
        assert main.claim("k2") is True               # waited for the helper's compile
    assert time.perf_counter() - t >= 0.25
    assert clock.seconds >= 0.25                      # the wait is compile time
    # a helper that ends (or fails) ends the wait
    assert helper.claim("k3") is False
    gone = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
    waiting = precompile.Claims(str(tmp_path), "main", gone)
    assert waiting.claim("k3") is True
    assert gone.poll() is not None
    helper.release_all()
    assert not helper.open


def test_types_of_a_kernel_list_parse():
    from numba.core import types
    for t in (types.int64, types.int32, types.uint8, types.float64, types.boolean,
              types.Array(types.int32, 2, "C"), types.Array(types.float32, 1, "A"),
              types.Array(types.int64, 1, "C", readonly=True), types.UniTuple(types.int64, 2),
              types.Tuple([types.Array(types.int64, 1, "C"), types.Array(types.int32, 1, "C")]),
              types.Tuple([types.UniTuple(types.Array(types.int64, 1, "C"), 2), types.int32])):
        assert precompile.parse_type(str(t)) == t
    for text in ("reflected list(int64)", "pyobject", "Tuple(int64, list(int64))"):
        with pytest.raises(ValueError):
            precompile.parse_type(text)


def test_replay_kernel_list_names_existing_kernels():
    from streams.cli import REPLAY_KERNELS
    entries = precompile.load_kernels(REPLAY_KERNELS)
    assert sum(1 for e in entries if e[3] == 1) >= 10
    for entry in entries:
        dispatcher, args = precompile._resolve(entry)
        assert dispatcher is jit.kernels[(entry[0], entry[1])]
        assert [str(a) for a in args] == entry[2]


def test_start_declines_a_missing_or_stale_list(tmp_path):
    assert precompile.start(str(tmp_path / "none.json")) is False
    (tmp_path / "stale.json").write_text(json.dumps(
        {"kernels": [["hornet.core.search", "no_such_kernel", ["int64"], 1]]}))
    assert precompile.start(str(tmp_path / "stale.json")) is False
    assert jit.compile_claims is None


@pytest.mark.skipif(sys.platform == "win32", reason="index writes are serialized with flock")
def test_index_lock_makes_two_processes_take_turns(tmp_path):
    holder = textwrap.dedent('''
        import sys, time
        from hornet.core import precompile
        claims = precompile.Claims(sys.argv[1], "helper")
        with claims.index_lock("/cache/kernel.nbi"):
            print("held", flush=True)
            time.sleep(0.5)
    ''')
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", holder, str(tmp_path)],
                             stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout.readline().strip() == "held"
        t = time.perf_counter()
        with precompile.Claims(str(tmp_path), "main").index_lock("/cache/kernel.nbi"):
            waited = time.perf_counter() - t
        assert waited >= 0.2
        t = time.perf_counter()
        with precompile.Claims(str(tmp_path), "main").index_lock("/cache/other.nbi"):
            assert time.perf_counter() - t < 0.2      # another kernel's index: no wait
    finally:
        child.wait(timeout=60)


# compile a kernel list into the cache before other processes start (what the test suite's
# conftest does): report whether a listed and an unlisted signature were cached beforehand
COMPILE_ALL = textwrap.dedent('''
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from numba.core import types
    from hornet.core import precompile
    import helper_kernels as k
    vec = types.Array(types.float64, 1, "C")
    listed = precompile.signature_cached(k.scale, (vec, types.float64))
    unlisted = precompile.signature_cached(k.scale, (types.Array(types.float32, 1, "C"),
                                                     types.float64))
    here = precompile.compile_all(precompile.load_kernels(sys.argv[2]))
    print("RESULT " + json.dumps({"listed": listed, "unlisted": unlisted, "here": here,
                                  "helper": precompile._helper is not None}))
''')


def test_compile_all_fills_the_cache_before_the_processes_that_need_it(kernel_dir, tmp_path):
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "HORNET_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(HORNET_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join([str(ROOT), str(kernel_dir)]))

    def fill() -> dict:
        out = subprocess.run([sys.executable, "-c", COMPILE_ALL, str(kernel_dir),
                              str(kernel_dir / "kernels.json")],
                             capture_output=True, text=True, env=env, timeout=600, check=True)
        return json.loads(out.stdout.split("RESULT ")[1])

    first = fill()
    # two depth-1 kernels, split between this process and its helper (ended on return)
    assert first["listed"] is False and first["unlisted"] is False and not first["helper"]
    assert 0 <= first["here"] <= 2
    second = fill()
    assert second == {"listed": True, "unlisted": False, "here": 0, "helper": False}
    # a process using the kernels loads them all from the cache
    run, err = _run(kernel_dir, cache, "go")
    assert run == {"started": False, "outer": 30, "scale": [2.0, 2.0, 2.0], "compiled": False}
    assert "compiling kernels" not in err


def test_helper_order_gives_the_helper_the_last_half_of_the_seconds():
    names = "abcdefg"
    costs = [0.5, 3.0, 0.4, 0.6, 4.0, 1.0, 0.5]      # half of the 10.0 s: 5.0
    entries = [["m", n, [], 1, c] for n, c in zip(names, costs)]
    order = [e[1] for e in precompile.helper_order(entries)]
    # e, f, g (5.5 s: taking d too would leave it further from half), the longest first,
    # then the rest from the back
    assert order == ["e", "f", "g", "d", "c", "b", "a"]
    entries[6][4] = 1.5           # g now longer than f: half of 11.0 is 5.5
    order = [e[1] for e in precompile.helper_order(entries)]
    assert order == ["e", "g", "f", "d", "c", "b", "a"]
    assert sorted(order) == list(names)
    # a list without seconds: from the back
    plain = [e[:4] for e in entries]
    assert [e[1] for e in precompile.helper_order(plain)] == list(reversed(names))
    assert precompile.helper_order([]) == []


def test_recorded_kernels_carry_their_compile_seconds(kernel_dir):
    sys.path.insert(0, str(kernel_dir))
    try:
        import helper_kernels as k
        with precompile.record_kernels() as found:
            k.outer(np.arange(3, dtype=np.int64))
    finally:
        sys.path.remove(str(kernel_dir))
    by_name = {e[1]: e for e in found}
    assert by_name["outer"][3] == 1 and by_name["inner"][3] == 2
    # the caller's seconds hold its callee's
    assert by_name["outer"][4] >= by_name["inner"][4] > 0
