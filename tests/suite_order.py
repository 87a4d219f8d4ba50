"""Running the test files longest first.

``pytest -n 2 --dist loadfile`` hands each worker one test file at a time, in the order of the
collection (pytest-xdist would otherwise sort the files by their number of tests, which puts
the few long state-machine tests last). A long file taken last keeps one worker busy while
the other has nothing left: so the collection runs the files in the order of the seconds
``suite_durations.json`` recorded for them, longest first (a file it lacks runs after the
listed ones), the tests of a file in their own order.

Making the list (after adding or changing test files), a run as CI runs the suite::

    HORNET_RECORD_DURATIONS=$PWD/tests/suite_durations.json CI=true \\
        python3 -m pytest -q -n 2 --dist loadfile -m "not gpu and not slow"

Each test process adds up the seconds of its tests (setup, call and teardown) per file; the
process that started them writes the list.
"""
from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

LIST = Path(__file__).with_name("suite_durations.json")


def record_path() -> str | None:
    return os.environ.get("HORNET_RECORD_DURATIONS") or None


def file_of(nodeid: str) -> str:
    return nodeid.split("::")[0]


def longest_first(items: list) -> list:
    """``items`` (pytest items) grouped by file, the files in the order of their recorded
    seconds (longest first, then the unlisted ones in collection order)."""
    try:
        seconds = json.loads(LIST.read_text())["seconds"]
    except (OSError, ValueError, KeyError):
        return items
    first_seen: dict = {}
    for i, item in enumerate(items):
        first_seen.setdefault(file_of(item.nodeid), i)
    rank = {f: (-seconds.get(f, -1.0) if f in seconds else 1.0, first_seen[f])
            for f in first_seen}
    return sorted(items, key=lambda item: rank[file_of(item.nodeid)])   # stable in a file


class Recorder:
    """Seconds per test file, summed over the phases of its tests in this process."""

    def __init__(self):
        self.seconds: dict = defaultdict(float)

    def pytest_runtest_logreport(self, report):
        self.seconds[file_of(report.nodeid)] += report.duration

    def write(self, path: str) -> None:
        with open(path, "w") as f:
            json.dump(dict(self.seconds), f)


def merge(target: Path, parts: list[Path]) -> None:
    """Write the seconds of the recorded ``parts`` (removed) to ``target``, longest first."""
    seconds: dict = defaultdict(float)
    for part in parts:
        for f, s in json.loads(part.read_text()).items():
            seconds[f] += s
        part.unlink()
    rows = sorted(seconds.items(), key=lambda fs: -fs[1])
    text = ",\n".join(f"  {json.dumps(f)}: {round(s, 1)}" for f, s in rows)
    target.write_text('{"seconds": {\n' + text + "\n}}\n")
