"""Every figure of the README's table: runs the benchmarks behind it on this machine, then prints the table.

    python3 -m bench readme              # CPU benchmarks; on a GPU machine the GPU ones too
    python3 -m bench readme --no-run     # only assemble the table from the current results
    python3 -m bench readme --cpu-only   # skip the GPU benchmarks even where a GPU is present
    python3 -m bench readme --dry-run    # print the benchmark commands a run would make

Each row of the README's "Current figures" table is one claim, read from the current table of
the benchmark that measures it (bench/results/NAME.md), with the device named there and the
command that regenerates it. The assembled table is written to bench/results/readme.md.
"""
from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from typing import Callable

from bench.common import ROOT, gpu_available, read_table, write_table

NAME = "readme"
Rows = list[dict[str, str]]


@dataclass(frozen=True)
class Figure:
    """One claim of the README: the benchmark run that measures it and how to read it."""
    claim: str
    command: tuple[str, ...]          # benchmark name and its options
    gpu: bool
    read: Callable[[Rows], str]       # the figure, quoted from the benchmark's table
    table: str | None = None          # the table's name, when not the benchmark's
    device: str | None = None         # the device, for tables whose header does not name it


def row(rows: Rows, **match: str) -> dict[str, str]:
    """The first row whose columns equal ``match`` (keyword ``_`` stands for a space)."""
    for r in rows:
        if all(r.get(k.replace("_", " ")) == v for k, v in match.items()):
            return r
    raise LookupError(f"no row with {match}")


def span(values: list[str]) -> str:
    """``lo-hi`` of table cells, each quoted as printed (one value: itself); a cell's
    footnote mark (`` *``) is not part of its value."""
    nums = sorted((v.rstrip(" *") for v in values), key=float)
    return nums[0] if nums[0] == nums[-1] else f"{nums[0]}-{nums[-1]}"


def column(rows: Rows, col: str, keep: Callable[[dict[str, str]], bool]) -> list[str]:
    return [r[col] for r in rows if keep(r) and r[col] not in ("", "-")]


KRON20_CPU = "Kronecker scale 20 (ef 16)"


def cpu_large(rows: Rows) -> str:
    r = row(rows, graph=KRON20_CPU, batch="1000000")
    return f"insert {r['hornet insert/s']}, delete {r['hornet delete/s']} edges/s"


def cpu_vs_networkx(rows: Rows) -> str:
    r = row(rows, graph=KRON20_CPU, batch="100000")
    return f"{r['insert x nx']}x networkx `add_edges_from`"


def memory(rows: Rows) -> str:
    graphs = [r for r in rows if r["graph"] != "**mean**"]
    return (f"{row(rows, graph='**mean**')['reserved/CSR']}x the CSR's bytes (mean of "
            f"{len(graphs)} graphs)")


def churn(rows: Rows) -> str:
    met = sum(r["criterion met"] == "yes" for r in rows)
    return (f"{span(column(rows, 'last round/CSR', lambda r: True))}x the CSR's bytes after 100 "
            f"rounds of 10% churn (at most 1.5x and within 10% of the first round on {met} of "
            f"{len(rows)} graphs)")


def window(rows: Rows) -> str:
    ratio = {r["batch"]: r["window / no window"] for r in rows if r["window / no window"]}
    return (f"window / no window {ratio['100,000']} (batches of 10^5), {ratio['10,000']} "
            f"(10^4); 10^7 random events, window 2x10^6")


def cpu_algos_vs_csr(rows: Rows) -> str:
    ratio = "graph speed / CSR speed"
    spmv = column(rows, ratio, lambda r: r["algorithm"].startswith("SpMV"))
    bfs = column(rows, ratio, lambda r: r["algorithm"] == "BFS")
    return f"speed against CSR: SpMV {span(spmv)}x, BFS {span(bfs)}x"


def cpu_triangles(rows: Rows) -> str:
    vs_nx = column(rows, "baseline s / graph s",
                   lambda r: r["algorithm"] == "triangles" and r["baseline"] == "networkx")
    return f"{span(vs_nx)}x networkx `triangles`"


def gpu_large(rows: Rows) -> str:
    a, b = (row(rows, graph=f"Kronecker {s} (undirected)", batch="10000000") for s in (20, 24))
    return (f"insert / delete {a['insert edges/s']} / {a['delete edges/s']} edges/s (Kronecker "
            f"20), {b['insert edges/s']} / {b['delete edges/s']} (24)")


def gpu_1000(rows: Rows) -> str:
    cycle = [r for r in rows if r["case"].startswith("cycle")]
    hubs = [r for r in rows if r["case"].startswith("hubs")]
    return (f"insert / delete {span([r['insert us'] for r in cycle])} / "
            f"{span([r['delete us'] for r in cycle])} us; touching hub lists "
            f"{span([r['insert us'] for r in hubs])} / {span([r['delete us'] for r in hubs])} us")


