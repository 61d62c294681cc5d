"""How close the estimated noise level (``noise_std_``, :mod:`nesymres_sklearn.search.noise`)
comes to the truth on the validation sets.

For each equation: ``--points`` training points (seed 0), Gaussian noise of standard
deviation ``level * std(y)`` added, and the ratio of the estimate to that standard
deviation. The table gives, per set and level, the share of equations within a factor
of 1.5 (and below, above), the median ratio and the median seconds per estimate; the
settings (``SearchSettings.noise_quantile``) can be compared with ``--quantile``. A law
that varies faster than the points resolve (``sin(x**3)`` over many periods) is noise to
any estimate from those points: ``resolved`` marks the laws whose noise-free points read
as less than half the level's noise, and the last rows count those alone.
``--log-span`` sets ``SearchSettings.noise_log_span`` (``none``: no feature read in its
logarithm); :mod:`benchmarks.fastsrb.noise_level` adds FastSRB's laws as a set.

Command line::

    python -m benchmarks.studies.noise_level --out benchmarks/results/noise-level/validation.md
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.datasets import load_dataset
from benchmarks.report import pipe_table, write_study
from nesymres_sklearn.search.noise import noise_std
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.settings import SearchSettings

SETS = ("validation-wc", "validation-nc", "validation-fc", "validation-many")
LEVELS = (0.01, 0.1)


def draws(name: str, n_points: int):
    """``(equation, X, y)`` of each equation of the data set ``name`` (noise-free targets)."""
    for equation in load_dataset(name):
        try:
            X, y = equation.sample_train(n_points, 0)
        except ValueError:
            continue
        yield equation.name, X, y


def ratios(sets, levels, n_points: int, settings: SearchSettings, draw=draws) -> pd.DataFrame:
    """One row per set, equation and level: the estimate over the truth, and its seconds
    (each set's equations from ``draw(name, n_points)``, :func:`draws` by default)."""
    rows = []
    for name in sets:
        for equation, X, y in draw(name, n_points):
            if np.ptp(y) == 0:
                continue
            clean = noise_std(Problem(X, y), settings)
            for level in levels:
                truth = level * float(np.std(y))
                noisy = y + np.random.default_rng(1).normal(0.0, truth, len(y))
                moment = time.perf_counter()
                estimate = noise_std(Problem(X, noisy), settings)
                seconds = time.perf_counter() - moment
                ratio = estimate / truth
                rows.append(
                    dict(set=name, equation=equation, level=level, ratio=ratio, seconds=seconds,
                         resolved=bool(clean < 0.5 * truth))
                )  # fmt: skip
    return pd.DataFrame(rows)


def summary(table: pd.DataFrame) -> pd.DataFrame:
    within = (table["ratio"] <= 1.5) & (table["ratio"] >= 1 / 1.5)
    table = table.assign(within=within, low=table["ratio"] < 1 / 1.5, high=table["ratio"] > 1.5)
    resolved = table[table["resolved"]]
    groups = [table.groupby(["set", "level"]), table.groupby(["level"]), resolved.groupby(["level"])]
    parts = []
    for grouped in groups:
        part = grouped.agg(
            n=("ratio", "size"), within=("within", "mean"), low=("low", "mean"), high=("high", "mean"),
            median_ratio=("ratio", "median"), median_ms=("seconds", lambda s: 1000 * s.median()),
        ).reset_index()  # fmt: skip
        parts.append(part)
    parts[1].insert(0, "set", "all")
    parts[2].insert(0, "set", "all, resolved laws")
    return pd.concat(parts, ignore_index=True).round(3)


def main(argv=None, draw=draws) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--points", type=int, default=500)
    parser.add_argument("--quantile", type=float, default=SearchSettings().noise_quantile)
    parser.add_argument("--levels", type=float, nargs="+", default=list(LEVELS))
    parser.add_argument("--log-span", default=str(SearchSettings().noise_log_span), help="a number, or none")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    span = None if args.log_span.lower() == "none" else float(args.log_span)
    settings = SearchSettings(noise_quantile=args.quantile, noise_log_span=span)
    table = ratios(args.sets.split(","), args.levels, args.points, settings, draw)
    text = (
        f"Noise level estimate on {args.points} points, quantile {args.quantile}, log span {span}: "
        "share within a factor of 1.5\n\n" + pipe_table(summary(table)) + "\n"
    )
    write_study(text, table, args.out)


if __name__ == "__main__":
    main()
