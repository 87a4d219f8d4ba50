// The synchronous peeling that ranks edges at the end of their level, from a worklist
// (included by dynamic_gpu.cu after the k-order phases and ko_scan_grid.cuh).
//
// Members: distinct edges, each at its level k = truss[e], marked member == mstamp (with
// per_level: member == mstamp + k). A member is live until a round peels it (gone == gstamp).
// A live member at level k holds a triangle when its two other edges are above k or live
// members at k; it is peeled when it holds fewer than k - 1, and ranked at the end of its
// level (tail + a counter).
//
// The first round counts every member; a later round counts only the live members that lost
// a held triangle to the edges peeled in the round before (the push phase lists them): any
// other live member holds every triangle it held when it was last counted, k - 1 or more.
// (A push intersects every peeled edge in full; when a round peels at least as many edges as
// stay live, the next round counts every live member instead.)
// The count and the decision share one phase (ko_count_items' finisher), so a round is two
// phases (peel, push) however many members stay live.
//
// A round's count may see edges that the same round has peeled already (peeling them sooner
// only removes edges that cannot survive: the survivors are the same). The ranks stay a
// k-order: an edge takes its rank number before it is marked gone, so an edge that counted
// it gone takes a later number, and a triangle it did not count has that edge before it.
//
// The host-driven rounds may keep counts (KoKept, cnt given): a member that survives its count
// keeps it (a lower bound of its held triangles: counting stops at k - 1 + slack, or never
// with slack < 0), the push phase lowers it by one for every held triangle a peeled edge
// takes (a triangle whose two other edges both went in one round may be taken twice: still a
// lower bound), and lists the member only when it drops below k - 1. A member is peeled only
// on a count of its own round, so the ranks stay a k-order as above.
#pragma once

#include "../algos/ktruss/ko_async.cuh"      // ks_async (Q.cap > 0)

// Kept counts of the host-driven peeling (cnt nullptr: none): cnt[e] valid where
// valid[e] == vstamp; the count stops at k - 1 + slack (slack < 0: never).
struct KoKept {
    int* cnt; int* valid; int vstamp; int slack;
};

// Peel phase, `parts` warps per live member e = list[i]: the members with fewer than k - 1
// held triangles are peeled (rank, gone = gstamp) and listed in removed (count *nrem) and,
// when given, in removed2 (count *nrem2); *npeeled, when given, counts them too. With K.cnt,
// a survivor keeps its count.
__device__ void ko_phase_peel(const KoState& S, const int* list, i64 n, int parts,
                              const int* member, int mstamp, int per_level, int gstamp,
                              int* cnt, int* c, i64 tail, u64* ntail, int* removed, u64* nrem,
                              int* removed2, u64* nrem2, u64* npeeled = nullptr,
                              KoKept K = KoKept{nullptr, nullptr, 0, 0}) {
    ko_count_items<true>(S, list, n, parts, -1, member, mstamp, gstamp, 0, cnt, c, per_level,
                         [&](i64, int e, int k, int got) {
        touch(S.touched, S.tstamp, e, S.ctr);
        if (got >= k - 1) {
            if (K.cnt != nullptr) {
                K.cnt[e] = got;
                K.valid[e] = K.vstamp;
            }
            return;
        }
        __threadfence();                     // (after the count: see the file's comment)
        S.rank[e] = tail + (i64)atomicAdd(ntail, 1ull);
        __threadfence();
        S.gone[e] = gstamp;
        removed[atomicAdd(nrem, 1ull)] = e;
        if (removed2) removed2[atomicAdd(nrem2, 1ull)] = e;
        if (npeeled) atomicAdd(npeeled, 1ull);
    }, K.cnt != nullptr ? K.slack : 0);
}

