"""How much a CPU truss update may spend before the static decomposition: :class:`UpdateBudget`.

Costs are compared in the update's work units (list entries intersected and triangles
examined, as :class:`~hornet.algos.ktruss.dynamic.DynamicTruss` counts them; the rates below
are learned per kind, so each kind's units only need to follow its own time). One static
decomposition costs ``S`` units: its seconds (measured on this graph, compile time taken out,
scaled to the graph's current ``edges + 3 x triangles``) over the seconds a unit of update
work costs (learned from timed updates). Both timings come from the same machine, so a steady
load scales both and leaves the decisions alone.

Two decisions, both before the expensive phase of an update (the deletion's descent, the
insertion's k-order scan):

* The prediction: the batch's first wave (the triangles of the edges the update examines
  first: for a deletion the edges that lost a triangle at their level, for an insertion
  the scan's seeds) times the work per first-wave triangle learned from the earlier
  updates of the same kind on this graph; for a deletion at least the batch's size times
  the work per batch edge. The first wave grows slower than the batch where the batch's
  edges share triangles; an insertion's work does too (its raises share levels), but a
  deletion's cascades meet more often the larger the batch, so that its work grows with
  the batch and the first wave alone falls short. A prediction over ``gate`` x S sends the
  batch to the static decomposition at once (none learned yet: no gate).
* The deadline: the work limit of the update, ``factor`` x the prediction within
  ``[low, high]`` x S (:data:`UNKNOWN_SHARE` x ``high`` x S without a prediction: the
  first update of a kind risks less than a static decomposition). At the limit the update stops
  (the kernels check it at every edge they examine) and the static decomposition finishes
  the batch: an update then costs what it spent plus the finish, so the deadline is small
  where the prediction is small.
"""
from __future__ import annotations

#: updates with at least this much work teach the unit cost and the spread
LEARN_MIN_WORK = 1 << 14
#: and only updates whose work is at least this share of the static decomposition's teach the
#: unit cost: a smaller one's time is mostly its fixed costs (views, scratch, cold caches),
#: which would make the work of a large batch look dearer than it is
RATE_MIN_SHARE = 1 / 64
#: work an update may always take: the fixed setup of a static decomposition (working copy,
#: edge index, rounds) costs about as much
STATIC_OVERHEAD = 1 << 18
#: seconds per unit of update work over seconds per unit of static work (edges + 3 x
#: triangles) before an update was timed
COST_RATIO_PRIOR = 2.0
#: timed updates, static runs and spreads remembered
HISTORY = 8
#: the largest work limit (kernels add small multiples of it in int64)
MAX_LIMIT = 1 << 50
#: the deadline of an update without a prediction, as a share of the deadline's cap
UNKNOWN_SHARE = 0.5


class UpdateBudget:
    """Work limits of truss updates on one graph (module docstring).

    ``gate``: a prediction over this many static decompositions goes static at once
    (``inf``: never; ``0``: every update with a prediction). ``factor``, ``low``, ``high``:
    the deadline, ``factor`` x the prediction kept within ``[low, high]`` static
    decompositions.
    """

    def __init__(self, gate: float = 2.0, factor: float = 2.0, low: float = 0.25,
                 high: float = 1.0):
        self.gate, self.factor, self.low, self.high = gate, factor, low, high
        self.static_rates: list[float] = []       # seconds per static unit
        # s per unit of update work by kind; "peel": a unit of the core's decomposition
        self.rates: dict[str, list[float]] = {"delete": [], "insert": [], "peel": []}
        # (work per first-wave triangle, work per batch edge) of recent updates, by kind
        self.spreads: dict[str, list[tuple[float, float]]] = {"delete": [], "insert": []}

    def static_timed(self, seconds: float, static_work: int) -> None:
        """A static decomposition of a graph of ``static_work`` (edges + 3 x triangles)
        units took ``seconds`` (compile time taken out)."""
        if seconds > 0 and static_work > 0:
            self.static_rates = (self.static_rates + [seconds / static_work])[-HISTORY:]

    def learn_rate(self, kind: str, seconds: float, work: int, static_work: int) -> None:
        """An update of ``kind`` and ``work`` units took ``seconds`` (compiling nothing) on a
        graph of ``static_work`` units."""
        if work >= max(LEARN_MIN_WORK, RATE_MIN_SHARE * static_work) and seconds > 0:
            self.rates[kind] = (self.rates[kind] + [seconds / work])[-HISTORY:]

    def learn_spread(self, kind: str, first: int, batch: int, work: int,
                     stopped: bool = False) -> None:
        """An update of ``kind`` ("delete" / "insert") of ``batch`` edges whose first wave
        held ``first`` triangles did ``work`` units. One ``stopped`` at its limit did more,
        how much more is unknown: its work counts ``factor`` times (the factor by which the
        deadline allowed the prediction to fall short), so that a batch like it next time
        goes static at once rather than to the deadline again."""
        if stopped:
            work = int(work * self.factor)
        if work >= LEARN_MIN_WORK and first > 0 and batch > 0:
            self.spreads[kind] = (self.spreads[kind] + [(work / first, work / batch)])[-HISTORY:]

    @staticmethod
    def _median(values: list[float]) -> float:
        r = sorted(values)
        return r[0] if len(r) < 3 else r[len(r) // 2]

    def static_units(self, kind: str, static_work: int) -> float:
        """S: the work of an update of ``kind`` that costs as long as one static
        decomposition of a graph of ``static_work`` units (the smaller of two rates when only
        two are known, else the median: one slow call on a loaded machine does not set it)."""
        if self.static_rates and self.rates[kind]:
            ratio = self._median(self.static_rates) / self._median(self.rates[kind])
        else:
            ratio = 1.0 / COST_RATIO_PRIOR
        return static_work * ratio

    def static_rate(self) -> float | None:
        """Seconds per unit of static work (edges + 3 x triangles), None before a static
        decomposition was timed."""
        return self._median(self.static_rates) if self.static_rates else None

    def unit_rate(self, kind: str) -> float | None:
        """Seconds per unit of update work of ``kind``, None before one was learned."""
        return self._median(self.rates[kind]) if self.rates[kind] else None

    def predict(self, kind: str, first: int, batch: int) -> float | None:
        """The work expected of an update of ``kind`` of ``batch`` edges with ``first``
        first-wave triangles (None before an update of that kind was counted)."""
        s = self.spreads[kind]
        if not s:
            return None
        p = self._median([a for a, _ in s]) * first
        if kind == "delete":
            p = max(p, self._median([b for _, b in s]) * batch)
        return p

    def decide(self, kind: str, first: int, batch: int, static_work: int,
               bound: float | None = None) -> tuple[bool, int, float | None]:
        """``(static, limit, prediction)``: whether the batch goes static at once, and the
        work limit of the update otherwise. ``bound``: a bound of the update's work known
        before it (a batch that decomposes a dense core, whose work the core bounds): the
        prediction is at most that."""
        S = self.static_units(kind, static_work)
        p = self.predict(kind, first, batch)
        if bound is not None:
            p = bound if p is None else min(p, bound)
        if p is not None and p > self.gate * S:
            return True, 0, p
        if p is None:
            share = UNKNOWN_SHARE * self.high
        else:
            share = min(max(self.factor * p / S, self.low), self.high)
        return False, int(min(share * S + STATIC_OVERHEAD, MAX_LIMIT)), p
