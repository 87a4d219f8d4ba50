// CUDA kernels of DynamicBFS (hornet/algos/bfs/dynamic.py describes the steps; the driver is
// hornet/algos/bfs/dynamic_gpu.py).
//
// One update is one launch of dbfs_update whose blocks are all resident (a cooperative launch,
// or a plain one of the same grid), and the phases (counts, marking passes, seeds, relaxation
// rounds, repair, orphans) are separated by a grid barrier instead of kernel boundaries, so no
// list length or level range crosses to the host. All control decisions (loop ends, round
// counts) are taken from counters read right after a barrier, or noted by the last block to
// arrive at it, which every block sees alike.
//
// Graphs are read through the pointer view (vertex v's list: deg[v] int32 at device address
// ptr[v]). Per-vertex state: level (int32, -1 unreached; compared as unsigned, so unreached is
// the largest value and atomicMin lowers it), cnt (parents on the level above), old (level
// before the update, as unsigned; 0 at rest), flag (0, CHANGED, MARKED, ORPHAN; 0 at rest),
// parent.
//
// Load balance (thread / warp / grid): the vertices of a phase are dealt to threads, one a
// lane. A vertex with at most `small_max` list entries (most of them in sparse and power-law
// graphs) is read by its own thread, UNROLL entries and their levels loaded before any is
// used; the others are read by the whole warp, one after the other, in passes of CHUNK
// entries (every lane loads UNROLL entries, one memory round trip per pass). Lists longer
// than CHUNK are not read by the warp that meets them: they are cut into chunks, appended to
// a chunk list, and after a barrier every warp of the grid takes chunks, so a hub costs
// deg / CHUNK passes spread over the whole device. Dealing the vertices to lanes (rather
// than one vertex a warp) lets a phase of many short lists finish in one or two memory
// round trips per thread instead of one chain of round trips per vertex a warp holds.
//
// Lists (changed vertices, two frontiers, orphans, seeds, chunks) are appended through atomic
// counters, one atomic per warp for all its lanes that append (warp-aggregated: a batch of
// 10^5 pairs would otherwise queue 10^5 atomics on one address; a relaxation round's seeds,
// one atomic per block). Counters that are reused within an update rotate over three slots
// (a slot is reset one use ahead of its next use, after everyone has read it). Two counter sets
// alternate between updates: an update zeroes the other set for the next one and leaves its
// own for the statistics.

typedef long long i64;
typedef unsigned long long u64;

#define CHANGED 1
#define MARKED 2
#define ORPHAN 3
#define SEEDED (-0x40000000)   // cnt of a marked vertex seeded while marked (seed_early)
#define DONE (-0x20000000)     // cnt of a marked vertex whose list step 1 read or cut
#define FULL_MASK 0xffffffffu
#define UNROLL 8
#define TUNROLL 4        // entries one thread loads before using any
#define CHUNK (32 * UNROLL)
#define NO_LEVEL 0xffffffffu

// counter set layout (u64 words): every counter on its own 128-byte line (C_STRIDE words),
// so that the atomics on one (a frontier's length) do not queue behind those on another (the
// changed list's length) in the same cache line
#define C_STRIDE 16
#define C_CHANGED (0 * C_STRIDE)    // length of `changed` (marked vertices first, then re-levelled)
#define C_MARKED (1 * C_STRIDE)     // marked vertices
#define C_SEEDS (2 * C_STRIDE)      // seeds appended after the inserted pairs' own (statistic:
                                    // all seeds, the pairs' added at exit)
#define C_SCANNED (3 * C_STRIDE)    // adjacency entries read
#define C_ORPHANS (4 * C_STRIDE)    // length of `orphans`
#define C_LOW (5 * C_STRIDE)        // 0xffffffff - lowest seed level (atomicMax; one per
                                    // block and phase, from the block's own bounds)
#define C_HIGH (6 * C_STRIDE)       // highest seed level (likewise)
#define C_LEVELS (7 * C_STRIDE)     // relaxation rounds run
#define C_FRONT (8 * C_STRIDE)      // 3 slots: frontier lengths, by round % 3
#define C_CHUNKS (11 * C_STRIDE)    // 3 slots: chunk list lengths, by use % 3
#define C_SNAP (14 * C_STRIDE)      // [length of `changed`, of the chunk list] when the last
                                    // block arrived at a grid barrier (sync(true))
#define C_WORDS (16 * C_STRIDE)

// params (u64 device addresses; dynamic_gpu.PARAM_NAMES gives the order)
#define P_LEVEL 0
#define P_CNT 1
#define P_FLAG 2
#define P_OLD 3
#define P_PARENT 4
#define P_CHANGED 5
#define P_FRONT0 6
#define P_FRONT1 7
#define P_ORPHANS 8
#define P_SEEDS 9
#define P_CHUNKS 10
#define P_COUNTERS 11    // two sets of C_WORDS
#define P_BARRIER 12     // u32: arrived at 0, error at 2, generation at BAR_GEN (its own
                         // 128-byte line: the waiting blocks poll it while the others arrive)
#define P_TIMES 13       // 0, or u64 [count, (phase, %globaltimer) per grid barrier ...]

#define TIMES_CAP 255    // (phase, time) records the timeline holds

// phases of an update (the timeline's tags)
#define PH_COUNTS 1
#define PH_MARK 2
#define PH_SEEDS 3
#define PH_RELAX 4
#define PH_REPAIR 5
#define PH_ORPHANS 6
#define PH_END 7

#define BAR_GEN 32
#define SPIN_LIMIT (1LL << 32)   // clock cycles a barrier waits before it reports an error

#define WARP_LOOP(i, count)                                                                \
    for (i64 i = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < (i64)(count);      \
         i += ((i64)gridDim.x * blockDim.x) >> 5)

