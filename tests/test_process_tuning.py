"""hornet changes nothing process-wide unless asked: importing it and running CPU batches and
the algorithms leaves ``os.environ`` as it was and never calls glibc's ``mallopt``;
:func:`hornet.tune_process` applies its setting on request and respects the process's own.

Each check runs in a fresh interpreter: the settings act once per process, and the test
process may have imported hornet already."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Records every lookup of ``mallopt`` through ctypes (the only way Python code reaches it),
# then runs the body and prints a JSON verdict.
PRELUDE = r"""
import ctypes, json, os, sys
calls = []
class _Recorder(ctypes.CDLL):
    def __getitem__(self, name):         # attribute lookups come through here too
        if name == "mallopt":
            calls.append(name)
        return super().__getitem__(name)
ctypes.CDLL = _Recorder
before = dict(os.environ)
"""

WORKLOAD = r"""
import numpy as np
import hornet
from hornet import algos
rng = np.random.default_rng(3)
for directed in (False, True):
    g = hornet.Graph(directed=directed, device="cpu", edge_properties={"w": np.float64})
    for b in (5, 3000, 40000):          # the small-batch path and the pipelines
        s, d = rng.integers(0, 2000, b), rng.integers(0, 2000, b)
        c = g.insert_edges(s, d, w=rng.random(b))
        g.update_edges(c.src[:10], c.dst[:10], w=np.ones(min(10, len(c))))
        g.delete_edges(c.src[: len(c) // 2], c.dst[: len(c) // 2])
    g.delete_vertices([1, 2])
    if not directed:
        algos.triangle_count(g); algos.max_truss(g)
        tc = algos.DynamicTriangleCount(g)
        tc.update(g.insert_edges(rng.integers(0, 2000, 50), rng.integers(0, 2000, 50)))
    algos.bfs(g, 0)
    algos.spmv(g, np.ones(g.num_vertices), weight="w")
    g.check()
"""


def _run(body: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY", "MALLOC_MMAP_THRESHOLD_",
                        "MALLOC_TRIM_THRESHOLD_")}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", PRELUDE + body], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_and_batches_change_no_environment_and_no_allocator():
    res = _run(WORKLOAD + r"""
from hornet.memory import host_heap
after = dict(os.environ)
changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
print(json.dumps({"changed": changed, "mallopt": len(calls),
                  "heap_applied": host_heap._applied}))
""")
    assert res["changed"] == []
    assert res["mallopt"] == 0
    assert res["heap_applied"] is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc thresholds: Linux")
def test_tune_process_applies_its_setting_on_request_and_no_environment_variable():
    res = _run(r"""
import hornet
applied = hornet.tune_process()
again = hornet.tune_process()
after = dict(os.environ)
changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
print(json.dumps({"applied": applied, "again": again, "changed": changed,
                  "mallopt": len(calls)}))
""")
    assert res["changed"] == []
    assert res["mallopt"] == 1                       # once per process
    assert res["applied"] == res["again"]
    assert set(res["applied"]) == {"keep_freed_buffers"}


def test_tune_process_keeps_the_process_own_settings():
    res = _run(r"""
os.environ["MALLOC_TRIM_THRESHOLD_"] = "4096"
import hornet
applied = hornet.tune_process()
print(json.dumps({"applied": applied, "mallopt": len(calls)}))
""")
    assert res["applied"]["keep_freed_buffers"] is False and res["mallopt"] == 0


def test_tune_process_off_applies_nothing():
    res = _run(r"""
import hornet
applied = hornet.tune_process(keep_freed_buffers=False)
print(json.dumps({"applied": applied, "mallopt": len(calls)}))
""")
    assert res["applied"] == {"keep_freed_buffers": False} and res["mallopt"] == 0
