// CUDA kernels of the GPU DynamicTruss (hornet/algos/ktruss/dynamic_gpu.py).
//
// Per-edge state lives in an EdgeTable (edge_table.cuh): truss[slot] (int32). Every list below
// holds int32 slots; slot-indexed int32 stamp arrays (mark, seen, member, touched) hold values
// of a clock that only grows, so "marked now" is arr[s] == stamp and nothing is ever cleared.
// Counters live in one u64 array ctr (indices C_*), zeroed by the host or by a round's first
// kernel.
//
// An edge's triangles come from one warp: the lanes take the elements of the shorter endpoint
// list and binary-search them in the longer one (warp_common); the slots of the two other
// edges come from the table. Graphs are read through the pointer view of hornet.Graph:
// vertex x's neighbours are deg[x] ascending int32 at device address ptr[x].
//
// Kernels: dt_lost_seeds (deletion: the surviving edges that lost a triangle counted at their
// level), dt_* (a round of the local h-index descent), ko_* (insertion: the level scan of the
// k-order; the peeling rounds that rank edges at the end of their level), kr_* (insertion:
// the certified raise), ko_scan (the phases of an update in one cooperative launch).
//
// The k-order: edges by (truss, rank), rank int64 unique per edge (compared only within a
// level); every edge e lies in at most truss[e] - 2 triangles whose two other edges both come
// after e. See dynamic_gpu.py.

#include "segmented.cuh"     // i64, u64, GRID_STRIDE, lower_bound
#include "tiles.cuh"         // FULL_MASK
#include "grid_barrier.cuh"  // grid_barrier (hornet/core)
#include "../algos/edge_table.cuh"
#include "../algos/batch_adjacency.cuh"

#define C_LOW 0        // edges lowered in this round (dt_apply)
#define C_NEXT 1       // the next round's worklist (dt_apply, dt_push, dt_lost_seeds)
#define C_TOUCHED 2    // distinct edges whose triangles an update examined
#define C_FELL 6       // edges a deletion lowered (dt_apply, deduplicated by fell == fstamp)
#define C_EVAL 8       // the scan's next evaluation list (ko_push; zeroed by ko_eval)
#define C_NEWC 9       // 2 slots: candidates found by a scan round (ko_eval), by round parity
#define C_ALL 11       // every candidate of the level (ko_eval)
#define C_TAIL 14      // ranks given out at the end of a level in this update
#define C_HEAVY 15     // the descent's edges left to a block (dt_hindex_split; zeroed by dt_apply)
#define C_EXTRA 3      // an insertion's seeds (insert_start.cu: is_place, is_partners)
#define C_RAISED 5     // distinct edges an insertion's certified raise moved up (kr_apply)
#define C_HEADN 7      // ranks given out at the start of a level in this update (kr_apply)

#define HBINS 256      // h-index histogram bins of one warp: levels a - 255 .. a
#define WARPS 8        // warps of a 256-thread block

__device__ __forceinline__ int lo32(i64 k) { return (int)(k & 0xffffffffLL); }
__device__ __forceinline__ int hi32(i64 k) { return (int)(k >> 32); }
__device__ __forceinline__ int imin(int a, int b) { return a < b ? a : b; }

// et_find of k in keys (mask: capacity - 1) from the slot after home (whose key is neither
// k nor empty).
__device__ __noinline__ i64 et_find_from(const i64* __restrict__ keys, u64 mask, i64 k,
                                         u64 home) {
    u64 s = home;
    while (true) {
        s = (s + 1) & mask;
        const i64 c = keys[s];
        if (c == k) return (i64)s;
        if (c == ET_EMPTY) return -1;
    }
}

// Loads through L2 (ld.global.cg): arrays that one phase of ko_scan writes and a later phase
// reads on another multiprocessor, where an L1 line could be stale.
__device__ __forceinline__ int ldcg(const int* p) { return __ldcg(p); }
__device__ __forceinline__ i64 ldcg(const i64* p) { return __ldcg(p); }
__device__ __forceinline__ u64 ldcg(const u64* p) { return __ldcg(p); }

__device__ __forceinline__ i64 warp_id() {
    return ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
}
__device__ __forceinline__ i64 num_warps() { return ((i64)gridDim.x * blockDim.x) >> 5; }

// The slots of keys k1 and k2 (et_find of each, -1 when absent), their home slots read at
// once: the two lookups of a triangle's other edges cost one dependent load, not two.
__device__ __forceinline__ void et_find2(const i64* __restrict__ keys, int shift, i64 k1,
                                         i64 k2, i64& s1, i64& s2) {
    const u64 mask = (1ull << (64 - shift)) - 1ull;
    const u64 h1 = ((u64)k1 * ET_MULT) >> shift, h2 = ((u64)k2 * ET_MULT) >> shift;
    const i64 c1 = keys[h1], c2 = keys[h2];
    s1 = c1 == k1 ? (i64)h1 : c1 == ET_EMPTY ? -1 : et_find_from(keys, mask, k1, h1);
    s2 = c2 == k2 ? (i64)h2 : c2 == ET_EMPTY ? -1 : et_find_from(keys, mask, k2, h2);
}

// Append slot s to list (count ctr[c]) unless arr[s] already holds stamp.
__device__ __forceinline__ void claim(int* arr, int stamp, int s, int* list, u64* ctr, int c) {
    if (atomicExch(&arr[s], stamp) != stamp) list[atomicAdd(&ctr[c], 1ull)] = s;
}

