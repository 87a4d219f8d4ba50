"""Why the weighted SpMV on the graph trails the CSR: the same kernel on CSR layouts that copy
one feature of the graph's block layout at a time.

Kernel-only timing (the warp SpMV launch, CUDA events, interleaved rounds, median) of:
- "CSR": contiguous rows;
- "CSR, rows padded to 8 entries": each row starts at a multiple of 8 entries (32 B of
  destinations, 64 B of float64 weights), so every row ends inside a partly used sector, as a
  list ends inside its block, but the rows still follow one another in id order;
- "CSR, rows in power-of-two slots": each row gets the capacity of its block (2^ceil(log2 d)
  entries), rows in id order: the graph's slack, one stream;
- "graph, rows in id order": the hornet.Graph's blocks (size classes in separate block
  arrays), rows visited in vertex id order;
- "graph": the same, rows visited in storage order (size class by size class, each in
  address order), as ``algos.spmv`` does.

The CSR layouts are visited in storage order too, which for them is the id order.

    PYTHONPATH=. python3 bench/spmv_tail_gpu.py [--scale 22] [--repeats 31]
"""
from __future__ import annotations

import argparse

import cupy
import numpy as np

import hornet
from hornet import algos
from hornet.adjacency import AdjacencyView
from hornet.algos import _gpu
from hornet.memory.gpu_copy import as_i64, scan

from common import cuda_times, write_table


def padded_view(indptr, indices, weights, slots) -> AdjacencyView:
    """The CSR with row ``r`` copied to ``slot_start[r]`` of fresh columns, ``slots[r]``
    entries reserved per row (int64 CuPy (V,), >= the row's length)."""
    deg = cupy.diff(indptr)
    start = cupy.zeros(slots.shape[0] + 1, dtype=cupy.int64)
    cupy.cumsum(slots, out=start[1:])
    total = int(start[-1])
    nnz = int(indices.shape[0])
    row = cupy.repeat(cupy.arange(deg.shape[0]), deg.astype(cupy.int64))
    at = start[:-1][row] + (cupy.arange(nnz) - indptr[:-1][row])
    cols = cupy.zeros(total, dtype=cupy.int32)
    vals = cupy.zeros(total, dtype=weights.dtype)
    cols[at] = indices
    vals[at] = weights
    ptr = cols.data.ptr + 4 * start[:-1]
    props = {"weight": (vals.data.ptr + vals.itemsize * start[:-1], np.dtype(vals.dtype))}
    return AdjacencyView(int(deg.shape[0]), deg.astype(cupy.int32), ptr, False, True, "gpu",
                         props, (cols, vals, start))


def launcher(view, x, y, storage_order=True):
    """The warp SpMV launch on ``view`` into ``y``: rows in storage order (as ``algos.spmv``
    visits them), or in id order."""
    if storage_order:
        visit = _gpu._visit_rows(view)
        wptr = visit.property_ptr(view, "weight")
        y_rows = cupy.zeros(visit.count + 1)
        return lambda: _gpu._spmv_rows("warp", "double", True, False, visit, wptr, x, y,
                                       y_rows)
    deg, ptr = _gpu._arrays(view)
    n = view.num_vertices
    off, m = scan(deg)
    wptr = as_i64(view.property_ptrs["weight"][0])
    rows, _ = _gpu._tiles(off, n, m, tile=_gpu.SPMV_RANGE)
    return lambda: _gpu._spmv_launch("warp", "double", True, False, ptr, wptr, off, n, m, x, y,
                                     rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--repeats", type=int, default=31)
    ap.add_argument("--name", default="spmv_tail_gpu")
    args = ap.parse_args()
    n = 1 << args.scale
    s, d = hornet.generators.kronecker_edges(args.scale, xp=cupy, seed=1)
    w = cupy.random.RandomState(2).random_sample(s.shape[0])
    g = hornet.Graph.from_edges(s, d, num_vertices=n, directed=False, device="gpu", weight=w)
    del s, d, w
    indptr, indices, data = g.to_csr("weight")
    deg = cupy.diff(indptr)
    csr = AdjacencyView.from_csr(indptr, indices, directed=False, sorted=True, weights=data)
    pad8 = padded_view(indptr, indices, data, (deg + 7) // 8 * 8)
    cap = cupy.where(deg > 0, 1 << cupy.ceil(cupy.log2(cupy.maximum(deg, 1))).astype(cupy.int64),
                     0)
    pow2 = padded_view(indptr, indices, data, cap)
    views = {"CSR": csr, "CSR, rows padded to 8 entries": pad8,
             "CSR, rows in power-of-two slots": pow2,
             "graph, rows in id order": algos.as_adjacency(g, properties=True),
             "graph": algos.as_adjacency(g, properties=True)}
    x = cupy.random.RandomState(3).random_sample(n)
    ys = {k: cupy.zeros(n) for k in views}
    runs = {k: launcher(v, x, ys[k], storage_order="id order" not in k)
            for k, v in views.items()}
    for k, fn in runs.items():                      # warm up, and the same y everywhere
        ys[k][:] = 0
        fn()
    ref = ys["CSR"]
    for k in views:
        err = float(cupy.abs(ys[k] - ref).max() / cupy.abs(ref).max())
        assert err < 1e-12, (k, err)
    names = list(views)
    med = dict(zip(names, (t * 1e3 for t in cuda_times([runs[k] for k in names],
                                                         args.repeats)[0])))
    nnz = int(indices.shape[0])
    stored = {"CSR": nnz, "CSR, rows padded to 8 entries": int(((deg + 7) // 8 * 8).sum()),
              "CSR, rows in power-of-two slots": int(cap.sum()),
              "graph, rows in id order": int(cap.sum()), "graph": int(cap.sum())}
    rows = [[k, f"{stored[k]:,}", f"{med[k]:.3f}", f"{med['CSR'] / med[k]:.3f}"] for k in names]
    dev = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    dev = dev.decode() if isinstance(dev, bytes) else str(dev)
    notes = f"""Device: {dev}. Kronecker scale {args.scale} (edge factor 16, seed 1), undirected,
{nnz:,} stored entries, float64 weights. Kernel-only weighted SpMV (warp kernel), CUDA events,
{args.repeats} interleaved rounds, median. "slots": entries reserved (read: only the rows'
entries). CSR/layout = CSR time / this layout's time. Produced by `bench/spmv_tail_gpu.py`."""
    write_table(args.name, "Weighted SpMV: which feature of the block layout costs",
                ["layout", "slots", "kernel ms", "CSR/layout"], rows, notes)


if __name__ == "__main__":
    main()
