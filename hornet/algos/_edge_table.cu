// Batched operations of hornet/algos/_edge_table.py (EdgeTable) on the GPU. One thread per
// queried key; grid-stride loops (any grid size works).
#include "segmented.cuh"
#include "../algos/_edge_table.cuh"

// slots[i] = slot of (u[i], v[i]) after inserting it; fresh keys counted in *added and
// flagged in fresh_out (when not null).
extern "C" __global__ void et_insert_pairs(i64* keys, int shift, const int* __restrict__ u,
                                           const int* __restrict__ v, i64 n,
                                           i64* __restrict__ slots,
                                           unsigned char* __restrict__ fresh_out,
                                           unsigned long long* added) {
    unsigned long long local = 0;
    GRID_STRIDE(i, n) {
        bool fresh = false;
        slots[i] = et_insert(keys, shift, et_key(u[i], v[i]), &fresh);
        if (fresh_out) fresh_out[i] = fresh;
        local += fresh;
    }
    if (local) atomicAdd(added, local);
}

// Reinsert live keys (rehash): slots[i] = new slot of keys_in[i].
extern "C" __global__ void et_insert_keys(i64* keys, int shift, const i64* __restrict__ keys_in,
                                          i64 n, i64* __restrict__ slots) {
    GRID_STRIDE(i, n) {
        bool fresh = false;
        slots[i] = et_insert(keys, shift, keys_in[i], &fresh);
    }
}

// slots[i] = slot of (u[i], v[i]) or -1.
extern "C" __global__ void et_find_pairs(const i64* __restrict__ keys, int shift,
                                         const int* __restrict__ u, const int* __restrict__ v,
                                         i64 n, i64* __restrict__ slots) {
    GRID_STRIDE(i, n) { slots[i] = et_find(keys, shift, et_key(u[i], v[i])); }
}

// Delete (u[i], v[i]) where present (tombstone); *removed counts them.
extern "C" __global__ void et_delete_pairs(i64* keys, int shift, const int* __restrict__ u,
                                           const int* __restrict__ v, i64 n,
                                           unsigned long long* removed) {
    unsigned long long local = 0;
    GRID_STRIDE(i, n) {
        const i64 s = et_find(keys, shift, et_key(u[i], v[i]));
        if (s >= 0) {
            // (a key deleted twice in one batch: only one thread wins the exchange)
            const i64 old = (i64)atomicExch((unsigned long long*)&keys[s],
                                            (unsigned long long)ET_TOMB);
            local += old >= 0;
        }
    }
    if (local) atomicAdd(removed, local);
}
