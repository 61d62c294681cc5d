"""Symbolic recovery under target noise (SRBench's ground-truth track), from a result
CSV of the ``noise`` profile.

Only the equations with every fit of the run (the most rows of any equation of their
dataset) are counted, so a run still in progress compares like with like. Per dataset,
for each method and noise level: the symbolic solution rate and A1 ood
(percent; failed fits count as neither) and the median R^2 on the noise-free iid test
points (over the fits that returned a model), from :func:`benchmarks.report.summarize`.
Then the paired difference in solution rate between two methods at each level, with a
95% bootstrap interval over equations
(:func:`benchmarks.studies.paired_difference.paired_table`).

Command line::

    python -m benchmarks.studies.noise benchmarks/results/noise/noise.csv --out benchmarks/results/noise/noise.md
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from benchmarks.report import DATASET_LABELS, METHOD_LABELS, load_results, summarize
from benchmarks.studies.paired_difference import paired_table

FIRST, SECOND = "nesymres-operon", "operon-timed"


def finished_equations(results: pd.DataFrame) -> pd.DataFrame:
    """The rows of the equations with as many rows as the most of their dataset."""
    fits = results.groupby(["dataset", "equation"])["method"].transform("size")
    return results[fits == fits.groupby(results["dataset"]).transform("max")]


def noise_table(results: pd.DataFrame) -> pd.DataFrame:
    """One row per dataset, method, setting and noise level: ``n`` fits, ``solution``,
    ``a1_ood`` (fractions), median ``r2_iid`` and ``failed`` fits."""
    columns = ["dataset", "method", "parameter", "value", "noise", "n", "solution", "a1_ood", "r2_iid", "failed"]
    return summarize(results)[columns].sort_values(["dataset", "method", "value", "noise"], ignore_index=True)


def paired_by_noise(results: pd.DataFrame, first: str, second: str, n_resamples: int = 10_000) -> pd.DataFrame:
    """:func:`~benchmarks.studies.paired_difference.paired_table` of the solution rate
    at each noise level, with a ``noise`` column."""
    levels = sorted(results["noise"].unique())
    tables = [
        paired_table(results[results["noise"] == level], first, second, "solution", n_resamples).assign(noise=level)
        for level in levels
    ]
    return pd.concat(tables, ignore_index=True)


def markdown(results: pd.DataFrame, first: str = FIRST, second: str = SECOND, n_resamples: int = 10_000) -> str:
    """A table per dataset and the paired differences, as Markdown."""
    results = finished_equations(results)
    table = noise_table(results)
    paired = paired_by_noise(results, first, second, n_resamples)
    lines = []
    for dataset, rows in table.groupby("dataset", sort=False):
        n_equations = results.loc[results["dataset"] == dataset, "equation"].nunique()
        lines += [
            f"### {DATASET_LABELS.get(dataset, dataset)} ({n_equations} equations)",
            "",
            "| Method | Setting | Noise | Fits | Solution (%) | A1 ood (%) | Median R^2 iid | Failed |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
        ]
        for row in rows.itertuples():
            lines.append(
                f"| {METHOD_LABELS.get(row.method, row.method)} | {row.parameter}={row.value:g} | {row.noise:g} "
                f"| {row.n} | {100 * row.solution:.1f} | {100 * row.a1_ood:.1f} | {row.r2_iid:.4f} | {row.failed} |"
            )
        lines += [
            "",
            f"Solution rate, {first} minus {second} (percentage points; fits paired by equation and seed, "
            "95% bootstrap interval over equations):",
            "",
            f"| Setting | Noise | {first} | {second} | Difference [95% interval] | Pairs |",
            "|---|---:|---:|---:|---|---:|",
        ]
        for row in paired[paired["dataset"] == dataset].itertuples():
            lines.append(
                f"| {row.value:g} | {row.noise:g} | {row.first:.1f} | {row.second:.1f} "
                f"| {row.difference:+.1f} [{row.low:.1f}, {row.high:.1f}] | {row.pairs} |"
            )
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", type=Path, help="a result CSV of benchmarks.runner with noise levels")
    parser.add_argument("--first", default=FIRST)
    parser.add_argument("--second", default=SECOND)
    parser.add_argument("--n-resamples", type=int, default=10_000)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    text = markdown(load_results(args.results), args.first, args.second, args.n_resamples)
    metadata = args.results.with_suffix(".json")
    if metadata.exists():
        text = f"Run: `{json.loads(metadata.read_text())['command']}`\n\n" + text
    study = "python -m benchmarks.studies.noise " + " ".join(sys.argv[1:] if argv is None else argv)
    text = f"Tables: `{study}`\n\n" + text
    if args.out:
        args.out.write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
