// CUDA kernels of the static algorithms (GPU twin of the Numba kernels in hornet/algos).
//
// Compiled once per process by cupy.RawModule (NVRTC, -std=c++17); includes segmented.cuh.
// 64-bit indexing throughout; every kernel is correct for any grid size (grid-stride loops
// over items, tiles or warps).
//
// Graphs are read through the pointer view (hornet.adjacency.AdjacencyView): vertex v's
// destinations are deg[v] int32 values at device address ptr[v] (ascending where the algorithm
// needs it); an edge property (weights, edge ids) is reached through its own per-vertex
// addresses. The same kernels therefore run on a dynamic hornet.Graph and on a plain CSR.
//
// Load balancing over lists of very different lengths: work is one flat range of items
// t in [0, total) over the concatenated lists (or per-list work counts); `off` (nseg + 1,
// exclusive scan, total last) maps an item to its list. A first launch (tile_segments) finds
// the list of the first item of every 256-item tile; a block working on a tile then searches
// only between its tile's bounds (tiled_items).

#include "segmented.cuh"     // i64, u64, GRID_STRIDE, lower_bound, segment_between (hornet/memory)

typedef unsigned char u8;

#define FULL_MASK 0xffffffffu
#define DEAD 0
#define ALIVE 1
#define GOING 2

// Sum over the warp (every lane must call it); the total lands in lane 0.
__device__ __forceinline__ u64 warp_sum(u64 v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(FULL_MASK, v, o);
    return v;
}

__device__ __forceinline__ unsigned lanes_below(unsigned lane) {
    return (1u << lane) - 1u;
}

// body(t, s, ok) for every item t of [0, total), s = the list holding it; called by EVERY
// thread of the block for every tile the block takes (ok = false past the end), so bodies may
// use warp collectives. tseg: from tile_segments with tile = blockDim.x.
template <typename F>
__device__ __forceinline__ void tiled_items(const i64* __restrict__ off,
                                            const i64* __restrict__ tseg, i64 total, F&& body) {
    const i64 T = blockDim.x;
    const i64 ntiles = (total + T - 1) / T;
    for (i64 k = blockIdx.x; k < ntiles; k += gridDim.x) {
        const i64 t = k * T + threadIdx.x;
        const bool ok = t < total;
        const i64 s = ok ? segment_between(off, tseg[k], tseg[k + 1], t) : 0;
        body(t, s, ok);
    }
}

// out[k] = list of item k * tile (k < ntiles); out[ntiles] = nseg - 1.
extern "C" __global__ void tile_segments(const i64* __restrict__ off, i64 nseg, i64 tile,
                                         i64 ntiles, i64* __restrict__ out) {
    GRID_STRIDE(k, ntiles + 1) {
        out[k] = (k == ntiles) ? nseg - 1 : segment_between(off, 0, nseg - 1, k * tile);
    }
}

// ------------------------------------------------------------------------ view helpers

// Every stored entry in row order: src[t] (if want_src) and dst[t].
extern "C" __global__ void view_coo(const i64* __restrict__ ptr, const i64* __restrict__ off,
                                    const i64* __restrict__ tseg, i64 total, int want_src,
                                    int* __restrict__ src, int* __restrict__ dst) {
    tiled_items(off, tseg, total, [&](i64 t, i64 u, bool ok) {
        if (!ok) return;
        const int* row = (const int*)ptr[u];
        dst[t] = row[t - off[u]];
        if (want_src) src[t] = (int)u;
    });
}

