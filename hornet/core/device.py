"""Which compute devices ("cpu", "gpu") this process can use."""
from __future__ import annotations

__all__ = ["backend_available"]


def backend_available(device: str) -> bool:
    """True when ``device`` ("cpu" or "gpu") can be used in this process.

    "gpu" needs CuPy and at least one CUDA device; "cpu" is always available.
    """
    if device == "cpu":
        return True
    if device == "gpu":
        try:
            import cupy
            return cupy.cuda.runtime.getDeviceCount() > 0
        except Exception:
            return False
    raise ValueError(f"unknown device {device!r}")
