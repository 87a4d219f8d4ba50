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

// Warp-segmented SpMV: every warp takes ranges of `range` consecutive entries (a multiple of
// 32, chosen per graph: enough ranges to fill the device) and walks them 32 * U at a time, one
// entry per lane in each of U groups of 32 (coalesced index/weight loads; the U groups' index,
// weight and x loads are all issued before the first group is summed, so a warp keeps U times
// more loads in flight). A lane finds its row among the next 32 row ends (off[r + 1 .. r + 32],
// one coalesced load, binary search by shuffles; a run of empty rows is jumped by a binary
// search over off), the products are summed per row by a segmented warp scan, and the lane
// ending a row stores it (atomically only for rows that began in an earlier range or continue
// past this one; the warp carries a row continuing into its next group). y must be zeroed
// first (empty rows). x is read in its own type X (float or double) and converted: the sums
// are float64 either way. PUSH: y[dst] += w x[src] atomically instead.

#define NO_ROW ((i64)-1)

// The row of entry t (for the lanes with `valid`; NO_ROW for the others) among the rows from
// `base` on, where every valid lane's entry lies at or after off[base]; `base` is moved past
// runs of rows that end before the first valid entry of the group (first entry c).
// Warp-collective: every lane calls it.
__device__ __forceinline__ i64 warp_row_of(const i64* __restrict__ off, i64& base, i64 c,
                                           i64 t, bool valid, i64 nrows, int lane) {
    i64 row = NO_ROW;
    while (true) {
        const i64 idx = base + 1 + lane;
        const i64 e = idx <= nrows ? off[idx] : (i64)0x7fffffffffffffffLL;
        int cnt = 0;
        for (int s = 16; s > 0; s >>= 1) {
            const i64 v = __shfl_sync(FULL_MASK, e, cnt + s - 1);
            if (v <= t) cnt += s;
        }
        const i64 e31 = __shfl_sync(FULL_MASK, e, 31);
        if (cnt == 31 && e31 <= t) cnt = 32;
        if (valid && row == NO_ROW && cnt < 32) row = base + cnt;
        const unsigned open = __ballot_sync(FULL_MASK, valid && row == NO_ROW);
        if (!open) break;
        // rows base .. base + 31 all end before the first open entry: jump to its row
        const i64 t_open = c + (__ffs(open) - 1);
        base = segment_between(off, base + 32, nrows - 1, t_open);
    }
    return row;
}

