// Device helpers shared by the prepare kernels of the small, grid-prepared and medium batches
// (small_batch.cu: small_prepare; deferred_grid.cu: grid_prepare; medium_batch.cu:
// medium_segments): an entry's look-up, the flags that cut segments, what one segment (a run
// of one source's kept entries) does to its list, and a deferred batch's header (stalled,
// published to the host) and found edges' values.
// Included after small_rewrite.cuh (Layout, header slots, COPY_ITEMS, PIECE_ITEMS,
// size_class_for).

#pragma once

// ------------------------------------------------------------------------------ entries
// An entry's look-up: its destination w against its source's sorted list lst of d0 items,
// `at` the lower bound of w there (0 for an empty list): the slot of w (found) or -1 - the
// slot it would take (absent). Kept: an insert's (or upsert's) absent entries, a delete's
// found ones; its position: the slot an insert puts it before, the slot a delete removes.
struct EntryLookup {
    bool keep;
    i64 pos;
};

__device__ __forceinline__ EntryLookup entry_lookup(bool inserting, const int* lst, i64 d0,
                                                    i64 at, int w) {
    const i64 p = (d0 > 0 && at < d0 && lst[at] == w) ? at : -1 - at;
    return {inserting ? p < 0 : p >= 0, inserting ? -1 - p : p};
}

// A kept entry's two flags for the scan that cuts segments and numbers result rows, packed
// as two 16-bit counts: it heads a segment (the first entry, or a source other than the
// previous entry's: `prev`), and it has a result row (not the mirrored copy of an undirected
// edge: src < dst then).
__device__ __forceinline__ int segment_flags(bool first, int src, int prev, int dst,
                                             bool mirror) {
    const int head = (first || src != prev) ? 1 : 0;
    const int shown = (!mirror || src < dst) ? 1 : 0;
    return head + (shown << 16);
}

// ------------------------------------------------------------------------------ segments
// A segment's list after the batch: its new degree, the size class of the block it moves to
// (-1: rewritten in place), and whether its old block is given back.
struct SegmentMove {
    i64 d1;
    i64 to;
    bool give_back;
};

// The rules of a segment of c entries whose list holds d0 items in a block of class cls (-1:
// no list yet). Insert (``inserting``: an insert or upsert): the list outgrows its block and
// moves to the smallest class that holds it. Delete: it empties (its block is given back), or
// falls under a quarter of its block and a smaller class holds it (it moves there), unless
// ``keep_blocks`` (lists stay in their blocks). Either way, a list that stays and whose
// in-place rewrite would move more than COPY_ITEMS items (``in_place``: the items from its
// first change on, plus an insert's new ones) is copied to a fresh block of its own class,
// when that class is at most copy_max_class and not ``keep_blocks``.
__device__ __forceinline__ SegmentMove segment_move(bool inserting, i64 d0, i64 c, i64 cls,
                                                    i64 in_place, i64 min_class,
                                                    i64 copy_max_class, bool keep_blocks) {
    SegmentMove m = {0, -1, false};
    if (inserting) {
        m.d1 = d0 + c;
        const i64 capacity = cls >= 0 ? (1ll << cls) : 0;
        if (m.d1 > capacity) {
            m.to = size_class_for(m.d1, min_class);
            m.give_back = cls >= 0;
        }
    } else {
        m.d1 = d0 - c;
        const i64 target = size_class_for(m.d1, min_class);
        if (m.d1 == 0) {
            m.give_back = true;
        } else if (!keep_blocks && 4 * m.d1 < (1ll << cls) && target < cls) {
            m.to = target;
            m.give_back = true;
        }
    }
    if (m.to < 0 && m.d1 > 0 && !keep_blocks && cls <= copy_max_class && in_place > COPY_ITEMS) {
        m.to = cls;                                  // long in-place rewrite: copy
        m.give_back = true;
    }
    return m;
}

// The pieces of rewrite work of a list of d0 items moving to class `to` (-1: staying): one
// per PIECE_ITEMS old items of a moving list, else one.
__device__ __forceinline__ i64 segment_pieces(i64 to, i64 d0) {
    return to >= 0 && d0 > PIECE_ITEMS ? (d0 + PIECE_ITEMS - 1) / PIECE_ITEMS : 1;
}

// The pieces of a MODE_WIDE in-place removal from a list of d0 items whose first removed item
// is p0: one per multiple of WIDE_ITEMS that [p0, d0) reaches into.
__device__ __forceinline__ i64 wide_pieces(i64 p0, i64 d0) {
    return (d0 - 1) / WIDE_ITEMS - p0 / WIDE_ITEMS + 1;
}

// ------------------------------------------------------------------------ deferred header
// Deferred batches with a header row in mapped pinned host memory (host_header given): the
// header's first H_READ words are written there, then, once they are visible to the host,
// the batch's ticket in the word after them (the host polls it: no copy, no event). The
// header is read around the SMs' L1 caches: other blocks of a grid may have written it.
#define H_READ (H_FOUND + 1)
__device__ __forceinline__ void publish_header(const i64* header, i64* host, i64 ticket) {
    if (host == nullptr) return;
    __syncthreads();
    for (int i = threadIdx.x; i < H_READ; i += blockDim.x) host[i] = __ldcg(&header[i]);
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) *(volatile i64*)(host + H_READ) = ticket;
}

// The header of a deferred batch that does nothing (a batch before it found a ring short):
// no entries, no work, stalled (one thread writes it).
__device__ __forceinline__ void stalled_header(i64* header) {
    header[H_KEPT] = 0;
    header[H_SEGMENTS] = 0;
    header[H_RESULTS] = 0;
    header[H_PIECES] = 0;
    header[H_DONE] = 0;
    header[H_ACCEPT] = 0;
    header[H_STALLED] = 1;
    header[H_FOUND] = 0;
}

// ------------------------------------------------------------------------ found edges
// An upsert's found edge i (its slot's address in one property's column: `at_field`): the
// value it held to old[i], the batch's value of its pair written there and to out[i]. Found
// entries are distinct slots.
template <typename T>
__device__ __forceinline__ void found_value(i64 at_field, i64 values, i64 pair, i64 out,
                                            i64 old, i64 i) {
    T* slot = (T*)at_field;
    const T v = ((const T*)values)[pair];
    ((T*)old)[i] = *slot;
    *slot = v;
    ((T*)out)[i] = v;
}

// found_value of every property of the graph but the destination (F: MAKE_FIELDS' fields;
// old_: per field the found edges' old values), by field size.
__device__ __forceinline__ void found_values(const Fields& F, const i64* old_, i64 at,
                                             i64 pair, i64 i) {
    for (int f = 1; f < F.nf; ++f) {
        const i64 a = field_address(F, at, f);
        switch (field_size(F, f)) {
        case 1: found_value<unsigned char>(a, F.values[f], pair, F.out[f], old_[f], i); break;
        case 2: found_value<unsigned short>(a, F.values[f], pair, F.out[f], old_[f], i); break;
        case 4: found_value<unsigned int>(a, F.values[f], pair, F.out[f], old_[f], i); break;
        default: found_value<unsigned long long>(a, F.values[f], pair, F.out[f], old_[f], i);
        }
    }
}
