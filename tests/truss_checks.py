"""Helpers shared by the DynamicTruss tests (test_dynamic_truss.py: scripted batches,
test_dynamic_truss_machine.py: the state machine, test_dynamic_truss_real.py: real graphs):
the threshold modes, device arrays, the static oracle on the same graph state, and the churn
loop of the GPU truss tests (delete, put back, check after every update)."""
from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from hornet.algos import k_truss, truss_numbers
from hornet.testing import to_host

from conftest import DATA_DIR

#: a share no region reaches
NEVER = 1e9
#: "dynamic": every batch through the region algorithms; "default": the default thresholds;
#: "static": every batch through the whole-graph fallback
MODES = {"dynamic": dict(fallback_share=NEVER, batch_share=NEVER), "default": {},
         "static": dict(batch_share=0.0)}


def pairs(src_dst) -> list[tuple[int, int]]:
    """(src, dst) arrays of either device as a list of host int pairs."""
    s, d = (to_host(a).tolist() for a in src_dst)
    return list(zip(s, d))


def arr(device: str, a):
    """int64 array of ``a`` on ``device`` ("cpu": NumPy, "gpu": CuPy)."""
    a = np.asarray(a, dtype=np.int64)
    if device == "gpu":
        import cupy
        return cupy.asarray(a)
    return a


def static_input(g):
    """What the static oracle peels for the graph ``g``: an undirected CPU graph's CSR
    (``g.to_csr()``; the static functions peel a mask over it), else ``g`` itself. Both
    inputs give the same results, listed like ``g.edges()`` (test_algos_ktruss checks the
    Graph input, whose peeling deletes from a copy of the graph); the CSR is a few times
    cheaper on a real graph and shares no code with the graph's batch pipeline."""
    if g.device == "cpu" and not g.directed:
        csr = g.to_csr()
        return csr[0], csr[1]
    return g


def assert_static(kt, g) -> None:
    """The DynamicTruss ``kt`` equals the static functions on the same graph ``g``: truss
    numbers (``truss_numbers``), k_max (the largest static truss number, 0 without edges,
    as ``max_truss`` defines it) and the k-truss edge lists for k = 0, 2, 3 and k_max
    (``k_truss``, which peels for one k on its own, independently of the decomposition;
    k <= 2 lists every edge but self-loops)."""
    static = static_input(g)
    want = to_host(truss_numbers(static))
    assert np.array_equal(to_host(kt.truss_numbers), want)
    k = int(want.max()) if want.shape[0] else 0
    assert kt.k_max == k
    for kk in sorted({0, 2, 3, k}):
        assert pairs(kt.k_truss(kk)) == pairs(k_truss(static, kk))


def clique(vertices) -> tuple[list[int], list[int]]:
    """(src, dst) of the complete graph on ``vertices``, each pair once."""
    both = list(combinations(vertices, 2))
    return [u for u, _ in both], [v for _, v in both]


def real_graph(name: str):
    """(src, dst) of a graph in the data folder; skips the test when it is absent."""
    path = DATA_DIR / name
    if not path.exists():
        pytest.skip(f"{name} not in {DATA_DIR}")
    from hornet.io import read_edges
    s, d, _ = read_edges(path)
    return s, d


def k_order_violations(kt) -> int:
    """Edges of a DynamicTruss (CPU or GPU) that break the k-order invariant, counted from
    its definition by brute force: ordering the edges by (truss number, rank), an edge e may
    lie in at most t(e) - 2 triangles whose other two edges both come after it. The edges of
    a CPU object's dense blocks keep no rank (hornet.algos.ktruss.dense) and are not
    checked themselves; they still count as the other edges of a triangle."""
    t = kt._table
    blocks = getattr(kt, "_blocks", None)
    keys = to_host(t.keys)
    truss, rank = to_host(t.columns["truss"]), to_host(t.columns["rank"])
    live = np.flatnonzero(keys >= 0)
    key = {}
    in_block = set()
    for s in live.tolist():
        k = int(keys[s])
        key[(k >> 32, k & 0xFFFFFFFF)] = (int(truss[s]), int(rank[s]))
        if blocks is not None and blocks.eblock[s] >= 0:
            in_block.add((k >> 32, k & 0xFFFFFFFF))
    adj = {}
    for u, v in key:
        adj.setdefault(u, set()).add(v)
        adj.setdefault(v, set()).add(u)
    bad = 0
    for (u, v), mine in key.items():
        if (u, v) in in_block:
            continue
        later = sum(1 for w in adj[u] & adj[v]
                    if key[(min(u, w), max(u, w))] > mine and key[(min(v, w), max(v, w))] > mine)
        bad += later > mine[0] - 2
    return bad


