"""How many points, scales and Gauss-Newton steps the exhaustive search of one-variable
laws needs (``nesymres_sklearn/search/exhaustive.py``; a script, not a test: it reads
the wall clock).

Thirteen classic laws of one variable, each on 128 points of its own range, three seeds:
Bose-Einstein with ``h`` (``1/(exp(p/(2*pi)) - 1)``), Planck's ``p**3/(exp(p/(2*pi)) -
1)``, ``1/cosh``, ``tanh``, ``exp(p) - 1``, the Lorentz factor either way up (and over ``p**2``), a rational
law (Clausius-Mossotti's ``1 + p/(1 - p/3)``), the Gaussian, ``sinc**2``, ``cos**2`` and
``log(1 + 2p)``: none of them an AI-Feynman set the benchmarks report, though several are
the same physics. For each setting (points read, scales of the grid, the tiers of
steps), the share of fits that come back exact to rounding and the seconds per search.

    python -m benchmarks.studies.exhaustive_settings --out benchmarks/results/units/exhaustive-settings.md
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np

from benchmarks.studies import publish
from nesymres_sklearn.search.looks import exhaustive
from nesymres_sklearn.search.problem import Problem

LAWS = {
    "1/(exp(p/(2*pi)) - 1)": (lambda p: 1 / (np.exp(p / (2 * np.pi)) - 1), (0.02, 0.97)),
    "p**3/(exp(p/(2*pi)) - 1)": (lambda p: p**3 / (np.exp(p / (2 * np.pi)) - 1), (0.02, 0.97)),
    "1/cosh(p)": (lambda p: 1 / np.cosh(p), (0.02, 0.97)),
    "tanh(p)": (np.tanh, (0.02, 0.97)),
    "exp(p) - 1": (lambda p: np.exp(p) - 1, (0.02, 0.97)),
    "1/sqrt(1 - p**2)": (lambda p: 1 / np.sqrt(1 - p**2), (0.1, 0.9)),
    "q**3/sqrt(q**2 - 1)": (lambda q: q**3 / np.sqrt(q**2 - 1), (1.1, 10.0)),
    "1/(p**2*sqrt(1 - p**2))": (lambda p: 1 / (p**2 * np.sqrt(1 - p**2)), (0.1, 0.6)),
    "1 + p/(1 - p/3)": (lambda p: 1 + p / (1 - p / 3), (0.2, 2.0)),
    "exp(-p**2/2)": (lambda p: np.exp(-(p**2) / 2), (1.0, 3.0)),
    "sin(p)**2/p**2": (lambda p: np.sin(p) ** 2 / p**2, (0.5, 4.0)),
    "cos(p)**2": (lambda p: np.cos(p) ** 2, (0.1, 2.0)),
    "log(1 + 2*p)": (lambda p: np.log(1 + 2 * p), (0.1, 5.0)),
}
# (points read, scales of the grid, tiers of steps): the chosen one first.
SETTINGS = [
    (10, 15, ((0.3, 2), (0.03, 6))),
    (10, 15, ((0.3, 3), (0.03, 5))),
    (12, 15, ((0.3, 2), (0.03, 6))),
    (12, 15, ((0.3, 3), (0.03, 5))),
    (12, 15, ((0.3, 3), (0.05, 5))),
    (12, 15, ((0.2, 2), (0.03, 6))),
    (12, 21, ((0.3, 2), (0.05, 6))),
    (16, 21, ((0.2, 2), (0.03, 6))),
    (16, 29, ((0.25, 2), (0.05, 6))),
]


def run(n_points: int, n_scales: int, tiers, seeds) -> tuple[int, int, list[float], list[str]]:
    """Exact fits, fits, seconds per search and the laws missed, for one setting."""
    grid = np.geomspace(exhaustive.GRID[0], exhaustive.GRID[-1], n_scales)
    found, seconds, missed = 0, [], []
    with (
        mock.patch.object(exhaustive, "N_POINTS", n_points),
        mock.patch.object(exhaustive, "GRID", grid),
        mock.patch.object(exhaustive, "TIERS", tiers),
    ):
        for seed in seeds:
            rng = np.random.default_rng(seed)
            for law, (function, (low, high)) in LAWS.items():
                p = rng.uniform(low, high, 128)
                problem = Problem(p[:, None], function(p))
                moment = time.perf_counter()
                fits = exhaustive.exhaustive_candidates(problem)
                seconds.append(time.perf_counter() - moment)
                exact = any(problem.is_exact_to_rounding(loss) for _, _, loss in fits)
                found += exact
                if not exact:
                    missed.append(f"{law} (seed {seed})")
    return found, len(seeds) * len(LAWS), seconds, missed


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    exhaustive.library()  # built once, as the estimator builds it with the network
    lines = [
        "# The exhaustive search's settings, on classic one-variable laws",
        "",
        f"Command: `python -m benchmarks.studies.exhaustive_settings {' '.join(argv or sys.argv[1:])}`  ",
        f"{len(LAWS)} laws, 128 points each, seeds {args.seeds}; seconds of one search on this machine.",
        "",
        "| points | scales | tiers (share, steps) | exact | median s | max s | missed |",
        "|---:|---:|---|---:|---:|---:|---|",
    ]
    for n_points, n_scales, tiers in SETTINGS:
        found, total, seconds, missed = run(n_points, n_scales, tiers, args.seeds)
        tiers_text = ", ".join(f"({share:g}, {steps})" for share, steps in tiers)
        lines.append(
            f"| {n_points} | {n_scales} | {tiers_text} | {found}/{total} | {np.median(seconds):.2f} | "
            f"{max(seconds):.2f} | {'; '.join(missed) or '-'} |"
        )
        print(lines[-1], flush=True)
    publish("\n".join(lines) + "\n", args.out)


if __name__ == "__main__":
    main()
