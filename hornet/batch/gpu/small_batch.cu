// CUDA kernels of the small-batch path (hornet/batch/gpu/small.py): a batch of at most
// SMALL_ENTRIES entries (after mirroring) is prepared by ONE thread block, and its lists are
// rewritten by one block per source vertex, so that a batch costs a handful of launches and
// one small device-to-host read (the header) instead of the ~150 operations of the general
// pipeline (whose every step is sized for 10^7 edges).
//
// Compiled once per process by cupy.RawModule (NVRTC, -std=c++17); includes segmented.cuh and
// small_rewrite.cuh (the workspace's Layout, of capacity SMALL_ENTRIES here, and the helpers of
// the rewrite kernels, which the medium-batch path, medium_batch.cu, launches too).

#include "segmented.cuh"
#include "../batch/gpu/small_rewrite.cuh"   // Layout, header slots, rewrite helpers
#include "../batch/gpu/prepare_rules.cuh"   // segment rules, deferred header, found values

#define SMALL_ENTRIES 4096                 // entries of one batch (pairs, twice if mirrored)
#define SMALL_THREADS 1024                 // the preparing block
#define PER_THREAD (SMALL_ENTRIES / SMALL_THREADS)
static_assert(PER_THREAD == 4, "the preparing block's per-thread arrays are written for 4");

// Phase clocks for bench/profile_small_gpu.py, which compiles this file with
// SMALL_BATCH_CLOCKS defined; no-ops otherwise.
#ifdef SMALL_BATCH_CLOCKS
#define PHASE_CLOCK(k) if (threadIdx.x == 0) ws[H_CLOCKS + (k)] = (i64)clock64()
#else
#define PHASE_CLOCK(k)
#endif

