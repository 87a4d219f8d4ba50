// Device state, helpers and the per-update context (struct Update: grid barrier, list
// appends, work queue, adjacency passes) of the DynamicBFS update kernel
// (hornet/algos/bfs/dynamic.cu, which describes the design).
#pragma once

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
// work queues of the asynchronous phases (dbfs_update_async; see Update::drain): queue q's counters
// at C_Q0 + q * Q_SET: head (slots claimed), tail (slots appended), pending (items appended
// and not yet finished, plus one token a warp until the warp has appended its own share;
// starts at Q_TOKENS, set right by the kernel's first thread), overflow (an append found the
// queue full)
#define C_Q0 (16 * C_STRIDE)
#define Q_SET (4 * C_STRIDE)
#define Q_HEAD 0
#define Q_TAIL (1 * C_STRIDE)
#define Q_PEND (2 * C_STRIDE)
#define Q_OVER (3 * C_STRIDE)
#define Q_MARK 0                    // marking
#define Q_RELAX 1                   // seeds and relaxation
#define Q_REPAIR 2                  // repair
#define Q_COUNT 3
#define C_QLEVELS (28 * C_STRIDE)   // [highest, 0xffffffff - lowest] level the relaxation set
#define C_ONE_BLOCK (29 * C_STRIDE) // 1: the update went on in block 0 alone after its counts
#define C_WORDS (30 * C_STRIDE)
#define Q_TOKENS (1ull << 40)       // pending's value at rest (a warp count is added at start)

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
#define P_QUEUE 14       // u64 work queue, QSENT at rest
#define P_QCAP 15        // its length (a value, not an address)
#define P_QCAP_RELAX 16  // the slots the relaxation may use (a value; at most P_QCAP)
#define P_QTAG 17        // int: the last chase pass + 1 that listed a vertex (0 at rest)

// work queue keys: a vertex (bits 0-31) with its level (bits 32-61, saturated at Q_LMAX) or,
// with QCHUNK, a chunk of its list (chunk index in bits 32-61; QIN: of its in-list)
#define QSENT 0xffffffffffffffffull
#define QCHUNK (1ull << 63)
#define QIN (1ull << 62)
#define Q_LMAX 0x3fffffffu

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

// GRID_ITEMS over the blocks that take part in the update's current phase (nb: gridDim.x,
// or 1 once the update continues on block 0 alone, see Update::nblk)
#define ITEMS_OF(k, count, nb)                                                             \
    for (i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x; k < (i64)(count);            \
         k += (i64)(nb) * blockDim.x)

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

