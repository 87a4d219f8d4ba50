// The h-index descent of a deletion (included by dynamic_gpu.cu after its list and search
// helpers): the phases that ko_scan's mode 2 runs between grid barriers (dt_phase_*) and the
// one-phase kernels of its host-driven rounds (dt_*, dynamic_gpu_rounds.py), whose pushes may
// keep a count per edge (DtKept) so that an edge is counted again only when its level's
// triangles run short.
#pragma once

// The h-index of an edge at level a > 2 from its triangles' histogram h (bin m - lo: the
// triangles whose other two edges' lower number, capped at a, is m; levels below lo share
// bin 0): the largest k in (lo, a] with at least k - 2 triangles at k or above; else lo, or
// -lo when lo > 2 (the clamped bin decided: an upper bound, to be checked again). count
// (given): the triangles counted at the value (0 for -lo).
__device__ __forceinline__ int hindex_from_bins(const int* h, int a, int lo,
                                                int* count = nullptr) {
    int acc = 0;
    for (int k = a; k > lo; --k) {
        acc += h[k - lo];
        if (acc >= k - 2) {
            if (count) *count = acc;
            return k;
        }
    }
    if (count) *count = lo > 2 ? 0 : acc + h[0];
    return lo > 2 ? -lo : lo;
}

// The h-index and its count (hindex_from_bins) of an edge at level a (a <= 2: a, count 0).
__device__ __forceinline__ int hindex_and_count(const int* h, int a, int lo, int& count) {
    count = 0;
    return a <= 2 ? a : hindex_from_bins(h, a, lo, &count);
}

// Whether a level-a edge's enumeration may stop with `held` triangles at a: a - 2 of them
// (the value stays a), or with slack >= 0, a - 2 + d, d = (slack & 0xffff) + (a - 2) x
// (slack >> 16) / 16 (the count kept with the value has room for d losses before the edge is
// counted again); slack < 0: never (the count is exact).
__device__ __forceinline__ bool dt_enough(int held, int a, int slack) {
    return slack >= 0 && held >= a - 2 + (slack & 0xffff) + (((a - 2) * (slack >> 16)) >> 4);
}

// Descent phase, one warp per worklist edge e = list[i] (distinct), a = truss[e]: out(i, e,
// value, count) with the h-index of e's triangles, capped at a: the largest k <= a with at least
// k - 2 triangles whose other two edges both have truss >= k (2 without). Levels below
// a - 255 share the lowest bin: when that bin decides, the value (an upper bound of the
// h-index, so still a valid bound) is negated and the apply step puts the edge back on the
// worklist. hist: the block's WARPS x HBINS shared histograms. out stores the value for a
// separate apply phase (DtStore: a synchronous round) or applies it at once (dt_apply_one):
// every value read is then still an upper bound of the new truss numbers, so the h-index is
// one too, and the descent ends at the same fixed point. count: the triangles counted at the
// value (a lower bound of those whose other edges are at the value or above, read at the
// phase's start: the enumeration stops early by dt_enough with `slack`).
struct DtStore {
    int* newval; int* newcnt;
    __device__ void operator()(i64 i, int, int value, int count) const {
        newval[i] = value;
        if (newcnt != nullptr) newcnt[i] = count;
    }
};

// With heavy_e, an edge whose shorter list is longer than light_max is left to a block
// (dt_hindex_heavy): lane 0 lists it in heavy_e, its index i in heavy_i (count *nheavy).
template <typename Out>
__device__ void dt_phase_hindex(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                const i64* __restrict__ tkeys, int tshift, const int* truss,
                                const int* list, i64 n, Out&& out, int* touched, int tstamp,
                                u64* ctr, int (*hist)[HBINS], int* heavy_e = nullptr,
                                int* heavy_i = nullptr, u64* nheavy = nullptr,
                                int light_max = 0, int slack = 0) {
    const unsigned lane = threadIdx.x & 31;
    int* h = hist[(threadIdx.x >> 5) & (WARPS - 1)];
    for (i64 i = warp_id(); i < n; i += num_warps()) {
        const int e = ldcg(&list[i]);
        const i64 key = tkeys[e];
        const int u = hi32(key), v = lo32(key);
        if (heavy_e != nullptr && imin(deg[u], deg[v]) > light_max) {      // (warp-uniform)
            if (lane == 0) {
                const u64 j = atomicAdd(nheavy, 1ull);
                heavy_e[j] = e;
                heavy_i[j] = (int)i;
            }
            continue;
        }
        const int a = ldcg(&truss[e]);
        const int lo = a - (HBINS - 1) > 2 ? a - (HBINS - 1) : 2;
        for (int b = lane; b < HBINS; b += 32) h[b] = 0;
        __syncwarp();
        if (a > 2) {
            // (stops once a - 2 triangles hold e at its level a: the value stays)
            warp_common(deg, ptr, u, v, lane, 0, 1, [&](int w) {
                i64 s1, s2;
                et_find2(tkeys, tshift, et_key(u, w), et_key(v, w), s1, s2);
                if (s1 < 0 || s2 < 0) return;
                int m = imin(imin(ldcg(&truss[s1]), ldcg(&truss[s2])), a);
                if (m < lo) m = lo;
                atomicAdd(&h[m - lo], 1);
            }, [&] {
                __syncwarp();
                return dt_enough(h[a - lo], a, slack);
            });
        }
        __syncwarp();
        if (lane == 0) {
            touch(touched, tstamp, e, ctr);
            int count;
            const int value = hindex_and_count(h, a, lo, count);
            out(i, e, value, count);
        }
        __syncwarp();
    }
}

