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

import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

__all__ = ["view", "int32_view", "address_of", "prefetch", "prefetch_l2", "prefetch_write",
           "width_dtype", "as_width"]


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


def _array_at(context, builder, aryty, address, address_type, n, n_type):
    """LLVM value of a C-contiguous 1-d array of ``aryty`` with ``n`` items at the integer
    ``address`` (no owner: the memory belongs to the caller's buffers)."""
    out = make_array(aryty)(context, builder)
    item_type = context.get_data_type(aryty.dtype)
    itemsize = cgutils.intp_t(context.get_abi_sizeof(item_type))
    address = context.cast(builder, address, address_type, types.int64)
    n = context.cast(builder, n, n_type, types.intp)
    populate_array(out, data=builder.inttoptr(address, item_type.as_pointer()), shape=[n],
                   strides=[itemsize], itemsize=itemsize, meminfo=None)
    return out._getvalue()


# view / int32_view are intrinsics, not inlined functions calling numba.carray: kernels make
# views at dozens of sites, and each inlined call site would run Numba's front end over the
# callee (and type carray) again at compile time; the intrinsics emit the array directly


@intrinsic
def view(typingctx, address, n, like):
    """Array of ``n`` items of ``like.dtype`` at ``address`` (``like`` only carries the dtype):
    1-d, C-contiguous, not owning its memory."""
    if not (isinstance(address, types.Integer) and isinstance(n, types.Integer)
            and isinstance(like, types.Array)):
        return None
    aryty = types.Array(like.dtype, 1, "C")

    def codegen(context, builder, signature, args):
        return _array_at(context, builder, aryty, args[0], signature.args[0], args[1],
                         signature.args[1])

    return aryty(address, n, like), codegen


@intrinsic
def int32_view(typingctx, address, n):
    """Array of ``n`` int32 at ``address``: a vertex's destination list (1-d, C-contiguous,
    not owning its memory)."""
    if not (isinstance(address, types.Integer) and isinstance(n, types.Integer)):
        return None
    aryty = types.Array(types.int32, 1, "C")

    def codegen(context, builder, signature, args):
        return _array_at(context, builder, aryty, args[0], signature.args[0], args[1],
                         signature.args[1])

    return aryty(address, n), codegen


def address_of(array: np.ndarray) -> int:
    """Address of a host array's first element (0 for an empty array)."""
    return int(array.ctypes.data) if array.size else 0


def width_dtype(dtype) -> np.dtype:
    """The unsigned integer dtype as wide as ``dtype`` (bool and int8 -> uint8, float32 ->
    uint32, ...). Kernels that only move a column's values (copies, merges, removals) take
    their columns in this dtype: one compiled specialization per width instead of one per
    dtype."""
    return np.dtype(f"u{np.dtype(dtype).itemsize}")


def as_width(a: np.ndarray) -> np.ndarray:
    """``a`` viewed as :func:`width_dtype` of its dtype (the same memory: writes go through);
    ``a`` itself when it is not C-contiguous (a view would not alias it)."""
    if not a.flags.c_contiguous:
        return a
    return a.view(width_dtype(a.dtype))