struct Update {
    int* level; int* cnt; int* flag; unsigned* old; int* parent; int* qtag;
    int* changed; int* orphans; u64* seeds; int2* chunks;
    int* front0; int* front1;   // two fields, not an array: an index into a member array known
                                // only at run time keeps the whole struct in local memory
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
    int async_mode;       // dbfs_update_async: marking, relaxation and repair through the queue
    unsigned* block_levels;  // shared: [lowest, highest] seed level this block noted since
                             // its last grid barrier (NO_LEVEL, 0: none)
    u64* queue;           // work queue of the asynchronous phases (QSENT at rest)
    u64 qcap;             // the slots the queue in use may take
    u64 qcap_all, qcap_relax;   // P_QCAP, P_QCAP_RELAX
    u64* qc;              // the counters of the queue in use (C + C_Q0 + q * Q_SET)
    unsigned lmin, lmax;  // lowest and highest level this thread set in the relaxation
    unsigned nblk;        // blocks taking part: gridDim.x, or 1 when the update continues on
                          // block 0 alone (the others have left; see the kernel's "one
                          // block" step): the loops deal items over these blocks only, and
                          // a barrier is then the block's own (__syncthreads)

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
        if (nblk == 1) {
            // one block takes part: its own barrier; thread 0 notes what the last block to
            // arrive would (seed levels, snapshot), made visible before the block goes on
            if (threadIdx.x == 0) {
                const unsigned hi = block_levels[1];
                if (hi) {
                    const unsigned lo = block_levels[0];
                    if (0xffffffffull - lo > ld(&C[C_LOW])) C[C_LOW] = 0xffffffffull - lo;
                    if ((u64)hi > ld(&C[C_HIGH])) C[C_HIGH] = (u64)hi;
                    block_levels[0] = NO_LEVEL;
                    block_levels[1] = 0;
                }
                if (snap) {
                    C[C_SNAP] = ld(&C[C_CHANGED]);
                    C[C_SNAP + 1] = ld(&C[C_CHUNKS + C_STRIDE * (use % 3)]);
                }
                __threadfence();
            }
            __syncthreads();
            stamp();
            return;
        }
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
            if (atomicAdd(bar, 1u) == nblk - 1) {
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

    // marked w (old level 1) settled on level 2 while marking with `ones` parents found in
    // the part of its list just read (see `settle` in the kernel)
    __device__ void settle(int w, int ones) {
        atomicAdd(&cnt[w], ones);
        level[w] = 2;
    }

    // x (level lx, its last parent gone) moves down: appended to `changed`, whose new
    // entries are the next marking pass's items
    __device__ void mark(int x, int lx) {
        flag[x] = MARKED;
        old[x] = (unsigned)lx;
        push(changed, &C[C_CHANGED], x);
        if (async_mode) qpush((u64)(unsigned)x);
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
        const i64 stride = (i64)nblk * blockDim.x;
        for (i64 b0 = (i64)blockIdx.x * blockDim.x; b0 < ns; b0 += 2 * stride) {
            const i64 k = b0 + threadIdx.x;
            const u64 key0 = k < ns ? ld(&seeds[k]) : ~0ull;
            const u64 key1 = k + stride < ns ? ld(&seeds[k + stride]) : ~0ull;
            int v[2] = {-1, -1};
            int f[2] = {MARKED, MARKED};
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
                if (v[q] >= 0) f[q] = atomicCAS(&flag[v[q]], 0, CHANGED);
            if (threadIdx.x == 0) {
                s_count[0] = 0;
                s_count[1] = 0;
            }
            __syncthreads();
            const unsigned pn = (v[0] >= 0) + (v[1] >= 0);
            const unsigned pc = (f[0] == 0) + (f[1] == 0);
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
                if (f[q] == 0) {
                    cnt[v[q]] = 0;
                    changed[s_base[1] + oc + jc++] = v[q];
                }
                if (f[q] != MARKED) atomicMax(&old[v[q]], o[q]);
            }
        }
    }

    // x lowered from o (f: its flag before the lowering's CAS 0 -> CHANGED): the first
    // lowering lists it as changed (its parent count is recounted in the repair); the level
    // before the update is the largest o any lowering of x saw (levels only fall), kept in
    // old (0 at rest) unless x is marked (old noted when marked). A max rather than the
    // first lowering's o: the first relaxation round lowers to two levels (its seeds' and
    // the next), so two lowerings of one vertex may take the CAS in either order.
    __device__ void note_lowered(int x, unsigned o, int f) {
        if (f == 0) {
            cnt[x] = 0;
            push(changed, &C[C_CHANGED], x);
        }
        if (f != MARKED) atomicMax(&old[x], o);
    }

    // x lowered from o in a relaxation round: appended to the next frontier (the slot's
    // atomic and the flag's CAS in flight together), noted (note_lowered).
    __device__ void lowered_into(int* next, u64* ncount, int x, unsigned o) {
        const unsigned m = __activemask();
        const int leader = __ffs(m) - 1;
        u64 base = 0;
        if (lane == leader) base = atomicAdd(ncount, (u64)__popc(m));
        const int f = atomicCAS(&flag[x], 0, CHANGED);
        base = __shfl_sync(m, base, leader);
        next[base + __popc(m & lanes_below_mask())] = x;
        note_lowered(x, o, f);
    }

