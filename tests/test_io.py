"""hornet.io: every file in shared/data loads with the published counts; the fast loaders agree
with slow, obviously-correct reference parsers and with scipy.io.mmread; corrupt input raises
EdgeFileError naming the file and line."""
from __future__ import annotations

import gzip
import io
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import hornet.io as hio
from hornet.io import EdgeFileError, read_edges, read_graph_file, write_edges_text

from conftest import DATA_DIR, dataset_files, needs_data

# --------------------------------------------------------------------------------------------
# expectations from shared/data/README.md: vertices (distinct ids; Matrix Market: the header's
# row count) and lines (= edges / stored entries)

README_COUNTS = {
    "ca-GrQc.txt.gz": (5242, 28980),
    "ca-HepTh.txt.gz": (9877, 51971),
    "ca-HepPh.txt.gz": (12008, 237010),
    "email-Enron.txt.gz": (36692, 367662),
    "facebook_combined.txt.gz": (4039, 88234),
    "p2p-Gnutella08.txt.gz": (6301, 20777),
    "p2p-Gnutella24.txt.gz": (26518, 65369),
    "wiki-Vote.txt.gz": (7115, 103689),
    "soc-Epinions1.txt.gz": (75879, 508837),
    "email-Eu-core.txt.gz": (1005, 25571),
    "CollegeMsg.txt.gz": (1899, 59835),
    "sx-mathoverflow-a2q.txt.gz": (21688, 107581),
    "soc-sign-bitcoinotc.csv.gz": (5881, 35592),
    "soc-sign-bitcoinalpha.csv.gz": (3783, 24186),
    "out.radoslaw_email_email.gz": (167, 82927),
    # the README gives the delaunay range 1,024..16,384 vertices, 3,056..49,122 edges; the middle
    # ones are checked against scipy.io.mmread below (None: no published number)
    "delaunay_n10.mtx.gz": (1024, 3056),
    "delaunay_n11.mtx.gz": (2048, None),
    "delaunay_n12.mtx.gz": (4096, None),
    "delaunay_n13.mtx.gz": (8192, None),
    "delaunay_n14.mtx.gz": (16384, 49122),
}

EXPECTED_FORMAT_EXTRA = {
    "CollegeMsg.txt.gz": ("snap", {"time": np.int64}),
    "sx-mathoverflow-a2q.txt.gz": ("snap", {"time": np.int64}),
    "soc-sign-bitcoinotc.csv.gz": ("csv", {"rating": np.int64, "time": np.float64}),
    "soc-sign-bitcoinalpha.csv.gz": ("csv", {"rating": np.int64, "time": np.float64}),
    "out.radoslaw_email_email.gz": ("konect", {"weight": np.int64, "time": np.int64}),
}

DATASETS = dataset_files()


def _ids(files):
    return [p.name for p in files]


# --------------------------------------------------------------------------------------------
# slow reference parsers (one Python step per line: obviously right, used as oracles)


def ref_parse_text(raw: bytes, sep: str | None = None, comment: str = "#%"):
    """Rows of numbers of a text edge list: every non-blank, non-comment line split on ``sep``
    (whitespace when None); gzip is undone first."""
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    rows = []
    for line in raw.decode("utf-8").split("\n"):
        line = line.strip()
        if not line or line[0] in comment:
            continue
        fields = line.split(sep) if sep else line.split()
        rows.append([float(f) if ("." in f or "e" in f.lower()) else int(f) for f in fields])
    return rows


def assert_matches_rows(ef_or_triple, rows, extra_names=()):
    src, dst, extra = ef_or_triple if isinstance(ef_or_triple, tuple) else ef_or_triple.as_tuple()
    assert src.dtype == np.int64 and dst.dtype == np.int64
    assert src.shape == dst.shape == (len(rows),)
    if rows:
        arr = np.array(rows, dtype=object)
        assert src.tolist() == [int(x) for x in arr[:, 0]]
        assert dst.tolist() == [int(x) for x in arr[:, 1]]
        for k, name in enumerate(extra_names):
            got = extra[name]
            want = np.array([float(x) for x in arr[:, 2 + k]])
            assert got.shape == (len(rows),)
            np.testing.assert_array_equal(got.astype(np.float64), want)
    assert sorted(extra) == sorted(extra_names)


