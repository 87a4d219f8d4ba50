"""The device part of deferred batches (hornet.batch.gpu.deferred) emulated on the CPU
backend, for the host logic's tests without a GPU: the CPU small path's kernels run at
"launch", with the GPU kernels' stall and accept rules around them, and a header may be
reported as not ready yet (``late``: the chance of it), as an unfinished GPU batch's is."""
from __future__ import annotations

import numpy as np

from hornet.batch.cpu.small import CpuSmallBatches
from hornet.batch.small_layout import DEFERRED_READ_WORDS as READ_WORDS
from hornet.batch.small_layout import (H_ACCEPT, H_CLASS, H_FREED, H_PIECES, H_STALLED,
                                       MODE_INSERT, NUM_CLASSES)


class CpuDeferred:
    slots = 8
    late = 0.3
    limits_due = 0
    prefilled = False

    def __init__(self):
        self.work = [CpuSmallBatches() for _ in range(self.slots)]
        self.headers = np.zeros((self.slots, READ_WORDS), dtype=np.int64)
        self.stall = 0
        self.limits = np.zeros(NUM_CLASSES, dtype=np.int64)
        self.rng = np.random.default_rng(0)
        self.launches = 0

    @staticmethod
    def stage(slot, both):
        return both[0].copy(), both[1].copy()

    def set_limits(self, limits):
        self.limits = np.asarray(limits, dtype=np.int64).copy()

    def clear_stall(self):
        self.stall = 0

    def launch(self, slot, s, d, mirror, degree, size_class, edge_ptr, min_class, cache,
               lookup, field_dtypes, values, outs, rows):
        self.launches += 1
        h = self.headers[slot]
        h[:] = 0
        if self.stall:
            h[H_STALLED] = 1
            return
        w = self.work[slot]
        header, r = w.prepare(np.ascontiguousarray(s, dtype=np.int64),
                              np.ascontiguousarray(d, dtype=np.int64), mirror, MODE_INSERT,
                              degree, size_class, edge_ptr, min_class)
        rows[:] = r
        need = header[H_CLASS:H_CLASS + NUM_CLASSES]
        freed = header[H_FREED:H_FREED + NUM_CLASSES]
        size = cache.state[NUM_CLASSES:] - cache.state[:NUM_CLASSES]
        accept = 0
        for k in np.flatnonzero(freed):
            f, n = freed[k], need[k]
            if size[k] + f <= cache.ring_slots and (f <= n or size[k] - n + f <= self.limits[k]):
                accept |= 1 << int(k)
        h[:] = header[:READ_WORDS]
        h[H_ACCEPT] = accept
        if (need > size).any():
            h[H_STALLED] = 1
            self.stall = 1
            return
        h[H_STALLED] = 0
        w.rewrite(MODE_INSERT, int(header[H_PIECES]), cache, accept, lookup, field_dtypes,
                  values, outs, degree, size_class, edge_ptr)

    def ready(self, slot):
        return self.rng.random() >= self.late

    def header(self, slot):
        return self.headers[slot].tolist()

    def spilled(self, slot, count):
        return self.work[slot].spilled(count)