// First examination of slot s in this update: counted in ctr[C_TOUCHED].
// A round's first kernel: its lowered and next-list counts start at 0 (the host read the
// previous round's before this launch).
__device__ __forceinline__ void clear_round_counters(u64* ctr) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ctr[C_LOW] = 0;
        ctr[C_NEXT] = 0;
    }
}

__device__ __forceinline__ void touch(int* touched, int tstamp, int s, u64* ctr) {
    if (atomicExch(&touched[s], tstamp) != tstamp) atomicAdd(&ctr[C_TOUCHED], 1ull);
}

// Number of a[0:n] that are < x (a ascending), by one thread in few dependent steps: each
// step reads 7 probes at once and keeps one of the 8 ranges between them, the last 8 or fewer
// elements are read at once. A chain of dependent triangle counts (ko_scan's asynchronous
// phases) waits on every step of its searches; this takes about log8 of them instead of log2,
// for more loads.
__device__ __forceinline__ i64 lower_bound_8ary(const int* a, i64 n, int x) {
    i64 lo = 0, hi = n;                  // the answer is in [lo, hi]
    while (hi - lo > 8) {
        const i64 step = (hi - lo) >> 3;
        int v[7];
#pragma unroll
        for (int j = 0; j < 7; ++j) v[j] = a[lo + (j + 1) * step];
        int t = 0;                       // the probes below x are a prefix
#pragma unroll
        for (int j = 0; j < 7; ++j) t += v[j] < x;
        const i64 next_lo = t ? lo + t * step + 1 : lo;
        if (t < 7) hi = lo + (t + 1) * step;
        lo = next_lo;
    }
    int v[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = lo + j < hi ? a[lo + j] : x;
    int t = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) t += v[j] < x;
    return lo + t;
}

// The hub bit rows (hub_bits.py): vertex x with row[x] >= 0 (x < nrows) has its neighbour set
// as bits: neighbour w < 64 * words is bit w & 63 of bits[row[x] * words + (w >> 6)]. The
// host keeps them equal to the graph's lists (every update sets or clears its pairs' bits
// before its kernels run) and copies in the rows of the object whose update runs; row ==
// nullptr: none. A long list's membership test is then one load instead of a search.
struct HubBits {
    const int* row; const u64* bits; i64 words; i64 nrows;
};
__constant__ HubBits g_hubs;
#define HUB_MIN_LIST 64      // lists shorter than this are searched (their row not read)

// f(w) for every common neighbour w of u and v in the current graph, spread over the lanes of
// the calling warp (every lane calls it with the same u, v; f runs on the lane that found w).
// With parts > 1, `parts` warps share the edge: this one takes every parts-th run of 32
// elements of the shorter list, from run `part`. After each run every lane calls stop()
// (warp-uniform): true ends the enumeration early. Lists are strictly ascending, so lane
// 31's search position bounds the warp's later searches. kary: the searches by
// lower_bound_8ary (fewer dependent loads: for chains of dependent counts). A longer list
// with a hub bit row (g_hubs) is tested by its bits instead (an element past the row's
// range by the search).
template <typename OnCommon, typename Stop>
__device__ __forceinline__ void warp_common(const int* __restrict__ deg,
                                            const i64* __restrict__ ptr, int u, int v,
                                            unsigned lane, int part, int parts, OnCommon&& f,
                                            Stop&& stop, bool kary = false) {
    const i64 du = deg[u], dv = deg[v];
    const bool ushort = du <= dv;
    const int s = ushort ? u : v, l = ushort ? v : u;
    const i64 ds = ushort ? du : dv, dl = ushort ? dv : du;
    if (ds == 0) return;
    const int* S = (const int*)ptr[s];
    const int* L = (const int*)ptr[l];
    const u64* B = nullptr;
    i64 bw = 0;
    if (dl >= HUB_MIN_LIST) {
        const HubBits H = g_hubs;
        if (H.row != nullptr && l < H.nrows) {
            const int r = H.row[l];
            if (r >= 0) {
                B = H.bits + (i64)r * H.words;
                bw = H.words;
            }
        }
    }
    i64 base = 0;
    for (i64 k0 = (i64)part * 32; k0 < ds; k0 += 32 * (i64)parts) {
        const i64 k = k0 + lane;
        i64 q = base;
        if (k < ds) {
            const int w = S[k];
            if (B != nullptr && (i64)(w >> 6) < bw) {
                if ((B[w >> 6] >> (w & 63)) & 1ull) f(w);
            } else {
                q = base + (kary ? lower_bound_8ary(L + base, dl - base, w)
                                 : lower_bound(L + base, dl - base, w));
                if (q < dl && L[q] == w) f(w);
            }
        }
        base = __shfl_sync(FULL_MASK, q, 31);
        if (stop()) return;
    }
}

// Hub bit rows of a batch of pairs {src[i], dst[i]} (i < n): set (set != 0) or cleared, in
// the rows of either end (ends of no row, or past a row's range, are left to the searches).
extern "C" __global__ void hb_apply(const int* __restrict__ src, const int* __restrict__ dst,
                                    i64 n, const int* __restrict__ row, i64 nrows, u64* bits,
                                    i64 words, int set) {
    GRID_STRIDE(i, 2 * n) {
        const i64 j = i >> 1;
        const int x = (i & 1) ? dst[j] : src[j], w = (i & 1) ? src[j] : dst[j];
        if (x < 0 || (i64)x >= nrows || w < 0 || (i64)(w >> 6) >= words) continue;
        const int r = row[x];
        if (r < 0) continue;
        u64* word = &bits[(i64)r * words + (w >> 6)];
        const u64 bit = 1ull << (w & 63);
        if (set) atomicOr((unsigned long long*)word, (unsigned long long)bit);
        else atomicAnd((unsigned long long*)word, ~(unsigned long long)bit);
    }
}