def write(path: Path, data: bytes, compress: bool = False) -> Path:
    path.write_bytes(gzip.compress(data, mtime=0) if compress else data)
    return path


# --------------------------------------------------------------------------------------------
# the real datasets


@needs_data
def test_every_dataset_has_an_expectation():
    names = {p.name for p in DATASETS}
    assert names, f"no datasets found in {DATA_DIR}"
    assert names <= set(README_COUNTS), names - set(README_COUNTS)


@needs_data
@pytest.mark.parametrize("path", DATASETS, ids=_ids(DATASETS))
def test_dataset_loads_with_readme_counts(path):
    ef = read_graph_file(path)
    vertices, lines = README_COUNTS[path.name]
    assert ef.src.dtype == np.int64 and ef.dst.dtype == np.int64
    assert ef.src.shape == ef.dst.shape
    for name, col in ef.extra.items():
        assert col.shape == ef.src.shape, name
    if lines is not None:
        assert ef.num_edges == lines
    assert ef.src.min() >= 0 and ef.dst.min() >= 0
    maxid = int(max(ef.src.max(), ef.dst.max()))
    assert ef.num_vertices >= maxid + 1
    if ef.format == "mtx":
        assert ef.num_vertices == vertices == ef.meta["rows"]
        assert ef.symmetric and ef.directed is False
        assert ef.meta["nnz"] == ef.num_edges
        assert np.all(ef.src >= ef.dst)  # stored lower triangle, not mirrored
    else:
        assert np.union1d(ef.src, ef.dst).shape[0] == vertices
    fmt, extra = EXPECTED_FORMAT_EXTRA.get(path.name, ("mtx" if ".mtx" in path.name else "snap", {}))
    assert ef.format == fmt
    assert {k: v.dtype.type for k, v in ef.extra.items()} == extra
    # the contract's triple is the same data
    s, d, x = read_edges(path)
    np.testing.assert_array_equal(s, ef.src)
    np.testing.assert_array_equal(d, ef.dst)
    assert x.keys() == ef.extra.keys()


@needs_data
def test_dataset_headers_and_hints():
    ef = read_graph_file(DATA_DIR / "email-Enron.txt.gz")
    assert ef.meta["header_nodes"] == 36692 and ef.meta["header_edges"] == 367662
    assert ef.num_vertices == 36692
    ep = read_graph_file(DATA_DIR / "soc-Epinions1.txt.gz")
    assert ep.num_vertices == int(max(ep.src.max(), ep.dst.max())) + 1 == 75888
    k = read_graph_file(DATA_DIR / "out.radoslaw_email_email.gz")
    assert k.meta["konect_kind"] == "asym" and k.directed is True and not k.symmetric
    assert k.meta["header_edges"] == 82927 and k.meta["rows"] == 167
    assert k.src.min() == 1  # KONECT ids stay one-based
    assert k.num_vertices == 168
    b = read_graph_file(DATA_DIR / "soc-sign-bitcoinotc.csv.gz")
    assert b.extra["rating"].min() >= -10 and b.extra["rating"].max() <= 10
    assert np.any(b.extra["time"] != np.floor(b.extra["time"]))  # fractional seconds kept


SMALL_TEXT = ["CollegeMsg.txt.gz", "email-Eu-core.txt.gz", "p2p-Gnutella08.txt.gz",
              "ca-GrQc.txt.gz", "out.radoslaw_email_email.gz", "soc-sign-bitcoinalpha.csv.gz",
              "soc-sign-bitcoinotc.csv.gz", "wiki-Vote.txt.gz"]


@needs_data
@pytest.mark.parametrize("name", SMALL_TEXT)
def test_dataset_matches_reference_parser(name):
    path = DATA_DIR / name
    if not path.exists():
        pytest.skip(f"{name} absent")
    raw = path.read_bytes()
    ef = read_graph_file(path)
    rows = ref_parse_text(raw, sep="," if ef.format == "csv" else None)
    assert_matches_rows(ef, rows, list(ef.extra))


