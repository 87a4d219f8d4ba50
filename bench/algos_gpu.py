"""GPU algorithm benchmark: the dynamic hornet.Graph against the same kernels on a plain
CSR view of the same graph, SpMV against cuSPARSE (cupyx.scipy.sparse ``A @ x``), and the
maximal k-truss against Table 19.2 of the k-truss chapter (cuSTINGER-Delta on a P100).

Kernels (SpMV, BFS, triangle counting; ``--skip-kernels`` skips them): Graph500-style
Kronecker graphs (R-MAT a=0.57, b=c=0.19, edge factor 16) of ``--scales`` generated on the
device, undirected (both directions stored; duplicates and self-loops dropped on insertion).
Timing: CUDA events around each call, median of ``--repeats`` runs after one warm-up run (host
syncs inside the calls included).

Max k-truss (``--skip-truss`` skips it): ``algos.max_truss(g, method=...)`` on a
``hornet.Graph(device="gpu")``, methods "delta" and "iterative" (``--no-iterative`` skips the
latter), on Kronecker graphs of ``--truss-scales`` (Table 19.2's graph500-scaleN) and on the
Table 19.2 graphs found in the data folder (``HORNET_DATA``, default ../shared/data;
``--no-truss-real`` skips them). One warm-up run, then the median of ``--truss-repeats`` runs
timed with CUDA events (a single timed run once a run takes over 20 s).

Writes ``bench/results/algos_gpu.md`` (the kernel table, then a "## Max k-truss" section) and
``algos_gpu.csv`` / ``algos_gpu_truss.csv``. A part that is not run keeps its section of the
existing ``algos_gpu.md`` (and its CSV). Every k-truss row is printed as it comes and the
markdown is rewritten after each one, so a run cut short keeps the rows done so far.

    PYTHONPATH=. python bench/bench_algos_gpu.py [--scales 20 22] [--repeats 5] [--skip-kernels]
        [--truss-scales 18 19 20 21] [--no-truss-real] [--truss-repeats 3] [--no-iterative]
"""
from __future__ import annotations

import argparse
import statistics
import time
import traceback

from common import (DATA, RESULTS, TABLE_19_2, TABLE_19_2_SIZES, cuda_times, table_lines,
                    table_md, write_csv)

import cupy
import cupyx.scipy.sparse as cpx
import numpy as np

import hornet
from hornet import algos
from hornet.adjacency import AdjacencyView


def kernel_rows(scale, g, csr, x, nnz, repeats, rows) -> None:
    """Kernel-only SpMV times (the SpMV kernel into preallocated arrays, plus for the graph the
    gather of y from its visited rows; no scan, allocation or host sync) of both GPU kernels
    on the graph and on the CSR view, each visited in its storage order (memoized per view
    with the rows of the warp kernel's ranges, as ``algos.spmv`` does)."""
    from hornet.algos import _gpu
    for weight in (None, "weight"):
        for kernel in ("warp", "merge"):
            launches = []
            for view in (algos.as_adjacency(g, properties=weight is not None), csr):
                visit = _gpu._visit_rows(view)       # rows in storage order (memoized)
                wptr, ctype = visit.ptr, "float"
                if weight:
                    wptr, ctype = visit.property_ptr(view, weight), "double"
                y, y_rows = cupy.zeros(view.num_vertices), cupy.zeros(visit.count + 1)
                launches.append(lambda a=(kernel, ctype, weight is not None, False, visit, wptr,
                                          x, y, y_rows): _gpu._spmv_rows(*a))
            times, _ = cuda_times(launches, repeats)
            tg, tc = times
            rows.append([scale, f"SpMV kernel only: {kernel}, "
                         + ("float64 weights" if weight else "unweighted"),
                         f"{tg * 1e3:.3f}", f"{tc * 1e3:.3f}", "", f"{nnz / tg / 1e9:.2f} Gnnz/s",
                         f"{tc / tg:.2f}", "", "no scan, allocation or host sync"])
            print(rows[-1], flush=True)


