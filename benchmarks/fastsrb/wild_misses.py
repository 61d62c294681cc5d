"""Wild misses replayed: which row of each FastSRB fit's table the selection chooses, and
whether the table holds a row that predicts fresh points better than their mean.

For each FastSRB law (problem 0, noise 0), with and without two irrelevant columns
(:func:`benchmarks.fastsrb.methods.with_irrelevant_columns`' draws), one fit at
``--budget`` with the held-out choice off (``SearchSettings(held_out_folds=0)``: the
table is the fit's own); then each rule chooses a row, scored by its FVU on the law's
clean validation points:

- ``score``: the table's best score (no held-out folds);
- ``held-out``: :func:`nesymres_sklearn.search.selection.held_out.held_out_choice`
  with the default settings, where the best row is not exact, as the fit makes it;
- ``best in table``: the row with the lowest validation FVU among those that read no
  added column, which no rule can beat.

A miss is wild when its FVU exceeds 1 (worse than the validation points' own mean); a
constant's FVU always does. Where ``best in table`` is wild too, no selection rule can
avoid the wild miss: the search found no row that generalises. Fitted tables are cached
(``--cache``), so that a changed selection replays on the same tables.

Command line::

    python -m benchmarks.fastsrb.wild_misses --cache /tmp/wild-tables \\
        --out benchmarks/results/wild-misses/replay-1s.md
"""

from __future__ import annotations

import argparse
import pickle
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.fastsrb.laws import load_laws
from benchmarks.fastsrb.methods import IRRELEVANT_COLUMNS, IRRELEVANT_RANGE
from benchmarks.fastsrb.sampling import make_problem
from benchmarks.metrics import fvu
from benchmarks.report import pipe_table, write_study
from nesymres_sklearn.search.fitted import mse
from nesymres_sklearn.search.noise import noise_std
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.selection.held_out import held_out_choice
from nesymres_sklearn.search.selection.table import CandidateTable
from nesymres_sklearn.search.settings import SearchSettings

VARIANTS = ("ours", "ours+irrelevant")


def _with_columns(X: np.ndarray, purpose: int) -> np.ndarray:
    """``X`` and the irrelevant columns of a seed-0 fit (purpose 0: fitting, 1: predicting)."""
    rng = np.random.default_rng([0, purpose])
    return np.column_stack([X, rng.uniform(*IRRELEVANT_RANGE, (len(X), IRRELEVANT_COLUMNS))])


def _fit(X, y, budget: float, cache: Path | None, key: str):
    from nesymres_sklearn import NeSymReSRegressor

    path = None if cache is None else cache / f"{key}.pkl"
    if path is not None and path.exists():
        return pickle.loads(path.read_bytes())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        settings = SearchSettings(held_out_folds=0)
        reg = NeSymReSRegressor(max_time=budget, random_state=0, search_settings=settings).fit(X, y)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps(reg))
    return reg


def held_out(table: CandidateTable, problem: Problem) -> int:
    """The held-out choice as the selection makes it: only where the table's best row is
    not exact (:func:`nesymres_sklearn.search.selection.final.select`)."""
    skeleton, constants, _ = table.fitted[table.best_index]
    if problem.is_exact(mse(skeleton.program, problem.X, problem.y, constants)):
        return table.best_index
    return held_out_choice(table, problem, SearchSettings(), 0, noise_std(problem, SearchSettings()))


def law_rows(name: str, law, variant: str, budget: float, cache: Path | None) -> list[dict]:
    """One row per rule for ``law`` fitted as ``variant``."""
    problem = make_problem(law, 0, 0.0)
    X, X_validation = problem.X_support, problem.X_validation
    if variant == "ours+irrelevant":
        X, X_validation = _with_columns(X, 0), _with_columns(X_validation, 1)
    reg = _fit(X, problem.y_support, budget, cache, f"{name}-{variant}-{budget}")
    scaling = reg._writer.scaling
    search = Problem(scaling.scale_X(X), scaling.scale_y(problem.y_support))
    table = CandidateTable(reg.equations_, reg._fitted, reg.best_index_)
    with np.errstate(all="ignore"):
        values = [
            fvu(problem.y_validation, reg._writer.predict(skeleton, constants, X_validation))
            for skeleton, constants, _ in reg._fitted
        ]
    read = [{int(token[2:]) for token in skeleton.tokens if token.startswith("x_")} for skeleton, *_ in reg._fitted]
    honest = [
        value if np.isfinite(value) and max(read[i], default=0) <= law.n_variables else np.inf
        for i, value in enumerate(values)
    ]
    chosen = {
        "score": table.best_index,
        "held-out": held_out(table, search),
        "best in table": int(np.argmin(honest)),
    }
    rows = []
    for rule, row in chosen.items():
        rows.append(
            dict(
                law=name,
                variant=variant,
                rule=rule,
                fvu=values[row],
                constant=not read[row],
                beyond=max(read[row], default=0) > law.n_variables,
                expression=reg.equations_.loc[row, "expression"],
            )
        )
    return rows


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per variant and rule: wild misses (FVU > 1), the constants among them, and rows
    reading an added column."""
    frame = frame.assign(wild=frame["fvu"] > 1.0, wild_constant=(frame["fvu"] > 1.0) & frame["constant"])
    table = frame.groupby(["variant", "rule"], sort=False)[["wild", "wild_constant", "beyond"]].sum().reset_index()
    return table.astype({"wild": int, "wild_constant": int, "beyond": int})


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=1.0)
    parser.add_argument("--laws", nargs="+", help="only these laws")
    parser.add_argument("--cache", type=Path, default=None, help="folder of fitted tables (pickles)")
    parser.add_argument("--out", type=Path, default=None, help="Markdown; the CSV beside it")
    args = parser.parse_args(argv)
    laws = load_laws()
    names = args.laws or list(laws)
    frame = pd.DataFrame(
        [
            row
            for name in names
            for variant in VARIANTS
            for row in law_rows(name, laws[name], variant, args.budget, args.cache)
        ]
    )
    wild = frame[(frame["rule"] == "held-out") & (frame["fvu"] > 1.0)][["law", "variant"]]
    best = frame[frame["rule"] == "best in table"].set_index(["law", "variant"])["fvu"]
    avoidable = int(sum(best.loc[(law, variant)] <= 1.0 for law, variant in wild.itertuples(index=False)))
    command = " ".join(sys.argv[1:] if argv is None else argv)
    text = (
        f"Rules replayed on the same FastSRB tables, max_time={args.budget}, {len(names)} laws. "
        f"Command: `python -m benchmarks.fastsrb.wild_misses {command}`\n\n"
        "wild: FVU > 1 on the clean validation points (wild_constant: of those, constants); "
        "beyond: the row reads an added column.\n\n"
        + pipe_table(summary(frame))
        + f"\n\nOf the {len(wild)} wild misses of the held-out choice, {avoidable} have a row with FVU <= 1 "
        "in their table (the rest: no selection rule avoids them).\n"
    )
    write_study(text, frame, args.out)


if __name__ == "__main__":
    main()
