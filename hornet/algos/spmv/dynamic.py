"""Dynamic SpMV: ``y = A x`` (or ``A^T x``) kept current under edge batches and changes of x.

    >>> import hornet, numpy as np
    >>> g = hornet.Graph.from_edges([0, 1], [1, 2], device="cpu")           # path 0-1-2
    >>> sp = DynamicSpMV(g, np.array([1.0, 10.0, 100.0]))
    >>> sp.update(g.insert_edges([0], [2]))                                   # a triangle
    >>> sp.y.tolist()
    [110.0, 101.0, 11.0]
    >>> sp.set_x([1], [20.0]); sp.y.tolist()
    [120.0, 101.0, 21.0]

``A[u, v]`` is the weight of edge u -> v (the edge property ``weight``, or 1 when None), as
in :func:`hornet.algos.spmv`; undirected graphs hold both directions, so ``A`` is symmetric.
``y`` is float64, over the id space (ids added later have ``x = 0`` until :meth:`set_x`).

Two ways to apply a change (``resum``):

- ``resum=True`` (default): every row of ``y`` the change touches is summed again from its
  list: ``y[r] = sum of A[r, c] * x[c]`` in float64, in ascending ``c`` (the list order), one
  product and one addition at a time. That is exactly the CPU static kernel's order (its pull
  loop), so on the CPU ``y`` equals ``spmv(g, x, weight)`` bit for bit after every change, and
  no rounding accumulates over time. The GPU kernels compute the same sequence (no fused
  multiply-add; one warp per row forms the products 32 at a time and adds them in order), so a
  GPU ``y`` equals the CPU ``spmv`` of the same graph bit for bit. The static GPU ``spmv``
  cannot be reproduced row by row: its warp-segmented kernel sums a row in
  an order set by the row's position in the whole layout (32-entry windows, 512-entry ranges,
  atomics across ranges, and the visiting order changes from the second call on an unchanged
  graph), so GPU ``y`` equals GPU ``spmv`` only up to that kernel's own rounding (exactly
  when the products and sums are exact, e.g. small integers or dyadic fractions). ``A^T x``:
  row ``v`` is summed over its in-neighbours ascending (the static push kernel adds with
  atomics in thread order; equal bits when it runs on one thread in id order). Cost: the
  degrees of the touched rows; on the GPU a touched hub's row costs its chain of additions in
  order (one warp adds its entries one after another), which no re-sum in this order avoids:
  for batches that touch hubs the delta mode is the fast one (bench/results/dynamic_gpu.md).
- ``resum=False``: pure delta, ``y += dA x``: an inserted entry adds ``w x[c]``, a deleted one
  subtracts it, a re-weighted one adds ``w_new x[c] - w_old x[c]``; :meth:`set_x` adds
  ``w x_new - w x_old`` to the rows that read ``x[j]``. Cost: the batch (and the lists of
  the changed x entries), atomics. Exact when all products and partial sums are exactly
  representable; otherwise ``y`` drifts from a fresh sum by rounding, about
  ``eps * sum |A[r, c] x[c]|`` per change of a row (eps = 2**-53), accumulating over changes
  (:meth:`drift` measures it on demand).

Rows a change touches: for ``A x``, an entry (u, v) touches row u (undirected: u and v) and a
change of ``x[j]`` touches the in-neighbours of j; for ``A^T x`` the other way round. Directed
graphs need in-neighbour lists for those (``A x`` with :meth:`set_x`; ``A^T x`` re-summing rows):
a reverse graph, itself a ``hornet.Graph`` of the reversed edges with the weight, updated from
the same changes (built with the object for ``A^T x``; for ``A x`` on the first :meth:`set_x`,
from the graph as it is then).
"""
from __future__ import annotations

import os

import numpy as np

from hornet.core.atomics import atomic_add
from hornet.core.chunking import threads_for
from hornet.core.pointers import int32_view, view as ptr_view
from ...core.jit import part_range, split_kernel
from ...id_mapping import dense_vertices, vertex_values


__all__ = ["DynamicSpMV"]

_CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dynamic.cu")
#: GPU row re-sum: "warp" (one warp per row, products formed 32 at a time) or "thread" (one
#: thread per row); both add in list order and give the same bits
GPU_RESUM_KERNEL = "warp"
_KINDS = ("insert", "delete", "update")


def _weight_types():
    from .gpu import _WEIGHT_TYPES
    return _WEIGHT_TYPES