KERNEL_TITLE = "GPU static algorithms: dynamic graph vs CSR view vs cuSPARSE"
KERNEL_HEADER = ["scale", "algorithm", "graph ms", "CSR ms", "cuSPARSE ms", "graph rate",
                 "CSR/graph", "cuSPARSE/graph", "note"]


def kernel_section(args, dev: str) -> str:
    """SpMV, BFS and triangle counting rows; writes algos_gpu.csv, returns the markdown."""
    rows, sizes = [], []
    for scale in args.scales:
        n = 1 << scale
        src, dst = hornet.generators.kronecker_edges(scale, xp=cupy, seed=1)
        w = cupy.random.RandomState(2).random_sample(src.shape[0])
        t0 = time.perf_counter()
        g = hornet.Graph.from_edges(src, dst, num_vertices=n, directed=False, device="gpu",
                                    weight=w)
        cupy.cuda.Device().synchronize()
        build = time.perf_counter() - t0
        del src, dst, w
        indptr, indices, data = g.to_csr("weight")
        csr = AdjacencyView.from_csr(indptr, indices, directed=False, sorted=True, weights=data)
        nnz = int(indices.shape[0])
        A1 = cpx.csr_matrix((cupy.ones(nnz), indices, indptr), shape=(n, n))
        Aw = cpx.csr_matrix((data, indices, indptr), shape=(n, n))
        maxdeg = int(g.degree().max())
        sizes.append(f"scale {scale}: {n:,} vertices, {g.num_edges:,} undirected edges "
                     f"({nnz:,} stored entries), max degree {maxdeg:,}; graph built in "
                     f"{build:.2f} s")
        print(sizes[-1], flush=True)
        x = cupy.random.RandomState(3).standard_normal(n)

        def spmv_rows(label, weight, A):
            (tg, tc, ts), _ = cuda_times([lambda: algos.spmv(g, x, weight=weight),
                                          lambda: algos.spmv(csr, x, weight=weight),
                                          lambda: A @ x], args.fast_repeats)
            yg, yc, ys = algos.spmv(g, x, weight=weight), algos.spmv(csr, x, weight=weight), A @ x
            err = float(cupy.max(cupy.abs(yg - ys)) / max(float(cupy.max(cupy.abs(ys))), 1e-300))
            err_c = float(cupy.max(cupy.abs(yg - yc)))
            rate = lambda t: nnz / t / 1e9
            rows.append([scale, f"SpMV {label}", f"{tg * 1e3:.3f}", f"{tc * 1e3:.3f}",
                         f"{ts * 1e3:.3f}", f"{rate(tg):.2f} Gnnz/s", f"{tc / tg:.2f}",
                         f"{ts / tg:.2f}", f"max rel diff vs cuSPARSE {err:.1e}, vs CSR {err_c:.1e}"])
            print(rows[-1], flush=True)

        spmv_rows("unweighted (cuSPARSE: values 1.0)", None, A1)
        spmv_rows("float64 weights", "weight", Aw)

        def new_views(calls):                  # as after an update: nothing memoized yet
            def graph():
                g._views.clear()
                for _ in range(calls):
                    algos.spmv(g, x, weight="weight")

            def csr_view():
                v = AdjacencyView.from_csr(indptr, indices, directed=False, sorted=True,
                                           weights=data)
                for _ in range(calls):
                    algos.spmv(v, x, weight="weight")
            return [graph, csr_view]

        for calls, what in ((1, "first call on a new view (rows in id order)"),
                            (2, "first two calls on a new view (the second sorts the rows by "
                                "storage)")):
            (tg, tc), _ = cuda_times(new_views(calls), args.fast_repeats)
            rows.append([scale, f"SpMV float64 weights, {what}", f"{tg * 1e3:.3f}",
                         f"{tc * 1e3:.3f}", "", f"{calls * nnz / tg / 1e9:.2f} Gnnz/s",
                         f"{tc / tg:.2f}", "", "includes making the view and its degree scan"])
            print(rows[-1], flush=True)

        kernel_rows(scale, g, csr, x, nnz, args.fast_repeats, rows)

        deg = g.degree()
        cand = cupy.flatnonzero(deg > 0)
        source = int(cand[int(np.random.default_rng(scale).integers(0, cand.shape[0]))])
        for do in (True, False):
            lv = algos.bfs(g, source, direction_optimizing=do)
            assert bool(cupy.all(lv == algos.bfs(csr, source, direction_optimizing=do)))
            edges = int(deg[lv >= 0].sum(dtype=cupy.int64)) // 2
            (tg, tc), _ = cuda_times([lambda: algos.bfs(g, source, direction_optimizing=do),
                                      lambda: algos.bfs(csr, source, direction_optimizing=do)],
                                     args.fast_repeats)
            rows.append([scale, "BFS " + ("direction-optimizing" if do else "top-down only"),
                         f"{tg * 1e3:.3f}", f"{tc * 1e3:.3f}", "",
                         f"{edges / tg / 1e9:.2f} GTEPS", f"{tc / tg:.2f}", "",
                         f"source {source}, {int((lv >= 0).sum()):,} reached, "
                         f"{int(lv.max()) + 1} levels, {edges:,} edges"])
            print(rows[-1], flush=True)

        tri = algos.triangle_count(g)
        assert algos.triangle_count(csr) == tri
        (tg, tc), _ = cuda_times([lambda: algos.triangle_count(g),
                                  lambda: algos.triangle_count(csr)], args.repeats)
        rows.append([scale, "triangle count", f"{tg * 1e3:.3f}", f"{tc * 1e3:.3f}", "",
                     f"{tri / tg / 1e9:.3f} Gtriangles/s", f"{tc / tg:.2f}", "",
                     f"{tri:,} triangles"])
        print(rows[-1], flush=True)
        g = csr = A1 = Aw = indptr = indices = data = None     # free before the next scale
        cupy.get_default_memory_pool().free_all_blocks()

    notes = f"""
Device: {dev}. CuPy {cupy.__version__}. Produced by `bench/bench_algos_gpu.py`.

Graphs (Kronecker, undirected, generated on the device):
{chr(10).join('- ' + s for s in sizes)}

Times: CUDA events around each whole call (allocation, scans and host syncs included), one
warm-up run each, then the median of {args.fast_repeats} runs for SpMV and BFS rows
({args.repeats} for triangle counting) timed in interleaved rounds (graph, CSR and cuSPARSE take
turns, the order rotating each round, so drifts of clock or load hit them alike). "graph" = `hornet.Graph(device="gpu")` read through
its pointer view (lists in power-of-two blocks); "CSR" = the same kernels on
`AdjacencyView.from_csr(*g.to_csr())` (contiguous rows); "cuSPARSE" = cupyx.scipy.sparse
`A @ x` on the same CSR. SpMV rows use the default kernel (warp-segmented). SpMV visits rows
in storage order (memoized per view: the graph's rows by size class, then list address, from
its second call on an unchanged graph; the CSR's in id order), so its whole-call rows after the warm-up
time that order; the "first call" / "first two calls on a new view" rows time a fresh view each
time, as after an update. "Kernel only" rows time just the SpMV launch (and, on the graph, the
gather of y from the visited rows) of each kernel ("warp": warp-segmented rows; "merge":
merge-path per thread). Ratios > 1 mean the hornet graph is faster: CSR/graph = time on the
CSR view / time on the graph (target >= 0.9 for SpMV and BFS), cuSPARSE/graph = cuSPARSE time /
graph time (target >= 0.8 for SpMV). GTEPS: undirected edges of the reached component / time.
"""
    write_csv(NAME, KERNEL_HEADER, rows)
    return table_md(KERNEL_TITLE, KERNEL_HEADER, rows, notes)


