// Static truss decomposition of a small dense graph on bit rows (top_levels_gpu.py: the top
// truss levels of a Kronecker graph, a few thousand hub vertices with a neighbour among a
// large share of the others), and the count of a table's edges at those levels.
//
// Vertex x's row: W 64-bit words, bit y set while the edge {x, y} is alive. An edge's support
// is the popcount of the AND of its endpoints' rows (W words, no search, no table lookup).
// The peeling goes in synchronous rounds: a round counts every alive edge of its list at the
// current level k, the edges with fewer than k - 1 triangles get number k and the round's
// number and leave (their bits cleared after the round), the others form the next list.
// Counters ctr: [0] removed, [1] kept, [2] least support of a kept edge (zeroed, the last set
// to ~0, by the host before a round).
#include "segmented.cuh"     // i64, u64, GRID_STRIDE

extern "C" __global__ void td_set_bits(const int* __restrict__ ea, const int* __restrict__ eb,
                                       i64 m, u64* bits, int W) {
    GRID_STRIDE(i, m) {
        const int a = ea[i], b = eb[i];
        atomicOr(&bits[(i64)a * W + (b >> 6)], 1ull << (b & 63));
        atomicOr(&bits[(i64)b * W + (a >> 6)], 1ull << (a & 63));
    }
}

// A warp per 32 list edges, one edge at a time (its lanes AND the two rows), then one
// decision per lane: edge e = list[i] (i < n) with support s among the alive edges; s <
// k - 1: truss[e] = k, rounds[e] = round, e to removed (count ctr[0]); else e to keep (count
// ctr[1]) and s into the least kept support ctr[2]. The warp's appends and its least support
// take one atomic each.
extern "C" __global__ void td_round(const u64* __restrict__ bits, int W,
                                    const int* __restrict__ ea, const int* __restrict__ eb,
                                    const int* __restrict__ list, i64 n, int k, int round,
                                    int* truss, int* rounds, int* removed, int* keep,
                                    u64* ctr) {
    const unsigned lane = threadIdx.x & 31;
    const i64 warps = (i64)gridDim.x * (blockDim.x >> 5);
    for (i64 base = (((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5) * 32; base < n;
         base += warps * 32) {
        int mine = 0;
        const int cnt = n - base < 32 ? (int)(n - base) : 32;
        for (int j = 0; j < cnt; ++j) {
            const int e = list[base + j];
            const u64* ra = bits + (i64)ea[e] * W;
            const u64* rb = bits + (i64)eb[e] * W;
            int s = 0;
            for (int w = lane; w < W; w += 32) s += __popcll(ra[w] & rb[w]);
            for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
            if (lane == j) mine = s;
        }
        const bool valid = lane < cnt;
        const int e = valid ? list[base + lane] : 0;
        const bool gone = valid && mine < k - 1;
        const unsigned rem = __ballot_sync(0xffffffffu, gone);
        const unsigned kept = __ballot_sync(0xffffffffu, valid && !gone);
        const unsigned below = (1u << lane) - 1;
        unsigned long long rb = 0, kb = 0;
        unsigned least = valid && !gone ? (unsigned)mine : 0xffffffffu;
        for (int off = 16; off > 0; off >>= 1)
            least = min(least, __shfl_xor_sync(0xffffffffu, least, off));
        if (lane == 0) {
            if (rem) rb = atomicAdd(&ctr[0], (u64)__popc(rem));
            if (kept) {
                kb = atomicAdd(&ctr[1], (u64)__popc(kept));
                atomicMin(&ctr[2], (u64)least);
            }
        }
        rb = __shfl_sync(0xffffffffu, rb, 0);
        kb = __shfl_sync(0xffffffffu, kb, 0);
        if (gone) {
            truss[e] = k;
            rounds[e] = round;
            removed[rb + __popc(rem & below)] = e;
        } else if (valid) {
            keep[kb + __popc(kept & below)] = e;
        }
    }
}

// The bits of the round's removed edges removed[:ctr[0]] cleared.
extern "C" __global__ void td_clear(u64* bits, int W, const int* __restrict__ ea,
                                    const int* __restrict__ eb, const int* __restrict__ removed,
                                    const u64* ctr) {
    const i64 n = (i64)ctr[0];
    GRID_STRIDE(i, n) {
        const int e = removed[i];
        const int a = ea[e], b = eb[e];
        atomicAnd(&bits[(i64)a * W + (b >> 6)], ~(1ull << (b & 63)));
        atomicAnd(&bits[(i64)b * W + (a >> 6)], ~(1ull << (a & 63)));
    }
}

// The live table slots (keys[s] >= 0) with truss[s] >= cap, counted into *out (zeroed by the
// host): one atomic per warp.
extern "C" __global__ void td_count_top(const i64* __restrict__ keys,
                                        const int* __restrict__ truss, i64 n, int cap,
                                        u64* out) {
    unsigned c = 0;
    GRID_STRIDE(i, n) c += keys[i] >= 0 && truss[i] >= cap;
    for (int off = 16; off > 0; off >>= 1) c += __shfl_xor_sync(0xffffffffu, c, off);
    if ((threadIdx.x & 31) == 0 && c) atomicAdd(out, (u64)c);
}
