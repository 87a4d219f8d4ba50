"""The least work any exact local k-truss update must do, next to the static decomposition's
work and DynamicTruss's actual work (CPU).

    PYTHONPATH=. python3 -m bench.tools.truss_work_bound --graphs ca-HepPh kron18
        [--sizes 100 1000 0.001] [--repeats 1] [--seed 7] [--out rows.jsonl]
    PYTHONPATH=. python3 -m bench.tools.truss_work_bound --table rows.jsonl [more.jsonl ...]

For every graph (a real graph of the data folder, or ``kronN``: Kronecker scale N, edge factor
16, seed 1) and batch size b (an integer, or a share of the edges when under 1): delete b
random existing edges, then re-insert them. ``DynamicTruss`` follows every batch (timed, its
``stats`` kept) and the static ``truss_numbers`` of the graph after the deletion is the
oracle (timed; the dynamic numbers must equal it after every batch). From the numbers before
(t0) and after (t1) the deletion, on the graph before it (G) and after it (G - D):

- *changed*: the edges whose truss number changes (the same edges fall on the deletion and
  rise again on the re-insertion);
- *bound*: the triangles of the batch's edges in G plus those of the changed edges (in G - D
  for the deletion, in G for the re-insertion). Any exact local method visits them: the
  batch edges' triangles to update supports, the changed edges' to certify their new numbers;
- *level-count edges*: the other edges whose level count (triangles whose other two edges
  are at its number or above) changes; *recount bound*: the bound plus their triangles (what
  a method that recounts every edge whose count changes visits; one that keeps counts only
  decrements them, inside the bound);
- the static decomposition's work: edges + 3 x triangles (its support count lists every
  triangle once, its peel meets every triangle again from the first edge peeled and updates
  the two others) and its time;
- DynamicTruss's work (``stats["work"]``: intersections plus triangles examined) and time.

``static work / bound`` is the best speedup any region method can reach on that batch, if a
unit of its work cost what a unit of the static decomposition's costs. ``--no-fallback``:
no work limit (rows of kind "... (no fallback)"). Rows go to ``--out``
(JSON lines); ``--table`` writes bench/results/truss_work_bound_cpu.md from such files.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numba
import numpy as np

import hornet
from bench.common import machine, set_command, write_table
from bench.dynamic_truss import load
from hornet.algos import DynamicTruss, truss_numbers
from hornet.core.search import lower_bound


@numba.njit(cache=True, parallel=True)
def _triangles(edges, eu, ev, indptr, nbr, neid, inset, gone, t0, t1, mark, tri_g, tri_gd,
               tri_lev):
    """For every edge id of ``edges``: its triangles in G (``tri_g``), in G - D
    (``tri_gd``: no edge of the triangle ``gone``) and those of G - D whose two other edges
    have t1 >= its own t1 (``tri_lev``). With ``mark`` non-empty, marks every other edge
    (not ``inset``) of those triangles whose level count differs between (G, t0) and
    (G - D, t1)."""
    marking = mark.shape[0] > 0
    for i in numba.prange(edges.shape[0]):
        e = edges[i]
        u, v = eu[e], ev[e]
        if indptr[u + 1] - indptr[u] > indptr[v + 1] - indptr[v]:
            u, v = v, u
        vlo, vhi = indptr[v], indptr[v + 1]
        cg, cgd, clev = 0, 0, 0
        for p in range(indptr[u], indptr[u + 1]):
            w = nbr[p]
            q = lower_bound(nbr, vlo, vhi, w)
            if q == vhi or nbr[q] != w:
                continue
            vlo = q + 1
            e1, e2 = neid[p], neid[q]
            cg += 1
            alive = gone[e] == 0 and gone[e1] == 0 and gone[e2] == 0
            if alive:
                cgd += 1
                if min(t1[e1], t1[e2]) >= t1[e]:
                    clev += 1
            if marking:
                for f, a, b in ((e1, e, e2), (e2, e, e1)):
                    if inset[f]:
                        continue
                    before = min(t0[a], t0[b]) >= t0[f]
                    after = alive and min(t1[a], t1[b]) >= t1[f]
                    if before != after:
                        mark[f] = 1
        tri_g[i] = cg
        tri_gd[i] = cgd
        tri_lev[i] = clev


class Graph:
    """The undirected simple graph G as a sorted symmetric CSR whose entries carry edge ids
    (ids: positions of the sorted keys min << 32 | max)."""

    def __init__(self, s, d):
        s, d = np.asarray(s, np.int64), np.asarray(d, np.int64)
        lo, hi = np.minimum(s, d), np.maximum(s, d)
        keep = lo != hi
        self.keys = np.unique((lo[keep] << 32) | hi[keep])
        self.eu = (self.keys >> 32).astype(np.int64)
        self.ev = (self.keys & 0xFFFFFFFF).astype(np.int64)
        m = self.keys.shape[0]
        n = int(self.ev.max(initial=-1)) + 1
        a = np.concatenate([self.eu, self.ev])
        b = np.concatenate([self.ev, self.eu])
        eid = np.concatenate([np.arange(m), np.arange(m)])
        order = np.lexsort((b, a))
        self.nbr, self.neid = b[order].copy(), eid[order].copy()
        self.indptr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(a, minlength=n), out=self.indptr[1:])

    def ids(self, s, d) -> np.ndarray:
        s, d = np.asarray(s, np.int64), np.asarray(d, np.int64)
        key = (np.minimum(s, d) << 32) | np.maximum(s, d)
        at = np.searchsorted(self.keys, key)
        assert np.all(self.keys[np.minimum(at, self.keys.shape[0] - 1)] == key)
        return at

    def triangles(self, edges, inset, gone, t0, t1, marking=False):
        mark = np.zeros(self.keys.shape[0] if marking else 0, np.uint8)
        tg = np.empty(edges.shape[0], np.int64)
        tgd = np.empty(edges.shape[0], np.int64)
        self.lev = np.empty(edges.shape[0], np.int64)
        _triangles(edges, self.eu, self.ev, self.indptr, self.nbr, self.neid, inset, gone,
                   t0, t1, mark, tg, tgd, self.lev)
        return tg, tgd, mark


def by_id(G: Graph, g, values) -> np.ndarray:
    """Per-edge values of ``g.edges()`` order, indexed by edge id of G (0 where absent)."""
    s, d = g.edges(dense=True)
    out = np.zeros(G.keys.shape[0], np.int32)
    out[G.ids(s, d)] = np.asarray(values)
    return out


def measure(name: str, sizes, repeats: int, rng, out, no_fallback: bool = False,
            bounds_only: bool = False) -> None:
    title, s, d = load(name)
    g = hornet.Graph.from_edges(s, d, device="cpu")
    gs, gd = g.edges(dense=True)
    G = Graph(gs, gd)
    m = G.keys.shape[0]
    if bounds_only:
        return level_bounds(title, g, G, sizes, repeats, rng, out)
    start = time.perf_counter()
    kt = DynamicTruss(g)                       # its build is the static decomposition of G
    build = time.perf_counter() - start
    if no_fallback:                            # every batch through the region algorithms
        kt._budget.gate = kt._budget.low = kt._budget.high = 1e12
    t0 = by_id(G, g, kt.truss_numbers)
    triangles = int(kt._triangles)
    static_work = m + 3 * triangles
    print(f"{title}: {m} edges, {triangles} triangles, build {build:.1f} s, "
          f"static {kt._static_seconds:.2f} s, load {os.getloadavg()[0]:.2f}", flush=True)
    # a warm-up pair compiles the update kernels
    plan = [(min(100, m // 100), True)] + [
        (b, False) for b in sorted({int(round(x * m)) if x < 1 else int(x) for x in sizes})]
    for b, warm in plan:
        for rep in range(1 if warm else repeats):
            pick = rng.choice(m, b, replace=False)
            ds, dd = G.eu[pick], G.ev[pick]
            row = dict(graph=title, edges=m, triangles=triangles, batch=b)
            t_del = _timed(lambda: kt.update(g.delete_edges(ds, dd)))
            st_del = dict(kt.stats)
            if warm:                           # compiles the update kernels only
                kt.update(g.insert_edges(ds, dd))
                continue
            start = time.perf_counter()
            t1 = by_id(G, g, truss_numbers(g))
            static_s = time.perf_counter() - start
            assert np.array_equal(by_id(G, g, kt.truss_numbers), t1), "dynamic != static"
            t_ins = _timed(lambda: kt.update(g.insert_edges(ds, dd)))
            st_ins = dict(kt.stats)
            assert np.array_equal(by_id(G, g, kt.truss_numbers), t0), "dynamic != static"
            gone, changed, inset, first = _changed_edges(m, pick, t0, t1)
            tg, tgd, mark = G.triangles(first, inset, gone, t0, t1, marking=True)
            batch_tri = int(tg[:b].sum())
            chg_g, chg_gd = int(tg[b:].sum()), int(tgd[b:].sum())
            level = np.flatnonzero(mark).astype(np.int64)
            lg, lgd, _ = G.triangles(level, inset, gone, t0, t1)
            row.update(
                changed=int(changed.shape[0]), changed_share=changed.shape[0] / m,
                batch_tri=batch_tri, changed_tri_g=chg_g, changed_tri_gd=chg_gd,
                level_edges=int(level.shape[0]), level_tri_g=int(lg.sum()),
                level_tri_gd=int(lgd.sum()), static_work=static_work,
                static_s=static_s, load=os.getloadavg()[0])
            for kind, sec, st, bound, extra in (
                    ("delete", t_del, st_del, batch_tri + chg_gd, int(lgd.sum())),
                    ("re-insert", t_ins, st_ins, batch_tri + chg_g, int(lg.sum()))):
                rec = dict(row, kind=kind + (" (no fallback)" if no_fallback else ""),
                           bound=bound, recount_bound=bound + extra,
                           dyn_s=sec, dyn_path=st["path"], dyn_work=st.get("work"),
                           dyn_region=st.get("region"), dyn_seconds=st.get("seconds"),
                           dense=st.get("dense"), lowered=st.get("lowered"),
                           raises=st.get("raises"))
                _record(rec, out)


def _changed_edges(m: int, pick, t0, t1):
    """For a batch of deleted edge ids ``pick`` (of ``m``) and truss numbers before (``t0``)
    and after (``t1``): ``gone`` (uint8 per edge: deleted), ``changed`` (ids of kept edges whose
    number changed), ``inset`` (gone or changed) and ``first`` (the batch, then the changed
    edges, int64)."""
    gone = np.zeros(m, np.uint8)
    gone[pick] = 1
    changed = np.flatnonzero(t0 != t1)
    changed = changed[gone[changed] == 0]
    inset = gone.copy()
    inset[changed] = 1
    return gone, changed, inset, np.concatenate([pick, changed]).astype(np.int64)


def _record(rec: dict, out) -> None:
    """Print one measured row as JSON, and append it to the file ``out`` when given."""
    print(json.dumps(rec), flush=True)
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(rec) + "\n")


def level_bounds(title, g, G, sizes, repeats, rng, out) -> None:
    """The level bound alone (no DynamicTruss), for the same batches as :func:`measure`
    with the same seed and sizes: batch edges' triangles in G plus, for every changed edge,
    its triangles in G - D whose two other edges have t1 >= its own t1 (what listing only
    the triangles at its new level reads)."""
    m = G.keys.shape[0]
    t0 = by_id(G, g, truss_numbers(g))
    rng.choice(m, min(100, m // 100), replace=False)          # the warm-up pair's batch
    for b in sorted({int(round(x * m)) if x < 1 else int(x) for x in sizes}):
        for rep in range(repeats):
            pick = rng.choice(m, b, replace=False)
            ds, dd = G.eu[pick], G.ev[pick]
            g.delete_edges(ds, dd)
            t1 = by_id(G, g, truss_numbers(g))
            g.insert_edges(ds, dd)
            gone, changed, inset, first = _changed_edges(m, pick, t0, t1)
            tg, _, _ = G.triangles(first, inset, gone, t0, t1)
            rec = dict(graph=title, batch=b, rep=rep, changed=int(changed.shape[0]),
                       level_bound=int(tg[:b].sum() + G.lev[b:].sum()), bounds_only=True)
            _record(rec, out)


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


HEADER = ["graph", "edges", "batch", "kind", "changed edges (share)", "bound: batch + changed "
          "edges' triangles", "level-count edges", "recount bound", "static work (E + 3T)",
          "static s", "static work / bound", "static work / recount bound",
          "level bound", "static work / level bound",
          "dynamic work", "dynamic work / bound", "dynamic s", "speedup",
          "ns per unit: static / dynamic", "load"]


def table(files, levels=()) -> None:
    """The table of the rows in ``files``; ``levels``: for each of them (same order), a file
    of ``--bounds-only`` rows of the same batches, whose level bounds join the rows."""
    rows = []
    for i, f in enumerate(files):
        part = [json.loads(line) for line in open(f) if line.strip()]
        lev = {}
        if i < len(levels):
            for r in (json.loads(line) for line in open(levels[i]) if line.strip()):
                lev[(r["graph"], r["batch"], r["rep"])] = r
        seen: dict = {}
        for r in part:
            key = (r["graph"], r["batch"], r["kind"])
            n = seen[key] = seen.get(key, -1) + 1
            lb = lev.get((r["graph"], r["batch"], n))
            if lb is not None:
                assert lb["changed"] == r["changed"], "not the same batch"
                r["level_bound"] = lb["level_bound"]
        rows += part
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["graph"], r["edges"], r["batch"], r["kind"]), []).append(r)
    out = []
    for (title, m, b, kind), rs in sorted(groups.items(),
                                          key=lambda x: (x[0][1], x[0][2], x[0][3])):
        med = lambda k: statistics.median(r[k] for r in rs)          # noqa: E731
        dyn = [r for r in rs if r["dyn_path"] == "dynamic"]
        work = statistics.median(r["dyn_work"] for r in dyn) if dyn else None
        dyn_s = med("dyn_s")
        out.append([
            title, m, b, kind, f"{med('changed'):.0f} ({med('changed_share'):.2e})",
            f"{med('bound'):.3g}", f"{med('level_edges'):.0f}", f"{med('recount_bound'):.3g}",
            f"{rs[0]['static_work']:.3g}", f"{med('static_s'):.3g}",
            f"{rs[0]['static_work'] / med('bound'):.3g}",
            f"{rs[0]['static_work'] / med('recount_bound'):.3g}",
            *_level_cells(rs),
            "static fallback" if work is None else f"{work:.3g}",
            "-" if work is None else f"{work / med('bound'):.3g}",
            f"{dyn_s:.3g}" + (f" ({len(rs) - len(dyn)}/{len(rs)} static)"
                              if len(dyn) < len(rs) else ""),
            f"{med('static_s') / dyn_s:.3g}",
            f"{med('static_s') / rs[0]['static_work'] * 1e9:.3g} / "
            + ("-" if work is None else
               f"{statistics.median(r['dyn_s'] / r['dyn_work'] for r in dyn) * 1e9:.3g}"),
            f"{med('load'):.2f}"])
    notes = NOTES + f"\n\nRows: {len(rows)} batches; median per row.\n\n" + crossover(groups)
    write_table("truss_work_bound_cpu", "k-truss updates: the least work of an exact local "
                "method versus the static decomposition (cpu)", HEADER, out, notes)


def _level_cells(rs) -> list[str]:
    got = [r["level_bound"] for r in rs if "level_bound" in r]
    if not got:
        return ["-", "-"]
    lb = statistics.median(got)
    return [f"{lb:.3g}", f"{rs[0]['static_work'] / lb:.3g}"]


def crossover(groups) -> str:
    """Per graph and kind: the batch size at which static work / bound falls to 10 (and to
    1), and where static work / level bound falls to 10, interpolated log-log between the
    measured sizes around it (">" past the largest, "<=" below the smallest)."""
    by: dict = {}
    for (title, m, b, kind), rs in groups.items():
        ratio = statistics.median(r["static_work"] / r["bound"] for r in rs)
        lev = [r["static_work"] / r["level_bound"] for r in rs if "level_bound" in r]
        by.setdefault((title, m, kind), []).append(
            (b, ratio, statistics.median(lev) if lev else None))
    lines = ["## Where the bound crosses 10x", "",
             "Batch size at which *static work / bound* reaches 10 (and 1), and *static work / "
             "level bound* reaches 10: log-log interpolation between the measured batch sizes "
             "around it; `> b`: above at every measured size; `<= b`: below at the smallest.",
             "", "| graph | kind | bound at 0.1% of the edges | b where bound = 10x (share of "
             "edges) | b where bound = 1x | level bound at 0.1% | b where level bound = 10x "
             "(share) |", "|---|---|---|---|---|---|---|"]
    for (title, m, kind), pts in sorted(by.items(), key=lambda x: (x[0][1], x[0][2])):
        pts.sort()
        at = min(pts, key=lambda p: abs(p[0] - m / 1000))
        cells = [_cross_cell([(b, r) for b, r, _ in pts], 10.0, m),
                 _cross_cell([(b, r) for b, r, _ in pts], 1.0, None)]
        lev = [(b, x) for b, _, x in pts if x is not None]
        lines.append(f"| {title} | {kind} | {at[1]:.3g} (b = {at[0]}) | {cells[0]} | "
                     f"{cells[1]} | " + (f"{at[2]:.3g}" if at[2] is not None else "-")
                     + " | " + (_cross_cell(lev, 10.0, m) if lev else "-") + " |")
    return "\n".join(lines)


def _cross_cell(pts, level, m) -> str:
    b = _cross(pts, level)
    if b is None:
        text = f"> {pts[-1][0]}"
        share = pts[-1][0]
    elif pts[0][1] < level:
        text = f"<= {pts[0][0]}"
        share = pts[0][0]
    else:
        text = f"{b:.3g}"
        share = b
    return text if m is None else f"{text} ({share / m:.2e})"


def _cross(pts, level):
    for (b0, r0), (b1, r1) in zip(pts, pts[1:]):
        if r0 >= level > r1:
            x = (np.log(r0) - np.log(level)) / (np.log(r0) - np.log(r1))
            return float(np.exp(np.log(b0) + x * (np.log(b1) - np.log(b0))))
    if pts and pts[0][1] < level:
        return float(pts[0][0])
    return None


NOTES = """Machine shared with other jobs (load average in the last column: the 1-minute
average when the row was measured; 2 cores, 2 Numba threads). Tool and definitions:
bench/tools/truss_work_bound.py. Per graph and batch size b: b random existing edges deleted
(one `DynamicTruss.update`, timed), the static `truss_numbers` of the graph after it as
oracle (timed; equal to the dynamic numbers), then the same edges re-inserted (timed).
*changed edges*: edges whose truss number the batch changes (share of the edges).
*bound*: triangles of the batch's edges in G plus those of the changed edges (in G - D for
the deletion, in G for the re-insertion): what any exact local method visits.
*level-count edges*: other edges whose level count changes; *recount bound*: the bound plus
their triangles. *level bound* (`--bounds-only`, the same batches): the batch's edges'
triangles in G plus, per changed edge, only its triangles in G - D whose two other edges
have new numbers at least its own new number (what an update that lists triangles at the
level reads: the level rows of the Kronecker paths do; certifying the new number needs at
least those), so below the bound; "-": not measured. *static work*: edges + 3 x triangles. *static work / bound*: the best
speedup a region method reaches if its unit of work costs what the static one's does.
*dynamic work*: `DynamicTruss.stats["work"]` (intersections plus triangles examined; a
deletion's support update and the dense blocks' matrix rows are not in it: on ca-HepPh most
changed edges are in a dense block, a clique whose rows the update reads in vector lanes, so
its dynamic work is far below the bound, which counts triangles). *speedup*: static seconds
/ dynamic seconds; a dynamic update whose learned work limit sends it to the static
decomposition shows as a static fallback (the limit is learned from timed updates, so a
loaded machine moves it). *ns per unit*: seconds per unit of work, static (static s / static
work) and dynamic (dynamic s / dynamic work). Static seconds are inflated by the load (quiet
machine: Kronecker 18 about 10 s, Kronecker 20 about 74 s)."""


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", nargs="*", default=["ca-HepPh", "soc-Epinions1", "kron18"])
    ap.add_argument("--sizes", nargs="*", type=float, default=[100, 1000, 0.001])
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default=None)
    ap.add_argument("--table", nargs="*", default=None)
    ap.add_argument("--levels", nargs="*", default=[],
                    help="with --table: --bounds-only files, one per --table file")
    ap.add_argument("--bounds-only", action="store_true",
                    help="only the level bound of the same batches (no DynamicTruss)")
    ap.add_argument("--no-fallback", action="store_true",
                    help="no work limit: every batch takes the region algorithms")
    args = ap.parse_args(argv)
    if args.table:
        print(machine())
        set_command("PYTHONPATH=. python3 -m bench.tools.truss_work_bound --graphs ca-HepPh "
                    "soc-Epinions1 kron18 --repeats 3 --out a.jsonl; the same with --graphs "
                    "kron20 --repeats 1 --out b.jsonl; then --table a.jsonl b.jsonl")
        return table(args.table, args.levels)
    rng = np.random.default_rng(args.seed)
    for name in args.graphs:
        measure(name, args.sizes, args.repeats, rng, args.out, args.no_fallback,
                args.bounds_only)


if __name__ == "__main__":
    main()