// Hub bit rows from the lists: a block per hub hubs[h] (its row h), its neighbours' bits set.
extern "C" __global__ void hb_build(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                    const int* __restrict__ hubs, i64 nh, u64* bits,
                                    i64 words) {
    for (i64 h = blockIdx.x; h < nh; h += gridDim.x) {
        const int x = hubs[h];
        const int* L = (const int*)ptr[x];
        const i64 d = deg[x];
        u64* R = bits + h * words;
        for (i64 p = threadIdx.x; p < d; p += blockDim.x) {
            const int w = L[p];
            if (w >= 0 && (i64)(w >> 6) < words)
                atomicOr((unsigned long long*)&R[w >> 6], 1ull << (w & 63));
        }
    }
}

#define NO_STOP [] { return false; }

// Deletion, `parts` warps per deleted edge {bsrc[i], bdst[i]} (gone from the graph, still in the
// table with its number). Its triangles are those of the graph before the batch: an endpoint's
// neighbours are its current list plus its list in the batch adjacency bkeys (2 nb ascending
// keys x << 32 | w). Every surviving edge x of such a triangle whose level counted it
// (min(truss of the other two) >= truss[x]) goes to out (count ctr[C_NEXT], deduplicated by
// mark == stamp): the only edges that may violate their bound after the batch.
extern "C" __global__ void dt_lost_seeds(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                         const int* __restrict__ bsrc,
                                         const int* __restrict__ bdst, i64 nb,
                                         const i64* __restrict__ bkeys,
                                         const i64* __restrict__ tkeys, int tshift,
                                         const int* __restrict__ truss, int* __restrict__ mark,
                                         int stamp, int* __restrict__ out, u64* ctr,
                                         int parts) {
    const unsigned lane = threadIdx.x & 31;
    const i64 nk = 2 * nb;
    for (i64 wi = warp_id(); wi < nb * parts; wi += num_warps()) {
        const i64 i = wi / parts;
        const i64 part = wi - i * parts;
        const int u = bsrc[i], v = bdst[i];
        const i64 sd = et_find(tkeys, tshift, et_key(u, v));
        if (sd < 0) continue;
        const int td = truss[sd];
        i64 ulo, uhi, vlo, vhi;
        ba_vertex_range(bkeys, nk, u, &ulo, &uhi);
        ba_vertex_range(bkeys, nk, v, &vlo, &vhi);
        const i64 du = deg[u], dv = deg[v];
        const bool ushort = du + (uhi - ulo) <= dv + (vhi - vlo);
        const int x = ushort ? u : v, y = ushort ? v : u;
        const i64 dx = ushort ? du : dv, dy = ushort ? dv : du;
        const i64 xlo = ushort ? ulo : vlo, xhi = ushort ? uhi : vhi;
        const i64 ylo = ushort ? vlo : ulo, yhi = ushort ? vhi : uhi;
        const int* X = dx ? (const int*)ptr[x] : nullptr;
        const int* Y = dy ? (const int*)ptr[y] : nullptr;
        const i64 lx = dx + (xhi - xlo);
        for (i64 p = part * 32 + lane; p < lx; p += 32 * (i64)parts) {
            const int w = p < dx ? X[p] : lo32(bkeys[xlo + (p - dx)]);
            bool found = dy > 0 && in_sorted(Y, dy, w);
            if (!found) found = in_batch_list(bkeys, ylo, yhi, y, w);
            if (!found) continue;
            i64 s1, s2;
            et_find2(tkeys, tshift, et_key(x, w), et_key(y, w), s1, s2);
            if (s1 < 0 || s2 < 0) continue;
            const int t1 = truss[s1], t2 = truss[s2];
            if (!ba_has_pair(bkeys, nk, x, w) && imin(td, t2) >= t1)
                claim(mark, stamp, (int)s1, out, ctr, C_NEXT);
            if (!ba_has_pair(bkeys, nk, y, w) && imin(td, t1) >= t2)
                claim(mark, stamp, (int)s2, out, ctr, C_NEXT);
        }
    }
}

#include "../algos/ktruss/ko_descent.cuh"  // dt_* (the h-index descent), dc_* (its kept counts)

// ------------------------------------------------------------------------ the k-order
// The scan's phases are device functions shared by two drivers: one kernel per phase with the
// host reading the counters between them (ko_count ... ko_raise), and ko_scan, one cooperative
// launch that runs every level and round of an update with grid barriers between the phases.
// Arrays that a phase writes and a later phase reads on another multiprocessor (truss, rank,
// member, gone, counts, lists, counters) are read with ld.global.cg (L2, never a stale L1 line).


#define KO_OWN_LEVEL (-2)    // ko_phase_count: the scan of every list edge's own level

// Whether the other edge p of a triangle of an edge at level k, rank r, holds that triangle:
// p above level k, or at level k and a member (member == mstamp) not peeled (gone != gstamp),
// or (with use_rank) at level k after the edge.
__device__ __forceinline__ bool ko_holds(const int* truss, const i64* rank, const int* member,
                                         int mstamp, const int* gone, int gstamp, i64 p, int k,
                                         i64 r, int use_rank) {
    const int tp = ldcg(&truss[p]);
    if (tp != k) return tp > k;
    if (ldcg(&member[p]) == mstamp && ldcg(&gone[p]) != gstamp) return true;
    return use_rank && ldcg(&rank[p]) > r;
}

