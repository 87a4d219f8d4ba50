"""Run networkx's own tests for the functions hornet's backend covers, against the backend.

networkx's test-backend mechanism (networkx/conftest.py, read at pytest start) converts every
graph argument of a dispatchable call to the backend named by ``NETWORKX_TEST_BACKEND`` and
compares graph results with networkx's own. Calls the backend declines (``can_run`` False)
run on networkx when ``NETWORKX_FALLBACK_TO_NX`` is set, and are marked xfail otherwise.

The entry points must be installed (``pip install -e .`` or ``pip install .``) in the
interpreter that runs this script:

    python bench/tools/networkx_tests.py                 # both modes, summary table
    python bench/tools/networkx_tests.py --fallback      # only with fallback to networkx
    python bench/tools/networkx_tests.py --modules networkx.algorithms.tests.test_cluster

Prints pytest's counts for each mode and, per hornet function, how many calls ran on hornet
and how many hornet declined (with the reasons), taken from networkx's dispatch log. Without
fallback every test that calls any function hornet does not implement (graph generators,
relabelling, ...) is an xfail, so the run with fallback is the one that tests the backend.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

MODULES = [
    "networkx.algorithms.tests.test_cluster",            # triangles, clustering, transitivity
    "networkx.algorithms.tests.test_core",               # k_truss
    "networkx.algorithms.shortest_paths.tests.test_unweighted",
    "networkx.algorithms.traversal.tests.test_bfs",      # bfs_layers, descendants_at_distance
    "networkx.algorithms.components.tests.test_connected",  # is_connected, node_connected_...
    "networkx.algorithms.tests.test_dag",                # descendants
]

# Runs inside the pytest process: counts networkx's dispatch log records per function.
_PLUGIN = r'''
import json, logging, os
from collections import Counter, defaultdict

_ran, _declined, _reasons = Counter(), Counter(), defaultdict(Counter)

class _Count(logging.Handler):
    def emit(self, record):
        msg, args = record.msg, record.args or ()
        if msg.startswith("Using backend '%s' for call to '%s'"):
            _ran[args[1]] += 1
        elif msg.startswith("Falling back to use 'networkx' instead of '%s' backend"):
            _declined[args[1]] += 1
        elif msg.startswith("Backend '%s' can't run `%s` with arguments"):
            _reasons[args[1]][str(args[3]).removeprefix(", because: ")] += 1

def pytest_configure(config):
    log = logging.getLogger("networkx.utils.backends")
    log.setLevel(logging.DEBUG)
    log.addHandler(_Count())

def pytest_unconfigure(config):
    from hornet_nx_info import FUNCTIONS
    out = {name: {"ran": _ran[name], "declined": _declined[name],
                  "reasons": dict(_reasons[name])} for name in FUNCTIONS}
    with open(os.environ["HORNET_NX_DISPATCH_LOG"], "w") as f:
        json.dump(out, f)
'''


def run(modules: list[str], fallback: bool) -> dict:
    """Run pytest on ``modules`` against the backend; returns counts and the dispatch log."""
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "hornet_dispatch_count.py"), "w") as f:
            f.write(_PLUGIN)
        env = dict(os.environ, NETWORKX_TEST_BACKEND="hornet",
                   HORNET_NX_DISPATCH_LOG=os.path.join(tmp, "log.json"),
                   PYTHONPATH=os.pathsep.join([tmp, os.environ.get("PYTHONPATH", "")]))
        env.pop("NETWORKX_FALLBACK_TO_NX", None)
        if fallback:
            env["NETWORKX_FALLBACK_TO_NX"] = "True"
        cmd = [sys.executable, "-m", "pytest", "--pyargs", *modules, "-q", "-rfEx",
               "-p", "no:cacheprovider", "-p", "hornet_dispatch_count"]
        proc = subprocess.run(cmd, env=env, cwd=tmp, capture_output=True, text=True)
        lines = proc.stdout.strip().splitlines()
        log = {}
        path = os.path.join(tmp, "log.json")
        if os.path.exists(path):
            with open(path) as f:
                log = json.load(f)
    return {"returncode": proc.returncode, "summary": lines[-1] if lines else proc.stderr,
            "details": [ln for ln in lines if ln.startswith(("FAILED", "ERROR", "XFAIL"))],
            "dispatch": log}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", nargs="+", default=MODULES)
    parser.add_argument("--fallback", action="store_true",
                        help="only the run with NETWORKX_FALLBACK_TO_NX=True")
    args = parser.parse_args(argv)
    import networkx as nx
    if "hornet" not in nx.utils.backends.backends:
        print("hornet's networkx entry points are not installed in this interpreter "
              "(pip install -e .)", file=sys.stderr)
        return 2
    modes = [True] if args.fallback else [True, False]
    status = 0
    for fallback in modes:
        result = run(args.modules, fallback)
        status = status or result["returncode"]
        title = "NETWORKX_FALLBACK_TO_NX=True" if fallback else "no fallback (declined: xfail)"
        print(f"## {title}\n{result['summary']}")
        for line in result["details"]:
            print("   ", line)
        print(f"{'function':38s} {'ran on hornet':>14s} {'declined':>9s}  reasons")
        for name, row in result["dispatch"].items():
            reasons = "; ".join(f"{r} (x{c})" for r, c in row["reasons"].items())
            print(f"{name:38s} {row['ran']:14d} {row['declined']:9d}  {reasons}")
        print()
    return status


if __name__ == "__main__":
    sys.exit(main())
