// CUDA kernels of the GPU dense truss blocks (hornet/algos/ktruss/blocks_gpu.py): dense,
// high-level parts of the graph whose truss numbers are kept in int16 matrices (as the CPU's
// hornet/algos/ktruss/dense.py), so that a batch inside them costs passes over matrix rows,
// not intersections of adjacency lists.
//
// Layout: block b's matrix F at foff[b], nd[b] x nd[b] (row-major, symmetric), the truss
// number of each of its edges at the endpoints' rows, BK_HIGH for a higher block's edge among
// its rows, 0 elsewhere; its rows' per-round ranges at roff[b]. Entries (the blocks' own
// edges, sorted by key): e_blk, e_i, e_j (rows, i < j), e_slot (edge-table slot, -1 while
// the edge is deleted). High pairs (a higher block's edge among a lower block's rows): hkey
// (sorted), h_blk, h_i, h_j.
//
// The descent: an entry at value a whose count at a (rows w with min(F[i][w], F[j][w]) >= a)
// is below a - 2 falls to its h-index below a; the next round takes an entry at a only when an
// entry at one of its rows fell from a or above to below a (per row the range (lo, hi] of the
// falls of the round, kept as atomic maxima of hi and of BK_BIG - lo, so that one memset
// clears them). Values change in place (any mix of old and new values is an upper bound).
#include "segmented.cuh"     // i64, u64, GRID_STRIDE
#include "../algos/edge_table.cuh"
#include "grid_barrier.cuh"  // grid_barrier (hornet/core)

#define BK_HIGH 32767
#define BK_BIG 0x7fffffff
#define BK_MAXN 1280         // the most rows of a block (the h-index histogram of one warp)
#define BK_WARPS 8           // warps of a 256-thread block

// control words (int32)
#define BK_FAIL 0            // a value fell to its block's bound, or an unhandled batch edge
#define BK_TOUCH 1           // batch edges that were block entries or high pairs
#define BK_NSPARSE 2         // bk_insert: batch edges outside the blocks (listed first)
#define BK_NBLOCK 3          // bk_insert: batch edges that joined a block (listed last)
#define BK_NEXTRA 4          // boundary keys appended (bk_insert)
#define BK_ROUNDS 5          // bk_descend: its rounds
#define BK_CHANGED 6         // 3 words: entries lowered in round r at BK_CHANGED + r % 3
#define BK_WORDS 12          // (words 9 to 11: bk_descend's grid barrier)

