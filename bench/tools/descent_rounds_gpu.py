"""Per-round host timeline of the GPU DynamicTruss's host-driven deletion (descent, peel) on
one graph: every counter read (the end of a round) with its time since the previous one and
the counters it read (next worklist, edges lowered so far, edges touched, edges the
peeling has removed).

    python3 -m bench.tools.descent_rounds_gpu GRAPH B REPEATS

GRAPH: a file of the data folder by name prefix or "kronNN"; B random existing edges deleted
(then re-inserted, untimed) REPEATS times after one warm-up batch; the numbers are checked
against the static decomposition at the end."""
import sys, time
import numpy as np
import hornet
from bench.dynamic_truss import load
from hornet.algos.ktruss.ko_launch import C_NEXT, C_FELL, C_TOUCHED



def main(argv=None) -> None:
    import cupy as cp
    from hornet.algos.ktruss import dynamic_gpu as DG
    argv = sys.argv[1:] if argv is None else argv
    name, b, reps = argv[0], int(argv[1]), int(argv[2])
    print(f"device: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    title, s, d = load(name)
    g = hornet.Graph.from_edges(cp.asarray(s), cp.asarray(d), device="gpu")
    kt = hornet.algos.DynamicTruss(g)
    rng = np.random.default_rng(5)
    gs, gd = (a.get() for a in g.edges())
    log = []
    phase = ["?"]
    cls = DG.GpuDynamicTruss
    orig_read, orig_desc, orig_peel = cls._read, cls._descend, cls._peel

    def rd(self):
        c = orig_read(self)
        log.append((phase[0], time.perf_counter(), int(c[C_NEXT]), int(c[C_FELL]),
                    int(c[C_TOUCHED]), int(self._ks_host[4])))
        return c

    def desc(self, *a, **k):
        phase[0] = "descent"
        try:
            return orig_desc(self, *a, **k)
        finally:
            phase[0] = "?"

    def peel(self, *a, **k):
        phase[0] = "peel"
        try:
            return orig_peel(self, *a, **k)
        finally:
            phase[0] = "?"

    cls._read, cls._descend, cls._peel = rd, desc, peel
    for r in range(reps + 1):
        pick = rng.choice(gs.shape[0], b, replace=False)
        bs, bd = cp.asarray(gs[pick]), cp.asarray(gd[pick])
        ch = g.delete_edges(bs, bd)
        cp.cuda.Device().synchronize()
        log.clear()
        t0 = time.perf_counter()
        kt.update(ch)
        cp.cuda.Device().synchronize()
        t1 = time.perf_counter()
        if r:
            print(f"{title} b={b} delete {1e3 * (t1 - t0):.2f} ms stats {kt.stats}")
            prev = t0
            for ph, t, nxt, fell, touched, peeled in log:
                print(f"  {ph:8} +{1e3 * (t - prev):7.3f} ms  next {nxt:7d} fell {fell:7d} "
                      f"touched {touched:7d} peeled {peeled:6d}")
                prev = t
            print(f"  end     +{1e3 * (t1 - prev):7.3f} ms")
        ch = g.insert_edges(bs, bd)
        kt.update(ch)
    want = hornet.algos.truss_numbers(g).get()
    print("exact:", np.array_equal(kt.truss_numbers.get(), want))


if __name__ == "__main__":
    main()
