"""Which compute devices ("cpu", "gpu") this process can use."""
from __future__ import annotations

__all__ = ["backend_available", "gpu_unavailable_reason", "GPU_EXTRA_HINT"]

GPU_EXTRA_HINT = ("pip install hornet-py[gpu] (CuPy for CUDA 12; hornet-py[cuda13] for CUDA 13)")


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


def gpu_unavailable_reason() -> str | None:
    """Why the GPU backend cannot be used here (naming the extra that installs CuPy when CuPy
    is missing), or None when it can."""
    try:
        import cupy
    except ImportError:
        return f"CuPy is not installed: {GPU_EXTRA_HINT}"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:          # no driver, or a CuPy built for another CUDA
        return (f"CuPy finds no usable CUDA driver or GPU ({type(e).__name__}: {e}); "
                "check that the CuPy package matches the CUDA version")
    return None if count > 0 else "CuPy sees no CUDA GPU"