@needs_data
@pytest.mark.parametrize("k", [10, 11, 12, 13, 14])
def test_mtx_matches_scipy_mmread(k):
    path = DATA_DIR / f"delaunay_n{k}.mtx.gz"
    if not path.exists():
        pytest.skip("absent")
    with gzip.open(path) as f:
        ref = scipy.io.mmread(f)
    ref = sp.coo_matrix(ref)
    ef = read_graph_file(path)
    n = ef.num_vertices
    assert ref.shape == (n, n) == (ef.meta["rows"], ef.meta["cols"])
    # scipy mirrors symmetric matrices: its lower triangle is exactly the stored entries
    low = ref.row >= ref.col
    rr, rc = ref.row[low], ref.col[low]
    assert rr.shape[0] == ef.num_edges
    if np.array_equal(rr, ef.src) and np.array_equal(rc, ef.dst):
        pass  # same order, entry for entry
    else:
        a = np.lexsort((rc, rr))
        b = np.lexsort((ef.dst, ef.src))
        np.testing.assert_array_equal(rr[a], ef.src[b])
        np.testing.assert_array_equal(rc[a], ef.dst[b])
    # mirroring ours gives scipy's matrix
    ours = sp.coo_matrix((np.ones(ef.num_edges), (ef.src, ef.dst)), shape=(n, n))
    full = (ours + ours.T - sp.diags(ours.diagonal())).tocsr()
    assert (full != ref.tocsr()).nnz == 0


# --------------------------------------------------------------------------------------------
# Matrix Market, synthetic


@pytest.mark.parametrize("field,symmetry", [("pattern", "general"), ("real", "general"),
                                            ("integer", "symmetric"), ("real", "symmetric"),
                                            ("real", "skew-symmetric")])
def test_mtx_synthetic_entry_for_entry(tmp_path, field, symmetry):
    rng = np.random.default_rng(7)
    nrows, ncols = (9, 9) if symmetry != "general" else (9, 13)
    pairs = {(int(i), int(j)) for i, j in zip(rng.integers(1, nrows + 1, 40),
                                              rng.integers(1, ncols + 1, 40))}
    if symmetry == "symmetric":
        pairs = {(max(i, j), min(i, j)) for i, j in pairs}
    elif symmetry == "skew-symmetric":
        pairs = {(max(i, j), min(i, j)) for i, j in pairs if i != j}
    pairs = sorted(pairs, key=lambda p: (p[1], p[0]))
    lines = [f"%%MatrixMarket matrix coordinate {field} {symmetry}", "% a comment", "%",
             f"{nrows} {ncols} {len(pairs)}"]
    vals = []
    for t, (i, j) in enumerate(pairs):
        if field == "pattern":
            lines.append(f"{i} {j}")
        elif field == "integer":
            vals.append(t - 5)
            lines.append(f"{i}\t{j}  {t - 5}")
        else:
            vals.append(t * 0.25 - 1.5e-3)
            lines.append(f" {i} {j} {t * 0.25 - 1.5e-3!r}")
    text = ("\r\n".join(lines)).encode()  # CRLF and no final newline
    p = write(tmp_path / "m.bin", text, compress=True)
    ef = read_graph_file(p)
    assert ef.format == "mtx" and ef.symmetric == (symmetry != "general")
    assert ef.num_vertices == max(nrows, ncols)
    np.testing.assert_array_equal(ef.src, [i - 1 for i, _ in pairs])
    np.testing.assert_array_equal(ef.dst, [j - 1 for _, j in pairs])
    if field == "pattern":
        assert ef.extra == {}
    else:
        w = ef.extra["weight"]
        assert w.dtype == (np.int64 if field == "integer" else np.float64)
        np.testing.assert_array_equal(w, vals)
    # scipy agrees on the matrix
    ref = sp.coo_matrix(scipy.io.mmread(io.BytesIO(text.replace(b"\r\n", b"\n") + b"\n")))
    data = np.ones(len(pairs)) if field == "pattern" else np.asarray(vals, dtype=float)
    ours = sp.coo_matrix((data, (ef.src, ef.dst)), shape=(nrows, ncols))
    if symmetry == "symmetric":
        ours = ours + ours.T - sp.diags(ours.diagonal())
    elif symmetry == "skew-symmetric":
        ours = ours - ours.T
    np.testing.assert_allclose(ours.toarray(), ref.toarray())


# --------------------------------------------------------------------------------------------
# SNAP text, synthetic, against the reference parser

SEPS = ["\t", " ", "  ", " \t ", "\t\t"]


