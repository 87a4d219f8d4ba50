"""Turning what users pass into checked id and property arrays, before anything changes.

Accepted edge inputs: two equal-length integer arrays (NumPy, CuPy, lists, Arrow arrays,
anything with ``__array__``, ``__cuda_array_interface__`` or DLPack), an ``(E, 2)`` integer
array as ``src`` with ``dst=None``, or an Arrow table / record batch (or pandas DataFrame) with
columns ``src`` and ``dst`` and one column per edge property.
"""
from __future__ import annotations

import numpy as np

MAX_VERTEX_ID = np.iinfo(np.int32).max - 1   # ids are int32; num_vertices must fit too
FEW_IDS = 64       # host id arrays up to this many ids (all together) are checked by NumPy

__all__ = ["BatchError", "MAX_VERTEX_ID", "check_ids", "edge_batch", "host_ids", "id_array",
           "property_values"]


class BatchError(ValueError):
    """A batch was refused; the graph is unchanged."""


def _to_array(x, name: str, xp):
    if x is None:
        raise BatchError(f"{name} is missing")
    if hasattr(x, "to_numpy") and type(x).__module__.startswith("pyarrow"):
        x = x.to_numpy(zero_copy_only=False)
    if xp is np:
        if hasattr(x, "__cuda_array_interface__") or type(x).__module__.startswith("cupy"):
            import cupy
            x = cupy.asnumpy(cupy.asarray(x))
        return np.asarray(x)
    if hasattr(x, "__cuda_array_interface__"):
        return xp.asarray(x)
    if hasattr(x, "__dlpack__") and not isinstance(x, np.ndarray):
        return xp.from_dlpack(x)
    host = np.asarray(x)
    if host.dtype.kind in "OUSVM":
        raise TypeError(f"{name} must be numeric, got dtype {host.dtype}")
    return xp.asarray(host)


def id_array(x, name: str, xp=np, *, allow_out_of_range: bool = False):
    """1-D int64 array of vertex ids, refused unless every id is an integer in [0, 2**31 - 2]."""
    a = _id_values(x, name, xp)
    check_ids([(a, name)], xp, allow_out_of_range=allow_out_of_range)
    return a


def _id_values(x, name: str, xp):
    """``x`` as a 1-D int64 array (ids not checked yet)."""
    a = _to_array(x, name, xp)
    if a.ndim == 0:
        a = a.reshape(1)
    if a.ndim != 1:
        raise BatchError(f"{name} must be one-dimensional, got shape {tuple(a.shape)}")
    if a.size == 0:                     # an empty list arrives as float64: no ids to check
        return xp.empty(0, dtype=xp.int64)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer vertex ids, got dtype {a.dtype}")
    return host_ids(a) if xp is np else a.astype(xp.int64, copy=False)


def host_ids(a: np.ndarray) -> np.ndarray:
    """``a`` (integer NumPy array) as a writable C-contiguous int64 array: ``a`` itself where
    it is one, else a copy. The CPU kernels are compiled for these arrays only: a read-only
    (Arrow, memory-mapped) or strided batch is copied once instead of compiling them again
    (seconds per kernel)."""
    if a.dtype == np.int64 and a.flags.c_contiguous and a.flags.writeable:
        return a
    return np.array(a, dtype=np.int64, order="C")


def check_ids(named, xp=np, *, allow_out_of_range: bool = False) -> int:
    """Refuse negative (or, unless allowed, too large) ids in the ``(int64 array, name)``
    pairs; return the number of ids they need (largest id + 1; 0 when all are empty).

    The minima and maxima of all arrays reach the host in one read (one device sync).
    """
    named = [(a, name) for a, name in named if a.size]
    if not named:
        return 0
    if xp is np and sum(a.size for a, _ in named) <= FEW_IDS:
        # a few ids (a vertex list, say): NumPy, no compiled kernel to load in a process that
        # may run on the GPU only
        bounds = [int(f(a)) for a, _ in named for f in (np.min, np.max)]
    else:
        if xp is np:
            from .cpu.ids import id_bounds
        else:
            from .gpu.kernels import id_bounds
        bounds = id_bounds([a for a, _ in named])
    for k, (a, name) in enumerate(named):
        lo, hi = bounds[2 * k], bounds[2 * k + 1]
        if lo < 0:
            i = int(xp.argmax(a < 0))
            raise BatchError(f"{name}[{i}] = {int(a[i])}: vertex ids must be >= 0")
        if hi > MAX_VERTEX_ID and not allow_out_of_range:
            i = int(xp.argmax(a > MAX_VERTEX_ID))
            raise BatchError(f"{name}[{i}] = {int(a[i])}: vertex ids must be <= {MAX_VERTEX_ID}"
                             " (int32 ids)")
    return int(max(bounds[1::2])) + 1


def _table_columns(table):
    if hasattr(table, "column_names") and hasattr(table, "column"):      # Arrow
        return {n: table.column(n) for n in table.column_names}
    if hasattr(table, "columns") and hasattr(table, "__getitem__"):       # pandas
        return {str(n): table[n].to_numpy() for n in table.columns}
    return None


