// CUDA kernels of DynamicBFS (hornet/algos/bfs/dynamic.py; the steps are described there).
//
// Compiled once per process by cupy.RawModule. Graphs are read through the pointer view
// (vertex v's list: deg[v] int32 at device address ptr[v]). Per-vertex state: level (int32,
// -1 unreached; compared as unsigned, so unreached is the largest value and atomicMin lowers
// it), cnt (parents on the level above), old (level before the update; 0 at rest), flag (0, CHANGED,
// MARKED, ORPHAN), parent. Lists (changed vertices, frontiers, orphans, seeds) are appended
// through atomic counters in `counters` (u64):
//   [0] changed vertices  [1] seeds  [2] scanned entries  [3] orphans
//   [4] 0xffffffff - lowest seed level  [5] highest seed level  [16 + r] frontier of round r
// Seeds are not sorted: relaxation round `cur` expands the previous round's frontier and the
// seeds whose level is `cur` (each seed vertex once: `expanded` claims it).
// Adjacency scans use one warp per vertex (lanes stride the list) so hubs are shared by 32
// threads; every kernel is a grid-stride loop, correct for any grid.

typedef long long i64;
typedef unsigned long long u64;

#define CHANGED 1
#define MARKED 2
#define ORPHAN 3
#define FULL_MASK 0xffffffffu

// warp-uniform loop over items [0, count): every lane of a warp sees the same item
#define WARP_ITEMS(i, count)                                                               \
    const int lane = threadIdx.x & 31;                                                     \
    const i64 warp_stride = ((i64)gridDim.x * blockDim.x) >> 5;                            \
    for (i64 i = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < (i64)(count);      \
         i += warp_stride)

#define GRID_ITEMS(k, count)                                                               \
    for (i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x; k < (i64)(count);            \
         k += (i64)gridDim.x * blockDim.x)

__device__ __forceinline__ void pair_at(const int* s, const int* d, i64 k, int undirected,
                                        int& a, int& b) {
    if (undirected) {
        i64 i = k >> 1;
        if (k & 1) { a = d[i]; b = s[i]; } else { a = s[i]; b = d[i]; }
    } else {
        a = s[k]; b = d[k];
    }
}

__device__ __forceinline__ int warp_sum_int(int v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}

__device__ __forceinline__ u64 warp_min_u64(u64 v) {
    for (int o = 16; o > 0; o >>= 1) {
        u64 w = __shfl_xor_sync(FULL_MASK, v, o);
        v = w < v ? w : v;
    }
    return v;
}

__device__ __forceinline__ void push(int* list, u64* counter, int v) {
    list[atomicAdd(counter, 1ull)] = v;
}

__device__ __forceinline__ void seed_bounds(u64* counters, u64 t) {
    atomicMax(&counters[4], 0xffffffffull - t);
    atomicMax(&counters[5], t);
}

// construction: cnt[x] += 1 for every edge u -> x with level[x] == level[u] + 1
extern "C" __global__ void dbfs_initial_counts(const int* deg, const i64* ptr, i64 n,
                                               const int* level, int* cnt) {
    WARP_ITEMS(u, n) {
        int lu = level[u];
        if (lu < 0) continue;
        int d = deg[u];
        const int* row = (const int*)ptr[u];
        for (int j = lane; j < d; j += 32) {
            int x = row[j];
            if (level[x] == lu + 1) atomicAdd(&cnt[x], 1);
        }
    }
}

