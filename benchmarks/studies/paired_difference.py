"""Paired differences between two methods of one result CSV, with bootstrap intervals.

For each dataset and setting value shared by both methods, the fits are paired by
equation and seed; the difference of a metric (percentage points) is averaged over
the seeds of each equation (and noise levels, see :mod:`benchmarks.studies.noise` for
one table per level), and its 95% interval comes from resampling equations
(``--n-resamples`` times, seeded), so that the seeds of one equation stay together.
Failed fits count as not recovered, as in the reports. ``--extra`` adds the rows of
more result CSVs (for example the comparators of an earlier run on the same machine);
a fit found in several files is taken from the first, as in :mod:`benchmarks.report`.
``--second-from`` takes the second method's fits from one other CSV only (for example
the same method in a run of earlier code), labelled with that file's name.

Command line::

    python -m benchmarks.studies.paired_difference benchmarks/results/hybrid/hybrid-v3.csv \\
        nesymres-operon operon-timed --metric a1_ood --out benchmarks/results/hybrid/hybrid-v3-paired.md
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.results import with_noise

KEYS = ["dataset", "equation", "seed", "value", "noise"]


def bootstrap_interval(differences: np.ndarray, rng: np.random.Generator, n_resamples: int = 10_000):
    """The 95% bootstrap interval of the mean of paired ``differences``."""
    draws = rng.integers(0, len(differences), size=(n_resamples, len(differences)))
    low, high = np.percentile(differences[draws].mean(axis=1), [2.5, 97.5])
    return float(low), float(high)


def paired_table(results: pd.DataFrame, first: str, second: str, metric: str, n_resamples=10_000, seed=0):
    """One row per dataset and value: mean metric of each method, the mean paired
    difference and its 95% bootstrap interval (percent), and the number of pairs."""
    scores = with_noise(results).assign(score=100 * pd.to_numeric(results[metric], errors="coerce").fillna(0.0))
    pairs = pd.merge(
        scores.loc[scores["method"] == first, [*KEYS, "score"]],
        scores.loc[scores["method"] == second, [*KEYS, "score"]],
        on=KEYS,
        suffixes=("_first", "_second"),
    )
    rng = np.random.default_rng(seed)
    rows = []
    for (dataset, value), group in pairs.groupby(["dataset", "value"], sort=True):
        per_equation = (group["score_first"] - group["score_second"]).groupby(group["equation"]).mean().to_numpy()
        low, high = bootstrap_interval(per_equation, rng, n_resamples)
        rows.append(
            dict(
                dataset=dataset,
                value=value,
                first=group["score_first"].mean(),
                second=group["score_second"].mean(),
                difference=per_equation.mean(),
                low=low,
                high=high,
                pairs=len(group),
            )
        )
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame, first: str, second: str, metric: str) -> str:
    lines = [
        f"| dataset | setting | {first} | {second} | difference [95% interval] | pairs |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for row in table.itertuples():
        lines.append(
            f"| {row.dataset} | {row.value:g} | {row.first:.1f} | {row.second:.1f} | "
            f"{row.difference:+.1f} [{row.low:.1f}, {row.high:.1f}] | {row.pairs} |"
        )
    return f"{metric}, percent; fits paired by equation and seed.\n\n" + "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", type=Path, help="a result CSV of benchmarks.runner")
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("--extra", type=Path, nargs="*", default=[], help="more result CSVs to merge")
    parser.add_argument("--second-from", type=Path, help="read the second method's fits from this CSV only")
    parser.add_argument("--metric", default="a1_ood")
    parser.add_argument("--n-resamples", type=int, default=10_000)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    results = pd.concat([pd.read_csv(path) for path in [args.results, *args.extra]], ignore_index=True)
    second = args.second
    if args.second_from:
        second = f"{args.second} ({args.second_from.stem})"
        earlier = pd.read_csv(args.second_from)
        earlier = earlier.loc[earlier["method"] == args.second].assign(method=second)
        results = pd.concat([results, earlier], ignore_index=True)
    results = with_noise(results).drop_duplicates(["method", *KEYS, *(["n_points"] if "n_points" in results else [])])
    table = paired_table(results, args.first, second, args.metric, args.n_resamples)
    text = markdown(table, args.first, second, args.metric)
    if args.out:
        args.out.write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
