"""Shared benchmark helpers: the machine's description, timing, graphs, and result tables.

Every benchmark writes its table with :func:`write_table`, which puts a header in front of it:
the device it ran on, the command that regenerates it, and the date. Tables go to
``bench/results/<name>.md`` (and ``<name>.csv``); set ``HORNET_BENCH_RESULTS`` to write them
elsewhere.
"""
from __future__ import annotations

import csv
import datetime
import os
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from hornet.core import jit

# Benchmarks time warm kernels: parallel kernels compile at their first large call (inside
# the warm-ups), not after the work that promotes them in a user's process (hornet.core.jit).
jit.parallel_policy = "always"
# and optional fast paths (the CPU small-batch path) are taken from their first call
jit.optional_path_policy = "always"

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(os.environ.get("HORNET_BENCH_RESULTS", ROOT / "bench" / "results"))
DATA = Path(os.environ.get("HORNET_DATA", ROOT.parent / "shared" / "data"))

# The command line that regenerates the tables of this process: set by ``python3 -m bench``;
# otherwise derived from sys.argv.
_COMMAND: str | None = None


def set_command(command: str | None) -> None:
    """Name the command that regenerates the tables written from now on (None: sys.argv)."""
    global _COMMAND
    _COMMAND = command


def command() -> str:
    """``python3 -m bench NAME ARGS`` of the running benchmark, as the table header shows it."""
    if _COMMAND is not None:
        return _COMMAND
    script = Path(sys.argv[0])
    if script.parent.name == "bench" and script.suffix == ".py" and script.stem != "__main__":
        return shlex.join(["python3", "-m", "bench", script.stem, *sys.argv[1:]])
    return shlex.join(["python3", "-m", "bench", *sys.argv[1:]])


# -------------------------------------------------------------------------------- the machine
def cpu_description() -> str:
    """CPU model (from /proc/cpuinfo where there is one) and core count."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores"


def gpu_available() -> bool:
    """True when CuPy is installed and sees a CUDA device."""
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def gpu_name() -> str:
    """The first CUDA device's name and memory, e.g. ``NVIDIA H100 80GB HBM3, 79 GiB``."""
    import cupy
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    return f"{name}, {props['totalGlobalMem'] / 2**30:.0f} GiB"


def device_line(device: str) -> str:
    """``Device: ...`` for a table header: the CPU (with its Numba threads), or the GPU and the
    host CPU; then the versions of the libraries that do the work."""
    import numba
    versions = (f"Python {platform.python_version()}, NumPy {np.__version__}, "
                f"Numba {numba.__version__}")
    if device == "gpu":
        import cupy
        return (f"Device: {gpu_name()} (host: {cpu_description()}). {versions}, "
                f"CuPy {cupy.__version__}.")
    return f"Device: {cpu_description()} ({numba.get_num_threads()} Numba threads). {versions}."


def machine() -> str:
    """The CPU description of :func:`device_line` without the prefix."""
    return device_line("cpu")[len("Device: "):].rstrip(".")


def require_gpu(name: str) -> None:
    """Exit cleanly (status 0, a message on stderr) when no GPU is present."""
    if not gpu_available():
        print(f"{name}: needs a CUDA GPU with CuPy; none here, nothing run.", file=sys.stderr)
        raise SystemExit(0)


# ---------------------------------------------------------------------------------- timing
def median_time(fn: Callable[[], object], repeats: int,
                setup: Callable[[], object] | None = None) -> float:
    """Median wall seconds of ``fn()`` over ``repeats`` runs (``setup()`` untimed before each)."""
    times = []
    for _ in range(repeats):
        if setup is not None:
            setup()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def interleaved(fns: Sequence[Callable[[], object]], repeats: int) -> list[float]:
    """Median wall seconds of each of ``fns``, timed in rounds that take turns (the order
    rotating each round) so that a slow spell of the machine hits them alike; two untimed
    calls each first."""
    for fn in fns:
        fn()
        fn()
    times = [[] for _ in fns]
    for r in range(repeats):
        for i in range(len(fns)):
            k = (i + r) % len(fns)
            t = time.perf_counter()
            fns[k]()
            times[k].append(time.perf_counter() - t)
    return [float(np.median(t)) for t in times]


def cuda_times(fns: Sequence[Callable[[], object]], repeats: int
               ) -> tuple[list[float], list[float]]:
    """(median seconds of each, warm-up seconds of each) of the GPU contenders ``fns``, timed
    with CUDA events in interleaved rounds (the order rotating each round)."""
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


class ForeignLoad:
    """Share of the machine's CPU time spent by other processes since creation (Linux
    /proc/stat minus this process's own time): a disturbed run shows here."""

    def __init__(self) -> None:
        self.start = self._now()

    @staticmethod
    def _now():
        try:
            with open("/proc/stat") as f:
                cpu = [int(x) for x in f.readline().split()[1:]]
            with open("/proc/self/stat") as f:
                mine = f.read().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return sum(cpu) - cpu[3] - cpu[4], sum(cpu), int(mine[11]) + int(mine[12])

    def share(self) -> float:
        """Other processes' share of all CPU time since creation, 0..1 (NaN off Linux)."""
        now = self._now()
        if now is None or self.start is None:
            return float("nan")
        busy, total, mine = (b - a for a, b in zip(self.start, now))
        return max(0.0, (busy - mine) / max(total, 1))


