// List removals done by warps on their own (hornet/batch/gpu/kernels.py: remove_lists and the
// queued removal, hornet/batch/gpu/queued_removal.py, launch them beside kernels.cu's).
//
// Compiled once per process by cupy.RawModule (NVRTC, -std=c++17); includes segmented.cuh.
// Same data as kernels.cu's removals: segment s has an old list of d0 = old_degree[s] items at
// src[s], rewritten at dst[s] (dst[s] == src[s]: in place); the ascending positions
// P = positions + seg_start[s] (seg_len[s] of them) disappear and survivor i lands on
// i - #(P < i); first[s] is the first item that moves (in place: P[0]).
#include "segmented.cuh"

// Warps of a block of remove_warp_pieces (the block takes PIECE_WARPS consecutive pieces a
// ticket, one a warp).
#define PIECE_WARPS 8

// Removal from the huge segments, one warp per piece. A segment's moving items [first, d0)
// are cut into pieces of 32 * W * STEPS items (numbered by plan_moves, listed by list_pieces;
// npieces on the device); B blocks a multiprocessor. A warp streams through its piece in steps of W windows of 32 items
// (all of a step read before any lane writes), ranking the survivors as it writes them
// (RemovedPositions, no search per item). In place, a survivor that lands inside the piece's
// own items lands on an item the warp has read already, so it is written at once; only the
// piece's first survivors, those that land before its first item (on the earlier pieces'
// items: at most as many as items removed before the piece), wait, in shared memory, until
// the pieces they land on are read (done[piece] = 1, set once a warp has read its piece).
// A warp never waits before it has read its own piece and flagged it, so every wait ends;
// and the pieces of a list run side by side instead of one after the other.
// Tickets (state[0]) hand out the pieces in numbered order, PIECE_WARPS a ticket, so a
// waited-for piece is always held by a running warp. ``state`` (zeroed by the caller): the
// ticket counter, then one flag per piece.
template <typename T, int W, int STEPS, int B>
__global__ void __launch_bounds__(32 * PIECE_WARPS, B)
remove_warp_pieces(const i64* __restrict__ src, const i64* __restrict__ dst,
                   const i64* __restrict__ old_degree, const i64* __restrict__ seg_start,
                   const i64* __restrict__ seg_len, const i64* __restrict__ positions,
                   const i64* __restrict__ first, const u64* __restrict__ npieces,
                   const i64* __restrict__ piece_base, const int* __restrict__ owner,
                   int* __restrict__ state) {
    constexpr i64 PIECE = 32 * W * STEPS;
    __shared__ T held[PIECE_WARPS][PIECE];
    __shared__ i64 taken;
    const i64 total = (i64)*npieces;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const unsigned below = (1u << lane) - 1u;
    volatile int* done = state + 1;
    T* H = held[warp];
    while (true) {
        if (threadIdx.x == 0) taken = atomicAdd(state, 1);
        __syncthreads();
        const i64 ticket = taken;
        __syncthreads();                             // taken is written again next round
        if (ticket * PIECE_WARPS >= total) break;
        const i64 t = ticket * PIECE_WARPS + warp;
        if (t >= total) continue;
        const i64 s = owner[t];
        const i64 k = t - piece_base[s];
        const i64 c = seg_len[s], d0 = old_degree[s], f = first[s];
        const i64* P = positions + seg_start[s];
        const T* O = (const T*)src[s];
        T* D = (T*)dst[s];
        const bool in_place = (const T*)D == O;
        const i64 lo = f + k * PIECE, hi = min(d0, lo + PIECE);
        RemovedPositions gone(P, c, warp_lower_bound(P, c, lo));
        const i64 r = gone.j;                        // items removed before the piece
        const i64 base = lo - r;                     // where its first survivor lands
        const i64 edge = in_place ? lo : 0;          // survivors landing before it wait
        i64 kept = 0;                                // survivors of the piece
        for (i64 x = lo; x < hi; x += 32 * W) {
            T v[W];
            read_windows(O, hi, x, v);
            __syncwarp();
#pragma unroll
            for (int b = 0; b < W; ++b) {
                const i64 i = x + 32 * b + lane;
                const i64 before = gone.j;
                const unsigned bits = gone.window(x + 32 * b);
                const i64 left = hi - (x + 32 * b);  // items of the window in the piece
                const unsigned valid = left >= 32 ? 0xFFFFFFFFu
                                     : left > 0 ? (1u << left) - 1u : 0u;
                kept += __popc(valid & ~bits);
                if (i < hi && !((bits >> lane) & 1u)) {
                    const i64 o = i - before - __popc(bits & below);
                    if (o >= edge) D[o] = v[b];
                    else H[o - base] = v[b];
                }
            }
        }
        if (!in_place) continue;
        __syncwarp();                                // H written; the piece read
        if (lane == 0) {
            __threadfence();
            done[t] = 1;
        }
        const i64 nheld = min(r, kept);
        if (nheld > 0) {
            // the held survivors land on [base, base + nheld): items of pieces k0 .. k - 1
            const i64 k0 = (base - f) / PIECE;
            for (i64 q = t - k + k0 + lane; q < t; q += 32)
                while (done[q] == 0) {}
            __syncwarp();
            __threadfence();
            for (i64 j = lane; j < nheld; j += 32) D[base + j] = H[j];
        }
        __syncwarp();                                // H is reused by the next piece
    }
}