@st.composite
def snap_files(draw):
    m = draw(st.integers(0, 40))
    ncols = draw(st.sampled_from([2, 3]))
    ids = st.integers(0, 10**12)
    rows = [[draw(ids) for _ in range(ncols)] for _ in range(m)]
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    out = []
    if draw(st.booleans()):
        out += ["# Directed graph (each unordered pair of nodes is saved once): x.txt ",
                f"# Nodes: 10 Edges: {m}", "# FromNodeId\tToNodeId"]
    for r in rows:
        if draw(st.integers(0, 9)) == 0:
            out.append(draw(st.sampled_from(["# inner comment", "", "   ", "\t", "% other"])))
        lead = draw(st.sampled_from(["", "", " ", "\t"]))
        trail = draw(st.sampled_from(["", "", " ", "\t "]))
        seps = [draw(st.sampled_from(SEPS)) for _ in range(ncols - 1)]
        line = str(r[0])
        for s_, v in zip(seps, r[1:]):
            line += s_ + str(v)
        out.append(lead + line + trail)
    text = eol.join(out)
    if out and draw(st.booleans()):
        text += eol
    return text.encode(), ncols, draw(st.booleans())


@settings(max_examples=60)
@given(snap_files())
def test_snap_matches_reference(case):
    data, ncols, compress = case
    with tempfile.TemporaryDirectory() as d:
        p = write(Path(d) / "g.txt", data, compress)
        rows = ref_parse_text(data)
        if not data.strip():
            with pytest.raises(EdgeFileError, match="empty"):
                read_graph_file(p, format="snap")
            return
        ef = read_graph_file(p, format="snap")
        if rows:
            assert_matches_rows(ef, rows, ["time"] if ncols == 3 else [])
        else:
            assert ef.num_edges == 0
        # detection from the content gives the same (first content line: '#' or a number)
        first = next((ln for ln in data.split(b"\n") if ln.strip()), b"")
        if not first.lstrip().startswith(b"%"):
            assert read_graph_file(p).format == "snap"
        # reading in small blocks gives the same
        blk = read_graph_file(p, format="snap", block_bytes=4096)
        np.testing.assert_array_equal(blk.src, ef.src)
        np.testing.assert_array_equal(blk.dst, ef.dst)


@pytest.mark.parametrize("compress", [False, True])
def test_snap_crlf_mixed_no_final_newline(tmp_path, compress):
    text = (b"# Undirected graph: test\r\n# Nodes: 4 Edges: 4\r\n"
            b"0\t1\r\n 1  2 \r\n\r\n# mid comment\r\n2 \t3\r\n3\t0")
    p = write(tmp_path / ("g.txt.gz" if compress else "g.txt"), text, compress)
    ef = read_graph_file(p)
    assert ef.format == "snap"
    assert ef.src.tolist() == [0, 1, 2, 3] and ef.dst.tolist() == [1, 2, 3, 0]
    assert ef.meta["header_nodes"] == 4 and ef.meta["header_edges"] == 4
    assert ef.directed is False and ef.symmetric
    assert ef.num_vertices == 4


def test_gzip_detected_by_magic_not_name(tmp_path):
    text = b"5 6\n7 8\n"
    a = write(tmp_path / "plain.gz", text)  # not compressed, despite the name
    b = write(tmp_path / "packed.txt", text, compress=True)  # compressed, plain name
    for p in (a, b):
        s, d, x = read_edges(p)
        assert s.tolist() == [5, 7] and d.tolist() == [6, 8] and x == {}


def test_multimember_gzip(tmp_path):
    p = tmp_path / "mm.gz"
    p.write_bytes(gzip.compress(b"1 2\n3 4\n") + gzip.compress(b"5 6\n"))
    assert read_edges(p)[0].tolist() == [1, 3, 5]


def test_temporal_float_times_fall_back_to_float(tmp_path):
    p = write(tmp_path / "t.txt", b"1 2 100\n2 3 100.5\n")
    s, d, x = read_edges(p)
    assert x["time"].dtype == np.float64 and x["time"].tolist() == [100.0, 100.5]
    p = write(tmp_path / "t2.txt", b"1 2 100\n2 3 101\n")
    assert read_edges(p)[2]["time"].dtype == np.int64


