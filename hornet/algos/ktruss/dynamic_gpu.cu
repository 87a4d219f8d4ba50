// CUDA kernels of the GPU DynamicTruss (hornet/algos/ktruss/dynamic_gpu.py).
//
// Per-edge state lives in an EdgeTable (edge_table.cuh): truss[slot] (int32). Every list below
// holds int32 slots; slot-indexed int32 stamp arrays (mark, seen, member, touched) hold values
// of a clock that only grows, so "marked now" is arr[s] == stamp and nothing is ever cleared.
// Counters live in one u64 array ctr (indices C_*), zeroed by the host or by dt_hindex.
//
// An edge's triangles come from one warp: the lanes take the elements of the shorter endpoint
// list and binary-search them in the longer one (warp_common); the slots of the two other
// edges come from the table. Graphs are read through the pointer view of hornet.Graph:
// vertex x's neighbours are deg[x] ascending int32 at device address ptr[x].
//
// Kernels: dt_lost_seeds (deletion: the surviving edges that lost a triangle counted at their
// level), dt_hindex / dt_apply / dt_push (one synchronous round of the local h-index descent),
// ko_eval / ko_push (insertion: the scan of one level of the k-order for the edges that may
// rise), ko_peel_count / ko_peel_apply (a synchronous peeling round of those candidates, or of
// the edges a deletion lowered: peeled edges get ranks at the end of their level), ko_raise
// (the survivors one level up, ranks at the start of the new level).
//
// The k-order: edges by (truss, rank), rank int64 unique per edge (compared only within a
// level); every edge e lies in at most truss[e] - 2 triangles whose two other edges both come
// after e. See dynamic_gpu.py.

#include "segmented.cuh"     // i64, u64, GRID_STRIDE, lower_bound
#include "tiles.cuh"         // FULL_MASK
#include "../algos/edge_table.cuh"
#include "../algos/batch_adjacency.cuh"

#define C_LOW 0        // edges lowered in this round (dt_apply)
#define C_NEXT 1       // the next round's worklist (dt_apply, dt_push, dt_lost_seeds)
#define C_TOUCHED 2    // distinct edges whose triangles an update examined
#define C_CAND 3       // walk candidates (dt_expand, dt_saturated)
#define C_FRONT 4      // the walk's next frontier (dt_admit)
#define C_REGION 5     // (unused)
#define C_FELL 6       // edges a deletion lowered (dt_apply, deduplicated by fell == fstamp)
#define C_EVAL 8       // the scan's next evaluation list (ko_push; zeroed by ko_eval)
#define C_NEWC 9       // 2 slots: candidates found by a scan round (ko_eval), by round parity
#define C_ALL 11       // every candidate of the level (ko_eval)
#define C_REM 12       // edges a peeling round removed (ko_peel_apply; zeroed by ko_peel_count)
#define C_KEEP 13      // edges a peeling round kept (ko_peel_apply; zeroed by ko_peel_count)
#define C_TAIL 14      // ranks given out at the end of a level in this update

#define HBINS 256      // h-index histogram bins of one warp: levels a - 255 .. a
#define WARPS 8        // warps of a 256-thread block

__device__ __forceinline__ int lo32(i64 k) { return (int)(k & 0xffffffffLL); }
__device__ __forceinline__ int hi32(i64 k) { return (int)(k >> 32); }
__device__ __forceinline__ int imin(int a, int b) { return a < b ? a : b; }

__device__ __forceinline__ i64 warp_id() {
    return ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
}
__device__ __forceinline__ i64 num_warps() { return ((i64)gridDim.x * blockDim.x) >> 5; }

// Append slot s to list (count ctr[c]) unless arr[s] already holds stamp.
__device__ __forceinline__ void claim(int* arr, int stamp, int s, int* list, u64* ctr, int c) {
    if (atomicExch(&arr[s], stamp) != stamp) list[atomicAdd(&ctr[c], 1ull)] = s;
}

// First examination of slot s in this update: counted in ctr[C_TOUCHED].
__device__ __forceinline__ void touch(int* touched, int tstamp, int s, u64* ctr) {
    if (atomicExch(&touched[s], tstamp) != tstamp) atomicAdd(&ctr[C_TOUCHED], 1ull);
}

