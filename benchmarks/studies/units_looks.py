"""The network's second looks with units (``SearchSettings.inverted_groups`` and
``reciprocal``), chosen on a validation set of dimensionally consistent laws (a
script, not a test).

The laws are those of :mod:`benchmarks.studies.units_threshold` with each group of one
sign written either way up at random (``flip``): ``validation-wc`` skeletons, never a
benchmark equation. Each law is fitted with units once per variant of the settings and
budget, on 128 points (``random_state`` = the seed), and scored on 2,000 new points of
the same supports: A1 (more than 95% of the points within ``numpy.isclose``'s
``atol=1e-3, rtol=0.05``, :mod:`benchmarks.metrics`) and test R² >= 0.99. The report
gives each variant's shares and median fit time, and its paired difference in A1
against the first variant with a 95% bootstrap interval over laws. The fits are
written to ``--fits`` (JSON lines) as they finish.

Usage::

    python -m benchmarks.studies.units_looks --laws 100 --budgets 1 3 \\
        --fits benchmarks/results/units/looks.jsonl --output benchmarks/results/units/looks.md
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.metrics import accuracy_a1, r2_finite
from benchmarks.studies import publish
from benchmarks.studies.paired_difference import paired_table
from benchmarks.studies.units_threshold import N_TEST, N_TRAIN, law
from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.search.settings import SearchSettings

#: The variants compared, the first the reference of the paired differences.
VARIANTS = {
    "neither": dict(inverted_groups=False, reciprocal=False),
    "inverted": dict(inverted_groups=True, reciprocal=False),
    "reciprocal": dict(inverted_groups=False, reciprocal="units"),
    "both": dict(inverted_groups=True, reciprocal="units"),
}


def fit_laws(n_laws: int, budgets, variants, seed: int, fits: Path | None) -> pd.DataFrame:
    """One row per law, budget and variant: A1, test R² and fit seconds."""
    rows = []
    NeSymReSRegressor(max_time=0.5).fit(np.random.default_rng(0).random((50, 2)), np.arange(50.0))  # loads the model
    for index in range(n_laws):
        X_units, y_units, sample, name = law(index, seed, flip=True)
        X, y = sample(N_TRAIN, 0)
        X_test, y_test = sample(N_TEST, 1)
        if not (np.all(np.isfinite(y)) and np.all(np.isfinite(y_test))) or np.ptp(y) == 0:
            continue
        for budget in budgets:
            for variant in variants:
                regressor = NeSymReSRegressor(
                    max_time=budget, random_state=seed, search_settings=SearchSettings(**VARIANTS[variant])
                )
                moment = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    regressor.fit(X, y, X_units=X_units, y_units=y_units)
                    seconds = time.perf_counter() - moment
                    predicted = regressor.predict(X_test)
                rows.append(
                    dict(
                        law=name,
                        budget=budget,
                        variant=variant,
                        a1=accuracy_a1(y_test, predicted),
                        r2=r2_finite(y_test, predicted),
                        seconds=seconds,
                        origin=regressor.equations_.loc[regressor.best_index_, "origin"],
                        expression=str(regressor.expression_),
                    )
                )
        if fits is not None:
            pd.DataFrame(rows).to_json(fits, orient="records", lines=True)
    return pd.DataFrame(rows)


def report(results: pd.DataFrame, command: str) -> str:
    """The Markdown table of ``results`` (see the module docstring)."""
    variants = list(dict.fromkeys(results["variant"]))
    pairs = results.assign(dataset="laws", equation=results["law"], seed=0, value=results["budget"], noise=0.0)
    pairs = pairs.rename(columns={"variant": "method"})
    lines = [
        f"# Units: the second looks on {results['law'].nunique()} dimensionally consistent laws",
        "",
        f"`{command}`: validation-wc skeletons with random units (length, mass, time), groups either way up, "
        f"{N_TRAIN} training points; A1 and R² on {N_TEST} test points. Difference: A1 against `{variants[0]}`, "
        "percentage points, 95% bootstrap interval over laws.",
        "",
        "| max_time | variant | settings | A1 % | test R² >= 0.99 % | median fit s | A1 difference |",
        "|---:|---|---|---:|---:|---:|---|",
    ]
    for budget, group in results.groupby("budget", sort=True):
        for variant in variants:
            rows = group[group["variant"] == variant]
            [paired] = paired_table(pairs[pairs["value"] == budget], variant, variants[0], "a1").itertuples()
            settings = ", ".join(f"{k}={v!r}" for k, v in VARIANTS[variant].items())
            lines.append(
                f"| {budget:g} | {variant} | {settings} | {100 * rows['a1'].mean():.1f} "
                f"| {100 * (rows['r2'] >= 0.99).mean():.1f} | {rows['seconds'].median():.2f} "
                f"| {paired.difference:+.1f} [{paired.low:+.1f}, {paired.high:+.1f}] |"
            )
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--laws", type=int, default=100)
    parser.add_argument("--budgets", type=float, nargs="+", default=[1.0, 3.0])
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fits", type=Path, help="JSON lines of every fit")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    results = fit_laws(args.laws, args.budgets, args.variants, args.seed, args.fits)
    command = (
        f"python -m benchmarks.studies.units_looks --laws {args.laws} --budgets {' '.join(map(str, args.budgets))} "
        f"--variants {' '.join(args.variants)} --seed {args.seed}"
    )
    publish(report(results, command), args.output)


if __name__ == "__main__":
    main()
