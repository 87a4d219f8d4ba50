"""The test suite's kernel list: every CPU kernel the suite compiles, compiled once before the
test processes start.

A cold run of ``pytest -n 2`` would otherwise compile the same kernels in both workers: each
worker needs the batch pipeline's kernels in its first tests, long before the other has saved
them in the cache. Instead, the process that starts the workers (or a single test process)
compiles the kernels of ``suite_kernels.json`` that the selected test files use, in two
processes (:func:`hornet.core.precompile.compile_all`), and the tests load them from the
cache. A kernel missing from the list is compiled where a test calls it, as without the list;
an entry naming no kernel of this version is skipped. ``HORNET_TEST_PRECOMPILE=0`` turns
this off.

Making the list (after changing kernels or their argument types): a cold run, with an empty
kernel cache, once without and once with the data folder, both as CI runs the suite::

    export HORNET_CACHE_DIR=$(mktemp -d) HORNET_RECORD_KERNELS=$PWD/tests/suite_kernels.json CI=true
    python3 -m pytest -q -n 2 --dist loadfile -m "not gpu and not slow"     # no data
    rm -rf $HORNET_CACHE_DIR/*
    HORNET_DATA=../shared/data python3 -m pytest -q -n 2 --dist loadfile -m "not gpu and not slow"

Each run adds the kernels it compiled that the list lacks: kernels the list has are compiled
before the tests start, so a run records what is missing (entries of the run with data are
marked as needing the data folder; delete the list first to make it anew). An entry is
``[module, qualified name, [argument types], 1, compile seconds, test file, needs data]``.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

from numba.core import event as numba_event

LIST = Path(__file__).with_name("suite_kernels.json")


class Recorder(numba_event.Listener):
    """Records the kernels of :data:`hornet.core.jit.kernels` compiled from Python (not from
    inside another kernel's compile) with their compile seconds and the test file that
    compiled them first (``test_file`` is set by the test hooks)."""

    def __init__(self):
        self.found: list = []
        self.test_file = ""
        self._starts: list = []
        self._known: dict = {}

    def on_start(self, ev):
        self._starts.append(time.perf_counter())

    def on_end(self, ev):
        seconds = time.perf_counter() - self._starts.pop()
        if self._starts:
            return                                  # compiled inside another kernel's compile
        from hornet.core import jit
        if len(self._known) != len(jit.kernels):
            self._known = {id(d): key for key, d in jit.kernels.items()}
        key = self._known.get(id(ev.data["dispatcher"]))
        if key is not None and key[0].split(".")[0] in ("hornet", "streams"):  # not a test's
            self.found.append([key[0], key[1], [str(t) for t in ev.data["args"]], 1,
                               round(seconds, 3), self.test_file])

    def write(self, path: str) -> None:
        with open(path, "w") as f:
            json.dump({"kernels": self.found}, f)


def merge(target: Path, parts: list[Path], with_data: bool) -> int:
    """Add the entries of the recorded ``parts`` that ``target`` lacks to ``target`` (created
    if absent), marked as needing data when ``with_data``; removes the parts. Returns the
    number of entries added."""
    kernels = json.loads(target.read_text())["kernels"] if target.exists() else []
    seen = {(e[0], e[1], tuple(e[2])) for e in kernels}
    added = 0
    for part in parts:
        for e in json.loads(part.read_text())["kernels"]:
            key = (e[0], e[1], tuple(e[2]))
            if key not in seen:
                seen.add(key)
                kernels.append(e + [with_data])
                added += 1
        part.unlink()
    text = ",\n".join(json.dumps(e) for e in kernels)
    target.write_text('{"kernels": [\n' + text + "\n]}\n")
    return added


def selected_files(args: list[str], rootdir: Path) -> set[str] | None:
    """The test files (paths relative to ``rootdir``, as in the list's entries) named by the
    command line's ``args`` (files, folders, node ids); None for all of them."""
    if not args:
        return None
    files: set[str] = set()
    for arg in args:
        p = Path(arg.split("::")[0])
        p = p if p.is_absolute() else Path.cwd() / p
        p = p.resolve()
        if p.is_dir():
            if p == rootdir / "tests" or p == rootdir:
                return None
            files.update(str(f.relative_to(rootdir)) for f in p.rglob("test_*.py"))
        else:
            try:
                files.add(str(p.relative_to(rootdir)))
            except ValueError:
                pass
    return files


def entries_for(files: set[str] | None, with_data: bool) -> list:
    """The list's entries of the test files ``files`` (None: all), leaving out those that
    need the data folder when it is absent."""
    if not LIST.exists():
        return []
    out = []
    for e in json.loads(LIST.read_text())["kernels"]:
        if files is not None and e[5] not in files:
            continue
        if e[6] and not with_data:
            continue
        out.append(e)
    return out


def precompile(files: set[str] | None, with_data: bool) -> str:
    """Compile the kernels of the selected test files into the cache (two processes);
    returns a line saying what was done."""
    from hornet.core import precompile as pc
    entries = entries_for(files, with_data)
    if not entries:
        return ""
    t = time.perf_counter()
    here = pc.compile_all(entries)
    return (f"hornet: {len(entries)} kernels of the suite's list ready in "
            f"{time.perf_counter() - t:.1f} s ({here} compiled by this process)")


def enabled() -> bool:
    return os.environ.get("HORNET_TEST_PRECOMPILE", "1") != "0"
