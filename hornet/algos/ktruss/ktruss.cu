// CUDA kernels of the GPU k-truss peeling (hornet/algos/ktruss/gpu.py).
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

#define DEAD 0
#define ALIVE 1
#define GOING 2

// Peeling with the delta algorithm (Green et al., HPEC 2017). Per-edge state: ALIVE, GOING
// (removed in the current round) or DEAD. A round is two launches and one 8-byte read:
//   truss_mark   the previous round's edges GOING -> DEAD, this round's ALIVE -> GOING,
//                the round's counter zeroed;
//   truss_delta  the triangles of the GOING edges subtracted from the ALIVE ones; edges whose
//                support falls below thr are appended to `next` (counter[0] of them),
// then the host reads counter[0] (the next round's size). No launch needs a host-side total:
// truss_delta runs a fixed number of warps per removed edge, so its grid follows from the
// number of removed edges alone.

// One peeling round's set-up (and, with prev only, the end of a peeling): state[prev[i]] =
// DEAD (the previous round's edges, GOING until now), state[rem[i]] = mark (GOING, or DEAD
// for a round that recounts instead of subtracting), truss[rem[i]] = level if use_truss, and
// counter[0] = 0. prev and rem are disjoint (rem was ALIVE through the previous round), so
// no two threads write one state. Launch over max(nprev + nrem, 1) items (the counter is
// zeroed even for an empty round).
extern "C" __global__ void truss_mark(const i64* __restrict__ prev, i64 nprev,
                                      const i64* __restrict__ rem, i64 nrem, int mark,
                                      u8* __restrict__ state, u64* __restrict__ counter,
                                      int use_truss, int* __restrict__ truss, int level) {
    if (blockIdx.x == 0 && threadIdx.x == 0) counter[0] = 0;
    GRID_STRIDE(i, nprev + nrem) {
        if (i < nprev) {
            state[prev[i]] = DEAD;
        } else {
            const i64 e = rem[i - nprev];
            state[e] = (u8)mark;
            if (use_truss) truss[e] = level;
        }
    }
}

__device__ __forceinline__ void truss_decrement(int* __restrict__ sup, i64 e, int thr,
                                                i64* __restrict__ next,
                                                u64* __restrict__ counter) {
    // sup only falls during a peeling, so exactly one decrement sees old == thr: every edge
    // is appended once, and only ALIVE edges are decremented, so next holds distinct ALIVE
    // edges (the next round's GOING set)
    const int old = atomicSub(&sup[e], 1);
    if (old == thr) next[atomicAdd(counter, 1ull)] = e;      // crossed below thr: peel next
}

// Delta step, `parts` warps per removed edge e = rem[r] = (x, y) (state GOING, set by
// truss_mark in an earlier launch; states are only read here). For every w in N(x) ∩ N(y) of
// the current CSR (each warp takes every parts-th run of 32 elements of the shorter list, one
// element a lane, and binary-searches them in the longer), with e1 = {x, w}, e2 = {y, w}:
//   both ALIVE -> both lose the triangle;
//   one GOING, the other ALIVE -> the survivor loses it once: only the lower id of the two
//     removed edges subtracts (e < e1 for e1 GOING, e < e2 for e2 GOING);
//   any DEAD -> nothing (the triangle is gone already); both GOING -> nothing (all three
//     edges go: no survivor).
// Edges whose support falls from thr to thr - 1 are appended to next (truss_decrement).
// Lists are strictly ascending, so the position of the largest element a warp has searched
// (lane 31's) bounds the warp's later searches from below. parts > 1 spreads a round of few
// removed edges over more of the GPU.
extern "C" __global__ void truss_delta(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                       const i64* __restrict__ eptr,
                                       const u8* __restrict__ state,
                                       const i64* __restrict__ rem, i64 nrem, int parts,
                                       const int* __restrict__ esrc,
                                       const int* __restrict__ edst, int* __restrict__ sup,
                                       int thr, i64* __restrict__ next,
                                       u64* __restrict__ counter) {
    const unsigned lane = threadIdx.x & 31;
    const i64 nw = ((i64)gridDim.x * blockDim.x) >> 5;
    const i64 nitems = nrem * parts;
    // (wi is the same in all lanes of a warp: every branch below up to the lane's own
    // element is warp-uniform, as the shuffle needs)
    for (i64 wi = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; wi < nitems; wi += nw) {
        const i64 r = wi / parts;
        const i64 part = wi - r * parts;
        const i64 e = rem[r];
        const int x = esrc[e], y = edst[e];
        const i64 dx = deg[x], dy = deg[y];
        const bool x_short = dx <= dy;
        const int s = x_short ? x : y, l = x_short ? y : x;
        const i64 ds = x_short ? dx : dy, dl = x_short ? dy : dx;
        if (part * 32 >= ds) continue;         // (ds > 0 for a GOING edge: it is in both lists)
        const int* S = (const int*)ptr[s];
        const int* L = (const int*)ptr[l];
        i64 base = 0;                          // L[0:base] < every element still to search
        for (i64 k0 = part * 32; k0 < ds; k0 += 32 * (i64)parts) {
            const i64 k = k0 + lane;
            i64 q = base;
            if (k < ds) {
                const int w = S[k];
                q = base + lower_bound(L + base, dl - base, w);
                if (q < dl && L[q] == w) {
                    const i64 es = ((const i64*)eptr[s])[k];     // {s, w}
                    const i64 el = ((const i64*)eptr[l])[q];     // {l, w}
                    const i64 e1 = x_short ? es : el;            // {x, w}
                    const i64 e2 = x_short ? el : es;            // {y, w}
                    if (e1 >= 0 && e2 >= 0) {
                        const int s1 = state[e1], s2 = state[e2];
                        if (s1 != DEAD && s2 != DEAD) {
                            bool d1 = false, d2 = false;
                            if (s1 == ALIVE && s2 == ALIVE) { d1 = true; d2 = true; }
                            else if (s2 == ALIVE) d2 = e < e1;   // e1 GOING
                            else if (s1 == ALIVE) d1 = e < e2;   // e2 GOING
                            if (d1) truss_decrement(sup, e1, thr, next, counter);
                            if (d2) truss_decrement(sup, e2, thr, next, counter);
                        }
                    }
                }
            }
            base = __shfl_sync(FULL_MASK, q, 31);
        }
    }
}

// Compaction of the peeled CSR to its live edges: pos (total + 1) is the exclusive scan of
// the entries' keep flags with the total last (entry t is kept iff pos[t + 1] > pos[t]).
// Kept entry t moves to pos[t]: the rows stay in order and every list stays ascending. The
// host sizes the output from the live edges (kept = 2 * alive, pos[total] itself); the
// check against kept only keeps a broken count from writing out of bounds.
extern "C" __global__ void truss_compact(const int* __restrict__ ind,
                                         const i64* __restrict__ eid,
                                         const i64* __restrict__ pos, i64 total, i64 kept,
                                         int* __restrict__ ind_out, i64* __restrict__ eid_out) {
    GRID_STRIDE(t, total) {
        const i64 j = pos[t];
        if (pos[t + 1] == j || j >= kept) continue;
        ind_out[j] = ind[t];
        eid_out[j] = eid[t];
    }
}
