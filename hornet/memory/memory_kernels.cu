// CUDA kernels of the memory manager: load-balanced range copies, size classes, bit trees.
//
// Compiled once per process by cupy.RawModule (NVRTC, -std=c++17); includes segmented.cuh.
// 64-bit indexing and grid-stride loops throughout.
//
// Bit-tree layout (as hornet/memory/bit_tree.py): all levels in one uint64 array, level 0
// first, offsets[l] = start of level l, offsets[levels] = total words; leaf bit 1 = block free;
// bit i of word w at level l + 1 = (word 64 w + i of level l != 0); bits past the end are 0.

#include "segmented.cuh"

// ------------------------------------------------------------------------------ copies
// dst[i][j] = src[i][j] for j < counts[i]; one thread per item over all ranges
// (off: exclusive scan of counts, total last), so one huge range spreads over the grid.
template <typename T>
__global__ void copy_ranges(const i64* __restrict__ src, const i64* __restrict__ dst,
                            const i64* __restrict__ off, i64 nranges, i64 total) {
    segmented_loop(off, nranges, total, [&](i64 t, i64 i) {
        i64 j = t - off[i];
        ((T*)dst[i])[j] = ((const T*)src[i])[j];
    });
}

// counts[k] += number of classes[i] == k, for k in [0, 64) (other values ignored): a histogram
// in shared memory, one atomic per group of equal values in a warp.
extern "C" __global__ void class_counts(const i64* __restrict__ classes, i64 n,
                                        u64* __restrict__ counts) {
    __shared__ unsigned int bins[64];
    for (int k = threadIdx.x; k < 64; k += blockDim.x) bins[k] = 0;
    __syncthreads();
    GRID_STRIDE(i, n) {
        const i64 c = classes[i];
        const unsigned peers = __match_any_sync(__activemask(), c);
        if (c >= 0 && c < 64 && (threadIdx.x & 31) == __ffs(peers) - 1)
            atomicAdd(&bins[c], (unsigned)__popc(peers));
    }
    __syncthreads();
    for (int k = threadIdx.x; k < 64; k += blockDim.x)
        if (bins[k]) atomicAdd(&counts[k], (u64)bins[k]);
}

// ceil(log2(degree)), at least min_class; -1 for degree <= 0.
extern "C" __global__ void size_classes(const i64* __restrict__ degree, i64 n, i64 min_class,
                                        i64* __restrict__ out) {
    GRID_STRIDE(i, n) {
        i64 d = degree[i];
        i64 k;
        if (d <= 0) {
            k = -1;
        } else {
            k = d == 1 ? 0 : 64 - __clzll(d - 1);
            if (k < min_class) k = min_class;
        }
        out[i] = k;
    }
}

// ------------------------------------------------------------------------------ bit trees
__device__ __forceinline__ u64 valid_mask(i64 w, i64 nbits) {
    i64 valid = nbits - w * 64;
    if (valid >= 64) return ~0ull;
    if (valid <= 0) return 0ull;
    return (1ull << valid) - 1ull;
}

// Words of one level with the first nbits bits set (all free), the rest 0.
extern "C" __global__ void fill_level(u64* __restrict__ words, i64 nwords, i64 nbits) {
    GRID_STRIDE(w, nwords) { words[w] = valid_mask(w, nbits); }
}

// Every level of a new tree of num_blocks blocks, all free, in one launch: level l holds the
// words [o[l], o[l + 1]) (o[0] = 0; `levels` levels, at most 8) and has its first nbits bits
// set: num_blocks at level 0, the number of words of the level below above it.
extern "C" __global__ void fill_tree(u64* __restrict__ words, i64 num_blocks, int levels,
                                     i64 o1, i64 o2, i64 o3, i64 o4, i64 o5, i64 o6, i64 o7,
                                     i64 o8) {
    const i64 o[9] = {0, o1, o2, o3, o4, o5, o6, o7, o8};
    const i64 total = o[levels];
    GRID_STRIDE(t, total) {
        int l = 0;
        while (l + 1 < levels && t >= o[l + 1]) ++l;
        const i64 nbits = l == 0 ? num_blocks : o[l] - o[l - 1];
        words[t] = valid_mask(t - o[l], nbits);
    }
}

