"""The ``hornet`` command: the default replay, report files, convert/info, and one-line errors
with a nonzero exit status for every bad input or option."""
from __future__ import annotations

import json
import os

# see test_streams.py: keeps tiny parallel Numba kernels fast on a busy machine

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from streams import write_stream
from streams.cli import main

from conftest import DATA_DIR
from hornet.core.jit import COMPILE_NOTICE

ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *argv):
    code = main(list(map(str, argv)))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str) -> str:
    """The one error line of ``err``; the compile notice a process prints once, before its
    first kernel compiles (whether it does depends on the kernel cache), is not an error."""
    notice = COMPILE_NOTICE.split("{")[0]
    lines = [line for line in err.strip().splitlines() if not line.startswith(notice)]
    assert len(lines) == 1, f"expected one stderr line, got {lines!r}"
    assert lines[0].startswith("hornet: error: "), lines[0]
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture(scope="module")
def small_stream(tmp_path_factory) -> Path:
    rng = np.random.default_rng(7)
    n = 600
    p = tmp_path_factory.mktemp("cli") / "small.arrow"
    write_stream(p, {"src": rng.integers(0, 40, n), "dst": rng.integers(0, 40, n),
                     "time": np.arange(n, dtype=np.int64) * 3})
    return p


def test_default_replay_subprocess():
    """`python -m streams replay` with no STREAM replays the shipped stream and prints a
    summary (a real process: exit status, stdout, clean stderr)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "streams", "replay", "--algos", "tc"], cwd=ROOT,
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "collegemsg.arrow" in out and "SNAP CollegeMsg" in out
    assert "59,835 in 12 batches" in out
    assert "self-loops dropped: 0" in out
    assert "20,296 at end" in out
    assert "triangles 14,319" in out
    assert "events/s" in out
    assert "Traceback" not in p.stderr


def test_replay_reports_in_every_format(capsys, tmp_path, small_stream):
    for ext in (".csv", ".json", ".arrow"):
        rep = tmp_path / f"rep{ext}"
        code, out, err = run(capsys, "replay", small_stream, "--batch-size", 200, "--window",
                             300, "--undirected", "--algos", "tc,ktruss,bfs,spmv",
                             "--device", "cpu", "--report", rep, "--verify")
        assert code == 0, err
        assert "600 in 3 batches" in out and "verified" in out and str(rep) in out
        if ext == ".csv":
            import pyarrow.csv as pacsv
            t = pacsv.read_csv(rep)
        elif ext == ".json":
            js = json.loads(rep.read_text())
            assert js["summary"]["events"] == 600 and js["summary"]["window"] == 300
            t = pa.Table.from_pylist(js["rows"])
        else:
            t = pa.ipc.open_file(str(rep)).read_all()
        for c in ("batch", "events", "inserted", "deleted", "edges", "seconds", "triangles",
                  "k_max", "bfs_reached", "spmv_sum"):
            assert c in t.column_names
        assert t.num_rows == 3 and t.column("events").to_pylist() == [200, 200, 200]


def test_replay_text_stream_and_batch_time(capsys):
    if not (DATA_DIR / "soc-sign-bitcoinotc.csv.gz").exists():
        pytest.skip("no data")
    code, out, err = run(capsys, "replay", DATA_DIR / "soc-sign-bitcoinotc.csv.gz",
                         "--algos", "none", "--max-events", 3000, "--batch-time", 86400 * 30)
    assert code == 0, err
    assert "3,000 in" in out and "time windows" in out


def test_plot(capsys, tmp_path, small_stream):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        code, out, err = run(capsys, "replay", small_stream, "--plot", tmp_path / "p.png")
        assert code != 0 and "matplotlib" in one_line_error(err)
        return
    code, out, err = run(capsys, "replay", small_stream, "--algos", "tc", "--plot",
                         tmp_path / "p.png")
    assert code == 0 and (tmp_path / "p.png").stat().st_size > 0


def test_convert_and_info(capsys, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("# a comment\n1 2 100\n2 3 105\n3 1 110\n")
    code, out, err = run(capsys, "convert", src, tmp_path / "o.parquet")
    assert code == 0, err
    assert "3 events" in out and "time" in out
    code, out, err = run(capsys, "info", tmp_path / "o.parquet")
    assert code == 0 and "parquet" in out and "time:int64" in out
    code, out, err = run(capsys, "replay", tmp_path / "o.parquet", "--batch-size", 2,
                         "--undirected", "--algos", "tc")
    assert code == 0 and "triangles 1" in out


def test_help(capsys):
    with pytest.raises(SystemExit) as e:
        main(["replay", "--help"])
    assert e.value.code == 0
    assert "--window" in capsys.readouterr().out


def _write(path: Path, table: pa.Table) -> Path:
    with pa.OSFile(str(path), "wb") as f, pa.ipc.new_file(f, table.schema) as w:
        w.write_table(table)
    return path


def error_cases(tmp: Path, good: Path):
    raw = good.read_bytes()
    (tmp / "trunc.arrow").write_bytes(raw[: len(raw) // 2])
    (tmp / "junk.arrow").write_bytes(b"not an arrow file at all")
    (tmp / "empty.arrow").write_bytes(b"")
    (tmp / "bad.txt").write_text("1 2\n2 x\n")
    (tmp / "neg.txt").write_text("1 2\n-2 3\n")
    _write(tmp / "nodst.arrow", pa.table({"src": [1, 2], "other": [2, 3]}))
    _write(tmp / "strsrc.arrow", pa.table({"src": ["a", "b"], "dst": [2, 3]}))
    _write(tmp / "negid.arrow", pa.table({"src": [1, -2], "dst": [2, 3]}))
    _write(tmp / "bigid.arrow", pa.table({"src": [1, 2**40], "dst": [2, 3]}))
    _write(tmp / "badop.arrow", pa.table({"src": [1, 2], "dst": [2, 3],
                                          "op": pa.array([1, 0], pa.int8())}))
    _write(tmp / "nanw.arrow", pa.table({"src": [1, 2, 3], "dst": [2, 3, 4],
                                         "weight": [1.0, 2.0, float("nan")]}))
    _write(tmp / "nullw.arrow", pa.table({"src": [1, 2, 3], "dst": [2, 3, 4],
                                          "weight": pa.array([1.0, None, 2.0])}))
    _write(tmp / "nant.arrow", pa.table({"src": [1, 2, 3], "dst": [2, 3, 4],
                                         "time": [1.0, float("nan"), 2.0]}))
    _write(tmp / "nullsrc.arrow", pa.table({"src": pa.array([1, None, 3], pa.int64()),
                                            "dst": [2, 3, 4]}))
    # an input error names the input file and the row (event) or line; every needle must appear
    return {
        "missing file": (["replay", tmp / "nope.arrow"], ("nope.arrow", "no such file")),
        "corrupt file": (["replay", tmp / "trunc.arrow"], ("trunc.arrow", "corrupt")),
        "not arrow": (["replay", tmp / "junk.arrow"], ("junk.arrow", "not an Arrow IPC file")),
        "empty file": (["replay", tmp / "empty.arrow"], ("empty.arrow", "empty")),
        "malformed text": (["replay", tmp / "bad.txt"], ("bad.txt", "line 2")),
        "negative id in text": (["replay", tmp / "neg.txt"], ("neg.txt", "line 2", "negative")),
        "missing column": (["replay", tmp / "nodst.arrow"], ("nodst.arrow", "'dst'")),
        "bad column type": (["replay", tmp / "strsrc.arrow"], ("strsrc.arrow",
                                                               "'src' has type string")),
        "negative id": (["replay", tmp / "negid.arrow"], ("negid.arrow", "negative vertex id",
                                                          "event 1")),
        "id too large": (["replay", tmp / "bigid.arrow", "--algos", "none"],
                         ("bigid.arrow", "id space", "event 1")),
        "bad op": (["replay", tmp / "badop.arrow"], ("badop.arrow", "'op'", "event 1")),
        "NaN weight": (["replay", tmp / "nanw.arrow", "--algos", "none"],
                       ("nanw.arrow", "event 2", "NaN")),
        "null weight": (["replay", tmp / "nullw.arrow", "--algos", "none"],
                        ("nullw.arrow", "event 1")),
        "NaN time": (["replay", tmp / "nant.arrow", "--algos", "none", "--batch-time", "1"],
                     ("nant.arrow", "event 1")),
        "null id": (["replay", tmp / "nullsrc.arrow"], ("nullsrc.arrow", "event 1")),
        "batch size 0": (["replay", good, "--batch-size", "0"], "--batch-size"),
        "batch size text": (["replay", good, "--batch-size", "ten"], "--batch-size"),
        "negative window": (["replay", good, "--window", "-5"], "--window"),
        "unknown analytic": (["replay", good, "--algos", "tc,pagerank"], "pagerank"),
        "unknown device": (["replay", good, "--device", "tpu"], "--device"),
        "report extension": (["replay", good, "--report", tmp / "r.xlsx"], ".csv"),
        "report directory": (["replay", good, "--report", tmp / "no" / "r.csv"], "directory"),
        "plot extension": (["replay", good, "--plot", tmp / "p.jpg"], ".png"),
        "batch time without time": (["replay", tmp / "negid.arrow", "--batch-time", "5"],
                                    ("negid.arrow", "'time'")),
        "both batchings": (["replay", good, "--batch-size", "5", "--batch-time", "5"], "not both"),
        "no command": ([], "command"),
        "unknown command": (["dance"], "dance"),
        "unknown option": (["replay", "--frobnicate"], "frobnicate"),
        "convert missing input": (["convert", tmp / "nope.txt", tmp / "o.arrow"],
                                  ("nope.txt", "no such file")),
        "convert bad output ext": (["convert", good, tmp / "o.csv"], ".arrow"),
        "convert id too large": (["convert", tmp / "bigid.arrow", tmp / "o2.arrow"],
                                 ("bigid.arrow", "event 1", "int64")),
        "convert negative id": (["convert", tmp / "negid.arrow", tmp / "o3.arrow"],
                                ("negid.arrow", "event 1")),
        "convert bad op": (["convert", tmp / "badop.arrow", tmp / "o4.arrow"],
                           ("badop.arrow", "event 1")),
        "convert null id": (["convert", tmp / "nullsrc.arrow", tmp / "o5.arrow"],
                            ("nullsrc.arrow", "event 1")),
        "convert malformed text": (["convert", tmp / "bad.txt", tmp / "o6.arrow"],
                                   ("bad.txt", "line 2")),
        "convert corrupt": (["convert", tmp / "trunc.arrow", tmp / "o7.arrow"],
                            ("trunc.arrow", "corrupt")),
        "convert missing column": (["convert", tmp / "nodst.arrow", tmp / "o8.arrow"],
                                   ("nodst.arrow", "'dst'")),
        "info corrupt": (["info", tmp / "junk.arrow"], ("junk.arrow", "not an Arrow")),
    }


def test_every_error_is_one_line_and_nonzero(capsys, tmp_path, small_stream):
    for name, (argv, needle) in error_cases(tmp_path, small_stream).items():
        code, out, err = run(capsys, *argv)
        assert code != 0, name
        line = one_line_error(err)
        for part in (needle,) if isinstance(needle, str) else needle:
            assert part in line, (name, line)
    assert not list(tmp_path.glob("o*.arrow")), "a failed convert left an output behind"


def test_error_subprocess_has_no_traceback(tmp_path):
    (tmp_path / "trunc.arrow").write_bytes(b"ARROW1\x00\x00garbage")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "streams", "replay", str(tmp_path / "trunc.arrow")],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 1
    one_line_error(p.stderr)
