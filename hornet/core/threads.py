"""A few threads owned by hornet that run the parts of a split CPU kernel (:mod:`.jit`).

A split kernel is one serial Numba compilation (``nogil``) of a loop whose iterations are
independent; its last two arguments ``part, parts`` pick the share of the loop it runs.
:func:`run_parts` runs part 0 on the calling thread and the others on worker threads, which
are started on first use, one fewer than ``numba.get_num_threads()`` (which follows
``NUMBA_NUM_THREADS`` and ``numba.set_num_threads`` as the parallel kernels do). They wait
on a lock between calls: no spinning, no environment or allocator change, nothing done to
the process until a split call runs. A call made while another thread is running a split
kernel (or from a forked child, whose workers are gone) runs its parts one after another
on the calling thread: same result, no waiting on a busy pool.
"""
from __future__ import annotations

import os
import threading

import numba

__all__ = ["run_parts", "parts_for"]


class _Worker:
    """One daemon thread that runs one job at a time: ``start`` hands it over, ``wait``
    returns its result (or raises its exception)."""

    def __init__(self, index: int):
        self._go = threading.Lock()
        self._go.acquire()
        self._done = threading.Lock()
        self._done.acquire()
        self._job = None
        self._result = None
        self._error = None
        self.thread = threading.Thread(target=self._loop, name=f"hornet-part-{index}",
                                       daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            self._go.acquire()
            fn, args = self._job
            self._job = None
            try:
                self._result = fn(*args)
            except BaseException as e:        # handed to the caller in wait()
                self._error = e
            self._done.release()

    def start(self, fn, args) -> None:
        self._job = (fn, args)
        self._go.release()

    def wait(self):
        self._done.acquire()
        error, self._error = self._error, None
        result, self._result = self._result, None
        if error is not None:
            raise error
        return result


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
    pool's workers, at the same time); returns their results in part order."""
    if parts <= 1:
        return [fn(*args, 0, 1)]
    pool = _the_pool()
    if not pool.busy.acquire(blocking=False):          # another thread's split call
        return [fn(*args, p, parts) for p in range(parts)]
    try:
        pool.grow(parts - 1)
        started = []
        try:
            for p in range(1, parts):
                pool.workers[p - 1].start(fn, args + (p, parts))
                started.append(pool.workers[p - 1])
            first = fn(*args, 0, parts)
        finally:
            rest = []
            error = None
            for w in started:                          # every started part ends before return
                try:
                    rest.append(w.wait())
                except BaseException as e:
                    error = error or e
        if error is not None:
            if not isinstance(error, Exception):      # interrupted while waiting: a worker
                _drop(pool)                           # may still run, so it is not reused
            raise error
        return [first] + rest
    finally:
        pool.busy.release()