// Bits counted per leaf word: free bits (invert = 0) or used blocks below nbits (invert = 1).
extern "C" __global__ void popcount_words(const u64* __restrict__ words, i64 nwords, int invert,
                                          i64 nbits, i64* __restrict__ out) {
    GRID_STRIDE(w, nwords) {
        u64 x = words[w];
        if (invert) x = ~x & valid_mask(w, nbits);
        out[w] = __popcll(x);
    }
}

// Word w holds the blocks prefix[w] .. of the selection (exclusive scan of popcount_words);
// write the block ids of the first `count` selected bits, ascending. clear = 1 (take_free):
// the taken bits become 0 in the word.
extern "C" __global__ void extract_bits(u64* __restrict__ words, i64 nwords, int invert,
                                        i64 nbits, const i64* __restrict__ prefix, i64 count,
                                        int clear, i64* __restrict__ out) {
    GRID_STRIDE(w, nwords) {
        i64 k = prefix[w];
        if (k >= count) continue;
        u64 word = words[w];
        u64 x = invert ? (~word & valid_mask(w, nbits)) : word;
        if (x == 0) continue;
        while (x != 0 && k < count) {
            int b = __ffsll((long long)x) - 1;
            out[k++] = w * 64 + b;
            x &= x - 1ull;
        }
        if (clear) words[w] = x;  // not inverted: what is left is still free
    }
}

// Parent level from its child level: one thread per parent bit, a warp ballot makes 32 bits.
// The loop covers nparent * 64 bits (a multiple of 32), so every warp stays converged.
extern "C" __global__ void rebuild_level(u64* __restrict__ words, i64 child_start,
                                         i64 nchild, i64 parent_start, i64 nparent) {
    const i64 nbits = nparent * 64;
    GRID_STRIDE(t, nbits) {
        bool set = t < nchild && words[child_start + t] != 0ull;
        unsigned mask = __ballot_sync(0xFFFFFFFFu, set);
        if ((threadIdx.x & 31) == 0)
            ((unsigned*)(words + parent_start))[t >> 5] = mask;  // little-endian halves
    }
}

// Mark blocks free and set their ancestors' bits (stop where a word was already non-empty).
extern "C" __global__ void give_back(u64* __restrict__ words, const i64* __restrict__ offsets,
                                     int levels, const i64* __restrict__ blocks, i64 n) {
    GRID_STRIDE(i, n) {
        i64 index = blocks[i];
        for (int l = 0; l < levels; ++l) {
            u64 was = atomicOr(words + offsets[l] + (index >> 6), 1ull << (index & 63));
            if (was != 0ull) break;
            index >>= 6;
        }
    }
}

// take_forest: request a takes the count[a] lowest free blocks of tree a (words at
// word_addrs[a], level offsets in table[a * (FOREST_LEVELS + 1) ...]); the leaf words of all
// requests are laid end to end (word_start, length A + 1). Pass 1 counts the free bits of
// every leaf word; pass 2 (after an inclusive scan `incl` of the counts) extracts, per word,
// the blocks whose rank in their tree is below count[a], writes their pointers base[a] +
// (block << shift[a]) to out[out_start[a] + rank], clears them, and clears the ancestors' bits
// of a word that became empty (atomically: the thread that empties a parent word goes on up).
#define FOREST_LEVELS 8
extern "C" __global__ void popcount_forest(const i64* __restrict__ word_addrs,
                                           const i64* __restrict__ word_start, i64 nreq,
                                           i64 total, i64* __restrict__ pc) {
    GRID_STRIDE(t, total) {
        const i64 a = segment_of(word_start, nreq, t);
        pc[t] = __popcll(((const u64*)word_addrs[a])[t - word_start[a]]);
    }
}

extern "C" __global__ void extract_forest(const i64* __restrict__ word_addrs,
                                          const i64* __restrict__ table,
                                          const i64* __restrict__ word_start,
                                          const i64* __restrict__ count,
                                          const i64* __restrict__ out_start,
                                          const i64* __restrict__ base,
                                          const i64* __restrict__ shift, i64 nreq, i64 total,
                                          const i64* __restrict__ pc,
                                          const i64* __restrict__ incl, i64* __restrict__ out) {
    GRID_STRIDE(t, total) {
        const i64 a = segment_of(word_start, nreq, t);
        const i64 first = word_start[a];
        i64 k = incl[t] - pc[t] - (first > 0 ? incl[first - 1] : 0);   // rank in the tree
        const i64 c = count[a];
        if (k >= c || pc[t] == 0) continue;
        u64* words = (u64*)word_addrs[a];
        const i64 w = t - first;
        u64 x = words[w];
        while (x != 0ull && k < c) {
            const int b = __ffsll((long long)x) - 1;
            out[out_start[a] + k++] = base[a] + ((w * 64 + b) << shift[a]);
            x &= x - 1ull;
        }
        words[w] = x;
        if (x != 0ull) continue;
        const i64* off = table + a * (FOREST_LEVELS + 1);
        i64 idx = w;
        for (int l = 1; l < FOREST_LEVELS && off[l + 1] > off[l]; ++l) {
            const u64 bit = 1ull << (idx & 63);
            const u64 was = atomicAnd(words + off[l] + (idx >> 6), ~bit);
            if ((was & ~bit) != 0ull) break;       // the parent word still has free children
            idx >>= 6;
        }
    }
}