// Descent apply step of edge e with the value v (negated: from the clamped bin): truss[e] =
// v where lower; a lowered edge (with its value before) to lowered / lowered_old (count
// *nlow); an edge whose value came from the clamped bin straight to the next worklist (next,
// count *nnext, deduplicated by mark == stamp). Every lowered edge also goes once per update
// to fallen (count *nfell, deduplicated by fell == fstamp): the edges whose k-order places
// the deletion renews.
__device__ __forceinline__ void dt_apply_one(int e, int v, int* truss, int* lowered,
                                             int* lowered_old, u64* nlow, int* next,
                                             u64* nnext, int* mark, int stamp, int* fell,
                                             int fstamp, int* fallen, u64* nfell) {
    const bool again = v < 0;
    if (again) v = -v;
    const int a = ldcg(&truss[e]);
    if (v < a) {
        truss[e] = v;
        const u64 j = atomicAdd(nlow, 1ull);
        lowered[j] = e;
        lowered_old[j] = a;
        if (atomicExch(&fell[e], fstamp) != fstamp) fallen[atomicAdd(nfell, 1ull)] = e;
    }
    if (again && atomicExch(&mark[e], stamp) != stamp) next[atomicAdd(nnext, 1ull)] = e;
}

// Descent apply phase: dt_apply_one for every list edge with its value newval[i].
__device__ void dt_phase_apply(const int* list, i64 n, const int* newval, int* truss,
                               int* lowered, int* lowered_old, u64* nlow, int* next,
                               u64* nnext, int* mark, int stamp, int* fell, int fstamp,
                               int* fallen, u64* nfell) {
    GRID_STRIDE(i, n) {
        dt_apply_one(ldcg(&list[i]), ldcg(&newval[i]), truss, lowered, lowered_old, nlow, next,
                     nnext, mark, stamp, fell, fstamp, fallen, nfell);
    }
}

// Descent push phase, `parts` warps per lowered edge e = lowered[i] (i < m), from old to
// truss[e]: every triangle neighbour y whose count at its own level lost this triangle (old
// >= truss[y] > truss[e]) goes to the next worklist (next, count *nnext, deduplicated by
// mark == stamp).
__device__ void dt_phase_push(const int* __restrict__ deg, const i64* __restrict__ ptr,
                              const i64* __restrict__ tkeys, int tshift, const int* truss,
                              const int* lowered, const int* lowered_old, i64 m, int* next,
                              u64* nnext, int* mark, int stamp, int parts) {
    const unsigned lane = threadIdx.x & 31;
    for (i64 wi = warp_id(); wi < m * parts; wi += num_warps()) {
        const i64 i = wi / parts;
        const int part = (int)(wi - i * parts);
        const int e = ldcg(&lowered[i]);
        const int old = ldcg(&lowered_old[i]);
        const int now = ldcg(&truss[e]);
        const i64 key = tkeys[e];
        const int u = hi32(key), v = lo32(key);
        warp_common(deg, ptr, u, v, lane, part, parts, [&](int w) {
            i64 s1, s2;
            et_find2(tkeys, tshift, et_key(u, w), et_key(v, w), s1, s2);
            if (s1 < 0 || s2 < 0) return;
            const int f1 = ldcg(&truss[s1]), f2 = ldcg(&truss[s2]);
            if (f1 <= old && f1 > now && atomicExch(&mark[s1], stamp) != stamp)
                next[atomicAdd(nnext, 1ull)] = (int)s1;
            if (f2 <= old && f2 > now && atomicExch(&mark[s2], stamp) != stamp)
                next[atomicAdd(nnext, 1ull)] = (int)s2;
        }, NO_STOP);
    }
}

