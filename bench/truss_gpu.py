"""GPU maximal k-truss versus Table 19.2 of the k-truss chapter (cuSTINGER-Delta on a P100).

    python3 -m bench truss_gpu [--scales 18 19 20 21] [--no-real] [--repeats 3] [--no-iterative]
    python3 -m bench truss_gpu --quick             # Kronecker 16, no real graphs, delta only

``hornet.algos.max_truss(g, method=...)`` on a ``hornet.Graph(device="gpu")``, methods "delta"
and "iterative", on Kronecker graphs (Table 19.2's graph500-scaleN) and on the Table 19.2
graphs found in the data folder. One warm-up run, then the median of ``--repeats`` runs timed
with CUDA events (a single timed run once a run takes over 20 s). The table is rewritten after
every row, so a run cut short keeps the rows done so far.
"""
from __future__ import annotations

import argparse
import statistics
import time
import traceback

import hornet
from bench.common import (DATA, TABLE_19_2, TABLE_19_2_SIZES, kronecker, real_graph_path,
                          require_gpu, table_lines, write_table)

NAME = "truss_gpu"
NEEDS_GPU = True
HEADER = ["graph", "edges", "k_max", "Table 19.2 k_max", "delta s", "iterative s",
          "Table 19.2 s", "speedup (Table 19.2 s / delta s)", "note"]
SLOW_S = 20.0          # a run longer than this: a single timed run


def truss_time(fn, repeats: int):
    """One warm-up run of ``fn`` (its result kept), then up to ``repeats`` runs timed with CUDA
    events; after a run (warm-up included) over SLOW_S seconds only one timed run.

    Returns (median seconds, timed runs, warm-up seconds, the warm-up's result).
    """
    import cupy
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


def load_real(name: str) -> hornet.Graph:
    """A SNAP edge list as an undirected GPU graph (directed files: symmetrized)."""
    import cupy
    s, d, _ = hornet.io.read_edges(real_graph_path(name))
    n = int(max(s.max(), d.max())) + 1
    return hornet.Graph.from_edges(cupy.asarray(s), cupy.asarray(d), num_vertices=n,
                                   directed=False, device="gpu")


def load_kron(scale: int, seed: int) -> hornet.Graph:
    """Graph500 Kronecker graph (edge factor 16) generated on the device, undirected."""
    import cupy
    src, dst = kronecker(scale, seed=seed, xp=cupy)
    return hornet.Graph.from_edges(src, dst, num_vertices=1 << scale, directed=False,
                                   device="gpu")


def graphs_to_run(args):
    """([(label, Table 19.2 name, build)], Table 19.2 real graphs missing from DATA): the real
    graphs first, in the table's order, then the Kronecker scales, smallest first."""
    todo, missing = [], []
    if args.real:
        for name in TABLE_19_2:
            if name.startswith("graph500-"):
                continue
            if any(DATA.glob(f"{name}.*")):
                todo.append((name, name, lambda p=name: load_real(p)))
            else:
                missing.append(name)
    for scale in sorted(set(args.scales)):
        tname = f"graph500-scale{scale}"
        label = f"kron{scale} ({tname})" if tname in TABLE_19_2 else f"kron{scale}"
        todo.append((label, tname, lambda s=scale: load_kron(s, args.seed)))
    return todo, missing


def notes(args, missing: list[str], done: bool) -> str:
    missing_txt = ", ".join(missing) if missing else "none"
    if not args.real:
        missing_txt = "not run (--no-real)"
    iterative = "" if args.iterative else " (not run: --no-iterative)"
    partial = "" if done else "**Partial: the run had not finished when this was written.**\n\n"
    return f"""{partial}`hornet.algos.max_truss(g, method=...)` on a `hornet.Graph(device="gpu")`
(undirected) against Table 19.2 of the k-truss chapter: k_max and the cuSTINGER-Delta time
on an NVIDIA P100, as printed there. "delta": the support of every edge is counted once, then
each round subtracts only the triangles lost with the removed edges (the chapter's
cuSTINGER-Delta scheme; here a whole peeling is one device launch, and while the edges under
the threshold are most of the live ones their survivors' support is recounted instead); k_max:
one peeling at a k below the supports' upper bound of k_max (0.3 of it; lower, by bisection,
while a test leaves no edge), then one device decomposition of the truss it leaves;
"iterative"{iterative}: every round recounts the support of the whole remaining graph (the
chapter's cuSTINGER-Iterative). Speedup = Table 19.2 time / our delta time.

Times: CUDA events around each whole `max_truss` call (edge index, support count, peeling and
host syncs included), one warm-up run, then the median of {args.repeats} runs (a single run once
a run takes over {SLOW_S:.0f} s); the note gives the runs timed. Iterative runs stop for the
larger graphs once one took over {args.iterative_max_s:g} s (`--iterative-max-s`).

Graphs: "kronN (graph500-scaleN)" is our Graph500 Kronecker generator (R-MAT a=0.57, b=c=0.19,
edge factor 16, 2^N vertices randomly relabelled) run on the device with seed {args.seed},
stored undirected with duplicates and self-loops dropped: the same family as the chapter's
graph500-scaleN, not necessarily the same graph, so k_max may differ. Real graphs: the SNAP
files of the data folder, read as undirected simple graphs (directed files symmetrized).
"edges": undirected edges of our graph (Table 19.2's |V| and |E| are in the note). Scales that
Table 19.2 does not list get "-" in its columns.
Table 19.2 graphs not in the data folder: {missing_txt}."""