def gpu_algos(rows: Rows) -> str:
    rows = [r for r in rows if r["graph"].startswith("kron")]          # (not the real graphs)
    spmv = lambda r: r["algorithm"] == "SpMV float64 weights"
    bfs = lambda r: r["algorithm"] == "BFS direction-optimizing"
    tri = lambda r: r["algorithm"] == "triangle count"
    rates = [c.split()[0] for c in column(rows, "graph rate", tri)]
    return (f"speed against CSR: SpMV {span(column(rows, 'CSR/graph', spmv))}x, BFS "
            f"{span(column(rows, 'CSR/graph', bfs))}x, triangles "
            f"{span(column(rows, 'CSR/graph', tri))}x; triangle counting "
            f"{span(rates)} x10^9 edges/s")


def gpu_spmv(rows: Rows) -> str:
    library = [r for r in rows if r["variant"].startswith("library")]
    # (like for like: the float32 rows with hornet's float32 y, as cuSPARSE's)
    weighted = lambda kron: lambda r: r["graph"].startswith("kron") == kron and \
        not r["weights"].startswith("none") and "hornet y float64" not in r["weights"]
    ratio = lambda kron: span(column(library, "cuSPARSE/hornet", weighted(kron)))
    return f"weighted, Kronecker 20-24 {ratio(True)}x, real graphs {ratio(False)}x"


def gpu_truss(rows: Rows) -> str:
    speed = "speedup (Table 19.2 s / delta s)"
    kron = [r for r in rows if r["graph"].startswith("kron") and r[speed] not in ("", "-")]
    return ", ".join(f"{r['graph'].split()[0]}: {r[speed]}x" for r in kron)


def small_share(r: dict[str, str], edges: str, batch: str) -> bool:
    """A batch of at most 0.1% of the graph's edges."""
    return float(r[batch]) <= 1e-3 * float(r[edges])


def dynamic_tc(rows: Rows) -> str:
    small = [r for r in rows if small_share(r, "edges", "batch")]
    big = [r for r in rows if r["batch"] == "1000000" and r["op"] == "insert"]
    rate = f"; {big[-1]['TC edges/s']} edge updates/s with the graph's own update at " \
        f"10^6 ({big[-1]['graph']})" if big else ""
    return (f"triangles {span(column(small, 'TC ratio', bool))}x, SpMV "
            f"{span(column(small, 'SpMV resum ratio', bool))}x (exact re-sum) / "
            f"{span(column(small, 'SpMV delta ratio', bool))}x (delta) faster than "
            f"recomputing, batches <= 0.1% of the edges{rate}")


def dynamic_bfs(rows: Rows) -> str:
    small = [r for r in rows if float(r["batch/E %"]) <= 0.1]
    nk = column(small, "vs networkit", bool)
    return (f"{span(column(small, 'speedup', bool))}x faster than static BFS, batches <= 0.1% "
            "of the edges" + (f"; {span(nk)}x NetworKit DynBFS's speed" if nk else ""))


def dynamic_truss(rows: Rows) -> str:
    small = [r for r in rows if float(r["share of edges"]) <= 1e-3]
    parts = []
    for kind in ("insert uniform", "delete", "re-insert"):
        sel = column(small, "speedup", lambda r, k=kind: r["batch kind"] == k)
        if sel:
            parts.append(f"{kind} {span(sel)}x")
    return "against a full decomposition, batches <= 0.1% of the edges: " + ", ".join(parts)


def replay_ratio(rows: Rows) -> str:
    dyn = [r for r in rows if r["analytics"] == "dynamic"]
    return (f"the four analytics kept current take {span(column(dyn, 'static / this', bool))}x "
            f"less time than recomputing them ({len(dyn)} temporal streams)")