def _names():
    types = sorted(set(_weight_types().values()))
    kernels = ("dsp_resum", "dsp_resum_warp", "dsp_delta_x", "dsp_delta_change")
    return tuple([f"{k}<float, 0>" for k in kernels]
                 + [f"{k}<{t}, 1>" for k in kernels for t in types])


# --------------------------------------------------------------------------------------------
# CPU kernels


@split_kernel(threshold=0)
def _resum_rows(rows, deg, ptr, wptr, wlike, weighted, x, y, part, parts):
    """y[r] = the static pull loop over row r, for every r in ``rows`` (wptr: per row i)."""
    for i in range(*part_range(rows.shape[0], part, parts)):
        r = rows[i]
        d = deg[r]
        acc = 0.0
        if d:
            row = int32_view(ptr[r], d)
            if weighted:
                w = ptr_view(wptr[i], d, wlike)
                for j in range(d):
                    acc += np.float64(w[j]) * x[np.uint32(row[j])]
            else:
                for j in range(d):
                    acc += x[np.uint32(row[j])]
        y[r] = acc


@split_kernel(threshold=0)
def _delta_change(src, dst, w_new, w_old, weighted, has_old, sign, both, transpose, x, y,
                  part, parts):
    """y[r] += sign * (w_new x[c] - w_old x[c]) for every changed entry (r, c) of A (see
    dsp_delta_change in spmv/dynamic.cu)."""
    for i in range(*part_range(src.shape[0], part, parts)):
        r = dst[i] if transpose else src[i]
        c = src[i] if transpose else dst[i]
        for side in range(2 if both else 1):
            rr = c if side else r
            cc = r if side else c
            xc = x[cc]
            d = np.float64(w_new[i]) * xc if weighted else xc
            if weighted and has_old:
                d = d - np.float64(w_old[i]) * xc
            atomic_add(y, rr, sign * d)


@split_kernel(threshold=0)
def _delta_x(idx, deg, ptr, wptr, wlike, weighted, x_new, x_old, y, part, parts):
    for k in range(*part_range(idx.shape[0], part, parts)):
        j = idx[k]
        d = deg[j]
        if d == 0:
            continue
        row = int32_view(ptr[j], d)
        if weighted:
            w = ptr_view(wptr[k], d, wlike)
            for p in range(d):
                wf = np.float64(w[p])
                atomic_add(y, row[p], wf * x_new[k] - wf * x_old[k])
        else:
            for p in range(d):
                atomic_add(y, row[p], x_new[k] - x_old[k])


@split_kernel(threshold=0)
def _gather_lists(idx, off, deg, ptr, out, part, parts):
    for k in range(*part_range(idx.shape[0], part, parts)):
        d = deg[idx[k]]
        if d:
            row = int32_view(ptr[idx[k]], d)
            for p in range(d):
                out[off[k] + p] = row[p]


# --------------------------------------------------------------------------------------------
# reading a hornet.Graph's lists for a few rows


def _row_weight_pointers(graph, rows, weight: str):
    """int64 address of edge property ``weight`` of each vertex in ``rows`` (only those rows:
    the graph's own view would compute the addresses of every vertex after each update)."""
    return graph.property_pointers(rows, weight)


# --------------------------------------------------------------------------------------------
# the algorithm


