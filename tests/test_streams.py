"""streams: the Arrow edge-stream format (round trips, record-batch-wise reading, schema
validation), converters against hornet.io, batching, the shipped default stream, and the replay
engine's semantics (batches, op streams, self-loops, the sliding window) against a brute-force
Python reference."""
from __future__ import annotations

import json
import os

# Many tiny batches: with OpenMP's default spinning workers each parallel Numba kernel call
# waits a scheduler tick on a busy 2-core machine. Must be set before the first kernel runs.

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streams
from streams import (EventBlock, StreamFormatError, iter_batches, open_stream, read_stream,
                     stream_schema, validate_schema, write_stream)
from streams.convert import convert
from streams.format import detect_container
from streams.window import EventWindow
from streams.writer import StreamWriter
from streams.replay import ReplayContext, ReplayError, VerificationError, replay
from streams.verify import ReferenceReplay, verify_batch

from conftest import DATA_DIR, needs_data

# ---------------------------------------------------------------------------------------------
# helpers


def synthetic(n=1000, nv=50, seed=0, op=False, weight=False, time=False, batch=None):
    rng = np.random.default_rng(seed)
    cols = {"src": rng.integers(0, nv, n), "dst": rng.integers(0, nv, n)}
    if op:
        cols["op"] = np.where(rng.random(n) < 0.7, 1, -1).astype(np.int8)
    if weight:
        cols["weight"] = rng.integers(1, 5, n).astype(np.float64)
    if time:
        cols["time"] = np.cumsum(rng.integers(0, 10, n)).astype(np.int64)
    if batch is not None:
        cols["batch"] = np.arange(n) // batch
    return cols


class EdgeSet:
    """A custom analytic (the replay accepts analytic objects): the graph's edge set after
    each batch, as a Python set of (src, dst) pairs."""

    name, column, kind = "edgeset", "edgeset", "test"

    def start(self, g, ctx):
        pass

    def update(self, g, changes):
        s, d = g.edges()
        return set(zip(s.tolist(), d.tolist()))


def brute_force(src, dst, op, bounds, directed, window):
    """Event-by-event Python model of the replay contract: the edge set after each batch and
    the self-loop count."""
    last = {}
    out = []
    loops = 0
    for a, b in bounds:
        for i in range(a, b):
            u, v = int(src[i]), int(dst[i])
            if u == v:
                loops += 1
                continue
            k = (u, v) if directed else (min(u, v), max(u, v))
            if op is None or op[i] > 0:
                last[k] = i
            else:
                last.pop(k, None)
        if window is not None:
            for k in [k for k, t in last.items() if t < b - window]:
                del last[k]
        out.append(set(last))
    return out, loops


# ---------------------------------------------------------------------------------------------
# format: schema, round trips, record-batch-wise reading


def test_stream_schema_and_validation():
    s = stream_schema(op=True, weight=True, time="float64", batch=True)
    assert s.names == ["src", "dst", "op", "weight", "time", "batch"]
    assert s.field("src").type == pa.int32() and s.field("op").type == pa.int8()
    assert s.metadata[b"hornet.stream"] == b"1"
    cols = validate_schema(s)
    assert cols.op and cols.weight and cols.time == "float64" and cols.batch
    c2 = validate_schema(pa.schema([("src", pa.uint16()), ("dst", pa.int64()),
                                    ("note", pa.string())]))
    assert not c2.op and c2.time is None and c2.ignored == ("note",)


@pytest.mark.parametrize("schema, needle", [
    (pa.schema([("src", pa.int64())]), "'dst'"),
    (pa.schema([("dst", pa.int64())]), "'src'"),
    (pa.schema([("src", pa.string()), ("dst", pa.int64())]), "'src' has type string"),
    (pa.schema([("src", pa.int64()), ("dst", pa.float64())]), "'dst' has type double"),
    (pa.schema([("src", pa.int64()), ("dst", pa.int64()), ("op", pa.float32())]), "'op'"),
    (pa.schema([("src", pa.int64()), ("dst", pa.int64()), ("time", pa.string())]), "'time'"),
    (pa.schema([("src", pa.int64()), ("dst", pa.int64()), ("weight", pa.string())]), "'weight'"),
    (pa.schema([("src", pa.int64()), ("dst", pa.int64()), ("batch", pa.float64())]), "'batch'"),
])
def test_schema_errors_name_the_column(schema, needle):
    with pytest.raises(StreamFormatError, match=needle):
        validate_schema(schema)


