// CUDA kernels of the GPU triangle counts and edge numbering (hornet/algos/triangles/gpu.py).
//
// Compiled once per process, on first use, by cupy.RawModule (NVRTC, -std=c++17; see
// hornet/core/cuda.py). 64-bit indexing throughout; every kernel is correct for any grid size
// (grid-stride loops over items, tiles or warps).
//
// Graphs are read through the pointer view (hornet.adjacency.AdjacencyView): vertex v's
// destinations are deg[v] int32 values at device address ptr[v] (ascending where the algorithm
// needs it); an edge property (weights, edge ids) is reached through its own per-vertex
// addresses. The same kernels therefore run on a dynamic hornet.Graph and on a plain CSR.
// Load balancing over lists of very different lengths: see tiles.cuh (hornet/core).

#include "segmented.cuh"     // i64, u64, GRID_STRIDE, lower_bound, segment_between (hornet/core)
#include "tiles.cuh"         // warp_sum, lanes_below, tiled_items, tile_segments (hornet/core)

#define ALIVE 1              // an edge kept by the k-truss peeling (ktruss.cu's states)

// ------------------------------------------------------------------------ edge numbering
// lo[u] = position of u's first neighbour greater than u (sorted lists).
extern "C" __global__ void first_above(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                       i64 n, i64* __restrict__ lo) {
    GRID_STRIDE(u, n) {
        const i64 d = deg[u];
        lo[u] = d ? lower_bound((const int*)ptr[u], d, (int)u + 1) : 0;
    }
}

// Edge id of every stored entry of an undirected sorted view: edge {a, b}, a < b, is number
// eoff[a] + (position of b in a's list) - lo[a] (the order of g.edges()); -1 for a self-loop.
extern "C" __global__ void entry_eids(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                      const i64* __restrict__ off, const i64* __restrict__ tseg,
                                      i64 total, const i64* __restrict__ lo,
                                      const i64* __restrict__ eoff, i64* __restrict__ out) {
    tiled_items(off, tseg, total, [&](i64 t, i64 u, bool ok) {
        if (!ok) return;
        const i64 j = t - off[u];
        const int w = ((const int*)ptr[u])[j];
        if (w > (int)u) {
            out[t] = eoff[u] + j - lo[u];
        } else if (w == (int)u) {
            out[t] = -1;
        } else {
            const int* rw = (const int*)ptr[w];
            const i64 p = lower_bound(rw, deg[w], (int)u);
            out[t] = eoff[w] + p - lo[w];
        }
    });
}

// For every stored entry (u, w) of a view: the id of edge {u, w} in an undirected sorted
// index (udeg, uptr, ulo, ueoff), or -1 (self-loop, or absent).
extern "C" __global__ void map_entries(const i64* __restrict__ ptr, const i64* __restrict__ off,
                                       const i64* __restrict__ tseg, i64 total,
                                       const int* __restrict__ udeg,
                                       const i64* __restrict__ uptr,
                                       const i64* __restrict__ ulo,
                                       const i64* __restrict__ ueoff, i64* __restrict__ out) {
    tiled_items(off, tseg, total, [&](i64 t, i64 u, bool ok) {
        if (!ok) return;
        const int w = ((const int*)ptr[u])[t - off[u]];
        if (w == (int)u) { out[t] = -1; return; }
        const int a = w < (int)u ? w : (int)u;
        const int b = w < (int)u ? (int)u : w;
        const i64 da = udeg[a];
        const int* ra = (const int*)uptr[a];
        const i64 p = da ? lower_bound(ra, da, b) : 0;
        out[t] = (p < da && ra[p] == b) ? ueoff[a] + p - ulo[a] : -1;
    });
}

