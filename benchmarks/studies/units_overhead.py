"""What units cost a fit (a script, not a test).

On the first ``--equations`` AI-Feynman equations with at most 3 variables and the
first of the many-variable ones (128 points, seed 0), in one process whose model and
pint are loaded: the seconds of the units stage's own steps (parsing the units and
finding the groups; the network's problem in the groups; the consistency check of
every candidate of the fit), and the whole fit with units against the fit without, at
fixed work (no ``max_time``, the network alone), medians over the equations. The
whole fits differ in their search as well (the network reads other inputs), so their
difference is not the overhead alone.

Usage::

    python -m benchmarks.studies.units_overhead --equations 10
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from benchmarks.datasets import load_dataset
from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.search.fitted import CandidateRows
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.units.parsing import unit_registry
from nesymres_sklearn.units.stage import Units


def _seconds(function, *args, repeats: int = 5) -> float:
    """The fastest of ``repeats`` calls of ``function(*args)``."""
    best = np.inf
    for _ in range(repeats):
        moment = time.perf_counter()
        function(*args)
        best = min(best, time.perf_counter() - moment)
    return best


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--equations", type=int, default=10)
    args = parser.parse_args(argv)
    equations = load_dataset("aifeynman")[: args.equations] + load_dataset("aifeynman-many")[: args.equations]
    unit_registry()
    warnings.simplefilter("ignore")
    NeSymReSRegressor(beam_size=2, random_state=0).fit(*equations[0].sample_train(32, seed=0))  # loads the model
    stage, whole, plain = [], [], []
    for equation in equations:
        X, y = equation.sample_train(128, seed=0)
        X_units, y_units = equation.units
        moment = time.perf_counter()
        reg = NeSymReSRegressor(random_state=0, refine=None).fit(X, y, X_units=X_units, y_units=y_units)
        whole.append(time.perf_counter() - moment)
        moment = time.perf_counter()
        NeSymReSRegressor(random_state=0, refine=None).fit(X, y)
        plain.append(time.perf_counter() - moment)
        units = Units.parse(X_units, y_units, X.shape[1])
        problem = Problem(X, y)
        rows = CandidateRows()
        for skeleton, constants, _ in reg._fitted:
            rows.add(skeleton, constants, 0.0, 0.0, "beam")
        stage.append(
            _seconds(Units.parse, X_units, y_units, X.shape[1])
            + _seconds(units.dimensionless, problem)
            + _seconds(units.consistent, rows, problem, 0.9)
        )
    print(
        f"{len(equations)} equations: the units stage's own steps {np.median(stage) * 1e3:.1f} ms median "
        f"({np.max(stage) * 1e3:.1f} ms at most); a fit with units {np.median(whole):.3f} s, without "
        f"{np.median(plain):.3f} s (medians; paired difference {np.median(np.subtract(whole, plain)):+.3f} s)"
    )


if __name__ == "__main__":
    main()