// used_forest: the pointers of every used block of several trees (a compaction's evacuated
// arrays) in one pass. The leaf words of all trees are laid end to end (word_start, length
// A + 1); tree a has nbits[a] blocks. Pass 1 counts the used bits of every leaf word; pass 2
// (after an inclusive scan `incl` of the counts) writes, per word, the pointers base[a] +
// (block << shift[a]) of its used blocks to out[out_start[a] + rank in the tree], ascending.
extern "C" __global__ void popcount_used_forest(const i64* __restrict__ word_addrs,
                                                const i64* __restrict__ word_start,
                                                const i64* __restrict__ nbits, i64 nreq,
                                                i64 total, i64* __restrict__ pc) {
    GRID_STRIDE(t, total) {
        const i64 a = segment_of(word_start, nreq, t);
        const i64 w = t - word_start[a];
        pc[t] = __popcll(~((const u64*)word_addrs[a])[w] & valid_mask(w, nbits[a]));
    }
}

extern "C" __global__ void extract_used_forest(const i64* __restrict__ word_addrs,
                                               const i64* __restrict__ word_start,
                                               const i64* __restrict__ nbits,
                                               const i64* __restrict__ out_start,
                                               const i64* __restrict__ base,
                                               const i64* __restrict__ shift, i64 nreq,
                                               i64 total, const i64* __restrict__ pc,
                                               const i64* __restrict__ incl,
                                               i64* __restrict__ out) {
    GRID_STRIDE(t, total) {
        if (pc[t] == 0) continue;
        const i64 a = segment_of(word_start, nreq, t);
        const i64 first = word_start[a];
        const i64 w = t - first;
        i64 k = out_start[a] + incl[t] - pc[t] - (first > 0 ? incl[first - 1] : 0);
        u64 x = ~((const u64*)word_addrs[a])[w] & valid_mask(w, nbits[a]);
        while (x != 0ull) {
            const int b = __ffsll((long long)x) - 1;
            out[k++] = base[a] + ((w * 64 + b) << shift[a]);
            x &= x - 1ull;
        }
    }
}

// Re-pointing after a compaction (hornet/memory/gpu_repoint.py). The evacuated arrays' address
// ranges [starts[a], ends[a]) (ascending, narrays of them; blocks of 2^shifts[a] bytes) are
// numbered block after block from offsets[a] in `dense`. repoint_scatter writes each moved
// block's new pointer new[i] into the row of its old pointer old[i]; repoint_vertices gives
// every vertex of a class in `classes` (bit k: class k) whose pointer lies in an evacuated
// array the new pointer of its block (rows left 0: the block did not move).
__device__ __forceinline__ i64 range_of(const i64* __restrict__ starts, i64 n, i64 x) {
    i64 lo = 0, hi = n;                       // the last start <= x (-1: none)
    while (lo < hi) {
        const i64 mid = (lo + hi) >> 1;
        if (starts[mid] <= x) lo = mid + 1; else hi = mid;
    }
    return lo - 1;
}

extern "C" __global__ void repoint_scatter(const i64* __restrict__ old,
                                           const i64* __restrict__ moved_to, i64 m,
                                           const i64* __restrict__ starts,
                                           const i64* __restrict__ shifts,
                                           const i64* __restrict__ offsets, i64 narrays,
                                           i64* __restrict__ dense) {
    GRID_STRIDE(i, m) {
        const i64 p = old[i];
        const i64 a = range_of(starts, narrays, p);
        dense[offsets[a] + ((p - starts[a]) >> shifts[a])] = moved_to[i];
    }
}

