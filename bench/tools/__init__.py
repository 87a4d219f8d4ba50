"""Measurement tools that write no result table: A/B comparisons and profilers.
Run one with ``python3 -m bench.tools.NAME --help``; ``python3 -m bench`` lists them."""
