"""hornet replay and convert with unsigned 64-bit vertex ids of 2^63 and more (hashes) in an
Arrow stream: mapped by --map-ids without loss, reported in the original ids, refused
without --map-ids naming the file and the event (row).

Oracle: the same stream relabelled by hand (dense ids in order of first appearance, event by
event, src before dst, Python integers) and replayed without a map."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import hornet
from streams.cli import main
from streams.replay import ReplayError, replay

ALGOS = "tc,ktruss,bfs,spmv"
COLUMNS = ("triangles", "k_max", "bfs_reached", "spmv_sum", "edges", "inserted", "deleted")
TOP = 2**63          # the first id beyond int64
FIRST_BIG_ROW = 2    # the first event naming an id >= 2^63 (in src)


def _write_arrow(path, table: pa.Table) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table, max_chunksize=700)       # several record batches


def _uint64_stream(tmp_path, n=1200, seed=5):
    """``big.arrow``: uint64 ids, half of them >= 2^63 (2^64 - 1 included), inserts and
    deletes, weights; rows 0 and 1 name small ids only, row 2's src is >= 2^63. Also
    ``hand.arrow``, the same stream relabelled by hand. Returns (src, dst, ids): the ids as
    Python integers and the hand relabelling."""
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 2**62, 20, dtype=np.uint64)
    big = rng.integers(TOP, 2**64 - 1, 19, dtype=np.uint64, endpoint=True)
    pool = np.concatenate([small, big, np.array([2**64 - 1], np.uint64)])
    s, d = pool[rng.integers(0, pool.size, n)], pool[rng.integers(0, pool.size, n)]
    s[:2], d[:2] = small[:2], small[2:4]
    s[FIRST_BIG_ROW], d[FIRST_BIG_ROW] = big[0], small[5]
    op = np.where(rng.random(n) < 0.2, -1, 1).astype(np.int8)
    op[:FIRST_BIG_ROW + 1] = 1
    w = rng.integers(1, 9, n).astype(np.float64)
    _write_arrow(tmp_path / "big.arrow", pa.table({"src": pa.array(s, pa.uint64()),
                                                   "dst": pa.array(d, pa.uint64()),
                                                   "op": op, "weight": w}))
    src, dst = [int(x) for x in s.tolist()], [int(x) for x in d.tolist()]
    ids: dict = {}
    for a, b in zip(src, dst):
        ids.setdefault(a, len(ids))
        ids.setdefault(b, len(ids))
    _write_arrow(tmp_path / "hand.arrow",
                 pa.table({"src": pa.array([ids[x] for x in src], pa.int64()),
                           "dst": pa.array([ids[x] for x in dst], pa.int64()),
                           "op": op, "weight": w}))
    return src, dst, ids


def test_uint64_ids_replay_equals_the_hand_relabelled_one(device, tmp_path):
    src, dst, ids = _uint64_stream(tmp_path)
    assert max(src) == 2**64 - 1 or max(dst) == 2**64 - 1
    kw = dict(batch_size=200, directed=False, algos=ALGOS, device=device, verify=True)
    want = replay(tmp_path / "hand.arrow", **kw)
    got = replay(tmp_path / "big.arrow", map_ids=True, **kw)
    for c in COLUMNS:
        assert got.columns[c] == want.columns[c], c
    assert got.summary["vertex_map"] == {"kind": "uint", "ids": len(ids)}
    assert got.summary["bfs_source"] == src[0] == int(got.summary["bfs_source"])
    # a BFS source given as an id >= 2^63 is mapped too (and reported as given)
    source = src[FIRST_BIG_ROW]
    got = replay(tmp_path / "big.arrow", map_ids=True, batch_size=200, algos="bfs",
                 device=device, bfs_source=source)
    assert got.summary["bfs_source"] == source
    relabelled = replay(tmp_path / "hand.arrow", batch_size=200, algos="bfs", device=device,
                        bfs_source=ids[source])
    # the mapped replay numbers the source 0, the hand relabelling 2: reached counts do not
    # depend on the numbering
    assert got.columns["bfs_reached"] == relabelled.columns["bfs_reached"]


def test_uint64_map_in_snapshots_and_convert(tmp_path):
    src, dst, ids = _uint64_stream(tmp_path, n=900)
    snap = tmp_path / "snap.arrow"
    whole = replay(tmp_path / "big.arrow", batch_size=150, directed=False, algos="tc,spmv",
                   device="cpu", map_ids=True)
    replay(tmp_path / "big.arrow", batch_size=150, directed=False, algos="none", device="cpu",
           map_ids=True, max_events=450, snapshot=snap)
    g = hornet.Graph.load(snap, device="cpu")
    assert g.vertex_map.kind == "uint"
    seen = list(dict.fromkeys(v for pair in zip(src[:450], dst[:450]) for v in pair))
    assert g.vertex_map.originals().tolist() == seen
    resumed = replay(tmp_path / "big.arrow", batch_size=150, directed=False, algos="tc,spmv",
                     device="cpu", map_ids=True, from_snapshot=snap, resume=True, verify=True)
    for c in ("triangles", "spmv_sum", "edges"):
        assert resumed.columns[c] == whole.columns[c][3:], c
    # convert --map-ids: dense ids in order of first appearance, the uint64 originals kept
    assert main(["convert", str(tmp_path / "big.arrow"), str(tmp_path / "dense.arrow"),
                 "--map-ids"]) == 0
    t = pa.ipc.open_file(str(tmp_path / "dense.arrow")).read_all()
    assert t.schema.field("src_original").type == pa.uint64()
    assert t.column("src_original").to_pylist() == src
    assert t.column("dst_original").to_pylist() == dst
    assert t.column("src").to_pylist() == [ids[x] for x in src]


def test_uint64_ids_without_map_ids_name_the_file_and_row(capsys, tmp_path):
    src, *_ = _uint64_stream(tmp_path, n=300)
    for argv in (["replay", str(tmp_path / "big.arrow"), "--algos", "none", "--device", "cpu"],
                 ["convert", str(tmp_path / "big.arrow"), str(tmp_path / "o.arrow"),
                  "--id-type", "int64"]):
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 1, argv
        for needle in ("big.arrow", f"event {FIRST_BIG_ROW}", str(src[FIRST_BIG_ROW]),
                       "--map-ids"):
            assert needle in err, (argv, needle, err)
    assert not (tmp_path / "o.arrow").exists()
    # with --map-ids the CLI names the BFS source by its original id
    code = main(["replay", str(tmp_path / "big.arrow"), "--map-ids", "--algos", "bfs",
                 "--device", "cpu", "--bfs-source", str(src[FIRST_BIG_ROW])])
    out = capsys.readouterr().out
    assert code == 0 and f"(from vertex {src[FIRST_BIG_ROW]})" in out
    for bad in (-1, 2**64):
        with pytest.raises(ReplayError, match="unsigned 64-bit"):
            replay(tmp_path / "big.arrow", map_ids=True, algos="bfs", device="cpu",
                   bfs_source=bad, batch_size=100)