// ------------------------------------------------------------------------------ prepare
// One block of SMALL_THREADS threads: validate, mirror, sort by (src, dst, entry) (bitonic, in
// shared memory), drop repeats (first entry wins) and self-loops, look every entry up in its
// source's list, keep the new edges (insert) or the present ones (delete), cut them into
// segments per source, and decide per segment the new degree and whether the list moves to a
// block of another size class (insert: it outgrows its block; delete: it falls under a
// quarter of it, or empties). Vertices at or past table_len have no list yet.
//
// A list rewritten in place moves its items from the first change on, with one block: fine
// for short lists, slow for a hub's (hundreds of thousands of items, one block stepping
// through them). So a list that would move more than COPY_ITEMS items in place, and whose
// class is at most copy_max_class, is copied instead to a fresh block of its own class (a
// move like any other: popped from the ring, the old block pushed back), and every moving
// list is cut into pieces of PIECE_ITEMS old items, one block each, run side by side.
//
// MODE_UPSERT (deferred directed batches only): prepared as an insert of the new edges, and
// the present ones (first entry of each key) listed too, sorted: their src and dst in result
// rows [2E, 3E) and [3E, 4E) (E = SMALL_ENTRIES), their pair and position in the workspace
// from FOUND_OFFSET, their count in H_FOUND; once the batch is known not to stall, every
// property of theirs is rewritten in place (the fields: FIELD_PARAMS, the new values of the
// found edges to o_f, the old ones to p_f), before any list moves (small_merge runs after).
#define FOUND_OFFSET (HEADER_WORDS + 15 * SMALL_ENTRIES)
// Deferred batches with host property values (host_values given): their value_words int64
// words, read from mapped pinned host memory, are copied to the workspace from VALUE_OFFSET,
// where the rewrite kernels read them (the host may reuse its row once the header came).
#define VALUE_OFFSET (FOUND_OFFSET + 2 * SMALL_ENTRIES)
// MODE_WIDE deletes (the small path's own workspace, never a deferred one): from WIDE_OFFSET,
// the segments of the lists rewritten by whole blocks, their first pieces, and the segments
// of the lists rewritten by one warp each (SMALL_ENTRIES words each; small.py: WIDE_OFFSET).
#define WIDE_OFFSET VALUE_OFFSET
// Upsert: the instance that runs MODE_UPSERT (the found edges' listing and writes compiled in
// it alone: the insert and delete instance carries none of their code).
template <typename Id, bool Upsert>
__global__ void __launch_bounds__(SMALL_THREADS)
small_prepare(const Id* __restrict__ s, const Id* __restrict__ d, i64 npairs, int mirror,
              int mode, const int* __restrict__ degree, const signed char* __restrict__ size_class,
              const i64* __restrict__ edge_ptr, i64 table_len, i64 min_class,
              i64 copy_max_class, i64* ws, int* __restrict__ result, i64* stall,
              const i64* __restrict__ ring_state, const i64* __restrict__ ring_limit,
              i64 ring_slots, i64* host_header, i64 ticket,
              const i64* __restrict__ host_values, i64 value_words, FIELD_PARAMS,
              i64 p1, i64 p2, i64 p3, i64 p4, i64 p5, i64 p6, i64 p7) {
    // a delete with MODE_WIDE: long lists stay in their blocks, rewritten in place by pieces
    // side by side (small_remove_wide)
    const bool wide = (mode & MODE_WIDE) != 0 && (mode & ~MODE_WIDE) == MODE_DELETE;
    mode &= ~MODE_WIDE;
    __shared__ u64 keys[SMALL_ENTRIES];          // later reused as the kept (src, dst)
    __shared__ unsigned short entry[SMALL_ENTRIES];
    __shared__ int warp_sums[32];
    __shared__ int total;
    __shared__ int class_count[NUM_CLASSES];
    __shared__ int freed_count[NUM_CLASSES];
    __shared__ int loops, releases;
    __shared__ long long min_id, max_id;
    const Layout L = layout(ws, SMALL_ENTRIES);
    const int tid = threadIdx.x;
    const bool inserting = mode != MODE_DELETE;      // insert or upsert
    const i64 ne = mirror ? 2 * npairs : npairs;
    int P = 1;
    while (P < ne) P <<= 1;
    __shared__ bool stalled;

    if (tid < NUM_CLASSES) {
        class_count[tid] = 0;
        freed_count[tid] = 0;
    }
    if (tid == 0) {
        loops = 0;
        releases = 0;
        min_id = 0x7FFFFFFFFFFFFFFFll;
        max_id = -1;
        stalled = stall != nullptr && *(volatile i64*)stall != 0;
    }
    __syncthreads();
    if (stalled) {                 // a deferred batch before this one found a ring short
        if (tid == 0) stalled_header(L.header);
        publish_header(L.header, host_header, ticket);
        return;
    }
    PHASE_CLOCK(0);
    if (host_values != nullptr)
        for (i64 i = tid; i < value_words; i += SMALL_THREADS) ws[VALUE_OFFSET + i] = host_values[i];

    // ---- entries as keys (src << 32 | dst); self-loops and padding sort last
    long long lo_id = 0x7FFFFFFFFFFFFFFFll, hi_id = -1;
    int my_loops = 0;
    for (int i = tid; i < P; i += SMALL_THREADS) {
        u64 key = ALL_ONES;
        if (i < ne) {
            const i64 pair = mirror ? (i >> 1) : i;
            i64 u = (i64)s[pair], v = (i64)d[pair];
            if (mirror && (i & 1)) { const i64 t = u; u = v; v = t; }
            lo_id = min(lo_id, (long long)min(u, v));
            hi_id = max(hi_id, (long long)max(u, v));
            const bool valid = u >= 0 && v >= 0 && u <= MAX_ID && v <= MAX_ID;
            if (mirror && u == v) {
                if (!(i & 1)) ++my_loops;
            } else if (valid) {
                key = ((u64)u << 32) | (u64)v;
            }
        }
        keys[i] = key;
        entry[i] = (unsigned short)i;
    }
    atomicMin(&min_id, lo_id);
    atomicMax(&max_id, hi_id);
    if (my_loops) atomicAdd(&loops, my_loops);
    __syncthreads();
    PHASE_CLOCK(1);

    // ---- bitonic sort of (key, entry): a strict total order, so repeats keep entry order.
    // Thread t holds elements q * SMALL_THREADS + t (q < R) in registers: partners closer
    // than 32 are in the same warp (shuffles), partners SMALL_THREADS or more apart in the
    // same thread; only the distances in between go through shared memory.
    const int R = P > SMALL_THREADS ? P / SMALL_THREADS : 1;
    u64 a[PER_THREAD];
    unsigned e[PER_THREAD];
#pragma unroll
    for (int q = 0; q < PER_THREAD; ++q) {
        const int i = q * SMALL_THREADS + tid;
        a[q] = (q < R && i < P) ? keys[i] : ALL_ONES;
        e[q] = (q < R && i < P) ? (unsigned)entry[i] : 0xFFFFu;
    }
    // elements x < y of this thread: the lower one keeps the minimum where ascending
    auto exchange = [&](int x, int y, int k) {
        const bool ascending = ((x * SMALL_THREADS + tid) & k) == 0;
        const bool greater = a[x] > a[y] || (a[x] == a[y] && e[x] > e[y]);
        if (ascending == greater) {
            const u64 ta = a[x]; a[x] = a[y]; a[y] = ta;
            const unsigned te = e[x]; e[x] = e[y]; e[y] = te;
        }
    };
    for (int k = 2; k <= P; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            if (j >= SMALL_THREADS) {                     // within the thread (R is 2 or 4)
                if (j == SMALL_THREADS) {
                    exchange(0, 1, k);
                    if (R == 4) exchange(2, 3, k);
                } else {
                    exchange(0, 2, k);
                    exchange(1, 3, k);
                }
                continue;
            }
            if (j >= 32) {                                // through shared memory
#pragma unroll
                for (int q = 0; q < PER_THREAD; ++q) {
                    const int i = q * SMALL_THREADS + tid;
                    if (q < R && i < P) { keys[i] = a[q]; entry[i] = (unsigned short)e[q]; }
                }
                __syncthreads();
            }
#pragma unroll
            for (int q = 0; q < PER_THREAD; ++q) {
                if (q >= R) break;
                const int i = q * SMALL_THREADS + tid;
                u64 pk;
                unsigned pe;
                if (j >= 32) {
                    const int l = i ^ j;
                    pk = l < P ? keys[l] : ALL_ONES;
                    pe = l < P ? (unsigned)entry[l] : 0xFFFFu;
                } else {
                    pk = __shfl_xor_sync(0xFFFFFFFFu, a[q], j);
                    pe = __shfl_xor_sync(0xFFFFFFFFu, e[q], j);
                }
                const bool lower = (i & j) == 0, ascending = (i & k) == 0;
                const bool greater = a[q] > pk || (a[q] == pk && e[q] > pe);
                if ((lower == ascending) == greater) {    // take the partner's element
                    a[q] = pk;
                    e[q] = pe;
                }
            }
            if (j >= 32) __syncthreads();
        }
    }
#pragma unroll
    for (int q = 0; q < PER_THREAD; ++q) {
        const int i = q * SMALL_THREADS + tid;
        if (q < R && i < P) { keys[i] = a[q]; entry[i] = (unsigned short)e[q]; }
    }
    __syncthreads();
    PHASE_CLOCK(2);

    // ---- first of each key, looked up in its list; each thread owns R in a row and runs
    // their binary searches in lock step, so that the R dependent load chains overlap
    int keep[PER_THREAD], us[PER_THREAD], vs[PER_THREAD];
    i64 pos[PER_THREAD], pair_of[PER_THREAD], lo[PER_THREAD], hi[PER_THREAD];
    const int* lst[PER_THREAD];
    bool live[PER_THREAD];                            // first of its key, and a real entry
