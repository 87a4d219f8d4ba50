"""The test suite's kernel list (tests/suite_kernels.py): its entries name kernels of this
version, and the selection, recording and merging of entries."""
from __future__ import annotations

import json
from pathlib import Path

import suite_kernels
from hornet.core import jit, precompile


def test_listed_kernels_exist_with_their_types():
    entries = json.loads(suite_kernels.LIST.read_text())["kernels"]
    assert len(entries) >= 100
    resolved = 0
    for e in entries:
        assert len(e) == 7 and e[3] == 1 and e[0].split(".")[0] in ("hornet", "streams"), e
        assert e[5].startswith("tests/test_") or e[5] == "", e
        try:
            dispatcher, args = precompile._resolve(e)
        except (ValueError, LookupError):
            continue            # renamed since the list was made, or a type the list can't name
        assert dispatcher is jit.kernels[(e[0], e[1])]
        assert [str(a) for a in args] == e[2]
        resolved += 1
    # a few stale entries only cost their compile in the tests; many mean: make the list anew
    assert resolved >= 0.95 * len(entries), f"{len(entries) - resolved} stale entries"


def test_selection_by_file_and_data(tmp_path, monkeypatch):
    listed = [["hornet.a", "f", ["int64"], 1, 1.0, "tests/test_x.py", False],
              ["hornet.a", "g", ["int64"], 1, 1.0, "tests/test_y.py", False],
              ["hornet.a", "h", ["int64"], 1, 1.0, "tests/test_x.py", True]]
    path = tmp_path / "list.json"
    path.write_text(json.dumps({"kernels": listed}))
    monkeypatch.setattr(suite_kernels, "LIST", path)
    assert suite_kernels.entries_for(None, True) == listed
    assert suite_kernels.entries_for(None, False) == listed[:2]
    assert suite_kernels.entries_for({"tests/test_x.py"}, True) == [listed[0], listed[2]]
    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(root)
    assert suite_kernels.selected_files([], root) is None
    assert suite_kernels.selected_files(["tests"], root) is None
    assert suite_kernels.selected_files(["tests/test_graph.py::test_a", "tests/test_io.py"],
                                        root) == {"tests/test_graph.py", "tests/test_io.py"}


def test_merge_adds_what_the_list_lacks_and_marks_data(tmp_path):
    target = tmp_path / "list.json"
    part = tmp_path / "list.json.gw0.json"
    part.write_text(json.dumps({"kernels": [["hornet.a", "f", ["int64"], 1, 2.0, "t"]]}))
    assert suite_kernels.merge(target, [part], with_data=False) == 1
    assert not part.exists()
    part.write_text(json.dumps({"kernels": [["hornet.a", "f", ["int64"], 1, 3.0, "t"],
                                            ["hornet.a", "f", ["int32"], 1, 1.0, "u"]]}))
    assert suite_kernels.merge(target, [part], with_data=True) == 1
    assert json.loads(target.read_text())["kernels"] == [
        ["hornet.a", "f", ["int64"], 1, 2.0, "t", False],
        ["hornet.a", "f", ["int32"], 1, 1.0, "u", True]]
