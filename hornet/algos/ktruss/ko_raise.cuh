// The certified raise of an insertion (included by dynamic_gpu.cu after the k-order phases:
// KoState, ko_phase_count, touch, warp_common, clear_round_counters; ko_scan mode 3 runs its
// phase functions, kr_* are the one-phase kernels of the host-driven rounds).
#pragma once

// Insertion, first part (see dynamic_gpu.py): the numbers are raised, in synchronous rounds
// over every level at once, until the order (truss, rank) is a k-order of the new graph, whose
// numbers are then an upper bound of the truss numbers; the descent (dt_*) lowers them to the
// exact values. A round: ko_count (use_rank 1, no member: the triangles whose two other edges
// come after the edge) over the list, kr_raise_value, kr_apply, kr_push.

// A block per list edge e = list[i] at level k = truss[e] with cnt[i] >= k - 1 (more than
// k - 2 later triangles: the order is violated at e) would need a higher place: newval[i] =
// the smallest t > k with at most t - 2 triangles whose other two edges are both at t or
// above (e then goes first in level t, before every edge there); 0 for the others. The
// block's warps share e's intersection (a hub's long list) and count its triangles by
// min(truss of the other two) in a shared histogram of RBINS levels from lo = k + 1 (the top
// bin also takes the levels above it); a window that does not decide moves up. Zeroes
// cnt[i]; thread 0 zeroes ctr[C_LOW] and ctr[C_NEXT] (the host read them before this launch).
#define RBINS 512
__device__ void kr_phase_value(const int* __restrict__ deg, const i64* __restrict__ ptr,
                               const i64* __restrict__ tkeys, int tshift, const int* truss,
                               const int* list, i64 n, int* cnt, int* newval, int* touched,
                               int tstamp, u64* ctr, int* h, int* decided) {
    const unsigned lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    for (i64 i = blockIdx.x; i < n; i += gridDim.x) {
        const int e = ldcg(&list[i]);
        const int k = ldcg(&truss[e]);
        const int got = ldcg(&cnt[i]);
        __syncthreads();                         // (every thread has read cnt[i], decided)
        if (threadIdx.x == 0) {
            cnt[i] = 0;
            touch(touched, tstamp, e, ctr);
        }
        if (got < k - 1) {                       // (block-uniform)
            if (threadIdx.x == 0) newval[i] = 0;
            continue;
        }
        const i64 key = tkeys[e];
        const int u = hi32(key), v = lo32(key);
        int lo = k + 1, out = 0;
        while (out == 0) {
            for (int b = threadIdx.x; b < RBINS; b += blockDim.x) h[b] = 0;
            __syncthreads();
            warp_common(deg, ptr, u, v, lane, warp, nwarps, [&](int w) {
                const i64 s1 = et_find(tkeys, tshift, et_key(u, w));
                const i64 s2 = et_find(tkeys, tshift, et_key(v, w));
                if (s1 < 0 || s2 < 0) return;
                const int m = imin(ldcg(&truss[s1]), ldcg(&truss[s2]));
                if (m >= lo) atomicAdd(&h[imin(m - lo, RBINS - 1)], 1);
            }, NO_STOP);
            __syncthreads();
            if (threadIdx.x == 0) {
                int acc = 0;
                for (int b = 0; b < RBINS; ++b) acc += h[b];
                int t = 0;
                for (int b = 0; b < RBINS; ++b) {          // acc: triangles at lo + b or above
                    if (acc <= lo + b - 2) { t = lo + b; break; }
                    acc -= h[b];
                }
                *decided = t;
            }
            __syncthreads();
            out = *decided;
            if (out == 0) lo += RBINS;
            __syncthreads();                     // (before the next window clears h)
        }
        if (threadIdx.x == 0) newval[i] = out;
    }
}

// A thread per list edge e = list[i] with newval[i] > 0: e moves to level newval[i], first in
// it (rank head - j, j from *nhead); its former level and rank go to raised_old /
// raised_rank beside it in raised (count *nraised); it goes to the next list (count *nnext,
// deduplicated by mark == stamp: edges raised together may break each other's new place)
// and, once per update, to region (count *nregion, deduplicated by rmark == rstamp: the
// descent's worklist).
__device__ void kr_phase_apply(const int* list, i64 n, const int* newval, int* truss,
                               i64* rank, i64 head, int* raised, int* raised_old,
                               i64* raised_rank, u64* nraised, int* next, u64* nnext,
                               int* mark, int stamp, int* region, u64* nregion, int* rmark,
                               int rstamp, u64* nhead) {
    GRID_STRIDE(i, n) {
        const int t = ldcg(&newval[i]);
        if (t <= 0) continue;
        const int e = ldcg(&list[i]);
        const u64 j = atomicAdd(nraised, 1ull);
        raised[j] = e;
        raised_old[j] = ldcg(&truss[e]);
        raised_rank[j] = ldcg(&rank[e]);
        truss[e] = t;
        rank[e] = head - (i64)atomicAdd(nhead, 1ull);
        if (atomicExch(&mark[e], stamp) != stamp) next[atomicAdd(nnext, 1ull)] = e;
        if (atomicExch(&rmark[e], rstamp) != rstamp) region[atomicAdd(nregion, 1ull)] = e;
    }
}

