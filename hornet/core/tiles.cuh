// Load balancing over lists of very different lengths, for the algorithm kernels: work is
// one flat range of items t in [0, total) over the concatenated lists (or per-list work
// counts); `off` (nseg + 1, exclusive scan, total last) maps an item to its list. A first
// launch (tile_segments) finds the list of the first item of every tile; a block working on a
// tile then searches only between its tile's bounds (tiled_items). Also the warp helpers these
// kernels share. Included by the .cu files of hornet/algos; needs segmented.cuh first.
#pragma once

typedef unsigned char u8;

#define FULL_MASK 0xffffffffu

// Sum over the warp (every lane must call it); the total lands in lane 0.
__device__ __forceinline__ u64 warp_sum(u64 v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(FULL_MASK, v, o);
    return v;
}

__device__ __forceinline__ unsigned lanes_below(unsigned lane) {
    return (1u << lane) - 1u;
}

// body(t, s, ok) for every item t of [0, total), s = the list holding it; called by EVERY
// thread of the block for every tile the block takes (ok = false past the end), so bodies may
// use warp collectives. tseg: from tile_segments with tile = blockDim.x.
template <typename F>
__device__ __forceinline__ void tiled_items(const i64* __restrict__ off,
                                            const i64* __restrict__ tseg, i64 total, F&& body) {
    const i64 T = blockDim.x;
    const i64 ntiles = (total + T - 1) / T;
    for (i64 k = blockIdx.x; k < ntiles; k += gridDim.x) {
        const i64 t = k * T + threadIdx.x;
        const bool ok = t < total;
        const i64 s = ok ? segment_between(off, tseg[k], tseg[k + 1], t) : 0;
        body(t, s, ok);
    }
}

// out[k] = list of item k * tile (k < ntiles); out[ntiles] = nseg - 1.
extern "C" __global__ void tile_segments(const i64* __restrict__ off, i64 nseg, i64 tile,
                                         i64 ntiles, i64* __restrict__ out) {
    GRID_STRIDE(k, ntiles + 1) {
        out[k] = (k == ntiles) ? nseg - 1 : segment_between(off, 0, nseg - 1, k * tile);
    }
}