# --------------------------------------------------------------------------------------------
# Max k-truss versus Table 19.2 of the k-truss chapter

NAME = "algos_gpu"
TRUSS_HEADING = "## Max k-truss versus Table 19.2"
TRUSS_HEADER = ["graph", "edges", "k_max", "Table 19.2 k_max", "delta s", "iterative s",
                "Table 19.2 s", "speedup (Table 19.2 s / delta s)", "note"]
SLOW_S = 20.0          # a run longer than this: a single timed run


def truss_time(fn, repeats: int):
    """One warm-up run of ``fn`` (its result kept), then up to ``repeats`` runs timed with CUDA
    events; after a run (warm-up included) over SLOW_S seconds only one timed run.

    Returns (median seconds, timed runs, warm-up seconds, the warm-up's result).
    """
    device = cupy.cuda.Device()
    device.synchronize()
    t = time.perf_counter()
    result = fn()
    device.synchronize()
    warm = time.perf_counter() - t
    times = []
    for _ in range(max(1, repeats) if warm <= SLOW_S else 1):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
        if times[-1] > SLOW_S:
            break
    return statistics.median(times), len(times), warm, result


def load_real(path):
    """A SNAP edge list as an undirected GPU graph (directed files: symmetrized)."""
    s, d, _ = hornet.io.read_edges(path)
    n = int(max(s.max(), d.max())) + 1
    return hornet.Graph.from_edges(cupy.asarray(s), cupy.asarray(d), num_vertices=n,
                                   directed=False, device="gpu")


