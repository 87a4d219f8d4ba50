// The peeling of ko_scan as one asynchronous phase (included by ko_peel.cuh): a work queue
// that every warp of the grid serves until it is empty and no warp holds work, instead of
// synchronous rounds separated by grid barriers. A small update's peeling is a long chain of
// rounds of few edges each; here an edge is counted again as soon as a neighbour it held a
// triangle with is peeled, without waiting for the rest of a round.
//
// Units: the queue holds units of work, each a part of one edge's intersection (the `parts`
// units of an entry take consecutive tickets; the entry is named by its first ticket). COUNT
// units count an edge's held triangles (ko_holds, the peeling's rule) and the last unit of the
// entry decides; PUSH units list the live members that held a triangle with a peeled edge
// and enqueue a COUNT entry for each.
//
// Queue: units[cap] (int64, EMPTY between uses: a consumer resets its slot), tickets from
// q[KSQ_H] (a warp takes one, then waits for that slot), published ranges from q[KSQ_T];
// q[KSQ_P] counts the units enqueued and not finished: a pusher adds before it publishes,
// a worker subtracts after its unit's own pushes, and q[KSQ_A] counts the blocks that have
// enqueued their share of the phase's first list, so zero units with every block arrived means
// no unit is left or running (no grid barrier between the first pushes and the serving).
// A range past cap sets ctl[KS_ABORT] (the update then falls back). The words q come in two
// sets used by alternate asynchronous phases (KsGrid::q): a phase's set is cleared by the
// leader right after the barrier that ends the phase, while the next phase serves the other
// set, so two asynchronous phases need no barrier between them.
//
// Why the result is the synchronous peeling's: gone only grows, so a count only over-counts
// the held triangles of the moment it ends; an edge peeled on a count below k - 1 cannot be in
// the largest subset whose members hold k - 1 triangles. A live member is counted again after
// every peel of a triangle neighbour that happened after a unit of its last count began:
// every unit clears the edge's queued flag (qflag, a stamp) and then fences before it reads;
// the peeled edge's PUSH (after its gone store and a fence) finds the flag clear and enqueues
// a new entry, or finds it set by an entry none of whose units has begun. So at the end every
// live member's last count saw every peel: the survivors are the largest such subset.
// Ranks: an edge claims its peel (gone: a claim stamp by compare-and-swap), takes its rank,
// fences, then marks itself gone; an edge after it in the order was not gone when it counted,
// so its triangles with both other edges after it are among those it counted: fewer than
// k - 1 (as in ko_peel.cuh).
#pragma once

// (the queue's words follow ctl's KS_WORDS: two sets of KSQ_SET_WORDS, each word that warps
// poll or add to on its own 128-byte line)
#define KSQ_SET_WORDS 48
#define KSQ_T 0          // a set's published tickets
#define KSQ_H 16         // tickets taken by waiting warps
#define KSQ_P 32         // units enqueued and not finished; KSQ_STOP: stopped
#define KSQ_A 33         // blocks whose share of the first list is enqueued
#define KSQ_STOP (1ull << 62)
#define KSQ_EMPTY (-1LL)
#define KSQ_COUNT 0      // (the descent's: its h-index)
#define KSQ_PUSH 1
#define KSQ_MAX_PARTS 16
#define KSQ_CHECK 16     // units a warp serves between its checks of the stop (a power of 2)
#define KSQ_CHUNK 64     // elements of the shorter list per unit (two warp runs)
#define KSQ_PEEL 1       // KsQueue.modes: the peelings
#define KSQ_CAND 2       //   mode 4's candidates
#define KSQ_DESCENT 4    //   mode 2's descent
#define KSQ_SPLIT 8      //   the descent's long lists split over warps (threshold counts)
#define KSQ_FUSED 16     //   no barrier after the first pushes; mode 4's split and rise fused
                         //   into the peeling's first pushes and its live listing
#define KSQ_KARY 32      //   the units' list searches by lower_bound_8ary (fewer dependent
                         //   loads a unit: the phases are chains of dependent units)
#define KSQ_INLINE 64    //   a decided edge of one unit runs its PUSH in the deciding warp
#define KSQ_PRUNE 128    //   a new candidate's PUSH lists only the edges whose count it raises