// ------------------------------------------------------------------------ counting
// Orientation, one warp per vertex: keep the entries (u, w) with (deg w, w) > (deg u, u)
// (and, with use_state, whose edge id e = erow[j] has state[e] == ALIVE). FILL == 0: count
// per vertex into ocnt; FILL == 1: write them at ooff[u] (ascending, as the list), with their
// source (osrc non-null) and (use_eid) edge id, and their count into ocnt when it is
// non-null (one pass, when ooff leaves room for every list: the undirected offsets).
template <int FILL>
__global__ void orient_pass(const int* __restrict__ deg, const i64* __restrict__ ptr,
                            const i64* __restrict__ eptr, const u8* __restrict__ state,
                            int use_eid, int use_state, i64 n, i64* __restrict__ ocnt,
                            const i64* __restrict__ ooff, int* __restrict__ oind,
                            i64* __restrict__ oeid, int* __restrict__ osrc) {
    const unsigned lane = threadIdx.x & 31;
    const i64 nw = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 u = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; u < n; u += nw) {
        const int du = deg[u];
        const int* row = du ? (const int*)ptr[u] : nullptr;
        const i64* erow = (du && use_eid) ? (const i64*)eptr[u] : nullptr;
        const i64 base = FILL ? ooff[u] : 0;
        i64 cnt = 0;
        for (i64 j0 = 0; j0 < du; j0 += 32) {
            const i64 j = j0 + lane;
            bool keep = false;
            int w = 0;
            i64 e = -1;
            if (j < du) {
                w = row[j];
                if (w != (int)u) {
                    const int dw = deg[w];
                    keep = dw > du || (dw == du && w > (int)u);
                    if (keep && use_eid) {
                        e = erow[j];
                        if (use_state) keep = e >= 0 && state[e] == ALIVE;
                    }
                }
            }
            const unsigned m = __ballot_sync(FULL_MASK, keep);
            if (FILL && keep) {
                const i64 q = base + cnt + __popc(m & lanes_below(lane));
                oind[q] = w;
                if (osrc) osrc[q] = (int)u;
                if (use_eid) oeid[q] = e;
            }
            cnt += __popc(m);
        }
        if (lane == 0 && ocnt) ocnt[u] = cnt;
    }
}

// Work of oriented edge e = (u, v): the length of the shorter of out(u), out(v).
extern "C" __global__ void tc_work(const int* __restrict__ osrc, const int* __restrict__ oind,
                                   const i64* __restrict__ ooff, i64 m, i64* __restrict__ work) {
    GRID_STRIDE(e, m) {
        const int u = osrc[e], v = oind[e];
        const i64 da = ooff[u + 1] - ooff[u], db = ooff[v + 1] - ooff[v];
        work[e] = da < db ? da : db;
    }
}

// One item per (oriented edge (u, v), element w of the shorter of out(u), out(v)): w is
// binary-searched in the longer list; a hit is the triangle u, v, w (found exactly once).
// Each thread takes TC_IPT consecutive items (tseg from tile_segments with tile
// blockDim.x * TC_IPT): one search for its first edge, and the searches for the ascending
// elements of one edge resume where the previous one stopped.
// MODE 0: count; 1: + per vertex (tri_v); 2: + per edge (sup, through oeid).
#ifndef TC_IPT
#define TC_IPT 4
#endif

