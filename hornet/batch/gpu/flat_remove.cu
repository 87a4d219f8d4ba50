// In-place removal of a planned delete, every list at once, over the flattened moving items
// (hornet/batch/gpu/flat_remove.py). A segment s of the plan (plan.cu) loses the kept entries
// at[seg_start[s] ..] (ascending positions) of its list of old_deg[s] ints at old_ptr[s];
// every item from its first removed position on moves (or goes). Those moving items of all
// segments, concatenated in segment order, are the flat items: segment s owns flat
// [off[s], off[s] + moving[s]), and the removed ones have the flat indices R, ascending
// over the whole batch. Tiles of FLAT_TILE consecutive flat items, whatever the segments they
// cover (many short lists in one tile, a long list over many tiles), are read, ranked and
// written by one block each: every surviving item is read once and written once, coalesced.
//
// In place, a survivor lands at or before its own slot, in its own list: a tile waits before
// writing until every tile its survivors land on has been read. Blocks take tiles by ticket
// (in ascending order), so the tiles a block waits for are held by blocks already running.
//
// Counts come from the plan's info (nothing is read back): segments info[I_SEGMENTS], kept
// entries info[I_KEPT], and a bad id (info[I_BAD]) leaves every list untouched.

#include "segmented.cuh"

#define I_BAD 0                      // plan.cu's info slots
#define I_KEPT 3
#define I_SEGMENTS 4

#define SEG_THREADS 256
#define SEG_ITEMS 8
#define SEG_TILE (SEG_THREADS * SEG_ITEMS)      // segments a block of the offsets' scan takes
#define FLAT_THREADS 256
#define FLAT_ITEMS 8
#define FLAT_TILE (FLAT_THREADS * FLAT_ITEMS)   // flat items a block of flat_remove takes
#define FLAT_WORDS (FLAT_TILE / 32)

// state words (int64): the offsets' ticket, the number of flat items, the tiles' ticket;
// then one int flag per tile (read)
#define S_SUM_TICKET 0
#define S_TOTAL 1
#define S_TILE_TICKET 2
#define S_FLAGS 3

__device__ __forceinline__ i64 segments_of(const i64* info) {
    return info[I_BAD] ? 0 : info[I_SEGMENTS];
}

__device__ __forceinline__ i64 moving_of(i64 s, const i64* seg_start, const i64* old_deg,
                                         const i64* at) {
    return old_deg[s] - at[seg_start[s]];
}

// Exclusive scan over the block (blockDim.x threads, a multiple of 32); *total gets the sum.
__device__ __forceinline__ i64 scan_block(i64 x, i64* warp_sums, i64* total) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    i64 incl = x;
    for (int o = 1; o < 32; o <<= 1) {
        const i64 y = __shfl_up_sync(0xFFFFFFFFu, incl, o);
        if (lane >= o) incl += y;
    }
    if (lane == 31) warp_sums[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        const i64 v = lane < (int)(blockDim.x >> 5) ? warp_sums[lane] : 0;
        i64 vi = v;
        for (int o = 1; o < 32; o <<= 1) {
            const i64 y = __shfl_up_sync(0xFFFFFFFFu, vi, o);
            if (lane >= o) vi += y;
        }
        warp_sums[lane] = vi - v;
        if (lane == 31) *total = vi;
    }
    __syncthreads();
    const i64 r = incl - x + warp_sums[warp];
    __syncthreads();
    return r;
}

