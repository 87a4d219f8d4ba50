// The expiry delete's pairs of a sliding window, taken on the device from the pairs its
// entries were inserted with (streams/window_device.py).
//
// One thread per leaving entry (grid-stride): an entry whose edge has a later refresh in
// the window (its key src << 32 | dst among the `live` keys of `table`, its position below
// that key's limit: table[live + j]) is replaced by the pair (rep_src, rep_dst) of an entry
// that expires, which the delete drops as a repeat; every other entry is copied.
extern "C" __global__ void window_expiring(const int* src, const int* dst, long long n,
                                           const long long* table, int live, int rep_src,
                                           int rep_dst, int* out_src, int* out_dst)
{
    const long long* limits = table + live;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const int s = src[i], d = dst[i];
        const long long key = ((long long)s << 32) | (long long)(unsigned int)d;
        bool survives = false;
        for (int j = 0; j < live; ++j) {
            if (table[j] == key && i < limits[j]) {
                survives = true;
                break;
            }
        }
        out_src[i] = survives ? rep_src : s;
        out_dst[i] = survives ? rep_dst : d;
    }
}

// A batch's pairs as a set (named_fill), and the expiry's pairs less the ones the batch names
// (named_drop): a window whose expiry goes in one graph call with the batch's insert keeps
// the edges the batch refreshes. Open addressing over `mask + 1` slots (a power of two, at most
// half full; EMPTY_KEY: free), keys src << 32 | dst (ids are non-negative int32).
#define EMPTY_KEY 0xFFFFFFFFFFFFFFFFull

__device__ __forceinline__ unsigned long long pair_key(int s, int d)
{
    return ((unsigned long long)(unsigned int)s << 32) | (unsigned long long)(unsigned int)d;
}

__device__ __forceinline__ long long first_slot(unsigned long long key, int shift)
{
    return (long long)((key * 0x9E3779B97F4A7C15ull) >> shift);
}

extern "C" __global__ void named_fill(const int* src, const int* dst, long long n,
                                      unsigned long long* table, int shift, long long mask)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const unsigned long long key = pair_key(src[i], dst[i]);
        for (long long h = first_slot(key, shift);; h = (h + 1) & mask) {
            const unsigned long long was = atomicCAS(table + h, EMPTY_KEY, key);
            if (was == EMPTY_KEY || was == key) break;
        }
    }
}

// In place: every pair (src[i], dst[i]) whose key the table holds becomes (null_src, null_dst),
// a pair that names no edge.
extern "C" __global__ void named_drop(int* src, int* dst, long long n,
                                      const unsigned long long* table, int shift,
                                      long long mask, int null_src, int null_dst)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const unsigned long long key = pair_key(src[i], dst[i]);
        for (long long h = first_slot(key, shift);; h = (h + 1) & mask) {
            const unsigned long long t = table[h];
            if (t == key) {
                src[i] = null_src;
                dst[i] = null_dst;
                break;
            }
            if (t == EMPTY_KEY) break;
        }
    }
}

// The window's map from edge key to the sequence number of its latest queued entry
// (streams/window_device.py, LatestMap): open addressing over `mask + 1` slots, keys as above,
// values the sequence numbers (0 in a free slot). latest_record: every pair of a record, with
// sequence numbers seq0, seq0 + 1, ..., raises its key's value; latest_expire: every leaving
// entry (sequence numbers seq0, ...) whose key's value is its own (no later entry of its edge
// is queued) stays as it is, one with a later entry becomes (null_src, null_dst).
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