template <int MODE>
__global__ void tc_count(const int* __restrict__ osrc, const int* __restrict__ oind,
                         const i64* __restrict__ ooff, const i64* __restrict__ oeid,
                         const i64* __restrict__ wpre, const i64* __restrict__ tseg, i64 total,
                         u64* __restrict__ count, u64* __restrict__ tri_v,
                         int* __restrict__ sup) {
    u64 local = 0;
    const i64 tile = (i64)blockDim.x * TC_IPT;
    const i64 ntiles = (total + tile - 1) / tile;
    for (i64 k = blockIdx.x; k < ntiles; k += gridDim.x) {
        i64 t = k * tile + (i64)threadIdx.x * TC_IPT;
        const i64 tend = t + TC_IPT < total ? t + TC_IPT : total;
        if (t >= tend) continue;
        i64 e = segment_between(wpre, tseg[k], tseg[k + 1], t);
        i64 ws = wpre[e], we = wpre[e + 1];
        int u = 0, v = 0;
        i64 a0 = 0, b0 = 0, dl = 0, q = 0;
        bool a_short = true;
        const int* S = nullptr;
        const int* L = nullptr;
        bool fresh = true;
        int own = 0;                   // MODE 2: triangles of edge e found since it was taken
        for (; t < tend; ++t) {
            while (t >= we) {          // next edge with work (t < total: one exists)
                if (MODE == 2 && own) { atomicAdd(&sup[oeid[e]], own); own = 0; }
                ++e;
                ws = we;
                we = wpre[e + 1];
                fresh = true;
            }
            if (fresh) {
                u = osrc[e];
                v = oind[e];
                a0 = ooff[u];
                b0 = ooff[v];
                const i64 da = ooff[u + 1] - a0, db = ooff[v + 1] - b0;
                a_short = da <= db;
                S = oind + (a_short ? a0 : b0);
                L = oind + (a_short ? b0 : a0);
                dl = a_short ? db : da;
                q = 0;
                fresh = false;
            }
            const i64 p = t - ws;
            const int w = S[p];
            q += lower_bound(L + q, dl - q, w);
            if (q >= dl) continue;
            if (L[q] != w) continue;
            ++local;
            if (MODE == 1) {
                atomicAdd(&tri_v[u], 1ull);
                atomicAdd(&tri_v[v], 1ull);
                atomicAdd(&tri_v[w], 1ull);
            } else if (MODE == 2) {
                // (the thread's own edge e adds its hits once, when it moves on)
                const i64 pu = a_short ? p : q, pv = a_short ? q : p;
                ++own;
                atomicAdd(&sup[oeid[a0 + pu]], 1);
                atomicAdd(&sup[oeid[b0 + pv]], 1);
            }
            ++q;
        }
        if (MODE == 2 && own) atomicAdd(&sup[oeid[e]], own);
    }
    local = warp_sum(local);
    if ((threadIdx.x & 31) == 0 && local) atomicAdd(count, local);
}

// ------------------------------------------------------------------------ keyed hash counting
// Triangle count over an oriented graph (oind, ooff, dplus: each undirected edge once, v's
// out-list ascending at oind[ooff[v] .. ooff[v] + dplus(v)), with or without room between the
// lists) read together with the undirected sorted lists (deg, ptr). Every undirected edge {x, y} is handled once, at its key: the end with the
// larger (dplus, id); there |out(x) & out(y)| triangles are counted. A triangle's two
// lowest-ranked vertices span the only edge whose two out-lists both hold the third vertex,
// so each triangle is counted once. The key's out-list (the longer one) is staged in a
// shared-memory hash table once per key; the shorter list's elements are probed into it, so
// the work is sum over edges of min(dplus) with shared-memory lookups, and the key's list
// is reused across all edges keyed at it.
//
// tc_keyed_warp: one warp per key x with 1 <= dplus(x) <= 32 (64-slot table per warp);
// tc_keyed_block<MODE, TABLE>: one block per item of the lists `keys`, `jbeg` (and `rbeg`):
// key x, whose undirected neighbours jbeg .. jbeg + split - 1 the block takes (a hub's
// neighbours are split over many blocks, each building the key's table, so no block is left
// with a hub's whole work), in a table of TABLE slots. A key whose list does not fit at half
// load is cut by value: with `rbeg`, the item tables the list's elements rbeg ..
// rbeg + TABLE / 2 - 1 only (values vlo .. vhi), and probes only the elements of each
// neighbour's list within [vlo, vhi] (found by two binary searches in that ascending list),
// so the items of one (key, neighbour part) over all its value ranges probe every element
// once, each into a shared-memory table; without `rbeg` such a key is binary-searched in
// global memory instead.
// The smaller table leaves room for a full SM of blocks; the larger one takes longer lists.
// MODE 0: count; 1: + per vertex (tri_v).