// B: blocks of 256 threads that must fit an SM at once (__launch_bounds__: caps the registers
// per thread; the U groups' loads need more of them).
template <typename W, typename X, int WEIGHTED, int PUSH, int U, int B>
__global__ void __launch_bounds__(256, B)
spmv_warp(const i64* __restrict__ ptr, const i64* __restrict__ wptr, const i64* __restrict__ off,
          const i64* __restrict__ range_rows, i64 nrows, i64 nnz, i64 nranges, i64 range,
          const X* __restrict__ x, double* __restrict__ y, const int* __restrict__ vid) {
    const int lane = threadIdx.x & 31;
    const i64 nw = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 rg = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; rg < nranges; rg += nw) {
        const i64 start = rg * range;
        const i64 end = start + range < nnz ? start + range : nnz;
        i64 base = range_rows[rg];               // row holding entry `start`
        i64 carry_row = NO_ROW;                  // row continued from the previous group
        double carry = 0.0;
        for (i64 c = start; c < end; c += 32 * U) {
            // ---- the rows of the U groups' entries (group u: entries c + 32 u + lane)
            i64 row[U], base0[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const i64 cu = c + 32 * u;
                base0[u] = base;
                row[u] = NO_ROW;
                if (u == 0 || cu < end) {        // (the same for the whole warp)
                    const i64 t = cu + lane;
                    row[u] = warp_row_of(off, base, cu, t, t < end, nrows, lane);
                    const i64 last_row = __shfl_sync(FULL_MASK, row[u], 31);
                    if (last_row != NO_ROW) base = last_row;
                }
            }
            // ---- every group's index and weight loads, then every group's x loads
            // (the lists are read once: streaming loads (evict-first), so x stays in L2)
            int col[U];
            double w[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const i64 t = c + 32 * u + lane;
                col[u] = 0;
                w[u] = 0.0;
                if (t < end) {
                    const i64 p = t - off[row[u]];
                    col[u] = __ldcs((const int*)ptr[row[u]] + p);
                    if (WEIGHTED) w[u] = (double)__ldcs((const W*)wptr[row[u]] + p);
                }
            }
            if (PUSH) {
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    if (c + 32 * u + lane < end) {
                        const double xr = (double)x[vertex_of(vid, row[u])];
                        if (xr != 0.0) atomicAdd(&y[col[u]], WEIGHTED ? w[u] * xr : xr);
                    }
                }
                continue;
            }
            double v[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                v[u] = 0.0;
                if (c + 32 * u + lane < end) {
                    v[u] = (double)x[col[u]];
                    if (WEIGHTED) v[u] = w[u] * v[u];
                }
            }
            // ---- per group: segmented inclusive scan by row (rows ascend across lanes)
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const i64 cu = c + 32 * u;
                if (u > 0 && cu >= end) break;   // (the same for the whole warp)
                const i64 t = cu + lane;
                const bool valid = t < end;
                const i64 r = row[u];
                const int key = valid ? (int)(r - base0[u]) : -1;   // (rows >= base0[u])
                double s = v[u];
                for (int d = 1; d < 32; d <<= 1) {
                    const double su = __shfl_up_sync(FULL_MASK, s, d);
                    const int ku = __shfl_up_sync(FULL_MASK, key, d);
                    if (lane >= d && ku == key) s += su;
                }
                const int knext = __shfl_down_sync(FULL_MASK, key, 1);
                const bool seg_end = valid && (lane == 31 || knext != key);
                double new_carry = 0.0;
                i64 new_carry_row = NO_ROW;
                if (seg_end) {
                    if (r == carry_row) s += carry;
                    if (t + 1 < off[r + 1]) {        // the row goes on after this entry
                        if (t + 1 < end) {           // ... in this range: carry it (lane 31)
                            new_carry = s;
                            new_carry_row = r;
                        } else {                      // ... in the next range
                            atomicAdd(&y[r], s);
                        }
                    } else if (off[r] >= start) {    // whole row in this range
                        y[r] = s;
                    } else {                          // began in an earlier range
                        atomicAdd(&y[r], s);
                    }
                }
                carry = __shfl_sync(FULL_MASK, new_carry, 31);
                carry_row = __shfl_sync(FULL_MASK, new_carry_row, 31);
            }
        }
    }
}

// Block-walk SpMV over a hornet.Graph's block arrays in storage order (pull only). The
// arrays (size class by size class, each by address) hold every block at its storage rank,
// so a slot's row is arithmetic: slot s of array a (blocks of 2^shift slots) belongs to
// visited row first_row[a] + (s >> shift), at position s & (2^shift - 1) of its list, and
// its destination and weight lie at column_base[a] + s. No row search, no per-row pointer:
// the index and weight loads of U groups of 32 slots are issued at once, then their x
// gathers, then the per-row sums. Work: tasks of 2^task_shift slots of one array (every
// array's slots cut into them; a block larger than a task spans several tasks, whose sums
// are added atomically into y, zeroed there first; every other row is stored once, free
// blocks as 0). A slot is read only where its row's degree says it holds an entry: the
// degrees of 32 rows are read ahead, one per lane, when the task has at most 32 rows or its
// blocks have at least 2^ahead_from slots (one row per group of 32 slots from 2^5 on); the
// slots of other blocks load their row's degree with themselves, and their index and
// weight loads go out with it for every slot (their sectors are mostly read whole anyway).
// stream_rows: the per-row degrees and vertices and the stores of y (each read or written
// once) are streaming loads and stores (evict-first), so that x keeps more of L2.
//
// task_first (int64, na + 1): the first task of each array, the total last. arrays (int64,
// na each): per array its first_row, shift, slots and destination column address. w_col
// (int64, na): per array its weight column address (not read without weights).
// deg: degree of each visited row (0 for a free block); vid: its vertex (-1 for a free
// block). y (Y: float or double; a row is summed in double and rounded to Y once, the
// pieces of a row split over tasks added in Y): per vertex, zeroed by the caller: each
// row's sum is stored straight at its vertex, the rows of the blocks larger than a task added there atomically; vertices
// without a list keep their 0. vid null: y holds one sum per visited row instead (count + 1,
// for the caller to gather into vertex order): every row of a block of at most a task is
// stored (a free block's as 0), so the caller zeroes only the rows of the larger blocks
// (the last size classes) and the zero row past them.
__device__ __forceinline__ int row_load(const int* __restrict__ p, bool stream) {
    return stream ? __ldcs(p) : *p;
}