#define GRID_ITEMS(k, count)                                                               \
    for (i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x; k < (i64)(count);            \
         k += (i64)gridDim.x * blockDim.x)

__device__ __forceinline__ unsigned lanes_below_mask() {
    unsigned lt;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
    return lt;
}

__device__ __forceinline__ void pair_at(const int* s, const int* d, i64 k, int undirected,
                                        int& a, int& b) {
    if (undirected) {
        i64 i = k >> 1;
        if (k & 1) { a = d[i]; b = s[i]; } else { a = s[i]; b = d[i]; }
    } else {
        a = s[k]; b = d[k];
    }
}

__device__ __forceinline__ int warp_sum_int(int v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}

__device__ __forceinline__ unsigned warp_min_u32(unsigned v) {
    for (int o = 16; o > 0; o >>= 1) {
        unsigned w = __shfl_xor_sync(FULL_MASK, v, o);
        v = w < v ? w : v;
    }
    return v;
}

// state reads go to L2 (other blocks write these arrays between barriers)
__device__ __forceinline__ int ld(const int* p) { return __ldcg(p); }
__device__ __forceinline__ u64 ld(const u64* p) { return __ldcg(p); }

// construction: cnt[x] += 1 for every edge u -> x with level[x] == level[u] + 1
extern "C" __global__ void dbfs_initial_counts(const int* deg, const i64* ptr, i64 n,
                                               const int* level, int* cnt) {
    const int lane = threadIdx.x & 31;
    WARP_LOOP(u, n) {
        int lu = level[u];
        if (lu < 0) continue;
        int d = deg[u];
        const int* row = (const int*)ptr[u];
        for (int j = lane; j < d; j += 32) {
            int x = row[j];
            if (level[x] == lu + 1) atomicAdd(&cnt[x], 1);
        }
    }
}

struct Update {
    int* level; int* cnt; int* flag; unsigned* old; int* parent;
    int* changed; int* front[2]; int* orphans; u64* seeds; int2* chunks;
    u64* C;               // this update's counters
    unsigned* bar;
    const int* deg; const i64* ptr; const int* ideg; const i64* iptr;
    int undirected, want_parent;
    int round, use;       // frontier and chunk-list slot rotation (identical in every block)
    int lane;
    int small_max;        // lists of at most this many entries are read by one thread
    unsigned backoff_ns;  // a waiting block sleeps this long between polls of the barrier
    u64 scanned;          // adjacency entries this thread has read (added at exit)
    u64 direct_seeds;     // seeds of inserted pairs this lane wrote for its warp (at exit)
    i64 seed_base;        // appended seeds start after the inserted pairs' own
    u64* times;           // timeline (P_TIMES) or null
    int phase, tick;      // the current phase; records written (block 0, thread 0)
    unsigned* block_levels;  // shared: [lowest, highest] seed level this block noted since
                             // its last grid barrier (NO_LEVEL, 0: none)

    // the statistics summed over the block, one atomic each a block (every thread of the
    // block calls this: the kernel's exits are grid-uniform)
    __device__ void flush_stats() {
        __shared__ u64 acc[2];
        if (threadIdx.x == 0) { acc[0] = 0; acc[1] = 0; }
        __syncthreads();
        u64 a = scanned, b = direct_seeds;
        for (int o = 16; o > 0; o >>= 1) {
            a += __shfl_xor_sync(FULL_MASK, a, o);
            b += __shfl_xor_sync(FULL_MASK, b, o);
        }
        if (lane == 0 && a) atomicAdd(&acc[0], a);
        if (lane == 0 && b) atomicAdd(&acc[1], b);
        __syncthreads();
        if (threadIdx.x == 0 && acc[0]) atomicAdd(&C[C_SCANNED], acc[0]);
        if (threadIdx.x == 0 && acc[1]) atomicAdd(&C[C_SEEDS], acc[1]);
    }

    // the timeline: the phase that ends here and the time (block 0's thread 0, when asked)
    __device__ void stamp() {
        if (times && blockIdx.x == 0 && threadIdx.x == 0 && tick < TIMES_CAP) {
            u64 t;
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
            times[1 + 2 * tick] = (u64)phase;
            times[2 + 2 * tick] = t;
            ++tick;
            times[0] = (u64)tick;
        }
    }

    // ------------------------------------------------------------------ grid barrier
    // snap: the last block to arrive notes the lengths of `changed` and of the current chunk
    // list in C_SNAP before it releases the others (nobody appends then), so that every
    // block reads the same lengths after the barrier while the fastest already append again
    __device__ void sync(bool snap = false) {
        __syncthreads();
        if (threadIdx.x == 0) {
            // the block's seed levels go to the grid's bounds before it arrives (one atomic
            // each a block, not one a warp: every warp of a batch's first phase notes levels)
            const unsigned hi = block_levels[1];
            if (hi) {
                const unsigned lo = block_levels[0];
                if (0xffffffffull - lo > ld(&C[C_LOW])) atomicMax(&C[C_LOW], 0xffffffffull - lo);
                if ((u64)hi > ld(&C[C_HIGH])) atomicMax(&C[C_HIGH], (u64)hi);
                block_levels[0] = NO_LEVEL;
                block_levels[1] = 0;
            }
            volatile unsigned* gen = bar + BAR_GEN;
            unsigned g = *gen;
            __threadfence();
            if (atomicAdd(bar, 1u) == gridDim.x - 1) {
                if (snap) {
                    C[C_SNAP] = ld(&C[C_CHANGED]);
                    C[C_SNAP + 1] = ld(&C[C_CHUNKS + C_STRIDE * (use % 3)]);
                }
                atomicExch(bar, 0u);
                __threadfence();
                atomicAdd(bar + BAR_GEN, 1u);
            } else {
                long long t0 = clock64();
                while (*gen == g) {
                    if (backoff_ns) __nanosleep(backoff_ns);
                    if (clock64() - t0 > SPIN_LIMIT) { atomicExch(bar + 2, 1u); break; }
                }
            }
            __threadfence();
        }
        __syncthreads();
        stamp();
    }

