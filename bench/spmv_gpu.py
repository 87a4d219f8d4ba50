"""GPU SpMV against cuSPARSE on the same matrix: Kronecker graphs and SNAP graphs.

    python3 -m bench spmv_gpu [--scales 20 22 24] [--real soc-Epinions1 ...] [--repeats 21]
    python3 -m bench spmv_gpu --sweep          # every kernel variant

The SpMV rows of ``bench algos_gpu`` alone (no BFS or triangle rows, no CSR copy), so they can
be rerun quickly. Graph500-style Kronecker graphs (R-MAT a=0.57, b=c=0.19, edge factor 16,
seed 1) generated on the device and SNAP graphs of the data folder, undirected, with random
float64 and float32 edge weights ("weight", "w32"). hornet: ``hornet.algos.spmv`` on
``hornet.Graph(device="gpu")``; cuSPARSE: cupyx.scipy.sparse ``A @ x`` on the graph's own CSR.
``--sweep``: one row per variant: the library's settings, the warp kernel alone (rows in
id order, or in storage order on the large graphs from the second call on a graph state),
every (U, B) variant and task size of the block-walk kernel on every graph, and the
block walk's load and store choices one by one (``WALK_CHOICES``)
(``hornet.algos.spmv.gpu``: ``SPMV_BLOCKS``, ``SPMV_BLOCKS_WARP``, ``SPMV_TASK_SHIFT``,
``SPMV_BLOCKS_MIN_ENTRIES``, ``SPMV_BLOCKS_AHEAD_FROM``, ``SPMV_BLOCKS_STREAM_ROWS``,
``SPMV_BLOCKS_GATHER``, ``SPMV_BLOCKS_LARGE``).
On the Kronecker graphs, the first calls after an update (a one-edge insertion and its
deletion) are timed one by one, with the library's settings (the note says whether the
update changed the block arrays).
"""
from __future__ import annotations

import argparse
import importlib

import numpy as np

import hornet
from bench.common import cuda_times, kronecker, require_gpu, weighted_real_graph, write_table

NAME = "spmv_gpu"
NEEDS_GPU = True
HEADER = ["graph", "weights", "variant", "hornet ms", "cuSPARSE ms",
          "cuSPARSE/hornet", "hornet rate", "note"]

#: block-walk task sizes of the sweep (log2 of the slots per task)
SWEEP_TASK_SHIFTS = (10, 11, 12, 13, 14)
#: the settings a sweep sets (and restores)
SETTINGS = ("SPMV_BLOCKS", "SPMV_BLOCKS_WARP", "SPMV_TASK_SHIFT", "SPMV_BLOCKS_MIN_ENTRIES",
            "SPMV_BLOCKS_AHEAD_FROM", "SPMV_BLOCKS_STREAM_ROWS", "SPMV_BLOCKS_GATHER",
            "SPMV_BLOCKS_LARGE")
#: the sweep's rows of the block walk's load and store choices (library (U, B), task size
#: per graph, on every graph): label, settings
WALK_CHOICES = (
    ("blocks, y stored at vertices, plain row loads",
     {"SPMV_BLOCKS_GATHER": False, "SPMV_BLOCKS_STREAM_ROWS": False}),
    ("blocks, y stored at vertices, streaming row loads and stores",
     {"SPMV_BLOCKS_GATHER": False, "SPMV_BLOCKS_STREAM_ROWS": True}),
    ("blocks, per-row sums gathered into y, plain row loads",
     {"SPMV_BLOCKS_GATHER": True, "SPMV_BLOCKS_STREAM_ROWS": False}),
    ("blocks, per-row sums gathered into y, streaming row loads and stores",
     {"SPMV_BLOCKS_GATHER": True, "SPMV_BLOCKS_STREAM_ROWS": True}),
    ("blocks, degrees ahead only in tasks of <= 32 rows (other choices per size)",
     {"SPMV_BLOCKS_AHEAD_FROM": 64}),
)


def _spmv_gpu():
    return importlib.import_module("hornet.algos.spmv.gpu")


