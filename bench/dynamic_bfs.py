"""Dynamic BFS benchmark: DynamicBFS.update against a static bfs of the same graph state (and NetworKit's DynBFS on the CPU), insertion and deletion batches of 10 to 10^6 edges.

For every graph and batch size, each repeat draws one batch (insertions: uniform random
endpoints; deletions: edges of the graph picked uniformly), applies it to the graph (untimed),
times ``DynamicBFS.update(change)`` and then ``--static-samples`` calls of ``bfs(g, source)``
on the resulting graph, records the touched region (``last_update``: vertices whose level was
set, adjacency entries read), and undoes the batch (untimed, with its own update). Dynamic
times: median over ``--repeats``; static times: median over all samples of all repeats (the
static calls interleaved with the updates, so both see the same machine state). The source is
the vertex of largest degree. Graphs are undirected (both directions stored).

CPU: real graphs of the data folder (``HORNET_DATA``, default ../shared/data) and Kronecker
graphs of ``--cpu-scales``; wall-clock times (time.perf_counter). NetworKit's
``distance.DynBFS`` (``pip install networkit``; skipped with a note if absent) gets the same
batches in the same process: its graph is changed by ``addEdge``/``removeEdge`` (untimed), then
``updateBatch(events)`` is timed. It is left out above ``--nk-max-batch`` (building millions of
Python event objects takes minutes).

GPU (``--gpu-scales``, ``--gpu-graphs``; needs CuPy and a GPU): Kronecker graphs generated on
the device and real graphs of the data folder; times by CUDA events around each call after a
warm-up (the host's part of each call included).

Writes bench/results/dynamic_bfs.md and .csv (``--name`` changes the file name).

    PYTHONPATH=. python bench/dynamic_bfs.py [--device cpu gpu] [--graphs soc-Epinions1 ...]
        [--cpu-scales 20] [--gpu-scales 22 24] [--batches 10 100 ...] [--repeats 5]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

from bench.common import DATA, machine, table_lines, write_csv, RESULTS

import numpy as np

import hornet
import hornet.generators
import hornet.io
import hornet.testing
from hornet.algos import bfs
from hornet.algos import DynamicBFS

HEADER = ["device", "graph", "V", "E", "kind", "batch", "batch/E %", "dynamic ms",
          "static ms", "speedup", "networkit ms", "vs networkit", "changed V %",
          "scanned E %", "levels"]
#: with --timeline (GPU): the update kernel's own time (first to last %globaltimer stamp),
#: the rest of the timed call (host, launch), the host's own time in the call (from the call
#: to its return, by the host clock), and the kernel's phases (microseconds, and in brackets
#: the grid barriers that ended in the phase)
TIMELINE_HEADER = ["kernel us", "outside kernel us", "host us", "phases us (barriers)"]


def _load_real(name: str):
    path = next((p for p in sorted(DATA.glob(f"{name}*")) if p.name.endswith(".gz")), None)
    if path is None:
        return None
    src, dst, _ = hornet.io.read_edges(path)
    return np.asarray(src, np.int64), np.asarray(dst, np.int64)


def _timer(device: str):
    """A function timing ``fn()`` in seconds: wall clock (CPU) or CUDA events (GPU)."""
    if device == "cpu":
        def timed(fn):
            t = time.perf_counter()
            fn()
            return time.perf_counter() - t
        return timed
    import cupy

    def timed(fn):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        return cupy.cuda.get_elapsed_time(start, end) / 1e3
    return timed


class _NetworKit:
    """NetworKit's DynBFS on a copy of the graph (undirected), fed the same batches."""

    def __init__(self, g, source: int):
        import networkit as nk
        self.nk = nk
        s, d = (np.asarray(hornet.testing.to_host(a)) for a in g.edges())
        self.G = nk.Graph(g.num_vertices, weighted=False, directed=False)
        self.G.addEdges((s.astype(np.uint64), d.astype(np.uint64)))
        self.bfs = nk.distance.DynBFS(self.G, source)
        self.bfs.run()
        self.dist = None

    def events(self, kind: str, s, d):
        et = self.nk.dynamics.GraphEventType
        t = et.EDGE_ADDITION if kind == "insert" else et.EDGE_REMOVAL
        Ev = self.nk.dynamics.GraphEvent
        return [Ev(t, int(a), int(b), 1.0) for a, b in zip(s.tolist(), d.tolist())]

    def apply(self, kind: str, s, d) -> None:
        G = self.G
        if kind == "insert":
            for a, b in zip(s.tolist(), d.tolist()):
                G.addEdge(a, b)
        else:
            for a, b in zip(s.tolist(), d.tolist()):
                G.removeEdge(a, b)

    def levels(self, n: int) -> np.ndarray:
        dist = np.asarray(self.bfs.getDistances(), np.float64)[:n]
        return np.where(dist > 1e300, -1, dist).astype(np.int64)


