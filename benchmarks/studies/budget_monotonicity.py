"""Does a larger ``max_time`` ever select a worse equation? And how small a budget is
honoured?

For each equation of a validation set (seed 0, 128 points) the default estimator is
fitted at every budget of ``--budgets``; a *reversal* is a budget whose selected
equation scores worse on the training data (``score_lower_is_better``, by more than
``--tolerance``) than that of a smaller budget. The floor is measured on the same
equations: the median and largest wall-clock time of fits with tiny budgets.
Only validation sets are used (never the sets reported in ``docs/benchmarks.md``).

Command line::

    python -m benchmarks.studies.budget_monotonicity --dataset validation-wc --equations 30 \\
        --out benchmarks/results/budget/monotonicity.md
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from benchmarks.datasets import load_dataset
from nesymres_sklearn import NeSymReSRegressor


def selected_scores(X, y, budgets: list[float], seed: int) -> tuple[list[float], list[float], list[str]]:
    """The selected equation's training score, the wall-clock seconds and the selected
    row's origin at each budget."""
    scores, seconds, origins = [], [], []
    for budget in budgets:
        started = time.perf_counter()
        regressor = NeSymReSRegressor(max_time=budget, random_state=seed).fit(X, y)
        seconds.append(time.perf_counter() - started)
        best = regressor.equations_.loc[regressor.best_index_]
        scores.append(float(best["score_lower_is_better"]))
        origins.append(f"{best['origin']} {(regressor.refinement_ or {}).get('generations', 0)}g")
    return scores, seconds, origins


def reversals(scores: list[float], tolerance: float) -> int:
    """Budgets that select a worse score than some smaller budget did."""
    return sum(scores[j] > min(scores[:j]) + tolerance for j in range(1, len(scores)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="validation-wc")
    parser.add_argument("--equations", type=int, default=30, help="first N equations")
    parser.add_argument("--budgets", type=float, nargs="+", default=[0.5, 1.0, 2.0, 3.0])
    parser.add_argument("--floor-budgets", type=float, nargs="+", default=[0.01, 0.1, 0.3])
    parser.add_argument("--tolerance", type=float, default=1e-6)
    parser.add_argument("--out", required=True, help="markdown report")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    NeSymReSRegressor(refine=None, beam_size=1).fit(*load_dataset(args.dataset)[0].sample_train(16, seed=0))  # load
    reversed_fits, floor, details = 0, {budget: [] for budget in args.floor_budgets}, []
    equations = load_dataset(args.dataset)[: args.equations]
    for equation in equations:
        X, y = equation.sample_train(128, seed=0)
        scores, _, origins = selected_scores(X, y, args.budgets, 0)
        if reversals(scores, args.tolerance):
            reversed_fits += 1
            cells = " | ".join(f"{score:.4g} ({origin})" for score, origin in zip(scores, origins))
            details.append(f"| {equation.name} | {cells} |")
        for budget, seconds in zip(args.floor_budgets, selected_scores(X, y, args.floor_budgets, 0)[1]):
            floor[budget].append(seconds)
    command = " ".join(argv if argv is not None else sys.argv[1:])
    lines = [
        "# Larger budgets and the floor of `max_time`",
        "",
        f"Command: `python -m benchmarks.studies.budget_monotonicity {command}`",
        "",
        f"- {args.dataset}, first {len(equations)} equations, seed 0, 128 points, the default estimator.",
        f"- Equations where a larger budget ({', '.join(f'{b:g}' for b in args.budgets)} s) selected an equation "
        f"that scores worse on the training data than a smaller one: **{reversed_fits} of {len(equations)}**.",
        "",
        "| max_time (s) | median fit (s) | slowest fit (s) |",
        "|---:|---:|---:|",
    ]
    lines += [f"| {b:g} | {np.median(s):.2f} | {np.max(s):.2f} |" for b, s in floor.items()]
    if details:
        lines += [
            "",
            "Reversals: the selected score at each budget (the selected row's origin, the network's rounds, "
            "Operon's generations):",
            "",
            "| equation | " + " | ".join(f"{b:g} s" for b in args.budgets) + " |",
            "|---|" + "---|" * len(args.budgets),
            *details,
        ]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
