"""GPU memory under churn on every real graph (``bench memory_churn_cpu --device gpu``).

    python3 -m bench memory_churn_gpu [--rounds 100] [--graphs ca-GrQc ...] [--kronecker 20]
"""
from __future__ import annotations

from bench import memory_churn_cpu

NEEDS_GPU = True


def main(argv: list[str] | None = None) -> None:
    memory_churn_cpu.main(["--device", "gpu", *(argv or [])])


if __name__ == "__main__":
    main()