// counts[0] += entries (u, u); counts[1] += entries (u, w) without (w, u) (sorted lists).
extern "C" __global__ void loops_and_asymmetry(const int* __restrict__ deg,
                                               const i64* __restrict__ ptr,
                                               const i64* __restrict__ off,
                                               const i64* __restrict__ tseg, i64 total,
                                               int check_symmetry, u64* __restrict__ counts) {
    u64 loops = 0, missing = 0;
    tiled_items(off, tseg, total, [&](i64 t, i64 u, bool ok) {
        if (!ok) return;
        const int w = ((const int*)ptr[u])[t - off[u]];
        if (w == (int)u) { ++loops; return; }
        if (check_symmetry) {
            const i64 dw = deg[w];
            const int* rw = (const int*)ptr[w];
            const i64 p = lower_bound(rw, dw, (int)u);
            if (p >= dw || rw[p] != (int)u) ++missing;
        }
    });
    loops = warp_sum(loops);
    missing = warp_sum(missing);
    if ((threadIdx.x & 31) == 0) {
        if (loops) atomicAdd(&counts[0], loops);
        if (missing) atomicAdd(&counts[1], missing);
    }
}

// lo[u] = position of u's first neighbour greater than u (sorted lists).
extern "C" __global__ void first_above(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                       i64 n, i64* __restrict__ lo) {
    GRID_STRIDE(u, n) {
        const i64 d = deg[u];
        lo[u] = d ? lower_bound((const int*)ptr[u], d, (int)u + 1) : 0;
    }
}

// Edge id of every stored entry of an undirected sorted view: edge {a, b}, a < b, is number
// eoff[a] + (position of b in a's list) - lo[a] (the order of g.edges()); -1 for a self-loop.
extern "C" __global__ void entry_eids(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                      const i64* __restrict__ off, const i64* __restrict__ tseg,
                                      i64 total, const i64* __restrict__ lo,
                                      const i64* __restrict__ eoff, i64* __restrict__ out) {
    tiled_items(off, tseg, total, [&](i64 t, i64 u, bool ok) {
        if (!ok) return;
        const i64 j = t - off[u];
        const int w = ((const int*)ptr[u])[j];
        if (w > (int)u) {
            out[t] = eoff[u] + j - lo[u];
        } else if (w == (int)u) {
            out[t] = -1;
        } else {
            const int* rw = (const int*)ptr[w];
            const i64 p = lower_bound(rw, deg[w], (int)u);
            out[t] = eoff[w] + p - lo[w];
        }
    });
}

// For every stored entry (u, w) of a view: the id of edge {u, w} in an undirected sorted
// index (udeg, uptr, ulo, ueoff), or -1 (self-loop, or absent).
extern "C" __global__ void map_entries(const i64* __restrict__ ptr, const i64* __restrict__ off,
                                       const i64* __restrict__ tseg, i64 total,
                                       const int* __restrict__ udeg,
                                       const i64* __restrict__ uptr,
                                       const i64* __restrict__ ulo,
                                       const i64* __restrict__ ueoff, i64* __restrict__ out) {
    tiled_items(off, tseg, total, [&](i64 t, i64 u, bool ok) {
        if (!ok) return;
        const int w = ((const int*)ptr[u])[t - off[u]];
        if (w == (int)u) { out[t] = -1; return; }
        const int a = w < (int)u ? w : (int)u;
        const int b = w < (int)u ? (int)u : w;
        const i64 da = udeg[a];
        const int* ra = (const int*)uptr[a];
        const i64 p = da ? lower_bound(ra, da, b) : 0;
        out[t] = (p < da && ra[p] == b) ? ueoff[a] + p - ulo[a] : -1;
    });
}

// ------------------------------------------------------------------------ SpMV
// Merge-path SpMV (Merrill & Garland, SC 2016): the merge of the row ends (off[1..n]) with
// the entry indices 0..nnz-1 is cut into equal pieces of SPMV_IPT items per thread, so every
// thread does the same work however the entries fall into rows (hubs and empty rows alike).
// A row entirely inside one thread's piece is stored; pieces of split rows are added
// atomically (y must be zeroed first). Transpose (PUSH): y[dst] += w x[src] atomically.

// The kernels visit rows 0..nrows-1 of ptr/wptr/off. Pull: y[r] is the sum of visited row r
// (the caller maps visited rows to vertices). PUSH: row r is vertex vid[r] (x is read there),
// or vertex r when vid == nullptr. (A dynamic graph's rows are visited in the order its lists
// lie in memory, a CSR's in id order: see _gpu._visit_rows.)
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

