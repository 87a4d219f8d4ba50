// Device queries on a batch adjacency (hornet/algos/_change.py: BatchAdjacency), for the CUDA
// kernels of the dynamic algorithms. Needs i64 and lower_bound from segmented.cuh.
#pragma once

// Whether the ascending int64 keys[0:n] hold (u << 32) | w.
__device__ __forceinline__ bool ba_has_pair(const i64* __restrict__ keys, i64 n, int u, int w) {
    const i64 q = ((i64)u << 32) | (i64)(unsigned)w;
    i64 lo = 0, hi = n;
    while (lo < hi) {
        const i64 mid = (lo + hi) >> 1;
        if (keys[mid] < q) lo = mid + 1; else hi = mid;
    }
    return lo < n && keys[lo] == q;
}

// Index of x in the ascending int32 vertices[0:k], or -1.
__device__ __forceinline__ i64 ba_vertex_slot(const int* __restrict__ vertices, i64 k, int x) {
    i64 lo = 0, hi = k;
    while (lo < hi) {
        const i64 mid = (lo + hi) >> 1;
        if (vertices[mid] < x) lo = mid + 1; else hi = mid;
    }
    return (lo < k && vertices[lo] == x) ? lo : -1;
}

// [*lo, *hi): the keys of x's batch neighbours (low 32 bits: the neighbours, ascending).
__device__ __forceinline__ void ba_vertex_range(const i64* __restrict__ keys, i64 n, int x,
                                                i64* lo, i64* hi) {
    const i64 a = (i64)x << 32, b = ((i64)x + 1) << 32;
    *lo = lower_bound(keys, n, a);
    *hi = lower_bound(keys, n, b);
}
