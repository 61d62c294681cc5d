"""Search settings compared on laws under noise, each fit of each variant on the same
points (paired): the validation sets at noise levels (``level * RMS(y)``, SRBench's
protocol), 500 training points, seed 0, scored on 1,000 noise-free iid points by the
fraction of variance unexplained (recovered: ``FVU <= 1.19e-7``, float32's epsilon, as
FastSRB scores; close: ``FVU <= 1e-4``), and the estimated noise level over the true one:
the fit's (``noise_std_``) and the data's alone (:func:`~nesymres_sklearn.search.noise.noise_std`
on the training points), each counted within a factor of 1.5.

Variants (:data:`VARIANTS`): ``default`` (the package's settings) and one change each.

Command line::

    python -m benchmarks.studies.noise_variants --variants default noisy-identity \
        --out benchmarks/results/noise-search/noise-variants-1s.md
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.datasets import noisy_draws, root_mean_square
from benchmarks.metrics import FVU_THRESHOLD, fvu
from benchmarks.report import pipe_table, write_study
from benchmarks.studies.paired_difference import bootstrap_interval
from nesymres_sklearn.search.noise import noise_std
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.settings import SearchSettings

SETS = ("validation-nc", "validation-wc")
N_TRAIN, N_TEST = 500, 1000
CLOSE_FVU = 1e-4
#: Name -> the search settings of a variant.
VARIANTS = {
    "default": SearchSettings(),
    "noisy-identity": SearchSettings(noisy_identity_level=1e-4),
    "no-snap": SearchSettings(snap_level=0.0),
    "no-gate": SearchSettings(information_criterion=None),
    "snap-any-chance": SearchSettings(snap_chance=float("inf")),
    "smoothed": SearchSettings(network_reads_smoothed=True),
    "rational-only": SearchSettings(noisy_identity_forms=("rational",)),
    "no-angle": SearchSettings(noisy_identity_forms=("rational", "root", "power")),
    "no-identity-readings": SearchSettings(noisy_identity_unknowns=()),
    "pursuit": SearchSettings(noisy_identity_pursuit=True),
    "readings-16-constants": SearchSettings(noisy_identity_readings_constants=16),
}


def fits(sets, levels, variants, budget: float, max_equations: int | None) -> pd.DataFrame:
    from nesymres_sklearn import NeSymReSRegressor

    rows = []
    for draw in noisy_draws(sets, levels, N_TRAIN, N_TEST, max_equations):
        X, y, level = draw.X, draw.y, draw.level
        truth = level * root_mean_square(draw.clean)
        if not np.all(np.isfinite(y)):
            continue
        data_ratio = noise_std(Problem(X, y), SearchSettings()) / truth if truth > 0 else np.nan
        for variant in variants:
            started = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                reg = NeSymReSRegressor(max_time=budget, random_state=0, search_settings=VARIANTS[variant])
                reg.fit(X, y)
                value = fvu(draw.y_test, reg.predict(draw.X_test))
            seconds = time.perf_counter() - started
            noise_ratio = reg.noise_std_ / truth if truth > 0 else np.nan
            rows.append(
                dict(set=draw.set, problem=draw.equation.name, level=level, variant=variant, fvu=value,
                     seconds=seconds, expression=str(reg.expression_), noise_ratio=noise_ratio, data_ratio=data_ratio)
            )  # fmt: skip
    return pd.DataFrame(rows)


def summary(frame: pd.DataFrame, variants) -> str:
    def within(ratios):
        return 100.0 * ((ratios >= 1 / 1.5) & (ratios <= 1.5))

    frame = frame.assign(
        recovered=100.0 * (frame["fvu"] <= FVU_THRESHOLD),
        close=100.0 * (frame["fvu"] <= CLOSE_FVU),
        noise_within=within(frame["noise_ratio"]),
        data_within=within(frame["data_ratio"]),
    )
    table = (
        frame.groupby(["set", "level", "variant"])
        .agg(
            n=("fvu", "size"),
            recovered=("recovered", "mean"),
            close=("close", "mean"),
            seconds=("seconds", "median"),
            noise_within=("noise_within", "mean"),
            data_within=("data_within", "mean"),
        )  # fmt: skip
        .round(2)
        .reset_index()
    )
    text = pipe_table(table)
    first = variants[0]
    for other in variants[1:]:
        for (name, level), group in frame.groupby(["set", "level"]):
            for metric in ("recovered", "close"):
                wide = group.pivot_table(index="problem", columns="variant", values=metric)
                differences = (wide[first] - wide[other]).to_numpy()
                mean, (low, high) = differences.mean(), bootstrap_interval(differences, np.random.default_rng(0))
                text += f"\n\n{name} at {level:g}, {metric}, {first} - {other}: {mean:+.1f} [{low:+.1f}, {high:+.1f}]"
    return text


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--levels", type=float, nargs="+", default=[0.01, 0.1])
    parser.add_argument("--variants", nargs="+", default=["default", "noisy-identity"], choices=sorted(VARIANTS))
    parser.add_argument("--budget", type=float, default=1.0)
    parser.add_argument("--max-equations", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None, help="Markdown; the CSV beside it")
    args = parser.parse_args(argv)
    frame = fits(args.sets.split(","), args.levels, args.variants, args.budget, args.max_equations)
    command = " ".join(sys.argv[1:] if argv is None else argv)
    text = (
        f"Variants on the same points, max_time={args.budget}. "
        f"Command: `python -m benchmarks.studies.noise_variants {command}`\n\n" + summary(frame, args.variants) + "\n"
    )
    write_study(text, frame, args.out)


if __name__ == "__main__":
    main()
