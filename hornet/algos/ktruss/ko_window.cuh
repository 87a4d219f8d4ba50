// ko_wscan: an insertion's k-order scan by windows of the order (included by dynamic_gpu.cu
// after ko_levels.cuh; the host side is dynamic_gpu_window.py).
//
// Mode 4 (ko_levels.cuh) finds a level's whole candidate set before it peels any candidate.
// In a large flat level, whose edges mostly keep exactly k - 2 triangles after them, one new
// candidate completes a triangle for the edges after it, they become candidates and so on:
// the candidates spread through most of the level before the peeling removes them again. The
// sequential order-based insertion (Zhang, Yu, Zhang and Qin, ICDE 2017, for cores) removes a
// candidate as soon as the scan passes enough of the edges after it that did not become
// candidates, so that it never completes a triangle for the edges further on.
//
// Here the scan goes by windows: a window is the edges of one rank >> (32 + shift) (2^shift
// rounds of the static peeling, or the start or the end of a level), taken in increasing
// order, every level at once. The edges that a candidate completes a triangle for and that
// lie in a later window wait (the pending list). For the next window R (the least window of a
// pending edge):
//
//   1. the live candidates are peeled, a triangle of a candidate at level k held when its two
//      other edges are above k, live candidates at k, or at k, no candidate, and in window R
//      or later (the scan has not passed them); a candidate peeled there is no candidate any
//      more and takes a rank at the end of window R - 1 (in its last round: ((R << shift) -
//      1) << 32 | 2^31 + a counter kept by the host across updates), after every edge the
//      scan passed and before every edge it has not;
//   2. the candidate rounds of window R: an edge y at level k becomes a candidate when k - 1
//      of its triangles have both other edges above k, live candidates at k, or at k after y
//      (mode 4's rule); a new candidate lists the edges after it at its level whose triangle
//      with it now holds for them, in window R (the next round) or later (pending).
//
// With nothing pending, a last peeling holds only the triangles of edges above k and live
// candidates: the peeled candidates go to the end of their level, the live ones rise one
// level, to its start, and are the next iteration's seeds (as in mode 4).
//
// Why the order stays a k-order: an edge y that the scan passed without making it a
// candidate counted (fewer than k - 1 held triangles) every edge that ends after it: the
// candidates then live, wherever they go later (the end of a window after y's, or the
// level above), the edges after y at its level, and the edges above k. A peeled candidate
// counted (fewer than k - 1) the live candidates, the edges of the windows not passed and the
// edges above k, and every edge placed after it later is one of those. No edge that the scan
// did not list has a new triangle after it (the candidates that completed one for it listed
// it). A candidate that keeps k - 1 triangles of edges above k and live candidates at the
// end is in the (k + 1)-truss; an edge that rises ends in the set of mode 4 as well (the
// candidates of the windows only lose members that mode 4 peels too).
//
// Kept candidate bounds (as mode 4's, KoBounds): an edge counted short of k - 1 in a window's
// candidate rounds keeps its count less the pushes that reached it until then, and a later
// push of the same window lists it again only when that bound reaches k - 1 (every triangle
// that comes to hold for it pushes it; the counts only grow within an iteration's rounds).
//
// Kept expiries (kexp, slot-indexed): a live candidate's peeling count stops at k - 1 held
// triangles and records the least window of an unscanned edge among them (INT_MAX: none);
// the candidate holds those k - 1 until the scan passes that window, or a candidate beside it
// is peeled (the peeling's pushes list it), so a window's peeling counts only the new
// candidates and those whose expiry it passes. A new candidate's expiry is INT_MIN (counted
// at the next peeling).
#pragma once

#define KW_INF (1LL << 40)    // "no window": past every window
#define KW_MIN 32             // 2 slots: the least pending window + 2^31, by window parity
#define KW_NQ 34              // 2 slots: the lengths of the two pending lists
#define KW_NP 36              // 2 slots: the lengths of the two candidate lists
#define KW_DROPS 38           // out: ranks given out at the end of a window
#define KW_WINDOWS 39         // out: windows scanned
#define KW_PCOUNT 40          // out: candidates counted by the peelings (first rounds)
#define KW_EVALS 41           // out: edges counted by the candidate rounds
#define KW_PEND 42            // out: edges that waited for a later window
#define KW_RISEN 43           // out: rises (an edge that rose two levels counts twice)