#define TC_WARP_TABLE 128      // slots of a warp's table (lists of at most 32)
#define TC_BLOCK_IPT 4         // consecutive probe items per thread (block kernel)
#define TC_EMPTY (-1)

// Multiplicative (Fibonacci) hashing: the top log2(table size) bits of w * 2^32 / phi.
__device__ __forceinline__ unsigned tc_hash(int w, int shift) {
    return ((unsigned)w * 2654435769u) >> shift;
}

__device__ __forceinline__ void tc_insert(int* table, unsigned mask, int shift, int w) {
    unsigned h = tc_hash(w, shift);
    while (atomicCAS(&table[h], TC_EMPTY, w) != TC_EMPTY) h = (h + 1) & mask;
}

__device__ __forceinline__ bool tc_lookup(const int* table, unsigned mask, int shift, int w) {
    unsigned h = tc_hash(w, shift);
    while (true) {
        const int k = table[h];
        if (k == w) return true;
        if (k == TC_EMPTY) return false;
        h = (h + 1) & mask;
    }
}

// Slots of a key's table: a power of two >= spread * dx (spread >= 2: load at most 1/2), at
// least 32, at most cap (>= 2 dx here); *shift = 32 - log2(slots), for tc_hash.
__device__ __forceinline__ unsigned tc_table_size(i64 dx, int spread, unsigned cap,
                                                  int* shift) {
    unsigned size = 32;
    *shift = 32 - 5;
    while (size < spread * dx && size < cap) { size <<= 1; --*shift; }
    return size;
}

// Whether the undirected edge {x, y} is keyed at x: (dplus y, y) < (dplus x, x).
__device__ __forceinline__ bool tc_keyed(i64 dy, int y, i64 dx, int x) {
    return dy < dx || (dy == dx && y < x);
}

// A warp's inclusive prefix sum of one int per lane.
__device__ __forceinline__ int warp_inclusive_sum(int v, int lane) {
    for (int o = 1; o < 32; o <<= 1) {
        const int u = __shfl_up_sync(FULL_MASK, v, o);
        if (lane >= o) v += u;
    }
    return v;
}

// The last of the n slots whose exclusive prefix pre[slot] is <= t (pre ascending,
// pre[0] = 0): the slot whose items hold the t-th probe.
__device__ __forceinline__ int slot_of_item(const int* pre, int n, int t) {
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (pre[mid] <= t) lo = mid; else hi = mid - 1;
    }
    return lo;
}

// The lane whose items hold the warp's t-th probe.
__device__ __forceinline__ int lane_of_item(const int* pre, int t) {
    return slot_of_item(pre, 32, t);
}

template <int MODE>
__device__ __forceinline__ void tc_hit(u64* tri_v, int x, int y, int w) {
    if (MODE == 1) {
        atomicAdd(&tri_v[x], 1ull);
        atomicAdd(&tri_v[y], 1ull);
        atomicAdd(&tri_v[w], 1ull);
    }
}

