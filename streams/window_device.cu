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
