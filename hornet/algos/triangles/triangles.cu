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
// source and (use_eid) edge id.
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
                osrc[q] = (int)u;
                if (use_eid) oeid[q] = e;
            }
            cnt += __popc(m);
        }
        if (!FILL && lane == 0) ocnt[u] = cnt;
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
        for (; t < tend; ++t) {
            while (t >= we) {          // next edge with work (t < total: one exists)
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
                const i64 pu = a_short ? p : q, pv = a_short ? q : p;
                atomicAdd(&sup[oeid[e]], 1);
                atomicAdd(&sup[oeid[a0 + pu]], 1);
                atomicAdd(&sup[oeid[b0 + pv]], 1);
            }
            ++q;
        }
    }
    local = warp_sum(local);
    if ((threadIdx.x & 31) == 0 && local) atomicAdd(count, local);
}