template <int MODE>
__global__ void tc_keyed_warp(const int* __restrict__ deg, const i64* __restrict__ ptr,
                              const int* __restrict__ oind, const i64* __restrict__ ooff,
                              const int* __restrict__ dplus, const int* __restrict__ keys,
                              i64 nkeys, int spread, u64* __restrict__ count,
                              u64* __restrict__ tri_v) {
    __shared__ int s_table[8][TC_WARP_TABLE];
    __shared__ int s_pre[8][33];
    __shared__ i64 s_start[8][32];
    __shared__ int s_y[8][32];
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    int* table = s_table[wib];
    int* pre = s_pre[wib];
    i64* start = s_start[wib];
    int* ys = s_y[wib];
    u64 local = 0;
    const i64 nw = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 k = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; k < nkeys; k += nw) {
        const int x = keys[k];
        const i64 ox = ooff[x];
        const i64 dx = dplus[x];
        int shift;
        const unsigned size = tc_table_size(dx, spread, TC_WARP_TABLE, &shift);
        const unsigned mask = size - 1;
        for (unsigned q = lane; q < size; q += 32) table[q] = TC_EMPTY;
        __syncwarp();
        if (lane < dx) tc_insert(table, mask, shift, oind[ox + lane]);
        __syncwarp();
        const int dgx = deg[x];
        const int* nx = (const int*)ptr[x];
        for (int c0 = 0; c0 < dgx; c0 += 32) {
            const int j = c0 + lane;
            int cnt = 0, y = 0;
            i64 st = 0;
            if (j < dgx) {
                y = nx[j];
                const i64 dy = dplus[y];
                if (tc_keyed(dy, y, dx, x)) {
                    cnt = (int)dy;
                    st = ooff[y];
                }
            }
            const int inc = warp_inclusive_sum(cnt, lane);
            const int T = __shfl_sync(FULL_MASK, inc, 31);
            pre[lane] = inc - cnt;
            start[lane] = st;
            ys[lane] = y;
            if (lane == 0) pre[32] = T;
            __syncwarp();
            for (int t = lane; t < T; t += 32) {
                const int lo = lane_of_item(pre, t);
                const int w = oind[start[lo] + (t - pre[lo])];
                if (tc_lookup(table, mask, shift, w)) {
                    ++local;
                    tc_hit<MODE>(tri_v, x, ys[lo], w);
                }
            }
            __syncwarp();
        }
    }
    local = warp_sum(local);
    if (lane == 0 && local) atomicAdd(count, local);
}

