"""A replay resumed from a snapshot that a replay wrote every N batches (sliding window
included) gives, batch for batch, the same graph and analytics as the uninterrupted replay.

Oracle: the uninterrupted replay of the same stream with the same settings (itself checked
with verify=True against the event-by-event reference model); the resumed replays run with
verify=True too."""
from __future__ import annotations

import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hornet
from streams.cli import main
from streams.replay import ReplayError, replay

ALGOS = "tc,ktruss,bfs,spmv"
SAME = ("batch", "first_event", "events", "self_loops", "inserted", "deleted", "expired",
        "edges", "vertices", "triangles", "k_max", "bfs_reached", "spmv_sum", "batch_id",
        "time_last")


def _write(tmp_path, name, n=1600, seed=7, op=False, ids="int"):
    rng = np.random.default_rng(seed)
    s, d = rng.integers(0, 45, n), rng.integers(0, 45, n)
    cols = {"src": s, "dst": d}
    if ids == "hash":
        pool = rng.integers(2**31, 2**62, 45, dtype=np.int64)
        cols = {"src": pool[s], "dst": pool[d]}
    cols["weight"] = rng.integers(1, 9, n).astype(np.float64)
    cols["time"] = np.cumsum(rng.integers(0, 4, n)).astype(np.int64)
    if op:
        cols["op"] = np.where(rng.random(n) < 0.25, -1, 1).astype(np.int8)
    path = tmp_path / name
    pq.write_table(pa.table(cols), path)
    return path


def _rows(res, start_batch=0):
    return [{k: r[k] for k in SAME if k in r} for r in res.rows if r["batch"] >= start_batch]


def _graph(path):
    g = hornet.Graph.load(path, device="cpu")
    s, d, p = g.edges(properties=True)
    return (s.tolist(), d.tolist(), {k: v.tolist() for k, v in p.items()},
            None if g.vertex_map is None else g.vertex_map.originals().tolist())


@pytest.mark.parametrize("op,directed,ids,batching", [
    (False, False, "int", "count"),
    (True, True, "int", "count"),
    (True, False, "hash", "count"),
    (False, True, "int", "time"),
])
def test_resumed_windowed_replay_equals_the_uninterrupted_one(tmp_path, op, directed, ids,
                                                               batching):
    src = _write(tmp_path, "s.parquet", op=op, ids=ids)
    kw = dict(window=350, directed=directed, algos=ALGOS, device="cpu",
              map_ids=ids == "hash")
    # batches of about 80 events either way (the stream advances 1.5 time units per event)
    kw.update(batch_size=None, batch_time=120.0) if batching == "time" else \
        kw.update(batch_size=120)
    every = 3
    snap = tmp_path / "ckpt.arrow"
    kept = {}

    def keep(row):                       # the file holds the state after `batch` batches
        if row["batch"] and row["batch"] % every == 0:
            kept[row["batch"]] = tmp_path / f"after{row['batch']}.arrow"
            shutil.copy(snap, kept[row["batch"]])

    whole = replay(src, snapshot=snap, snapshot_every=every, on_batch=keep, verify=True, **kw)
    final = _graph(snap)
    assert len(whole) > 9 and sorted(kept)[:3] == [3, 6, 9]
    assert sum(whole["expired"]) > 0                      # the window did expire edges
    for batch in sorted(kept)[:3]:
        end = tmp_path / f"end{batch}.arrow"
        got = replay(src, from_snapshot=kept[batch], resume=True, snapshot=end,
                     snapshot_every=every, verify=True, **kw)
        assert _rows(got) == _rows(whole, batch), batch
        assert got.summary["bfs_source"] == whole.summary["bfs_source"]
        assert _graph(end) == final, batch
    # the rest of the stream as a file of its own continues the snapshot the same way
    batch = sorted(kept)[1]
    first = whole.rows[batch]["first_event"]
    rest = tmp_path / "rest.parquet"
    pq.write_table(pq.read_table(src).slice(first), rest)
    got = replay(rest, from_snapshot=kept[batch], verify=True, **kw)
    assert _rows(got) == _rows(whole, batch)


def test_resume_on_every_device(device, tmp_path):
    src = _write(tmp_path, "s.parquet", n=900, ids="hash")
    kw = dict(window=250, directed=False, algos=ALGOS, device=device, map_ids=True,
              batch_size=100)
    snap = tmp_path / "ckpt.arrow"
    kept = tmp_path / "after4.arrow"

    def keep(row):
        if row["batch"] == 4:
            shutil.copy(snap, kept)

    whole = replay(src, snapshot=snap, snapshot_every=2, on_batch=keep, **kw)
    got = replay(src, from_snapshot=kept, resume=True, snapshot=tmp_path / "end.arrow", **kw)
    assert _rows(got) == _rows(whole, 4)
    assert _graph(tmp_path / "end.arrow") == _graph(snap)


def test_cli_resume_and_window_errors(capsys, tmp_path):
    src = _write(tmp_path, "s.parquet", n=600)
    base = ["replay", str(src), "--algos", "tc,bfs", "--device", "cpu", "--batch-size", "100"]
    assert main(base + ["--window", "150", "--snapshot", str(tmp_path / "w.arrow"),
                        "--max-events", "300"]) == 0
    assert main(base + ["--snapshot", str(tmp_path / "nw.arrow"), "--max-events", "300"]) == 0
    capsys.readouterr()
    assert main(base + ["--window", "150", "--from-snapshot", str(tmp_path / "w.arrow"),
                        "--resume", "--report", str(tmp_path / "r.csv")]) == 0
    out = capsys.readouterr().out
    assert "start       snapshot" in out and "event 300, batch 3" in out
    whole = replay(src, batch_size=100, window=150, algos="tc,bfs", device="cpu")
    resumed = pa.csv.read_csv(tmp_path / "r.csv").to_pylist()
    assert [r["triangles"] for r in resumed] == whole["triangles"][3:].tolist()
    assert [r["batch"] for r in resumed] == [3, 4, 5]
    g = hornet.Graph(directed=True, device="cpu", edge_properties={"last_seen": np.int64})
    g.insert_edges([0], [1], last_seen=[5])
    g.save(tmp_path / "plain.arrow")
    cases = [
        (["--window", "150", "--from-snapshot", str(tmp_path / "nw.arrow")],
         "nw.arrow: the snapshot's edges carry no last_seen"),
        (["--window", "150", "--from-snapshot", str(tmp_path / "plain.arrow")],
         "plain.arrow: the snapshot holds no replay position"),
        (["--from-snapshot", str(tmp_path / "plain.arrow"), "--resume"],
         "--resume needs it"),
        (["--resume"], "--resume needs --from-snapshot"),
    ]
    for extra, needle in cases:
        code = main(base + extra)
        err = capsys.readouterr().err
        assert code != 0 and needle in err, (extra, err)
    with pytest.raises(ReplayError, match="resume needs a snapshot"):
        replay(src, resume=True)
