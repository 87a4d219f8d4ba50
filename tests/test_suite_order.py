"""tests/suite_order.py: the suite's files run longest first."""
from __future__ import annotations

import json
from types import SimpleNamespace

import suite_order


def test_files_run_longest_first_and_keep_their_tests_order(tmp_path, monkeypatch):
    listed = tmp_path / "durations.json"
    listed.write_text(json.dumps({"seconds": {"tests/a.py": 1.0, "tests/b.py": 9.0}}))
    monkeypatch.setattr(suite_order, "LIST", listed)
    ids = ["tests/c.py::x", "tests/a.py::p", "tests/b.py::q", "tests/a.py::r", "tests/b.py::s",
           "tests/d.py::t"]
    items = [SimpleNamespace(nodeid=i) for i in ids]
    got = [i.nodeid for i in suite_order.longest_first(items)]
    assert got == ["tests/b.py::q", "tests/b.py::s", "tests/a.py::p", "tests/a.py::r",
                   "tests/c.py::x", "tests/d.py::t"]
    monkeypatch.setattr(suite_order, "LIST", tmp_path / "missing.json")
    assert [i.nodeid for i in suite_order.longest_first(items)] == ids


def test_recorded_parts_merge_into_one_list(tmp_path):
    parts = []
    for worker, seconds in (("gw0", {"tests/a.py": 1.5}), ("gw1", {"tests/a.py": 2.0,
                                                                     "tests/b.py": 0.5})):
        part = tmp_path / f"d.json.{worker}.json"
        part.write_text(json.dumps(seconds))
        parts.append(part)
    target = tmp_path / "d.json"
    suite_order.merge(target, parts)
    assert json.loads(target.read_text()) == {"seconds": {"tests/a.py": 3.5, "tests/b.py": 0.5}}
    assert not any(p.exists() for p in parts)
