"""The threshold of the units' fallback, ``SearchSettings.units_min_r2``, chosen on a
validation set of dimensionally consistent laws (a script, not a test).

Each law is a validation equation ``f(z_1, .., z_k)`` (``validation-wc``: skeletons the
pretraining generator wrote, held out of training; never a benchmark equation) made
physical by a random assignment of units over length, mass and time: three
"repeating" quantities ``q`` with random independent dimensions (``U(1, 5)``), and for
every ``z_j`` a feature ``x_j = z_j * q**a_j`` whose dimensions are those of
``q**a_j``, so that ``z_j`` is a dimensionless group; then ``y = q**b * f(z)`` with
random integer exponents ``a_j``, ``b`` in ``[-1, 1]``. The columns come in a random
order with their unit strings. Each law is fitted once with units and a threshold above
1 (every candidate stays, so ``equations_`` holds the consistent and the inconsistent
ones), and each threshold ``t`` is then applied to that table: the consistent rows
alone when the best of them explains at least ``t`` of ``y``'s variance on the
training points, else all rows, and the lowest score wins. The report gives, per
threshold, the share of laws whose selected row has R² >= 0.99 on 2,000 new points of
the same supports (A1-like) and the median of that R²; the threshold kept is the
smallest of those with the largest share, then the largest median.

Usage::

    python -m benchmarks.studies.units_threshold --laws 40 \
        --output benchmarks/results/units/threshold.md
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import sympy

from benchmarks.datasets import load_dataset
from benchmarks.studies import publish
from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.search.settings import SearchSettings
from nesymres_sklearn.units.consistency import InconsistentError, sympy_dimension
from nesymres_sklearn.units.stage import Units

BASES = ("m", "kg", "s")
THRESHOLDS = (0.0, 0.5, 0.8, 0.9, 0.95, 0.99, 0.999, 1.01)
N_TRAIN, N_TEST = 128, 2000


def _unit(exponents) -> str:
    return "*".join(f"{base}**{int(e)}" for base, e in zip(BASES, exponents) if e) or ""


def law(index: int, seed: int, flip: bool = False):
    """The ``index``-th law: unit strings of the columns and of ``y``, and a sampler of
    ``(X, y)`` on ``n`` points. With ``flip``, each ``z_j`` of one sign on its support
    is, with probability one half, the reciprocal of its feature's group (``x_j =
    q**a_j / z_j``): a law holds a group either way up (``v/c`` or ``c/v``)."""
    rng = np.random.default_rng([seed, index])
    equation = load_dataset("validation-wc")[index]
    k = equation.n_variables
    while True:
        repeating = rng.integers(-2, 3, size=(3, 3))
        if abs(np.linalg.det(repeating)) > 0.5:
            break
    a = rng.integers(-1, 2, size=(k, 3))
    b = rng.integers(-1, 2, size=3)
    order = rng.permutation(3 + k)
    units = [_unit(row @ repeating) for row in np.vstack([np.eye(3, dtype=int), a])]
    one_sign = np.array([lo * hi > 0 for lo, hi in equation.supports])
    flipped = one_sign & (rng.random(k) < 0.5) if flip else np.zeros(k, dtype=bool)

    def sample(n: int, stream: int):
        points = np.random.default_rng([seed, index, stream])
        q = points.uniform(1, 5, size=(n, 3))
        z = np.column_stack([points.uniform(lo, hi, n) for lo, hi in equation.supports])
        scale = np.prod(q[:, None, :] ** a[None, :, :], axis=2)
        X = np.column_stack([q, np.where(flipped, 1 / z, z) * scale])[:, order]
        y = np.prod(q**b, axis=1) * equation.evaluate(z)
        return X, y

    return [units[j] for j in order], _unit(b @ repeating), sample, equation.name


def study(n_laws: int, max_time: float | None, seed: int) -> list[dict]:
    """Per law: each row's consistency, training R² and score, and test R²."""
    results = []
    for index in range(n_laws):
        X_units, y_units, sample, name = law(index, seed)
        X, y = sample(N_TRAIN, 0)
        X_test, y_test = sample(N_TEST, 1)
        if not (np.all(np.isfinite(y)) and np.all(np.isfinite(y_test))) or np.ptp(y) == 0:
            continue
        settings = SearchSettings(units_min_r2=1.01)  # every candidate stays in equations_
        moment = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reg = NeSymReSRegressor(max_time=max_time, random_state=seed, search_settings=settings).fit(
                X, y, X_units=X_units, y_units=y_units
            )
        seconds = time.perf_counter() - moment
        units = Units.parse(X_units, y_units, X.shape[1])
        symbols = sympy.symbols([f"x{j}" for j in range(X.shape[1])], real=True)
        rows = []
        for i, expression in enumerate(reg.equations_["expression"]):
            try:
                consistent = np.allclose(sympy_dimension(expression, symbols, units.features), units.target)
            except (InconsistentError, TypeError, ValueError):
                consistent = False
            with np.errstate(all="ignore"):
                train, test = _r2(y, reg.predict(X, index=i)), _r2(y_test, reg.predict(X_test, index=i))
            rows.append((consistent, train, float(reg.equations_["score_lower_is_better"].iloc[i]), test))
        results.append({"name": name, "rows": rows, "seconds": seconds})
    return results


def _r2(y: np.ndarray, predicted: np.ndarray) -> float:
    if not np.all(np.isfinite(predicted)):
        return -np.inf
    return float(1 - np.mean((y - predicted) ** 2) / np.var(y))


def selected(rows: list[tuple], threshold: float) -> float:
    """Test R² of the row that a threshold selects."""
    consistent = [row for row in rows if row[0]]
    pool = consistent if consistent and max(row[1] for row in consistent) >= threshold else rows
    return min(pool, key=lambda row: row[2])[3]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--laws", type=int, default=40)
    parser.add_argument("--max-time", type=float, help="seconds per fit (default: fixed work, deterministic)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    results = study(args.laws, args.max_time, args.seed)
    table = []
    for threshold in THRESHOLDS:
        r2 = np.array([selected(result["rows"], threshold) for result in results])
        table.append((threshold, float(np.mean(r2 >= 0.99)), float(np.median(r2))))
    best = max((share, median) for _, share, median in table)
    chosen = min(threshold for threshold, share, median in table if (share, median) == best)
    lines = [
        f"# Units: the fallback threshold on {len(results)} dimensionally consistent laws",
        "",
        f"`python -m benchmarks.studies.units_threshold --laws {args.laws} --seed {args.seed}"
        + ("" if args.max_time is None else f" --max-time {args.max_time}")
        + "`: validation-wc skeletons with random units (length, mass, time), "
        f"{N_TRAIN} training points, the estimator's defaults at max_time={args.max_time}; "
        f"median fit {np.median([r['seconds'] for r in results]):.2f} s. 1.01: never filter.",
        "",
        "| units_min_r2 | share with test R² >= 0.99 | median test R² |",
        "|---:|---:|---:|",
        *(f"| {threshold} | {share:.3f} | {median:.4f} |" for threshold, share, median in table),
        "",
        f"Kept: {chosen} (the smallest with the largest share, then the largest median).",
    ]
    report = "\n".join(lines) + "\n"
    publish(report, args.output)


if __name__ == "__main__":
    main()