// Push phase, `parts` warps per edge e = removed[i] (i < m) peeled in the last round at level
// k: every live member p at k in a triangle of e whose third edge is above k or a member at k
// (p held that triangle) goes to next (count *nnext, deduplicated by pushed == wstamp); with
// K.cnt, a member with a kept count only when the count drops below k - 1.
__device__ void ko_phase_peel_push(const KoState& S, const int* removed, i64 m, int parts,
                                   const int* member, int mstamp0, int per_level, int gstamp,
                                   int wstamp, int* next, u64* nnext,
                                   KoKept K = KoKept{nullptr, nullptr, 0, 0}) {
    // (p lost a held triangle: listed unless its kept count still reaches k - 1)
    const auto short_of = [&](i64 p, int k) {
        return K.cnt == nullptr || ldcg(&K.valid[p]) != K.vstamp ||
               atomicSub(&K.cnt[p], 1) - 1 < k - 1;
    };
    const unsigned lane = threadIdx.x & 31;
    for (i64 wi = warp_id(); wi < m * parts; wi += num_warps()) {
        const i64 i = wi / parts;
        const int part = (int)(wi - i * parts);
        const int e = ldcg(&removed[i]);
        const int k = ldcg(&S.truss[e]);
        const int mstamp = per_level ? mstamp0 + k : mstamp0;
        const i64 key = S.tkeys[e];
        const int u = hi32(key), v = lo32(key);
        warp_common(S.deg, S.ptr, u, v, lane, part, parts, [&](int w) {
            const i64 s1 = et_find(S.tkeys, S.tshift, et_key(u, w));
            const i64 s2 = et_find(S.tkeys, S.tshift, et_key(v, w));
            if (s1 < 0 || s2 < 0) return;
            const int t1 = ldcg(&S.truss[s1]), t2 = ldcg(&S.truss[s2]);
            if (t1 < k || t2 < k) return;
            const bool m1 = t1 == k && ldcg(&member[s1]) == mstamp;
            const bool m2 = t2 == k && ldcg(&member[s2]) == mstamp;
            if (m1 && (t2 > k || m2) && ldcg(&S.gone[s1]) != gstamp && short_of(s1, k) &&
                atomicExch(&S.pushed[s1], wstamp) != wstamp)
                next[atomicAdd(nnext, 1ull)] = (int)s1;
            if (m2 && (t1 > k || m1) && ldcg(&S.gone[s2]) != gstamp && short_of(s2, k) &&
                atomicExch(&S.pushed[s2], wstamp) != wstamp)
                next[atomicAdd(nnext, 1ull)] = (int)s2;
        }, NO_STOP);
    }
}

// The members list[:n] not peeled (gone != gstamp) to keep (count *nkeep).
__device__ void ko_phase_live(const KoState& S, const int* list, i64 n, int gstamp, int* keep,
                              u64* nkeep) {
    GRID_STRIDE(i, n) {
        const int e = ldcg(&list[i]);
        if (ldcg(&S.gone[e]) != gstamp) keep[atomicAdd(nkeep, 1ull)] = e;
    }
}

// The whole peeling of list[:n] inside ko_scan (rounds until one peels nothing; the worklists
// in wa / wb, a round's peeled edges in rem, also appended to removed2 (count *nrem2) when
// given; ranks from tail, counted in ctl[KS_TAIL]; with K.cnt, its synchronous rounds keep
// the survivors' counts as the host-driven rounds do, K.vstamp set to gstamp here: a member
// is counted again only when the peeled edges took it below k - 1, so a large level whose
// members mostly keep their triangles is not counted again round by round, and K.slack is
// added to the count's stop only in this peeling's own rounds). Returns the live members
// left, listed in
// keep when given, or -1 with status set when it stopped (deadline: ctl[KS_ABORT]; stamps:
// a round's push takes a fresh one while used < stamp_top).
__device__ i64 ks_peel(const KoState& S, KsGrid& G, u64* ctl, int* c, int* cnt,
                       const int* list, i64 n, const int* member, int mstamp, int per_level,
                       int gstamp, i64 tail, int* wa, int* wb, int* rem, int* keep,
                       int* removed2, u64* nrem2, int stamp_base, int stamp_top, int& used,
                       u64 t0, i64 deadline_ns, u64& rounds, int& status, const KsQueue& Q,
                       KoKept K = KoKept{nullptr, nullptr, 0, 0}) {
    const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
    if (ksq_on(Q, KSQ_PEEL) && n > 0) {         // one asynchronous phase (ko_async.cuh)
        if (used + 2 > stamp_top) { status = KS_NO_STAMPS; return -1; }
        const int qstamp = stamp_base + (++used);
        const int cstamp = stamp_base + (++used);
        KsAsyncJob J{};
        J.member = member; J.mstamp0 = mstamp; J.per_level = per_level; J.gstamp = gstamp;
        J.cstamp = cstamp; J.tail = tail; J.removed2 = removed2; J.nrem2 = nrem2;
        const i64 peeled = ks_async<false>(S, G, ctl, c, Q, list, n, J, qstamp, t0,
                                           deadline_ns);
        if (leader) ++ctl[KS_PEEL_ROUNDS];
        ++rounds;
        if (peeled < 0) { status = KS_SLOW; return -1; }
        if (keep == nullptr) return n - peeled;
        ko_phase_live(S, list, n, gstamp, keep, G.slot());
        G.next_phase();
        return G.last();
    }
    if (K.cnt != nullptr) K.vstamp = gstamp;   // (the counts of this peeling only)
    const int* cur = list;
    int* nxt = wa;
    i64 m = n, peeled = 0;
    while (m > 0) {
        ko_phase_peel(S, cur, m, ko_parts(m), member, mstamp, per_level, gstamp, cnt, c, tail,
                      &ctl[KS_TAIL], rem, G.slot(), removed2, nrem2, nullptr, K);
        if (leader) {
            ++ctl[KS_PEEL_ROUNDS];                       // (read by the host only)
            if ((i64)(ks_now() - t0) > deadline_ns) ctl[KS_ABORT] = 1;
        }
        G.next_phase(KS_PH_PEEL);
        ++rounds;
        const i64 r = G.last();
        peeled += r;
        if (r == 0 || peeled == n) break;
        if (ldcg(&ctl[KS_ABORT])) { status = KS_SLOW; return -1; }
        if (used + 1 > stamp_top) { status = KS_NO_STAMPS; return -1; }
        const int wstamp = stamp_base + (++used);
        if (r >= n - peeled)                 // (fewer live members than peeled: count them all)
            ko_phase_live(S, list, n, gstamp, nxt, G.slot());
        else
            ko_phase_peel_push(S, rem, r, ko_parts(r), member, mstamp, per_level, gstamp,
                               wstamp, nxt, G.slot(), K);
        G.next_phase(KS_PH_PEEL_PUSH);
        m = G.last();
        cur = nxt;
        nxt = nxt == wa ? wb : wa;
    }
    if (keep == nullptr) return n - peeled;
    ko_phase_live(S, list, n, gstamp, keep, G.slot());
    G.next_phase();
    return G.last();
}

