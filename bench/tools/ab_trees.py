"""Same-process A/B of two source trees: update batches or an algorithm, on a Kronecker graph
or a real graph of the data folder.

A small or shared machine's speed drifts between runs and even between minutes, so comparing
two versions of the code in separate processes hides effects of 10-15%. This tool loads a
second tree (``--base``: any checkout, e.g. made with ``git worktree add /tmp/base HEAD``) as
the package ``hornet_base`` next to the working tree's ``hornet``, builds the same graph with
both, and times the same work on each in alternating order, round after round. It checks that
both return the same result, and reports medians, the median of the per-round ratios (new /
base: under 1 is faster) and an order-balanced ratio.

    python3 -m bench.tools.ab_trees --base /tmp/base [--op insert] [--scale 20] [--batch 100000]
        [--rounds 21] [--fresh 5] [--device cpu] [--graph NAME] [--settle MS]

``--op``: insert or delete (batches of ``--batch`` random pairs, or of sampled edges; each
undone untimed), or triangles, spmv, bfs, truss (the ``algos`` function on the whole graph).
``--fresh N`` rebuilds both graphs every N rounds, as the update benchmark's batches meet a
freshly built graph; by default the graphs are built once and warmed up first. ``--graph NAME``
takes a real graph of the data folder (``HORNET_DATA``, e.g. ca-HepPh; undirected, self-loops
dropped) instead of the Kronecker graph of ``--scale``. ``--settle MS`` pauses before each
timed call (default :data:`SETTLE_MS` on the CPU): the threads that one tree's parallel
kernels leave spinning would otherwise take a core from the other tree's call that follows
at once, which a process running one tree never meets. Before the timed rounds the working
tree's split kernels get the parfor launchers that a process after the first finds in the
cache (:func:`with_launchers`).
"""
from __future__ import annotations

import argparse
import importlib
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import hornet
from bench.common import kronecker, real_graph_path

UPDATES = ("insert", "delete")
#: Milliseconds of pause before each timed call on the CPU (``--settle``): longer than the
#: threads of either tree go on spinning after their last parallel call (a parfor kernel's
#: OpenMP workers spin for milliseconds, hornet's split-kernel workers for microseconds),
#: so that neither tree's call meets the other's spinning threads on the machine's cores.
SETTLE_MS = 20.0
ALGORITHMS = ("triangles", "spmv", "bfs", "truss")


