"""The analytics a replay keeps after every batch: their table, and static and dynamic ways
of keeping them.

=========  ===============  =========================================================
name       column           value
=========  ===============  =========================================================
tc         ``triangles``    triangles of the (underlying undirected simple) graph
ktruss     ``k_max``        largest k with a non-empty k-truss (0: no edges)
bfs        ``bfs_reached``  vertices reached by BFS from ``bfs_source`` (default: the
                            source vertex of the stream's first event), source included
spmv       ``spmv_sum``     ``sum(A @ x)``, A weighted by ``weight`` (or 1), x[v] = 1 + v % 10
=========  ===============  =========================================================

:data:`ANALYTICS` names each analytic's report column, its static algorithm from
``hornet.algos`` (:class:`StaticAnalytic` recomputes it after each batch) and its dynamic
algorithm (:class:`DynamicAnalytic` feeds it every change as it happens).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from hornet import algos

__all__ = [
    "ReplayError", "AnalyticUnavailable", "ReplayContext", "spmv_vector", "stream_source",
    "BatchChanges",
    "StaticAnalytic", "DynamicAnalytic", "AnalyticSpec", "ANALYTICS", "ANALYTIC_COLUMNS",
    "parse_algos", "make_analytic", "available_analytics",
]


class ReplayError(ValueError):
    """A replay that cannot run: bad parameters, bad ids, an analytic that is not available."""


class AnalyticUnavailable(ReplayError):
    """The requested analytic needs an algorithm this build of hornet does not have (yet)."""




@dataclass
class ReplayContext:
    """What analytics may need besides the graph."""

    directed: bool
    bfs_source: int | None = None
    weight: str | None = None          # edge property holding weights, or None (weights 1)

    def x(self, n: int) -> np.ndarray:
        return spmv_vector(n)


def stream_source(source, ids: str):
    """A BFS source given as an original id (``map_ids``) in the type of the stream's ids
    (``ids``: "str", "int" or "uint", :class:`streams.format.StreamColumns`): text such as
    ``--bfs-source 0042`` is the string ``"0042"`` for a stream of string ids and the integer
    42 (``_`` separators allowed) for one of integer ids, which must lie in the range of the
    ids' type (signed or unsigned 64-bit). None stays None."""
    if source is None:
        return None
    if ids == "str":
        if isinstance(source, (bool, np.bool_)) or not isinstance(source, (str, int, np.integer)):
            raise ReplayError(f"bfs source must be a vertex id, got {source!r}")
        return str(source)
    if isinstance(source, str):
        try:
            value = int(source.replace("_", ""))
        except ValueError:
            raise ReplayError(f"bfs source {source!r}: the stream's vertex ids are integers"
                              ) from None
    elif isinstance(source, (bool, np.bool_)) or not isinstance(source, (int, np.integer)):
        raise ReplayError(f"bfs source must be an integer vertex id, got {source!r}")
    else:
        value = int(source)
    low, high = (0, 2**64) if ids == "uint" else (-2**63, 2**63)
    if not low <= value < high:
        kind = "unsigned" if ids == "uint" else "signed"
        raise ReplayError(f"bfs source {value}: the stream's vertex ids are {kind} 64-bit "
                          "integers")
    return value


def spmv_vector(n: int) -> np.ndarray:
    """The SpMV input vector: ``x[v] = 1 + v % 10`` (float64; exact sums)."""
    return 1.0 + (np.arange(n, dtype=np.int64) % 10).astype(np.float64)


@dataclass
class BatchChanges:
    """The :class:`hornet.EdgeChange` objects of one batch, in the order they were applied:
    ``inserted`` (new edges), ``updated`` (re-occurring edges whose properties were refreshed),
    ``deleted`` (op = -1 events), ``expired`` (window)."""

    inserted: Any = None
    updated: Any = None
    deleted: Any = None
    expired: Any = None

    def __iter__(self):
        for c in (self.inserted, self.updated, self.deleted, self.expired):
            if c is not None:
                yield c


class StaticAnalytic:
    """Recompute ``compute(graph, ctx)`` from scratch after every batch."""

    kind = "static"

    def __init__(self, name: str, column: str, compute: Callable):
        self.name, self.column, self.compute = name, column, compute
        self.ctx: ReplayContext | None = None

    def start(self, graph, ctx: ReplayContext) -> None:
        self.ctx = ctx

    def update(self, graph, changes: BatchChanges):
        return self.compute(graph, self.ctx)


class DynamicAnalytic:
    """A dynamic algorithm object ``factory(graph, ctx)`` fed every change of the graph right
    after the call that made it (:meth:`feed`, ``obj.update(change)``); at the end of a batch
    ``after(obj, graph, ctx)`` runs if given, and the value is ``value(obj)``. The object is
    built (one static computation) at the end of the first batch, once the context it needs
    is known (the BFS source is the first event's source)."""

    kind = "dynamic"

    def __init__(self, name: str, column: str, factory: Callable, value: Callable,
                 after: Callable | None = None):
        self.name, self.column, self.factory, self.value = name, column, factory, value
        self.after = after
        self.obj = None
        self.ctx: ReplayContext | None = None

    def start(self, graph, ctx: ReplayContext) -> None:
        self.ctx = ctx
        self.obj = None

    def feed(self, change) -> None:
        """Update the algorithm with one EdgeChange, right after the graph call that made it."""
        if self.obj is not None and len(change):
            self.obj.update(change)

    def update(self, graph, changes: BatchChanges):
        """The value after a batch whose changes were fed."""
        if self.obj is None:
            self.obj = self.factory(graph, self.ctx)       # already covers this batch
        elif self.after is not None:
            self.after(self.obj, graph, self.ctx)
        return self.value(self.obj)