def load_kron(scale: int, seed: int):
    """Graph500 Kronecker graph (edge factor 16) generated on the device, undirected."""
    src, dst = hornet.generators.kronecker_edges(scale, xp=cupy, seed=seed)
    return hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False,
                                   device="gpu")


def truss_graphs(args):
    """([(label, Table 19.2 name, build)], Table 19.2 real graphs missing from DATA): the real
    graphs first, in the table's order, then the Kronecker scales, smallest first."""
    todo, missing = [], []
    if args.truss_real:
        for name in TABLE_19_2:
            if name.startswith("graph500-"):
                continue
            path = DATA / f"{name}.txt.gz"
            if path.exists():
                todo.append((name, name, lambda p=path: load_real(p)))
            else:
                missing.append(name)
    for scale in sorted(set(args.truss_scales)):
        tname = f"graph500-scale{scale}"
        label = f"kron{scale} ({tname})" if tname in TABLE_19_2 else f"kron{scale}"
        todo.append((label, tname, lambda s=scale: load_kron(s, args.truss_seed)))
    return todo, missing


def truss_notes(args, dev: str, missing: list[str], done: bool) -> str:
    missing_txt = ", ".join(missing) if missing else "none"
    if not args.truss_real:
        missing_txt = "not run (--no-truss-real)"
    iterative = ("" if args.iterative else " (not run: --no-iterative)")
    return f"""Device: {dev}. CuPy {cupy.__version__}. Produced by `bench/bench_algos_gpu.py`.
{"" if done else chr(10) + "**Partial: the run had not finished when this was written.**" + chr(10)}
`hornet.algos.max_truss(g, method=...)` on a `hornet.Graph(device="gpu")` (undirected; the CUDA
peeling of `hornet/algos/_gpu.py`) against Table 19.2 of the k-truss chapter: k_max and the
cuSTINGER-Delta time on an NVIDIA P100, as printed there. "delta": the support of every edge is
counted once, then each round subtracts only the triangles lost with the removed edges (the
chapter's cuSTINGER-Delta scheme); "iterative"{iterative}: every round recounts the support of
the whole remaining graph (the chapter's cuSTINGER-Iterative). Speedup = Table 19.2 time / our
delta time (target >= 10).

Times: CUDA events around each whole `max_truss` call (edge index, support count, peeling and
host syncs included), one warm-up run, then the median of {args.truss_repeats} runs (a single
run once a run takes over {SLOW_S:.0f} s); the note gives the runs timed. Iterative runs stop for
the larger graphs once one took over {args.iterative_max_s:g} s (`--iterative-max-s`).

Graphs: "kronN (graph500-scaleN)" is our Graph500 Kronecker generator (R-MAT a=0.57,
b=c=0.19, edge factor 16, 2^N vertices randomly relabelled) run on the device with our seed
({args.truss_seed}), stored undirected with duplicates and self-loops dropped: the same family as
the chapter's graph500-scaleN, not necessarily the same graph, so k_max may differ. Real graphs:
the SNAP files of the data folder, read as undirected simple graphs (directed files
symmetrized). "edges": undirected edges of our graph (Table 19.2's |V| and |E| are in the note).
Scales that Table 19.2 does not list get "-" in its columns.
Table 19.2 graphs not in the data folder: {missing_txt}.
"""


