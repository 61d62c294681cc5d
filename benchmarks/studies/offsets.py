"""Issue 65's offset fits: ``b + x0*sin(x1)`` for large offsets ``b`` (a script, not a
test: it reads the wall clock).

For each offset ``b`` in 1e8 ... 1e12, data seed 0-3 (150 points, ``x ~ U(1, 5)``,
``random_state`` the seed) and ``max_time`` None and 1 s, one fit at default settings,
with the offset taken out before the search (``SearchSettings.offset_ratio``, the
default) and, with ``--compare``, without (``offset_ratio=None``, as before). A fit
counts as the law plus the offset when its printed law, less ``b``, is ``x0*sin(x1)``
on 200 fresh points of ``U(0.5, 10)`` (beyond the training box) to ``1e-6`` of the
law's largest magnitude plus 64 float64 spacings of ``b``. Prints a markdown report
(and writes it to ``--out``).

    python -m benchmarks.studies.offsets --compare --out benchmarks/results/offsets/offsets.md
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
from nesymres_sklearn.search.settings import SearchSettings

OFFSETS = (1e8, 1e9, 1e10, 1e11, 1e12)
SEEDS = (0, 1, 2, 3)
BUDGETS = (None, 1.0)
N_POINTS = 150


def law(X: np.ndarray) -> np.ndarray:
    return X[:, 0] * np.sin(X[:, 1])


def one_fit(b: float, seed: int, max_time: float | None, offset_ratio: float | None) -> tuple[str, bool, float]:
    """The printed law (or the error), whether it is the law plus ``b``, and the fit's seconds."""
    X = np.random.default_rng(seed).uniform(1, 5, size=(N_POINTS, 2))
    regressor = NeSymReSRegressor(
        random_state=seed, max_time=max_time, search_settings=SearchSettings(offset_ratio=offset_ratio)
    )
    started = time.perf_counter()
    try:
        regressor.fit(X, b + law(X))
    except Exception as error:  # noqa: BLE001 - a crash is what the study counts
        return f"{type(error).__name__}: {error}", False, time.perf_counter() - started
    seconds = time.perf_counter() - started
    fresh = np.random.default_rng(100 + seed).uniform(0.5, 10, size=(200, 2))
    with np.errstate(all="ignore"):
        written = sympy.lambdify(sympy.symbols("x0 x1"), regressor.expression_)(fresh[:, 0], fresh[:, 1])
    truth = law(fresh)
    tolerance = 1e-6 * np.max(np.abs(truth)) + 64 * np.spacing(b)
    found = bool(np.all(np.abs(np.asarray(written, dtype=float) - b - truth) <= tolerance))
    return str(regressor.expression_), found, seconds


def report(compare: bool) -> str:
    ratios = (SearchSettings().offset_ratio, None) if compare else (SearchSettings().offset_ratio,)
    n_fits = len(OFFSETS) * len(SEEDS) * len(BUDGETS)
    lines = [
        "# Offsets: `b + x0*sin(x1)`",
        "",
        "`python -m benchmarks.studies.offsets"
        + (" --compare" if compare else "")
        + f"`: {n_fits} fits per setting (offsets {', '.join(f'{b:.0e}' for b in OFFSETS)}; "
        f"seeds {SEEDS[0]}-{SEEDS[-1]}; max_time None and 1 s), {N_POINTS} points.",
        "",
        "| offset_ratio | fits | crashes | law + offset | largest fit s (max_time 1) |",
        "|---|---:|---:|---:|---:|",
    ]
    details = []
    for ratio in ratios:
        results = []
        for b in OFFSETS:
            for seed in SEEDS:
                for max_time in BUDGETS:
                    printed, found, seconds = one_fit(b, seed, max_time, ratio)
                    results.append((b, seed, max_time, printed, found, seconds))
                    details.append(
                        f"| {ratio} | {b:.0e} | {seed} | {max_time} | {found} | {seconds:.2f} | `{printed}` |"
                    )
        crashes = sum(printed.split(":")[0].endswith("Error") for _, _, _, printed, _, _ in results)
        budgeted = max(s for _, _, t, _, _, s in results if t is not None)
        lines.append(f"| {ratio} | {len(results)} | {crashes} | {sum(r[4] for r in results)} | {budgeted:.2f} |")
    lines += [
        "",
        "| offset_ratio | offset | seed | max_time | law + offset | s | printed |",
        "|---|---|---|---|---|---:|---|",
    ]
    return "\n".join(lines + details) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare", action="store_true", help="also fit without taking the offset out")
    parser.add_argument("--out", type=Path, default=None, help="also write the markdown report here")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    publish(report(args.compare), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