template <int MODE, int TABLE>
__global__ void tc_keyed_block(const int* __restrict__ deg, const i64* __restrict__ ptr,
                               const int* __restrict__ oind, const i64* __restrict__ ooff,
                               const int* __restrict__ dplus, const int* __restrict__ keys,
                               const int* __restrict__ jbeg, const int* __restrict__ rbeg,
                               int split, i64 nkeys, int spread, u64* __restrict__ count,
                               u64* __restrict__ tri_v) {
    __shared__ int s_table[TABLE];
    __shared__ int s_pre[257];
    __shared__ i64 s_start[256];
    __shared__ int s_y[256];
    __shared__ int s_warp[32];
    __shared__ int s_total;
    const int tid = threadIdx.x;
    u64 local = 0;
    for (i64 k = blockIdx.x; k < nkeys; k += gridDim.x) {
        const int x = keys[k];
        const i64 ox = ooff[x];
        const i64 dx = dplus[x];
        // the part of the key's list in this item's table: lx[rb .. re) (all of it unless
        // the list is cut into value ranges)
        const bool ranged = rbeg != nullptr && 2 * dx > TABLE;
        const i64 rb = ranged ? (i64)rbeg[k] : 0;
        const i64 re = ranged ? min(dx, rb + TABLE / 2) : dx;
        const int* lx = oind + ox;
        const bool hashed = 2 * (re - rb) <= TABLE;
        const int vlo = ranged ? lx[rb] : 0, vhi = ranged ? lx[re - 1] : 0;
        int shift;
        const unsigned size = tc_table_size(re - rb, spread, TABLE, &shift);
        const unsigned mask = size - 1;
        if (hashed) {
            for (unsigned s = tid; s < size; s += blockDim.x) s_table[s] = TC_EMPTY;
            __syncthreads();
            for (i64 j = rb + tid; j < re; j += blockDim.x)
                tc_insert(s_table, mask, shift, lx[j]);
        }
        __syncthreads();
        const int jb = jbeg[k];
        const int je = (int)min((i64)deg[x], (i64)jb + split);   // this item's part of N(x)
        const int* nx = (const int*)ptr[x];
        for (int c0 = jb; c0 < je; c0 += blockDim.x) {
            const int j = c0 + tid;
            int cnt = 0, y = 0;
            i64 st = 0;
            if (j < je) {
                y = nx[j];
                const i64 dy = dplus[y];
                if (tc_keyed(dy, y, dx, x)) {
                    cnt = (int)dy;
                    st = ooff[y];
                    if (ranged && dy) {        // out(y)'s elements within [vlo, vhi]
                        const int* ly = oind + st;
                        const i64 a = lower_bound(ly, dy, vlo);
                        const i64 b = a + upper_bound(ly + a, dy - a, vhi);
                        st += a;
                        cnt = (int)(b - a);
                    }
                }
            }
            const int ex = block_exclusive_scan(cnt, s_warp, &s_total);
            s_pre[tid] = ex;
            s_start[tid] = st;
            s_y[tid] = y;
            __syncthreads();
            const int T = s_total;
            const int nt = (int)blockDim.x;
            for (int t0 = 0; t0 < T; t0 += nt * TC_BLOCK_IPT) {
                const int t = t0 + tid * TC_BLOCK_IPT;
                if (t >= T) continue;
                int lo = slot_of_item(s_pre, nt, t);
                int next = lo + 1 < nt ? s_pre[lo + 1] : T;
                if (hashed) {
                    // the thread's items are loaded first (independent loads in flight),
                    // then probed
                    int w[TC_BLOCK_IPT], slot[TC_BLOCK_IPT];
                    i64 base = s_start[lo] - s_pre[lo];
#pragma unroll
                    for (int i = 0; i < TC_BLOCK_IPT; ++i) {
                        const int ti = t + i;
                        w[i] = TC_EMPTY;
                        slot[i] = lo;
                        if (ti < T) {
                            while (ti >= next) {
                                ++lo;
                                next = lo + 1 < nt ? s_pre[lo + 1] : T;
                                base = s_start[lo] - s_pre[lo];
                            }
                            w[i] = oind[base + ti];
                            slot[i] = lo;
                        }
                    }
#pragma unroll
                    for (int i = 0; i < TC_BLOCK_IPT; ++i) {
                        if (w[i] != TC_EMPTY && tc_lookup(s_table, mask, shift, w[i])) {
                            ++local;
                            tc_hit<MODE>(tri_v, x, s_y[slot[i]], w[i]);
                        }
                    }
                } else {
                    // the key's list is binary-searched in global memory; the searches for
                    // the ascending elements of one list resume where the previous stopped
                    const int tend = min(t + TC_BLOCK_IPT, T);
                    i64 q = 0;
                    for (int ti = t; ti < tend; ++ti) {
                        while (ti >= next) {
                            ++lo;
                            next = lo + 1 < nt ? s_pre[lo + 1] : T;
                            q = 0;
                        }
                        const int w = oind[s_start[lo] + (ti - s_pre[lo])];
                        q += lower_bound(lx + q, dx - q, w);
                        if (q < dx && lx[q] == w) {
                            ++local;
                            tc_hit<MODE>(tri_v, x, s_y[lo], w);
                        }
                    }
                }
            }
            __syncthreads();
        }
    }
    local = warp_sum(local);
    if ((tid & 31) == 0 && local) atomicAdd(count, local);
}

// ------------------------------------------------------------------------ keyed per-edge support
// Support (triangles per undirected edge) by the keyed scheme above: every triangle is found
// once, at the key x of its edge {x, y} (w in out(x) & out(y)), and adds one to each of its
// three edges. Edge ids: eptr (per-vertex addresses of the int64 ids of the undirected lists'
// entries) for {x, y}, oeid (ids of the oriented entries) for {y, w} and {x, w}. The key's
// table slot of w also counts its hits in shared memory, so {x, w} gets one global atomic per
// (key, w) instead of one per triangle; {x, y} adds a thread's run of hits on one y at once.
// Lists of a key longer than half the table are binary-searched in global memory instead.

// Slot of w in the table, or -1.
__device__ __forceinline__ int tc_find(const int* table, unsigned mask, int shift, int w) {
    unsigned h = tc_hash(w, shift);
    while (true) {
        const int k = table[h];
        if (k == w) return (int)h;
        if (k == TC_EMPTY) return -1;
        h = (h + 1) & mask;
    }
}