def truss_section(args, dev: str, on_row) -> tuple[list[list], list[str]]:
    """The max k-truss rows; ``on_row(rows, missing)`` after each one."""
    todo, missing = truss_graphs(args)
    if missing:
        print(f"Table 19.2 graphs not in {DATA}: {', '.join(missing)}", flush=True)
    print("| " + " | ".join(TRUSS_HEADER) + " |", flush=True)
    rows = []
    slow_iterative = None          # (graph, seconds) of an iterative run over --iterative-max-s
    for label, tname, build in todo:
        k_ref, t_ref = TABLE_19_2.get(tname, ("-", None))     # scales outside the table: "-"
        v_ref, e_ref = TABLE_19_2_SIZES.get(tname, ("-", "-"))
        t_txt = "-" if t_ref is None else f"{t_ref:g}"
        g = None
        try:
            t0 = time.perf_counter()
            g = build()
            cupy.cuda.Device().synchronize()
            m = int(g.num_edges)
            print(f"{label}: {g.num_vertices:,} vertices, {m:,} undirected edges, built in "
                  f"{time.perf_counter() - t0:.2f} s", flush=True)
            td, nd, wd, (kd, sd, _) = truss_time(lambda: algos.max_truss(g, method="delta"),
                                                 args.truss_repeats)
            print(f"  delta: k_max {kd}, {int(sd.shape[0]):,} edges; warm-up {wd:.3f} s, "
                  f"median {td:.4f} s of {nd}", flush=True)
            from hornet.algos import _gpu
            st = _gpu.PEEL_STATS
            note = (f"{int(sd.shape[0]):,} edges in the {kd}-truss; delta: {nd} timed runs, "
                    f"{st.get('tests')} bisection steps, {st.get('rounds')} peeling rounds "
                    f"({st.get('recounts')} by recount)")
            if not args.iterative:
                t_it = "not run"
            elif slow_iterative is not None:
                t_it = "skipped"
                note += (f"; iterative skipped ({slow_iterative[1]:.0f} s on "
                         f"{slow_iterative[0]})")
            else:
                ti, ni, wi, (ki, si, _) = truss_time(
                    lambda: algos.max_truss(g, method="iterative"), args.truss_repeats)
                print(f"  iterative: k_max {ki}, {int(si.shape[0]):,} edges; warm-up {wi:.3f} s,"
                      f" median {ti:.4f} s of {ni}", flush=True)
                t_it = f"{ti:.3g}"
                note += f"; iterative: {ni} timed runs"
                if ki == kd and int(si.shape[0]) == int(sd.shape[0]):
                    note += ", same k_max-truss"
                else:
                    note += (f", DIFFERENT RESULT: k_max {ki} with {int(si.shape[0]):,} "
                             f"edges")
                if max(ti, wi) > args.iterative_max_s:
                    slow_iterative = (label.split()[0], max(ti, wi))
            if t_ref is not None:
                note += f"; Table 19.2: {v_ref} vertices, {e_ref} edges"
            rows.append([label, f"{m:,}", kd, k_ref, f"{td:.3g}", t_it, t_txt,
                         "-" if t_ref is None else f"{t_ref / td:.3g}", note])
        except Exception as exc:          # keep going: the other graphs' rows still count
            traceback.print_exc()
            msg = f"{type(exc).__name__}: {exc}".replace("|", "/").replace(chr(10), " ")
            rows.append([label, "-", "-", k_ref, "-", "-", t_txt, "-",
                         f"failed: {msg[:200]}"])
        finally:
            g = None
            cupy.get_default_memory_pool().free_all_blocks()
        print(table_lines(TRUSS_HEADER, rows)[-1], flush=True)
        on_row(rows, missing)
    return rows, missing


