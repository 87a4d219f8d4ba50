// CUDA kernels of the device-planned allocation (hornet/memory/gpu_take.py): which block
// arrays give the blocks of a batch's per-class request, decided on the device from the
// arrays' free counts, which the device keeps.
//
// Compiled once per process by cupy.RawModule (NVRTC, -std=c++17); includes segmented.cuh.

#include "segmented.cuh"

#define NUM_CLASSES 64
#define FOREST_LEVELS 8
#define TAKE_FIELDS (5 + FOREST_LEVELS + 1)   // a take_small request row (memory_kernels.cu)

// take_plan (one block): need[k] blocks of every size class k (int64 (64,)), taken from the
// block arrays a = 0 .. narrays - 1 of class cls[a] with free_blocks[a] free blocks. A
// class's arrays with free blocks give theirs fullest first (fewest free blocks, then the
// lower index), as the host's allocation does: an array's take is what the request still
// needs after the arrays before it, at most its free blocks. The blocks of class k fill
// the pool from class_start[k] = need[0] + ... + need[k - 1] on, each array's from its
// out_start. Writes per array its take (taken[a], and the count of take_small's request
// row a) and out_start (out_start[a], and the row's out start), lowers free_blocks by the
// takes, and sets next_slot[k] = class_start[k] (the counters batch_place advances).
// Nothing is taken (every take 0, the counts unchanged) when *bad is nonzero (a refused
// batch; bad may be null) or when a class holds fewer free blocks than its need: then
// *short_out = 1 (short_out may be null when the caller guarantees the room).
extern "C" __global__ void take_plan(const i64* __restrict__ need_in, i64 narrays,
                                     const i64* __restrict__ cls,
                                     i64* __restrict__ free_blocks, i64* __restrict__ req,
                                     i64* __restrict__ taken, i64* __restrict__ out_start,
                                     u64* __restrict__ next_slot, const i64* __restrict__ bad,
                                     i64* __restrict__ short_out) {
    __shared__ i64 need[NUM_CLASSES];
    __shared__ i64 start[NUM_CLASSES];
    __shared__ u64 room[NUM_CLASSES];
    __shared__ int skip;
    if (threadIdx.x < NUM_CLASSES) {
        need[threadIdx.x] = need_in[threadIdx.x];
        room[threadIdx.x] = 0;
    }
    if (threadIdx.x == 0) skip = bad != nullptr && *bad != 0;
    __syncthreads();
    if (short_out != nullptr)
        for (i64 a = threadIdx.x; a < narrays; a += blockDim.x)
            atomicAdd(&room[cls[a]], (u64)free_blocks[a]);
    if (threadIdx.x == 0) {
        i64 s = 0;
        for (int k = 0; k < NUM_CLASSES; ++k) {
            start[k] = s;
            s += need[k];
        }
    }
    __syncthreads();
    if (threadIdx.x == 0 && short_out != nullptr && !skip) {
        for (int k = 0; k < NUM_CLASSES; ++k)
            if (need[k] > 0 && (u64)need[k] > room[k]) skip = 1;
        if (skip) *short_out = 1;
    }
    if (threadIdx.x < NUM_CLASSES) next_slot[threadIdx.x] = (u64)start[threadIdx.x];
    __syncthreads();
    for (i64 a = threadIdx.x; a < narrays; a += blockDim.x) {
        const i64 k = cls[a], f = free_blocks[a], n = skip ? 0 : need[k];
        i64 t = 0, before = 0;
        if (n > 0 && f > 0) {
            for (i64 b = 0; b < narrays; ++b) {
                const i64 g = free_blocks[b];
                if (cls[b] == k && g > 0 && (g < f || (g == f && b < a))) before += g;
            }
            t = n - before < f ? n - before : f;
            if (t < 0) t = 0;
        }
        taken[a] = t;
        out_start[a] = start[k] + before;
        req[a * TAKE_FIELDS + 1] = t;
        req[a * TAKE_FIELDS + 2] = start[k] + before;
    }
    __syncthreads();                       // every take decided before the counts change
    for (i64 a = threadIdx.x; a < narrays; a += blockDim.x) free_blocks[a] -= taken[a];
}

// free_blocks[a] += counts[a]: a release's blocks given back per array (release_forest).
extern "C" __global__ void free_add(i64* __restrict__ free_blocks, const u64* __restrict__ counts,
                                    i64 narrays) {
    GRID_STRIDE(a, narrays) { free_blocks[a] += (i64)counts[a]; }
}
