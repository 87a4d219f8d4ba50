"""Shared benchmark helpers: machine description, timing, result tables."""
from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
DATA = Path(os.environ.get("HORNET_DATA", ROOT.parent / "shared" / "data"))
sys.path.insert(0, str(ROOT))


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import numba
    return (f"{cpu}, {os.cpu_count()} cores ({numba.get_num_threads()} Numba threads), "
            f"Python {platform.python_version()}, NumPy {np.__version__}, Numba {numba.__version__}")


def median_time(fn, repeats: int, setup=None) -> float:
    """Median wall time of ``fn()`` over ``repeats`` runs (``setup()`` untimed before each)."""
    times = []
    for _ in range(repeats):
        if setup is not None:
            setup()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def write_table(name: str, title: str, header: list[str], rows: list[list], notes: str = "") -> Path:
    """Write ``bench/results/<name>.md`` (Markdown table) and ``<name>.csv``."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    fmt = lambda x: (f"{x:.3g}" if isinstance(x, float) else str(x))
    lines = [f"# {title}", "", notes.strip(), "", "| " + " | ".join(header) + " |",
             "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(x) for x in r) + " |" for r in rows]
    md = RESULTS / f"{name}.md"
    md.write_text("\n".join(lines) + "\n")
    with open(RESULTS / f"{name}.csv", "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(str(x) for x in r) + "\n")
    print("\n".join(lines))
    return md
