"""GPU SpMV, BFS and triangle counting: the dynamic graph versus the same kernels on a CSR, and cuSPARSE.

    python3 -m bench algos_gpu [--scales 20 22] [--tc-scales 26] [--real soc-Epinions1 ...]
    python3 -m bench algos_gpu --quick             # Kronecker 16, few repeats

Graph500-style Kronecker graphs (R-MAT a=0.57, b=c=0.19, edge factor 16) generated on the
device, undirected (both directions stored) with float64 and float32 edge properties
("weight", "w32"). Every algorithm runs on ``hornet.Graph(device="gpu")`` and on
``hornet.AdjacencyView.from_csr`` of the graph's own CSR (the same kernels, contiguous rows);
SpMV also against cupyx.scipy.sparse ``A @ x`` (cuSPARSE). Whole calls timed with CUDA events
in interleaved rounds. The "calls on one graph state" rows time the first calls after an
update one by one (the preparations an algorithm makes per graph state land there).
``--tc-scales``: triangle counting, and the first calls on one graph state of unweighted SpMV,
BFS and triangle counting (the largest graphs: no properties, no CSR copy); ``--real``: SpMV against
cuSPARSE on SNAP graphs of the data folder.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import hornet
from bench.common import cuda_times, kronecker, require_gpu, weighted_real_graph, write_table

NAME = "algos_gpu"
NEEDS_GPU = True
HEADER = ["graph", "algorithm", "graph ms", "CSR ms", "cuSPARSE ms", "graph rate", "CSR/graph",
          "cuSPARSE/graph", "note"]


def event_ms(fn) -> float:
    """Milliseconds of one call, CUDA events around it."""
    import cupy
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    fn()
    end.record()
    end.synchronize()
    return cupy.cuda.get_elapsed_time(start, end)


def spmv_rows(label, g, csr, mats, x, args, rows, nnz):
    """SpMV rows of one graph: unweighted, float64 and float32 weights, against cuSPARSE
    (``mats``: {weight name or None: (cupyx csr matrix, x in its dtype)})."""
    import cupy
    from hornet import algos
    for wlabel, weight in (("unweighted (cuSPARSE: values 1.0)", None),
                           ("float64 weights", "weight"), ("float32 weights", "w32")):
        A, xs = mats[weight]
        xh = xs if weight == "w32" else x            # float32 rows: the same float32 x
        (tg, tc, ts), _ = cuda_times([lambda: algos.spmv(g, xh, weight=weight),
                                      lambda: algos.spmv(csr, xh, weight=weight),
                                      lambda: A @ xs], args.fast_repeats)
        yg, yc, ys = (algos.spmv(g, xh, weight=weight), algos.spmv(csr, xh, weight=weight),
                      A @ xs)
        ys = ys.astype(cupy.float64)
        err = float(cupy.max(cupy.abs(yg - ys)) / max(float(cupy.max(cupy.abs(ys))), 1e-300))
        err_c = float(cupy.max(cupy.abs(yg - yc)))
        note = f"max rel diff vs cuSPARSE {err:.1e}, vs CSR {err_c:.1e}"
        if weight == "w32":
            note += (" (both: the same float32 x; cuSPARSE: float32 matrix, float32 y; hornet:"
                     " float64 sums and y)")
        rows.append([label, f"SpMV {wlabel}", f"{tg * 1e3:.3f}", f"{tc * 1e3:.3f}",
                     f"{ts * 1e3:.3f}", f"{nnz / tg / 1e9:.2f} Gnnz/s", f"{tc / tg:.2f}",
                     f"{ts / tg:.2f}", note])
        print(rows[-1], flush=True)


def csr_of(g):
    """(indptr, indices, float64 values, GPU CSR view with "weight" and "w32") of graph g."""
    indptr, indices, data = g.to_csr("weight")
    data32 = g.to_csr("w32")[2]
    base = hornet.AdjacencyView.from_csr(indptr, indices, directed=False, sorted=True)
    ptrs = {name: (int(vals.data.ptr) + vals.dtype.itemsize * indptr[:-1], vals.dtype)
            for name, vals in (("weight", data), ("w32", data32))}
    csr = hornet.AdjacencyView(base.num_vertices, base.degree, base.edge_ptr, False, True, "gpu",
                               ptrs, tuple(base.owner) + (data, data32))
    return indptr, indices, data, csr


def cusparse_mats(indptr, indices, data, n):
    """{weight name or None: (cupyx csr matrix, x dtype)} of one CSR."""
    import cupy
    import cupyx.scipy.sparse as cpx
    nnz = int(indices.shape[0])
    return {None: cpx.csr_matrix((cupy.ones(nnz), indices, indptr), shape=(n, n)),
            "weight": cpx.csr_matrix((data, indices, indptr), shape=(n, n)),
            "w32": cpx.csr_matrix((data.astype(cupy.float32), indices, indptr), shape=(n, n))}


def absent_edge(g):
    """(u, v) int32 CuPy arrays of one pair that is not an edge of g (u != v)."""
    import cupy
    n = g.num_vertices
    u = cupy.arange(1, 65, dtype=cupy.int32) % n
    v = (u * 7919 + 13) % n
    ok = (u != v) & ~g.has_edges(u, v)
    k = int(cupy.argmax(ok))
    if not bool(ok[k]):
        raise RuntimeError("no absent pair among the candidates")
    return u[k:k + 1], v[k:k + 1]


def state_calls(label, g, x, source, rows, calls: int = 5, weight: str | None = "weight",
                tc_calls: int | None = None) -> None:
    """Rows "calls on one graph state": after a one-edge update, each of the first ``calls``
    calls of SpMV (float64 weights; ``weight`` None: unweighted, for a graph without
    properties), BFS and triangle counting (``tc_calls`` of them, default ``calls``) timed
    alone."""
    import cupy
    from hornet import algos
    one, tail = absent_edge(g)
    props = {} if weight is None else dict(weight=cupy.ones(1),
                                           w32=cupy.ones(1, dtype=cupy.float32))
    spmv_name = "SpMV float64 weights" if weight else "SpMV unweighted"
    for name, fn, k in ((spmv_name, lambda: algos.spmv(g, x, weight=weight), calls),
                        ("BFS direction-optimizing", lambda: algos.bfs(g, source), calls),
                        ("triangle count", lambda: algos.triangle_count(g), tc_calls or calls)):
        g.insert_edges(one, tail, **props)
        g.delete_edges(one, tail)
        ts = [event_ms(fn) for _ in range(k)]
        med = float(np.median(ts))
        rows.append([label, f"{name}: calls 1..{k} on one graph state",
                     f"{med:.3f}", "", "", "", "", "",
                     "ms per call: " + " / ".join(f"{t:.3f}" for t in ts)
                     + f"; slowest / median {max(ts) / med:.2f}"])
        print(rows[-1], flush=True)


def scale_rows(scale: int, args, rows: list[list]) -> str:
    """Append the rows of one Kronecker scale to ``rows``; return the graph's description."""
    import cupy
    from hornet import algos

    n = 1 << scale
    label = f"kron{scale}"
    src, dst = kronecker(scale, seed=1, xp=cupy)
    w = cupy.random.RandomState(2).random_sample(src.shape[0])
    t0 = time.perf_counter()
    g = hornet.Graph.from_edges(src, dst, num_vertices=n, directed=False, device="gpu",
                                weight=w, w32=w.astype(cupy.float32))
    cupy.cuda.Device().synchronize()
    build = time.perf_counter() - t0
    del src, dst, w
    indptr, indices, data, csr = csr_of(g)
    nnz = int(indices.shape[0])
    mats = cusparse_mats(indptr, indices, data, n)
    about = (f"scale {scale}: {n:,} vertices, {g.num_edges:,} undirected edges ({nnz:,} stored "
             f"entries), max degree {int(g.degree().max()):,}; graph built in {build:.2f} s")
    print(about, flush=True)
    x = cupy.random.RandomState(3).standard_normal(n)
    mats = {k: (A, x.astype(A.dtype)) for k, A in mats.items()}
    spmv_rows(label, g, csr, mats, x, args, rows, nnz)
    del mats

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
        rows.append([label, "BFS " + ("direction-optimizing" if do else "top-down only"),
                     f"{tg * 1e3:.3f}", f"{tc * 1e3:.3f}", "", f"{edges / tg / 1e9:.2f} GTEPS",
                     f"{tc / tg:.2f}", "", f"source {source}, {int((lv >= 0).sum()):,} reached, "
                     f"{int(lv.max()) + 1} levels, {edges:,} edges"])
        print(rows[-1], flush=True)

    tc_rows(label, g, csr, args, rows)
    state_calls(label, g, x, source, rows)
    return about


