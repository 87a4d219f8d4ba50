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
#include "grid_barrier.cuh"  // grid_barrier (hornet/core)

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

// ------------------------------------------------------------------------ device-side peeling
// truss_peel: a whole peeling in one cooperative launch (every block resident), its levels and
// rounds separated by a grid barrier instead of kernel boundaries, so no round's size crosses
// to the host. The host relaunches only to compact the CSR (rows rebuilt without the dead
// entries) when fewer than half of its stored edges are still alive.
//
// Per-edge state gone[e]: GONE_NEVER while the edge is alive, else the round that removed it.
// Rounds are numbered over the whole peeling, so in round r an edge with gone == r is this
// round's (the GOING of truss_delta), gone < r is gone already (DEAD) and gone > r is alive
// for this round (GONE_NEVER, or r + 1: it crossed below the threshold during round r and is
// removed by round r + 1). Marking an edge for the next round while the round runs is
// therefore safe: readers of this round see it alive either way, and no marking phase (nor
// its barrier) is needed between rounds. The triangle rules are truss_delta's.
//
// A level (fixed threshold thr): the alive list is compacted and its minimum support found
// (phase A); the live edges with support < thr become round r (phase B); then rounds until
// one finds nothing more. Decomposition (fixed_thr < 0): levels follow each other with
// thr = min support + 1 and truss number min support + 2 (the numbers of decompose() in
// gpu.py), until no edge is left. One k (fixed_thr >= 0): one level, then a last phase A
// counts the survivors (left as the alive list).
//
// Frontier items: (edge << TRUSS_CHUNK_SHIFT) | chunk, one per `span` elements of the edge's
// shorter list (the current CSR's degrees; span a multiple of TRUSS_CHUNK, a warp's item is
// span / TRUSS_CHUNK steps of 32 elements), so a hub edge is spread over many warps. The host
// picks the least span whose two frontier buffers (sized for every edge going in one round)
// fit its memory budget: TRUSS_CHUNK on a graph that fits, larger on the largest graphs.
// Lists are appended through warp-aggregated atomic counters; counters rotate over three slots
// by phase: slot ph % 3 is appended to in phase ph and read right after the barrier that ends
// it; phase q resets slot (q + 1) % 3, whose last readers finished before q began.

#define GONE_NEVER 0x7fffffff
#define TRUSS_CHUNK 32
#define TRUSS_CHUNK_SHIFT 25
#define TRUSS_CHUNK_MASK ((1ull << TRUSS_CHUNK_SHIFT) - 1)

// control words (u64); the host sets K_ALIVE, K_ABUF, K_ROUND before a launch and zeroes the
// counter slots (minimum slots: all ones)
#define K_ALIVE 0        // length of the alive list (in and out)
#define K_ABUF 1         // which alive buffer holds it (in and out)
#define K_ROUND 2        // last round number given out (in and out)
#define K_STATUS 3       // out: 0 finished, 1 the CSR wants compacting (decomposition only)
#define K_LEVELS 4       // levels run (added to)
#define K_ROUNDS 5       // non-empty rounds run (added to)
#define K_CNT 8          // 3 slots: list lengths appended in phase ph % 3
#define K_MIN 11         // 3 slots: minimum support seen in phase ph % 3
#define K_WORDS 16

__device__ __forceinline__ int ld_cg(const int* p) { return __ldcg(p); }
__device__ __forceinline__ i64 ld_cg(const i64* p) { return __ldcg(p); }
__device__ __forceinline__ u64 ld_cg(const u64* p) { return __ldcg(p); }

// Slots for this lane's cnt items in a list appended through *counter: one atomic per warp
// (every lane must call, cnt may be 0). Returns the lane's first slot.
__device__ __forceinline__ u64 warp_reserve(u64* counter, unsigned cnt, unsigned lane) {
    unsigned inc = cnt;
    for (int o = 1; o < 32; o <<= 1) {
        const unsigned v = __shfl_up_sync(FULL_MASK, inc, o);
        if (lane >= (unsigned)o) inc += v;
    }
    const unsigned total = __shfl_sync(FULL_MASK, inc, 31);
    u64 base = 0;
    if (lane == 31 && total) base = atomicAdd(counter, (u64)total);
    base = __shfl_sync(FULL_MASK, base, 31);
    return base + (inc - cnt);
}

