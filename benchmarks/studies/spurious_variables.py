"""Issue 53's random-data study (a script, not a test): how often the selected equation
holds an unused column, a silent constant, a fake fraction or junk, or overruns its
``max_time``.

Each fit draws a simple law over one or two columns, adds one to three columns that
the law does not use (all columns U(-3, 3), 200 points, in a random order), and fits
the default estimator with a fixed seed (and ``--max-time``, when given). A fit counts

- as *spurious* when the selected expression contains an unused column;
- as a *constant* when it explains almost nothing of data with structure: no free
  symbol, or R² below ``inputs.LITTLE_R2`` on its own data, while each point's nearest
  neighbour predicts ``y`` with R² above ``inputs.STRUCTURE_R2``; *silent* when the fit
  gave no warning that it explains little (``inputs.warn_explains_little``);
- as *over the promise* when, with ``--max-time``, ``fit`` took longer than
  ``1.1 * max_time + 0.05`` s (wall clock; the model is loaded by a warm-up fit first);
- as a *fake fraction* when its fit is not exact (R² below ``1 - EXACT``) and it holds a
  rational that the readable constants would not write for an inexact fit (not
  :func:`.readable.plain`, such as ``464/11``);
- as *junk* when it holds a number of magnitude below ``TINY`` (a leftover of rounding
  such as ``1.84e-16``), and as *broken* when it raises or predicts a non-finite value
  on its own data.

Prints a markdown report (and writes it to ``--output``).

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
from nesymres_sklearn.inputs import LITTLE_R2, STRUCTURE_R2, neighbour_r2
from nesymres_sklearn.writing.readable import plain

# Numbers in a selected equation below this magnitude are rounding left over.
TINY = 1e-12
# A fit is exact when its R² on its own data is at least 1 - EXACT.
EXACT = 1e-10
# The promise of max_time: fit returns within FACTOR * max_time + SLACK seconds.
FACTOR, SLACK = 1.1, 0.05

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


def fake_fractions(expression: sympy.Expr, r2: float) -> list[sympy.Rational]:
    """The fractions of ``expression`` that an inexact fit (``r2`` below ``1 - EXACT``)
    cannot support: rationals with a denominator above 1 that are not
    :func:`.readable.plain` (``464/11``, ``943/2``; ``3/2`` and the ``1/2`` of a root are)."""
    if r2 >= 1 - EXACT:
        return []
    fractions = expression.atoms(sympy.Rational)
    return sorted((r for r in fractions if r.q > 1 and not plain(r)), key=float)


def explains_little(expression: sympy.Expr, r2: float) -> bool:
    """Whether the selected equation is a constant, or as good as one (R² below ``LITTLE_R2``)."""
    return not expression.free_symbols or r2 < LITTLE_R2


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fits", type=int, default=100)
    parser.add_argument("--seeds", type=int, nargs="+", help="these fits only (default: 0 to --fits - 1)")
    parser.add_argument("--max-time", type=float, help="the estimator's max_time (default: None, fixed work)")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    seeds = range(args.fits) if args.seeds is None else args.seeds
    counts = dict.fromkeys(["spurious", "constant", "silent", "over", "fake", "junk", "broken"], 0)
    rows, seconds = [], []
    with warnings.catch_warnings():  # the first fit of a process loads the model, which max_time does not count
        warnings.simplefilter("ignore")
        NeSymReSRegressor(max_time=0.1).fit(*case(0)[1:3])
    for seed in seeds:
        law, X, y, unused = case(seed)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                moment = time.perf_counter()
                reg = NeSymReSRegressor(random_state=seed, max_time=args.max_time).fit(X, y)
                elapsed = time.perf_counter() - moment
                finite = bool(np.all(np.isfinite(reg.predict(X))))
        except Exception as error:  # noqa: BLE001 (a study reports every failure)
            counts["broken"] += 1
            rows.append((seed, law, X.shape[1], unused, f"{type(error).__name__}: {error}", np.nan, np.nan, "raised"))
            continue
        seconds.append(elapsed)
        r2 = reg.score(X, y)
        names = {str(s) for s in reg.expression_.free_symbols}
        found = sorted(names & {f"x{j}" for j in unused})
        tiny = tiny_numbers(reg.expression_)
        fake = fake_fractions(reg.expression_, r2)
        constant = explains_little(reg.expression_, r2) and neighbour_r2(X, y) > STRUCTURE_R2
        warned = any("explains only" in str(warning.message) for warning in caught)
        over = args.max_time is not None and elapsed > FACTOR * args.max_time + SLACK
        flags = [
            *found,
            *([f"constant ({'warned' if warned else 'silent'})"] if constant else []),
            *([f"over the promise ({elapsed:.3f} s)"] if over else []),
            *(f"fake fraction {fraction}" for fraction in fake),
            *(f"{value:.3g}" for value in tiny),
            *([] if finite else ["non-finite prediction"]),
        ]
        for name, flagged in [
            ("spurious", found),
            ("constant", constant),
            ("silent", constant and not warned),
            ("over", over),
            ("fake", fake),
            ("junk", tiny),
            ("broken", not finite),
        ]:
            counts[name] += bool(flagged)
        rows.append((seed, law, X.shape[1], unused, reg.expression_, r2, elapsed, ", ".join(flags)))
    command = f"--fits {args.fits}" if args.seeds is None else "--seeds " + " ".join(map(str, args.seeds))
    command += "" if args.max_time is None else f" --max-time {args.max_time:g}"
    over = (
        "no budget to hold"
        if args.max_time is None
        else f"{counts['over']} over the promise ({FACTOR:g} * max_time + {SLACK:g} s)"
    )
    lines = [
        f"# Random data: of {len(seeds)} fits, {counts['spurious']} select an unused column, {counts['constant']} "
        f"return a constant on data with structure ({counts['silent']} silent), {over}, {counts['fake']} hold a "
        f"fake fraction, {counts['junk']} a number below {TINY:g}, {counts['broken']} raise or predict a "
        "non-finite value",
        "",
        f"`python -m benchmarks.studies.spurious_variables {command}`: default estimator"
        + ("" if args.max_time is None else f" at `max_time={args.max_time:g}`")
        + ", 200 points U(-3, 3), a law over 1-2 columns plus 1-3 unused ones, seed = fit number. "
        f"Median fit {np.median(seconds):.2f} s, longest {np.max(seconds):.2f} s.",
        "",
        "| seed | law | columns | unused | selected | R² | seconds | flagged |",
        "|---:|---|---:|---|---|---:|---:|---|",
    ]
    for seed, law, n_columns, unused, expression, r2, elapsed, flags in rows:
        lines.append(
            f"| {seed} | `{law}` | {n_columns} | {unused} | `{expression}` | {r2:.6f} | {elapsed:.3f} | {flags} |"
        )
    report = "\n".join(lines) + "\n"
    publish(report, args.output)


if __name__ == "__main__":
    main()
