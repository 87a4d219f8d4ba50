// The lists of a planned batch rewritten over the flattened moving items
// (hornet/batch/gpu/flat_lists.py). A segment s of the plan (plan.cu) has an old list of
// old_deg[s] ints at src[s] and writes its new list at dst[s] (equal: in place); its kept
// entries are at[seg_start[s] ..] (ascending): a delete's positions that go, or an insert's
// insertion points (old items before each new one; the new values are vals[seg_start[s] ..]).
// In place, the slots before the first change stay; every slot from there on is rewritten
// (out of place: every slot). Those moving slots of all segments, concatenated in segment
// order, are the flat items: segment s owns flat [off[s], off[s] + moving[s]) (a delete: its
// old items from the first removed one on; an insert: its new list's slots from the first
// new item on), and the changed ones (removed items, new items) have the flat indices R,
// ascending over the whole batch. Tiles of FLAT_TILE consecutive flat items, whatever the
// segments they cover (many short lists in one tile, a long list over many tiles), are
// read, ranked and written by one block each: every moving item is read once and written
// once, coalesced.
//
// In place, a delete's survivor lands at or before its own slot and an insert's old item at
// or after it (by at most its list's new items), in its own list: a tile waits before
// writing until every tile holding items its writes land on has been read. Blocks take tiles by ticket (deletes in ascending order,
// inserts in descending order), so the tiles a block waits for are held by blocks already
// running.
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

// The first slot of segment s that is rewritten (in place: its first change; else 0).
__device__ __forceinline__ i64 first_of(i64 s, const i64* src, const i64* dst,
                                        const i64* seg_start, const i64* at) {
    return src[s] == dst[s] ? at[seg_start[s]] : 0;
}