struct KsQueue {
    long long* units;    // cap slots, KSQ_EMPTY when free
    int* ecnt;           // cap: an entry's count and finished units (KO_CNT_BITS), by entry
    i64 cap;             // 0: no asynchronous phase
    int modes;           // KSQ_PEEL | KSQ_CAND | KSQ_DESCENT: the phases run asynchronously
    int chunk;           // elements of the shorter list per unit (KSQ_CHUNK)
    int max_parts;       // most units per entry (KSQ_MAX_PARTS, at most 63)
    int pause_max;       // longest pause (ns) of a warp waiting for its slot
};

// The queue of ko_scan's arguments: qmodes holds the modes (bits 0-7), the elements per unit
// in runs of 32 (bits 8-15; 0: KSQ_CHUNK), the most units per entry (bits 16-21; 0:
// KSQ_MAX_PARTS) and the log2 of the longest pause (bits 22-25; 0: 512 ns).
__device__ __forceinline__ KsQueue ksq_make(long long* units, int* ecnt, i64 cap, int qmodes) {
    const int chunk = (qmodes >> 8) & 0xff, parts = (qmodes >> 16) & 63;
    const int pause = (qmodes >> 22) & 15;
    return KsQueue{units, ecnt, cap, qmodes & 0xff, chunk ? 32 * chunk : KSQ_CHUNK,
                   parts ? parts : KSQ_MAX_PARTS, pause ? 1 << pause : 512};
}

__device__ __forceinline__ bool ksq_on(const KsQueue& Q, int mode) {
    return Q.cap > 0 && (Q.modes & mode);
}

__device__ __forceinline__ bool ksq_kary(const KsQueue& Q) { return (Q.modes & KSQ_KARY) != 0; }

// A unit: edge (32 bits), part and parts (6 bits each), kind (2 bits), aux (17 bits: the
// descent's PUSH carries the number the edge fell from).
__device__ __forceinline__ long long ksq_unit(int e, int part, int parts, int kind, int aux) {
    return (long long)(unsigned)e | ((long long)part << 32) | ((long long)parts << 38) |
           ((long long)kind << 44) | ((long long)aux << 46);
}

// Units per entry of an edge whose shorter list has d elements: runs of Q.chunk.
__device__ __forceinline__ int ksq_parts_deg(const KsQueue& Q, int d) {
    const int p = (d + Q.chunk - 1) / Q.chunk;
    return p < 1 ? 1 : (p > Q.max_parts ? Q.max_parts : p);
}

// Units per entry of edge e: its shorter list in runs of Q.chunk.
__device__ __forceinline__ int ksq_parts(const KsQueue& Q, const KoState& S, int e) {
    const i64 key = S.tkeys[e];
    const int du = S.deg[hi32(key)], dv = S.deg[lo32(key)];
    return ksq_parts_deg(Q, du < dv ? du : dv);
}

// The queue words of the current asynchronous phase (G.q: its number in the launch).
__device__ __forceinline__ u64* ksq_words(u64* ctl, const KsGrid& G) {
    return ctl + KS_WORDS + KSQ_SET_WORDS * (G.q & 1);
}

// Stop the queue (ctl[KS_ABORT] and the stop bit its waiting warps poll).
__device__ __forceinline__ void ksq_abort(u64* ctl, u64* q) {
    ctl[KS_ABORT] = 1;
    atomicOr(&q[KSQ_P], KSQ_STOP);
}

// Enqueue an entry of `kind` for edge e (one thread; parts 0: by its lists' lengths).
__device__ __forceinline__ void ksq_push(const KsQueue& Q, u64* ctl, u64* q, const KoState& S,
                                         int e, int kind, int aux = 0, int parts = 0) {
    if (parts == 0) parts = ksq_parts(Q, S, e);
    atomicAdd(&q[KSQ_P], (u64)parts);
    const u64 t0 = atomicAdd(&q[KSQ_T], (u64)parts);
    if ((i64)(t0 + parts) > Q.cap) {
        atomicAdd(&q[KSQ_P], (u64)(-(i64)parts));
        ksq_abort(ctl, q);
        return;
    }
    for (int p = 0; p < parts; ++p)
        atomicExch((unsigned long long*)&Q.units[t0 + p],
                   (unsigned long long)ksq_unit(e, p, parts, kind, aux));
}

