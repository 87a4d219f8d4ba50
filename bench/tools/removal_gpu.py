"""Device time of a delete batch's list removal alone, by kernel shape (CUDA events).

    python3 -m bench.tools.removal_gpu [--scale 24] [--sizes 100000 1000000] [--repeats 5]
        [--base ../base] [--variants WARP_PIECES=0,WARP_AHEAD=0 WARP_PIECES=1 ...]

Builds the updates benchmark's Kronecker graph (undirected, GPU), samples existing edges
(with replacement) as the updates benchmark's deletes do, and takes the general pipeline's
steps up to the removal (sort, find, keep, plan: nothing is changed). Then, for every shape
of the removal kernels (:data:`hornet.batch.gpu.kernels.REMOVAL_SHAPES`: windows per step of
the medium lists' warps W and the blocks a multiprocessor their kernel is built for B; items
per thread of the huge lists' pieces K, held in registers) and, with ``--base``, for the
base tree's ``remove_lists``: the block arrays are restored from a snapshot, the
removal runs in place on every list, timed by CUDA events; the median is printed with the
items the lists move (from their first removed entry on) and the rate that makes (read and
written once), next to a plain device copy of as many bytes. Every shape must leave the
same block arrays as the first removal timed (the base tree's, if given): a shape that
does not is flagged. ``--variants``: settings of the kernels module (the removal kernels'
choices, thresholds) timed in turn instead of the shapes, checked the same way.
"""
from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from bench.common import kronecker_graph_gpu, require_gpu

NEEDS_GPU = True