extern "C" __global__ void repoint_vertices(i64* __restrict__ edge_ptr,
                                            const signed char* __restrict__ size_class, i64 n,
                                            const i64* __restrict__ starts,
                                            const i64* __restrict__ ends,
                                            const i64* __restrict__ shifts,
                                            const i64* __restrict__ offsets, i64 narrays,
                                            const i64* __restrict__ dense, u64 classes) {
    GRID_STRIDE(v, n) {
        const int c = size_class[v];
        if (c < 0 || !((classes >> c) & 1ull)) continue;
        const i64 p = edge_ptr[v];
        if (p == 0) continue;
        const i64 a = range_of(starts, narrays, p);
        if (a < 0 || p >= ends[a]) continue;
        const i64 q = dense[offsets[a] + ((p - starts[a]) >> shifts[a])];
        if (q != 0) edge_ptr[v] = q;
    }
}

// take_small: the same result as popcount_forest + scan + extract_forest for small requests,
// in one launch: one block per request walks its tree and stops as soon as it has its count.
// Each thread owns one level-1 word (64 leaf words; for a one-word tree, the leaf itself) and
// reads only the leaf words that word marks non-empty, so full regions of a large array cost
// one read per 4,096 blocks. A popcount and a block scan per chunk of blockDim.x level-1
// words give each thread the rank of its first free block. Request r is TAKE_FIELDS int64 at
// req + r * TAKE_FIELDS: word address, count, out start, base, shift, then the tree's
// FOREST_LEVELS + 1 level offsets. Only this block touches the tree (one request per tree).
//
// take_small_ring writes the blocks into the block cache's rings instead (ring_shift = log2 of
// a ring's slots): request r's out start is (ring << 32) | its first slot in that ring, and
// its k-th block goes to slot ring * 2^ring_shift + (first slot + k) mod 2^ring_shift. Block 0
// also copies the rings' counters (state_words int64 from state_src to state), so that a
// refill is one upload and one launch.
#define TAKE_FIELDS (5 + FOREST_LEVELS + 1)
__device__ __forceinline__ i64 take_slot(i64 out_start, i64 k, int ring_shift) {
    if (ring_shift < 0) return out_start + k;
    const i64 mask = (1ll << ring_shift) - 1;
    return ((out_start >> 32) << ring_shift) + (((out_start & 0xffffffffll) + k) & mask);
}