    // ------------------------------------------------------------------ work queue
    // Asynchronous phases: the items of a phase (marked vertices, lowered vertices, chunks
    // of long lists) go to a queue that every warp drains while others append to it, so
    // that an item is processed as soon as it exists instead of after a grid barrier. The
    // phases where this is exact are those whose result does not depend on the order:
    // marking (the marked set is the same in any order), the relaxation with the seeds of
    // the marked vertices (levels only fall, every level set is the length of a path, and
    // every vertex whose level fell relaxes its list at that level or a lower one: at the
    // fixpoint every level is exact), and the repair (counts and orphans: one pass).
    // pending = items appended and not finished + the tokens of warps still appending their
    // own share: a warp that sees pending == 0 knows that nothing will be appended again.

    __device__ void use_queue(int q) {
        qc = C + C_Q0 + q * Q_SET;
        qcap = q == Q_RELAX ? qcap_relax : qcap_all;
    }

    // the warp's token: returned once the warp has appended its share of the phase's items
    __device__ void return_token() {
        __syncwarp();
        if (lane == 0) {
            __threadfence();
            atomicAdd(&qc[Q_PEND], ~0ull);
        }
    }

    // append a key (warp-aggregated over the lanes that call together); a full queue drops
    // it and notes the overflow (the phase's caller then finishes in sweeps)
    __device__ void qpush(u64 key) {
        const unsigned m = __activemask();
        const int leader = __ffs(m) - 1;
        const unsigned k = __popc(m);
        u64 base = 0;
        if (lane == leader) {
            atomicAdd(&qc[Q_PEND], (u64)k);
            base = atomicAdd(&qc[Q_TAIL], (u64)k);
        }
        base = __shfl_sync(m, base, leader) + __popc(m & lanes_below_mask());
        if (base < qcap) {
            __threadfence();             // what the item's consumer reads is visible first
            *(volatile u64*)&queue[base] = key;
        } else {
            atomicAdd(&qc[Q_PEND], ~0ull);
            *(volatile u64*)&qc[Q_OVER] = 1ull;
        }
    }

    // warp-uniform: the chunks of v's list (in_list: in-neighbours; d > CHUNK entries) but
    // the first appended to the queue
    __device__ void queue_chunks(int v, int in_list, int d) {
        const int nch = (d + CHUNK - 1) / CHUNK;
        for (int c = 1 + lane; c < nch; c += 32)
            qpush(QCHUNK | (in_list ? QIN : 0ull) | ((u64)c << 32) | (unsigned)v);
    }

    // warp-uniform: v's list (in_list: in-neighbours) read now by the warp, the first CHUNK
    // entries of a longer one too, its other chunks appended to the queue
    template <class R>
    __device__ void visit_q(int v, int in_list, R range) {
        const int d = list_degree(v, in_list);
        if (d <= 0) return;
        if (lane == 0) scanned += (u64)d;
        if (d > CHUNK) queue_chunks(v, in_list, d);
        range(v, in_list, 0, min(d, CHUNK));
    }

    // deal with long lists through the queue (no chunk pass, no barrier)
    template <class G, class T, class W>
    __device__ void visit_items_q(i64 n, int in_list, G get, T tr, W wr) {
        deal<true>(n, 0, 0, in_list, get, tr, wr);
    }

