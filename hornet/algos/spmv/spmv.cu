// CUDA kernels of the GPU SpMV (hornet/algos/spmv/gpu.py).
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

// Merge-path SpMV (Merrill & Garland, SC 2016): the merge of the row ends (off[1..n]) with
// the entry indices 0..nnz-1 is cut into equal pieces of SPMV_IPT items per thread, so every
// thread does the same work however the entries fall into rows (hubs and empty rows alike).
// A row entirely inside one thread's piece is stored; pieces of split rows are added
// atomically (y must be zeroed first). Transpose (PUSH): y[dst] += w x[src] atomically.

// The kernels visit rows 0..nrows-1 of ptr/wptr/off. Pull: y[r] is the sum of visited row r
// (the caller maps visited rows to vertices). PUSH: row r is vertex vid[r] (x is read there),
// or vertex r when vid == nullptr. (A dynamic graph's rows are visited in the order its lists
// lie in memory, a CSR's in id order: see _visit_rows in spmv/gpu.py.)
__device__ __forceinline__ i64 vertex_of(const int* __restrict__ vid, i64 r) {
    return vid ? (i64)vid[r] : r;
}

#define SPMV_BLOCK 256
#ifndef SPMV_IPT
#define SPMV_IPT 8
#endif
#define SPMV_TILE (SPMV_BLOCK * SPMV_IPT)

// Rows consumed before merge-path diagonal d (searching rows in [lo, hi]).
__device__ __forceinline__ i64 merge_path_search(const i64* __restrict__ off, i64 lo, i64 hi,
                                                 i64 nnz, i64 d) {
    i64 a = d - nnz > lo ? d - nnz : lo;
    i64 b = d < hi ? d : hi;
    while (a < b) {
        const i64 mid = (a + b) >> 1;
        if (off[mid + 1] <= d - mid - 1) a = mid + 1; else b = mid;
    }
    return a;
}

extern "C" __global__ void merge_path_tiles(const i64* __restrict__ off, i64 nrows, i64 nnz,
                                            i64 ntiles, i64* __restrict__ out) {
    const i64 total = nrows + nnz;
    GRID_STRIDE(k, ntiles + 1) {
        const i64 d = k * (i64)SPMV_TILE < total ? k * (i64)SPMV_TILE : total;
        out[k] = merge_path_search(off, 0, nrows, nnz, d);
    }
}

template <typename W, int WEIGHTED, int PUSH>
__global__ void spmv_merge(const i64* __restrict__ ptr, const i64* __restrict__ wptr,
                           const i64* __restrict__ off, const i64* __restrict__ tile_rows,
                           i64 nrows, i64 nnz, i64 ntiles, const double* __restrict__ x,
                           double* __restrict__ y, const int* __restrict__ vid) {
    __shared__ i64 s_off[SPMV_TILE + 2];
    const i64 total = nrows + nnz;
    for (i64 k = blockIdx.x; k < ntiles; k += gridDim.x) {
        const i64 d0 = k * (i64)SPMV_TILE;
        const i64 d1 = d0 + SPMV_TILE < total ? d0 + SPMV_TILE : total;
        const i64 r0 = tile_rows[k], r1 = tile_rows[k + 1];
        const i64 last = r1 + 1 < nrows ? r1 + 1 : nrows;       // off[r0 .. last] staged
        for (i64 q = threadIdx.x; q <= last - r0; q += blockDim.x) s_off[q] = off[r0 + q];
        __syncthreads();
        const i64 d = d0 + (i64)threadIdx.x * SPMV_IPT;
        if (d < d1) {
            const i64 dend = d + SPMV_IPT < d1 ? d + SPMV_IPT : d1;
            i64 a = d - nnz > r0 ? d - nnz : r0;
            i64 b = d < r1 ? d : r1;
            while (a < b) {
                const i64 mid = (a + b) >> 1;
                if (s_off[mid + 1 - r0] <= d - mid - 1) a = mid + 1; else b = mid;
            }
            i64 i = a, j = d - a;
            i64 rs = 0, re = 0;
            const int* row = nullptr;
            const W* wr = nullptr;
            double xi = 0.0;
            bool split = false;           // row i began in an earlier piece
            if (i < nrows) {
                rs = s_off[i - r0];
                re = s_off[i + 1 - r0];
                row = (const int*)ptr[i];
                if (WEIGHTED) wr = (const W*)wptr[i];
                if (PUSH) xi = x[vertex_of(vid, i)];
                split = j > rs;
            }
            double acc = 0.0;
            bool dirty = false;
            for (i64 q = d; q < dend; ++q) {
                if (j < re) {
                    const i64 p = j - rs;
                    const int c = row[p];
                    if (PUSH) {
                        if (xi != 0.0) {
                            double v = xi;
                            if (WEIGHTED) v = (double)wr[p] * xi;
                            atomicAdd(&y[c], v);
                        }
                    } else {
                        double v = x[c];
                        if (WEIGHTED) v = (double)wr[p] * v;
                        acc += v;
                        dirty = true;
                    }
                    ++j;
                } else {
                    if (!PUSH) {
                        if (split) atomicAdd(&y[i], acc); else y[i] = acc;
                    }
                    split = false;
                    acc = 0.0;
                    dirty = false;
                    ++i;
                    if (i < nrows) {
                        rs = re;
                        re = s_off[i + 1 - r0];
                        row = (const int*)ptr[i];
                        if (WEIGHTED) wr = (const W*)wptr[i];
                        if (PUSH) xi = x[vertex_of(vid, i)];
                    }
                }
            }
            if (!PUSH && dirty) atomicAdd(&y[i], acc);
        }
        __syncthreads();
    }
}

