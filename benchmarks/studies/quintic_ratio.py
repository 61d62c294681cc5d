"""Issue 53's acceptance law ``x0**5/x1**3`` on U(1, 20)² (a script, not a test: it reads
the wall clock): is it found exactly at default settings and at ``max_time`` 1 and 3 s?

For each ``--seeds`` value ``s`` (0-4), 200 points: ``rng = np.random.default_rng(s)``,
``x0 = rng.uniform(1, 20, 200)``, then ``x1 = rng.uniform(1, 20, 200)``; the estimator's
``random_state`` is 0, at each of ``--settings`` (``default``: no ``max_time``; a number:
that ``max_time``), in one process after a warm-up fit that loads the model. A selected
equation is *exact* when SymPy shows it equal to the law, or (a float left in it) when it
agrees with the law to ``RTOL`` on ``FRESH`` new points of U(1, 20)². Prints a markdown
table (and writes it to ``--out``).

    python -m benchmarks.studies.quintic_ratio --out benchmarks/results/printed-law/quintic-ratio.md
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import sympy

from benchmarks.studies import publish
from nesymres_sklearn import NeSymReSRegressor

LAW = "x0**5/x1**3"
X0, X1 = sympy.symbols("x0 x1", real=True)  # the estimator's feature symbols
LOW, HIGH, N_POINTS = 1.0, 20.0, 200
# Fresh points of the evaluation check, and its relative tolerance.
FRESH, RTOL = 1000, 1e-8


def data(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Issue 53's draw ``seed``: the two columns one after the other, and the law on them."""
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(LOW, HIGH, N_POINTS)
    x1 = rng.uniform(LOW, HIGH, N_POINTS)
    return np.column_stack([x0, x1]), x0**5 / x1**3


def exactness(expression: sympy.Expr) -> str:
    """``"yes (SymPy)"`` when ``expression`` is the law symbolically, ``"yes (points)"``
    when it agrees with it to ``RTOL`` on fresh points, else ``"no"`` (with the largest
    relative error there)."""
    if expression.free_symbols - {X0, X1}:
        return "no (other symbols)"
    if sympy.simplify(expression - X0**5 / X1**3) == 0:
        return "yes (SymPy)"
    X = np.random.default_rng(12345).uniform(LOW, HIGH, (FRESH, 2))
    with np.errstate(all="ignore"):
        predicted = sympy.lambdify([X0, X1], expression, "numpy")(X[:, 0], X[:, 1])
        truth = X[:, 0] ** 5 / X[:, 1] ** 3
        error = float(np.max(np.abs(np.broadcast_to(predicted, truth.shape) - truth) / truth))
    return "yes (points)" if error <= RTOL else f"no (relative error {error:.2g})"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--settings", nargs="+", default=["default", "1", "3"], help="'default' or a max_time")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    rows, n_exact = [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        NeSymReSRegressor(max_time=0.1).fit(*data(0))  # loads the model
        for seed in args.seeds:
            X, y = data(seed)
            for setting in args.settings:
                max_time = None if setting == "default" else float(setting)
                moment = time.perf_counter()
                fitted = NeSymReSRegressor(max_time=max_time, random_state=0).fit(X, y)
                seconds = time.perf_counter() - moment
                exact = exactness(fitted.expression_)
                n_exact += exact.startswith("yes")
                label = "default" if max_time is None else f"max_time={max_time:g}"
                rows.append(f"| {seed} | {label} | `{fitted.expression_}` | {exact} | {seconds:.2f} |")
    arguments = argv if argv is not None else sys.argv[1:]
    command = " ".join(["python -m benchmarks.studies.quintic_ratio", *arguments])
    report = "\n".join(
        [
            f"# `{LAW}` on U(1, 20)²: {n_exact} of {len(rows)} fits exact",
            "",
            f"Command: `{command}`  ",
            f"{N_POINTS} points per data seed (the columns drawn one after the other), `random_state=0`; exact: "
            f"equal in SymPy, or within {RTOL:g} (relative) of the law on {FRESH} fresh points.",
            "",
            "| data seed | setting | equation | exact | seconds |",
            "|---:|---|---|---|---:|",
            *rows,
        ]
    )
    publish(report + "\n", args.out)


if __name__ == "__main__":
    main()
