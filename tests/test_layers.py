"""The layering written in pyproject.toml ([tool.importlinter]) holds: no module imports from a
floor above its own, the algorithms do not import the batch pipeline, and the CPU batch
backend does not import the GPU one. import-linter reads the imports without running them."""
from __future__ import annotations

import os

from importlinter.cli import lint_imports

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_import_contracts_hold(monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(ROOT)
    code = lint_imports(config_filename=os.path.join(ROOT, "pyproject.toml"), no_cache=True,
                        no_logo=True)
    assert code == 0, "an import contract of pyproject.toml is broken (run `lint-imports`)"