@pytest.mark.parametrize("ext", [".arrow", ".arrows", ".parquet"])
@pytest.mark.parametrize("compression", ["zstd", "lz4", None])
def test_round_trip(tmp_path, ext, compression):
    if ext == ".parquet" and compression == "lz4":
        compression = "zstd"
    data = synthetic(1000, op=True, weight=True, time=True, batch=100)
    p = tmp_path / f"s{ext}"
    write_stream(p, data, compression=compression, chunk_rows=128, metadata={"source": "t"})
    assert detect_container(p) == {".arrow": "ipc-file", ".arrows": "ipc-stream",
                                   ".parquet": "parquet"}[ext]
    with open_stream(p, block_rows=100) as rd:
        assert rd.metadata["source"] == "t" and rd.metadata["hornet.stream"] == "1"
        assert rd.columns.names() == ["src", "dst", "op", "weight", "time", "batch"]
        sizes = [rb.num_rows for rb in rd.record_batches()]
        assert sum(sizes) == 1000 and max(sizes) <= 100 and len(sizes) >= 10
        blocks = list(rd.blocks())
    assert [b.start for b in blocks] == list(np.cumsum([0] + [len(b) for b in blocks[:-1]]))
    whole = EventBlock.concat(blocks)
    for k, v in data.items():
        np.testing.assert_array_equal(getattr(whole, k), v)
    t = read_stream(p)
    assert t.num_rows == 1000 and t.schema.field("src").type == pa.int32()


def test_writer_incremental_and_int64_ids(tmp_path):
    p = tmp_path / "big.arrows"
    with StreamWriter(p, time="int64", id_type="int64") as w:
        for i in range(5):
            w.write(np.arange(10) + 2**40, np.arange(10), time=np.arange(10) + 10 * i)
    t = read_stream(p)
    assert t.num_rows == 50 and t.column("src").to_numpy()[0] == 2**40
    with pytest.raises(StreamFormatError, match="does not fit int32"):
        write_stream(tmp_path / "x.arrow", {"src": [2**40], "dst": [1]})
    assert not (tmp_path / "x.arrow").exists()   # aborted writes leave nothing behind


def test_record_batch_wise_reading_is_lazy(tmp_path):
    """Reading hands out one record batch at a time: stopping early reads no further."""
    p = tmp_path / "s.arrows"
    write_stream(p, synthetic(10_000), chunk_rows=1000)
    rd = open_stream(p)
    it = rd.record_batches()
    first = next(it)
    assert first.num_rows == 1000 and rd.num_rows is None   # IPC stream: size unknown
    rd.close()
    pf = tmp_path / "s.parquet"
    write_stream(pf, synthetic(10_000), chunk_rows=1000)
    with open_stream(pf, block_rows=256) as rd:
        assert rd.num_rows == 10_000
        assert max(rb.num_rows for rb in rd.record_batches()) == 256


@pytest.mark.parametrize("cols, needle", [
    ({"src": [0, -1], "dst": [1, 2]}, "negative vertex id -1 at event 1"),
    ({"src": [0, 1], "dst": [1, 2], "op": np.array([1, 2], np.int8)}, "value 2 at event 1"),
    ({"src": pa.array([0, None], pa.int64()), "dst": [1, 2]}, "null value at event 1"),
])
def test_bad_values(tmp_path, cols, needle):
    t = pa.table({k: (v if isinstance(v, pa.Array) else pa.array(v)) for k, v in cols.items()})
    p = tmp_path / "bad.arrow"
    with pa.OSFile(str(p), "wb") as f, pa.ipc.new_file(f, t.schema) as w:
        w.write_table(t)
    with pytest.raises(StreamFormatError, match=needle):
        list(open_stream(p).blocks())


def test_corrupt_and_missing_files(tmp_path):
    p = tmp_path / "s.arrow"
    write_stream(p, synthetic(5000))
    raw = p.read_bytes()
    (tmp_path / "trunc.arrow").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(StreamFormatError, match="corrupt"):
        list(open_stream(tmp_path / "trunc.arrow").blocks())
    (tmp_path / "junk.arrow").write_bytes(b"this is not arrow")
    with pytest.raises(StreamFormatError, match="not an Arrow IPC file"):
        open_stream(tmp_path / "junk.arrow")
    (tmp_path / "junk.parquet").write_bytes(b"PAR1garbage")
    with pytest.raises(StreamFormatError, match="corrupt"):
        list(open_stream(tmp_path / "junk.parquet").blocks())
    (tmp_path / "empty.arrow").write_bytes(b"")
    with pytest.raises(StreamFormatError, match="empty"):
        open_stream(tmp_path / "empty.arrow")
    with pytest.raises(FileNotFoundError):
        open_stream(tmp_path / "nope.arrow")


