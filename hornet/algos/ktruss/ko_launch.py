"""Kernel handles and launches of the GPU DynamicTruss (:mod:`.dynamic_gpu`): its kernels by
name from the ``.cu`` files beside it, and reused prepared launches (plain or cooperative)."""
from __future__ import annotations

import os

import numpy as np

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dynamic_gpu.cu")
#: the small batch's keys (tb_batch_keys)
_CU_BATCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "batch_keys.cu")
#: an insertion's start at lower bounds (is_* kernels)
_CU_START = os.path.join(os.path.dirname(os.path.abspath(__file__)), "insert_start.cu")


#: counter words (see dynamic_gpu.cu)
C_LOW, C_NEXT, C_TOUCHED, C_FELL = 0, 1, 2, 6
C_EVAL, C_NEWC, C_ALL, C_TAIL = 8, 9, 11, 14
C_RAISED, C_HEADN = 5, 7
C_EXTRA, C_PLACED = 3, 4
CTR_WORDS = 16
#: threads of one warp: the triangle kernels run one warp per edge
WARP = 32
#: warps per new candidate in ko_push (its launch size is read on the device)
PUSH_PARTS = 4
#: warps a launch of few edges aims to keep busy, and the most warps that share one edge
TARGET_WARPS = 8192
MAX_PARTS = 16
#: fresh stamps one ko_scan launch may use (a level takes two plus one per scan round)
SCAN_STAMPS = 1 << 18
#: ko_scan's control words (KS_* in dynamic_gpu.cu)
KS_K, KS_HEAD, KS_TAIL, KS_STATUS, KS_STAMPS, KS_ALL, KS_ABORT, KS_LEVELS, KS_ROUNDS = \
    range(1, 10)
KS_TOUCHED, KS_SPUN, KS_RAISED, KS_PEEL_ROUNDS, KS_TIME, KS_FELL = 14, 15, 22, 0, 24, 10
#: (diagnostics) queue units served by the peelings and candidate searches, and their longest
#: chain of dependent units
KS_UNITS, KS_DEPTH = 20, 31
#: ko_scan's words, then the asynchronous queue's (two sets of KSQ_SET_WORDS in ko_async.cuh)
KS_WORDS, QUEUE_WORDS = 32, 96
KS_DONE, KS_NOT_EMPTY = 0, 3


def _parts(n: int) -> np.int32:
    """Warps per edge for a launch over ``n`` edges: enough for a few edges (a hub's long
    list) to fill the GPU."""
    return np.int32(min(MAX_PARTS, max(1, -(-TARGET_WARPS // max(int(n), 1)))))


def _fn(name: str):
    from hornet.core.cuda import function
    if name.startswith("is_"):
        return function(_CU_START, name)
    return function(_CU_BATCH if name == "tb_batch_keys" else _CU, name)


_PREPARED: dict = {}


def _prepared(name: str, nargs: int, cooperative: bool = False):
    """The reused prepared launch of kernel ``name`` (arguments as ints: device pointers,
    integers), cooperative or not."""
    entry = _PREPARED.get(name)
    if entry is None:
        from hornet.core.cuda import CooperativeLaunch, PreparedLaunch
        entry = _PREPARED[name] = (CooperativeLaunch if cooperative else PreparedLaunch)(
            _fn(name), nargs)
    return entry


def _grid(items: int) -> int:
    """Blocks of a grid-stride launch over ``items`` threads (0: nothing to run)."""
    from hornet.core.cuda import BLOCK, _max_grid
    return min(-(-int(items) // BLOCK), _max_grid())


def _ptr(a) -> int:
    return a.data.ptr