// 1. counts at the old levels: deleted pairs (first nd) take a parent, inserted ones give one.
// With `seed` (a batch without deletions: no level moves before the seeds), inserted pairs
// a -> b that shorten b's path also seed b here (see dbfs_insert_seeds).
extern "C" __global__ void dbfs_counts(const int* ds, const int* dd, i64 nd, const int* is,
                                       const int* id, i64 ni, int undirected,
                                       const int* level, int* cnt, int seed, u64* seed_key,
                                       int* seed_parent, u64* counters) {
    GRID_ITEMS(k, nd + ni) {
        int a, b;
        if (k < nd) pair_at(ds, dd, k, undirected, a, b);
        else pair_at(is, id, k - nd, undirected, a, b);
        int la = level[a];
        int lb = level[b];
        if (la >= 0 && la + 1 == lb) atomicAdd(&cnt[b], k < nd ? -1 : 1);
        if (seed && la >= 0 && (unsigned)(la + 1) < (unsigned)lb) {
            u64 pos = atomicAdd(&counters[1], 1ull);
            seed_key[pos] = ((u64)(la + 1) << 32) | (unsigned)b;
            seed_parent[pos] = a;
            seed_bounds(counters, (u64)(la + 1));
        }
    }
}

// 2a. deleted pairs whose head lost its last parent: marked, listed in `changed`
extern "C" __global__ void dbfs_candidates(const int* ds, const int* dd, i64 nd, int undirected,
                                           const int* level, const int* cnt, int* flag,
                                           int* old, int* changed, u64* counters) {
    GRID_ITEMS(k, nd) {
        int a, b;
        pair_at(ds, dd, k, undirected, a, b);
        int lb = level[b];
        if (lb > 0 && cnt[b] == 0 && atomicCAS(&flag[b], 0, MARKED) == 0) {
            old[b] = lb;
            push(changed, &counters[0], b);
        }
    }
}

// 2b. one marking round over changed[lo, hi): each marked w takes one parent from each child
// (out-neighbour on level[w] + 1); a child left with none is marked and appended
extern "C" __global__ void dbfs_mark(const int* deg, const i64* ptr, const int* level, int* cnt,
                                     int* flag, int* old, int* changed, i64 lo, i64 hi,
                                     u64* counters) {
    WARP_ITEMS(i, hi - lo) {
        int w = changed[lo + i];
        int lw = level[w];
        int d = deg[w];
        const int* row = (const int*)ptr[w];
        for (int j = lane; j < d; j += 32) {
            int x = row[j];
            if (level[x] == lw + 1 && flag[x] != MARKED) {
                if (atomicSub(&cnt[x], 1) == 1) {      // its last parent
                    flag[x] = MARKED;
                    old[x] = lw + 1;
                    push(changed, &counters[0], x);
                }
            }
        }
        if (lane == 0) atomicAdd(&counters[2], (u64)d);
    }
}

// 3a. marked vertices become unreached
extern "C" __global__ void dbfs_reset(const int* changed, i64 nm, int* level, int* cnt,
                                      int* parent, int want_parent) {
    GRID_ITEMS(i, nm) {
        int v = changed[i];
        level[v] = -1;
        cnt[v] = 0;
        if (want_parent) parent[v] = -1;
    }
}

// 3b. seed of a marked vertex: 1 + the lowest level among its in-neighbours (marked ones are
// unreached now); key = (level << 32) | vertex
extern "C" __global__ void dbfs_marked_seeds(const int* ideg, const i64* iptr, const int* level,
                                             const int* changed, i64 nm, u64* seed_key,
                                             int* seed_parent, u64* counters) {
    WARP_ITEMS(i, nm) {
        int v = changed[i];
        int d = ideg[v];
        const int* row = (const int*)iptr[v];
        u64 best = ~0ull;
        for (int j = lane; j < d; j += 32) {
            int u = row[j];
            int lu = level[u];
            if (lu >= 0) {
                u64 key = ((u64)(unsigned)lu << 32) | (unsigned)u;
                best = key < best ? key : best;
            }
        }
        best = warp_min_u64(best);
        if (lane == 0) {
            atomicAdd(&counters[2], (u64)d);
            if (best != ~0ull) {
                u64 t = (best >> 32) + 1;
                u64 pos = atomicAdd(&counters[1], 1ull);
                seed_key[pos] = (t << 32) | (unsigned)v;
                seed_parent[pos] = (int)(best & 0xffffffffull);
                seed_bounds(counters, t);
            }
        }
    }
}