// The host-driven descent's kept counts (DtKept.cnt nullptr: none, every push lists its
// edge). An edge e with valid[e] == vstamp holds in cnt[e] a lower bound of its triangles
// whose other two edges are at truss[e] or above: set by the apply phase from the h-index's
// count (taken with the values of the round's start), lowered by one for every triangle a
// later fall takes from that level (the push phase: its neighbour fell from old >= truss[e]
// to below it, and the third edge is at truss[e] or above or fell in the same round; a
// triangle whose two other edges both fell in one round may be taken twice, which keeps a
// lower bound). Such an edge goes to the next worklist only when its count drops below
// truss[e] - 2, so a hub edge that keeps its level is counted once, not again after every
// fall beside it. An edge that keeps its count has at least truss[e] - 2 triangles at its
// level, so the end is still the descent's fixed point (edges without a count: every push
// lists them, as without counts). lowr[e] == stamp: e fell in the round of that stamp.
struct DtKept {
    const int* newcnt; int* cnt; int* valid; int vstamp; int* lowr;
};

// One-phase kernels of the descent (host-driven rounds; its h-index: dt_hindex_block).
extern "C" __global__ void dt_apply(const int* list, i64 n, const int* newval, int* truss,
                                    int* lowered, int* lowered_old, int* next, int* mark,
                                    int stamp, u64* ctr, int* fell, int fstamp, int* fallen,
                                    const int* newcnt, int* cnt, int* valid, int vstamp,
                                    int* lowr) {
    const DtKept K{newcnt, cnt, valid, vstamp, lowr};
    if (blockIdx.x == 0 && threadIdx.x == 0) ctr[C_HEAVY] = 0;   // (read before: the h-index's)
    if (K.cnt != nullptr) {
        GRID_STRIDE(i, n) {
            const int e = ldcg(&list[i]), v = ldcg(&newval[i]);
            K.cnt[e] = v < 0 ? 0 : ldcg(&K.newcnt[i]);
            K.valid[e] = K.vstamp;
            if ((v < 0 ? -v : v) < ldcg(&truss[e])) K.lowr[e] = stamp;
        }
    }
    dt_phase_apply(list, n, newval, truss, lowered, lowered_old, &ctr[C_LOW], next,
                   &ctr[C_NEXT], mark, stamp, fell, fstamp, fallen, &ctr[C_FELL]);
}

// (the lowered count is read on the device: at most n). With kept counts (K.cnt), the push
// phase of dt_phase_push whose listed edges are those whose count drops below their level's
// need (see DtKept).
extern "C" __global__ void dt_push(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                   const i64* __restrict__ tkeys, int tshift, const int* truss,
                                   const int* lowered, const int* lowered_old, i64 n,
                                   int* next, int* mark, int stamp, u64* ctr, int parts,
                                   int* cnt, int* valid, int vstamp, int* lowr) {
    const DtKept K{nullptr, cnt, valid, vstamp, lowr};
    const i64 low = (i64)ldcg(&ctr[C_LOW]);
    const i64 m = low < n ? low : n;
    if (K.cnt == nullptr) {
        dt_phase_push(deg, ptr, tkeys, tshift, truss, lowered, lowered_old, m, next,
                      &ctr[C_NEXT], mark, stamp, parts);
        return;
    }
    const unsigned lane = threadIdx.x & 31;
    u64* nnext = &ctr[C_NEXT];
    for (i64 wi = warp_id(); wi < m * parts; wi += num_warps()) {
        const i64 i = wi / parts;
        const int part = (int)(wi - i * parts);
        const int e = ldcg(&lowered[i]);
        const int old = ldcg(&lowered_old[i]);
        const int now = ldcg(&truss[e]);
        const i64 key = tkeys[e];
        const int u = hi32(key), v = lo32(key);
        // (y at level f lost the triangle whose third edge z is at fz: now < f <= old, and z
        // held it at the round's start: at f or above, or fallen in this round)
        const auto lost = [&](i64 y, int f, i64 z, int fz) {
            if (f > old || f <= now) return;
            if (fz < f && ldcg(&K.lowr[z]) != stamp) return;
            if (ldcg(&K.valid[y]) == K.vstamp && atomicSub(&K.cnt[y], 1) - 1 >= f - 2) return;
            if (atomicExch(&mark[y], stamp) != stamp) next[atomicAdd(nnext, 1ull)] = (int)y;
        };
        warp_common(deg, ptr, u, v, lane, part, parts, [&](int w) {
            i64 s1, s2;
            et_find2(tkeys, tshift, et_key(u, w), et_key(v, w), s1, s2);
            if (s1 < 0 || s2 < 0) return;
            const int f1 = ldcg(&truss[s1]), f2 = ldcg(&truss[s2]);
            lost(s1, f1, s2, f2);
            lost(s2, f2, s1, f1);
        }, NO_STOP);
    }
}


