"""Does the network write the one-variable laws that the units stage leaves? (a
script, not a test: it reads the wall clock through ``max_time``).

With units, AIFM-20, -37, -38, -41, -42 and -46 reduce to one dimensionless group
``p`` and a law ``f(p)``: Bose-Einstein ``1/(exp(p) - 1)``, ``exp(p) - 1``, ``1/(exp(p) +
exp(-p))``, ``tanh(p)`` and Planck's ``p**3/(exp(p) - 1)``. Each is fitted with the
default estimator (``--max-time``, ``random_state=0``) on 128 values of ``p`` drawn as
AIFM-41's group, ``x1*x2/(2*pi*x3*x4)`` with every ``x`` from U(1, 5) (0.02 to 0.97), on
their reciprocals (the group the other way up) and on U(0.1, 3). Prints the selected
equation and its R² on the data, and whether it is the law (SRBench's check).

    python -m benchmarks.studies.one_variable_forms --out benchmarks/results/units/one-variable-forms.md
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import sympy

from benchmarks.metrics import symbolic_solution
from benchmarks.studies import publish
from nesymres_sklearn import NeSymReSRegressor

LAWS = {
    "1/(exp(p) - 1)": "1/(exp(x_1) - 1)",
    "exp(p) - 1": "exp(x_1) - 1",
    "1/(exp(p) + exp(-p))": "1/(exp(x_1) + exp(-x_1))",
    "tanh(p)": "tanh(x_1)",
    "p**3/(exp(p) - 1)": "x_1**3/(exp(x_1) - 1)",
}


def inputs(rng: np.random.Generator, n_points: int) -> dict[str, tuple[np.ndarray, str]]:
    """The inputs of each law: AIFM-41's group, its reciprocal and U(0.1, 3); the law's
    argument written over the input ``x_1``."""
    x = rng.uniform(1, 5, (n_points, 4))
    group = x[:, 0] * x[:, 1] / (2 * np.pi * x[:, 2] * x[:, 3])
    return {
        "AIFM-41's group": (group, "x_1"),
        "its reciprocal": (1 / group, "1/x_1"),
        "U(0.1, 3)": (rng.uniform(0.1, 3, n_points), "x_1"),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-time", type=float, default=1.0)
    parser.add_argument("--n-points", type=int, default=128)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    lines = [
        "# One-variable laws that the units stage leaves to the network",
        "",
        f"Command: `python -m benchmarks.studies.one_variable_forms {' '.join(argv or sys.argv[1:])}`  ",
        f"The default estimator, `max_time={args.max_time:g}`, `random_state=0`, {args.n_points} points.",
        "",
        "| law | input | R² | the law? | equation |",
        "|---|---|---:|---|---|",
    ]
    found = 0
    for law, written in LAWS.items():
        for name, (p, argument) in inputs(np.random.default_rng(0), args.n_points).items():
            truth = str(sympy.sympify(written).subs("x_1", sympy.sympify(argument)))
            values = np.asarray(sympy.lambdify(sympy.Symbol("x_1"), sympy.sympify(truth), "numpy")(p), dtype=float)
            fitted = NeSymReSRegressor(max_time=args.max_time, random_state=0).fit(p[:, None], values)
            solved = symbolic_solution(str(fitted.expression_).replace("x0", "x_1"), truth)
            found += solved
            score = fitted.score(p[:, None], values)
            lines.append(f"| `{law}` | {name} | {score:.4f} | {'yes' if solved else 'no'} | `{fitted.expression_}` |")
            print(lines[-1], flush=True)
    lines += ["", f"**{found} of {3 * len(LAWS)} fits write the law.**"]
    publish("\n".join(lines) + "\n", args.out)


if __name__ == "__main__":
    main()
