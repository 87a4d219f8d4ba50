// CUDA kernels of DynamicBFS (hornet/algos/bfs/dynamic.py describes the steps; the driver is
// hornet/algos/bfs/dynamic_gpu.py).
//
// One update is one launch of dbfs_update whose blocks are all resident (a cooperative launch,
// or a plain one of the same grid), and the phases (counts, marking passes, seeds, relaxation
// rounds or, for deletions alone, chase passes, repair, orphans) are separated by a grid
// barrier instead of kernel boundaries, so no
// list length or level range crosses to the host. All control decisions (loop ends, round
// counts) are taken from counters read right after a barrier, or noted by the last block to
// arrive at it, which every block sees alike. When the counts step leaves little work, block 0
// goes on alone and the others leave (the "one block" step below): the later phases deal their
// items over block 0's warps (Update::nblk) and their barriers are the block's own.
//
// Graphs are read through the pointer view (vertex v's list: deg[v] int32 at device address
// ptr[v]). Per-vertex state: level (int32, -1 unreached; compared as unsigned, so unreached is
// the largest value and atomicMin lowers it), cnt (parents on the level above), old (level
// before the update, as unsigned; 0 at rest), flag (0, CHANGED, MARKED, ORPHAN; 0 at rest),
// parent.
//
// Load balance (thread / warp / grid): the vertices of a phase are dealt to threads, one a
// lane. A vertex with at most `small_max` list entries (most of them in sparse and power-law
// graphs) is read by its own thread, UNROLL entries and their levels loaded before any is
// used; the others are read by the whole warp, one after the other, in passes of CHUNK
// entries (every lane loads UNROLL entries, one memory round trip per pass). Lists longer
// than CHUNK are not read by the warp that meets them: they are cut into chunks, appended to
// a chunk list, and after a barrier every warp of the grid takes chunks, so a hub costs
// deg / CHUNK passes spread over the whole device. Dealing the vertices to lanes (rather
// than one vertex a warp) lets a phase of many short lists finish in one or two memory
// round trips per thread instead of one chain of round trips per vertex a warp holds.
//
// Lists (changed vertices, two frontiers, orphans, seeds, chunks) are appended through atomic
// counters, one atomic per warp for all its lanes that append (warp-aggregated: a batch of
// 10^5 pairs would otherwise queue 10^5 atomics on one address; a relaxation round's seeds,
// one atomic per block). Counters that are reused within an update rotate over three slots
// (a slot is reset one use ahead of its next use, after everyone has read it). Two counter sets
// alternate between updates: an update zeroes the other set for the next one and leaves its
// own for the statistics.
//
// Asynchronous phases (the kernel dbfs_update_async, GPUState.async_queue): marking, the relaxation together with
// the marked vertices' seeds, and the repair each drain a work queue (Update::drain) that
// fills while it is drained: a vertex marked or lowered is processed by whichever warp takes
// its slot next, and the long lists' chunks are queue items too, so a phase costs one grid
// barrier however many levels it spans. Each of these phases gives the same result in any
// order (see the work queue section of dynamic_update.cuh); the counts step and the phase
// boundaries keep their barriers.

#include "../algos/bfs/dynamic_update.cuh"  // Update, counters, queue keys (this folder)

