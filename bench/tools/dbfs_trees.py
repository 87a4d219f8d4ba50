"""DynamicBFS on the GPU, two source trees in one process: the update of the working tree
against a base checkout's, with the static BFS timed in the same run.

    PYTHONPATH=. python3 -m bench.tools.dbfs_trees --base ../base [--real email-Enron]
        [--scales 22] [--batches 10 100 1000 10000] [--kinds delete] [--repeats 7]
        [--max-share 0.001]
        [--timeline] [--variants "settle=False" ...] [--name dynamic_bfs_gpu_trees]

The base tree is imported as ``hornet_base`` (bench/tools/ab_trees.py). Every graph (real
graphs of the data folder, ``HORNET_DATA``; undirected Kronecker graphs made on the device) is
built by both trees from the same device arrays, with the vertex of largest degree as the
source and a ``DynamicBFS`` without parents, as bench/dynamic_bfs.py; ``--variants`` adds
graphs of the working tree whose ``GPUState`` takes the given settings. For every kind, batch
size and repeat one batch is drawn (deletions: edges of the graph picked uniformly;
insertions: uniform random pairs); each variant in turn, the variants taking turns at going
first, applies it to its graph (untimed), times ``DynamicBFS.update`` by CUDA events (and the
call by the host clock), checks the levels against its static ``bfs`` (every repeat) and the
parent counts against a recount (first repeat), and undoes the batch (untimed, with its
update). The static ``bfs`` of the
working tree is timed twice after every repeat. ``--timeline``: one more update per tree
and batch size with the kernel's timeline on (its phases, printed). Prints a table and
writes ``<results>/<name>.md``.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from bench.common import DATA, RESULTS, kronecker, table_lines

HEADER = ["graph", "V", "E", "kind", "batch", "batch/E %", "variant", "update us",
          "/ base", "host us", "static us", "speedup", "kernel phases us (barriers)"]


def _real(name: str):
    path = next((p for p in sorted(DATA.glob(f"{name}*")) if p.name.endswith(".gz")), None)
    if path is None:
        raise FileNotFoundError(f"no graph {name!r} in {DATA} (set HORNET_DATA)")
    import hornet.io
    src, dst, _ = hornet.io.read_edges(path)
    return np.asarray(src, np.int64), np.asarray(dst, np.int64)


def _counts_ok(xp, bf, g) -> bool:
    """The maintained parent counts equal a recount over the graph (reached vertices)."""
    n = g.num_vertices
    lv = bf.levels
    s, d = g.edges()
    s, d = xp.concatenate([s, d]), xp.concatenate([d, s])
    ok = (lv[s] >= 0) & (lv[d] == lv[s] + 1)
    want = xp.bincount(d[ok], minlength=n)[:n]
    got = bf._state.counts()[:n]
    reached = lv > 0
    return bool(xp.array_equal(got[reached], want[reached]))


def _phases(timeline) -> str:
    acc: dict = {}
    for name, us in timeline:
        t, k = acc.get(name, (0.0, 0))
        acc[name] = (t + us, k + 1)
    return ", ".join(f"{k} {t:.1f} ({c})" for k, (t, c) in acc.items())


def run_graph(xp, packages, name, src, dst, args, rows) -> None:
    import hornet.testing
    device = "cpu" if xp is np else "gpu"
    s_dev, d_dev = xp.asarray(src), xp.asarray(dst)
    graphs, dyn = {}, {}
    for key, (pkg, _) in packages.items():
        graphs[key] = pkg.Graph.from_edges(s_dev, d_dev, directed=False, device=device)
    del s_dev, d_dev
    g_new = graphs["new"]
    n, m = g_new.num_vertices, g_new.num_edges
    source = int(hornet.testing.to_host(g_new.degree()).argmax())
    for key, (pkg, settings) in packages.items():
        dyn[key] = pkg.algos.DynamicBFS(graphs[key], source)
        for k, v in settings.items():
            setattr(dyn[key]._state, k, v)
    bfs = {key: pkg.algos.bfs for key, (pkg, _) in packages.items()}
    rng = np.random.default_rng(args.seed)
    if device == "gpu":
        start, end = xp.cuda.Event(), xp.cuda.Event()

        def timed(fn, host=None) -> float:
            start.record()
            t = time.perf_counter()
            fn()
            t = time.perf_counter() - t
            end.record()
            end.synchronize()
            if host is not None:
                host.append(t * 1e6)
            return xp.cuda.get_elapsed_time(start, end) * 1e3
    else:
        def timed(fn, host=None) -> float:
            t = time.perf_counter()
            fn()
            t = (time.perf_counter() - t) * 1e6
            if host is not None:
                host.append(t)
            return t

    def draw(kind, size):
        if kind == "insert":
            return (xp.asarray(rng.integers(0, n, size)),
                    xp.asarray(rng.integers(0, n, size)))
        es, ed = g_new.edges()
        pick = xp.asarray(np.unique(rng.integers(0, es.shape[0], size)))
        return es[pick].astype(xp.int64), ed[pick].astype(xp.int64)

    def ops(key, kind):
        g = graphs[key]
        return (g.insert_edges, g.delete_edges) if kind == "insert" else \
            (g.delete_edges, g.insert_edges)

    for key in packages:                                # warm-up: kernels built and loaded
        for kind in ("delete", "insert"):
            op, undo = ops(key, kind)
            bs, bd = draw(kind, 10)
            ch = op(bs, bd)
            dyn[key].update(ch)
            dyn[key].update(undo(ch.src, ch.dst))
        timed(lambda: bfs[key](graphs[key], source))
    if device == "gpu":
        xp.cuda.Device().synchronize()
    for kind in args.kinds:
        for size in args.batches:
            if size > m // 2 or size > args.max_share * m:
                continue
            times = {key: [] for key in packages}
            host = {key: [] for key in packages}
            static = []
            for r in range(args.repeats):
                bs, bd = draw(kind, size)
                names = list(packages)             # the variants take turns at going first
                order = names[r % len(names):] + names[:r % len(names)]
                for key in order:
                    op, undo = ops(key, kind)
                    ch = op(bs, bd)
                    bf = dyn[key]
                    times[key].append(timed(lambda: bf.update(ch), host[key]))
                    want = bfs[key](graphs[key], source)
                    if not bool(xp.array_equal(bf.levels, want)):
                        raise SystemExit(f"{name} {kind} {size} repeat {r}: {key} levels differ "
                                         "from its static bfs")
                    if r == 0 and not _counts_ok(xp, bf, graphs[key]):
                        raise SystemExit(f"{name} {kind} {size}: {key} parent counts differ "
                                         "from a recount")
                    bf.last_update             # raises if the kernel reported an error
                    bf.update(undo(ch.src, ch.dst))
                static += [timed(lambda: bfs["new"](g_new, source)) for _ in range(2)]
            phases = {}
            if args.timeline and device == "gpu":
                bs, bd = draw(kind, size)
                for key in packages:
                    op, undo = ops(key, kind)
                    st = dyn[key]._state
                    st.record_timeline = True
                    ch = op(bs, bd)
                    dyn[key].update(ch)
                    phases[key] = _phases(st.timeline())
                    st.record_timeline = False
                    dyn[key].update(undo(ch.src, ch.dst))
            med = {k: statistics.median(v) for k, v in times.items()}
            st_med = statistics.median(static)

            def spread(v):
                return f"{statistics.median(v):.1f} [{min(v):.1f}-{max(v):.1f}]"
            for key in packages:
                rows.append([name, n, m, kind, size, f"{100 * size / m:.3g}", key,
                             spread(times[key]), f"{med[key] / med['base']:.3f}",
                             spread(host[key]), f"{st_med:.0f}", f"{st_med / med[key]:.1f}", phases.get(key, "")])
                print(table_lines(HEADER, [rows[-1]])[-1], flush=True)
    if m < 10_000_000:
        for g in graphs.values():
            g.check()


def _free(xp) -> None:
    if xp is not np:
        xp.get_default_memory_pool().free_all_blocks()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True, help="checkout holding the base tree")
    ap.add_argument("--real", nargs="*", default=[])
    ap.add_argument("--scales", type=int, nargs="*", default=[])
    ap.add_argument("--batches", type=int, nargs="+", default=[10, 100, 1000, 10_000])
    ap.add_argument("--kinds", nargs="+", default=["delete"])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--max-share", type=float, default=1.0,
                    help="skip batches of more than this share of a graph's edges")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeline", action="store_true")
    ap.add_argument("--variants", nargs="*", default=[],
                    help="more variants of the working tree: GPUState settings "
                         "'name=value,...'")
    ap.add_argument("--name", default="dynamic_bfs_gpu_trees")
    ap.add_argument("--device", choices=("gpu", "cpu"), default="gpu",
                    help="cpu: the same flow on the CPU backend (a check of the tool)")
    args = ap.parse_args(argv)
    if args.device == "gpu":
        import cupy as xp
    else:
        xp = np

    import hornet
    import hornet.algos  # noqa: F401 (the working tree's algorithms)
    from bench.tools.ab_trees import load_base
    base = load_base(args.base)
    packages = {"base": (base, {}), "new": (hornet, {})}
    from bench.tools.dbfs_ab import parse_settings
    for v in args.variants:
        packages[f"new {v}"] = (hornet, parse_settings(v))
    dev = "CPU"
    if args.device == "gpu":
        props = xp.cuda.runtime.getDeviceProperties(0)
        dev = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    print(f"GPU: {dev}", flush=True)
    print("| " + " | ".join(HEADER) + " |", flush=True)
    rows: list = []
    for name in args.real:
        src, dst = _real(name)
        run_graph(xp, packages, name, src, dst, args, rows)
        _free(xp)
    for scale in args.scales:
        src, dst = kronecker(scale, xp=None if xp is np else xp)
        run_graph(xp, packages, f"kron{scale}", src, dst, args, rows)
        del src, dst
        _free(xp)
    text = ["# DynamicBFS GPU: working tree against a base tree, same process", "",
            " ".join(__doc__.split("\n\n")[2].split()), "", f"- GPU: {dev}",
            f"- command: `python -m bench.tools.dbfs_trees "
            f"{' '.join(sys.argv[1:] if argv is None else argv)}`",
            "- us: CUDA events around the update call, median [min-max] over the repeats; "
            "host us: the call by the host clock (same form); static us: median of the static bfs; speedup: static / update; phases: one "
            "update's kernel timeline (us and grid barriers a phase)", "",
            *table_lines(HEADER, rows), ""]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text("\n".join(text))


if __name__ == "__main__":
    main()