// {x, w} for every slot with hits: w's position in the key's list lx (ascending) gives the id
__device__ __forceinline__ void tc_flush_hits(const int* table, int* hits, unsigned size,
                                              unsigned first, unsigned step, const int* lx,
                                              i64 dx, const i64* oeid_x, int* sup) {
    for (unsigned q = first; q < size; q += step) {
        const int c = hits[q];
        if (c) atomicAdd(&sup[oeid_x[lower_bound(lx, dx, table[q])]], c);
    }
}

extern "C" __global__ void tc_support_warp(const int* __restrict__ deg,
                                           const i64* __restrict__ ptr,
                                           const i64* __restrict__ eptr,
                                           const int* __restrict__ oind,
                                           const i64* __restrict__ ooff,
                                           const i64* __restrict__ oeid,
                                           const int* __restrict__ dplus,
                                           const int* __restrict__ keys, i64 nkeys, int spread,
                                           int* __restrict__ sup) {
    __shared__ int s_table[8][TC_WARP_TABLE];
    __shared__ int s_hits[8][TC_WARP_TABLE];
    __shared__ int s_pre[8][33];
    __shared__ i64 s_start[8][32];
    __shared__ i64 s_exy[8][32];
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    int* table = s_table[wib];
    int* hits = s_hits[wib];
    int* pre = s_pre[wib];
    i64* start = s_start[wib];
    i64* exys = s_exy[wib];
    const i64 nw = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 k = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; k < nkeys; k += nw) {
        const int x = keys[k];
        const i64 ox = ooff[x];
        const i64 dx = dplus[x];
        int shift;
        const unsigned size = tc_table_size(dx, spread, TC_WARP_TABLE, &shift);
        const unsigned mask = size - 1;
        for (unsigned q = lane; q < size; q += 32) { table[q] = TC_EMPTY; hits[q] = 0; }
        __syncwarp();
        if (lane < dx) tc_insert(table, mask, shift, oind[ox + lane]);
        __syncwarp();
        const int dgx = deg[x];
        const int* nx = (const int*)ptr[x];
        const i64* ex = (const i64*)eptr[x];
        for (int c0 = 0; c0 < dgx; c0 += 32) {
            const int j = c0 + lane;
            int cnt = 0;
            i64 st = 0, exy = 0;
            if (j < dgx) {
                const int y = nx[j];
                const i64 dy = dplus[y];
                if (tc_keyed(dy, y, dx, x)) {
                    cnt = (int)dy;
                    st = ooff[y];
                    exy = ex[j];
                }
            }
            const int inc = warp_inclusive_sum(cnt, lane);
            const int T = __shfl_sync(FULL_MASK, inc, 31);
            pre[lane] = inc - cnt;
            start[lane] = st;
            exys[lane] = exy;
            if (lane == 0) pre[32] = T;
            __syncwarp();
            for (int t = lane; t < T; t += 32) {
                const int lo = lane_of_item(pre, t);
                const i64 pos = start[lo] + (t - pre[lo]);
                const int slot = tc_find(table, mask, shift, oind[pos]);
                if (slot >= 0) {
                    atomicAdd(&hits[slot], 1);             // {x, w}
                    atomicAdd(&sup[oeid[pos]], 1);         // {y, w}
                    atomicAdd(&sup[exys[lo]], 1);          // {x, y}
                }
            }
            __syncwarp();
        }
        tc_flush_hits(table, hits, size, lane, 32, oind + ox, dx, oeid + ox, sup);
        __syncwarp();
    }
}

