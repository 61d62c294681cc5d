"""Selection rules replayed on the same candidate tables: laws under noise (the
validation sets) and data with no exact law (the black-box sets).

For each problem, one fit of the package at ``--budget`` with the held-out choice off
(``SearchSettings(held_out_folds=0)``, so the table is the fit's own); then each rule of
:data:`RULES` chooses a row of that table, and the row is scored:

- a validation law at a noise level (``level * RMS(y)``, SRBench's protocol), 500
  training points, seed 0: the fraction of variance unexplained on 1,000 noise-free iid
  points (recovered: ``FVU <= 1.19e-7``, float32's epsilon, as FastSRB scores; close:
  ``FVU <= 1e-4``);
- a black-box set, 5 random 75/25 splits: test R².

The fit's time (Operon's generations under the machine's load) changes the table from
run to run; replaying the rules on one table compares them on equal terms. The fitted
tables are cached (``--cache``), so that a rule added later replays without refitting.

Command line::

    python -m benchmarks.studies.selection_rules --out benchmarks/results/noise-search/selection-rules.md
"""

from __future__ import annotations

import argparse
import pickle
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

from benchmarks.datasets import noisy_draws
from benchmarks.metrics import FVU_THRESHOLD, fvu
from benchmarks.report import pipe_table, write_study
from benchmarks.studies.black_box import SETS as BLACK_BOX_SETS
from benchmarks.studies.black_box import black_box_set
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.selection.held_out import held_out_choice
from nesymres_sklearn.search.selection.table import CandidateTable
from nesymres_sklearn.search.settings import SearchSettings
from nesymres_sklearn.writing.readable import exact_constants
from nesymres_sklearn.writing.writer import snapping_noise

LAW_SETS = ("validation-wc", "validation-nc")
LEVELS = (0.001, 0.01, 0.1)
N_TRAIN, N_TEST = 500, 1000
CLOSE_FVU = 1e-4


#: The rules: the settings of the held-out choice that each replays (``score``: none).
RULES = {
    "held-out": SearchSettings(information_criterion=None),
    "bic": SearchSettings(information_criterion="bic"),
    "aic": SearchSettings(information_criterion="aic"),
    "aic+1/token": SearchSettings(information_criterion="aic", information_per_token=1.0),
    "aic+1se": SearchSettings(held_out_standard_errors=1.0),
    "aic+0se": SearchSettings(held_out_standard_errors=0.0),
    "aic, noise x1": SearchSettings(held_out_noise_scale=1.0),
    "aic, plain first": SearchSettings(held_out_plain_first=True),
}


def rules(table: CandidateTable, problem: Problem, seed: int, noise: float) -> dict[str, int]:
    """The row each rule chooses (``noise``: the fit's noise level, in the search's units)."""
    found = {"score": table.best_index}
    for name, settings in RULES.items():
        found[name] = held_out_choice(table, problem, settings, seed, noise)
    return found


def _fit(X, y, budget: float, seed: int, cache: Path | None, key: str):
    from nesymres_sklearn import NeSymReSRegressor

    path = None if cache is None else cache / f"{key}.pkl"
    if path is not None and path.exists():
        return pickle.loads(path.read_bytes())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg = NeSymReSRegressor(
            max_time=budget, random_state=seed, search_settings=SearchSettings(held_out_folds=0)
        ).fit(X, y)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps(reg))
    return reg