#pragma unroll
    for (int q = 0; q < PER_THREAD; ++q) {
        const int i = tid * R + q;
        live[q] = false;
        lo[q] = hi[q] = 0;
        lst[q] = nullptr;
        us[q] = vs[q] = 0;
        pair_of[q] = 0;
        if (q >= R || i >= P) continue;
        const u64 key = keys[i];
        if (key == ALL_ONES || (i > 0 && keys[i - 1] == key)) continue;
        live[q] = true;
        us[q] = (int)(key >> 32);
        vs[q] = (int)(key & 0xFFFFFFFFull);
        pair_of[q] = mirror ? (entry[i] >> 1) : entry[i];
    }
#pragma unroll
    for (int q = 0; q < PER_THREAD; ++q)              // degree and list of every source
        if (live[q] && us[q] < table_len) {
            hi[q] = degree[us[q]];
            if (hi[q] > 0) lst[q] = (const int*)edge_ptr[us[q]];
        }
    const i64 d0[PER_THREAD] = {hi[0], hi[1], hi[2], hi[3]};
    for (bool more = true; more;) {                   // lower bound of v in every list
        more = false;
        int x[PER_THREAD];
#pragma unroll
        for (int q = 0; q < PER_THREAD; ++q)
            if (lo[q] < hi[q]) x[q] = lst[q][(lo[q] + hi[q]) >> 1];
#pragma unroll
        for (int q = 0; q < PER_THREAD; ++q)
            if (lo[q] < hi[q]) {
                const i64 mid = (lo[q] + hi[q]) >> 1;
                if (x[q] < vs[q]) lo[q] = mid + 1; else hi[q] = mid;
                more = more || lo[q] < hi[q];
            }
    }
    int count = 0;
