"""What recovery under noise any method that finds the law's skeleton can reach on FastSRB.

srbf's numeric recovery asks for ``FVU <= 1.19e-7`` on clean validation points. With
noise on the 512 support targets (sd = level x std(y)), the constants fitted by least
squares carry an error of their own: for a law linear in ``k`` constants, the clean FVU
is about ``level**2 * chi2_k / 512``, which at noise 0.01 has mean ``1.95e-7 * k``,
above the threshold for every ``k``. So even the law's own skeleton, fitted from the
true constants as a start, recovers a law under noise only by chance, unless its
constants are simple numbers that can be written exactly.

For each law and noise level this fits the law's expression to the noisy support points
with its numbers as free constants (SciPy's ``least_squares`` from their true values)
and scores it as :mod:`benchmarks.fastsrb.scoring` does:

- ``skeleton``: every number of the law free (integer exponents kept);
- ``snapped``: the simple numbers (integers and fractions ``p/q`` with ``|p| <= 1000`` and
  ``q <= 12``, and ``pi``) written exactly, the rest free: a method that finds the skeleton and snaps
  every simple constant exactly.

Command line::

    python -m benchmarks.fastsrb.noise_ceiling --levels 0 0.001 0.01 0.1 \\
        --out benchmarks/results/noise-search/noise-ceiling.md
"""

from __future__ import annotations

import argparse
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import sympy
from scipy.optimize import least_squares

from benchmarks.fastsrb.laws import load_laws
from benchmarks.fastsrb.sampling import make_problem
from benchmarks.fastsrb.scoring import numeric_recovery
from benchmarks.report import pipe_table, write_study

VARIANTS = ("skeleton", "snapped")
#: The largest denominator of a number written exactly by ``snapped``.
SIMPLE_DENOMINATOR = 12
#: The largest numerator (in absolute value) of a number written exactly by ``snapped``.
SIMPLE_NUMERATOR = 1000


def _simple(number: sympy.Number) -> bool:
    """Whether a number is an integer or a fraction with a small denominator."""
    value = Fraction(float(number)).limit_denominator(SIMPLE_DENOMINATOR)
    close = abs(float(value) - float(number)) <= 1e-12 * abs(float(number))
    return close and abs(value.numerator) <= SIMPLE_NUMERATOR


def free_numbers(expression: sympy.Expr, variant: str) -> list[sympy.Number]:
    """The numbers of ``expression`` that the fit frees: not integer exponents, not
    ``-1`` factors, and for ``snapped`` not simple ones."""
    exponents = {power.exp for power in expression.atoms(sympy.Pow) if power.exp.is_Integer}
    numbers = []
    for atom in expression.atoms(sympy.Number):
        if atom in exponents and atom.is_Integer or atom in (1, -1, 0):
            continue
        if variant == "snapped" and _simple(atom):
            continue
        numbers.append(atom)
    return sorted(numbers, key=float)


def fitted_fvu_recovery(law, noise: float, variant: str, index: int = 0) -> tuple[bool, int]:
    """Whether the law's expression, its free numbers fitted to problem ``index``'s noisy
    support points, recovers the law on the clean validation points; and how many numbers
    were free."""
    problem = make_problem(law, index, noise)
    expression = law.expression
    numbers = free_numbers(expression, variant)
    parameters = sympy.symbols(f"p0:{len(numbers)}")
    template = expression.xreplace(dict(zip(numbers, parameters)))
    symbols = [variable.symbol for variable in law.variables]
    function = sympy.lambdify([*symbols, *parameters], template, modules="numpy")

    def predict(X, values):
        with np.errstate(all="ignore"):
            return np.broadcast_to(np.asarray(function(*X.T, *values), dtype=np.float64), (len(X),))

    start = np.array([float(number) for number in numbers])
    values = start
    if len(numbers):
        scale = np.max(np.abs(problem.y_support)) or 1.0

        def residuals(relative):
            return (predict(problem.X_support, start * relative) - problem.y_support) / scale

        relative = least_squares(residuals, np.ones(len(numbers)), x_scale="jac").x
        values = start * relative
    return numeric_recovery(problem.y_validation, predict(problem.X_validation, values)), len(numbers)


def run(levels, variants) -> pd.DataFrame:
    rows = []
    for name, law in load_laws().items():
        for level in levels:
            for variant in variants:
                recovered, free = fitted_fvu_recovery(law, level, variant)
                rows.append(
                    {"law": name, "noise": level, "variant": variant, "recovered": recovered, "free_numbers": free}
                )
    return pd.DataFrame(rows)


def markdown(results: pd.DataFrame, command: str) -> str:
    table = (
        results.groupby(["noise", "variant"])
        .agg(laws=("law", "count"), recovered_percent=("recovered", lambda r: round(100 * r.mean(), 1)))
        .reset_index()
    )
    return (
        "# The recovery ceiling under noise on FastSRB\n\n"
        "Each law's own expression, its numbers fitted by least squares from their true values to the"
        " noisy support points of problem 0, scored on the clean validation points (srbf's FVU <= 1.19e-7)."
        f" `skeleton`: every number free; `snapped`: integers and fractions with numerators up to"
        f" {SIMPLE_NUMERATOR} and denominators up to {SIMPLE_DENOMINATOR}, and pi, exact. Command: `{command}`\n\n"
        + pipe_table(table)
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=float, nargs="+", default=[0.001, 0.01, 0.1])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--out", type=Path, help="markdown file (a CSV beside it)")
    args = parser.parse_args(argv)
    results = run(args.levels, args.variants)
    command = "python -m benchmarks.fastsrb.noise_ceiling " + " ".join(argv if argv is not None else sys.argv[1:])
    write_study(markdown(results, command), results, args.out)


if __name__ == "__main__":
    main()