struct KwScan {
    KoState S;
    u64* ctl;
    int lev0;                 // a candidate at level k has member == lev0 + k
    int gstamp;               // peeled in the running peeling (reset when it ends)
    int* kexp;                // kept expiries by slot (null: none kept)
    KoBounds B;               // kept candidate bounds (B.push null: none), valid for an iteration
    int* cmin;                // by list index: the least expiry of a count (INT_MAX between)
    i64 tail, wdrop;
    int shift;                // a window: the ranks of 2^shift rounds (rank >> (32 + shift))

    __device__ int mstamp(int k) const { return lev0 + k; }
    __device__ bool live(int p, int k) const {
        return ldcg(&S.member[p]) == lev0 + k && ldcg(&S.gone[p]) != gstamp;
    }
    // the window of a rank, as an int
    __device__ int window(i64 rank) const { return (int)(rank >> (32 + shift)); }
    // the rank of the d-th edge placed at the end of the window before window R
    __device__ i64 drop_rank(i64 R, i64 d) const {
        return ((R * (1LL << shift) - 1) * (1LL << 32)) | (0x80000000LL + d);
    }
};

// Counting phase with its decision, `parts` warps per list edge e = list[i] at level k =
// truss[e] (skip(e, k): passed over, the same in every warp of e): the triangles of e whose
// two other edges hold it (holds(s1, s2, k, r, &expiry)) are counted until k - 1; with
// K.cmin, the least expiry of the counted ones goes to cmin[i]. The last warp of e calls
// finish(e, k, count, expiry) and zeroes cnt[i] (and sets cmin[i] back to INT_MAX).
template <typename Skip, typename Holds, typename Finish>
__device__ void kw_count(const KwScan& K, const int* list, i64 n, int parts, int* cnt, int* c,
                         Skip&& skip, Holds&& holds, Finish&& finish) {
    const KoState& S = K.S;
    const unsigned lane = threadIdx.x & 31;
    for (i64 wi = warp_id(); wi < n * parts; wi += num_warps()) {
        const i64 i = wi / parts;
        const int part = (int)(wi - i * parts);
        const int e = ldcg(&list[i]);
        const int k = ldcg(&S.truss[e]);
        if (skip(e, k)) continue;                            // (warp-uniform)
        const i64 key = S.tkeys[e];
        const int u = hi32(key), v = lo32(key);
        const i64 r = ldcg(&S.rank[e]);
        if (lane == 0) *c = 0;
        __syncwarp();
        int emin = 0x7fffffff;
        warp_common(S.deg, S.ptr, u, v, lane, part, parts, [&](int w) {
            i64 s1, s2;
            et_find2(S.tkeys, S.tshift, et_key(u, w), et_key(v, w), s1, s2);
            if (s1 < 0 || s2 < 0) return;
            int x = 0x7fffffff;
            if (holds(s1, s2, k, r, x)) {
                atomicAdd(c, 1);
                emin = x < emin ? x : emin;
            }
        }, [&] {
            __syncwarp();
            return *c + (ldcg(&cnt[i]) & KO_CNT_MASK) >= k - 1;
        });
        if (K.cmin != nullptr) {
            for (int o = 16; o > 0; o >>= 1) {
                const int y = __shfl_xor_sync(FULL_MASK, emin, o);
                emin = y < emin ? y : emin;
            }
        }
        __syncwarp();
        if (lane == 0) {
            if (parts == 1) {
                finish(e, k, *c, emin);
            } else {
                if (K.cmin != nullptr && emin != 0x7fffffff) atomicMin(&K.cmin[i], emin);
                __threadfence();
                const int was = atomicAdd(&cnt[i], *c + (1 << KO_CNT_BITS));
                if ((was >> KO_CNT_BITS) == parts - 1) {
                    __threadfence();
                    int x = 0x7fffffff;
                    if (K.cmin != nullptr) {
                        x = ldcg(&K.cmin[i]);
                        K.cmin[i] = 0x7fffffff;
                    }
                    cnt[i] = 0;
                    __threadfence();
                    finish(e, k, (was & KO_CNT_MASK) + *c, x);
                }
            }
        }
        __syncwarp();
    }
}