def tc_rows(label, g, csr, args, rows) -> None:
    """Triangle counting on the graph (and the CSR view when given): every call from scratch."""
    from hornet import algos
    tri = algos.triangle_count(g)
    fns = [lambda: algos.triangle_count(g)]
    if csr is not None:
        assert algos.triangle_count(csr) == tri
        fns.append(lambda: algos.triangle_count(csr))
    times, _ = cuda_times(fns, args.repeats)
    tg = times[0]
    tc = times[1] if csr is not None else None
    rows.append([label, "triangle count", f"{tg * 1e3:.3f}",
                 f"{tc * 1e3:.3f}" if tc else "", "", f"{g.num_edges / tg / 1e9:.3f} Gedges/s",
                 f"{tc / tg:.2f}" if tc else "", "",
                 f"{tri:,} triangles ({tri / tg / 1e9:.2f} Gtriangles/s)"])
    print(rows[-1], flush=True)


def tc_only_rows(scale: int, args, rows: list[list]) -> str:
    """Triangle counting on Kronecker ``scale`` (no properties, no CSR copy), and the first
    calls on one graph state of unweighted SpMV, BFS and triangle counting."""
    import cupy
    n = 1 << scale
    try:
        src, dst = kronecker(scale, seed=1, xp=cupy)
        t0 = time.perf_counter()
        g = hornet.Graph.from_edges(src, dst, num_vertices=n, directed=False, device="gpu")
        cupy.cuda.Device().synchronize()
    except (cupy.cuda.memory.OutOfMemoryError, MemoryError) as err:
        rows.append([f"kron{scale}", "triangle count", "", "", "", "", "", "",
                     f"not run: the graph did not fit ({type(err).__name__})"])
        print(rows[-1], flush=True)
        return f"scale {scale}: did not fit on the device"
    build = time.perf_counter() - t0
    del src, dst
    cupy.get_default_memory_pool().free_all_blocks()
    about = (f"scale {scale} (no properties: triangle counting, first calls): {n:,} vertices, {g.num_edges:,} "
             f"undirected edges, max degree {int(g.degree().max()):,}; graph built in "
             f"{build:.2f} s")
    print(about, flush=True)
    tc_rows(f"kron{scale}", g, None, args, rows)
    # the first calls on one graph state of SpMV (unweighted: no properties stored), BFS and
    # triangle counting (each one warmed up on the graph first)
    from hornet import algos
    x = cupy.random.RandomState(3).standard_normal(n)
    deg = g.degree()
    cand = cupy.flatnonzero(deg > 0)
    source = int(cand[int(np.random.default_rng(scale).integers(0, cand.shape[0]))])
    for _ in range(2):         # (the second call takes the storage-order path: its kernels
        algos.spmv(g, x)       # compile on their first use in a process)
    algos.bfs(g, source)
    state_calls(f"kron{scale}", g, x, source, rows, weight=None, tc_calls=3)
    return about


