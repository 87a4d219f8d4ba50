"""Shared fixtures: where the real graphs are, which backends exist, Hypothesis profiles."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("HORNET_DATA", ROOT.parent / "shared" / "data"))

settings.register_profile(
    "ci", max_examples=30, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev", max_examples=60, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough", max_examples=600, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def gpu_available() -> bool:
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


HAS_GPU = gpu_available()
BACKENDS = [
    "cpu",
    pytest.param("gpu", marks=[pytest.mark.gpu,
                               pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU / CuPy")]),
]


@pytest.fixture(params=BACKENDS)
def device(request) -> str:
    """Backend under test: every test taking ``device`` runs on the CPU and (if present) the GPU."""
    return request.param


def dataset_files() -> list[Path]:
    """Every graph file in shared/data (empty when the folder is absent)."""
    if not DATA_DIR.is_dir():
        return []
    return sorted(p for p in DATA_DIR.iterdir() if p.name.endswith(".gz"))


needs_data = pytest.mark.skipif(not DATA_DIR.is_dir(), reason=f"no dataset folder {DATA_DIR}")
