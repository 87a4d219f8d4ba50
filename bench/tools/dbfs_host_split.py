"""DynamicBFS on the GPU: where the host's part of an update goes, step by step (working tree).

    PYTHONPATH=. python3 bench/tools/dbfs_host_split.py [--real email-Enron] [--scales 22]
        [--batches 100 10000] [--repeats 15]

For every graph (real graphs of the data folder, ``HORNET_DATA``, with the first batch size
only; undirected Kronecker graphs made on the device) and deletion batch size, in the
benchmark's pattern (a batch of edges of the graph applied untimed, the update timed, the batch
undone with its update): host-clock stamps at the entries of ``Graph.vertex_table``,
``GPUState.grid``, the current-stream getter and the driver's launch (each wrapped), and at the
call's start and return, so the call splits into: to vertex_table (``DynamicBFS.update`` and
the batch's arrays), to grid (vertex tables, capacities, the settings key), to stream (the
grid, the argument buffer), to launch, the driver's launch, after launch. Each timed call
(cold: right after the graph's change) is followed by the same call with the launch a no-op
(warm: the same code and data just used; the state's counter-set parity restored). Also
counts the garbage collections that ran inside the timed calls, and checks the levels against
the static ``bfs`` after each batch size. Prints medians (us); the wrappers add their own
frames to every step.
"""
import argparse
import gc
import importlib
import statistics
import time

import numpy as np

import hornet
import hornet.testing
from bench.common import kronecker
from bench.dynamic_bfs import draw_batch
from bench.tools.dbfs_trees import _real

cupy = m = drv = real_launch = real_stream = None     # set by main()
stamps = {}
gcs = [0]
pc = time.perf_counter


def run(name, src, dst, sizes, repeats):
    g = hornet.Graph.from_edges(cupy.asarray(src), cupy.asarray(dst), directed=False,
                                device="gpu")
    source = int(hornet.testing.to_host(g.degree()).argmax())
    bf = hornet.algos.DynamicBFS(g, source)
    st = bf._state
    rng = np.random.default_rng(5)
    real_vt = g.vertex_table
    real_grid = st.grid

    def vt():
        stamps["vt"] = pc()
        return real_vt()

    def grid(p=None):
        stamps["grid"] = pc()
        return real_grid(p)

    def stream():
        stamps["stream"] = pc()
        return real_stream()

    def launch(*a):
        stamps["l0"] = pc()
        real_launch(*a)
        stamps["l1"] = pc()

    def noop(*a):
        stamps["l0"] = stamps["l1"] = pc()

    g.vertex_table = vt
    st.grid = grid
    m._current_stream = stream
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    for kind in ("delete", "insert"):
        for _ in range(2):
            ch = g.delete_edges(*draw_batch(rng, g, kind, 10, cupy)) if kind == "delete" else \
                g.insert_edges(*draw_batch(rng, g, kind, 10, cupy))
            bf.update(ch)
            bf.update(g.insert_edges(ch.src, ch.dst) if kind == "delete" else
                      g.delete_edges(ch.src, ch.dst))
    cupy.cuda.Device().synchronize()
    keys = ("to vertex_table", "to grid", "to stream", "to launch", "launch", "after launch",
            "host")
    for size in sizes:
        cold = {k: [] for k in keys}
        warm = {k: [] for k in keys}
        ev, ngc = [], 0
        for r in range(repeats):
            bs, bd = draw_batch(rng, g, "delete", size, cupy)
            ch = g.delete_edges(bs, bd)
            for out, fn in ((cold, launch), (warm, noop)):
                drv.launchKernel = fn
                keep = (st.parity, getattr(st, "_set", 0), st._pending)
                g0 = gcs[0]
                try:
                    if fn is launch:
                        start.record()
                    t0 = pc()
                    bf.update(ch)
                    t1 = pc()
                    if fn is launch:
                        end.record()
                        end.synchronize()
                        ev.append(cupy.cuda.get_elapsed_time(start, end) * 1e3)
                        ngc += gcs[0] - g0
                    else:
                        st.parity, st._set, st._pending = keep
                finally:
                    drv.launchKernel = real_launch
                s = stamps
                for k, a, b in (("to vertex_table", t0, s["vt"]), ("to grid", s["vt"], s["grid"]),
                                ("to stream", s["grid"], s["stream"]),
                                ("to launch", s["stream"], s["l0"]), ("launch", s["l0"], s["l1"]),
                                ("after launch", s["l1"], t1), ("host", t0, t1)):
                    out[k].append((b - a) * 1e6)
            bf.last_update
            bf.update(g.insert_edges(ch.src, ch.dst))
        want = hornet.testing.to_host(hornet.algos.bfs(g, source))
        assert np.array_equal(hornet.testing.to_host(bf.levels), want)
        print(f"{name} delete {size}: update (events) {statistics.median(ev):.1f} us, "
              f"gc collections in {repeats} timed calls: {ngc}")
        for k in keys:
            print(f"   {k:16s} cold {statistics.median(cold[k]):6.2f}  warm "
                  f"{statistics.median(warm[k]):6.2f}")
    m._current_stream = real_stream


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--real", nargs="*", default=["email-Enron"])
    ap.add_argument("--scales", type=int, nargs="*", default=[22])
    ap.add_argument("--batches", type=int, nargs="+", default=[100, 10_000])
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args(argv)
    global cupy, m, drv, real_launch, real_stream
    import cupy
    m = importlib.import_module("hornet.algos.bfs.dynamic_gpu")
    drv = cupy.cuda.driver
    real_launch = drv.launchKernel
    real_stream = m._current_stream
    gc.callbacks.append(lambda phase, info: gcs.__setitem__(0, gcs[0] + (phase == "start")))
    for name in args.real:
        src, dst = _real(name)
        run(name, src, dst, args.batches[:1], args.repeats)
    for scale in args.scales:
        src, dst = kronecker(scale, xp=cupy)
        run(f"kron{scale}", src, dst, args.batches, args.repeats)
    print("cupy", cupy.__version__, "fast attrs", m._FAST_ATTRS)


if __name__ == "__main__":
    main()