// Whether p holds a triangle for a live candidate at level k in the peeling before window R
// (above k, a live candidate, or at k, no candidate, in window R or later); its expiry: the
// window after which it no longer holds (INT_MAX: it holds while the candidates live).
__device__ __forceinline__ bool kw_peel_holds(const KwScan& K, i64 p, int k, i64 R, int& x) {
    const int t = ldcg(&K.S.truss[p]);
    if (t != k) return t > k;
    const int m = ldcg(&K.S.member[p]);
    if (m == K.lev0 + k) return ldcg(&K.S.gone[p]) != K.gstamp;
    const int w = K.window(ldcg(&K.S.rank[p]));
    if ((i64)w < R) return false;
    x = w < x ? w : x;
    return true;
}

// Whether p held a triangle for a live candidate at level k when it was last counted, as far
// as this round's push can tell (above k, a candidate even if peeled, or unscanned): a
// triangle whose other two edges went in one round lists it from either.
__device__ __forceinline__ bool kw_held(const KwScan& K, i64 p, int k, i64 R) {
    const int t = ldcg(&K.S.truss[p]);
    if (t != k) return t > k;
    if (ldcg(&K.S.member[p]) == K.lev0 + k) return true;
    return (i64)K.window(ldcg(&K.S.rank[p])) >= R;
}

// The first pending window: atomicMin of window + 2^31 over Q[:n] into *slot.
__device__ void kw_phase_min(const KwScan& K, const int* Q, i64 n, u64* slot) {
    unsigned mn = 0xffffffffu;
    WARP_STRIDE(i, n) {
        if (i < n) {
            const unsigned w = (unsigned)((i64)K.window(ldcg(&K.S.rank[ldcg(&Q[i])])) +
                                          0x80000000LL);
            mn = w < mn ? w : mn;
        }
    }
    mn = __reduce_min_sync(FULL_MASK, mn);
    if ((threadIdx.x & 31) == 0 && mn != 0xffffffffu) atomicMin(slot, (u64)mn);
}

// Q[:n] split: the edges of window R to cur (count *ncur), the others to rest (count *nrest).
__device__ void kw_phase_split(const KwScan& K, const int* Q, i64 n, i64 R, int* cur,
                               u64* ncur, int* rest, u64* nrest) {
    WARP_STRIDE(i, n) {
        const int e = i < n ? ldcg(&Q[i]) : 0;
        const bool in = i < n && (i64)K.window(ldcg(&K.S.rank[e])) == R;
        warp_append(cur, ncur, e, in);
        warp_append(rest, nrest, e, i < n && !in);
    }
}

