"""What the memory policy does in a windowed GPU replay's steady state, batch by batch.

    python3 -m bench.tools.window_policy_gpu [--events 4000000] [--window 2000000]
        [--batches 10000 100000] [--modes base c0]

The stream of ``bench window`` (uniform random insert events over 2^20 ids, seed 0) is
replayed undirected without analytics with the window; from the batch after the window is
full on, per batch: the calls of ``compact_memory`` (every delete path's), those whose
compaction moved blocks (and the blocks moved), list refits (and the lists they moved),
the blocks that growing lists take (and the slots they hold), block arrays created and freed, the device's allocation-table rebuilds, and the host time
inside ``compact_memory`` (device synchronised around it). Reserved block bytes when the
window is first full, and at the end. ``--modes``: ``base`` (the library as it is), ``c0``
(``compact_memory`` skipped inside the replay: what the policy costs, and how far memory
drifts without it), ``cN`` (run once in N calls). A replay of each mode first runs unwrapped, for its update time.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter

import numpy as np


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.window_policy_gpu",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=4_000_000)
    ap.add_argument("--window", type=int, default=2_000_000)
    ap.add_argument("--batches", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--modes", nargs="+", default=["base", "c0"])
    ap.add_argument("--device", default="gpu", help="gpu (cpu: to check the tool itself)")
    a = ap.parse_args(argv)

    import streams.replay as rp
    from bench.window import write_random_stream
    from hornet.batch import pipeline
    from hornet.memory import list_fit, manager
    from streams.replay import replay

    sync = (lambda: None)
    if a.device == "gpu":
        import cupy
        sync = cupy.cuda.get_current_stream().synchronize
    count = Counter()
    state = {"on": False, "skip": 0, "batch": 0, "g": None, "every": 1, "calls": 0,
             "bytes": []}
    compact_fn = pipeline.compact_memory

    def binders():
        """Every hornet module that binds compact_memory (imported by now)."""
        return [m for m in list(sys.modules.values())
                if m is not None and getattr(m, "__name__", "").startswith("hornet")
                and getattr(m, "compact_memory", None) in (compact_fn, compact_memory)]

    def compact_memory(g, *args, **kw):
        state["calls"] += 1
        if state["every"] != 1 and (not state["every"] or state["calls"] % state["every"]):
            return None
        if not state["on"]:
            return compact_fn(g, *args, **kw)
        sync()
        t = time.perf_counter()
        try:
            return compact_fn(g, *args, **kw)
        finally:
            sync()
            count["compact_memory us"] += (time.perf_counter() - t) * 1e6
            count["compact_memory calls"] += 1

    inner_compact = manager.MemoryManager.compact

    def compact(self, *args, **kw):
        if state["on"]:                   # what may trigger it: free room past the band,
            share = manager.STEADY_FREE_SHARE if self.steady else manager.FREE_SHARE
            over = self._free_slots - share * self.list_slots() > 0
            below = min(self.compact_below, manager.STEADY_COMPACT_BELOW) if self.steady \
                else self.compact_below
            under = [k for k in self.pools
                     if self._class_used.get(k, 0) < below * self._class_blocks.get(k, 0)]
        old, new = inner_compact(self, *args, **kw)
        if state["on"]:
            count["compact calls"] += 1
            if old.size:                  # or classes under their threshold
                count["compactions that moved"] += 1
                count["blocks moved"] += int(old.size)
                count["moved: free room over the band"] += int(over)
                count["moved: classes under threshold"] += len(under)
                count["classes compacted"] += len(self.last_compacted)
        return old, new

    inner_refit = list_fit.ListFit.refit

    def refit(self, *args, **kw):
        moved = inner_refit(self, *args, **kw)
        if state["on"]:
            count["refits"] += 1
            count["lists refitted"] += int(moved or 0)
        return moved

    inner_changed = manager.MemoryManager._arrays_changed

    def arrays_changed(self, created=(), freed=()):
        if state["on"]:
            count["arrays created"] += len(created)
            count["arrays freed"] += len(freed)
        return inner_changed(self, created, freed)

    inner_lookup = manager.MemoryManager.lookup

    def lookup(self):
        if state["on"] and self._lookup is None:
            count["lookup rebuilds"] += 1
        return inner_lookup(self)

    # the blocks that growing lists take (every path's allocation: the device's takes ahead
    # and after the read-back, the host's), counted with the slots they hold
    from hornet.memory import gpu_take
    inner_took, inner_on_device = gpu_take.took_ahead, gpu_take.allocate_on_device
    inner_counts = manager.MemoryManager.allocate_counts

    def taken(per_class) -> None:
        c = np.asarray(per_class, dtype=np.int64)
        count["blocks taken"] += int(c.sum())
        count["slots taken"] += int((c << np.arange(c.shape[0], dtype=np.int64)).sum())

    def took_ahead(mm, ahead, per_class):
        if state["on"]:
            taken(per_class)
        return inner_took(mm, ahead, per_class)

    def allocate_on_device(mm, per_class, need_ptr):
        if state["on"]:
            taken(per_class)
        return inner_on_device(mm, per_class, need_ptr)

    def allocate_counts(self, per_class):
        if state["on"]:
            taken(per_class)
        return inner_counts(self, per_class)

    inner_apply = rp._apply_batch

    def apply_batch(g, *args, **kw):
        state["batch"] += 1
        if state["batch"] == state["skip"] + 1:
            state["bytes"].append(g._mm.stats()["block_bytes"])
            state["on"] = True
        state["g"] = g
        return inner_apply(g, *args, **kw)

    def wrap(on: bool) -> None:
        for m in binders():
            m.compact_memory = compact_memory if on else compact_fn
        manager.MemoryManager.compact = compact if on else inner_compact
        list_fit.ListFit.refit = refit if on else inner_refit
        manager.MemoryManager._arrays_changed = arrays_changed if on else inner_changed
        manager.MemoryManager.lookup = lookup if on else inner_lookup
        rp._apply_batch = apply_batch if on else inner_apply
        gpu_take.took_ahead = took_ahead if on else inner_took
        gpu_take.allocate_on_device = allocate_on_device if on else inner_on_device
        manager.MemoryManager.allocate_counts = allocate_counts if on else inner_counts

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "random.arrows")
        write_random_stream(path, a.events, 1 << 20)
        for batch in a.batches:
            for mode in a.modes:
                skip = a.window // batch + 2
                state["every"] = int(mode[1:]) if mode[0] == "c" else 1
                if mode[0] == "c":             # (the unwrapped run skips compaction too)
                    for m in binders():
                        m.compact_memory = compact_memory
                replay(path, batch_size=batch, window=a.window, directed=False, algos="none",
                       device=a.device, max_events=a.window + 5 * batch)       # warm
                s = replay(path, batch_size=batch, window=a.window, directed=False,
                           algos="none", device=a.device).summary
                count.clear()
                state.update(on=False, skip=skip, batch=0, g=None, bytes=[])
                wrap(True)
                try:
                    replay(path, batch_size=batch, window=a.window, directed=False,
                           algos="none", device=a.device)
                    g = state["g"]
                    state["bytes"].append(g._mm.stats()["block_bytes"])
                    entries = g._entries
                finally:
                    wrap(False)
                    state["on"] = False
                nb = max(state["batch"] - skip, 1)
                b0, b1 = state["bytes"][0], state["bytes"][-1]
                print(f"batch {batch:,} {mode}: update {s['update_seconds'] * 1e6 / s['batches']:.0f}"
                      f" us/batch; reserved block MB full {b0 / 2**20:.1f} end {b1 / 2**20:.1f}"
                      f" ({b1 / b0:.3f}); entries {entries:,} ({b1 / max(entries, 1):.1f} B/entry)")
                print("   per steady batch: " + ", ".join(
                    f"{k} {v / nb:.2f}" for k, v in sorted(count.items())), flush=True)
            state["every"] = 1


if __name__ == "__main__":
    main()