// The warp's lanes with `valid` each enqueue an entry of `parts` units of `kind` (and aux)
// for their edge e, in one ticket range for the warp (every lane of the warp calls it): a
// phase's first pushes take two atomics a warp on the queue's words, not two an edge.
__device__ __forceinline__ void ksq_push_warp(const KsQueue& Q, u64* ctl, u64* q, int e,
                                              int parts, int kind, int aux, bool valid) {
    const unsigned lane = threadIdx.x & 31;
    const int p = valid ? parts : 0;
    int incl = p;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const int y = __shfl_up_sync(FULL_MASK, incl, o);
        if (lane >= (unsigned)o) incl += y;
    }
    const int total = __shfl_sync(FULL_MASK, incl, 31);
    if (total == 0) return;
    u64 t0 = 0;
    if (lane == 31) {
        atomicAdd(&q[KSQ_P], (u64)total);
        t0 = atomicAdd(&q[KSQ_T], (u64)total);
        if ((i64)(t0 + total) > Q.cap) {
            atomicAdd(&q[KSQ_P], (u64)(-(i64)total));
            ksq_abort(ctl, q);
        }
    }
    t0 = __shfl_sync(FULL_MASK, t0, 31);
    if ((i64)(t0 + total) > Q.cap) return;
    const u64 at = t0 + (u64)(incl - p);
    for (int j = 0; j < p; ++j)
        atomicExch((unsigned long long*)&Q.units[at + j],
                   (unsigned long long)ksq_unit(e, j, p, kind, aux));
}

// list[*n + rank] = v for the warp's lanes with pred, one atomic a warp (every lane of the
// warp calls it); returns the lane's index in list (-1 without pred).
__device__ __forceinline__ i64 warp_append(int* list, u64* n, int v, bool pred) {
    const unsigned lane = threadIdx.x & 31;
    const unsigned m = __ballot_sync(FULL_MASK, pred);
    if (m == 0) return -1;
    const int leader = __ffs(m) - 1;
    u64 b = 0;
    if (lane == (unsigned)leader) b = atomicAdd(n, (u64)__popc(m));
    b = __shfl_sync(FULL_MASK, b, leader);
    if (!pred) return -1;
    const i64 j = (i64)b + __popc(m & ((1u << lane) - 1u));
    list[j] = v;
    return j;
}

// A warp-uniform grid-stride loop over [0, n): i = a lane's index (may be n or more: the lane
// has no item; every lane runs every iteration).
#define WARP_STRIDE(i, n)                                                                \
    for (i64 i = warp_id() * 32 + (threadIdx.x & 31);                                      \
         i - (i64)(threadIdx.x & 31) < (i64)(n); i += num_warps() * 32)

// The end of a block's share of a phase's first pushes (every thread of the block calls it):
// counted in q[KSQ_A] after the block's pushes, then (unless KSQ_FUSED) a grid barrier.
__device__ __forceinline__ void ksq_arrive(const KsQueue& Q, KsGrid& G, u64* q) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(&q[KSQ_A], 1ull);
    }
    if (!(Q.modes & KSQ_FUSED)) G.next_phase();
}