template <typename Y>
__device__ __forceinline__ void sum_store(Y* p, double v, bool stream) {
    if (stream) __stcs(p, (Y)v); else *p = (Y)v;
}

template <typename W, typename X, typename Y, int WEIGHTED, int U, int B>
__global__ void __launch_bounds__(256, B)
spmv_blocks(const i64* __restrict__ task_first, const i64* __restrict__ arrays, i64 na,
            int task_shift, const i64* __restrict__ w_col, const int* __restrict__ deg,
            const int* __restrict__ vid, const X* __restrict__ x, Y* __restrict__ y,
            int ahead_from, int stream_rows) {
    const bool cs = stream_rows != 0;
    const int lane = threadIdx.x & 31;
    const i64* __restrict__ first_row = arrays;
    const i64* __restrict__ shifts = first_row + na;
    const i64* __restrict__ slots = shifts + na;
    const i64* __restrict__ dst_col = slots + na;
    const i64 ntasks = task_first[na];
    const i64 nw = ((i64)gridDim.x * blockDim.x) >> 5;
    const i64 task = (i64)1 << task_shift;
    for (i64 t = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; t < ntasks; t += nw) {
        i64 lo = 0, hi = na;                     // task_first[lo] <= t < task_first[hi]
        while (hi - lo > 1) {
            const i64 mid = (lo + hi) >> 1;
            if (__ldg(task_first + mid) <= t) lo = mid; else hi = mid;
        }
        const i64 a = lo;
        const int shift = (int)__ldg(shifts + a);
        const i64 cmask = ((i64)1 << shift) - 1;
        const i64 s0 = (t - __ldg(task_first + a)) << task_shift;
        const i64 s1 = s0 + task < __ldg(slots + a) ? s0 + task : __ldg(slots + a);
        const i64 row_a = __ldg(first_row + a);
        const int* __restrict__ dst = (const int*)__ldg(dst_col + a);
        const W* __restrict__ wts = WEIGHTED ? (const W*)__ldg(w_col + a) : nullptr;
        // rows read ahead: the degrees of 32 rows from row `wrow` on (of the array), one per
        // lane, when the task has at most 32 rows (loaded once) or its blocks have at least
        // 2^ahead_from (>= 32) slots (one row per group of 32 slots; the next 32 rows
        // loaded when a chunk passes them), so that the index and weight loads stop at each
        // list's end; other blocks load each slot's degree with the slot
        const bool ahead = (shift >= ahead_from && shift >= 5) || shift >= task_shift - 5;
        const i64 last_row = (s1 - 1) >> shift;
        i64 wrow = s0 >> shift;
        int dl = 0;
        if (ahead) {
            if (wrow + lane <= last_row) dl = row_load(deg + row_a + wrow + lane, cs);
            // a task inside one block, wholly past the list's end: nothing to add
            if (shift > task_shift && (s0 & cmask) >= __shfl_sync(FULL_MASK, dl, 0)) continue;
        }
        double acc = 0.0;                        // (blocks of >= 32 slots) the row's sum so far
        for (i64 c = s0; c < s1; c += 32 * U) {
            int col[U];
            W w[U];                              // (converted at the product: fewer registers)
            bool ok[U];
            if (ahead) {                         // (the same for the whole warp)
                const i64 c_last = ((c + 32 * U < s1 ? c + 32 * U : s1) - 1) >> shift;
                if (c_last >= wrow + 32) {       // the chunk's rows past the window: reload it
                    wrow = c >> shift;
                    dl = wrow + lane <= last_row ? row_load(deg + row_a + wrow + lane, cs) : 0;
                }
            }
            // whole chunk of one block past its list's end (blocks of >= 32 U slots)
            bool skip = false;
            if (ahead && (cmask + 1) >= 32 * U) {
                const int d0 = __shfl_sync(FULL_MASK, dl, (int)((c >> shift) - wrow));
                skip = (c & cmask) >= d0;
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const i64 sl = c + 32 * u + lane;
                const bool in = sl < s1;
                int d;
                if (ahead) {
                    d = __shfl_sync(FULL_MASK, dl, (int)(((sl >> shift) - wrow) & 31));
                } else {
                    d = in ? row_load(deg + row_a + (sl >> shift), cs) : 0;
                }
                ok[u] = in && !skip && (sl & cmask) < d;
                col[u] = 0;
                w[u] = (W)0;
                if (ahead ? ok[u] : in) {
                    col[u] = __ldcs(dst + sl);
                    if (WEIGHTED) w[u] = __ldcs(wts + sl);
                }
            }
            double v[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                v[u] = 0.0;
                if (ok[u]) {
                    v[u] = (double)x[col[u]];
                    if (WEIGHTED) v[u] = (double)w[u] * v[u];
                }
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const i64 g = c + 32 * u;                    // the group's first slot
                if (u > 0 && g >= s1) break;                 // (the same for the whole warp)
                const i64 sl = g + lane;
                if (shift < 5) {                             // 32 >> shift whole rows
                    double s = v[u];
                    for (int o = 1; o <= (int)cmask; o <<= 1)
                        s += __shfl_xor_sync(FULL_MASK, s, o);
                    if (sl < s1 && (sl & cmask) == 0) {
                        const i64 r = row_a + (sl >> shift);
                        const i64 to = vid ? (i64)row_load(vid + r, cs) : r;
                        if (to >= 0) sum_store(y + to, s, cs);
                    }
                } else {
                    acc += v[u];
                    if (((g + 32) & cmask) == 0 || g + 32 >= s1) {   // the row's last group
                        double s = acc;
                        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(FULL_MASK, s, o);
                        if (lane == 0) {
                            const i64 r = row_a + (g >> shift);
                            const i64 to = vid ? (i64)row_load(vid + r, cs) : r;
                            if (to >= 0) {
                                if (shift > task_shift) atomicAdd(&y[to], (Y)s);
                                else sum_store(y + to, s, cs);
                            }
                        }
                        acc = 0.0;
                    }
                }
            }
        }
    }
}

