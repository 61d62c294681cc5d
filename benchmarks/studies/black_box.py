"""Black-box data, where no exact law is expected: test R² of the package beside Operon
alone and linear regression.

Sets (scikit-learn's, the development sets of issue 64): ``diabetes`` (442 x 10),
``friedman1`` (600 x 10, noise 1), ``friedman3`` (600 x 4, Gaussian noise of 20% of the
clean target's standard deviation), each drawn with seed 0. For each of 5 random 75/25
splits (seeds 0-4): each method fits the training share and is scored by R² on the test
share; the table gives the median over the splits (and the median fit seconds). Methods:
``ours`` (:class:`~nesymres_sklearn.NeSymReSRegressor` with ``max_time``), ``operon``
(Operon alone with the hybrid's settings for a wall-clock budget,
:class:`benchmarks.methods.operon.OperonTimedAdapter`) and ``linear``
(``sklearn.linear_model.LinearRegression``).

Command line (each fit one process at a time, ``nice``)::

    python -m benchmarks.studies.black_box --budgets 1 --out benchmarks/results/black-box/black-box-1s.md
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_diabetes, make_friedman1, make_friedman3
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

from benchmarks.methods.operon import OperonTimedAdapter
from benchmarks.report import pipe_table, write_study

SETS = ("diabetes", "friedman1", "friedman3")
METHODS = ("ours", "operon", "linear")


def black_box_set(name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of the set ``name`` (seed 0)."""
    if name == "diabetes":
        return load_diabetes(return_X_y=True)
    if name == "friedman1":
        return make_friedman1(n_samples=600, n_features=10, noise=1.0, random_state=0)
    if name == "friedman3":
        X, y = make_friedman3(n_samples=600, noise=0.0, random_state=0)
        return X, y + np.random.default_rng(0).normal(0.0, 0.2 * np.std(y), len(y))
    raise ValueError(f"Unknown black-box set {name!r}; expected one of {SETS}.")


def fitted(method: str, budget: float, seed: int, X: np.ndarray, y: np.ndarray, settings=None):
    """The fitted model of ``method`` (its ``predict`` scores it)."""
    if method == "linear":
        return LinearRegression().fit(X, y)
    if method == "operon":
        return OperonTimedAdapter(budget, random_state=seed).fit(X, y)
    if method == "ours":
        from nesymres_sklearn import NeSymReSRegressor

        return NeSymReSRegressor(max_time=budget, random_state=seed, search_settings=settings).fit(X, y)
    raise ValueError(f"Unknown method {method!r}; expected one of {METHODS}.")


def run(sets, methods, budgets, seeds, settings=None) -> pd.DataFrame:
    """One row per set, method, budget and split: test R² and fit seconds."""
    import warnings

    rows = []
    for name in sets:
        X, y = black_box_set(name)
        for seed in seeds:
            X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=seed)
            for method in methods:
                for budget in budgets if method != "linear" else [0.0]:
                    moment = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model = fitted(method, budget, seed, X_train, y_train, settings)
                        seconds = time.perf_counter() - moment
                        predicted = np.asarray(model.predict(X_test), dtype=np.float64)
                    r2 = r2_score(y_test, predicted) if np.all(np.isfinite(predicted)) else -np.inf
                    equation = str(getattr(model, "expression_", ""))[:200]
                    rows.append(
                        dict(set=name, method=method, budget=budget, seed=seed, r2=r2, seconds=seconds, law=equation)
                    )
    return pd.DataFrame(rows)


def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Median test R² and fit seconds per set, method and budget."""
    grouped = results.groupby(["set", "method", "budget"], sort=False)
    return grouped.agg(splits=("r2", "size"), median_r2=("r2", "median"), median_seconds=("seconds", "median"))


def markdown(results: pd.DataFrame, command: str) -> str:
    table = summary(results).reset_index().round(3)
    return f"Test R², median of 5 random 75/25 splits. Command: `{command}`\n\n" + pipe_table(table)


def main(argv=None) -> None:
    import sys

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--budgets", type=float, nargs="+", default=[1.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--held-out-folds", type=int, default=None, help="SearchSettings.held_out_folds")
    parser.add_argument("--held-out-standard-errors", type=float, default=None)
    parser.add_argument("--out", type=Path, default=None, help="Markdown; the CSV beside it")
    args = parser.parse_args(argv)
    from nesymres_sklearn.search.settings import SearchSettings

    knobs = {}
    if args.held_out_folds is not None:
        knobs["held_out_folds"] = args.held_out_folds
    if args.held_out_standard_errors is not None:
        knobs["held_out_standard_errors"] = args.held_out_standard_errors
    settings = SearchSettings(**knobs) if knobs else None
    results = run(args.sets.split(","), args.methods.split(","), args.budgets, args.seeds, settings)
    text = markdown(
        results, "python -m benchmarks.studies.black_box " + " ".join(sys.argv[1:] if argv is None else argv)
    )
    write_study(text, results, args.out)


if __name__ == "__main__":
    main()