__device__ __forceinline__ i64 bk_find(const i64* __restrict__ keys, i64 n, i64 k) {
    i64 lo = 0, hi = n;
    while (lo < hi) {
        const i64 mid = (lo + hi) >> 1;
        if (keys[mid] < k) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Every row of an entry's range (the next round evaluates every entry at these rows).
__device__ __forceinline__ void bk_open_row(int* ranges, i64 r) {
    atomicMax(&ranges[2 * r], BK_BIG);
    atomicMax(&ranges[2 * r + 1], BK_BIG);
}

// Deleted edges (bsrc, bdst: nb of them, still in the table): a block entry's value and its
// slot go, and so do the high pairs of the same key in lower blocks; their rows open for the
// first round (ranges), their blocks are marked (active).
extern "C" __global__ void bk_delete(const int* __restrict__ bsrc, const int* __restrict__ bdst,
                                     i64 nb, const i64* __restrict__ ekey, i64 m,
                                     const int* __restrict__ e_blk, const int* __restrict__ e_i,
                                     const int* __restrict__ e_j, int* e_slot,
                                     const i64* __restrict__ hkey, i64 nh,
                                     const int* __restrict__ h_blk, const int* __restrict__ h_i,
                                     const int* __restrict__ h_j, short* F,
                                     const i64* __restrict__ foff, const int* __restrict__ nd,
                                     const int* __restrict__ roff, int* ranges, int* active,
                                     int* words) {
    GRID_STRIDE(x, nb) {
        const i64 key = et_key(bsrc[x], bdst[x]);
        const i64 q = bk_find(ekey, m, key);
        if (q < m && ekey[q] == key && e_slot[q] >= 0) {
            const int b = e_blk[q], i = e_i[q], j = e_j[q], n = nd[b];
            e_slot[q] = -1;
            F[foff[b] + (i64)i * n + j] = 0;
            F[foff[b] + (i64)j * n + i] = 0;
            bk_open_row(ranges, roff[b] + i);
            bk_open_row(ranges, roff[b] + j);
            active[b] = 1;
            atomicAdd(&words[BK_TOUCH], 1);
        }
        for (i64 h = bk_find(hkey, nh, key); h < nh && hkey[h] == key; ++h) {
            const int b = h_blk[h], i = h_i[h], j = h_j[h], n = nd[b];
            F[foff[b] + (i64)i * n + j] = 0;
            F[foff[b] + (i64)j * n + i] = 0;
            bk_open_row(ranges, roff[b] + i);
            bk_open_row(ranges, roff[b] + j);
            active[b] = 1;
            atomicAdd(&words[BK_TOUCH], 1);
        }
    }
}

// Inserted edges (their table slots, keys in tkeys): a block entry's pair takes its slot back at
// the block's size nd (bk_newbound lowers it), a high pair BK_HIGH (top[b] too); the block
// gains an entry (gained). The slots are listed in out: the edges outside every block first
// (BK_NSPARSE of them), those that joined a block last (BK_NBLOCK; their entries in out_q, at
// the same places). An edge outside the entries with an end among a block's vertices (vmask:
// a bit per block, nv vertices; both ends there too: a pair that was no entry stays on the
// boundary) is appended to that block's boundary keys (xkey, xblk: room for xcap).
extern "C" __global__ void bk_insert(const i64* __restrict__ tkeys,
                                     const i64* __restrict__ slots, i64 nb,
                                     const i64* __restrict__ ekey, i64 m,
                                     const int* __restrict__ e_blk, const int* __restrict__ e_i,
                                     const int* __restrict__ e_j, int* e_slot,
                                     const i64* __restrict__ hkey, i64 nh,
                                     const int* __restrict__ h_blk, const int* __restrict__ h_i,
                                     const int* __restrict__ h_j, short* F,
                                     const i64* __restrict__ foff, const int* __restrict__ nd,
                                     int* gained, int* top, const i64* __restrict__ vmask, i64 nv,
                                     i64* xkey, int* xblk, i64 xcap, i64* out, int* out_q,
                                     int* words) {
    GRID_STRIDE(x, nb) {
        const i64 key = tkeys[slots[x]];
        const int u = (int)(key >> 32), v = (int)(key & 0xffffffffLL);
        const i64 q = bk_find(ekey, m, key);
        for (i64 h = bk_find(hkey, nh, key); h < nh && hkey[h] == key; ++h) {
            const int b = h_blk[h], i = h_i[h], j = h_j[h], n = nd[b];
            F[foff[b] + (i64)i * n + j] = BK_HIGH;
            F[foff[b] + (i64)j * n + i] = BK_HIGH;
            atomicAdd(&gained[b], 1);
            atomicMax(&top[b], BK_HIGH);
            atomicAdd(&words[BK_TOUCH], 1);
        }
        if (q < m && ekey[q] == key) {
            const int b = e_blk[q], i = e_i[q], j = e_j[q], n = nd[b];
            e_slot[q] = (int)slots[x];
            F[foff[b] + (i64)i * n + j] = (short)n;
            F[foff[b] + (i64)j * n + i] = (short)n;
            atomicAdd(&gained[b], 1);
            atomicAdd(&words[BK_TOUCH], 1);
            const int at = (int)nb - 1 - atomicAdd(&words[BK_NBLOCK], 1);
            out[at] = slots[x];
            out_q[at] = (int)q;
            continue;
        }
        out[atomicAdd(&words[BK_NSPARSE], 1)] = slots[x];
        const i64 mu = u < nv ? vmask[u] : 0, mv = v < nv ? vmask[v] : 0;
        for (i64 bits = mu | mv; bits; bits &= bits - 1) {
            const i64 at = atomicAdd(&words[BK_NEXTRA], 1);
            if (at >= xcap) { atomicOr(&words[BK_FAIL], 4); break; }
            xkey[at] = key;
            xblk[at] = __ffsll(bits) - 1;
        }
    }
}

// The entries that joined a block (out_q[nb - nblock .. nb), a warp each) at their upper bound:
// their triangles in the block plus 2 (at most nd), the block's top[b] at least that; each is
// marked for the descent's first round (efirst == stamp).
extern "C" __global__ void bk_newbound(const int* __restrict__ out_q, i64 nb, i64 nblock,
                                       const int* __restrict__ e_blk,
                                       const int* __restrict__ e_i,
                                       const int* __restrict__ e_j, short* F,
                                       const i64* __restrict__ foff,
                                       const int* __restrict__ nd, int* top, int* efirst,
                                       int stamp) {
    const unsigned lane = threadIdx.x & 31;
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 x = (((i64)blockIdx.x * blockDim.x) + threadIdx.x) >> 5; x < nblock; x += warps) {
        const int q = out_q[nb - nblock + x], b = e_blk[q], i = e_i[q], j = e_j[q], n = nd[b];
        const short* Fi = F + foff[b] + (i64)i * n;
        const short* Fj = F + foff[b] + (i64)j * n;
        int c = 0;
        for (int w = lane; w < n; w += 32) c += __ldcg(Fi + w) > 0 && __ldcg(Fj + w) > 0;
        for (int o = 16; o; o >>= 1) c += __shfl_xor_sync(0xffffffffu, c, o);
        if (lane == 0) {
            const int bound = c + 2 < n ? c + 2 : n;
            F[foff[b] + (i64)i * n + j] = (short)bound;
            F[foff[b] + (i64)j * n + i] = (short)bound;
            atomicMax(&top[b], bound);
            efirst[q] = stamp;
        }
    }
}

// Upper bounds after an insertion: an old entry of a block that gained g entries, at a value
// below top[b] (the highest value a new entry of it may reach), rises to at most
// min(value + g, nd) (an inserted edge raises a number by at most one; one at top or above
// would rise only if its level gained an entry) and is marked for the first round (efirst).
extern "C" __global__ void bk_raise(const int* __restrict__ e_blk, const int* __restrict__ e_i,
                                    const int* __restrict__ e_j, const int* __restrict__ e_slot,
                                    i64 m, short* F, const i64* __restrict__ foff,
                                    const int* __restrict__ nd, const int* __restrict__ gained,
                                    const int* __restrict__ top, int* efirst, int stamp) {
    GRID_STRIDE(q, m) {
        const int b = e_blk[q], g = gained[b];
        if (g == 0 || e_slot[q] < 0 || efirst[q] == stamp) continue;
        const int i = e_i[q], j = e_j[q], n = nd[b];
        short* p = F + foff[b] + (i64)i * n + j;
        const int a = *p;
        if (a >= top[b]) continue;
        const int up = a + g < n ? a + g : n;
        if (up > a) {
            *p = (short)up;
            F[foff[b] + (i64)j * n + i] = (short)up;
            efirst[q] = stamp;
        }
    }
}

// The descent, one cooperative launch: rounds over the entries (a warp each) with a grid
// barrier between them, until a round lowers nothing or a value falls to xfail[b] or below
// (BK_FAIL). Round r reads the row ranges at ranges + (r % 3) * 2 * rows and records its
// falls at the next buffer; the one after is cleared meanwhile (it was read a round before),
// and so is the next round's counter. The first round also takes every entry marked
// efirst == first (first > 0).
extern "C" __global__ void bk_descend(const int* __restrict__ e_blk, const int* __restrict__ e_i,
                                      const int* __restrict__ e_j, const int* __restrict__ e_slot,
                                      i64 m, short* F, const i64* __restrict__ foff,
                                      const int* __restrict__ nd, const int* __restrict__ roff,
                                      const int* __restrict__ xfail,
                                      const int* __restrict__ efirst, int first, int* ranges,
                                      i64 rows, int max_rounds, int* words, unsigned* bar) {
    __shared__ int hist[BK_WARPS][BK_MAXN + 2];
    const unsigned lane = threadIdx.x & 31;
    int* H = hist[threadIdx.x >> 5];
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    const i64 gtid = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < max_rounds; ++r) {
        const int* cur = ranges + (i64)(r % 3) * 2 * rows;
        int* nxt = ranges + (i64)((r + 1) % 3) * 2 * rows;
        int* old = ranges + (i64)((r + 2) % 3) * 2 * rows;
        if (r > 0) {
            for (i64 x = gtid; x < 2 * rows; x += (i64)gridDim.x * blockDim.x) old[x] = 0;
        }
        if (gtid == 0) words[BK_CHANGED + (r + 1) % 3] = 0;
        for (i64 q = gtid >> 5; q < m; q += warps) {
            if (e_slot[q] < 0) continue;
            const int b = e_blk[q], i = e_i[q], j = e_j[q], n = nd[b];
            const short* Fi = F + foff[b] + (i64)i * n;
            const short* Fj = F + foff[b] + (i64)j * n;
            const int a = *(volatile const short*)(Fi + j);
            if (a <= 2) continue;
            if (!(r == 0 && first > 0 && efirst[q] == first)) {
                const i64 ri = roff[b] + i, rj = roff[b] + j;
                const int hi_i = __ldcg(cur + 2 * ri), lo_i = BK_BIG - __ldcg(cur + 2 * ri + 1);
                const int hi_j = __ldcg(cur + 2 * rj), lo_j = BK_BIG - __ldcg(cur + 2 * rj + 1);
                if (!((lo_i < a && a <= hi_i) || (lo_j < a && a <= hi_j))) continue;
            }
            int c = 0;
            for (int w = lane; w < n; w += 32) {
                const int x = min((int)__ldcg(Fi + w), (int)__ldcg(Fj + w));
                c += x >= a;
            }
            for (int o = 16; o; o >>= 1) c += __shfl_xor_sync(0xffffffffu, c, o);
            if (c >= a - 2) continue;
            // the h-index below a: the largest k < a with at least k - 2 rows at k or above
            for (int k = lane; k <= a; k += 32) H[k] = 0;
            __syncwarp();
            for (int w = lane; w < n; w += 32) {
                const int x = min(min((int)__ldcg(Fi + w), (int)__ldcg(Fj + w)), a);
                if (x >= 3) atomicAdd(&H[x], 1);
            }
            __syncwarp();
            int acc = H[a], nb = 2;
            for (int top = a - 1; top > 2; top -= 32) {
                const int k = top - (int)lane;
                int v = k > 2 ? H[k] : 0;
                for (int o = 1; o < 32; o <<= 1) {          // inclusive prefix over the lanes
                    const int y = __shfl_up_sync(0xffffffffu, v, o);
                    if ((int)lane >= o) v += y;
                }
                const bool ok = k > 2 && acc + v >= k - 2;
                const unsigned hit = __ballot_sync(0xffffffffu, ok);
                if (hit) { nb = top - (__ffs(hit) - 1); break; }
                acc += __shfl_sync(0xffffffffu, v, 31);
            }
            __syncwarp();
            if (lane == 0) {
                F[foff[b] + (i64)i * n + j] = (short)nb;
                F[foff[b] + (i64)j * n + i] = (short)nb;
                const i64 ri = roff[b] + i, rj = roff[b] + j;
                atomicMax(&nxt[2 * ri], a);
                atomicMax(&nxt[2 * ri + 1], BK_BIG - nb);
                atomicMax(&nxt[2 * rj], a);
                atomicMax(&nxt[2 * rj + 1], BK_BIG - nb);
                atomicAdd(&words[BK_CHANGED + r % 3], 1);
                if (nb <= xfail[b]) atomicOr(&words[BK_FAIL], 1);
            }
        }
        __threadfence();
        grid_barrier(bar);
        const int changed = *(volatile int*)&words[BK_CHANGED + r % 3];
        const int fail = *(volatile int*)&words[BK_FAIL];
        if (gtid == 0) words[BK_ROUNDS] = r + 1;
        if (changed == 0 || fail) return;
    }
    if (gtid == 0) atomicOr(&words[BK_FAIL], 8);     // (out of rounds)
}