class DynamicSpMV:
    """``y = A x`` (or ``A^T x``) of a graph, kept current.

    Parameters
    ----------
    g : hornet.Graph (CPU or GPU)
    x : array-like (g.num_vertices,), dict or table; bool / int / float
        Copied as float64 to g's device. An array is aligned with the dense ids (with a
        vertex map: with ``g.vertex_ids()``); values by vertex id (a dict ``{id: value}``, a
        table with a ``vertex`` column and one value column) name original ids when ``g``
        has a vertex map, and vertices not named get 0 (as in :func:`hornet.algos.spmv`).
    weight : str, optional
        Edge property holding ``A``'s values; None: every edge counts 1.
    transpose : bool
        Keep ``A^T x`` (directed graphs: sums over in-edges).
    resum : bool
        True: re-sum each touched row (exact, see the module docstring); False: pure delta.

    Raises
    ------
    TypeError   if ``g`` is not a hornet.Graph, ``x`` or the weight is not real-valued.
    ValueError  if ``x`` does not have shape (g.num_vertices,) or names a vertex twice.
    KeyError    if ``weight`` is not an edge property of ``g``, or ``x`` names a vertex the
                graph does not have.
    """

    def __init__(self, g, x, weight: str | None = None, transpose: bool = False,
                 resum: bool = True):
        if not (hasattr(g, "insert_edges") and hasattr(g, "adjacency")):
            raise TypeError(f"expected a hornet.Graph, got {type(g).__name__}")
        self.graph = g
        self.device = g.device
        self.weight = weight
        self.transpose = bool(transpose)
        self.resum = bool(resum)
        xp = self._xp = np if g.device == "cpu" else _cupy()
        n = g.num_vertices
        if weight is not None:
            if weight not in g.edge_properties:
                raise KeyError(f"no edge property {weight!r}; the graph has "
                               f"{sorted(g.edge_properties) or 'none'}")
            wdt = np.dtype(g.edge_properties[weight])
            if wdt.kind not in "biuf":
                raise TypeError(f"edge property {weight!r} must be real-valued, got {wdt}")
            self._wdt = wdt
        x = _real_array(xp, vertex_values(x, n, getattr(g, "vertex_map", None)), "x")
        if x.ndim != 1 or x.shape[0] != n:
            raise ValueError(f"x must have shape ({n},), got {x.shape}")
        self._x = xp.zeros(max(n, 16), dtype=xp.float64)
        self._x[:n] = x
        self._y = xp.zeros(max(n, 16), dtype=xp.float64)
        self._reverse = None
        if g.directed and self.transpose:
            self._make_reverse()
        rows = xp.arange(n, dtype=xp.int32)
        self._resum_rows(self._rows_graph(), rows)

    # ------------------------------------------------------------------ results
    @property
    def y(self):
        """float64 (g.num_vertices,) on g's device (a fresh array each read)."""
        n = self.graph.num_vertices
        self._grow(n)
        return self._y[:n].copy()

    @property
    def x(self):
        """float64 (g.num_vertices,): the vector ``y`` is kept for (a fresh array)."""
        n = self.graph.num_vertices
        self._grow(n)
        return self._x[:n].copy()

    def drift(self) -> float:
        """Largest ``|y - fresh sum|`` over all rows (a full pass: for checking delta mode)."""
        xp = self._xp
        n = self.graph.num_vertices
        self._grow(n)
        self._sync_reverse_ids()
        fresh = xp.zeros_like(self._y)
        self._resum_rows(self._rows_graph(), xp.arange(n, dtype=xp.int32), out=fresh)
        return float(xp.max(xp.abs(fresh[:n] - self._y[:n]))) if n else 0.0

    # ------------------------------------------------------------------ structure
    def _grow(self, n: int) -> None:
        cap = self._x.shape[0]
        if n > cap:
            xp = self._xp
            for name in ("_x", "_y"):
                new = xp.zeros(max(n, 2 * cap), dtype=xp.float64)
                new[:cap] = getattr(self, name)
                setattr(self, name, new)

    def _make_reverse(self) -> None:
        g = self.graph
        props = {self.weight: self._wdt} if self.weight else {}
        src, dst, cols = g.edges(properties=True, dense=True)
        rev = type(g)(directed=True, device=g.device, num_vertices=g.num_vertices,
                      edge_properties=props)
        rev.insert_edges(dst, src, **({self.weight: cols[self.weight]} if self.weight else {}))
        self._reverse = rev

    def _sync_reverse_ids(self) -> None:
        """Give the reverse graph the graph's id space (ids added without edges)."""
        rev, n = self._reverse, self.graph.num_vertices
        if rev is not None and rev.num_vertices < n:
            rev.insert_vertices(np.array([n - 1]))

    def _rows_graph(self):
        """The graph whose list r holds the terms of y[r]."""
        if self.transpose and self.graph.directed:
            return self._reverse
        return self.graph

    def _readers_graph(self):
        """The graph whose list j holds the rows that read x[j]."""
        if self.graph.directed and not self.transpose:
            if self._reverse is None:
                self._make_reverse()
            return self._reverse
        return self.graph

    # ------------------------------------------------------------------ kernels
    def _resum_rows(self, graph, rows, out=None) -> None:
        y = self._y if out is None else out
        if rows.shape[0] == 0:
            return
        n = graph.num_vertices
        self._grow(n)
        view = graph.adjacency(properties=False)
        deg, ptr = view.degree, view.edge_ptr
        weighted = self.weight is not None
        wptr = (_row_weight_pointers(graph, rows, self.weight) if weighted
                else self._xp.zeros(1, dtype=self._xp.int64))
        if self.device == "cpu":
            wlike = np.empty(0, self._wdt if weighted else np.float64)
            with threads_for(4 * int(rows.shape[0])):
                _resum_rows(rows, np.asarray(deg), np.asarray(ptr), wptr, wlike, weighted,
                            self._x, y)
            return
        from hornet.core.cuda import function, i64, launch
        kernel = {"warp": "dsp_resum_warp", "thread": "dsp_resum"}[GPU_RESUM_KERNEL]
        name = (f"{kernel}<{_weight_types()[self._wdt]}, 1>" if weighted
                else f"{kernel}<float, 0>")
        self._check_gpu_weight()
        launch(function(_CU, name, _names()), int(rows.shape[0]),
               (rows, i64(rows.shape[0]), deg, ptr, wptr, self._x, y),
               threads_per_item=32 if GPU_RESUM_KERNEL == "warp" else 1)

    def _check_gpu_weight(self) -> None:
        if self.weight is not None and self._wdt not in _weight_types():
            raise TypeError(f"no GPU kernel for weights of dtype {self._wdt}")

    def _unique_rows(self, rows):
        """The rows to re-sum: distinct on the CPU; on the GPU as they come (a repeated row is
        summed by several threads at once, each writing the same value: cheaper than a sort
        and a host round trip, and no slower, since the threads run side by side)."""
        xp = self._xp
        if xp is np:
            return np.unique(rows).astype(np.int32)
        return xp.ascontiguousarray(rows.astype(xp.int32, copy=False))

    # ------------------------------------------------------------------ updates
    def update(self, change) -> None:
        """Apply one EdgeChange of the graph (after the graph applied it).

        Raises ValueError (state unchanged) for something that is not a change on the
        graph's device.
        """
        kind = getattr(change, "kind", None)
        if kind not in _KINDS:
            raise ValueError(f"expected an EdgeChange (kind insert/delete/update), got {change!r}")
        src, dst = change.src, change.dst
        if (self.device == "gpu") == isinstance(src, np.ndarray):
            raise ValueError(f"the change's arrays are not on the graph's device ({self.device})")
        g = self.graph
        self._grow(g.num_vertices)
        if len(change) == 0:
            return
        if kind == "update" and (self.weight is None or self.weight not in change.properties):
            self._update_reverse(change)
            return
        self._update_reverse(change)
        xp = self._xp
        if self.resum:
            # rows whose terms changed: A x: the sources (undirected: both ends); A^T x: the
            # destinations (undirected: both ends)
            row = dst if self.transpose else src
            if not g.directed:
                row = xp.concatenate([src, dst])
            self._resum_rows(self._rows_graph(), self._unique_rows(row))
            return
        w_new = w_old = None
        if self.weight is not None:
            w_new = change.properties[self.weight]
            if kind == "update":
                w_old = change.previous[self.weight]
        self._delta_change(src, dst, w_new, w_old, -1.0 if kind == "delete" else 1.0)

    def _update_reverse(self, change) -> None:
        rev = self._reverse
        if rev is None:
            return
        kind = change.kind
        props = ({self.weight: change.properties[self.weight]}
                 if self.weight and self.weight in change.properties else {})
        if kind == "insert":
            rev.insert_edges(change.dst, change.src, **props)
        elif kind == "delete":
            rev.delete_edges(change.dst, change.src)
        elif props:
            rev.update_edges(change.dst, change.src, **props)

    def _delta_change(self, src, dst, w_new, w_old, sign: float) -> None:
        """y += sign * dA x over the change's entries: one kernel."""
        xp = self._xp
        both = not self.graph.directed
        weighted = w_new is not None
        if self.device == "cpu":
            one = np.zeros(1, np.float64)
            with threads_for(4 * int(src.shape[0])):
                _delta_change(src, dst, w_new if weighted else one,
                              w_old if w_old is not None else one, weighted, w_old is not None,
                              sign, both, self.transpose, self._x, self._y)
            return
        from hornet.core.cuda import function, i64, launch
        self._check_gpu_weight()
        null = np.uint64(0)
        name = (f"dsp_delta_change<{_weight_types()[self._wdt]}, 1>" if weighted
                else "dsp_delta_change<float, 0>")
        launch(function(_CU, name, _names()), int(src.shape[0]),
               (xp.ascontiguousarray(src), xp.ascontiguousarray(dst), i64(src.shape[0]),
                null if w_new is None else xp.ascontiguousarray(w_new),
                null if w_old is None else xp.ascontiguousarray(w_old), np.float64(sign),
                np.int32(both), np.int32(self.transpose), self._x, self._y))

    def set_x(self, index, values) -> None:
        """Set ``x[index] = values`` and bring ``y`` up to date.

        Parameters
        ----------
        index : array-like (k,) of vertex ids, in [0, g.num_vertices) (original ids the
            graph's vertex map holds, when it has one); a repeated id takes its last value
        values : real array-like (k,) or a scalar

        Raises ValueError / TypeError for bad ids or values, KeyError for an id not in the
        vertex map (state unchanged).
        """
        xp = self._xp
        n = self.graph.num_vertices
        vmap = getattr(self.graph, "vertex_map", None)
        if vmap is not None:
            index = dense_vertices(vmap, index, add=False)
        idx = xp.asarray(index)
        if idx.ndim != 1:
            raise ValueError("index must be 1-D")
        if idx.size and idx.dtype.kind not in "iu":
            raise TypeError(f"index must hold integers, got {idx.dtype}")
        vals = _real_array(xp, values, "values")
        vals = xp.broadcast_to(vals, idx.shape).astype(xp.float64)
        if idx.size == 0:
            return
        if int(idx.min()) < 0 or int(idx.max()) >= n:
            raise ValueError(f"index out of range [0, {n})")
        self._grow(n)
        # last occurrence of each id wins
        rev_idx = idx[::-1]
        uniq, first = xp.unique(rev_idx, return_index=True)
        idx = xp.ascontiguousarray(uniq.astype(xp.int32))
        vals = xp.ascontiguousarray(vals[::-1][first])
        readers = self._readers_graph()
        self._sync_reverse_ids()
        old = self._x[idx]
        self._x[idx] = vals
        view = readers.adjacency(properties=False)
        deg = view.degree[idx].astype(xp.int64)
        if self.resum:
            off = xp.zeros(idx.shape[0] + 1, dtype=xp.int64)
            xp.cumsum(deg, out=off[1:])
            total = int(off[-1])
            rows = xp.empty(total, dtype=xp.int32)
            if self.device == "cpu":
                with threads_for(total):
                    _gather_lists(idx, off, np.asarray(view.degree), np.asarray(view.edge_ptr),
                                  rows)
            elif total:
                from hornet.core.cuda import function, i64, launch
                launch(function(_CU, "dsp_gather", _names()), total,
                       (idx, i64(idx.shape[0]), off, view.edge_ptr, rows))
            self._resum_rows(self._rows_graph(), self._unique_rows(rows))
            return
        weighted = self.weight is not None
        wptr = (_row_weight_pointers(readers, idx, self.weight) if weighted
                else xp.zeros(1, dtype=xp.int64))
        if self.device == "cpu":
            wlike = np.empty(0, self._wdt if weighted else np.float64)
            with threads_for(4 * int(deg.sum())):
                _delta_x(idx, np.asarray(view.degree), np.asarray(view.edge_ptr), wptr, wlike,
                         weighted, vals, old, self._y)
            return
        from hornet.core.cuda import function, i64, launch
        self._check_gpu_weight()
        off = xp.zeros(idx.shape[0] + 1, dtype=xp.int64)
        xp.cumsum(deg, out=off[1:])
        name = (f"dsp_delta_x<{_weight_types()[self._wdt]}, 1>" if weighted
                else "dsp_delta_x<float, 0>")
        launch(function(_CU, name, _names()), int(off[-1]),
               (idx, i64(idx.shape[0]), off, view.degree, view.edge_ptr, wptr, vals, old,
                self._y))


def _real_array(xp, a, what: str):
    """``a`` as an array of ``xp``; TypeError unless it holds bool, integers or floats."""
    dt = getattr(a, "dtype", None)
    if dt is None:
        a = np.asarray(a)
        dt = a.dtype
    if np.dtype(dt).kind not in "biuf":
        raise TypeError(f"{what} must hold real numbers (bool, int or float), got dtype {dt}")
    return xp.asarray(a)


def _cupy():
    import cupy
    return cupy