def real_rows(name: str, args, rows: list[list]) -> str:
    """SpMV rows of a SNAP graph (undirected, random float64 / float32 weights)."""
    import cupy
    g, n = weighted_real_graph(name)
    indptr, indices, data, csr = csr_of(g)
    nnz = int(indices.shape[0])
    x = cupy.random.RandomState(3).standard_normal(n)
    mats = {k: (A, x.astype(A.dtype)) for k, A in cusparse_mats(indptr, indices, data, n).items()}
    spmv_rows(name, g, csr, mats, x, args, rows, nnz)
    return f"{name}: {n:,} vertices, {g.num_edges:,} undirected edges ({nnz:,} stored entries)"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench algos_gpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", type=int, nargs="+", default=[20, 22], help="Kronecker scales")
    ap.add_argument("--tc-scales", type=int, nargs="*", default=[],
                    help="Kronecker scales for triangle counting alone")
    ap.add_argument("--real", nargs="*", default=["soc-Epinions1", "email-Enron",
                                                  "sx-mathoverflow-a2q", "ca-HepPh"],
                    help="SNAP graphs of the data folder for the SpMV rows")
    ap.add_argument("--repeats", type=int, default=5, help="rounds of the triangle rows")
    ap.add_argument("--fast-repeats", type=int, default=51,
                    help="rounds of the sub-10 ms calls (SpMV and BFS rows)")
    ap.add_argument("--quick", action="store_true", help="Kronecker 16, 5 rounds")
    args = ap.parse_args(argv)
    require_gpu(NAME)
    import cupy
    if args.quick:
        args.scales, args.repeats, args.fast_repeats, args.tc_scales = [16], 3, 5, []
        args.real = args.real[:1]
    rows, graphs = [], []
    for name in args.real:
        graphs.append(real_rows(name, args, rows))
        cupy.get_default_memory_pool().free_all_blocks()
    for scale in args.scales:
        graphs.append(scale_rows(scale, args, rows))
        cupy.get_default_memory_pool().free_all_blocks()
    for scale in args.tc_scales:
        graphs.append(tc_only_rows(scale, args, rows))
        cupy.get_default_memory_pool().free_all_blocks()
    write_table(NAME, "GPU static algorithms: dynamic graph vs CSR view vs cuSPARSE", HEADER, rows,
                f"""Graphs (SNAP files of the data folder, and Kronecker graphs generated on the
device; all undirected, random edge weights unless marked "no properties"):
{chr(10).join('- ' + s for s in graphs)}

Times: CUDA events around each whole call (allocation, scans and host syncs included), one
warm-up run each, then the median of {args.fast_repeats} runs for SpMV and BFS rows
({args.repeats} for triangle counting) timed in interleaved rounds (graph, CSR and cuSPARSE take
turns, the order rotating each round). "graph" = `hornet.Graph(device="gpu")` read through its
pointer view (lists in power-of-two blocks); "CSR" = the same kernels on
`AdjacencyView.from_csr(*g.to_csr())` (contiguous rows); "cuSPARSE" = cupyx.scipy.sparse
`A @ x` on the same CSR (float32 weights: a float32 matrix and x, and hornet gets the same
float32 x). SpMV visits rows in storage
order (memoized per view: the graph's blocks by size class, then address, from its second call
on an unchanged graph, found without a sort; the CSR's in id order). "calls 1..k on one graph
state": right after an update (one edge inserted and deleted), each call timed alone, so
every per-state preparation (SpMV's storage order, views) lands in one of them; the note
gives the slowest call over the median (the "no properties" scales: unweighted SpMV with a
float64 x, each algorithm warmed up on the graph first). Triangle counting makes its oriented graph on every
call (no state kept); its rate is undirected edges / time. Ratios > 1 mean the hornet graph
is faster: CSR/graph = time on the CSR view / time on the graph; cuSPARSE/graph = cuSPARSE
time / graph time. GTEPS: undirected edges of the reached component / time.""", device="gpu")


if __name__ == "__main__":
    main()
