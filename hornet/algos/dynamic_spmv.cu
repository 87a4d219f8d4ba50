// CUDA kernels of hornet/algos/dynamic_spmv.py: y = A x kept current.
//
// Products and sums use __dmul_rn / __dadd_rn so that no multiply-add is fused: a row summed
// here in ascending neighbour order gives the bits of the CPU kernels (hornet.algos.spmv's
// pull loop), whatever the compiler's contraction setting.
#include "segmented.cuh"

// y[rows[i]] = sum over row rows[i] (list ptr[r], deg[r]; weights at wptr[i]) of w * x[col], in
// list order, one thread per row.
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
            if (WEIGHTED) {
                const W* w = (const W*)wptr[i];
                for (int j = 0; j < d; ++j) acc = __dadd_rn(acc, __dmul_rn((double)w[j], x[col[j]]));
            } else {
                for (int j = 0; j < d; ++j) acc = __dadd_rn(acc, x[col[j]]);
            }
        }
        y[r] = acc;
    }
}

// Delta of a batch of entries: y[row[i]] += sign * (w_new[i] * x[col[i]] - w_old[i] * x[col[i]])
// (w_old: previous weights of an update, else none; weights as float64, or 1 when absent).
extern "C" __global__ void dsp_delta_entries(const int* __restrict__ row,
                                             const int* __restrict__ col, i64 n,
                                             const double* __restrict__ w_new,
                                             const double* __restrict__ w_old, double sign,
                                             const double* __restrict__ x,
                                             double* __restrict__ y) {
    GRID_STRIDE(i, n) {
        const double xc = x[col[i]];
        double d = w_new ? __dmul_rn(w_new[i], xc) : xc;
        if (w_old) d = __dsub_rn(d, __dmul_rn(w_old[i], xc));
        atomicAdd(&y[row[i]], sign * d);
    }
}

// For changed x[j] (j = idx[k], dx[k] = its new value minus... as two products): the entries of
// list j (the rows r that read x[j]) get y[r] += w * x_new - w * x_old. Items: the entries of
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
            const double w = (double)((const W*)wptr[k])[p];
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
