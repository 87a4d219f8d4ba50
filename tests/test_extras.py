"""Each optional feature is one install away, and its error names the extra to install."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import hornet
from streams import write_stream
from streams.cli import main


@pytest.fixture
def stream(tmp_path):
    p = tmp_path / "s.arrow"
    write_stream(p, {"src": np.array([0, 1, 2]), "dst": np.array([1, 2, 0])})
    return p


def _error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("hornet: error: "), err
    return err[0]


def test_plot_without_matplotlib_names_the_plot_extra(monkeypatch, capsys, stream, tmp_path):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)       # import matplotlib fails
    code = main(["replay", str(stream), "--algos", "none", "--device", "cpu",
                 "--plot", str(tmp_path / "p.png")])
    assert code == 1
    assert "pip install hornet-py[plot]" in _error_line(capsys)
    assert not (tmp_path / "p.png").exists()


def test_gpu_without_cupy_names_the_gpu_extra(monkeypatch, capsys, stream):
    monkeypatch.setitem(sys.modules, "cupy", None)             # import cupy fails
    with pytest.raises(RuntimeError, match=r"pip install hornet-py\[gpu\]"):
        hornet.Graph(device="gpu")
    assert hornet.Graph(device="auto").device == "cpu"
    code = main(["replay", str(stream), "--algos", "none", "--device", "gpu"])
    assert code != 0 and "pip install hornet-py[gpu]" in _error_line(capsys)


def test_to_networkx_without_networkx_names_the_networkx_extra(monkeypatch):
    g = hornet.Graph.from_edges([0], [1], device="cpu")
    monkeypatch.setitem(sys.modules, "networkx", None)
    with pytest.raises(ImportError, match=r"pip install hornet-py\[networkx\]"):
        g.to_networkx()


def test_the_extras_are_declared():
    import tomllib
    from pathlib import Path
    extras = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
                           )["project"]["optional-dependencies"]
    assert any(r.startswith("matplotlib") for r in extras["plot"])
    assert any(r.startswith("cupy-cuda12x") for r in extras["gpu"])
    assert any(r.startswith("cupy-cuda12x") for r in extras["cuda12"])
    assert any(r.startswith("cupy-cuda13x") for r in extras["cuda13"])
