// Device side of hornet/algos/_edge_table.py: an open-addressing (linear probing) hash table
// from an undirected edge's int64 key (u << 32 | v, u < v) to a slot. keys[cap] holds
// ET_EMPTY, ET_TOMB (a deleted key; probes go on past it) or a key; cap is a power of two and
// the home slot of k is (k * ET_MULT) >> shift with shift = 64 - log2(cap) (Fibonacci hashing).
// Needs i64 / u64 from segmented.cuh.
#pragma once

#define ET_EMPTY (-1LL)
#define ET_TOMB (-2LL)
#define ET_MULT 0x9E3779B97F4A7C15ull

__device__ __forceinline__ i64 et_key(int u, int v) {
    const int a = u < v ? u : v, b = u < v ? v : u;
    return ((i64)a << 32) | (i64)(unsigned)b;
}

// Slot of key k, or -1.
__device__ __forceinline__ i64 et_find(const i64* __restrict__ keys, int shift, i64 k) {
    const u64 mask = (1ull << (64 - shift)) - 1ull;
    u64 s = ((u64)k * ET_MULT) >> shift;
    while (true) {
        const i64 c = keys[s];
        if (c == k) return (i64)s;
        if (c == ET_EMPTY) return -1;
        s = (s + 1) & mask;
    }
}

// Slot of key k, claimed (atomicCAS on an empty slot) when absent; *fresh says which.
// Tombstones are not reused (two threads inserting one key could otherwise claim two slots).
__device__ __forceinline__ i64 et_insert(i64* keys, int shift, i64 k, bool* fresh) {
    const u64 mask = (1ull << (64 - shift)) - 1ull;
    u64 s = ((u64)k * ET_MULT) >> shift;
    while (true) {
        i64 c = keys[s];
        if (c == ET_EMPTY) {
            c = (i64)atomicCAS((unsigned long long*)&keys[s], (unsigned long long)ET_EMPTY,
                               (unsigned long long)k);
            if (c == ET_EMPTY) { *fresh = true; return (i64)s; }
        }
        if (c == k) { *fresh = false; return (i64)s; }
        s = (s + 1) & mask;
    }
}
