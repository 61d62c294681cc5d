"""Accuracy against the time budget, two methods side by side (a table for the docs).

For each dataset and budget of a result CSV: each method's A1 ood and symbolic-solution
rate (percent, failed fits count as misses), its median and 95th-percentile fit time,
and the paired difference of A1 ood with its 95% bootstrap interval over equations
(:mod:`benchmarks.studies.paired_difference`). With ``--fixed-work METHOD`` (the
estimator without ``max_time``, such as ``nesymres-auto``), a second table sets the
first method at each budget beside that fit: its A1 ood and median fit time, and the
paired difference budgeted minus fixed work (issue 54: a budget only cuts the fixed
work, so it should not lose where the fixed work's fits end within it).

    python -m benchmarks.studies.budget_curve benchmarks/results/time-contract/curve.csv \\
        nesymres-operon operon-timed --out benchmarks/results/time-contract/curve.md
    python -m benchmarks.studies.budget_curve benchmarks/results/plan/curve.csv \\
        nesymres-operon operon-timed --fixed-work nesymres-auto --out benchmarks/results/plan/curve.md
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from benchmarks.studies.paired_difference import paired_table


def table(results: pd.DataFrame, first: str, second: str) -> str:
    """The markdown table of ``first`` against ``second``."""
    differences = paired_table(results, first, second, "a1_ood")
    lines = [
        f"| dataset | budget (s) | {first}: A1 ood | solution | median / p95 fit (s) "
        f"| {second}: A1 ood | solution | median / p95 fit (s) | difference in A1 ood [95%] | pairs |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for (dataset, value), group in results.groupby(["dataset", "value"]):
        cells = []
        for method in (first, second):
            fits = group[group["method"] == method]
            ok = fits["status"] == "ok"
            a1 = 100 * (fits["a1_ood"].where(ok, 0).fillna(0)).mean()
            solution = 100 * (fits["solution"].where(ok, False).fillna(False).astype(bool)).mean()
            times = fits["fit_time"]
            cells.append(f"{a1:.1f} | {solution:.1f} | {times.median():.2f} / {times.quantile(0.95):.2f}")
        row = differences[(differences["dataset"] == dataset) & (differences["value"] == value)]
        difference = (
            f"{row['difference'].iloc[0]:+.1f} [{row['low'].iloc[0]:.1f}, {row['high'].iloc[0]:.1f}]"
            if len(row)
            else ""
        )
        pairs = int(row["pairs"].iloc[0]) if len(row) else 0
        lines.append(f"| {dataset} | {value:g} | {cells[0]} | {cells[1]} | {difference} | {pairs} |")
    return "\n".join(lines) + "\n"


def fixed_work_table(results: pd.DataFrame, budgeted: str, fixed: str) -> str:
    """The markdown table of ``budgeted`` at each budget against the ``fixed`` work's fits."""
    timed = results[results["method"] == budgeted]
    fixed_fits = results[results["method"] == fixed]
    copies = [fixed_fits.assign(value=value) for value in sorted(timed["value"].unique())]
    paired = pd.concat([timed, *copies], ignore_index=True)
    differences = paired_table(paired, budgeted, fixed, "a1_ood")
    lines = [
        f"| dataset | budget (s) | {budgeted}: A1 ood | median fit (s) | {fixed} (fixed work): A1 ood "
        "| median / p95 fit (s) | budgeted - fixed work [95%] | pairs |",
        "|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for row in differences.itertuples():
        times = timed.loc[(timed["dataset"] == row.dataset) & (timed["value"] == row.value), "fit_time"]
        fixed_times = fixed_fits.loc[fixed_fits["dataset"] == row.dataset, "fit_time"]
        lines.append(
            f"| {row.dataset} | {row.value:g} | {row.first:.1f} | {times.median():.2f} | {row.second:.1f} "
            f"| {fixed_times.median():.2f} / {fixed_times.quantile(0.95):.2f} "
            f"| {row.difference:+.1f} [{row.low:.1f}, {row.high:.1f}] | {row.pairs} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("--fixed-work", help="a method fitted without max_time, set beside the first")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    results = pd.read_csv(args.results)
    results["value"] = pd.to_numeric(results["value"])
    text = table(results[results["method"] != args.fixed_work], args.first, args.second)
    if args.fixed_work is not None:
        text += "\n" + fixed_work_table(results, args.first, args.fixed_work)
    print(text)
    if args.out is not None:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
