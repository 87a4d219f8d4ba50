"""The large-batch plan sort: the radix sort of :mod:`hornet.batch.gpu.key_sort` against
CuPy's sort, by size and by the ids' bit width.

    python3 -m bench.tools.key_sort_gpu [--sizes 2000000 20000000] [--bits 20 24 31]
        [--repeats 11]

Keys packed as ``batch_keys`` packs an undirected batch's random pairs (``src << 31 | dst``,
both directions, ids below ``2^bits``, a few self-loops as all-ones keys); per size and
width the median device time (CUDA events, after a warm-up) of each sort, and whether the
radix sort's keys equal CuPy's. Exits 1 when they differ.
"""
from __future__ import annotations

import argparse
import statistics
import sys

from bench.common import require_gpu

NEEDS_GPU = True


def _device_times(fn, repeats: int, cupy) -> float:
    """Median device seconds of ``repeats`` calls between CUDA events, after one warm-up."""
    fn()
    cupy.cuda.Device().synchronize()
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    out = []
    for _ in range(repeats):
        start.record()
        fn()
        end.record()
        end.synchronize()
        out.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
    return statistics.median(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python3 -m bench.tools.key_sort_gpu", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[2 * 10**6, 2 * 10**7])
    ap.add_argument("--bits", type=int, nargs="+", default=[20, 24, 31])
    ap.add_argument("--repeats", type=int, default=11)
    args = ap.parse_args(argv)
    require_gpu("key_sort_gpu")
    import cupy
    from hornet.batch.gpu import key_sort
    print(f"device: {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    print("entries | id bits | radix sort us | CuPy sort us | ratio | equal")
    rs = cupy.random.RandomState(7)
    wrong = False
    for n in args.sizes:
        for bits in args.bits:
            half = n // 2
            top = (1 << bits) - 1 if bits < 31 else (1 << 31) - 2
            u = rs.randint(0, top + 1, half, dtype=cupy.int64).astype(cupy.uint64)
            v = rs.randint(0, top + 1, half, dtype=cupy.int64).astype(cupy.uint64)
            v[::997] = u[::997]                                    # self-loops
            ones, sh = cupy.uint64(0xFFFFFFFFFFFFFFFF), cupy.uint64(31)
            loops = u == v
            keys = cupy.empty(2 * half, dtype=cupy.uint64)
            keys[0::2] = cupy.where(loops, ones, (u << sh) | v)
            keys[1::2] = cupy.where(loops, ones, (v << sh) | u)
            m = keys.shape[0]
            max_id = cupy.array([int(cupy.maximum(u, v).max())], dtype=cupy.int64)
            bufs = cupy.empty((2, m), dtype=cupy.uint64)
            work = cupy.empty_like(keys)

            def radix():
                bufs[0] = keys
                key_sort.sort_keys(bufs[0].data.ptr, bufs[1].data.ptr, m, max_id.data.ptr)

            def theirs():
                work[...] = keys
                work.sort()

            copy = _device_times(lambda: bufs[1].__setitem__(Ellipsis, keys), args.repeats,
                                 cupy)
            tr = _device_times(radix, args.repeats, cupy) - copy
            tc = _device_times(theirs, args.repeats, cupy) - copy
            ok = bool((bufs[0] == work).all())
            wrong |= not ok
            print(f"{m} | {bits} | {tr * 1e6:.0f} | {tc * 1e6:.0f} | {tr / tc:.2f} | {ok}",
                  flush=True)
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
