"""Benchmark harness of the paper's section 5: datasets, metrics, method adapters,
a parallel runner with per-fit time limits, and reports. See ``docs/benchmarks.md``.

Run from the repository root: ``python -m benchmarks.runner --profile quick``.
"""