def level_count_violations(kt, exact: bool = False) -> int:
    """Edges of a CPU DynamicTruss whose kept level count is not a lower bound (``exact``:
    not equal, or missing) of the true one, counted by brute force: the triangles whose two
    other edges have truss numbers at least the edge's own."""
    t = kt._table
    live = np.flatnonzero(t.keys >= 0)
    truss = {}
    for s in live.tolist():
        k = int(t.keys[s])
        truss[(k >> 32, k & 0xFFFFFFFF)] = int(t.columns["truss"][s])
    adj = {}
    for u, v in truss:
        adj.setdefault(u, set()).add(v)
        adj.setdefault(v, set()).add(u)
    bad = 0
    for s in live.tolist():
        k = int(t.keys[s])
        u, v = k >> 32, k & 0xFFFFFFFF
        mine = truss[(u, v)]
        true = sum(1 for w in adj[u] & adj[v]
                   if truss[(min(u, w), max(u, w))] >= mine
                   and truss[(min(v, w), max(v, w))] >= mine)
        valid = kt._counted[s] > kt._valid
        if exact:
            bad += not valid or int(kt._count[s]) != true
        elif valid:
            bad += int(kt._count[s]) > true
    return bad


def k_order_ties(kt) -> int:
    """Pairs of edges of a CPU DynamicTruss outside its dense blocks that share both truss
    number and rank: the k-order is a total order, so there must be none (a tie would leave
    "comes after" undefined between them)."""
    t = kt._table
    live = np.flatnonzero(t.keys >= 0)
    live = live[kt._blocks.eblock[live] < 0]
    pairs_ = np.stack([t.columns["truss"][live].astype(np.int64), t.columns["rank"][live]])
    return live.shape[0] - np.unique(pairs_, axis=1).shape[1]


def undirected_graph(device: str, s, d):
    """An undirected graph on ``device`` with the edges (s, d) (host int sequences)."""
    import hornet
    g = hornet.Graph(directed=False, device=device)
    g.insert_edges(arr(device, s), arr(device, d))
    return g


def churn_checked(g, s, d, rng, steps: int, most: int, order: bool = True,
                  check_deletes: bool = False, insert_path: bool = True):
    """``steps`` random deletions of 1 to ``most`` of the edges (s, d), then put back, each
    update of one DynamicTruss checked against the static decomposition; the k-order checked
    by brute force after every re-insertion (``order``; with ``check_deletes`` after every
    deletion too, which must then take the dynamic path), and at the end. ``insert_path``:
    every re-insertion must take the dynamic path. Returns the DynamicTruss."""
    from hornet.algos.ktruss.dynamic import DynamicTruss
    kt = DynamicTruss(g, **MODES["dynamic"])
    assert_static(kt, g)
    for _ in range(steps):
        pick = rng.choice(len(s), int(rng.integers(1, most + 1)), replace=False)
        gone = (arr(g.device, np.asarray(s)[pick]), arr(g.device, np.asarray(d)[pick]))
        kt.update(g.delete_edges(*gone))
        if check_deletes:
            assert kt.stats["path"] == "dynamic"
        assert_static(kt, g)
        assert not (order and check_deletes) or k_order_violations(kt) == 0
        kt.update(g.insert_edges(*gone))
        assert not insert_path or kt.stats["path"] == "dynamic"
        assert_static(kt, g)
        assert not order or k_order_violations(kt) == 0
    assert k_order_violations(kt) == 0
    return kt


def static_numbers_equal(kt) -> bool:
    """Whether the DynamicTruss ``kt`` holds the static ``truss_numbers`` of its graph."""
    return np.array_equal(to_host(kt.truss_numbers), to_host(truss_numbers(kt.graph)))
