"""The layering written in pyproject.toml ([tool.importlinter]) holds: no module imports from a
floor above its own, the algorithms do not import the batch pipeline, and the CPU batch
backend does not import the GPU one. import-linter reads the imports without running them."""
from __future__ import annotations

import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_import_contracts_hold(monkeypatch):
    # import-linter comes with the test extra (pip install -e .[test])
    lint_imports = pytest.importorskip("importlinter.cli").lint_imports
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(ROOT)
    code = lint_imports(config_filename=os.path.join(ROOT, "pyproject.toml"), no_cache=True,
                        no_logo=True)
    assert code == 0, "an import contract of pyproject.toml is broken (run `lint-imports`)"