def weight_cases(g, indptr, indices, n):
    """[(label, weight name or None, cupyx matrix, x for hornet and cuSPARSE, float64 matrix
    of the same values for the reference, hornet's y dtype)] of one graph."""
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
    return [("none (cuSPARSE: values 1.0), float64 x", None, ones, x64, ones, cupy.float64),
            ("float64, float64 x", "weight", a64, x64, a64, cupy.float64),
            ("float32, float32 x, float32 y", "w32", a32, x32, ref32, cupy.float32),
            ("float32, float32 x, hornet y float64", "w32", a32, x32, ref32, cupy.float64)]


def variants(mod, defaults: dict, sweep: bool) -> list:
    """[(label, {setting: value})] of the rows of one graph and weight case."""
    out = [("library: " + describe(defaults), {})]
    if sweep:
        out.append(("warp kernel", {"SPMV_BLOCKS": False}))
        out += [(f"blocks U={u} B={b} task={1 << t}",
                 {"SPMV_BLOCKS": True, "SPMV_BLOCKS_WARP": (u, b), "SPMV_TASK_SHIFT": t,
                  "SPMV_BLOCKS_MIN_ENTRIES": 0})
                for u, b in mod.SPMV_BLOCKS_VARIANTS for t in SWEEP_TASK_SHIFTS]
        out += [(label, {"SPMV_BLOCKS": True, "SPMV_BLOCKS_MIN_ENTRIES": 0, **choice})
                for label, choice in WALK_CHOICES]
    return out


def describe(settings: dict) -> str:
    """The SpMV ``settings`` (SETTINGS) in words."""
    if not settings["SPMV_BLOCKS"]:
        return "warp kernel"
    u, b = settings["SPMV_BLOCKS_WARP"]
    shift = settings["SPMV_TASK_SHIFT"]
    task = "per graph" if shift is None else str(1 << shift)
    large = settings["SPMV_BLOCKS_LARGE"]

    def choice(name, yes, no):
        value = settings[name]
        return (f"{yes} from {large:,} entries, else {no}" if value is None
                else yes if value else no)
    return (f"blocks U={u} B={b} task={task} from {settings['SPMV_BLOCKS_MIN_ENTRIES']:,} "
            f"entries (else warp); y {choice('SPMV_BLOCKS_GATHER', 'gathered', 'stored')}; "
            f"row loads {choice('SPMV_BLOCKS_STREAM_ROWS', 'streaming', 'plain')}")


def graph_rows(label, g, args, rows) -> None:
    """SpMV rows of one graph (its variants with ``--sweep``)."""
    import cupy
    from hornet import algos
    mod = _spmv_gpu()
    indptr, indices = g.to_csr()[:2]
    n, nnz = g.num_vertices, int(indices.shape[0])
    defaults = {k: getattr(mod, k) for k in SETTINGS}
    for wlabel, weight, A, x, ref, ydt in weight_cases(g, indptr, indices, n):
        want = ref @ x.astype(cupy.float64)          # float64 sums of the same values
        bound = float(cupy.max(abs(ref) @ cupy.abs(x.astype(cupy.float64))))
        for vlabel, settings in variants(mod, defaults, args.sweep):
            for k, v in {**defaults, **settings}.items():
                setattr(mod, k, v)
            try:
                got = algos.spmv(g, x, weight=weight, dtype=ydt).astype(cupy.float64)
                (th, ts), _ = cuda_times([lambda: algos.spmv(g, x, weight=weight, dtype=ydt),
                                          lambda: A @ x], args.repeats)
            except Exception as err:          # a variant that fails is reported, not fatal
                rows.append([label, wlabel, vlabel, "", "", "", "",
                             f"failed: {type(err).__name__}: {str(err)[:200]}"])
                print(rows[-1], flush=True)
                continue
            err_ref = float(cupy.max(cupy.abs(got - want))) / max(bound, 1e-300)
            ys = (A @ x).astype(cupy.float64)
            err_cs = float(cupy.max(cupy.abs(got - ys))) / max(bound, 1e-300)
            rows.append([label, wlabel, vlabel, f"{th * 1e3:.3f}",
                         f"{ts * 1e3:.3f}", f"{ts / th:.2f}", f"{nnz / th / 1e9:.2f} Gnnz/s",
                         f"max |diff| / max(|A||x|): vs float64 sums {err_ref:.1e}, "
                         f"vs cuSPARSE {err_cs:.1e}"])
            print(rows[-1], flush=True)
    for k, v in defaults.items():
        setattr(mod, k, v)