// Warp-segmented SpMV: every warp takes ranges of `range` consecutive entries (chosen per
// graph: enough ranges to fill the device) and walks them 32 at a time, one entry per lane
// (coalesced index/weight loads, 32 independent gathers). A lane finds its row among the next
// 32 row ends (off[r + 1 .. r + 32] relative to the group's first entry, one coalesced load,
// binary search by 32-bit shuffles; a run of empty rows is jumped by a binary search over
// off), the products are summed per row by a segmented warp scan (segment heads by one
// ballot), and the lane ending a row stores it (atomically only for rows that began in an
// earlier range or continue past this one; the warp carries a row continuing into its next
// group). LONG: the groups lying wholly inside one row (the long lists) skip the search and
// the scan: a tight loop over them, each lane adding its products to its own partial sum,
// folded into the row's sum by one warp reduction when the row or the range ends. y must be
// zeroed first (empty rows). x is read in its own type X (float or double) and converted: the
// sums are float64 either way.
// PUSH: y[dst] += w x[src] atomically instead.

#define NO_ROW ((i64)-1)

// The row of entry c + lane (for the lanes with `valid`; NO_ROW for the others) among the rows
// from `base` on, where every valid lane's entry lies at or after off[base]; `base` is moved
// past runs of rows that end before the first valid entry still without a row.
// Warp-collective: every lane calls it.
__device__ __forceinline__ i64 warp_row_of(const i64* __restrict__ off, i64& base, i64 c,
                                           bool valid, i64 nrows, int lane) {
    i64 row = NO_ROW;
    while (true) {
        const i64 idx = base + 1 + lane;
        // the end of row base + lane, relative to c, clamped to [0, 32] (every row from base
        // on ends after entry c - 1)
        const i64 e = idx <= nrows ? off[idx] - c : 32;
        const int rel = e < 0 ? 0 : (e > 32 ? 32 : (int)e);
        int cnt = 0;                                   // #{j : rel_j <= lane}
        for (int s = 16; s > 0; s >>= 1) {
            if (__shfl_sync(FULL_MASK, rel, cnt + s - 1) <= lane) cnt += s;
        }
        // (every lane shuffles: a shuffle inside the condition would run in some lanes only)
        const int rel31 = __shfl_sync(FULL_MASK, rel, 31);
        if (cnt == 31 && rel31 <= lane) cnt = 32;
        if (valid && row == NO_ROW && cnt < 32) row = base + cnt;
        const unsigned open = __ballot_sync(FULL_MASK, valid && row == NO_ROW);
        if (!open) break;
        // rows base .. base + 31 all end before the first open entry: jump to its row
        const i64 t_open = c + (__ffs(open) - 1);
        base = segment_between(off, base + 32, nrows - 1, t_open);
    }
    return row;
}

// Sum of v over the warp, in every lane (the same order in every lane).
__device__ __forceinline__ double warp_allsum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}