struct TrussPeel {
    const int* deg; const i64* ptr; const i64* eptr; const int* esrc; const int* edst;
    int* sup; int* gone; int* truss;
    u64* ctl; unsigned* bar;
    unsigned lane;
    int span;                // elements of a shorter list per frontier item (x TRUSS_CHUNK)
    int ph;                  // phase number (identical in every block)

    __device__ void sync() { grid_barrier(bar); }

    // ends phase ph: barrier, then slot (ph + 1) % 3 of the new phase's successor is reset
    // (its last use, two phases back, was read before this barrier)
    __device__ void next_phase() {
        sync();
        ++ph;
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            ctl[K_CNT + (ph + 1) % 3] = 0;
            ctl[K_MIN + (ph + 1) % 3] = ~0ull;
        }
    }
    __device__ u64* count_slot() { return &ctl[K_CNT + ph % 3]; }
    __device__ u64 last_count() { return ld_cg(&ctl[K_CNT + (ph + 2) % 3]); }
    __device__ u64 last_min() { return ld_cg(&ctl[K_MIN + (ph + 2) % 3]); }

    __device__ unsigned chunks(i64 e) const {
        const int dx = deg[esrc[e]], dy = deg[edst[e]];
        const int ds = dx < dy ? dx : dy;
        return (unsigned)((ds + span - 1) / span);
    }

    // appends the chunk items of this lane's edges a and b (-1: none) to list out
    __device__ void append_edges(u64* out, i64 a, i64 b) {
        const unsigned na = a >= 0 ? chunks(a) : 0u, nb = b >= 0 ? chunks(b) : 0u;
        u64 at = warp_reserve(count_slot(), na + nb, lane);
        for (unsigned c = 0; c < na; ++c) out[at++] = ((u64)a << TRUSS_CHUNK_SHIFT) | c;
        for (unsigned c = 0; c < nb; ++c) out[at++] = ((u64)b << TRUSS_CHUNK_SHIFT) | c;
    }

    // e' (alive) loses one triangle; true when its support crosses below thr (once per edge:
    // supports only fall), and then it is marked for round r + 1
    __device__ bool lose(i64 f, int thr, int r, int level) {
        if (atomicSub(&sup[f], 1) != thr) return false;
        gone[f] = r + 1;
        if (truss) truss[f] = level;
        return true;
    }
};