FIGURES = (
    Figure("CPU batches of 10^6 random edges, Kronecker 20",
           ("updates_cpu",), False, cpu_large),
    Figure("CPU inserts of 10^5 random edges, Kronecker 20", ("updates_cpu",), False,
           cpu_vs_networkx),
    Figure("CPU memory after `from_csr`, real graphs", ("memory_cpu",), False, memory),
    Figure("CPU memory under churn, real graphs", ("memory_churn_cpu",), False, churn),
    Figure("CPU static algorithms, 4 graphs", ("algos_cpu",), False, cpu_algos_vs_csr),
    Figure("CPU triangle counting", ("algos_cpu",), False, cpu_triangles),
    Figure("GPU batches of 10^7 random edges", ("updates_gpu",), True,
           gpu_large),
    Figure("GPU batches of 1,000 edges, end to end, Kronecker 20 and 24",
           ("small_batches_gpu",), True, gpu_1000),
    Figure("GPU static algorithms, Kronecker 20-24",
           ("algos_gpu", "--scales", "20", "22", "24", "--tc-scales", "26"), True, gpu_algos),
    Figure("GPU SpMV against cuSPARSE, same matrix", ("spmv_gpu", "--sweep", "--repeats", "11"),
           True, gpu_spmv),
    Figure("GPU max k-truss, speed-up over Table 19.2 (cuSTINGER-Delta, P100)",
           ("truss_gpu", "--no-iterative"), True, gpu_truss),
    Figure("CPU dynamic triangles and SpMV, 3 real graphs and Kronecker 20",
           ("dynamic", "--device", "cpu", "--cpu-kron", "20", "--name", "dynamic_cpu"), False,
           dynamic_tc, table="dynamic_cpu"),
    Figure("GPU dynamic triangles and SpMV, Kronecker 22 and 24",
           ("dynamic", "--device", "gpu", "--gpu-kron", "22,24", "--name", "dynamic_gpu"), True,
           dynamic_tc, table="dynamic_gpu"),
    Figure("CPU dynamic BFS, 3 real graphs and Kronecker 20", ("dynamic_bfs", "--device", "cpu"),
           False, dynamic_bfs, device="Intel Xeon, 2 cores"),
    Figure("GPU dynamic BFS, Kronecker 22 and 24",
           ("dynamic_bfs", "--device", "gpu", "--name", "dynamic_bfs_gpu"), True, dynamic_bfs,
           table="dynamic_bfs_gpu"),
    Figure("CPU dynamic truss numbers, real graphs", ("dynamic_truss",), False, dynamic_truss),
    Figure("CPU replay of temporal streams, batches of 100",
           ("replay", "--device", "cpu"), False, replay_ratio, table="replay_cpu"),
    Figure("GPU replay of temporal streams, batches of 100",
           ("replay", "--device", "gpu"), True, replay_ratio, table="replay_gpu"),
    Figure("CPU replay with a sliding window, against none", ("window", "--device", "cpu"),
           False, window, table="window_cpu"),
    Figure("GPU replay with a sliding window, against none", ("window", "--device", "gpu"),
           True, window, table="window_gpu"),
)


def short_device(device: str) -> str:
    """The device of a table's ``Device:`` line, shortened: ``Intel Xeon, 2 cores`` of
    ``Intel(R) Xeon(R) Processor, 2 cores (2 Numba threads). Python ...``, ``NVIDIA H100 80GB
    HBM3`` of ``NVIDIA H100 80GB HBM3, 79 GiB (host: ...)``."""
    for mark in ("(R)", "(TM)", " Processor", " CPU"):
        device = device.replace(mark, "")
    cut = len(device)
    for mark in (" (", ", Python", ". Python", ", CuPy", ". CuPy"):
        at = device.find(mark)
        if 0 <= at < cut:
            cut = at
    return re.sub(r", \d+ GiB$", "", device[:cut].rstrip("."))


def assemble() -> list[list[str]]:
    """The README table's rows: claim, figure, device, command."""
    rows = []
    for fig in FIGURES:
        device, table = read_table(fig.table or fig.command[0])
        device = fig.device or device
        rows.append([fig.claim, fig.read(table), short_device(device),
                     f"`{shlex.join(['python3', '-m', 'bench', *fig.command])}`"])
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench readme", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-run", action="store_true", help="only assemble the current figures")
    ap.add_argument("--cpu-only", action="store_true", help="skip the GPU benchmarks")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the benchmark commands a run would make, run nothing")
    args = ap.parse_args(argv)
    gpu = gpu_available() and not args.cpu_only
    commands = dict.fromkeys(f.command for f in FIGURES if gpu or not f.gpu)
    if args.dry_run:
        for command in commands:
            print(shlex.join(["python3", "-m", "bench", *command]))
        return
    if not args.no_run:
        for command in commands:
            print(f"== python3 -m bench {shlex.join(command)}", flush=True)
            subprocess.run([sys.executable, "-m", "bench", *command], cwd=ROOT, check=True)
        if not gpu:
            print("== no GPU here (or --cpu-only): the GPU figures are those of the current "
                  "tables", flush=True)
    write_table(NAME, "Current figures (the README's table)",
                ["claim", "figure", "device", "regenerate"], assemble(),
                "Each figure is quoted from the current table of the benchmark named in its row "
                "(bench/results/NAME.md), which names the device and date of its run.")


if __name__ == "__main__":
    main()