def test_blocks_agree_and_promote(tmp_path):
    lines = [f"{i} {i + 1} {i * 10}" for i in range(3000)] + ["7 8 9.5"]
    p = write(tmp_path / "t.txt", "\n".join(lines).encode())
    whole = read_graph_file(p)
    parts = list(hio.iter_edge_blocks(p, block_bytes=4096))
    assert len(parts) > 1
    assert parts[0].first_line == 1
    np.testing.assert_array_equal(np.concatenate([b.src for b in parts]), whole.src)
    blocked = read_graph_file(p, block_bytes=4096)
    np.testing.assert_array_equal(blocked.extra["time"], whole.extra["time"])
    assert blocked.extra["time"].dtype == np.float64


# --------------------------------------------------------------------------------------------
# CSV and KONECT


def test_csv_signed(tmp_path):
    text = b"6,2,4,1289241911.72836\r\n6,5,-2,1289241941\r\n 1 , 15 ,1,1289243140.5"
    p = write(tmp_path / "s.csv", text, compress=True)
    ef = read_graph_file(p)
    assert ef.format == "csv"
    assert ef.src.tolist() == [6, 6, 1] and ef.dst.tolist() == [2, 5, 15]
    assert ef.extra["rating"].tolist() == [4, -2, 1] and ef.extra["rating"].dtype == np.int64
    assert ef.extra["time"].dtype == np.float64
    np.testing.assert_array_equal(ef.extra["time"], [1289241911.72836, 1289241941.0, 1289243140.5])


def test_csv_header_row_and_three_columns(tmp_path):
    p = write(tmp_path / "h.csv", b"from,to,w\n1,2,0.5\n3,4,2\n")
    s, d, x = read_edges(p)
    assert s.tolist() == [1, 3] and x["w"].tolist() == [0.5, 2.0]
    p = write(tmp_path / "w.csv", b"1,2,3\n4,5,6\n")
    assert read_edges(p)[2]["weight"].tolist() == [3, 6]


@pytest.mark.parametrize("ncols", [2, 3, 4])
def test_konect_columns(tmp_path, ncols):
    body = ["1 2  1 1262454010", "1 3  2 1262454011", "4 1  1 1262454012"]
    body = [" ".join(ln.split()[:ncols]) for ln in body]
    text = "% sym unweighted\n% 3 4 4\n" + "\n".join(body) + "\n"
    ef = read_graph_file(write(tmp_path / "out.x", text.encode()))
    assert ef.format == "konect"
    assert ef.src.tolist() == [1, 1, 4] and ef.dst.tolist() == [2, 3, 1]
    assert list(ef.extra) == ["weight", "time"][: ncols - 2]
    assert ef.symmetric and ef.directed is False
    assert ef.num_vertices == 5 and ef.meta["header_edges"] == 3


def test_format_override_and_detection(tmp_path):
    p = write(tmp_path / "a", b"% just a comment\n1 2\n")
    assert read_graph_file(p).format == "konect"
    assert read_graph_file(p, format="snap").format == "snap"
    assert read_graph_file(p, format="edgelist").format == "snap"
    with pytest.raises(ValueError, match="unknown edge-file format"):
        read_graph_file(p, format="parquet")
    assert hio.detect_format(b"# c, with comma\n1\t2\n") == "snap"
    assert hio.detect_format(b"\n\n1,2\n") == "csv"
    assert hio.detect_format(b"%%MatrixMarket matrix coordinate pattern general\n") == "mtx"


def test_write_edges_text_round_trip(tmp_path):
    rng = np.random.default_rng(1)
    s = rng.integers(0, 10**9, 1000)
    d = rng.integers(0, 10**9, 1000)
    t = rng.integers(0, 2**40, 1000)
    for name in ("w.txt", "w.txt.gz"):
        p = tmp_path / name
        write_edges_text(p, s, d, extra={"time": t}, header=["written by a test", "Nodes: 3"])
        assert (p.read_bytes()[:2] == b"\x1f\x8b") == name.endswith(".gz")
        ef = read_graph_file(p)
        assert ef.format == "snap"
        np.testing.assert_array_equal(ef.src, s)
        np.testing.assert_array_equal(ef.dst, d)
        np.testing.assert_array_equal(ef.extra["time"], t)
    write_edges_text(tmp_path / "e.txt", np.array([], dtype=np.int64), np.array([], dtype=np.int64))
    with pytest.raises(EdgeFileError, match="empty"):
        read_edges(tmp_path / "e.txt")


