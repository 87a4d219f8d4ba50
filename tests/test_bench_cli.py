"""The benchmark runner: ``python3 -m bench`` lists the benchmarks, a run writes its table, GPU
benchmarks step aside without a GPU, and the README's figures are those of the current tables."""
from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hornet.core import jit  # noqa: E402

# bench.common sets the compile policies of its process for timing warm kernels
# (jit.parallel_policy / optional_path_policy = "always"); importing it here must not switch
# every other test of this process to them: they test the library's defaults.
LIBRARY_POLICIES = (jit.parallel_policy, jit.optional_path_policy)
from bench import __main__ as runner  # noqa: E402
from bench import common  # noqa: E402

jit.parallel_policy, jit.optional_path_policy = LIBRARY_POLICIES
BENCHMARKS = runner.discover()


@pytest.fixture(autouse=True)
def library_policies():
    """Puts the library's compile policies back after a test that imported benchmarks."""
    yield
    jit.parallel_policy, jit.optional_path_policy = LIBRARY_POLICIES


def bench(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bench", *args], cwd=ROOT, text=True,
                          capture_output=True, env={**os.environ, **(env or {})}, timeout=300)


def test_listing_names_every_benchmark_and_tool_with_its_description():
    out = bench()
    assert out.returncode == 0, out.stderr
    entries = {**BENCHMARKS, **runner.tools()}
    assert {"updates_cpu", "memory_cpu", "algos_gpu", "readme"} <= set(BENCHMARKS)
    assert "ab_trees" in runner.tools()
    for entry in entries.values():
        line = next(l for l in out.stdout.splitlines() if l.split()[:1] == [entry.name])
        assert entry.description in line
        assert ("[GPU]" in line) == entry.needs_gpu


def test_every_module_in_the_folder_is_found_without_a_list(tmp_path):
    (tmp_path / "fresh_gpu.py").write_text('"""A new one.\n\nMore."""\nNEEDS_GPU = True\n\n'
                                           "def main(argv=None):\n    pass\n")
    (tmp_path / "helper.py").write_text('"""No main: not a benchmark."""\n')
    (tmp_path / "_private.py").write_text('"""Private."""\ndef main(argv=None):\n    pass\n')
    found = runner.discover(tmp_path, "somewhere")
    assert list(found) == ["fresh_gpu"]
    assert found["fresh_gpu"].description == "A new one."
    assert found["fresh_gpu"].needs_gpu


def test_every_benchmark_module_imports_without_a_gpu():
    for entry in [*BENCHMARKS.values(), *runner.tools().values()]:
        module = importlib.import_module(entry.module)
        assert callable(module.main)
        assert module.__doc__.strip().splitlines()[0] == entry.description


@pytest.mark.skipif(common.gpu_available(), reason="a GPU is present")
def test_gpu_benchmark_steps_aside_cleanly_without_a_gpu(tmp_path):
    out = bench("updates_gpu", env={"HORNET_BENCH_RESULTS": str(tmp_path)})
    assert out.returncode == 0
    assert "needs a CUDA GPU" in out.stderr
    assert not list(tmp_path.iterdir())


def test_unknown_benchmark_is_refused():
    out = bench("no_such_benchmark")
    assert out.returncode == 2
    assert "unknown benchmark" in out.stderr


@pytest.mark.skipif(not (common.DATA / "delaunay_n10.mtx.gz").exists(), reason="no data folder")
def test_a_tiny_run_writes_its_table_with_device_command_and_date(tmp_path):
    out = bench("memory_cpu", "--graphs", "delaunay_n10",
                env={"HORNET_BENCH_RESULTS": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    text = (tmp_path / "memory_cpu.md").read_text()
    assert re.search(r"^Device: .+, \d+ cores", text, re.M)
    assert "Command: `python3 -m bench memory_cpu --graphs delaunay_n10`" in text
    assert re.search(r"^Date: \d{4}-\d\d-\d\d \d\d:\d\d UTC", text, re.M)
    device, rows = common.read_table("memory_cpu", tmp_path)
    assert [r["graph"] for r in rows] == ["delaunay_n10", "**mean**"]
    assert rows[0]["reserved/CSR"] == rows[1]["reserved/CSR"]
    assert (tmp_path / "memory_cpu.csv").read_text().startswith("graph,kind,vertices")


def test_readme_table_is_what_the_readme_benchmark_prints(tmp_path):
    for table in (ROOT / "bench" / "results").glob("*.md"):
        shutil.copy(table, tmp_path)
    out = bench("readme", "--no-run", env={"HORNET_BENCH_RESULTS": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    _, rows = common.read_table("readme", tmp_path)
    assert len(rows) == len(runner_readme().FIGURES)
    readme = (ROOT / "README.md").read_text()
    for r in rows:
        line = f"| {r['claim']} | {r['figure']} | {r['device']} | {r['regenerate']} |"
        assert line in readme, f"README.md lacks the current row:\n{line}"


def runner_readme():
    return importlib.import_module("bench.readme")
