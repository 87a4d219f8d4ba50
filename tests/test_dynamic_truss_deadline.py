"""The CPU DynamicTruss's insertion deadline on a hub-heavy graph (a Kronecker graph): the
scan's work counts the entries of the adjacency lists it intersects (and of the level rows
it builds), so that its work grows with its time however few triangles a hub's long lists
hold. Stopped at a twentieth of the work of the same batch's whole scan, the scan stops
within twice that limit, and the static decomposition then completes the batch, equal to
it. (That the stopped scan's time follows its work is a timing: ``bench/tools/
truss_deadline.py`` measures it.)"""
from __future__ import annotations

import numpy as np
import pytest

import hornet
from hornet.algos.ktruss.dynamic import DynamicTruss
from hornet.generators import kronecker_edges

from test_dynamic_truss_level_rows import force_level_rows
from truss_checks import assert_static

#: the forced limit, as a share of the whole scan's work
SHARE = 0.05
#: how far past its limit a stopped scan's work may run
OVER = 2.0


def _insert(kt, g, s, d, limit):
    """Re-insert ``s``-``d`` with the scan's work limit ``limit`` (gate off); the stats."""
    kt._decide = lambda kind, first, batch, bound=None: (False, limit)
    kt.update(g.insert_edges(s, d))
    del kt._decide
    assert_static(kt, g)
    return dict(kt.stats)


@pytest.mark.parametrize("rows", ["plain", "rows"])
def test_a_stopped_scan_stops_near_its_work_limit(rows, monkeypatch):
    force_level_rows(monkeypatch, rows == "rows")
    src, dst = kronecker_edges(12, edge_factor=16, seed=2)
    g = hornet.Graph.from_edges(src, dst, directed=False, device="cpu")
    kt = DynamicTruss(g, batch_share=1.0, predict_share=np.inf)
    kt.core_min_insert = np.iinfo(np.int64).max      # the scan's own deadline, no core peel
    gs, gd = (np.asarray(a) for a in g.edges(dense=True))
    rng = np.random.default_rng(7)
    pick = rng.choice(gs.shape[0], gs.shape[0] // 50, replace=False)
    s, d = gs[pick], gd[pick]
    kt.update(g.delete_edges(s, d))
    st = _insert(kt, g, s, d, 1 << 60)
    assert st["path"] == "dynamic", st
    kt.update(g.delete_edges(s, d))
    limit = int(SHARE * st["work"])
    st = _insert(kt, g, s, d, limit)
    assert st["path"] == "static" and st["why"] in ("level", "work"), st
    assert limit < st["work"] <= OVER * limit, st