// ko_holds(p1) && ko_holds(p2), every load of both issued at once (one dependent load, not up
// to six: the asynchronous phases' chains wait on it).
__device__ __forceinline__ bool ko_holds2(const int* truss, const i64* rank, const int* member,
                                          int mstamp, const int* gone, int gstamp, i64 p1,
                                          i64 p2, int k, i64 r, int use_rank) {
    const int t1 = ldcg(&truss[p1]), t2 = ldcg(&truss[p2]);
    const int m1 = ldcg(&member[p1]), m2 = ldcg(&member[p2]);
    const int g1 = ldcg(&gone[p1]), g2 = ldcg(&gone[p2]);
    const i64 r1 = use_rank ? ldcg(&rank[p1]) : 0, r2 = use_rank ? ldcg(&rank[p2]) : 0;
    const bool h1 = t1 != k ? t1 > k : (m1 == mstamp && g1 != gstamp) || (use_rank && r1 > r);
    const bool h2 = t2 != k ? t2 > k : (m2 == mstamp && g2 != gstamp) || (use_rank && r2 > r);
    return h1 && h2;
}

// The graph and per-edge state every phase reads.
struct KoState {
    const int* deg; const i64* ptr; const i64* tkeys; int tshift;
    int* truss; i64* rank; int* member; int* gone; int* pushed; int* touched; int tstamp;
    u64* ctr;            // ctr[C_TOUCHED] counts the distinct edges examined
    int cap = 0x7fffffff;    // mode 4: edges at this level or above are never candidates
};

// Kept candidate bounds of mode 4's candidate rounds (push given): push[y] counts (wrapping)
// the pushes that found a triangle of y completed by a new candidate (its third edge holding
// for y); base[y] = stamp << 32 | (c - s) (32 bits, wrapping) where c < k - 1 is a finished
// count of y and s the value of push[y] then (the pushes come in the push phases, after the
// count phase that saw their candidates). Within a launch the edges that hold for y at its
// level only grow (risers from below come before y and are no candidates; peeled candidates
// stay candidates; an edge that rises loses its bound), and every triangle that comes to hold
// after a count adds a push after s, so c + push[y] - s bounds y's count from above from then
// on: a push lists y for a count again only when the bound reaches k - 1 (else y cannot be a
// candidate yet), so an edge is counted again after enough new triangles, not after each.
// Any finished count's bound at y's level holds; the last push of y reads one that covers
// every push.
struct KoBounds {
    unsigned* push = nullptr;
    u64* base = nullptr;
    int stamp = 0;               // the launch's stamp of valid base words
};

// A push that completed a triangle for y at level k: whether y's count may now reach k - 1.
__device__ __forceinline__ bool ko_bound_due(const KoBounds& B, int y, int k) {
    const unsigned v = atomicAdd(&B.push[y], 1u) + 1u;
    const u64 w = __ldcg(&B.base[y]);
    if ((int)(w >> 32) != B.stamp) return true;
    return (int)((unsigned)w + v) >= k - 1;
}

// y's count got (below k - 1), started from push[y] == s: its bound (ko_bound_due).
__device__ __forceinline__ void ko_bound_store(const KoBounds& B, int y, int got, unsigned s) {
    B.base[y] = ((u64)(unsigned)B.stamp << 32) | (u64)((unsigned)got - s);
}

// Counting phase, `parts` warps per list edge e = list[i] at level k = truss[e] (with k_scan
// >= 0, the scan of level k_scan: only edges at that level and not yet candidates, member !=
// mstamp; KO_OWN_LEVEL: the scan of every edge's own level, only those not yet candidates;
// per_level: the members of level k are those with member == mstamp + k): cnt[i] += the
// triangles of e, in this warp's share of e's shorter list, whose two other edges hold it
// (ko_holds; with use_rank, the scan's count, else the peeling's). A warp stops once cnt[i]
// and its own count reach k - 1 + extra (k - 1: all a decision needs; extra < 0: never).
// cnt[i] starts at 0 and the phase that reads it zeroes it again.
//
// With Decide, the phase also decides: the warps of an edge add their count and one finished
// warp (KO_CNT_BITS up) to cnt[i] in one atomic, and the last of them (lane 0) zeroes cnt[i]
// and calls finish(i, e, k, count) in the same phase (one barrier less per round than a
// separate decision phase). Every warp of an edge reads the same skip condition: an edge is
// listed once, and only its own finisher changes its state.
#define KO_CNT_BITS 24
#define KO_CNT_MASK ((1 << KO_CNT_BITS) - 1)

struct KoNoFinish {
    __device__ void operator()(i64, int, int, int) const {}
};