// The descent's h-index (as dt_phase_hindex) with a block per worklist edge: the block's warps
// share the edge's intersection and one histogram h (HBINS, shared); they stop once a - 2
// triangles hold the edge at its level (a round of few edges: a long list is not left to
// one warp).
template <typename Out>
__device__ void dt_phase_hindex_block(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                      const i64* __restrict__ tkeys, int tshift,
                                      const int* truss, const int* list, i64 n, Out&& out,
                                      int* touched, int tstamp, u64* ctr, int* h,
                                      int slack = 0) {
    const unsigned lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    for (i64 i = blockIdx.x; i < n; i += gridDim.x) {
        const int e = ldcg(&list[i]);
        const i64 key = tkeys[e];
        const int u = hi32(key), v = lo32(key);
        const int a = ldcg(&truss[e]);
        const int lo = a - (HBINS - 1) > 2 ? a - (HBINS - 1) : 2;
        for (int b = threadIdx.x; b < HBINS; b += blockDim.x) h[b] = 0;
        __syncthreads();
        if (a > 2) {
            warp_common(deg, ptr, u, v, lane, warp, nwarps, [&](int w) {
                i64 s1, s2;
                et_find2(tkeys, tshift, et_key(u, w), et_key(v, w), s1, s2);
                if (s1 < 0 || s2 < 0) return;
                int m = imin(imin(ldcg(&truss[s1]), ldcg(&truss[s2])), a);
                if (m < lo) m = lo;
                atomicAdd(&h[m - lo], 1);
            }, [&] {
                int held = 0;                    // (read by one lane: a warp-uniform answer)
                if (lane == 0) held = *(volatile int*)&h[a - lo];
                return dt_enough(__shfl_sync(FULL_MASK, held, 0), a, slack);
            });
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            touch(touched, tstamp, e, ctr);
            int count;
            const int value = hindex_and_count(h, a, lo, count);
            out(i, e, value, count);
        }
        __syncthreads();                         // (before the next edge clears h)
    }
}

// The block-per-edge h-index as one kernel (host-driven rounds); thread 0 zeroes ctr[C_LOW]
// and ctr[C_NEXT] (read by the host before). newcnt (or nullptr): the counts at the values,
// the enumeration stopping by dt_enough with slack (the host-driven h-index kernels alike).
extern "C" __global__ void dt_hindex_block(const int* __restrict__ deg,
                                           const i64* __restrict__ ptr,
                                           const i64* __restrict__ tkeys, int tshift,
                                           const int* truss, const int* list, i64 n,
                                           int* newval, int* touched, int tstamp, u64* ctr,
                                           int* newcnt, int slack) {
    __shared__ int h[HBINS];
    clear_round_counters(ctr);
    dt_phase_hindex_block(deg, ptr, tkeys, tshift, truss, list, n, DtStore{newval, newcnt},
                          touched, tstamp, ctr, h, slack);
}

// The h-index of a long worklist (host-driven rounds): a warp per edge whose shorter list has
// at most light_max elements, the others listed for dt_hindex_heavy (a block each, their count
// read on the device). dt_hindex_split's thread 0 zeroes ctr[C_LOW] and ctr[C_NEXT].
extern "C" __global__ void dt_hindex_split(const int* __restrict__ deg,
                                           const i64* __restrict__ ptr,
                                           const i64* __restrict__ tkeys, int tshift,
                                           const int* truss, const int* list, i64 n,
                                           int* newval, int* touched, int tstamp, u64* ctr,
                                           int* heavy_e, int* heavy_i, int light_max,
                                           int* newcnt, int slack) {
    __shared__ int hist[WARPS][HBINS];
    clear_round_counters(ctr);
    dt_phase_hindex(deg, ptr, tkeys, tshift, truss, list, n, DtStore{newval, newcnt}, touched,
                    tstamp, ctr, hist, heavy_e, heavy_i, &ctr[C_HEAVY], light_max, slack);
}

struct DtStoreAt {
    int* newval; int* newcnt; const int* at;
    __device__ void operator()(i64 j, int, int value, int count) const {
        newval[at[j]] = value;
        if (newcnt != nullptr) newcnt[at[j]] = count;
    }
};

extern "C" __global__ void dt_hindex_heavy(const int* __restrict__ deg,
                                           const i64* __restrict__ ptr,
                                           const i64* __restrict__ tkeys, int tshift,
                                           const int* truss, const int* heavy_e,
                                           const int* heavy_i, int* newval, int* touched,
                                           int tstamp, u64* ctr, int* newcnt, int slack) {
    __shared__ int h[HBINS];
    dt_phase_hindex_block(deg, ptr, tkeys, tshift, truss, heavy_e, (i64)ldcg(&ctr[C_HEAVY]),
                          DtStoreAt{newval, newcnt, heavy_i}, touched, tstamp, ctr, h, slack);
}
