// CUDA kernels of the medium-batch path (hornet/batch/gpu/medium.py): a batch of a few
// thousand to a few hundred thousand entries, planned by the planned path's kernels (plan.cu:
// keys, sort, lookups, the kept entries ranked and scattered straight into this workspace),
// then cut into segments here with the small-batch path's rules, and its lists rewritten by
// the small path's rewrite kernels (small_batch.cu: one block per piece, for long lists) and
// by the warp kernels below (one warp per segment, for the many short ones), so that a batch
// costs one read-back (the header) and no host work per size class but the block cache's.
//
// Compiled once per process by cupy.RawModule (NVRTC, -std=c++17); includes segmented.cuh
// and small_rewrite.cuh (the workspace's Layout, its header slots, the rewrite helpers).

#include "segmented.cuh"
#include "../batch/gpu/small_rewrite.cuh"   // Layout, header slots, rewrite helpers
#include "../batch/gpu/prepare_rules.cuh"   // segment rules (segment_move, segment_pieces)

// plan.cu's info slots (plan.py names them the same)
#define I_BAD 0
#define I_MAX_ID 1
#define I_LOOPS 2
#define I_KEPT 3
#define I_SEGMENTS 4
#define I_ONCE 5

// A segment whose rewrite moves at most this many items (an insert's: old items moved and
// new ones; a delete's: old items moved) is rewritten by one warp, longer ones by the small
// path's block kernels.
#define WARP_MERGE_ITEMS 256
#define WARP_REMOVE_ITEMS 1024

// ------------------------------------------------------------------------------ segments
// One thread per segment (info[I_SEGMENTS] of them, starting at the seg_start the plan's
// batch_scatter wrote; the grid is sized for the bound): its source, length, degree now and
// after, whether the list moves to a block of another size class (insert: it outgrows its
// block; delete: it falls under a quarter of it and a smaller class holds it, unless
// keep_blocks; or it empties) or is copied to a fresh block of its own class (a long in-place
// rewrite of a class at most copy_max_class, as in small_prepare; medium.py passes -1: never;
// not with keep_blocks either, where lists stay in their blocks as on the planned path), its
// rank among the moving lists of its new class and among
// the blocks given back of its old class (header counts per class, one atomic per class
// present in a warp), and its rewrite work: one warp (listed in warp_seg) or one block per
// piece of PIECE_ITEMS old items (listed in seg_piece; at most `capacity` pieces are written,
// the host refuses the batch when header[H_PIECES] says more). Thread 0 copies the plan's
// counts into the header. The header's counters start at zero (the host clears them).
extern "C" __global__ void medium_segments(const i64* __restrict__ info, i64* ws, i64 capacity,
                                           int mirror, int mode, int keep_blocks,
                                           const int* __restrict__ degree,
                                           const signed char* __restrict__ size_class,
                                           const i64* __restrict__ edge_ptr, i64 table_len,
                                           i64 min_class, i64 copy_max_class) {
    const Layout L = layout(ws, capacity);
    const i64 kept = info[I_KEPT], nseg = info[I_SEGMENTS];
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        L.header[H_KEPT] = kept;
        L.header[H_SEGMENTS] = nseg;
        L.header[H_LOOPS] = info[I_LOOPS];
        L.header[H_MIN_ID] = info[I_BAD] ? -1 : 0;
        L.header[H_MAX_ID] = info[I_MAX_ID];
        L.header[H_RESULTS] = mirror ? info[I_ONCE] : kept;
    }
    u64* const moving = (u64*)(L.header + H_CLASS);
    u64* const freed = (u64*)(L.header + H_FREED);
    const bool inserting = mode == MODE_INSERT;
    const i64 warp_items = inserting ? WARP_MERGE_ITEMS : WARP_REMOVE_ITEMS;
    GRID_STRIDE(sg, nseg) {
        const i64 start = L.seg_start[sg];
        const i64 c = (sg + 1 < nseg ? L.seg_start[sg + 1] : kept) - start;
        const i64 u = L.ent_src[start];
        const bool has_row = u < table_len;
        const i64 d0 = has_row ? (i64)degree[u] : 0;
        const i64 cls = has_row ? (i64)size_class[u] : -1;
        const i64 ptr = has_row ? edge_ptr[u] : 0;
        const i64 first = L.ent_pos[start];          // the first item that moves in place
        const i64 in_place = d0 - first + (inserting ? c : 0);
        const SegmentMove m = segment_move(inserting, d0, c, cls, in_place, min_class,
                                           copy_max_class, keep_blocks);
        const i64 d1 = m.d1, to = m.to;
        const bool give_back = m.give_back;
        L.seg_vertex[sg] = u;
        L.seg_len[sg] = c;
        L.seg_old[sg] = d0;
        L.seg_new[sg] = d1;
        L.seg_ptr[sg] = ptr;
        L.seg_class[sg] = to;
        if (to >= 0) L.seg_rank[sg] = (i64)class_slot(moving, to);
        L.seg_give[sg] = give_back ? (cls << 32) | (i64)class_slot(freed, cls) : -1;
        const i64 work = to >= 0 ? d0 + (inserting ? c : 0) : in_place;
        const i64 pieces = segment_pieces(to, d0);
        if (pieces == 1 && work <= warp_items) {
            L.warp_seg[class_slot((u64*)(L.header + H_WARPS), 0)] = sg;
        } else {
            const i64 base = (i64)atomicAdd((u64*)(L.header + H_PIECES), (u64)pieces);
            for (i64 k = 0; k < pieces && base + k < capacity; ++k)
                L.seg_piece[base + k] = (sg << 32) | k;
        }
    }
}