// `parts` warps per raised edge e = raised[i] (i < m), moved from (old level a, old rank ra)
// to the start of level b = truss[e]: every triangle neighbour z that e passed (z at level a
// after ra, or a < truss[z] < b), whose third edge comes after z, gained a later triangle:
// it goes to the next list (count *nnext, deduplicated by mark == stamp).
__device__ void kr_phase_push(const int* __restrict__ deg, const i64* __restrict__ ptr,
                              const i64* __restrict__ tkeys, int tshift, const int* truss,
                              const i64* rank, const int* raised, const int* raised_old,
                              const i64* raised_rank, i64 m, int* next, u64* nnext, int* mark,
                              int stamp, int parts) {
    const unsigned lane = threadIdx.x & 31;
    for (i64 wi = warp_id(); wi < m * parts; wi += num_warps()) {
        const i64 i = wi / parts;
        const int part = (int)(wi - i * parts);
        const int e = ldcg(&raised[i]);
        const int a = ldcg(&raised_old[i]);
        const i64 ra = ldcg(&raised_rank[i]);
        const int b = ldcg(&truss[e]);
        const i64 key = tkeys[e];
        const int u = hi32(key), v = lo32(key);
        warp_common(deg, ptr, u, v, lane, part, parts, [&](int w) {
            const i64 s1 = et_find(tkeys, tshift, et_key(u, w));
            const i64 s2 = et_find(tkeys, tshift, et_key(v, w));
            if (s1 < 0 || s2 < 0) return;
            const int t1 = ldcg(&truss[s1]), t2 = ldcg(&truss[s2]);
            const i64 r1 = ldcg(&rank[s1]), r2 = ldcg(&rank[s2]);
            const bool passed1 = (t1 == a && r1 > ra) || (t1 > a && t1 < b);
            const bool passed2 = (t2 == a && r2 > ra) || (t2 > a && t2 < b);
            if (passed1 && (t2 > t1 || (t2 == t1 && r2 > r1)) &&
                atomicExch(&mark[s1], stamp) != stamp)
                next[atomicAdd(nnext, 1ull)] = (int)s1;
            if (passed2 && (t1 > t2 || (t1 == t2 && r1 > r2)) &&
                atomicExch(&mark[s2], stamp) != stamp)
                next[atomicAdd(nnext, 1ull)] = (int)s2;
        }, NO_STOP);
    }
}

// One-phase kernels of the raise (host-driven rounds). kr_raise_value's thread 0 zeroes
// ctr[C_LOW] and ctr[C_NEXT] (the host read them before this launch); kr_push reads the
// raised count on the device (at most cap).
extern "C" __global__ void kr_raise_value(const int* __restrict__ deg,
                                          const i64* __restrict__ ptr,
                                          const i64* __restrict__ tkeys, int tshift,
                                          const int* truss, const int* list, i64 n, int* cnt,
                                          int* newval, int* touched, int tstamp, u64* ctr) {
    __shared__ int h[RBINS];
    __shared__ int decided;
    clear_round_counters(ctr);
    kr_phase_value(deg, ptr, tkeys, tshift, truss, list, n, cnt, newval, touched, tstamp, ctr,
                   h, &decided);
}

extern "C" __global__ void kr_apply(const int* list, i64 n, const int* newval, int* truss,
                                    i64* rank, i64 head, int* raised, int* raised_old,
                                    i64* raised_rank, int* next, int* mark, int stamp,
                                    int* region, int* rmark, int rstamp, u64* ctr) {
    kr_phase_apply(list, n, newval, truss, rank, head, raised, raised_old, raised_rank,
                   &ctr[C_LOW], next, &ctr[C_NEXT], mark, stamp, region, &ctr[C_RAISED],
                   rmark, rstamp, &ctr[C_HEADN]);
}

extern "C" __global__ void kr_push(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                   const i64* __restrict__ tkeys, int tshift, const int* truss,
                                   const i64* rank, const int* raised, const int* raised_old,
                                   const i64* raised_rank, i64 cap, int* next, int* mark,
                                   int stamp, u64* ctr, int parts) {
    const i64 low = (i64)ldcg(&ctr[C_LOW]);
    kr_phase_push(deg, ptr, tkeys, tshift, truss, rank, raised, raised_old, raised_rank,
                  low < cap ? low : cap, next, &ctr[C_NEXT], mark, stamp, parts);
}

// An insertion's new edges (table slots, b of them) at level 2, first in the k-order (ranks
// head - b + 1 .. head), listed as int32 in seeds.
extern "C" __global__ void kr_seed(const i64* slots, i64 b, int* truss, i64* rank, i64 head,
                                   int* seeds) {
    GRID_STRIDE(i, b) {
        const i64 s = slots[i];
        truss[s] = 2;
        rank[s] = head - b + 1 + i;
        seeds[i] = (int)s;
    }
}