// Moving items summed per tile of SEG_TILE segments (tile_sum[b]); the last block to finish
// (ticket state[S_SUM_TICKET]) turns the sums into their exclusive scan and writes the total
// into state[S_TOTAL]. One block per tile (the grid is sized for the bound; blocks past the
// segments return).
extern "C" __global__ void __launch_bounds__(SEG_THREADS)
flat_sums(const i64* __restrict__ info, const i64* __restrict__ seg_start,
          const i64* __restrict__ old_deg, const i64* __restrict__ at, i64* tile_sum,
          i64* state) {
    __shared__ i64 warp_sums[32];
    __shared__ i64 total;
    __shared__ bool last;
    const i64 ns = segments_of(info);
    const i64 tiles = (ns + SEG_TILE - 1) / SEG_TILE;
    if ((i64)blockIdx.x >= tiles) {
        if (blockIdx.x == 0 && threadIdx.x == 0) state[S_TOTAL] = 0;   // no segment
        return;
    }
    const i64 base = (i64)blockIdx.x * SEG_TILE;
    i64 sum = 0;
    for (int q = 0; q < SEG_ITEMS; ++q) {
        const i64 s = base + q * SEG_THREADS + threadIdx.x;
        if (s < ns) sum += moving_of(s, seg_start, old_deg, at);
    }
    scan_block(sum, warp_sums, &total);
    if (threadIdx.x == 0) {
        tile_sum[blockIdx.x] = total;
        __threadfence();
        const u64 done = atomicAdd((u64*)&state[S_SUM_TICKET], 1ull);
        last = done == (u64)(tiles - 1);
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    i64 carry = 0;
    for (i64 b = 0; b < tiles; b += SEG_THREADS) {
        const i64 i = b + threadIdx.x;
        const i64 v = i < tiles ? ((volatile i64*)tile_sum)[i] : 0;
        const i64 ex = scan_block(v, warp_sums, &total);
        if (i < tiles) tile_sum[i] = carry + ex;
        carry += total;
    }
    if (threadIdx.x == 0) state[S_TOTAL] = carry;
}

// off[s]: the first flat index of segment s (tile_sum: the tiles' offsets, from flat_sums).
// Each thread scans SEG_ITEMS consecutive segments of its block's tile.
extern "C" __global__ void __launch_bounds__(SEG_THREADS)
flat_offsets(const i64* __restrict__ info, const i64* __restrict__ seg_start,
             const i64* __restrict__ old_deg, const i64* __restrict__ at,
             const i64* __restrict__ tile_sum, i64* __restrict__ off) {
    __shared__ i64 warp_sums[32];
    __shared__ i64 total;
    const i64 ns = segments_of(info);
    const i64 tiles = (ns + SEG_TILE - 1) / SEG_TILE;
    if ((i64)blockIdx.x >= tiles) return;
    const i64 own = (i64)blockIdx.x * SEG_TILE + (i64)threadIdx.x * SEG_ITEMS;
    i64 m[SEG_ITEMS];
    i64 sum = 0;
    for (int q = 0; q < SEG_ITEMS; ++q) {
        m[q] = own + q < ns ? moving_of(own + q, seg_start, old_deg, at) : 0;
        sum += m[q];
    }
    i64 r = tile_sum[blockIdx.x] + scan_block(sum, warp_sums, &total);
    for (int q = 0; q < SEG_ITEMS; ++q) {
        if (own + q < ns) off[own + q] = r;
        r += m[q];
    }
}

// R[j]: the flat index of kept entry j (the segment holding it found by binary search).
extern "C" __global__ void flat_marks(const i64* __restrict__ info,
                                      const i64* __restrict__ seg_start,
                                      const i64* __restrict__ at, const i64* __restrict__ off,
                                      i64* __restrict__ R) {
    const i64 ns = segments_of(info);
    const i64 kept = ns ? info[I_KEPT] : 0;
    GRID_STRIDE(j, kept) {
        const i64 s = upper_bound(seg_start, ns, j) - 1;
        R[j] = off[s] + at[j] - at[seg_start[s]];
    }
}

// The removal, tile by tile (see the top of the file). state: zeroed by the caller but for
// S_TOTAL (flat_sums); one flag per tile from S_FLAGS on (as int).
extern "C" __global__ void __launch_bounds__(FLAT_THREADS)
flat_remove(const i64* __restrict__ info, const i64* __restrict__ off,
            const i64* __restrict__ seg_start, const i64* __restrict__ old_ptr,
            const i64* __restrict__ at, const i64* __restrict__ R, i64* state) {
    __shared__ unsigned marks[FLAT_WORDS];
    __shared__ int before[FLAT_WORDS];          // removed items of the tile before each word
    __shared__ i64 tile, r_lo, s_lo, s_hi, low;
    const i64 ns = segments_of(info);
    const i64 kept = ns ? info[I_KEPT] : 0;
    const i64 total = ns ? ((volatile i64*)state)[S_TOTAL] : 0;
    const i64 ntiles = (total + FLAT_TILE - 1) / FLAT_TILE;
    volatile int* read = (volatile int*)(state + S_FLAGS);
    const int lane = threadIdx.x & 31;
    while (true) {
        if (threadIdx.x == 0) tile = (i64)atomicAdd((u64*)&state[S_TILE_TICKET], 1ull);
        for (int w = threadIdx.x; w < FLAT_WORDS; w += FLAT_THREADS) marks[w] = 0u;
        __syncthreads();
        const i64 t = tile;
        if (t >= ntiles) break;
        const i64 F = t * FLAT_TILE;
        const i64 end = min(F + FLAT_TILE, total);
        if (threadIdx.x == 0) {
            r_lo = lower_bound(R, kept, F);
            s_lo = segment_of(off, ns, F);
        }
        if (threadIdx.x == 32) s_hi = segment_of(off, ns, end - 1);
        __syncthreads();
        const i64 rl = r_lo, sl = s_lo, sh = s_hi;
        for (i64 j = rl + threadIdx.x; j < kept; j += FLAT_THREADS) {
            const i64 f = R[j];
            if (f >= end) break;
            atomicOr(&marks[(f - F) >> 5], 1u << ((f - F) & 31));
        }
        __syncthreads();
        if (threadIdx.x < 32) {              // removed items before each word of the tile
            int c[FLAT_WORDS / 32], sum = 0;
#pragma unroll
            for (int k = 0; k < FLAT_WORDS / 32; ++k) {
                c[k] = __popc(marks[lane * (FLAT_WORDS / 32) + k]);
                sum += c[k];
            }
            int incl = sum;
            for (int o = 1; o < 32; o <<= 1) {
                const int y = __shfl_up_sync(0xFFFFFFFFu, incl, o);
                if (lane >= o) incl += y;
            }
            int run = incl - sum;
#pragma unroll
            for (int k = 0; k < FLAT_WORDS / 32; ++k) {
                before[lane * (FLAT_WORDS / 32) + k] = run;
                run += c[k];
            }
            if (lane == 0) {
                // the tile's survivors land from here on (flat): its first segment's removed
                // items before the tile pull them back
                low = max(off[sl], F - (rl - seg_start[sl]));
            }
        }
        __syncthreads();
        int v[FLAT_ITEMS];
        int* to[FLAT_ITEMS];
#pragma unroll
        for (int q = 0; q < FLAT_ITEMS; ++q) {
            const i64 f = F + q * FLAT_THREADS + threadIdx.x;
            to[q] = nullptr;
            if (f < end) {
                const i64 s = segment_between(off, sl, sh, f);
                const i64 k = f - F;
                const unsigned word = marks[k >> 5], bit = 1u << (k & 31);
                const i64 b = seg_start[s];
                const i64 i = at[b] + (f - off[s]);           // the item's slot in its list
                int* O = (int*)old_ptr[s];
                v[q] = O[i];
                if (!(word & bit)) {
                    const i64 gone = rl + before[k >> 5] + __popc(word & (bit - 1u)) - b;
                    to[q] = O + (i - gone);
                }
            }
        }
        __syncthreads();                                  // the whole tile is read
        if (threadIdx.x == 0) {
            __threadfence();
            read[t] = 1;
        }
        for (i64 q = low / FLAT_TILE + threadIdx.x; q < t; q += FLAT_THREADS)
            while (read[q] == 0) {}
        __threadfence();
        __syncthreads();
#pragma unroll
        for (int q = 0; q < FLAT_ITEMS; ++q)
            if (to[q] != nullptr) *to[q] = v[q];
        __syncthreads();                                  // the shared words are reused
    }
}
