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
// dt_seed / dt_expand / dt_admit (insertion: the region walk), dt_raise / dt_saturated
// (insertion: the +1 bounds and the edges that kept them).

#include "segmented.cuh"     // i64, u64, GRID_STRIDE, lower_bound
#include "tiles.cuh"         // FULL_MASK
#include "../algos/edge_table.cuh"
#include "../algos/batch_adjacency.cuh"

#define C_LOW 0        // edges lowered in this round (dt_apply)
#define C_NEXT 1       // the next round's worklist (dt_apply, dt_push, dt_lost_seeds)
#define C_TOUCHED 2    // distinct edges whose triangles an update examined
#define C_CAND 3       // walk candidates (dt_expand, dt_saturated)
#define C_FRONT 4      // the walk's next frontier (dt_admit)
#define C_REGION 5     // the region (dt_admit; dt_seed's seeds are counted by the host)

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
extern "C" __global__ void dt_apply(const int* __restrict__ list, i64 n,
                                    const int* __restrict__ newval, int* __restrict__ truss,
                                    int* __restrict__ lowered, int* __restrict__ lowered_old,
                                    int* __restrict__ next, int* __restrict__ mark, int stamp,
                                    u64* ctr) {
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

// Insertion, the walk's start: the seeds (distinct) join the region and the first frontier,
// marked member (mstamp) and seen (sstamp).
extern "C" __global__ void dt_seed(const int* __restrict__ seeds, i64 n, int* __restrict__ member,
                                   int mstamp, int* __restrict__ seen, int sstamp,
                                   int* __restrict__ region, int* __restrict__ front) {
    GRID_STRIDE(i, n) {
        const int e = seeds[i];
        member[e] = mstamp;
        seen[e] = sstamp;
        region[i] = e;
        front[i] = e;
    }
}

// The walk's step, `parts` warps per frontier edge x (level a = truss[x]): for each triangle
// (x, y, z), y becomes a candidate (cand, ctr[C_CAND], once per walk: seen == sstamp) when it
// is at x's level (relaxed: at most x's level: x is an inserted edge holding its support + 1)
// and z is at least at y's level (else the triangle cannot hold y at the level above).
extern "C" __global__ void dt_expand(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                     const i64* __restrict__ tkeys, int tshift,
                                     const int* __restrict__ truss,
                                     const int* __restrict__ front, i64 n, int relaxed,
                                     int* __restrict__ seen, int sstamp, int* __restrict__ cand,
                                     u64* ctr, int parts) {
    const unsigned lane = threadIdx.x & 31;
    for (i64 wi = warp_id(); wi < n * parts; wi += num_warps()) {
        const i64 i = wi / parts;
        const int part = (int)(wi - i * parts);
        const int x = front[i];
        const i64 key = tkeys[x];
        const int u = hi32(key), v = lo32(key);
        const int a = truss[x];
        warp_common(deg, ptr, u, v, lane, part, parts, [&](int w) {
            const i64 s1 = et_find(tkeys, tshift, et_key(u, w));
            const i64 s2 = et_find(tkeys, tshift, et_key(v, w));
            if (s1 < 0 || s2 < 0) return;
            const int f1 = truss[s1], f2 = truss[s2];
            if ((relaxed ? f1 <= a : f1 == a) && f2 >= f1)
                claim(seen, sstamp, (int)s1, cand, ctr, C_CAND);
            if ((relaxed ? f2 <= a : f2 == a) && f1 >= f2)
                claim(seen, sstamp, (int)s2, cand, ctr, C_CAND);
        }, NO_STOP);
    }
}

// One warp per candidate y (ctr[C_CAND] of them): y can rise above its level f only with at
// least f - 1 triangles whose two other edges are at level >= f (their bounds are then
// >= f + 1). Such a y joins the region (member = mstamp; region, ctr[C_REGION]) and the next
// frontier (front, ctr[C_FRONT]); any other stays where it is and the walk stops there.
extern "C" __global__ void dt_admit(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                    const i64* __restrict__ tkeys, int tshift,
                                    const int* __restrict__ truss, const int* __restrict__ cand,
                                    int* __restrict__ member, int mstamp,
                                    int* __restrict__ front, int* __restrict__ region,
                                    int* __restrict__ touched, int tstamp, u64* ctr) {
    __shared__ int count[WARPS];
    const unsigned lane = threadIdx.x & 31;
    int* c = &count[(threadIdx.x >> 5) & (WARPS - 1)];
    const i64 n = (i64)ctr[C_CAND];
    for (i64 i = warp_id(); i < n; i += num_warps()) {
        const int y = cand[i];
        const i64 key = tkeys[y];
        const int u = hi32(key), v = lo32(key);
        const int f = truss[y];
        if (lane == 0) *c = 0;
        __syncwarp();
        // (stops once f - 1 such triangles are found)
        warp_common(deg, ptr, u, v, lane, 0, 1, [&](int w) {
            const i64 s1 = et_find(tkeys, tshift, et_key(u, w));
            const i64 s2 = et_find(tkeys, tshift, et_key(v, w));
            if (s1 < 0 || s2 < 0) return;
            if (truss[s1] >= f && truss[s2] >= f) atomicAdd(c, 1);
        }, [&] {
            __syncwarp();
            return *c >= f - 1;
        });
        __syncwarp();
        if (lane == 0) {
            touch(touched, tstamp, y, ctr);
            if (*c >= f - 1) {
                member[y] = mstamp;
                front[atomicAdd(&ctr[C_FRONT], 1ull)] = y;
                region[atomicAdd(&ctr[C_REGION], 1ull)] = y;
            }
        }
        __syncwarp();
    }
}

// The region's bounds: every region edge one level up (an inserted edge, holding its support
// + 1, to its support + 2); bound[i] keeps the bound of region[i].
extern "C" __global__ void dt_raise(const int* __restrict__ region, i64 n,
                                    int* __restrict__ truss, int* __restrict__ bound) {
    GRID_STRIDE(i, n) {
        const int e = region[i];
        const int b = truss[e] + 1;
        truss[e] = b;
        bound[i] = b;
    }
}

// After the descent: region edges i >= skip still at their bound (they rose by the whole step
// and may rise again) to out (count ctr[C_CAND]), marked seen (sstamp: the next walk's stamp).
extern "C" __global__ void dt_saturated(const int* __restrict__ region, i64 n, i64 skip,
                                        const int* __restrict__ truss,
                                        const int* __restrict__ bound, int* __restrict__ out,
                                        int* __restrict__ seen, int sstamp, u64* ctr) {
    GRID_STRIDE(i, n) {
        if (i < skip) continue;
        const int e = region[i];
        if (truss[e] == bound[i]) {
            seen[e] = sstamp;
            out[atomicAdd(&ctr[C_CAND], 1ull)] = e;
        }
    }
}
