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
// ctl[KS_QH] (a warp takes one, then waits for that slot), published ranges from ctl[KS_QT];
// ctl[KS_QP] counts the units enqueued and not finished: a pusher adds before it publishes,
// a worker subtracts after its unit's own pushes, so zero means no unit is left or running.
// A range past cap sets ctl[KS_ABORT] (the update then falls back).
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

#define KS_QT 19         // the async queue's published tickets
#define KS_QH 20         // tickets taken by waiting warps
#define KS_QP 21         // units enqueued and not finished
#define KSQ_EMPTY (-1LL)
#define KSQ_COUNT 0
#define KSQ_PUSH 1
#define KSQ_MAX_PARTS 16
#define KSQ_CHUNK 64     // elements of the shorter list per unit (two warp runs)

struct KsQueue {
    long long* units;    // cap slots, KSQ_EMPTY when free
    int* ecnt;           // cap: an entry's count and finished units (KO_CNT_BITS), by entry
    i64 cap;             // 0: no async peeling
};

__device__ __forceinline__ long long ksq_unit(int e, int part, int parts, int kind) {
    return (long long)(unsigned)e | ((long long)part << 32) | ((long long)parts << 40) |
           ((long long)kind << 48);
}

// Units per entry of edge e: its shorter list in runs of KSQ_CHUNK.
__device__ __forceinline__ int ksq_parts(const KoState& S, int e) {
    const i64 key = S.tkeys[e];
    const int du = S.deg[hi32(key)], dv = S.deg[lo32(key)];
    const int d = du < dv ? du : dv;
    const int p = (d + KSQ_CHUNK - 1) / KSQ_CHUNK;
    return p < 1 ? 1 : (p > KSQ_MAX_PARTS ? KSQ_MAX_PARTS : p);
}