def truss_md(args, dev: str, rows: list[list], missing: list[str], done: bool) -> str:
    lines = [f"{TRUSS_HEADING} (cuSTINGER-Delta, P100)", "",
             truss_notes(args, dev, missing, done).strip(), ""]
    lines += table_lines(TRUSS_HEADER, rows)
    return "\n".join(lines) + "\n"


def split_existing(path) -> tuple[str, str]:
    """(kernel part, max k-truss part) of an existing algos_gpu.md ("" when absent)."""
    if not path.exists():
        return "", ""
    text = path.read_text()
    i = text.find("\n" + TRUSS_HEADING)
    if i < 0:
        return text, ""
    return text[:i + 1], text[i + 1:]


def write_md(path, kernel: str, truss: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    parts = [p.strip() for p in (kernel, truss) if p.strip()]
    path.write_text("\n\n".join(parts) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", type=int, nargs="+", default=[20, 22],
                    help="Kronecker scales of the SpMV / BFS / triangle rows")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--fast-repeats", type=int, default=51,
                    help="repeats of the sub-10 ms calls (SpMV and BFS rows)")
    ap.add_argument("--skip-kernels", action="store_true",
                    help="skip the SpMV / BFS / triangle counting rows")
    ap.add_argument("--skip-truss", action="store_true", help="skip the max k-truss rows")
    ap.add_argument("--truss-scales", type=int, nargs="*", default=[18, 19, 20, 21],
                    help="Kronecker scales of the max k-truss rows (none: no Kronecker rows)")
    ap.add_argument("--truss-real", action=argparse.BooleanOptionalAction, default=True,
                    help="max k-truss of the Table 19.2 graphs found in the data folder")
    ap.add_argument("--truss-repeats", type=int, default=3)
    ap.add_argument("--truss-seed", type=int, default=1, help="seed of the Kronecker generator")
    ap.add_argument("--iterative", action=argparse.BooleanOptionalAction, default=True,
                    help="also time method='iterative'")
    ap.add_argument("--iterative-max-s", type=float, default=60.0,
                    help="no iterative runs on the larger graphs once one took longer (s)")
    args = ap.parse_args()
    dev = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    dev = dev.decode() if isinstance(dev, bytes) else str(dev)
    md_path = RESULTS / f"{NAME}.md"
    kernel, truss = split_existing(md_path)
    if not kernel.strip():
        kernel = f"# {KERNEL_TITLE}\n\n(Not run yet: `--skip-kernels`.)\n"
    if not args.skip_kernels:
        kernel = kernel_section(args, dev)
        write_md(md_path, kernel, truss)
    if not args.skip_truss and (args.truss_real or args.truss_scales):
        def on_row(rows, missing):
            write_md(md_path, kernel, truss_md(args, dev, rows, missing, done=False))

        rows, missing = truss_section(args, dev, on_row)
        truss = truss_md(args, dev, rows, missing, done=True)
        write_csv(NAME + "_truss", TRUSS_HEADER, rows)
    write_md(md_path, kernel, truss)
    print(md_path.read_text())


if __name__ == "__main__":
    main()
