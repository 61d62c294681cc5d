"""Issue 37's 6-feature example at several budgets (a script, not a test: it reads the
wall clock).

``y = x0*x1 + sin(x2) - x3 + x4*x5`` on 200 points drawn from U(-3, 3) with
``default_rng(0)``, the default estimator with each ``--random-states`` value (0) at
each ``--budgets`` value, with each ``--constant-optimizers`` value (the default's), in
one process after a warm-up fit that loads the model. Prints a markdown table of the
fit time, R² on the data and the selected equation (and writes it to ``--out``).

    python -m benchmarks.studies.six_feature_example --out benchmarks/results/time-contract/six-feature-example.md
    python -m benchmarks.studies.six_feature_example --budgets 3 --random-states 0 1 2 3 4 \
        --constant-optimizers minpack operon
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from benchmarks.studies import publish
from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.search.settings import CONSTANT_OPTIMIZERS, SearchSettings

LAW = "x0*x1 + sin(x2) - x3 + x4*x5"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", type=float, nargs="+", default=[1.0, 3.0, 5.0, 10.0])
    parser.add_argument("--random-states", type=int, nargs="+", default=[0])
    parser.add_argument("--constant-optimizers", nargs="+", choices=CONSTANT_OPTIMIZERS, default=[None])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    X = np.random.default_rng(0).uniform(-3, 3, (200, 6))
    y = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) - X[:, 3] + X[:, 4] * X[:, 5]
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        NeSymReSRegressor(max_time=0.1).fit(X[:, :2], y)  # loads the model
        for budget, seed, optimizer in itertools.product(args.budgets, args.random_states, args.constant_optimizers):
            settings = None if optimizer is None else SearchSettings(constant_optimizer=optimizer)
            moment = time.perf_counter()
            fitted = NeSymReSRegressor(max_time=budget, random_state=seed, search_settings=settings).fit(X, y)
            seconds = time.perf_counter() - moment
            rows.append(
                f"| {budget:g} | {seed} | {optimizer or 'default'} | {seconds:.2f} | {fitted.score(X, y):.4f} "
                f"| `{fitted.expression_}` |"
            )
    arguments = argv if argv is not None else sys.argv[1:]
    command = " ".join(["python -m benchmarks.studies.six_feature_example", *arguments])
    report = "\n".join(
        [
            f"# Issue 37's 6-feature example: `{LAW}`",
            "",
            f"Command: `{command}`  ",
            "200 points on U(-3, 3), `default_rng(0)`, the default estimator.",
            "",
            "| max_time | random_state | constant optimizer | seconds | R² | equation |",
            "|---:|---:|---|---:|---:|---|",
            *rows,
        ]
    )
    publish(report + "\n", args.out)


if __name__ == "__main__":
    main()