// The peeling before window R (R == KW_INF: the last, at the end of the levels) of the live
// candidates P[:nP]: its first round counts those whose expiry R passes (every one when R is
// KW_INF) and the new ones, a later round those that lost a held triangle to the edges
// peeled in the round before. The live candidates go to keep (their count returned); the
// peeled ones are candidates no more (member and gone cleared). -1 with status set when it
// stopped (deadline, stamps).
__device__ i64 kw_peel(const KwScan& K, KsGrid& G, int* c, int* cnt, const int* P, i64 nP,
                       i64 R, int* wa, int* wb, int* rem, int* keep, int stamp_base, int top,
                       int& used, u64 t0, i64 deadline_ns, u64& rounds, int& status) {
    const KoState& S = K.S;
    u64* ctl = K.ctl;
    const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
    // the first round's list: expired or new (kexp below R; every one at the end)
    WARP_STRIDE(i, nP) {
        const int e = i < nP ? ldcg(&P[i]) : 0;
        const bool due = i < nP && (K.kexp == nullptr || R >= KW_INF ||
                                    (i64)ldcg(&K.kexp[e]) < R);
        warp_append(wa, G.slot(), e, due);
    }
    G.next_phase();
    i64 m = G.last();
    if (leader) ctl[KW_PCOUNT] += (u64)m;
    const int* cur = wa;
    int* nxt = wb;
    const auto skip = [&](int e, int k) { return ldcg(&S.gone[e]) == K.gstamp; };
    const auto holds = [&](i64 s1, i64 s2, int k, i64, int& x) {
        return kw_peel_holds(K, s1, k, R, x) && kw_peel_holds(K, s2, k, R, x);
    };
    while (m > 0) {
        u64* nrem = G.slot();
        kw_count(K, cur, m, ko_parts(m), cnt, c, skip, holds, [&](int e, int k, int got, int x) {
            touch(S.touched, S.tstamp, e, S.ctr);
            if (got >= k - 1) {
                if (K.kexp != nullptr) K.kexp[e] = x;
                return;
            }
            __threadfence();                 // (after the count: see ko_peel.cuh)
            S.rank[e] = R >= KW_INF ? K.tail + (i64)atomicAdd(&ctl[KS_TAIL], 1ull)
                                    : K.drop_rank(R, K.wdrop +
                                                  (i64)atomicAdd(&ctl[KW_DROPS], 1ull));
            __threadfence();
            S.gone[e] = K.gstamp;
            rem[atomicAdd(nrem, 1ull)] = e;
        });
        if (leader) {
            ++ctl[KS_PEEL_ROUNDS];
            if ((i64)(ks_now() - t0) > deadline_ns) ctl[KS_ABORT] = 1;
        }
        G.next_phase(KS_PH_PEEL);
        ++rounds;
        const i64 r = G.last();
        if (r == 0) break;
        if (ldcg(&ctl[KS_ABORT])) { status = KS_SLOW; return -1; }
        if (used + 1 > top) { status = KS_NO_STAMPS; return -1; }
        const int wstamp = stamp_base + (++used);
        // the live candidates that lost a held triangle to rem[:r]
        const i64 np = r * (i64)ko_parts(r);
        const int parts = ko_parts(r);
        const unsigned lane = threadIdx.x & 31;
        u64* nn = G.slot();
        for (i64 wi = warp_id(); wi < np; wi += num_warps()) {
            const i64 i = wi / parts;
            const int part = (int)(wi - i * parts);
            const int e = ldcg(&rem[i]);
            const int k = ldcg(&S.truss[e]);
            const i64 key = S.tkeys[e];
            const int u = hi32(key), v = lo32(key);
            warp_common(S.deg, S.ptr, u, v, lane, part, parts, [&](int w) {
                i64 s1, s2;
                et_find2(S.tkeys, S.tshift, et_key(u, w), et_key(v, w), s1, s2);
                if (s1 < 0 || s2 < 0) return;
                const bool l1 = ldcg(&S.truss[s1]) == k && K.live((int)s1, k);
                const bool l2 = ldcg(&S.truss[s2]) == k && K.live((int)s2, k);
                if (l1 && kw_held(K, s2, k, R) &&
                    atomicExch(&S.pushed[s1], wstamp) != wstamp)
                    nxt[atomicAdd(nn, 1ull)] = (int)s1;
                if (l2 && kw_held(K, s1, k, R) &&
                    atomicExch(&S.pushed[s2], wstamp) != wstamp)
                    nxt[atomicAdd(nn, 1ull)] = (int)s2;
            }, NO_STOP);
        }
        G.next_phase(KS_PH_PEEL_PUSH);
        m = G.last();
        cur = nxt;
        nxt = nxt == wa ? wb : wa;
        // (rem is rewritten by the next round's count only after its barrier: every push
        // above read it before this one)
    }
    // the live candidates to keep; the peeled ones are no candidates any more
    WARP_STRIDE(i, nP) {
        const int e = i < nP ? ldcg(&P[i]) : 0;
        const bool gone = i < nP && ldcg(&S.gone[e]) == K.gstamp;
        warp_append(keep, G.slot(), e, i < nP && !gone);
        if (gone) {
            S.member[e] = 0;
            S.gone[e] = 0;
        }
    }
    G.next_phase();
    return G.last();
}