// The values of the entries of the blocks marked in touched (active or gained) into the
// table's truss column; every block's lowest value (as BK_HIGH - floor, atomic maximum) into
// floorinv; for the entries that joined a block in this batch (out_q[at], at from nb - nblock
// to nb), their values into low[at].
extern "C" __global__ void bk_write(const int* __restrict__ e_blk, const int* __restrict__ e_i,
                                    const int* __restrict__ e_j, const int* __restrict__ e_slot,
                                    i64 m, const short* __restrict__ F,
                                    const i64* __restrict__ foff, const int* __restrict__ nd,
                                    const int* __restrict__ active,
                                    const int* __restrict__ gained, int* truss, int* floorinv) {
    GRID_STRIDE(q, m) {
        const int s = e_slot[q];
        if (s < 0) continue;
        const int b = e_blk[q], n = nd[b];
        const int a = F[foff[b] + (i64)e_i[q] * n + e_j[q]];
        if (active[b] || gained[b]) truss[s] = a;
        atomicMax(&floorinv[b], BK_HIGH - a);
    }
}

extern "C" __global__ void bk_joined(const int* __restrict__ out_q, i64 nb, i64 nblock,
                                     const int* __restrict__ e_blk, const int* __restrict__ e_i,
                                     const int* __restrict__ e_j, const short* __restrict__ F,
                                     const i64* __restrict__ foff, const int* __restrict__ nd,
                                     int* low) {
    GRID_STRIDE(x, nblock) {
        const i64 at = nb - nblock + x;
        const int q = out_q[at], b = e_blk[q], n = nd[b];
        low[at] = F[foff[b] + (i64)e_i[q] * n + e_j[q]];
    }
}

// The boundary's highest numbers: per key (an edge at a block's vertices outside it and its
// higher blocks), its current truss number (when it is an edge) into bmax[block].
extern "C" __global__ void bk_boundary(const i64* __restrict__ bkey,
                                       const int* __restrict__ bblk, i64 n,
                                       const i64* __restrict__ tkeys, int tshift,
                                       const int* __restrict__ truss, int* bmax) {
    GRID_STRIDE(x, n) {
        const i64 s = et_find(tkeys, tshift, bkey[x]);
        if (s >= 0) atomicMax(&bmax[bblk[x]], truss[s]);
    }
}

// Every present entry's slot gets stamp in mark (the deletion's seeds skip block edges).
extern "C" __global__ void bk_mark(const int* __restrict__ e_slot, i64 m, int* mark, int stamp) {
    GRID_STRIDE(q, m) {
        const int s = e_slot[q];
        if (s >= 0) mark[s] = stamp;
    }
}