// f(w) for every common neighbour w of u and v in the current graph, spread over the lanes of
// the calling warp (every lane calls it with the same u, v; f runs on the lane that found w).
// With parts > 1, `parts` warps share the edge: this one takes every parts-th run of 32
// elements of the shorter list, from run `part`. After each run every lane calls stop()
// (warp-uniform): true ends the enumeration early. Lists are strictly ascending, so lane
// 31's search position bounds the warp's later searches.
template <typename OnCommon, typename Stop>
__device__ __forceinline__ void warp_common(const int* __restrict__ deg,
                                            const i64* __restrict__ ptr, int u, int v,
                                            unsigned lane, int part, int parts, OnCommon&& f,
                                            Stop&& stop) {
    const i64 du = deg[u], dv = deg[v];
    const bool ushort = du <= dv;
    const int s = ushort ? u : v, l = ushort ? v : u;
    const i64 ds = ushort ? du : dv, dl = ushort ? dv : du;
    if (ds == 0) return;
    const int* S = (const int*)ptr[s];
    const int* L = (const int*)ptr[l];
    i64 base = 0;
    for (i64 k0 = (i64)part * 32; k0 < ds; k0 += 32 * (i64)parts) {
        const i64 k = k0 + lane;
        i64 q = base;
        if (k < ds) {
            const int w = S[k];
            q = base + lower_bound(L + base, dl - base, w);
            if (q < dl && L[q] == w) f(w);
        }
        base = __shfl_sync(FULL_MASK, q, 31);
        if (stop()) return;
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
            const i64 s1 = et_find(tkeys, tshift, et_key(x, w));
            const i64 s2 = et_find(tkeys, tshift, et_key(y, w));
            if (s1 < 0 || s2 < 0) continue;
            const int t1 = truss[s1], t2 = truss[s2];
            if (!ba_has_pair(bkeys, nk, x, w) && imin(td, t2) >= t1)
                claim(mark, stamp, (int)s1, out, ctr, C_NEXT);
            if (!ba_has_pair(bkeys, nk, y, w) && imin(td, t1) >= t2)
                claim(mark, stamp, (int)s2, out, ctr, C_NEXT);
        }
    }
}

// One warp per worklist edge e = list[i] (distinct), a = truss[e]: newval[i] = the h-index of
// e's triangles, capped at a: the largest k <= a with at least k - 2 triangles whose other
// two edges both have truss >= k (2 without). Reads truss only (a synchronous round: dt_apply
// writes the values after every warp has read). Levels below a - 255 share the lowest bin:
// when that bin decides, the value (an upper bound of the h-index, so still a valid bound) is
// stored negated and dt_apply puts the edge back on the worklist. Thread 0 zeroes the round's
// counters ctr[C_LOW] and ctr[C_NEXT] (read by the host before this launch).
// With plus != 0 the other edges count as truss + plus unless flag == flag_stamp (the bound
// of the new edges of an insertion: every old edge one level up, the new ones as they are).
extern "C" __global__ void dt_hindex(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                     const i64* __restrict__ tkeys, int tshift,
                                     const int* __restrict__ truss, const int* __restrict__ list,
                                     i64 n, int* __restrict__ newval, int* __restrict__ touched,
                                     int tstamp, u64* ctr, const int* __restrict__ flag,
                                     int flag_stamp, int plus) {
    __shared__ int hist[WARPS][HBINS];
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ctr[C_LOW] = 0;
        ctr[C_NEXT] = 0;
    }
    const unsigned lane = threadIdx.x & 31;
    int* h = hist[(threadIdx.x >> 5) & (WARPS - 1)];
    for (i64 i = warp_id(); i < n; i += num_warps()) {
        const int e = list[i];
        const i64 key = tkeys[e];
        const int u = hi32(key), v = lo32(key);
        const int a = truss[e];
        const int lo = a - (HBINS - 1) > 2 ? a - (HBINS - 1) : 2;
        for (int b = lane; b < HBINS; b += 32) h[b] = 0;
        __syncwarp();
        if (a > 2) {
            // (stops once a - 2 triangles hold e at its level a: the value stays)
            warp_common(deg, ptr, u, v, lane, 0, 1, [&](int w) {
                const i64 s1 = et_find(tkeys, tshift, et_key(u, w));
                const i64 s2 = et_find(tkeys, tshift, et_key(v, w));
                if (s1 < 0 || s2 < 0) return;
                int f1 = truss[s1], f2 = truss[s2];
                if (plus) {
                    if (flag[s1] != flag_stamp) f1 += plus;
                    if (flag[s2] != flag_stamp) f2 += plus;
                }
                int m = imin(imin(f1, f2), a);
                if (m < lo) m = lo;
                atomicAdd(&h[m - lo], 1);
            }, [&] {
                __syncwarp();
                return h[a - lo] >= a - 2;
            });
        }
        __syncwarp();
        if (lane == 0) {
            int acc = 0, k = a, out = lo;
            bool decided = false;
            for (; k > lo; --k) {
                acc += h[k - lo];
                if (acc >= k - 2) { decided = true; break; }
            }
            if (decided) out = k;
            else if (lo > 2) out = -lo;          // the clamped bin decided: check again
            newval[i] = a <= 2 ? a : out;
            touch(touched, tstamp, e, ctr);
        }
        __syncwarp();
    }
}