def graph_row(label: str, tname: str, build, args, slow_iterative: list) -> list:
    """The table row of one graph; ``slow_iterative`` holds (graph, seconds) of an iterative
    run over --iterative-max-s once there was one."""
    from hornet import algos
    k_ref, t_ref = TABLE_19_2.get(tname, ("-", None))     # scales outside the table: "-"
    v_ref, e_ref = TABLE_19_2_SIZES.get(tname, ("-", "-"))
    t_txt = "-" if t_ref is None else f"{t_ref:g}"
    t0 = time.perf_counter()
    g = build()
    m = int(g.num_edges)
    print(f"{label}: {g.num_vertices:,} vertices, {m:,} undirected edges, built in "
          f"{time.perf_counter() - t0:.2f} s", flush=True)
    td, nd, wd, (kd, sd, _) = truss_time(lambda: algos.max_truss(g, method="delta"), args.repeats)
    print(f"  delta: k_max {kd}, {int(sd.shape[0]):,} edges; warm-up {wd:.3f} s, median "
          f"{td:.4f} s of {nd}", flush=True)
    note = f"{int(sd.shape[0]):,} edges in the {kd}-truss; delta: {nd} timed runs"
    if not args.iterative:
        t_it = "not run"
    elif slow_iterative:
        t_it = "skipped"
        note += f"; iterative skipped ({slow_iterative[0][1]:.0f} s on {slow_iterative[0][0]})"
    else:
        ti, ni, wi, (ki, si, _) = truss_time(lambda: algos.max_truss(g, method="iterative"),
                                             args.repeats)
        print(f"  iterative: k_max {ki}, {int(si.shape[0]):,} edges; warm-up {wi:.3f} s, median "
              f"{ti:.4f} s of {ni}", flush=True)
        t_it = f"{ti:.3g}"
        note += f"; iterative: {ni} timed runs"
        if ki == kd and int(si.shape[0]) == int(sd.shape[0]):
            note += ", same k_max-truss"
        else:
            note += f", DIFFERENT RESULT: k_max {ki} with {int(si.shape[0]):,} edges"
        if max(ti, wi) > args.iterative_max_s:
            slow_iterative.append((label.split()[0], max(ti, wi)))
    if t_ref is not None:
        note += f"; Table 19.2: {v_ref} vertices, {e_ref} edges"
    return [label, f"{m:,}", kd, k_ref, f"{td:.3g}", t_it, t_txt,
            "-" if t_ref is None else f"{t_ref / td:.3g}", note]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench truss_gpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", type=int, nargs="*", default=[18, 19, 20, 21],
                    help="Kronecker scales (none: no Kronecker rows)")
    ap.add_argument("--real", action=argparse.BooleanOptionalAction, default=True,
                    help="the Table 19.2 graphs found in the data folder")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1, help="seed of the Kronecker generator")
    ap.add_argument("--iterative", action=argparse.BooleanOptionalAction, default=True,
                    help="also time method='iterative'")
    ap.add_argument("--iterative-max-s", type=float, default=60.0,
                    help="no iterative runs on the larger graphs once one took longer (s)")
    ap.add_argument("--quick", action="store_true",
                    help="Kronecker 16 only, delta only, one timed run")
    args = ap.parse_args(argv)
    require_gpu(NAME)
    import cupy
    if args.quick:
        args.scales, args.real, args.iterative, args.repeats = [16], False, False, 1
    todo, missing = graphs_to_run(args)
    rows, slow_iterative = [], []
    print("| " + " | ".join(HEADER) + " |", flush=True)
    for label, tname, build in todo:
        try:
            rows.append(graph_row(label, tname, build, args, slow_iterative))
        except Exception as exc:          # keep going: the other graphs' rows still count
            traceback.print_exc()
            msg = f"{type(exc).__name__}: {exc}".replace("|", "/").replace("\n", " ")
            k_ref, t_ref = TABLE_19_2.get(tname, ("-", None))
            rows.append([label, "-", "-", k_ref, "-", "-", "-" if t_ref is None else f"{t_ref:g}",
                         "-", f"failed: {msg[:200]}"])
        finally:
            cupy.get_default_memory_pool().free_all_blocks()
        print(table_lines(HEADER, rows)[-1], flush=True)
        write_table(NAME, "Max k-truss versus Table 19.2 (cuSTINGER-Delta, P100)", HEADER, rows,
                    notes(args, missing, done=False), device="gpu", echo=False)
    write_table(NAME, "Max k-truss versus Table 19.2 (cuSTINGER-Delta, P100)", HEADER, rows,
                notes(args, missing, done=True), device="gpu")


if __name__ == "__main__":
    main()
