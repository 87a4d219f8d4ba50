"""Dynamic triangle counting and dynamic SpMV against static recomputation, batch by batch.

For each graph and batch size (10 .. 10^6): insert a batch of uniformly random vertex pairs,
update the dynamic objects with the change, time a static recomputation of the same graph
state, then delete the same edges and update again. All in one process, on one graph.

Timed per batch (medians over ``--repeats`` rounds after one warm-up round; GPU: CUDA events
around each whole call, host work and launches included):

- ``graph``: the graph's own ``insert_edges`` / ``delete_edges``;
- ``TC dyn``: ``DynamicTriangleCount.update`` (count, per-vertex counts and per-edge support
  all kept current);
- ``TC static``: ``triangle_count(g)`` (the count alone: the cheapest static recomputation, so
  the ratio is conservative for the dynamic object, which keeps three results);
- ``SpMV resum`` / ``SpMV delta``: ``DynamicSpMV.update`` in its default mode (touched rows
  re-summed: exact) and in pure delta mode (``resum=False``);
- ``SpMV static``: ``spmv(g, x)``.

Ratios are static time / dynamic time (> 1: the update is faster). ``TC edges/s`` = edges
really changed / (graph + TC dyn time): updates per second including the graph's own update.
The crossover is the smallest measured batch whose ratio falls below 1 (recomputing is
cheaper from there on). Each graph's dynamic results are checked against the static functions
after its last batch.

    python bench/dynamic.py --device cpu --cpu-graphs ca-HepPh --cpu-kron 16 --batches 10,1000
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

import hornet
from bench.common import DATA, machine, write_table
from hornet.algos import (DynamicSpMV, DynamicTriangleCount, spmv, triangle_count,
                          triangles_per_vertex)

HEADER = ["graph", "device", "edges", "op", "batch", "changed", "graph ms", "TC dyn ms",
          "TC static ms", "TC ratio", "TC edges/s", "SpMV resum ms", "SpMV delta ms",
          "SpMV static ms", "SpMV resum ratio", "SpMV delta ratio"]


class Timer:
    """Seconds of one call: perf_counter on the CPU, CUDA events on the GPU."""

    def __init__(self, device: str):
        self.gpu = device == "gpu"
        if self.gpu:
            import cupy
            self.cupy = cupy

    def __call__(self, fn):
        if not self.gpu:
            t = time.perf_counter()
            out = fn()
            return time.perf_counter() - t, out
        cp = self.cupy
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        out = fn()
        b.record()
        b.synchronize()
        return cp.cuda.get_elapsed_time(a, b) / 1e3, out


def _median_ms(values) -> float:
    return 1e3 * statistics.median(values) if values else float("nan")


def run_graph(label: str, g, device: str, batches: list[int], repeats: int,
              static_repeats: int, seed: int = 0) -> tuple[list[list], str]:
    """Rows of the table for one graph, and a line saying whether the results verified."""
    xp = np if device == "cpu" else __import__("cupy")
    timer = Timer(device)
    n = g.num_vertices
    rng = np.random.default_rng(seed)
    x = xp.asarray(rng.integers(-4, 5, n).astype(np.float64))    # exact sums in any order
    t0 = time.perf_counter()
    tc = DynamicTriangleCount(g)
    sp = DynamicSpMV(g, x)
    spd = DynamicSpMV(g, x, resum=False)
    if device == "gpu":
        xp.cuda.Device().synchronize()
    print(f"{label}: {g.num_edges} edges, dynamic objects built in "
          f"{time.perf_counter() - t0:.2f} s", flush=True)
    # warm the static kernels
    triangle_count(g)
    spmv(g, x)
    rows = []
    for b in batches:
        if b > 2 * g.num_edges:
            continue
        t = {k: [] for k in ("gi", "tci", "spi", "sdi", "gd", "tcd", "spd", "sdd")}
        changed = {"insert": [], "delete": []}
        static_tc, static_sp = [], []
        for rnd in range(repeats + 1):
            u = xp.asarray(rng.integers(0, n, b).astype(np.int32))
            v = xp.asarray(rng.integers(0, n, b).astype(np.int32))
            gi, ins = timer(lambda: g.insert_edges(u, v))
            tci, _ = timer(lambda: tc.update(ins))
            spi, _ = timer(lambda: sp.update(ins))
            sdi, _ = timer(lambda: spd.update(ins))
            if rnd == 1:                          # the static recomputation of this state
                for _ in range(static_repeats):
                    static_tc.append(timer(lambda: triangle_count(g))[0])
                    static_sp.append(timer(lambda: spmv(g, x))[0])
            gd, dele = timer(lambda: g.delete_edges(ins.src, ins.dst))
            tcd, _ = timer(lambda: tc.update(dele))
            spdl, _ = timer(lambda: sp.update(dele))
            sddl, _ = timer(lambda: spd.update(dele))
            if rnd == 0:
                continue                          # warm-up round
            for k, val in zip(t, (gi, tci, spi, sdi, gd, tcd, spdl, sddl)):
                t[k].append(val)
            changed["insert"].append(len(ins))
            changed["delete"].append(len(dele))
        s_tc, s_sp = _median_ms(static_tc), _median_ms(static_sp)
        for op, (kg, ktc, ksp, ksd) in (("insert", ("gi", "tci", "spi", "sdi")),
                                        ("delete", ("gd", "tcd", "spd", "sdd"))):
            mg, mtc, msp, msd = (_median_ms(t[k]) for k in (kg, ktc, ksp, ksd))
            ch = int(statistics.median(changed[op]))
            rate = ch / ((mg + mtc) / 1e3) if mg + mtc > 0 else float("nan")
            rows.append([label, device, g.num_edges, op, b, ch, mg, mtc, s_tc, s_tc / mtc,
                         rate, msp, msd, s_sp, s_sp / msp, s_sp / msd])
        print(f"  batch {b}: TC {rows[-2][7]:.3f}/{rows[-1][7]:.3f} ms vs {s_tc:.3f} ms, "
              f"SpMV {rows[-2][11]:.3f}/{rows[-2][12]:.3f} ms vs {s_sp:.3f} ms", flush=True)
    ok = (tc.count == triangle_count(g)
          and np.array_equal(_host(tc.per_vertex), _host(triangles_per_vertex(g)))
          and np.array_equal(_host(sp.y), _host(spmv(g, x)))
          and np.array_equal(_host(spd.y), _host(spmv(g, x))))
    return rows, f"{label} ({device}): dynamic results {'equal' if ok else 'DIFFER FROM'} static"


def _host(a):
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)


def crossover(rows: list[list], col: int) -> dict:
    """(graph, device, op) -> the smallest batch whose ratio (column ``col``) is below 1, or
    None when every measured batch was faster to update."""
    out = {}
    for r in rows:
        key = (r[0], r[1], r[3])
        if out.get(key) is None:
            out[key] = r[4] if float(r[col]) < 1 else None
    return out


def _device_name() -> str:
    import cupy
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", choices=("cpu", "gpu", "both"), default="both")
    p.add_argument("--cpu-graphs", default="ca-HepPh,email-Enron,soc-Epinions1",
                   help="comma-separated names of graphs in shared/data (without extension)")
    p.add_argument("--cpu-kron", default="20", help="Kronecker scales on the CPU (comma list)")
    p.add_argument("--gpu-kron", default="22,24", help="Kronecker scales on the GPU")
    p.add_argument("--batches", default="10,100,1000,10000,100000,1000000")
    p.add_argument("--repeats", type=int, default=5, help="timed rounds per batch size")
    p.add_argument("--static-repeats", type=int, default=3)
    p.add_argument("--name", default="dynamic", help="results file stem in bench/results")
    p.add_argument("--note", default="", help="a sentence about the run for the notes")
    args = p.parse_args(argv)
    batches = [int(float(b)) for b in args.batches.split(",") if b]
    rows, checks, devices = [], [], []
    if args.device in ("cpu", "both"):
        devices.append("CPU: " + machine())
        for name in [s for s in args.cpu_graphs.split(",") if s]:
            path = next(iter(sorted(DATA.glob(name + ".*"))), None)
            if path is None:
                print(f"no graph {name} in {DATA}", file=sys.stderr)
                return 2
            src, dst, _ = hornet.io.read_edges(path)
            g = hornet.Graph.from_edges(src, dst, device="cpu")
            r, c = run_graph(name, g, "cpu", batches, args.repeats, args.static_repeats)
            rows += r
            checks.append(c)
        for scale in [int(s) for s in args.cpu_kron.split(",") if s]:
            src, dst = hornet.generators.kronecker_edges(scale, seed=1)
            g = hornet.Graph.from_edges(src, dst, device="cpu")
            r, c = run_graph(f"Kronecker {scale}", g, "cpu", batches, args.repeats,
                             args.static_repeats)
            rows += r
            checks.append(c)
    if args.device in ("gpu", "both"):
        import cupy
        devices.append("GPU: " + _device_name() + f", CuPy {cupy.__version__}")
        for scale in [int(s) for s in args.gpu_kron.split(",") if s]:
            src, dst = hornet.generators.kronecker_edges(scale, seed=1, xp=cupy)
            g = hornet.Graph.from_edges(src, dst, device="gpu")
            del src, dst
            r, c = run_graph(f"Kronecker {scale}", g, "gpu", batches, args.repeats,
                             args.static_repeats)
            rows += r
            checks.append(c)
            del g
            cupy.get_default_memory_pool().free_all_blocks()
    cross_tc = crossover(rows, HEADER.index("TC ratio"))
    cross_sp = crossover(rows, HEADER.index("SpMV resum ratio"))
    cross_sd = crossover(rows, HEADER.index("SpMV delta ratio"))
    lines = []
    for key in cross_tc:
        fmt = lambda v: "beyond the largest batch measured" if v is None else f"batch {v}"
        lines.append(f"- {key[0]} ({key[1]}, {key[2]}): TC {fmt(cross_tc[key])}; SpMV resum "
                     f"{fmt(cross_sp[key])}; SpMV delta {fmt(cross_sd[key])}")
    notes = "\n".join([
        __doc__.split("\n\n", 1)[1].rsplit("\n\n", 1)[0],
        "",
        "Machines: " + "; ".join(devices) + ".",
        *([args.note] if args.note else []),
        f"Command: bench/dynamic.py {' '.join(argv if argv is not None else sys.argv[1:])}",
        f"Rounds: {args.repeats} timed after one warm-up; static: {args.static_repeats} runs "
        "on the state after the first timed insertion.",
        "",
        "Checks after the last batch:",
        *[f"- {c}" for c in checks],
        "",
        "Crossover (smallest batch where recomputing is cheaper than updating):",
        *lines,
    ])
    write_table(args.name, "Dynamic TC and SpMV versus static recomputation", HEADER, rows,
                notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
