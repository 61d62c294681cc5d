"""Does a setting of the search help? The estimator under each value, on validation data.

A study names a field of the estimator's ``search_settings``
(:class:`~nesymres_sklearn.search.settings.SearchSettings`) and the values to compare:

- ``linear-scaling``: the outer linear scaling (``n_scaled``), on (``scaled``) or off
  (``unscaled``);
- ``lm-scaling``: MINPACK's scaling of the constants (``lm_x_scale``): by the
  Jacobian's column norms (``x_scale="jac"``, SciPy's default since 1.16) or none
  (``x_scale=1``, before);
- ``network-share`` (with ``--max-time``): the least share of the budget for the
  network's steps (decodings, their fits, the second looks) before Operon takes the
  rest (``network_share``).

The first two studies run the network alone (``refine=None``), the last one
``refine="operon"``. Each equation of the validation sets is fitted once per value and
seed; the table gives A1 in and out of the support, the share of selected equations
that are scaled candidates, the median fit time and the median time spent fitting
constants. Only validation sets are used (never the sets reported in
``docs/benchmarks.md``).

Command line::

    python -m benchmarks.studies.search_settings --study linear-scaling --seeds 0 1 \\
        --n-jobs 2 --out benchmarks/results/search-settings/linear-scaling.md
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from benchmarks.datasets import load_dataset
from benchmarks.metrics import accuracy_a1
from benchmarks.studies.paired_difference import paired_table as paired_differences
from nesymres_sklearn import NeSymReSRegressor
from nesymres_sklearn.search.settings import SearchSettings

DEFAULTS = SearchSettings()


@dataclass(frozen=True)
class Study:
    """A field of :class:`SearchSettings`, the values compared (the first is the
    default) and the estimator's ``refine`` during the study."""

    title: str
    field: str
    settings: dict
    refine: str | None = None


STUDIES = {
    "linear-scaling": Study(
        "Outer linear scaling on the validation sets",
        "n_scaled",
        {"scaled": DEFAULTS.n_scaled, "unscaled": 0},
    ),
    "lm-scaling": Study(
        "Levenberg-Marquardt's scaling of the constants on the validation sets",
        "lm_x_scale",
        {"jacobian": "jac", "unit": 1.0},
    ),
    "network-share": Study(
        "Share of the budget for the network's rounds before Operon, on the validation sets",
        "network_share",
        {"half": 0.5, "quarter": 0.25, "three-quarters": 0.75},
        refine="operon",
    ),
}


def evaluate(
    equation, seed: int, estimator_params: dict, study: str = "linear-scaling", settings: list | None = None
) -> list[dict]:
    """One row per setting of ``study`` (or per one of ``settings``) for ``equation`` at ``seed``."""
    warnings.simplefilter("ignore")
    chosen = STUDIES[study]
    X, y = equation.sample_train(128, seed=seed)
    tests = {kind: equation.sample_test(kind, seed=seed) for kind in ("iid", "ood")}
    rows = []
    for setting, value in chosen.settings.items():
        if settings is not None and setting not in settings:
            continue
        row = dict(equation=equation.name, seed=seed, setting=setting)
        started = time.perf_counter()
        search_settings = SearchSettings(**{chosen.field: value})
        try:
            regressor = NeSymReSRegressor(
                random_state=seed,
                device="cpu",
                refine=chosen.refine,
                search_settings=search_settings,
                **estimator_params,
            ).fit(X, y)
        except ValueError:  # y beyond float64: counted as not recovered
            rows.append(
                dict(row, seconds=np.nan, fitting_seconds=np.nan, a1_iid=False, a1_ood=False, selected_scaled=False)
            )
            continue
        row["seconds"] = time.perf_counter() - started
        row["fitting_seconds"] = regressor.timings_["constant_fitting"]
        with np.errstate(all="ignore"):
            for kind, (X_test, y_test) in tests.items():
                row[f"a1_{kind}"] = accuracy_a1(y_test, regressor.predict(X_test))
        row["selected_scaled"] = regressor.equations_.loc[0, "origin"] == "scaled"
        rows.append(row)
    return rows


