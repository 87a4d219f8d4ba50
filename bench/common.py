"""Shared benchmark helpers: machine description, timing, result tables."""
from __future__ import annotations

import csv
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


def table_lines(header: list[str], rows: list[list]) -> list[str]:
    """A Markdown table (header, separator, one line per row; floats as ``.3g``)."""
    fmt = lambda x: (f"{x:.3g}" if isinstance(x, float) else str(x))
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(x) for x in r) + " |" for r in rows]
    return lines


def table_md(title: str, header: list[str], rows: list[list], notes: str = "") -> str:
    """``# title``, the notes, then the Markdown table (the text of :func:`write_table`)."""
    lines = [f"# {title}", "", notes.strip(), ""] + table_lines(header, rows)
    return "\n".join(lines) + "\n"


def write_csv(name: str, header: list[str], rows: list[list]) -> Path:
    """Write ``bench/results/<name>.csv``."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.csv"
    with open(path, "w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")       # quotes only fields holding a comma
        out.writerow(header)
        for r in rows:
            out.writerow([str(x) for x in r])
    return path


def cuda_times(fns, repeats: int) -> tuple[list[float], list[float]]:
    """(median seconds of each, warm-up seconds of each) of the GPU contenders ``fns``, timed
    with CUDA events in interleaved rounds (each round runs every contender once, the order
    rotating), so slow drifts of the clocks or of other load hit all of them alike."""
    import cupy
    warm = []
    for fn in fns:
        t = time.perf_counter()
        fn()
        cupy.cuda.Device().synchronize()
        warm.append(time.perf_counter() - t)
    if max(warm) > 5.0:            # very slow: one timed run is enough
        repeats = 1
    times = [[] for _ in fns]
    for r in range(repeats):
        for i in range(len(fns)):
            k = (i + r) % len(fns)
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            fns[k]()
            end.record()
            end.synchronize()
            times[k].append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
    return [statistics.median(t) for t in times], warm


def write_table(name: str, title: str, header: list[str], rows: list[list], notes: str = "") -> Path:
    """Write ``bench/results/<name>.md`` (Markdown table) and ``<name>.csv``."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    text = table_md(title, header, rows, notes)
    md = RESULTS / f"{name}.md"
    md.write_text(text)
    write_csv(name, header, rows)
    print(text, end="")
    return md


# --------------------------------------------------------------------------------------------
# Table 19.2 of the k-truss chapter (../shared/seeds/hornet-ktruss-chapters.txt): "Networks used
# in the experiments. |E| refers to directed edges. [...] Execution time is for cuSTINGER-Delta"
# (maximal k-truss on an NVIDIA P100). Values exactly as printed:
#   name: (k_max, cuSTINGER-Delta time in seconds)
# The last three rows are the table's second part, "Name (Wang & Chang [272])": the graphs of
# Wang & Cheng, still timed with cuSTINGER-Delta (Table 19.3 repeats 9.07, 57.1, 258 s).
TABLE_19_2 = {
    "p2p-Gnutella08": (5, 0.007),
    "ca-HepTh": (32, 0.005),
    "ca-HepPh": (239, 0.009),
    "email-Enron": (22, 0.026),
    "soc-Epinions1": (33, 0.09),
    "cit-HepPh": (25, 0.24),
    "soc-Slashdot0902": (36, 0.085),
    "roadNet-PA": (4, 0.078),
    "flickrEdges": (574, 0.26),
    "amazon0601": (11, 0.12),
    "graph500-scale18": (159, 0.74),
    "graph500-scale19": (213, 6.8),
    "graph500-scale20": (284, 17.3),
    "cit-Patents": (36, 45.3),
    "graph500-scale21": (373, 117.0),
    "graph500-scale22": (485, 291.0),
    "graph500-scale23": (625, 780.0),
    "wiki-Talk": (53, 9.07),
    "as-skitter": (68, 57.1),
    "soc-LiveJournal1": (362, 258.0),
}
# The same rows' |V| and |E| columns, as printed (graph500-scale20's |V| reads 640K there).
TABLE_19_2_SIZES = {
    "p2p-Gnutella08": ("6.3K", "21K"), "ca-HepTh": ("9.8K", "26K"),
    "ca-HepPh": ("12K", "119K"), "email-Enron": ("37K", "184K"),
    "soc-Epinions1": ("76K", "406K"), "cit-HepPh": ("35K", "421K"),
    "soc-Slashdot0902": ("82K", "504K"), "roadNet-PA": ("1M", "1.5M"),
    "flickrEdges": ("106K", "2.3M"), "amazon0601": ("400K", "2.4M"),
    "graph500-scale18": ("262K", "4.2M"), "graph500-scale19": ("524K", "8.4M"),
    "graph500-scale20": ("640K", "16M"), "cit-Patents": ("3.8M", "16.5M"),
    "graph500-scale21": ("2.1M", "34M"), "graph500-scale22": ("4.2M", "67M"),
    "graph500-scale23": ("8.4M", "134M"), "wiki-Talk": ("2.4M", "4.7M"),
    "as-skitter": ("1.7M", "11M"), "soc-LiveJournal1": ("4.8M", "43M"),
}


def table_19_2_name(name: str) -> str:
    """Our graph name -> its Table 19.2 name (``kron18`` -> ``graph500-scale18``)."""
    if name.startswith("kron") and name[4:].isdigit():
        return f"graph500-scale{int(name[4:])}"
    return name


def ktruss_ref(name: str):
    """``(k_max, cuSTINGER-Delta seconds)`` of Table 19.2 for a graph name (``kronN`` for the
    Graph500 scale-N rows), or None."""
    return TABLE_19_2.get(table_19_2_name(name))