def test_tables_and_dicts_are_streams():
    rd = open_stream(synthetic(10, op=True))
    assert rd.container == "table" and rd.columns.op
    assert len(EventBlock.concat(list(rd.blocks()))) == 10


# ---------------------------------------------------------------------------------------------
# batching


def _bounds(batches):
    return [(b.start, b.stop) for b in batches]


def test_batching_fixed_count_with_partial_last_across_blocks():
    rd = open_stream(synthetic(1000), block_rows=64)
    bs = list(iter_batches(rd, batch_size=300))
    assert _bounds(bs) == [(0, 300), (300, 600), (600, 900), (900, 1000)]
    assert [b.index for b in bs] == [0, 1, 2, 3]


def test_batching_by_column_runs():
    ids = np.array([5, 5, 5, 2, 2, 9, 9, 9, 9, 5])        # runs in file order
    d = {"src": np.arange(10), "dst": np.arange(10) + 1, "batch": ids}
    bs = list(iter_batches(open_stream(d, block_rows=3), batch_size=4))
    assert _bounds(bs) == [(0, 3), (3, 5), (5, 9), (9, 10)]
    assert [b.label for b in bs] == [5, 2, 9, 5]
    bs = list(iter_batches(open_stream(d, block_rows=3), batch_size=4, use_batch_column=False))
    assert _bounds(bs) == [(0, 4), (4, 8), (8, 10)]


def test_batching_by_time_window():
    t = np.array([100, 101, 109, 110, 115, 131, 140, 141])
    d = {"src": np.zeros(8, int), "dst": np.ones(8, int), "time": t}
    bs = list(iter_batches(open_stream(d, block_rows=2), batch_time=10))
    assert _bounds(bs) == [(0, 3), (3, 5), (5, 6), (6, 8)]
    with pytest.raises(StreamFormatError, match="time"):
        list(iter_batches(open_stream({"src": [1], "dst": [2]}), batch_time=10,
                          columns=open_stream({"src": [1], "dst": [2]}).columns))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 200), block_rows=st.integers(1, 50), batch_size=st.integers(1, 60),
       runs=st.lists(st.integers(1, 30), min_size=1, max_size=10))
def test_batching_properties(n, block_rows, batch_size, runs):
    d = {"src": np.arange(n), "dst": np.arange(n)}
    bs = list(iter_batches(open_stream(d, block_rows=block_rows), batch_size=batch_size))
    assert _bounds(bs) == [(a, min(a + batch_size, n)) for a in range(0, n, batch_size)]
    # batch column: runs of equal ids (neighbouring runs get different ids)
    ids = np.repeat(np.arange(len(runs)) % 3, runs)
    m = ids.shape[0]
    d = {"src": np.zeros(m, int), "dst": np.ones(m, int), "batch": ids}
    bs = list(iter_batches(open_stream(d, block_rows=block_rows), batch_size=batch_size))
    ends = np.cumsum(runs).tolist()
    assert _bounds(bs) == list(zip([0] + ends[:-1], ends))
    assert all(len(b) == len(b.events.src) for b in bs)


# ---------------------------------------------------------------------------------------------
# converters and the shipped stream


CONVERT_FILES = ["CollegeMsg.txt.gz", "soc-sign-bitcoinalpha.csv.gz", "out.radoslaw_email_email.gz",
                 "delaunay_n10.mtx.gz", "email-Eu-core.txt.gz", "p2p-Gnutella08.txt.gz"]


@needs_data
@pytest.mark.parametrize("name", CONVERT_FILES)
def test_convert_matches_hornet_io(tmp_path, name):
    from hornet.io import read_edges
    src, dst, extra = read_edges(DATA_DIR / name)
    out = tmp_path / "out.arrow"
    # small text blocks: the converter streams block by block
    res = convert(DATA_DIR / name, out, text_block_bytes=1 << 16, chunk_rows=5000)
    assert res.rows == src.shape[0]
    with open_stream(out) as rd:
        assert rd.metadata["source"] == name
        assert len(list(rd.record_batches())) >= src.shape[0] // 5000
        t = rd.read_all()
    np.testing.assert_array_equal(t.column("src").to_numpy(), src)
    np.testing.assert_array_equal(t.column("dst").to_numpy(), dst)
    if "time" in extra:
        np.testing.assert_array_equal(t.column("time").to_numpy(), extra["time"])
        assert t.schema.field("time").type == pa.from_numpy_dtype(extra["time"].dtype)
    else:
        assert "time" not in t.column_names
    w = extra.get("weight", extra.get("rating"))
    if w is not None:
        np.testing.assert_array_equal(t.column("weight").to_numpy(), w.astype(np.float64))
    else:
        assert "weight" not in t.column_names
    if name.endswith(".mtx.gz"):
        assert rd.metadata.get("symmetric") == "true"
    if "bitcoin" in name:
        assert rd.metadata.get("weight_source") == "rating"


