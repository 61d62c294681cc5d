"""Benchmark harness of the paper's section 5: datasets, metrics, method adapters,
a parallel runner with per-fit time limits, and reports. See ``docs/benchmarks.md``.

Harness: ``datasets`` (files, loader, SOOSE builder), ``metrics``, ``methods``,
``profiles``, ``tasks``, ``isolation``, ``results``, ``backends``, ``runner`` and
``report``. One-off studies, whose output is committed in ``benchmarks/results/``, are
in ``benchmarks.studies``.

Run from the repository root: ``python -m benchmarks.runner --profile quick``.
"""