// Removal, one warp per listed segment (count[0] of them, on the device), as kernels.cu's
// remove_warp, with the next list's reads ahead: a warp's time goes to reaching its lists (a
// medium list is a step or a few), so while one list is rewritten the warp has the next
// list's numbers (its degree, first moving item, removed positions, blocks: one a lane, six
// lanes) and the list number after that in flight, and a list costs about one round trip to
// memory (its items and removed positions, read together) instead of three. Steps of W
// windows of 32 items from the first moving one on, all of a step read before any is
// written; survivors ranked while they are written (in place, a step's writes land before
// the items they come from and after every earlier step's writes, so on items already read).
// B blocks a multiprocessor.
__device__ __forceinline__ i64 list_number(int lane, i64 s, const i64* old_degree,
                                           const i64* first, const i64* seg_start,
                                           const i64* seg_len, const i64* src,
                                           const i64* dst) {
    switch (lane) {
    case 0: return old_degree[s];
    case 1: return first[s];
    case 2: return seg_start[s];
    case 3: return seg_len[s];
    case 4: return src[s];
    case 5: return dst[s];
    default: return 0;
    }
}

template <typename T, int W, int B>
__global__ void __launch_bounds__(256, B)
remove_warp_ahead(const i64* __restrict__ src, const i64* __restrict__ dst,
                  const i64* __restrict__ old_degree, const i64* __restrict__ seg_start,
                  const i64* __restrict__ seg_len, const i64* __restrict__ positions,
                  const i64* __restrict__ first, const i64* __restrict__ segs,
                  const u64* __restrict__ count) {
    const i64 nsel = (i64)*count;
    const i64 warps = ((i64)blockDim.x * gridDim.x) >> 5;
    const int lane = threadIdx.x & 31;
    const unsigned below = (1u << lane) - 1u;
    i64 w = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (w >= nsel) return;
    // this lane's number of the list at hand (lanes 0-5, list_number)
    i64 mine = list_number(lane, segs[w], old_degree, first, seg_start, seg_len, src, dst);
    i64 sn = w + warps < nsel ? segs[w + warps] : -1;
    while (true) {
        const i64 d0 = __shfl_sync(0xFFFFFFFFu, mine, 0);
        const i64 lo0 = __shfl_sync(0xFFFFFFFFu, mine, 1);
        const i64 ss = __shfl_sync(0xFFFFFFFFu, mine, 2);
        const i64 c = __shfl_sync(0xFFFFFFFFu, mine, 3);
        const T* O = (const T*)__shfl_sync(0xFFFFFFFFu, mine, 4);
        T* D = (T*)__shfl_sync(0xFFFFFFFFu, mine, 5);
        // this list's first step and removed positions ...
        T v[W];
        read_windows(O, d0, lo0, v);
        RemovedPositions gone(positions + ss, c, 0);   // none before first
        // ... then the next list's numbers and the list number after it, in flight meanwhile
        i64 snn = -1;
        if (sn >= 0) {
            mine = list_number(lane, sn, old_degree, first, seg_start, seg_len, src, dst);
            snn = w + 2 * warps < nsel ? segs[w + 2 * warps] : -1;
        }
        __syncwarp();
        for (i64 lo = lo0;;) {
#pragma unroll
            for (int b = 0; b < W; ++b) {
                const i64 i = lo + 32 * b + lane;
                const i64 before = gone.j;
                const unsigned bits = gone.window(lo + 32 * b);
                if (i < d0 && !((bits >> lane) & 1u)) D[i - before - __popc(bits & below)] = v[b];
            }
            lo += 32 * W;
            if (lo >= d0) break;
            read_windows(O, d0, lo, v);
            __syncwarp();
        }
        if (sn < 0) break;
        w += warps;
        sn = snn;
    }
}
