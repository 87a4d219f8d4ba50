"""Cold and warm start: the first `hornet replay` with an empty kernel cache against the next.

    python3 -m bench cold_start [--device cpu] [--baseline REV] [--repeats 2] [--suite]
                                [--name cold_start_cpu]

Every measurement is a fresh Python process (``sys.executable``), the package imported from
this checkout. Cold: ``HORNET_CACHE_DIR``, ``NUMBA_CACHE_DIR`` (where a ``--baseline``
checkout's kernels go) and ``CUPY_CACHE_DIR`` (CuPy's compiled CUDA modules) point into a
new, empty folder, so every kernel is compiled; warm: the same folders again, filled by the
cold run. Measured:

- ``hornet replay --device D`` of the shipped stream (CollegeMsg), every analytic dynamic,
  run as the command runs (``main()`` without arguments: its compile helper process on):
  wall seconds, CPU seconds (user + system of the process and of the helper process it
  waits for), and the replay's own throughput (events/s in graph updates, from its JSON
  report: compile time left out by the replay);
- ``import hornet`` and a first batch: a graph built and given 5,000 random edges, then a
  triangle count (wall and CPU seconds);
- ``--suite``: the tree's test command (the ``pytest`` line of its ``.ci/run``, which runs
  the README's command) cold and warm, as CI runs it: ``CI=true``, no data folder (long:
  several minutes); this checkout only (a baseline's suite is another set of tests).

``--baseline REV`` measures a second checkout (``git archive REV``, e.g. the commit before the
cold-start work, or a folder holding such a tree) the same way in the same run, its rows
marked with the revision. Warm rows
are medians of ``--repeats`` runs. CPU seconds show the work on a shared machine whose other
load stretches wall times.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from bench.common import ROOT, write_table

NAME = "cold_start"

FIRST_BATCH = """
import numpy as np, hornet
g = hornet.Graph(directed=False, device={device!r})
rng = np.random.default_rng(1)
g.insert_edges(rng.integers(0, 2000, 5000), rng.integers(0, 2000, 5000))
hornet.algos.triangle_count(g)
"""


# the command as run from the shell (main() without arguments: tuning and the compile helper
# on); then the process's own CPU seconds (its children's left out) and its waits for the
# helper process (0 where the code has none)
REPLAY = """
import resource, sys
from streams.cli import main
sys.argv = {argv!r}
code = main()
me = resource.getrusage(resource.RUSAGE_SELF)
helper = sys.modules.get("hornet.core.precompile")
print("MAIN", me.ru_utime + me.ru_stime, getattr(helper, "waited_seconds", 0.0),
      file=sys.stderr)
sys.exit(code)
"""


def _env(tree: Path, cache: Path, extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("HORNET_CACHE_DIR", "NUMBA_CACHE_DIR", "PYTHONPATH", "HORNET_DATA")}
    env["PYTHONPATH"] = str(tree)
    env["HORNET_CACHE_DIR"] = str(cache)
    env["NUMBA_CACHE_DIR"] = str(cache / "numba-own")
    env["CUPY_CACHE_DIR"] = str(cache / "cupy")      # CuPy's compiled CUDA modules
    env.update(extra or {})
    return env


def _timed(cmd: list[str], tree: Path, cache: Path, timeout: float = 3600,
           env: dict | None = None) -> dict:
    """Run ``cmd`` in ``tree`` (environment ``env`` added); wall and CPU seconds (children's
    user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(cmd, cwd=tree, env=_env(tree, cache, env), capture_output=True,
                          text=True, timeout=timeout)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0,):
        raise SystemExit(f"bench cold_start: {' '.join(cmd)} failed ({done.returncode}):\n"
                         f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "stdout": done.stdout, "stderr": done.stderr}


def _replay(tree: Path, cache: Path, device: str) -> dict:
    report = cache.parent / f"report-{time.monotonic_ns()}.json"
    argv = ["hornet", "replay", "--device", device, "--report", str(report)]
    out = _timed([sys.executable, "-c", REPLAY.format(argv=argv)], tree, cache)
    summary = json.loads(report.read_text())["summary"]
    out["events_per_second"] = summary["events_per_second"]
    main_cpu, waited = out["stderr"].rsplit("MAIN ", 1)[1].split()[:2]
    out["main_cpu"], out["waited"] = float(main_cpu), float(waited)
    out["notice"] = "compiling kernels, first run only" in out["stderr"]
    return out


def _first_batch(tree: Path, cache: Path, device: str) -> dict:
    return _timed([sys.executable, "-c", FIRST_BATCH.format(device=device)], tree, cache)


def suite_command(tree: Path) -> list[str]:
    """The tree's test command: the ``python3 -m pytest`` line of its ``.ci/run`` (CI runs the
    README's command), with this interpreter."""
    for line in (tree / ".ci" / "run").read_text().splitlines():
        if line.strip().startswith("python3 -m pytest"):
            return [sys.executable] + shlex.split(line)[1:]
    raise SystemExit(f"bench cold_start: no pytest line in {tree / '.ci' / 'run'}")