def paired_table(frame: pd.DataFrame, baseline: str, label: str, n_resamples: int = 10_000) -> list[str]:
    """Markdown rows: each other setting of ``frame`` (a study's CSV rows) minus
    ``baseline`` in points of A1 out of and in the support, paired by dataset, equation
    and seed and pooled over the datasets, with the 95% bootstrap interval of
    :func:`.paired_difference.paired_table` (equations resampled); ``label`` names the budget."""
    runs = frame.assign(method=frame["setting"], dataset="pooled", value=label, noise=0.0)
    rows = []
    for setting in [s for s in frame["setting"].unique() if s != baseline]:
        cells = []
        for metric in ("a1_ood", "a1_iid"):
            (row,) = paired_differences(runs, setting, baseline, metric, n_resamples).itertuples()
            cells.append(f"{row.difference:+.1f} [{row.low:+.1f}, {row.high:+.1f}]")
        rows.append(f"| {label} | {setting} - {baseline} | {cells[0]} | {cells[1]} | {row.pairs} |")
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--study", choices=sorted(STUDIES), default="linear-scaling")
    parser.add_argument("--datasets", nargs="+", default=["validation-wc", "validation-fc"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--max-time", type=float, help="the estimator's max_time (default: fixed work)")
    parser.add_argument("--settings", nargs="+", help="compare only these settings of the study")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--csv", help="also write every row here")
    parser.add_argument("--out", help="markdown table (required unless --paired)")
    parser.add_argument(
        "--paired", nargs="+", metavar="LABEL=CSV", help="print the paired differences of earlier runs' CSVs instead"
    )
    parser.add_argument("--baseline", default="half", help="the setting the others are compared with (--paired)")
    args = parser.parse_args(argv)
    if args.paired:
        print("| max_time | difference | A1 ood | A1 iid | pairs |\n|---|---|---|---|---:|")
        for entry in args.paired:
            label, path = entry.split("=", 1)
            print("\n".join(paired_table(pd.read_csv(path), args.baseline, label)))
        return 0
    if args.out is None:
        parser.error("--out is required unless --paired is given")
    params = {} if args.max_time is None else {"max_time": args.max_time}
    frames = []
    for name in args.datasets:
        jobs = [
            delayed(evaluate)(eq, seed, params, args.study, args.settings)
            for eq in load_dataset(name)
            for seed in args.seeds
        ]
        rows = [row for batch in Parallel(n_jobs=args.n_jobs)(jobs) for row in batch]
        frames.append(pd.DataFrame(rows).assign(dataset=name))
    frame = pd.concat(frames, ignore_index=True)
    if args.csv:
        frame.to_csv(args.csv, index=False)
    summary = (
        frame.groupby(["dataset", "setting"], sort=False)
        .agg(a1_iid=("a1_iid", "mean"), a1_ood=("a1_ood", "mean"), scaled=("selected_scaled", "mean"),
             median_seconds=("seconds", "median"), fitting_seconds=("fitting_seconds", "median"),
             fits=("equation", "count"))
        .reset_index()
    )  # fmt: skip
    command = " ".join(argv if argv is not None else sys.argv[1:])
    lines = [
        f"# {STUDIES[args.study].title}",
        "",
        f"128 points, beam 32, seeds {' '.join(map(str, args.seeds))}, "
        f"{'fixed work' if args.max_time is None else f'max_time={args.max_time:g} s'}. "
        f"Command: `python -m benchmarks.studies.search_settings {command}`",
        "",
        "| dataset | setting | A1 iid | A1 ood | selected a scaled candidate | median fit (s) "
        "| median constant fitting (s) | fits |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in summary.itertuples():
        lines.append(
            f"| {row.dataset} | {row.setting} | {100 * row.a1_iid:.1f} | {100 * row.a1_ood:.1f} | "
            f"{100 * row.scaled:.1f}% | {row.median_seconds:.2f} | {row.fitting_seconds:.3f} | {row.fits} |"
        )
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
