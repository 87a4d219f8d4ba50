"""``replay(..., verify=True)``: the replay's semantics applied event by event to a plain
reference model, and the check of the graph and every analytic against it after a batch."""
from __future__ import annotations

import math

import numpy as np

from hornet import algos
from hornet.testing.reference import ReferenceGraph

from .analytics import ANALYTICS, ReplayContext, to_host
from .format import EventBlock
from .window import EventWindow

__all__ = ["VerificationError", "ReferenceReplay", "verify_batch", "edge_keys", "original_id"]


class VerificationError(RuntimeError):
    """``verify=True`` found the graph or an analytic disagreeing with the reference."""


def edge_keys(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a << 32 | b`` as int64 (one sortable key per edge)."""
    return (a.astype(np.int64) << 32) | b.astype(np.int64)


class ReferenceReplay:
    """The replay's semantics applied event by event to a
    :class:`hornet.testing.ReferenceGraph` (edge properties ``weight`` when the stream is
    weighted, ``last_seen`` when the replay has a window): self-loops skipped, an insert
    refreshes a present edge's properties, a delete removes it, the window expires edges by
    their ``last_seen``."""

    def __init__(self, directed: bool, weighted: bool, window: bool):
        props = {}
        if weighted:
            props["weight"] = np.float64
        if window:
            props["last_seen"] = np.int64
        self.model = ReferenceGraph(directed, props)

    def seed(self, g, seen=None) -> None:
        """Start from the edges (and the properties the model tracks) of graph ``g``;
        ``seen``: (src, dst, last_seen) of every edge where the graph stores no
        ``last_seen`` (the window's own record)."""
        names = list(self.model.edge_properties)
        src, dst, props = g.edges(properties=True, dense=True)
        if seen is not None and "last_seen" in names and "last_seen" not in props:
            order = np.lexsort((seen[1], seen[0]))
            keys = edge_keys(seen[0][order], seen[1][order])
            at = np.searchsorted(keys, edge_keys(to_host(src), to_host(dst)))
            props = dict(props, last_seen=seen[2][order][at])
        values = {k: to_host(props[k]).tolist() for k in names}
        self.model.insert(to_host(src).tolist(), to_host(dst).tolist(), values)
        self.model.num_vertices = max(self.model.num_vertices, int(g.num_vertices))

    def apply(self, ev: EventBlock) -> None:
        """Apply the events of one batch in file order."""
        model = self.model
        model.num_vertices = max(model.num_vertices, int(max(ev.src.max(), ev.dst.max())) + 1)
        names = list(model.edge_properties)
        op = None if ev.op is None else ev.op.tolist()
        weight = None if ev.weight is None else ev.weight.tolist()
        for i, (u, v) in enumerate(zip(ev.src.tolist(), ev.dst.tolist())):
            if u == v:
                continue
            if op is not None and op[i] < 0:
                model.delete([u], [v])
                continue
            values = {}
            if "weight" in names:
                values["weight"] = [weight[i]]
            if "last_seen" in names:
                values["last_seen"] = [ev.start + i]
            if not model.update([u], [v], values):
                model.insert([u], [v], values)

    def expire(self, threshold: int) -> None:
        """Delete the edges whose last event came before event index ``threshold``."""
        stale = [k for k, p in self.model.edges.items() if p["last_seen"] < threshold]
        if stale:
            self.model.delete([u for u, _ in stale], [v for _, v in stale])

    def edges(self):
        """(keys int64 (E,): ``src << 32 | dst`` ascending, properties: name -> (E,) array)."""
        pairs = sorted(self.model.edges)
        src = np.array([u for u, _ in pairs], dtype=np.int64)
        dst = np.array([v for _, v in pairs], dtype=np.int64)
        props = {name: np.array([self.model.edges[k][name] for k in pairs], dtype=dt)
                 for name, dt in self.model.edge_properties.items()}
        return edge_keys(src, dst), props

    def graph(self, ctx: ReplayContext):
        """The model as an adjacency view of its SciPy matrix (weighted where the stream is)."""
        weight = "weight" if "weight" in self.model.edge_properties else None
        return algos.as_adjacency(self.model.to_scipy(weight), directed=ctx.directed)


def verify_batch(g, ref: ReferenceReplay, analytics, values: dict, ctx, batch_no: int,
                  window: EventWindow | None, vmap=None) -> None:
    """Raise :class:`VerificationError` where the graph or an analytic disagrees with the
    reference after batch ``batch_no``; ``window``: the replay's window, whose own record of
    each edge's ``last_seen`` is checked where the graph stores none; ``vmap``: the vertex map
    that names edges in errors by their original ids."""
    where = f"verify: batch {batch_no}"
    try:
        g.check()
    except Exception as e:
        raise VerificationError(f"{where}: graph invariant broken: {e}") from None
    ref_keys, ref_props = ref.edges()
    out = g.edges(properties=True) if ref_props else g.edges()
    gs, gd = to_host(out[0]), to_host(out[1])
    stored = out[2] if ref_props else {}
    gk = edge_keys(gs, gd)
    if not np.array_equal(gk, ref_keys):
        extra = np.setdiff1d(gk, ref_keys)
        missing = np.setdiff1d(ref_keys, gk)

        def ex(k):
            if k.size == 0:
                return ""
            a, b = k[:3] >> 32, k[:3] & 0xFFFFFFFF
            return " (e.g. " + ", ".join(f"{original_id(vmap, int(x))}->{original_id(vmap, int(y))}"
                                         for x, y in zip(a, b)) + ")"
        raise VerificationError(
            f"{where}: the graph has {gk.size} edges, the reference {ref_keys.size}: "
            f"{extra.size} extra{ex(extra)}, {missing.size} missing{ex(missing)}")
    if g.num_vertices != ref.model.num_vertices:
        raise VerificationError(f"{where}: graph id space {g.num_vertices}, reference "
                                f"{ref.model.num_vertices}")
    for name, want in ref_props.items():
        if name == "last_seen" and name not in stored:
            found, got = window.latest(gs, gd)
            if not found.all():
                i = int(np.argmin(found))
                raise VerificationError(f"{where}: the window has no event of edge "
                                        f"{int(gs[i])}->{int(gd[i])}")
        else:
            got = to_host(stored[name])
        if not np.array_equal(got, want):
            i = int(np.argmax(got != want))
            raise VerificationError(f"{where}: {name} of edge {original_id(vmap, int(gs[i]))}->"
                                    f"{original_id(vmap, int(gd[i]))} is "
                                    f"{got[i]}, reference {want[i]}")
    checked = [an for an in analytics if an.name in ANALYTICS]
    if not checked:
        return

    def same(name, got, want) -> bool:
        return (math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9) if name == "spmv"
                else got == want)
    for an in checked:
        if an.kind == "dynamic":
            want = ANALYTICS[an.name].static(g, ctx)
            if not same(an.name, values[an.column], want):
                raise VerificationError(
                    f"{where}: {an.column} = {values[an.column]} (dynamic {an.name}), but "
                    f"the static algorithm recomputed on the graph gives {want}")
    oracle = ref.graph(ctx)
    for an in checked:
        want = ANALYTICS[an.name].static(oracle, ctx)
        got = values[an.column]
        if not same(an.name, got, want):
            raise VerificationError(f"{where}: {an.column} = {got} ({an.kind} {an.name}), "
                                    f"but the static algorithm on the reference gives {want}")


def original_id(vmap, v):
    """The original id of dense id ``v`` (``v`` itself without a map)."""
    if vmap is None or v is None or v >= len(vmap):
        return v
    return vmap.to_original(np.array([v])).tolist()[0]