#pragma unroll
    for (int q = 0; q < PER_THREAD; ++q) {
        const EntryLookup x = entry_lookup(inserting, lst[q], d0[q], lo[q], vs[q]);
        keep[q] = live[q] && x.keep;
        pos[q] = x.pos;
        count += keep[q];
    }
    const int base = block_exclusive_scan(count, warp_sums, &total);   // (syncs: keys free)
    PHASE_CLOCK(3);
    const int kept = total;
    int* csrc = (int*)keys;                       // the kept entries, in shared memory too
    int* cdst = csrc + SMALL_ENTRIES;
    {
        int j = base;
#pragma unroll
        for (int q = 0; q < PER_THREAD; ++q) {
            if (!keep[q]) continue;
            L.ent_src[j] = us[q];
            L.ent_dst[j] = vs[q];
            L.ent_pair[j] = pair_of[q];
            L.ent_pos[j] = pos[q];
            csrc[j] = us[q];
            cdst[j] = vs[q];
            ++j;
        }
    }
    __syncthreads();
    PHASE_CLOCK(4);

    // ---- upsert: the present edges (live, not kept: found at p = -1 - pos), sorted
    int nfound = 0;
    if (Upsert && mode == MODE_UPSERT) {
        int fcount = 0;
#pragma unroll
        for (int q = 0; q < PER_THREAD; ++q) fcount += live[q] && !keep[q];
        int j = block_exclusive_scan(fcount, warp_sums, &total);
        nfound = total;
        i64* fpair = ws + FOUND_OFFSET;
        i64* fpos = fpair + SMALL_ENTRIES;
#pragma unroll
        for (int q = 0; q < PER_THREAD; ++q) {
            if (!live[q] || keep[q]) continue;
            result[2 * SMALL_ENTRIES + j] = us[q];
            result[3 * SMALL_ENTRIES + j] = vs[q];
            fpair[j] = pair_of[q];
            fpos[j] = -1 - pos[q];
            ++j;
        }
    }

    // ---- segments (runs of one source) and result rows (mirrored: src < dst), one scan
    // of two packed 16-bit counts
    const int R2 = (kept + SMALL_THREADS - 1) / SMALL_THREADS;      // kept entries a thread owns
    int packed = 0;
    for (int q = 0; q < R2; ++q) {
        const int j = tid * R2 + q;
        if (j >= kept) break;
        packed += segment_flags(j == 0, csrc[j], j > 0 ? csrc[j - 1] : 0, cdst[j], mirror);
    }
    const int first = block_exclusive_scan(packed, warp_sums, &total);
    const int nseg = total & 0xFFFF, nres = total >> 16;
    {
        int seg = (first & 0xFFFF) - 1, row = first >> 16;
        for (int q = 0; q < R2; ++q) {
            const int j = tid * R2 + q;
            if (j >= kept) break;
            if (j == 0 || csrc[j] != csrc[j - 1]) {
                ++seg;
                L.seg_start[seg] = j;
                L.seg_vertex[seg] = csrc[j];
            }
            if (!mirror || csrc[j] < cdst[j]) {
                L.ent_res[j] = row;
                result[row] = csrc[j];
                result[SMALL_ENTRIES + row] = cdst[j];
                ++row;
            } else {
                L.ent_res[j] = -1;
            }
        }
    }
    __syncthreads();
    PHASE_CLOCK(5);

    // ---- per segment: new degree, whether the list moves, and its pieces of rewrite work
    // (each thread owns R3 segments in a row, for the scan of the pieces)
    const int R3 = (nseg + SMALL_THREADS - 1) / SMALL_THREADS;
    int my_pieces = 0, my_long = 0, my_short = 0;   // (wide: lists by blocks, by warps)
    for (int q = 0; q < R3; ++q) {
        const int sg = tid * R3 + q;
        if (sg >= nseg) break;
        const i64 start = L.seg_start[sg];
        const i64 c = (sg + 1 < nseg ? L.seg_start[sg + 1] : kept) - start;
        const i64 u = L.seg_vertex[sg];
        const bool has_row = u < table_len;
        const i64 d0 = has_row ? (i64)degree[u] : 0;
        const i64 cls = has_row ? (i64)size_class[u] : -1;
        const i64 ptr = has_row ? edge_ptr[u] : 0;
        const SegmentMove m = segment_move(inserting, d0, c, cls,
                                           d0 - L.ent_pos[start] + (inserting ? c : 0),
                                           min_class, wide ? -1 : copy_max_class, false);
        const i64 d1 = m.d1, to = m.to;
        const bool give_back = m.give_back;
        int pieces = (int)(wide && to < 0 && d1 > 0 ? wide_pieces(L.ent_pos[start], d0)
                                                    : segment_pieces(to, d0));
        if (wide && pieces == 1 &&
            (d1 == 0 ? 0 : to >= 0 ? d0 : d0 - L.ent_pos[start]) <= WIDE_WARP_ITEMS) {
            pieces = 0;                 // a short list: one warp
            ++my_short;
        } else if (wide) {
            ++my_long;
        }
        L.seg_piece[sg] = pieces;
        my_pieces += pieces;
        L.seg_len[sg] = c;
        L.seg_old[sg] = d0;
        L.seg_new[sg] = d1;
        L.seg_ptr[sg] = ptr;
        L.seg_class[sg] = to;
        if (to >= 0) L.seg_rank[sg] = atomicAdd(&class_count[to], 1);
        L.seg_give[sg] = give_back ? (cls << 32) | (i64)atomicAdd(&freed_count[cls], 1) : -1;
        if (give_back) atomicAdd(&releases, 1);
    }
    int piece = block_exclusive_scan(my_pieces, warp_sums, &total);
    const int npieces = total;
    // wide: the lists of whole blocks (their pieces' first numbers) and those of one warp
    int long_at = 0, short_at = 0, nlong = 0, nshort = 0;
    if (wide) {
        long_at = block_exclusive_scan(my_long, warp_sums, &total);
        nlong = total;
        short_at = block_exclusive_scan(my_short, warp_sums, &total);
        nshort = total;
    }
    i64* const wide_long = ws + WIDE_OFFSET;            // (their segments)
    i64* const wide_first = wide_long + SMALL_ENTRIES;  // (their first pieces)
    i64* const wide_short = wide_first + SMALL_ENTRIES;
    for (int q = 0; q < R3; ++q) {
        const int sg = tid * R3 + q;
        if (sg >= nseg) break;
        const int pieces = (int)L.seg_piece[sg];
        L.seg_piece[sg] = piece;
        if (wide && pieces) {
            wide_long[long_at] = sg;
            wide_first[long_at++] = piece;
        } else if (wide) {
            wide_short[short_at++] = sg;
        }
        piece += pieces;
    }
    __syncthreads();
    PHASE_CLOCK(6);

    if (tid < NUM_CLASSES) {
        L.header[H_CLASS + tid] = class_count[tid];
        L.header[H_FREED + tid] = freed_count[tid];
    }
    if (tid == 0) {
        i64 moves = 0;
        for (int k = 0; k < NUM_CLASSES; ++k) moves += class_count[k];
        L.header[H_KEPT] = kept;
        L.header[H_SEGMENTS] = nseg;
        L.header[H_MOVES] = moves;
        L.header[H_LOOPS] = loops;
        L.header[H_MIN_ID] = ne > 0 ? (i64)min_id : 0;
        L.header[H_MAX_ID] = (i64)max_id;
        L.header[H_RESULTS] = nres;
        L.header[H_RELEASES] = releases;
        L.header[H_SPILLS] = 0;
        L.header[H_DONE] = 0;
        // (wide: the grid's blocks, the long lists' pieces and the warps' blocks)
        L.header[H_PIECES] = wide ? npieces + (nshort + WIDE_WARPS - 1) / WIDE_WARPS : npieces;
        L.header[H_WIDE_PIECES] = npieces;
        L.header[H_WIDE_LONG] = nlong;
        L.header[H_WIDE_SHORT] = nshort;
        L.header[H_WARPS] = 0;
        L.header[H_FOUND] = nfound;
        L.header[H_TICKET] = 0;
    }
    // ---- deferred batches (stall given): the block cache's part decided here rather than
    // by the host, against the rings' device counters, exact in stream order. A ring short
    // of what the batch pops stalls the batch and every deferred batch after it (their
    // kernels do nothing) until the host runs them again; a ring takes the blocks given back
    // under the rule of BlockCache.accepts, with ring_limit[k] the most it may keep.
    __shared__ unsigned long long accept_bits;
    __shared__ int short_rings;
    if (tid == 0) {
        accept_bits = 0ull;
        short_rings = 0;
    }
    __syncthreads();
    if (stall != nullptr && tid < NUM_CLASSES) {
        const i64 size = ring_state[NUM_CLASSES + tid] - ring_state[tid];
        const i64 need = class_count[tid], f = freed_count[tid];
        if (need > size) atomicAdd(&short_rings, 1);
        if (f > 0 && size + f <= ring_slots && (f <= need || size - need + f <= ring_limit[tid]))
            atomicOr(&accept_bits, 1ull << tid);
    }
    __syncthreads();
    const bool is_short = stall != nullptr && short_rings > 0;
    if (tid == 0) {
        L.header[H_ACCEPT] = (i64)accept_bits;
        L.header[H_STALLED] = is_short ? 1 : 0;
        if (is_short) *stall = 1;
    }
    // ---- upsert: the found edges' properties (a batch that stalls writes none: it runs
    // again in full once the host has filled the rings)
    if (Upsert && mode == MODE_UPSERT && !is_short && nfound > 0) {
        MAKE_FIELDS;
        const i64 old_[MAX_FIELDS] = {0, p1, p2, p3, p4, p5, p6, p7};
        const i64* fpair = ws + FOUND_OFFSET;
        const i64* fpos = fpair + SMALL_ENTRIES;
        const int* fsrc = result + 2 * SMALL_ENTRIES;
        for (int i = tid; i < nfound; i += SMALL_THREADS)
            found_values(F, old_, edge_ptr[fsrc[i]] + 4 * fpos[i], fpair[i], i);
    }
    publish_header(L.header, host_header, ticket);
}

