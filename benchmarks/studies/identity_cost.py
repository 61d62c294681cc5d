"""What the polynomial identities (``nesymres_sklearn/search/identities.py``) cost, and
how many laws they find, on the many-variable validation and AI-Feynman sets (a script,
not a test: it reads the wall clock).

Each equation of ``validation-many`` and ``aifeynman-many`` is drawn with 512 points
(seed 0) and put in the search's units as the estimator does; the identities run alone
on one BLAS thread (:func:`.identity_rows`), with no deadline. Prints a markdown report
(and writes it to ``--out``).

    python -m benchmarks.studies.identity_cost --out benchmarks/results/identities/cost.md
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from benchmarks.datasets import load_dataset
from benchmarks.studies import publish
from nesymres_sklearn.search.identities import identity_rows
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.scaling import Scaling
from nesymres_sklearn.search.settings import SearchSettings

DATASETS = ("validation-many", "aifeynman-many")
N_POINTS = 512


def timed(X: np.ndarray, y: np.ndarray) -> tuple[float, bool]:
    """Seconds the identities take on ``(X, y)`` in the search's units, and whether they found a law."""
    scaling = Scaling.for_data(X, y)
    problem = Problem(scaling.scale_X(X), scaling.scale_y(y))
    started = time.perf_counter()
    rows, _ = identity_rows(problem, SearchSettings())
    return time.perf_counter() - started, len(rows) > 0


def report(datasets=DATASETS) -> str:
    lines = [
        "# What the identities cost",
        "",
        f"`python -m benchmarks.studies.identity_cost`: {N_POINTS} points (seed 0) per equation, the identities alone.",
        "",
        "| dataset | equations | laws found | median ms | max ms |",
        "|---|---:|---:|---:|---:|",
    ]
    every = []
    for name in datasets:
        results = [timed(*equation.sample_train(N_POINTS, seed=0)) for equation in load_dataset(name)]
        seconds = np.array([s for s, _ in results])
        every.extend(results)
        lines.append(
            f"| {name} | {len(results)} | {sum(f for _, f in results)} | "
            f"{1e3 * np.median(seconds):.1f} | {1e3 * seconds.max():.1f} |"
        )
    seconds, found = np.array([s for s, _ in every]), sum(f for _, f in every)
    lines.append(f"| all | {len(every)} | {found} | {1e3 * np.median(seconds):.1f} | {1e3 * seconds.max():.1f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="also write the markdown report here")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    publish(report(), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
