"""Atomic updates of one array element inside Numba kernels (CPU).

- :func:`atomic_add`: LLVM ``atomicrmw add`` / ``fadd`` (integers, float32, float64);
- :func:`atomic_cas`: LLVM ``cmpxchg`` (integers).

Both return the OLD value, so a thread can tell whether its own update crossed a threshold
or claimed an element. Meant to be called from jitted code.
"""
from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["atomic_add", "atomic_cas"]


def _element_pointer(context, builder, arrty, arr, idx, idxty):
    ary = context.make_array(arrty)(context, builder, arr)
    i = context.cast(builder, idx, idxty, types.intp)
    return cgutils.get_item_pointer(context, builder, arrty, ary, [i], wraparound=False)


@intrinsic
def atomic_add(typingctx, arr, idx, val):
    """``old = arr[idx]; arr[idx] += val`` atomically (monotonic order); returns ``old``."""
    if not isinstance(arr, types.Array) or arr.ndim != 1:
        return None
    dt = arr.dtype
    if not isinstance(dt, (types.Integer, types.Float)):
        return None
    sig = dt(arr, idx, val)

    def codegen(context, builder, signature, args):
        arrty, idxty, valty = signature.args
        ptr = _element_pointer(context, builder, arrty, args[0], args[1], idxty)
        v = context.cast(builder, args[2], valty, arrty.dtype)
        op = "fadd" if isinstance(arrty.dtype, types.Float) else "add"
        return builder.atomic_rmw(op, ptr, v, "monotonic")

    return sig, codegen


@intrinsic
def atomic_cas(typingctx, arr, idx, expected, new):
    """If ``arr[idx] == expected`` store ``new``; atomically. Returns the old value."""
    if not isinstance(arr, types.Array) or arr.ndim != 1 or not isinstance(arr.dtype, types.Integer):
        return None
    dt = arr.dtype
    sig = dt(arr, idx, expected, new)

    def codegen(context, builder, signature, args):
        arrty, idxty, expty, newty = signature.args
        ptr = _element_pointer(context, builder, arrty, args[0], args[1], idxty)
        e = context.cast(builder, args[2], expty, arrty.dtype)
        n = context.cast(builder, args[3], newty, arrty.dtype)
        res = builder.cmpxchg(ptr, e, n, "monotonic", "monotonic")
        return builder.extract_value(res, 0)

    return sig, codegen
