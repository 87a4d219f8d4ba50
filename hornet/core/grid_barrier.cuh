// A grid-wide barrier for kernels whose blocks are all resident (cooperative launches).
// bar[0] counts the blocks that arrived, bar[1] is the generation the waiting blocks watch,
// and bar[2] is set to 1 when a block waited more than GRID_SPIN_LIMIT clock cycles (the host
// reports it as an error instead of hanging). The three words start at zero.
#pragma once

#define GRID_SPIN_LIMIT (1LL << 32)

__device__ __forceinline__ void grid_barrier(unsigned* bar) {
    __syncthreads();
    if (threadIdx.x == 0) {
        volatile unsigned* gen = bar + 1;
        const unsigned g = *gen;
        __threadfence();
        if (atomicAdd(bar, 1u) == gridDim.x - 1) {
            atomicExch(bar, 0u);
            __threadfence();
            atomicAdd(bar + 1, 1u);
        } else {
            const long long t0 = clock64();
            while (*gen == g) {
                if (clock64() - t0 > GRID_SPIN_LIMIT) { atomicExch(bar + 2, 1u); break; }
            }
        }
        __threadfence();
    }
    __syncthreads();
}