def edge_batch(src, dst, props: dict, xp=np, *, allow_out_of_range: bool = False,
               check: bool = True):
    """Normalise an edge batch to ``(src int64, dst int64, props dict of raw arrays, top)``;
    ``top``: the number of ids the batch needs (largest id + 1, 0 for an empty batch).
    ``check=False`` leaves the ids unchecked (``top`` None) for a caller that checks them in
    a pass of its own (the CPU insert's sort)."""
    if dst is None:
        columns = _table_columns(src)
        if columns is not None:
            if "src" not in columns or "dst" not in columns:
                raise BatchError(f"an edge table needs columns 'src' and 'dst', got "
                                 f"{sorted(columns)}")
            props = {**{k: v for k, v in columns.items() if k not in ("src", "dst")}, **props}
            src, dst = columns["src"], columns["dst"]
        else:
            pairs = _to_array(src, "edges", xp)
            if pairs.ndim != 2 or pairs.shape[1] != 2:
                raise BatchError("pass src and dst, or one (E, 2) array of pairs, got shape "
                                 f"{tuple(pairs.shape)}")
            src, dst = pairs[:, 0], pairs[:, 1]
    s = _id_values(src, "src", xp)
    d = _id_values(dst, "dst", xp)
    top = check_ids([(s, "src"), (d, "dst")], xp, allow_out_of_range=allow_out_of_range) \
        if check else None
    if s.shape[0] != d.shape[0]:
        raise BatchError(f"src and dst differ in length ({s.shape[0]} != {d.shape[0]})")
    return s, d, props, top


def property_values(props: dict, schema: dict, n: int, xp=np, *, what: str = "edge",
                    fill_missing: bool = True) -> dict:
    """Check property values against ``schema`` (name -> dtype); cast; fill missing ones.

    Unknown names, wrong lengths, non-numeric or unsafely cast values and NaN are refused.
    A scalar is broadcast to the batch. Missing properties get 0 when ``fill_missing``.
    """
    if not props and not schema:          # the common case, on every small batch
        return {}
    unknown = sorted(set(props) - set(schema))
    if unknown:
        known = ", ".join(sorted(schema)) or "none"
        raise BatchError(f"unknown {what} propert{'y' if len(unknown) == 1 else 'ies'} "
                         f"{', '.join(map(repr, unknown))} (known: {known})")
    out = {}
    for name, dtype in schema.items():
        if name not in props:
            if fill_missing:
                out[name] = xp.zeros(n, dtype=dtype)
            continue
        if xp is not np and isinstance(props[name], np.ndarray) and props[name].ndim == 1:
            # a host column for a device graph: checked on the host, then one staged copy in
            # stream order (no wait for the device's queue, no device read for the NaN check)
            out[name] = _host_column(props[name], name, dtype, n, what)
            continue
        v = _to_array(props[name], f"{what} property {name!r}", xp)
        if v.ndim == 0:
            v = xp.full(n, v.item() if hasattr(v, "item") else v, dtype=v.dtype)
        if v.ndim != 1 or v.shape[0] != n:
            raise BatchError(f"{what} property {name!r} has shape {tuple(v.shape)}, expected "
                             f"({n},)")
        if v.size == 0:                 # an empty list has no dtype of its own
            out[name] = xp.empty(0, dtype=dtype)
            continue
        if v.dtype.kind not in "biuf":
            raise TypeError(f"{what} property {name!r} must be numeric, got dtype {v.dtype}")
        if not np.can_cast(v.dtype, dtype, casting="same_kind"):
            raise TypeError(f"{what} property {name!r}: cannot store {v.dtype} values in a "
                            f"{np.dtype(dtype)} property without losing data")
        if v.dtype.kind == "f" and v.size and bool(xp.isnan(v).any()):
            i = int(xp.argmax(xp.isnan(v)))
            raise BatchError(f"{what} property {name!r}[{i}] is NaN")
        out[name] = xp.ascontiguousarray(v.astype(dtype, copy=False))
    return out


def _host_column(v: np.ndarray, name: str, dtype, n: int, what: str):
    """A 1-D host property column of a device graph, checked as :func:`property_values`
    checks it (same errors), as a contiguous device array of ``dtype``, shape (n,)."""
    from ..core.cuda import cupy, upload
    if v.dtype.kind in "OUSVM":
        raise TypeError(f"{what} property {name!r} must be numeric, got dtype {v.dtype}")
    if v.shape[0] != n:
        raise BatchError(f"{what} property {name!r} has shape {tuple(v.shape)}, expected "
                         f"({n},)")
    if v.size == 0:
        return cupy.empty(0, dtype=dtype)
    if v.dtype.kind not in "biuf":
        raise TypeError(f"{what} property {name!r} must be numeric, got dtype {v.dtype}")
    if not np.can_cast(v.dtype, dtype, casting="same_kind"):
        raise TypeError(f"{what} property {name!r}: cannot store {v.dtype} values in a "
                        f"{np.dtype(dtype)} property without losing data")
    if v.dtype.kind == "f":
        nan = np.isnan(v)
        if nan.any():
            raise BatchError(f"{what} property {name!r}[{int(np.argmax(nan))}] is NaN")
    host = np.ascontiguousarray(v, dtype=dtype)
    if host.nbytes <= HOST_STAGED_BYTES:
        return upload(host)
    return cupy.asarray(host)


#: host property columns up to this many bytes go to the device through the staging buffers
#: of :func:`hornet.core.cuda.upload` (larger ones through ``cupy.asarray``)
HOST_STAGED_BYTES = 1 << 20