def load_base(tree: Path):
    """The package ``hornet`` of checkout ``tree``, imported as ``hornet_base``: copied to a
    temporary folder, where its relative imports resolve inside the copy and its absolute
    ``hornet`` imports are renamed to ``hornet_base``. Its kernel policies are set as
    :mod:`bench.common` sets the working tree's (parallel kernels and optional paths from the
    first call)."""
    where = Path(tempfile.mkdtemp(prefix="hornet-ab-"))
    shutil.copytree(tree / "hornet", where / "hornet_base",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for path in (where / "hornet_base").rglob("*.py"):
        text = path.read_text()
        renamed = re.sub(r"^(\s*)from hornet(\.| import)", r"\1from hornet_base\2", text,
                         flags=re.M)
        renamed = re.sub(r"^(\s*)import hornet$", r"\1import hornet_base as hornet", renamed,
                         flags=re.M)
        if renamed != text:
            path.write_text(renamed)
    sys.path.insert(0, str(where))
    import hornet_base
    # the run's kernel policies (bench.common sets them on ``hornet``) apply to both trees:
    # the base's parallel kernels and optional paths open on the same call as the working tree's
    base_jit = importlib.import_module("hornet_base.core.jit")
    for policy in ("parallel_policy", "optional_path_policy"):
        if hasattr(base_jit, policy):
            setattr(base_jit, policy, getattr(hornet.core.jit, policy))
    return hornet_base


def with_launchers() -> int:
    """Compile here the parfor launchers (:mod:`hornet.core.launchers`) that the working
    tree's split calls so far found missing, and have every split kernel look for its
    launcher again: the calls that follow run as in a process after the first (where a
    background process has compiled them). Returns how many were compiled (0 for a tree
    without launchers)."""
    try:
        launchers = importlib.import_module("hornet.core.launchers")
    except ImportError:
        return 0
    compiled = 0
    for module, qualname, arg_types in list(launchers.wanted.values()):
        compiled += launchers.compile_launcher(module, qualname, tuple(arg_types))
    launchers.wanted.clear()
    for name, module in list(sys.modules.items()):
        if name.startswith("hornet.") and module is not None:
            for value in list(vars(module).values()):
                if isinstance(value, hornet.core.jit.SplitKernel):
                    value._launcher = None
    return compiled


def host(a) -> np.ndarray:
    """A NumPy copy of a NumPy or CuPy array."""
    return a.get() if hasattr(a, "get") else np.array(a)


def algorithm(package, op: str, g, x, source: int):
    """A call of ``package.algos``'s ``op`` on ``g``, returning something comparable."""
    algos = package.algos
    if op == "triangles":
        return lambda: int(algos.triangle_count(g))
    if op == "spmv":
        return lambda: algos.spmv(g, x)
    if op == "bfs":
        return lambda: algos.bfs(g, source)
    return lambda: algos.max_truss(g)[0]


def parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (``--base`` required)."""
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.ab_trees", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", type=Path, required=True, help="checkout holding the base tree")
    ap.add_argument("--op", choices=UPDATES + ALGORITHMS, default="insert")
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--batch", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--fresh", type=int, default=0,
                    help="rebuild both graphs every this many rounds (0: never)")
    ap.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--settle", type=float, default=None,
                    help="milliseconds of pause before each timed call (default: "
                         f"{SETTLE_MS:g} on the CPU, 0 on the GPU)")
    ap.add_argument("--graph", default=None,
                    help="a real graph of the data folder instead of a Kronecker graph")
    return ap


def compare(base, args) -> dict:
    """Time ``args.op`` (parsed by :func:`parser`) with package ``base`` and with ``hornet``,
    alternating; raises SystemExit when their results differ. Returns the label of the graph,
    what was timed, and the seconds of every round of each tree (``"base"``, ``"new"``)."""
    packages = {"base": base, "new": hornet}
    if args.graph:
        s, d, _ = hornet.io.read_edges(real_graph_path(args.graph))
        keep = s != d
        s, d = s[keep], d[keep]
        label = args.graph
    else:
        s, d = kronecker(args.scale)
        label = f"Kronecker {args.scale}"
    xp = np
    if args.device == "gpu":
        import cupy as xp
        s, d = xp.asarray(s), xp.asarray(d)
    sync = (lambda: None) if args.device == "cpu" else xp.cuda.Device().synchronize

    def build():
        return {k: p.Graph.from_edges(s, d, directed=False, device=args.device)
                for k, p in packages.items()}

    graphs = build()
    n = graphs["new"].num_vertices
    es, ed = (host(a) for a in graphs["new"].edges())
    rng = np.random.default_rng(7)
    x = xp.asarray(rng.random(n))
    source = int(np.argmax(host(graphs["new"].degree())))

    def warm(rounds: int, size: int) -> None:
        for g in graphs.values():
            for _ in range(rounds):
                c = g.insert_edges(xp.asarray(rng.integers(0, n, size)),
                                   xp.asarray(rng.integers(0, n, size)))
                g.delete_edges(c.src, c.dst)

    if args.op in UPDATES:
        warm(3, args.batch)                    # compile or load every kernel
        with_launchers()
        warm(1, args.batch)                    # load the launchers
    else:
        for name in packages:                  # compile or load every kernel
            algorithm(packages[name], args.op, graphs[name], x, source)()
        with_launchers()
    settle = getattr(args, "settle", None)
    settle = (SETTLE_MS if args.device == "cpu" else 0.0) if settle is None else settle
    settle /= 1e3
    times = {"base": [], "new": []}
    counts = _split_calls()
    for r in range(args.rounds):
        if args.fresh and r % args.fresh == 0 and r > 0:
            graphs = None
            graphs = build()
            if args.op in UPDATES:
                warm(1, 1000)                  # the update benchmark's warm-up batch
        if args.op == "insert":
            bs, bd = rng.integers(0, n, args.batch), rng.integers(0, n, args.batch)
        elif args.op == "delete":
            pick = rng.choice(es.size, size=args.batch, replace=False)
            bs, bd = es[pick].astype(np.int64), ed[pick].astype(np.int64)
        results = {}
        for name in (("base", "new") if r % 2 else ("new", "base")):
            g = graphs[name]
            if args.op in UPDATES:
                ub, vb = xp.asarray(bs), xp.asarray(bd)
                fn = (lambda: g.insert_edges(ub, vb)) if args.op == "insert" else \
                    (lambda: g.delete_edges(ub, vb))
            else:
                fn = algorithm(packages[name], args.op, g, x, source)
                if r == 0:
                    fn()                       # compile or load the kernels, untimed
            sync()
            time.sleep(settle)
            t = time.perf_counter()
            out = fn()
            sync()
            times[name].append(time.perf_counter() - t)
            if args.op in UPDATES:
                results[name] = (host(out.src), host(out.dst))
                if args.op == "insert":       # restore (untimed)
                    g.delete_edges(out.src, out.dst)
                else:
                    g.insert_edges(out.src, out.dst)
            else:
                results[name] = (np.asarray(host(out) if hasattr(out, "shape") else out),)
        if not all(np.allclose(a, b) if a.dtype.kind == "f" else np.array_equal(a, b)
                   for a, b in zip(results["base"], results["new"])):
            raise SystemExit(f"round {r}: the two trees returned different results")
    graphs["new"].check()
    what = (f"{args.op} batches of {args.batch}" if args.op in UPDATES else args.op)
    split, launched = (b - a for a, b in zip(counts, _split_calls()))
    return {"label": label, "what": what, "base": np.array(times["base"]),
            "new": np.array(times["new"]), "split calls": split, "launched": launched}


def _split_calls() -> tuple:
    """(split calls, of which through a launcher) of the working tree in this process."""
    launchers = sys.modules.get("hornet.core.launchers")
    return hornet.core.jit.parallel_calls, getattr(launchers, "calls", 0)


def summary(times: dict) -> dict:
    """Medians and minima (seconds) of the rounds of :func:`compare`, and the ratios new /
    base: the median of the per-round ratios, the ratio of the medians, the medians of the
    rounds that ran new first and base first, and their geometric mean (order-balanced)."""
    t_base, t_new = times["base"], times["new"]
    ratio = t_new / t_base
    # the tree that runs second in a round may gain or lose from the first one's work, so the
    # rounds of each order are summed up apart and the two medians combined
    new_first, base_first = np.median(ratio[0::2]), np.median(ratio[1::2])
    return {"base_median": float(np.median(t_base)), "base_min": float(t_base.min()),
            "new_median": float(np.median(t_new)), "new_min": float(t_new.min()),
            "ratio_median": float(np.median(ratio)),
            "ratio_of_medians": float(np.median(t_new) / np.median(t_base)),
            "new_first": float(new_first), "base_first": float(base_first),
            "balanced": float(np.sqrt(new_first * base_first))}


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    times = compare(load_base(args.base), args)
    s = summary(times)
    print(f"{times['label']} ({args.device}), {times['what']}, {args.rounds} rounds, "
          "alternating order")
    print(f"  base: median {s['base_median'] * 1e3:.2f} ms, min {s['base_min'] * 1e3:.2f} ms")
    print(f"  new:  median {s['new_median'] * 1e3:.2f} ms, min {s['new_min'] * 1e3:.2f} ms")
    print(f"  new / base: per-round ratio median {s['ratio_median']:.3f}, "
          f"ratio of medians {s['ratio_of_medians']:.3f}")
    print(f"  per order: new first {s['new_first']:.3f}, base first {s['base_first']:.3f}; "
          f"order-balanced ratio {s['balanced']:.3f}")


if __name__ == "__main__":
    main()