// Apply a round: truss[list[i]] = newval[i] where lower; lowered edges (with their value
// before) to lowered / lowered_old (count ctr[C_LOW]); edges whose value came from the clamped
// bin straight to the next worklist (next, count ctr[C_NEXT], deduplicated by mark == stamp).
// Every lowered edge also goes once per update to fallen (count ctr[C_FELL], deduplicated by
// fell == fstamp): the edges whose k-order places the deletion renews.
extern "C" __global__ void dt_apply(const int* __restrict__ list, i64 n,
                                    const int* __restrict__ newval, int* __restrict__ truss,
                                    int* __restrict__ lowered, int* __restrict__ lowered_old,
                                    int* __restrict__ next, int* __restrict__ mark, int stamp,
                                    u64* ctr, int* __restrict__ fell, int fstamp,
                                    int* __restrict__ fallen) {
    GRID_STRIDE(i, n) {
        const int e = list[i];
        int v = newval[i];
        const bool again = v < 0;
        if (again) v = -v;
        const int a = truss[e];
        if (v < a) {
            truss[e] = v;
            const u64 j = atomicAdd(&ctr[C_LOW], 1ull);
            lowered[j] = e;
            lowered_old[j] = a;
            claim(fell, fstamp, e, fallen, ctr, C_FELL);
        }
        if (again) claim(mark, stamp, e, next, ctr, C_NEXT);
    }
}

// `parts` warps per lowered edge e (ctr[C_LOW] of them, at most n), from old to truss[e]: every
// triangle neighbour y whose count at its own level lost this triangle (old >= truss[y] >
// truss[e]) goes to the next worklist (next, ctr[C_NEXT], deduplicated by mark == stamp);
// with member_stamp != 0 only the edges with member[y] == member_stamp (the region: edges
// outside it hold exact values that cannot fall).
extern "C" __global__ void dt_push(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                   const i64* __restrict__ tkeys, int tshift,
                                   const int* __restrict__ truss,
                                   const int* __restrict__ lowered,
                                   const int* __restrict__ lowered_old, i64 n,
                                   const int* __restrict__ member, int member_stamp,
                                   int* __restrict__ next, int* __restrict__ mark, int stamp,
                                   u64* ctr, int parts) {
    const unsigned lane = threadIdx.x & 31;
    const i64 m = (i64)ctr[C_LOW] < n ? (i64)ctr[C_LOW] : n;
    for (i64 wi = warp_id(); wi < m * parts; wi += num_warps()) {
        const i64 i = wi / parts;
        const int part = (int)(wi - i * parts);
        const int e = lowered[i];
        const int old = lowered_old[i];
        const int now = truss[e];
        const i64 key = tkeys[e];
        const int u = hi32(key), v = lo32(key);
        warp_common(deg, ptr, u, v, lane, part, parts, [&](int w) {
            const i64 s1 = et_find(tkeys, tshift, et_key(u, w));
            const i64 s2 = et_find(tkeys, tshift, et_key(v, w));
            if (s1 < 0 || s2 < 0) return;
            const int f1 = truss[s1], f2 = truss[s2];
            if (f1 <= old && f1 > now && (member_stamp == 0 || member[s1] == member_stamp))
                claim(mark, stamp, (int)s1, next, ctr, C_NEXT);
            if (f2 <= old && f2 > now && (member_stamp == 0 || member[s2] == member_stamp))
                claim(mark, stamp, (int)s2, next, ctr, C_NEXT);
        }, NO_STOP);
    }
}