@needs_data
def test_text_files_are_streams_on_the_fly():
    """A text file reads like a stream (used by `hornet replay FILE.txt.gz`)."""
    from hornet.io import read_edges
    src, dst, extra = read_edges(DATA_DIR / "soc-sign-bitcoinotc.csv.gz")
    with open_stream(DATA_DIR / "soc-sign-bitcoinotc.csv.gz", text_block_bytes=1 << 16) as rd:
        assert rd.container == "text" and rd.columns.time == "float64" and rd.columns.weight
        blocks = list(rd.blocks())
    assert len(blocks) > 1
    whole = EventBlock.concat(blocks)
    np.testing.assert_array_equal(whole.src, src)
    np.testing.assert_array_equal(whole.time, extra["time"])
    np.testing.assert_array_equal(whole.weight, extra["rating"])


def test_convert_between_containers_and_no_partial_output(tmp_path):
    a = tmp_path / "a.arrow"
    write_stream(a, synthetic(500, op=True, time=True))
    convert(a, tmp_path / "b.parquet")
    convert(tmp_path / "b.parquet", tmp_path / "c.arrows", compression="lz4")
    t1, t3 = read_stream(a), read_stream(tmp_path / "c.arrows")
    assert t1.select(t3.column_names).equals(t3)
    bad = tmp_path / "bad.txt"
    bad.write_text("1 2\n3 x\n")
    with pytest.raises(ValueError, match="line 2"):
        convert(bad, tmp_path / "d.arrow")
    assert not (tmp_path / "d.arrow").exists() and not (tmp_path / "d.arrow.partial").exists()


@needs_data
def test_shipped_default_stream():
    from hornet.io import read_edges
    p = streams.default_stream_path()
    assert os.path.getsize(p) < 1 << 20
    assert list(streams.shipped_streams()) == ["collegemsg"]
    with open_stream(p) as rd:
        assert rd.container == "ipc-file" and rd.num_rows == 59_835
        assert rd.metadata["source"] == "CollegeMsg.txt.gz"
        t = rd.read_all()
    # compressed: well under the raw size of its buffers
    assert os.path.getsize(p) < t.nbytes / 2
    src, dst, extra = read_edges(DATA_DIR / "CollegeMsg.txt.gz")
    np.testing.assert_array_equal(t.column("src").to_numpy(), src)
    np.testing.assert_array_equal(t.column("dst").to_numpy(), dst)
    np.testing.assert_array_equal(t.column("time").to_numpy(), extra["time"])


# ---------------------------------------------------------------------------------------------
# replay semantics


def _replay_sets(data, batch_size, directed, window, **kw):
    res = replay(data, batch_size=batch_size, window=window, directed=directed,
                 algos=[EdgeSet()], device="cpu", **kw)
    return res, res.columns["edgeset"]


def test_replay_window_by_hand():
    # events: 0:(1,2) 1:(2,3) 2:(1,2) 3:(4,4) loop 4:(3,4) 5:(5,6)
    d = {"src": [1, 2, 1, 4, 3, 5], "dst": [2, 3, 2, 4, 4, 6]}
    res, sets = _replay_sets(d, 2, True, window=2)
    # after batch [0,2): threshold 0: nothing expires
    # after [2,4): threshold 2: (2,3) last seen 1 < 2 expires; (1,2) refreshed at 2 stays
    # after [4,6): threshold 4: (1,2) (last 2) expires; (3,4)@4, (5,6)@5 stay
    assert sets == [{(1, 2), (2, 3)}, {(1, 2)}, {(3, 4), (5, 6)}]
    assert res.columns["self_loops"] == [0, 1, 0]
    assert res.columns["expired"] == [0, 1, 1] and res.columns["deleted"] == [0, 1, 1]
    assert res.summary["self_loops"] == 1 and res.summary["events"] == 6
    assert res.columns["vertices"][1] == 5          # the loop's id 4 is in the id space