// The end of a candidate round's push phase (every thread): the update stops (ctl[KS_ABORT])
// once its candidates pass max_region or its time passes deadline_ns; whether it stopped.
__device__ bool kw_round_end(KsGrid& G, u64* ctl, i64 max_region, u64 t0, i64 deadline_ns) {
    if (blockIdx.x == 0 && threadIdx.x == 0 &&
        ((i64)ldcg(&ctl[KS_ALL]) > max_region || (i64)(ks_now() - t0) > deadline_ns))
        ctl[KS_ABORT] = 1;
    G.next_phase(KS_PH_PUSH);
    return ldcg(&ctl[KS_ABORT]) != 0;
}

// ko_wscan's arguments: the k-order state (KO_STATE_PARAMS); seeds[:ctr[C_EXTRA]] the
// insertion's seeds (distinct slots, each at its level); la, lb: the candidate rounds'
// lists; newc: a round's new candidates; pa, pb: the live candidates; qa, qb: the pending
// edges; wa, wb, rem: the peelings' lists; cnt: zero (as ko_scan's); cmin: INT_MAX by list
// index (or null); kexp: kept expiries by slot (or null); kpush, kbase: kept candidate
// bounds (KoBounds, valid for an iteration's stamp; or null); ctl, bar: ko_scan's words (zero)
// and grid barrier; stamp_base, stamp_span: the fresh stamps (member stamps by level at the
// end of the span, as mode 4); tail, head_in: the rank counters; wdrop: the ranks given out at
// the ends of windows before this launch; k_cap > 0: levels from k_cap up are never
// candidates (the host's top levels); window_shift: a window is 2^window_shift rounds.
// Outputs as ko_scan's (KS_*), and KW_* above.
extern "C" __global__ void __launch_bounds__(256, 2)
ko_wscan(KO_STATE_PARAMS, const int* seeds, int* la, int* lb, int* newc, int* pa, int* pb,
         int* qa, int* qb, int* wa, int* wb, int* rem, int* cnt, int* cmin, int* kexp,
         unsigned* kpush, u64* kbase, u64* ctl, unsigned* bar, int stamp_base,
         int stamp_span, i64 tail, i64 head_in,
         i64 wdrop, i64 max_region, i64 deadline_ns, int k_cap, int window_shift) {
    __shared__ int count[WARPS];
    int* c = &count[(threadIdx.x >> 5) & (WARPS - 1)];
    KwScan K;
    K.S = KoState{deg, ptr, tkeys, tshift, truss, rank, member, gone, pushed, touched, tstamp,
                  ctr, k_cap > 0 ? k_cap : 0x7fffffff};
    K.ctl = ctl;
    K.lev0 = stamp_base + stamp_span - KS_LEVEL_STAMPS;
    K.kexp = kexp;
    K.cmin = kexp != nullptr ? cmin : nullptr;
    K.B = KoBounds{kpush, kbase, 0};
    K.tail = tail;
    K.wdrop = wdrop;
    K.shift = window_shift;
    const KoState& S = K.S;
    KsGrid G;
    G.ctl = ctl; G.bar = bar; G.ph = 0; G.t = ks_now(); G.q = 0;
    const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
    const u64 t0 = ks_now();
    const int top = stamp_span - KS_LEVEL_STAMPS;
    int used = 0, status = KS_DONE;
    i64 head = head_in;
    u64 rounds = 0, iterations = 0;
    K.gstamp = stamp_base + (++used);
    int* P[2] = {pa, pb};
    int* Qb[2] = {qa, qb};
    int pp = 0, qp = 0, mp = 0;
    const int* src = seeds;
    i64 nsrc = (i64)ldcg(&ctr[C_EXTRA]);
    while (nsrc > 0 && status == KS_DONE) {
        // an iteration: the seeds pending (in Qb[0]), no candidate
        if (used + 1 > top) { status = KS_NO_STAMPS; break; }
        const int qstamp = stamp_base + (++used);
        K.B.stamp = qstamp;
        GRID_STRIDE(i, nsrc) {
            const int e = ldcg(&src[i]);
            Qb[0][i] = e;
            S.pushed[e] = qstamp;
        }
        const int ppn = src == P[pp] ? 1 - pp : pp;     // (the seeds may be a candidate list)
        if (leader) {
            ctl[KW_NQ] = 0;
            ctl[KW_NQ + 1] = 0;
            ctl[KW_NP + ppn] = 0;
            ctl[KW_MIN] = ~0ull;
            ctl[KW_MIN + 1] = ~0ull;
        }
        pp = ppn;
        qp = 0;
        i64 nQ = nsrc, nP = 0;
        G.next_phase();
        while (true) {
            // the first pending window R (KW_INF: none)
            kw_phase_min(K, Qb[qp], nQ, &ctl[KW_MIN + mp]);
            if (leader) {
                ctl[KW_MIN + 1 - mp] = ~0ull;
                ctl[KW_NQ + 1 - qp] = 0;
            }
            G.next_phase();
            const u64 mw = ldcg(&ctl[KW_MIN + mp]);
            mp ^= 1;
            const i64 R = nQ > 0 && mw != ~0ull ? (i64)mw - 0x80000000LL : KW_INF;
            if (nP > 0) {                   // the live candidates before window R
                const i64 live = kw_peel(K, G, c, cnt, P[pp], nP, R, wa, wb, rem, P[1 - pp],
                                         stamp_base, top, used, t0, deadline_ns, rounds,
                                         status);
                if (live < 0) break;
                pp ^= 1;
                nP = live;
                if (leader) ctl[KW_NP + pp] = (u64)live;    // (appended to from here on)
            }
            if (R >= KW_INF) break;
            if (leader) ++ctl[KW_WINDOWS];
            // window R's edges (the rest stays pending, in the other list)
            kw_phase_split(K, Qb[qp], nQ, R, la, G.slot(), Qb[1 - qp], &ctl[KW_NQ + 1 - qp]);
            G.next_phase();
            i64 n = G.last();
            const int* cur = la;
            int* nxt = lb;
            while (n > 0) {                 // window R's candidate rounds
                if (used + 1 > top) { status = KS_NO_STAMPS; break; }
                const int pstamp = stamp_base + (++used);
                if (leader) ctl[KW_EVALS] += (u64)n;
                u64* nnew = G.slot();
                kw_count(K, cur, n, ko_parts(n), cnt, c,
                         [&](int e, int k) {
                             return k >= S.cap || ldcg(&S.member[e]) == K.mstamp(k);
                         },
                         [&](i64 s1, i64 s2, int k, i64 r, int&) {
                             return ko_holds2(S.truss, S.rank, S.member, K.mstamp(k), S.gone,
                                              K.gstamp, s1, s2, k, r, 1);
                         },
                         [&](int y, int k, int got, int) {
                             touch(S.touched, S.tstamp, y, S.ctr);
                             if (got < k - 1) {
                                 if (K.B.push) ko_bound_store(K.B, y, got, __ldcg(&K.B.push[y]));
                                 return;
                             }
                             if (k >= KS_LEVEL_STAMPS - 1) {   // (past the member stamps)
                                 ctl[KS_ABORT] = 1;
                                 return;
                             }
                             S.member[y] = K.mstamp(k);
                             if (K.kexp != nullptr) K.kexp[y] = (int)0x80000000;
                             newc[atomicAdd(nnew, 1ull)] = y;
                             P[pp][atomicAdd(&ctl[KW_NP + pp], 1ull)] = y;
                             atomicAdd(&ctl[KS_ALL], 1ull);
                         });
                G.next_phase(KS_PH_CAND);
                const i64 m = G.last();
                // the new candidates' pushes: the edges after them at their level whose
                // triangle with them now holds, to the next round (window R) or pending
                const int parts = ko_parts(m);
                const unsigned lane = threadIdx.x & 31;
                u64* nn = G.slot();
                u64* nq = &ctl[KW_NQ + 1 - qp];
                int* Qn = Qb[1 - qp];
                for (i64 wi = warp_id(); wi < m * parts; wi += num_warps()) {
                    const i64 i = wi / parts;
                    const int part = (int)(wi - i * parts);
                    const int x = ldcg(&newc[i]);
                    const int k = ldcg(&S.truss[x]);
                    const int ms = K.mstamp(k);
                    const i64 key = S.tkeys[x];
                    const int u = hi32(key), v = lo32(key);
                    const i64 rx = ldcg(&S.rank[x]);
                    warp_common(S.deg, S.ptr, u, v, lane, part, parts, [&](int w) {
                        i64 s1, s2;
                        et_find2(S.tkeys, S.tshift, et_key(u, w), et_key(v, w), s1, s2);
                        if (s1 < 0 || s2 < 0) return;
                        const int f1 = ldcg(&S.truss[s1]), f2 = ldcg(&S.truss[s2]);
                        if (f1 < k || f2 < k || (f1 > k && f2 > k)) return;
                        const i64 r1 = ldcg(&S.rank[s1]), r2 = ldcg(&S.rank[s2]);
                        const bool c1 = ldcg(&S.member[s1]) == ms;
                        const bool c2 = ldcg(&S.member[s2]) == ms;
                        const bool q1 = f1 == k && r1 > rx && !c1 && (f2 > k || c2 || r2 > r1);
                        const bool q2 = f2 == k && r2 > rx && !c2 && (f1 > k || c1 || r1 > r2);
                        for (int j = 0; j < 2; ++j) {
                            if (!(j ? q2 : q1)) continue;
                            const i64 s = j ? s2 : s1;
                            if ((i64)K.window(j ? r2 : r1) == R) {
                                // (kept bounds: listed once its count may reach k - 1)
                                if ((K.B.push == nullptr || ko_bound_due(K.B, (int)s, k)) &&
                                    atomicExch(&S.pushed[s], pstamp) != pstamp)
                                    nxt[atomicAdd(nn, 1ull)] = (int)s;
                            } else if (atomicExch(&S.pushed[s], qstamp) != qstamp) {
                                Qn[atomicAdd(nq, 1ull)] = (int)s;
                                atomicAdd(&ctl[KW_PEND], 1ull);
                            }
                        }
                    }, NO_STOP);
                }
                const bool stop = kw_round_end(G, ctl, max_region, t0, deadline_ns);
                ++rounds;
                if (stop) { status = KS_SLOW; break; }
                n = G.last();
                cur = nxt;
                nxt = nxt == la ? lb : la;
            }
            if (status != KS_DONE) break;
            nQ = (i64)ldcg(&ctl[KW_NQ + 1 - qp]);
            nP = (i64)ldcg(&ctl[KW_NP + pp]);
            qp ^= 1;
        }
        if (status != KS_DONE) break;
        ++iterations;
        // the live candidates rise one level, to its start: the next iteration's seeds
        GRID_STRIDE(i, nP) {
            const int e = ldcg(&P[pp][i]);
            S.truss[e] = ldcg(&S.truss[e]) + 1;
            S.rank[e] = head - nP + 1 + i;
            if (K.B.base) K.B.base[e] = 0;
        }
        if (leader) ctl[KW_RISEN] += (u64)nP;
        G.next_phase();
        head -= nP;
        src = P[pp];
        nsrc = nP;
    }
    if (leader) {
        ctl[KS_HEAD] = (u64)head;
        ctl[KS_STATUS] = (u64)status;
        ctl[KS_STAMPS] = (u64)used;
        ctl[KS_LEVELS] = iterations;
        ctl[KS_ROUNDS] = rounds;
        ctl[KS_TOUCHED] = ldcg(&ctr[C_TOUCHED]);
        ctl[KS_SPUN] = *(volatile unsigned*)(bar + 2);
    }
}
