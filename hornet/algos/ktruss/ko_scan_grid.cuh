// ko_scan's control words and grid helpers (included by dynamic_gpu.cu after its device
// helpers ldcg, num_warps and grid_barrier; see the ko_scan comment there).
#pragma once

#define KS_PEEL_ROUNDS 0  // out: the peeling rounds (of all rounds)
#define KS_K 1           // out: the last level scanned
#define KS_HEAD 2        // out: the head rank counter (int64 bits)
#define KS_TAIL 3        // out: tail ranks given out (from the argument tail)
#define KS_STATUS 4      // out: KS_DONE, or why it stopped
#define KS_STAMPS 5      // out: stamps used
#define KS_ALL 6         // the level's candidates
#define KS_ABORT 7       // set before a barrier by block 0, thread 0
#define KS_LEVELS 8      // out
#define KS_ROUNDS 9      // out
#define KS_FELL 10       // mode 2: the edges the descent lowered
#define KS_NEXT 12       // mode 2, 2 slots: the descent's next worklist, by round parity
#define KS_TOUCHED 14    // out: ctr[C_TOUCHED] at the end
#define KS_SPUN 15       // out: a grid barrier timed out
#define KS_CNT 16        // 3 slots: list lengths appended in phase ph % 3
#define KS_UNITS 20      // out: queue units served by ks_async's phases (peelings, candidates)
#define KS_BUSY 21       // out: units served by the asynchronous phases (bits 44-63) and the SM
                         // cycles their warps spent running them (bits 0-43)
#define KS_RAISED 22     // mode 3: the edges the raise moved (the descent's worklist)
#define KS_HEADN 23      // mode 3: ranks given out at the start of a level
#define KS_TIME 24       // out, KS_PH_KINDS words: nanoseconds spent in each kind of phase
#define KS_DEPTH 31      // out: the longest chain of dependent units of those phases
#define KS_WORDS 32
#define KS_LEVEL_STAMPS (1 << 16)  // mode 4: member stamps by level (levels below this)

// Kinds of phase (next_phase's argument; the time from the last barrier to the end of this
// one, as block 0 sees it, goes to ctl[KS_TIME + kind]): candidate counts and decisions,
// candidate pushes, peel counts, peel pushes (or the live members), the descent's h-index,
// the descent's pushes, anything else.
#define KS_PH_CAND 0
#define KS_PH_PUSH 1
#define KS_PH_PEEL 2
#define KS_PH_PEEL_PUSH 3
#define KS_PH_HINDEX 4
#define KS_PH_DPUSH 5
#define KS_PH_OTHER 6
#define KS_PH_KINDS 7

#define KS_DONE 0
#define KS_SLOW 1        // deadline or region limit
#define KS_NO_STAMPS 2
#define KS_NOT_EMPTY 3

#define KS_MAX_PARTS 64

// Warps per edge of a counting phase over n edges: enough for a few edges (a hub's long list)
// to fill the grid (the same value in every thread).
__device__ __forceinline__ int ko_parts(i64 n) {
    const i64 p = (2 * num_warps()) / (n > 0 ? n : 1);
    return (int)(p < 1 ? 1 : (p > KS_MAX_PARTS ? KS_MAX_PARTS : p));
}

__device__ __forceinline__ u64 ks_now() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

struct KsGrid {
    u64* ctl; unsigned* bar; int ph; u64 t;
    int q;               // asynchronous phases begun (their queue words alternate: ko_async.cuh)

    __device__ void sync() { grid_barrier(bar); }
    __device__ void next_phase(int kind = KS_PH_OTHER) {
        sync();
        ++ph;
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            ctl[KS_CNT + (ph + 1) % 3] = 0;
            const u64 now = ks_now();
            ctl[KS_TIME + kind] += now - t;
            t = now;
        }
    }
    __device__ u64* slot() { return &ctl[KS_CNT + ph % 3]; }
    __device__ i64 last() { return (i64)ldcg(&ctl[KS_CNT + (ph + 2) % 3]); }
};

// Mode 0's extra seeds: extra[:ne] (distinct slots) sorted by lev[:ne], their levels when the
// scan started (an edge's level changes only when the scan reaches it). The extras of level k
// go to seeds[at:] (grid-stride: a barrier must pass before they are read); returns how many.
__device__ __forceinline__ i64 ks_extras(const int* extra, const int* lev, i64 ne, int k,
                                         int* seeds, i64 at) {
    const i64 lo = lower_bound(lev, ne, k), hi = lower_bound(lev, ne, k + 1);
    GRID_STRIDE(j, hi - lo) seeds[at + j] = extra[lo + j];
    return hi - lo;
}

// The lowest level above k that holds extra seeds (k + 1 when none does).
__device__ __forceinline__ int ks_next_extra_level(const int* lev, i64 ne, int k) {
    const i64 e = lower_bound(lev, ne, k + 1);
    return e < ne ? lev[e] : k + 1;
}