// 3c. inserted pairs a -> b that shorten b's path seed b
extern "C" __global__ void dbfs_insert_seeds(const int* is, const int* id, i64 ni, int undirected,
                                             const int* level, u64* seed_key, int* seed_parent,
                                             u64* counters) {
    GRID_ITEMS(k, ni) {
        int a, b;
        pair_at(is, id, k, undirected, a, b);
        int la = level[a];
        if (la >= 0 && (unsigned)(la + 1) < (unsigned)level[b]) {
            u64 pos = atomicAdd(&counters[1], 1ull);
            seed_key[pos] = ((u64)(la + 1) << 32) | (unsigned)b;
            seed_parent[pos] = a;
            seed_bounds(counters, (u64)(la + 1));
        }
    }
}

// 3d. every vertex takes its best seed. The level before the update is the largest value any
// lowering atomicMin returned (levels only fall), so old (0 at rest) takes their maximum;
// marked vertices keep the old level recorded while marking. The first to flag a vertex lists
// it as changed.
extern "C" __global__ void dbfs_seed_apply(const u64* seed_key, const u64* nseeds, int* level,
                                           int* flag, int* old, int* changed, u64* counters) {
    GRID_ITEMS(i, *nseeds) {
        int v = (int)(seed_key[i] & 0xffffffffull);
        unsigned t = (unsigned)(seed_key[i] >> 32);
        unsigned o = atomicMin((unsigned*)&level[v], t);
        if (o > t && flag[v] != MARKED) {
            atomicMax((unsigned*)&old[v], o);
            if (flag[v] == 0 && atomicCAS(&flag[v], 0, CHANGED) == 0)
                push(changed, &counters[0], v);
        }
    }
}

// 4. one relaxation level: the previous round's frontier (level cur) and the seeds of level
// cur that still hold (each vertex once) lower their out-neighbours to cur + 1 where that is
// shorter; the vertices lowered form the next frontier
extern "C" __global__ void dbfs_relax(const int* deg, const i64* ptr, int* level, int* parent,
                                      int want_parent, int* flag, int* old, int* changed,
                                      int* expanded, const int* frontier, const u64* fcount,
                                      const u64* seed_key, const int* seed_parent, i64 ns,
                                      int cur, int* next, u64* ncount, u64* counters) {
    const unsigned nl = (unsigned)(cur + 1);
    const i64 nf = (i64)*fcount;
    WARP_ITEMS(i, nf + ns) {
        int w;
        if (i < nf) {
            w = frontier[i];
        } else {
            u64 key = seed_key[i - nf];
            if ((unsigned)(key >> 32) != (unsigned)cur) continue;
            w = (int)(key & 0xffffffffull);
            if (level[w] != cur) continue;
            int first = 0;
            if (lane == 0) {
                first = atomicExch(&expanded[w], 1) == 0;
                if (first && want_parent) parent[w] = seed_parent[i - nf];   // a seed of level cur
            }
            if (!__shfl_sync(FULL_MASK, first, 0)) continue;
        }
        int d = deg[w];
        const int* row = (const int*)ptr[w];
        for (int j = lane; j < d; j += 32) {
            int x = row[j];
            if ((unsigned)level[x] > nl) {
                unsigned o = atomicMin((unsigned*)&level[x], nl);
                if (o > nl) {                       // this thread lowered it
                    if (want_parent) parent[x] = w;
                    if (flag[x] != MARKED) {
                        atomicMax((unsigned*)&old[x], o);
                        if (flag[x] == 0 && atomicCAS(&flag[x], 0, CHANGED) == 0)
                            push(changed, &counters[0], x);
                    }
                    push(next, ncount, x);
                }
            }
        }
        if (lane == 0) atomicAdd(&counters[2], (u64)d);
    }
}