def test_replay_op_stream_last_event_in_batch_wins():
    d = {"src": [1, 1, 2, 2, 1, 3], "dst": [2, 2, 3, 3, 2, 1],
         "op": np.array([1, -1, -1, 1, 1, -1], np.int8)}
    res, sets = _replay_sets(d, 3, True, None)
    # batch 0: +(1,2) -(1,2) -(2,3) -> {}; batch 1: +(2,3) +(1,2) -(3,1) -> {(1,2),(2,3)}
    assert sets == [set(), {(1, 2), (2, 3)}]
    res, sets = _replay_sets(d, 1, True, None)
    assert sets[-1] == {(1, 2), (2, 3)} and res.columns["deleted"] == [0, 1, 0, 0, 0, 0]


def test_replay_undirected_refresh_by_reverse_event():
    d = {"src": [1, 5, 2, 7], "dst": [2, 6, 1, 8]}
    _, sets = _replay_sets(d, 1, False, window=2)
    # (2,1) at event 2 refreshes {1,2}: after the batch ending at 4 (threshold 2) it stays
    # while (5,6), last seen at 1, expires
    assert sets == [{(1, 2)}, {(1, 2), (5, 6)}, {(1, 2), (5, 6)}, {(1, 2), (7, 8)}]


events_strategy = st.integers(1, 60).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 7), min_size=n, max_size=n),
    st.lists(st.integers(0, 7), min_size=n, max_size=n),
    st.one_of(st.none(), st.lists(st.sampled_from([1, 1, -1]), min_size=n, max_size=n))))


@settings(max_examples=50, deadline=None)
@given(ev=events_strategy, batch_size=st.integers(1, 12),
       window=st.one_of(st.none(), st.integers(0, 20)), directed=st.booleans())
def test_replay_matches_brute_force(ev, batch_size, window, directed):
    src, dst, op = ev
    d = {"src": np.array(src), "dst": np.array(dst)}
    if op is not None:
        d["op"] = np.array(op, np.int8)
    res, sets = _replay_sets(d, batch_size, directed, window, verify=True)
    n = len(src)
    bounds = [(a, min(a + batch_size, n)) for a in range(0, n, batch_size)]
    want, loops = brute_force(src, dst, op, bounds, directed, window)
    assert sets == want
    assert res.summary["self_loops"] == loops
    assert res.columns["edges"] == [len(s) for s in want]
    assert sum(res.columns["events"]) == n


def test_replay_batch_column_and_weights(tmp_path):
    d = synthetic(600, nv=30, op=True, weight=True, time=True, seed=3)
    d["batch"] = np.repeat([0, 1, 2, 7], [100, 250, 200, 50])
    p = tmp_path / "s.parquet"
    write_stream(p, d)
    res = replay(p, batch_size=10, window=150, directed=False, algos="tc,spmv", device="cpu",
                 verify=True)
    assert res.columns["events"] == [100, 250, 200, 50]
    assert res.columns["batch_id"] == [0, 1, 2, 7]
    assert res.summary["batching"] == "column"
    res2 = replay(p, batch_size=100, algos=(), device="cpu", use_batch_column=False)
    assert res2.columns["events"] == [100] * 6


def test_replay_report_columns_and_files(tmp_path):
    d = synthetic(400, nv=40, time=True, seed=1)
    res = replay(d, batch_size=150, algos="tc,ktruss,bfs,spmv", device="cpu", verify=True,
                 bfs_source=0)
    for c in ("batch", "events", "inserted", "deleted", "edges", "seconds", "triangles",
              "k_max", "bfs_reached", "spmv_sum"):
        assert c in res.columns and len(res.columns[c]) == 3
    assert res.columns["events"] == [150, 150, 100]
    assert res.summary["analytics"]["triangles"] == res.columns["triangles"][-1]
    assert res.summary["events_per_second"] > 0
    assert "events/s" in res.summary_text()
    for ext in (".csv", ".json", ".arrow"):
        res.write_report(tmp_path / f"r{ext}")
    import pyarrow.csv as pacsv
    assert pacsv.read_csv(tmp_path / "r.csv").column("edges").to_pylist() == res.columns["edges"]
    js = json.loads((tmp_path / "r.json").read_text())
    assert js["summary"]["events"] == 400 and len(js["rows"]) == 3
    t = pa.ipc.open_file(str(tmp_path / "r.arrow")).read_all()
    assert t.column("k_max").to_pylist() == res.columns["k_max"]
    assert json.loads(t.schema.metadata[b"hornet.replay.summary"])["batches"] == 3
    with pytest.raises(ReplayError, match=".csv"):
        res.write_report(tmp_path / "r.txt")


