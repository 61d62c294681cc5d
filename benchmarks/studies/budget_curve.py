"""Accuracy against the time budget, two methods side by side (a table for the docs).

For each dataset and budget of a result CSV: each method's A1 ood and symbolic-solution
rate (percent, failed fits count as misses), its median and 95th-percentile fit time,
and the paired difference of A1 ood with its 95% bootstrap interval over equations
(:mod:`benchmarks.studies.paired_difference`).

    python -m benchmarks.studies.budget_curve benchmarks/results/time-contract/curve.csv \\
        nesymres-operon operon-timed --out benchmarks/results/time-contract/curve.md
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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    results = pd.read_csv(args.results)
    results["value"] = pd.to_numeric(results["value"])
    text = table(results, args.first, args.second)
    print(text)
    if args.out is not None:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
