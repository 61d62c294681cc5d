"""One-off studies: scripts whose Markdown output is committed in ``benchmarks/results/``
(one folder per study, named below; ``benchmarks/results/README.md`` is the index).

They are not part of the benchmark harness (``benchmarks.runner`` and what it uses);
each runs as ``python -m benchmarks.studies.NAME --help`` from the repository root:

- ``bench_fit``: speed of ``NeSymReSRegressor.fit`` by stage and beam size, and of
  ``predict`` (``fit-speed/fit-benchmark.md``);
- ``time_contract``: wall time of fits against the promise of ``max_time``, idle or
  beside CPU-bound processes (``time-contract/idle.md``, ``time-contract/busy.md``);
- ``spurious_variables``: issue 53's random data: unused columns, silent constants, fits
  over the promise of ``max_time``, fake fractions (``spurious-variables/``);
- ``offsets``: issue 65's ``b + x0*sin(x1)`` for large offsets ``b``, with and without
  the offset taken out (``offsets/offsets.md``);
- ``quintic_ratio``: issue 53's ``x0**5/x1**3`` at default settings and 1 and 3 s
  (``printed-law/quintic-ratio.md``);
- ``six_feature_example``: issue 37's 6-feature example at several budgets
  (``time-contract/six-feature-example.md``);
- ``budget_curve``: two methods of a result CSV per dataset and budget, with the paired
  difference (``time-contract/curve*.md``);
- ``same_equations``: whether a change of code leaves the selected equations as they
  were, from two checkouts (``refactors/refactor-38-equations.md``);
- ``compare_models``: saved models at one beam size over several seeds, through the
  runner (``model-comparison/``);
- ``bench_pretraining``: host time per training step before and after (``loop``), the
  loader on a large bank (``data``), and throughput of bank generation, batch sampling
  and training (``pretraining/pretraining-<mode>.md``, ``pretraining/pretraining-benchmark.md``);
- ``batch_scaling``: larger batches at equal equations, rate scaled
  (``pretraining/batch-scaling.md``);
- ``bench_simplification``: ``sympy.simplify`` against automatic evaluation in the
  generator (``pretraining/simplification-benchmark.md``);
- ``bank_statistics``: what training draws from a skeleton bank under each weighting
  (``pretraining/bank-statistics.md``);
- ``size_selection``: model sizes compared from short training runs
  (``pretraining/size-selection.md``);
- ``data_scaling``: validation accuracy against bank size at equal compute
  (``pretraining/data-scaling.md``);
- ``dsr_nguyen``: our DSR re-implementation on Nguyen-1..8 against the DSR paper's
  recovery rates (``dsr/dsr-nguyen.md``).
"""

from pathlib import Path


def publish(report: str, path: Path | None) -> None:
    """Print a study's Markdown ``report`` and, when ``path`` is given, write it there."""
    print(report)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(report)