def draw_batch(rng, g, kind: str, size: int, xp):
    """(src, dst) int64 arrays of one batch on the graph's device (deletions: up to ``size``
    distinct edges of the graph)."""
    n = g.num_vertices
    if kind == "insert":
        return xp.asarray(rng.integers(0, n, size)), xp.asarray(rng.integers(0, n, size))
    s, d = g.edges()
    pick = xp.asarray(np.unique(rng.integers(0, s.shape[0], size)))
    return s[pick].astype(xp.int64), d[pick].astype(xp.int64)


def run_graph(device, name, src, dst, args, rows, notes) -> None:
    xp = np
    if device == "gpu":
        import cupy as xp
    rng = np.random.default_rng(args.seed)
    g = hornet.Graph.from_edges(xp.asarray(src), xp.asarray(dst), directed=False,
                                device=device)
    n, m = g.num_vertices, g.num_edges
    source = int(hornet.testing.to_host(g.degree()).argmax())
    bf = DynamicBFS(g, source)
    if device == "gpu" and args.timeline:
        bf._state.record_timeline = True
    if device == "gpu" and args.queue is not None:
        bf._state.async_queue = args.queue == "work-queue"
    if device == "gpu":
        import ast
        for item in args.set:
            key, value = item.split("=", 1)
            setattr(bf._state, key, ast.literal_eval(value))
    timed = _timer(device)
    nk = None
    if device == "cpu" and args.networkit:
        try:
            nk = _NetworKit(g, source)
        except ImportError:
            notes.append("NetworKit is not installed: its column is empty (pip install "
                          "networkit).")
    print(f"# {device} {name}: V={n} E={m} source={source}", flush=True)
    # warm-up (compiles / loads kernels)
    for kind in ("insert", "delete"):
        s, d = draw_batch(rng, g, kind, 10, xp)
        op, undo = (g.insert_edges, g.delete_edges) if kind == "insert" else \
            (g.delete_edges, g.insert_edges)
        ch = op(s, d)
        bf.update(ch)
        bf.update(undo(ch.src, ch.dst))
    timed(lambda: bfs(g, source))
    for kind in args.kinds:
        for size in args.batches:
            if size > m:
                continue
            dyn, sta, nkt, changed, scanned, levels = [], [], [], [], [], []
            host = []

            def call(ch):
                t = time.perf_counter()
                bf.update(ch)
                host.append(time.perf_counter() - t)
            phases = []
            op, undo = (g.insert_edges, g.delete_edges) if kind == "insert" else \
                (g.delete_edges, g.insert_edges)
            use_nk = nk is not None and size <= args.nk_max_batch
            for r in range(args.repeats):
                s, d = draw_batch(rng, g, kind, size, xp)
                ch = op(s, d)
                dyn.append(timed(lambda: call(ch)))
                st = bf.last_update
                if device == "gpu" and args.timeline:
                    per, count = {}, {}
                    for ph, us in bf._state.timeline():
                        per[ph] = per.get(ph, 0.0) + us
                        count[ph] = count.get(ph, 0) + 1
                    phases.append((per, count))
                changed.append(st["changed_vertices"])
                scanned.append(st["scanned_edges"])
                levels.append(st["levels"])
                for _ in range(args.static_samples):
                    sta.append(timed(lambda: bfs(g, source)))
                if r == 0:
                    want = hornet.testing.to_host(bfs(g, source))
                    assert np.array_equal(hornet.testing.to_host(bf.levels), want), \
                        "dynamic levels differ from the static bfs"
                if use_nk:
                    cs, cd = (hornet.testing.to_host(a) for a in (ch.src, ch.dst))
                    nk.apply(kind, cs, cd)
                    ev = nk.events(kind, cs, cd)
                    t = time.perf_counter()
                    nk.bfs.updateBatch(ev)
                    nkt.append(time.perf_counter() - t)
                    if r == 0 and not np.array_equal(nk.levels(n), want):
                        notes.append(f"NetworKit's DynBFS levels differ from bfs on {name}, "
                                     f"{kind} {size}.")
                    back = "delete" if kind == "insert" else "insert"
                    nk.apply(back, cs, cd)
                    nk.bfs.updateBatch(nk.events(back, cs, cd))
                bf.update(undo(ch.src, ch.dst))
            md, ms = statistics.median(dyn), statistics.median(sta)
            mn = statistics.median(nkt) if nkt else None
            entries = 2 * m
            row = [device, name, n, m, kind, size, round(100 * size / m, 4), md * 1e3, ms * 1e3,
                   ms / md, "" if mn is None else mn * 1e3, "" if mn is None else mn / md,
                   round(100 * statistics.median(changed) / n, 4),
                   round(100 * statistics.median(scanned) / entries, 4),
                   int(statistics.median(levels))]
            if args.timeline:
                if phases:
                    names = list(dict.fromkeys(p for per, _ in phases for p in per))
                    med = {p: statistics.median(per.get(p, 0.0) for per, _ in phases)
                           for p in names}
                    bars = {p: statistics.median(c.get(p, 0) for _, c in phases) for p in names}
                    kernel = statistics.median(sum(per.values()) for per, _ in phases)
                    row += [round(kernel, 1), round(md * 1e6 - kernel, 1),
                            round(statistics.median(host) * 1e6, 1),
                            ", ".join(f"{p} {med[p]:.1f} ({bars[p]:g})" for p in names)]
                else:
                    row += ["", "", "", ""]
            rows.append(row)
            print(table_lines(_header(args), [row])[-1], flush=True)


