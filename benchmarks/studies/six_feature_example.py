"""Issue 37's 6-feature example at several budgets (a script, not a test: it reads the
wall clock).

``y = x0*x1 + sin(x2) - x3 + x4*x5`` on 200 points drawn from U(-3, 3) with
``default_rng(0)``, the default estimator with ``random_state=0`` at each ``--budgets``
value, in one process after a warm-up fit that loads the model. Prints a markdown table
of the fit time, R² on the data and the selected equation (and writes it to ``--out``).

    python -m benchmarks.studies.six_feature_example --out benchmarks/results/time-contract/six-feature-example.md
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

from benchmarks.studies import publish
from nesymres_sklearn import NeSymReSRegressor

LAW = "x0*x1 + sin(x2) - x3 + x4*x5"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", type=float, nargs="+", default=[1.0, 3.0, 5.0, 10.0])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    X = np.random.default_rng(0).uniform(-3, 3, (200, 6))
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) - X[:, 3] + X[:, 4] * X[:, 5]
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        NeSymReSRegressor(max_time=0.1).fit(X[:, :2], y)  # loads the model
        for budget in args.budgets:
            moment = time.perf_counter()
            fitted = NeSymReSRegressor(max_time=budget, random_state=0).fit(X, y)
            seconds = time.perf_counter() - moment
            rows.append(f"| {budget:g} | {seconds:.2f} | {fitted.score(X, y):.4f} | `{fitted.expression_}` |")
    command = "python -m benchmarks.studies.six_feature_example" + (f" --out {args.out}" if args.out else "")
    report = "\n".join(
        [
            f"# Issue 37's 6-feature example: `{LAW}`",
            "",
            f"Command: `{command}`  ",
            "200 points on U(-3, 3), `default_rng(0)`, the default estimator with `random_state=0`.",
            "",
            "| max_time | seconds | R² | equation |",
            "|---:|---:|---:|---|",
            *rows,
        ]
    )
    publish(report + "\n", args.out)


if __name__ == "__main__":
    main()
