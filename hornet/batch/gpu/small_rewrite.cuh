// The workspace layout and list-rewrite helpers shared by the small-batch path's kernels
// (small_batch.cu) and the medium-batch path's (medium_batch.cu, hornet/batch/gpu/medium.py).
//
// Workspace (one int64 buffer per graph and path, reused by every batch; offsets in int64
// words, see Layout): the header (counts the host needs), the batch's kept entries sorted by
// (src, dst), one record per segment (the run of one source vertex), the old blocks to give
// back, and (medium workspaces only) the list of segments rewritten one warp each. A
// workspace of capacity E holds E entries and E segments; the small path's has
// E = SMALL_ENTRIES. Entries and segments are only read by the kernels of the same batch, in
// stream order.
#pragma once

#define ALL_ONES 0xFFFFFFFFFFFFFFFFull
#define MAX_FIELDS 8                       // dst + up to 7 edge properties
#define NUM_CLASSES 64
#define MAX_ID 2147483646ll                // hornet.batch.validate.MAX_VERTEX_ID
#define MODE_INSERT 0
#define MODE_DELETE 1
#define MODE_UPSERT 2     // deferred small batches: insert the new pairs, rewrite the found ones' properties
#define MODE_WIDE 16      // flag on MODE_DELETE (small path): long lists rewritten in place, by pieces

// header slots (hornet/batch/small_layout.py)
#define H_KEPT 0        // entries kept: new edges (insert) or edges found (delete)
#define H_SEGMENTS 1    // source vertices among them
#define H_MOVES 2       // lists that move to a block of another size class
#define H_LOOPS 3       // self-loop pairs dropped (mirrored batches)
#define H_MIN_ID 4      // smallest id in the batch (validation on the host)
#define H_MAX_ID 5      // largest id in the batch
#define H_RESULTS 6     // entries reported in the result (mirrored: src < dst)
#define H_RELEASES 7    // old blocks to give back
#define H_CLASS 8       // NUM_CLASSES counts: moving lists per new size class
#define H_FREED 72      // NUM_CLASSES counts: old blocks given back per size class
#define H_SPILLS 136    // (unused: a spilled block's slot follows from the counts)
#define H_DONE 137      // blocks of the rewrite that finished (the last one moves the rings)
#define H_PIECES 138    // pieces of work of the rewrite (its grid: one block per piece)
#define H_WARPS 139     // medium batches: segments rewritten by one warp each
#define H_ACCEPT 140    // deferred small batches: the classes whose rings took the blocks
#define H_STALLED 141   // deferred small batches: 1 when the batch did not run (see stall)
#define H_FOUND 142     // upserts (MODE_UPSERT): pairs found present (their properties rewritten)
#define H_TICKET 143    // MODE_WIDE deletes: pieces taken by the removal's blocks so far
#define H_WIDE_PIECES 144  // MODE_WIDE deletes: pieces of the lists rewritten by whole blocks
#define H_WIDE_LONG 145    //   those lists
#define H_WIDE_SHORT 146   //   the lists rewritten by one warp each
#define HEADER_WORDS 256
#define H_CLOCKS 192    // profiling only: clock64() after each phase of small_prepare

// A list that would move more than COPY_ITEMS items in place (class at most copy_max_class)
// is copied to a fresh block of its own class instead, and every moving list is cut into
// pieces of PIECE_ITEMS old items, one block each (see small_prepare).
#define COPY_ITEMS 2048
#define PIECE_ITEMS 8192        // a multiple of the removal's step (REWRITE_THREADS * REMOVE_ITEMS)
#define REMOVE_ITEMS 8
// MODE_WIDE deletes: a long list rewritten in place is cut into pieces at multiples of
// WIDE_ITEMS (from its first removed item), each read whole by one block of WIDE_THREADS
// threads (WIDE_WINDOWS windows of 32 items per warp, WIDE_LOADS at a time, its survivors
// staged in shared memory) before it writes.
#define WIDE_THREADS 256
#define WIDE_WINDOWS 16
#define WIDE_ITEMS (WIDE_THREADS * WIDE_WINDOWS)
#define WIDE_LOADS 4            // windows a warp reads at a time (WIDE_WINDOWS a multiple)
#define WIDE_WARPS (WIDE_THREADS / 32)
// a list whose rewrite moves at most this many items (in place: from its first removed one;
// moving: all) in one piece is rewritten by one warp (WIDE_WARPS lists a block)
#define WIDE_WARP_ITEMS 1024