# --------------------------------------------------------------------------------------------
# corrupt input

MM_HEAD = b"%%MatrixMarket matrix coordinate pattern symmetric\n% comment\n"

CORRUPT = {
    # name: (content, compress, regex the message must match)
    "token.txt": (b"# c\n1 2\n3 x4\n", False, r"token\.txt: line 3: .*'x4'"),
    "token_crlf.txt": (b"1\t2\r\n3\t4\r\n5\tfoo\r\n", True, r"line 3: .*'foo'"),
    "float_id.txt": (b"1 2\n1.5 2\n", False, r"line 2: .*'1\.5'"),
    "huge_id.txt": (b"1 2\n3 99999999999999999999999\n", False, r"line 2: .*9999"),
    "columns.txt": (b"1 2\n3 4\n5 6 7\n", False, r"columns\.txt: line 3: expected 2 columns, found 3"),
    "columns_short.txt": (b"1 2 3\n# x\n4 5\n", False, r"line 3: expected 3 columns, found 2"),
    "negative.txt": (b"# h\n\n1 2\n-3 4\n", False, r"negative\.txt: line 4: negative vertex id -3"),
    "negative_dst.csv": (b"1,2,3,4\n5,-6,7,8\n", False, r"line 2: negative vertex id -6"),
    "empty.txt": (b"", False, r"empty\.txt: empty"),
    "empty_gz.txt.gz": (b"", True, r"empty"),
    "blank.txt": (b"  \r\n\n", False, r"empty"),
    "csv_blank_field.csv": (b"1,2,3,4\n5,,7,8\n", False, r"line 2"),
    "csv_space.csv": (b"1,2,3,4\n5,6 6,7,8\n", False, r"line 2: unexpected blank"),
    "csv_token.csv": (b"1,2,3,4\n5,6,x,8\n", False, r"line 2: non-numeric token 'x'"),
    "mm_nnz_less.mtx": (MM_HEAD + b"3 3 3\n2 1\n3 1\n", False, r"nnz=3, but the file has 2"),
    "mm_nnz_more.mtx": (MM_HEAD + b"3 3 1\n2 1\n3 1\n", True, r"nnz=1, but the file has 2"),
    "mm_range.mtx": (MM_HEAD + b"3 3 2\n2 1\n4 1\n", False, r"line 5: row index 4 outside 1\.\.3"),
    "mm_zero.mtx": (MM_HEAD + b"3 3 2\n2 1\n2 0\n", False, r"line 5: column index 0"),
    "mm_cols.mtx": (b"%%MatrixMarket matrix coordinate real general\n3 3 2\n2 1 0.5\n3 1\n", False,
                    r"line 4: expected 3 columns, found 2"),
    "mm_size.mtx": (MM_HEAD + b"3 3\n2 1\n", False, r"line 3: malformed Matrix Market size line"),
    "mm_nosize.mtx": (MM_HEAD, False, r"size line"),
    "mm_array.mtx": (b"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", False,
                     r"line 1: only 'matrix coordinate'"),
    "mm_complex.mtx": (b"%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", False,
                       r"unsupported Matrix Market field 'complex'"),
    "mm_token.mtx": (MM_HEAD + b"3 3 2\n2 1\n3 a\n", False, r"line 5: .*'a'"),
}


@pytest.mark.parametrize("name", sorted(CORRUPT))
def test_corrupt_input_raises(tmp_path, name):
    data, compress, pattern = CORRUPT[name]
    p = write(tmp_path / name, data, compress)
    with pytest.raises(EdgeFileError, match=pattern) as info:
        read_edges(p)
    assert name in str(info.value)
    assert isinstance(info.value, ValueError)


