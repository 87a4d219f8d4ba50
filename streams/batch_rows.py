"""The rows of a replay's per-batch table, finished as soon as reading them costs no wait.

A row's counts (edges inserted, deleted, expired; the graph's edge count) are the lengths of
the batch's changes. A GPU graph's small inserts return before the device has run them
(:mod:`hornet.batch.deferred_path`): reading a change's length right after its call would
wait for the device batch after batch. Where nothing else reads the graph between batches
(no analytics, no verification, no snapshots, no per-batch callback) rows are finished in
order once their batches' changes are settled (the graph settles the batches whose headers
have come each time it queues one), with at most ``DEPTH`` rows waiting: the host then runs
up to that many batches ahead of the device, and waits only when the device falls that far
behind. The edge count follows from the changes (before the batch, plus inserted, less
deleted and expired) and is checked against the graph's at the end. The time spent reading
the counts back (a wait for the device, when it runs behind the host) is the replay's update
time too.
"""
from __future__ import annotations

import time
from collections import deque

__all__ = ["BatchRows", "DEPTH"]

#: lazy rows waiting for their batches' changes at most (then the oldest is read, waiting for
#: the device): fewer than the deferred path's workspaces (hornet.batch.gpu.deferred.SLOTS),
#: so that a change a row holds is read before its workspace takes another batch
DEPTH = 4


class BatchRows:
    """Appends finished rows to ``out`` (column name -> list) and their counts to
    ``totals``; ``lazy``: finish each row once its batch's changes are settled, at most
    ``DEPTH`` rows later (see the module)."""

    def __init__(self, out: dict, totals: dict, graph, lazy: bool):
        self.out, self.totals, self.graph, self.lazy = out, totals, graph, lazy
        self.late: deque = deque()
        self.edges = int(graph.num_edges) if lazy else 0
        self.seconds = 0.0      # spent reading counts back (waits for the device included)

    def add(self, row: dict, changes) -> None:
        """The row of a batch just applied (without its counts) and its BatchChanges."""
        t = time.perf_counter()
        if not self.lazy:
            self._finish(row, changes, int(self.graph.num_edges))
        else:
            late = self.late
            late.append((row, changes))
            while late and (len(late) > DEPTH or not _pending(late[0][1])):
                self._finish(*late.popleft(), None)
        self.seconds += time.perf_counter() - t

    def close(self) -> None:
        """Finish the rows left (lazy rows: check the edge count against the graph's)."""
        if self.late:
            t = time.perf_counter()
            while self.late:
                self._finish(*self.late.popleft(), None)
            edges = self.graph.num_edges
            self.seconds += time.perf_counter() - t
            if self.edges != edges:
                raise AssertionError(f"replay: edge count {self.edges} from the changes, "
                                     f"{edges} in the graph")

    def _finish(self, row: dict, changes, edges) -> None:
        n_ins = len(changes.inserted) if changes.inserted is not None else 0
        n_del = len(changes.deleted) if changes.deleted is not None else 0
        n_exp = len(changes.expired) if changes.expired is not None else 0
        if edges is None:
            edges = self.edges = self.edges + n_ins - n_del - n_exp
        row.update(inserted=n_ins, deleted=n_del + n_exp, expired=n_exp, edges=edges)
        for k in self.out:
            self.out[k].append(row[k])
        self.totals["inserted"] += n_ins
        self.totals["deleted"] += n_del + n_exp
        self.totals["expired"] += n_exp


def _pending(changes) -> bool:
    """Whether a change of the batch (BatchChanges) is not settled yet (reading its length
    would wait for the device)."""
    for c in (changes.inserted, changes.updated, changes.deleted, changes.expired):
        if c is not None and getattr(c, "pending", False):
            return True
    return False
