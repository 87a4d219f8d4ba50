// ko_scan mode 4 (included by dynamic_gpu.cu after the ko_phase_* functions and
// ko_scan_grid.cuh): an insertion's k-order scan over every level at once.
//
// The level-by-level scan (mode 0) finishes level k (candidates, then their peeling) before it
// starts level k + 1. Level k depends on the other levels only through the edges that rise
// into it from level k - 1: the edges above k stay above k (an insertion never lowers a
// number), and the edges below it never hold a level-k triangle. The candidates of a level
// (the least fixed point of a count that only grows with the candidates) and the survivors of
// their peeling (the largest subset whose edges keep k - 1 triangles in it) only grow when
// more edges rise into the level. So every level runs at once, each edge at its own level
// truss[e], and a level takes the edges that rise into it later as seeds, its candidate set
// growing from where it stood:
//
//   iteration: candidate rounds from the worklist (every edge at its own level; a new
//   candidate marks its level dirty); the members of the dirty levels are peeled again from
//   scratch (ks_peel: the first round counts them all, the later ones only those that lost a
//   triangle; the others keep their peeling); the survivors rise one level, at its start, and
//   are the next worklist. It ends when no edge rises.
//
// Level k is final once the levels below it are: the iterations are at most the levels the
// level-by-level scan visits, and each costs the rounds of its slowest level, not the sum.
//
// Per-level membership: the candidates of level k have member == lev0 + k (a block of
// KS_LEVEL_STAMPS stamps at the end of the launch's span), so an edge that rises is no
// candidate at its new level until that level's scan makes it one. P (pa / pb, count
// ctl[KS_ALL]) lists every candidate still at the level where it is one; peeled edges keep
// their place in it, survivors leave it.
#pragma once

#define KS_PEELED 11              // mode 4: the next P's length (peeled and clean members)
#define KS_NKA 19                 // mode 4 with KSQ_FUSED: the members peeled again

// The members list[:n] not peeled (gone != gstamp) rise one level each, to the start of it
// (ranks head, head - 1, ...: their order there is the next scan's to settle), listed in keep
// (count *nkeep): ko_phase_live and ks_phase_rise in one phase.
__device__ void ks_phase_live_rise(const KoState& S, const int* list, i64 n, int gstamp,
                                   int* keep, u64* nkeep, i64 head, const KoBounds& B) {
    WARP_STRIDE(i, n) {                      // (warp-aggregated appends: warp_append)
        const int e = i < n ? ldcg(&list[i]) : 0;
        const i64 j = warp_append(keep, nkeep, e, i < n && ldcg(&S.gone[e]) != gstamp);
        if (j < 0) continue;
        S.truss[e] = ldcg(&S.truss[e]) + 1;
        S.rank[e] = head - j;
        if (B.base) B.base[e] = 0;           // (a kept bound holds at its level only)
    }
}

// Candidate phase of the scan of every level (ko_count_items with its decision, each list
// edge y at its own level k = truss[y], candidates member == lev0 + k): y becomes a candidate
// when at least k - 1 of its triangles have both other edges above k, candidates at k, or at
// k after y; a new candidate goes to newc (count *nnew) and P (count *nall), and marks its
// level dirty (dirty[k] = istamp). A level too high for the member stamps sets *abort. A
// count may see candidates that the same phase made: the candidate set only grows, and each
// new candidate's push lists the edges it may complete for the next round.
__device__ void ks_phase_candidates(const KoState& S, const int* list, i64 n, int lev0, int* cnt,
                                    int* c, int* newc, u64* nnew, int* all, u64* nall,
                                    int* dirty, int istamp, u64* abort, const KoBounds& B) {
    ko_count_items<true>(S, list, n, ko_parts(n), KO_OWN_LEVEL, S.member, lev0, -1, 1, cnt, c,
                         1, [&](i64, int y, int k, int got) {
        touch(S.touched, S.tstamp, y, S.ctr);
        if (got < k - 1) {
            // (kept bounds: the pushes come in the push phases, so push[y] is the value
            // this count started from)
            if (B.push) ko_bound_store(B, y, got, __ldcg(&B.push[y]));
            return;
        }
        if (k >= KS_LEVEL_STAMPS - 1) {          // (lev0 + k would leave the launch's stamps)
            *abort = 1;
            return;
        }
        S.member[y] = lev0 + k;
        newc[atomicAdd(nnew, 1ull)] = y;
        all[atomicAdd(nall, 1ull)] = y;
        if (ldcg(&dirty[k]) != istamp) dirty[k] = istamp;
    });
}