// Warp-segmented SpMV: every warp takes ranges of SPMV_RANGE consecutive entries and walks them
// 32 at a time, one entry per lane (coalesced index/weight loads, 32 independent gathers). A
// lane finds its row among the next 32 row ends (off[r + 1 .. r + 32], one coalesced load,
// binary search by shuffles; a run of empty rows is jumped by a binary search over off), the
// products are summed per row by a segmented warp scan, and the lane ending a row stores it
// (atomically only for rows that began in an earlier range or continue past this one; the
// warp carries a row continuing into its next chunk). y must be zeroed first (empty rows).
// PUSH: y[dst] += w x[src] atomically instead.

#ifndef SPMV_RANGE
#define SPMV_RANGE 512
#endif

template <typename W, int WEIGHTED, int PUSH>
__global__ void spmv_warp(const i64* __restrict__ ptr, const i64* __restrict__ wptr,
                          const i64* __restrict__ off, const i64* __restrict__ range_rows,
                          i64 nrows, i64 nnz, i64 nranges, const double* __restrict__ x,
                          double* __restrict__ y, const int* __restrict__ vid) {
    const int lane = threadIdx.x & 31;
    const i64 nw = ((i64)gridDim.x * blockDim.x) >> 5;
    const i64 NO_ROW = -1;
    for (i64 rg = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; rg < nranges; rg += nw) {
        const i64 start = rg * (i64)SPMV_RANGE;
        const i64 end = start + SPMV_RANGE < nnz ? start + SPMV_RANGE : nnz;
        i64 base = range_rows[rg];               // row holding entry `start`
        i64 carry_row = NO_ROW;                  // row continued from the previous chunk
        double carry = 0.0;
        for (i64 c = start; c < end; c += 32) {
            const i64 t = c + lane;
            const bool valid = t < end;
            const i64 base0 = base;
            // ---- row of entry t: base + #{j : off[base + 1 + j] <= t}
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
            // ---- the entry's product
            double v = 0.0;
            if (valid) {
                const i64 p = t - off[row];
                // the lists are read once: streaming loads (evict-first), so the gathered x
                // stays in L2 (H100 kron22: 6% faster on the graph and on a CSR alike)
                const int col = __ldcs((const int*)ptr[row] + p);
                if (PUSH) {
                    const double xr = x[vertex_of(vid, row)];
                    if (xr != 0.0) {
                        double a = xr;
                        if (WEIGHTED) a = (double)__ldcs((const W*)wptr[row] + p) * xr;
                        atomicAdd(&y[col], a);
                    }
                } else {
                    v = x[col];
                    if (WEIGHTED) v = (double)__ldcs((const W*)wptr[row] + p) * v;
                }
            }
            const i64 last_row = __shfl_sync(FULL_MASK, row, 31);
            if (PUSH) {
                if (last_row != NO_ROW) base = last_row;
                continue;
            }
            // ---- segmented inclusive scan by row (rows ascend across lanes)
            const int key = valid ? (int)(row - base0) : -1;   // (rows >= base0)
            for (int d = 1; d < 32; d <<= 1) {
                const double u = __shfl_up_sync(FULL_MASK, v, d);
                const int ku = __shfl_up_sync(FULL_MASK, key, d);
                if (lane >= d && ku == key) v += u;
            }
            const int knext = __shfl_down_sync(FULL_MASK, key, 1);
            const bool seg_end = valid && (lane == 31 || knext != key);
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
        }
    }
}

// ------------------------------------------------------------------------ BFS

