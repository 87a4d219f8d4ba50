"""Raw edge pointers inside Numba kernels.

Hornet's vertex table holds, for every vertex, the address of its block: a kernel reads
vertex ``v``'s adjacency as ``degree[v]`` values starting at ``edge_ptr[v]``. On the CPU the
same holds here: block-array columns are NumPy buffers, addresses are ``int64`` values, and
:func:`view` turns an address back into an array inside ``@njit`` code. A CSR matrix is the
special case ``edge_ptr = indices_address + 4 * indptr[:-1]``, so every kernel runs unchanged
on a CSR or on the dynamic graph.

The caller owns the buffers: an address is valid only while the array behind it is alive.
"""
from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from .jit import njit

__all__ = ["view", "int32_view", "address_of", "prefetch", "prefetch_l2", "prefetch_write"]


@intrinsic
def _as_voidptr(typingctx, address):
    """int64 address -> void* (an LLVM inttoptr)."""
    sig = types.voidptr(address)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return sig, codegen


def _prefetch_intrinsic(for_write: int, doc: str, locality: int = 3):
    """A Numba intrinsic ``f(address)`` that emits ``llvm.prefetch`` (``for_write``: 0 read,
    1 write; ``locality`` 3: every cache level (x86 ``prefetcht0``), 2: not the first level
    (``prefetcht1``); data cache)."""
    def prefetch_hint(typingctx, address):
        sig = types.void(address)

        def codegen(context, builder, signature, args):
            from llvmlite import ir
            i32 = ir.IntType(32)
            fnty = ir.FunctionType(ir.VoidType(), [cgutils.voidptr_t, i32, i32, i32])
            fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
            ptr = builder.inttoptr(args[0], cgutils.voidptr_t)
            builder.call(fn, [ptr, i32(for_write), i32(locality), i32(1)])
            return context.get_dummy_value()

        return sig, codegen

    prefetch_hint.__doc__ = doc
    return intrinsic(prefetch_hint)


prefetch = _prefetch_intrinsic(
    0, "Hint the CPU to bring the cache line at ``address`` (int64) in; never faults.")
prefetch_l2 = _prefetch_intrinsic(
    0, "Like :func:`prefetch`, into the second-level cache only (x86 ``prefetcht1``): for "
       "lines needed later, without holding a first-level fill buffer while they come.", 2)
prefetch_write = _prefetch_intrinsic(
    1, "Like :func:`prefetch`, for a line about to be written (x86 ``prefetchw``: the line "
       "comes in owned, so the store does not wait for it again).")


@njit(inline="always")
def view(address, n, like):
    """Array of ``n`` items of ``like.dtype`` at ``address`` (``like`` only carries the dtype)."""
    return numba.carray(_as_voidptr(address), (n,), like.dtype)


@njit(inline="always")
def int32_view(address, n):
    """Array of ``n`` int32 at ``address``: a vertex's destination list."""
    return numba.carray(_as_voidptr(address), (n,), np.int32)


def address_of(array: np.ndarray) -> int:
    """Address of a host array's first element (0 for an empty array)."""
    return int(array.ctypes.data) if array.size else 0