    // One warp's part of draining the queue (warp-uniform; call after the warp's own
    // appends and return_token). The warp claims 32 slots at a time (one a lane), takes the
    // keys that have arrived, processes them (vertex keys: v = get(vertex, level), -1 to
    // skip, then v's out-list by the lane (tr) when short, else by the warp (wr, through
    // visit_q); chunk keys: wr on the chunk), resets the slots, and gives back one pending
    // item per key. It leaves when pending is zero (or the queue is claimed to its end and it
    // holds no slot); a warp idle past the spin limit reports an error and leaves.
    template <class G, class T, class W>
    __device__ void drain(G get, T tr, W wr) {
        const u64 NONE = ~0ull;
        u64 idx = NONE;
        bool exhausted = false;
        long long idle_since = 0;
        bool idle = false;
        while (true) {
            if (!exhausted && __ballot_sync(FULL_MASK, idx != NONE) == 0) {
                u64 b = 0;
                if (lane == 0) b = atomicAdd(&qc[Q_HEAD], 32ull);
                b = __shfl_sync(FULL_MASK, b, 0);
                if (b >= qcap) exhausted = true;
                else if (b + lane < qcap) idx = b + lane;
            }
            u64 key = QSENT;
            if (idx != NONE) {
                key = *(volatile u64*)&queue[idx];
                if (key != QSENT) {
                    queue[idx] = QSENT;
                    idx = NONE;
                }
            }
            const unsigned ready = __ballot_sync(FULL_MASK, key != QSENT);
            if (ready) {
                __threadfence();
                int v = -1, c = -1, in_list = 0, d = 0;
                const int* row = nullptr;
                if (key != QSENT) {
                    const int x = (int)(key & 0xffffffffull);
                    if (key & QCHUNK) {
                        v = x;
                        c = (int)((key >> 32) & Q_LMAX);
                        in_list = (key & QIN) ? 1 : 0;
                    } else {
                        v = get(x, (unsigned)((key >> 32) & Q_LMAX));
                        if (v >= 0) {
                            d = deg[v];
                            row = (const int*)ptr[v];
                        }
                    }
                }
                if (c < 0 && d > 0 && d <= small_max) {
                    scanned += (u64)d;
                    tr(v, 0, d, row);
                }
                unsigned big = __ballot_sync(FULL_MASK, c >= 0 || d > small_max);
                while (big) {
                    const int src = __ffs(big) - 1;
                    big &= big - 1;
                    const int bv = __shfl_sync(FULL_MASK, v, src);
                    const int bc = __shfl_sync(FULL_MASK, c, src);
                    const int bin = __shfl_sync(FULL_MASK, in_list, src);
                    if (bc >= 0) {
                        const int j0 = bc * CHUNK;
                        wr(bv, bin, j0, min(list_degree(bv, bin), j0 + CHUNK));
                    } else {
                        visit_q(bv, 0, wr);
                    }
                }
                __syncwarp();
                if (lane == 0) {
                    __threadfence();
                    atomicAdd(&qc[Q_PEND], (u64)(-(i64)__popc(ready)));
                }
                idle = false;
                continue;
            }
            if (exhausted && __ballot_sync(FULL_MASK, idx != NONE) == 0) break;
            int done = 0;
            if (lane == 0) done = *(volatile u64*)&qc[Q_PEND] == 0ull;
            if (__shfl_sync(FULL_MASK, done, 0)) break;
            if (!idle) {
                idle = true;
                idle_since = clock64();
            } else if (clock64() - idle_since > (SPIN_LIMIT >> 4)) {
                if (lane == 0) atomicExch(bar + 2, 3u);
                break;
            }
            __nanosleep(32);
        }
    }

    // x lowered from o to nl in an asynchronous relaxation: listed as changed the first time
    // (flag 0 -> CHANGED); its level before the update is the largest o any lowering saw
    // (levels only fall), kept in old unless x is marked (old noted when marked); its list
    // is queued at nl.
    __device__ void lowered_async(int x, unsigned o, unsigned nl) {
        const int f = atomicCAS(&flag[x], 0, CHANGED);
        if (f == 0) {
            cnt[x] = 0;
            push(changed, &C[C_CHANGED], x);
        }
        if (f != MARKED) atomicMax(&old[x], o);
        if (nl < lmin) lmin = nl;
        if (nl > lmax) lmax = nl;
        qpush(((u64)min(nl, Q_LMAX) << 32) | (unsigned)x);
    }