# ---------------------------------------------------------------------------------- graphs
def kronecker(scale: int, seed: int = 1, xp=None):
    """(src, dst) of a Graph500 Kronecker graph of 2^scale vertices, edge factor 16."""
    from hornet.generators import kronecker_edges
    return kronecker_edges(scale, edge_factor=16, seed=seed, xp=xp)


def kronecker_graph_gpu(scale: int):
    """(graph, build seconds): the updates benchmark's undirected Kronecker graph of
    ``scale`` (seed ``scale``) built on the GPU, the device synchronised."""
    import cupy
    import hornet
    t = time.perf_counter()
    src, dst = kronecker(scale, seed=scale, xp=cupy)
    g = hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False,
                                device="gpu")
    del src, dst
    cupy.cuda.Device().synchronize()
    return g, time.perf_counter() - t


def real_graph_path(name: str) -> Path:
    """The file of a real graph in the data folder (``email-Enron`` -> email-Enron.txt.gz)."""
    for path in sorted(DATA.glob(f"{name}.*")):
        return path
    raise FileNotFoundError(f"no graph {name!r} in {DATA} (set HORNET_DATA)")



def weighted_real_graph(name: str):
    """(GPU graph, V) of a real graph of the data folder: undirected, self loops dropped, with
    the same random weights as float64 ``weight`` and float32 ``w32`` (seed 2)."""
    import cupy
    import hornet
    s, d, _ = hornet.io.read_edges(real_graph_path(name))
    n = int(max(s.max(), d.max())) + 1
    keep = s != d
    s, d = s[keep], d[keep]
    w = np.random.default_rng(2).random(s.shape[0])
    g = hornet.Graph.from_edges(cupy.asarray(s), cupy.asarray(d), num_vertices=n,
                                directed=False, device="gpu", weight=cupy.asarray(w),
                                w32=cupy.asarray(w.astype(np.float32)))
    return g, n

# ---------------------------------------------------------------------------------- tables
def _cell(x) -> str:
    return f"{x:.3g}" if isinstance(x, float) else str(x)


def table_lines(header: Sequence[str], rows: Sequence[Sequence]) -> list[str]:
    """A Markdown table (header, separator, one line per row; floats as ``.3g``)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(x) for x in r) + " |" for r in rows]
    return lines


def table_md(title: str, header: Sequence[str], rows: Sequence[Sequence], notes: str = "",
             device: str = "cpu") -> str:
    """The text of :func:`write_table`: title, header (device, command, date), notes, table."""
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"# {title}", "", device_line(device), f"Command: `{command()}`", f"Date: {date}",
             ""]
    if notes.strip():
        lines += [notes.strip(), ""]
    return "\n".join(lines + table_lines(header, rows)) + "\n"


def write_csv(name: str, header: Sequence[str], rows: Sequence[Sequence]) -> Path:
    """Write ``<results>/<name>.csv``."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.csv"
    with open(path, "w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")       # quotes only fields holding a comma
        out.writerow(header)
        for r in rows:
            out.writerow([_cell(x) for x in r])
    return path


def write_table(name: str, title: str, header: Sequence[str], rows: Sequence[Sequence],
                notes: str = "", device: str = "cpu", echo: bool = True) -> Path:
    """Write ``<results>/<name>.md`` (header, notes, Markdown table) and ``<name>.csv``, print
    the Markdown (``echo``), and return its path. ``device``: "cpu" or "gpu" (what the header
    names)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    text = table_md(title, header, rows, notes, device)
    path = RESULTS / f"{name}.md"
    path.write_text(text)
    write_csv(name, header, rows)
    if echo:
        print(text, end="", flush=True)
    return path


#: the line prefixes a results table names its device with
DEVICE_LINES = ("Device: ", "Machine: ", "- GPU: ", "Machines: GPU: ")


def read_table(name: str, results: Path | None = None) -> tuple[str, list[dict[str, str]]]:
    """(the device line (``Device:``, ``Machine:``, ``- GPU:`` or ``Machines: GPU:``), the rows as dicts) of the first Markdown table in
    ``<results>/<name>.md``. Raises FileNotFoundError when the table is absent."""
    text = ((results or RESULTS) / f"{name}.md").read_text()
    device = next((line[len(prefix):] for line in text.splitlines()
                   for prefix in DEVICE_LINES if line.startswith(prefix)), "unknown device")
    header, rows = None, []
    for line in text.splitlines():
        if not line.startswith("|"):
            if header is not None:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
        elif not all(set(c) <= {"-", ":"} for c in cells):
            rows.append(dict(zip(header, cells)))
    return device, rows


# ------------------------------------------------------------------ Table 19.2 (k-truss)
# Table 19.2 of the k-truss chapter (shared/seeds/hornet-ktruss-chapters.txt): "Networks used
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


def ktruss_ref(name: str) -> tuple[int, float] | None:
    """``(k_max, cuSTINGER-Delta seconds)`` of Table 19.2 for a graph name (``kronN`` for the
    Graph500 scale-N rows), or None."""
    return TABLE_19_2.get(table_19_2_name(name))
