import sys, time, statistics, numpy as np, cupy as cp, hornet
from hornet.algos import truss_numbers, DynamicTruss
from bench.dynamic_truss import load
name = sys.argv[1] if len(sys.argv) > 1 else "ca-HepPh"
sizes = [int(x) for x in (sys.argv[2] if len(sys.argv) > 2 else "10,118").split(",")]
title, s, d = load(name)
g = hornet.Graph.from_edges(cp.asarray(s), cp.asarray(d), device="gpu")
t0 = time.perf_counter(); kt = DynamicTruss(g); print("build s", round(time.perf_counter() - t0, 3))
bl = kt._blocks
print(name, "bkeys", None if bl is None else int(bl.bkey.shape[0]), "top", kt._top, "static_s", round(kt._static_seconds * 1e3, 2), "ms",
      "blocks", None if bl is None else (bl.nblocks, bl.m, bl.rows))
def timed(fn):
    cp.cuda.Device().synchronize(); t=time.perf_counter(); fn(); cp.cuda.Device().synchronize(); return time.perf_counter()-t
st = statistics.median(timed(lambda: truss_numbers(g)) for _ in range(5))
print(f"static ms {st*1e3:.2f}")
rng = np.random.default_rng(0)
for b in sizes:
    res = {"del": [], "ins": []}
    for r in range(5):
        gs, gd = (a.get() for a in g.edges())
        pick = rng.choice(gs.shape[0], b, replace=False)
        ds, dd = cp.asarray(gs[pick]), cp.asarray(gd[pick])
        ch = g.delete_edges(ds, dd); t1 = timed(lambda: kt.update(ch)); s1 = dict(kt.stats)
        b1 = None if kt._blocks is None else (kt._blocks.nblocks, kt._blocks.touched, kt._blocks.rounds)
        ch = g.insert_edges(ds, dd); t2 = timed(lambda: kt.update(ch)); s2 = dict(kt.stats)
        b2 = None if kt._blocks is None else (kt._blocks.nblocks, kt._blocks.touched, kt._blocks.rounds)
        res["del"].append(t1); res["ins"].append(t2)
        if True:
            print(b, f"del {t1*1e3:.2f} ms", {k: s1.get(k) for k in ('path','gate','region','units','depth')}, "blk", b1)
            print(b, f"ins {t2*1e3:.2f} ms", {k: s2.get(k) for k in ('path','gate','region','units','depth')}, "blk", b2)
    for k, v in res.items():
        print(f"  b={b} {k} median {statistics.median(v)*1e3:.3f} ms speedup {st/statistics.median(v):.2f}")
want = truss_numbers(g).get()
print("equal static:", np.array_equal(kt.truss_numbers.get(), want))
# per-phase times (synchronized around each phase: a breakdown, not the update's time)
from hornet.algos.ktruss import blocks_gpu, dynamic_gpu
spans = {}
def wrap(cls, name):
    fn = getattr(cls, name)
    def inner(*a, **k):
        cp.cuda.Device().synchronize(); t = time.perf_counter()
        r = fn(*a, **k)
        cp.cuda.Device().synchronize(); spans[name] = spans.get(name, 0) + time.perf_counter() - t
        return r
    setattr(cls, name, inner)
for cls, name in ((blocks_gpu.GpuBlocks, "delete"), (blocks_gpu.GpuBlocks, "insert"),
                  (blocks_gpu.GpuBlocks, "check"), (blocks_gpu.GpuBlocks, "_descend"),
                  (blocks_gpu.GpuBlocks, "_write"), (blocks_gpu.GpuBlocks, "mark"),
                  (blocks_gpu.GpuBlocks, "_relocate"), (blocks_gpu.GpuBlocks, "_clear"),
                  (dynamic_gpu.GpuDynamicTruss, "_scan"), (dynamic_gpu.GpuDynamicTruss, "update")):
    wrap(cls, name)
for b in sizes:
    for kind in ("del", "ins"):
        spans.clear()
    tot = {"del": {}, "ins": {}}
    for r in range(3):
        gs, gd = (a.get() for a in g.edges())
        pick = rng.choice(gs.shape[0], b, replace=False)
        ds, dd = cp.asarray(gs[pick]), cp.asarray(gd[pick])
        for kind, op in (("del", g.delete_edges), ("ins", g.insert_edges)):
            ch = op(ds, dd); spans.clear(); kt.update(ch)
            for k2, v in spans.items():
                tot[kind][k2] = tot[kind].get(k2, 0) + v / 3
    for kind in tot:
        print(f"  b={b} {kind} phases ms:", {k2: round(v * 1e3, 3) for k2, v in tot[kind].items()})