def state_calls(label, g, rows, calls: int = 5) -> None:
    """Rows "calls 1..5 on one graph state" (library settings): after a one-edge update, each
    of the first ``calls`` SpMVs (unweighted, float64 weights and x, float32 weights and x)
    timed alone."""
    import cupy
    from hornet import algos
    from bench.algos_gpu import absent_edge, event_ms
    x = cupy.random.RandomState(3).standard_normal(g.num_vertices)
    x32 = x.astype(cupy.float32)
    one, tail = absent_edge(g)
    for wlabel, weight, xs, ydt in (("none", None, x, cupy.float64),
                                    ("float64, float64 x", "weight", x, cupy.float64),
                                    ("float32, float32 x, float32 y", "w32", x32,
                                     cupy.float32)):
        layout = g.storage_blocks()         # (the same object while no block array comes or goes)
        g.insert_edges(one, tail, weight=cupy.ones(1), w32=cupy.ones(1, dtype=cupy.float32))
        g.delete_edges(one, tail)
        arrays = "block arrays changed" if g.storage_blocks() is not layout \
            else "same block arrays"
        ts = [event_ms(lambda: algos.spmv(g, xs, weight=weight, dtype=ydt))
              for _ in range(calls)]
        med = float(np.median(ts))
        rows.append([label, wlabel, f"calls 1..{calls} on one graph state", f"{med:.3f}", "",
                     "", "", "ms per call: " + " / ".join(f"{t:.3f}" for t in ts)
                     + f"; slowest / median {max(ts) / med:.2f} ({arrays})"])
        print(rows[-1], flush=True)


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
    mod = _spmv_gpu()
    if args.sweep:
        mod.use_warp_variants((mod.SPMV_WARP,), mod.SPMV_BLOCKS_VARIANTS)
    for make in makers:
        label, g, about = make()
        print(about, flush=True)
        graphs.append(about)
        g.adjacency()
        graph_rows(label, g, args, rows)
        if label.startswith("kron"):
            state_calls(label, g, rows)
        del g
        cupy.get_default_memory_pool().free_all_blocks()
    write_table(NAME, "GPU SpMV vs cuSPARSE on the same matrix", HEADER, rows,
                f"""Graphs (SNAP files of the data folder, and Graph500 Kronecker graphs generated
on the device; all undirected, random edge weights):
{chr(10).join('- ' + s for s in graphs)}

Times: CUDA events around each whole call (allocation, scans and host syncs included), one
warm-up call each (the warp kernel visits the rows of the graphs of at least
{mod.SPMV_ORDER_MIN_ENTRIES:,} entries in storage order from the second call on a graph
state), then the median of {args.repeats} calls in interleaved rounds (hornet and cuSPARSE
take turns). hornet = `hornet.algos.spmv(g, x,
weight, dtype=...)` on `hornet.Graph(device="gpu")` (lists in power-of-two blocks), y
float64, or float32 in the "float32 y" rows (each row summed in float64, rounded once);
cuSPARSE = cupyx.scipy.sparse `A @ x` on the graph's own CSR, with values 1.0, the float64
weights and a float64 x, or the float32 weights and a float32 x (y float32 in every float32
row: "hornet y float64" compares hornet's float64 y with cuSPARSE's float32 one). Both get
the same x: float32 in the float32 rows (hornet reads it as float32). Variant: "library" = `hornet.algos.spmv` as shipped; "warp kernel" = the row-range
warp kernel (U, B = {mod.SPMV_WARP}) on every call; "blocks" = the block-walk kernel (a
hornet.Graph's block arrays walked in storage order, from the first call on a graph state)
with U groups of 32 slots whose loads a warp issues together, compiled for B blocks per SM,
tasks of that many slots; "blocks, ..." without U and B: the library's block walk (on
every graph) with the named load and store choices. "calls 1..5 on one graph state": after a
one-edge insertion and its deletion, the first five calls each timed alone (the first one
prepares the state's rows, and the walk's tables when the block arrays changed). Ratios > 1
mean hornet is faster. Errors: max |y - y_ref| over max (|A||x|), y_ref the float64 sums of
the same (float32 or float64) values.""", device="gpu")


if __name__ == "__main__":
    main()