// The visited rows of the block walk, straight from the vertex table: vertex v with a list
// at edge pointer ptr[v] (an address in the destination column of the array whose base is
// the last one at or below it; arrays by address: base, first storage rank, size class) is
// visited row rank = first + block index; deg_rows[rank] = deg[v], vid_rows[rank] = v
// (deg_rows zeroed and vid_rows set to -1 by the caller: free blocks stay empty rows of no
// vertex). slot (unless null): slot[v] = rank, or nrows (the zero row) without a list.
extern "C" __global__ void blocks_rows(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                       i64 n, const i64* __restrict__ by_addr, i64 na,
                                       int* __restrict__ deg_rows, int* __restrict__ vid_rows,
                                       int* __restrict__ slot, i64 nrows) {
    const i64* __restrict__ base = by_addr;
    const i64* __restrict__ first = by_addr + na;
    const i64* __restrict__ shift = by_addr + 2 * na;
    GRID_STRIDE(v, n) {
        const int d = deg[v];
        if (d > 0) {
            const i64 p = ptr[v];
            i64 lo = 0, hi = na;                  // base[lo] <= p < base[hi] (base[na]: +inf)
            while (hi - lo > 1) {
                const i64 mid = (lo + hi) >> 1;
                if (__ldg(base + mid) <= p) lo = mid; else hi = mid;
            }
            const i64 r = __ldg(first + lo) + ((p - __ldg(base + lo)) >> (__ldg(shift + lo) + 2));
            deg_rows[r] = d;
            vid_rows[r] = (int)v;
            if (slot) slot[v] = (int)r;
        } else if (slot) {
            slot[v] = (int)nrows;
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