// Top-down step, one thread per frontier edge (fpre: exclusive scan of the frontier's
// out-degrees). A vertex is claimed by CAS on its level (-1 -> nxt), so it enters the next
// frontier once; claimed vertices are appended with one atomic per warp.
// counters[0] += vertices claimed, counters[1] += their in-degrees (ideg).
extern "C" __global__ void bfs_top_down(const i64* __restrict__ ptr, const int* __restrict__ ideg,
                                        const int* __restrict__ frontier,
                                        const i64* __restrict__ fpre,
                                        const i64* __restrict__ tseg, i64 total,
                                        int* __restrict__ level, int* __restrict__ parent,
                                        int want_parent, int nxt, int* __restrict__ out,
                                        u64* __restrict__ counters) {
    const unsigned lane = threadIdx.x & 31;
    tiled_items(fpre, tseg, total, [&](i64 t, i64 s, bool ok) {
        bool claimed = false;
        int v = 0;
        u64 dv = 0;
        if (ok) {
            const int u = frontier[s];
            v = ((const int*)ptr[u])[t - fpre[s]];
            if (level[v] == -1 && atomicCAS(&level[v], -1, nxt) == -1) {
                claimed = true;
                dv = (u64)ideg[v];
                if (want_parent) parent[v] = u;
            }
        }
        const unsigned m = __ballot_sync(FULL_MASK, claimed);
        if (m) {
            const u64 dsum = warp_sum(dv);
            u64 base = 0;
            if (lane == 0) {
                base = atomicAdd(&counters[0], (u64)__popc(m));
                atomicAdd(&counters[1], dsum);
            }
            base = __shfl_sync(FULL_MASK, base, 0);
            if (claimed) out[base + __popc(m & lanes_below(lane))] = v;
        }
    });
}

// Bottom-up step: every unvisited vertex looks for an in-neighbour at level cur and stops at
// the first. counters[0] += vertices found, counters[1] += their in-degrees.
extern "C" __global__ void bfs_bottom_up(const int* __restrict__ ideg,
                                         const i64* __restrict__ iptr, i64 n,
                                         int* __restrict__ level, int* __restrict__ parent,
                                         int want_parent, int cur, u64* __restrict__ counters) {
    u64 found = 0, fdeg = 0;
    GRID_STRIDE(v, n) {
        if (level[v] != -1) continue;
        const int d = ideg[v];
        if (d == 0) continue;
        const int* row = (const int*)iptr[v];
        for (int j = 0; j < d; ++j) {
            const int u = row[j];
            if (level[u] == cur) {
                level[v] = cur + 1;
                if (want_parent) parent[v] = u;
                ++found;
                fdeg += (u64)d;
                break;
            }
        }
    }
    found = warp_sum(found);
    fdeg = warp_sum(fdeg);
    if ((threadIdx.x & 31) == 0 && found) {
        atomicAdd(&counters[0], found);
        atomicAdd(&counters[1], fdeg);
    }
}

// ------------------------------------------------------------------------ triangles

// Orientation, one warp per vertex: keep the entries (u, w) with (deg w, w) > (deg u, u)
// (and, with use_state, whose edge id e = erow[j] has state[e] == ALIVE). FILL == 0: count
// per vertex into ocnt; FILL == 1: write them at ooff[u] (ascending, as the list), with their
// source and (use_eid) edge id.
template <int FILL>
__global__ void orient_pass(const int* __restrict__ deg, const i64* __restrict__ ptr,
                            const i64* __restrict__ eptr, const u8* __restrict__ state,
                            int use_eid, int use_state, i64 n, i64* __restrict__ ocnt,
                            const i64* __restrict__ ooff, int* __restrict__ oind,
                            i64* __restrict__ oeid, int* __restrict__ osrc) {
    const unsigned lane = threadIdx.x & 31;
    const i64 nw = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 u = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; u < n; u += nw) {
        const int du = deg[u];
        const int* row = du ? (const int*)ptr[u] : nullptr;
        const i64* erow = (du && use_eid) ? (const i64*)eptr[u] : nullptr;
        const i64 base = FILL ? ooff[u] : 0;
        i64 cnt = 0;
        for (i64 j0 = 0; j0 < du; j0 += 32) {
            const i64 j = j0 + lane;
            bool keep = false;
            int w = 0;
            i64 e = -1;
            if (j < du) {
                w = row[j];
                if (w != (int)u) {
                    const int dw = deg[w];
                    keep = dw > du || (dw == du && w > (int)u);
                    if (keep && use_eid) {
                        e = erow[j];
                        if (use_state) keep = e >= 0 && state[e] == ALIVE;
                    }
                }
            }
            const unsigned m = __ballot_sync(FULL_MASK, keep);
            if (FILL && keep) {
                const i64 q = base + cnt + __popc(m & lanes_below(lane));
                oind[q] = w;
                osrc[q] = (int)u;
                if (use_eid) oeid[q] = e;
            }
            cnt += __popc(m);
        }
        if (!FILL && lane == 0) ocnt[u] = cnt;
    }
}