// Enqueue an entry of `kind` for edge e (one thread).
__device__ __forceinline__ void ksq_push(const KsQueue& Q, u64* ctl, const KoState& S, int e,
                                         int kind) {
    const int parts = ksq_parts(S, e);
    atomicAdd(&ctl[KS_QP], (u64)parts);
    const u64 t0 = atomicAdd(&ctl[KS_QT], (u64)parts);
    if ((i64)(t0 + parts) > Q.cap) {
        ctl[KS_ABORT] = 1;
        atomicAdd(&ctl[KS_QP], (u64)(-(i64)parts));
        return;
    }
    for (int p = 0; p < parts; ++p)
        atomicExch((unsigned long long*)&Q.units[t0 + p], (unsigned long long)ksq_unit(e, p, parts, kind));
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
    int* dirty; int istamp;      // cand: their levels marked dirty
    i64 max_region;              // cand: most candidates
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
    const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
    GRID_STRIDE(i, n) {
        const int e = ldcg(&list[i]);
        S.pushed[e] = qstamp;
        ksq_push(Q, ctl, S, e, KSQ_COUNT);
    }
    G.next_phase();
    u64* ndone = G.slot();
    for (;;) {
        long long u = KSQ_EMPTY;
        u64 t = 0;
        bool stop = false;
        if (lane == 0) {
            t = atomicAdd(&ctl[KS_QH], 1ull);
            for (int spin = 0;; ++spin) {
                if ((i64)t < Q.cap) u = *(volatile long long*)&Q.units[t];
                if (u != KSQ_EMPTY) break;
                __threadfence();
                if (*(volatile u64*)&ctl[KS_QP] == 0 || *(volatile u64*)&ctl[KS_ABORT]) {
                    stop = true;
                    break;
                }
                if (leader && (i64)(ks_now() - t0) > deadline_ns) ctl[KS_ABORT] = 1;
                __nanosleep(spin < 8 ? 64 : 256);
            }
            if (!stop) Q.units[t] = KSQ_EMPTY;
        }
        stop = __shfl_sync(FULL_MASK, (int)stop, 0);
        if (stop) break;
        u = __shfl_sync(FULL_MASK, u, 0);
        t = __shfl_sync(FULL_MASK, t, 0);
        const int e = (int)(u & 0xffffffffLL);
        const int part = (int)((u >> 32) & 0xff), parts = (int)((u >> 40) & 0xff);
        const int kind = (int)((u >> 48) & 0xff);
        const int k = ldcg(&S.truss[e]);
        const int mstamp = J.per_level ? J.mstamp0 + k : J.mstamp0;
        const i64 key = S.tkeys[e];
        const int a = hi32(key), b = lo32(key);
        if (kind == KSQ_COUNT) {
            const u64 entry = t - part;
            if (lane == 0) {
                if (ldcg(&S.pushed[e]) == qstamp) atomicExch(&S.pushed[e], 0);
                *c = 0;
            }
            __syncwarp();
            __threadfence();                     // (the flag's clear before the reads below)
            // peel: e not peeled yet; cand: e not a candidate yet
            const bool open = Cand ? ldcg(&J.member[e]) != mstamp : ldcg(&S.gone[e]) != J.gstamp;
            const i64 r = Cand ? ldcg(&S.rank[e]) : 0;
            if (open) {
                warp_common(S.deg, S.ptr, a, b, lane, part, parts, [&](int w) {
                    const i64 s1 = et_find(S.tkeys, S.tshift, et_key(a, w));
                    const i64 s2 = et_find(S.tkeys, S.tshift, et_key(b, w));
                    if (s1 < 0 || s2 < 0) return;
                    if (ko_holds(S.truss, S.rank, J.member, mstamp, S.gone, J.gstamp, s1, k, r,
                                 Cand) &&
                        ko_holds(S.truss, S.rank, J.member, mstamp, S.gone, J.gstamp, s2, k, r,
                                 Cand))
                        atomicAdd(c, 1);
                }, [&] {
                    __syncwarp();
                    return *c + (ldcg(&Q.ecnt[entry]) & KO_CNT_MASK) >= k - 1;
                });
            }
            __syncwarp();
            if (lane == 0) {
                int got = *c;
                bool last = true;
                if (parts > 1) {
                    const int was = atomicAdd(&Q.ecnt[entry], got + (1 << KO_CNT_BITS));
                    last = (was >> KO_CNT_BITS) == parts - 1;
                    got += was & KO_CNT_MASK;
                    if (last) Q.ecnt[entry] = 0;
                }
                if (last && open) {
                    touch(S.touched, S.tstamp, e, S.ctr);
                    if (Cand && got >= k - 1) {
                        const int seen = ldcg(&J.member[e]);
                        if (k >= KS_LEVEL_STAMPS - 1) {
                            ctl[KS_ABORT] = 1;      // (lev0 + k would leave the stamps)
                        } else if (seen != mstamp &&
                                   atomicCAS((int*)&J.member[e], seen, mstamp) == seen) {
                            const u64 j = atomicAdd(J.nall, 1ull);
                            if ((i64)j >= J.max_region) ctl[KS_ABORT] = 1;
                            J.all[j] = e;
                            atomicAdd(ndone, 1ull);
                            if (ldcg(&J.dirty[k]) != J.istamp) J.dirty[k] = J.istamp;
                            __threadfence();
                            ksq_push(Q, ctl, S, e, KSQ_PUSH);
                        }
                    }
                    const int seen = ldcg(&S.gone[e]);
                    if (!Cand && got < k - 1 && seen != J.gstamp && seen != J.cstamp &&
                        atomicCAS(&S.gone[e], seen, J.cstamp) == seen) {
                        S.rank[e] = J.tail + (i64)atomicAdd(&ctl[KS_TAIL], 1ull);
                        __threadfence();
                        S.gone[e] = J.gstamp;
                        __threadfence();
                        if (J.removed2) J.removed2[atomicAdd(J.nrem2, 1ull)] = e;
                        atomicAdd(ndone, 1ull);
                        ksq_push(Q, ctl, S, e, KSQ_PUSH);
                    }
                }
            }
        } else {
            __threadfence();
            const i64 rx = Cand ? ldcg(&S.rank[e]) : 0;
            warp_common(S.deg, S.ptr, a, b, lane, part, parts, [&](int w) {
                const i64 s1 = et_find(S.tkeys, S.tshift, et_key(a, w));
                const i64 s2 = et_find(S.tkeys, S.tshift, et_key(b, w));
                if (s1 < 0 || s2 < 0) return;
                const int t1 = ldcg(&S.truss[s1]), t2 = ldcg(&S.truss[s2]);
                if (t1 < k || t2 < k) return;
                bool q1, q2;
                if (Cand) {     // (as ko_phase_push: later level-k edges, not candidates)
                    q1 = t1 == k && ldcg(&S.rank[s1]) > rx && ldcg(&J.member[s1]) != mstamp;
                    q2 = t2 == k && ldcg(&S.rank[s2]) > rx && ldcg(&J.member[s2]) != mstamp;
                } else {        // (as ko_phase_peel_push: live members that held it)
                    const bool m1 = t1 == k && ldcg(&J.member[s1]) == mstamp;
                    const bool m2 = t2 == k && ldcg(&J.member[s2]) == mstamp;
                    q1 = m1 && (t2 > k || m2) && ldcg(&S.gone[s1]) != J.gstamp;
                    q2 = m2 && (t1 > k || m1) && ldcg(&S.gone[s2]) != J.gstamp;
                }
                if (q1 && atomicExch(&S.pushed[s1], qstamp) != qstamp)
                    ksq_push(Q, ctl, S, (int)s1, KSQ_COUNT);
                if (q2 && atomicExch(&S.pushed[s2], qstamp) != qstamp)
                    ksq_push(Q, ctl, S, (int)s2, KSQ_COUNT);
            }, NO_STOP);
        }
        __syncwarp();
        if (lane == 0) {
            __threadfence();
            atomicAdd(&ctl[KS_QP], (u64)(-1LL));
        }
    }
    G.next_phase(Cand ? KS_PH_CAND : KS_PH_PEEL);
    const i64 done = G.last();
    if (ldcg(&ctl[KS_ABORT])) return -1;
    if (leader) {                                 // (every thread has read the words above)
        ctl[KS_QT] = 0;
        ctl[KS_QH] = 0;
    }
    return done;
}