def test_truncated_and_garbled_gzip(tmp_path):
    payload = gzip.compress(b"".join(b"%d %d\n" % (i, i + 1) for i in range(20000)))
    p = tmp_path / "trunc.txt.gz"
    p.write_bytes(payload[: len(payload) // 2])
    with pytest.raises(EdgeFileError, match=r"trunc\.txt\.gz: corrupt or truncated gzip"):
        read_edges(p)
    p.write_bytes(payload[:-4])  # length trailer missing
    with pytest.raises(EdgeFileError, match="gzip"):
        read_edges(p)
    q = tmp_path / "garbled.gz"
    q.write_bytes(b"\x1f\x8b" + os.urandom(64))
    with pytest.raises(EdgeFileError, match="gzip"):
        read_edges(q)


def test_error_line_numbers_in_later_blocks(tmp_path):
    lines = [f"{i}\t{i + 1}" for i in range(5000)]
    lines[4321] = "17 oops"
    p = write(tmp_path / "late.txt", ("# h\n" + "\r\n".join(lines)).encode(), compress=True)
    for block in (4096, 1 << 20):
        with pytest.raises(EdgeFileError, match=r"late\.txt: line 4323: .*'oops'"):
            read_graph_file(p, block_bytes=block)
    lines[4321] = "17 18 19"
    p = write(tmp_path / "late2.txt", "\n".join(lines).encode())
    with pytest.raises(EdgeFileError, match=r"line 4322: expected 2 columns, found 3"):
        read_graph_file(p, block_bytes=4096)
    lines[4321] = "-17 18"
    p = write(tmp_path / "late3.txt", "\n".join(lines).encode())
    with pytest.raises(EdgeFileError, match=r"line 4322: negative vertex id -17"):
        read_graph_file(p, block_bytes=4096)


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        read_edges("/nonexistent/dir/graph.txt.gz")


# --------------------------------------------------------------------------------------------
# stream files (.arrow, .arrows, .parquet) through read_edges


@needs_data
@pytest.mark.parametrize("ext", [".arrow", ".arrows", ".parquet"])
def test_read_edges_reads_stream_files_as_converted(tmp_path, ext):
    from streams.convert import convert
    text = DATA_DIR / "soc-sign-bitcoinalpha.csv.gz"
    src, dst, extra = read_edges(text)
    out = tmp_path / f"stream{ext}"
    convert(text, out, chunk_rows=5000)                 # several record batches / row groups
    s, d, ex = read_edges(out)
    assert s.dtype == np.int64 and d.dtype == np.int64
    np.testing.assert_array_equal(s, src)
    np.testing.assert_array_equal(d, dst)
    np.testing.assert_array_equal(ex["weight"], extra["rating"].astype(np.float64))
    np.testing.assert_array_equal(ex["time"], extra["time"])


def test_read_edges_stream_keeps_op_and_64_bit_ids(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    src = np.array([2**40, 5, 2**40], dtype=np.int64)
    dst = np.array([7, 2**33, 5], dtype=np.int64)
    op = np.array([1, 1, -1], dtype=np.int8)
    pq.write_table(pa.table({"src": src, "dst": dst, "op": op}), tmp_path / "s.parquet")
    s, d, ex = read_edges(tmp_path / "s.parquet")
    np.testing.assert_array_equal(s, src)
    np.testing.assert_array_equal(d, dst)
    np.testing.assert_array_equal(ex["op"], op)


def test_read_edges_stream_errors_name_the_file_and_row(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    p = tmp_path / "neg.parquet"
    pq.write_table(pa.table({"src": [0, 1, -4], "dst": [1, 2, 3]}), p)
    with pytest.raises(EdgeFileError, match=r"neg\.parquet.*negative vertex id -4 at row 2"):
        read_edges(p)
    p = tmp_path / "null.parquet"
    pq.write_table(pa.table({"src": pa.array([0, None], pa.int64()), "dst": [1, 2]}), p)
    with pytest.raises(EdgeFileError, match=r"null\.parquet.*'src'.*row 1"):
        read_edges(p)
    p = tmp_path / "nodst.parquet"
    pq.write_table(pa.table({"src": [0], "to": [1]}), p)
    with pytest.raises(EdgeFileError, match=r"nodst\.parquet.*no 'dst' column"):
        read_edges(p)
    p = tmp_path / "cut.arrow"
    schema = pa.schema([("src", pa.int64()), ("dst", pa.int64())])
    with pa.OSFile(str(p), "wb") as sink, pa.ipc.new_file(sink, schema) as w:
        w.write_table(pa.table({"src": [0, 1], "dst": [1, 2]}))
    p.write_bytes(p.read_bytes()[:-20])
    with pytest.raises(EdgeFileError, match=r"cut\.arrow.*corrupt or unreadable Arrow IPC file"):
        read_edges(p)
    with pytest.raises(EdgeFileError, match="text format was given"):
        read_edges(tmp_path / "neg.parquet", format="snap")