// One-phase kernels of the peeling (host-driven rounds: the host reads the counters pc once a
// round). pc (zero at the start of a peeling): PC_REM + parity, the edges a round peeled;
// PC_NEXT + parity, the length of a round's list (written by the round before); PC_PEELED,
// the edges peeled in all; PC_LIVE, the live members listed at the end.
#define PC_REM 0
#define PC_NEXT 2
#define PC_PEELED 4
#define PC_LIVE 5

// Warps per edge of a host-driven round over n edges (as the host's _parts: TARGET_WARPS,
// MAX_PARTS).
__device__ __forceinline__ int ko_round_parts(i64 n) {
    const i64 p = (8192 + (n > 0 ? n : 1) - 1) / (n > 0 ? n : 1);
    return (int)(p > 16 ? 16 : p);
}

// A round's peel phase over list[:n] (sized by the host); its thread 0 zeroes the next
// round's words, which nothing reads in this round.
extern "C" __global__ void ko_peel_round(KO_STATE_PARAMS, const int* list, i64 n,
                                         const int* pmember, int mstamp, int gstamp, int* cnt,
                                         i64 tail, int* rem, u64* pc, int parity, int* kcnt,
                                         int* kvalid, int vstamp, int slack) {
    __shared__ int count[WARPS];
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        pc[PC_REM + 1 - parity] = 0;
        pc[PC_NEXT + 1 - parity] = 0;
    }
    const KoState S = KO_STATE;
    ko_phase_peel(S, list, n, ko_round_parts(n), pmember, mstamp, 0, gstamp, cnt,
                  &count[(threadIdx.x >> 5) & (WARPS - 1)], tail, &ctr[C_TAIL], rem,
                  &pc[PC_REM + parity], nullptr, nullptr, &pc[PC_PEELED],
                  KoKept{kcnt, kvalid, vstamp, slack});
}

// The next round's list (members[:n] the peeling's members, rem[:pc[PC_REM + parity]] this
// round's peeled edges, both counts read on the device: a whole grid): the live members that
// lost a triangle to them, or, when the round peeled at least as many as stay live, every
// live member; nothing when the round peeled none or the last member.
extern "C" __global__ void ko_peel_next(KO_STATE_PARAMS, const int* members, i64 n,
                                        const int* rem, const int* pmember, int mstamp,
                                        int gstamp, int wstamp, int* next, u64* pc,
                                        int parity, int* kcnt, int* kvalid, int vstamp) {
    const i64 r = (i64)ldcg(&pc[PC_REM + parity]), peeled = (i64)ldcg(&pc[PC_PEELED]);
    if (r == 0 || peeled == n) return;
    const KoState S = KO_STATE;
    if (r >= n - peeled)
        ko_phase_live(S, members, n, gstamp, next, &pc[PC_NEXT + 1 - parity]);
    else
        ko_phase_peel_push(S, rem, r, ko_round_parts(r), pmember, mstamp, 0, gstamp, wstamp,
                           next, &pc[PC_NEXT + 1 - parity], KoKept{kcnt, kvalid, vstamp, 0});
}

extern "C" __global__ void ko_peel_live(KO_STATE_PARAMS, const int* list, i64 n, int gstamp,
                                        int* keep, u64* pc) {
    const KoState S = KO_STATE;
    ko_phase_live(S, list, n, gstamp, keep, &pc[PC_LIVE]);
}