struct Layout {
    i64* header;
    int* ent_src;       // kept entries, sorted by (src, dst)
    int* ent_dst;
    i64* ent_pair;      // the entry's pair in the batch (its property values)
    i64* ent_pos;       // insert: old items before it; delete: its position in the list
    i64* ent_res;       // its row in the result, -1 when not reported
    i64* seg_vertex;    // per segment: the source vertex
    i64* seg_start;     //   its first entry
    i64* seg_len;       //   its number of entries
    i64* seg_old;       //   old degree
    i64* seg_new;       //   new degree
    i64* seg_ptr;       //   old block (0: none)
    i64* seg_class;     //   new size class when the list moves to another block, else -1
    i64* seg_rank;      //   rank among the moving lists of that class
    i64* seg_give;      //   old block given back: its class << 32 | rank in it, else -1
    i64* seg_piece;     //   small: its first piece of rewrite work (see PIECE_ITEMS);
                        //   medium: the block pieces, segment << 32 | piece number
    i64* spill;         // old blocks given back to the bit trees (their rings were full)
    i64* warp_seg;      // medium: the segments rewritten one warp each
};

__device__ __forceinline__ Layout layout(i64* ws, i64 E) {
    Layout L;
    L.header = ws;
    i64* p = ws + HEADER_WORDS;
    L.ent_src = (int*)p;            p += E / 2;
    L.ent_dst = (int*)p;            p += E / 2;
    L.ent_pair = p;                 p += E;
    L.ent_pos = p;                  p += E;
    L.ent_res = p;                  p += E;
    L.seg_vertex = p;               p += E;
    L.seg_start = p;                p += E;
    L.seg_len = p;                  p += E;
    L.seg_old = p;                  p += E;
    L.seg_new = p;                  p += E;
    L.seg_ptr = p;                  p += E;
    L.seg_class = p;                p += E;
    L.seg_rank = p;                 p += E;
    L.seg_give = p;                 p += E;
    L.seg_piece = p;                p += E;
    L.spill = p;                    p += E;     // SPILL_OFFSET in small.py
    L.warp_seg = p;                             // medium.py: WARP_OFFSET
    return L;
}

__device__ __forceinline__ i64 size_class_for(i64 degree, i64 min_class) {
    if (degree <= 0) return -1;
    i64 k = degree == 1 ? 0 : 64 - __clzll(degree - 1);
    return k < min_class ? min_class : k;
}

// ------------------------------------------------------------------------ rewriting lists
// The list's block after the batch (its old one, or a block of its new class: popped from
// that class's ring of the block cache, hornet/memory/block_cache.py, or taken from a pool
// the host allocated for the batch) and the address of field f in a block. A list that
// leaves its old block pushes it onto the ring of the old class, or onto the spill list when
// the host did not accept pushes there (the medium path accepts none).
// Rings: `slots` pointers per class; ring_state: heads (NUM_CLASSES) then tails (NUM_CLASSES);
// pops take head + rank, pushes tail + rank (the host sized both, so they never overlap), and
// the last block to finish advances the counters for the next batch. Pool: the blocks of
// every class the batch needs, class after class in ascending order (no ring is used; the
// medium path passes no rings at all).
struct Rings {
    i64* slot;
    i64* state;
    i64 slots;
    u64 accept;              // bit k: class k's ring takes the blocks given back
    const i64* pool;         // nullptr: blocks come from the rings
};
struct Fields {
    const i64* bases;        // block arrays' dst-column addresses, ascending
    const i64* field_bases;  // (narrays, nf) column addresses
    i64 narrays;
    int nf;
    u64 sizes;               // itemsize of field f in bits 8f..8f+7
    i64 values[MAX_FIELDS];  // per field: the batch's values (by pair), 0 for dst
    i64 out[MAX_FIELDS];     // per field: the result's values (by result row), 0 for dst
};