// ------------------------------------------------------------------------ rewriting lists
// A deferred batch (bit DEFERRED_ACCEPT of ring_accept set) takes its accept mask from the
// header that small_prepare filled, and its rewrite does nothing when the batch stalled
// (every block returns before the rings' counters move).
#define DEFERRED_ACCEPT (1ull << 63)
#define DEFERRED_RINGS                                                                      \
    const bool deferred_ = (ring_accept & DEFERRED_ACCEPT) != 0ull;                         \
    if (deferred_ && L.header[H_STALLED]) return;                                           \
    const Rings R = {ring_slot, ring_state, ring_slots,                                     \
                     deferred_ ? (u64)L.header[H_ACCEPT] : ring_accept, ring_pool}

// One block per piece of a segment (see piece_of), through the helpers of small_rewrite.cuh.
// `capacity`: the workspace's (SMALL_ENTRIES, or a medium batch's); `listed`: the pieces are
// listed in seg_piece (medium batches) rather than numbered per segment.

// The old items [lo, hi) of list O and its new items [j0, j1) (from `values` by pair, or the
// entries' dst), written to their slots of the merged list D (D == O: in place). Chunks of
// blockDim.x old items from the back; in place, each is read by the whole block before any
// thread writes (writes land at or after the chunk's start, on items already read), while a
// copy lets every warp stream through its items without waiting for the others.
#define COPY_LOADS 8
template <typename T>
__device__ void merge_block(const T* O, T* D, i64 lo, i64 hi, const i64* I, i64 c, i64 j0,
                            i64 j1, const Layout& L, i64 start, const T* values, T* out) {
    if (D == O) {
        place_old_items(O, D, lo, hi, I, c, (int)blockDim.x, (int)threadIdx.x,
                        [] { __syncthreads(); });
    } else {                      // a copy: COPY_LOADS loads in flight per thread, no waits
        for (i64 base = lo; base < hi; base += (i64)blockDim.x * COPY_LOADS) {
            T v[COPY_LOADS];
#pragma unroll
            for (int m = 0; m < COPY_LOADS; ++m) {
                const i64 i = base + (i64)m * blockDim.x + threadIdx.x;
                if (i < hi) v[m] = O[i];
            }
#pragma unroll
            for (int m = 0; m < COPY_LOADS; ++m) {
                const i64 i = base + (i64)m * blockDim.x + threadIdx.x;
                if (i < hi) D[i + upper_bound(I, c, i)] = v[m];
            }
        }
    }
    for (i64 j = j0 + threadIdx.x; j < j1; j += blockDim.x) {
        T v = values ? values[L.ent_pair[start + j]] : (T)L.ent_dst[start + j];
        D[I[j] + j] = v;
        const i64 r = L.ent_res[start + j];
        if (out && r >= 0) out[r] = v;
    }
    __syncthreads();
}

// Piece t of the rewrite: its segment and its number within it (the grid has one block per
// piece; a segment rewritten in place is one piece, a moving one has one per PIECE_ITEMS old
// items, each piece handling old items [k * PIECE_ITEMS, (k + 1) * PIECE_ITEMS)).
struct Piece {
    i64 sg, k;
};
// Segment s has its first piece in [s, s + extra] (extra = npieces - nseg: the pieces past
// the first of each segment), so piece t's segment lies in [t - extra, t]: a search of a few
// steps when few lists are cut into pieces (the usual batch), instead of log2(nseg).
// Medium batches (listed) name each piece in seg_piece instead: segment << 32 | number.
__device__ __forceinline__ Piece piece_of(const Layout& L, i64 nseg, i64 npieces, i64 t,
                                          int listed) {
    if (listed) {
        const i64 v = L.seg_piece[t];
        return {v >> 32, v & 0xFFFFFFFFll};
    }
    const i64 extra = npieces - nseg;
    const i64 sg = segment_between(L.seg_piece, t > extra ? t - extra : 0,
                                   t < nseg - 1 ? t : nseg - 1, t);
    return {sg, t - L.seg_piece[sg]};
}

