// The prepare step of a deferred batch of more entries than one block sorts
// (hornet/batch/gpu/deferred.py, GRID_ENTRIES): small_prepare's work (small_batch.cu) done by
// a grid of blocks in one launch, phases separated by grid-wide barriers (the grid is small,
// at most GRID_ENTRIES / CHUNK blocks, all resident). It fills a workspace of capacity E
// (the launch's `capacity`) exactly as small_prepare fills one of SMALL_ENTRIES, so that
// small_merge (with that capacity) rewrites the lists after it:
//
//   1. every block makes the keys (src << 32 | dst) of its CHUNK entries and sorts them by
//      (key, entry) in shared memory (bitonic, one entry per thread);
//   2. every entry's place in the whole batch: its rank in its chunk plus, per other chunk,
//      the number of that chunk's entries before it (branch-free searches, all chunks in
//      lock step);
//   3. per sorted entry: first of its key, looked up in its source's list, kept (insert: the
//      new edges; upsert: the present ones listed too); the kept entries compacted (a scan
//      per block, then the blocks' totals);
//   4. segments (runs of one source) and result rows, the same way;
//   5. per segment: its new degree, whether its list moves, its pieces of rewrite work, the
//      per-class counts (atomics on the header's words);
//   6. block 0: the header, the ring check of deferred batches (stall, accept mask) and the
//      header's publication to the host; every block: an upsert's found edges' values.
//
// Cross-block reads of what the kernel wrote go around the SMs' L1 caches (__ldcg).

#include "segmented.cuh"
#include "grid_barrier.cuh"
#include "../batch/gpu/small_rewrite.cuh"   // Layout, header slots, fields
#include "../batch/gpu/prepare_rules.cuh"   // segment rules, deferred header, found values

#define CHUNK 1024                          // entries one block sorts (one per thread)
#define GRID_THREADS CHUNK
#define MAX_BLOCKS 16                       // GRID_ENTRIES / CHUNK (deferred.py)

// Workspace of capacity E past small_prepare's areas (Layout: HEADER_WORDS + 15 E words; the
// found edges' pairs and positions: 2 E; host property values: (MAX_FIELDS - 1) E): the
// chunks' sorted keys and entries, the batch's, the blocks' partial counts and the barrier
// (deferred.py: GRID_SCRATCH_OFFSET, GRID_WORKSPACE_WORDS; made zero).
struct Scratch {
    u64* key_a;
    unsigned* ent_a;
    u64* key_b;
    unsigned* ent_b;
    i64* part;          // per block: PARTS words
    unsigned* bar;      // grid_barrier's three words
};
#define PARTS 8
#define P_MIN 0
#define P_MAX 1
#define P_LOOPS 2
#define P_KEPT 3        // kept entries (low 16 bits), found ones (high 16 bits)
#define P_SEGS 4        // segment heads (low 16 bits), result rows (high 16 bits)
#define P_PIECES 5

__device__ __forceinline__ Scratch scratch(i64* ws, i64 E) {
    Scratch S;
    i64* p = ws + HEADER_WORDS + (15 + 2 + (MAX_FIELDS - 1)) * E;
    S.key_a = (u64*)p;          p += E;
    S.ent_a = (unsigned*)p;     p += E / 2;
    S.key_b = (u64*)p;          p += E;
    S.ent_b = (unsigned*)p;     p += E / 2;
    S.part = p;                 p += PARTS * MAX_BLOCKS;
    S.bar = (unsigned*)p;
    return S;
}

// Sum of field `k` of the partial counts of blocks [0, upto) (written before a barrier).
__device__ __forceinline__ i64 parts_before(const Scratch& S, int k, int upto) {
    i64 s = 0;
    for (int c = 0; c < upto; ++c) s += __ldcg(&S.part[c * PARTS + k]);
    return s;
}

