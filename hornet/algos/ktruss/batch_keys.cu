// The batch adjacency's keys of a small batch on the GPU, for GpuDynamicTruss
// (hornet/algos/ktruss/dynamic_gpu.py): what hornet.algos.batch_adjacency builds with a sort.
#include "segmented.cuh"     // i64

// The mirrored, sorted keys (x << 32 | y, both directions) of a batch of at most
// SMALL_BATCH distinct undirected pairs, by one block (what batch_adjacency builds with a
// sort): every key's place is the number of smaller keys. keys: 2 nb int64.
#define SMALL_BATCH 1024
extern "C" __global__ void tb_batch_keys(const int* __restrict__ src,
                                         const int* __restrict__ dst, i64 nb, i64* keys) {
    __shared__ i64 k[2 * SMALL_BATCH];
    const int n = (int)(2 * nb);
    for (int i = threadIdx.x; i < (int)nb; i += blockDim.x) {
        const i64 u = (i64)src[i], v = (i64)dst[i];
        k[2 * i] = (u << 32) | v;
        k[2 * i + 1] = (v << 32) | u;
    }
    __syncthreads();
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        const i64 q = k[j];
        int place = 0;
        for (int l = 0; l < n; ++l) place += k[l] < q;
        keys[place] = q;
    }
}
