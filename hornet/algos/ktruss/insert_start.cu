// CUDA kernels of the GPU DynamicTruss's insertion start (hornet/algos/ktruss/dynamic_gpu.py,
// GpuDynamicTruss._insert_from_bounds): every inserted edge starts the k-order scan at a lower
// bound of its new number instead of level 2, and the old edges whose count of later
// triangles may have grown through it are seeds at their own levels (the CPU version:
// DynamicTruss._place_new_edges, region.insertion_supports, dense.boundary_partners).
//
// Per-edge state as in dynamic_gpu.cu: the EdgeTable's keys (edge_table.cuh), truss (int32)
// and rank (int64) by slot; slot-indexed int32 stamp arrays ("marked now": arr[s] == stamp).
// An edge's triangles come from one block: its threads take the elements of the shorter
// endpoint list and binary-search them in the longer one.
#include "segmented.cuh"     // i64, u64, GRID_STRIDE, lower_bound
#include "../algos/edge_table.cuh"

#define IS_BINS 1024         // lower-bound histogram bins (levels at or above 1023 share one)
#define C_EXTRA 3            // ctr word: the seeds listed (is_place, is_partners)
#define C_PLACED 4           // ctr word: new edges placed above level 2 (is_place)

// f(s1, s2) for the other two edges (slots) of every triangle u-v-w in the current graph
// (w neither u nor v), spread over the threads of the calling block (every thread calls it
// with the same u, v).
template <typename F>
__device__ __forceinline__ void block_triangles(const int* __restrict__ deg,
                                                const i64* __restrict__ ptr,
                                                const i64* __restrict__ tkeys, int tshift,
                                                int u, int v, F&& f) {
    const i64 du = deg[u], dv = deg[v];
    const bool ushort = du <= dv;
    const int* S = (const int*)ptr[ushort ? u : v];
    const int* L = (const int*)ptr[ushort ? v : u];
    const i64 ds = ushort ? du : dv, dl = ushort ? dv : du;
    for (i64 j = threadIdx.x; j < ds; j += blockDim.x) {
        const int w = S[j];
        if (w == u || w == v || !in_sorted(L, dl, w)) continue;     // (self-loops: no triangle)
        const i64 s1 = et_find(tkeys, tshift, et_key(u, w));
        const i64 s2 = et_find(tkeys, tshift, et_key(v, w));
        if (s1 >= 0 && s2 >= 0) f(s1, s2);
    }
}

// A block per inserted edge i (slots[i], in the graph and the table): low[i] = the h-index of
// min(truss) over its triangles whose two other edges are old: the largest k with at least
// k - 2 such triangles at k or above, 2 at least (capped at IS_BINS - 1). A lower bound of the
// new number: the old k-truss plus the inserted edges whose bound is k or more is a subgraph
// of the new graph where every edge has k - 2 triangles. truss holds the numbers before the
// batch; an inserted edge's entry is still 0 (EdgeTable.insert_new: a key takes a slot never
// used before, whose columns are 0; an old edge other than a self-loop, never in a
// triangle, is at 2 or above), which tells the batch's edges apart without marks.
extern "C" __global__ void is_lower_bound(const int* __restrict__ deg,
                                          const i64* __restrict__ ptr,
                                          const i64* __restrict__ tkeys, int tshift,
                                          const int* __restrict__ truss,
                                          const i64* __restrict__ slots, i64 b, int* low) {
    __shared__ int hist[IS_BINS];
    __shared__ int top;                  // the highest bin used (the scan below starts there)
    for (i64 i = blockIdx.x; i < b; i += gridDim.x) {
        for (int j = threadIdx.x; j < IS_BINS; j += blockDim.x) hist[j] = 0;
        if (threadIdx.x == 0) top = 2;
        __syncthreads();
        const i64 key = tkeys[slots[i]];
        const int u = (int)(key >> 32), v = (int)(key & 0xffffffffLL);
        block_triangles(deg, ptr, tkeys, tshift, u, v, [&](i64 s1, i64 s2) {
            const int t1 = truss[s1], t2 = truss[s2];
            if (t1 == 0 || t2 == 0) return;              // (an edge of the batch)
            const int m = t1 < t2 ? t1 : t2;
            const int bin = m < IS_BINS - 1 ? m : IS_BINS - 1;
            atomicAdd(&hist[bin], 1);
            if (bin > top) atomicMax(&top, bin);
        });
        __syncthreads();
        if (threadIdx.x == 0) {
            int k = top, acc = 0;             // (the bins above top are empty)
            for (; k > 2; --k) {
                acc += hist[k];
                if (acc >= k - 2) break;
            }
            low[i] = k;
        }
        __syncthreads();
    }
}

// The inserted edges slots[:b] take their bounds low (truss) and the first ranks of those
// levels (head - b + 1 .. head: ranks are compared only within a level); each is listed once
// in extra (claim == cstamp, count ctr[C_EXTRA]); ctr[C_PLACED] counts those above level 2.
extern "C" __global__ void is_place(const i64* slots, i64 b, const int* low, int* truss,
                                    i64* rank, i64 head, int* claim, int cstamp, int* extra,
                                    u64* ctr) {
    GRID_STRIDE(i, b) {
        const i64 s = slots[i];
        truss[s] = low[i];
        rank[s] = head - b + 1 + i;
        claim[s] = cstamp;
        extra[atomicAdd(&ctr[C_EXTRA], 1ull)] = (int)s;
        if (low[i] > 2) atomicAdd(&ctr[C_PLACED], 1ull);
    }
}

// A block per inserted edge i placed above level 2 (top = low[i] > 2; truss already holds
// every new edge's place): in each of its triangles, an other edge x below top whose partner
// (the third edge) is at x's level or above may now have one more triangle whose other edges
// come after it; x is listed once in extra (claim == cstamp, count ctr[C_EXTRA]), a seed of
// the scan at its level. Edges at top or above keep their counts (the new edge is first in
// its level, before them).
extern "C" __global__ void is_partners(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                       const i64* __restrict__ tkeys, int tshift,
                                       const int* __restrict__ truss,
                                       const i64* __restrict__ slots, i64 b,
                                       const int* __restrict__ low, int* claim, int cstamp,
                                       int* extra, u64* ctr) {
    for (i64 i = blockIdx.x; i < b; i += gridDim.x) {
        const int top = low[i];
        if (top <= 2) continue;                    // (uniform in the block)
        const i64 key = tkeys[slots[i]];
        const int u = (int)(key >> 32), v = (int)(key & 0xffffffffLL);
        block_triangles(deg, ptr, tkeys, tshift, u, v, [&](i64 s1, i64 s2) {
            const int t1 = truss[s1], t2 = truss[s2];
            if (t1 < top && t2 >= t1 && atomicExch(&claim[s1], cstamp) != cstamp)
                extra[atomicAdd(&ctr[C_EXTRA], 1ull)] = (int)s1;
            if (t2 < top && t1 >= t2 && atomicExch(&claim[s2], cstamp) != cstamp)
                extra[atomicAdd(&ctr[C_EXTRA], 1ull)] = (int)s2;
        });
    }
}