def _header(args) -> list[str]:
    return HEADER + (TIMELINE_HEADER if args.timeline else [])


def crossover(rows) -> list[str]:
    """Per graph and kind: the smallest batch at which the update is no faster than the
    static BFS, and the speedup at 0.1% of the edges."""
    out = []
    keys = sorted({(r[0], r[1], r[4]) for r in rows})
    for dev, name, kind in keys:
        sel = sorted((r for r in rows if (r[0], r[1], r[4]) == (dev, name, kind)),
                     key=lambda r: r[5])
        cross = next((r[5] for r in sel if r[9] <= 1.0), None)
        small = [r for r in sel if r[6] <= 0.1]
        worst = min((r[9] for r in small), default=None)
        out.append(f"- {dev} {name} {kind}: crossover "
                   f"{'above the largest batch' if cross is None else f'at batch {cross}'}; "
                   f"lowest speedup for batches <= 0.1% of E: "
                   f"{'-' if worst is None else f'{worst:.1f}x'}")
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", nargs="+", default=["cpu"], choices=["cpu", "gpu"])
    ap.add_argument("--graphs", nargs="*", default=["soc-Epinions1", "email-Enron", "ca-HepPh"],
                    help="real graphs of the data folder (CPU)")
    ap.add_argument("--cpu-scales", type=int, nargs="*", default=[20])
    ap.add_argument("--gpu-scales", type=int, nargs="*", default=[22, 24])
    ap.add_argument("--gpu-graphs", nargs="*", default=[],
                    help="real graphs of the data folder (GPU)")
    ap.add_argument("--batches", type=int, nargs="+",
                    default=[10, 100, 1000, 10_000, 100_000, 1_000_000])
    ap.add_argument("--kinds", nargs="+", default=["insert", "delete"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--static-samples", type=int, default=3,
                    help="static bfs calls timed after each update")
    ap.add_argument("--networkit", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--nk-max-batch", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--queue", choices=["level-sync", "work-queue"], default=None,
                    help="GPU: the update kernel, level-synchronous phases or work-queue "
                         "phases (GPUState.async_queue off / on; default: the class default)")
    ap.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE",
                    help="GPU: DynamicBFS GPU settings for the run (GPUState attributes, "
                         "Python literals), e.g. small_max=8")
    ap.add_argument("--timeline", action="store_true",
                    help="GPU: record the update kernel's phases (a %%globaltimer stamp at "
                         "each grid barrier, block 0) during the timed calls: kernel, "
                         "outside-kernel and per-phase columns")
    ap.add_argument("--name", default="dynamic_bfs")
    ap.add_argument("--note", default="", help="a line added to the notes (machine load ...)")
    args = ap.parse_args(argv)
    rows, notes = [], []
    desc = []
    for device in args.device:
        if device == "cpu":
            xp, graphs, scales = np, args.graphs, args.cpu_scales
            desc.append(f"CPU: {machine()}")
        else:
            import cupy as xp
            graphs, scales = args.gpu_graphs, args.gpu_scales
            props = xp.cuda.runtime.getDeviceProperties(0)
            name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
            desc.append(f"GPU: {name}")
        for name in graphs:
            edges = _load_real(name)
            if edges is None:
                notes.append(f"{name}: not in {DATA}")
                continue
            run_graph(device, name, *edges, args, rows, notes)
        for scale in scales:
            s, d = hornet.generators.kronecker_edges(scale, seed=args.seed, xp=xp)
            run_graph(device, f"kron{scale}", s, d, args, rows, notes)
            if xp is not np:                           # the next scale's graph needs room
                xp.get_default_memory_pool().free_all_blocks()
    text = [f"# Dynamic BFS: update vs static bfs{' and NetworKit DynBFS' if args.networkit else ''}",
            "", __doc__.split("\n\n")[1].replace("\n", " "), "",
            *[f"- {d}" for d in desc],
            f"- command: `python bench/dynamic_bfs.py {' '.join(sys.argv[1:] if argv is None else argv)}`",
            *([f"- {args.note}"] if args.note else []),
            "- speedup = static / dynamic; vs networkit = NetworKit / dynamic (> 1: hornet "
            "faster); changed V % = vertices whose level was set; scanned E % = adjacency "
            "entries read / stored entries (2E).", "", "## Crossover", "",
            *crossover(rows), *([""] + [f"- {x}" for x in notes] if notes else []), "",
            "## Results", "", *table_lines(_header(args), rows), ""]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text("\n".join(text))
    write_csv(args.name, _header(args), rows)
    print("\n".join(text[-len(rows) - 4:]))


if __name__ == "__main__":
    main()