// ------------------------------------------------------------------------ the k-order
// Whether the other edge p of a triangle of an edge at level k, rank r, holds that triangle:
// p above level k, or at level k and a member (member == mstamp) not peeled (gone != gstamp),
// or (with use_rank) at level k after the edge.
__device__ __forceinline__ bool ko_holds(const int* __restrict__ truss,
                                         const i64* __restrict__ rank,
                                         const int* __restrict__ member, int mstamp,
                                         const int* __restrict__ gone, int gstamp, i64 p, int k,
                                         i64 r, int use_rank) {
    const int tp = truss[p];
    if (tp != k) return tp > k;
    if (member[p] == mstamp && gone[p] != gstamp) return true;
    return use_rank && rank[p] > r;
}

// How many triangles of e (at level k = truss[e]) both other edges hold (ko_holds), counted by
// the calling warp up to `enough` (the enumeration stops there); every lane gets the count.
__device__ __forceinline__ int ko_count(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                        const i64* __restrict__ tkeys, int tshift,
                                        const int* __restrict__ truss,
                                        const i64* __restrict__ rank,
                                        const int* __restrict__ member, int mstamp,
                                        const int* __restrict__ gone, int gstamp, int e,
                                        int use_rank, int enough, unsigned lane, int* c) {
    const i64 key = tkeys[e];
    const int u = hi32(key), v = lo32(key);
    const int k = truss[e];
    const i64 r = rank[e];
    if (lane == 0) *c = 0;
    __syncwarp();
    if (enough > 0) {
        warp_common(deg, ptr, u, v, lane, 0, 1, [&](int w) {
            const i64 s1 = et_find(tkeys, tshift, et_key(u, w));
            const i64 s2 = et_find(tkeys, tshift, et_key(v, w));
            if (s1 < 0 || s2 < 0) return;
            if (ko_holds(truss, rank, member, mstamp, gone, gstamp, s1, k, r, use_rank) &&
                ko_holds(truss, rank, member, mstamp, gone, gstamp, s2, k, r, use_rank))
                atomicAdd(c, 1);
        }, [&] {
            __syncwarp();
            return *c >= enough;
        });
    }
    __syncwarp();
    const int out = *c;
    __syncwarp();
    return out;
}

// The scan of level k, one warp per list edge y (distinct) at level k not yet a candidate
// (member != mstamp): y becomes one when at least k - 1 of its triangles have both other
// edges above k, candidates, or at level k after y. Candidates are set while the round runs
// (a count only grows with the candidates, so reading one early is safe: the candidate set
// is the unique set where y is a member exactly when its count with the members before it
// reaches k - 1). New candidates go to newc (ctr[C_NEWC + slot]) and all (ctr[C_ALL]).
// Thread 0 zeroes ctr[C_EVAL] (ko_push's list) and ctr[C_NEWC + 1 - slot] (the next round's).
extern "C" __global__ void ko_eval(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                   const i64* __restrict__ tkeys, int tshift,
                                   const int* __restrict__ truss, const i64* __restrict__ rank,
                                   const int* __restrict__ list, i64 n, int k,
                                   int* __restrict__ member, int mstamp,
                                   const int* __restrict__ gone, int* __restrict__ newc,
                                   int* __restrict__ all, int slot, int* __restrict__ touched,
                                   int tstamp, u64* ctr) {
    __shared__ int count[WARPS];
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ctr[C_EVAL] = 0;
        ctr[C_NEWC + 1 - slot] = 0;
    }
    const unsigned lane = threadIdx.x & 31;
    int* c = &count[(threadIdx.x >> 5) & (WARPS - 1)];
    for (i64 i = warp_id(); i < n; i += num_warps()) {
        const int y = list[i];
        if (truss[y] != k || member[y] == mstamp) continue;       // (warp-uniform)
        const int got = ko_count(deg, ptr, tkeys, tshift, truss, rank, member, mstamp, gone,
                                 -1, y, 1, k - 1, lane, c);
        if (lane == 0) {
            touch(touched, tstamp, y, ctr);
            if (got >= k - 1) {
                member[y] = mstamp;
                newc[atomicAdd(&ctr[C_NEWC + slot], 1ull)] = y;
                all[atomicAdd(&ctr[C_ALL], 1ull)] = y;
            }
        }
    }
}

