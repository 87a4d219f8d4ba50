// CUDA kernels of the batch pipeline (GPU twin of hornet/batch/cpu_kernels.py).
//
// Compiled once per process by cupy.RawModule (NVRTC, -std=c++17); includes segmented.cuh.
// Every kernel uses 64-bit indexing and a grid-stride loop, so any grid size is correct.
// Lists are reached through int64 device addresses: vertex v's destination list is degree[v]
// int32 values at edge_ptr[v], ascending; a property column's list is reached by its own
// per-vertex (or per-segment) address.
//
// Load balancing: work over many lists of very different lengths is laid out as one flat
// index range t in [0, total) over the concatenated (sub)lists; `off` (length nseg + 1,
// exclusive scan with the total last) maps t back to its list by binary search (restricted to
// the lists of the item's 256-item tile, see segmented_loop).
// In-place list rewrites (merge, removal) read every moving element first into a scratch
// buffer and copy it back in a second launch, so no thread overwrites an element another
// thread still has to read.

#include "segmented.cuh"

// Number of a[0:n] that are < x (a ascending).
template <typename T, typename X>
__device__ __forceinline__ i64 lower_bound(const T* a, i64 n, X x) {
    i64 lo = 0, hi = n;
    while (lo < hi) {
        i64 mid = (lo + hi) >> 1;
        if ((X)a[mid] < x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Number of a[0:n] that are <= x (a ascending).
template <typename T, typename X>
__device__ __forceinline__ i64 upper_bound(const T* a, i64 n, X x) {
    i64 lo = 0, hi = n;
    while (lo < hi) {
        i64 mid = (lo + hi) >> 1;
        if ((X)a[mid] <= x) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// ------------------------------------------------------------------------------ sorting
#define ALL_ONES 0xFFFFFFFFFFFFFFFFull

// Keys ((src << bits | dst) << index_bits) | entry; mirror: pair i -> entries 2i (s, d) and
// 2i + 1 (d, s); self-loops (mirror only) -> ALL_ONES, which sorts last.
extern "C" __global__ void pack_pairs(const i64* __restrict__ s, const i64* __restrict__ d,
                                      i64 n, int bits, int index_bits, int mirror,
                                      u64* __restrict__ out) {
    const u64 with_index = index_bits > 0 ? 1ull : 0ull;
    GRID_STRIDE(i, n) {
        u64 u = (u64)s[i], v = (u64)d[i];
        if (mirror) {
            if (u == v) {
                out[2 * i] = ALL_ONES;
                out[2 * i + 1] = ALL_ONES;
            } else {
                out[2 * i] = (((u << bits) | v) << index_bits) | ((u64)(2 * i) * with_index);
                out[2 * i + 1] = (((v << bits) | u) << index_bits) |
                                 ((u64)(2 * i + 1) * with_index);
            }
        } else {
            out[i] = (((u << bits) | v) << index_bits) | ((u64)i * with_index);
        }
    }
}

// flag[i] = 1 where sorted key i starts a new (src, dst) and is not a self-loop entry;
// end_out[0] = index of the first ALL_ONES key (left untouched when there is none).
extern "C" __global__ void unique_flags(const u64* __restrict__ keys, i64 n, int index_bits,
                                        unsigned char* __restrict__ flag,
                                        i64* __restrict__ end_out) {
    GRID_STRIDE(i, n) {
        u64 k = keys[i];
        bool all = k == ALL_ONES;
        u64 prev = i > 0 ? keys[i - 1] : 0ull;
        flag[i] = (!all && (i == 0 || (k >> index_bits) != (prev >> index_bits))) ? 1 : 0;
        if (all && (i == 0 || prev != ALL_ONES)) end_out[0] = i;
    }
}

// Decode the kept keys keys[idx[j]] into (order, src, dst).
extern "C" __global__ void decode_pairs(const u64* __restrict__ keys, const i64* __restrict__ idx,
                                        i64 m, int bits, int index_bits, int want_order,
                                        i64* __restrict__ order, int* __restrict__ src,
                                        int* __restrict__ dst) {
    const u64 low = index_bits > 0 ? ((1ull << index_bits) - 1ull) : 0ull;
    const u64 dmask = (1ull << bits) - 1ull;
    GRID_STRIDE(j, m) {
        u64 k = keys[idx[j]];
        if (want_order) order[j] = (i64)(k & low);
        u64 p = k >> index_bits;
        src[j] = (int)(p >> bits);
        dst[j] = (int)(p & dmask);
    }
}

// ------------------------------------------------------------------------------ searching
// Position of dst[i] in the sorted list of src[i], or -1.
template <typename S, typename D, typename G>
__global__ void find_positions(const S* __restrict__ src, const D* __restrict__ dst, i64 n,
                               const G* __restrict__ degree, const i64* __restrict__ edge_ptr,
                               i64 num_vertices, i64* __restrict__ out) {
    GRID_STRIDE(i, n) {
        i64 u = (i64)src[i];
        i64 r = -1;
        if (u >= 0 && u < num_vertices) {
            i64 d = (i64)degree[u];
            if (d > 0) {
                const int* lst = (const int*)edge_ptr[u];
                i64 x = (i64)dst[i];
                i64 lo = lower_bound(lst, d, x);
                if (lo < d && (i64)lst[lo] == x) r = lo;
            }
        }
        out[i] = r;
    }
}

// ------------------------------------------------------------------------------ insertion
// Per source s: base[s] = its list's address, first[s] = index of its first old element that
// moves (old elements before it are <= every new one and stay), tail[s] = elements rewritten.
extern "C" __global__ void merge_plan(const i64* __restrict__ base,
                                      const i64* __restrict__ seg_start,
                                      const i64* __restrict__ seg_len,
                                      const int* __restrict__ new_dst,
                                      const i64* __restrict__ old_degree, i64 nsrc,
                                      i64* __restrict__ first, i64* __restrict__ tail) {
    GRID_STRIDE(s, nsrc) {
        i64 c = seg_len[s], d0 = old_degree[s];
        i64 p = d0;
        if (c > 0 && d0 > 0) p = upper_bound((const int*)base[s], d0, new_dst[seg_start[s]]);
        first[s] = p;
        tail[s] = c > 0 ? d0 - p + c : 0;
    }
}

// One thread per moving element (old tail elements first, then the new ones, per source):
// old i -> slot i + #(new < old[i]); new j -> slot j + #(old <= new[j]) (ties: old first, as
// the CPU merge). Values go to scratch[off[s] + slot - first[s]].
extern "C" __global__ void merge_scatter(const i64* __restrict__ base,
                                         const i64* __restrict__ seg_start,
                                         const i64* __restrict__ seg_len,
                                         const int* __restrict__ new_dst,
                                         const i64* __restrict__ old_degree,
                                         const i64* __restrict__ first,
                                         const i64* __restrict__ off, i64 nsrc, i64 total,
                                         int* __restrict__ scratch, i64* __restrict__ new_pos) {
    segmented_loop(off, nsrc, total, [&](i64 t, i64 s) {
        i64 o = off[s];
        i64 r = t - o;
        i64 p = first[s], m = old_degree[s] - p, c = seg_len[s], b = seg_start[s];
        const int* L = (const int*)base[s];
        const int* N = new_dst + b;
        int v;
        i64 slot;
        if (r < m) {
            i64 i = p + r;
            v = L[i];
            slot = i + lower_bound(N, c, v);
        } else {
            i64 j = r - m;
            v = N[j];
            slot = j + p + upper_bound(L + p, m, v);
            new_pos[b + j] = slot;
        }
        scratch[o + slot - p] = v;
    });
}

// Column replay: first[s] = new_pos of the first new element (= old elements that stay).
extern "C" __global__ void column_plan(const i64* __restrict__ seg_start,
                                       const i64* __restrict__ seg_len,
                                       const i64* __restrict__ old_degree,
                                       const i64* __restrict__ new_pos, i64 nsrc,
                                       i64* __restrict__ first, i64* __restrict__ tail) {
    GRID_STRIDE(s, nsrc) {
        i64 c = seg_len[s], d0 = old_degree[s];
        i64 p = c > 0 ? new_pos[seg_start[s]] : d0;
        first[s] = p;
        tail[s] = c > 0 ? d0 - p + c : 0;
    }
}

// Old element i goes after the new elements j with new_pos[j] - j <= i (new j follows
// exactly new_pos[j] - j old elements); new j goes to new_pos[j].
template <typename T>
__global__ void column_scatter(const i64* __restrict__ base, const i64* __restrict__ seg_start,
                               const i64* __restrict__ seg_len,
                               const i64* __restrict__ old_degree,
                               const i64* __restrict__ new_pos, const T* __restrict__ values,
                               const i64* __restrict__ first, const i64* __restrict__ off,
                               i64 nsrc, i64 total, T* __restrict__ scratch) {
    segmented_loop(off, nsrc, total, [&](i64 t, i64 s) {
        i64 o = off[s];
        i64 r = t - o;
        i64 p = first[s], m = old_degree[s] - p, c = seg_len[s], b = seg_start[s];
        const i64* q = new_pos + b;
        T v;
        i64 slot;
        if (r < m) {
            i64 i = p + r;
            v = ((const T*)base[s])[i];
            i64 lo = 0, hi = c;
            while (lo < hi) {
                i64 mid = (lo + hi) >> 1;
                if (q[mid] - mid <= i) lo = mid + 1; else hi = mid;
            }
            slot = i + lo;
        } else {
            i64 j = r - m;
            v = values[b + j];
            slot = q[j];
        }
        scratch[o + slot - p] = v;
    });
}

// list[first[s] + r] = scratch[off[s] + r] for r < (off[s+1] - off[s]) - minus[s]
// (use_minus = 0: the whole segment).
template <typename T>
__global__ void copy_back(const i64* __restrict__ base, const i64* __restrict__ first,
                          const i64* __restrict__ off, const i64* __restrict__ minus,
                          int use_minus, i64 nsrc, i64 total, const T* __restrict__ scratch) {
    segmented_loop(off, nsrc, total, [&](i64 t, i64 s) {
        i64 o = off[s];
        i64 r = t - o;
        if (use_minus && r >= off[s + 1] - o - minus[s]) return;
        ((T*)base[s])[first[s] + r] = scratch[t];
    });
}

// ------------------------------------------------------------------------------ deletion
// first[s] = first deleted position (elements before it stay), tail[s] = d0 - first[s].
extern "C" __global__ void remove_plan(const i64* __restrict__ seg_start,
                                       const i64* __restrict__ seg_len,
                                       const i64* __restrict__ old_degree,
                                       const i64* __restrict__ positions, i64 nsrc,
                                       i64* __restrict__ first, i64* __restrict__ tail) {
    GRID_STRIDE(s, nsrc) {
        i64 c = seg_len[s], d0 = old_degree[s];
        i64 p = c > 0 ? positions[seg_start[s]] : d0;
        first[s] = p;
        tail[s] = c > 0 ? d0 - p : 0;
    }
}

// Every element i in [first, d0) that survives goes to scratch[off[s] + i - #(pos < i) - first].
template <typename T>
__global__ void remove_scatter(const i64* __restrict__ base, const i64* __restrict__ seg_start,
                               const i64* __restrict__ seg_len,
                               const i64* __restrict__ positions,
                               const i64* __restrict__ first, const i64* __restrict__ off,
                               i64 nsrc, i64 total, T* __restrict__ scratch) {
    segmented_loop(off, nsrc, total, [&](i64 t, i64 s) {
        i64 o = off[s];
        i64 p = first[s];
        i64 i = p + (t - o);
        i64 c = seg_len[s];
        const i64* P = positions + seg_start[s];
        i64 lb = lower_bound(P, c, i);
        if (lb < c && P[lb] == i) return;
        scratch[o + i - lb - p] = ((const T*)base[s])[i];
    });
}

// ------------------------------------------------------------------------------ gathers
// out[out_off[v] + j] = list_v[j] for j < deg(v); off: exclusive scan of the degrees.
template <typename T>
__global__ void gather_lists(const i64* __restrict__ base, const i64* __restrict__ off,
                             const i64* __restrict__ out_off, i64 nv, i64 total,
                             T* __restrict__ out) {
    segmented_loop(off, nv, total, [&](i64 t, i64 v) {
        i64 j = t - off[v];
        out[out_off[v] + j] = ((const T*)base[v])[j];
    });
}

template <typename T>
__global__ void read_at(const i64* __restrict__ addresses, i64 n, T* __restrict__ out) {
    GRID_STRIDE(i, n) { out[i] = *(const T*)addresses[i]; }
}

template <typename T>
__global__ void write_at(const i64* __restrict__ addresses, i64 n, const T* __restrict__ values) {
    GRID_STRIDE(i, n) { *(T*)addresses[i] = values[i]; }
}

// One warp per vertex: 0 ok, 1 unsorted or duplicate, 2 destination out of range; the first
// offending index in list order decides (range checked before order, as on the CPU).
extern "C" __global__ void list_violations(const i64* __restrict__ edge_ptr,
                                           const i64* __restrict__ degree, i64 nv,
                                           i64 num_vertices, signed char* __restrict__ out) {
    const int lane = threadIdx.x & 31;
    const i64 warp = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const i64 warps = ((i64)blockDim.x * gridDim.x) >> 5;
    for (i64 v = warp; v < nv; v += warps) {
        i64 d = degree[v];
        const int* lst = d > 0 ? (const int*)edge_ptr[v] : (const int*)0;
        int code = 0;
        for (i64 k0 = 0; k0 < d; k0 += 32) {
            i64 k = k0 + lane;
            int mine = 0;
            if (k < d) {
                i64 x = lst[k];
                if (x < 0 || x >= num_vertices) mine = 2;
                else if (k > 0 && x <= (i64)lst[k - 1]) mine = 1;
            }
            unsigned bad = __ballot_sync(0xFFFFFFFFu, mine != 0);
            if (bad) {
                code = __shfl_sync(0xFFFFFFFFu, mine, __ffs(bad) - 1);
                break;
            }
        }
        if (lane == 0) out[v] = (signed char)code;
    }
}