extern "C" __global__ void truss_peel(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                      const i64* __restrict__ eptr,
                                      const int* __restrict__ esrc,
                                      const int* __restrict__ edst, int* sup, int* gone,
                                      int* truss, i64* alive0, i64* alive1, u64* front0,
                                      u64* front1, u64* ctl, unsigned* bar, i64 stored,
                                      int fixed_thr, int span) {
    TrussPeel P;
    P.deg = deg; P.ptr = ptr; P.eptr = eptr; P.esrc = esrc; P.edst = edst;
    P.sup = sup; P.gone = gone; P.truss = truss; P.ctl = ctl; P.bar = bar;
    P.lane = threadIdx.x & 31;
    P.span = span;
    P.ph = 0;
    const unsigned lane = P.lane;
    const i64 nthreads = (i64)gridDim.x * blockDim.x;
    const i64 wbase = (i64)blockIdx.x * blockDim.x + (threadIdx.x & ~31u);   // warp's first thread
    const i64 nwarps = nthreads >> 5;
    const i64 gwarp = wbase >> 5;
    i64 nA = (i64)ctl[K_ALIVE];
    int abuf = (int)(ctl[K_ABUF] & 1);
    int r = (int)ctl[K_ROUND];
    u64 levels = 0, rounds = 0;
    int status = 0;
    bool level_done = false;
    while (true) {
        // phase A: the alive list without its dead edges, and their minimum support
        {
            const i64* A = abuf ? alive1 : alive0;
            i64* B = abuf ? alive0 : alive1;
            unsigned mn = 0xffffffffu;
            for (i64 b = wbase; b < nA; b += nthreads) {
                const i64 i = b + lane;
                i64 e = -1;
                if (i < nA) {
                    e = ld_cg(&A[i]);
                    if (ld_cg(&gone[e]) != GONE_NEVER) {
                        e = -1;
                    } else {
                        const unsigned s = (unsigned)ld_cg(&sup[e]);
                        mn = s < mn ? s : mn;
                    }
                }
                const u64 at = warp_reserve(P.count_slot(), e >= 0 ? 1u : 0u, lane);
                if (e >= 0) B[at] = e;
            }
            mn = __reduce_min_sync(FULL_MASK, mn);
            if (lane == 0 && mn != 0xffffffffu) atomicMin(&ctl[K_MIN + P.ph % 3], (u64)mn);
        }
        P.next_phase();
        nA = (i64)P.last_count();
        const u64 m = P.last_min();
        abuf ^= 1;
        if (level_done || nA == 0) break;
        if (fixed_thr < 0 && 2 * nA < stored) { status = 1; break; }
        const int thr = fixed_thr >= 0 ? fixed_thr : (int)m + 1;
        if ((i64)m >= (i64)thr) break;          // one k: nothing under the threshold
        const int level = (int)m + 2;
        // phase B: the level's first round, the live edges with support below thr
        ++r;
        {
            const i64* A = abuf ? alive1 : alive0;
            u64* F = (r & 1) ? front1 : front0;
            for (i64 b = wbase; b < nA; b += nthreads) {
                const i64 i = b + lane;
                i64 e = -1;
                if (i < nA) {
                    e = ld_cg(&A[i]);
                    if (ld_cg(&sup[e]) < thr) {
                        gone[e] = r;
                        if (truss) truss[e] = level;
                    } else {
                        e = -1;
                    }
                }
                P.append_edges(F, e, -1);
            }
        }
        P.next_phase();
        u64 nF = P.last_count();
        ++levels;
        // rounds: the triangles of round r's edges leave their survivors
        while (nF) {
            ++rounds;
            const u64* F = (r & 1) ? front1 : front0;
            u64* N = (r & 1) ? front0 : front1;
            for (i64 it = gwarp; it < (i64)nF; it += nwarps) {     // (warp-uniform)
                const u64 item = ld_cg(&F[it]);
                const i64 e = (i64)(item >> TRUSS_CHUNK_SHIFT);
                const i64 k0 = (i64)(item & TRUSS_CHUNK_MASK) * span;
                const int x = esrc[e], y = edst[e];
                const i64 dx = deg[x], dy = deg[y];
                const bool x_short = dx <= dy;
                const int s = x_short ? x : y, l = x_short ? y : x;
                const i64 ds = x_short ? dx : dy, dl = x_short ? dy : dx;
                const i64 kend = k0 + span < ds ? k0 + span : ds;
                // (warp-uniform: kend is the item's; every step appends, maybe nothing)
                for (i64 kb = k0; kb < kend; kb += TRUSS_CHUNK) {
                    const i64 k = kb + lane;
                    i64 c1 = -1, c2 = -1;
                    if (k < kend) {
                        const int* S = (const int*)ptr[s];
                        const int* L = (const int*)ptr[l];
                        const int w = S[k];
                        const i64 q = lower_bound(L, dl, w);
                        if (q < dl && L[q] == w) {
                            const i64 es = ((const i64*)eptr[s])[k];     // {s, w}
                            const i64 el = ((const i64*)eptr[l])[q];     // {l, w}
                            const i64 e1 = x_short ? es : el;            // {x, w}
                            const i64 e2 = x_short ? el : es;            // {y, w}
                            if (e1 >= 0 && e2 >= 0) {
                                const int g1 = ld_cg(&gone[e1]), g2 = ld_cg(&gone[e2]);
                                const bool a1 = g1 > r, a2 = g2 > r;
                                // both alive: both lose it; one of this round's, one alive: the
                                // survivor loses it once, from the lower id of the two removed
                                const bool d1 = a1 && (a2 || (g2 == r && e < e2));
                                const bool d2 = a2 && (a1 || (g1 == r && e < e1));
                                if (d1 && P.lose(e1, thr, r, level)) c1 = e1;
                                if (d2 && P.lose(e2, thr, r, level)) c2 = e2;
                            }
                        }
                    }
                    P.append_edges(N, c1, c2);
                }
            }
            P.next_phase();
            nF = P.last_count();
            ++r;
        }
        if (fixed_thr >= 0) level_done = true;     // a last phase A counts the survivors
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ctl[K_ALIVE] = (u64)nA;
        ctl[K_ABUF] = (u64)abuf;
        ctl[K_ROUND] = (u64)r;
        ctl[K_STATUS] = (u64)status;
        ctl[K_LEVELS] += levels;
        ctl[K_ROUNDS] += rounds;
    }
}
