// CUDA kernels that plan a GPU batch on the device with one read-back (hornet/batch/gpu/plan.py).
//
// The pairs are validated while they are packed into sort keys, sorted (batches of at most
// SORT_MAX entries by the kernels below: tiles of SORT_TILE keys sorted in shared memory, then
// merge passes; larger ones by CuPy's sort), then every sorted entry is deduplicated and
// looked up in its source's list in one pass; one scan (fused into batch_ranks and
// batch_scatter: tile sums, the last tile's block scans them, each tile rescans its own) ranks
// the entries the batch keeps, the segments (runs of one source) among them and, for an
// undirected graph, the entries that stand for their edge once; the kept entries are
// compacted, every segment planned (new degree, whether its list moves to a block of another
// size class), and the moving segments listed with their new classes and counted per class.
// Every count the host needs lands in one small `info` array, read back once.
//
// Compiled once per process by cupy.RawModule (NVRTC, -std=c++17); includes segmented.cuh.
// Sizes the host does not know before the read-back (kept entries, segments) are bounded by
// the number of entries E: arrays are sized E and the kernels read the true counts from info.

#include "segmented.cuh"

#define ALL_ONES 0xFFFFFFFFFFFFFFFFull
#define ID_BITS 31
#define MAX_ID 2147483646ll          // hornet.batch.validate.MAX_VERTEX_ID

// info slots (int64 words; plan.py names them the same)
#define I_BAD 0        // nonzero: an id is negative or past MAX_ID
#define I_MAX_ID 1     // largest id of the batch (valid batches)
#define I_LOOPS 2      // self-loop pairs dropped (mirrored batches)
#define I_KEPT 3       // entries the batch changes
#define I_SEGMENTS 4   // sources among them
#define I_ONCE 5       // kept entries with src < dst (undirected: each edge once)
#define I_MOVES 6      // segments whose list moves to a block of another class
#define I_TICKET 7     // batch_ranks: tiles done (the last one scans the tile sums)
#define I_CLASS 8      // 64 words: moving segments per new size class
#define I_FREED 72     // slots of the blocks that moving or emptied lists give back

#define SORT_TILE 1024               // keys a block sorts in shared memory (plan.py: SORT_TILE)
#define SORT_THREADS 256
#define SCAN_THREADS 256
#define SCAN_ITEMS 8
#define SCAN_TILE (SCAN_THREADS * SCAN_ITEMS)   // entries a block ranks (plan.py: SCAN_TILE)

__device__ __forceinline__ i64 class_of(i64 d, int min_class) {
    if (d <= 0) return -1;
    i64 k = d == 1 ? 0 : 64 - __clzll(d - 1);
    return k < min_class ? min_class : k;
}

