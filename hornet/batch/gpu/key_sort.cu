// A stable LSD radix sort of a GPU batch plan's keys (hornet/batch/gpu/key_sort.py).
//
// A plan's key is src << 31 | dst (plan.cu): with every id below 2^b, only 2b of its 62 bits
// vary, the b low bits of each half. The sort reads b from the batch's largest id (written on
// the device by batch_keys, never read back) and sorts the virtual key (src << b) | dst,
// whose order is the key's, in a fixed number of passes (KS_PASSES) of w = ceil(2b /
// KS_PASSES) bits each: 8-bit digits for ids below 2^24, 11-bit ones for the widest ids. The
// host launches the same kernels whatever b is, so the sorted keys end in the buffer they
// started in (an even number of passes). Self-loop keys (all ones) have every virtual bit set
// and sort last, as in the full-width order.
//
// A pass is three launches: ks_hist counts each tile's digits (tiles of KS_TILE keys), ks_scan
// turns every digit's row of tile counts into exclusive offsets (one block a digit) and totals,
// and ks_scatter writes each key to its place: the digit's start (a scan of the totals), the
// tile's offset within the digit, the warps before it in the tile, and its rank within its
// warp (warps take consecutive runs of the tile, 32 keys a round in order; keys of one digit
// in a round rank by lane, found by one ballot per digit bit, ks_match). The order of equal
// digits is kept. The tile goes through shared memory in digit order, so that its writes are
// runs of words.
//
// Compiled once per process by cupy.RawModule (NVRTC, -std=c++17); includes segmented.cuh.

#include "segmented.cuh"

#define KS_ID_BITS 31
#define KS_THREADS 256
#define KS_WARPS (KS_THREADS / 32)
#define KS_ROUNDS 16                          // keys a lane handles in ks_scatter
#define KS_WARP_KEYS (32 * KS_ROUNDS)
#define KS_TILE (KS_WARPS * KS_WARP_KEYS)     // keys a block handles (key_sort.py: TILE)
#define KS_PASSES 6                           // key_sort.py: PASSES
#define KS_MAX_BITS 11                        // ceil(62 / KS_PASSES)
#define KS_MAX_BINS (1 << KS_MAX_BITS)        // key_sort.py: MAX_BINS
#define KS_PER_THREAD (KS_MAX_BINS / KS_THREADS)
#if KS_TILE * 8 != KS_WARPS * KS_MAX_BINS * 2
#error "ks_scatter keeps a tile's keys where its counts were"
#endif

// b: bits of the largest id (at least 1, at most 31); w: bits of a digit.
__device__ __forceinline__ int ks_id_bits(const i64* max_id) {
    i64 m = *max_id;
    if (m < 1) m = 1;
    const int b = 64 - __clzll((u64)m);
    return b > KS_ID_BITS ? KS_ID_BITS : b;
}

__device__ __forceinline__ int ks_digit_bits(int b) {
    return (2 * b + KS_PASSES - 1) / KS_PASSES;
}

__device__ __forceinline__ unsigned ks_digit(u64 key, int b, int lo, unsigned mask) {
    const u64 v = ((key >> KS_ID_BITS) << b) | (key & ((1ull << b) - 1ull));
    return (unsigned)(v >> lo) & mask;
}

// Exclusive scan of one unsigned value a thread over the block (KS_THREADS threads); *total
// (shared) gets the sum. Every thread of the block must call it.
__device__ __forceinline__ unsigned ks_block_scan(unsigned x, unsigned* warp_sums,
                                                  unsigned* total) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned incl = x;
    for (int o = 1; o < 32; o <<= 1) {
        const unsigned y = __shfl_up_sync(0xFFFFFFFFu, incl, o);
        if (lane >= o) incl += y;
    }
    if (lane == 31) warp_sums[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        const unsigned v = lane < KS_WARPS ? warp_sums[lane] : 0u;
        unsigned vi = v;
        for (int o = 1; o < 32; o <<= 1) {
            const unsigned y = __shfl_up_sync(0xFFFFFFFFu, vi, o);
            if (lane >= o) vi += y;
        }
        if (lane < KS_WARPS) warp_sums[lane] = vi - v;
        if (lane == 31) *total = vi;
    }
    __syncthreads();
    const unsigned r = incl - x + warp_sums[warp];
    __syncthreads();
    return r;
}