    __device__ bool first_thread() const { return blockIdx.x == 0 && threadIdx.x == 0; }

    // ------------------------------------------------------------------ list appends
    // Warp-aggregated: the lanes that call together (whatever branch brought them here) take
    // their slots with one atomic of the lowest of them.
    __device__ u64 slots(u64* counter) {
        const unsigned m = __activemask();
        const int leader = __ffs(m) - 1;
        u64 base = 0;
        if (lane == leader) base = atomicAdd(counter, (u64)__popc(m));
        base = __shfl_sync(m, base, leader);
        return base + __popc(m & lanes_below_mask());
    }

    __device__ void push(int* list, u64* counter, int v) { list[slots(counter)] = v; }

    // the lowest and highest seed level, kept per block in shared memory (a shared atomic
    // only where the value moves) and added to the grid's at the next grid barrier
    __device__ void note_levels(unsigned lo, unsigned hi) {
        if (lo < *(volatile unsigned*)&block_levels[0]) atomicMin(&block_levels[0], lo);
        if (hi > *(volatile unsigned*)&block_levels[1]) atomicMax(&block_levels[1], hi);
    }

    // a seed appended (v on level t)
    __device__ void push_seed(unsigned t, int v) {
        const unsigned m = __activemask();
        const unsigned lo = __reduce_min_sync(m, t);
        const unsigned hi = __reduce_max_sync(m, t);
        if (lane == __ffs(m) - 1) note_levels(lo, hi);
        seeds[seed_base + slots(&C[C_SEEDS])] = ((u64)t << 32) | (unsigned)v;
    }

    // inserted pair k's own seed slot: v on level t when `ok`, else none (a key no level
    // matches); no counter
    __device__ void pair_seed(i64 k, bool ok, unsigned t, int v) {
        seeds[k] = ok ? (((u64)t << 32) | (unsigned)v) : ~0ull;
        const unsigned m = __activemask();
        const unsigned got = __ballot_sync(m, ok);
        const unsigned lo = __reduce_min_sync(m, ok ? t : NO_LEVEL);
        const unsigned hi = __reduce_max_sync(m, ok ? t : 0u);
        if (got && lane == __ffs(m) - 1) {
            direct_seeds += (u64)__popc(got);
            note_levels(lo, hi);
        }
    }

    // marked w (old level 1) seeded on level 2 while marking (see early_seeds in the kernel):
    // cnt[w] (0 since w was marked) holds SEEDED until the seed step skips w's list
    __device__ void seed_early(int w) {
        push_seed(2u, w);
        cnt[w] = SEEDED;
    }

    // x (level lx, its last parent gone) moves down: appended to `changed`, whose new
    // entries are the next marking pass's items
    __device__ void mark(int x, int lx) {
        flag[x] = MARKED;
        old[x] = (unsigned)lx;
        push(changed, &C[C_CHANGED], x);
    }

    // The seeds of level nl (seed list [0, ns)): each lowers its vertex to nl, which then
    // joins the next frontier and, the first time, the changed list (as in lowered_into).
    // Two keys a thread, loaded together; the slots of both lists are taken once a block
    // (shared counters, then one atomic each a block): a large batch's seeds would otherwise
    // queue thousands of warp atomics on the two list lengths. The loop is block-uniform
    // (every thread of a block makes the same iterations: it has __syncthreads).
    __device__ void apply_seeds(i64 ns, unsigned nl, int* next, u64* ncount) {
        __shared__ unsigned s_count[2];
        __shared__ u64 s_base[2];
        const i64 stride = (i64)gridDim.x * blockDim.x;
        for (i64 b0 = (i64)blockIdx.x * blockDim.x; b0 < ns; b0 += 2 * stride) {
            const i64 k = b0 + threadIdx.x;
            const u64 key0 = k < ns ? ld(&seeds[k]) : ~0ull;
            const u64 key1 = k + stride < ns ? ld(&seeds[k + stride]) : ~0ull;
            int v[2] = {-1, -1};
            bool first[2] = {false, false};
            unsigned o[2] = {0u, 0u};
            const u64 keys[2] = {key0, key1};
#pragma unroll
            for (int q = 0; q < 2; ++q) {
                if ((unsigned)(keys[q] >> 32) != nl) continue;
                const int x = (int)(keys[q] & 0xffffffffull);
                o[q] = atomicMin((unsigned*)&level[x], nl);
                if (o[q] > nl) v[q] = x;
            }
#pragma unroll
            for (int q = 0; q < 2; ++q)
                if (v[q] >= 0) first[q] = atomicCAS(&flag[v[q]], 0, CHANGED) == 0;
            if (threadIdx.x == 0) {
                s_count[0] = 0;
                s_count[1] = 0;
            }
            __syncthreads();
            const unsigned pn = (v[0] >= 0) + (v[1] >= 0);
            const unsigned pc = first[0] + first[1];
            const unsigned on = pn ? atomicAdd(&s_count[0], pn) : 0u;
            const unsigned oc = pc ? atomicAdd(&s_count[1], pc) : 0u;
            __syncthreads();
            if (threadIdx.x == 0) {
                s_base[0] = s_count[0] ? atomicAdd(ncount, (u64)s_count[0]) : 0ull;
                s_base[1] = s_count[1] ? atomicAdd(&C[C_CHANGED], (u64)s_count[1]) : 0ull;
            }
            __syncthreads();
            unsigned jn = 0, jc = 0;
#pragma unroll
            for (int q = 0; q < 2; ++q) {
                if (v[q] < 0) continue;
                next[s_base[0] + on + jn++] = v[q];
                if (first[q]) {
                    old[v[q]] = o[q];
                    cnt[v[q]] = 0;
                    changed[s_base[1] + oc + jc++] = v[q];
                }
            }
        }
    }