// ------------------------------------------------------------------------ rewriting lists
// One warp per segment listed in warp_seg (header[H_WARPS] of them; the grid may be smaller,
// warps stride over them), in place or into the list's new block, every field in turn; lane
// 0 then updates the vertex table and gives the old block back. The small path's block
// kernels (small_merge / small_remove with `listed`) take the long lists; the last of their
// blocks advances the rings, so they run after these, always (one block at least).
#define WARP_LANE (threadIdx.x & 31)

// As merge_block (small_batch.cu), by one warp: the old items [lo, hi) of list O and every new
// item written to their slots of the merged list D (D == O: in place).
template <typename T>
__device__ void merge_warp(const T* O, T* D, i64 lo, i64 hi, const i64* I, i64 c,
                           const Layout& L, i64 start, const T* values, T* out) {
    const int lane = WARP_LANE;
    if (D == O) {
        place_old_items(O, D, lo, hi, I, c, 32, lane, [] { __syncwarp(); });
    } else {
        for (i64 i = lo + lane; i < hi; i += 32) D[i + upper_bound(I, c, i)] = O[i];
    }
    for (i64 j = lane; j < c; j += 32) {
        T v = values ? values[L.ent_pair[start + j]] : (T)L.ent_dst[start + j];
        D[I[j] + j] = v;
        const i64 r = L.ent_res[start + j];
        if (out && r >= 0) out[r] = v;
    }
    __syncwarp();
}

#define FOR_WARP_SEGMENTS(L)                                                                \
    const i64 nwarps_ = L.header[H_WARPS];                                                   \
    const i64 wstride_ = ((i64)blockDim.x * gridDim.x) >> 5;                                 \
    for (i64 w_ = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; w_ < nwarps_;           \
         w_ += wstride_)

extern "C" __global__ void medium_merge_warp(i64* ws, i64 capacity, RING_PARAMS,
                                             int* __restrict__ degree,
                                             signed char* __restrict__ size_class,
                                             i64* __restrict__ edge_ptr, FIELD_PARAMS) {
    MAKE_FIELDS;
    MAKE_RINGS;
    const Layout L = layout(ws, capacity);
    FOR_WARP_SEGMENTS(L) {
        const i64 sg = L.warp_seg[w_];
        const i64 old = L.seg_ptr[sg], target = new_block(L, R, sg);
        const i64 d0 = L.seg_old[sg], c = L.seg_len[sg], start = L.seg_start[sg];
        const i64* I = L.ent_pos + start;
        const i64 lo = target == old ? I[0] : 0;
        for (int f = 0; f < F.nf; ++f) {
            const i64 src = field_address(F, old, f), dst = field_address(F, target, f);
            switch (field_size(F, f)) {
            case 1: merge_warp<unsigned char>((const unsigned char*)src, (unsigned char*)dst,
                        lo, d0, I, c, L, start, (const unsigned char*)F.values[f],
                        (unsigned char*)F.out[f]); break;
            case 2: merge_warp<unsigned short>((const unsigned short*)src,
                        (unsigned short*)dst, lo, d0, I, c, L, start,
                        (const unsigned short*)F.values[f], (unsigned short*)F.out[f]); break;
            case 4: merge_warp<unsigned int>((const unsigned int*)src, (unsigned int*)dst,
                        lo, d0, I, c, L, start, (const unsigned int*)F.values[f],
                        (unsigned int*)F.out[f]); break;
            default: merge_warp<unsigned long long>((const unsigned long long*)src,
                        (unsigned long long*)dst, lo, d0, I, c, L, start,
                        (const unsigned long long*)F.values[f],
                        (unsigned long long*)F.out[f]); break;
            }
        }
        if (WARP_LANE == 0) {
            const i64 u = L.seg_vertex[sg];
            degree[u] = (int)L.seg_new[sg];
            if (L.seg_class[sg] >= 0) {
                edge_ptr[u] = target;
                size_class[u] = (signed char)L.seg_class[sg];
            }
            give_back_block(L, R, sg);
        }
    }
}

extern "C" __global__ void medium_remove_warp(i64* ws, i64 capacity, RING_PARAMS,
                                              int* __restrict__ degree,
                                              signed char* __restrict__ size_class,
                                              i64* __restrict__ edge_ptr, FIELD_PARAMS) {
    MAKE_FIELDS;
    MAKE_RINGS;
    const Layout L = layout(ws, capacity);
    FOR_WARP_SEGMENTS(L) {
        warp_remove_segment(L, R, F, L.warp_seg[w_], degree, size_class, edge_ptr);
    }
}
