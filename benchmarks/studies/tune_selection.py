"""Choose the selection penalty (and compare search settings) on the validation sets.

Fits every equation of the validation sets once per setting, clean and with Gaussian
noise of ``--noise`` times the standard deviation of ``y``, and keeps the whole
candidate table. Selection is a pure function of that table, so every penalty of
``--penalties`` is then evaluated without refitting: the row it selects is predicted
on the iid and ood test points and scored with the paper's A1 metric, and its
expression is checked against the true one with SRBench's symbolic-solution test
(:func:`benchmarks.metrics.symbolic_solution`). Only validation sets are used (never
the sets reported in ``docs/benchmarks.md``).

Command line::

    python -m benchmarks.studies.tune_selection --datasets validation-wc validation-fc \\
        --settings beam32 beam32-t1 sample64 --out benchmarks/results/search-settings/selection-tuning.md
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.datasets import load_dataset
from benchmarks.methods.base import rename_features
from benchmarks.metrics import accuracy_a1, symbolic_solution
from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.search.selection.scores import lowest, scores

# name -> estimator parameters
SETTINGS = {
    "beam32": dict(beam_size=32),
    "beam32-t1": dict(beam_size=32, max_time=1.0),
    "beam32-t3": dict(beam_size=32, max_time=3.0),
    "sample64": dict(beam_size=64, decoding="sample"),
    "auto-t1": dict(refine="auto", max_time=1.0),  # the default estimator with a 1 s budget
}


def reselect(regressor: NeSymReSRegressor, penalty: float) -> int:
    """Row of ``equations_`` that ``complexity_penalty=penalty`` would select."""
    table = regressor.equations_
    return lowest(scores(table["log_fvu"], table["complexity"], penalty))


def evaluate(equation, setting: dict, noise: float, penalties, seed: int) -> list[dict]:
    X, y = equation.sample_train(128, seed=seed)
    if noise:
        with np.errstate(all="ignore"):
            y = y + np.random.default_rng(seed).normal(0.0, noise * np.std(y), size=len(y))
    started = time.perf_counter()
    try:
        regressor = NeSymReSRegressor(random_state=seed, device="cpu", **{"refine": None, **setting}).fit(X, y)
    except ValueError:  # y beyond float64 (overflowing equations): counted as not recovered
        failed = dict(seconds=np.nan, complexity=np.nan, a1_iid=False, a1_ood=False, solution=False)
        return [dict(penalty=p, **failed) for p in penalties]
    seconds = time.perf_counter() - started
    tests = {kind: equation.sample_test(kind, seed=seed) for kind in ("iid", "ood")}
    rows, solutions = [], {}
    for penalty in penalties:
        index = reselect(regressor, penalty)
        row = dict(penalty=penalty, seconds=seconds, complexity=int(regressor.equations_.loc[index, "complexity"]))
        with np.errstate(all="ignore"):
            for kind, (X_test, y_test) in tests.items():
                row[f"a1_{kind}"] = accuracy_a1(y_test, regressor.predict(X_test, index=index))
        if index not in solutions:  # penalties often select the same row
            written = str(rename_features(regressor.sympy(index), offset=0))
            solutions[index] = symbolic_solution(written, equation.expression, seconds=2.0)
        row["solution"] = solutions[index]
        rows.append(row)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["validation-wc", "validation-fc"])
    parser.add_argument("--settings", nargs="+", default=["beam32"], choices=sorted(SETTINGS))
    parser.add_argument("--penalties", type=float, nargs="+", default=[0.0, 0.003, 0.01, 0.03, 0.1])
    parser.add_argument("--noise", type=float, default=0.01, help="noise level of the noisy copies (x std(y))")
    parser.add_argument("--max-equations", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--csv", help="also write every row here")
    parser.add_argument("--out", required=True, help="markdown table")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", UserWarning)  # constant targets etc.: the table still counts them
    records = []
    for name in args.datasets:
        for equation in load_dataset(name)[: args.max_equations]:
            for setting in args.settings:
                for noise in (0.0, args.noise):
                    for row in evaluate(equation, SETTINGS[setting], noise, args.penalties, args.seed):
                        records.append(dict(dataset=name, equation=equation.name, setting=setting, noise=noise, **row))
    frame = pd.DataFrame(records)
    if args.csv:
        frame.to_csv(args.csv, index=False)
    summary = (
        frame.groupby(["setting", "noise", "penalty"])
        .agg(a1_iid=("a1_iid", "mean"), a1_ood=("a1_ood", "mean"), solution=("solution", "mean"),
             complexity=("complexity", "mean"),
             median_seconds=("seconds", "median"), equations=("equation", "count"))
        .reset_index()
    )  # fmt: skip
    lines = [
        "# Selection penalty and search settings on the validation sets",
        "",
        f"Datasets: {', '.join(args.datasets)}; 128 points, seed {args.seed}; noisy copies with "
        f"N(0, ({args.noise} std(y))^2). Command: `python -m benchmarks.studies.tune_selection "
        f"{' '.join(argv if argv is not None else sys.argv[1:])}`",
        "",
        "| setting | noise | penalty | A1 iid | A1 ood | solution | mean complexity | median fit (s) | fits |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in summary.itertuples():
        lines.append(
            f"| {row.setting} | {row.noise:g} | {row.penalty:g} | {100 * row.a1_iid:.1f} | {100 * row.a1_ood:.1f} "
            f"| {100 * row.solution:.1f} | {row.complexity:.1f} | {row.median_seconds:.2f} | {row.equations} |"
        )
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
