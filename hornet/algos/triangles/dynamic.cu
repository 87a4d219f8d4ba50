// CUDA kernels of hornet/algos/triangles/dynamic.py: the triangles a batch of undirected edges
// makes (insertion, on G_now) or destroys (deletion, on G_before = G_now + D), weighted by
// inclusion-exclusion (Makkar, Bader, Green 2017): a triangle found on a batch edge whose other
// two edges hold m more batch edges adds 6 / (m + 1); each triangle's finds add up to 6.
//
// Work items: one per (batch edge, element of the shorter of its endpoints' lists), the lists
// being G_now's (plus the batch's own lists when deleting); each item binary-searches its
// element in the longer side's lists. Item -> edge by binary search in the scan of the work;
// the number of items is read on the device (no host round trip).
#include "segmented.cuh"
#include "../algos/batch_adjacency.cuh"
#include "../algos/edge_table.cuh"

// Batch edge i: the endpoint with the shorter list first (x), its batch-list range, and the
// work (x's list length, batch list included when deleting), which it returns.
__device__ __forceinline__ i64 dtc_prepare_edge(i64 i, const int* __restrict__ deg,
                                                const int* __restrict__ bsrc,
                                                const int* __restrict__ bdst, i64 nb,
                                                const i64* __restrict__ bkeys, int deleting,
                                                int* __restrict__ ex, int* __restrict__ ey,
                                                i64* __restrict__ xr, i64* __restrict__ yr) {
    const int u = bsrc[i], v = bdst[i];
    i64 ulo = 0, uhi = 0, vlo = 0, vhi = 0;
    if (deleting) {
        ba_vertex_range(bkeys, 2 * nb, u, &ulo, &uhi);
        ba_vertex_range(bkeys, 2 * nb, v, &vlo, &vhi);
    }
    const i64 lu = (i64)deg[u] + (uhi - ulo), lv = (i64)deg[v] + (vhi - vlo);
    const bool ushort = lu <= lv;
    ex[i] = ushort ? u : v;
    ey[i] = ushort ? v : u;
    xr[2 * i] = ushort ? ulo : vlo;
    xr[2 * i + 1] = ushort ? uhi : vhi;
    yr[2 * i] = ushort ? vlo : ulo;
    yr[2 * i + 1] = ushort ? vhi : uhi;
    return ushort ? lu : lv;
}

// Per batch edge: dtc_prepare_edge, its work in work[i].
extern "C" __global__ void dtc_prepare(const int* __restrict__ deg, const int* __restrict__ bsrc,
                                       const int* __restrict__ bdst, i64 nb,
                                       const i64* __restrict__ bkeys, int deleting,
                                       int* __restrict__ ex, int* __restrict__ ey,
                                       i64* __restrict__ xr, i64* __restrict__ yr,
                                       i64* __restrict__ work) {
    GRID_STRIDE(i, nb) {
        work[i] = dtc_prepare_edge(i, deg, bsrc, bdst, nb, bkeys, deleting, ex, ey, xr, yr);
    }
}

// dtc_prepare for a batch of at most PREPARE_BLOCK edges, by one block of PREPARE_BLOCK
// threads, with the scan of the work: wpre[0] = 0, wpre[i + 1] = work of edges 0..i.
#define PREPARE_BLOCK 1024
extern "C" __global__ void dtc_prepare_scan(const int* __restrict__ deg,
                                            const int* __restrict__ bsrc,
                                            const int* __restrict__ bdst, i64 nb,
                                            const i64* __restrict__ bkeys, int deleting,
                                            int* __restrict__ ex, int* __restrict__ ey,
                                            i64* __restrict__ xr, i64* __restrict__ yr,
                                            i64* __restrict__ wpre) {
    __shared__ i64 acc[PREPARE_BLOCK];
    const int i = threadIdx.x;
    const i64 work = i < nb ? dtc_prepare_edge(i, deg, bsrc, bdst, nb, bkeys, deleting, ex, ey,
                                               xr, yr) : 0;
    acc[i] = work;
    __syncthreads();
    for (int d = 1; d < PREPARE_BLOCK; d <<= 1) {       // inclusive scan (Hillis-Steele)
        const i64 add = i >= d ? acc[i - d] : 0;
        __syncthreads();
        acc[i] += add;
        __syncthreads();
    }
    if (i < nb) wpre[i + 1] = acc[i];
    if (i == 0) wpre[0] = 0;
}

// sign: +1 insertion, -1 deletion. count6: signed total in units of 1/6 (two's complement in
// an unsigned 64-bit word). pv6: per vertex, units of 1/6. Edge table (tkeys, tshift, tval)
// when track: per edge, units of 1/6; edges of the batch are skipped when deleting (they
// leave the table).
extern "C" __global__ void dtc_count(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                     const int* __restrict__ ex, const int* __restrict__ ey,
                                     const i64* __restrict__ xr, const i64* __restrict__ yr,
                                     const i64* __restrict__ wpre, i64 nb,
                                     const i64* __restrict__ bkeys, int deleting, i64 sign,
                                     unsigned long long* count6, long long* pv6,
                                     const i64* __restrict__ tkeys, int tshift, long long* tval,
                                     int track) {
    const i64 total = wpre[nb];
    const i64 nk = 2 * nb;
    long long local = 0;
    GRID_STRIDE(t, total) {
        const i64 e = segment_between(wpre, 0, nb - 1, t);
        const i64 p = t - wpre[e];
        const int x = ex[e], y = ey[e];
        const i64 dx = deg[x];
        const int w = p < dx ? ((const int*)ptr[x])[p]
                             : (int)(bkeys[xr[2 * e] + (p - dx)] & 0xffffffffLL);
        bool found = in_sorted((const int*)ptr[y], (i64)deg[y], w);
        if (!found && deleting) found = in_batch_list(bkeys, yr[2 * e], yr[2 * e + 1], y, w);
        if (!found) continue;
        const bool xw = ba_has_pair(bkeys, nk, x, w);
        const bool yw = ba_has_pair(bkeys, nk, y, w);
        const long long wt = 6 / (1 + (int)xw + (int)yw);
        const long long d = sign * wt;
        local += d;
        atomicAdd((unsigned long long*)&pv6[x], (unsigned long long)d);
        atomicAdd((unsigned long long*)&pv6[y], (unsigned long long)d);
        atomicAdd((unsigned long long*)&pv6[w], (unsigned long long)d);
        if (track) {
            if (!deleting) {
                const i64 s = et_find(tkeys, tshift, et_key(x, y));
                atomicAdd((unsigned long long*)&tval[s], (unsigned long long)d);
            }
            if (!(deleting && xw)) {
                const i64 s = et_find(tkeys, tshift, et_key(x, w));
                atomicAdd((unsigned long long*)&tval[s], (unsigned long long)d);
            }
            if (!(deleting && yw)) {
                const i64 s = et_find(tkeys, tshift, et_key(y, w));
                atomicAdd((unsigned long long*)&tval[s], (unsigned long long)d);
            }
        }
    }
    // warp-aggregated total
    for (int o = 16; o > 0; o >>= 1) local += __shfl_down_sync(0xffffffffu, local, o);
    if ((threadIdx.x & 31) == 0 && local) atomicAdd(count6, (unsigned long long)local);
}
