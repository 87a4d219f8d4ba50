"""GPU SpMV against cuSPARSE on the same matrix: Kronecker graphs and SNAP graphs.

    python3 -m bench spmv_gpu [--scales 20 22 24] [--real soc-Epinions1 ...] [--repeats 21]
    python3 -m bench spmv_gpu --sweep          # every warp-kernel variant and range length

The SpMV rows of ``bench algos_gpu`` alone (no BFS or triangle rows, no CSR copy), so they can
be rerun quickly. Graph500-style Kronecker graphs (R-MAT a=0.57, b=c=0.19, edge factor 16,
seed 1) generated on the device and SNAP graphs of the data folder, undirected, with random
float64 and float32 edge weights ("weight", "w32"). hornet: ``hornet.algos.spmv`` on
``hornet.Graph(device="gpu")``; cuSPARSE: cupyx.scipy.sparse ``A @ x`` on the graph's own CSR.
``--sweep``: one row per (U, B) variant of the warp kernel and per range length
(``hornet.algos.spmv.gpu.SPMV_WARP``, ``SPMV_RANGE``, ``SPMV_RANGE_WARPS``).
"""
from __future__ import annotations

import argparse
import importlib

import hornet
from bench.common import cuda_times, kronecker, require_gpu, weighted_real_graph, write_table

NAME = "spmv_gpu"
NEEDS_GPU = True
HEADER = ["graph", "weights", "variant (U, B, range)", "hornet ms", "cuSPARSE ms",
          "cuSPARSE/hornet", "hornet rate", "note"]

#: range settings of the sweep: (SPMV_RANGE, SPMV_RANGE_WARPS)
SWEEP_RANGES = ((512, None), (256, None), (1024, None), (2048, None), (512, 8), (512, 32),
                (512, 128))


def _spmv_gpu():
    return importlib.import_module("hornet.algos.spmv.gpu")


def weight_cases(g, indptr, indices, n):
    """[(label, weight name or None, cupyx matrix, x for hornet and cuSPARSE, float64 matrix
    of the same values for the reference)] of one graph."""
    import cupy
    import cupyx.scipy.sparse as cpx
    nnz = int(indices.shape[0])
    data = g.to_csr("weight")[2]
    data32 = g.to_csr("w32")[2]
    x64 = cupy.random.RandomState(3).standard_normal(n)
    x32 = x64.astype(cupy.float32)
    ones = cpx.csr_matrix((cupy.ones(nnz), indices, indptr), shape=(n, n))
    a64 = cpx.csr_matrix((data, indices, indptr), shape=(n, n))
    a32 = cpx.csr_matrix((data32, indices, indptr), shape=(n, n))
    ref32 = cpx.csr_matrix((data32.astype(cupy.float64), indices, indptr), shape=(n, n))
    return [("none (cuSPARSE: values 1.0), float64 x", None, ones, x64, ones),
            ("float64, float64 x", "weight", a64, x64, a64),
            ("float32, float32 x", "w32", a32, x32, ref32)]


def graph_rows(label, g, args, rows) -> None:
    """SpMV rows of one graph (its variants with ``--sweep``)."""
    import cupy
    from hornet import algos
    mod = _spmv_gpu()
    indptr, indices = g.to_csr()[:2]
    n, nnz = g.num_vertices, int(indices.shape[0])
    defaults = (mod.SPMV_WARP, mod.SPMV_RANGE, mod.SPMV_RANGE_WARPS)
    variants = [defaults]
    if args.sweep:
        mod.use_warp_variants(mod.SPMV_WARP_VARIANTS)
        variants = [(w, r, k) for w in mod.SPMV_WARP_VARIANTS for r, k in SWEEP_RANGES]
    for wlabel, weight, A, x, ref in weight_cases(g, indptr, indices, n):
        want = ref @ x.astype(cupy.float64)          # float64 sums of the same values
        bound = float(cupy.max(abs(ref) @ cupy.abs(x.astype(cupy.float64))))
        seen = set()
        for warp, rng, warps in variants:
            mod.SPMV_WARP, mod.SPMV_RANGE, mod.SPMV_RANGE_WARPS = warp, rng, warps
            eff = mod.warp_range(nnz)
            if (warp, eff) in seen:
                continue
            seen.add((warp, eff))
            try:
                got = algos.spmv(g, x, weight=weight)
                (th, ts), _ = cuda_times([lambda: algos.spmv(g, x, weight=weight),
                                          lambda: A @ x], args.repeats)
            except Exception as err:          # a variant that fails is reported, not fatal
                rows.append([label, wlabel, f"{warp[0]}, {warp[1]}, {eff}", "", "", "", "",
                             f"failed: {type(err).__name__}: {str(err)[:200]}"])
                print(rows[-1], flush=True)
                continue
            err_ref = float(cupy.max(cupy.abs(got - want))) / max(bound, 1e-300)
            ys = (A @ x).astype(cupy.float64)
            err_cs = float(cupy.max(cupy.abs(got - ys))) / max(bound, 1e-300)
            rows.append([label, wlabel, f"{warp[0]}, {warp[1]}, {eff}", f"{th * 1e3:.3f}",
                         f"{ts * 1e3:.3f}", f"{ts / th:.2f}", f"{nnz / th / 1e9:.2f} Gnnz/s",
                         f"max |diff| / max(|A||x|): vs float64 sums {err_ref:.1e}, "
                         f"vs cuSPARSE {err_cs:.1e}"])
            print(rows[-1], flush=True)
    mod.SPMV_WARP, mod.SPMV_RANGE, mod.SPMV_RANGE_WARPS = defaults