// Keys (src << 31 | dst); mirror: pair i -> entries 2i (s, d) and 2i + 1 (d, s), self-loops ->
// ALL_ONES (sorted last, counted in info[I_LOOPS]). Ids outside [0, MAX_ID] set info[I_BAD];
// the largest id goes to info[I_MAX_ID] (one atomic per warp).
template <typename Id>
__global__ void batch_keys(const Id* __restrict__ s, const Id* __restrict__ d, i64 n, int mirror,
                           i64* __restrict__ info, u64* __restrict__ keys) {
    i64 hi = 0, bad = 0, loops = 0;
    const u64 mask = (1ull << ID_BITS) - 1ull;
    GRID_STRIDE(i, n) {
        const i64 a = (i64)s[i], b = (i64)d[i];
        bad |= (a < 0) | (b < 0) | (a > MAX_ID) | (b > MAX_ID);
        hi = a > hi ? a : hi;
        hi = b > hi ? b : hi;
        const u64 u = (u64)a & mask, v = (u64)b & mask;
        if (mirror) {
            if (a == b) {
                keys[2 * i] = ALL_ONES;
                keys[2 * i + 1] = ALL_ONES;
                ++loops;
            } else {
                keys[2 * i] = (u << ID_BITS) | v;
                keys[2 * i + 1] = (v << ID_BITS) | u;
            }
        } else {
            keys[i] = (u << ID_BITS) | v;
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        hi = max(hi, (i64)__shfl_down_sync(0xFFFFFFFFu, hi, o));
        bad |= __shfl_down_sync(0xFFFFFFFFu, bad, o);
        loops += __shfl_down_sync(0xFFFFFFFFu, loops, o);
    }
    if ((threadIdx.x & 31) == 0) {
        if (bad) atomicOr((u64*)&info[I_BAD], 1ull);
        atomicMax(&info[I_MAX_ID], hi);
        if (loops) atomicAdd((u64*)&info[I_LOOPS], (u64)loops);
    }
}

// Per sorted entry: keep[i] = 1 when it is the first of its (src, dst), not a self-loop, and
// absent from src's list (inserting) or present (deleting); at[i] = its insertion point
// (inserting) or position (deleting). Sources at or past table_len have no list.
extern "C" __global__ void batch_find(const u64* __restrict__ keys, i64 n,
                                      const int* __restrict__ degree,
                                      const i64* __restrict__ edge_ptr, i64 table_len,
                                      int inserting, unsigned char* __restrict__ keep,
                                      i64* __restrict__ at) {
    const u64 mask = (1ull << ID_BITS) - 1ull;
    GRID_STRIDE(i, n) {
        const u64 k = keys[i];
        bool kept = false;
        i64 p = 0;
        if (k != ALL_ONES && (i == 0 || keys[i - 1] != k)) {
            const i64 u = (i64)(k >> ID_BITS), v = (i64)(k & mask);
            const i64 deg = u < table_len ? (i64)degree[u] : 0;
            bool found = false;
            if (deg > 0) {
                const int* lst = (const int*)edge_ptr[u];
                p = lower_bound(lst, deg, v);
                found = p < deg && (i64)lst[p] == v;
            }
            kept = inserting ? !found : found;
        }
        keep[i] = kept;
        at[i] = p;
    }
}

// Keys [t * SORT_TILE, (t + 1) * SORT_TILE) of block t sorted in place (bitonic; a short
// last tile is padded with ALL_ONES, which only self-loops share and which sort last anyway).
// One block of SORT_THREADS threads per tile; thread t holds keys q * SORT_THREADS + t
// (q < SORT_PER_THREAD) in registers: partners closer than 32 are in the same warp
// (shuffles), partners SORT_THREADS or more apart in the same thread; only the distances in
// between go through shared memory.
#define SORT_PER_THREAD (SORT_TILE / SORT_THREADS)
#if SORT_TILE != 4 * SORT_THREADS
#error "batch_tile_sort holds four keys a thread"
#endif
// a <= b when ascending, a >= b otherwise
__device__ __forceinline__ void sort_pair(u64& a, u64& b, bool ascending) {
    const u64 lo = a < b ? a : b, hi = a < b ? b : a;
    a = ascending ? lo : hi;
    b = ascending ? hi : lo;
}
extern "C" __global__ void __launch_bounds__(SORT_THREADS)
batch_tile_sort(u64* __restrict__ keys, i64 n) {
    __shared__ u64 t[SORT_TILE];
    const int tid = threadIdx.x;
    const i64 base = (i64)blockIdx.x * SORT_TILE;
    const i64 len = min((i64)SORT_TILE, n - base);
    u64 a[SORT_PER_THREAD];
#pragma unroll
    for (int q = 0; q < SORT_PER_THREAD; ++q) {
        const int i = q * SORT_THREADS + tid;
        a[q] = i < len ? keys[base + i] : ALL_ONES;
    }
    for (int k = 2; k <= SORT_TILE; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            if (j >= SORT_THREADS) {                      // within the thread
                // (each distance spelt out, so that the keys stay in registers instead of
                // an indexed local array)
                if (j == 2 * SORT_THREADS) {
                    sort_pair(a[0], a[2], (tid & k) == 0);
                    sort_pair(a[1], a[3], ((SORT_THREADS + tid) & k) == 0);
                } else {
                    sort_pair(a[0], a[1], (tid & k) == 0);
                    sort_pair(a[2], a[3], ((2 * SORT_THREADS + tid) & k) == 0);
                }
                continue;
            }
            if (j >= 32) {                                // through shared memory
#pragma unroll
                for (int q = 0; q < SORT_PER_THREAD; ++q) t[q * SORT_THREADS + tid] = a[q];
                __syncthreads();
            }
#pragma unroll
            for (int q = 0; q < SORT_PER_THREAD; ++q) {
                const int i = q * SORT_THREADS + tid;
                const u64 p = j >= 32 ? t[i ^ j] : __shfl_xor_sync(0xFFFFFFFFu, a[q], j);
                // the lower of an ascending pair and the upper of a descending one keep the
                // smaller key
                const bool smaller = ((i & j) == 0) == ((i & k) == 0);
                a[q] = smaller ? (p < a[q] ? p : a[q]) : (p > a[q] ? p : a[q]);
            }
            if (j >= 32) __syncthreads();
        }
    }
#pragma unroll
    for (int q = 0; q < SORT_PER_THREAD; ++q) {
        const int i = q * SORT_THREADS + tid;
        if (i < len) keys[base + i] = a[q];
    }
}