// The owners (level-1 words) of a chunk that hold needed leaf words are listed in shared
// memory, and the block's warps share them out (warp w takes list entries w, w + 32, ...): a
// request's free blocks often sit under a few neighbouring owners (a fresh region), which
// would otherwise leave one warp walking them all while the others wait.
#define TAKE_OWNERS 1024                      // most threads a take_small block has
__device__ __forceinline__ void take_small_body(const i64* __restrict__ req,
                                                i64* __restrict__ out, int ring_shift) {
    __shared__ int warp_sums[32];
    __shared__ int total;
    __shared__ u64 s_mask[TAKE_OWNERS];       // the owner's needed leaf words
    __shared__ u64 s_level1[TAKE_OWNERS];     // its level-1 word as read
    __shared__ i64 s_rank[TAKE_OWNERS];       // its free blocks (then: rank of its first)
    __shared__ int s_owner[TAKE_OWNERS];      // its thread in the chunk
    const unsigned FULL = 0xffffffffu;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int warps = (int)(blockDim.x >> 5);
    const i64* r = req + (i64)blockIdx.x * TAKE_FIELDS;
    u64* words = (u64*)r[0];
    const i64 count = r[1], out_start = r[2], base = r[3], shift = r[4];
    const i64* off = r + 5;
    u64* leaf = words + off[0];
    const bool two_levels = off[2] > off[1];
    const i64 owners = two_levels ? off[2] - off[1] : off[1] - off[0];
    i64 taken = 0;
    for (i64 p0 = 0; p0 < owners && taken < count; p0 += blockDim.x) {
        const i64 p = p0 + threadIdx.x;
        u64 mask = 0ull;                       // my leaf words that hold free blocks
        if (p < owners) {
            if (two_levels) mask = words[off[1] + p];
            else mask = leaf[p] != 0ull ? 1ull : 0ull;
        }
        // every non-empty leaf word holds a free block, so only the leaf words among the
        // first (count - taken) non-empty ones of the chunk can be needed: read just those
        const u64 level1 = mask;               // (written back with the emptied words cleared)
        const int nonempty = __popcll(mask);
        const i64 before = block_exclusive_scan(nonempty, warp_sums, &total);
        const i64 need = count - taken - before;           // leaf words this thread may need
        if (need < nonempty) {
            u64 m = mask;                                  // keep the lowest `need` of them
            for (i64 c = 0; c < (need > 0 ? need : 0); ++c) m &= m - 1ull;
            mask ^= m;
        }
        // the owners with needed leaf words, in order
        const int at_list = block_exclusive_scan(mask != 0ull ? 1 : 0, warp_sums, &total);
        const int listed = total;
        if (mask != 0ull) {
            s_mask[at_list] = mask;
            s_level1[at_list] = level1;
            s_owner[at_list] = threadIdx.x;
        }
        __syncthreads();
        // each listed owner's free blocks, counted by one warp, a lane per leaf word (words
        // lane and lane + 32): a fresh region is counted 64 words abreast
        for (int e = warp; e < listed; e += warps) {
            const u64 m = s_mask[e];
            const i64 f = two_levels ? (p0 + s_owner[e]) * 64 : p0 + s_owner[e];
            int c = 0;
            if ((m >> lane) & 1ull) c += __popcll(leaf[f + lane]);
            if ((m >> (lane + 32)) & 1ull) c += __popcll(leaf[f + lane + 32]);
            for (int o = 16; o > 0; o >>= 1) c += __shfl_xor_sync(FULL, c, o);
            if (lane == 0) s_rank[e] = c;
        }
        __syncthreads();
        const int mine = threadIdx.x < listed ? (int)s_rank[threadIdx.x] : 0;
        const i64 k = taken + block_exclusive_scan(mine, warp_sums, &total);
        const int chunk = total;
        if (threadIdx.x < listed) s_rank[threadIdx.x] = mine && k < count ? k : -1;
        __syncthreads();
        // each listed owner's blocks taken by one warp: ranks of its leaf words by a warp scan
        for (int e = warp; e < listed; e += warps) {
            i64 at = s_rank[e];                // rank of the owner's first free block
            if (at < 0) continue;
            const u64 m = s_mask[e];
            const i64 own = p0 + s_owner[e];
            const i64 f = two_levels ? own * 64 : own;
            u64 emptied = 0ull;
            for (int half = 0; half < 2; ++half) {
                const int b = lane + 32 * half;
                const bool have = (m >> b) & 1ull;
                u64 x = have ? leaf[f + b] : 0ull;
                const int c = __popcll(x);
                int incl = c;                  // words in order: ranks by a warp scan
                for (int o = 1; o < 32; o <<= 1) {
                    const int y = __shfl_up_sync(FULL, incl, o);
                    if (lane >= o) incl += y;
                }
                i64 rank = at + incl - c;
                if (have && rank < count) {
                    const i64 w = f + b;
                    while (x != 0ull && rank < count) {
                        const int bit = __ffsll((long long)x) - 1;
                        out[take_slot(out_start, rank++, ring_shift)] =
                            base + ((w * 64 + bit) << shift);
                        x &= x - 1ull;
                    }
                    leaf[w] = x;
                    if (x == 0ull) emptied |= 1ull << b;
                }
                at += __shfl_sync(FULL, incl, 31);
            }
            for (int o = 16; o > 0; o >>= 1) emptied |= __shfl_xor_sync(FULL, emptied, o);
            if (lane == 0 && two_levels) {
                const u64 kept = s_level1[e] & ~emptied;
                words[off[1] + own] = kept;    // the owner's level-1 word
                i64 idx = own;                 // an emptied level-1 word: clear its ancestors
                for (int l = 2; kept == 0ull && l < FOREST_LEVELS && off[l + 1] > off[l]; ++l) {
                    const u64 bit = 1ull << (idx & 63);
                    const u64 was = atomicAnd(words + off[l] + (idx >> 6), ~bit);
                    if ((was & ~bit) != 0ull) break;   // the parent still has free children
                    idx >>= 6;
                }
            }
        }
        taken += chunk;
        __syncthreads();                       // the lists are refilled by the next chunk
    }
}

extern "C" __global__ void take_small(const i64* __restrict__ req, i64* __restrict__ out) {
    take_small_body(req, out, -1);
}

extern "C" __global__ void take_small_ring(const i64* __restrict__ req, i64* __restrict__ rings,
                                           int ring_shift, i64* __restrict__ state,
                                           const i64* __restrict__ state_src, int state_words) {
    if (blockIdx.x == 0)
        for (int i = threadIdx.x; i < state_words; i += blockDim.x) state[i] = state_src[i];
    take_small_body(req, rings, ring_shift);
}

