"""Shared fixtures: where the real graphs are, which backends exist, Hypothesis profiles."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from itertools import combinations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import suite_kernels
import suite_order

ROOT = Path(__file__).resolve().parents[1]
# split kernels run on hornet's threads, not through parfor launchers (hornet.core.launchers,
# tested in test_launchers.py): the suite's results do not hang on what the kernel cache
# holds, its processes (and those they start) leave no launcher compile behind, and the two
# processes of -n 2 meet no OpenMP threads spinning after each call.
# HORNET_LAUNCHERS=cached runs it through the cached launchers.
os.environ.setdefault("HORNET_LAUNCHERS", "never")
DATA_DIR = Path(os.environ.get("HORNET_DATA", ROOT.parent / "shared" / "data"))

settings.register_profile(
    "ci", max_examples=30, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev", max_examples=60, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough", max_examples=600, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def gpu_available() -> bool:
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


HAS_GPU = gpu_available()
BACKENDS = [
    "cpu",
    pytest.param("gpu", marks=[pytest.mark.gpu,
                               pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]),
]


@pytest.fixture(params=BACKENDS)
def device(request) -> str:
    """Backend under test: every test taking ``device`` runs on the CPU and (if present) the GPU."""
    return request.param


def dataset_files() -> list[Path]:
    """Every graph file in shared/data (empty when the folder is absent)."""
    if not DATA_DIR.is_dir():
        return []
    return sorted(p for p in DATA_DIR.iterdir() if p.name.endswith(".gz"))


needs_data = pytest.mark.skipif(not DATA_DIR.is_dir(), reason=f"no dataset folder {DATA_DIR}")


# ------------------------------------------------------------------ state-machine checks


def one_instance(checks: list) -> list:
    """The given ``hornet.testing.AlgorithmCheck`` s (equivalent ``create``) reading one
    algorithm instance per state machine: the first check's ``create`` builds it for the
    machine's graph and its ``update`` feeds it every change; the others read the same
    instance instead of building and updating copies of it. Every check still compares its
    own result with its own oracle after every step."""
    first, made = checks[0], {}

    def create(g):
        made["graph"], made["instance"] = g, first.create(g)
        return made["instance"]

    def the_instance(g):
        assert made.get("graph") is g, "the first check builds the instance"
        return made["instance"]

    def read_only(alg, change):
        """The first check has fed this change to the shared instance."""

    return [dataclasses.replace(first, create=create)] + [
        dataclasses.replace(c, create=the_instance, update=read_only) for c in checks[1:]]


# ------------------------------------------------------------------ graphs for the algorithm tests


@st.composite
def graphs(draw, max_n=24, directed=None, pairs_per_vertex=3, clique_size=9, cliques=4):
    """(n, pairs, directed): random pairs (self-loops and repeats included) plus planted,
    overlapping cliques, so triangles and deep trusses occur."""
    n = draw(st.integers(1, max_n))
    node = st.integers(0, n - 1)
    pairs = draw(st.lists(st.tuples(node, node), max_size=pairs_per_vertex * n))
    if n >= 3:
        for clique in draw(st.lists(st.sets(node, min_size=3, max_size=min(n, clique_size)),
                                    max_size=cliques)):
            pairs += list(combinations(sorted(clique), 2))
    d = draw(st.booleans()) if directed is None else directed
    return n, pairs, d


def scipy_matrix(n, pairs, directed):
    """CSR of the pairs (both directions when undirected; repeats summed)."""
    pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    s, t = pairs[:, 0], pairs[:, 1]
    if not directed:
        s, t = np.concatenate([s, t]), np.concatenate([t, s])
    return sp.coo_array((np.ones(s.shape[0]), (s, t)), shape=(n, n)).tocsr()


def read_pairs(name):
    """(src, dst) int64 of a graph in shared/data, ids as in the file."""
    import hornet
    src, dst, _ = hornet.io.read_edges(DATA_DIR / name)
    return src, dst


@pytest.fixture(autouse=True)
def parallel_kernel_policy(request):
    """Tests marked ``parallel_kernels`` run the CPU kernels in parts (split kernels, and the
    parallel twins of other kernels) from their first call at or above their threshold
    (``jit.parallel_policy = "always"``), in two parts at least
    (``jit.split_min_parts = 2``) even where the input is small enough for one thread. The
    other tests run the library's default, under which small inputs run on one thread: the
    marked tests (at least one per kernel family, against the same oracles) keep the
    parallel code covered."""
    if (request.node.get_closest_marker("parallel_kernels") is None
            or request.node.get_closest_marker("gpu") is not None):   # GPU cases run no CPU twin
        yield
        return
    from hornet.core import jit
    before, calls, parts = jit.parallel_policy, jit.parallel_calls, jit.split_min_parts
    jit.parallel_policy = "always"
    jit.split_min_parts = 2            # split kernels run in parts even on small inputs
    try:
        yield
    finally:
        jit.parallel_policy = before
        jit.split_min_parts = parts
    report = getattr(request.node, "report_call", None)
    if report is not None and report.passed:        # a skipped or failed test says so itself
        assert jit.parallel_calls > calls, \
            f"{request.node.nodeid} is marked parallel_kernels but ran nothing in parts"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep the call phase's report on the test item (``item.report_call``) for fixtures'
    teardown checks."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.report_call = report


@pytest.fixture
def small_path_counter(monkeypatch):
    """Counts the batches the small-batch path really took, per backend: ``["cpu"]``,
    ``["gpu"]`` (a test may drive graphs of both)."""
    import hornet.graph
    from hornet.core import jit
    # the CPU small-batch path opens once compiled or cached (jit.OptionalPath): taken here
    # from the first batch, so that a cold run tests it too
    monkeypatch.setattr(jit, "optional_path_policy", "always")
    taken = {"cpu": 0, "gpu": 0}
    original = hornet.graph.small_update

    def counting(graph, *args):
        change = original(graph, *args)
        # (a deferred batch that stalled and runs again was counted when it was queued)
        taken[graph.device] += change is not None and not graph._running_again
        return change

    deferred = hornet.graph.deferred_insert

    def counting_deferred(graph, *args):
        change = deferred(graph, *args)
        taken[graph.device] += change is not None
        return change

    monkeypatch.setattr(hornet.graph, "small_update", counting)
    monkeypatch.setattr(hornet.graph, "deferred_insert", counting_deferred)
    return taken


# ------------------------------------------------------------------ compiling the suite's kernels once


def _record_path(config):
    return os.environ.get("HORNET_RECORD_KERNELS") or None


def pytest_configure(config):
    """Under ``HORNET_RECORD_KERNELS``, record the kernels this test process compiles
    (tests/suite_kernels.py); under ``HORNET_RECORD_DURATIONS``, the seconds of its test
    files (tests/suite_order.py). pytest-xdist keeps the collection's file order, which
    runs the longest files first (:func:`pytest_collection_modifyitems`)."""
    if _record_path(config):
        from numba.core import event as numba_event
        config.kernel_recorder = suite_kernels.Recorder()
        numba_event.register("numba:compile", config.kernel_recorder)
    if suite_order.record_path():
        config.duration_recorder = suite_order.Recorder()
        config.pluginmanager.register(config.duration_recorder, "hornet-duration-recorder")
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
    """The test files longest first (tests/suite_order.py), so that neither worker of
    ``-n 2`` is left with a long file while the other has finished."""
    items[:] = suite_order.longest_first(items)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    recorder = getattr(item.config, "kernel_recorder", None)
    if recorder is not None:
        recorder.test_file = item.nodeid.split("::")[0]


def pytest_sessionstart(session):
    """In the process that runs or starts the tests (not in an xdist worker): compile the
    kernels the selected test files need, once, in two processes, before any test runs
    (tests/suite_kernels.py). Not for a run narrowed by ``-k`` or ``--lf``, nor for a run of
    the GPU tests alone (``-m gpu``), which call few of the CPU kernels."""
    config = session.config
    if hasattr(config, "workerinput") or not suite_kernels.enabled():
        return
    if getattr(config.option, "keyword", "") or getattr(config.option, "lf", False):
        return
    marks = getattr(config.option, "markexpr", "") or ""
    if "gpu" in marks and "not gpu" not in marks:
        return
    files = suite_kernels.selected_files(list(config.args), config.rootpath)
    line = suite_kernels.precompile(files, DATA_DIR.is_dir())
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and line:
        reporter.write_line(line)


def pytest_sessionfinish(session):
    """Under ``HORNET_RECORD_KERNELS``: each test process writes what it compiled; the
    process that started them (or the only one) adds it to the list."""
    config = session.config
    worker = getattr(config, "workerinput", {}).get("workerid", "main")
    alone = (getattr(config.option, "numprocesses", 0) or 0) == 0
    durations = suite_order.record_path()
    if durations:
        recorder = getattr(config, "duration_recorder", None)
        if recorder is not None and (worker != "main" or alone):
            recorder.write(f"{durations}.{worker}.json")
        if worker == "main":
            suite_order.merge(Path(durations),
                              sorted(Path(durations).parent.glob(Path(durations).name
                                                                 + ".*.json")))
    path = _record_path(config)
    if not path:
        return
    recorder = getattr(config, "kernel_recorder", None)
    if recorder is not None and (worker != "main" or
                                 (getattr(config.option, "numprocesses", 0) or 0) == 0):
        recorder.write(f"{path}.{worker}.json")
    if worker == "main":
        parts = sorted(Path(path).parent.glob(Path(path).name + ".*.json"))
        suite_kernels.merge(Path(path), parts, DATA_DIR.is_dir())