def test_replay_text_file_and_max_events():
    if not (DATA_DIR / "soc-sign-bitcoinalpha.csv.gz").exists():
        pytest.skip("no data")
    res = replay(DATA_DIR / "soc-sign-bitcoinalpha.csv.gz", batch_size=2000, max_events=5000,
                 algos="spmv", device="cpu", verify=True)
    assert res.summary["events"] == 5000 and res.columns["events"] == [2000, 2000, 1000]
    assert res.summary["container"] == "text"


def test_replay_errors():
    with pytest.raises(ReplayError, match="batch size"):
        replay({"src": [1], "dst": [2]}, batch_size=0)
    with pytest.raises(ReplayError, match="window"):
        replay({"src": [1], "dst": [2]}, window=-1)
    with pytest.raises(ReplayError, match="unknown analytic"):
        replay({"src": [1], "dst": [2]}, algos="tc,pagerank")
    with pytest.raises(ReplayError, match="int32 id space"):
        replay({"src": np.array([1, 2**40]), "dst": np.array([2, 3])}, algos=(), device="cpu")


def test_verification_catches_a_wrong_graph():
    import hornet
    g = hornet.Graph(directed=True, device="cpu")
    g.insert_edges([0, 1], [1, 2])
    ref = ReferenceReplay(True, False, False)
    ref.apply(EventBlock(0, np.array([0, 2]), np.array([1, 2])))   # (2, 2): a self-loop
    with pytest.raises(VerificationError, match="1 extra"):
        verify_batch(g, ref, [], {}, ReplayContext(True, 0), 0, None)




@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
@pytest.mark.parametrize("batch_size", [700, 5000])
def test_window_replay_of_insert_only_streams_verifies(device, weighted, directed, batch_size):
    """Insert-only streams with many repeats (inside batches and of present edges) and a
    window: after every batch the graph's edges, ``last_seen`` and ``weight`` equal the
    event-by-event reference model (``verify=True``), on both backends; small batches and
    planned ones (GPU) alike."""
    d = synthetic(20000, nv=300, weight=weighted, seed=11)
    res = replay(d, batch_size=batch_size, window=6000, directed=directed,
                 algos="spmv" if weighted else (), device=device, verify=True)
    assert res.summary["verified"] and res.summary["events"] == 20000
    assert res.summary["expired"] > 0
    assert sum(res.columns["expired"]) == res.summary["expired"]


@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
def test_windowed_batches_with_refreshes_expire_in_sorted_form(monkeypatch, directed):
    """A windowed CPU replay of batches over a wide id space that each repeat one pair of
    their own and one of the batch before (a refresh), window one batch: the batch's
    distinct edges are kept in sorted form and deleted in that form when their record
    expires whole, and every batch verifies against the event-by-event reference."""
    from hornet.batch import mixed
    rng = np.random.default_rng(5)
    b, nb = 3000, 6
    src = rng.integers(0, 1 << 20, b * nb)
    dst = rng.integers(0, 1 << 20, b * nb)
    for k in range(nb):
        at = k * b
        src[at + 7], dst[at + 7] = src[at + 3], dst[at + 3]             # a repeat in the batch
        if k:
            src[at + 11], dst[at + 11] = src[at - 5], dst[at - 5]       # the last batch's pair
    sorted_deletes = []
    inside = mixed._inside
    monkeypatch.setattr(mixed, "_inside", lambda e, n: sorted_deletes.append(1) or inside(e, n))
    res = replay({"src": src, "dst": dst}, batch_size=b, window=b, directed=directed,
                 algos=(), device="cpu", verify=True)
    assert res.summary["verified"] and res.summary["expired"] > 0
    # (a batch's record expires whole unless the next batch refreshes one of its edges)
    assert len(sorted_deletes) >= 1


def test_event_window_sorts_only_out_of_order_records():
    w = EventWindow(window=2)
    w.record(np.array([5, 1]), np.array([6, 2]), np.array([3, 1]))   # out of order: sorted
    w.record(np.array([7]), np.array([8]), np.array([4]))
    assert len(w) == 3

    def look_up(s, d):
        return np.ones(s.shape[0], bool), np.array([{1: 1, 5: 3, 7: 4}[x] for x in s.tolist()])
    s, d = w.expired(5, look_up)                                      # threshold 3
    assert s.tolist() == [1] and d.tolist() == [2]
    s, d = w.expired(7, look_up)                                      # threshold 5
    assert s.tolist() == [5, 7] and d.tolist() == [6, 8] and len(w) == 0