// The lanes of the warp holding the same w-bit digit d as this one (valid lanes only; an
// invalid lane's result is not used): one ballot per bit of the digit, as CUB's radix ranking
// matches digits; faster than __match_any_sync on the H200 (bench/results/key_sort_gpu.md).
// Every lane of the warp must call it.
__device__ __forceinline__ unsigned ks_match(unsigned d, int w, bool valid) {
    unsigned peers = __ballot_sync(0xFFFFFFFFu, valid);
    for (int q = 0; q < w; ++q) {
        const bool bit = (d >> q) & 1u;
        const unsigned set = __ballot_sync(0xFFFFFFFFu, bit);
        peers &= bit ? set : ~set;
    }
    return peers;
}

// hist[d * tiles + t] = keys of tile t (block t) whose digit of pass `pass` is d, for every
// digit d of the pass's width.
extern "C" __global__ void __launch_bounds__(KS_THREADS)
ks_hist(const u64* __restrict__ keys, i64 n, const i64* __restrict__ max_id, int pass,
        unsigned* __restrict__ hist, i64 tiles) {
    __shared__ unsigned bins[KS_MAX_BINS];
    const int b = ks_id_bits(max_id), w = ks_digit_bits(b), nb = 1 << w;
    const unsigned mask = (unsigned)nb - 1u;
    const int lo = pass * w;
    for (int c = threadIdx.x; c < nb; c += KS_THREADS) bins[c] = 0;
    __syncthreads();
    const i64 base = (i64)blockIdx.x * KS_TILE;
    const i64 len = min((i64)KS_TILE, n - base);
    for (i64 i = threadIdx.x; i < len; i += KS_THREADS)
        atomicAdd(&bins[ks_digit(keys[base + i], b, lo, mask)], 1u);
    __syncthreads();
    for (int c = threadIdx.x; c < nb; c += KS_THREADS) hist[(i64)c * tiles + blockIdx.x] = bins[c];
}

// Block d (one per digit, KS_MAX_BINS blocks; those past the pass's digits return): row d of
// hist (tiles counts) made exclusive offsets in place, its sum into totals[d].
extern "C" __global__ void __launch_bounds__(KS_THREADS)
ks_scan(unsigned* __restrict__ hist, i64 tiles, const i64* __restrict__ max_id,
        unsigned* __restrict__ totals) {
    __shared__ unsigned warp_sums[32];
    __shared__ unsigned total;
    const int nb = 1 << ks_digit_bits(ks_id_bits(max_id));
    if ((int)blockIdx.x >= nb) return;
    unsigned* row = hist + (i64)blockIdx.x * tiles;
    const i64 per = (tiles + KS_THREADS - 1) / KS_THREADS;
    const i64 first = threadIdx.x * per;
    const i64 last = min(first + per, tiles);
    unsigned sum = 0;
    for (i64 t = first; t < last; ++t) sum += row[t];
    unsigned run = ks_block_scan(sum, warp_sums, &total);
    for (i64 t = first; t < last; ++t) {
        const unsigned c = row[t];
        row[t] = run;
        run += c;
    }
    if (threadIdx.x == 0) totals[blockIdx.x] = total;
}

