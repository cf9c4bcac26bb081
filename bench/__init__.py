"""Benchmarks of toolweave's orchestration overhead (scripts, not tests).

Run from the repository root, e.g. ``python -m bench.overhead --quick``.
"""