def test_event_window_decides_alone_while_refreshes_are_tracked():
    """With refreshes tracked, entries leaving the window expire unless a later refresh of
    their edge is queued, without looking the graph up; an untracked record makes every
    leaving entry looked up from then on (and the look-up required)."""
    w = EventWindow(window=2)
    asked = []
    last = {}

    def look_up(s, d):
        asked.append(list(zip(s.tolist(), d.tolist())))
        return (np.ones(s.shape[0], bool),
                np.array([last[k] for k in zip(s.tolist(), d.tolist())]))
    w.record(np.array([1, 3]), np.array([2, 4]), np.array([0, 1]), refresh=np.array([0, 0], bool))
    w.record(np.array([1]), np.array([2]), np.array([2]), refresh=np.array([True]))
    assert w.tracks_refreshes
    s, d = w.expired(4, look_up)                  # threshold 2: entries 0 and 1 leave
    assert list(zip(s.tolist(), d.tolist())) == [(3, 4)] and asked == []
    found, idx = w.latest(np.array([1, 3]), np.array([2, 4]))
    assert found.tolist() == [True, False] and idx[0] == 2
    s, d = w.expired(5, look_up)                  # threshold 3: the refresh itself leaves
    assert list(zip(s.tolist(), d.tolist())) == [(1, 2)] and asked == [] and len(w) == 0
    # (1, 2) is gone: a new insert of it is no refresh, and expires on its own
    w.record(np.array([1]), np.array([2]), np.array([5]), refresh=np.array([False]))
    s, d = w.expired(8, look_up)
    assert list(zip(s.tolist(), d.tolist())) == [(1, 2)]
    w.record(np.array([5]), np.array([6]), np.array([9]))          # untracked from now on
    assert not w.tracks_refreshes
    last[(5, 6)] = 9
    with pytest.raises(ValueError, match="look-up"):
        w.expired(12)
    w.record(np.array([7]), np.array([8]), np.array([12]))
    last[(7, 8)] = 12
    s, d = w.expired(15, look_up)
    assert list(zip(s.tolist(), d.tolist())) == [(7, 8)] and asked[-1] == [(7, 8)]


def test_latest_index_map_matches_a_dict():
    """:class:`LatestIndex` against a dict under random raises, removals and rebuilds."""
    from streams.window_index import LatestIndex
    rng = np.random.default_rng(5)
    m, ref = LatestIndex(), {}
    for _ in range(200):
        k = rng.integers(0, 3000, rng.integers(0, 400))
        v = rng.integers(0, 10**6, k.shape[0])
        m.raise_to(k, v)
        for a, b in zip(k.tolist(), v.tolist()):
            ref[a] = max(ref.get(a, -1), b)
        q = rng.integers(0, 3500, 300)
        assert m.get(q).tolist() == [ref.get(a, -1) for a in q.tolist()]
        r, rv = rng.integers(0, 3000, 300), rng.integers(0, 10**6, 300)
        m.remove_up_to(r, rv)
        for a, b in zip(r.tolist(), rv.tolist()):
            if a in ref and ref[a] <= b:
                del ref[a]
        assert len(m) == len(ref)