// Work of oriented edge e = (u, v): the length of the shorter of out(u), out(v).
extern "C" __global__ void tc_work(const int* __restrict__ osrc, const int* __restrict__ oind,
                                   const i64* __restrict__ ooff, i64 m, i64* __restrict__ work) {
    GRID_STRIDE(e, m) {
        const int u = osrc[e], v = oind[e];
        const i64 da = ooff[u + 1] - ooff[u], db = ooff[v + 1] - ooff[v];
        work[e] = da < db ? da : db;
    }
}

// One item per (oriented edge (u, v), element w of the shorter of out(u), out(v)): w is
// binary-searched in the longer list; a hit is the triangle u, v, w (found exactly once).
// Each thread takes TC_IPT consecutive items (tseg from tile_segments with tile
// blockDim.x * TC_IPT): one search for its first edge, and the searches for the ascending
// elements of one edge resume where the previous one stopped.
// MODE 0: count; 1: + per vertex (tri_v); 2: + per edge (sup, through oeid).
#ifndef TC_IPT
#define TC_IPT 4
#endif

template <int MODE>
__global__ void tc_count(const int* __restrict__ osrc, const int* __restrict__ oind,
                         const i64* __restrict__ ooff, const i64* __restrict__ oeid,
                         const i64* __restrict__ wpre, const i64* __restrict__ tseg, i64 total,
                         u64* __restrict__ count, u64* __restrict__ tri_v,
                         int* __restrict__ sup) {
    u64 local = 0;
    const i64 tile = (i64)blockDim.x * TC_IPT;
    const i64 ntiles = (total + tile - 1) / tile;
    for (i64 k = blockIdx.x; k < ntiles; k += gridDim.x) {
        i64 t = k * tile + (i64)threadIdx.x * TC_IPT;
        const i64 tend = t + TC_IPT < total ? t + TC_IPT : total;
        if (t >= tend) continue;
        i64 e = segment_between(wpre, tseg[k], tseg[k + 1], t);
        i64 ws = wpre[e], we = wpre[e + 1];
        int u = 0, v = 0;
        i64 a0 = 0, b0 = 0, dl = 0, q = 0;
        bool a_short = true;
        const int* S = nullptr;
        const int* L = nullptr;
        bool fresh = true;
        for (; t < tend; ++t) {
            while (t >= we) {          // next edge with work (t < total: one exists)
                ++e;
                ws = we;
                we = wpre[e + 1];
                fresh = true;
            }
            if (fresh) {
                u = osrc[e];
                v = oind[e];
                a0 = ooff[u];
                b0 = ooff[v];
                const i64 da = ooff[u + 1] - a0, db = ooff[v + 1] - b0;
                a_short = da <= db;
                S = oind + (a_short ? a0 : b0);
                L = oind + (a_short ? b0 : a0);
                dl = a_short ? db : da;
                q = 0;
                fresh = false;
            }
            const i64 p = t - ws;
            const int w = S[p];
            q += lower_bound(L + q, dl - q, w);
            if (q >= dl) continue;
            if (L[q] != w) continue;
            ++local;
            if (MODE == 1) {
                atomicAdd(&tri_v[u], 1ull);
                atomicAdd(&tri_v[v], 1ull);
                atomicAdd(&tri_v[w], 1ull);
            } else if (MODE == 2) {
                const i64 pu = a_short ? p : q, pv = a_short ? q : p;
                atomicAdd(&sup[oeid[e]], 1);
                atomicAdd(&sup[oeid[a0 + pu]], 1);
                atomicAdd(&sup[oeid[b0 + pv]], 1);
            }
            ++q;
        }
    }
    local = warp_sum(local);
    if ((threadIdx.x & 31) == 0 && local) atomicAdd(count, local);
}