// One merge pass: the sorted runs [2k * width, (2k + 1) * width) and [(2k + 1) * width,
// (2k + 2) * width) of `in` (cut at n) merged into the same range of `out`. Every key finds its
// place by one binary search in the other run (left keys go before equal right keys).
extern "C" __global__ void batch_merge_pass(const u64* __restrict__ in, u64* __restrict__ out,
                                            i64 n, i64 width) {
    GRID_STRIDE(i, n) {
        const i64 lo = i & ~(2 * width - 1);
        const i64 mid = min(lo + width, n), hi = min(lo + 2 * width, n);
        const u64 x = in[i];
        i64 p;
        if (i < mid) p = i + lower_bound(in + mid, hi - mid, x);
        else p = i - mid + lo + upper_bound(in + lo, mid - lo, x);
        out[p] = x;
    }
}

// Exclusive scan of int64 values over the block (every thread passes one; blockDim.x a
// multiple of 32); *total (shared) gets the sum. Every thread of the block must call it.
__device__ __forceinline__ i64 block_exclusive_scan64(i64 x, i64* warp_sums, i64* total) {
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
    __syncthreads();                      // warp_sums and *total may be reused after this
    return r;
}

// Two rank words per entry, scanned together: rank[i] = kept | head << 32 and once[i] = whether
// it stands for its edge once (mirror and src < dst). A kept entry is a segment head when no
// kept entry of its source comes before it: a backward walk to the previous kept entry or the
// source's first entry (the walks of a source's kept entries cover disjoint ranges: O(E) in
// all). One block of SCAN_THREADS per tile of SCAN_TILE entries; tile_sum[2t], tile_sum[2t + 1]
// get tile t's sums, and the last block to finish (a ticket in info[I_TICKET], zero at the
// plan's start) turns them into their exclusive scans.
extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
batch_ranks(const u64* __restrict__ keys, const unsigned char* keep, i64 n, int mirror,
            i64* __restrict__ rank, i64* __restrict__ once, i64* tile_sum, i64 tiles,
            i64* __restrict__ info) {
    __shared__ i64 warp_sums[32];
    __shared__ i64 total;
    __shared__ bool last;
    const i64 base = (i64)blockIdx.x * SCAN_TILE;
    i64 sum = 0, sum_once = 0;
    for (int q = 0; q < SCAN_ITEMS; ++q) {
        const i64 i = base + q * SCAN_THREADS + threadIdx.x;
        if (i >= n) break;
        i64 r = 0, c = 0;
        if (keep[i]) {
            const u64 k = keys[i];
            const u64 src = k >> ID_BITS;
            bool head = true;
            for (i64 j = i - 1; j >= 0; --j) {
                if ((keys[j] >> ID_BITS) != src) break;
                if (keep[j]) { head = false; break; }
            }
            c = mirror && src < (k & ((1ull << ID_BITS) - 1ull));
            r = 1 | ((i64)head << 32);
        }
        rank[i] = r;
        once[i] = c;
        sum += r;
        sum_once += c;
    }
    block_exclusive_scan64(sum, warp_sums, &total);
    if (threadIdx.x == 0) tile_sum[2 * blockIdx.x] = total;
    block_exclusive_scan64(sum_once, warp_sums, &total);
    if (threadIdx.x == 0) {
        tile_sum[2 * blockIdx.x + 1] = total;
        __threadfence();
        const u64 done = atomicAdd((u64*)&info[I_TICKET], 1ull);
        last = done == (u64)(tiles - 1);
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    for (int word = 0; word < 2; ++word) {
        i64 carry = 0;
        for (i64 b = 0; b < tiles; b += SCAN_THREADS) {
            const i64 i = b + threadIdx.x;
            const i64 v = i < tiles ? ((volatile i64*)tile_sum)[2 * i + word] : 0;
            const i64 ex = block_exclusive_scan64(v, warp_sums, &total);
            if (i < tiles) tile_sum[2 * i + word] = carry + ex;
            carry += total;
        }
    }
}

// The kept entries compacted in order (src, dst, at), each segment's first entry, and the
// entries with src < dst (undirected: the batch's change, each edge once); res (optional:
// nullptr or one word per kept entry) gets each entry's row in the change (its rank among the
// entries once when once_src is given, -1 for the others; else its own rank); the thread of the
// last entry writes info[I_KEPT], info[I_SEGMENTS] and info[I_ONCE] from the scans' totals.
// One block of SCAN_THREADS per tile of SCAN_TILE entries (the tiles of batch_ranks, whose
// tile_sum holds each tile's offsets): the tile's rank words are scanned in shared memory (each
// thread SCAN_ITEMS consecutive entries), then the entries are read and written striped (entry
// q * SCAN_THREADS + thread), so that neighbouring threads read and write neighbouring words.
extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
batch_scatter(const u64* __restrict__ keys, const unsigned char* __restrict__ keep,
              const i64* __restrict__ at_all, const i64* __restrict__ rank,
              const i64* __restrict__ once, const i64* __restrict__ tile_sum, i64 n,
              i64* __restrict__ info, int* __restrict__ src, int* __restrict__ dst,
              i64* __restrict__ at, i64* __restrict__ seg_start, int* __restrict__ once_src,
              int* __restrict__ once_dst, i64* __restrict__ res) {
    __shared__ i64 tile[SCAN_TILE];            // rank words, then inclusive ranks
    __shared__ i64 tile_once[SCAN_TILE];       // once flags, then inclusive once ranks
    __shared__ unsigned char flags[SCAN_TILE]; // kept | head << 1 | once << 2
    __shared__ i64 warp_sums[32];
    __shared__ i64 total;
    const i64 m = 0xFFFFFFFFll;
    const u64 mask = (1ull << ID_BITS) - 1ull;
    const i64 base = (i64)blockIdx.x * SCAN_TILE;
    for (int q = 0; q < SCAN_ITEMS; ++q) {
        const int o = q * SCAN_THREADS + threadIdx.x;
        const bool in = base + o < n;
        const i64 r = in ? rank[base + o] : 0;
        const i64 c = in ? once[base + o] : 0;
        tile[o] = r;
        tile_once[o] = c;
        flags[o] = (unsigned char)((r & 1) | (((r >> 32) & 1) << 1) | (c << 2));
    }
    __syncthreads();
    const int own = threadIdx.x * SCAN_ITEMS;
    i64 sum = 0, sum_once = 0;
    for (int q = 0; q < SCAN_ITEMS; ++q) {
        sum += tile[own + q];
        sum_once += tile_once[own + q];
    }
    i64 r = tile_sum[2 * blockIdx.x] + block_exclusive_scan64(sum, warp_sums, &total);
    i64 ro = tile_sum[2 * blockIdx.x + 1] + block_exclusive_scan64(sum_once, warp_sums, &total);
    for (int q = 0; q < SCAN_ITEMS; ++q) {     // inclusive ranks, in place
        r += tile[own + q];
        ro += tile_once[own + q];
        tile[own + q] = r;
        tile_once[own + q] = ro;
    }
    __syncthreads();
    for (int q = 0; q < SCAN_ITEMS; ++q) {
        const int o = q * SCAN_THREADS + threadIdx.x;
        const i64 i = base + o;
        if (i >= n) break;
        const i64 ri = tile[o], roi = tile_once[o];
        const int f = flags[o];
        if (i == n - 1) {
            info[I_KEPT] = ri & m;
            info[I_SEGMENTS] = ri >> 32;
            info[I_ONCE] = roi;
        }
        if (!(f & 1)) continue;                // not kept
        const u64 k = keys[i];
        const int u = (int)(k >> ID_BITS), v = (int)(k & mask);
        const i64 j = (ri & m) - 1;
        src[j] = u;
        dst[j] = v;
        at[j] = at_all[i];
        if (f & 2) seg_start[(ri >> 32) - 1] = j;
        i64 row = j;
        if (once_src != nullptr) {
            row = -1;
            if (f & 4) {
                row = roi - 1;
                once_src[row] = u;
                once_dst[row] = v;
            }
        }
        if (res != nullptr) res[j] = row;
    }
}

// One thread per segment (info[I_SEGMENTS] of them; the grid is sized for the bound): its
// source, length, degree and pointer now (also in seg_ptr, the segment's block after the
// batch, which batch_place rewrites for the lists that move), new degree, and whether the
// list moves (inserting == 1: it outgrows its block; 0, deleting: it keeps edges but under a
// quarter of its block and a smaller class holds them; 2, deleting with lists kept in their
// blocks: never; 3, deleting with the lists refitted: it keeps edges and a smaller class
// holds them). The slots of the blocks that moving or emptied lists give back are summed in
// info[I_FREED]. The moving segments are listed in moved (their indices) and
// classes (their new classes), in no particular order (one atomic per warp on info[I_MOVES]),
// and counted per class in info[I_CLASS + class] (shared bins, one atomic per class and
// block).
extern "C" __global__ void batch_plan(const int* __restrict__ src,
                                      const i64* __restrict__ seg_start, i64* __restrict__ info,
                                      const int* __restrict__ degree,
                                      const signed char* __restrict__ size_class,
                                      const i64* __restrict__ edge_ptr, i64 table_len,
                                      int inserting, int min_class, int* __restrict__ sources,
                                      i64* __restrict__ seg_len, i64* __restrict__ old_deg,
                                      i64* __restrict__ new_deg, i64* __restrict__ old_ptr,
                                      i64* __restrict__ moved, i64* __restrict__ classes,
                                      i64* __restrict__ seg_ptr) {
    __shared__ unsigned int bins[64];
    __shared__ unsigned long long freed_slots;
    for (int c = threadIdx.x; c < 64; c += blockDim.x) bins[c] = 0;
    if (threadIdx.x == 0) freed_slots = 0;
    __syncthreads();
    const i64 ns = info[I_SEGMENTS], m = info[I_KEPT];
    // every thread of a warp runs the same number of rounds (the atomics below are warp-wide)
    const i64 stride = (i64)blockDim.x * gridDim.x;
    const i64 first = (i64)blockIdx.x * blockDim.x + (threadIdx.x & ~31);
    for (i64 base = first; base < ns; base += stride) {
        const i64 k = base + (threadIdx.x & 31);
        bool r = false;
        i64 fit = -1;
        if (k < ns) {
            const i64 b = seg_start[k];
            const i64 c = (k + 1 < ns ? seg_start[k + 1] : m) - b;
            const int v = src[b];
            const bool listed = (i64)v < table_len;
            const i64 d0 = listed ? (i64)degree[v] : 0;
            const int cls = listed ? (int)size_class[v] : -1;
            const i64 cap = cls >= 0 ? (1ll << cls) : 0ll;
            sources[k] = v;
            seg_len[k] = c;
            old_deg[k] = d0;
            const i64 p0 = listed ? edge_ptr[v] : 0;
            old_ptr[k] = p0;
            seg_ptr[k] = p0;                   // batch_place rewrites the moving ones
            const i64 d1 = inserting == 1 ? d0 + c : d0 - c;
            fit = class_of(d1, min_class);
            r = inserting == 1 ? d1 > cap
                               : (inserting == 0 ? d1 > 0 && 4 * d1 < cap && fit < cls
                                                 : inserting == 3 && d1 > 0 && fit < cls);
            if ((r || d1 == 0) && cap) atomicAdd(&freed_slots, (unsigned long long)cap);
            new_deg[k] = d1;
            if (r) atomicAdd(&bins[fit], 1u);
        }
        const unsigned ballot = __ballot_sync(0xFFFFFFFFu, r);
        if (ballot) {
            const int lane = threadIdx.x & 31;
            i64 slot = 0;
            if (lane == 0) slot = (i64)atomicAdd((u64*)&info[I_MOVES], (u64)__popc(ballot));
            slot = __shfl_sync(0xFFFFFFFFu, slot, 0) + __popc(ballot & ((1u << lane) - 1u));
            if (r) {
                moved[slot] = k;
                classes[slot] = fit;
            }
        }
    }
    __syncthreads();
    for (int c = threadIdx.x; c < 64; c += blockDim.x)
        if (bins[c]) atomicAdd((u64*)&info[I_CLASS + c], (u64)bins[c]);
    if (threadIdx.x == 0 && freed_slots) atomicAdd((u64*)&info[I_FREED], (u64)freed_slots);
}


// After the allocation: moving segment i (moves of them: segment moved[i], new class
// move_class[i]) takes a distinct block of its class from pool, where class k's blocks start
// at next_slot[k] (one atomic per class present in a warp), and writes it over the segment's
// entry of seg_ptr (batch_plan's copy of its old pointer).
extern "C" __global__ void batch_place(const i64* __restrict__ moved,
                                       const i64* __restrict__ move_class, i64 moves,
                                       unsigned long long* __restrict__ next_slot,
                                       const i64* __restrict__ pool, i64* __restrict__ seg_ptr) {
    GRID_STRIDE(i, moves) {
        const i64 k = move_class[i];
        seg_ptr[moved[i]] = pool[class_slot(next_slot, k)];
    }
}

// The batch into the vertex table, its lists already rewritten: segment k (ns of them, of
// source sources[k]) gets degree new_deg[k]; a list that moved (seg_ptr[k] != old_ptr[k]) its
// new block and class; a list left empty no block and class -1. freed[k] is the old block the
// segment gives back (moved or emptied; 0 otherwise, and 0 where it had none).
extern "C" __global__ void batch_commit(const int* __restrict__ sources,
                                        const i64* __restrict__ new_deg,
                                        const i64* __restrict__ old_ptr,
                                        const i64* __restrict__ seg_ptr, i64 ns, int min_class,
                                        int* __restrict__ degree,
                                        signed char* __restrict__ size_class,
                                        i64* __restrict__ edge_ptr, i64* __restrict__ freed) {
    GRID_STRIDE(k, ns) {
        const int v = sources[k];
        const i64 d = new_deg[k];
        const i64 p0 = old_ptr[k], p1 = seg_ptr[k];
        degree[v] = (int)d;
        i64 f = 0;
        if (d == 0) {
            edge_ptr[v] = 0;
            size_class[v] = -1;
            f = p0;
        } else if (p1 != p0) {
            edge_ptr[v] = p1;
            size_class[v] = (signed char)class_of(d, min_class);
            f = p0;
        }
        freed[k] = f;
    }
}


// ---- a mixed batch: an insert and a delete planned side by side against one vertex table
// (hornet/batch/planned_mixed.py). Sources and entries of each plan are sorted by (src, dst).

// out[0] += the number of the insert plan's kept entries (src, dst: info[I_KEPT] of them; the
// grid is sized for bound) whose key is among the delete's sorted keys (keys, n of them):
// edges the insert adds and the delete names, which the plans against the old table miss.
extern "C" __global__ void batch_common(const int* __restrict__ src, const int* __restrict__ dst,
                                        const i64* __restrict__ info, i64 bound,
                                        const u64* __restrict__ keys, i64 n,
                                        i64* __restrict__ out) {
    const i64 m = min(bound, info[I_KEPT]);
    i64 hits = 0;
    GRID_STRIDE(i, m) {
        const u64 k = ((u64)(unsigned)src[i] << ID_BITS) | (u64)(unsigned)dst[i];
        const i64 p = lower_bound(keys, n, k);
        hits += p < n && keys[p] == k;
    }
    if (hits) atomicAdd((u64*)out, (u64)hits);
}

// For segment k of one plan (source sources[k], ns of them): the length c of the other plan's
// segment of the same source (other, other_len: on segments, sorted; 0 when it has none),
// added (sign 1) to or subtracted (sign -1) from value[k].
extern "C" __global__ void batch_overlap(const int* __restrict__ sources, i64 ns,
                                         const int* __restrict__ other,
                                         const i64* __restrict__ other_len, i64 other_ns,
                                         int sign, i64* __restrict__ value) {
    GRID_STRIDE(k, ns) {
        const int v = sources[k];
        const i64 j = lower_bound(other, other_ns, v);
        if (j < other_ns && other[j] == v) value[k] += sign * other_len[j];
    }
}

// The insert's insertion points (src, at: m entries) into the lists after the delete's
// removal: at[j] less the delete's positions (del_src, del_at: dm entries, ascending by
// (src, position)) in the same list before it.
extern "C" __global__ void batch_shift(const int* __restrict__ src, i64* __restrict__ at, i64 m,
                                       const int* __restrict__ del_src,
                                       const i64* __restrict__ del_at, i64 dm) {
    GRID_STRIDE(j, m) {
        const int u = src[j];
        const i64 a = at[j];
        i64 lo = 0, hi = dm;                   // first delete entry of source u
        while (lo < hi) {
            const i64 mid = (lo + hi) >> 1;
            if (del_src[mid] < u) lo = mid + 1; else hi = mid;
        }
        const i64 first = lo;
        hi = dm;                               // first one of u at or past position a
        while (lo < hi) {
            const i64 mid = (lo + hi) >> 1;
            if (del_src[mid] == u && del_at[mid] < a) lo = mid + 1; else hi = mid;
        }
        at[j] = a - (lo - first);
    }
}

// degree[sources[k]] = old_deg[k] + seg_len[k] (ns segments): the insert's lists after both
// halves (old_deg: their degrees after the delete's removal).
extern "C" __global__ void batch_degrees(const int* __restrict__ sources,
                                         const i64* __restrict__ old_deg,
                                         const i64* __restrict__ seg_len, i64 ns,
                                         int* __restrict__ degree) {
    GRID_STRIDE(k, ns) degree[sources[k]] = (int)(old_deg[k] + seg_len[k]);
}
