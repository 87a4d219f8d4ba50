"""GPU build time and memory of a graph versus cupyx's COO -> CSR conversion of the same edges.

    python3 -m bench build_gpu [--scales 20 24] [--real]
    python3 -m bench build_gpu --quick             # Kronecker 16

Directed builds from the same device arrays: ``Graph.from_edges`` and ``Graph.from_csr``
against cupyx.scipy.sparse ``coo_matrix(...).tocsr()`` (and a CSR copy); memory from
``Graph.memory_stats()``. Medians of 3 with CUDA events.
"""
from __future__ import annotations

import argparse

import hornet
from bench.common import DATA, kronecker, require_gpu, write_table
from bench.updates_gpu import cuda_time

NAME = "build_gpu"
NEEDS_GPU = True


def build_row(label: str, src, dst, n: int) -> list:
    """hornet from_edges / from_csr versus cupyx sparse builds from the same device arrays."""
    import cupy
    import cupyx.scipy.sparse as csp
    ones = cupy.ones(src.shape[0], dtype=cupy.float32)
    t_cupyx_coo = cuda_time(lambda: csp.coo_matrix((ones, (src, dst)), shape=(n, n)).tocsr(), 3)
    A = csp.coo_matrix((ones, (src, dst)), shape=(n, n)).tocsr()
    A.sum_duplicates()
    A.sort_indices()
    t_cupyx_csr = cuda_time(lambda: csp.csr_matrix((A.data, A.indices, A.indptr),
                                                   shape=(n, n)).copy(), 3)
    t_from_edges = cuda_time(lambda: hornet.Graph.from_edges(src, dst, num_vertices=n,
                                                             directed=True, device="gpu"), 3)
    t_from_csr = cuda_time(lambda: hornet.Graph.from_csr(A.indptr, A.indices, directed=True,
                                                         device="gpu"), 3)
    g = hornet.Graph.from_csr(A.indptr, A.indices, directed=True, device="gpu")
    m = g.memory_stats()
    return [label, n, A.nnz, f"{t_from_edges:.4f}", f"{t_cupyx_coo:.4f}",
            f"{t_from_edges / t_cupyx_coo:.2f}", f"{t_from_csr:.4f}", f"{t_cupyx_csr:.4f}",
            f"{t_from_csr / t_cupyx_coo:.2f}", m["reserved_bytes"], m["csr_bytes"],
            m["coo_bytes"], f"{m['reserved_bytes'] / m['csr_bytes']:.3f}"]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench build_gpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", type=int, nargs="+", default=[20, 24], help="Kronecker scales")
    ap.add_argument("--real", action="store_true", help="also the real graphs in the data folder")
    ap.add_argument("--quick", action="store_true", help="Kronecker 16 only")
    args = ap.parse_args(argv)
    require_gpu(NAME)
    import cupy
    if args.quick:
        args.scales = [16]
    rows = []
    for scale in args.scales:
        src, dst = kronecker(scale, seed=scale, xp=cupy)
        rows.append(build_row(f"kron{scale}", src, dst, 1 << scale))
        print(rows[-1], flush=True)
        del src, dst
        cupy.get_default_memory_pool().free_all_blocks()
    if args.real:
        for path in sorted(DATA.glob("*.gz")):
            s, d, _ = hornet.io.read_edges(path)
            n = int(max(s.max(), d.max())) + 1
            rows.append(build_row(path.name.split(".")[0], cupy.asarray(s), cupy.asarray(d), n))
    write_table(NAME, "GPU build time and memory versus cupyx CSR",
                ["graph", "vertices", "CSR entries", "hornet from_edges s", "cupyx COO->CSR s",
                 "ratio", "hornet from_csr s", "cupyx CSR copy s", "from_csr / COO->CSR",
                 "reserved bytes", "CSR bytes", "COO bytes", "reserved/CSR"], rows,
                """Directed builds from the same device arrays; cupyx COO->CSR sorts and converts
(duplicates kept until sum_duplicates, which hornet's dedup corresponds to). Medians of 3 with
CUDA events. Ratios under 1: hornet is faster.""", device="gpu")


if __name__ == "__main__":
    main()