// `parts` warps per new candidate x = newc[i] (ctr[C_NEWC + slot] of them) at level k: every
// level-k edge z after x in a triangle of x whose third edge is at level >= k, not a candidate,
// goes to next (ctr[C_EVAL], deduplicated by pushed == pstamp): x raised z's count.
extern "C" __global__ void ko_push(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                   const i64* __restrict__ tkeys, int tshift,
                                   const int* __restrict__ truss, const i64* __restrict__ rank,
                                   const int* __restrict__ newc, int slot, int k,
                                   const int* __restrict__ member, int mstamp,
                                   int* __restrict__ pushed, int pstamp, int* __restrict__ next,
                                   u64* ctr, int parts) {
    const unsigned lane = threadIdx.x & 31;
    const i64 m = (i64)ctr[C_NEWC + slot];
    for (i64 wi = warp_id(); wi < m * parts; wi += num_warps()) {
        const i64 i = wi / parts;
        const int part = (int)(wi - i * parts);
        const int x = newc[i];
        const i64 key = tkeys[x];
        const int u = hi32(key), v = lo32(key);
        const i64 rx = rank[x];
        warp_common(deg, ptr, u, v, lane, part, parts, [&](int w) {
            const i64 s1 = et_find(tkeys, tshift, et_key(u, w));
            const i64 s2 = et_find(tkeys, tshift, et_key(v, w));
            if (s1 < 0 || s2 < 0) return;
            const int f1 = truss[s1], f2 = truss[s2];
            if (f1 < k || f2 < k) return;
            if (f1 == k && rank[s1] > rx && member[s1] != mstamp)
                claim(pushed, pstamp, (int)s1, next, ctr, C_EVAL);
            if (f2 == k && rank[s2] > rx && member[s2] != mstamp)
                claim(pushed, pstamp, (int)s2, next, ctr, C_EVAL);
        }, NO_STOP);
    }
}

// A peeling round, one warp per live member e = list[i] (member == mstamp, gone != gstamp) at
// its level k = truss[e]: out[i] = 1 when fewer than k - 1 of its triangles have both other
// edges above k or live members (a synchronous round: ko_peel_apply writes gone). Thread 0
// zeroes ctr[C_REM] and ctr[C_KEEP].
extern "C" __global__ void ko_peel_count(const int* __restrict__ deg,
                                         const i64* __restrict__ ptr,
                                         const i64* __restrict__ tkeys, int tshift,
                                         const int* __restrict__ truss,
                                         const i64* __restrict__ rank,
                                         const int* __restrict__ list, i64 n,
                                         const int* __restrict__ member, int mstamp,
                                         const int* __restrict__ gone, int gstamp,
                                         int* __restrict__ out, int* __restrict__ touched,
                                         int tstamp, u64* ctr) {
    __shared__ int count[WARPS];
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ctr[C_REM] = 0;
        ctr[C_KEEP] = 0;
    }
    const unsigned lane = threadIdx.x & 31;
    int* c = &count[(threadIdx.x >> 5) & (WARPS - 1)];
    for (i64 i = warp_id(); i < n; i += num_warps()) {
        const int e = list[i];
        const int k = truss[e];
        const int got = ko_count(deg, ptr, tkeys, tshift, truss, rank, member, mstamp, gone,
                                 gstamp, e, 0, k - 1, lane, c);
        if (lane == 0) {
            touch(touched, tstamp, e, ctr);
            out[i] = got < k - 1;
        }
    }
}

// Applies a peeling round: list[i] with flag[i] is peeled (gone = gstamp) and ranked at the end
// of its level (tail + the update's count ctr[C_TAIL]; one round's edges in any order: each
// had at most k - 2 such triangles when the round began); the others go to keep (ctr[C_KEEP]).
extern "C" __global__ void ko_peel_apply(const int* __restrict__ list, i64 n,
                                         const int* __restrict__ flag, int* __restrict__ gone,
                                         int gstamp, i64* __restrict__ rank, i64 tail,
                                         int* __restrict__ keep, u64* ctr) {
    GRID_STRIDE(i, n) {
        const int e = list[i];
        if (flag[i]) {
            gone[e] = gstamp;
            rank[e] = tail + (i64)atomicAdd(&ctr[C_TAIL], 1ull);
            atomicAdd(&ctr[C_REM], 1ull);
        } else {
            keep[atomicAdd(&ctr[C_KEEP], 1ull)] = e;
        }
    }
}

// The level's survivors list[:n] rise to level k + 1 and take the ranks head + i, before every
// edge of that level; they are copied to seeds (the next level's scan starts from them).
extern "C" __global__ void ko_raise(const int* __restrict__ list, i64 n, int k,
                                    int* __restrict__ truss, i64* __restrict__ rank, i64 head,
                                    int* __restrict__ seeds) {
    GRID_STRIDE(i, n) {
        const int e = list[i];
        truss[e] = k + 1;
        rank[e] = head + i;
        seeds[i] = e;
    }
}