template <int TABLE>
__global__ void tc_support_block(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                 const i64* __restrict__ eptr, const int* __restrict__ oind,
                                 const i64* __restrict__ ooff, const i64* __restrict__ oeid,
                                 const int* __restrict__ dplus, const int* __restrict__ keys,
                                 const int* __restrict__ jbeg, int split, i64 nkeys,
                                 int spread, int* __restrict__ sup) {
    __shared__ int s_table[TABLE];
    __shared__ int s_hits[TABLE];
    __shared__ int s_pre[257];
    __shared__ i64 s_start[256];
    __shared__ i64 s_exy[256];
    __shared__ int s_warp[32];
    __shared__ int s_total;
    const int tid = threadIdx.x;
    for (i64 k = blockIdx.x; k < nkeys; k += gridDim.x) {
        const int x = keys[k];
        const i64 ox = ooff[x];
        const i64 dx = dplus[x];
        const int* lx = oind + ox;
        const bool hashed = 2 * dx <= TABLE;
        int shift;
        const unsigned size = tc_table_size(dx, spread, TABLE, &shift);
        const unsigned mask = size - 1;
        if (hashed) {
            for (unsigned s = tid; s < size; s += blockDim.x) {
                s_table[s] = TC_EMPTY;
                s_hits[s] = 0;
            }
            __syncthreads();
            for (i64 j = tid; j < dx; j += blockDim.x) tc_insert(s_table, mask, shift, lx[j]);
        }
        __syncthreads();
        const int jb = jbeg[k];
        const int je = (int)min((i64)deg[x], (i64)jb + split);   // this item's part of N(x)
        const int* nx = (const int*)ptr[x];
        const i64* ex = (const i64*)eptr[x];
        for (int c0 = jb; c0 < je; c0 += blockDim.x) {
            const int j = c0 + tid;
            int cnt = 0;
            i64 st = 0, exy = 0;
            if (j < je) {
                const int y = nx[j];
                const i64 dy = dplus[y];
                if (tc_keyed(dy, y, dx, x)) {
                    cnt = (int)dy;
                    st = ooff[y];
                    exy = ex[j];
                }
            }
            const int exs = block_exclusive_scan(cnt, s_warp, &s_total);
            s_pre[tid] = exs;
            s_start[tid] = st;
            s_exy[tid] = exy;
            __syncthreads();
            const int T = s_total;
            const int nt = (int)blockDim.x;
            for (int t0 = 0; t0 < T; t0 += nt * TC_BLOCK_IPT) {
                const int t = t0 + tid * TC_BLOCK_IPT;
                if (t >= T) continue;
                int lo = slot_of_item(s_pre, nt, t);
                int next = lo + 1 < nt ? s_pre[lo + 1] : T;
                const int tend = min(t + TC_BLOCK_IPT, T);
                int run = 0;                       // hits of the thread's items on y = lo
                i64 q = 0;
                for (int ti = t; ti < tend; ++ti) {
                    while (ti >= next) {
                        if (run) { atomicAdd(&sup[s_exy[lo]], run); run = 0; }
                        ++lo;
                        next = lo + 1 < nt ? s_pre[lo + 1] : T;
                        q = 0;
                    }
                    const i64 pos = s_start[lo] + (ti - s_pre[lo]);
                    const int w = oind[pos];
                    if (hashed) {
                        const int slot = tc_find(s_table, mask, shift, w);
                        if (slot < 0) continue;
                        atomicAdd(&s_hits[slot], 1);                  // {x, w}
                    } else {
                        // the searches for the ascending elements of one list resume where
                        // the previous one stopped
                        q += lower_bound(lx + q, dx - q, w);
                        if (q >= dx || lx[q] != w) continue;
                        atomicAdd(&sup[oeid[ox + q]], 1);            // {x, w}
                    }
                    atomicAdd(&sup[oeid[pos]], 1);                    // {y, w}
                    ++run;
                }
                if (run) atomicAdd(&sup[s_exy[lo]], run);             // {x, y}
            }
            __syncthreads();
        }
        if (hashed) {
            tc_flush_hits(s_table, s_hits, size, tid, blockDim.x, lx, dx, oeid + ox, sup);
            __syncthreads();
        }
    }
}