extern "C" __global__ void small_merge(i64* ws, i64 capacity, int listed, RING_PARAMS,
                                       int* __restrict__ degree,
                                       signed char* __restrict__ size_class,
                                       i64* __restrict__ edge_ptr, FIELD_PARAMS) {
    MAKE_FIELDS;
    const Layout L = layout(ws, capacity);
    DEFERRED_RINGS;
    const i64 nseg = L.header[H_SEGMENTS], npieces = L.header[H_PIECES];
    for (i64 t = blockIdx.x; t < npieces; t += gridDim.x) {
        const Piece pc = piece_of(L, nseg, npieces, t, listed);
        const i64 sg = pc.sg;
        const i64 old = L.seg_ptr[sg], target = new_block(L, R, sg);
        const i64 d0 = L.seg_old[sg], c = L.seg_len[sg], start = L.seg_start[sg];
        const i64* I = L.ent_pos + start;
        // in place: old items from I[0] on and every new one; moving: the piece's old items
        // and the new ones that go before them (the last piece: also those at the end)
        i64 lo = I[0], hi = d0, j0 = 0, j1 = c;
        if (target != old) {
            lo = pc.k * PIECE_ITEMS;
            hi = min(d0, lo + PIECE_ITEMS);
            j0 = lower_bound(I, c, lo);
            j1 = hi == d0 ? c : lower_bound(I, c, hi);
        }
        for (int f = 0; f < F.nf; ++f) {
            const i64 src = field_address(F, old, f), dst = field_address(F, target, f);
            switch (field_size(F, f)) {
            case 1: merge_block<unsigned char>((const unsigned char*)src, (unsigned char*)dst,
                        lo, hi, I, c, j0, j1, L, start, (const unsigned char*)F.values[f],
                        (unsigned char*)F.out[f]); break;
            case 2: merge_block<unsigned short>((const unsigned short*)src,
                        (unsigned short*)dst, lo, hi, I, c, j0, j1, L, start,
                        (const unsigned short*)F.values[f], (unsigned short*)F.out[f]); break;
            case 4: merge_block<unsigned int>((const unsigned int*)src, (unsigned int*)dst,
                        lo, hi, I, c, j0, j1, L, start, (const unsigned int*)F.values[f],
                        (unsigned int*)F.out[f]); break;
            default: merge_block<unsigned long long>((const unsigned long long*)src,
                        (unsigned long long*)dst, lo, hi, I, c, j0, j1, L, start,
                        (const unsigned long long*)F.values[f],
                        (unsigned long long*)F.out[f]); break;
            }
        }
        if (threadIdx.x == 0 && pc.k == 0) {
            const i64 u = L.seg_vertex[sg];
            degree[u] = (int)L.seg_new[sg];
            if (L.seg_class[sg] >= 0) {
                edge_ptr[u] = target;
                size_class[u] = (signed char)L.seg_class[sg];
            }
            give_back_block(L, R, sg);
        }
    }
    advance_rings(L, R);
}

// The items at the ascending positions P leave the list O of d0 items; the survivors among
// old items [lo, hi) are written to their slots of D (D == O: in place). The removed values
// are copied to the result first (when `out` is given). Chunks of blockDim.x * REMOVE_ITEMS
// from the front, each warp taking REMOVE_ITEMS windows of 32 (ranks from RemovedPositions,
// no search per item); in place, the whole chunk is read before any thread writes (every
// write lands on an item already read), while a copy lets the warps stream on their own.
template <typename T>
__device__ void remove_block(const T* O, T* D, i64 d0, i64 d1, i64 lo, i64 hi, const i64* P,
                             i64 c, const Layout& L, i64 start, T* out) {
    if (out)
        for (i64 j = threadIdx.x; j < c; j += blockDim.x) {
            const i64 r = L.ent_res[start + j];
            if (r >= 0) out[r] = O[P[j]];
        }
    __syncthreads();
    if (d1 == 0) return;
    const bool in_place = D == O;
    const int warp = threadIdx.x >> 5;
    for (i64 base = lo; base < hi; base += (i64)blockDim.x * REMOVE_ITEMS) {
        const i64 lo_w = base + (i64)warp * 32 * REMOVE_ITEMS;
        T v[REMOVE_ITEMS];
        i64 to[REMOVE_ITEMS];
        read_windows(O, d0, lo_w, v);
        RemovedPositions gone(P, c, warp_lower_bound(P, c, lo_w));
        rank_windows(gone, d0, lo_w, 0, (i64)-1, to);
        if (in_place) __syncthreads();
        write_windows(D, 0, (i64)-1, v, to);
        if (in_place) __syncthreads();
    }
}