// construction: cnt[x] += 1 for every edge u -> x with level[x] == level[u] + 1
extern "C" __global__ void dbfs_initial_counts(const int* deg, const i64* ptr, i64 n,
                                               const int* level, int* cnt) {
    const int lane = threadIdx.x & 31;
    WARP_LOOP(u, n) {
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


// One batch: deletions ds -> dd (nd directed pairs), insertions is -> id (ni pairs), both
// already applied to the graph; nv: vertices (no loop runs more rounds; one that would is
// stopped and reported in barrier[2]). mode: bit 0 undirected, bit 1 parents wanted, bit 2
// selects the counter set (the other one is zeroed for the next update), bit 3 settling
// (GPUState.settle), bit 4 the chase passes (GPUState.chase, with bit 3), bits 8-15 the
// longest list one thread reads (small_max; 0: every list by a warp), bits 16-23 the grid
// barrier's polling pause in units of 8 ns (0: none), bits 24-31 the most work the counts
// step may leave for the update to go on in block 0 alone (one_block_max; 0: never).
template <bool ASYNC>
__device__ __forceinline__ void dbfs_update_body(
        const u64* __restrict__ P, const int* deg, const i64* ptr, const int* ideg,
        const i64* iptr, const int* ds, const int* dd, const int* is, const int* id, i64 nd,
        i64 ni, i64 nv, int mode) {
    Update U;
    U.level = (int*)P[P_LEVEL];
    U.cnt = (int*)P[P_CNT];
    U.flag = (int*)P[P_FLAG];
    U.old = (unsigned*)P[P_OLD];
    U.parent = (int*)P[P_PARENT];
    U.qtag = (int*)P[P_QTAG];
    U.changed = (int*)P[P_CHANGED];
    U.front0 = (int*)P[P_FRONT0];
    U.front1 = (int*)P[P_FRONT1];
    U.orphans = (int*)P[P_ORPHANS];
    U.seeds = (u64*)P[P_SEEDS];
    U.chunks = (int2*)P[P_CHUNKS];
    u64* sets = (u64*)P[P_COUNTERS];
    U.C = sets + ((mode >> 2) & 1) * C_WORDS;
    u64* Cnext = sets + (((mode >> 2) & 1) ^ 1) * C_WORDS;
    U.bar = (unsigned*)P[P_BARRIER];
    U.times = (u64*)P[P_TIMES];
    U.deg = deg; U.ptr = ptr; U.ideg = ideg; U.iptr = iptr;
    U.undirected = mode & 1;
    U.want_parent = (mode >> 1) & 1;
    U.small_max = (mode >> 8) & 0xff;
    U.backoff_ns = ((mode >> 16) & 0xff) * 8;
    U.round = 0;
    U.use = 0;
    U.lane = threadIdx.x & 31;
    U.scanned = 0;
    U.direct_seeds = 0;
    U.seed_base = ni;
    U.tick = 0;
    U.phase = 0;
    U.async_mode = ASYNC;
    U.queue = (u64*)P[P_QUEUE];
    U.qcap_all = P[P_QCAP];
    U.qcap_relax = P[P_QCAP_RELAX];
    U.lmin = NO_LEVEL;
    U.lmax = 0;
    U.nblk = gridDim.x;
    U.use_queue(Q_MARK);
    __shared__ unsigned block_levels[2];
    if (threadIdx.x == 0) {
        block_levels[0] = NO_LEVEL;
        block_levels[1] = 0;
    }
    __syncthreads();
    U.block_levels = block_levels;
    U.stamp();
    U.phase = PH_COUNTS;
    const int und = U.undirected;
    const int wp = U.want_parent;
    const int lane = U.lane;
    int* level = U.level;
    int* cnt = U.cnt;
    int* flag = U.flag;
    u64* C = U.C;
    const bool del_only = nd > 0 && ni == 0;
    const bool ins_only = ni > 0 && nd == 0;
    // deletions alone in an undirected graph: a marked vertex of level 1 (its edge to the
    // source deleted) that meets an unmarked level-1 neighbour while marking is seeded on
    // level 2 there and then, its seed's list read saved (no neighbour of it is on level 0
    // any more, and the level-1 ones that are not marked stay on level 1).
    // Invariant the shortcut needs: when a level-1 vertex's list is read for it, every
    // level-1 vertex of this update that will be marked already has flag MARKED. Level-1
    // vertices are marked in step 1 only (their one parent is the source, which is never
    // marked, so no marking pass reaches them; only a deleted pair (source, v) takes it),
    // and step 1 ends with a grid barrier; so the lists of level-1 vertices are read in the
    // marking passes, never in step 1 itself (see mark_now's caller): a level-1 neighbour
    // that step 1 marks later than the read would otherwise look unmarked, and the vertex
    // would be seeded on level 2 through a neighbour that is no longer on level 1.
    const bool early_seeds = del_only && U.undirected;
    // Settling (early_seeds without parents, level-synchronous kernel): a marked level-1
    // vertex w with an unmarked level-1 neighbour is done while marking. Its level is 2 at
    // once (its level-1 neighbours that are not marked keep level 1, and no level falls in
    // a deletion), and its parents are exactly those neighbours, which the reads of its
    // list count into cnt[w] (0 since its last parent went; a chunked list adds one count a
    // chunk). The seed, relaxation and repair steps skip it: a settled vertex is a marked one
    // with cnt > 0 there (every other marked vertex holds 0 until its own repair read). Its
    // relaxation would lower only marked vertices, each of which reads level[w] = 2 when its
    // own seed is taken (after the marking barrier); its repair would recount those parents
    // and find no count of a neighbour that keeps its level to change (level-1 ones: w was
    // not their parent and is not; level-2 ones lost w as a parent while marking).
    // A level-1 list longer than CHUNK is cut into chunks when its vertex is marked in step
    // 1 (not read there: the invariant above), and the first marking pass reads those chunks
    // together with the other level-1 lists. That pass makes a marked level-1 vertex
    // unreached by a CAS from level 1 (a settling read of its chunks may have set level 2
    // already) and leaves its count alone (0, or what the settling reads added).
    // Mode bit 3 (GPUState.settle).
    const bool settle = !ASYNC && early_seeds && !wp && ((mode >> 3) & 1);
    // marking (step 2): marked w (old level lw) takes one parent from child x (level lx);
    // early: a level-1 w with an unmarked neighbour on level 1 (see SEEDED below).
    // The thread that marks x also reads x's list itself, right after the list it is in
    // (`carry`, one vertex a thread; further ones it marks meanwhile wait for the next pass),
    // so that a chain of vertices that lose their last parent one after the other is marked
    // in one pass instead of one pass (and one grid barrier) a link: marking gives the same
    // marked set in any order, and cnt[x] = DONE tells the next pass that x's list was read
    // (or cut into that pass's chunks). Level-synchronous kernel only (the work queue reads
    // every marked vertex from the queue). x is never a level-1 vertex (children are on
    // lw + 1 >= 2), so the early-seed invariant below holds.
    // The children are read in staged passes (the count decrements of a list's entries in
    // flight together): mark_take issues x's decrement (returns the count before it, 0 for
    // none), mark_took marks x when that took its last parent.
    int carry = -1;
    // b's list (d entries) cut into chunks by this thread, for the next marking pass
    auto cut_by_thread = [&](int b, int d) {
        const int nch = (d + CHUNK - 1) / CHUNK;
        const u64 base = atomicAdd(&C[C_CHUNKS + C_STRIDE * (U.use % 3)], (u64)nch);
        for (int c = 0; c < nch; ++c) U.chunks[base + c] = make_int2(b, c << 1);
    };
    auto mark_take = [&](int lw, int x, int lx, int fx, int& ones) -> int {
        if (early_seeds && lw == 1 && lx == 1 && fx != MARKED) ++ones;
        return lx == lw + 1 && fx != MARKED ? atomicSub(&cnt[x], 1) : 0;
    };
    auto mark_took = [&](int lw, int x, int before) {
        if (before == 1) {
            U.mark(x, lw + 1);
            if (!ASYNC && carry < 0) carry = x;
        }
    };
    // b marked by this thread: a list of at most small_max entries read now (its children's
    // counts taken), one of more than CHUNK cut into chunks for the next marking pass, and
    // cnt[b] = DONE tells that pass; a list in between is left to that pass (cnt[b] stays 0),
    // which reads it with a warp. So only lists longer than CHUNK are cut, each once in the
    // marking step: the chunk list's capacity (2 * entries / CHUNK) holds them all.
    // No decrement reaches cnt[b] after the one that marked it: b's parents have all given
    // theirs. b's old level is >= 2 whenever early_seeds is on (see the invariant), so the
    // read takes no early seed.
    auto read_marked = [&](int b) {
        const int d = deg[b];
        if (d > U.small_max && d <= CHUNK) return;
        cnt[b] = DONE;
        const int* row = (const int*)ptr[b];
        U.scanned += (u64)d;
        if (d <= U.small_max) {
            const int lb = (int)U.old[b];
            int ones = 0;
            if (d > 0)
                U.tpass_staged<true>(row, d,
                    [&](int x, int lx, int fx) { return mark_take(lb, x, lx, fx, ones); },
                    [&](int x, int before) { mark_took(lb, x, before); });
            return;
        }
        cut_by_thread(b, d);
    };
    // the chain of vertices this thread marked, each read in turn (thread-divergent)
    auto follow = [&]() {
        while (carry >= 0) {
            const int b = carry;
            carry = -1;
            read_marked(b);
        }
    };
    auto mark_range = [&](int w, int, int j0, int j1) {
        const int lw = (int)ld((const int*)&U.old[w]);
        int ones = 0;
        U.pass_staged<true>(U.list_row(w, 0), j0, j1,
            [&](int x, int lx, int fx) { return mark_take(lw, x, lx, fx, ones); },
            [&](int x, int before) { mark_took(lw, x, before); });
        if (settle) {
            if (lw == 1) {                        // warp-uniform (one w a warp)
                const int total = warp_sum_int(ones);
                if (total > 0 && lane == 0) U.settle(w, total);
            }
        } else {
            const unsigned found = __ballot_sync(FULL_MASK, ones > 0);
            if (found && lane == __ffs(found) - 1) U.seed_early(w);
        }
        follow();
        __syncwarp();
    };
    auto mark_trange = [&](int w, int, int d, const int* row) {
        const int lw = (int)ld((const int*)&U.old[w]);
        int ones = 0;
        U.tpass_staged<true>(row, d,
            [&](int x, int lx, int fx) { return mark_take(lw, x, lx, fx, ones); },
            [&](int x, int before) { mark_took(lw, x, before); });
        if (ones > 0) {
            if (settle) U.settle(w, ones);
            else U.seed_early(w);
        }
        follow();
    };
    // deletions alone: b, marked in step 1 by the thread that took its last parent, is
    // marked-processed by that thread at once (read_marked, then the chain it starts). Never
    // called for a level-1 b when early_seeds is on (the invariant above).
    auto mark_now = [&](int b, int lb) {
        U.mark(b, lb);
        carry = b;
        follow();
    };

    // ---- 3-4 chase (mode bit 4, with settling: deletions alone in an undirected graph,
    // without parents, where only marked vertices' levels fall: an unmarked vertex keeps its
    // level, the distance, and an unreached one neighbours no reached vertex). In place of
    // the seed step and the level-synchronous rounds: pass 0 takes the marked vertices that
    // did not settle (unreached since marking), and each part of such a vertex's list (a
    // thread's whole short list, a warp's longer one) lowers it to 1 + the lowest level in
    // that part. Whoever lowers a vertex has its list read at the new level: at once by the
    // same thread when the list is short (`carry`, one vertex at a time, a chain), else in
    // the next pass (the vertex appended to that pass's list, once a pass: qtag), whose
    // warps read each listed vertex's whole list at the level it has then. So every
    // lowering is followed by a read of the list at that level or a lower one, and every
    // level set is the length of a path (the lowest levels read are exact): when a pass
    // lists nothing, every level is the distance. Pass p appends to front0 / front1 (p
    // even / odd), counted in the frontier slot p % 3 (the slot of pass p + 1 is zeroed in
    // pass p, after pass p - 1's count was read). A settled vertex keeps its level 2.
    const bool chase = settle && ((mode >> 4) & 1);
    int levels_run = 0;       // the levels statistic (relaxation rounds, or levels set)
    int cpass = 0;
    auto lowered = [&](int x, unsigned nl) {
        if (nl < U.lmin) U.lmin = nl;
        if (nl > U.lmax) U.lmax = nl;
        if (carry < 0 && deg[x] <= U.small_max) {
            carry = x;
            return;
        }
        if (atomicMax(&U.qtag[x], cpass + 1) < cpass + 1)
            U.push(cpass & 1 ? U.front1 : U.front0, &C[C_FRONT + C_STRIDE * (cpass % 3)], x);
    };
    auto drop = [&](int y, int ly, unsigned nl) -> int {
        return (unsigned)ly > nl ? (int)atomicMin((unsigned*)&level[y], nl) : 0;
    };
    auto expand_thread = [&](int x, int d, const int* row) {
        const int lx = ld(&level[x]);
        if (lx < 0) return;
        const unsigned nl = (unsigned)lx + 1;
        U.tpass_staged<false>(row, d, [&](int y, int ly, int) { return drop(y, ly, nl); },
                              [&](int y, int o) { if ((unsigned)o > nl) lowered(y, nl); });
    };
    auto chase_follow = [&]() {
        while (carry >= 0) {
            const int x = carry;
            carry = -1;
            const int d = deg[x];
            U.scanned += (u64)d;
            expand_thread(x, d, (const int*)ptr[x]);
        }
    };
    // v lowered to 1 + best (the lowest level of a part of its list; none: NO_LEVEL)
    auto apply = [&](int v, unsigned best) {
        if (best == NO_LEVEL) return;
        ++U.direct_seeds;
        const unsigned s = best + 1;
        if (atomicMin((unsigned*)&level[v], s) > s) lowered(v, s);
    };
    auto chase_trange = [&](int v, int il, int d, const int* row) {
        if (il) {
            unsigned best = NO_LEVEL;
            U.tpass(row, d, [&](int, int lu) {
                if ((unsigned)lu < best) best = (unsigned)lu;
            });
            apply(v, best);
        } else {
            expand_thread(v, d, row);
        }
        chase_follow();
    };
    auto chase_range = [&](int v, int il, int j0, int j1) {
        const int* row = U.list_row(v, il);
        if (il) {
            unsigned best = NO_LEVEL;
            for (int a = j0; a < j1; a += CHUNK)
                U.pass(row, a, min(j1, a + CHUNK), [&](int, int lu) {
                    if ((unsigned)lu < best) best = (unsigned)lu;
                });
            best = warp_min_u32(best);
            if (lane == 0) apply(v, best);
        } else {
            const int lv = ld(&level[v]);
            if (lv >= 0) {
                const unsigned nl = (unsigned)lv + 1;
                for (int a = j0; a < j1; a += CHUNK)
                    U.pass_staged<false>(row, a, min(j1, a + CHUNK),
                        [&](int y, int ly, int) { return drop(y, ly, nl); },
                        [&](int y, int o) { if ((unsigned)o > nl) lowered(y, nl); });
            }
        }
        chase_follow();
        __syncwarp();
    };
    auto chase_passes = [&](i64 nm) {
        U.phase = PH_RELAX;
        i64 n_items = nm;
        while (true) {
            const int* items = cpass & 1 ? U.front0 : U.front1;   // pass cpass - 1's list
            if (U.first_thread()) C[C_FRONT + C_STRIDE * ((cpass + 1) % 3)] = 0;
            U.deal<false, true>(n_items, 0, 0, cpass == 0, [&](i64 i, int&) {
                if (cpass > 0) return ld(&items[i]);
                const int v = ld(&U.changed[i]);
                return ld(&cnt[v]) > 0 ? -1 : v;        // settled: done
            }, chase_trange, chase_range);
            const unsigned hi = __reduce_max_sync(FULL_MASK, U.lmax);
            const unsigned lo = __reduce_min_sync(FULL_MASK, U.lmin);
            if (lane == 0 && hi) {
                atomicMax(&C[C_QLEVELS], (u64)hi);
                atomicMax(&C[C_QLEVELS + 1], 0xffffffffull - lo);
            }
            U.sync();
            const i64 next = (i64)ld(&C[C_FRONT + C_STRIDE * (cpass % 3)]);
            ++cpass;
            if (next == 0) break;
            if (cpass > 2 * nv + 4) {
                if (U.first_thread()) atomicExch(U.bar + 2, 2u);
                break;
            }
            n_items = next;
        }
        const unsigned top = (unsigned)ld(&C[C_QLEVELS]);
        if (top) levels_run = (int)(top - (0xffffffffu - (unsigned)ld(&C[C_QLEVELS + 1])) + 1);
    };

    // ---- 1. counts at the old levels: deleted pairs take a parent, inserted ones give one.
    // Deletions alone: the decrement that takes a vertex's last parent marks it. Insertions
    // alone: no level moves before the seeds, so inserted pairs that shorten a path seed here.
    // Only pairs on the BFS DAG (level[a] + 1 == level[b]) change a count, and only pairs with
    // level[a] + 1 < level[b] seed: every other pair of the batch stops here.
    if (blockIdx.x == 0)
        for (int w = threadIdx.x; w < C_WORDS; w += blockDim.x)
            Cnext[w] = (w >= C_Q0 && w < C_Q0 + Q_COUNT * Q_SET && (w - C_Q0) % Q_SET == Q_PEND)
                ? Q_TOKENS : 0ull;
    // the queues' pending counts: one token a warp of this grid (they rest at Q_TOKENS)
    if (ASYNC && U.first_thread()) {
        const u64 warps = ((u64)gridDim.x * blockDim.x) >> 5;
        for (int q = 0; q < Q_COUNT; ++q) atomicAdd(&C[C_Q0 + q * Q_SET + Q_PEND], warps - Q_TOKENS);
    }
    // One thread an edge of the batch (undirected: both its directed pairs, 2i and 2i + 1,
    // from one read of the two levels).
    const i64 nde = und ? nd >> 1 : nd;
    const i64 nie = und ? ni >> 1 : ni;
    ITEMS_OF(e, nde + nie, U.nblk) {
        const bool del = e < nde;
        const i64 i = del ? e : e - nde;
        const int s = del ? ds[i] : is[i];
        const int t = del ? dd[i] : id[i];
        const int ls = level[s];
        const int lt = level[t];
        // the pair a -> b (levels la, lb), k-th of its kind: t's, then (undirected) s's, in
        // one loop (one inlined copy of the marking it may start)
#pragma unroll 1
        for (int q = 0; q <= und; ++q) {
            const int b = q ? s : t;
            const int la = q ? lt : ls;
            const int lb = q ? ls : lt;
            if (la >= 0 && la + 1 == lb) {
                if (del) {
                    int o = atomicSub(&cnt[b], 1);
                    if (del_only && o == 1) {
                        if (ASYNC || (early_seeds && lb == 1)) {
                            U.mark(b, lb);          // read in the first marking pass
                            if (settle) {
                                const int d = deg[b];
                                if (d > CHUNK) {
                                    U.scanned += (u64)d;
                                    cut_by_thread(b, d);
                                }
                            }
                        } else
                            mark_now(b, lb);
                    }
                } else {
                    atomicAdd(&cnt[b], 1);
                }
            }
            if (ins_only && !ASYNC)
                U.pair_seed(und ? 2 * i + q : i, la >= 0 && (unsigned)(la + 1) < (unsigned)lb,
                            la + 1, b);
        }
    }
    U.sync(nd > 0);
    // ---- 1b. deletions and insertions together: heads of deleted pairs left without parent
    if (nd > 0 && !del_only) {
        ITEMS_OF(k, nd, U.nblk) {
            int a, b;
            pair_at(ds, dd, k, und, a, b);
            int lb = ld(&level[b]);
            if (lb > 0 && ld(&cnt[b]) <= 0 && atomicCAS(&flag[b], 0, MARKED) == 0)
                U.mark(b, lb);
        }
        U.sync(true);
    }
    // ---- one block: when what the counts step left is small (the vertices it marked, the
    // chunks of their long lists, weighted, and the inserted pairs' seeds, at most
    // `one_block_max`, mode bits 24-31; 0: never), block 0 goes on alone and the others
    // leave: every later phase deals its items over block 0's warps, and its barriers are
    // the block's own, a __syncthreads where the grid barrier waits for every block's
    // arrival and release. Every block reads the same counters here (noted after the last
    // barrier), so all take the same branch. The level-synchronous kernel only.
    const unsigned one_block_max = ((unsigned)mode >> 24) & 0xffu;
    if (!ASYNC && one_block_max && U.nblk > 1) {
        const u64 left = (u64)ni + (nd > 0 ? ld(&C[C_SNAP]) + 8 * ld(&C[C_SNAP + 1]) : 0ull);
        if (left <= one_block_max) {
            if (blockIdx.x != 0) {
                U.flush_stats();
                return;
            }
            U.nblk = 1;
            if (threadIdx.x == 0) C[C_ONE_BLOCK] = 1;
        }
    }

    // ---- 2. marking passes: each marked w (old level lw) becomes unreached and takes one
    // parent from each child (out-neighbour on lw + 1 not marked); a child left with none is
    // marked (appended to `changed`). The order in which marked vertices are processed does
    // not change the marked set, so a pass takes the vertices marked before its barrier
    // (changed[lo, hi)) and, at the same time, the chunks of the long lists the previous
    // pass met (chunk list [clo, chi), one list for the whole step): one grid barrier a pass.
    if constexpr (ASYNC) if (nd > 0) {
        // the marks of step 1 are in the queue; the marked vertices they reach join it
        U.phase = PH_MARK;
        U.return_token();
        U.drain([&](int w, unsigned) {
            level[w] = -1;
            if (wp) U.parent[w] = -1;
            cnt[w] = 0;
            return w;
        }, mark_trange, mark_range);
        U.sync();
        if (U.first_thread()) {
            C[C_MARKED] = ld(&C[C_CHANGED]);
            if (ld(&U.qc[Q_OVER])) atomicExch(U.bar + 2, 2u);   // cannot be: sized for all
        }
    }
    if constexpr (!ASYNC) if (nd > 0) {
        U.phase = PH_MARK;
        i64 lo = 0, clo = 0;
        int passes = 0;
        while (true) {
            const i64 hi = (i64)ld(&C[C_SNAP]);
            const i64 chi = (i64)ld(&C[C_SNAP + 1]);
            if (hi == lo && chi == clo) break;
            if (++passes > nv + 2) {
                if (U.first_thread()) atomicExch(U.bar + 2, 2u);
                break;
            }
            U.deal(hi - lo, clo, chi - clo, 0, [&](i64 i, int&) {
                const int w = ld(&U.changed[lo + i]);
                const int c = ld(&cnt[w]);                          // both loads in flight
                if (settle && ld((const int*)&U.old[w]) == 1) {    // level 1: see settle
                    atomicCAS(&level[w], 1, -1);
                    return deg[w] > CHUNK ? -1 : w;
                }
                level[w] = -1;
                if (wp) U.parent[w] = -1;
                cnt[w] = 0;
                return c == DONE ? -1 : w;          // DONE: read (or cut) when marked
            }, mark_trange, mark_range);
            lo = hi;
            clo = chi;
            U.sync(true);
        }
        ++U.use;
        // ---- 3. seeds of the marked vertices (changed[0:nm]): 1 + the lowest level among
        // their in-neighbours (marked ones are unreached now; a chunked list gives one seed
        // per chunk, the lowest wins). With insertions: their seeds, at the levels after
        // marking.
        U.phase = PH_SEEDS;
        const i64 nm = (i64)ld(&C[C_CHANGED]);
        if (U.first_thread()) C[C_MARKED] = (u64)nm;
        if (ni > 0) {
            ITEMS_OF(k, ni, U.nblk) {
                int a, b;
                pair_at(is, id, k, und, a, b);
                int la = ld(&level[a]);
                U.pair_seed(k, la >= 0 && (unsigned)(la + 1) < (unsigned)ld(&level[b]), la + 1,
                            b);
            }
        }
        if (chase) {
            chase_passes(nm);
        } else {
            auto seed_range = [&](int v, int, int j0, int j1) {
                unsigned best = NO_LEVEL;
                U.pass(U.list_row(v, 1), j0, j1, [&](int, int lu) {
                    if ((unsigned)lu < best) best = (unsigned)lu;
                });
                best = warp_min_u32(best);
                if (lane == 0 && best != NO_LEVEL) U.push_seed(best + 1, v);
            };
            auto seed_trange = [&](int v, int, int d, const int* row) {
                unsigned best = NO_LEVEL;
                U.tpass(row, d, [&](int, int lu) {
                    if ((unsigned)lu < best) best = (unsigned)lu;
                });
                if (best != NO_LEVEL) U.push_seed(best + 1, v);
            };
            U.visit_phase(nm, 1, [&](i64 i, int&) {
                const int v = ld(&U.changed[i]);
                const int c = ld(&cnt[v]);
                if (settle && c > 0) return -1;         // settled while marked
                if (c != SEEDED) return v;
                cnt[v] = 0;            // seeded while marked; the repair counts from zero
                return -1;
            }, seed_trange, seed_range);
        }
    }

    // ---- 3-4 asynchronous (dbfs_update_async): the seeds of the inserted pairs (from the levels
    // as they are when read: every level is the length of a path at any time), the early
    // seeds, and those of the marked vertices (1 + the lowest level among their
    // in-neighbours, a chunk of a long list giving its own) lower their vertices, and every
    // lowered vertex relaxes its out-list through the queue, in any order, until nothing
    // falls. A full queue leaves lowered vertices unexpanded: sweeps over all changed
    // vertices then relax every list again until one sweep lowers nothing.
    const i64 nm = ASYNC && nd > 0 ? (i64)ld(&C[C_CHANGED]) : 0;
    const i64 nes = ASYNC && nd > 0 ? (i64)ld(&C[C_SEEDS]) : 0;
    if constexpr (ASYNC) if (ni > 0 || nm > 0 || nes > 0) {
        U.phase = PH_RELAX;
        U.use_queue(Q_RELAX);
        auto relax_list = [&](int w, int j0, int j1) {
            const int lw = ld(&level[w]);
            if (lw < 0) return;
            const unsigned nl = (unsigned)lw + 1;
            U.pass(U.list_row(w, 0), j0, j1, [&](int x, int lx) {
                if ((unsigned)lx > nl) {
                    const unsigned o = atomicMin((unsigned*)&level[x], nl);
                    if (o > nl) U.lowered_async(x, o, nl);
                }
            });
        };
        // in_list: a chunk of a marked vertex's in-list (its seed); else a relaxation
        auto arange = [&](int w, int in_list, int j0, int j1) {
            if (!in_list) {
                relax_list(w, j0, j1);
                return;
            }
            unsigned best = NO_LEVEL;
            U.pass(U.list_row(w, 1), j0, j1, [&](int, int lu) {
                if ((unsigned)lu < best) best = (unsigned)lu;
            });
            best = warp_min_u32(best);
            if (lane == 0 && best != NO_LEVEL) U.lower_async(w, best + 1);
        };
        auto atrange = [&](int w, int in_list, int d, const int* row) {
            if (!in_list) {
                const int lw = ld(&level[w]);
                if (lw < 0) return;
                const unsigned nl = (unsigned)lw + 1;
                U.tpass(row, d, [&](int x, int lx) {
                    if ((unsigned)lx > nl) {
                        const unsigned o = atomicMin((unsigned*)&level[x], nl);
                        if (o > nl) U.lowered_async(x, o, nl);
                    }
                });
                return;
            }
            unsigned best = NO_LEVEL;
            U.tpass(row, d, [&](int, int lu) {
                if ((unsigned)lu < best) best = (unsigned)lu;
            });
            if (best != NO_LEVEL) U.lower_async(w, best + 1);
        };
        ITEMS_OF(k, ni, U.nblk) {
            int a, b;
            pair_at(is, id, k, und, a, b);
            const int la = ld(&level[a]);
            if (la >= 0) U.lower_async(b, (unsigned)la + 1);
        }
        ITEMS_OF(k, nes, U.nblk) {
            const u64 key = ld(&U.seeds[ni + k]);
            U.lower_async((int)(key & 0xffffffffull), (unsigned)(key >> 32));
        }
        U.visit_items_q(nm, 1, [&](i64 i, int&) {
            const int v = ld(&U.changed[i]);
            if (ld(&cnt[v]) != SEEDED) return v;
            cnt[v] = 0;            // seeded while marked; the repair counts from zero
            return -1;
        }, atrange, arange);
        U.return_token();
        U.drain([&](int x, unsigned t) {
            const unsigned lx = (unsigned)ld(&level[x]);
            return min(lx, Q_LMAX) == t ? x : -1;      // else queued again lower
        }, atrange, arange);
        // the levels statistic: highest and lowest level set
        const unsigned hi = __reduce_max_sync(FULL_MASK, U.lmax);
        const unsigned lo = __reduce_min_sync(FULL_MASK, U.lmin);
        if (lane == 0 && hi) {
            atomicMax(&C[C_QLEVELS], (u64)hi);
            atomicMax(&C[C_QLEVELS + 1], 0xffffffffull - lo);
        }
        U.sync(true);
        const unsigned top = (unsigned)ld(&C[C_QLEVELS]);
        if (top) levels_run = (int)(top - (0xffffffffu - (unsigned)ld(&C[C_QLEVELS + 1])) + 1);
        if (ld(&U.qc[Q_OVER])) {
            // the marked vertices' seeds again from their whole in-lists (a full queue may
            // have dropped chunks of them: the sweeps below only push from changed vertices)
            auto seed_range = [&](int v, int, int j0, int j1) {
                unsigned best = NO_LEVEL;
                U.pass(U.list_row(v, 1), j0, j1, [&](int, int lu) {
                    if ((unsigned)lu < best) best = (unsigned)lu;
                });
                best = warp_min_u32(best);
                if (lane == 0 && best != NO_LEVEL) atomicMin((unsigned*)&level[v], best + 1);
            };
            auto seed_trange = [&](int v, int, int d, const int* row) {
                unsigned best = NO_LEVEL;
                U.tpass(row, d, [&](int, int lu) {
                    if ((unsigned)lu < best) best = (unsigned)lu;
                });
                if (best != NO_LEVEL) atomicMin((unsigned*)&level[v], best + 1);
            };
            // the changed list is as C_SNAP noted: no appends
            U.visit_phase(nm, 1, [&](i64 i, int&) { return ld(&U.changed[i]); }, seed_trange,
                          seed_range);
            for (int sweep = 0;; ++sweep) {
                u64* any = &C[C_FRONT + C_STRIDE * (sweep % 3)];
                if (U.first_thread()) C[C_FRONT + C_STRIDE * ((sweep + 1) % 3)] = 0;
                const i64 nc = (i64)ld(&C[C_SNAP]);
                auto sweep_lower = [&](int x, int lx, unsigned nl) {
                    if ((unsigned)lx <= nl) return;
                    const unsigned o = atomicMin((unsigned*)&level[x], nl);
                    if (o <= nl) return;
                    const int f = atomicCAS(&flag[x], 0, CHANGED);
                    if (f == 0) {
                        cnt[x] = 0;
                        U.push(U.changed, &C[C_CHANGED], x);
                    }
                    if (f != MARKED) atomicMax(&U.old[x], o);
                    *(volatile u64*)any = 1ull;
                };
                auto srange = [&](int w, int, int j0, int j1) {
                    const int lw = ld(&level[w]);
                    if (lw < 0) return;
                    U.pass(U.list_row(w, 0), j0, j1,
                           [&](int x, int lx) { sweep_lower(x, lx, (unsigned)lw + 1); });
                };
                auto strange = [&](int w, int, int d, const int* row) {
                    const int lw = ld(&level[w]);
                    if (lw < 0) return;
                    U.tpass(row, d, [&](int x, int lx) { sweep_lower(x, lx, (unsigned)lw + 1); });
                };
                U.visit_phase(nc, 0, [&](i64 i, int&) { return ld(&U.changed[i]); }, strange,
                              srange);
                U.sync(true);
                if (ld(any) == 0) break;
                if (sweep > nv + 2) {
                    if (U.first_thread()) atomicExch(U.bar + 2, 2u);
                    break;
                }
            }
        }
    }

    // ---- 4. relaxation rounds: round `cur` expands the frontier of level cur (out-neighbours
    // above cur + 1 drop to cur + 1 and form the next frontier), and the seeds of level cur + 1
    // lower their vertex (one thread a seed) into the next frontier too. The first round
    // (cur = lowest seed level) has no frontier list: its seeds lower their vertices to cur
    // and expand them in the same round (no vertex reaches cur otherwise; a vertex with two
    // seeds there, or lowered to cur + 1 by another seed's expansion first, is expanded by
    // the one lowering to cur that finds it higher). A frontier entry whose level fell further
    // since is skipped (expanded at its lower level). Ends past the highest seed level with
    // an empty frontier. Only vertices whose level drops are ever listed.
    // seeds: the inserted pairs' own slots [0, ni), then the appended ones (levels >= 1, so
    // the highest is 0 only when there is none)
    const i64 ns = ni + (i64)ld(&C[C_SEEDS]);
    if constexpr (!ASYNC) if (ld(&C[C_HIGH]) > 0) {
        U.phase = PH_RELAX;
        unsigned cur = 0xffffffffu - (unsigned)ld(&C[C_LOW]);
        const unsigned highest = (unsigned)ld(&C[C_HIGH]);
        while (true) {
            const int r = U.round;
            const i64 nf = (i64)ld(&C[C_FRONT + C_STRIDE * (r % 3)]);
            if (U.first_thread()) C[C_FRONT + C_STRIDE * ((r + 2) % 3)] = 0;
            const int* front = r & 1 ? U.front1 : U.front0;
            int* next = r & 1 ? U.front0 : U.front1;
            u64* ncount = &C[C_FRONT + C_STRIDE * ((r + 1) % 3)];
            const unsigned nl = cur + 1;
            // staged: the atomicMin of every entry above nl in flight together, then the
            // lowered ones listed
            auto lower = [&](int x, int lx, int) -> int {
                return (unsigned)lx > nl ? (int)atomicMin((unsigned*)&level[x], nl) : 0;
            };
            auto lowered = [&](int x, int o) {
                if ((unsigned)o > nl) U.lowered_into(next, ncount, x, (unsigned)o);
            };
            auto range = [&](int w, int, int j0, int j1) {
                U.pass_staged<false>(U.list_row(w, 0), j0, j1, lower, lowered);
            };
            auto trange = [&](int, int, int d, const int* row) {
                U.tpass_staged<false>(row, d, lower, lowered);
            };
            U.apply_seeds(ns, nl, next, ncount);
            // items: round 0's seeds (lowered to cur here, then expanded), then the frontier
            // (one call site: one inlined copy of the passes)
            const i64 n0 = r == 0 ? ns : 0;
            U.visit_phase(n0 + nf, 0, [&](i64 i, int&) {
                if (i >= n0) {
                    const int w = ld(&front[i - n0]);
                    return (unsigned)ld(&level[w]) == cur ? w : -1;
                }
                const u64 key = ld(&U.seeds[i]);
                if ((unsigned)(key >> 32) != cur) return -1;
                const int x = (int)(key & 0xffffffffull);
                const unsigned o = atomicMin((unsigned*)&level[x], cur);
                if (o <= cur) return -1;
                U.note_lowered(x, o, atomicCAS(&flag[x], 0, CHANGED));
                return x;
            }, trange, range);
            ++U.round;
            if (nf > 0 || r == 0) ++levels_run;
            if (ld(ncount) == 0 && nl >= highest) break;
            if (U.round > 2 * nv + 4) {
                if (U.first_thread()) atomicExch(U.bar + 2, 2u);
                break;
            }
            ++cur;
        }
    }

    // ---- 5. repair: vertices whose level was set recount their parents (and take one);
    // their out-neighbours outside that set adjust their counts by the difference of old and
    // new level (marked vertices' old share was removed while marking) and, where the
    // vertex was their parent and no longer is, become orphans. Deleted pairs a -> b with a
    // b's parent and b's level unchanged make b an orphan too.
    U.phase = PH_REPAIR;
    const i64 nc = (i64)ld(&C[C_CHANGED]);
    if (nc == 0 && !(wp && nd > 0)) {
        if (U.first_thread()) C[C_LEVELS] = (u64)levels_run;
        U.flush_stats();
        U.phase = PH_END;
        U.stamp();
        return;
    }
    if (wp) {
        ITEMS_OF(k, nd, U.nblk) {
            int a, b;
            pair_at(ds, dd, k, und, a, b);
            if (ld(&level[b]) > 0 && ld(&U.parent[b]) == a && ld(&flag[b]) == 0 &&
                atomicCAS(&flag[b], 0, ORPHAN) == 0)
                U.push(U.orphans, &C[C_ORPHANS], b);
        }
    }
    // in-neighbours on lv - 1 (directed graphs' in-lists): counted, one kept as candidate
    auto in_parent = [&](int lv, int& c, int& cand) {
        return [&, lv](int u, int lu) {
            if (lu == lv - 1) { ++c; cand = u; }
        };
    };
    // out-neighbour x of v (new level lv, old ov; -1 for none): count adjustments, orphans
    // (fx: x's flag, loaded with its level by the staged pass)
    auto out_child = [&](int v, int lv, int ov, int x, int lx, int fx) {
        if ((fx != 0 && fx != ORPHAN) || lx <= 0) return;
        bool now = lv >= 0 && lv + 1 == lx;
        bool before = ov >= 0 && ov + 1 == lx;
        if (now != before) atomicAdd(&cnt[x], now ? 1 : -1);
        if (wp && !now && fx == 0 && ld(&U.parent[x]) == v &&
            atomicCAS(&flag[x], 0, ORPHAN) == 0)
            U.push(U.orphans, &C[C_ORPHANS], x);
    };
    auto repair_range = [&](int v, int in_list, int j0, int j1) {
        const int lv = ld(&level[v]);
        int c = 0;
        int cand = -1;
        if (in_list) {
            U.pass(U.list_row(v, 1), j0, j1, in_parent(lv, c, cand));
        } else {
            const int ov = ld(&flag[v]) == MARKED ? -1 : (int)ld((const int*)&U.old[v]);
            U.pass_staged<true>(U.list_row(v, 0), j0, j1, [&](int x, int lx, int fx) {
                if (und && lv > 0 && lx == lv - 1) { ++c; cand = x; }
                out_child(v, lv, ov, x, lx, fx);
                return 0;
            }, [](int, int) {});
            if (!und) return;
        }
        if (lv <= 0) return;
        c = warp_sum_int(c);
        unsigned found = __ballot_sync(FULL_MASK, cand >= 0);
        if (wp && found && lane == __ffs(found) - 1) U.parent[v] = cand;
        if (lane == 0 && c) atomicAdd(&cnt[v], c);
    };
    auto repair_trange = [&](int v, int in_list, int d, const int* row) {
        const int lv = ld(&level[v]);
        int c = 0;
        int cand = -1;
        if (in_list) {
            U.tpass(row, d, in_parent(lv, c, cand));
        } else {
            const int ov = ld(&flag[v]) == MARKED ? -1 : (int)ld((const int*)&U.old[v]);
            U.tpass_staged<true>(row, d, [&](int x, int lx, int fx) {
                if (und && lv > 0 && lx == lv - 1) { ++c; cand = x; }
                out_child(v, lv, ov, x, lx, fx);
                return 0;
            }, [](int, int) {});
            if (!und) return;
        }
        if (lv <= 0) return;
        if (wp && cand >= 0) U.parent[v] = cand;
        if (c) atomicAdd(&cnt[v], c);
    };
    // the changed vertices' lists, items [0, nc) (undirected: their lists; directed: their
    // in-lists, then items [nc, 2 nc) their out-lists), in one deal (one inlined copy of the
    // passes): long ones in chunks, through the queue (asynchronous mode: no chunk pass
    // behind a barrier) or the chunk list. Levels <= 0 keep no parent; the in-lists of such
    // vertices are not read (no parent to count).
    auto repair_get = [&](i64 i, int& in_list) {
        in_list = !und && i < nc;
        const int v = ld(&U.changed[i < nc ? i : i - nc]);
        if (settle && ld(&cnt[v]) > 0) return -1;   // settled while marked: level, count final
        if (in_list || und) {
            const int lv = ld(&level[v]);
            if (wp && lv <= 0) U.parent[v] = -1;
            if (in_list && lv <= 0) return -1;
        }
        return v;
    };
    const i64 nr = und ? nc : 2 * nc;
    if constexpr (ASYNC) {
        U.use_queue(Q_REPAIR);
        U.visit_items_q(nr, 0, repair_get, repair_trange, repair_range);
        U.return_token();
        U.drain([](int, unsigned) { return -1; }, repair_trange, repair_range);
        U.sync();
        if (U.first_thread() && ld(&U.qc[Q_OVER])) atomicExch(U.bar + 2, 2u);   // sized for all
    } else {
        U.visit_phase(nr, 0, repair_get, repair_trange, repair_range);
    }

    // ---- 6. flags and old levels back to zero; orphans take an in-neighbour on the level
    // above (one exists: their count is positive)
    U.phase = PH_ORPHANS;
    const i64 no = wp ? (i64)ld(&C[C_ORPHANS]) : 0;
    ITEMS_OF(k, nc + no, U.nblk) {
        int v = k < nc ? ld(&U.changed[k]) : ld(&U.orphans[k - nc]);
        flag[v] = 0;
        U.old[v] = 0;
        if (chase) U.qtag[v] = 0;
    }
    if (U.first_thread()) C[C_LEVELS] = (u64)levels_run;
    if (no == 0) {
        U.flush_stats();
        U.phase = PH_END;
        U.stamp();
        return;
    }
    auto orphan_range = [&](int x, int, int j0, int j1) {
        const int want = ld(&level[x]) - 1;
        int cand = -1;
        U.pass(U.list_row(x, 1), j0, j1, [&](int u, int lu) {
            if (lu == want) cand = u;
        });
        unsigned found = __ballot_sync(FULL_MASK, cand >= 0);
        if (found && lane == __ffs(found) - 1) U.parent[x] = cand;
    };
    auto orphan_trange = [&](int x, int, int d, const int* row) {
        const int want = ld(&level[x]) - 1;
        int cand = -1;
        U.tpass(row, d, [&](int u, int lu) {
            if (lu == want) cand = u;
        });
        if (cand >= 0) U.parent[x] = cand;
    };
    U.visit_phase(no, 1, [&](i64 i, int&) { return ld(&U.orphans[i]); }, orphan_trange,
                  orphan_range, true);
    U.flush_stats();
    U.phase = PH_END;
    U.stamp();
}

// The update kernel: level-synchronous phases at two register budgets, 4 resident blocks of
// 256 threads per SM (64 registers a thread, some spilled) or 3 (85 registers, next to none
// spilled), and the asynchronous phases (work queue) at 3 blocks per SM; one template
// instance per variant (dynamic_gpu.UPDATE_KERNELS), which dynamic_gpu.GPUState.kernel_name
// and async_queue pick. NVRTC compiles only the instances a module names: each variant is
// built on its own, and only when a process launches it (the body takes most of this file's
// compile time).
template <int MIN_BLOCKS, bool ASYNC>
__global__ void __launch_bounds__(256, MIN_BLOCKS)
dbfs_update_kernel(const u64* __restrict__ P, const int* deg, const i64* ptr, const int* ideg,
                   const i64* iptr, const int* ds, const int* dd, const int* is,
                   const int* id, i64 nd, i64 ni, i64 nv, int mode) {
    dbfs_update_body<ASYNC>(P, deg, ptr, ideg, iptr, ds, dd, is, id, nd, ni, nv, mode);
}