def _replayed(reg, X, y, seed: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each rule's row of the fit's table, as ``rule -> (skeleton, constants)``, its
    constants snapped as the fit snaps the selected row's (the fit's noise level times
    ``noise_ratio``, the rule's settings; a predictor's as fitted)."""
    scaling = reg._writer.scaling
    problem = Problem(scaling.scale_X(X), scaling.scale_y(y))
    table = CandidateTable(reg.equations_, reg._fitted, reg.best_index_)
    noise = reg.noise_std_ / abs(scaling.y_scale)
    chosen = {}
    for name, row in rules(table, problem, int(np.random.RandomState(seed).randint(2**31)), noise).items():
        skeleton, constants = reg._fitted[row][:2]
        settings = RULES.get(name, SearchSettings())
        snapped = exact_constants(
            skeleton,
            np.asarray(constants, float),
            problem.X,
            problem.y,
            noise=snapping_noise(reg.equations_["origin"].iloc[row], settings.noise_ratio * noise),
            settings=settings,
        )
        chosen[name] = (skeleton, np.array([float(c) for c in snapped]))
    return chosen


def law_rows(sets, levels, budget: float, cache: Path | None, max_equations: int | None) -> list[dict]:
    rows = []
    for draw in noisy_draws(sets, levels, N_TRAIN, N_TEST, max_equations):
        name, problem, level = draw.set, draw.equation.name, draw.level
        reg = _fit(draw.X, draw.y, budget, 0, cache, f"{name}-{problem}-{level}-{budget}")
        for rule, (skeleton, constants) in _replayed(reg, draw.X, draw.y, 0).items():
            value = fvu(draw.y_test, reg._writer.predict(skeleton, constants, draw.X_test))
            rows.append(dict(set=name, problem=problem, level=level, rule=rule, fvu=value))
    return rows


def black_box_rows(sets, seeds, budget: float, cache: Path | None) -> list[dict]:
    rows = []
    for name in sets:
        X, y = black_box_set(name)
        for seed in seeds:
            X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=seed)
            reg = _fit(X_train, y_train, budget, seed, cache, f"{name}-{seed}-{budget}")
            for rule, (skeleton, constants) in _replayed(reg, X_train, y_train, seed).items():
                predicted = reg._writer.predict(skeleton, constants, X_test)
                r2 = r2_score(y_test, predicted) if np.all(np.isfinite(predicted)) else -np.inf
                rows.append(dict(set=name, problem=seed, level=np.nan, rule=rule, r2=r2))
    return rows


def summary(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per law set and level: % recovered and % close by rule; per black-box set: median R²."""
    frame = frame.reindex(columns=[*frame.columns, *({"fvu", "r2"} - set(frame.columns))])
    laws = frame[frame["fvu"].notna()].assign(
        recovered=lambda f: 100.0 * (f["fvu"] <= FVU_THRESHOLD), close=lambda f: 100.0 * (f["fvu"] <= CLOSE_FVU)
    )
    law_table = (
        laws.groupby(["set", "level", "rule"])[["recovered", "close"]].mean().round(1).unstack("rule").reset_index()
    )
    law_table.columns = [" ".join(str(part) for part in column if part != "").strip() for column in law_table.columns]
    boxes = frame[frame["r2"].notna()]
    box_table = boxes.pivot_table(index="set", columns="rule", values="r2", aggfunc="median").round(3).reset_index()
    return law_table, box_table


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--law-sets", default=",".join(LAW_SETS))
    parser.add_argument("--levels", type=float, nargs="+", default=list(LEVELS))
    parser.add_argument("--black-box-sets", default=",".join(BLACK_BOX_SETS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--budget", type=float, default=1.0)
    parser.add_argument("--max-equations", type=int, default=None)
    parser.add_argument("--cache", type=Path, default=None, help="folder of fitted tables (pickles)")
    parser.add_argument("--out", type=Path, default=None, help="Markdown; the CSV beside it")
    args = parser.parse_args(argv)
    laws = [s for s in args.law_sets.split(",") if s]
    boxes = [s for s in args.black_box_sets.split(",") if s]
    frame = pd.DataFrame(
        law_rows(laws, args.levels, args.budget, args.cache, args.max_equations)
        + black_box_rows(boxes, args.seeds, args.budget, args.cache)
    )
    law_table, box_table = summary(frame)
    command = " ".join(sys.argv[1:] if argv is None else argv)
    text = (
        f"Rules replayed on the same tables, max_time={args.budget}. "
        f"Command: `python -m benchmarks.studies.selection_rules {command}`\n\n"
        "Laws: % of problems recovered (FVU <= 1.19e-7 on noise-free iid points) and close (FVU <= 1e-4).\n\n"
        + pipe_table(law_table)
        + "\n\nBlack-box sets: test R², median of the splits.\n\n"
        + pipe_table(box_table)
        + "\n"
    )
    write_study(text, frame, args.out)


if __name__ == "__main__":
    main()