def _suite(tree: Path, cache: Path) -> dict:
    return _timed(suite_command(tree) + ["-p", "no:cacheprovider"], tree, cache, timeout=7200,
                  env={"CI": "true", "HORNET_DATA": str(cache / "no-data")})


def _checkout(rev: str, into: Path) -> Path:
    """The tree of ``rev`` (``git archive``) under ``into``."""
    tar = into / "tree.tar"
    with open(tar, "wb") as f:
        subprocess.run(["git", "-C", str(ROOT), "archive", rev], stdout=f, check=True)
    tree = into / "tree"
    tree.mkdir()
    with tarfile.open(tar) as t:
        t.extractall(tree, filter="data")
    return tree


def _measure(label: str, tree: Path, work: Path, device: str, repeats: int, suite: bool,
             rows: list) -> None:
    cache = work / f"cache-{label}"
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    cold = _replay(tree, cache, device)
    warm = [_replay(tree, cache, device) for _ in range(repeats)]
    rows.append([label, f"hornet replay --device {device}", "cold", round(cold["wall"], 1),
                 round(cold["cpu"], 1), round(cold["main_cpu"], 1), round(cold["waited"], 1),
                 round(cold["events_per_second"]), "yes" if cold["notice"] else "no"])
    rows.append([label, f"hornet replay --device {device}", "warm",
                 round(statistics.median(r["wall"] for r in warm), 1),
                 round(statistics.median(r["cpu"] for r in warm), 1),
                 round(statistics.median(r["main_cpu"] for r in warm), 1),
                 round(statistics.median(r["waited"] for r in warm), 1),
                 round(statistics.median(r["events_per_second"] for r in warm)),
                 "yes" if any(r["notice"] for r in warm) else "no"])
    cache2 = work / f"cache-{label}-batch"
    cache2.mkdir()
    cold = _first_batch(tree, cache2, device)
    warm = [_first_batch(tree, cache2, device) for _ in range(repeats)]
    for kind, runs in (("cold", [cold]), ("warm", warm)):
        rows.append([label, "import + first batch + triangle count", kind,
                     round(statistics.median(r["wall"] for r in runs), 1),
                     round(statistics.median(r["cpu"] for r in runs), 1), "", "", "", ""])
    if suite:
        cache3 = work / f"cache-{label}-suite"
        cache3.mkdir()
        for kind in ("cold", "warm"):
            r = _suite(tree, cache3)
            rows.append([label, "python3 " + shlex.join(suite_command(tree)[1:]), kind,
                         round(r["wall"], 1),
                         round(r["cpu"], 1), "", "", "", ""])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench cold_start",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--baseline", metavar="REV", default=None,
                    help="also measure this git revision (or the tree in this folder), in "
                         "the same run")
    ap.add_argument("--repeats", type=int, default=2, help="warm runs (median)")
    ap.add_argument("--suite", action="store_true",
                    help="also time this checkout's CPU test suite")
    ap.add_argument("--name", default=None, help="table name (default: cold_start_<device>)")
    a = ap.parse_args(argv)
    rows: list = []
    with tempfile.TemporaryDirectory(prefix="hornet-cold-") as tmp:
        work = Path(tmp)
        if a.baseline:
            if Path(a.baseline).is_dir():       # a tree laid out already (no git there)
                tree, label = Path(a.baseline).resolve(), Path(a.baseline).name
            else:
                base = work / "baseline"
                base.mkdir()
                tree, label = _checkout(a.baseline, base), a.baseline
            # the suite of another tree is another set of tests: timed for this checkout only
            _measure(label, tree, work, a.device, a.repeats, False, rows)
        _measure("this checkout", ROOT, work, a.device, a.repeats, a.suite, rows)
    write_table(a.name or f"{NAME}_{a.device}",
                "Cold and warm start (empty kernel cache, then the filled one)",
                ["code", "command", "start", "wall s", "CPU s", "main process CPU s",
                 "main waits s", "replay events/s", "compile notice"], rows,
                notes=("Each row a fresh process; cold: an empty cache folder, warm: the same "
                       f"folder again (median of {a.repeats}). CPU s: user + system seconds "
                       "of the process and its children (the replay's compile helper "
                       "process, where the code has one); wall s also holds the waits of a "
                       "shared machine. Main process CPU s: the replay process alone; main "
                       "waits s: its waits for kernels the helper was compiling. On a quiet "
                       "machine whose second core runs the helper, the cold replay's wall time "
                       "is about main process CPU s + main waits s. "
                       "Replay: the shipped CollegeMsg stream, batches of 5,000 events, every "
                       "analytic dynamic; events/s counts graph updates only, compile time "
                       "left out (the replay's own figure)."
                       + (" Test suite: this checkout's test command (the README's), one cold "
                          "run then one warm run, as CI runs it (CI=true, no data folder)."
                          if a.suite else "") + "\n"),
                device=a.device)


if __name__ == "__main__":
    main()
