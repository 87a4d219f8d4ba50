// CUDA kernels of the GPU input views (hornet/algos/views_gpu.py).
//
// Compiled once per process, on first use, by cupy.RawModule (NVRTC, -std=c++17; see
// hornet/core/cuda.py). 64-bit indexing throughout; every kernel is correct for any grid size
// (grid-stride loops over items, tiles or warps).
//
// Graphs are read through the pointer view (hornet.adjacency.AdjacencyView): vertex v's
// destinations are deg[v] int32 values at device address ptr[v] (ascending where the algorithm
// needs it); an edge property (weights, edge ids) is reached through its own per-vertex
// addresses. The same kernels therefore run on a dynamic hornet.Graph and on a plain CSR.
// Load balancing over lists of very different lengths: see tiles.cuh (hornet/core).

#include "segmented.cuh"     // i64, u64, GRID_STRIDE, lower_bound, segment_between (hornet/core)
#include "tiles.cuh"         // warp_sum, lanes_below, tiled_items, tile_segments (hornet/core)

// Every stored entry in row order: src[t] (if want_src) and dst[t].
extern "C" __global__ void view_coo(const i64* __restrict__ ptr, const i64* __restrict__ off,
                                    const i64* __restrict__ tseg, i64 total, int want_src,
                                    int* __restrict__ src, int* __restrict__ dst) {
    tiled_items(off, tseg, total, [&](i64 t, i64 u, bool ok) {
        if (!ok) return;
        const int* row = (const int*)ptr[u];
        dst[t] = row[t - off[u]];
        if (want_src) src[t] = (int)u;
    });
}

// counts[0] += entries (u, u); counts[1] += entries (u, w) without (w, u) (sorted lists).
extern "C" __global__ void loops_and_asymmetry(const int* __restrict__ deg,
                                               const i64* __restrict__ ptr,
                                               const i64* __restrict__ off,
                                               const i64* __restrict__ tseg, i64 total,
                                               int check_symmetry, u64* __restrict__ counts) {
    u64 loops = 0, missing = 0;
    tiled_items(off, tseg, total, [&](i64 t, i64 u, bool ok) {
        if (!ok) return;
        const int w = ((const int*)ptr[u])[t - off[u]];
        if (w == (int)u) { ++loops; return; }
        if (check_symmetry) {
            const i64 dw = deg[w];
            const int* rw = (const int*)ptr[w];
            const i64 p = lower_bound(rw, dw, (int)u);
            if (p >= dw || rw[p] != (int)u) ++missing;
        }
    });
    loops = warp_sum(loops);
    missing = warp_sum(missing);
    if ((threadIdx.x & 31) == 0) {
        if (loops) atomicAdd(&counts[0], loops);
        if (missing) atomicAdd(&counts[1], missing);
    }
}
