"""GPU list removals of every kernel shape (hornet.batch.gpu.kernels: the medium lists' warps
and the huge lists' pieces) and merges into huge
lists (one block or many a list) against the CPU backend:
hubs cut into many pieces with removals on and around piece boundaries, dense runs of removed
entries (more than a window's worth), first entries (every item moves), lists emptied, and
lists of one warp's and one thread's size; without edge properties (the queued removal) and
with them (every column through remove_lists)."""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from conftest import HAS_GPU
from hornet.testing import to_host
from small_batch_checks import same_graph

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]

#: (REMOVE_WINDOWS, WARP_BLOCKS, PIECE_ITEMS)
SHAPES = [(4, 5, 16), (16, 4, 32), (8, 6, 16), (16, 4, 16)]


def _graph(device, props):
    g = hornet.Graph(directed=True, device=device, block_array_edges=512,
                     edge_properties={"t": np.int64} if props else None)
    g._medium_batches = False
    g._small_batches = False             # (every GPU batch takes the plan)
    return g


def _lists(rng):
    """(src, dst) of a directed graph: two hubs of 60,000 and 25,000 entries, 150 lists of 65
    to 4,000 entries, 1,500 lists of a few entries."""
    s, d = [np.zeros(60_000, dtype=np.int64), np.ones(25_000, dtype=np.int64)], \
        [np.arange(60_000) + 100_000, np.arange(25_000) * 3 + 100_000]
    sizes = rng.integers(65, 4000, 150)
    s.append(np.repeat(np.arange(2, 152), sizes))
    d.append(np.concatenate([rng.choice(200_000, k, replace=False) for k in sizes]))
    s.append(np.repeat(np.arange(302, 1802), 4))
    d.append(rng.integers(0, 200_000, 1500 * 4))
    return np.concatenate(s), np.concatenate(d)


def _picks(rng, es):
    """Entries (indices into the sorted edge list) to delete: a tenth of every list at random,
    dense runs across the hub's piece boundaries (4,096 and 8,192 items), every list's first
    entry in a few lists, and a few lists whole."""
    picks = [rng.choice(es.size, es.size // 10, replace=False)]
    for edge in (4096, 8192, 16384, 40960):
        picks.append(np.arange(edge - 70, edge + 70))              # hub 0 starts at 0
    hub1 = np.searchsorted(es, 1)
    picks.append(hub1 + np.arange(8000, 8400))
    starts = np.searchsorted(es, np.arange(2, 152, 7))
    picks.append(starts)
    for v in (310, 311, 312):
        picks.append(np.flatnonzero(es == v))
    return np.unique(np.concatenate(picks))


@pytest.mark.parametrize("shape, props", [(shape, False) for shape in SHAPES]
                         + [(None, True)])
def test_removals_of_every_kernel_shape_match_the_cpu(shape, props, monkeypatch):
    """``shape`` None: the defaults (with edge properties, whose 8-byte columns have the
    default shapes only)."""
    from hornet.batch.gpu import kernels
    for name, value in zip(("REMOVE_WINDOWS", "WARP_BLOCKS", "PIECE_ITEMS"),
                           shape or ()):
        monkeypatch.setattr(kernels, name, value)
    rng = np.random.default_rng(21)
    cpu, gpu = _graph("cpu", props), _graph("gpu", props)
    s, d = _lists(rng)
    t = rng.integers(0, 1 << 40, s.size)
    for g in (cpu, gpu):
        g.insert_edges(s, d, **({"t": t} if props else {}))
    for step in range(2):
        es, ed = cpu.edges()
        pick = _picks(rng, es)
        want = cpu.delete_edges(es[pick], ed[pick])
        got = gpu.delete_edges(es[pick], ed[pick])
        assert np.array_equal(to_host(got.src), want.src)
        assert np.array_equal(to_host(got.dst), want.dst)
        if props:
            assert np.array_equal(to_host(got.properties["t"]), want.properties["t"])
        same_graph(cpu, gpu)
        gpu.check()


@pytest.mark.parametrize("props", [False, True])
@pytest.mark.parametrize("pieces", [0, 16])
def test_merges_into_huge_lists_match_the_cpu(pieces, props, monkeypatch):
    """Planned inserts into huge lists, one block a list (``pieces`` 0) or many (pieces of
    blockDim * 16 old items): new entries before the first, spread, in dense runs across the
    pieces' edges, appended after the last; a new list of more than a warp's share; hubs that
    outgrow their blocks (rewritten into new ones) and hubs that do not (in place)."""
    from hornet.batch.gpu import kernels
    monkeypatch.setattr(kernels, "MERGE_PIECES", bool(pieces))
    monkeypatch.setattr(kernels, "MERGE_PIECE_ITEMS", pieces or kernels.MERGE_PIECE_ITEMS)
    rng = np.random.default_rng(22)
    cpu, gpu = _graph("cpu", props), _graph("gpu", props)
    s, d = _lists(rng)
    keep = rng.random(s.size) < 0.5                   # room in the hubs' blocks for in place
    s, d = s[keep], d[keep]
    t = rng.integers(0, 1 << 40, s.size)
    for g in (cpu, gpu):
        g.insert_edges(s, d, **({"t": t} if props else {}))
    for step in range(3):
        hub = np.arange(100_000, 160_000)
        new = [rng.choice(hub, 3000, replace=False), np.arange(99_000, 99_100),
               100_000 + 4096 * np.arange(1, 8)[:, None] + np.arange(-40, 40)[None, :],
               np.arange(170_000, 170_050)]
        ns = np.concatenate([x.ravel() for x in new])
        bs = [np.zeros(ns.size, dtype=np.int64), np.ones(ns.size // 2, dtype=np.int64),
              np.full(5000, 5000 + step, dtype=np.int64),
              rng.integers(2, 152, 4000)]
        bd = [ns, ns[: ns.size // 2] + 1, rng.choice(200_000, 5000, replace=False),
              rng.integers(0, 200_000, 4000)]
        bs, bd = np.concatenate(bs), np.concatenate(bd)
        bt = rng.integers(0, 1 << 40, bs.size)
        want = cpu.insert_edges(bs, bd, **({"t": bt} if props else {}))
        got = gpu.insert_edges(bs, bd, **({"t": bt} if props else {}))
        assert np.array_equal(to_host(got.src), want.src)
        assert np.array_equal(to_host(got.dst), want.dst)
        same_graph(cpu, gpu, size_classes=True)
        gpu.check()