// 5a. deleted pairs a -> b where a was b's parent and b keeps its level: b needs a new one
extern "C" __global__ void dbfs_deleted_orphans(const int* ds, const int* dd, i64 nd,
                                                int undirected, const int* level,
                                                const int* parent, int* flag, int* orphans,
                                                u64* counters) {
    GRID_ITEMS(k, nd) {
        int a, b;
        pair_at(ds, dd, k, undirected, a, b);
        if (level[b] > 0 && parent[b] == a && flag[b] == 0 &&
            atomicCAS(&flag[b], 0, ORPHAN) == 0)
            push(orphans, &counters[3], b);
    }
}

// 5b. changed vertices recount their parents; their out-neighbours outside the changed set
// adjust their counts by the difference of old and new level (marked vertices' old share was
// removed while marking) and lose them as parent where no longer valid
extern "C" __global__ void dbfs_repair(const int* deg, const i64* ptr, const int* ideg,
                                       const i64* iptr, int undirected, const int* level,
                                       int* cnt, const int* parent, int want_parent, int* flag,
                                       const int* old, const int* changed, const u64* nchanged,
                                       int* orphans, u64* counters) {
    WARP_ITEMS(i, *nchanged) {
        int v = changed[i];
        int lv = level[v];
        int c = 0;
        if (lv > 0 && !undirected) {
            int d = ideg[v];
            const int* row = (const int*)iptr[v];
            for (int j = lane; j < d; j += 32) c += level[row[j]] == lv - 1;
            if (lane == 0) atomicAdd(&counters[2], (u64)d);
        }
        int ov = flag[v] == MARKED ? -1 : old[v];
        int d = deg[v];
        const int* row = (const int*)ptr[v];
        for (int j = lane; j < d; j += 32) {
            int x = row[j];
            int lx = level[x];
            if (undirected && lv > 0 && lx == lv - 1) c += 1;
            int fx = flag[x];
            if ((fx != 0 && fx != ORPHAN) || lx <= 0) continue;
            bool now = lv >= 0 && lv + 1 == lx;
            bool before = ov >= 0 && ov + 1 == lx;
            if (now != before) atomicAdd(&cnt[x], now ? 1 : -1);
            if (want_parent && !now && fx == 0 && parent[x] == v &&
                atomicCAS(&flag[x], 0, ORPHAN) == 0)
                push(orphans, &counters[3], x);
        }
        c = warp_sum_int(c);
        if (lane == 0) {
            cnt[v] = c;
            atomicAdd(&counters[2], (u64)d);
        }
    }
}

// 5c. orphans take an in-neighbour on the level above (one exists: their count is positive)
extern "C" __global__ void dbfs_fix_orphans(const int* ideg, const i64* iptr, const int* level,
                                            int* parent, const int* orphans, const u64* norphans,
                                            u64* counters) {
    WARP_ITEMS(i, *norphans) {
        int x = orphans[i];
        int want = level[x] - 1;
        int d = ideg[x];
        const int* row = (const int*)iptr[x];
        for (int j0 = 0; j0 < d; j0 += 32) {
            int j = j0 + lane;
            bool hit = j < d && level[row[j]] == want;
            unsigned ballot = __ballot_sync(FULL_MASK, hit);
            if (ballot) {
                int first = __ffs(ballot) - 1;
                if (lane == first) parent[x] = row[j];
                break;
            }
        }
        if (lane == 0) atomicAdd(&counters[2], (u64)d);
    }
}

// 5d. flags, seed claims and old levels back to zero
extern "C" __global__ void dbfs_clear_flags(const int* changed, const u64* nchanged,
                                            const int* orphans, const u64* norphans, int* flag,
                                            int* expanded, int* old) {
    i64 a = (i64)*nchanged;
    GRID_ITEMS(k, a + (i64)*norphans) {
        int v = k < a ? changed[k] : orphans[k - a];
        flag[v] = 0;
        expanded[v] = 0;
        old[v] = 0;
    }
}