// Serve the queue until it is empty and no unit runs, or it stopped: every warp takes a ticket,
// waits for its slot, and runs unit(e, part, parts, kind, aux, ticket) (warp-uniform); its
// pending count drops after the unit's own pushes. Empty: every block arrived (ksq_arrive),
// then no unit pending.
template <typename Unit>
__device__ void ks_serve(const KsQueue& Q, u64* ctl, u64* q, u64 t0, i64 deadline_ns,
                         Unit&& unit) {
    const unsigned lane = threadIdx.x & 31;
    const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
    u64 busy = 0;                            // (diagnostics: KS_BUSY)
    for (unsigned served = 1;; ++served) {
        long long u = KSQ_EMPTY;
        u64 t = 0;
        bool stop = false;
        if (lane == 0 && (served & (KSQ_CHECK - 1)) == 0) {
            // (a warp that never waits for its slot checks the deadline and the stop here:
            // a long phase stops within KSQ_CHECK units a warp of its deadline)
            if (leader && (i64)(ks_now() - t0) > deadline_ns) ksq_abort(ctl, q);
            stop = *(volatile u64*)&ctl[KS_ABORT] != 0;
        }
        if (lane == 0 && !stop) {
            t = atomicAdd(&q[KSQ_H], 1ull);
            // (the slot every round; the pending count, on a line all waiting warps read,
            // every eighth, with a growing pause)
            for (int spin = 0, pause = 32;; ++spin) {
                if ((i64)t < Q.cap) u = *(volatile long long*)&Q.units[t];
                if (u != KSQ_EMPTY) break;
                if ((spin & 7) == 7) {
                    __threadfence();
                    const u64 a = *(volatile u64*)&q[KSQ_A];
                    __threadfence();
                    const u64 p = *(volatile u64*)&q[KSQ_P];
                    if ((p == 0 && a == gridDim.x) || (p & KSQ_STOP)) {
                        stop = true;
                        break;
                    }
                    if (leader && (i64)(ks_now() - t0) > deadline_ns) ksq_abort(ctl, q);
                }
                __nanosleep(pause);
                if (pause < Q.pause_max) pause *= 2;
            }
            if (!stop) Q.units[t] = KSQ_EMPTY;
        }
        stop = __shfl_sync(FULL_MASK, (int)stop, 0);
        if (stop) {
            if (lane == 0 && busy) atomicAdd(&ctl[KS_BUSY], busy);
            break;
        }
        u = __shfl_sync(FULL_MASK, u, 0);
        t = __shfl_sync(FULL_MASK, t, 0);
        const long long c0 = clock64();
        unit((int)(u & 0xffffffffLL), (int)((u >> 32) & 63), (int)((u >> 38) & 63),
             (int)((u >> 44) & 3), (int)((u >> 46) & 0x1ffff), t);
        __syncwarp();
        busy += (1ull << 44) + (u64)(clock64() - c0);
        if (lane == 0) {
            __threadfence();
            atomicAdd(&q[KSQ_P], (u64)(-1LL));
        }
    }
}

// The end of an asynchronous phase (after its barrier): false when it stopped; else its
// queue words are cleared for the phase after next (the next one uses the other set).
__device__ __forceinline__ bool ksq_finish(u64* ctl, KsGrid& G) {
    u64* q = ksq_words(ctl, G);
    ++G.q;
    if (ldcg(&ctl[KS_ABORT])) return false;
    if (blockIdx.x == 0 && threadIdx.x == 0) {  // (every thread has read the words before)
        q[KSQ_T] = 0;
        q[KSQ_H] = 0;
        q[KSQ_P] = 0;
        q[KSQ_A] = 0;
    }
    return true;
}

// What ks_async runs: the peeling (ko_phase_peel's count and decision, ko_phase_peel_push's
// push) or mode 4's candidate search (ks_phase_candidates' count with ranks and decision,
// ko_phase_push's push).
struct KsAsyncJob {
    const int* member; int mstamp0; int per_level;
    int gstamp;                  // peel: peeled edges (gone == gstamp); cand: -1
    int cstamp;                  // peel: a fresh claim stamp
    i64 tail;                    // peel: ranks from tail (ctl[KS_TAIL])
    int* removed2; u64* nrem2;   // peel: peeled edges appended here too (when given)
    int* all; u64* nall;         // cand: new candidates
    int* dirty; int istamp;      // cand: their levels marked dirty; peel with split: the
                                 // list's members at dirty levels are the ones peeled
    i64 max_region;              // cand: most candidates
    int* split; u64* nsplit;     // peel (given): list[:n] split by dirty level, the peeled
    int* rest; u64* nrest;       //   members to split, the others to rest (ks_phase_split)
};

