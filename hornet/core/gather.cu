// Gathering the lists of a pointer view into one contiguous array (CUDA C++, compiled once per
// process on first use; see hornet/core/gather.py).

#include "segmented.cuh"     // i64, segmented_loop

// out[out_off[v] + j] = list_v[j] for j < deg(v), T the item type; off: exclusive scan of the
// degrees (total last). One thread per item, its list found by binary search.
template <typename T>
__global__ void gather_lists(const i64* __restrict__ base, const i64* __restrict__ off,
                             const i64* __restrict__ out_off, i64 nv, i64 total,
                             T* __restrict__ out) {
    segmented_loop(off, nv, total, [&](i64 t, i64 v) {
        i64 j = t - off[v];
        out[out_off[v] + j] = ((const T*)base[v])[j];
    });
}