// P[:n] split by level: the members of the dirty levels (dirty == istamp) to out (count
// *nout: this iteration's peeling), the others to rest (count *nrest: the next P).
__device__ void ks_phase_split(const KoState& S, const int* P, i64 n, const int* dirty,
                               int istamp, int* out, u64* nout, int* rest, u64* nrest) {
    GRID_STRIDE(i, n) {
        const int e = ldcg(&P[i]);
        if (ldcg(&dirty[ldcg(&S.truss[e])]) == istamp) out[atomicAdd(nout, 1ull)] = e;
        else rest[atomicAdd(nrest, 1ull)] = e;
    }
}

// The survivors list[:n] rise one level each, first in it (ranks head + i).
__device__ void ks_phase_rise(const KoState& S, const int* list, i64 n, i64 head,
                              const KoBounds& B) {
    GRID_STRIDE(i, n) {
        const int e = ldcg(&list[i]);
        S.truss[e] = ldcg(&S.truss[e]) + 1;
        S.rank[e] = head + i;
        if (B.base) B.base[e] = 0;           // (a kept bound holds at its level only)
    }
}

// Mode 4 from the seeds seeds[:n] (distinct slots, each at its own level). pa / pb: P and
// the next P; ka / kb: the peeling's lists; la / lb: the scan's worklists; dirty: a stamp by
// level (KS_LEVEL_STAMPS ints); K: kept counts for the synchronous peelings (K.cnt null:
// none; ks_peel); cand_factor > 0: an iteration whose candidate rounds end after
// deadline_ns / cand_factor stops there (status KS_SLOW, ctl[KS_ABORT] = 2). Returns the
// status; head, used, rounds and iterations are the caller's counters.
__device__ int ks_levels(const KoState& S, KsGrid& G, u64* ctl, int* c, int* cnt,
                         const int* seeds, i64 n, int* la, int* lb, int* newc, int* pa,
                         int* pb, int* ka, int* kb, int* dirty, int stamp_base,
                         int stamp_span, int& used, i64& head, i64 tail, i64 max_region,
                         i64 deadline_ns, u64 t0, u64& rounds, u64& iterations,
                         const KsQueue& Q, const KoBounds& B, KoKept K, int cand_factor) {
    const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
    const int top = stamp_span - KS_LEVEL_STAMPS;    // stamps for rounds: used <= top
    const int lev0 = stamp_base + top;
    const int* cur = seeds;
    int* P = pa;
    int* Pn = pb;
    while (n > 0) {
        if (used + 2 > top) return KS_NO_STAMPS;
        const int istamp = stamp_base + (++used);
        int* nxt = la;
        if (leader) ctl[KS_NKA] = 0;              // (read in the last phase of the iteration)
        if (ksq_on(Q, KSQ_CAND) && n > 0) {    // one asynchronous phase (ko_async.cuh)
            if (used + 1 > top) return KS_NO_STAMPS;
            KsAsyncJob J{};
            J.member = S.member; J.mstamp0 = lev0; J.per_level = 1; J.gstamp = -1;
            J.all = P; J.nall = &ctl[KS_ALL]; J.dirty = dirty; J.istamp = istamp;
            J.max_region = max_region;
            const int qstamp = stamp_base + (++used);
            const i64 joined = ks_async<true>(S, G, ctl, c, Q, cur, n, J, qstamp, t0,
                                              deadline_ns);
            ++rounds;
            if (joined < 0) return KS_SLOW;
            n = 0;
        }
        while (n > 0) {                                   // candidate rounds, all levels
            if (used + 2 > top) return KS_NO_STAMPS;
            const int pstamp = stamp_base + (++used);
            ks_phase_candidates(S, cur, n, lev0, cnt, c, newc, G.slot(), P, &ctl[KS_ALL],
                                dirty, istamp, &ctl[KS_ABORT], B);
            G.next_phase(KS_PH_CAND);
            const i64 m = G.last();
            ko_phase_push(S, newc, m, -1, lev0, pstamp, nxt, G.slot(), ko_parts(m), 1, B);
            if (leader && ((i64)ldcg(&ctl[KS_ALL]) > max_region ||
                           (i64)(ks_now() - t0) > deadline_ns))
                ctl[KS_ABORT] = 1;
            G.next_phase(KS_PH_PUSH);
            ++rounds;
            if (ldcg(&ctl[KS_ABORT])) return KS_SLOW;
            n = G.last();
            cur = nxt;
            nxt = nxt == la ? lb : la;
        }
        if (cand_factor > 0) {
            // (the peeling of a flat level's candidates costs about cand_factor - 1 times
            // their candidate rounds: an update that has spent 1 / cand_factor of its time
            // limit by now would pass it there, and stops before it, ctl[KS_ABORT] = 2)
            if (leader && (i64)(ks_now() - t0) * cand_factor > deadline_ns) ctl[KS_ABORT] = 2;
            G.next_phase();
            if (ldcg(&ctl[KS_ABORT])) return KS_SLOW;
        }
        if (ksq_on(Q, KSQ_PEEL) && (Q.modes & KSQ_FUSED)) {
            // the peeling's first pushes split P (the members of the dirty levels are peeled
            // again, the others go to the next P), and the survivors are listed and rise in
            // one phase after it: one barrier each
            if (used + 3 > top) return KS_NO_STAMPS;
            KsAsyncJob J{};
            J.member = S.member; J.mstamp0 = lev0; J.per_level = 1;
            J.gstamp = stamp_base + (++used);
            J.cstamp = stamp_base + (++used);
            J.tail = tail; J.removed2 = Pn; J.nrem2 = &ctl[KS_PEELED];
            J.dirty = dirty; J.istamp = istamp;
            J.split = ka; J.nsplit = &ctl[KS_NKA]; J.rest = Pn; J.nrest = &ctl[KS_PEELED];
            const int qstamp = stamp_base + (++used);
            const i64 peeled = ks_async<false>(S, G, ctl, c, Q, P, (i64)ldcg(&ctl[KS_ALL]), J,
                                               qstamp, t0, deadline_ns);
            if (leader) ++ctl[KS_PEEL_ROUNDS];
            ++rounds;
            if (peeled < 0) return KS_SLOW;
            ++iterations;
            ks_phase_live_rise(S, ka, (i64)ldcg(&ctl[KS_NKA]), J.gstamp, kb, G.slot(), head,
                               B);
            if (leader) {
                ctl[KS_ALL] = ldcg(&ctl[KS_PEELED]);
                ctl[KS_PEELED] = 0;
            }
            G.next_phase();
            const i64 live = G.last();
            head -= live;
            int* t = P;
            P = Pn;
            Pn = t;
            cur = kb;
            n = live;
            continue;
        }
        // the members of the dirty levels are peeled again; the others go to the next P
        ks_phase_split(S, P, (i64)ldcg(&ctl[KS_ALL]), dirty, istamp, ka, G.slot(), Pn,
                       &ctl[KS_PEELED]);
        G.next_phase();
        const i64 members = G.last();
        const int gstamp = stamp_base + (++used);
        int status = KS_DONE;
        const i64 live = ks_peel(S, G, ctl, c, cnt, ka, members, S.member, lev0, 1, gstamp,
                                 tail, la, lb, newc, kb, Pn, &ctl[KS_PEELED], stamp_base, top,
                                 used, t0, deadline_ns, rounds, status, Q, K);
        if (live < 0) return status;
        ++iterations;
        // the survivors rise: the next worklist (read from kb until the next peeling)
        ks_phase_rise(S, kb, live, head - live + 1, B);
        if (leader) {
            ctl[KS_ALL] = ldcg(&ctl[KS_PEELED]);
            ctl[KS_PEELED] = 0;
        }
        G.next_phase();
        head -= live;
        int* t = P;
        P = Pn;
        Pn = t;
        cur = kb;
        n = live;
    }
    return KS_DONE;
}