    // x lowered from o in a relaxation round: appended to the next frontier (the slot's
    // atomic and the flag's CAS in flight together) and, the first time, listed as changed
    // with the level before the update; its parent count is recounted in the repair. Marked
    // vertices (flag MARKED) keep the old level noted when marked. Every relaxation round
    // lowers to one level, so a vertex is lowered at most once a round, and only its first
    // lowering (the one that takes flag 0 -> CHANGED, rounds being ordered by grid barriers)
    // sees the level before the update.
    __device__ void lowered_into(int* next, u64* ncount, int x, unsigned o) {
        const unsigned m = __activemask();
        const int leader = __ffs(m) - 1;
        u64 base = 0;
        if (lane == leader) base = atomicAdd(ncount, (u64)__popc(m));
        const int f = atomicCAS(&flag[x], 0, CHANGED);
        base = __shfl_sync(m, base, leader);
        next[base + __popc(m & lanes_below_mask())] = x;
        if (f == 0) {
            old[x] = o;
            cnt[x] = 0;
            push(changed, &C[C_CHANGED], x);
        }
    }

    // ------------------------------------------------------------------ adjacency passes
    // one warp pass over row[j0, j1) (j1 - j0 <= CHUNK): f(x, level[x]) for every entry
    template <class F>
    __device__ void pass(const int* row, int j0, int j1, F f) {
        int xs[UNROLL];
        int ls[UNROLL];
#pragma unroll
        for (int k = 0; k < UNROLL; ++k) {
            int j = j0 + k * 32 + lane;
            xs[k] = j < j1 ? row[j] : -1;
        }
#pragma unroll
        for (int k = 0; k < UNROLL; ++k) ls[k] = xs[k] >= 0 ? ld(&level[xs[k]]) : -1;
#pragma unroll
        for (int k = 0; k < UNROLL; ++k)
            if (xs[k] >= 0) f(xs[k], ls[k]);
    }

    // one thread's pass over row[0, d): f(x, level[x]) for every entry, UNROLL entries and
    // their levels loaded before any is used
    template <class F>
    __device__ void tpass(const int* row, int d, F f) {
        for (int j0 = 0; j0 < d; j0 += TUNROLL) {
            int xs[TUNROLL];
            int ls[TUNROLL];
#pragma unroll
            for (int k = 0; k < TUNROLL; ++k) xs[k] = j0 + k < d ? row[j0 + k] : -1;
#pragma unroll
            for (int k = 0; k < TUNROLL; ++k) ls[k] = xs[k] >= 0 ? ld(&level[xs[k]]) : -1;
#pragma unroll
            for (int k = 0; k < TUNROLL; ++k)
                if (xs[k] >= 0) f(xs[k], ls[k]);
        }
    }

    __device__ int list_degree(int v, int in_list) const {
        return in_list ? ideg[v] : deg[v];
    }

    __device__ const int* list_row(int v, int in_list) const {
        return (const int*)(in_list ? iptr[v] : ptr[v]);
    }

    // warp-uniform: v's list (in_list: in-neighbours) is read now by this warp when short,
    // else cut into chunks for the chunk pass of the current phase
    template <class R>
    __device__ void visit(int v, int in_list, R range) {
        int d = list_degree(v, in_list);
        if (d <= 0) return;
        if (lane == 0) scanned += (u64)d;
        if (d <= CHUNK) {
            range(v, in_list, 0, d);
            return;
        }
        int nch = (d + CHUNK - 1) / CHUNK;
        u64 base = 0;
        if (lane == 0) base = atomicAdd(&C[C_CHUNKS + C_STRIDE * (use % 3)], (u64)nch);
        base = __shfl_sync(FULL_MASK, base, 0);
        for (int c = lane; c < nch; c += 32) chunks[base + c] = make_int2(v, (c << 1) | in_list);
    }

    // Items i in [0, n) of a phase, dealt to the lanes of the grid (lane l of warp w takes
    // w + l * warps, w + l * warps + 32 * warps, ...: a short phase still uses every warp):
    // v = get(i) (-1: nothing to read); v's list (in_list: in-neighbours) is read by v's thread
    // (tr(v, in_list, d, row): row its list) when it has at most small_max entries, else by the whole warp
    // (visit(v, in_list, wr), chunked when long). Warp-uniform.
    template <class G, class T, class W>
    __device__ void visit_items(i64 n, int in_list, G get, T tr, W wr) {
        const i64 w0 = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
        const i64 nw = ((i64)gridDim.x * blockDim.x) >> 5;
        for (i64 base = 0; base + w0 < n; base += 32 * nw) {
            const i64 i = base + w0 + (i64)lane * nw;
            const int v = i < n ? get(i) : -1;
            int d = 0;
            const int* row = nullptr;
            if (v >= 0) {              // both loads in flight together
                d = list_degree(v, in_list);
                row = list_row(v, in_list);
            }
            if (d > 0 && d <= small_max) {
                scanned += (u64)d;
                tr(v, in_list, d, row);
            }
            unsigned big = __ballot_sync(FULL_MASK, d > small_max);
            while (big) {
                const int src = __ffs(big) - 1;
                big &= big - 1;
                visit(__shfl_sync(FULL_MASK, v, src), in_list, wr);
            }
        }
    }

