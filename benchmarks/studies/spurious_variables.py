"""How often an unused column enters the selected equation (a script, not a test).

Each fit draws a simple law over one or two columns, adds one to three columns that
the law does not use (all columns U(-3, 3), 200 points, in a random order), and fits
the default estimator with a fixed seed. A fit counts as spurious when the selected
expression contains an unused column. Prints a markdown report (and writes it to
``--output``).

Usage::

    python -m benchmarks.studies.spurious_variables --fits 100 \
        --output benchmarks/results/spurious-variables/after.md
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

from nesymres_sklearn import NeSymReSRegressor

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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fits", type=int, default=100)
    parser.add_argument("--seeds", type=int, nargs="+", help="these fits only (default: 0 to --fits - 1)")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    seeds = range(args.fits) if args.seeds is None else args.seeds
    rows, spurious, seconds = [], 0, []
    for seed in seeds:
        law, X, y, unused = case(seed)
        moment = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reg = NeSymReSRegressor(random_state=seed).fit(X, y)
        seconds.append(time.perf_counter() - moment)
        names = {str(s) for s in reg.expression_.free_symbols}
        found = sorted(names & {f"x{j}" for j in unused})
        spurious += bool(found)
        rows.append((seed, law, X.shape[1], unused, reg.expression_, reg.score(X, y), found))
    lines = [
        f"# Spurious variables: {spurious} of {len(seeds)} fits select an unused column",
        "",
        "`python -m benchmarks.studies.spurious_variables --fits " + str(args.fits) + "`: default estimator, "
        "200 points U(-3, 3), a law over 1-2 columns plus 1-3 unused ones, seed = fit number. "
        f"Median fit {np.median(seconds):.2f} s.",
        "",
        "| seed | law | columns | unused | selected | R² | spurious |",
        "|---:|---|---:|---|---|---:|---|",
    ]
    for seed, law, n_columns, unused, expression, r2, found in rows:
        flag = ", ".join(found) if found else ""
        lines.append(f"| {seed} | `{law}` | {n_columns} | {unused} | `{expression}` | {r2:.6f} | {flag} |")
    report = "\n".join(lines) + "\n"
    print(report)
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(report)


if __name__ == "__main__":
    main()