// ------------------------------------------------------------------------ k-truss
// Peeling with the delta algorithm (Green et al., HPEC 2017). Per-edge state: ALIVE, GOING
// (removed in the current round) or DEAD. A round is two launches and one 8-byte read:
//   truss_mark   the previous round's edges GOING -> DEAD, this round's ALIVE -> GOING,
//                the round's counter zeroed;
//   truss_delta  the triangles of the GOING edges subtracted from the ALIVE ones; edges whose
//                support falls below thr are appended to `next` (counter[0] of them),
// then the host reads counter[0] (the next round's size). No launch needs a host-side total:
// truss_delta runs a fixed number of warps per removed edge, so its grid follows from the
// number of removed edges alone.

// One peeling round's set-up (and, with prev only, the end of a peeling): state[prev[i]] =
// DEAD (the previous round's edges, GOING until now), state[rem[i]] = mark (GOING, or DEAD
// for a round that recounts instead of subtracting), truss[rem[i]] = level if use_truss, and
// counter[0] = 0. prev and rem are disjoint (rem was ALIVE through the previous round), so
// no two threads write one state. Launch over max(nprev + nrem, 1) items (the counter is
// zeroed even for an empty round).
extern "C" __global__ void truss_mark(const i64* __restrict__ prev, i64 nprev,
                                      const i64* __restrict__ rem, i64 nrem, int mark,
                                      u8* __restrict__ state, u64* __restrict__ counter,
                                      int use_truss, int* __restrict__ truss, int level) {
    if (blockIdx.x == 0 && threadIdx.x == 0) counter[0] = 0;
    GRID_STRIDE(i, nprev + nrem) {
        if (i < nprev) {
            state[prev[i]] = DEAD;
        } else {
            const i64 e = rem[i - nprev];
            state[e] = (u8)mark;
            if (use_truss) truss[e] = level;
        }
    }
}

__device__ __forceinline__ void truss_decrement(int* __restrict__ sup, i64 e, int thr,
                                                i64* __restrict__ next,
                                                u64* __restrict__ counter) {
    // sup only falls during a peeling, so exactly one decrement sees old == thr: every edge
    // is appended once, and only ALIVE edges are decremented, so next holds distinct ALIVE
    // edges (the next round's GOING set)
    const int old = atomicSub(&sup[e], 1);
    if (old == thr) next[atomicAdd(counter, 1ull)] = e;      // crossed below thr: peel next
}