// The kernels take the fields as plain scalars (no host-to-device copy per batch).
#define FIELD_PARAMS                                                                       \
    const i64* __restrict__ bases, const i64* __restrict__ field_bases, i64 narrays, int nf, \
    u64 sizes, i64 v1, i64 v2, i64 v3, i64 v4, i64 v5, i64 v6, i64 v7, i64 o1, i64 o2,      \
    i64 o3, i64 o4, i64 o5, i64 o6, i64 o7

__device__ __forceinline__ Fields make_fields(const i64* bases, const i64* field_bases,
                                              i64 narrays, int nf, u64 sizes,
                                              const i64 (&v)[MAX_FIELDS],
                                              const i64 (&o)[MAX_FIELDS]) {
    Fields F;
    F.bases = bases;
    F.field_bases = field_bases;
    F.narrays = narrays;
    F.nf = nf;
    F.sizes = sizes;
    for (int f = 0; f < MAX_FIELDS; ++f) {
        F.values[f] = v[f];
        F.out[f] = o[f];
    }
    return F;
}

#define MAKE_FIELDS                                                                        \
    const i64 v_[MAX_FIELDS] = {0, v1, v2, v3, v4, v5, v6, v7};                            \
    const i64 o_[MAX_FIELDS] = {0, o1, o2, o3, o4, o5, o6, o7};                            \
    const Fields F = make_fields(bases, field_bases, narrays, nf, sizes, v_, o_)

__device__ __forceinline__ int field_size(const Fields& F, int f) {
    return (int)((F.sizes >> (8 * f)) & 0xFFull);
}

__device__ __forceinline__ i64 field_address(const Fields& F, i64 ptr, int f) {
    if (f == 0 || ptr == 0) return ptr;
    const i64 a = segment_of(F.bases, F.narrays, ptr);
    return F.field_bases[a * F.nf + f] + ((ptr - F.bases[a]) >> 2) * field_size(F, f);
}

// Sum of header[first + k] over the classes k < cls (whose bit is clear in `skip`).
__device__ __forceinline__ i64 classes_before(const Layout& L, int first, i64 cls, u64 skip) {
    i64 s = 0;
    for (i64 k = 0; k < cls; ++k)
        if (!((skip >> k) & 1ull)) s += L.header[first + k];
    return s;
}

__device__ __forceinline__ i64 new_block(const Layout& L, const Rings& R, i64 sg) {
    const i64 to = L.seg_class[sg];
    if (to < 0) return L.seg_ptr[sg];
    if (R.pool != nullptr) return R.pool[classes_before(L, H_CLASS, to, 0ull) + L.seg_rank[sg]];
    return R.slot[to * R.slots + ((R.state[to] + L.seg_rank[sg]) & (R.slots - 1))];
}

// The segment's old block, when it leaves it: onto its class's ring, or onto the spill list,
// where the blocks of the classes not accepted lie class after class in ascending order
// (their number is the host's: BlockCache.commit).
__device__ __forceinline__ void give_back_block(const Layout& L, const Rings& R, i64 sg) {
    const i64 give = L.seg_give[sg];
    if (give < 0) return;
    const i64 cls = give >> 32, rank = give & 0xFFFFFFFFll;
    if ((R.accept >> cls) & 1ull)
        R.slot[cls * R.slots + ((R.state[NUM_CLASSES + cls] + rank) & (R.slots - 1))] =
            L.seg_ptr[sg];
    else
        L.spill[classes_before(L, H_FREED, cls, R.accept) + rank] = L.seg_ptr[sg];
}

// Every block, after its segments: the last one to finish advances the ring counters (every
// block read them before it counted itself done). Nothing with a pool or without rings.
__device__ __forceinline__ void advance_rings(const Layout& L, const Rings& R) {
    if (R.pool != nullptr || R.state == nullptr) return;
    __shared__ bool last;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd((unsigned long long*)&L.header[H_DONE], 1ull) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x < NUM_CLASSES) {
        const int k = threadIdx.x;
        R.state[k] += L.header[H_CLASS + k];
        if ((R.accept >> k) & 1ull) R.state[NUM_CLASSES + k] += L.header[H_FREED + k];
    }
}

