// A sliding window's expiry decided on the device (streams/window_device.py, LatestMap): a map
// from edge key (src << 32 | dst, ids non-negative int32) to the number of its latest queued
// entry, by open addressing over `mask + 1` slots (a power of two, at most half full;
// EMPTY_KEY: free; values 0 in a free slot).
#define EMPTY_KEY 0xFFFFFFFFFFFFFFFFull

__device__ __forceinline__ unsigned long long pair_key(int s, int d)
{
    return ((unsigned long long)(unsigned int)s << 32) | (unsigned long long)(unsigned int)d;
}

__device__ __forceinline__ long long first_slot(unsigned long long key, int shift)
{
    return (long long)((key * 0x9E3779B97F4A7C15ull) >> shift);
}

// latest_record: every pair of a record, numbered seq0, seq0 + 1, ..., raises its key's value;
// latest_expire: every leaving entry (numbered seq0, ...) whose key's value is its own (no later
// entry of its edge is queued) stays as it is, one with a later entry becomes
// (null_src, null_dst).
extern "C" __global__ void latest_record(const int* src, const int* dst, long long n,
                                         long long seq0, unsigned long long* keys,
                                         unsigned long long* values, int shift, long long mask)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const unsigned long long key = pair_key(src[i], dst[i]);
        for (long long h = first_slot(key, shift);; h = (h + 1) & mask) {
            const unsigned long long was = atomicCAS(keys + h, EMPTY_KEY, key);
            if (was == EMPTY_KEY || was == key) {
                atomicMax(values + h, (unsigned long long)(seq0 + i));
                break;
            }
        }
    }
}

extern "C" __global__ void latest_expire(int* src, int* dst, long long n, long long seq0,
                                         const unsigned long long* keys,
                                         const unsigned long long* values, int shift,
                                         long long mask, int null_src, int null_dst)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const unsigned long long key = pair_key(src[i], dst[i]);
        bool later = false;
        for (long long h = first_slot(key, shift);; h = (h + 1) & mask) {
            const unsigned long long t = keys[h];
            if (t == key) {
                later = values[h] > (unsigned long long)(seq0 + i);
                break;
            }
            if (t == EMPTY_KEY) break;        // (every queued entry's key is in the map)
        }
        if (later) {
            src[i] = null_src;
            dst[i] = null_dst;
        }
    }
}
