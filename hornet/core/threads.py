"""A few threads owned by hornet that run the parts of a split CPU kernel (:mod:`.jit`).

A split kernel is one serial Numba compilation (``nogil``) of a loop whose iterations are
independent; its last two arguments ``part, parts`` pick the share of the loop it runs.
:func:`run_parts` runs part 0 on the calling thread and the others on worker threads, which
are started on first use, one fewer than ``numba.get_num_threads()`` (which follows
``NUMBA_NUM_THREADS`` and ``numba.set_num_threads`` as the parallel kernels do). They wait
on a lock between calls: no spinning, no environment or allocator change, nothing done to
the process until a split call runs. A part is run by whichever thread claims it first: the
calling thread, done with part 0, claims the parts that no worker has begun, so that a
worker the system has not scheduled yet (a busy machine) never holds the call up. A call made
while another thread is running a split kernel (or from a forked child, whose workers are
gone) runs its parts one after another on the calling thread: same result, no waiting on a
busy pool.
"""
from __future__ import annotations

import os
import queue
import threading

import numba

__all__ = ["run_parts", "parts_for"]


class _Job:
    """One part of a split call: run once, by the first thread that claims it."""

    __slots__ = ("fn", "args", "claim", "done", "result", "error")

    def __init__(self, fn, args):
        self.fn = fn
        self.args = args
        self.claim = threading.Lock()         # held by the thread that runs the part
        self.done = threading.Lock()          # released when a worker has run it
        self.done.acquire()
        self.result = None
        self.error = None

    def run(self) -> None:
        try:
            self.result = self.fn(*self.args)
        except BaseException as e:            # handed to the caller of run_parts
            self.error = e
        self.fn = self.args = None


class _Worker:
    """One daemon thread that runs the jobs handed to it (``start``), in order, each unless
    the caller has claimed it first."""

    def __init__(self, index: int):
        self._jobs = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name=f"hornet-part-{index}",
                                       daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job.claim.acquire(blocking=False):
                job.run()
                job.done.release()
            job = None                        # no reference kept while waiting

    def start(self, job: _Job) -> None:
        self._jobs.put(job)


class _Pool:
    def __init__(self):
        self.pid = os.getpid()
        self.workers: list[_Worker] = []
        self.busy = threading.Lock()

    def grow(self, count: int) -> None:
        while len(self.workers) < count:
            self.workers.append(_Worker(len(self.workers) + 1))


_pool: _Pool | None = None
_pool_made = threading.Lock()


def _the_pool() -> _Pool:
    global _pool
    pool = _pool
    if pool is None or pool.pid != os.getpid():       # first use, or a forked child
        with _pool_made:
            if _pool is None or _pool.pid != os.getpid():
                _pool = _Pool()
            pool = _pool
    return pool


def _drop(pool: _Pool) -> None:
    """Stop using ``pool``: the next split call starts new workers."""
    global _pool
    with _pool_made:
        if _pool is pool:
            _pool = None


def parts_for() -> int:
    """How many parts a split call runs in: Numba's thread count (of the calling thread)."""
    return max(1, int(numba.get_num_threads()))


def run_parts(fn, args: tuple, parts: int) -> list:
    """``fn(*args, p, parts)`` for every part ``p`` (part 0 on this thread, the others on the
    pool's workers, at the same time, or on this thread where their worker has not begun
    them when part 0 ends); returns their results in part order."""
    if parts <= 1:
        return [fn(*args, 0, 1)]
    pool = _the_pool()
    if not pool.busy.acquire(blocking=False):          # another thread's split call
        return [fn(*args, p, parts) for p in range(parts)]
    try:
        pool.grow(parts - 1)
        jobs = [_Job(fn, args + (p, parts)) for p in range(1, parts)]
        failed = first = None
        try:
            for worker, job in zip(pool.workers, jobs):
                worker.start(job)
            first = fn(*args, 0, parts)
        except BaseException as e:
            failed = e
        # every part ends before return: the ones no worker has begun run here (after an
        # exception in part 0 they are only claimed, so that no worker runs them)
        error = failed
        for job in jobs:
            if job.claim.acquire(blocking=False):
                if failed is None:
                    job.run()
                else:
                    job.fn = job.args = None
            else:
                try:
                    job.done.acquire()
                except BaseException:                 # interrupted while waiting: the
                    _drop(pool)                       # worker may still run, not reused
                    raise
            if error is None and job.error is not None:
                error = job.error
        if error is not None:
            raise error
        return [first] + [job.result for job in jobs]
    finally:
        pool.busy.release()
