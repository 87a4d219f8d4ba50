// Shared device helpers of the hornet CUDA modules (included by memory/memory_kernels.cu,
// batch/gpu/*.cu and the .cu files of algos/; found through the -I option of load_module).
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

// Whether the ascending a[0:n] holds w.
__device__ __forceinline__ bool in_sorted(const int* a, i64 n, int w) {
    const i64 p = lower_bound(a, n, w);
    return p < n && a[p] == w;
}

// Whether the ascending pair keys[lo:hi] hold the pair (x, w), keyed x << 32 | w (a batch's
// edges sorted by key, as the dynamic triangle and truss kernels keep them).
__device__ __forceinline__ bool in_batch_list(const i64* keys, i64 lo, i64 hi, int x, int w) {
    const i64 q = ((i64)x << 32) | (i64)(unsigned)w;
    const i64 p = lo + lower_bound(keys + lo, hi - lo, q);
    return p < hi && keys[p] == q;
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

// A merge's old items: items [lo, hi) of list O go to D (D == O: in place), moved up past the
// new items that go before them (new item j before old item I[j], I ascending, c of them), so
// old item i lands on i + #(I <= i). Chunks of `width` items from the back, taken by `width`
// threads (`rank` = this one's); every item of a chunk is read before any is written (`sync`:
// the group's barrier), so in place, writes land at or after the chunk's start, on items
// already read.
template <typename T, typename Sync>
__device__ __forceinline__ void place_old_items(const T* O, T* D, i64 lo, i64 hi, const i64* I,
                                                i64 c, int width, int rank, Sync sync) {
    for (i64 top = hi; top > lo; top -= width) {
        const i64 i = top - width + rank;
        const bool mine = i >= lo;
        T v;
        i64 shift = 0;
        if (mine) {
            v = O[i];
            shift = upper_bound(I, c, i);
        }
        sync();
        if (mine) D[i + shift] = v;
        sync();
    }
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


// pool slot of this thread's entry of class k: the entries of one class take consecutive slots
// from next_slot[k] (in any order), one atomicAdd per class present in the warp. Called by
// every active thread of a grid-stride loop.
__device__ __forceinline__ unsigned long long class_slot(unsigned long long* next_slot, i64 k) {
    const unsigned active = __activemask();
    const unsigned same = __match_any_sync(active, k);
    const int lane = threadIdx.x & 31;
    const int leader = __ffs(same) - 1;
    unsigned long long base = 0;
    if (lane == leader) base = atomicAdd(next_slot + k, (unsigned long long)__popc(same));
    base = __shfl_sync(same, base, leader);
    return base + __popc(same & ((1u << lane) - 1u));
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


// The removed positions of one segment, as a warp walks its items in windows of 32: every
// lane holds one of 32 consecutive positions P[base + lane] (ascending, unique; past the end:
// none), reloaded only when the window may reach past the last one held. ``j`` counts the
// positions before the current window.
struct RemovedPositions {
    const i64* P;
    i64 c, j, base, held;

    __device__ __forceinline__ RemovedPositions(const i64* P_, i64 c_, i64 j_)
        : P(P_), c(c_), j(j_), base(j_) { load(); }

    __device__ __forceinline__ void load() {
        const i64 k = base + (threadIdx.x & 31);
        held = k < c ? P[k] : 0x7FFFFFFFFFFFFFFFLL;
    }

    // Bit t set: item lo + t is removed (windows visited in ascending order); j moves past them.
    __device__ __forceinline__ unsigned window(i64 lo) {
        const i64 last = __shfl_sync(0xFFFFFFFFu, held, 31);
        if (last < lo + 32 && base + 32 < c) {     // the held positions may not cover [lo, lo+32)
            base = j;
            load();
        }
        unsigned bit = (held >= lo && held < lo + 32) ? 1u << (held - lo) : 0u;
        for (int o = 16; o > 0; o >>= 1) bit |= __shfl_xor_sync(0xFFFFFFFFu, bit, o);
        j += __popc(bit);
        return bit;
    }
};

// Number of a[0:n] that are < x (a ascending), by the whole warp (every lane gets it): each
// step probes 32 points and keeps one of the 32 ranges between them.
__device__ __forceinline__ i64 warp_lower_bound(const i64* __restrict__ a, i64 n, i64 x) {
    const int lane = threadIdx.x & 31;
    i64 lo = 0, hi = n;                  // the answer is in [lo, hi]
    while (hi - lo > 32) {
        const i64 step = (hi - lo + 31) >> 5;
        const i64 probe = lo + lane * step;
        const unsigned less = __ballot_sync(0xFFFFFFFFu, probe < hi && a[probe] < x);
        const int t = __popc(less);      // the probes below x are a prefix
        if (t == 0) return lo;
        const i64 next_hi = lo + t * step;
        lo = lo + (t - 1) * step + 1;
        if (next_hi < hi) hi = next_hi;
    }
    const unsigned less = __ballot_sync(0xFFFFFFFFu, lo + lane < hi && a[lo + lane] < x);
    return lo + __popc(less);
}

// The three steps of a warp's removal over K windows of 32 consecutive items from lo_w: read
// the items below d0 (before any search, so the loads overlap it), rank them (to[b]: the
// survivor's slot minus `origin`, or `not_kept`), and, once every item that the writes may
// land on has been read, write the survivors.
template <typename T, int K>
__device__ __forceinline__ void read_windows(const T* O, i64 d0, i64 lo_w, T (&v)[K]) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int b = 0; b < K; ++b)
        if (lo_w + 32 * b + lane < d0) v[b] = O[lo_w + 32 * b + lane];
}

template <typename TO, int K>
__device__ __forceinline__ void rank_windows(RemovedPositions& gone, i64 d0, i64 lo_w,
                                             i64 origin, TO not_kept, TO (&to)[K]) {
    const int lane = threadIdx.x & 31;
    const unsigned below = (1u << lane) - 1u;
#pragma unroll
    for (int b = 0; b < K; ++b) {
        const i64 i = lo_w + 32 * b + lane;
        const i64 before = gone.j;
        const unsigned bits = gone.window(lo_w + 32 * b);
        to[b] = (i < d0 && !((bits >> lane) & 1u))
                    ? (TO)(i - before - __popc(bits & below) - origin) : not_kept;
    }
}

template <typename T, typename TO, int K>
__device__ __forceinline__ void write_windows(T* D, i64 origin, TO not_kept, const T (&v)[K],
                                              const TO (&to)[K]) {
#pragma unroll
    for (int b = 0; b < K; ++b)
        if (to[b] != not_kept) D[origin + to[b]] = v[b];
}