    // End of a phase whose items called visit(): barrier, then the chunks (if any) by every
    // warp, then a barrier again (unless `last`). The next use's chunk counter is reset here,
    // two barriers after its last reader.
    template <class R>
    __device__ void finish(R range, bool last = false) {
        if (first_thread()) C[C_CHUNKS + C_STRIDE * ((use + 1) % 3)] = 0;
        sync();
        i64 nch = (i64)ld(&C[C_CHUNKS + C_STRIDE * (use % 3)]);
        ++use;
        if (nch == 0) return;
        WARP_LOOP(i, nch) {
            int2 e = __ldcg(&chunks[i]);
            int in_list = e.y & 1;
            int j0 = (e.y >> 1) * CHUNK;
            int d = list_degree(e.x, in_list);
            range(e.x, in_list, j0, min(d, j0 + CHUNK));
        }
        if (!last) sync();
    }
};

// One batch: deletions ds -> dd (nd directed pairs), insertions is -> id (ni pairs), both
// already applied to the graph; nv: vertices (no loop runs more rounds; one that would is
// stopped and reported in barrier[2]). mode: bit 0 undirected, bit 1 parents wanted, bit 2
// selects the counter set (the other one is zeroed for the next update), bits 8-15 the
// longest list one thread reads (small_max; 0: every list by a warp), bits 16-23 the grid
// barrier's polling pause in units of 8 ns (0: none).
__device__ __forceinline__ void dbfs_update_body(
        const u64* __restrict__ P, const int* deg, const i64* ptr, const int* ideg,
        const i64* iptr, const int* ds, const int* dd, const int* is, const int* id, i64 nd,
        i64 ni, i64 nv, int mode) {
    Update U;
    U.level = (int*)P[P_LEVEL];
    U.cnt = (int*)P[P_CNT];
    U.flag = (int*)P[P_FLAG];
    U.old = (unsigned*)P[P_OLD];
    U.parent = (int*)P[P_PARENT];
    U.changed = (int*)P[P_CHANGED];
    U.front[0] = (int*)P[P_FRONT0];
    U.front[1] = (int*)P[P_FRONT1];
    U.orphans = (int*)P[P_ORPHANS];
    U.seeds = (u64*)P[P_SEEDS];
    U.chunks = (int2*)P[P_CHUNKS];
    u64* sets = (u64*)P[P_COUNTERS];
    U.C = sets + ((mode >> 2) & 1) * C_WORDS;
    u64* Cnext = sets + (((mode >> 2) & 1) ^ 1) * C_WORDS;
    U.bar = (unsigned*)P[P_BARRIER];
    U.times = (u64*)P[P_TIMES];
    U.deg = deg; U.ptr = ptr; U.ideg = ideg; U.iptr = iptr;
    U.undirected = mode & 1;
    U.want_parent = (mode >> 1) & 1;
    U.small_max = (mode >> 8) & 0xff;
    U.backoff_ns = ((mode >> 16) & 0xff) * 8;
    U.round = 0;
    U.use = 0;
    U.lane = threadIdx.x & 31;
    U.scanned = 0;
    U.direct_seeds = 0;
    U.seed_base = ni;
    U.tick = 0;
    U.phase = 0;
    __shared__ unsigned block_levels[2];
    if (threadIdx.x == 0) {
        block_levels[0] = NO_LEVEL;
        block_levels[1] = 0;
    }
    __syncthreads();
    U.block_levels = block_levels;
    U.stamp();
    U.phase = PH_COUNTS;
    const int und = U.undirected;
    const int wp = U.want_parent;
    const int lane = U.lane;
    int* level = U.level;
    int* cnt = U.cnt;
    int* flag = U.flag;
    u64* C = U.C;
    const bool del_only = nd > 0 && ni == 0;
    const bool ins_only = ni > 0 && nd == 0;
    // deletions alone in an undirected graph: a marked vertex of level 1 (its edge to the
    // source deleted) that meets an unmarked level-1 neighbour while marking is seeded on
    // level 2 there and then, its seed's list read saved (no neighbour of it is on level 0
    // any more, and the level-1 ones that are not marked stay on level 1).
    // Invariant the shortcut needs: when a level-1 vertex's list is read for it, every
    // level-1 vertex of this update that will be marked already has flag MARKED. Level-1
    // vertices are marked in step 1 only (their one parent is the source, which is never
    // marked, so no marking pass reaches them; only a deleted pair (source, v) takes it),
    // and step 1 ends with a grid barrier; so the lists of level-1 vertices are read in the
    // marking passes, never in step 1 itself (see mark_now's caller): a level-1 neighbour
    // that step 1 marks later than the read would otherwise look unmarked, and the vertex
    // would be seeded on level 2 through a neighbour that is no longer on level 1.
    const bool early_seeds = del_only && U.undirected;
    // marking (step 2): marked w (old level lw) takes one parent from child x (level lx);
    // early: a level-1 w with an unmarked neighbour on level 1 (see SEEDED below)
    auto mark_child = [&](int lw, int x, int lx, bool& early) {
        if (lx == lw + 1 && ld(&flag[x]) != MARKED && atomicSub(&cnt[x], 1) == 1)
            U.mark(x, lw + 1);
        if (early_seeds && !early && lw == 1 && lx == 1 && ld(&flag[x]) != MARKED)
            early = true;
    };
    auto mark_range = [&](int w, int, int j0, int j1) {
        const int lw = (int)ld((const int*)&U.old[w]);
        bool early = false;
        U.pass(U.list_row(w, 0), j0, j1, [&](int x, int lx) { mark_child(lw, x, lx, early); });
        const unsigned found = __ballot_sync(FULL_MASK, early);
        if (found && lane == __ffs(found) - 1) U.seed_early(w);
    };
    auto mark_trange = [&](int w, int, int d, const int* row) {
        const int lw = (int)ld((const int*)&U.old[w]);
        bool early = false;
        U.tpass(row, d, [&](int x, int lx) { mark_child(lw, x, lx, early); });
        if (early) U.seed_early(w);
    };
    // deletions alone: b, marked in step 1 by the thread that took its last parent, is
    // marked-processed by that thread at once (its short list read, a longer one cut into
    // chunks for the first marking pass); cnt[b] = DONE tells the first pass. Never called
    // for a level-1 b when early_seeds is on (the invariant above), so the read takes no
    // early seed (lb >= 2, or no shortcut at all) and cnt[b] stays DONE until the first pass
    // resets it: no decrement reaches it either, b's parents having all given theirs.
    auto mark_now = [&](int b, int lb) {
        U.mark(b, lb);
        cnt[b] = DONE;
        const int d = deg[b];
        const int* row = (const int*)ptr[b];
        U.scanned += (u64)d;
        if (d <= U.small_max) {
            if (d > 0) mark_trange(b, 0, d, row);
            return;
        }
        const int nch = (d + CHUNK - 1) / CHUNK;
        const u64 base = atomicAdd(&C[C_CHUNKS + C_STRIDE * (U.use % 3)], (u64)nch);
        for (int c = 0; c < nch; ++c) U.chunks[base + c] = make_int2(b, c << 1);
    };

    // ---- 1. counts at the old levels: deleted pairs take a parent, inserted ones give one.
    // Deletions alone: the decrement that takes a vertex's last parent marks it. Insertions
    // alone: no level moves before the seeds, so inserted pairs that shorten a path seed here.
    // Only pairs on the BFS DAG (level[a] + 1 == level[b]) change a count, and only pairs with
    // level[a] + 1 < level[b] seed: every other pair of the batch stops here.
    if (blockIdx.x == 0)
        for (int w = threadIdx.x; w < C_WORDS; w += blockDim.x) Cnext[w] = 0;
    // One thread an edge of the batch (undirected: both its directed pairs, 2i and 2i + 1,
    // from one read of the two levels).
    const i64 nde = und ? nd >> 1 : nd;
    const i64 nie = und ? ni >> 1 : ni;
    GRID_ITEMS(e, nde + nie) {
        const bool del = e < nde;
        const i64 i = del ? e : e - nde;
        const int s = del ? ds[i] : is[i];
        const int t = del ? dd[i] : id[i];
        const int ls = level[s];
        const int lt = level[t];
        // the pair a -> b (levels la, lb), k-th of its kind
        auto count_pair = [&](int b, int la, int lb, i64 k) {
            if (la >= 0 && la + 1 == lb) {
                if (del) {
                    int o = atomicSub(&cnt[b], 1);
                    if (del_only && o == 1) {
                        if (early_seeds && lb == 1)
                            U.mark(b, lb);          // read in the first marking pass
                        else
                            mark_now(b, lb);
                    }
                } else {
                    atomicAdd(&cnt[b], 1);
                }
            }
            if (ins_only)
                U.pair_seed(k, la >= 0 && (unsigned)(la + 1) < (unsigned)lb, la + 1, b);
        };
        count_pair(t, ls, lt, und ? 2 * i : i);
        if (und) count_pair(s, lt, ls, 2 * i + 1);
    }
    U.sync(nd > 0);
    // ---- 1b. deletions and insertions together: heads of deleted pairs left without parent
    if (nd > 0 && !del_only) {
        GRID_ITEMS(k, nd) {
            int a, b;
            pair_at(ds, dd, k, und, a, b);
            int lb = ld(&level[b]);
            if (lb > 0 && ld(&cnt[b]) <= 0 && atomicCAS(&flag[b], 0, MARKED) == 0)
                U.mark(b, lb);
        }
        U.sync(true);
    }

    // ---- 2. marking passes: each marked w (old level lw) becomes unreached and takes one
    // parent from each child (out-neighbour on lw + 1 not marked); a child left with none is
    // marked (appended to `changed`). The order in which marked vertices are processed does
    // not change the marked set, so a pass takes the vertices marked before its barrier
    // (changed[lo, hi)) and, at the same time, the chunks of the long lists the previous
    // pass met (chunk list [clo, chi), one list for the whole step): one grid barrier a pass.
    if (nd > 0) {
        U.phase = PH_MARK;
        i64 lo = 0, clo = 0;
        int passes = 0;
        while (true) {
            const i64 hi = (i64)ld(&C[C_SNAP]);
            const i64 chi = (i64)ld(&C[C_SNAP + 1]);
            if (hi == lo && chi == clo) break;
            if (++passes > nv + 2) {
                if (U.first_thread()) atomicExch(U.bar + 2, 2u);
                break;
            }
            U.visit_items(hi - lo, 0, [&](i64 i) {
                const int w = ld(&U.changed[lo + i]);
                level[w] = -1;
                if (wp) U.parent[w] = -1;
                if (del_only && lo == 0) {          // the first pass: step 1's marks
                    const int c = ld(&cnt[w]);
                    cnt[w] = 0;
                    return c == DONE ? -1 : w;      // DONE: read (or cut) in step 1
                }
                cnt[w] = 0;
                return w;
            }, mark_trange, mark_range);
            WARP_LOOP(i, chi - clo) {
                const int2 e = __ldcg(&U.chunks[clo + i]);
                const int j0 = (e.y >> 1) * CHUNK;
                mark_range(e.x, 0, j0, min(U.list_degree(e.x, 0), j0 + CHUNK));
            }
            lo = hi;
            clo = chi;
            U.sync(true);
        }
        ++U.use;
        // ---- 3. seeds of the marked vertices (changed[0:nm]): 1 + the lowest level among
        // their in-neighbours (marked ones are unreached now; a chunked list gives one seed
        // per chunk, the lowest wins). With insertions: their seeds, at the levels after
        // marking.
        U.phase = PH_SEEDS;
        const i64 nm = (i64)ld(&C[C_CHANGED]);
        if (U.first_thread()) C[C_MARKED] = (u64)nm;
        if (ni > 0) {
            GRID_ITEMS(k, ni) {
                int a, b;
                pair_at(is, id, k, und, a, b);
                int la = ld(&level[a]);
                U.pair_seed(k, la >= 0 && (unsigned)(la + 1) < (unsigned)ld(&level[b]), la + 1,
                            b);
            }
        }
        auto seed_range = [&](int v, int, int j0, int j1) {
            unsigned best = NO_LEVEL;
            U.pass(U.list_row(v, 1), j0, j1, [&](int, int lu) {
                if ((unsigned)lu < best) best = (unsigned)lu;
            });
            best = warp_min_u32(best);
            if (lane == 0 && best != NO_LEVEL) U.push_seed(best + 1, v);
        };
        auto seed_trange = [&](int v, int, int d, const int* row) {
            unsigned best = NO_LEVEL;
            U.tpass(row, d, [&](int, int lu) {
                if ((unsigned)lu < best) best = (unsigned)lu;
            });
            if (best != NO_LEVEL) U.push_seed(best + 1, v);
        };
        U.visit_items(nm, 1, [&](i64 i) {
            const int v = ld(&U.changed[i]);
            if (ld(&cnt[v]) != SEEDED) return v;
            cnt[v] = 0;            // seeded while marked; the repair counts from zero
            return -1;
        }, seed_trange, seed_range);
        U.finish(seed_range);
    }

    // ---- 4. relaxation rounds: round `cur` expands the frontier of level cur (out-neighbours
    // above cur + 1 drop to cur + 1 and form the next frontier), and the seeds of level cur + 1
    // lower their vertex (one thread a seed) into the next frontier too. The first round
    // (cur = lowest seed level - 1) has only seeds. A frontier entry whose level fell further
    // since is skipped (expanded at its lower level). Ends past the highest seed level with
    // an empty frontier. Only vertices whose level drops are ever listed.
    int levels_run = 0;
    U.phase = PH_RELAX;
    // seeds: the inserted pairs' own slots [0, ni), then the appended ones (levels >= 1, so
    // the highest is 0 only when there is none)
    const i64 ns = ni + (i64)ld(&C[C_SEEDS]);
    if (ld(&C[C_HIGH]) > 0) {
        unsigned cur = 0xffffffffu - (unsigned)ld(&C[C_LOW]) - 1;    // seed levels are >= 1
        const unsigned highest = (unsigned)ld(&C[C_HIGH]);
        while (true) {
            const int r = U.round;
            const i64 nf = (i64)ld(&C[C_FRONT + C_STRIDE * (r % 3)]);
            if (U.first_thread()) C[C_FRONT + C_STRIDE * ((r + 2) % 3)] = 0;
            const int* front = U.front[r & 1];
            int* next = U.front[(r + 1) & 1];
            u64* ncount = &C[C_FRONT + C_STRIDE * ((r + 1) % 3)];
            const unsigned nl = cur + 1;
            auto relax = [&](int x, int lx) {
                if ((unsigned)lx > nl) {
                    unsigned o = atomicMin((unsigned*)&level[x], nl);
                    if (o > nl) U.lowered_into(next, ncount, x, o);
                }
            };
            auto range = [&](int w, int, int j0, int j1) {
                U.pass(U.list_row(w, 0), j0, j1, relax);
            };
            auto trange = [&](int, int, int d, const int* row) { U.tpass(row, d, relax); };
            U.apply_seeds(ns, nl, next, ncount);
            U.visit_items(nf, 0, [&](i64 i) {
                const int w = ld(&front[i]);
                return (unsigned)ld(&level[w]) == cur ? w : -1;
            }, trange, range);
            U.finish(range);
            ++U.round;
            if (nf > 0) ++levels_run;
            if (ld(ncount) == 0 && nl >= highest) break;
            if (U.round > 2 * nv + 4) {
                if (U.first_thread()) atomicExch(U.bar + 2, 2u);
                break;
            }
            ++cur;
        }
    }

    // ---- 5. repair: vertices whose level was set recount their parents (and take one);
    // their out-neighbours outside that set adjust their counts by the difference of old and
    // new level (marked vertices' old share was removed while marking) and, where the
    // vertex was their parent and no longer is, become orphans. Deleted pairs a -> b with a
    // b's parent and b's level unchanged make b an orphan too.
    U.phase = PH_REPAIR;
    const i64 nc = (i64)ld(&C[C_CHANGED]);
    if (nc == 0 && !(wp && nd > 0)) {
        if (U.first_thread()) C[C_LEVELS] = (u64)levels_run;
        U.flush_stats();
        U.phase = PH_END;
        U.stamp();
        return;
    }
    if (wp) {
        GRID_ITEMS(k, nd) {
            int a, b;
            pair_at(ds, dd, k, und, a, b);
            if (ld(&level[b]) > 0 && ld(&U.parent[b]) == a && ld(&flag[b]) == 0 &&
                atomicCAS(&flag[b], 0, ORPHAN) == 0)
                U.push(U.orphans, &C[C_ORPHANS], b);
        }
    }
    // in-neighbours on lv - 1 (directed graphs' in-lists): counted, one kept as candidate
    auto in_parent = [&](int lv, int& c, int& cand) {
        return [&, lv](int u, int lu) {
            if (lu == lv - 1) { ++c; cand = u; }
        };
    };
    // out-neighbour x of v (new level lv, old ov; -1 for none): count adjustments, orphans
    auto out_child = [&](int v, int lv, int ov, int x, int lx) {
        int fx = ld(&flag[x]);
        if ((fx != 0 && fx != ORPHAN) || lx <= 0) return;
        bool now = lv >= 0 && lv + 1 == lx;
        bool before = ov >= 0 && ov + 1 == lx;
        if (now != before) atomicAdd(&cnt[x], now ? 1 : -1);
        if (wp && !now && fx == 0 && ld(&U.parent[x]) == v &&
            atomicCAS(&flag[x], 0, ORPHAN) == 0)
            U.push(U.orphans, &C[C_ORPHANS], x);
    };
    auto repair_range = [&](int v, int in_list, int j0, int j1) {
        const int lv = ld(&level[v]);
        int c = 0;
        int cand = -1;
        if (in_list) {
            U.pass(U.list_row(v, 1), j0, j1, in_parent(lv, c, cand));
        } else {
            const int ov = ld(&flag[v]) == MARKED ? -1 : (int)ld((const int*)&U.old[v]);
            U.pass(U.list_row(v, 0), j0, j1, [&](int x, int lx) {
                if (und && lv > 0 && lx == lv - 1) { ++c; cand = x; }
                out_child(v, lv, ov, x, lx);
            });
            if (!und) return;
        }
        if (lv <= 0) return;
        c = warp_sum_int(c);
        unsigned found = __ballot_sync(FULL_MASK, cand >= 0);
        if (wp && found && lane == __ffs(found) - 1) U.parent[v] = cand;
        if (lane == 0 && c) atomicAdd(&cnt[v], c);
    };
    auto repair_trange = [&](int v, int in_list, int d, const int* row) {
        const int lv = ld(&level[v]);
        int c = 0;
        int cand = -1;
        if (in_list) {
            U.tpass(row, d, in_parent(lv, c, cand));
        } else {
            const int ov = ld(&flag[v]) == MARKED ? -1 : (int)ld((const int*)&U.old[v]);
            U.tpass(row, d, [&](int x, int lx) {
                if (und && lv > 0 && lx == lv - 1) { ++c; cand = x; }
                out_child(v, lv, ov, x, lx);
            });
            if (!und) return;
        }
        if (lv <= 0) return;
        if (wp && cand >= 0) U.parent[v] = cand;
        if (c) atomicAdd(&cnt[v], c);
    };
    if (!und) {
        U.visit_items(nc, 1, [&](i64 i) {
            const int v = ld(&U.changed[i]);
            const int lv = ld(&level[v]);
            if (wp && lv <= 0) U.parent[v] = -1;
            return lv > 0 ? v : -1;
        }, repair_trange, repair_range);
        U.visit_items(nc, 0, [&](i64 i) { return ld(&U.changed[i]); }, repair_trange,
                      repair_range);
    } else {
        U.visit_items(nc, 0, [&](i64 i) {
            const int v = ld(&U.changed[i]);
            if (wp && ld(&level[v]) <= 0) U.parent[v] = -1;
            return v;
        }, repair_trange, repair_range);
    }
    U.finish(repair_range);

    // ---- 6. flags and old levels back to zero; orphans take an in-neighbour on the level
    // above (one exists: their count is positive)
    U.phase = PH_ORPHANS;
    const i64 no = wp ? (i64)ld(&C[C_ORPHANS]) : 0;
    GRID_ITEMS(k, nc + no) {
        int v = k < nc ? ld(&U.changed[k]) : ld(&U.orphans[k - nc]);
        flag[v] = 0;
        U.old[v] = 0;
    }
    if (U.first_thread()) C[C_LEVELS] = (u64)levels_run;
    if (no == 0) {
        U.flush_stats();
        U.phase = PH_END;
        U.stamp();
        return;
    }
    auto orphan_range = [&](int x, int, int j0, int j1) {
        const int want = ld(&level[x]) - 1;
        int cand = -1;
        U.pass(U.list_row(x, 1), j0, j1, [&](int u, int lu) {
            if (lu == want) cand = u;
        });
        unsigned found = __ballot_sync(FULL_MASK, cand >= 0);
        if (found && lane == __ffs(found) - 1) U.parent[x] = cand;
    };
    auto orphan_trange = [&](int x, int, int d, const int* row) {
        const int want = ld(&level[x]) - 1;
        int cand = -1;
        U.tpass(row, d, [&](int u, int lu) {
            if (lu == want) cand = u;
        });
        if (cand >= 0) U.parent[x] = cand;
    };
    U.visit_items(no, 1, [&](i64 i) { return ld(&U.orphans[i]); }, orphan_trange,
                  orphan_range);
    U.finish(orphan_range, true);
    U.flush_stats();
    U.phase = PH_END;
    U.stamp();
}

// The update kernel at two register budgets: 4 resident blocks of 256 threads per SM (64
// registers a thread, some spilled) or 3 (85 registers, next to none spilled);
// dynamic_gpu.GPUState.kernel_name picks one.
#define DBFS_KERNEL(name, min_blocks)                                                      \
    extern "C" __global__ void __launch_bounds__(256, min_blocks)                          \
    name(const u64* __restrict__ P, const int* deg, const i64* ptr, const int* ideg,       \
         const i64* iptr, const int* ds, const int* dd, const int* is, const int* id,      \
         i64 nd, i64 ni, i64 nv, int mode) {                                               \
        dbfs_update_body(P, deg, ptr, ideg, iptr, ds, dd, is, id, nd, ni, nv, mode);       \
    }

DBFS_KERNEL(dbfs_update, 4)
DBFS_KERNEL(dbfs_update_r85, 3)
