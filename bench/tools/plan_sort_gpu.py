"""The planned batch path's key sort: its own kernels against CuPy's sort, by size.

    python3 -m bench.tools.plan_sort_gpu [--sizes 4096 20000 ...] [--repeats 30]

Plan keys of random pairs (``src << 31 | dst`` as ``batch_keys`` packs them, ids below
2^``--bits``), sorted by :func:`hornet.batch.gpu.plan._sort_keys` (tiles in shared memory,
then merge passes), by the radix sort of :func:`hornet.batch.gpu.key_sort.sort_keys` and by
CuPy's ``ndarray.sort``; per size the median of ``repeats`` calls, wall time from the call to
the sorted keys (synchronized) and device time between CUDA events. What
:data:`hornet.batch.gpu.plan.SORT_MAX` is chosen from.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from bench.common import require_gpu

NEEDS_GPU = True


def _times(fn, repeats: int, cupy) -> tuple[float, float]:
    """(median wall seconds, median device seconds) of ``repeats`` calls after one warm-up."""
    fn()
    cupy.cuda.Device().synchronize()
    wall, dev = [], []
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    for _ in range(repeats):
        t = time.perf_counter()
        start.record()
        fn()
        end.record()
        end.synchronize()
        wall.append(time.perf_counter() - t)
        dev.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
    return statistics.median(wall), statistics.median(dev)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.plan_sort_gpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+",
                    default=[4097, 8192, 20000, 65536, 200000, 1 << 18, 600000, 1 << 21])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--bits", type=int, default=24, help="ids below 2^bits")
    args = ap.parse_args(argv)
    require_gpu("plan_sort_gpu")
    import cupy
    from hornet.batch.gpu import key_sort, plan
    rng = np.random.default_rng(1)
    print(f"ids below 2^{args.bits}")
    print("entries | own sort wall us | own device us | radix wall us | radix device us | "
          "CuPy sort wall us | CuPy device us")
    for n in args.sizes:
        u = rng.integers(0, 1 << args.bits, n).astype(np.uint64)
        v = rng.integers(0, 1 << args.bits, n).astype(np.uint64)
        keys = cupy.asarray((u << np.uint64(31)) | v)
        max_id = cupy.array([int(max(u.max(), v.max()))], dtype=cupy.int64)
        bufs = cupy.empty((2, n), dtype=cupy.uint64)
        want = cupy.sort(keys)

        def own():
            bufs[0] = keys
            plan._sort_keys(bufs[0].data.ptr, bufs[1].data.ptr, n)

        rbufs = cupy.empty((2, n), dtype=cupy.uint64)

        def radix():
            rbufs[0] = keys
            key_sort.sort_keys(rbufs[0].data.ptr, rbufs[1].data.ptr, n, max_id.data.ptr)

        work = cupy.empty_like(keys)

        def theirs():
            work[...] = keys
            work.sort()

        ow, od = _times(own, args.repeats, cupy)
        rw, rd = _times(radix, args.repeats, cupy)
        cw, cd = _times(theirs, args.repeats, cupy)
        ok = bool((bufs[plan._merge_passes(n) & 1] == want).all())
        ok = ok and bool((rbufs[0] == want).all())
        print(f"{n} | {ow * 1e6:.0f} | {od * 1e6:.0f} | {rw * 1e6:.0f} | {rd * 1e6:.0f} | "
              f"{cw * 1e6:.0f} | {cd * 1e6:.0f}{'' if ok else ' | WRONG'}", flush=True)


if __name__ == "__main__":
    main()
