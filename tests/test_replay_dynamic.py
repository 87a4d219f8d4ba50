"""Replays of the real temporal streams with dynamic analytics, verified after every batch.

``verify=True`` checks each dynamic analytic against its static algorithm recomputed on the
graph and against the static algorithm on an independent reference model, after every batch,
with and without a sliding window; a static replay of the same stream must report the same
values batch by batch.
"""
from __future__ import annotations

import pytest

from conftest import DATA_DIR
from streams.replay import replay

# the largest stream (107k events) runs the same replay path as the four others on more
# batches: a timing run more than another case, so it is marked slow (run with -m slow)
TEMPORAL = ["CollegeMsg.txt.gz",
            pytest.param("sx-mathoverflow-a2q.txt.gz", marks=pytest.mark.slow),
            "soc-sign-bitcoinotc.csv.gz", "soc-sign-bitcoinalpha.csv.gz",
            "out.radoslaw_email_email.gz"]
COLUMNS = ["triangles", "k_max", "bfs_reached", "spmv_sum"]


@pytest.mark.parametrize("name", TEMPORAL)
@pytest.mark.parametrize("window", [None, 20000], ids=["no-window", "window"])
def test_dynamic_replay_verifies_on_temporal_streams(device, name, window):
    path = DATA_DIR / name
    if not path.exists():
        pytest.skip(f"{path} is absent")
    res = replay(path, batch_size=10000, window=window, device=device, verify=True)
    assert res.summary["verified"]
    assert set(res.summary["analytics_kind"].values()) == {"dynamic"}
    assert all(res[c + "_seconds"].shape[0] == len(res) for c in COLUMNS)


@pytest.mark.parametrize("directed", [True, False])
def test_static_and_dynamic_replays_agree(device, directed):
    path = DATA_DIR / "CollegeMsg.txt.gz"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    kw = dict(batch_size=4000, window=15000, device=device, directed=directed)
    dyn = replay(path, **kw)
    sta = replay(path, dynamic=False, **kw)
    assert set(sta.summary["analytics_kind"].values()) == {"static"}
    for c in COLUMNS:
        assert dyn[c].tolist() == sta[c].tolist(), c