    // lower x to t if that is lower (a seed or a relaxation)
    __device__ void lower_async(int x, unsigned t) {
        if ((unsigned)ld(&level[x]) <= t) return;
        const unsigned o = atomicMin((unsigned*)&level[x], t);
        if (o > t) lowered_async(x, o, t);
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

    // The staged passes: as pass / tpass, with every entry's accesses in flight together
    // rather than one entry's after the other's. Stage 1: the entries, then their levels
    // and, with FLAGS, their flags (fx; else 0), loaded together; stage 2: r = pre(x, lx, fx)
    // for every entry (its atomics issued back to back: nothing waits for their results
    // here); stage 3: post(x, r) for every entry. A pass whose work per entry is an atomic
    // with a result (a count taken, a level lowered) then costs about three memory round
    // trips per lane instead of one atomic round trip per entry after the loads.
    template <bool FLAGS, class A, class B>
    __device__ void pass_staged(const int* row, int j0, int j1, A pre, B post) {
        int xs[UNROLL];
        int r[UNROLL];
        {
            int ls[UNROLL];
            int fs[UNROLL];
#pragma unroll
            for (int k = 0; k < UNROLL; ++k) {
                int j = j0 + k * 32 + lane;
                xs[k] = j < j1 ? row[j] : -1;
            }
#pragma unroll
            for (int k = 0; k < UNROLL; ++k) {
                ls[k] = xs[k] >= 0 ? ld(&level[xs[k]]) : -1;
                fs[k] = FLAGS && xs[k] >= 0 ? ld(&flag[xs[k]]) : 0;
            }
#pragma unroll
            for (int k = 0; k < UNROLL; ++k) r[k] = xs[k] >= 0 ? pre(xs[k], ls[k], fs[k]) : 0;
        }
#pragma unroll
        for (int k = 0; k < UNROLL; ++k)
            if (xs[k] >= 0) post(xs[k], r[k]);
    }

    template <bool FLAGS, class A, class B>
    __device__ void tpass_staged(const int* row, int d, A pre, B post) {
        for (int j0 = 0; j0 < d; j0 += TUNROLL) {
            int xs[TUNROLL];
            int r[TUNROLL];
            {
                int ls[TUNROLL];
                int fs[TUNROLL];
#pragma unroll
                for (int k = 0; k < TUNROLL; ++k) xs[k] = j0 + k < d ? row[j0 + k] : -1;
#pragma unroll
                for (int k = 0; k < TUNROLL; ++k) {
                    ls[k] = xs[k] >= 0 ? ld(&level[xs[k]]) : -1;
                    fs[k] = FLAGS && xs[k] >= 0 ? ld(&flag[xs[k]]) : 0;
                }
#pragma unroll
                for (int k = 0; k < TUNROLL; ++k)
                    r[k] = xs[k] >= 0 ? pre(xs[k], ls[k], fs[k]) : 0;
            }
#pragma unroll
            for (int k = 0; k < TUNROLL; ++k)
                if (xs[k] >= 0) post(xs[k], r[k]);
        }
    }

    __device__ int list_degree(int v, int in_list) const {
        return in_list ? ideg[v] : deg[v];
    }

    __device__ const int* list_row(int v, int in_list) const {
        return (const int*)(in_list ? iptr[v] : ptr[v]);
    }

    // warp-uniform: v's list (in_list: in-neighbours; d > CHUNK entries) cut into chunks,
    // appended to the chunk list of the current use
    __device__ void cut(int v, int in_list, int d) {
        const int nch = (d + CHUNK - 1) / CHUNK;
        u64 base = 0;
        if (lane == 0) base = atomicAdd(&C[C_CHUNKS + C_STRIDE * (use % 3)], (u64)nch);
        base = __shfl_sync(FULL_MASK, base, 0);
        for (int c = lane; c < nch; c += 32) chunks[base + c] = make_int2(v, (c << 1) | in_list);
    }

    // The items of a phase, dealt to the lanes of the grid (lane l of warp w takes w + l *
    // warps, w + l * warps + 32 * warps, ...: a short phase still uses every warp): items
    // [0, n) are vertices, v = get(i, il) (-1: nothing to read; il: the list to read, in_list
    // (in-neighbours) unless get sets it), items [n, n + nch) the chunks chunks[c0 ...] of
    // long lists. A vertex's list is read by its own thread (tr(v, il, d, row): row its list)
    // when it has at most small_max entries, else by the whole warp (wr(v, il, j0, j1) on
    // row[j0, j1)): whole when it has at most CHUNK entries; a longer one is cut into chunks
    // for a later deal (cut), or (QUEUE) its first CHUNK entries read now and the other
    // chunks queued (the work-queue phases), or (WHOLE, no chunk items) handed whole to wr.
    // A chunk is read by the whole warp too.
    // Warp-uniform. tr and wr have one call site each: every phase inlines them once.
    template <bool QUEUE = false, bool WHOLE = false, class G, class T, class W>
    __device__ void deal(i64 n, i64 c0, i64 nch, int in_list, G get, T tr, W wr) {
        const i64 w0 = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
        const i64 nw = ((i64)nblk * blockDim.x) >> 5;
        const i64 total = n + nch;
        for (i64 base = 0; base + w0 < total; base += 32 * nw) {
            const i64 i = base + w0 + (i64)lane * nw;
            int v = -1, il = in_list, d = 0;
            int code = 0;          // a vertex: -1 - its list (il); a chunk: its chunk list code
            if (i < n) {
                v = get(i, il);
                code = -1 - il;
                const int* row = nullptr;
                if (v >= 0) {              // both loads in flight together
                    d = list_degree(v, il);
                    row = list_row(v, il);
                }
                if (d > 0 && d <= small_max) {
                    scanned += (u64)d;
                    tr(v, il, d, row);
                }
            } else if (i < total) {
                const int2 e = __ldcg(&chunks[c0 + i - n]);
                v = e.x;
                code = e.y;
            }
            unsigned longs = __ballot_sync(FULL_MASK, code >= 0 ? v >= 0 : d > small_max);
            while (longs) {
                const int src = __ffs(longs) - 1;
                longs &= longs - 1;
                const int bv = __shfl_sync(FULL_MASK, v, src);
                const int bcode = __shfl_sync(FULL_MASK, code, src);
                const int bil = bcode >= 0 ? bcode & 1 : -1 - bcode;
                const int bd = list_degree(bv, bil);
                int j0 = 0;
                if (bcode >= 0) {
                    j0 = (bcode >> 1) * CHUNK;
                } else {                   // a vertex: its whole list counted as read
                    if (lane == 0) scanned += (u64)bd;
                    if (bd > CHUNK && !WHOLE) {
                        if constexpr (QUEUE) {
                            queue_chunks(bv, bil, bd);
                        } else {
                            cut(bv, bil, bd);
                            continue;
                        }
                    }
                }
                wr(bv, bil, j0, WHOLE ? bd : min(bd, j0 + CHUNK));
            }
        }
    }

    // A level-synchronous phase: its items (deal: [0, n) vertices, get(i, il)), a barrier,
    // then the chunks of the long lists they met, by every warp, and a barrier again (unless
    // `last`; none when no list was cut). Both stages go through one deal (one inlined copy
    // of tr and wr). The next use's chunk counter is reset here, two barriers after its last
    // reader.
    template <class G, class T, class W>
    __device__ void visit_phase(i64 n, int in_list, G get, T tr, W wr, bool last = false) {
        i64 nch = 0;
#pragma unroll 1
        for (int stage = 0;; ++stage) {
            deal(stage ? 0 : n, 0, nch, in_list, get, tr, wr);
            if (stage) {
                if (!last) sync();
                return;
            }
            if (first_thread()) C[C_CHUNKS + C_STRIDE * ((use + 1) % 3)] = 0;
            sync();
            nch = (i64)ld(&C[C_CHUNKS + C_STRIDE * (use % 3)]);
            ++use;
            if (nch == 0) return;
        }
    }
};