// Slots of segment s rewritten: a delete's old items from the first one on, an insert's new
// list from the first slot on.
__device__ __forceinline__ i64 moving_of(i64 s, const i64* src, const i64* dst,
                                         const i64* seg_start, const i64* seg_len,
                                         const i64* old_deg, const i64* at, int merge) {
    return old_deg[s] + (merge ? seg_len[s] : 0) - first_of(s, src, dst, seg_start, at);
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
flat_sums(const i64* __restrict__ info, const i64* __restrict__ src, const i64* __restrict__ dst,
          const i64* __restrict__ seg_start, const i64* __restrict__ seg_len,
          const i64* __restrict__ old_deg, const i64* __restrict__ at, int merge, i64* tile_sum,
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
        if (s < ns) sum += moving_of(s, src, dst, seg_start, seg_len, old_deg, at, merge);
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
flat_offsets(const i64* __restrict__ info, const i64* __restrict__ src,
             const i64* __restrict__ dst, const i64* __restrict__ seg_start,
             const i64* __restrict__ seg_len, const i64* __restrict__ old_deg,
             const i64* __restrict__ at, int merge, const i64* __restrict__ tile_sum,
             i64* __restrict__ off) {
    __shared__ i64 warp_sums[32];
    __shared__ i64 total;
    const i64 ns = segments_of(info);
    const i64 tiles = (ns + SEG_TILE - 1) / SEG_TILE;
    if ((i64)blockIdx.x >= tiles) return;
    const i64 own = (i64)blockIdx.x * SEG_TILE + (i64)threadIdx.x * SEG_ITEMS;
    i64 m[SEG_ITEMS];
    i64 sum = 0;
    for (int q = 0; q < SEG_ITEMS; ++q) {
        m[q] = own + q < ns ? moving_of(own + q, src, dst, seg_start, seg_len, old_deg, at,
                                        merge) : 0;
        sum += m[q];
    }
    i64 r = tile_sum[blockIdx.x] + scan_block(sum, warp_sums, &total);
    for (int q = 0; q < SEG_ITEMS; ++q) {
        if (own + q < ns) off[own + q] = r;
        r += m[q];
    }
}

// R[j]: the flat index of kept entry j: a delete's removed item, an insert's new item (at
// slot at[j] + its rank in the segment). One warp per 32 consecutive entries: the segment of
// the first by one warp-wide search, the others' from the segment starts among them.
extern "C" __global__ void flat_marks(const i64* __restrict__ info, const i64* __restrict__ src,
                                      const i64* __restrict__ dst,
                                      const i64* __restrict__ seg_start,
                                      const i64* __restrict__ at, const i64* __restrict__ off,
                                      int merge, i64* __restrict__ R) {
    const i64 ns = segments_of(info);
    const i64 kept = ns ? info[I_KEPT] : 0;
    const int lane = threadIdx.x & 31;
    const i64 warps = ((i64)blockDim.x * gridDim.x) >> 5;
    for (i64 j0 = (((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5) * 32; j0 < kept;
         j0 += warps * 32) {
        const i64 s0 = warp_lower_bound(seg_start, ns, j0 + 1) - 1;  // holds entry j0
        const i64 k = s0 + 1 + lane;
        const i64 pos = k < ns ? seg_start[k] - j0 : 32;
        unsigned heads = pos < 32 ? 1u << pos : 0u;         // segments starting in the warp
        for (int o = 16; o > 0; o >>= 1) heads |= __shfl_xor_sync(0xFFFFFFFFu, heads, o);
        const i64 j = j0 + lane;
        if (j < kept) {
            const i64 s = s0 + __popc(heads & ((2u << lane) - 1u));
            const i64 b = seg_start[s];
            R[j] = off[s] + at[j] + (merge ? j - b : 0) - first_of(s, src, dst, seg_start, at);
        }
    }
}

// Per tile t of the flat items: tile_s[t] = the segment holding its first item, tile_r[t] =
// the changed items before it (from each segment and each changed item, the tiles that
// start in their range).
extern "C" __global__ void flat_tiles(const i64* __restrict__ info, const i64* __restrict__ off,
                                      const i64* __restrict__ R, const i64* __restrict__ state,
                                      i64* __restrict__ tile_r, i64* __restrict__ tile_s) {
    const i64 ns = segments_of(info);
    const i64 kept = ns ? info[I_KEPT] : 0;
    const i64 total = ns ? state[S_TOTAL] : 0;
    const i64 ntiles = (total + FLAT_TILE - 1) / FLAT_TILE;
    GRID_STRIDE(s, ns) {
        const i64 hi = (s + 1 < ns ? off[s + 1] : total) - 1;
        for (i64 t = (off[s] + FLAT_TILE - 1) / FLAT_TILE; t * FLAT_TILE <= hi; ++t)
            tile_s[t] = s;
    }
    if (!ns) return;
    GRID_STRIDE(j, kept + 1) {
        const i64 lo = j == 0 ? 0 : R[j - 1] / FLAT_TILE + 1;
        const i64 hi = j == kept ? ntiles - 1 : R[j] / FLAT_TILE;
        for (i64 t = lo; t <= hi; ++t) tile_r[t] = j;
    }
}

// The tile's changed items marked in shared words (bit k: flat F + k), and per word the
// marks before it; r_lo: the marks before the tile. Every thread of the block calls it.
__device__ __forceinline__ void tile_marks(const i64* __restrict__ R, i64 kept, i64 F, i64 end,
                                           i64 r_lo, unsigned* marks, int* before) {
    for (i64 j = r_lo + threadIdx.x; j < kept; j += FLAT_THREADS) {
        const i64 f = R[j];
        if (f >= end) break;
        atomicOr(&marks[(f - F) >> 5], 1u << ((f - F) & 31));
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        const int lane = threadIdx.x;
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
    }
    __syncthreads();
}

// Marks before flat F + k (k in the tile).
__device__ __forceinline__ i64 marks_before(const unsigned* marks, const int* before, i64 r_lo,
                                            i64 k) {
    return r_lo + before[k >> 5] + __popc(marks[k >> 5] & ((1u << (k & 31)) - 1u));
}

// A block's next tile (ticket state[S_TILE_TICKET]: ascending, or descending from ntiles - 1
// when `down`): its flat range, its first and last segments (their offsets cached in soff,
// from soff[0] = off[s_lo]) and the changed items before it (flat_tiles).
struct Tile {
    i64 t, F, end, r_lo, s_lo, s_hi;
};

__device__ __forceinline__ bool next_tile(Tile& tile, Tile* shared, i64* state, i64 ntiles,
                                          bool down, i64 total, const i64* tile_r,
                                          const i64* tile_s, const i64* off, i64 ns,
                                          unsigned* marks, i64* soff) {
    if (threadIdx.x == 0) {
        const i64 k = (i64)atomicAdd((u64*)&state[S_TILE_TICKET], 1ull);
        const i64 t = k < ntiles ? (down ? ntiles - 1 - k : k) : -1;
        shared->t = t;
        if (t >= 0) {
            shared->r_lo = tile_r[t];
            shared->s_lo = tile_s[t];
            i64 sh = ns - 1;
            if (t + 1 < ntiles) {
                sh = tile_s[t + 1];
                if (off[sh] == (t + 1) * FLAT_TILE) --sh;
            }
            shared->s_hi = sh;
        }
    }
    for (int w = threadIdx.x; w < FLAT_WORDS; w += FLAT_THREADS) marks[w] = 0u;
    __syncthreads();
    const i64 t = shared->t;
    if (t < 0) return false;
    tile.t = t;
    tile.F = t * FLAT_TILE;
    tile.end = min(tile.F + FLAT_TILE, total);
    tile.r_lo = shared->r_lo;
    tile.s_lo = shared->s_lo;
    tile.s_hi = shared->s_hi;
    for (i64 s = tile.s_lo + threadIdx.x; s <= tile.s_hi; s += FLAT_THREADS)
        soff[s - tile.s_lo] = off[s];
    __syncthreads();
    return true;
}

// The segment (between the tile's first and last) holding flat f.
__device__ __forceinline__ i64 tile_segment(const Tile& tile, const i64* soff, i64 f) {
    return tile.s_lo + segment_between(soff, 0, tile.s_hi - tile.s_lo, f);
}

// The tile read (flag set), then, once tiles [lo, hi] are read too, its writes may start.
__device__ __forceinline__ void wait_reads(volatile int* read, i64 t, i64 lo, i64 hi) {
    __syncthreads();                                      // the whole tile is read
    if (threadIdx.x == 0) {
        __threadfence();
        read[t] = 1;
    }
    for (i64 q = lo + threadIdx.x; q <= hi; q += FLAT_THREADS)
        if (q != t)
            while (read[q] == 0) {}
    __threadfence();
    __syncthreads();
}

// The removal, tile by tile (see the top of the file), in place: src = dst = old_ptr.
// state: zeroed by the caller but for S_TOTAL (flat_sums); one flag per tile from S_FLAGS on
// (as int).
extern "C" __global__ void __launch_bounds__(FLAT_THREADS)
flat_remove(const i64* __restrict__ info, const i64* __restrict__ off,
            const i64* __restrict__ seg_start, const i64* __restrict__ old_ptr,
            const i64* __restrict__ at, const i64* __restrict__ R, i64* state,
            const i64* __restrict__ tile_r, const i64* __restrict__ tile_s) {
    __shared__ unsigned marks[FLAT_WORDS];
    __shared__ i64 soff[FLAT_TILE + 1];
    __shared__ int before[FLAT_WORDS];          // removed items of the tile before each word
    __shared__ Tile shared;
    const i64 ns = segments_of(info);
    const i64 kept = ns ? info[I_KEPT] : 0;
    const i64 total = ns ? ((volatile i64*)state)[S_TOTAL] : 0;
    const i64 ntiles = (total + FLAT_TILE - 1) / FLAT_TILE;
    volatile int* read = (volatile int*)(state + S_FLAGS);
    Tile tile;
    while (next_tile(tile, &shared, state, ntiles, false, total, tile_r, tile_s, off, ns,
                     marks, soff)) {
        tile_marks(R, kept, tile.F, tile.end, tile.r_lo, marks, before);
        const i64 F = tile.F, rl = tile.r_lo;
        int v[FLAT_ITEMS];
        int* to[FLAT_ITEMS];
#pragma unroll
        for (int q = 0; q < FLAT_ITEMS; ++q) {
            const i64 f = F + q * FLAT_THREADS + threadIdx.x;
            to[q] = nullptr;
            if (f < tile.end) {
                const i64 s = tile_segment(tile, soff, f);
                const i64 k = f - F;
                const i64 b = seg_start[s];
                const i64 i = at[b] + (f - soff[s - tile.s_lo]);   // the item's slot
                int* O = (int*)old_ptr[s];
                v[q] = O[i];
                if (!((marks[k >> 5] >> (k & 31)) & 1u))
                    to[q] = O + (i - (marks_before(marks, before, rl, k) - b));
            }
        }
        // the survivors land from here on (flat): the first segment's removed items before
        // the tile pull them back
        const i64 sl = tile.s_lo;
        const i64 low = max(soff[0], F - (rl - seg_start[sl]));
        wait_reads(read, tile.t, low / FLAT_TILE, tile.t - 1);
#pragma unroll
        for (int q = 0; q < FLAT_ITEMS; ++q)
            if (to[q] != nullptr) *to[q] = v[q];
        __syncthreads();                                  // the shared words are reused
    }
}

// The merge, tile by tile (see the top of the file): segment s's new list at dst[s] (in place
// when dst[s] == src[s]), its new items vals[seg_start[s] ..] before the old items at[..].
// Tiles are taken from the last one down; in place, the old items a tile's writes land on
// are read by the tile itself or by later ones, up to the new items its last segment places
// after the tile. state as for flat_remove.
extern "C" __global__ void __launch_bounds__(FLAT_THREADS)
flat_merge(const i64* __restrict__ info, const i64* __restrict__ off,
           const i64* __restrict__ seg_start, const i64* __restrict__ seg_len,
           const i64* __restrict__ src, const i64* __restrict__ dst,
           const i64* __restrict__ at, const int* __restrict__ vals,
           const i64* __restrict__ R, i64* state, const i64* __restrict__ tile_r,
           const i64* __restrict__ tile_s) {
    __shared__ unsigned marks[FLAT_WORDS];
    __shared__ i64 soff[FLAT_TILE + 1];
    __shared__ int before[FLAT_WORDS];          // new items of the tile before each word
    __shared__ Tile shared;
    const i64 ns = segments_of(info);
    const i64 kept = ns ? info[I_KEPT] : 0;
    const i64 total = ns ? ((volatile i64*)state)[S_TOTAL] : 0;
    const i64 ntiles = (total + FLAT_TILE - 1) / FLAT_TILE;
    volatile int* read = (volatile int*)(state + S_FLAGS);
    Tile tile;
    while (next_tile(tile, &shared, state, ntiles, true, total, tile_r, tile_s, off, ns,
                     marks, soff)) {
        tile_marks(R, kept, tile.F, tile.end, tile.r_lo, marks, before);
        const i64 F = tile.F, rl = tile.r_lo;
        int v[FLAT_ITEMS];
        int* to[FLAT_ITEMS];
#pragma unroll
        for (int q = 0; q < FLAT_ITEMS; ++q) {
            const i64 f = F + q * FLAT_THREADS + threadIdx.x;
            to[q] = nullptr;
            if (f < tile.end) {
                const i64 s = tile_segment(tile, soff, f);
                const i64 k = f - F;
                const i64 b = seg_start[s];
                const i64 first = src[s] == dst[s] ? at[b] : 0;
                const i64 p = first + (f - soff[s - tile.s_lo]);   // its new slot
                const i64 j = marks_before(marks, before, rl, k);
                if ((marks[k >> 5] >> (k & 31)) & 1u) v[q] = vals[j];
                else v[q] = ((const int*)src[s])[p - (j - b)];
                to[q] = (int*)dst[s] + p;
            }
        }
        // in place, the old items under the tile's writes are read by slots at most as many
        // past them as their segment has new items (only the last segment reaches past the
        // tile)
        const i64 sh = tile.s_hi;
        i64 hi = tile.t;
        if (src[sh] == dst[sh]) {
            const i64 seg_end = sh + 1 < ns ? off[sh + 1] : total;
            hi = (min(seg_end, tile.end + seg_len[sh]) - 1) / FLAT_TILE;
        }
        wait_reads(read, tile.t, tile.t + 1, hi);
#pragma unroll
        for (int q = 0; q < FLAT_ITEMS; ++q)
            if (to[q] != nullptr) *to[q] = v[q];
        __syncthreads();                                  // the shared words are reused
    }
}
