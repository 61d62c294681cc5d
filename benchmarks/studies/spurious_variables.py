"""How often an unused column or a junk constant enters the selected equation (a
script, not a test): the random-data study.

Each fit draws a simple law over one or two columns, adds one to three columns that
the law does not use (all columns U(-3, 3), 200 points, in a random order), and fits
the default estimator with a fixed seed (and ``--max-time``, when given). A fit counts
as spurious when the selected expression contains an unused column, as junk when it
holds a number of magnitude below ``TINY`` (a leftover of rounding such as
``1.84e-16``), and as broken when it raises or predicts a non-finite value on its own
data. Prints a markdown report (and writes it to ``--output``).

Usage::

    python -m benchmarks.studies.spurious_variables --fits 100 \
        --output benchmarks/results/spurious-variables/after.md
    python -m benchmarks.studies.spurious_variables --fits 100 --max-time 0.5 \
        --output benchmarks/results/spurious-variables/max-time-0.5.md
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import sympy

from benchmarks.studies import publish
from nesymres_sklearn import NeSymReSRegressor

# Numbers in a selected equation below this magnitude are rounding left over.
TINY = 1e-12

# Laws over u (and v), as NumPy code; the coefficient a is drawn per fit.
LAWS_ONE = ["a*u**2", "a*sin(u)", "u**3 + a*u", "a*u*cos(u)", "cos(a*u)", "exp(u/a)", "a*u + 1"]
LAWS_TWO = ["a*u*sin(v)", "a*u*v", "u**2 + a*v", "sin(u) + a*v", "a*u*v + u", "u/(v**2 + a)", "u*exp(-v**2/a)"]


def case(seed: int) -> tuple[str, np.ndarray, np.ndarray, list[int]]:
    """The law (written over the columns), ``X``, ``y`` and the unused columns of fit ``seed``."""
    rng = np.random.default_rng(seed)
    n_used, n_unused = int(rng.integers(1, 3)), int(rng.integers(1, 4))
    law = str(rng.choice(LAWS_ONE if n_used == 1 else LAWS_TWO))
    a = round(float(rng.uniform(0.5, 3.0)), 2)
    columns = rng.permutation(n_used + n_unused)
    used, unused = columns[:n_used], sorted(int(c) for c in columns[n_used:])
    X = rng.uniform(-3, 3, (200, n_used + n_unused))
    names = {"a": a, "sin": np.sin, "cos": np.cos, "exp": np.exp, "u": X[:, used[0]]}
    if n_used == 2:
        names["v"] = X[:, used[1]]
    y = eval(law, {"__builtins__": {}}, names)
    written = law.replace("a", str(a)).replace("u", f"x{used[0]}")
    written = written.replace("v", f"x{used[1]}") if n_used == 2 else written
    return written, X, y, unused


def tiny_numbers(expression: sympy.Expr) -> list[float]:
    """The numbers of ``expression`` whose magnitude is below ``TINY`` (not 0)."""
    numbers = (float(atom) for atom in expression.atoms(sympy.Number))
    return sorted(value for value in numbers if 0 < abs(value) < TINY)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fits", type=int, default=100)
    parser.add_argument("--seeds", type=int, nargs="+", help="these fits only (default: 0 to --fits - 1)")
    parser.add_argument("--max-time", type=float, help="the estimator's max_time (default: None, fixed work)")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    seeds = range(args.fits) if args.seeds is None else args.seeds
    rows, spurious, junk, broken, seconds = [], 0, 0, 0, []
    if args.max_time is not None:  # the first fit of a process loads the model, which max_time does not count
        NeSymReSRegressor(max_time=0.1).fit(*case(0)[1:3])
    for seed in seeds:
        law, X, y, unused = case(seed)
        moment = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                reg = NeSymReSRegressor(random_state=seed, max_time=args.max_time).fit(X, y)
                finite = bool(np.all(np.isfinite(reg.predict(X))))
        except Exception as error:  # noqa: BLE001 (a study reports every failure)
            broken += 1
            rows.append((seed, law, X.shape[1], unused, f"{type(error).__name__}: {error}", np.nan, "raised"))
            continue
        seconds.append(time.perf_counter() - moment)
        names = {str(s) for s in reg.expression_.free_symbols}
        found = sorted(names & {f"x{j}" for j in unused})
        tiny = tiny_numbers(reg.expression_)
        spurious, junk, broken = spurious + bool(found), junk + bool(tiny), broken + (not finite)
        flags = [*found, *(f"{value:.3g}" for value in tiny), *([] if finite else ["non-finite prediction"])]
        rows.append((seed, law, X.shape[1], unused, reg.expression_, reg.score(X, y), ", ".join(flags)))
    command = f"--fits {args.fits}" + ("" if args.max_time is None else f" --max-time {args.max_time:g}")
    lines = [
        f"# Random data: {spurious} of {len(seeds)} fits select an unused column, {junk} hold a number below "
        f"{TINY:g}, {broken} raise or predict a non-finite value",
        "",
        f"`python -m benchmarks.studies.spurious_variables {command}`: default estimator"
        + ("" if args.max_time is None else f" at `max_time={args.max_time:g}`")
        + ", 200 points U(-3, 3), a law over 1-2 columns plus 1-3 unused ones, seed = fit number. "
        f"Median fit {np.median(seconds):.2f} s, longest {np.max(seconds):.2f} s.",
        "",
        "| seed | law | columns | unused | selected | R² | flagged |",
        "|---:|---|---:|---|---|---:|---|",
    ]
    for seed, law, n_columns, unused, expression, r2, flags in rows:
        lines.append(f"| {seed} | `{law}` | {n_columns} | {unused} | `{expression}` | {r2:.6f} | {flags} |")
    report = "\n".join(lines) + "\n"
    publish(report, args.output)


if __name__ == "__main__":
    main()
