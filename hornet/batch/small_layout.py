"""The layout that the small-batch path's prepare step hands to the host (CPU and GPU alike).

A small batch (:mod:`hornet.batch.small_path`) is prepared by one kernel
(:mod:`hornet.batch.cpu.small` or :mod:`hornet.batch.gpu.small`, whose ``small_batch.cu``
uses the same slots) that writes a header of int64 words: a few counts, then per size class
the blocks the batch needs and the blocks it gives back. The host reads the header once and
decides the block cache's part from it.
"""
from __future__ import annotations

#: most entries (after mirroring) a small batch may have: one GPU block sorts them in shared
#: memory
SMALL_ENTRIES = 4096
#: dst plus at most seven edge properties
MAX_FIELDS = 8
MODE_INSERT, MODE_DELETE = 0, 1
#: deferred small batches: the new pairs inserted, the present ones' properties rewritten
MODE_UPSERT = 2
#: flag on MODE_DELETE (GPU small path): lists that keep their blocks are rewritten in place by
#: pieces side by side, none copied within its class (hornet.batch.gpu.small)
MODE_WIDE = 16

# header slots (small_rewrite.cuh)
H_KEPT, H_SEGMENTS, H_MOVES, H_LOOPS, H_MIN_ID, H_MAX_ID, H_RESULTS, H_RELEASES, H_CLASS = \
    range(9)
NUM_CLASSES = 64
H_FREED = H_CLASS + NUM_CLASSES          # old blocks given back, per size class
H_PIECES = H_FREED + NUM_CLASSES + 2     # blocks of the rewrite (pieces of segments)
H_WARPS = H_PIECES + 1                   # medium batches: lists rewritten one warp each
H_ACCEPT = H_WARPS + 1                   # deferred batches: classes whose rings took blocks
H_STALLED = H_ACCEPT + 1                 # deferred batches: 1 when the batch did not run
H_FOUND = H_STALLED + 1                  # deferred upserts: pairs found present
H_TICKET = H_FOUND + 1                   # MODE_WIDE deletes: pieces taken by the removal
H_WIDE_PIECES = H_TICKET + 1             # MODE_WIDE deletes: pieces of the long lists,
H_WIDE_LONG = H_WIDE_PIECES + 1          #   the long lists (whole blocks per piece),
H_WIDE_SHORT = H_WIDE_LONG + 1           #   the short lists (one warp each)
DEFERRED_READ_WORDS = H_FOUND + 1        # the header words a deferred batch reads back
HEADER_WORDS = 256
