// Shared device helpers of the hornet CUDA modules (included by memory_kernels.cu,
// batch/kernels.cu and algos/gpu_kernels.cu; found through the -I option of load_module).
#pragma once

typedef long long i64;
typedef unsigned long long u64;

#define GRID_STRIDE(i, n)                                                              \
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (i64)(n);             \
         i += (i64)blockDim.x * gridDim.x)

// Number of a[0:n] that are < x (a ascending).
template <typename T, typename X>
__device__ __forceinline__ i64 lower_bound(const T* a, i64 n, X x) {
    i64 lo = 0, hi = n;
    while (lo < hi) {
        i64 mid = (lo + hi) >> 1;
        if ((X)a[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Number of a[0:n] that are <= x (a ascending).
template <typename T, typename X>
__device__ __forceinline__ i64 upper_bound(const T* a, i64 n, X x) {
    i64 lo = 0, hi = n;
    while (lo < hi) {
        i64 mid = (lo + hi) >> 1;
        if ((X)a[mid] <= x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Largest s in [lo, hi] with off[s] <= t (off ascending, off[lo] <= t).
__device__ __forceinline__ i64 segment_between(const i64* __restrict__ off, i64 lo, i64 hi,
                                               i64 t) {
    while (lo < hi) {
        i64 mid = (lo + hi + 1) >> 1;
        if (off[mid] <= t) lo = mid; else hi = mid - 1;
    }
    return lo;
}

// Largest s in [0, nseg) with off[s] <= t (off[0] = 0 <= t).
__device__ __forceinline__ i64 segment_of(const i64* __restrict__ off, i64 nseg, i64 t) {
    return segment_between(off, 0, nseg - 1, t);
}

// body(t, s) for every t in [0, total), s = the segment holding t. Blocks take tiles of
// blockDim.x consecutive items (grid-stride over tiles); the segments of a tile's first and
// last items are found once (two threads, full binary search), and each thread then searches
// only that range: a few steps instead of log2(nseg) for every item.
template <typename F>
__device__ __forceinline__ void segmented_loop(const i64* __restrict__ off, i64 nseg, i64 total,
                                               F&& body) {
    __shared__ i64 range[2];
    const i64 stride = (i64)blockDim.x * gridDim.x;
    for (i64 t0 = (i64)blockIdx.x * blockDim.x; t0 < total; t0 += stride) {
        i64 t1 = t0 + blockDim.x - 1;
        if (t1 >= total) t1 = total - 1;
        if (threadIdx.x == 0) range[0] = segment_of(off, nseg, t0);
        if (threadIdx.x == blockDim.x - 1) range[1] = segment_of(off, nseg, t1);
        __syncthreads();
        const i64 lo = range[0], hi = range[1];
        __syncthreads();
        const i64 t = t0 + threadIdx.x;
        if (t < total) body(t, segment_between(off, lo, hi, t));
    }
}


// Exclusive scan over the block (every thread passes one value; blockDim.x a multiple of 32,
// at most 1024); *total (shared) gets the sum. Every thread of the block must call it.
__device__ __forceinline__ int block_exclusive_scan(int x, int* warp_sums, int* total) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int incl = x;
    for (int o = 1; o < 32; o <<= 1) {
        const int y = __shfl_up_sync(0xFFFFFFFFu, incl, o);
        if (lane >= o) incl += y;
    }
    if (lane == 31) warp_sums[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        const int w = lane < (int)(blockDim.x >> 5) ? warp_sums[lane] : 0;
        int wi = w;
        for (int o = 1; o < 32; o <<= 1) {
            const int y = __shfl_up_sync(0xFFFFFFFFu, wi, o);
            if (lane >= o) wi += y;
        }
        warp_sums[lane] = wi - w;
        if (lane == 31) *total = wi;
    }
    __syncthreads();
    const int r = incl - x + warp_sums[warp];
    __syncthreads();                      // warp_sums and *total may be reused after this
    return r;
}
