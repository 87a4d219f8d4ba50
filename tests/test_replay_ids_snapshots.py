"""hornet replay with ids as users have them (--map-ids) and with snapshots
(--from-snapshot, --snapshot, --snapshot-every); hornet convert --map-ids.

Oracles: the same stream relabelled by hand (dense ids in order of first appearance, event by
event, src before dst) and replayed without a map; a graph built from scratch from the events
a snapshot should hold; the replay of the whole stream at once."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hornet
from streams.cli import main
from streams.replay import ReplayError, replay

ALGOS = "tc,ktruss,bfs,spmv"
COLUMNS = ("triangles", "k_max", "bfs_reached", "spmv_sum", "edges", "inserted", "deleted")


def _stream(tmp_path, n=1500, seed=3):
    """Files of one stream with 64-bit ids, string ids, and relabelled by hand."""
    rng = np.random.default_rng(seed)
    pool = rng.integers(2**31, 2**63 - 1, 40, dtype=np.int64)
    s, d = pool[rng.integers(0, 40, n)], pool[rng.integers(0, 40, n)]
    op = np.where(rng.random(n) < 0.2, -1, 1).astype(np.int8)
    w = rng.integers(1, 9, n).astype(np.float64)
    pq.write_table(pa.table({"src": s, "dst": d, "op": op, "weight": w}), tmp_path / "hash.parquet")
    pq.write_table(pa.table({"src": [f"user {x}" for x in s], "dst": [f"user {x}" for x in d],
                             "op": op, "weight": w}), tmp_path / "names.parquet")
    return s, d, op, w


def _relabelled(tmp_path, s, d, op, w, first=None):
    ids = {} if first is None else {first: 0}
    for a, b in zip(s.tolist(), d.tolist()):
        ids.setdefault(a, len(ids))
        ids.setdefault(b, len(ids))
    hs = np.array([ids[x] for x in s.tolist()])
    hd = np.array([ids[x] for x in d.tolist()])
    pq.write_table(pa.table({"src": hs, "dst": hd, "op": op, "weight": w}),
                   tmp_path / "hand.parquet")
    return ids


@pytest.mark.parametrize("directed", [False, True])
def test_mapped_replay_equals_the_hand_relabelled_one(device, tmp_path, directed):
    s, d, op, w = _stream(tmp_path)
    ids = _relabelled(tmp_path, s, d, op, w)
    kw = dict(batch_size=250, directed=directed, algos=ALGOS, device=device, verify=True)
    want = replay(tmp_path / "hand.parquet", **kw)
    for name, label in (("hash.parquet", int(s[0])), ("names.parquet", f"user {s[0]}")):
        got = replay(tmp_path / name, map_ids=True, **kw)
        for c in COLUMNS:
            assert got.columns[c] == want.columns[c], (name, c)
        assert got.summary["bfs_source"] == label             # named by its original id
        assert want.summary["bfs_source"] == ids[int(s[0])] == 0
        assert got.summary["vertex_map"]["ids"] == len(ids)


def test_given_bfs_source_is_an_original_id(tmp_path):
    s, d, op, w = _stream(tmp_path)
    source = int(d[7])
    ids = _relabelled(tmp_path, s, d, op, w, first=source)
    want = replay(tmp_path / "hand.parquet", batch_size=300, algos="bfs", device="cpu",
                  bfs_source=ids[source])
    got = replay(tmp_path / "hash.parquet", batch_size=300, algos="bfs", device="cpu",
                 map_ids=True, bfs_source=source)
    assert got.columns["bfs_reached"] == want.columns["bfs_reached"]
    assert got.summary["bfs_source"] == source


def test_cli_map_ids_names_the_source_and_refuses_without(capsys, tmp_path):
    s, *_ = _stream(tmp_path)
    code = main(["replay", str(tmp_path / "names.parquet"), "--map-ids", "--algos", "bfs",
                 "--device", "cpu", "--bfs-source", f"user {s[3]}"])
    out = capsys.readouterr().out
    assert code == 0 and f"(from vertex user {s[3]})" in out and "ids         mapped" in out
    for name, needle in (("names.parquet", "strings"), ("hash.parquet", "beyond")):
        code = main(["replay", str(tmp_path / name), "--algos", "none", "--device", "cpu"])
        err = capsys.readouterr().err
        assert code == 1 and name in err and "--map-ids" in err and needle in err


def test_convert_map_ids_keeps_the_originals(capsys, tmp_path):
    s, d, op, w = _stream(tmp_path)
    _relabelled(tmp_path, s, d, op, w)
    code = main(["convert", str(tmp_path / "names.parquet"), str(tmp_path / "dense.arrow"),
                 "--map-ids"])
    assert code == 0, capsys.readouterr().err
    t = pa.ipc.open_file(str(tmp_path / "dense.arrow")).read_all()
    hand = pq.read_table(tmp_path / "hand.parquet")
    assert t.column("src").to_pylist() == hand.column("src").to_pylist()
    assert t.column("dst").to_pylist() == hand.column("dst").to_pylist()
    assert t.column("src_original").to_pylist() == [f"user {x}" for x in s.tolist()]
    a = replay(tmp_path / "dense.arrow", batch_size=200, algos=ALGOS, device="cpu")
    b = replay(tmp_path / "hand.parquet", batch_size=200, algos=ALGOS, device="cpu")
    assert a.columns["triangles"] == b.columns["triangles"]
    code = main(["convert", str(tmp_path / "names.parquet"), str(tmp_path / "x.arrow")])
    err = capsys.readouterr().err
    assert code == 1 and "names.parquet" in err and "--map-ids" in err


def _first_events_graph(s, d, op, k, directed, ids):
    """The graph after the first ``k`` events, built event by event in Python."""
    present = set()
    for a, b, o in zip(s[:k].tolist(), d[:k].tolist(), op[:k].tolist()):
        if a == b:
            continue
        key = (a, b) if directed else tuple(sorted((a, b)))
        (present.add if o > 0 else present.discard)(key)
    return present


@pytest.mark.parametrize("map_ids", [False, True])
def test_snapshot_every_and_resume(tmp_path, map_ids):
    s, d, op, w = _stream(tmp_path, n=1200)
    ids = _relabelled(tmp_path, s, d, op, w)
    src = tmp_path / ("hash.parquet" if map_ids else "hand.parquet")
    snap = tmp_path / "snap.parquet"
    seen = {}

    def look(row):         # the file holds the graph after the last multiple of 2 batches
        if row["batch"] >= 2:
            g = hornet.Graph.load(snap, device="cpu")
            es, ed = g.edges()
            seen[row["batch"]] = {tuple(sorted(e)) for e in zip(es.tolist(), ed.tolist())}

    whole = replay(src, batch_size=200, directed=False, algos=ALGOS, device="cpu",
                   map_ids=map_ids, snapshot=snap, snapshot_every=2, on_batch=look)
    assert sorted(seen) == [2, 3, 4, 5]
    for batch, edges in seen.items():
        k = 200 * 2 * (batch // 2)
        want = _first_events_graph(s, d, op, k, False, ids)
        if not map_ids:
            want = {tuple(sorted((ids[a], ids[b]))) for a, b in want}
        assert edges == want, batch
    # the end state was written too (6 batches: the last multiple of 2)
    g = hornet.Graph.load(snap, device="cpu")
    assert (g.vertex_map is not None) == map_ids and g.num_edges == whole.summary["edges"]
    # resume: the first 700 events, a snapshot, then the rest from it
    half = tmp_path / "half.parquet"
    replay(src, batch_size=100, directed=False, algos="none", device="cpu", map_ids=map_ids,
           max_events=700, snapshot=half)
    rest = tmp_path / ("rest_" + src.name)
    pq.write_table(pq.read_table(src).slice(700), rest)
    resumed = replay(rest, batch_size=100, directed=False, algos=ALGOS, device="cpu",
                     map_ids=map_ids, from_snapshot=half, verify=True)
    for c in ("triangles", "k_max", "spmv_sum", "edges"):
        assert resumed.summary["analytics"].get(c, resumed.summary.get(c)) == \
            whole.summary["analytics"].get(c, whole.summary.get(c)), c


def test_snapshot_errors(capsys, tmp_path):
    _stream(tmp_path)
    g = hornet.Graph(directed=True, device="cpu")
    g.insert_edges([0], [1])
    g.save(tmp_path / "directed.arrow")
    cases = [
        (["--snapshot-every", "2"], "--snapshot-every needs --snapshot"),
        (["--snapshot", str(tmp_path / "s.csv")], ".arrow or .parquet"),
        (["--from-snapshot", str(tmp_path / "none.arrow")], "none.arrow"),
        (["--from-snapshot", str(tmp_path / "directed.arrow"), "--undirected"],
         "directed.arrow: the snapshot holds a directed graph"),
        (["--from-snapshot", str(tmp_path / "directed.arrow"), "--window", "10"], "window"),
    ]
    for extra, needle in cases:
        code = main(["replay", str(tmp_path / "hash.parquet"), "--map-ids", "--algos", "none",
                     "--device", "cpu", *extra])
        err = capsys.readouterr().err
        assert code != 0 and needle in err, (extra, err)
    with pytest.raises(ReplayError, match="snapshot_every"):
        replay(tmp_path / "hash.parquet", map_ids=True, snapshot=tmp_path / "s.arrow",
               snapshot_every=0)


def test_negative_64_bit_ids_are_ids_of_the_map(capsys, tmp_path):
    """Signed 64-bit ids (hashes) below zero: mapped by --map-ids in replay and convert, and
    refused without it, naming the file and the event."""
    rng = np.random.default_rng(9)
    pool = rng.integers(-2**63, -1, 30, dtype=np.int64)
    s, d = pool[rng.integers(0, 30, 900)], pool[rng.integers(0, 30, 900)]
    op = np.ones(900, np.int8)
    w = np.ones(900)
    pq.write_table(pa.table({"src": s, "dst": d}), tmp_path / "neg.parquet")
    _relabelled(tmp_path, s, d, op, w)
    kw = dict(batch_size=100, directed=False, algos=ALGOS, device="cpu")
    want = replay(tmp_path / "hand.parquet", **kw)
    got = replay(tmp_path / "neg.parquet", map_ids=True, verify=True, **kw)
    for c in COLUMNS:
        assert got.columns[c] == want.columns[c], c
    assert got.summary["bfs_source"] == int(s[0])
    assert main(["convert", str(tmp_path / "neg.parquet"), str(tmp_path / "n.arrow"),
                 "--map-ids"]) == 0
    t = pa.ipc.open_file(str(tmp_path / "n.arrow")).read_all()
    assert t.column("dst_original").to_pylist() == d.tolist()
    capsys.readouterr()
    code = main(["replay", str(tmp_path / "neg.parquet"), "--algos", "none", "--device", "cpu"])
    err = capsys.readouterr().err
    assert code == 1 and "neg.parquet" in err and "negative vertex id" in err and "event 0" in err