template <bool Decide, typename Finish>
__device__ void ko_count_items(const KoState& S, const int* list, i64 n, int parts, int k_scan,
                               const int* member, int mstamp0, int gstamp, int use_rank,
                               int* cnt, int* c, int per_level, Finish&& finish,
                               int extra = 0) {
    const unsigned lane = threadIdx.x & 31;
    for (i64 wi = warp_id(); wi < n * parts; wi += num_warps()) {
        const i64 i = wi / parts;
        const int part = (int)(wi - i * parts);
        const int e = ldcg(&list[i]);
        const int k = ldcg(&S.truss[e]);
        const int mstamp = per_level ? mstamp0 + k : mstamp0;
        if (k_scan >= 0 && (k != k_scan || ldcg(&member[e]) == mstamp)) continue;  // uniform
        if (k_scan == KO_OWN_LEVEL && (k >= S.cap || ldcg(&member[e]) == mstamp)) continue;
        const i64 key = S.tkeys[e];
        const int u = hi32(key), v = lo32(key);
        const i64 r = ldcg(&S.rank[e]);
        const int enough = extra < 0 ? 0x7fffffff : k - 1 + extra;
        if (lane == 0) *c = 0;
        __syncwarp();
        warp_common(S.deg, S.ptr, u, v, lane, part, parts, [&](int w) {
            i64 s1, s2;
            et_find2(S.tkeys, S.tshift, et_key(u, w), et_key(v, w), s1, s2);
            if (s1 < 0 || s2 < 0) return;
            if (ko_holds(S.truss, S.rank, member, mstamp, S.gone, gstamp, s1, k, r, use_rank) &&
                ko_holds(S.truss, S.rank, member, mstamp, S.gone, gstamp, s2, k, r, use_rank))
                atomicAdd(c, 1);
        }, [&] {
            __syncwarp();
            return *c + (ldcg(&cnt[i]) & KO_CNT_MASK) >= enough;
        });
        __syncwarp();
        if (lane == 0) {
            if (!Decide) {
                if (*c) atomicAdd(&cnt[i], *c);
            } else if (parts == 1) {
                finish(i, e, k, *c);
            } else {
                const int was = atomicAdd(&cnt[i], *c + (1 << KO_CNT_BITS));
                if ((was >> KO_CNT_BITS) == parts - 1) {
                    cnt[i] = 0;
                    __threadfence();
                    finish(i, e, k, (was & KO_CNT_MASK) + *c);
                }
            }
        }
        __syncwarp();
    }
}

__device__ void ko_phase_count(const KoState& S, const int* list, i64 n, int parts, int k_scan,
                               const int* member, int mstamp0, int gstamp, int use_rank,
                               int* cnt, int* c, int per_level = 0) {
    ko_count_items<false>(S, list, n, parts, k_scan, member, mstamp0, gstamp, use_rank, cnt, c,
                          per_level, KoNoFinish());
}

// Scan decision phase of level k, a thread per list edge y at level k not yet a candidate:
// y becomes one when at least k - 1 of its triangles have both other edges above k,
// candidates, or at level k after y (cnt[i], zeroed here). The candidate set is the unique set
// where y is a member exactly when its count with the members before it reaches k - 1 (a
// count only grows with the candidates); rounds reach it from below. New candidates go to
// newc (count *nnew) and all (count *nall).
__device__ void ko_phase_decide(const KoState& S, const int* list, i64 n, int k, int mstamp,
                                int* cnt, int* newc, u64* nnew, int* all, u64* nall) {
    GRID_STRIDE(i, n) {
        const int y = ldcg(&list[i]);
        const int got = ldcg(&cnt[i]);
        cnt[i] = 0;
        if (ldcg(&S.truss[y]) != k || ldcg(&S.member[y]) == mstamp) continue;
        touch(S.touched, S.tstamp, y, S.ctr);
        if (got >= k - 1) {
            S.member[y] = mstamp;
            newc[atomicAdd(nnew, 1ull)] = y;
            all[atomicAdd(nall, 1ull)] = y;
        }
    }
}

// Push phase, `parts` warps per new candidate x = newc[i] (i < m) at level k: every level-k
// edge z after x in a triangle of x whose third edge is at level >= k, not a candidate, goes
// to next (count *nnext, deduplicated by pushed == pstamp): x raised z's count. per_level:
// k = truss[x] and the candidates of level k have member == mstamp + k.
__device__ void ko_phase_push(const KoState& S, const int* newc, i64 m, int k_in, int mstamp0,
                              int pstamp, int* next, u64* nnext, int parts,
                              int per_level = 0, const KoBounds& B = KoBounds{}) {
    const unsigned lane = threadIdx.x & 31;
    for (i64 wi = warp_id(); wi < m * parts; wi += num_warps()) {
        const i64 i = wi / parts;
        const int part = (int)(wi - i * parts);
        const int x = ldcg(&newc[i]);
        const int k = per_level ? ldcg(&S.truss[x]) : k_in;
        const int mstamp = per_level ? mstamp0 + k : mstamp0;
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
            const int m1 = ldcg(&S.member[s1]), m2 = ldcg(&S.member[s2]);
            bool q1 = f1 == k && r1 > rx && m1 != mstamp;
            bool q2 = f2 == k && r2 > rx && m2 != mstamp;
            if (B.push) {
                // (kept bounds: only where the triangle now holds for it, its third edge
                // above k, a candidate or at k after it: else x's joining changed nothing for
                // it, and the third edge's joining, in a later round, pushes it then; and
                // only when its bound reaches k - 1)
                q1 = q1 && (f2 > k || m2 == mstamp || r2 > r1) && ko_bound_due(B, (int)s1, k);
                q2 = q2 && (f1 > k || m1 == mstamp || r1 > r2) && ko_bound_due(B, (int)s2, k);
            }
            if (q1 && atomicExch(&S.pushed[s1], pstamp) != pstamp)
                next[atomicAdd(nnext, 1ull)] = (int)s1;
            if (q2 && atomicExch(&S.pushed[s2], pstamp) != pstamp)
                next[atomicAdd(nnext, 1ull)] = (int)s2;
        }, NO_STOP);
    }
}

// The level's survivors list[:n] rise to level k + 1 and take the ranks head + i, before every
// edge of that level; they are copied to seeds (the next level's scan starts from them).
__device__ void ko_phase_raise(const KoState& S, const int* list, i64 n, int k, i64 head,
                               int* seeds) {
    GRID_STRIDE(i, n) {
        const int e = ldcg(&list[i]);
        S.truss[e] = k + 1;
        S.rank[e] = head + i;
        seeds[i] = e;
    }
}

#define KO_STATE_PARAMS const int* __restrict__ deg, const i64* __restrict__ ptr, \
    const i64* __restrict__ tkeys, int tshift, int* truss, i64* rank, int* member, int* gone, \
    int* pushed, int* touched, int tstamp, u64* ctr