#define RING_PARAMS i64* __restrict__ ring_slot, i64* __restrict__ ring_state, \
    i64 ring_slots, u64 ring_accept, const i64* __restrict__ ring_pool
#define MAKE_RINGS const Rings R = {ring_slot, ring_state, ring_slots, ring_accept, ring_pool}

// As remove_block (small_batch.cu), by one warp (the short lists of medium_batch.cu and of
// small_remove_wide): the removed values to the result (when `out` is given), then the
// survivors among old items [lo, d0) to their slots of D (D == O: in place; windows of
// 32 * REMOVE_ITEMS items, each read whole before the warp writes).
template <typename T>
__device__ void warp_remove_list(const T* O, T* D, i64 d0, i64 d1, i64 lo, const i64* P,
                                 i64 c, const Layout& L, i64 start, T* out) {
    const int lane = threadIdx.x & 31;
    if (out)
        for (i64 j = lane; j < c; j += 32) {
            const i64 r = L.ent_res[start + j];
            if (r >= 0) out[r] = O[P[j]];
        }
    __syncwarp();
    if (d1 == 0) return;
    const bool in_place = D == O;
    for (i64 base = lo; base < d0; base += 32 * REMOVE_ITEMS) {
        T v[REMOVE_ITEMS];
        i64 to[REMOVE_ITEMS];
        read_windows(O, d0, base, v);
        RemovedPositions gone(P, c, warp_lower_bound(P, c, base));
        rank_windows(gone, d0, base, 0, (i64)-1, to);
        if (in_place) __syncwarp();
        write_windows(D, 0, (i64)-1, v, to);
        if (in_place) __syncwarp();
    }
}

// Segment sg's list rewritten by one warp (warp_remove_list, every field: into its new block,
// or in place from its first removed item), then lane 0 updates the vertex table and gives
// the old block back.
__device__ __forceinline__ void warp_remove_segment(const Layout& L, const Rings& R,
                                                    const Fields& F, i64 sg,
                                                    int* __restrict__ degree,
                                                    signed char* __restrict__ size_class,
                                                    i64* __restrict__ edge_ptr) {
    const i64 old = L.seg_ptr[sg], d1 = L.seg_new[sg];
    const i64 target = d1 > 0 ? new_block(L, R, sg) : 0;
    const i64 d0 = L.seg_old[sg], c = L.seg_len[sg], start = L.seg_start[sg];
    const i64* P = L.ent_pos + start;
    const i64 lo = target == old ? P[0] : 0;
    for (int f = 0; f < F.nf; ++f) {
        const i64 src = field_address(F, old, f), dst = field_address(F, target, f);
        switch (field_size(F, f)) {
        case 1: warp_remove_list<unsigned char>((const unsigned char*)src, (unsigned char*)dst,
                    d0, d1, lo, P, c, L, start, (unsigned char*)F.out[f]); break;
        case 2: warp_remove_list<unsigned short>((const unsigned short*)src,
                    (unsigned short*)dst, d0, d1, lo, P, c, L, start,
                    (unsigned short*)F.out[f]); break;
        case 4: warp_remove_list<unsigned int>((const unsigned int*)src, (unsigned int*)dst,
                    d0, d1, lo, P, c, L, start, (unsigned int*)F.out[f]); break;
        default: warp_remove_list<unsigned long long>((const unsigned long long*)src,
                    (unsigned long long*)dst, d0, d1, lo, P, c, L, start,
                    (unsigned long long*)F.out[f]); break;
        }
    }
    if ((threadIdx.x & 31) == 0) {
        const i64 u = L.seg_vertex[sg];
        degree[u] = (int)d1;
        if (d1 == 0) {
            edge_ptr[u] = 0;
            size_class[u] = -1;
        } else if (L.seg_class[sg] >= 0) {
            edge_ptr[u] = target;
            size_class[u] = (signed char)L.seg_class[sg];
        }
        give_back_block(L, R, sg);
    }
}
