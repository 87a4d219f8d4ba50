"""Benchmarks of hornet-py. ``python3 -m bench`` lists them; ``python3 -m bench NAME`` runs one
and rewrites its table in bench/results/NAME.md. See :mod:`bench.__main__`."""