#define KO_STATE {deg, ptr, tkeys, tshift, truss, rank, member, gone, pushed, touched, tstamp, ctr}

// One-phase kernels (host-driven rounds): ko_count, ko_decide, ko_push, ko_raise (the
// peeling's: ko_peel_* in ko_peel.cuh). ko_decide's thread 0 zeroes ctr[C_EVAL] (ko_push's
// list) and ctr[C_NEWC + 1 - slot] (the next round's); ko_push reads its count on the device.
extern "C" __global__ void ko_count(KO_STATE_PARAMS, const int* list, i64 n, int parts,
                                    int k_scan, const int* count_member, int mstamp,
                                    int gstamp, int use_rank, int* cnt) {
    __shared__ int count[WARPS];
    const KoState S = KO_STATE;
    ko_phase_count(S, list, n, parts, k_scan, count_member, mstamp, gstamp, use_rank, cnt,
                   &count[(threadIdx.x >> 5) & (WARPS - 1)]);
}

extern "C" __global__ void ko_decide(KO_STATE_PARAMS, const int* list, i64 n, int k,
                                     int mstamp, int* cnt, int* newc, int* all, int slot) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ctr[C_EVAL] = 0;
        ctr[C_NEWC + 1 - slot] = 0;
    }
    const KoState S = KO_STATE;
    ko_phase_decide(S, list, n, k, mstamp, cnt, newc, &ctr[C_NEWC + slot], all, &ctr[C_ALL]);
}

extern "C" __global__ void ko_push(KO_STATE_PARAMS, const int* newc, int slot, int k,
                                   int mstamp, int pstamp, int* next, int parts) {
    const KoState S = KO_STATE;
    ko_phase_push(S, newc, (i64)ldcg(&ctr[C_NEWC + slot]), k, mstamp, pstamp, next,
                  &ctr[C_EVAL], parts);
}

extern "C" __global__ void ko_raise(KO_STATE_PARAMS, const int* list, i64 n, int k, i64 head,
                                    int* seeds) {
    const KoState S = KO_STATE;
    ko_phase_raise(S, list, n, k, head, seeds);
}

// ------------------------------------------------------------------------ certified raise
#include "../algos/ktruss/ko_raise.cuh"     // kr_* (ko_scan mode 3 and host-driven rounds)

// ------------------------------------------------------------------------ ko_scan
// The whole scan of an update in one cooperative launch (every block resident): the phases
// above separated by a grid barrier, the rounds' sizes read from counters after it. Counters
// rotate over three slots by phase: phase ph appends to slot ph % 3, read right after the
// barrier that ends it; phase ph resets slot (ph + 1) % 3, whose readers finished in phase
// ph - 1. Every thread runs the same control flow (decided by values read after barriers).
//
// ctl: zero on entry (the host clears it); n_in, k_in, head_in: the seeds' count and level
// and the head rank counter. cnt: zero on entry and on a normal exit (each counting phase's
// reader zeroes it).
// mode 0 (insertion): levels from k = k_in with the seeds seeds[:n_in] until a level
// leaves no survivor; with n_extra > 0, the seeds are instead extra[:n_extra], each put in
// at its level extra_lev (ascending), from the lowest (ks_extras). mode 1 (deletion): one
// peeling of all[:n_in] (member == mstamp1, each at its own level), which must remove every
// edge (else status KS_NOT_EMPTY). mode 2
// (deletion): first the descent from the worklist seeds[:ctr[C_NEXT]] (rounds of the hindex
// phase, which applies each value, and the push phase; the lowered edges go to all, marked
// member1 == mstamp1, count ctl[KS_FELL]), then mode 1's peeling of the edges it lowered
// (every peeling: ks_peel, from a worklist). mode 3 (insertion): the
// certified raise from the new edges seeds[:n_in] (rounds of ko_phase_count, the raise
// value, apply and push phases; raised edges once to region, marked member == a fresh stamp,
// count ctl[KS_RAISED]; its rounds in ctl[KS_LEVELS]), then mode 2 from region. mode 4
// (insertion): the scan of every level at once (ko_levels.cuh) from the seeds
// seeds[:ctr[C_EXTRA]], each at its own level (lists: all and region, ka and kb; lowered: the
// dirty stamp by level; its iterations in ctl[KS_LEVELS]); k_in > 0: the levels from k_in up
// are left to the host (no edge there is a candidate: edges rise into k_in and stay).
// qunits, qcnt, qcap: the queue of the asynchronous phases (ko_async.cuh), qmodes the phases
// that use it (KSQ_PEEL, KSQ_CAND, KSQ_DESCENT; qcap 0: none, every phase in rounds).
// kpush, kbase: mode 4's kept candidate bounds (KoBounds, valid for this launch's last
// stamp), or null. kcnt, kvalid, kslack: mode 4's kept peeling counts (KoKept, valid where
// kvalid is the peeling's stamp; counts stop at k - 1 + kslack), or null. cand_factor > 0:
// mode 4 stops after candidate rounds that took over 1 / cand_factor of deadline_ns.
// Fresh stamps are stamp_base + 1 .. stamp_base + stamp_span. The update stops with a status
// when it passes deadline_ns (from its start) or a level's candidates pass max_region.

#include "../algos/ktruss/ko_scan_grid.cuh"  // KS_* words, ko_parts, ks_now, KsGrid
#include "../algos/ktruss/ko_peel.cuh"       // ks_peel, ko_peel_* (host-driven rounds)
#include "../algos/ktruss/ko_levels.cuh"     // mode 4: ks_levels
#include "../algos/ktruss/ko_window.cuh"     // ko_wscan: the scan by windows of the order