// field_addresses: out[i] = field_bases[a] + ((p - bases[a]) >> 2) * itemsize for the slot
// whose destination address is p = ptrs[i], in block array a (the last base <= p; bases
// ascending); p == 0 (no block) gives 0.
extern "C" __global__ void field_addresses(const i64* __restrict__ ptrs, i64 n,
                                           const i64* __restrict__ bases, i64 narrays,
                                           const i64* __restrict__ field_bases, i64 itemsize,
                                           i64* __restrict__ out) {
    GRID_STRIDE(i, n) {
        const i64 p = ptrs[i];
        if (p == 0) {
            out[i] = 0;
            continue;
        }
        const i64 a = segment_of(bases, narrays, p);
        out[i] = field_bases[a] + ((p - bases[a]) >> 2) * itemsize;
    }
}

// release_forest: pointer ptrs[i] (0: none, skipped) lies in block array a (the last base <= ptrs[i]; bases
// ascending); its block (ptrs[i] - bases[a]) >> shift[a] is given back in tree a, and
// counts[a] (zeroed by the caller) counts the blocks given back per array (one atomic per
// array present in a warp).
extern "C" __global__ void release_forest(const i64* __restrict__ ptrs, i64 n,
                                          const i64* __restrict__ bases,
                                          const i64* __restrict__ shift, i64 narrays,
                                          const i64* __restrict__ word_addrs,
                                          const i64* __restrict__ table,
                                          unsigned long long* __restrict__ counts) {
    GRID_STRIDE(i, n) {
        const i64 p = ptrs[i];
        if (p == 0) continue;                       // no block
        const i64 a = segment_of(bases, narrays, p);
        u64* words = (u64*)word_addrs[a];
        const i64* off = table + a * (FOREST_LEVELS + 1);
        i64 b = (p - bases[a]) >> shift[a];
        for (int l = 0; l < FOREST_LEVELS && off[l + 1] > off[l]; ++l) {
            u64 was = atomicOr(words + off[l] + (b >> 6), 1ull << (b & 63));
            if (was != 0ull) break;
            b >>= 6;
        }
        const unsigned active = __activemask();
        const unsigned same = __match_any_sync(active, a);
        if ((threadIdx.x & 31) == __ffs(same) - 1)
            atomicAdd(counts + a, (unsigned long long)__popc(same));
    }
}

// out[i] = pool[next_slot[classes[i]]++] (the entries of one class take consecutive slots, in
// any order): one atomic per class present in a warp.
extern "C" __global__ void place_by_class(const i64* __restrict__ classes, i64 n,
                                          unsigned long long* __restrict__ next_slot,
                                          const i64* __restrict__ pool, i64* __restrict__ out) {
    GRID_STRIDE(i, n) {
        const i64 k = classes[i];
        out[i] = pool[class_slot(next_slot, k)];
    }
}

extern "C" __global__ void is_free(const u64* __restrict__ words, const i64* __restrict__ blocks,
                                   i64 n, bool* __restrict__ out) {
    GRID_STRIDE(i, n) {
        i64 b = blocks[i];
        out[i] = ((words[b >> 6] >> (b & 63)) & 1ull) != 0ull;
    }
}

// result[0] = min flat index of a wrong word (padding bits set, or an internal bit that is
// not the OR of its child word); stays ~0 when consistent.
extern "C" __global__ void tree_check(const u64* __restrict__ words,
                                      const i64* __restrict__ offsets, int levels,
                                      i64 num_blocks, u64* __restrict__ result) {
    const i64 total = offsets[levels];
    GRID_STRIDE(f, total) {
        int l = 0;
        while (l + 1 < levels && offsets[l + 1] <= f) ++l;
        i64 w = f - offsets[l];
        i64 n = l == 0 ? num_blocks : offsets[l] - offsets[l - 1];
        u64 word = words[f];
        bool bad = (word & ~valid_mask(w, n)) != 0ull;
        if (!bad && l > 0) {
            const u64* child = words + offsets[l - 1];
            for (int bit = 0; bit < 64; ++bit) {
                i64 c = w * 64 + bit;
                if (c >= n) break;
                bool expect = child[c] != 0ull;
                if ((((word >> bit) & 1ull) != 0ull) != expect) { bad = true; break; }
            }
        }
        if (bad) atomicMin(result, (u64)f);
    }
}