def kron_graph(scale: int):
    """(label, GPU graph, description) of Kronecker ``scale`` with "weight" and "w32"."""
    import cupy
    n = 1 << scale
    src, dst = kronecker(scale, seed=1, xp=cupy)
    w = cupy.random.RandomState(2).random_sample(src.shape[0])
    g = hornet.Graph.from_edges(src, dst, num_vertices=n, directed=False, device="gpu",
                                weight=w, w32=w.astype(cupy.float32))
    del src, dst, w
    nnz = int(g.degree().sum(dtype=cupy.int64))
    return (f"kron{scale}", g, f"scale {scale}: {n:,} vertices, {g.num_edges:,} undirected "
            f"edges ({nnz:,} stored entries), max degree {int(g.degree().max()):,}")


def real_graph(name: str):
    """(label, GPU graph, description) of a SNAP graph (self loops dropped)."""
    import cupy
    g, n = weighted_real_graph(name)
    nnz = int(g.degree().sum(dtype=cupy.int64))
    return name, g, (f"{name}: {n:,} vertices, {g.num_edges:,} undirected edges ({nnz:,} "
                     f"stored entries)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench spmv_gpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", type=int, nargs="*", default=[20, 22, 24],
                    help="Kronecker scales")
    ap.add_argument("--real", nargs="*", default=["soc-Epinions1", "email-Enron",
                                                  "sx-mathoverflow-a2q", "ca-HepPh"],
                    help="SNAP graphs of the data folder")
    ap.add_argument("--repeats", type=int, default=21, help="timed rounds per row")
    ap.add_argument("--sweep", action="store_true",
                    help="every warp-kernel variant and range length")
    args = ap.parse_args(argv)
    require_gpu(NAME)
    import cupy
    rows, graphs = [], []
    makers = [lambda s=s: real_graph(s) for s in args.real]
    makers += [lambda s=s: kron_graph(s) for s in args.scales]
    for make in makers:
        label, g, about = make()
        print(about, flush=True)
        graphs.append(about)
        g.adjacency()
        graph_rows(label, g, args, rows)
        del g
        cupy.get_default_memory_pool().free_all_blocks()
    mod = _spmv_gpu()
    write_table(NAME, "GPU SpMV vs cuSPARSE on the same matrix", HEADER, rows,
                f"""Graphs (SNAP files of the data folder, and Graph500 Kronecker graphs generated
on the device; all undirected, random edge weights):
{chr(10).join('- ' + s for s in graphs)}

Times: CUDA events around each whole call (allocation, scans and host syncs included), one
warm-up call each (so hornet's rows are visited in storage order on the graphs of at least
{mod.SPMV_ORDER_MIN_ENTRIES:,} entries), then the median of {args.repeats} calls in
interleaved rounds (hornet and cuSPARSE take turns). hornet = `hornet.algos.spmv(g, x,
weight)` on `hornet.Graph(device="gpu")` (lists in power-of-two blocks), y float64 whatever
the dtypes; cuSPARSE = cupyx.scipy.sparse `A @ x` on the graph's own CSR, with values 1.0,
the float64 weights and a float64 x, or the float32 weights and a float32 x (y float32).
Both get the same x: float32 in the float32 rows (hornet reads it as float32 and sums in
float64). Variant: the warp kernel's U (groups of 32 entries whose loads a warp issues
together), B (blocks per SM it is compiled for) and entries per warp range. Ratios > 1 mean
hornet is faster. Errors: max |y - y_ref| over max (|A||x|), y_ref the float64 sums of the
same (float32 or float64) values.""", device="gpu")


if __name__ == "__main__":
    main()