// Serve the queue from list[:n] (every list edge enqueued as a COUNT entry, S.pushed ==
// qstamp its queued flag) to its end: two phases. Peel (Cand false): members with fewer than
// k - 1 held triangles are ranked at the end of their level and marked gone, their PUSH lists
// the live members that held a triangle with them. Cand: list edges not yet candidates with
// k - 1 triangles whose other edges are above k, candidates or after them at k join the
// candidates, their PUSH lists the later level-k edges they may complete. Returns the edges
// peeled or joined, or -1 when it stopped (ctl[KS_ABORT]: capacity, deadline or region).
template <bool Cand>
__device__ i64 ks_async(const KoState& S, KsGrid& G, u64* ctl, int* c, const KsQueue& Q,
                        const int* list, i64 n, const KsAsyncJob& J, int qstamp, u64 t0,
                        i64 deadline_ns) {
    const unsigned lane = threadIdx.x & 31;
    u64* q = ksq_words(ctl, G);
    WARP_STRIDE(i, n) {                      // (warp-aggregated appends and pushes)
        bool valid = i < n;
        const int e = valid ? ldcg(&list[i]) : 0;
        if (!Cand && J.split) {
            const bool dirty = valid && ldcg(&J.dirty[ldcg(&S.truss[e])]) == J.istamp;
            warp_append(J.rest, J.nrest, e, valid && !dirty);
            warp_append(J.split, J.nsplit, e, dirty);
            valid = dirty;
        }
        if (valid) S.pushed[e] = qstamp;
        ksq_push_warp(Q, ctl, q, e, valid ? ksq_parts(Q, S, e) : 0, KSQ_COUNT, 0, valid);
    }
    ksq_arrive(Q, G, q);
    u64* ndone = G.slot();
    // (diagnostics: units served, and the longest chain of units, a unit's aux its depth)
    u64 served = 0;
    int deepest = 0;
    ks_serve(Q, ctl, q, t0, deadline_ns, [&](int e, int part, int parts, int kind, int depth,
                                          u64 t) {
        const int next = depth < 0x1ffff ? depth + 1 : depth;
        if (lane == 0) {
            ++served;
            if (depth > deepest) deepest = depth;
        }
        const int k = ldcg(&S.truss[e]);
        const int mstamp = J.per_level ? J.mstamp0 + k : J.mstamp0;
        const i64 key = S.tkeys[e];
        const int a = hi32(key), b = lo32(key);
        // e's PUSH, run p of np: peel, the live members that held a triangle with e; cand,
        // the later level-k edges it may complete (COUNT entries)
        const auto push = [&](int p, int np, int d) {
            __threadfence();
            const i64 rx = Cand ? ldcg(&S.rank[e]) : 0;
            const int da = S.deg[a], db = S.deg[b];
            warp_common(S.deg, S.ptr, a, b, lane, p, np, [&](int w) {
                // (w's degree with the lookups: the pushes' part counts without a later
                // read of the table and the degrees)
                const int dw = S.deg[w];
                i64 s1, s2;
                et_find2(S.tkeys, S.tshift, et_key(a, w), et_key(b, w), s1, s2);
                if (s1 < 0 || s2 < 0) return;
                // (every load at once: the chain waits on one, not three)
                const int t1 = ldcg(&S.truss[s1]), t2 = ldcg(&S.truss[s2]);
                const int m1 = ldcg(&J.member[s1]), m2 = ldcg(&J.member[s2]);
                const i64 r1 = Cand ? ldcg(&S.rank[s1]) : 0, r2 = Cand ? ldcg(&S.rank[s2]) : 0;
                const int g1 = Cand ? 0 : ldcg(&S.gone[s1]), g2 = Cand ? 0 : ldcg(&S.gone[s2]);
                if (t1 < k || t2 < k) return;
                bool q1, q2;
                if (Cand) {     // (as ko_phase_push: later level-k edges, not candidates)
                    q1 = t1 == k && r1 > rx && m1 != mstamp;
                    q2 = t2 == k && r2 > rx && m2 != mstamp;
                    if (Q.modes & KSQ_PRUNE) {
                        // (only where the triangle now holds for it: its third edge above
                        // k, a candidate, or at k after it; else e's joining changed
                        // nothing for it, and the third edge's own joining, if it comes,
                        // pushes it then: each reads the other's candidacy after a fence)
                        q1 = q1 && (t2 > k || m2 == mstamp || r2 > r1);
                        q2 = q2 && (t1 > k || m1 == mstamp || r1 > r2);
                    }
                } else {        // (as ko_phase_peel_push: live members that held it)
                    const bool w1 = t1 == k && m1 == mstamp;
                    const bool w2 = t2 == k && m2 == mstamp;
                    q1 = w1 && (t2 > k || w2) && g1 != J.gstamp;
                    q2 = w2 && (t1 > k || w1) && g2 != J.gstamp;
                }
                if (q1 && atomicExch(&S.pushed[s1], qstamp) != qstamp)
                    ksq_push(Q, ctl, q, S, (int)s1, KSQ_COUNT, d, ksq_parts_deg(Q, imin(da, dw)));
                if (q2 && atomicExch(&S.pushed[s2], qstamp) != qstamp)
                    ksq_push(Q, ctl, q, S, (int)s2, KSQ_COUNT, d, ksq_parts_deg(Q, imin(db, dw)));
            }, NO_STOP, ksq_kary(Q));
        };
        if (kind != KSQ_COUNT) {
            push(part, parts, next);
            return;
        }
        const u64 entry = t - part;
        if (lane == 0) {
            if (ldcg(&S.pushed[e]) == qstamp) atomicExch(&S.pushed[e], 0);
            *c = 0;
        }
        __syncwarp();
        __threadfence();                     // (the flag's clear before the reads below)
        // peel: e not peeled yet; cand: e not a candidate yet
        const bool open = Cand ? k < S.cap && ldcg(&J.member[e]) != mstamp
                               : ldcg(&S.gone[e]) != J.gstamp;
        const i64 r = Cand ? ldcg(&S.rank[e]) : 0;
        // (the entry's other units may have decided it already: k - 1 found)
        const bool enough = parts > 1 && (ldcg(&Q.ecnt[entry]) & KO_CNT_MASK) >= k - 1;
        if (open && !enough) {
            warp_common(S.deg, S.ptr, a, b, lane, part, parts, [&](int w) {
                i64 s1, s2;
                et_find2(S.tkeys, S.tshift, et_key(a, w), et_key(b, w), s1, s2);
                if (s1 < 0 || s2 < 0) return;
                if (ko_holds2(S.truss, S.rank, J.member, mstamp, S.gone, J.gstamp, s1, s2, k,
                              r, Cand))
                    atomicAdd(c, 1);
            }, [&] {
                __syncwarp();
                return *c + (ldcg(&Q.ecnt[entry]) & KO_CNT_MASK) >= k - 1;
            }, ksq_kary(Q));
        }
        __syncwarp();
        // (a decided edge's PUSH goes first: the chain of dependent units goes on before
        // the bookkeeping that only later phases read. An entry's COUNT units are
        // ksq_parts(e) many, as its PUSH's; with KSQ_INLINE an entry of one unit runs its
        // PUSH in this warp at once, not through the queue)
        int inline_push = 0, decided = 0;
        if (lane == 0) {
            int got = *c;
            bool last = true;
            if (parts > 1) {
                const int was = atomicAdd(&Q.ecnt[entry], got + (1 << KO_CNT_BITS));
                last = (was >> KO_CNT_BITS) == parts - 1;
                got += was & KO_CNT_MASK;
                if (last) Q.ecnt[entry] = 0;
            }
            decided = last && open;
            const bool here = parts == 1 && (Q.modes & KSQ_INLINE);
            if (decided && Cand && got >= k - 1) {
                const int seen = ldcg(&J.member[e]);
                if (k >= KS_LEVEL_STAMPS - 1) {
                    ksq_abort(ctl, q);      // (lev0 + k would leave the stamps)
                } else if (seen != mstamp &&
                           atomicCAS((int*)&J.member[e], seen, mstamp) == seen) {
                    __threadfence();
                    if (here) inline_push = 1;
                    else ksq_push(Q, ctl, q, S, e, KSQ_PUSH, next, parts);
                    const u64 j = atomicAdd(J.nall, 1ull);
                    if ((i64)j >= J.max_region) ksq_abort(ctl, q);
                    J.all[j] = e;
                    atomicAdd(ndone, 1ull);
                    if (ldcg(&J.dirty[k]) != J.istamp) J.dirty[k] = J.istamp;
                }
            }
            const int seen = decided && !Cand ? ldcg(&S.gone[e]) : 0;
            if (decided && !Cand && got < k - 1 && seen != J.gstamp && seen != J.cstamp &&
                atomicCAS(&S.gone[e], seen, J.cstamp) == seen) {
                S.rank[e] = J.tail + (i64)atomicAdd(&ctl[KS_TAIL], 1ull);
                __threadfence();
                S.gone[e] = J.gstamp;
                __threadfence();
                if (here) inline_push = 1;
                else ksq_push(Q, ctl, q, S, e, KSQ_PUSH, next, parts);
                if (J.removed2) J.removed2[atomicAdd(J.nrem2, 1ull)] = e;
                atomicAdd(ndone, 1ull);
            }
        }
        if (__shfl_sync(FULL_MASK, inline_push, 0)) push(0, 1, next);
        if (lane == 0 && decided) touch(S.touched, S.tstamp, e, S.ctr);
    });
    if (lane == 0) {
        atomicAdd(&ctl[KS_UNITS], served);
        atomicMax(&ctl[KS_DEPTH], (u64)deepest);
    }
    G.next_phase(Cand ? KS_PH_CAND : KS_PH_PEEL);
    const i64 done = G.last();
    return ksq_finish(ctl, G) ? done : -1;
}

