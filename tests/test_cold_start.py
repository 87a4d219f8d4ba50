"""The README's first command in a fresh virtual environment: ``pip install .`` then
``hornet replay --device cpu`` with an empty kernel cache (slow: compiles the kernels)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _readme_first_command() -> str:
    """The first command of the README's set-up block (``python3 -m pip install . && ...``)."""
    text = (ROOT / "README.md").read_text()
    block = text.split("```bash", 1)[1].split("```", 1)[0]
    return next(line.strip() for line in block.splitlines()
                if line.strip() and not line.strip().startswith("#"))


@pytest.mark.slow
def test_fresh_install_runs_the_readme_first_command(tmp_path):
    command = _readme_first_command()
    install, run = (part.strip() for part in command.split("&&"))
    assert install == "python3 -m pip install ." and run.startswith("hornet replay")
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", "__pycache__", ".hypothesis", "*.egg-info", "build", ".pytest_cache",
        ".devwork"))
    venv = tmp_path / "venv"
    # the machine's packages (numpy, numba, pyarrow) come from the system: no network needed
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, timeout=300)
    python = venv / "bin" / "python3"
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR", "HORNET_CACHE_DIR", "XDG_CACHE_HOME")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["XDG_CACHE_HOME"] = str(tmp_path / "user-cache")          # empty: a cold start
    # the README's install, by the venv's pip (its build backend comes from the package index)
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(source)], check=True,
                   env=env, timeout=900, cwd=tmp_path)
    where = subprocess.run([str(python), "-c", "import hornet; print(hornet.__file__)"],
                           check=True, env=env, capture_output=True, text=True, cwd=tmp_path)
    assert where.stdout.strip().startswith(str(venv))
    # the site-packages copy is made read-only: kernels must cache in the user's folder
    site = Path(where.stdout.strip()).parents[1]
    for folder in (site / "hornet", site / "streams"):
        for path in [folder, *folder.rglob("*")]:
            path.chmod(path.stat().st_mode & ~0o222)
    try:
        first = subprocess.run(run.split(), env=env, capture_output=True, text=True,
                               cwd=tmp_path, timeout=1800)
        assert first.returncode == 0, first.stderr[-3000:]
        assert "triangles" in first.stdout and "throughput" in first.stdout
        assert first.stderr.count("compiling kernels, first run only") == 1
        assert list((tmp_path / "user-cache" / "hornet" / "numba").rglob("*.nbi"))
        assert not list((site / "hornet").rglob("*.nbi"))
        second = subprocess.run(run.split(), env=env, capture_output=True, text=True,
                                cwd=tmp_path, timeout=1800)
        assert second.returncode == 0, second.stderr[-3000:]
        assert "compiling kernels" not in second.stderr
        # the same analytics, cold or warm
        at_end = [line for line in first.stdout.splitlines() if "at end" in line]
        assert at_end and at_end == [line for line in second.stdout.splitlines()
                                     if "at end" in line]
    finally:
        for folder in (site / "hornet", site / "streams"):
            for path in [folder, *folder.rglob("*")]:
                path.chmod(path.stat().st_mode | 0o200)
