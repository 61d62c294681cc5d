"""The held-out selection's rule (``SearchSettings.held_out_standard_errors``) chosen on
the black-box development sets (:mod:`benchmarks.studies.black_box`), each rule applied
to the same candidate tables.

For each set and each of 5 random 75/25 splits: one fit of the package at ``max_time``
(``random_state`` the split's seed); then, for each number of standard errors, the row
that :func:`~nesymres_sklearn.search.selection.held_out.held_out_choice` chooses from the
fit's own table, and its test R². The fit's time (Operon's generations under the
machine's load) changes the table from run to run; replaying the rules on one table
compares them on equal terms. ``score`` is the table's best score (no folds);
``bic-cv`` and ``bic-noise`` two information criteria on the same held-out errors
(:func:`criteria`).

Command line::

    python -m benchmarks.studies.held_out_rule --out benchmarks/results/black-box/held-out-rule.md
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

from benchmarks.report import pipe_table, write_study
from benchmarks.studies.black_box import SETS, black_box_set

RULES = (0.0, 0.25, 0.5, 1.0)


def criteria(table, problem, seed: int) -> dict[str, int]:
    """The rows that two information criteria choose among the Pareto front, on the
    same held-out errors: ``bic-cv`` (``n log(mse) + k log(n)``, ``k`` the constants),
    ``bic-noise`` (``sse / s**2 + k log(n)``, ``s`` the estimated noise level) and
    ``cv-score`` (the selection's score, ``log(mse) + 0.01`` per token, on held-out errors)."""
    from nesymres_sklearn.search.noise import noise_std
    from nesymres_sklearn.search.selection.held_out import PLAIN_ORIGINS, held_out_errors
    from nesymres_sklearn.search.settings import SearchSettings

    settings = SearchSettings()
    n = len(problem.y)
    folds = np.random.default_rng(seed).permutation(n) % settings.held_out_folds
    losses = table.equations["loss"].to_numpy()
    competing = table.equations["pareto"].to_numpy() | table.equations["origin"].isin(PLAIN_ORIGINS).to_numpy()
    front = [int(i) for i in np.flatnonzero(competing) if np.isfinite(losses[i])]
    errors = {i: float(np.sum(held_out_errors(*table.fitted[i][:2], problem, folds))) for i in front}
    k = {i: table.fitted[i][0].n_constants for i in front}
    complexity = table.equations["complexity"].to_numpy()
    noise = noise_std(problem, settings) ** 2
    found = {}
    for name, value in (
        ("bic-cv", lambda i: n * np.log(errors[i] / n) + k[i] * np.log(n)),
        ("bic-noise", lambda i: errors[i] / noise + k[i] * np.log(n)),
        ("cv-score", lambda i: np.log(errors[i] / n) + 0.01 * complexity[i]),
    ):
        scores = {i: value(i) for i in front if np.isfinite(errors[i])}
        found[name] = min(scores, key=scores.get) if scores else table.best_index
    return found


def replayed(sets, seeds, budget: float, rules) -> pd.DataFrame:
    """One row per set, split and rule (``score``: the table's own best row): test R²."""
    from nesymres_sklearn import NeSymReSRegressor
    from nesymres_sklearn.search.problem import Problem
    from nesymres_sklearn.search.selection.held_out import held_out_choice
    from nesymres_sklearn.search.selection.table import CandidateTable
    from nesymres_sklearn.search.settings import SearchSettings

    rows = []
    for name in sets:
        X, y = black_box_set(name)
        for seed in seeds:
            X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                reg = NeSymReSRegressor(
                    max_time=budget, random_state=seed, search_settings=SearchSettings(held_out_folds=0)
                ).fit(X_train, y_train)
                scaling = reg._writer.scaling
                problem = Problem(scaling.scale_X(X_train), scaling.scale_y(y_train))
                table = CandidateTable(reg.equations_, reg._fitted, reg.best_index_)
                choices = {"score": reg.best_index_}
                for rule in rules:
                    settings = SearchSettings(held_out_standard_errors=rule)
                    choices[rule] = held_out_choice(
                        table, problem, settings, int(np.random.RandomState(seed).randint(2**31))
                    )
                choices.update(criteria(table, problem, int(np.random.RandomState(seed).randint(2**31))))
                for rule, row in choices.items():
                    predicted = reg.predict(X_test, index=row)
                    r2 = r2_score(y_test, predicted) if np.all(np.isfinite(predicted)) else -np.inf
                    origin = reg.equations_.loc[row, "origin"]
                    complexity = reg.equations_.loc[row, "complexity"]
                    rows.append(dict(set=name, seed=seed, rule=str(rule), r2=r2, origin=origin, complexity=complexity))
    return pd.DataFrame(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--budget", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=None, help="Markdown; the CSV beside it")
    args = parser.parse_args(argv)
    results = replayed(args.sets.split(","), args.seeds, args.budget, RULES)
    medians = results.pivot_table(index="set", columns="rule", values="r2", aggfunc="median").round(3).reset_index()
    command = " ".join(sys.argv[1:] if argv is None else argv)
    text = (
        f"Test R² (median of 5 splits) of the row each rule chooses from the same table, max_time={args.budget}. "
        f"Command: `python -m benchmarks.studies.held_out_rule {command}`\n\n" + pipe_table(medians)
    )
    write_study(text, results, args.out)


if __name__ == "__main__":
    main()