extern "C" __global__ void small_remove(i64* ws, i64 capacity, int listed, RING_PARAMS,
                                        int* __restrict__ degree,
                                        signed char* __restrict__ size_class,
                                        i64* __restrict__ edge_ptr, FIELD_PARAMS) {
    MAKE_FIELDS;
    const Layout L = layout(ws, capacity);
    DEFERRED_RINGS;
    const i64 nseg = L.header[H_SEGMENTS], npieces = L.header[H_PIECES];
    for (i64 t = blockIdx.x; t < npieces; t += gridDim.x) {
        const Piece pc = piece_of(L, nseg, npieces, t, listed);
        const i64 sg = pc.sg;
        const i64 old = L.seg_ptr[sg], d1 = L.seg_new[sg];
        const i64 target = d1 > 0 ? new_block(L, R, sg) : 0;
        const i64 d0 = L.seg_old[sg], c = L.seg_len[sg], start = L.seg_start[sg];
        const i64* P = L.ent_pos + start;
        // in place: items from P[0] on (those before stay); moving: the piece's old items
        i64 lo = P[0], hi = d0;
        if (target != old) {
            lo = pc.k * PIECE_ITEMS;
            hi = min(d0, lo + PIECE_ITEMS);
        }
        const bool first = pc.k == 0;                 // reports the removed values
        for (int f = 0; f < F.nf; ++f) {
            const i64 src = field_address(F, old, f), dst = field_address(F, target, f);
            switch (field_size(F, f)) {
            case 1: remove_block<unsigned char>((const unsigned char*)src, (unsigned char*)dst,
                        d0, d1, lo, hi, P, c, L, start,
                        first ? (unsigned char*)F.out[f] : nullptr); break;
            case 2: remove_block<unsigned short>((const unsigned short*)src,
                        (unsigned short*)dst, d0, d1, lo, hi, P, c, L, start,
                        first ? (unsigned short*)F.out[f] : nullptr); break;
            case 4: remove_block<unsigned int>((const unsigned int*)src, (unsigned int*)dst,
                        d0, d1, lo, hi, P, c, L, start,
                        first ? (unsigned int*)F.out[f] : nullptr); break;
            default: remove_block<unsigned long long>((const unsigned long long*)src,
                        (unsigned long long*)dst, d0, d1, lo, hi, P, c, L, start,
                        first ? (unsigned long long*)F.out[f] : nullptr); break;
            }
        }
        if (threadIdx.x == 0 && first) {
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
    advance_rings(L, R);
}

// ------------------------------------------------------------------ MODE_WIDE removal
// Largest s in [lo, hi] with off[s] <= t (off strictly ascending, off[lo] <= t), by one warp
// (every lane gets it): each step probes 32 points, so that a batch of thousands of pieces
// finds a piece's list in two or three dependent loads rather than a dozen.
__device__ __forceinline__ i64 warp_segment_between(const i64* __restrict__ off, i64 lo, i64 hi,
                                                    i64 t) {
    const int lane = threadIdx.x & 31;
    while (hi - lo > 31) {
        const i64 step = (hi - lo + 32) >> 5;
        const i64 probe = lo + (i64)lane * step;
        const int n = __popc(__ballot_sync(0xFFFFFFFFu, probe <= hi && off[probe] <= t));
        lo += (i64)(n - 1) * step;                     // (the probes at or below t: a prefix)
        hi = min(hi, lo + step - 1);
    }
    const int n = __popc(__ballot_sync(0xFFFFFFFFu, lo + lane <= hi && off[lo + lane] <= t));
    return lo + n - 1;
}

// A delete prepared with MODE_WIDE rewrites every long list that keeps its block in place
// (the short ones: one warp each, warp_remove_segment), cut at multiples of WIDE_ITEMS into
// pieces that run side by side (a hub's list is not one block
// stepping through it, nor copied whole to a fresh block: only the items after its first
// removed one move, and no block is popped from the rings). Survivors move to lower slots,
// so a piece's writes land on its own items and on the last ones of the piece before it
// (as many as the items removed before the piece's start: the piece before it, or several
// when more than WIDE_ITEMS were removed before it). Each block therefore reads its whole
// piece (into shared memory, each survivor at its new slot's offset), marks that in `flags`
// (its piece's word), waits until every piece of the same list whose items its writes land
// on has marked the same, then writes its survivors in one run. Pieces are taken in
// ticket order (header H_TICKET), so a piece waits only on a piece that a running block
// holds and that marks its read before it waits on anything: no block waits on one that
// has not started. The mark of field f of a batch is serial * 16 + f + 1 (serial: the
// host's count of such batches, from 1; the words start at 0 and only grow).
template <typename T>
__device__ void remove_wide_piece(T* O, i64 d0, i64 lo, i64 hi, i64 base, const i64* P, i64 c,
                                  const Layout& L, i64 start, T* out, i64* flags, i64 t,
                                  i64 k, i64 mark, T* buf) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const i64 lo_w = base + (i64)warp * 32 * WIDE_WINDOWS;
    const bool active = lo_w < hi && lo_w + 32 * WIDE_WINDOWS > lo;      // (warp-uniform)
    // removed items before the piece and before its end (none before the first piece's
    // start, all before the last piece's end)
    const i64 j0 = k == 0 ? 0 : warp_lower_bound(P, c, lo);
    const i64 j1 = hi == d0 ? c : warp_lower_bound(P, c, hi);
    const i64 out_lo = lo - j0, out_n = (hi - lo) - (j1 - j0);  // the piece's survivors' slots
    if (active) {                  // survivors to buf at their slot's offset from out_lo
        // (offsets within the warp's 32 * WIDE_WINDOWS items: ints, few registers)
        const int rlo = (int)max((i64)0, lo - lo_w);
        const int rhi = (int)min((i64)(32 * WIDE_WINDOWS), hi - lo_w);
        const T* src = O + lo_w;
        T* dst = buf + (lo_w - out_lo);
        RemovedPositions gone(P, c, warp_lower_bound(P, c, lo_w));
        const unsigned below = (1u << lane) - 1u;
#pragma unroll 1
        for (int b0 = 0; b0 < WIDE_WINDOWS; b0 += WIDE_LOADS) {  // WIDE_LOADS loads in flight
            if (32 * b0 >= rhi) break;
            T v[WIDE_LOADS];
#pragma unroll
            for (int b = 0; b < WIDE_LOADS; ++b) {
                const int ii = 32 * (b0 + b) + lane;
                if (ii >= rlo && ii < rhi) v[b] = src[ii];
            }
#pragma unroll
            for (int b = 0; b < WIDE_LOADS; ++b) {
                const int ii = 32 * (b0 + b) + lane;
                const i64 before = gone.j;               // removed before the window
                const unsigned bits = gone.window(lo_w + ii - lane);
                if (ii >= rlo && ii < rhi && !((bits >> lane) & 1u))
                    dst[ii - before - __popc(bits & below)] = v[b];
            }
        }
    }
    if (out)                       // the removed values of the piece, read before its mark
        for (i64 j = j0 + threadIdx.x; j < j1; j += blockDim.x) {
            const i64 r = L.ent_res[start + j];
            if (r >= 0) out[r] = O[P[j]];
        }
    __syncthreads();
    if (threadIdx.x == 0) {
        if (hi < d0) {             // a later piece of the list waits for this mark
            __threadfence();
            atomicMax((unsigned long long*)&flags[t], (unsigned long long)mark);
        }
        // the pieces before this one (k of them in its list) from the one holding out_lo
        const i64 owner = out_lo / WIDE_ITEMS - P[0] / WIDE_ITEMS;
        for (i64 q = t - (k - owner); q < t; ++q)
            while (*(volatile i64*)&flags[q] < mark) __nanosleep(64);
    }
    __syncthreads();
    for (i64 k = threadIdx.x; k < out_n; k += blockDim.x) O[out_lo + k] = buf[k];
    __syncthreads();               // (buf: the next field's)
}

// small_remove for a batch prepared with MODE_WIDE, in the small path's workspace: one block
// of WIDE_THREADS per piece of the long lists (header H_WIDE_PIECES, listed from WIDE_OFFSET)
// and one per WIDE_WARPS short lists (one warp each, warp_remove_segment), blocks taking
// tickets (H_TICKET: the long lists' pieces first, in order). A long list that keeps its
// block is rewritten by remove_wide_piece, one that moves as small_remove moves it. `flags`:
// at least H_WIDE_PIECES words.
extern "C" __global__ void __launch_bounds__(WIDE_THREADS, 4)
small_remove_wide(i64* ws, RING_PARAMS, int* __restrict__ degree,
                  signed char* __restrict__ size_class, i64* __restrict__ edge_ptr,
                  i64* flags, i64 serial, FIELD_PARAMS) {
    MAKE_FIELDS;
    const Layout L = layout(ws, SMALL_ENTRIES);
    DEFERRED_RINGS;
    const i64 npieces = L.header[H_WIDE_PIECES], nlong = L.header[H_WIDE_LONG];
    const i64* wide_long = ws + WIDE_OFFSET;
    const i64* wide_first = wide_long + SMALL_ENTRIES;
    const i64* wide_short = wide_first + SMALL_ENTRIES;
    __shared__ u64 buf[WIDE_ITEMS];            // a piece's survivors of one field
    __shared__ i64 ticket, piece_sg;
    if (threadIdx.x == 0)
        ticket = (i64)atomicAdd((unsigned long long*)&L.header[H_TICKET], 1ull);
    __syncthreads();
    const i64 t = ticket;
    if (t >= npieces) {                         // WIDE_WARPS short lists, one warp each
        const i64 w = (t - npieces) * WIDE_WARPS + (threadIdx.x >> 5);
        if (w < L.header[H_WIDE_SHORT])
            warp_remove_segment(L, R, F, wide_short[w], degree, size_class, edge_ptr);
    } else {                                    // piece t of a long list
        if (threadIdx.x < 32) {                 // its list, by one warp (see piece_of)
            const i64 extra = npieces - nlong;
            const i64 i = warp_segment_between(wide_first, t > extra ? t - extra : 0,
                                               t < nlong - 1 ? t : nlong - 1, t);
            if (threadIdx.x == 0) piece_sg = i;
        }
        __syncthreads();
        const i64 sg = wide_long[piece_sg];
        const Piece pc = {sg, t - wide_first[piece_sg]};
        const i64 old = L.seg_ptr[sg], d1 = L.seg_new[sg];
        const i64 d0 = L.seg_old[sg], c = L.seg_len[sg], start = L.seg_start[sg];
        const i64* P = L.ent_pos + start;
        const bool first = pc.k == 0;
        if (L.seg_class[sg] < 0 && d1 > 0) {                    // in place, by pieces
            const i64 base = (P[0] / WIDE_ITEMS + pc.k) * WIDE_ITEMS;
            const i64 lo = max(P[0], base), hi = min(d0, base + WIDE_ITEMS);
            for (int f = 0; f < F.nf; ++f) {
                const i64 a = field_address(F, old, f), mark = serial * 16 + f + 1;
                switch (field_size(F, f)) {
                case 1: remove_wide_piece<unsigned char>((unsigned char*)a, d0, lo, hi, base, P,
                            c, L, start, (unsigned char*)F.out[f], flags, t, pc.k, mark,
                            (unsigned char*)buf); break;
                case 2: remove_wide_piece<unsigned short>((unsigned short*)a, d0, lo, hi, base,
                            P, c, L, start, (unsigned short*)F.out[f], flags, t, pc.k, mark,
                            (unsigned short*)buf); break;
                case 4: remove_wide_piece<unsigned int>((unsigned int*)a, d0, lo, hi, base, P,
                            c, L, start, (unsigned int*)F.out[f], flags, t, pc.k, mark,
                            (unsigned int*)buf); break;
                default: remove_wide_piece<unsigned long long>((unsigned long long*)a, d0, lo,
                            hi, base, P, c, L, start, (unsigned long long*)F.out[f], flags, t,
                            pc.k, mark, (unsigned long long*)buf); break;
                }
            }
        } else {                                                // moves or empties
            const i64 target = d1 > 0 ? new_block(L, R, sg) : 0;
            const i64 lo = pc.k * PIECE_ITEMS, hi = min(d0, lo + PIECE_ITEMS);
            for (int f = 0; f < F.nf; ++f) {
                const i64 src = field_address(F, old, f), dst = field_address(F, target, f);
                switch (field_size(F, f)) {
                case 1: remove_block<unsigned char>((const unsigned char*)src,
                            (unsigned char*)dst, d0, d1, lo, hi, P, c, L, start,
                            first ? (unsigned char*)F.out[f] : nullptr); break;
                case 2: remove_block<unsigned short>((const unsigned short*)src,
                            (unsigned short*)dst, d0, d1, lo, hi, P, c, L, start,
                            first ? (unsigned short*)F.out[f] : nullptr); break;
                case 4: remove_block<unsigned int>((const unsigned int*)src,
                            (unsigned int*)dst, d0, d1, lo, hi, P, c, L, start,
                            first ? (unsigned int*)F.out[f] : nullptr); break;
                default: remove_block<unsigned long long>((const unsigned long long*)src,
                            (unsigned long long*)dst, d0, d1, lo, hi, P, c, L, start,
                            first ? (unsigned long long*)F.out[f] : nullptr); break;
                }
            }
            if (threadIdx.x == 0 && first && d1 > 0) {
                edge_ptr[L.seg_vertex[sg]] = target;
                size_class[L.seg_vertex[sg]] = (signed char)L.seg_class[sg];
            }
        }
        if (threadIdx.x == 0 && first) {
            const i64 u = L.seg_vertex[sg];
            degree[u] = (int)d1;
            if (d1 == 0) {
                edge_ptr[u] = 0;
                size_class[u] = -1;
            }
            give_back_block(L, R, sg);
        }
    }
    advance_rings(L, R);
}