// An entry of the descent's HINDEX for edge e: one unit, or with KSQ_SPLIT and a shorter list
// longer than Q.chunk, a unit per run of it with the level a to test (aux).
__device__ __forceinline__ void ksq_push_hindex(const KsQueue& Q, u64* ctl, u64* q,
                                                const KoState& S, int e) {
    const int parts = (Q.modes & KSQ_SPLIT) ? ksq_parts(Q, S, e) : 1;
    ksq_push(Q, ctl, q, S, e, KSQ_COUNT, parts > 1 ? ldcg(&S.truss[e]) : 0, parts);
}

// Mode 2's descent as one asynchronous phase, from the worklist list[:n] (distinct): an
// HINDEX unit (one warp, its histogram h: HBINS shared ints) takes the h-index of its edge e
// at its current number a, capped at a (dt_phase_hindex's rule, each value applied at once by
// atomicMin). A split entry (parts > 1) only tests its level a (aux): its units count the
// triangles whose other edges are at a or above, and when the last one finds fewer than
// a - 2, e falls to a - 1 (an upper bound: its h-index is below a) and is taken again.
// A lowered edge goes once to all (count ctl[KS_FELL], fell == fstamp) and its
// PUSH (aux: the number it fell from) enqueues every triangle neighbour y with old >= truss[y]
// > truss[e] (dt_phase_push's rule); a value from the clamped bin enqueues e again. The values
// only fall and every one is an upper bound of the new truss numbers (the h-index of upper
// bounds is one), and an edge is taken again after every fall that could lower it (the queued
// flag as in ks_async), so the end is the synchronous descent's fixed point. Returns false when
// it stopped.
__device__ bool ks_descend_async(const KoState& S, KsGrid& G, u64* ctl, int* c,
                                 const KsQueue& Q, const int* list, i64 n, int* h, int* fell,
                                 int fstamp, int* all, int qstamp, u64 t0, i64 deadline_ns) {
    const unsigned lane = threadIdx.x & 31;
    u64* q = ksq_words(ctl, G);
    WARP_STRIDE(i, n) {                      // (as ksq_push_hindex, warp-aggregated)
        const bool valid = i < n;
        const int e = valid ? ldcg(&list[i]) : 0;
        int parts = 0, aux = 0;
        if (valid) {
            S.pushed[e] = qstamp;
            parts = (Q.modes & KSQ_SPLIT) ? ksq_parts(Q, S, e) : 1;
            aux = parts > 1 ? ldcg(&S.truss[e]) : 0;
        }
        ksq_push_warp(Q, ctl, q, e, parts, KSQ_COUNT, aux, valid);
    }
    ksq_arrive(Q, G, q);
    // (e fell from `was` to `value`: once to all, its neighbours through its PUSH; with
    // `here`, the caller's warp runs the PUSH: returns `was` when e fell, else 0)
    const auto fall = [&](int e, int value, bool here) -> int {
        const int was = atomicMin(&S.truss[e], value);
        if (value >= was) return 0;
        if (atomicExch(&fell[e], fstamp) != fstamp) all[atomicAdd(&ctl[KS_FELL], 1ull)] = e;
        __threadfence();
        if (here) return was;
        ksq_push(Q, ctl, q, S, e, KSQ_PUSH, was);
        return 0;
    };
    // e's PUSH (run p of np): every triangle neighbour y with old >= truss[y] > truss[e]
    const auto push = [&](int e, int u, int v, int p, int np, int old) {
        __threadfence();
        const int now = ldcg(&S.truss[e]);
        warp_common(S.deg, S.ptr, u, v, lane, p, np, [&](int w) {
            i64 s1, s2;
            et_find2(S.tkeys, S.tshift, et_key(u, w), et_key(v, w), s1, s2);
            if (s1 < 0 || s2 < 0) return;
            const int f1 = ldcg(&S.truss[s1]), f2 = ldcg(&S.truss[s2]);
            if (f1 <= old && f1 > now && atomicExch(&S.pushed[s1], qstamp) != qstamp)
                ksq_push_hindex(Q, ctl, q, S, (int)s1);
            if (f2 <= old && f2 > now && atomicExch(&S.pushed[s2], qstamp) != qstamp)
                ksq_push_hindex(Q, ctl, q, S, (int)s2);
        }, NO_STOP, ksq_kary(Q));
    };
    ks_serve(Q, ctl, q, t0, deadline_ns, [&](int e, int part, int parts, int kind, int old,
                                          u64 t) {
        const i64 key = S.tkeys[e];
        const int u = hi32(key), v = lo32(key);
        if (kind == KSQ_COUNT && parts > 1) {        // a split entry: the test of level old
            const u64 entry = t - part;
            const int a = old;
            if (lane == 0) {
                if (ldcg(&S.pushed[e]) == qstamp) atomicExch(&S.pushed[e], 0);
                *c = 0;
            }
            __syncwarp();
            __threadfence();                     // (the flag's clear before the reads below)
            // (the entry's other units may have found a - 2 already)
            const bool enough = (ldcg(&Q.ecnt[entry]) & KO_CNT_MASK) >= a - 2;
            if (!enough) warp_common(S.deg, S.ptr, u, v, lane, part, parts, [&](int w) {
                i64 s1, s2;
                et_find2(S.tkeys, S.tshift, et_key(u, w), et_key(v, w), s1, s2);
                if (s1 < 0 || s2 < 0) return;
                if (imin(ldcg(&S.truss[s1]), ldcg(&S.truss[s2])) >= a) atomicAdd(c, 1);
            }, [&] {
                __syncwarp();
                return *c + (ldcg(&Q.ecnt[entry]) & KO_CNT_MASK) >= a - 2;
            }, ksq_kary(Q));
            __syncwarp();
            if (lane == 0) {
                const int was = atomicAdd(&Q.ecnt[entry], *c + (1 << KO_CNT_BITS));
                if ((was >> KO_CNT_BITS) == parts - 1) {
                    Q.ecnt[entry] = 0;
                    touch(S.touched, S.tstamp, e, S.ctr);
                    if ((was & KO_CNT_MASK) + *c < a - 2 && a > 2) {
                        fall(e, a - 1, false);
                        if (atomicExch(&S.pushed[e], qstamp) != qstamp)
                            ksq_push_hindex(Q, ctl, q, S, e);
                    }
                }
            }
        } else if (kind == KSQ_COUNT) {
            if (lane == 0 && ldcg(&S.pushed[e]) == qstamp) atomicExch(&S.pushed[e], 0);
            __syncwarp();
            __threadfence();                     // (the flag's clear before the reads below)
            const int a = ldcg(&S.truss[e]);
            const int lo = a - (HBINS - 1) > 2 ? a - (HBINS - 1) : 2;
            for (int b = lane; b < HBINS; b += 32) h[b] = 0;
            __syncwarp();
            if (a > 2) {
                warp_common(S.deg, S.ptr, u, v, lane, 0, 1, [&](int w) {
                    i64 s1, s2;
                    et_find2(S.tkeys, S.tshift, et_key(u, w), et_key(v, w), s1, s2);
                    if (s1 < 0 || s2 < 0) return;
                    int m = imin(imin(ldcg(&S.truss[s1]), ldcg(&S.truss[s2])), a);
                    if (m < lo) m = lo;
                    atomicAdd(&h[m - lo], 1);
                }, [&] {
                    __syncwarp();
                    return h[a - lo] >= a - 2;
                }, ksq_kary(Q));
            }
            __syncwarp();
            // (KSQ_INLINE: a fallen edge whose PUSH is one unit runs it in this warp, after
            // the h histogram's last read)
            int fell_from = 0;
            if (lane == 0) {
                int value = a <= 2 ? a : hindex_from_bins(h, a, lo);
                const bool again = value < 0;
                if (again) value = -value;
                const bool here = (Q.modes & KSQ_INLINE) && ksq_parts(Q, S, e) == 1;
                if (value < a) fell_from = fall(e, value, here);
                if (again && atomicExch(&S.pushed[e], qstamp) != qstamp)
                    ksq_push_hindex(Q, ctl, q, S, e);
            }
            __syncwarp();                        // (before the next unit clears h)
            fell_from = __shfl_sync(FULL_MASK, fell_from, 0);
            if (fell_from) push(e, u, v, 0, 1, fell_from);
            if (lane == 0) touch(S.touched, S.tstamp, e, S.ctr);
        } else {
            push(e, u, v, part, parts, old);
        }
    });
    G.next_phase(KS_PH_HINDEX);
    return ksq_finish(ctl, G);
}
