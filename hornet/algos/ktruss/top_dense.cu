// Static truss decomposition of a small dense graph on bit rows (top_levels_gpu.py: the top
// truss levels of a Kronecker graph, a few thousand hub vertices with a neighbour among a
// large share of the others).
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

// One warp per edge e = list[i] (i < n): its support s among the alive edges; s < k - 1:
// truss[e] = k, rounds[e] = round, e to removed (count ctr[0]); else e to keep (count ctr[1])
// and s into the least kept support ctr[2].
extern "C" __global__ void td_round(const u64* __restrict__ bits, int W,
                                    const int* __restrict__ ea, const int* __restrict__ eb,
                                    const int* __restrict__ list, i64 n, int k, int round,
                                    int* truss, int* rounds, int* removed, int* keep,
                                    u64* ctr) {
    const unsigned lane = threadIdx.x & 31;
    const i64 warps = (i64)gridDim.x * (blockDim.x >> 5);
    for (i64 i = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < n; i += warps) {
        const int e = list[i];
        const u64* ra = bits + (i64)ea[e] * W;
        const u64* rb = bits + (i64)eb[e] * W;
        int s = 0;
        for (int w = lane; w < W; w += 32) s += __popcll(ra[w] & rb[w]);
        for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
        if (lane == 0) {
            if (s < k - 1) {
                truss[e] = k;
                rounds[e] = round;
                removed[atomicAdd(&ctr[0], 1ull)] = e;
            } else {
                keep[atomicAdd(&ctr[1], 1ull)] = e;
                atomicMin(&ctr[2], (u64)s);
            }
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