// LONG: 0, or the unrolling of the long-row loop (see above).
template <typename W, typename X, int WEIGHTED, int PUSH, int LONG>
__global__ void spmv_warp(const i64* __restrict__ ptr, const i64* __restrict__ wptr,
                          const i64* __restrict__ off, const i64* __restrict__ range_rows,
                          i64 nrows, i64 nnz, i64 nranges, i64 range, const X* __restrict__ x,
                          double* __restrict__ y, const int* __restrict__ vid) {
    const int lane = threadIdx.x & 31;
    const i64 nw = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 rg = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; rg < nranges; rg += nw) {
        const i64 start = rg * range;
        const i64 end = start + range < nnz ? start + range : nnz;
        i64 base = range_rows[rg];       // the row of entry c - 1 (of entry start at first)
        i64 carry_row = NO_ROW;          // row continued from the previous group
        double carry = 0.0;
        i64 long_row = NO_ROW;           // LONG: the row of the lanes' partial sums
        double part = 0.0;
        for (i64 c = start; c < end;) {
            if (LONG && !PUSH) {
                const i64 row_end = off[base + 1];
                const i64 stop = row_end < end ? row_end : end;
                if (c + 32 <= stop) {
                    // entries c .. stop - 1 lie in row `base`: its whole groups of 32, LONG of
                    // them unrolled (their loads in flight together)
                    const i64 row_start = off[base];
                    const int* __restrict__ cols = (const int*)ptr[base];
                    const W* __restrict__ ws = WEIGHTED ? (const W*)wptr[base] : nullptr;
#pragma unroll (LONG > 0 ? LONG : 1)
                    for (; c + 32 <= stop; c += 32) {
                        const i64 p = c + lane - row_start;
                        // (the lists are read once: streaming loads (evict-first), so x
                        // stays in L2)
                        double v = (double)x[__ldcs(cols + p)];
                        if (WEIGHTED) v = (double)__ldcs(ws + p) * v;
                        part += v;
                    }
                    long_row = base;
                    continue;
                }
                if (long_row != NO_ROW) {
                    // the lanes' partial sums of long_row join its carried sum; a row that
                    // ended with the last group is stored
                    const double sum = (carry_row == long_row ? carry : 0.0) + warp_allsum(part);
                    if (row_end <= c) {
                        if (lane == 0) {
                            if (off[long_row] >= start) y[long_row] = sum;
                            else atomicAdd(&y[long_row], sum);
                        }
                        carry_row = NO_ROW;
                        carry = 0.0;
                    } else {
                        carry_row = long_row;
                        carry = sum;
                    }
                    long_row = NO_ROW;
                    part = 0.0;
                }
            }
            const i64 t = c + lane;
            const bool valid = t < end;
            const i64 base0 = base;
            const i64 row = warp_row_of(off, base, c, valid, nrows, lane);
            // ---- the entry's product
            double v = 0.0;
            if (valid) {
                const i64 p = t - off[row];
                const int col = __ldcs((const int*)ptr[row] + p);
                if (PUSH) {
                    const double xr = (double)x[vertex_of(vid, row)];
                    if (xr != 0.0) {
                        double a = xr;
                        if (WEIGHTED) a = (double)__ldcs((const W*)wptr[row] + p) * xr;
                        atomicAdd(&y[col], a);
                    }
                } else {
                    v = (double)x[col];
                    if (WEIGHTED) v = (double)__ldcs((const W*)wptr[row] + p) * v;
                }
            }
            const i64 last_row = __shfl_sync(FULL_MASK, row, 31);
            if (PUSH) {
                if (last_row != NO_ROW) base = last_row;
                c += 32;
                continue;
            }
            // ---- segmented inclusive scan by row (rows ascend across lanes; the valid lanes
            // are a prefix of the warp)
            const int key = valid ? (int)(row - base0) : -1;   // (rows >= base0)
            const int kprev = __shfl_up_sync(FULL_MASK, key, 1);
            const unsigned heads = __ballot_sync(FULL_MASK,
                                                 valid && (lane == 0 || kprev != key));
            const int first = 31 - __clz(heads & (0xffffffffu >> (31 - lane)));  // my head
            for (int d = 1; d < 32; d <<= 1) {
                const double u = __shfl_up_sync(FULL_MASK, v, d);
                if (lane - d >= first) v += u;
            }
            const bool seg_end = valid && (lane == 31 || t + 1 >= end
                                           || ((heads >> (lane + 1)) & 1u));
            double new_carry = 0.0;
            i64 new_carry_row = NO_ROW;
            if (seg_end) {
                if (row == carry_row) v += carry;
                if (t + 1 < off[row + 1]) {          // the row goes on after this entry
                    if (t + 1 < end) {               // ... in this range: carry it (lane 31)
                        new_carry = v;
                        new_carry_row = row;
                    } else {                          // ... in the next range
                        atomicAdd(&y[row], v);
                    }
                } else if (off[row] >= start) {      // whole row in this range
                    y[row] = v;
                } else {                              // began in an earlier range
                    atomicAdd(&y[row], v);
                }
            }
            carry = __shfl_sync(FULL_MASK, new_carry, 31);
            carry_row = __shfl_sync(FULL_MASK, new_carry_row, 31);
            if (last_row != NO_ROW) base = last_row;
            c += 32;
        }
        if (LONG && !PUSH && long_row != NO_ROW) {
            // the range ended inside whole groups of long_row
            const double sum = (carry_row == long_row ? carry : 0.0) + warp_allsum(part);
            if (lane == 0) {
                if (off[long_row + 1] <= end && off[long_row] >= start) y[long_row] = sum;
                else atomicAdd(&y[long_row], sum);
            }
        }
    }
}

// The rows of a view visited in storage order: vertex v with rank[v] >= 0 (its block's rank
// among all blocks in storage order, Graph.storage_ranks) becomes visited row rank[v]; the
// other rows (free blocks) stay empty (deg_rows 0, vid_rows 0: zero-filled by the caller).
// slot[v]: the visited row of v, or nrows (the zero sum past the last row) without edges.
extern "C" __global__ void rows_by_rank(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                        const i64* __restrict__ rank, i64 n, i64 nrows,
                                        int* __restrict__ vid_rows, int* __restrict__ deg_rows,
                                        i64* __restrict__ ptr_rows, int* __restrict__ slot) {
    GRID_STRIDE(v, n) {
        const i64 r = rank[v];
        if (r >= 0) {
            vid_rows[r] = (int)v;
            deg_rows[r] = deg[v];
            ptr_rows[r] = ptr[v];
            slot[v] = (int)r;
        } else {
            slot[v] = (int)nrows;
        }
    }
}