// The parameters are small_prepare's (deferred.py fills both alike), then the capacity.
template <typename Id, bool Upsert>
__global__ void __launch_bounds__(GRID_THREADS)
grid_prepare(const Id* __restrict__ s, const Id* __restrict__ d, i64 npairs, int mirror,
             int mode, const int* __restrict__ degree, const signed char* __restrict__ size_class,
             const i64* __restrict__ edge_ptr, i64 table_len, i64 min_class,
             i64 copy_max_class, i64* ws, int* result, i64* stall,
             const i64* __restrict__ ring_state, const i64* __restrict__ ring_limit,
             i64 ring_slots, i64* host_header, i64 ticket,
             const i64* __restrict__ host_values, i64 value_words, FIELD_PARAMS,
             i64 p1, i64 p2, i64 p3, i64 p4, i64 p5, i64 p6, i64 p7, i64 capacity) {
    __shared__ u64 skey[CHUNK];
    __shared__ unsigned sent[CHUNK];
    __shared__ int warp_sums[32];
    __shared__ int total;
    __shared__ int loops;
    __shared__ long long min_id, max_id;
    __shared__ bool stalled;
    __shared__ int short_rings;
    __shared__ unsigned long long accept_bits;
    const i64 E = capacity;
    const Layout L = layout(ws, E);
    const Scratch S = scratch(ws, E);
    const int tid = threadIdx.x, b = blockIdx.x, G = gridDim.x;
    const bool inserting = mode != MODE_DELETE;
    const i64 ne = mirror ? 2 * npairs : npairs;
    const i64 i = (i64)b * CHUNK + tid;              // this thread's entry, then sorted place

    if (tid == 0) {
        loops = 0;
        min_id = 0x7FFFFFFFFFFFFFFFll;
        max_id = -1;
        stalled = stall != nullptr && *(volatile i64*)stall != 0;
    }
    __syncthreads();
    if (stalled) {                 // a deferred batch before this one found a ring short
        if (b == 0) {
            if (tid == 0) stalled_header(L.header);
            publish_header(L.header, host_header, ticket);
        }
        return;
    }
    // ---- 1. host values to the workspace; the header's counters zeroed; keys, sorted per block
    if (host_values != nullptr) {
        const i64 at = HEADER_WORDS + 17 * E;        // deferred.py: GRID_VALUE_OFFSET
        for (i64 k = i; k < value_words; k += (i64)G * CHUNK) ws[at + k] = host_values[k];
    }
    if (b == 0 && tid < NUM_CLASSES) {
        L.header[H_CLASS + tid] = 0;
        L.header[H_FREED + tid] = 0;
    }
    if (b == 0 && tid == 0) {
        L.header[H_RELEASES] = 0;
        L.header[H_DONE] = 0;
    }
    u64 a = ALL_ONES;
    {
        long long lo_id = 0x7FFFFFFFFFFFFFFFll, hi_id = -1;
        if (i < ne) {
            const i64 pair = mirror ? (i >> 1) : i;
            i64 u = (i64)s[pair], v = (i64)d[pair];
            if (mirror && (i & 1)) { const i64 t = u; u = v; v = t; }
            lo_id = min(u, v);
            hi_id = max(u, v);
            const bool valid = u >= 0 && v >= 0 && u <= MAX_ID && v <= MAX_ID;
            if (mirror && u == v) {
                if (!(i & 1)) atomicAdd(&loops, 1);
            } else if (valid) {
                a = ((u64)u << 32) | (u64)v;
            }
            atomicMin(&min_id, lo_id);
            atomicMax(&max_id, hi_id);
        }
    }
    unsigned e = (unsigned)i;
    for (int k = 2; k <= CHUNK; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            u64 pk;
            unsigned pe;
            if (j >= 32) {
                skey[tid] = a;
                sent[tid] = e;
                __syncthreads();
                pk = skey[tid ^ j];
                pe = sent[tid ^ j];
                __syncthreads();
            } else {
                pk = __shfl_xor_sync(0xFFFFFFFFu, a, j);
                pe = __shfl_xor_sync(0xFFFFFFFFu, e, j);
            }
            const bool lower = (tid & j) == 0, ascending = (tid & k) == 0;
            const bool greater = a > pk || (a == pk && e > pe);
            if ((lower == ascending) == greater) {
                a = pk;
                e = pe;
            }
        }
    }
    S.key_a[i] = a;
    S.ent_a[i] = e;
    if (tid == 0) {
        S.part[b * PARTS + P_MIN] = min_id;
        S.part[b * PARTS + P_MAX] = max_id;
        S.part[b * PARTS + P_LOOPS] = loops;
    }
    grid_barrier(S.bar);

    // ---- 2. the entry's place in the batch: entries are distinct in (key, entry) order
    {
        int at[MAX_BLOCKS];
#pragma unroll
        for (int c = 0; c < MAX_BLOCKS; ++c) at[c] = 0;
#pragma unroll
        for (int step = CHUNK; step > 0; step >>= 1) {
#pragma unroll
            for (int c = 0; c < MAX_BLOCKS; ++c) {
                if (c >= G || c == b) continue;
                const int q = at[c] + step - 1;
                if (q < CHUNK) {
                    const u64 k2 = __ldcg(&S.key_a[c * CHUNK + q]);
                    const unsigned e2 = __ldcg(&S.ent_a[c * CHUNK + q]);
                    if (k2 < a || (k2 == a && e2 < e)) at[c] += step;
                }
            }
        }
        i64 r = tid;
#pragma unroll
        for (int c = 0; c < MAX_BLOCKS; ++c)
            if (c < G && c != b) r += at[c];
        S.key_b[r] = a;
        S.ent_b[r] = e;
    }
    grid_barrier(S.bar);

    // ---- 3. first of each key, looked up in its list; kept (and found) entries compacted
    const u64 key = __ldcg(&S.key_b[i]);
    const bool live = key != ALL_ONES && (i == 0 || __ldcg(&S.key_b[i - 1]) != key);
    const int u = (int)(key >> 32), w = (int)(key & 0xFFFFFFFFull);
    const i64 pair = live ? (mirror ? (__ldcg(&S.ent_b[i]) >> 1) : __ldcg(&S.ent_b[i])) : 0;
    i64 pos = 0;
    bool keep = false, found = false;
    if (live) {
        const i64 d0 = u < table_len ? (i64)degree[u] : 0;
        const int* lst = d0 > 0 ? (const int*)edge_ptr[u] : nullptr;
        const i64 at = d0 > 0 ? lower_bound(lst, d0, w) : 0;
        const EntryLookup x = entry_lookup(inserting, lst, d0, at, w);
        keep = x.keep;
        found = Upsert && mode == MODE_UPSERT && !keep;
        pos = x.pos;
    }
    const int packed = (keep ? 1 : 0) + (found ? (1 << 16) : 0);
    const int mine = block_exclusive_scan(packed, warp_sums, &total);
    if (tid == 0) S.part[b * PARTS + P_KEPT] = total;
    grid_barrier(S.bar);
    const int before = (int)parts_before(S, P_KEPT, b);
    const int all = (int)parts_before(S, P_KEPT, G);
    const int kept = all & 0xFFFF, nfound = all >> 16;
    if (keep) {
        const int j = (before & 0xFFFF) + (mine & 0xFFFF);
        L.ent_src[j] = u;
        L.ent_dst[j] = w;
        L.ent_pair[j] = pair;
        L.ent_pos[j] = pos;
    }
    if (found) {
        const int j = (before >> 16) + (mine >> 16);
        i64* fpair = ws + HEADER_WORDS + 15 * E;     // FOUND_OFFSET of this capacity
        result[2 * E + j] = u;
        result[3 * E + j] = w;
        fpair[j] = pair;
        fpair[E + j] = -1 - pos;
    }
    grid_barrier(S.bar);

    // ---- 4. segments (runs of one source) and result rows (mirrored: src < dst)
    int src_j = 0, dst_j = 0, seg_packed = 0;
    if (i < kept) {
        src_j = __ldcg(&L.ent_src[i]);
        dst_j = __ldcg(&L.ent_dst[i]);
        seg_packed = segment_flags(i == 0, src_j, i > 0 ? __ldcg(&L.ent_src[i - 1]) : 0, dst_j,
                                   mirror);
    }
    const int seg_mine = block_exclusive_scan(seg_packed, warp_sums, &total);
    if (tid == 0) S.part[b * PARTS + P_SEGS] = total;
    grid_barrier(S.bar);
    const int sall = (int)parts_before(S, P_SEGS, G);
    const int nseg = sall & 0xFFFF, nres = sall >> 16;
    {
        const int sb = (int)parts_before(S, P_SEGS, b);
        if (i < kept) {
            if (seg_packed & 1) {
                const int sg = (sb & 0xFFFF) + (seg_mine & 0xFFFF);
                L.seg_start[sg] = i;
                L.seg_vertex[sg] = src_j;
            }
            if (seg_packed >> 16) {
                const int row = (sb >> 16) + (seg_mine >> 16);
                L.ent_res[i] = row;
                result[row] = src_j;
                result[E + row] = dst_j;
            } else {
                L.ent_res[i] = -1;
            }
        }
    }
    grid_barrier(S.bar);

    // ---- 5. per segment: new degree, whether the list moves, its pieces of rewrite work
    int pieces = 0;
    const i64 sg = i;
    if (sg < nseg) {
        const i64 start = __ldcg(&L.seg_start[sg]);
        const i64 c = (sg + 1 < nseg ? __ldcg(&L.seg_start[sg + 1]) : (i64)kept) - start;
        const i64 v = __ldcg(&L.seg_vertex[sg]);
        const bool has_row = v < table_len;
        const i64 d0 = has_row ? (i64)degree[v] : 0;
        const i64 cls = has_row ? (i64)size_class[v] : -1;
        const i64 ptr = has_row ? edge_ptr[v] : 0;
        const SegmentMove m = segment_move(inserting, d0, c, cls,
                                           d0 - __ldcg(&L.ent_pos[start]) + (inserting ? c : 0),
                                           min_class, copy_max_class, false);
        const i64 d1 = m.d1, to = m.to;
        const bool give_back = m.give_back;
        pieces = (int)segment_pieces(to, d0);
        L.seg_len[sg] = c;
        L.seg_old[sg] = d0;
        L.seg_new[sg] = d1;
        L.seg_ptr[sg] = ptr;
        L.seg_class[sg] = to;
        if (to >= 0)
            L.seg_rank[sg] = (i64)atomicAdd((u64*)&L.header[H_CLASS + to], 1ull);
        L.seg_give[sg] = give_back
            ? (cls << 32) | (i64)atomicAdd((u64*)&L.header[H_FREED + cls], 1ull) : -1;
        if (give_back) atomicAdd((u64*)&L.header[H_RELEASES], 1ull);
    }
    const int piece = block_exclusive_scan(pieces, warp_sums, &total);
    if (tid == 0) S.part[b * PARTS + P_PIECES] = total;
    grid_barrier(S.bar);
    if (sg < nseg) L.seg_piece[sg] = parts_before(S, P_PIECES, b) + piece;

    // ---- 6. the header, the rings' check (every block alike: the found edges' writes wait
    // for it), the found edges' values
    if (tid == 0) {
        accept_bits = 0ull;
        short_rings = 0;
    }
    __syncthreads();
    if (stall != nullptr && tid < NUM_CLASSES) {
        const i64 size = ring_state[NUM_CLASSES + tid] - ring_state[tid];
        const i64 need = __ldcg(&L.header[H_CLASS + tid]);
        const i64 f = __ldcg(&L.header[H_FREED + tid]);
        if (need > size) atomicAdd(&short_rings, 1);
        if (f > 0 && size + f <= ring_slots && (f <= need || size - need + f <= ring_limit[tid]))
            atomicOr(&accept_bits, 1ull << tid);
    }
    __syncthreads();
    const bool is_short = stall != nullptr && short_rings > 0;
    if (b == 0 && tid == 0) {
        i64 moves = 0;
        for (int k = 0; k < NUM_CLASSES; ++k) moves += __ldcg(&L.header[H_CLASS + k]);
        i64 lo_id = 0x7FFFFFFFFFFFFFFFll, hi_id = -1, nloops = 0;
        for (int c = 0; c < G; ++c) {
            lo_id = min(lo_id, __ldcg(&S.part[c * PARTS + P_MIN]));
            hi_id = max(hi_id, __ldcg(&S.part[c * PARTS + P_MAX]));
            nloops += __ldcg(&S.part[c * PARTS + P_LOOPS]);
        }
        L.header[H_KEPT] = kept;
        L.header[H_SEGMENTS] = nseg;
        L.header[H_MOVES] = moves;
        L.header[H_LOOPS] = nloops;
        L.header[H_MIN_ID] = ne > 0 ? lo_id : 0;
        L.header[H_MAX_ID] = hi_id;
        L.header[H_RESULTS] = nres;
        L.header[H_SPILLS] = 0;
        L.header[H_PIECES] = parts_before(S, P_PIECES, G);
        L.header[H_WARPS] = 0;
        L.header[H_FOUND] = nfound;
        L.header[H_ACCEPT] = (i64)accept_bits;
        L.header[H_STALLED] = is_short ? 1 : 0;
        if (is_short) *stall = 1;
    }
    if (Upsert && mode == MODE_UPSERT && !is_short && nfound > 0) {
        MAKE_FIELDS;
        const i64 old_[MAX_FIELDS] = {0, p1, p2, p3, p4, p5, p6, p7};
        const i64* fpair = ws + HEADER_WORDS + 15 * E;
        const int* fsrc = result + 2 * E;
        for (i64 k = i; k < nfound; k += (i64)G * CHUNK) {
            const i64 at = edge_ptr[__ldcg(&fsrc[k])] + 4 * __ldcg(&fpair[E + k]);
            found_values(F, old_, at, __ldcg(&fpair[k]), k);
        }
    }
    if (b == 0) publish_header(L.header, host_header, ticket);
}
