// The write of a property update found by the batch paths' lookups (hornet.batch.found_update),
// in one kernel per property. Compiled once per process by cupy.RawModule (NVRTC, -std=c++17);
// includes segmented.cuh.
#include "segmented.cuh"

// found_write: for every found entry i < k (source ss[i], position pos[i] in its list, first
// batch pair first[i]): its slot's destination address p = edge_ptr[ss[i]] + 4 * pos[i], the
// field's address there (block array a: the last base <= p; field_bases is (narrays, nf)
// row-major, column ``field``), the value it held to old[i], the batch's value column[first[i]]
// written in its place and to kept[i]. Found entries are distinct slots: no two threads write
// one address.
template <typename T>
__global__ void found_write(const int* __restrict__ ss, const i64* __restrict__ pos,
                            const i64* __restrict__ first, i64 k,
                            const i64* __restrict__ edge_ptr, const i64* __restrict__ bases,
                            i64 narrays, const i64* __restrict__ field_bases, i64 nf, i64 field,
                            const T* __restrict__ column, T* __restrict__ kept,
                            T* __restrict__ old) {
    GRID_STRIDE(i, k) {
        const i64 p = edge_ptr[ss[i]] + 4 * pos[i];
        const i64 a = segment_of(bases, narrays, p);
        T* at = (T*)(field_bases[a * nf + field] + ((p - bases[a]) >> 2) * (i64)sizeof(T));
        const T v = column[first[i]];
        old[i] = *at;
        *at = v;
        kept[i] = v;
    }
}