def _build_shapes(K, shapes, variants: bool, names) -> None:
    """Add the 4-byte removal kernels of ``shapes`` that kernels.cu is not built with to its
    module's instances (before its first use: the module is compiled once, with them)."""
    import numpy as np
    extra = []
    for shape in shapes:
        settings = shape if variants else tuple(zip(names, shape))
        saved = {name: getattr(K, name) for name, _ in settings}
        for name, value in settings:
            setattr(K, name, value)
        extra += K.removal_warps([np.int32]) + K.removal_pieces([np.int32])[1]
        for name, value in saved.items():
            setattr(K, name, value)
    K._NAMES = K._NAMES + tuple(n for n in dict.fromkeys(extra) if n not in K._NAMES)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.removal_gpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10**5, 10**6])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--shapes", nargs="*", default=None,
                    help="W:B:K shapes (default: the defaults, then each other built "
                         "value of W:B and K)")
    ap.add_argument("--base", type=Path, default=None, help="checkout of a base tree")
    ap.add_argument("--variants", nargs="*", default=None,
                    help="settings of hornet.batch.gpu.kernels to time instead of the shapes, "
                         "each NAME=value[,NAME=value...], a value an int or ints a:b:c "
                         "(e.g. WARP_PIECES=0,WARP_AHEAD=0 WARP_PIECE_SHAPE=16:2:4)")
    args = ap.parse_args(argv)
    require_gpu("removal_gpu")
    import cupy
    from hornet.batch import pipeline
    from hornet.batch.gpu import kernels as K
    base_kernels = None
    if args.base is not None:
        import importlib
        from bench.tools.ab_trees import load_base
        base_kernels = importlib.import_module(load_base(args.base).__name__
                                               + ".batch.gpu.kernels")
    print(f"device: {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}", flush=True)
    names = ("REMOVE_WINDOWS", "WARP_BLOCKS", "PIECE_ITEMS")
    default = tuple(getattr(K, name) for name in names)
    if args.variants is not None:
        def value(text):                  # an int, or a tuple of ints written a:b:c
            return tuple(int(x) for x in text.split(":")) if ":" in text else int(text)
        shapes = [tuple(sorted((kv.split("=")[0], value(kv.split("=")[1]))
                               for kv in v.split(",") if kv)) for v in args.variants]
    elif args.shapes:
        shapes = [tuple(int(x) for x in s.split(":")[:3]) for s in args.shapes]
    else:
        shapes = [default] + [(w, b) + default[2:] for w, b in K.REMOVAL_SHAPES[0]] + \
            [default[:2] + (k,) for k in K.REMOVAL_SHAPES[1]]
        shapes = list(dict.fromkeys(shapes))
    _build_shapes(K, shapes, args.variants is not None, names)
    g, seconds = kronecker_graph_gpu(args.scale)
    print(f"kron{args.scale}: build {seconds:.2f} s, {g._entries} entries", flush=True)
    arrays = [a for pool in g._mm.pools.values() for a in pool]
    snapshot = [a.columns[0].copy() for a in arrays]
    es, ed = g.edges()
    rs = cupy.random.RandomState(7)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    for b in args.sizes:
        pick = rs.randint(0, es.size, b, dtype=cupy.int64)
        ss, dd, _, _ = pipeline.unique_pairs(g, es[pick], ed[pick], g._n)
        pos = K.find_positions(ss, dd, g._degree, g._edge_ptr, g._n)
        _, ss, dd, pos = K.keep_entries(pos, ss, dd, False)
        sources, seg_start, seg_len, old_deg, new_deg, old_ptr, _ = K.plan_segments(
            ss, g._degree, g._size_class, g._edge_ptr, False, g._mm.min_size_class)
        moving = old_deg - pos[seg_start]
        small = int(moving[moving <= K.SMALL_MOVE].sum())
        medium = int(moving[(moving > K.SMALL_MOVE) & (moving <= K.WARP_MOVE)].sum())
        huge = int(moving[moving > K.WARP_MOVE].sum())
        moved = small + medium + huge
        print(f"b={b}: {int(ss.shape[0])} entries in {int(sources.shape[0])} lists; items "
              f"moved: short {small}, medium {medium} "
              f"({int(((moving > K.SMALL_MOVE) & (moving <= K.WARP_MOVE)).sum())} lists), "
              f"huge {huge} ({int((moving > K.WARP_MOVE).sum())} lists)", flush=True)
        scratch = cupy.empty(2 * moved, dtype=cupy.int32)

        def restore():
            for a, s in zip(arrays, snapshot):
                a.columns[0][...] = s

        def timed(run):
            out = []
            for _ in range(args.repeats):
                restore()
                cupy.cuda.Device().synchronize()
                start.record()
                run()
                end.record()
                end.synchronize()
                out.append(cupy.cuda.get_elapsed_time(start, end) * 1e3)
            return statistics.median(out), min(out), max(out)

        def report(name, times):
            med, lo, hi = times
            rate = 2 * 4 * moved / (med * 1e-6) / 1e12
            print(f"  {name}: {med:.0f} us (min {lo:.0f}, max {hi:.0f}), "
                  f"{rate:.2f} TB/s", flush=True)

        copy = timed(lambda: scratch[moved:].__setitem__(Ellipsis, scratch[:moved]))
        report("plain copy of the moved bytes", copy)
        reference = None

        def check(name):
            nonlocal reference
            result = [a.columns[0].copy() for a in arrays]
            if reference is None:
                reference = result
                return ""
            same = all(bool(cupy.array_equal(x, y)) for x, y in zip(reference, result))
            return "" if same else "  DIFFERS from the first removal timed"

        if base_kernels is not None:
            def run_base():
                base_kernels.remove_lists([old_ptr], [old_ptr], old_deg, seg_start, seg_len,
                                          pos, g._mm.field_dtypes, items=g._entries)
            restore()
            run_base()
            times = timed(run_base)
            report("base tree" + check("base"), times)
        for shape in shapes:
            settings = shape if args.variants is not None else tuple(zip(names, shape))
            saved = {name: getattr(K, name) for name, _ in settings}
            for name, value in settings:
                setattr(K, name, value)

            def run():
                K.remove_lists([old_ptr], [old_ptr], old_deg, seg_start, seg_len, pos,
                               g._mm.field_dtypes, items=g._entries)
            restore()
            run()                                   # compile, first launch
            times = timed(run)
            label = (" ".join(f"{n}={v}" for n, v in settings) or "defaults") \
                if args.variants is not None else "W={} B={} K={}".format(*shape) + (
                    " (default)" if shape == default else "")
            report(label + check(shape), times)
            for name, value in saved.items():
                setattr(K, name, value)
        scratch = reference = None
        restore()


if __name__ == "__main__":
    main()
