"""The law under noise alone (:func:`~nesymres_sklearn.search.identities_under_noise.noisy_identity`)
under variants of its settings (:data:`VARIANTS`), on the same points: the validation sets at
noise levels (``level * RMS(y)``), 500 training points of seed 0, 1,000 noise-free test
points. Counted per variant: laws whose root mean squared error on the training points
is at most 1.1 times the noise's (fitted to the noise), laws whose test FVU is at most
1e-4 ("close"), and the seconds of the fit. Then, of the laws within 1.5 times the noise
(those the fit keeps as a row, ``SearchSettings.noise_ratio``), how many constants those
within FVU 1e-6 of the truth have at most, and how many close and other laws the cap
``SearchSettings.noisy_identity_max_constants`` sets aside.

Command line::

    python -m benchmarks.studies.noisy_law --sets validation-nc,validation-wc --levels 0.01 \
        --variants no-polish default --max-equations 40 --out benchmarks/results/noise-search/noisy-law.md
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
from benchmarks.metrics import fvu
from benchmarks.report import pipe_table, write_study
from nesymres_sklearn.search.identities_under_noise import noisy_angle_law, noisy_identity
from nesymres_sklearn.search.problem import Problem
from nesymres_sklearn.search.settings import SearchSettings

N_TRAIN, N_TEST = 500, 1000
FITTED_RATIO, CLOSE_FVU, TRUE_FVU = 1.1, 1e-4, 1e-6
#: Name -> the search settings of a variant.
VARIANTS = {
    "default": SearchSettings(),
    "no-polish": SearchSettings(noisy_identity_polish=0),
    "no-angle": SearchSettings(noisy_identity_forms=("rational", "root", "power")),
    "power-all": SearchSettings(noisy_power_quantile=0.0),
}


def the_law(problem: Problem, settings: SearchSettings):
    """The law under noise with ``settings``: the plan's, or with ``"angle"`` among the
    forms the continuation's angle form where its information criterion is lower."""
    law = noisy_identity(problem, settings=settings)
    if "angle" not in settings.noisy_identity_forms:
        return law
    angle = noisy_angle_law(problem, settings=settings)
    candidates = [found for found in (law, angle) if found is not None and np.isfinite(found.loss)]
    n = len(problem.y)
    return min(
        candidates, key=lambda found: n * np.log(found.loss) + found.skeleton.n_constants * np.log(n), default=None
    )


def fits(sets, levels, variants, max_equations: int | None) -> pd.DataFrame:
    rows = []
    for draw in noisy_draws(sets, levels, N_TRAIN, N_TEST, max_equations):
        noise = draw.level * root_mean_square(draw.clean)
        if not (np.all(np.isfinite(draw.y)) and noise > 0):
            continue
        spread = np.std(draw.y)
        for variant in variants:
            started = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                law = the_law(Problem(draw.X, draw.y / spread), VARIANTS[variant])
                seconds = time.perf_counter() - started
                if law is None:
                    ratio, value, n_constants = np.inf, np.inf, 0
                else:
                    n_constants = law.skeleton.n_constants
                    ratio = np.sqrt(law.loss) * spread / noise
                    value = fvu(draw.y_test, law.skeleton.program(draw.X_test, law.constants) * spread)
            rows.append(dict(set=draw.set, problem=draw.equation.name, level=draw.level, variant=variant,
                             seconds=seconds, noise_ratio=ratio, fvu=value, n_constants=n_constants))  # fmt: skip
    return pd.DataFrame(rows)


def summary(frame: pd.DataFrame) -> str:
    table = (
        frame.assign(fitted=frame.noise_ratio <= FITTED_RATIO, close=frame.fvu <= CLOSE_FVU)
        .groupby(["set", "level", "variant"])
        .agg(n=("fitted", "size"), fitted=("fitted", "sum"), close=("close", "sum"), seconds=("seconds", "mean"))
        .reset_index()
    )
    table["seconds"] = table["seconds"].round(3)
    cap = SearchSettings().noisy_identity_max_constants
    kept = frame[frame.noise_ratio <= SearchSettings().noise_ratio]
    caps = (
        kept.assign(
            true=kept.fvu <= TRUE_FVU,
            close_over=(kept.fvu <= CLOSE_FVU) & (kept.n_constants > cap),
            other_over=(kept.fvu > CLOSE_FVU) & (kept.n_constants > cap),
        )
        .groupby("variant")
        .apply(
            lambda part: pd.Series(
                dict(
                    rows=len(part),
                    true=int(part.true.sum()),
                    true_most_constants=int(part.n_constants[part.true].max()) if part.true.any() else 0,
                    close=int((part.fvu <= CLOSE_FVU).sum()),
                    close_over_cap=int(part.close_over.sum()),
                    other_over_cap=int(part.other_over.sum()),
                )
            ),
            include_groups=False,
        )
        .reset_index()
    )
    return (
        pipe_table(table)
        + f"\nRows (RMSE <= {SearchSettings().noise_ratio} x the noise's) and the cap of {cap} constants:\n\n"
        + pipe_table(caps)
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="validation-nc,validation-wc")
    parser.add_argument("--levels", type=float, nargs="+", default=[0.01])
    parser.add_argument("--variants", nargs="+", default=["no-polish", "default"], choices=sorted(VARIANTS))
    parser.add_argument("--max-equations", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None, help="Markdown; the CSV beside it")
    args = parser.parse_args(argv)
    frame = fits(args.sets.split(","), args.levels, args.variants, args.max_equations)
    command = " ".join(sys.argv[1:] if argv is None else argv)
    text = (
        f"The law under noise alone, fitted to the noise (RMSE <= {FITTED_RATIO} x the noise's) and close "
        f"(test FVU <= {CLOSE_FVU:g}). Command: `python -m benchmarks.studies.noisy_law {command}`\n\n" + summary(frame)
    )
    write_study(text, frame, args.out)


if __name__ == "__main__":
    main()
