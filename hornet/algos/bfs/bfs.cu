// CUDA kernels of the GPU BFS (hornet/algos/bfs/gpu.py).
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

// Top-down step, one thread per frontier edge (fpre: exclusive scan of the frontier's
// out-degrees). A vertex is claimed by CAS on its level (-1 -> nxt), so it enters the next
// frontier once; claimed vertices are appended with one atomic per warp.
// counters[0] += vertices claimed, counters[1] += their in-degrees (ideg).
extern "C" __global__ void bfs_top_down(const i64* __restrict__ ptr, const int* __restrict__ ideg,
                                        const int* __restrict__ frontier,
                                        const i64* __restrict__ fpre,
                                        const i64* __restrict__ tseg, i64 total,
                                        int* __restrict__ level, int* __restrict__ parent,
                                        int want_parent, int nxt, int* __restrict__ out,
                                        u64* __restrict__ counters) {
    const unsigned lane = threadIdx.x & 31;
    tiled_items(fpre, tseg, total, [&](i64 t, i64 s, bool ok) {
        bool claimed = false;
        int v = 0;
        u64 dv = 0;
        if (ok) {
            const int u = frontier[s];
            v = ((const int*)ptr[u])[t - fpre[s]];
            if (level[v] == -1 && atomicCAS(&level[v], -1, nxt) == -1) {
                claimed = true;
                dv = (u64)ideg[v];
                if (want_parent) parent[v] = u;
            }
        }
        const unsigned m = __ballot_sync(FULL_MASK, claimed);
        if (m) {
            const u64 dsum = warp_sum(dv);
            u64 base = 0;
            if (lane == 0) {
                base = atomicAdd(&counters[0], (u64)__popc(m));
                atomicAdd(&counters[1], dsum);
            }
            base = __shfl_sync(FULL_MASK, base, 0);
            if (claimed) out[base + __popc(m & lanes_below(lane))] = v;
        }
    });
}

// Bottom-up step: every unvisited vertex looks for an in-neighbour at level cur and stops at
// the first. counters[0] += vertices found, counters[1] += their in-degrees.
extern "C" __global__ void bfs_bottom_up(const int* __restrict__ ideg,
                                         const i64* __restrict__ iptr, i64 n,
                                         int* __restrict__ level, int* __restrict__ parent,
                                         int want_parent, int cur, u64* __restrict__ counters) {
    u64 found = 0, fdeg = 0;
    GRID_STRIDE(v, n) {
        if (level[v] != -1) continue;
        const int d = ideg[v];
        if (d == 0) continue;
        const int* row = (const int*)iptr[v];
        for (int j = 0; j < d; ++j) {
            const int u = row[j];
            if (level[u] == cur) {
                level[v] = cur + 1;
                if (want_parent) parent[v] = u;
                ++found;
                fdeg += (u64)d;
                break;
            }
        }
    }
    found = warp_sum(found);
    fdeg = warp_sum(fdeg);
    if ((threadIdx.x & 31) == 0 && found) {
        atomicAdd(&counters[0], found);
        atomicAdd(&counters[1], fdeg);
    }
}