// Tile t (block t) of `in` written to its places in `out` (see the head of the file): digit
// starts from totals (every block scans them), the tile's offsets from hist (ks_scan). The
// tile is first ordered by digit in shared memory, then written out in that order, so that
// neighbouring threads write neighbouring words of a digit's run.
extern "C" __global__ void __launch_bounds__(KS_THREADS)
ks_scatter(const u64* __restrict__ in, u64* __restrict__ out, i64 n,
           const i64* __restrict__ max_id, int pass, const unsigned* __restrict__ hist,
           const unsigned* __restrict__ totals, i64 tiles) {
    // per warp and digit its keys, then the keys of the warps before it; then the tile's keys
    // in digit order (both KS_TILE * 8 bytes)
    __shared__ __align__(16) unsigned char shared[KS_WARPS * KS_MAX_BINS * 2];
    __shared__ unsigned short local_start[KS_MAX_BINS];     // a digit's first place in the tile
    __shared__ int place[KS_MAX_BINS];                      // its place in `out`, less that
    __shared__ unsigned warp_sums[32];
    __shared__ unsigned total;
    unsigned short (*counts)[KS_MAX_BINS] = (unsigned short (*)[KS_MAX_BINS])shared;
    u64* sorted = (u64*)shared;
    const int b = ks_id_bits(max_id), w = ks_digit_bits(b), nb = 1 << w;
    const unsigned mask = (unsigned)nb - 1u;
    const int lo = pass * w;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    for (int c = lane; c < nb; c += 32) counts[warp][c] = 0;
    __syncwarp();
    // each warp ranks its run of the tile, 32 keys a round, in order
    const i64 base = (i64)blockIdx.x * KS_TILE;
    const int first = warp * KS_WARP_KEYS + lane;
    u64 key[KS_ROUNDS];
    unsigned short rank[KS_ROUNDS];
    const unsigned lower = (1u << lane) - 1u;
#pragma unroll
    for (int r = 0; r < KS_ROUNDS; ++r) {
        const i64 i = base + first + 32 * r;
        const bool valid = i < n;
        key[r] = valid ? in[i] : 0ull;
        const unsigned d = valid ? ks_digit(key[r], b, lo, mask) : 0xFFFFFFFFu;
        const unsigned peers = ks_match(d, w, valid);
        unsigned before = 0;
        if (valid) before = counts[warp][d];
        __syncwarp();
        if (valid && (peers & lower) == 0)                    // the digit's lowest lane
            counts[warp][d] = (unsigned short)(before + __popc(peers));
        __syncwarp();
        rank[r] = (unsigned short)(before + __popc(peers & lower));
    }
    __syncthreads();
    // per digit, the keys of the warps before each warp, and the tile's keys of the digit
    for (int c = tid; c < nb; c += KS_THREADS) {
        unsigned acc = 0;
#pragma unroll
        for (int v = 0; v < KS_WARPS; ++v) {
            const unsigned x = counts[v][c];
            counts[v][c] = (unsigned short)acc;
            acc += x;
        }
        local_start[c] = (unsigned short)acc;
    }
    __syncthreads();
    // the digits' starts in `out` (totals scanned) and in the tile (the tile's counts scanned),
    // each thread KS_PER_THREAD consecutive digits
    unsigned own[KS_PER_THREAD], mine[KS_PER_THREAD];
    unsigned sum = 0, sum_tile = 0;
#pragma unroll
    for (int q = 0; q < KS_PER_THREAD; ++q) {
        const int c = tid * KS_PER_THREAD + q;
        own[q] = c < nb ? totals[c] : 0u;
        mine[q] = c < nb ? local_start[c] : 0u;
        sum += own[q];
        sum_tile += mine[q];
    }
    unsigned run = ks_block_scan(sum, warp_sums, &total);
    unsigned run_tile = ks_block_scan(sum_tile, warp_sums, &total);
#pragma unroll
    for (int q = 0; q < KS_PER_THREAD; ++q) {
        const int c = tid * KS_PER_THREAD + q;
        if (c < nb) {
            local_start[c] = (unsigned short)run_tile;
            place[c] = (int)(run + hist[(i64)c * tiles + blockIdx.x] - run_tile);
        }
        run += own[q];
        run_tile += mine[q];
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < KS_ROUNDS; ++r) {
        if (base + first + 32 * r < n) {
            const unsigned d = ks_digit(key[r], b, lo, mask);
            rank[r] = (unsigned short)(local_start[d] + counts[warp][d] + rank[r]);
        }
    }
    __syncthreads();                                   // (the counts' room holds the keys now)
#pragma unroll
    for (int r = 0; r < KS_ROUNDS; ++r)
        if (base + first + 32 * r < n) sorted[rank[r]] = key[r];
    __syncthreads();
    const int len = (int)min((i64)KS_TILE, n - base);
    for (int i = tid; i < len; i += KS_THREADS) {
        const u64 k = sorted[i];
        out[(i64)place[ks_digit(k, b, lo, mask)] + i] = k;
    }
}