def test_latest_index_take_stale_matches_a_dict():
    """:meth:`LatestIndex.take_stale` over leaving entries in pieces: an entry's edge expires
    unless the dict holds a later index for it, and an expiring named edge leaves the dict
    (entries in index order, as the window pops them)."""
    from streams.window_index import LatestIndex
    rng = np.random.default_rng(11)
    m, ref = LatestIndex(), {}
    index = 0
    for _ in range(150):
        k = rng.integers(0, 2000, rng.integers(0, 200))
        v = rng.integers(index, index + 10**4, k.shape[0])
        m.raise_to(k, v)
        for a, b in zip(k.tolist(), v.tolist()):
            ref[a] = max(ref.get(a, -1), b)
        size = int(rng.integers(0, 300))
        idx = np.sort(rng.integers(index, index + 10**4, size)).astype(np.int64)
        index += 10**4
        key = rng.integers(0, 2500, size)
        s, d = (key // 50).astype(np.int32), (key % 50).astype(np.int32)   # key = s<<32|d
        cuts = np.sort(rng.integers(0, size + 1, 2))
        pieces = [(idx[a:b], s[a:b], d[a:b]) for a, b in
                  ((0, cuts[0]), (cuts[0], cuts[1]), (cuts[1], size))]
        got_s, got_d = m.take_stale(pieces)
        want = []
        for i in range(size):
            e = (int(s[i]) << 32) | int(d[i])
            later = ref.get(e, -1)
            if later <= idx[i]:
                want.append((int(s[i]), int(d[i])))
                ref.pop(e, None)
        assert list(zip(got_s.tolist(), got_d.tolist())) == want
        assert got_s.dtype == np.int32 and len(m) == len(ref)
        assert m.get(np.array(sorted(ref), np.int64)).tolist() == [ref[a] for a in sorted(ref)]


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(st.integers(0, 12), max_size=40), data=st.data())
def test_classify_events_matches_brute_force(keys, data):
    """Each event's class: NO_ENTRY if a later event of the batch has its key, else
    NEW_EDGE if its key was inserted, else REFRESH."""
    from streams.window_index import (NEW_EDGE, NO_ENTRY, REFRESH, classify_events,
                                      classify_one_extra, key_sum)
    inserted = data.draw(st.sets(st.sampled_from(sorted(set(keys)) or [0])))
    inserted = sorted(k for k in inserted if k in keys)
    got = classify_events(np.array(keys, np.int64), np.array(inserted, np.int64))
    want = [NO_ENTRY if k in keys[i + 1:] else (NEW_EDGE if k in inserted else REFRESH)
            for i, k in enumerate(keys)]
    assert got.tolist() == want
    if len(keys) - len(inserted) == 1:
        # the key-sum path: keys as (src, dst) = (k, k + 1), in the high and low halves
        s_ = np.array(keys, np.int64)
        k64 = (s_ << 32) | (s_ + 1)
        ins = np.array(inserted, np.int64)
        extra = (int(k64.view(np.uint64).sum()) - key_sum(ins, ins + 1, True)) % (1 << 64)
        assert classify_one_extra(k64, extra).tolist() == want


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 80), ids=st.sampled_from([6, 40, 1000]), seed=st.integers(0, 2**16),
       batch_size=st.integers(1, 25), window=st.integers(0, 40), directed=st.booleans(),
       weighted=st.booleans())
def test_windowed_insert_only_replay_matches_brute_force(n, ids, seed, batch_size, window,
                                                         directed, weighted):
    """Insert-only streams with a window, few or many repeats (so that batches take each of
    the window's classification paths: every event new, one extra event, the general one):
    the edge set after every batch equals the event-by-event model, and ``verify=True``
    checks weights and each edge's last event against the reference."""
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, ids, n), rng.integers(0, ids, n)
    d = {"src": src, "dst": dst}
    if weighted:
        d["weight"] = rng.integers(1, 9, n).astype(np.float64)
    res, sets = _replay_sets(d, batch_size, directed, window, verify=True)
    bounds = [(a, min(a + batch_size, n)) for a in range(0, n, batch_size)]
    want, loops = brute_force(src, dst, None, bounds, directed, window)
    assert sets == want and res.summary["self_loops"] == loops


def test_key_sum_names_the_one_extra_event(device):
    """The sum of an inserted change's edge keys, reduced on the change's device, less from
    the batch's key sum names the one event that inserted nothing (an undirected change
    keyed with the smaller id first), as a brute-force count of the events says."""
    from streams.window_index import (NEW_EDGE, NO_ENTRY, REFRESH, classify_one_extra,
                                      edge_keys, key_sum)
    rng = np.random.default_rng(3)
    s = rng.integers(0, 2**31 - 1, 5000).astype(np.int64)
    d = rng.integers(0, 2**31 - 1, 5000).astype(np.int64)
    s[4000], d[4000] = s[17], d[17]                 # a repeat of a new edge
    a, b = np.minimum(s, d), np.maximum(s, d)
    keys = edge_keys(a, b)
    inserted = np.unique(keys)
    src, dst = (inserted >> 32).astype(np.int32), (inserted & 0xFFFFFFFF).astype(np.int32)
    if device == "gpu":
        import cupy
        src, dst = cupy.asarray(dst), cupy.asarray(src)     # reported in either order
    extra = (int(keys.view(np.uint64).sum()) - key_sum(src, dst, False)) % (1 << 64)
    assert extra == int(keys[17])
    kind = classify_one_extra(keys, extra)
    want = np.full(5000, NEW_EDGE, np.int8)
    want[17] = NO_ENTRY
    assert kind.tolist() == want.tolist()
    present = np.delete(keys, 4000)               # one present edge refreshed instead
    inserted = np.setdiff1d(present, present[[9]])
    extra = (int(present.view(np.uint64).sum())
             - key_sum(inserted >> 32, inserted & 0xFFFFFFFF, True)) % (1 << 64)
    kind = classify_one_extra(present, extra)
    assert kind[9] == REFRESH and (np.delete(kind, 9) == NEW_EDGE).all()
