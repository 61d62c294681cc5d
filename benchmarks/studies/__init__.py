"""One-off studies: scripts whose Markdown output is committed in ``benchmarks/results/``.

They are not part of the benchmark harness (``benchmarks.runner`` and what it uses);
each runs as ``python -m benchmarks.studies.NAME --help`` from the repository root:

- ``bench_fit``: speed of ``NeSymReSRegressor.fit`` by stage and beam size, and of
  ``predict`` (``fit_benchmark.md``);
- ``compare_models``: saved models at one beam size over several seeds, through the
  runner (``model_comparison.md``);
- ``bench_pretraining``: host time per training step before and after (``loop``), the
  loader on a large bank (``data``), and throughput of bank generation, batch sampling
  and training (``pretraining_<mode>.md``, ``pretraining_benchmark.md``);
- ``batch_scaling``: larger batches at equal equations, rate scaled
  (``batch_scaling.md``);
- ``bench_simplification``: ``sympy.simplify`` against automatic evaluation in the
  generator (``simplification_benchmark.md``);
- ``bank_statistics``: what training draws from a skeleton bank under each weighting
  (``bank_statistics.md``);
- ``size_selection``: model sizes compared from short training runs
  (``size_selection.md``);
- ``data_scaling``: validation accuracy against bank size at equal compute
  (``data_scaling.md``).
"""