// (two resident blocks a multiprocessor, SCAN_BLOCKS_PER_SM: at most 128 registers a thread)
extern "C" __global__ void __launch_bounds__(256, 2)
ko_scan(KO_STATE_PARAMS, int* seeds, int* la, int* lb, int* newc, int* all, int* ka, int* kb,
        int* cnt, int* lowered, int* lowered_old, int* member1, int mstamp1, u64* ctl,
        unsigned* bar, int stamp_base, int stamp_span, i64 tail, i64 max_region,
        i64 deadline_ns, int mode, int* region, i64* raised_rank, i64 n_in, int k_in,
        i64 head_in, const int* extra, const int* extra_lev, i64 n_extra, long long* qunits,
        int* qcnt, i64 qcap, int qmodes, unsigned* kpush, u64* kbase, int* kcnt,
        int* kvalid, int kslack, int cand_factor) {
    __shared__ int count[WARPS];
    __shared__ int hist[WARPS][HBINS];
    __shared__ int decided;
    int* c = &count[(threadIdx.x >> 5) & (WARPS - 1)];
    // (mode 4 with k_in > 0: the levels from k_in up are the host's)
    const KoState S = {deg, ptr, tkeys, tshift, truss, rank, member, gone, pushed, touched,
                       tstamp, ctr, mode == 4 && k_in > 0 ? k_in : 0x7fffffff};
    KsGrid G;
    G.ctl = ctl; G.bar = bar; G.ph = 0; G.t = ks_now(); G.q = 0;
    const KsQueue Q = ksq_make(qunits, qcnt, qcap, qmodes);
    const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
    const u64 t0 = ks_now();
    int used = 0, status = KS_DONE;
    i64 head = head_in;
    int k = k_in;
    i64 ns = n_in;
    u64 levels = 0, rounds = 0;
    if (mode == 4)                                 // every level at once
        status = ks_levels(S, G, ctl, c, cnt, seeds, (i64)ldcg(&ctr[C_EXTRA]), la, lb, newc,
                           all, region, ka, kb, lowered, stamp_base, stamp_span, used, head,
                           tail, max_region, deadline_ns, t0, rounds, levels, Q,
                           KoBounds{kpush, kbase, stamp_base + stamp_span},
                           KoKept{kcnt, kvalid, 0, kslack}, cand_factor);
    if (mode == 0 && n_extra > 0) {                // the extras of the lowest level first
        k = extra_lev[0];
        ns = ks_extras(extra, extra_lev, n_extra, k, seeds, 0);
        G.next_phase();
    }
    if (mode == 3) {                               // the certified raise
        const int no_member = stamp_base + (++used);
        const int rstamp = stamp_base + (++used);
        const int* cur = seeds;
        int* nxt = la;
        i64 n = ns;
        int r = 0;
        while (n > 0) {
            if (used + 2 > stamp_span) { status = KS_NO_STAMPS; break; }
            const int mark = stamp_base + (++used);
            ko_phase_count(S, cur, n, ko_parts(n), -1, S.member, no_member, -1, 1, cnt, c);
            G.next_phase();
            kr_phase_value(deg, ptr, tkeys, tshift, truss, cur, n, cnt, newc, touched, tstamp,
                           ctr, &hist[0][0], &decided);
            G.next_phase();
            kr_phase_apply(cur, n, newc, truss, rank, head, lowered, lowered_old, raised_rank,
                           G.slot(), nxt, &ctl[KS_NEXT + r], pushed, mark, region,
                           &ctl[KS_RAISED], member, rstamp, &ctl[KS_HEADN]);
            if (leader) ctl[KS_NEXT + 1 - r] = 0;
            G.next_phase();
            const i64 m = G.last();
            kr_phase_push(deg, ptr, tkeys, tshift, truss, rank, lowered, lowered_old,
                          raised_rank, m, nxt, &ctl[KS_NEXT + r], pushed, mark, ko_parts(m));
            if (leader && ((i64)ldcg(&ctl[KS_RAISED]) > max_region ||
                           (i64)(ks_now() - t0) > deadline_ns))
                ctl[KS_ABORT] = 1;
            G.next_phase();
            ++rounds;
            if (ldcg(&ctl[KS_ABORT])) { status = KS_SLOW; break; }
            n = (i64)ldcg(&ctl[KS_NEXT + r]);
            r = 1 - r;
            cur = nxt;
            nxt = nxt == la ? lb : la;
        }
        // (a finished raise leaves both ctl[KS_NEXT] slots zero: the last one read was
        // empty, its apply phase zeroed the other; the descent appends to them from zero)
        head -= (i64)ldcg(&ctl[KS_HEADN]);
        levels = rounds;
    }
    if ((mode == 2 || mode == 3) && status == KS_DONE) {      // the descent
        const int* cur = mode == 3 ? region : seeds;
        int* nxt = la;
        i64 n = mode == 3 ? (i64)ldcg(&ctl[KS_RAISED]) : (i64)ldcg(&ctr[C_NEXT]);
        int r = 0;
        if (mode == 2 && ksq_on(Q, KSQ_DESCENT) && n > 0) {   // one asynchronous phase
            if (used + 1 > stamp_span) {
                status = KS_NO_STAMPS;
            } else {
                const int qstamp = stamp_base + (++used);
                int* h = hist[(threadIdx.x >> 5) & (WARPS - 1)];
                if (!ks_descend_async(S, G, ctl, c, Q, cur, n, h, member1, mstamp1, all,
                                      qstamp, t0, deadline_ns))
                    status = KS_SLOW;
                ++rounds;
            }
            n = 0;
        }
        while (n > 0) {
            if (used + 2 > stamp_span) { status = KS_NO_STAMPS; break; }
            const int mark = stamp_base + (++used);
            // (each value applied as soon as it is known: see dt_phase_hindex)
            u64* nlow = G.slot();
            const auto apply = [&](i64, int e, int value, int) {
                dt_apply_one(e, value, truss, lowered, lowered_old, nlow, nxt,
                             &ctl[KS_NEXT + r], pushed, mark, member1, mstamp1, all,
                             &ctl[KS_FELL]);
            };
            if (n <= (i64)gridDim.x)               // (few edges: a block each)
                dt_phase_hindex_block(deg, ptr, tkeys, tshift, truss, cur, n, apply, touched,
                                      tstamp, ctr, &hist[0][0]);
            else
                dt_phase_hindex(deg, ptr, tkeys, tshift, truss, cur, n, apply, touched, tstamp,
                                ctr, hist);
            G.next_phase(KS_PH_HINDEX);
            if (leader) ctl[KS_NEXT + 1 - r] = 0;  // (every thread has read n from it)
            const i64 m = G.last();
            dt_phase_push(deg, ptr, tkeys, tshift, truss, lowered, lowered_old, m, nxt,
                          &ctl[KS_NEXT + r], pushed, mark, ko_parts(m));
            if (leader && (i64)(ks_now() - t0) > deadline_ns) ctl[KS_ABORT] = 1;
            G.next_phase(KS_PH_DPUSH);
            ++rounds;
            if (ldcg(&ctl[KS_ABORT])) { status = KS_SLOW; break; }
            n = (i64)ldcg(&ctl[KS_NEXT + r]);
            r = 1 - r;
            cur = nxt;
            nxt = nxt == la ? lb : la;
        }
    }
    if (mode == 2 || mode == 3) ns = status == KS_DONE ? (i64)ldcg(&ctl[KS_FELL]) : 0;
    if (mode == 4) ns = 0;
    while (ns > 0) {
        const int* peel_list = all;
        const int* pmember = member1;
        int pstamp_m = mstamp1;
        i64 nall = ns;
        if (mode == 0) {
            if (used + 3 > stamp_span) { status = KS_NO_STAMPS; break; }
            const int mstamp = stamp_base + (++used);
            const int* cur = seeds;
            int* nxt = la;
            i64 n = ns;
            while (n > 0) {                        // the scan of level k: candidates
                if (used + 2 > stamp_span) { status = KS_NO_STAMPS; break; }
                const int pstamp = stamp_base + (++used);
                ko_phase_count(S, cur, n, ko_parts(n), k, S.member, mstamp, -1, 1, cnt, c);
                G.next_phase(KS_PH_CAND);
                ko_phase_decide(S, cur, n, k, mstamp, cnt, newc, G.slot(), all,
                                &ctl[KS_ALL]);
                G.next_phase(KS_PH_CAND);
                const i64 m = G.last();
                ko_phase_push(S, newc, m, k, mstamp, pstamp, nxt, G.slot(), ko_parts(m));
                if (leader && ((i64)ldcg(&ctl[KS_ALL]) > max_region ||
                               (i64)(ks_now() - t0) > deadline_ns))
                    ctl[KS_ABORT] = 1;
                G.next_phase(KS_PH_PUSH);
                ++rounds;
                if (ldcg(&ctl[KS_ABORT])) { status = KS_SLOW; break; }
                n = G.last();
                cur = nxt;
                nxt = nxt == la ? lb : la;
            }
            if (status != KS_DONE) break;
            nall = (i64)ldcg(&ctl[KS_ALL]);
            pmember = S.member;
            pstamp_m = mstamp;
        }
        // the peeling of the candidates (mode 1: of the given edges; every one must go)
        const int gstamp = stamp_base + (++used);
        i64 n = ks_peel(S, G, ctl, c, cnt, peel_list, nall, pmember, pstamp_m, 0, gstamp, tail,
                        la, lb, newc, mode == 0 ? ka : nullptr, nullptr, nullptr, stamp_base,
                        stamp_span, used, t0, deadline_ns, rounds, status, Q);
        if (status != KS_DONE) break;
        if (mode != 0) {
            if (n > 0) status = KS_NOT_EMPTY;
            break;
        }
        int* keep = ka;
        ++levels;
        // the next level's seeds: the survivors (risen to k + 1) and that level's extras;
        // without survivors, the next level that holds extras
        const int k_next = n > 0 || n_extra == 0 ? k + 1
                                                 : ks_next_extra_level(extra_lev, n_extra, k);
        const i64 added = n_extra > 0 ? ks_extras(extra, extra_lev, n_extra, k_next, seeds, n)
                                      : 0;
        if (n > 0) ko_phase_raise(S, keep, n, k, head - n + 1, seeds);
        if (n + added > 0) {
            if (leader) ctl[KS_ALL] = 0;
            G.next_phase();
            head -= n;
        }
        ns = n + added;
        k = k_next;
    }
    if (leader) {
        ctl[KS_HEAD] = (u64)head;
        ctl[KS_K] = (u64)k;
        ctl[KS_STATUS] = (u64)status;
        ctl[KS_STAMPS] = (u64)used;
        ctl[KS_LEVELS] = levels;
        ctl[KS_ROUNDS] = rounds;
        ctl[KS_TOUCHED] = ldcg(&ctr[C_TOUCHED]);
        ctl[KS_SPUN] = *(volatile unsigned*)(bar + 2);
    }
}
