// CUDA kernels of hornet/algos/dynamic_spmv.py: y = A x kept current.
//
// Products and sums use __dmul_rn / __dadd_rn so that no multiply-add is fused: a row summed
// here in ascending neighbour order gives the bits of the CPU kernels (hornet.algos.spmv's
// pull loop), whatever the compiler's contraction setting.
#include "segmented.cuh"

#define DSP_FULL_MASK 0xffffffffu

// A weight as float64, exactly: float32 subnormals are rebuilt from their bits (a plain
// conversion flushes them to zero when the module is compiled with flush-to-zero).
template <typename W>
__device__ __forceinline__ double to_f64(W v) { return (double)v; }
template <>
__device__ __forceinline__ double to_f64<float>(float v) {
    const unsigned b = __float_as_uint(v);
    if ((b & 0x7f800000u) != 0u) return (double)v;           // normal, inf, nan
    const double r = __dmul_rn((double)(b & 0x7fffffu), 0x1p-149);   // (exact)
    return (b >> 31) ? -r : r;
}

// y[rows[i]] = sum over row rows[i] (list ptr[r], deg[r]; weights at wptr[i]) of w * x[col], in
// list order, one thread per row. The products of 8 entries are formed before they are added
// (independent loads in flight together); the additions keep the list order.
#define DSP_UNROLL 8
template <typename W, int WEIGHTED>
__device__ __forceinline__ double dsp_term(const int* col, const W* w, int j,
                                           const double* __restrict__ x) {
    const double xv = x[col[j]];
    return WEIGHTED ? __dmul_rn(to_f64<W>(w[j]), xv) : xv;
}

template <typename W, int WEIGHTED>
__global__ void dsp_resum(const int* __restrict__ rows, i64 n, const int* __restrict__ deg,
                          const i64* __restrict__ ptr, const i64* __restrict__ wptr,
                          const double* __restrict__ x, double* __restrict__ y) {
    GRID_STRIDE(i, n) {
        const int r = rows[i];
        const int d = deg[r];
        double acc = 0.0;
        if (d) {
            const int* col = (const int*)ptr[r];
            const W* w = WEIGHTED ? (const W*)wptr[i] : nullptr;
            int j = 0;
            for (; j + DSP_UNROLL <= d; j += DSP_UNROLL) {
                double p[DSP_UNROLL];
#pragma unroll
                for (int k = 0; k < DSP_UNROLL; ++k) p[k] = dsp_term<W, WEIGHTED>(col, w, j + k, x);
#pragma unroll
                for (int k = 0; k < DSP_UNROLL; ++k) acc = __dadd_rn(acc, p[k]);
            }
            for (; j < d; ++j) acc = __dadd_rn(acc, dsp_term<W, WEIGHTED>(col, w, j, x));
        }
        y[r] = acc;
    }
}

// The same sums, one warp per row: the lanes form the products of 32 consecutive entries at
// once (coalesced list reads, 32 gathers in flight, the next 32 requested before the current
// ones are added), and every lane adds them in list order from the shuffled values, so the
// result is the bits of dsp_resum (a hub's row costs its sequence of additions, not its
// memory latency).
template <typename W, int WEIGHTED>
__global__ void dsp_resum_warp(const int* __restrict__ rows, i64 n, const int* __restrict__ deg,
                               const i64* __restrict__ ptr, const i64* __restrict__ wptr,
                               const double* __restrict__ x, double* __restrict__ y) {
    const int lane = threadIdx.x & 31;
    const i64 nw = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 i = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < n; i += nw) {
        const int r = rows[i];
        const int d = deg[r];
        double acc = 0.0;
        if (d) {
            const int* col = (const int*)ptr[r];
            const W* w = WEIGHTED ? (const W*)wptr[i] : nullptr;
            double cur = lane < d ? dsp_term<W, WEIGHTED>(col, w, lane, x) : 0.0;
            for (int base = 0; base < d; base += 32) {
                const int nxt_j = base + 32 + lane;
                const double nxt = nxt_j < d ? dsp_term<W, WEIGHTED>(col, w, nxt_j, x) : 0.0;
                if (d - base >= 32) {
#pragma unroll
                    for (int k = 0; k < 32; ++k)
                        acc = __dadd_rn(acc, __shfl_sync(DSP_FULL_MASK, cur, k));
                } else {
                    const int cnt = d - base;
                    for (int k = 0; k < cnt; ++k)
                        acc = __dadd_rn(acc, __shfl_sync(DSP_FULL_MASK, cur, k));
                }
                cur = nxt;
            }
        }
        if (lane == 0) y[r] = acc;
    }
}

// Delta of a change's entries, one thread per entry (src[i], dst[i]): the entry of A is
// (r, c) = (src, dst), or (dst, src) for A^T; undirected (both) also (c, r). Each adds
// sign * (w_new * x[c] - w_old * x[c]) to y[r] (w_old: the previous weights of an update,
// null otherwise; unweighted: w_new = 1).
template <typename W, int WEIGHTED>
__global__ void dsp_delta_change(const int* __restrict__ src, const int* __restrict__ dst,
                                 i64 n, const W* __restrict__ w_new,
                                 const W* __restrict__ w_old, double sign, int both,
                                 int transpose, const double* __restrict__ x,
                                 double* __restrict__ y) {
    GRID_STRIDE(i, n) {
        const int r = transpose ? dst[i] : src[i];
        const int c = transpose ? src[i] : dst[i];
        for (int side = 0; side <= both; ++side) {
            const int rr = side ? c : r, cc = side ? r : c;
            const double xc = x[cc];
            double d = WEIGHTED ? __dmul_rn(to_f64<W>(w_new[i]), xc) : xc;
            if (WEIGHTED && w_old) d = __dsub_rn(d, __dmul_rn(to_f64<W>(w_old[i]), xc));
            atomicAdd(&y[rr], sign * d);
        }
    }
}

// For changed x[j] (j = idx[k]): the entries of list j (the rows r that read x[j]) get
// y[r] += w * x_new - w * x_old. Items: the entries of
// the lists, off (n + 1): exclusive scan of their lengths.
template <typename W, int WEIGHTED>
__global__ void dsp_delta_x(const int* __restrict__ idx, i64 n, const i64* __restrict__ off,
                            const int* __restrict__ deg, const i64* __restrict__ ptr,
                            const i64* __restrict__ wptr, const double* __restrict__ x_new,
                            const double* __restrict__ x_old, double* __restrict__ y) {
    const i64 total = off[n];
    GRID_STRIDE(t, total) {
        const i64 k = segment_between(off, 0, n - 1, t);
        const i64 p = t - off[k];
        const int j = idx[k];
        const int r = ((const int*)ptr[j])[p];
        double a = x_new[k], b = x_old[k];
        if (WEIGHTED) {
            const double w = to_f64<W>(((const W*)wptr[k])[p]);
            a = __dmul_rn(w, a);
            b = __dmul_rn(w, b);
        }
        atomicAdd(&y[r], __dsub_rn(a, b));
    }
}

// out[off[k] + p] = entry p of list idx[k] (the lists' concatenation).
extern "C" __global__ void dsp_gather(const int* __restrict__ idx, i64 n,
                                      const i64* __restrict__ off, const i64* __restrict__ ptr,
                                      int* __restrict__ out) {
    const i64 total = off[n];
    GRID_STRIDE(t, total) {
        const i64 k = segment_between(off, 0, n - 1, t);
        out[t] = ((const int*)ptr[idx[k]])[t - off[k]];
    }
}
