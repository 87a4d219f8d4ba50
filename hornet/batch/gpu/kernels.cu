// CUDA kernels of the batch pipeline (GPU twin of hornet/batch/cpu/).
//
// Compiled once per process by cupy.RawModule (NVRTC, -std=c++17); includes segmented.cuh.
// Every kernel uses 64-bit indexing and a grid-stride loop, so any grid size is correct.
// Lists are reached through int64 device addresses: vertex v's destination list is degree[v]
// int32 values at edge_ptr[v], ascending; a property column's list is reached by its own
// per-vertex (or per-segment) address.
//
// Load balancing: work over many lists of very different lengths is laid out as one flat
// index range t in [0, total) over the concatenated (sub)lists; `off` (length nseg + 1,
// exclusive scan with the total last) maps t back to its list by binary search (restricted to
// the lists of the item's 256-item tile, see segmented_loop).
// In-place list rewrites (merge, removal) never overwrite an item another thread still has
// to read: one thread, one warp or (huge lists) one block owns a whole list and walks it in a
// safe direction, chunk by chunk, each chunk read by all before any is written.

#include "segmented.cuh"

// ------------------------------------------------------------------------------ validation
// out[0] = min(out[0], min a), out[1] = max(out[1], max a): a block-wide warp reduction,
// then one atomic per warp (out starts at [INT64_MAX, INT64_MIN]).
extern "C" __global__ void id_bounds(const i64* __restrict__ a, i64 n, i64* __restrict__ out) {
    i64 lo = 0x7fffffffffffffffLL, hi = -0x7fffffffffffffffLL - 1;
    GRID_STRIDE(i, n) {
        const i64 v = a[i];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    for (int o = 16; o > 0; o >>= 1) {
        const i64 l = __shfl_down_sync(0xFFFFFFFFu, lo, o), h = __shfl_down_sync(0xFFFFFFFFu, hi, o);
        lo = l < lo ? l : lo;
        hi = h > hi ? h : hi;
    }
    if ((threadIdx.x & 31) == 0) {
        atomicMin(&out[0], lo);
        atomicMax(&out[1], hi);
    }
}

// ------------------------------------------------------------------------------ sorting
#define ALL_ONES 0xFFFFFFFFFFFFFFFFull

// Keys ((src << bits | dst) << index_bits) | entry; mirror: pair i -> entries 2i (s, d) and
// 2i + 1 (d, s); self-loops (mirror only) -> ALL_ONES, which sorts last.
extern "C" __global__ void pack_pairs(const i64* __restrict__ s, const i64* __restrict__ d,
                                      i64 n, int bits, int index_bits, int mirror,
                                      u64* __restrict__ out) {
    const u64 with_index = index_bits > 0 ? 1ull : 0ull;
    GRID_STRIDE(i, n) {
        u64 u = (u64)s[i], v = (u64)d[i];
        if (mirror) {
            if (u == v) {
                out[2 * i] = ALL_ONES;
                out[2 * i + 1] = ALL_ONES;
            } else {
                out[2 * i] = (((u << bits) | v) << index_bits) | ((u64)(2 * i) * with_index);
                out[2 * i + 1] = (((v << bits) | u) << index_bits) |
                                 ((u64)(2 * i + 1) * with_index);
            }
        } else {
            out[i] = (((u << bits) | v) << index_bits) | ((u64)i * with_index);
        }
    }
}

// flag[i] = 1 where sorted key i starts a new (src, dst) and is not a self-loop entry;
// end_out[0] = index of the first ALL_ONES key (left untouched when there is none).
extern "C" __global__ void unique_flags(const u64* __restrict__ keys, i64 n, int index_bits,
                                        int* __restrict__ flag, i64* __restrict__ end_out) {
    GRID_STRIDE(i, n) {
        u64 k = keys[i];
        bool all = k == ALL_ONES;
        u64 prev = i > 0 ? keys[i - 1] : 0ull;
        flag[i] = (!all && (i == 0 || (k >> index_bits) != (prev >> index_bits))) ? 1 : 0;
        if (all && (i == 0 || prev != ALL_ONES)) end_out[0] = i;
    }
}

// The kept keys (rank: inclusive scan of unique_flags' flags; key i is kept where its rank
// steps up) decoded into slot rank[i] - 1 of (order, src, dst).
extern "C" __global__ void decode_pairs(const u64* __restrict__ keys, const int* __restrict__ rank,
                                        i64 n, int bits, int index_bits, int want_order,
                                        i64* __restrict__ order, int* __restrict__ src,
                                        int* __restrict__ dst) {
    const u64 low = index_bits > 0 ? ((1ull << index_bits) - 1ull) : 0ull;
    const u64 dmask = (1ull << bits) - 1ull;
    GRID_STRIDE(i, n) {
        const int r = rank[i];
        if (r == (i > 0 ? rank[i - 1] : 0)) continue;
        const i64 j = r - 1;
        u64 k = keys[i];
        if (want_order) order[j] = (i64)(k & low);
        u64 p = k >> index_bits;
        src[j] = (int)(p >> bits);
        dst[j] = (int)(p & dmask);
    }
}

// flag[i] = src[i] < dst[i] (the entry that stands for its undirected edge).
extern "C" __global__ void canonical_flags(const int* __restrict__ src,
                                           const int* __restrict__ dst, i64 n,
                                           int* __restrict__ flag) {
    GRID_STRIDE(i, n) { flag[i] = src[i] < dst[i]; }
}

// Each undirected edge once: entry i with src[i] < dst[i] goes to slot rank[i] - 1 (rank:
// inclusive scan of canonical_flags) of once (its index), s_out and d_out.
extern "C" __global__ void canonical_scatter(const int* __restrict__ src,
                                             const int* __restrict__ dst,
                                             const int* __restrict__ rank, i64 n,
                                             i64* __restrict__ once, int* __restrict__ s_out,
                                             int* __restrict__ d_out) {
    GRID_STRIDE(i, n) {
        const int u = src[i], v = dst[i];
        if (u < v) {
            const i64 k = rank[i] - 1;
            once[k] = i;
            s_out[k] = u;
            d_out[k] = v;
        }
    }
}

// ------------------------------------------------------------------------------ searching
// Position of dst[i] in the sorted list of src[i]; if absent, -1 - (its insertion point).
template <typename S, typename D, typename G>
__global__ void find_positions(const S* __restrict__ src, const D* __restrict__ dst, i64 n,
                               const G* __restrict__ degree, const i64* __restrict__ edge_ptr,
                               i64 num_vertices, i64* __restrict__ out) {
    GRID_STRIDE(i, n) {
        i64 u = (i64)src[i];
        i64 r = -1;
        if (u >= 0 && u < num_vertices) {
            i64 d = (i64)degree[u];
            if (d > 0) {
                const int* lst = (const int*)edge_ptr[u];
                i64 x = (i64)dst[i];
                i64 lo = lower_bound(lst, d, x);
                r = (lo < d && (i64)lst[lo] == x) ? lo : -1 - lo;
            }
        }
        out[i] = r;
    }
}

// ------------------------------------------------------------------------------ keeping
// The entries a batch changes: inserting, the absent ones (pos < 0, slot -1 - pos); deleting,
// the present ones (slot pos). at[i] = that slot for every entry, flag[i] = 1 if kept.
extern "C" __global__ void keep_flags(const i64* __restrict__ pos, i64 n, int inserting,
                                      i64* __restrict__ at, int* __restrict__ flag) {
    GRID_STRIDE(i, n) {
        const i64 p = pos[i];
        at[i] = inserting ? -1 - p : p;
        flag[i] = inserting ? (p < 0) : (p >= 0);
    }
}

// The kept entries (rank: inclusive scan of keep_flags' flags) compacted, in order.
extern "C" __global__ void keep_scatter(const int* __restrict__ rank, i64 n,
                                        const int* __restrict__ src, const int* __restrict__ dst,
                                        const i64* __restrict__ at, int want_index,
                                        i64* __restrict__ kept, int* __restrict__ src_out,
                                        int* __restrict__ dst_out, i64* __restrict__ at_out) {
    GRID_STRIDE(i, n) {
        const int r = rank[i];
        if (r == (i > 0 ? rank[i - 1] : 0)) continue;
        const i64 j = r - 1;
        if (want_index) kept[j] = i;
        src_out[j] = src[i];
        dst_out[j] = dst[i];
        at_out[j] = at[i];
    }
}

// ------------------------------------------------------------------------------ planning
// One thread per segment of a batch sorted by source (seg_start: first entry of each, from a
// compaction of the heads): the source, the segment's length, the list's degree and pointer
// now, its new degree, and whether it must move: inserting, when it outgrows its block
// (capacity 2^size_class, 0 without one); deleting, when it keeps some edges but under a
// quarter of its capacity and a smaller class (at least min_class) holds them.
extern "C" __global__ void plan_segments(const int* __restrict__ src,
                                         const i64* __restrict__ seg_start, i64 ns, i64 n,
                                         const int* __restrict__ degree,
                                         const signed char* __restrict__ size_class,
                                         const i64* __restrict__ edge_ptr, int inserting,
                                         int min_class, int* __restrict__ sources,
                                         i64* __restrict__ seg_len, i64* __restrict__ old_deg,
                                         i64* __restrict__ new_deg, i64* __restrict__ old_ptr,
                                         bool* __restrict__ resize) {
    GRID_STRIDE(k, ns) {
        const i64 b = seg_start[k];
        const i64 c = (k + 1 < ns ? seg_start[k + 1] : n) - b;
        const int v = src[b];
        const i64 d0 = (i64)degree[v];
        const int cls = (int)size_class[v];
        const i64 cap = cls >= 0 ? (1ll << cls) : 0ll;
        sources[k] = v;
        seg_len[k] = c;
        old_deg[k] = d0;
        old_ptr[k] = edge_ptr[v];
        i64 d1;
        bool r;
        if (inserting) {
            d1 = d0 + c;
            r = d1 > cap;
        } else {
            d1 = d0 - c;
            int fit = min_class;                  // the smallest class holding d1
            while ((1ll << fit) < d1) ++fit;
            r = d1 > 0 && 4 * d1 < cap && fit < cls;
        }
        new_deg[k] = d1;
        resize[k] = r;
    }
}

// degree[sources[k]] = new_deg[k]; a source left without edges loses its block (pointer 0,
// class -1). Sources are distinct, so no two threads write one row.
extern "C" __global__ void commit_degrees(const int* __restrict__ sources,
                                          const i64* __restrict__ new_deg, i64 ns,
                                          int* __restrict__ degree,
                                          signed char* __restrict__ size_class,
                                          i64* __restrict__ edge_ptr) {
    GRID_STRIDE(k, ns) {
        const int v = sources[k];
        const i64 d = new_deg[k];
        degree[v] = (int)d;
        if (d == 0) {
            edge_ptr[v] = 0;
            size_class[v] = -1;
        }
    }
}

// The segments grown[g] moved to new blocks: pointer new_ptrs[g], class new_classes[g].
extern "C" __global__ void commit_moves(const int* __restrict__ sources,
                                        const i64* __restrict__ grown, i64 ng,
                                        const i64* __restrict__ new_ptrs,
                                        const i64* __restrict__ new_classes,
                                        signed char* __restrict__ size_class,
                                        i64* __restrict__ edge_ptr) {
    GRID_STRIDE(g, ng) {
        const int v = sources[grown[g]];
        edge_ptr[v] = new_ptrs[g];
        size_class[v] = (signed char)new_classes[g];
    }
}

// ------------------------------------------------------------------------- moving lists
// merge_* and remove_* rewrite one column of many lists. Segment s has an old list of d0 =
// old_degree[s] items at src[s] and writes its new list at dst[s] (dst[s] == src[s]: in
// place; otherwise the two blocks do not overlap). Merge: the new items V[0..c) (c =
// seg_len[s], V = values + seg_start[s]) go before old item I[j] (I = insert_at + seg_start[s],
// I[j] = number of old items before new j, nondecreasing), so new j lands on slot I[j] + j and
// old i on i + #(I <= i). Remove: the ascending positions P[0..c) (P = positions +
// seg_start[s]) disappear and survivor i lands on i - #(P < i).
//
// Three sizes of work (plan_moves counts the items each segment moves: in place, the items
// before the first change stay): one thread per segment for short lists (most of them), one
// warp per segment for medium ones (32 consecutive items per step, coalesced), and for the
// few huge ones one block per segment (merges: blockDim * BLOCK_ITEMS items per step, held in
// registers between the block's read and its write) or many blocks per segment (removals:
// remove_pieces).

// first[s] = the first item that moves (in place: the first change; else 0); moving[s] =
// items written (merge: old items from first on plus the new ones; remove: survivors read
// from first on, counted with the removed ones). The segments moving more than small_limit
// items are listed, in any order, for the warp kernels (medium: at most warp_limit) or for the
// block kernels (huge); counts[0] / counts[1] (zeroed first) receive their numbers, which
// those kernels read on the device (no host sync). With piece > 0 (removal), every huge
// segment's moving items are also cut into pieces of `piece` items for remove_pieces:
// piece_base[s] numbers its first piece and counts[2] (zeroed) receives the total.
extern "C" __global__ void plan_moves(const i64* __restrict__ src, const i64* __restrict__ dst,
                                      const i64* __restrict__ old_degree,
                                      const i64* __restrict__ seg_start,
                                      const i64* __restrict__ seg_len,
                                      const i64* __restrict__ change, int merge, i64 nseg,
                                      i64 small_limit, i64 warp_limit, i64 piece,
                                      i64* __restrict__ first, i64* __restrict__ moving,
                                      i64* __restrict__ medium, i64* __restrict__ huge,
                                      i64* __restrict__ piece_base, u64* __restrict__ counts,
                                      const i64* __restrict__ seg_count,
                                      const i64* __restrict__ veto) {
    // seg_count (nullptr: none): the number of segments on the device, at most nseg (a plan
    // queued before its counts reach the host); veto (nullptr: none): nonzero, no segment
    if (seg_count != nullptr) nseg = (veto != nullptr && *veto) ? 0 : min(nseg, *seg_count);
    // the medium / huge lists are filled with one global atomic per block and list (warp
    // ballots, then shared counters); every thread runs the same number of rounds
    __shared__ unsigned int block_count[2];
    __shared__ u64 block_base[2];
    const int lane = threadIdx.x & 31;
    const unsigned below = (1u << lane) - 1u;
    for (i64 round = (i64)blockIdx.x * blockDim.x; round < nseg;
         round += (i64)blockDim.x * gridDim.x) {
        const i64 s = round + threadIdx.x;
        bool is_huge = false, is_medium = false;
        i64 m = 0, span = 0;             // span: old items from the first moving one on
        if (s < nseg) {
            const i64 c = seg_len[s], d0 = old_degree[s];
            const bool in_place = src[s] == dst[s];
            i64 p = 0;
            if (in_place) p = c > 0 ? change[seg_start[s]] : d0;
            first[s] = p;
            m = (in_place && c == 0) ? 0 : d0 - p + (merge ? c : 0);
            span = d0 - p;
            moving[s] = m;
            is_huge = m > warp_limit;
            is_medium = !is_huge && m > small_limit;
        }
        if (piece > 0) {
            // huge segments cut into pieces of `piece` moving items (merges: old items, at
            // least one piece): consecutive piece numbers per segment, from counts[2] (one
            // atomic per warp)
            const i64 np = !is_huge ? 0 : merge ? max((span + piece - 1) / piece, (i64)1)
                                                : (m + piece - 1) / piece;
            i64 incl = np;
            for (int o = 1; o < 32; o <<= 1) {
                const i64 y = __shfl_up_sync(0xFFFFFFFFu, incl, o);
                if (lane >= o) incl += y;
            }
            const i64 total = __shfl_sync(0xFFFFFFFFu, incl, 31);
            u64 base = 0;
            if (lane == 31 && total) base = atomicAdd(&counts[2], (u64)total);
            base = __shfl_sync(0xFFFFFFFFu, base, 31);
            if (np) piece_base[s] = (i64)base + incl - np;
        }
        if (threadIdx.x < 2) block_count[threadIdx.x] = 0;
        __syncthreads();
        const unsigned hm = __ballot_sync(0xFFFFFFFFu, is_huge);
        const unsigned mm = __ballot_sync(0xFFFFFFFFu, is_medium);
        unsigned hw = 0, mw = 0;
        if (lane == 0) {
            if (mm) mw = atomicAdd(&block_count[0], (unsigned)__popc(mm));
            if (hm) hw = atomicAdd(&block_count[1], (unsigned)__popc(hm));
        }
        __syncthreads();
        if (threadIdx.x < 2) {
            const unsigned k = block_count[threadIdx.x];
            block_base[threadIdx.x] = k ? atomicAdd(&counts[threadIdx.x], (u64)k) : 0ull;
        }
        __syncthreads();
        mw = __shfl_sync(0xFFFFFFFFu, mw, 0);
        hw = __shfl_sync(0xFFFFFFFFu, hw, 0);
        if (is_medium) medium[block_base[0] + mw + __popc(mm & below)] = s;
        if (is_huge) huge[block_base[1] + hw + __popc(hm & below)] = s;
        __syncthreads();                 // block_count is reset by the next round
    }
}

// One thread per segment (skips segments that move more than `limit` items): from the back,
// SMALL_ITEMS old items at a time read into registers before any is written (reads do not wait
// for the writes before them); in place, every write lands after the item being placed, so on
// items already read.
#define SMALL_ITEMS 8
template <typename T>
__global__ void merge_small(const i64* __restrict__ src, const i64* __restrict__ dst,
                            const i64* __restrict__ old_degree,
                            const i64* __restrict__ seg_start, const i64* __restrict__ seg_len,
                            const i64* __restrict__ insert_at, const T* __restrict__ values,
                            const i64* __restrict__ moving, i64 limit, i64 nseg) {
    GRID_STRIDE(s, nseg) {
        if (moving[s] > limit) continue;
        const i64 c = seg_len[s], b = seg_start[s];
        const i64* I = insert_at + b;
        const T* O = (const T*)src[s];
        T* D = (T*)dst[s];
        const i64 d0 = old_degree[s];
        // in place, the items before the first new one stay
        const i64 stop = (const T*)D != O ? 0 : (c > 0 ? I[0] : d0);
        i64 j = c - 1, at = j >= 0 ? I[j] : -1;    // the last new item not yet written
        for (i64 hi = d0 - 1; hi >= stop; hi -= SMALL_ITEMS) {
            T v[SMALL_ITEMS];
#pragma unroll
            for (int k = 0; k < SMALL_ITEMS; ++k)
                if (hi - k >= stop) v[k] = O[hi - k];
#pragma unroll
            for (int k = 0; k < SMALL_ITEMS; ++k) {
                const i64 i = hi - k;
                if (i < stop) break;
                for (; j >= 0 && at > i; at = --j >= 0 ? I[j] : -1) D[at + j] = values[b + j];
                D[i + j + 1] = v[k];
            }
        }
        for (; j >= 0; at = --j >= 0 ? I[j] : -1) D[at + j] = values[b + j];
    }
}

// One warp per listed segment (count[0] of them, on the device): chunks of 32 * WARP_ITEMS old
// items from the back (each lane WARP_ITEMS of them, 32 apart: coalesced, and that many loads
// in flight), each read by the whole warp before any lane writes (in place, writes land at or
// after the chunk's start, so on items already read), then the new items.
#define WARP_ITEMS 4
template <typename T>
__global__ void merge_warp(const i64* __restrict__ src, const i64* __restrict__ dst,
                           const i64* __restrict__ old_degree,
                           const i64* __restrict__ seg_start, const i64* __restrict__ seg_len,
                           const i64* __restrict__ insert_at, const T* __restrict__ values,
                           const i64* __restrict__ first, const i64* __restrict__ segs,
                           const u64* __restrict__ count) {
    const i64 nsel = (i64)*count;
    const int lane = threadIdx.x & 31;
    const i64 warps = ((i64)blockDim.x * gridDim.x) >> 5;
    for (i64 w = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; w < nsel; w += warps) {
        const i64 s = segs[w];
        const i64 c = seg_len[s], lo = first[s];
        const i64* I = insert_at + seg_start[s];
        const T* O = (const T*)src[s];
        T* D = (T*)dst[s];
        const i64 chunk = 32 * WARP_ITEMS;
        for (i64 top = old_degree[s]; top > lo; top -= chunk) {
            T v[WARP_ITEMS];
            i64 to[WARP_ITEMS];
#pragma unroll
            for (int k = 0; k < WARP_ITEMS; ++k) {
                const i64 i = top - chunk + 32 * k + lane;
                to[k] = -1;
                if (i >= lo) {
                    v[k] = O[i];
                    to[k] = i + upper_bound(I, c, i);
                }
            }
            __syncwarp();
#pragma unroll
            for (int k = 0; k < WARP_ITEMS; ++k)
                if (to[k] >= 0) D[to[k]] = v[k];
            __syncwarp();
        }
        for (i64 j = lane; j < c; j += 32) D[I[j] + j] = values[seg_start[s] + j];
    }
}

// One block per listed (huge) segment: chunks of blockDim * BLOCK_ITEMS old items from the
// back, each read by the whole block (into registers) before any thread writes (in place,
// writes land at or after the chunk's start, so on items already read; the next chunk reads
// below it), then the new items. ``count`` (device) holds the number of listed segments.
#define BLOCK_ITEMS 16
template <typename T>
__global__ void merge_block(const i64* __restrict__ src, const i64* __restrict__ dst,
                            const i64* __restrict__ old_degree,
                            const i64* __restrict__ seg_start, const i64* __restrict__ seg_len,
                            const i64* __restrict__ insert_at, const T* __restrict__ values,
                            const i64* __restrict__ first, const i64* __restrict__ segs,
                            const u64* __restrict__ count) {
    const i64 nsel = (i64)*count;
    const i64 width = blockDim.x, chunk = width * BLOCK_ITEMS;
    for (i64 w = blockIdx.x; w < nsel; w += gridDim.x) {
        const i64 s = segs[w];
        const i64 c = seg_len[s], lo = first[s];
        const i64* I = insert_at + seg_start[s];
        const T* O = (const T*)src[s];
        T* D = (T*)dst[s];
        for (i64 hi = old_degree[s]; hi > lo; hi -= chunk) {
            T v[BLOCK_ITEMS];
            i64 to[BLOCK_ITEMS];
#pragma unroll
            for (int k = 0; k < BLOCK_ITEMS; ++k) {
                const i64 i = hi - chunk + k * width + threadIdx.x;
                to[k] = -1;
                if (i >= lo) {
                    v[k] = O[i];
                    to[k] = i + upper_bound(I, c, i);
                }
            }
            __syncthreads();
#pragma unroll
            for (int k = 0; k < BLOCK_ITEMS; ++k)
                if (to[k] >= 0) D[to[k]] = v[k];
        }
        __syncthreads();
        for (i64 j = threadIdx.x; j < c; j += width) D[I[j] + j] = values[seg_start[s] + j];
    }
}

// Merge into the huge segments, many blocks per segment (listed by plan_moves with piece
// numbers, owners from list_pieces; npieces on the device). A segment's old items from the
// first moving one on are cut into pieces of blockDim * K from the back: piece k holds old
// items [a, b), b = d0 - k * piece, and the new items that go before them (I[j] in [a, b),
// and for the last old items' piece, k = 0, those appended at d0 too). Tickets take a
// segment's pieces back to front. A block reads its piece into registers with each old
// item's slot (i + #(I <= i), each warp searching only the new items among its own windows),
// marks it read, and, in place, waits until the pieces its slots reach into (to its right,
// ticketed before it) are read; then writes its old and new items. A piece waits only for
// pieces ticketed before it, by blocks already running: the wait always ends.
template <typename T, int K>
__global__ void merge_pieces(const i64* __restrict__ src, const i64* __restrict__ dst,
                             const i64* __restrict__ old_degree,
                             const i64* __restrict__ seg_start, const i64* __restrict__ seg_len,
                             const i64* __restrict__ insert_at, const T* __restrict__ values,
                             const i64* __restrict__ first, const u64* __restrict__ npieces,
                             const i64* __restrict__ piece_base,
                             const int* __restrict__ owner, int* __restrict__ state) {
    __shared__ i64 taken;
    __shared__ i64 new_range[2];                 // the piece's new items [j_a, j_b)
    const i64 total = (i64)*npieces;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const i64 piece = (i64)blockDim.x * K;
    volatile int* done = state + 1;
    while (true) {
        if (threadIdx.x == 0) taken = atomicAdd(state, 1);
        __syncthreads();
        const i64 t = taken;
        if (t >= total) break;
        const i64 s = owner[t];
        const i64 k = t - piece_base[s];
        const i64 c = seg_len[s], d0 = old_degree[s], lo0 = first[s];
        const i64* I = insert_at + seg_start[s];
        const T* O = (const T*)src[s];
        T* D = (T*)dst[s];
        const i64 b = d0 - k * piece, a = max(lo0, b - piece);
        const i64 lo_w = a + (i64)warp * 32 * K;
        T v[K];
#pragma unroll
        for (int q = 0; q < K; ++q) {
            const i64 i = lo_w + 32 * q + lane;
            if (i < b) v[q] = O[i];
        }
        // the new items among this warp's windows: I[j0, j1) in [lo_w, lo_w + 32 K)
        const i64 j0 = warp_lower_bound(I, c, lo_w);
        const i64 j1 = j0 + warp_lower_bound(I + j0, c - j0, lo_w + 32 * K);
        if (threadIdx.x == 0) new_range[0] = j0;
        if (warp == 1 || blockDim.x <= 32) {
            const i64 jb = k == 0 ? c : warp_lower_bound(I, c, b);
            if (lane == 0) new_range[1] = jb;
        }
        int to[K];                                   // slot - a, or -1
#pragma unroll
        for (int q = 0; q < K; ++q) {
            const i64 i = lo_w + 32 * q + lane;
            to[q] = i < b ? (int)(i - a + j0 + upper_bound(I + j0, j1 - j0, i)) : -1;
        }
        __syncthreads();                              // the whole piece is read
        const i64 ja = new_range[0], jb = new_range[1];
        if ((const T*)D == O) {
            if (threadIdx.x == 0) {
                __threadfence();
                done[t] = 1;
            }
            // the last slot written, b + jb - 1, reaches the pieces of old items [b, ...)
            const i64 x = min(b + jb - 1, d0 - 1);
            const i64 k0 = x >= b ? (d0 - 1 - x) / piece : k;
            for (i64 q = t - k + k0 + threadIdx.x; q < t; q += blockDim.x)
                while (done[q] == 0) {}
            __threadfence();
            __syncthreads();
        }
#pragma unroll
        for (int q = 0; q < K; ++q)
            if (to[q] >= 0) D[a + to[q]] = v[q];
        const T* V = values + seg_start[s];
        for (i64 j = ja + threadIdx.x; j < jb; j += blockDim.x) D[I[j] + j] = V[j];
        __syncthreads();                              // taken / new_range reused
    }
}

// Removal, one thread per segment (skips segments moving more than `limit` items, and those
// with no survivor to write): forward, SMALL_ITEMS items at a time read into registers before
// any is written; in place, every write lands on an item already read.
template <typename T>
__global__ void remove_small(const i64* __restrict__ src, const i64* __restrict__ dst,
                             const i64* __restrict__ old_degree,
                             const i64* __restrict__ seg_start, const i64* __restrict__ seg_len,
                             const i64* __restrict__ positions, const i64* __restrict__ first,
                             const i64* __restrict__ moving, i64 limit, i64 nseg,
                             const i64* __restrict__ seg_count, const i64* __restrict__ veto) {
    // seg_count, veto: as in plan_moves
    if (seg_count != nullptr) nseg = (veto != nullptr && *veto) ? 0 : min(nseg, *seg_count);
    GRID_STRIDE(s, nseg) {
        const i64 m = moving[s];
        if (m > limit) continue;
        const i64 c = seg_len[s];
        if (m <= c) continue;                    // every item from first[s] on is removed
        const i64 d0 = old_degree[s];
        const i64* P = positions + seg_start[s];
        const T* O = (const T*)src[s];
        T* D = (T*)dst[s];
        i64 w = first[s], j = 0, next = c > 0 ? P[0] : d0;   // the next removed position
        for (i64 lo = w; lo < d0; lo += SMALL_ITEMS) {
            T v[SMALL_ITEMS];
#pragma unroll
            for (int k = 0; k < SMALL_ITEMS; ++k)
                if (lo + k < d0) v[k] = O[lo + k];
#pragma unroll
            for (int k = 0; k < SMALL_ITEMS; ++k) {
                const i64 i = lo + k;
                if (i >= d0) break;
                if (i == next) next = ++j < c ? P[j] : d0;
                else D[w++] = v[k];
            }
        }
    }
}

// The survivors among K windows of 32 consecutive items from lo_w (v: this lane's item of
// each window, read before) written to their slots: item i lands on i - #(removed < i), the
// count taken from `gone` window by window (windows visited in ascending order). Every lane
// of the warp calls it.
template <typename T, int K>
__device__ __forceinline__ void write_survivors(RemovedPositions& gone, T* D, i64 d0, i64 lo_w,
                                                const T (&v)[K]) {
    const int lane = threadIdx.x & 31;
    const unsigned below = (1u << lane) - 1u;
#pragma unroll
    for (int b = 0; b < K; ++b) {
        const i64 i = lo_w + 32 * b + lane;
        const i64 before = gone.j;
        const unsigned bits = gone.window(lo_w + 32 * b);
        if (i < d0 && !((bits >> lane) & 1u)) D[i - before - __popc(bits & below)] = v[b];
    }
}

// Removal, one warp per listed segment (count[0] of them, on the device): steps of W windows
// of 32 items from the first moving one on (W loads in flight per lane), all of a step read
// before any is written; the survivors are ranked while they are written (write_survivors:
// no search per item, no slot held in a register across the read). In place, a step's writes
// land before the items they come from and after every earlier step's writes, so on items
// already read. Most lists take a step or a few: a warp's time goes to reaching its lists, so
// the next list's number is read while this one is rewritten, and B blocks of BLOCK threads
// are asked to fit on a multiprocessor (registers capped to that).
template <typename T, int W, int B>
__global__ void __launch_bounds__(256, B)
remove_warp(const i64* __restrict__ src, const i64* __restrict__ dst,
            const i64* __restrict__ old_degree, const i64* __restrict__ seg_start,
            const i64* __restrict__ seg_len, const i64* __restrict__ positions,
            const i64* __restrict__ first, const i64* __restrict__ segs,
            const u64* __restrict__ count) {
    const i64 nsel = (i64)*count;
    const i64 warps = ((i64)blockDim.x * gridDim.x) >> 5;
    i64 w = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    i64 s = w < nsel ? segs[w] : 0;
    while (w < nsel) {
        const i64 d0 = old_degree[s];
        const T* O = (const T*)src[s];
        T* D = (T*)dst[s];
        const i64 lo0 = first[s];
        RemovedPositions gone(positions + seg_start[s], seg_len[s], 0);  // none before first
        w += warps;
        const i64 next = w < nsel ? segs[w] : 0;       // in flight while this list is rewritten
        for (i64 lo = lo0; lo < d0; lo += 32 * W) {
            T v[W];
            read_windows(O, d0, lo, v);
            __syncwarp();
            write_survivors(gone, D, d0, lo, v);
        }
        s = next;
    }
}

// plan_moves' pieces of the listed huge segments, numbered: owner[piece] = its segment (one
// warp per listed segment).
extern "C" __global__ void list_pieces(const i64* __restrict__ old_degree,
                                       const i64* __restrict__ first,
                                       const i64* __restrict__ segs, const u64* __restrict__ count,
                                       const i64* __restrict__ piece_base, i64 piece,
                                       int* __restrict__ owner) {
    const i64 nsel = (i64)*count;
    const int lane = threadIdx.x & 31;
    const i64 warps = ((i64)blockDim.x * gridDim.x) >> 5;
    for (i64 w = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; w < nsel; w += warps) {
        const i64 s = segs[w];
        const i64 np = max((old_degree[s] - first[s] + piece - 1) / piece, (i64)1);
        const i64 base = piece_base[s];
        for (i64 k = lane; k < np; k += 32) owner[base + k] = (int)s;
    }
}

// Removal from the huge segments, many blocks per segment, in place. A segment's moving items
// [first, d0) are cut into pieces of blockDim * K (numbered by plan_moves, listed by
// list_pieces; npieces on the device); each warp of a block takes K windows of 32.
// A block takes a ticket (state[0]: the pieces in numbered order, so a segment's in ascending
// order), reads its piece into registers, marks it read (done[piece] = 1), waits until every
// piece its survivors land on is read, and writes them (ranked as they are written,
// write_survivors); only then does it take its next ticket (a ticket taken earlier would hold
// back the pieces after it, which wait for it to be read). Survivors land at or before their slot, so a piece
// waits only for pieces ticketed before it, by blocks already running: the wait always ends.
// ``state`` (zeroed by the caller): the ticket counter, then one flag per piece.
template <typename T, int K>
__global__ void remove_pieces(const i64* __restrict__ src, const i64* __restrict__ dst,
                              const i64* __restrict__ old_degree,
                              const i64* __restrict__ seg_start, const i64* __restrict__ seg_len,
                              const i64* __restrict__ positions, const i64* __restrict__ first,
                              const u64* __restrict__ npieces,
                              const i64* __restrict__ piece_base,
                              const int* __restrict__ owner, int* __restrict__ state) {
    __shared__ i64 taken;
    __shared__ i64 rank_at_start;
    const i64 total = (i64)*npieces;
    const int warp = threadIdx.x >> 5;
    const i64 piece = (i64)blockDim.x * K;
    volatile int* done = state + 1;
    while (true) {
        if (threadIdx.x == 0) taken = atomicAdd(state, 1);
        __syncthreads();
        const i64 t = taken;
        if (t >= total) break;
        const i64 s = owner[t];
        const i64 k = t - piece_base[s];
        const i64 c = seg_len[s], d0 = old_degree[s];
        const i64* P = positions + seg_start[s];
        const T* O = (const T*)src[s];
        T* D = (T*)dst[s];
        const i64 lo = first[s] + k * piece, lo_w = lo + (i64)warp * 32 * K;
        T v[K];
        read_windows(O, d0, lo_w, v);
        RemovedPositions gone(P, c, warp_lower_bound(P, c, lo_w));
        if (threadIdx.x == 0) rank_at_start = gone.j;
        __syncthreads();                                  // the whole piece is read
        if (threadIdx.x == 0 && (const T*)D == O) {
            __threadfence();
            done[t] = 1;
        }
        if ((const T*)D == O) {
            // survivors land from lo - rank_at_start on: wait for the pieces there
            const i64 k0 = (lo - rank_at_start - first[s]) / piece;
            for (i64 q = t - k + k0 + threadIdx.x; q < t; q += blockDim.x)
                while (done[q] == 0) {}
            __threadfence();
        }
        __syncthreads();
        write_survivors(gone, D, d0, lo_w, v);
        __syncthreads();                                  // taken / rank_at_start reused
    }
}

// Whole lists copied to other blocks, one block per listed list (grid-stride over them):
// list segs[i] (moves of them) holds count[s] items at src[s], copied to dst[s] (blocks
// that do not overlap). Four loads per thread are in flight before its stores.
#define COPY_ITEMS 4
template <typename T>
__global__ void copy_lists(const i64* __restrict__ src, const i64* __restrict__ dst,
                           const i64* __restrict__ count, const i64* __restrict__ segs,
                           i64 moves) {
    for (i64 i = blockIdx.x; i < moves; i += gridDim.x) {
        const i64 s = segs[i];
        const i64 n = count[s];
        const T* __restrict__ O = (const T*)src[s];
        T* __restrict__ D = (T*)dst[s];
        const i64 step = (i64)blockDim.x * COPY_ITEMS;
        for (i64 lo = threadIdx.x; lo < n; lo += step) {
            T v[COPY_ITEMS];
#pragma unroll
            for (int k = 0; k < COPY_ITEMS; ++k) {
                const i64 j = lo + (i64)k * blockDim.x;
                if (j < n) v[k] = O[j];
            }
#pragma unroll
            for (int k = 0; k < COPY_ITEMS; ++k) {
                const i64 j = lo + (i64)k * blockDim.x;
                if (j < n) D[j] = v[k];
            }
        }
    }
}

// ------------------------------------------------------------------------------ reads and writes by address
template <typename T>
__global__ void read_at(const i64* __restrict__ addresses, i64 n, T* __restrict__ out) {
    GRID_STRIDE(i, n) { out[i] = *(const T*)addresses[i]; }
}

template <typename T>
__global__ void write_at(const i64* __restrict__ addresses, i64 n, const T* __restrict__ values) {
    GRID_STRIDE(i, n) { *(T*)addresses[i] = values[i]; }
}

// One warp per vertex: 0 ok, 1 unsorted or duplicate, 2 destination out of range; the first
// offending index in list order decides (range checked before order, as on the CPU).
extern "C" __global__ void list_violations(const i64* __restrict__ edge_ptr,
                                           const i64* __restrict__ degree, i64 nv,
                                           i64 num_vertices, signed char* __restrict__ out) {
    const int lane = threadIdx.x & 31;
    const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const i64 warps = ((i64)blockDim.x * gridDim.x) >> 5;
    for (i64 v = warp; v < nv; v += warps) {
        i64 d = degree[v];
        const int* lst = d > 0 ? (const int*)edge_ptr[v] : (const int*)0;
        int code = 0;
        for (i64 k0 = 0; k0 < d; k0 += 32) {
            i64 k = k0 + lane;
            int mine = 0;
            if (k < d) {
                i64 x = lst[k];
                if (x < 0 || x >= num_vertices) mine = 2;
                else if (k > 0 && x <= (i64)lst[k - 1]) mine = 1;
            }
            unsigned bad = __ballot_sync(0xFFFFFFFFu, mine != 0);
            if (bad) {
                code = __shfl_sync(0xFFFFFFFFu, mine, __ffs(bad) - 1);
                break;
            }
        }
        if (lane == 0) out[v] = (signed char)code;
    }
}