def to_host(a) -> np.ndarray:
    """NumPy array of a NumPy or CuPy array (or anything array-like)."""
    return a if isinstance(a, np.ndarray) else (a.get() if hasattr(a, "get") else np.asarray(a))


def _num_vertices(g) -> int:
    """Vertex count of a hornet.Graph, an AdjacencyView or a SciPy matrix."""
    n = getattr(g, "num_vertices", None)
    return int(n) if n is not None else int(g.shape[0])


def _triangles(g, ctx: ReplayContext) -> int:
    return int(algos.triangle_count(g))


def _k_max(g, ctx: ReplayContext) -> int:
    return int(algos.max_truss(g)[0])


def _bfs_reached(g, ctx: ReplayContext) -> int:
    s = ctx.bfs_source
    if s is None or s >= _num_vertices(g):
        return 0
    return int(np.count_nonzero(to_host(algos.bfs(g, s)) >= 0))


def _spmv_sum(g, ctx: ReplayContext) -> float:
    x = ctx.x(_num_vertices(g))
    y = algos.spmv(g, x, weight=ctx.weight) if ctx.weight else algos.spmv(g, x)
    return float(np.sum(to_host(y), dtype=np.float64))


def _reached(levels) -> int:
    return int(np.count_nonzero(to_host(levels) >= 0))


class _GrowingX:
    """Keeps a DynamicSpMV's ``x`` equal to :func:`spmv_vector` as the id space grows."""

    def __init__(self):
        self.n = None

    def __call__(self, obj, g, ctx: ReplayContext) -> None:
        n = _num_vertices(g)
        if self.n is None:
            self.n = obj.x.shape[0]
        if n > self.n:
            ids = np.arange(self.n, n, dtype=np.int64)
            obj.set_x(ids, ctx.x(n)[self.n:])
            self.n = n


def _dynamic_spmv():
    grow = _GrowingX()

    def factory(g, ctx: ReplayContext):
        grow.n = _num_vertices(g)
        return algos.DynamicSpMV(g, ctx.x(grow.n), weight=ctx.weight)
    return factory, (lambda obj: float(np.sum(to_host(obj.y), dtype=np.float64))), grow


@dataclass(frozen=True)
class AnalyticSpec:
    """One analytic of the replay: its report ``column``; ``static(graph, ctx) -> value``, a
    from-scratch computation on any graph-like input (also the oracle of ``verify=True``);
    ``dynamic``: None, or a callable giving ``(factory(graph, ctx) -> obj, value(obj) ->
    value[, after(obj, graph, ctx)])`` for a dynamic algorithm object fed every change with
    ``obj.update(change)`` (``after`` runs once the batch's changes are in)."""

    column: str
    static: Callable
    dynamic: Callable | None = None


#: name -> the analytic's column and algorithms
ANALYTICS = {
    "tc": AnalyticSpec("triangles", _triangles, lambda: (
        lambda g, ctx: algos.DynamicTriangleCount(g, track_edges=False),
        lambda obj: int(obj.count))),
    "ktruss": AnalyticSpec("k_max", _k_max, lambda: (
        lambda g, ctx: algos.DynamicTruss(g), lambda obj: int(obj.k_max))),
    "bfs": AnalyticSpec("bfs_reached", _bfs_reached, lambda: (
        lambda g, ctx: algos.DynamicBFS(g, ctx.bfs_source), lambda obj: _reached(obj.levels))),
    "spmv": AnalyticSpec("spmv_sum", _spmv_sum, _dynamic_spmv),
}
ANALYTIC_COLUMNS = {k: v.column for k, v in ANALYTICS.items()}
_ALIASES = {"triangles": "tc", "triangle": "tc", "truss": "ktruss", "k-truss": "ktruss",
            "k_truss": "ktruss", "kmax": "ktruss", "k_max": "ktruss"}


def parse_algos(algos) -> list[str]:
    """Canonical analytic names from ``"tc,ktruss"`` or a sequence; ReplayError on unknown
    names. ``"all"`` means every analytic; ``""``/``"none"`` none."""
    if algos is None:
        return list(ANALYTICS)
    if isinstance(algos, str):
        items = [a.strip() for a in algos.split(",") if a.strip()]
        if items in (["none"], []):
            return []
        if items == ["all"]:
            return list(ANALYTICS)
    else:
        items = list(algos)
    out = []
    for a in items:
        if not isinstance(a, str):
            out.append(a)  # an analytic object
            continue
        key = _ALIASES.get(a.lower(), a.lower())
        if key not in ANALYTICS:
            raise ReplayError(f"unknown analytic {a!r}; choose from {', '.join(ANALYTICS)}")
        if key not in out:
            out.append(key)
    return out


def make_analytic(name: str, *, dynamic: bool = True):
    """The analytic object for ``name``: dynamic where the table has a dynamic algorithm
    (default), else (or with ``dynamic=False``) a static recomputation after each batch."""
    spec = ANALYTICS[name]
    if dynamic and spec.dynamic is not None:
        return DynamicAnalytic(name, spec.column, *spec.dynamic())
    return StaticAnalytic(name, spec.column, spec.static)


def available_analytics() -> dict:
    """name -> None when available, else the reason it is not."""
    out = {}
    for name in ANALYTICS:
        try:
            make_analytic(name)
            out[name] = None
        except AnalyticUnavailable as e:
            out[name] = str(e)
    return out