// Delta step, `parts` warps per removed edge e = rem[r] = (x, y) (state GOING, set by
// truss_mark in an earlier launch; states are only read here). For every w in N(x) ∩ N(y) of
// the current CSR (each warp takes every parts-th run of 32 elements of the shorter list, one
// element a lane, and binary-searches them in the longer), with e1 = {x, w}, e2 = {y, w}:
//   both ALIVE -> both lose the triangle;
//   one GOING, the other ALIVE -> the survivor loses it once: only the lower id of the two
//     removed edges subtracts (e < e1 for e1 GOING, e < e2 for e2 GOING);
//   any DEAD -> nothing (the triangle is gone already); both GOING -> nothing (all three
//     edges go: no survivor).
// Edges whose support falls from thr to thr - 1 are appended to next (truss_decrement).
// Lists are strictly ascending, so the position of the largest element a warp has searched
// (lane 31's) bounds the warp's later searches from below. parts > 1 spreads a round of few
// removed edges over more of the GPU.
extern "C" __global__ void truss_delta(const int* __restrict__ deg, const i64* __restrict__ ptr,
                                       const i64* __restrict__ eptr,
                                       const u8* __restrict__ state,
                                       const i64* __restrict__ rem, i64 nrem, int parts,
                                       const int* __restrict__ esrc,
                                       const int* __restrict__ edst, int* __restrict__ sup,
                                       int thr, i64* __restrict__ next,
                                       u64* __restrict__ counter) {
    const unsigned lane = threadIdx.x & 31;
    const i64 nw = ((i64)gridDim.x * blockDim.x) >> 5;
    const i64 nitems = nrem * parts;
    // (wi is the same in all lanes of a warp: every branch below up to the lane's own
    // element is warp-uniform, as the shuffle needs)
    for (i64 wi = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; wi < nitems; wi += nw) {
        const i64 r = wi / parts;
        const i64 part = wi - r * parts;
        const i64 e = rem[r];
        const int x = esrc[e], y = edst[e];
        const i64 dx = deg[x], dy = deg[y];
        const bool x_short = dx <= dy;
        const int s = x_short ? x : y, l = x_short ? y : x;
        const i64 ds = x_short ? dx : dy, dl = x_short ? dy : dx;
        if (part * 32 >= ds) continue;         // (ds > 0 for a GOING edge: it is in both lists)
        const int* S = (const int*)ptr[s];
        const int* L = (const int*)ptr[l];
        i64 base = 0;                          // L[0:base] < every element still to search
        for (i64 k0 = part * 32; k0 < ds; k0 += 32 * (i64)parts) {
            const i64 k = k0 + lane;
            i64 q = base;
            if (k < ds) {
                const int w = S[k];
                q = base + lower_bound(L + base, dl - base, w);
                if (q < dl && L[q] == w) {
                    const i64 es = ((const i64*)eptr[s])[k];     // {s, w}
                    const i64 el = ((const i64*)eptr[l])[q];     // {l, w}
                    const i64 e1 = x_short ? es : el;            // {x, w}
                    const i64 e2 = x_short ? el : es;            // {y, w}
                    if (e1 >= 0 && e2 >= 0) {
                        const int s1 = state[e1], s2 = state[e2];
                        if (s1 != DEAD && s2 != DEAD) {
                            bool d1 = false, d2 = false;
                            if (s1 == ALIVE && s2 == ALIVE) { d1 = true; d2 = true; }
                            else if (s2 == ALIVE) d2 = e < e1;   // e1 GOING
                            else if (s1 == ALIVE) d1 = e < e2;   // e2 GOING
                            if (d1) truss_decrement(sup, e1, thr, next, counter);
                            if (d2) truss_decrement(sup, e2, thr, next, counter);
                        }
                    }
                }
            }
            base = __shfl_sync(FULL_MASK, q, 31);
        }
    }
}

// Compaction of the peeled CSR to its live edges: pos (total + 1) is the exclusive scan of
// the entries' keep flags with the total last (entry t is kept iff pos[t + 1] > pos[t]).
// Kept entry t moves to pos[t]: the rows stay in order and every list stays ascending. The
// host sizes the output from the live edges (kept = 2 * alive, pos[total] itself); the
// check against kept only keeps a broken count from writing out of bounds.
extern "C" __global__ void truss_compact(const int* __restrict__ ind,
                                         const i64* __restrict__ eid,
                                         const i64* __restrict__ pos, i64 total, i64 kept,
                                         int* __restrict__ ind_out, i64* __restrict__ eid_out) {
    GRID_STRIDE(t, total) {
        const i64 j = pos[t];
        if (pos[t + 1] == j || j >= kept) continue;
        ind_out[j] = ind[t];
        eid_out[j] = eid[t];
    }
}
